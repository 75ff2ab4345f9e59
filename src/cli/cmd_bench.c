/* SPDX-License-Identifier: MIT */
/* cmd_bench.c: `gorila bench <what>` dispatch. Each benchmark prints a
 * readable table, or one JSON object per line with --json, and never
 * passes or fails on time. */
#include "cmd.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char bench_usage[] =
    "usage: gorila bench env [--steps N] [--env NAME] [--json]\n"
    "       gorila bench nn [--json] [--seconds S] [--threads N] [--no-double] [--minatar]\n"
    "       gorila bench nn --config FILE [--set key.path=value]... [--json] [--seconds S] [--threads N]\n"
    "       gorila bench replay [--json] [--seconds S] [--obs-dim N] [--capacity C]\n"
    "       mpirun -np P gorila bench allreduce [--config FILE] [--max-floats N] [--seconds S]\n"
    "                                          [--wait auto|poll|sleep] [--json]\n"
    "       mpirun -np 2 gorila bench pingpong [--bytes LIST] [--seconds S] [--json]\n"
    "  `gorila bench WHAT --help` lists each benchmark's options.\n";

/* Every benchmark takes `--flag=value` as `--flag value` (as bench env
 * always did): argv with each such word split in two, into out (room for
 * 2 * argc + 1 pointers) and the storage of the split words into text.
 * Returns the new count. */
static int split_equals(int argc, char **argv, char **out, char *text) {
    int n = 0;
    for (int i = 0; i < argc; i++) {
        const char *eq = strchr(argv[i], '=');
        if (i < 2 || strncmp(argv[i], "--", 2) != 0 || !eq) {
            out[n++] = argv[i];
            continue;
        }
        size_t len = strlen(argv[i]) + 1;
        memcpy(text, argv[i], len);
        text[eq - argv[i]] = '\0';
        out[n++] = text;
        out[n++] = text + (eq - argv[i]) + 1;
        text += len;
    }
    out[n] = NULL;
    return n;
}

static int bench_run(int argc, char **argv) {
    if (argc < 2) {
        fputs(bench_usage, stderr);
        return usage_error("bench: expected one of: env, nn, replay, allreduce, pingpong");
    }
    const char *what = argv[1];
    if (!strcmp(what, "-h") || !strcmp(what, "--help")) {
        fputs(bench_usage, stdout);
        return 0;
    }
    if (!strcmp(what, "env")) return bench_env(argc - 1, argv + 1);
    if (!strcmp(what, "nn")) return bench_nn(argc - 1, argv + 1);
    if (!strcmp(what, "replay")) return bench_replay(argc - 1, argv + 1);
    if (!strcmp(what, "allreduce")) return bench_allreduce(argc - 1, argv + 1);
    if (!strcmp(what, "pingpong")) return bench_pingpong(argc - 1, argv + 1);
    return usage_error("bench: unknown benchmark \"%s\" (expected env, nn, replay, allreduce or pingpong)", what);
}

int cmd_bench(int argc, char **argv) {
    size_t bytes = 0;
    for (int i = 0; i < argc; i++) bytes += strlen(argv[i]) + 1;
    char **split = xmalloc((2 * (size_t)argc + 1) * sizeof *split);
    char *text = xmalloc(bytes + 1);
    int rc = bench_run(split_equals(argc, argv, split, text), split);
    free(text);
    free(split);
    return rc;
}
