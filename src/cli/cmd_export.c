/* SPDX-License-Identifier: MIT */
/* cmd_export.c: `gorila export RUN|CHECKPOINT FILE.npz|FILE.bin
 * [--checkpoint latest|final|best|PATH] [--json]`: write a checkpoint's
 * network to a file without evaluating it, and say what was written.
 *
 * The checkpoint is chosen and loaded as `gorila eval` does (cliload_open,
 * cliload.h: the same targets, --checkpoint values, messages and exit
 * statuses). FILE must end in .npz (the NumPy archive of npz.h, for NumPy
 * or PyTorch; scripts/npz_policy.py reads it) or .bin (the raw flat
 * float32 parameters, for bit-for-bit comparisons): any other name is
 * refused, so that swapped arguments or a typo never create a file. The
 * file is written through a temporary beside it and renamed onto it
 * (npz_out_open), so FILE is either as it was or the whole export. The
 * one line printed on stdout (cliexport_write, cliexport.h) names the
 * file, its format and size, the network and the checkpoint with its
 * update count. `gorila eval --export` calls cliexport_write too, printing
 * the line on stderr. */
#include "cmd.h"
#include "cliexport.h"
#include "cliload.h"
#include "exitcode.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static const char export_usage[] =
    "usage: gorila export RUN|CHECKPOINT FILE [--checkpoint WHICH] [--json]\n"
    "  RUN|CHECKPOINT  a run directory or a checkpoint directory\n"
    "  FILE            FILE.npz: the network as a NumPy .npz (PyTorch (out, in)\n"
    "                  weights, env and sizes; docs/CHECKPOINT.md); FILE.bin: its\n"
    "                  raw float32 parameters. Created, or a regular file replaced\n"
    "                  whole, through a temporary (links, devices, FIFOs and\n"
    "                  directories are refused)\n"
    "  --checkpoint    in a run directory: latest (default), final, best, or a checkpoint path\n"
    "  --json          one JSON object instead of the text line\n"
    "Writes the file without evaluating the network (gorila eval evaluates) and\n"
    "prints one line: the file, its format and size, the network, its parameter\n"
    "count and the checkpoint with its update count.\n";

/* Whether s ends in suffix. */
static bool ends_with(const char *s, const char *suffix) {
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && !strcmp(s + n - k, suffix);
}

int cmd_export(int argc, char **argv) {
    const char *target = NULL, *path = NULL, *which = NULL;
    bool json = false;
    char err[ERR_LEN];
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        if (!strcmp(s, "--checkpoint")) {
            if (i + 1 >= argc) return usage_error("export: --checkpoint needs latest, final, best or a path");
            which = argv[++i];
        } else if (!strcmp(s, "--json")) {
            json = true;
        } else if (!strcmp(s, "-h") || !strcmp(s, "--help")) {
            fputs(export_usage, stdout);
            return 0;
        } else if (!strcmp(s, "--episodes") || !strcmp(s, "--seed")) {
            return usage_error("export: %s: export does not evaluate (gorila eval RUN %s ... evaluates)", s, s);
        } else if (s[0] == '-' && s[1] != '\0') {
            fputs(export_usage, stderr);
            return usage_error("export: unknown option %s", s);
        } else if (!target) {
            target = s;
        } else if (!path) {
            path = s;
        } else {
            return usage_error("export: more than RUN|CHECKPOINT and FILE given (\"%s\")", s);
        }
    }
    if (!target) return usage_error("export: missing RUN|CHECKPOINT and FILE (gorila export RUN FILE.npz)");
    if (!path) return usage_error("export: missing FILE, the file to write (FILE.npz, or FILE.bin for raw float32)");
    if (!ends_with(path, ".npz") && !ends_with(path, ".bin"))
        return usage_error("export: %s: FILE must end in .npz (NumPy archive) or .bin (raw float32 parameters)",
                           path);
    CliLoad c;
    int rc = cliload_open(&c, "export", target, which);
    if (rc) return rc;
    if (cliexport_write(&c, path, stdout, json, err)) {
        rc = usage_error("export: %s", err);
    } else if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "gorila: error: export: wrote %s, but printing what was written failed: %s\n", path,
                strerror(errno ? errno : EIO));
        rc = GORILA_EXIT_FAILED;
    }
    cliload_free(&c);
    return rc;
}
