/* SPDX-License-Identifier: MIT */
/* mpicheck.c: see mpicheck.h. */
#include "mpicheck.h"
#include "util.h"

#include <stdio.h>

_Noreturn void die_mpi(const Ctx *ctx, const char *file, int line, const char *call, int rc) {
    char s[MPI_MAX_ERROR_STRING];
    int n = 0;
    if (MPI_Error_string(rc, s, &n) != MPI_SUCCESS) snprintf(s, sizeof s, "MPI error %d", rc);
    die_at(ctx, file, line, "%s failed: %s", call, s);
}
