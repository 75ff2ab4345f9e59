/* SPDX-License-Identifier: MIT */
/* fuzz_config.c: libFuzzer target for the config loader (make fuzz; not
 * part of the gorila binary).
 *
 * Any input must load or fail cleanly (no crash, leak, UB or hang under
 * ASan/UBSan). A config that loads must survive a round trip: config_write
 * into memory, load that text back, and get the same settings. */
#include "config.h"
#include "util.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    Config cfg, back;
    char err[ERR_LEN];
    if (config_load_string(&cfg, "fuzz.yaml", (const char *)data, size, err) != 0) return 0;
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f) abort();
    config_write(&cfg, f);
    fclose(f);
    if (config_load_string(&back, "written.yaml", text, len, err) != 0) {
        fprintf(stderr, "config_write output does not load back: %s\n%s", err, text);
        abort();
    }
    if (!config_same(&cfg, &back)) {
        fprintf(stderr, "config_write output loads back different:\n%s", text);
        abort();
    }
    free(text);
    return 0;
}
