/* SPDX-License-Identifier: MIT */
/* mpicheck.h: MPI_CHECK, how every MPI call of gorila fails. A leaf: it
 * needs nothing of src/mpi, so comm.c and doorbell.c (and any file below
 * comm.h) can both use it without depending on each other. */
#ifndef GORILA_MPICHECK_H
#define GORILA_MPICHECK_H

#include <mpi.h>

#include "ctx.h"

/* Every MPI call of gorila goes through MPI_CHECK: a failure is fatal, with
 * the call, the MPI error string, and the rank and role of ctx. */
#define MPI_CHECK(ctx, call)                                                \
    do {                                                                    \
        int rc_ = (call);                                                   \
        if (rc_ != MPI_SUCCESS) die_mpi((ctx), __FILE__, __LINE__, #call, rc_); \
    } while (0)
_Noreturn void die_mpi(const Ctx *ctx, const char *file, int line, const char *call, int rc);

#endif
