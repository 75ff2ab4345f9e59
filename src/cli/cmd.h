/* SPDX-License-Identifier: MIT */
/* cmd.h: the subcommands of the gorila binary. main.c parses only the
 * subcommand word and hands the rest of argv (argv[0] = the subcommand's
 * last word, e.g. "rollout") to one of these. Each returns the process exit
 * status: 0 success, 1 failure at run time, 2 bad usage or bad input. */
#ifndef GORILA_CMD_H
#define GORILA_CMD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "config.h"
#include "qnet.h"
#include "runckpt.h"
#include "util.h"

#define EXIT_USAGE 2

int cmd_env(int argc, char **argv);     /* gorila env list|rollout|replay ... */
int cmd_config(int argc, char **argv);  /* gorila config check FILE ... */
int cmd_train(int argc, char **argv);   /* gorila train CONFIG ... */
int cmd_eval(int argc, char **argv);    /* gorila eval CHECKPOINT ... */
int cmd_export(int argc, char **argv);  /* gorila export CHECKPOINT FILE ... */
int cmd_bench(int argc, char **argv);   /* gorila bench env|nn|... */
int cmd_version(int argc, char **argv); /* gorila version [--kernels | --json] */

/* gorila bench subcommands, each in its own file. */
int bench_env(int argc, char **argv);
int bench_nn(int argc, char **argv);
int bench_replay(int argc, char **argv);
int bench_allreduce(int argc, char **argv); /* under mpirun */
int bench_pingpong(int argc, char **argv);  /* under mpirun -np 2 */

/* A checkpoint's network, loaded for gorila eval and gorila export
 * (cmd_eval.c). Zeroed by clickpt_load on failure and by clickpt_free. */
typedef struct {
    RunCkptManifest man;     /* the checkpoint read; man.dir is its directory */
    char run_dir[PATH_LEN];  /* the run whose config.yaml describes the network */
    Config *cfg;             /* that config (owned) */
    QNet net;
    float *params, *target;  /* (net.n_params) each, owned: online and target parameters */
} CliCkpt;

/* Load the checkpoint that target (a run directory or a checkpoint
 * directory) and which (--checkpoint: NULL for latest, "latest", "final",
 * "best", or a checkpoint directory; only with a run directory) name.
 * Returns 0, or prints one line "gorila: error: <cmd>: ..." on stderr and
 * returns the exit status: GORILA_EXIT_USAGE (a target that is neither, a
 * bad --checkpoint, a config that does not load) or GORILA_EXIT_CKPT_READ
 * (the run has no such checkpoint, or it is damaged or of another run). */
int clickpt_load(CliCkpt *c, const char *cmd, const char *target, const char *which);

/* Free what clickpt_load allocated; safe on a zeroed struct. */
void clickpt_free(CliCkpt *c);

/* What a manifest says about its parameters, e.g. "best checkpoint,
 * parameters after 312 updates, 2500 env steps; logged eval 9.00 over 1
 * episodes, seed 7", into out (size bytes, always NUL-terminated). */
void clickpt_describe(const RunCkptManifest *m, char *out, size_t size);

/* Write c's network to path (cmd_export.c): the raw float32 parameters
 * when path ends in ".bin", else the .npz (npz.h), through a temporary
 * renamed onto path (only a missing path or a regular file is written).
 * Then prints to out what it wrote, one line:
 *   wrote PATH (npz, B bytes): ENV network O-H..-A, N parameters, from
 *   CHECKPOINT_DIR (clickpt_describe)
 * ("replaced" when a regular file was replaced), or with json one JSON
 * object of the same facts. Returns 0, or -1 with err (nothing printed,
 * path as it was). */
int cli_export(const CliCkpt *c, const char *path, FILE *out, bool json, char *err);

/* Print "gorila: error: <msg>" to stderr and return EXIT_USAGE. */
int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
