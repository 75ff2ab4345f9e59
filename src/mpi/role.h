/* SPDX-License-Identifier: MIT */
/* role.h: what every role of a distributed job shares: its Comm, its
 * counters, the periodic METRICS report, where parameters come from, and
 * the orderly shutdown (drain, STOPPED, wait for EXIT).
 *
 * Shutdown, as seen from one non-coordinator rank:
 *   1. TAG_STOP arrives: stop producing messages.
 *   2. role_shutdown: complete every own send while receiving and
 *      discarding whatever still arrives (so no peer stays blocked on a
 *      message to us); with logging.trace send this rank's trace (TRACE
 *      messages, see proto.h), then STOPPED with the final counters;
 *   3. keep receiving and discarding until TAG_EXIT, then return to
 *      MPI_Finalize. Every message a peer sent us before EXIT has been
 *      matched or is buffered, so nobody hangs in MPI_Finalize.
 */
#ifndef GORILA_ROLE_H
#define GORILA_ROLE_H

#include "comm.h"
#include "config.h"
#include "job.h"
#include "qnet.h"
#include "trace.h"

#define ROLE_METRICS_PERIOD 0.25 /* seconds between METRICS reports */
#define ACTOR_METRICS_PERIOD 0.02 /* actors: the coordinator's env-step count (budget,
                                     solved_at_env_steps) is at most this stale */
#define ROLE_MAX_SOURCES 256     /* parameter sources (PS shards) */

typedef struct {
    const Ctx *ctx;
    const Config *cfg;
    const Layout *lay;
    Comm comm;
    RoleMetrics m;
    QNet net;
    Trace trace;         /* logging.trace: this rank's timeline (off: every span a no-op) */
    SendBuf trace_out;   /* logging.trace: one TRACE message (PROTO_TRACE_PER_MSG events) */
    double t_start, next_metrics, metrics_period;
    /* where parameters come from: PS shards, or learner 0 in allreduce mode */
    int n_sources;
    int source_rank[ROLE_MAX_SOURCES];
    size_t source_off[ROLE_MAX_SOURCES], source_len[ROLE_MAX_SOURCES];
} RoleBase;

/* Network, Comm, parameter sources and (logging.trace) the trace ring of
 * logging.trace_events spans for this rank. Dies on a config the validator
 * should have refused. */
void role_init(RoleBase *rb, const Ctx *ctx, const JobArgs *args);
void role_free(RoleBase *rb);

/* Index of the parameter source whose rank is `rank`, or -1. */
int role_source_index(const RoleBase *rb, int rank);

/* Validate a PARAMS message against the parameter sources: it must come
 * from one (and `expected` must hold: a pull is in flight) and cover that
 * source's slice. Returns the source index; dies naming the sender
 * otherwise. */
int role_params_source(const RoleBase *rb, const Msg *m, bool expected);

/* Answer a CKPT_REQ: CKPT_DONE to the coordinator for checkpoint id, with
 * `version` (a parameter source: the parameters version saved; a replay
 * shard: the transitions saved), and err as the failure text when rc != 0,
 * sent with this rank's role, rank and host, and a hint when dir (the
 * checkpoint directory asked for) does not exist on this host. */
void role_ckpt_done(RoleBase *rb, uint64_t id, uint64_t version, int rc, const char *err, const char *dir);

/* Send METRICS to the coordinator if the period elapsed (or force). */
void role_report(RoleBase *rb, bool force);

/* Steps 2 and 3 of the shutdown above; bufs are the role's own SendBufs. */
void role_shutdown(RoleBase *rb, SendBuf **bufs, int n);

#endif
