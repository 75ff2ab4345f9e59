/* SPDX-License-Identifier: MIT */
/* pyenv.h: the Python bridge. An environment with the Gymnasium API,
 * named "python:MODULE:CALLABLE" (CALLABLE(**kwargs) makes one) or
 * "gymnasium:ID" (gymnasium.make(ID, **kwargs)), stepped through an
 * embedded CPython (libpython3.11, `make PYTHON=0` builds without it).
 *
 * pyenv_open starts the interpreter (without its signal handlers: it runs
 * inside MPI ranks), imports the module, makes one probe instance and reads
 * its spaces into an EnvSpec whose EnvExtern hooks make one Python instance
 * per Env slot: from then on env_init/env_reset/env_step drive it as any
 * environment. The first reset of each instance passes seed= a number drawn
 * then from the slot's generator (so from the run seed and the slot; after
 * a resume, EnvExtern.reseed, from the checkpoint's generator), later
 * resets none, as Gymnasium's seeding wants (an evaluation slot's instance
 * is kept across episodes, each reset seeded again: env_reseed, EnvExtern.reseed); `truncated` is the environment's own,
 * `terminated` alone stops bootstrapping. Observations are copied once per
 * step from the array's buffer (the buffer protocol: numpy arrays, no
 * per-element Python calls).
 *
 * Failures of the Python code print the traceback and one line naming the
 * environment to stderr: at pyenv_open they are an error return (the caller
 * exits with GORILA_EXIT_USAGE); in a reset or step they set Env.failed (the
 * caller ends with GORILA_EXIT_ENV). One thread calls Python: the one that
 * called pyenv_open. This module allocates and prints; envs/ does neither.
 */
#ifndef GORILA_PYENV_H
#define GORILA_PYENV_H

#include <stdbool.h>

#include "env.h"

#define PYENV_NAME_LEN 256 /* bytes of a full id, NUL included */

typedef struct {
    EnvSpec spec;              /* the environment as read from the probe instance */
    char name[PYENV_NAME_LEN]; /* the full id (spec.name points here) */
    void *factory;             /* PyObject *: the callable (or gymnasium.make) */
    void *args;                /* PyObject *: positional arguments ((), or (ID,)) */
    void *kwargs;              /* PyObject *: env.kwargs as a dict */
    int obs_kind;              /* the observation's element type (pyenv.c) */
    float *bounds;             /* a vector Box's low then high (spec.obs_low/obs_high), or NULL */
    bool started;              /* this host initialised the interpreter */
} PyEnvHost;

/* Whether this build embeds Python (PYTHON=1). */
bool pyenv_available(void);

/* Resolve an external id (env_extern_kind(name) != 0) with kwargs_json, a
 * JSON object ("" or "{}" for none), into h->spec. h is overwritten.
 * Returns 0, or -1 with one line in err (ERR_LEN bytes) naming the
 * environment (the Python traceback, if any, already printed); h then
 * holds nothing to close. */
int pyenv_open(PyEnvHost *h, const char *name, const char *kwargs_json, char *err);

/* Start a new episode of e (an Env of a host's spec) from the internal
 * state values[0 .. n): reset(options={"state": [values...]}) (with its
 * seed if it is the instance's first reset), t = 0, and write the
 * observation. An environment that takes no such option ignores it (it is
 * its contract, not the bridge's). For `gorila env replay`'s state command.
 * Returns 0, or -1 with e->failed set (the reason printed). */
int pyenv_reset_to(Env *e, const double *values, int n, float *obs);

/* Release h's objects and finalise the interpreter if h started it. Every
 * Env of h->spec must be freed first. Safe on a zeroed or closed host. */
void pyenv_close(PyEnvHost *h);

#endif
