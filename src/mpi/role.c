/* SPDX-License-Identifier: MIT */
/* role.c: see role.h. */
#include "role.h"
#include "clock.h"
#include "pacing.h"
#include "agentcfg.h"
#include "shard.h"
#include "util.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void role_init(RoleBase *rb, const Ctx *ctx, const JobArgs *args) {
    memset(rb, 0, sizeof *rb);
    rb->ctx = ctx;
    rb->cfg = args->cfg;
    rb->lay = args->lay;
    char err[ERR_LEN];
    if (agentcfg_qnet(rb->cfg, &rb->net, err) != 0) DIE(ctx, "%s", err);
    ProtoLimits lim = proto_limits(rb->cfg, rb->lay, &rb->net);
    comm_init(&rb->comm, ctx, args->world, rb->lay, &lim);
    comm_set_wait(&rb->comm, rb->cfg->run.wait);
    rb->comm.forward_stop = ctx->role != ROLE_COORD;
    trace_init(&rb->trace, lim.max_trace);
    if (lim.max_trace && ctx->role != ROLE_COORD) sendbuf_init(&rb->trace_out, proto_trace_bytes(PROTO_TRACE_PER_MSG));
    const Layout *lay = rb->lay;
    if (layout_params_in_learner(rb->cfg)) {
        rb->n_sources = 1;
        rb->source_rank[0] = layout_rank_of(lay, ROLE_LEARNER, 0);
        rb->source_off[0] = 0;
        rb->source_len[0] = rb->net.n_params;
    } else {
        rb->n_sources = lay->count[ROLE_PS];
        if (rb->n_sources > ROLE_MAX_SOURCES) DIE(ctx, "more than %d parameter servers", ROLE_MAX_SOURCES);
        for (int p = 0; p < rb->n_sources; p++) {
            rb->source_rank[p] = layout_rank_of(lay, ROLE_PS, p);
            shard_range(rb->net.n_params, rb->n_sources, p, &rb->source_off[p], &rb->source_len[p]);
        }
    }
    rb->m.role = (int32_t)ctx->role;
    rb->m.index = ctx->index;
    rb->t_start = now_seconds();
    rb->next_metrics = rb->t_start;
    rb->metrics_period = ctx->role == ROLE_ACTOR ? ACTOR_METRICS_PERIOD : ROLE_METRICS_PERIOD;
}

void role_free(RoleBase *rb) {
    trace_free(&rb->trace);
    sendbuf_free(&rb->trace_out);
    comm_free(&rb->comm);
}

int role_source_index(const RoleBase *rb, int rank) {
    for (int p = 0; p < rb->n_sources; p++)
        if (rb->source_rank[p] == rank) return p;
    return -1;
}

int role_params_source(const RoleBase *rb, const Msg *m, bool expected) {
    int p = role_source_index(rb, m->source);
    if (p < 0 || !expected) DIE(rb->ctx, "unexpected PARAMS from rank %d", m->source);
    if (m->h.params.offset != rb->source_off[p] || m->h.count != rb->source_len[p])
        DIE(rb->ctx, "PARAMS from rank %d cover [%" PRIu64 ", +%" PRIu64 "), expected [%zu, +%zu)", m->source,
            m->h.params.offset, m->h.count, rb->source_off[p], rb->source_len[p]);
    return p;
}

void role_ckpt_done(RoleBase *rb, uint64_t id, uint64_t version, int rc, const char *err, const char *dir) {
    MsgHeader h = {0};
    h.version = id;
    h.ckpt_done.saved = version;
    h.flags = rc ? MSG_FAILED : 0;
    /* Failed: who failed where, and when the checkpoint directory the
     * coordinator made is not there at all, why that is likely. */
    char text[PROTO_MAX_TEXT] = "";
    if (rc) {
        char host[256];
        host_name(host, sizeof host, "?");
        int n = snprintf(text, sizeof text, "%s %d (rank %d) on %s: %s", role_name(rb->ctx->role), rb->ctx->index,
                         rb->ctx->rank, host, err);
        if (access(dir, F_OK) != 0 && n > 0 && (size_t)n < sizeof text)
            snprintf(text + n, sizeof text - (size_t)n,
                     " (the checkpoint directory %s does not exist on %s: every host that runs a parameter server "
                     "or a replay shard must see the run directory at the same path, a shared filesystem: "
                     "docs/MULTIHOST.md)", dir, host);
    }
    size_t len = strlen(text);
    h.count = len;
    comm_send_ctl(&rb->comm, 0, TAG_CKPT_DONE, h, text, len);
}

static void fill(RoleBase *rb) {
    comm_fill_metrics(&rb->comm, &rb->m);
    double elapsed = now_seconds() - rb->t_start;
    rb->m.busy_seconds = elapsed - rb->m.wait_seconds;
    rb->m.cpu_seconds = cpu_seconds();
}

void role_report(RoleBase *rb, bool force) {
    double t = now_seconds();
    if (!force && t < rb->next_metrics) return;
    rb->next_metrics = t + rb->metrics_period;
    fill(rb);
    MsgHeader h = {0};
    comm_send_ctl(&rb->comm, 0, TAG_METRICS, h, &rb->m, sizeof rb->m);
}

/* The held events to the coordinator, oldest first, in TRACE messages of
 * at most PROTO_TRACE_PER_MSG (at least one, so the coordinator learns the
 * clock and the drop count of a rank that recorded nothing). Each message is
 * completed before the buffer is refilled, discarding what arrives
 * meanwhile, as the rest of the shutdown does. All go before STOPPED, so a
 * coordinator holding every STOPPED holds every trace (MPI keeps the order
 * between two ranks). */
static void send_trace(RoleBase *rb) {
    const Trace *t = &rb->trace;
    if (!trace_on(t)) return;
    TraceClock clk;
    trace_clock(&clk);
    SendBuf *out = &rb->trace_out;
    size_t first = 0;
    do {
        size_t k = t->n - first < PROTO_TRACE_PER_MSG ? t->n - first : PROTO_TRACE_PER_MSG;
        uint8_t *p = sendbuf_payload(out);
        memcpy(p, &clk, sizeof clk);
        TraceEvent *ev = (TraceEvent *)(p + sizeof clk);
        for (size_t i = 0; i < k; i++) ev[i] = trace_get(t, first + i);
        MsgHeader h = {0};
        h.count = k;
        h.version = first;
        h.trace.total = t->n;
        h.trace.dropped = t->dropped;
        comm_send(&rb->comm, out, 0, TAG_TRACE, h, proto_trace_bytes(k));
        Msg m;
        comm_drain(&rb->comm, &out, 1, NULL, 0, &m);
        first += k;
    } while (first < t->n);
}

void role_shutdown(RoleBase *rb, SendBuf **bufs, int n) {
    Msg m;
    comm_drain(&rb->comm, bufs, n, NULL, 0, &m);
    send_trace(rb);
    fill(rb);
    MsgHeader h = {0};
    comm_send_ctl(&rb->comm, 0, TAG_STOPPED, h, &rb->m, sizeof rb->m);
    const int keep[] = {TAG_EXIT};
    comm_drain(&rb->comm, bufs, n, keep, 1, &m);
    rb->comm.forward_stop = false; /* the coordinator is past listening */
    /* Our STOPPED and anything else still queued must leave before we go. */
    comm_drain(&rb->comm, bufs, n, NULL, 0, &m);
}
