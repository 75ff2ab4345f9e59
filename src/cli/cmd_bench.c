/* SPDX-License-Identifier: MIT */
/* cmd_bench.c: `gorila bench <what>` dispatch. Each benchmark prints a
 * readable table, or one JSON object per line with --json, and never
 * passes or fails on time. */
#include "cmd.h"

#include <stdio.h>
#include <string.h>

static const char bench_usage[] =
    "usage: gorila bench env [--steps N] [--env NAME] [--json]\n"
    "       gorila bench nn [--json] [--seconds S] [--threads N] [--no-double]\n"
    "       gorila bench replay [--json] [--seconds S] [--obs-dim N] [--capacity C]\n"
    "       mpirun -np P gorila bench allreduce [--config FILE] [--max-floats N] [--seconds S]\n"
    "                                          [--wait auto|poll|sleep] [--json]\n"
    "       mpirun -np 2 gorila bench pingpong [--bytes LIST] [--seconds S] [--json]\n"
    "  `gorila bench WHAT --help` lists each benchmark's options.\n";

int cmd_bench(int argc, char **argv) {
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
