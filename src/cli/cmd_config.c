/* cmd_config.c: `gorila config check FILE [--set key=value]...`.
 *
 * Loads and validates a config exactly as `gorila train` would, then prints
 * the effective config (config_write), the rank layout (layout_print) and a
 * last line "ranks: N", the number of MPI ranks the job needs. Exit status:
 * 0 valid, 2 invalid config or bad arguments (one error line on stderr).
 */
#include "cmd.h"
#include "config.h"
#include "layout.h"
#include "util.h"

#include <stdio.h>
#include <string.h>

static const char check_usage[] =
    "usage: gorila config check FILE [--set key.path=value]...\n"
    "\n"
    "Validate FILE with the overrides applied, print the effective config,\n"
    "the rank layout and the number of ranks the job needs.\n"
    "Exit status: 0 valid, 2 invalid config or bad arguments.\n";

static int config_check(int argc, char **argv) {
    const char *file = NULL;
    const char *sets[CFG_MAX_SETS];
    int n_sets = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *value = NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(check_usage, stdout);
            return 0;
        }
        if (!strcmp(a, "--set")) {
            if (i + 1 >= argc) return usage_error("config check: --set needs a key.path=value argument");
            value = argv[++i];
        } else if (!strncmp(a, "--set=", 6)) {
            value = a + 6;
        } else if (a[0] == '-' && a[1] != '\0') {
            return usage_error("config check: unknown option \"%s\" (see gorila config check --help)", a);
        } else if (file) {
            return usage_error("config check: expected one FILE, got \"%s\" and \"%s\"", file, a);
        } else {
            file = a;
            continue;
        }
        if (n_sets == CFG_MAX_SETS) return usage_error("config check: expected at most %d --set", CFG_MAX_SETS);
        sets[n_sets++] = value;
    }
    if (!file) return usage_error("config check: missing FILE (usage: gorila config check FILE [--set k=v]...)");

    Config cfg;
    char err[ERR_LEN];
    if (config_load(&cfg, file, sets, n_sets, err)) return usage_error("%s", err);
    Layout lay;
    layout_init(&lay, &cfg);
    config_write(&cfg, stdout);
    fputc('\n', stdout);
    layout_print(&lay, stdout);
    printf("ranks: %d\n", lay.size);
    return 0;
}

int cmd_config(int argc, char **argv) {
    if (argc < 2) return usage_error("config: expected a subcommand: check");
    if (!strcmp(argv[1], "check")) return config_check(argc - 1, argv + 1);
    if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        fputs(check_usage, stdout);
        return 0;
    }
    return usage_error("config: unknown subcommand \"%s\" (expected check)", argv[1]);
}
