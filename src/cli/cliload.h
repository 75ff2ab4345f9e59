/* SPDX-License-Identifier: MIT */
/* cliload.h: a checkpoint's network, loaded for `gorila eval` (cmd_eval.c)
 * and `gorila export` (cmd_export.c), which both call down into this file
 * so that they choose a checkpoint, and fail, the same way. */
#ifndef GORILA_CLILOAD_H
#define GORILA_CLILOAD_H

#include <stddef.h>

#include "config.h"
#include "pyenv.h"
#include "qnet.h"
#include "runckpt.h"
#include "util.h"

/* Zeroed by cliload_open on failure and by cliload_free. */
typedef struct {
    RunCkptManifest man;     /* the checkpoint read; man.dir is its directory */
    char run_dir[PATH_LEN];  /* the run whose config.yaml describes the network */
    Config *cfg;             /* that config (owned) */
    QNet net;
    float *params, *target;  /* (net.n_params) each, owned: online and target parameters */
    PyEnvHost py;            /* a Python environment's bridge (env.name python:... or gymnasium:...) */
} CliLoad;

/* Resolve cfg's environment when it is a Python one (env_extern_kind):
 * open it through the bridge into h and point cfg->env_spec at h->spec;
 * nothing for a registered one (h zeroed). Returns 0, or -1 with err (the
 * Python traceback, if any, printed). pyenv_close(h) when done, after
 * every Env of it is freed. */
int cliload_env(Config *cfg, PyEnvHost *h, char *err);

/* Load the checkpoint that target (a run directory or a checkpoint
 * directory) and which (--checkpoint: NULL for latest, "latest", "final",
 * "best", or a checkpoint directory; only with a run directory) name.
 * Returns 0, or prints one line "gorila: error: <cmd>: ..." on stderr and
 * returns the exit status: GORILA_EXIT_USAGE (a target that is neither, a
 * bad --checkpoint, a config that does not load) or GORILA_EXIT_CKPT_READ
 * (the run has no such checkpoint, or it is damaged or of another run). */
int cliload_open(CliLoad *c, const char *cmd, const char *target, const char *which);

/* Free what cliload_open allocated; safe on a zeroed struct. */
void cliload_free(CliLoad *c);

/* What a manifest says about its parameters, e.g. "best checkpoint,
 * parameters after 312 updates, 2500 env steps; logged eval 9.00 over 1
 * episodes, seed 7", into out (size bytes, always NUL-terminated). */
void cliload_describe(const RunCkptManifest *m, char *out, size_t size);

#endif
