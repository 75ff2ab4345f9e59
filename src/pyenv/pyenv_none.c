/* SPDX-License-Identifier: MIT */
/* pyenv_none.c: the Python bridge of a build without Python (make
 * PYTHON=0): every external id is refused at start, saying why. */
#include "pyenv.h"
#include "util.h"

#include <string.h>

bool pyenv_available(void) { return false; }

int pyenv_open(PyEnvHost *h, const char *name, const char *kwargs_json, char *err) {
    (void)kwargs_json;
    memset(h, 0, sizeof *h);
    return errf(err, "env %s: this gorila was built without Python (make PYTHON=0); rebuild with make PYTHON=1 "
                "(needs python3.11-dev)", name);
}

int pyenv_reset_to(Env *e, const double *values, int n, float *obs) {
    (void)values, (void)n, (void)obs;
    e->failed = true;
    return -1;
}

void pyenv_close(PyEnvHost *h) { memset(h, 0, sizeof *h); }
