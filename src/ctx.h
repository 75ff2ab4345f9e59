/* ctx.h: who this process is in the job. Built once in main and passed
 * explicitly to every role; there is no global MPI state in gorila besides
 * MPI's own.
 */
#ifndef GORILA_CTX_H
#define GORILA_CTX_H

#include <stdbool.h>
#include <mpi.h>

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
    double t0;           /* now_seconds() at start, for log prefixes */
    bool mpi;            /* MPI initialised (MPI_Abort available) */
    MPI_Comm comm;       /* MPI_COMM_WORLD dup, MPI_ERRORS_RETURN */
};
typedef struct Ctx Ctx;

/* Lower-case role name ("coordinator", "actor", ...). */
const char *role_name(Role r);

/* Context for a CLI tool (no MPI). */
void ctx_init_tool(Ctx *ctx);

/* Context for a process of an MPI job, after MPI_Init: rank and size in
 * MPI_COMM_WORLD, and ctx->comm a duplicate of it with MPI_ERRORS_RETURN
 * (so MPI errors reach our own messages). The role is ROLE_TOOL until the
 * job assigns one. Free ctx->comm with MPI_Comm_free before MPI_Finalize. */
void ctx_init_mpi(Ctx *ctx);

/* Informational line on stderr: "[  12.3s rank 3 learner 0/2] msg". */
void log_info(const Ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
