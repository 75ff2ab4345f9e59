/* SPDX-License-Identifier: MIT */
/* comm.h: the MPI plumbing every role uses: framed non-blocking sends,
 * validated receives, and waiting that does not burn a core.
 *
 * Waiting. Open MPI's blocking calls (MPI_Recv, MPI_Wait, MPI_Barrier) spin
 * on the progress engine, so a waiting rank eats a whole core; with more
 * ranks than cores (the normal case on small machines) the spinners starve
 * the ranks doing real work. gorila therefore never blocks inside MPI during
 * a run: every wait is a loop of MPI_Iprobe / MPI_Test calls between which
 * the rank sleeps (comm_idle).
 *
 * Doorbells (doorbell.h). Sleeping alone trades latency for CPU, and a
 * synchronous parameter-server round has several hops; so every send to a
 * rank of the same node rings its bell, and comm_idle sleeps on its own.
 * The timeout (COMM_IDLE_BELL) covers what rings no bell: the roles'
 * timers, and on a single node nothing else. A rank with peers on other
 * nodes cannot be rung by them, so its sleeps back off from COMM_IDLE_MIN
 * only to COMM_IDLE_REMOTE (microseconds, not a millisecond per hop).
 * Without doorbells, sleeps back off from COMM_IDLE_MIN to COMM_IDLE_MAX
 * (COMM_IDLE_REMOTE with remote peers).
 *
 * The communicator. Every message of a job goes over one duplicate of
 * MPI_COMM_WORLD with MPI_ERRORS_RETURN (comm_world_init), so MPI errors
 * reach MPI_CHECK, which names the call, the rank and the MPI error.
 *
 * Receiving. comm_poll takes at most one message of any tag from any rank
 * into the Comm's inbox and validates it (tag repeated in the header, size
 * consistent with the counts, counts within bounds) before the role sees
 * it. A malformed message is fatal, naming the sender and what was wrong.
 *
 * Sending. A SendBuf is one framed message buffer owned by the role; a send
 * from it is non-blocking, and reusing it first completes the previous send.
 * Small control messages go through comm_send_ctl, which keeps its own pool
 * of buffers. Roles double-buffer their large streams (experience, batches,
 * parameters) so they never wait on a send in the normal flow.
 */
#ifndef GORILA_COMM_H
#define GORILA_COMM_H

#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "ctx.h"
#include "doorbell.h"
#include "layout.h"
#include "mpicheck.h"
#include "proto.h"

/* MPI_CHECK (every MPI call of gorila): mpicheck.h. */

/* After MPI_Init: rank and size of this process in MPI_COMM_WORLD, an
 * abort_job that ends every rank, role ROLE_TOOL until the job assigns one;
 * *world = a duplicate of MPI_COMM_WORLD with MPI_ERRORS_RETURN. Free it
 * with comm_world_free before MPI_Finalize. */
void comm_world_init(Ctx *ctx, MPI_Comm *world);
void comm_world_free(const Ctx *ctx, MPI_Comm *world);

#define COMM_IDLE_MIN 20e-6   /* first sleep of a wait, seconds */
#define COMM_IDLE_REMOTE_MIN 10e-6 /* first sleep of a wait for another node (with bells) */
#define COMM_YIELD_REMOTE 200e-6   /* a wait for another node yields the core (sched_yield, no
                                      sleep) for this long after the rank's last message or work */
#define COMM_IDLE_MAX 1e-3    /* longest sleep of a wait without doorbells, seconds */
#define COMM_IDLE_BELL 1e-3   /* every sleep with doorbells (they wake us earlier) */
#define COMM_IDLE_REMOTE 50e-6 /* longest sleep of a rank with peers on other nodes, whose
                                   messages ring no bell: a bounded backoff from COMM_IDLE_MIN */
#define COMM_CTL_SLOTS 64
#define COMM_CTL_BYTES (8192 + sizeof(MsgHeader))

typedef struct {
    uint8_t *buf;        /* header + payload */
    size_t cap;          /* payload capacity, bytes */
    MPI_Request req;
    bool pending;
} SendBuf;

typedef struct {
    int source;          /* sender rank */
    int tag;
    MsgHeader h;
    void *payload;       /* points into the Comm's inbox: valid until the next poll */
    size_t bytes;        /* payload bytes */
} Msg;

typedef struct {
    const Ctx *ctx;
    const Layout *lay;
    MPI_Comm world;      /* every message of the job (not owned) */
    ProtoLimits lim;
    uint8_t *inbox;
    size_t inbox_cap;    /* payload capacity */
    SendBuf ctl[COMM_CTL_SLOTS];
    bool poll;           /* run.wait: look again at once instead of sleeping (comm_set_wait) */
    bool expect_remote;  /* the rank waits for a rank of another node (comm_expect) */
    double idle_delay;   /* current backoff */
    double busy_at;      /* when comm_busy last ran (a message came or work was done) */
    double wait_seconds; /* total time spent in comm_idle */
    Doorbells bells;
    uint64_t msgs_sent[TAG_COUNT], bytes_sent[TAG_COUNT];
    uint64_t msgs_recv[TAG_COUNT], bytes_recv[TAG_COUNT];
    /* stop signals (signals.h): every rank but the coordinator forwards its
     * first one as STOP_REQ, from comm_poll, until EXIT (role.c) */
    bool forward_stop, stop_forwarded;
} Comm;

/* Set up buffers sized from lim (proto_max_payload) and the doorbells.
 * Collective over world (every rank calls it once at start). ctx, world
 * and lay are kept (not owned). Doorbells are skipped when the environment
 * sets COMM_DOORBELLS=0 (then every wait is a timed sleep). */
void comm_init(Comm *c, const Ctx *ctx, MPI_Comm world, const Layout *lay, const ProtoLimits *lim);
/* Cancels pending sends, frees buffers. Collective (the shared window). */
void comm_free(Comm *c);

void sendbuf_init(SendBuf *s, size_t payload_cap);
void sendbuf_free(SendBuf *s);
static inline void *sendbuf_payload(SendBuf *s) { return s->buf + sizeof(MsgHeader); }

/* True when the buffer can be reused (its last send completed). Drives
 * MPI progress. */
bool comm_send_done(Comm *c, SendBuf *s);

/* Wait (sleeping, never spinning) until the buffer's last send completed. */
void comm_wait_send(Comm *c, SendBuf *s);

/* Send header h (h->tag is set from tag) and payload_bytes of s's payload
 * to dest. If s still has a send in flight, first waits for it (idle
 * sleeping). Never blocks inside MPI. */
void comm_send(Comm *c, SendBuf *s, int dest, int tag, MsgHeader h, size_t payload_bytes);

/* Send a small message (payload copied, at most 8 KiB) from the internal
 * pool. */
void comm_send_ctl(Comm *c, int dest, int tag, MsgHeader h, const void *payload, size_t payload_bytes);

/* Receive at most one message (any source, any tag except TAG_RING) and
 * validate it. Returns true and fills m when one was received. Resets the
 * idle backoff when it receives. With c->forward_stop, a stop signal this
 * rank got is first sent on to the coordinator (TAG_STOP_REQ, once). */
bool comm_poll(Comm *c, Msg *m);
/* The same for messages of one tag only (the coordinator's look for
 * STOP_REQ in the middle of an evaluation). */
bool comm_poll_tag(Comm *c, int tag, Msg *m);

/* How to wait (run.wait): poll, look again at once, for a rank with a core
 * to itself; sleep, on the doorbell (or the backoff above); auto, poll when
 * this machine has no more ranks than cores (doorbell_oversubscribed), else
 * sleep. comm_init leaves it at sleep. */
void comm_set_wait(Comm *c, WaitMode m);

/* Sleep for the current backoff and lengthen it (counted as waiting); with
 * polling, return at once. Call when a loop iteration found nothing to do. */
void comm_idle(Comm *c);
/* Reset the backoff (call after doing work). */
void comm_busy(Comm *c);

/* What the next waits are for, in a job across nodes: the ranks whose
 * message the caller waits for (n >= 1), or n = 0: nothing urgent (timers,
 * control messages: the bell's timeout is soon enough), or n < 0: anyone
 * (what comm_init sets). Waits back off to COMM_IDLE_REMOTE only when one
 * of those may be on another node; otherwise they sleep on the bell.
 * Changes nothing in a job on one node. */
void comm_expect(Comm *c, const int *ranks, int n);

/* Wait (polling, sleeping) until every send of the role's own buffers in
 * bufs[0..n) and the control pool completed, receiving and discarding
 * whatever arrives meanwhile unless keep is non-NULL, in which case a
 * message with a tag in keep[] stops the wait and is returned in *m
 * (returns true). Used in the shutdown drain. */
bool comm_drain(Comm *c, SendBuf **bufs, int n, const int *keep, int n_keep, Msg *m);

/* Copy the per-tag counters into a RoleMetrics. */
void comm_fill_metrics(const Comm *c, RoleMetrics *rm);

#endif
