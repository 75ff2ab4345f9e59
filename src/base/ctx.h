/* SPDX-License-Identifier: MIT */
/* ctx.h: who this process is in the job. Built once in main and passed
 * explicitly to every role; there is no global MPI state in gorila besides
 * MPI's own. MPI-free: the communicator belongs to the transport
 * (src/mpi/comm.h), which also sets abort_job for the ranks of a job.
 */
#ifndef GORILA_CTX_H
#define GORILA_CTX_H

#include <stdbool.h>

typedef enum {
    ROLE_COORD = 0,   /* rank 0 of a distributed job */
    ROLE_ACTOR,
    ROLE_REPLAY,
    ROLE_LEARNER,
    ROLE_PS,
    ROLE_LOCAL,       /* single-process trainer */
    ROLE_TOOL,        /* CLI subcommand outside any job */
    ROLE_COUNT
} Role;

struct Ctx {
    int rank, size;      /* in MPI_COMM_WORLD; 0 and 1 for tools */
    Role role;
    int index, count;    /* index within the role and the role's count */
    double t0;           /* now_seconds() (clock.h) at start, for log prefixes */
    /* How DIE ends the process: NULL exits (tools, the local trainer);
     * ranks of a job get a function that aborts every rank (comm.h). */
    void (*abort_job)(int code);
};
typedef struct Ctx Ctx;

/* Lower-case role name ("coordinator", "actor", ...). */
const char *role_name(Role r);

/* Context for a CLI tool (no MPI). */
void ctx_init_tool(Ctx *ctx);

/* Informational line on stderr: "[  12.3s rank 3 learner 0/2] msg". */
void log_info(const Ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
