/* SPDX-License-Identifier: MIT */
/* pshard.c: see pshard.h. */
#include "pshard.h"
#include "clock.h"
#include "exitcode.h"
#include "agentcfg.h"
#include "runckpt.h"
#include "util.h"

#include <inttypes.h>
#include <assert.h>
#include <stdlib.h>
#include <string.h>

/* Ranks that may ask a source for PARAMS: the coordinator (evaluation),
 * the actors, and the learners unless they hold the parameters themselves
 * (allreduce: each holds its own copy and learner 0 is the source; a
 * parameter-server mode without parameter servers: the one learner). */
static void init_replies(PShard *s) {
    const Layout *lay = s->rb->lay;
    bool learners = !layout_params_in_learner(s->rb->cfg);
    int n = 1 + lay->count[ROLE_ACTOR] + (learners ? lay->count[ROLE_LEARNER] : 0);
    s->reply = xcalloc((size_t)lay->size, sizeof *s->reply);
    s->bufs = xcalloc((size_t)n, sizeof *s->bufs);
    int ranks = 0;
    s->bufs[ranks++] = &s->reply[layout_rank_of(lay, ROLE_COORD, 0)];
    for (int a = 0; a < lay->count[ROLE_ACTOR]; a++) s->bufs[ranks++] = &s->reply[layout_rank_of(lay, ROLE_ACTOR, a)];
    for (int l = 0; learners && l < lay->count[ROLE_LEARNER]; l++)
        s->bufs[ranks++] = &s->reply[layout_rank_of(lay, ROLE_LEARNER, l)];
    for (int i = 0; i < ranks; i++) sendbuf_init(s->bufs[i], proto_params_bytes(s->len, 1));
    s->n_bufs = ranks;
}

/* The resumed state of s from the checkpoint: learner copy `copy` (>= 0)
 * when the checkpoint holds it, else the slice of the shard files. */
static void read_resumed(PShard *s, const JobArgs *args, int copy) {
    RoleBase *rb = s->rb;
    char err[ERR_LEN];
    RunCkptShard sh = {.index = s->index, .off = s->off, .len = s->len, .params = s->params, .target = s->target,
                       .opt = &s->opt};
    bool found = false;
    if (copy >= 0 &&
        runckpt_read_copy(rb->cfg, &rb->net, args->start.ckpt_dir, copy, rb->lay->count[ROLE_LEARNER], &sh, &found,
                          err) != 0)
        DIE_CODE(rb->ctx, GORILA_EXIT_CKPT_READ, "%s", err);
    if (copy >= 0 && !found)
        log_info(rb->ctx, "learner %d: %s holds no copy of its own; it starts from the parameter sources' state",
                 copy, args->start.ckpt_dir);
    if (!found && runckpt_read_slice(rb->cfg, &rb->net, args->start.ckpt_dir, &sh, err) != 0)
        DIE_CODE(rb->ctx, GORILA_EXIT_CKPT_READ, "%s", err);
    s->version = sh.version;
    s->target_version = sh.target_version;
}

void pshard_init(PShard *s, RoleBase *rb, const JobArgs *args, int index, size_t off, size_t len, bool serves) {
    memset(s, 0, sizeof *s);
    s->copy = -1;
    s->rb = rb;
    s->index = index;
    s->off = off;
    s->len = len;
    s->serves = serves;
    const Config *cfg = rb->cfg;
    s->params = xmalloc_for(len * sizeof(float), "network parameters", "network.hidden");
    s->target = xmalloc_for(len * sizeof(float), "target network", "network.hidden");
    OptimParams op;
    agentcfg_optim_params(cfg, &op);
    optim_init(&s->opt, &op, len);
    if (args->start.resumed) {
        read_resumed(s, args, -1);
    } else {
        /* Every slice draws the whole initialisation and keeps its part, so
         * the network starts exactly as in a local run of the same seed. */
        size_t n = rb->net.n_params;
        float *full = xmalloc_for(n * sizeof(float), "initialisation scratch", "network.hidden");
        Rng init_rng;
        rng_seed(&init_rng, cfg->run.seed, RNG_STREAM_INIT);
        qnet_init_params(&rb->net, full, &init_rng);
        memcpy(s->params, full + off, len * sizeof(float));
        memcpy(s->target, s->params, len * sizeof(float));
        free(full);
    }
    rb->m.params_version = s->version;
    if (serves) {
        init_replies(s);
        s->snap.params = xmalloc_for(len * sizeof(float), "evaluation snapshot", "network.hidden");
        s->snap.target = xmalloc_for(len * sizeof(float), "evaluation snapshot", "network.hidden");
        s->snap.opt_state = xmalloc_for(s->opt.n_state * sizeof(float), "evaluation snapshot", "network.hidden");
    }
}

void pshard_init_copy(PShard *s, RoleBase *rb, const JobArgs *args, int learner) {
    JobArgs fresh = *args;
    fresh.start.resumed = false; /* drawn, then replaced below */
    pshard_init(s, rb, &fresh, 0, 0, rb->net.n_params, false);
    s->copy = learner;
    if (args->start.resumed) {
        read_resumed(s, args, learner);
        rb->m.params_version = s->version;
    }
}

void pshard_free(PShard *s) {
    for (int i = 0; i < s->n_bufs; i++) sendbuf_free(s->bufs[i]);
    free(s->bufs);
    free(s->reply);
    free(s->params);
    free(s->target);
    free(s->snap.params);
    free(s->snap.target);
    free(s->snap.opt_state);
    optim_free(&s->opt);
    memset(s, 0, sizeof *s);
}

void pshard_apply(PShard *s, const float *grad) {
    optim_step(&s->opt, s->params, grad);
    s->version++;
    if (agentcfg_target_update(s->rb->cfg, s->version, s->target, s->params, s->len)) s->target_version++;
    s->rb->m.params_version = s->version;
}

void pshard_report_if_due(PShard *s) {
    if (s->rb->ctx->index != 0) return;
    const Config *cfg = s->rb->cfg;
    uint64_t v = s->version, ev = cfg->eval.every_updates, ck = cfg->checkpoint.every_updates;
    uint64_t mu = cfg->run.max_updates;
    if ((ev && v % ev == 0) || (ck && v % ck == 0) || (mu && v == mu)) role_report(s->rb, true);
}

/* Did [from, to) cross a multiple of every (0: never)? */
static bool crossed(uint64_t from, uint64_t to, uint64_t every) { return every && to / every != from / every; }

void pshard_elastic_move(PShard *s, const float *x, float alpha, uint64_t steps, float *d) {
    for (size_t i = 0; i < s->len; i++) {
        d[i] = alpha * (x[i] - s->params[i]);
        s->params[i] += d[i];
    }
    for (uint64_t k = 0; k < steps; k++) {
        s->version++;
        if (agentcfg_target_update(s->rb->cfg, s->version, s->target, s->params, s->len)) s->target_version++;
    }
    s->rb->m.params_version = s->version;
}

void pshard_elastic(PShard *s, int rank, const float *x, float alpha, uint64_t steps) {
    assert(s->serves);
    if (rank < 0 || rank >= s->rb->lay->size || !s->reply[rank].buf)
        DIE(s->rb->ctx, "an elastic exchange with rank %d", rank);
    SendBuf *b = &s->reply[rank];
    comm_wait_send(&s->rb->comm, b);
    uint64_t from = s->version;
    pshard_elastic_move(s, x, alpha, steps, sendbuf_payload(b));
    const Config *cfg = s->rb->cfg;
    MsgHeader h = {0};
    h.count = s->len;
    h.version = s->version;
    h.params.offset = s->off;
    h.params.target_version = s->target_version;
    h.flags = MSG_ELASTIC;
    comm_send(&s->rb->comm, b, rank, TAG_PARAMS, h, proto_params_bytes(s->len, false));
    if (s->rb->ctx->index == 0 &&
        (crossed(from, s->version, cfg->eval.every_updates) || crossed(from, s->version, cfg->checkpoint.every_updates) ||
         (cfg->run.max_updates && from < cfg->run.max_updates && s->version >= cfg->run.max_updates)))
        role_report(s->rb, true);
}

void pshard_send_params(PShard *s, int rank, bool with_target) {
    assert(s->serves);
    const Layout *lay = s->rb->lay;
    if (rank < 0 || rank >= lay->size || !s->reply[rank].buf) {
        Role role = ROLE_TOOL;
        int i = -1;
        if (rank >= 0 && rank < lay->size) layout_role_of(lay, rank, &role, &i);
        DIE(s->rb->ctx, "PARAMS asked for by rank %d (%s %d), which never takes parameters", rank, role_name(role), i);
    }
    double t0 = now_seconds();
    SendBuf *b = &s->reply[rank];
    comm_wait_send(&s->rb->comm, b);
    float *p = sendbuf_payload(b);
    memcpy(p, s->params, s->len * sizeof(float));
    if (with_target) memcpy(p + s->len, s->target, s->len * sizeof(float));
    MsgHeader h = {0};
    h.count = s->len;
    h.version = s->version;
    h.params.offset = s->off;
    h.params.target_version = s->target_version;
    h.flags = with_target ? MSG_HAS_TARGET : 0;
    comm_send(&s->rb->comm, b, rank, TAG_PARAMS, h, proto_params_bytes(s->len, with_target));
    trace_span(&s->rb->trace, TR_SERVE_PARAMS, t0, now_seconds(), (uint32_t)rank);
}

static void take_snapshot(PShard *s, uint64_t id) {
    PShardSnap *p = &s->snap;
    memcpy(p->params, s->params, s->len * sizeof(float));
    memcpy(p->target, s->target, s->len * sizeof(float));
    if (s->opt.n_state) memcpy(p->opt_state, s->opt.state, s->opt.n_state * sizeof(float));
    p->opt_step = s->opt.step;
    p->version = s->version;
    p->target_version = s->target_version;
    p->id = id;
}

void pshard_on_param_req(PShard *s, const Msg *m) {
    if (m->h.flags & MSG_SNAPSHOT) {
        if (m->h.version == 0) DIE(s->rb->ctx, "PARAM_REQ from rank %d asks for a snapshot with id 0", m->source);
        take_snapshot(s, m->h.version);
    }
    bool with_target = !(m->h.flags & MSG_NO_TARGET) && m->h.param_req.target_held != s->target_version;
    pshard_send_params(s, m->source, with_target);
}

/* Write the live state (snap NULL) or the snapshot into dir and answer. */
static void write_answer(PShard *s, const CkptReq *q) {
    char err[ERR_LEN];
    Optim snap_opt;
    RunCkptShard sh = {
        .index = s->index, .off = s->off, .len = s->len,
        .params = s->params, .target = s->target, .opt = &s->opt,
        .version = s->version, .target_version = s->target_version,
        .run_id = q->run_id, .seq = q->id, .n_shards = s->rb->n_sources,
    };
    int rc = 0;
    if (q->snapshot) {
        const PShardSnap *p = &s->snap;
        if (p->id != q->snapshot) {
            rc = errf(err, "shard %d holds the snapshot of evaluation %" PRIu64 ", not %" PRIu64, s->index,
                      p->id, q->snapshot);
        } else {
            snap_opt = s->opt; /* same kind and sizes; the state and step of the snapshot */
            snap_opt.state = p->opt_state;
            snap_opt.step = p->opt_step;
            sh.params = p->params;
            sh.target = p->target;
            sh.opt = &snap_opt;
            sh.version = p->version;
            sh.target_version = p->target_version;
        }
    }
    if (s->copy >= 0) { /* a learner's own copy, one of the job's learners */
        sh.index = s->copy;
        sh.n_shards = s->rb->lay->count[ROLE_LEARNER];
    }
    double t0 = now_seconds();
    if (rc == 0)
        rc = s->copy >= 0 ? runckpt_write_copy(s->rb->cfg, &s->rb->net, q->dir, &sh, err)
                          : runckpt_write_shard(s->rb->cfg, &s->rb->net, q->dir, &sh, err);
    trace_span(&s->rb->trace, TR_CKPT, t0, now_seconds(), (uint32_t)q->id);
    role_ckpt_done(s->rb, q->id, sh.version, rc, err, q->dir);
}

void pshard_on_ckpt_req(PShard *s, const Msg *m, bool hold_final) {
    assert(s->serves || s->copy >= 0);
    CkptReq q = {.id = m->h.version, .run_id = m->h.ckpt_req.run_id,
                 .snapshot = (m->h.flags & MSG_SNAPSHOT) ? m->h.ckpt_req.snapshot : 0};
    if (!s->serves && q.snapshot) DIE(s->rb->ctx, "CKPT_REQ from rank %d asks learner %d's copy for a snapshot", m->source, s->copy);
    /* comm_poll bounds the path by PROTO_MAX_TEXT (proto_payload_bytes). */
    memcpy(q.dir, m->payload, m->bytes);
    q.dir[m->bytes] = '\0';
    if ((m->h.flags & MSG_SNAPSHOT) && q.snapshot == 0)
        DIE(s->rb->ctx, "CKPT_REQ from rank %d asks for the snapshot of evaluation 0", m->source);
    if (hold_final && (m->h.flags & MSG_FINAL) && !q.snapshot) {
        s->final_pending = true;
        s->final = q;
        return;
    }
    write_answer(s, &q);
}

void pshard_write_held(PShard *s) {
    if (!s->final_pending) return;
    s->final_pending = false;
    write_answer(s, &s->final);
}
