/* SPDX-License-Identifier: MIT */
/* comm.c: see comm.h. */
#include "comm.h"
#include "clock.h"
#include "memplan.h"
#include "signals.h"
#include "util.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>

/* The memory plan's mirror of the control pool (memplan.h). */
_Static_assert(COMM_CTL_SLOTS == MEMPLAN_CTL_SLOTS && COMM_CTL_BYTES == sizeof(MsgHeader) + MEMPLAN_CTL_PAYLOAD,
               "memplan.h mirrors comm.h's control message pool");

void sendbuf_init(SendBuf *s, size_t payload_cap) {
    s->cap = payload_cap;
    s->buf = xmalloc_for(sizeof(MsgHeader) + payload_cap, "a send buffer", NULL);
    s->req = MPI_REQUEST_NULL;
    s->pending = false;
}

void sendbuf_free(SendBuf *s) {
    free(s->buf);
    s->buf = NULL;
    s->cap = 0;
}

static void abort_world(int code) { MPI_Abort(MPI_COMM_WORLD, code); }

void comm_world_init(Ctx *ctx, MPI_Comm *world) {
    ctx_init_tool(ctx);
    ctx->abort_job = abort_world;
    MPI_CHECK(ctx, MPI_Comm_rank(MPI_COMM_WORLD, &ctx->rank));
    MPI_CHECK(ctx, MPI_Comm_size(MPI_COMM_WORLD, &ctx->size));
    MPI_CHECK(ctx, MPI_Comm_dup(MPI_COMM_WORLD, world));
    MPI_CHECK(ctx, MPI_Comm_set_errhandler(*world, MPI_ERRORS_RETURN));
}

void comm_world_free(const Ctx *ctx, MPI_Comm *world) {
    if (*world != MPI_COMM_NULL) MPI_CHECK(ctx, MPI_Comm_free(world));
}

void comm_init(Comm *c, const Ctx *ctx, MPI_Comm world, const Layout *lay, const ProtoLimits *lim) {
    memset(c, 0, sizeof *c);
    c->ctx = ctx;
    c->world = world;
    c->lay = lay;
    c->lim = *lim;
    c->inbox_cap = proto_max_payload(lim);
    c->inbox = xmalloc_for(sizeof(MsgHeader) + c->inbox_cap, "the receive buffer", NULL);
    for (int i = 0; i < COMM_CTL_SLOTS; i++) sendbuf_init(&c->ctl[i], COMM_CTL_BYTES - sizeof(MsgHeader));
    doorbell_init(&c->bells, ctx, world);
    c->expect_remote = c->bells.remote;
    comm_busy(c);
}

void comm_free(Comm *c) {
    for (int i = 0; i < COMM_CTL_SLOTS; i++) {
        if (c->ctl[i].buf && c->ctl[i].pending) {
            MPI_CHECK(c->ctx, MPI_Cancel(&c->ctl[i].req));
            MPI_CHECK(c->ctx, MPI_Request_free(&c->ctl[i].req));
        }
        sendbuf_free(&c->ctl[i]);
    }
    free(c->inbox);
    c->inbox = NULL;
    doorbell_free(&c->bells, c->ctx);
}

bool comm_send_done(Comm *c, SendBuf *s) {
    if (!s->pending) return true;
    int flag = 0;
    MPI_CHECK(c->ctx, MPI_Test(&s->req, &flag, MPI_STATUS_IGNORE));
    if (flag) s->pending = false;
    return flag != 0;
}

static void count_sent(Comm *c, int tag, size_t bytes) {
    if (tag >= TAG_FIRST && tag < TAG_LAST_) {
        c->msgs_sent[tag - TAG_FIRST]++;
        c->bytes_sent[tag - TAG_FIRST] += bytes;
    }
}

/* The longest sleep of a backoff: short when other nodes' messages ring no
 * bell (waits: what the rank expects; sends: any rank of the job may be the
 * destination, whose progress completes the send). */
static double idle_cap(const Comm *c, bool send) {
    return (send ? c->bells.remote : c->expect_remote) ? COMM_IDLE_REMOTE : COMM_IDLE_MAX;
}

void comm_wait_send(Comm *c, SendBuf *s) {
    /* Our own send completes without a bell (the peer's progress finishes
     * it), so plain short sleeps here, whatever the idle backoff is. */
    double delay = COMM_IDLE_MIN, t0 = 0;
    while (!comm_send_done(c, s)) {
        if (t0 == 0) t0 = now_seconds();
        if (c->poll) continue;
        sleep_seconds(delay);
        delay = fmin(2 * delay, idle_cap(c, true));
    }
    if (t0 != 0) c->wait_seconds += now_seconds() - t0;
}

void comm_send(Comm *c, SendBuf *s, int dest, int tag, MsgHeader h, size_t payload_bytes) {
    if (payload_bytes > s->cap)
        DIE(c->ctx, "%s message of %zu bytes exceeds its buffer (%zu)", proto_tag_name(tag), payload_bytes, s->cap);
    comm_wait_send(c, s);
    h.tag = (uint32_t)tag;
    memcpy(s->buf, &h, sizeof h);
    size_t bytes = sizeof h + payload_bytes;
    if (bytes > (size_t)INT32_MAX) DIE(c->ctx, "message of %zu bytes is too large for MPI", bytes);
    MPI_CHECK(c->ctx, MPI_Isend(s->buf, (int)bytes, MPI_BYTE, dest, tag, c->world, &s->req));
    s->pending = true;
    count_sent(c, tag, bytes);
    doorbell_ring(&c->bells, dest); /* after the send: see doorbell.h */
}

void comm_send_ctl(Comm *c, int dest, int tag, MsgHeader h, const void *payload, size_t payload_bytes) {
    if (payload_bytes > COMM_CTL_BYTES - sizeof(MsgHeader))
        DIE(c->ctx, "control message %s of %zu bytes is too large", proto_tag_name(tag), payload_bytes);
    for (;;) {
        for (int i = 0; i < COMM_CTL_SLOTS; i++) {
            SendBuf *s = &c->ctl[i];
            if (!comm_send_done(c, s)) continue;
            if (payload_bytes) memcpy(sendbuf_payload(s), payload, payload_bytes);
            comm_send(c, s, dest, tag, h, payload_bytes);
            return;
        }
        /* Every slot in flight: the receivers are behind; keep MPI
         * progressing without spinning. */
        comm_idle(c);
    }
}

static _Noreturn void malformed(const Comm *c, int source, int tag, const char *what) {
    Role role = ROLE_TOOL;
    int index = 0;
    if (source >= 0 && source < c->lay->size) layout_role_of(c->lay, source, &role, &index);
    DIE(c->ctx, "malformed %s message (tag %d) from rank %d (%s %d): %s", proto_tag_name(tag), tag, source,
        role_name(role), index, what);
}

/* This rank got a stop signal: ask the coordinator to stop the job
 * (once), and go on as before until its STOP comes. */
static void forward_stop(Comm *c) {
    c->stop_forwarded = true;
    int sig = signals_stop_signal();
    MsgHeader h = {0}; /* the coordinator logs it, naming this rank */
    h.version = (uint64_t)sig;
    comm_send_ctl(c, 0, TAG_STOP_REQ, h, NULL, 0);
}

bool comm_poll(Comm *c, Msg *m) { return comm_poll_tag(c, MPI_ANY_TAG, m); }

bool comm_poll_tag(Comm *c, int only, Msg *m) {
    /* Every loop of every rank polls: the place to see a stop signal. */
    if (c->forward_stop && !c->stop_forwarded && signals_stop_requested()) forward_stop(c);
    int flag = 0;
    MPI_Status st;
    /* Open MPI's MPI_Iprobe looks at the queue of arrived messages first
     * and only then runs the progress engine, which moves what has landed
     * in shared memory into that queue: a message that woke us is seen by
     * the second call, not the first (measured: 97% of doorbell wake-ups
     * found nothing on one call, and the message waited for the next
     * timeout). */
    MPI_CHECK(c->ctx, MPI_Iprobe(MPI_ANY_SOURCE, only, c->world, &flag, &st));
    if (!flag) MPI_CHECK(c->ctx, MPI_Iprobe(MPI_ANY_SOURCE, only, c->world, &flag, &st));
    if (!flag) return false;
    int count = 0;
    MPI_CHECK(c->ctx, MPI_Get_count(&st, MPI_BYTE, &count));
    int tag = st.MPI_TAG, source = st.MPI_SOURCE;
    if (tag == TAG_RING || tag == TAG_NAIVE)
        DIE(c->ctx, "%s allreduce message from rank %d on the main communicator", proto_tag_name(tag), source);
    /* Receive first (even a bad message must be taken off the wire so the
     * error names it), into the inbox if it fits. */
    size_t cap = sizeof(MsgHeader) + c->inbox_cap;
    if (count < 0 || (size_t)count > cap) {
        char why[128];
        snprintf(why, sizeof why, "%d bytes, larger than any valid message (%zu)", count, cap);
        malformed(c, source, tag, why);
    }
    MPI_CHECK(c->ctx, MPI_Recv(c->inbox, count, MPI_BYTE, source, tag, c->world, MPI_STATUS_IGNORE));
    if ((size_t)count < sizeof(MsgHeader)) malformed(c, source, tag, "shorter than a message header");
    memcpy(&m->h, c->inbox, sizeof(MsgHeader));
    if ((int)m->h.tag != tag) {
        char why[96];
        snprintf(why, sizeof why, "header says tag %u", m->h.tag);
        malformed(c, source, tag, why);
    }
    const char *why = NULL;
    size_t want = proto_payload_bytes(&m->h, &c->lim, &why);
    if (want == (size_t)-1) malformed(c, source, tag, why);
    size_t got = (size_t)count - sizeof(MsgHeader);
    if (got != want) {
        char buf[160];
        snprintf(buf, sizeof buf, "payload of %zu bytes, expected %zu for count %" PRIu64, got, want,
                 m->h.count);
        malformed(c, source, tag, buf);
    }
    char what[160];
    why = proto_payload_check(&m->h, c->inbox + sizeof(MsgHeader), &c->lim, what, sizeof what);
    if (why) malformed(c, source, tag, why);
    m->source = source;
    m->tag = tag;
    m->payload = c->inbox + sizeof(MsgHeader);
    m->bytes = got;
    c->msgs_recv[tag - TAG_FIRST]++;
    c->bytes_recv[tag - TAG_FIRST] += (size_t)count;
    comm_busy(c);
    return true;
}

/* With doorbells every wait starts at the long timeout: a message from a
 * rank of this node rings at once, and a ladder of short timeouts would
 * only cost wake-ups (measured: the PS of a CartPole job spent as much CPU
 * in them as in its work). Without, back off from the shortest sleep. */
void comm_busy(Comm *c) {
    if (c->expect_remote) c->busy_at = now_seconds(); /* only the yield window reads it */
    c->idle_delay = !doorbell_enabled(&c->bells) ? COMM_IDLE_MIN : c->expect_remote ? COMM_IDLE_REMOTE_MIN : COMM_IDLE_BELL;
}

void comm_expect(Comm *c, const int *ranks, int n) {
    bool remote = c->bells.remote && n != 0;
    /* Without bells every wait is a timed sleep: keep it short. */
    if (!doorbell_enabled(&c->bells)) remote = c->bells.remote;
    else if (remote && n > 0) {
        remote = false;
        for (int i = 0; i < n; i++) remote |= c->bells.slot_of[ranks[i]] < 0;
    }
    if (remote == c->expect_remote) return;
    c->expect_remote = remote;
    comm_busy(c);
}


void comm_set_wait(Comm *c, WaitMode m) {
    c->poll = m == WAIT_POLL || (m == WAIT_AUTO && !doorbell_oversubscribed(&c->bells));
}

void comm_idle(Comm *c) {
    if (c->poll) return; /* the caller's loop looks again at once */
    double t0 = now_seconds();
    /* Waiting for another node's message, soon after the last one: yield
     * the core instead of napping (COMM_YIELD_REMOTE). */
    if (c->expect_remote && t0 - c->busy_at < COMM_YIELD_REMOTE) {
        sched_yield();
        c->wait_seconds += now_seconds() - t0;
        return;
    }
    if (doorbell_enabled(&c->bells)) {
        int me = c->ctx->rank;
        doorbell_arm(&c->bells, me);
        /* Last look, now that senders will ring (doorbell.h). Two probes:
         * the first only runs the progress engine (comm_poll). */
        int found = 0;
        MPI_CHECK(c->ctx, MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, c->world, &found, MPI_STATUS_IGNORE));
        if (!found) MPI_CHECK(c->ctx, MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, c->world, &found, MPI_STATUS_IGNORE));
        if (found)
            doorbell_disarm(&c->bells, me);
        else
            doorbell_wait(&c->bells, me, c->idle_delay);
        if (c->expect_remote) c->idle_delay = fmin(2 * c->idle_delay, COMM_IDLE_REMOTE);
    } else {
        sleep_seconds(c->idle_delay);
        c->idle_delay = fmin(2 * c->idle_delay, idle_cap(c, false));
    }
    c->wait_seconds += now_seconds() - t0;
}

bool comm_drain(Comm *c, SendBuf **bufs, int n, const int *keep, int n_keep, Msg *m) {
    for (;;) {
        bool done = true;
        for (int i = 0; i < n; i++) done &= comm_send_done(c, bufs[i]);
        for (int i = 0; i < COMM_CTL_SLOTS; i++) done &= comm_send_done(c, &c->ctl[i]);
        Msg tmp;
        bool got = comm_poll(c, &tmp);
        if (got) {
            for (int k = 0; k < n_keep; k++) {
                if (tmp.tag == keep[k]) {
                    *m = tmp;
                    return true;
                }
            }
            continue; /* discarded; look again at once */
        }
        if (done && !keep) return false;
        comm_idle(c);
    }
}

void comm_fill_metrics(const Comm *c, RoleMetrics *rm) {
    memcpy(rm->msgs_sent, c->msgs_sent, sizeof rm->msgs_sent);
    memcpy(rm->bytes_sent, c->bytes_sent, sizeof rm->bytes_sent);
    memcpy(rm->msgs_recv, c->msgs_recv, sizeof rm->msgs_recv);
    memcpy(rm->bytes_recv, c->bytes_recv, sizeof rm->bytes_recv);
    rm->wait_seconds = c->wait_seconds;
}
