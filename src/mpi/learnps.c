/* SPDX-License-Identifier: MIT */
/* learnps.c: the learner's parameter-server path (learnerint.h), the sync
 * family of ps_sync, ps_async and ps_bounded: the global-norm clipped
 * gradient is cut into the PS shards' slices (shard_range) and each slice
 * is sent to its shard tagged with the version of that shard's parameters
 * it was computed on; fresh parameters (and the target slice when it
 * changed) come back in the shards' PARAMS replies. In ps_sync every update
 * pulls; otherwise every sync.learner_pull_every updates.
 *
 * The link to the shards (LearnPsLink: a send buffer per slice, the
 * versions each shard last sent) is easgd's too, whose exchanges with the
 * center travel over it (learndecent.c).
 *
 * Also here: a parameter-server mode without parameter servers
 * (roles.param_servers 0, one learner). The learner holds the whole
 * network as the job's parameter source and applies its own gradient, the
 * step the one PS would have applied (the same optimizer, clip and finite
 * checks), so the next gradient is computed at the parameters a PS would
 * have sent back, with no round trip.
 */
#include "learnerint.h"
#include "clock.h"

#include <stdlib.h>
#include <string.h>

struct LearnPs {
    LearnPsLink link;
    float *copy_params, *copy_target;  /* (n) the storage behind l->params, l->target */
    uint64_t pull_every;      /* updates between pulls */
    uint64_t pushed;          /* gradients sent (the pull schedule counts these, not dropped ones) */
};

void learnps_link_init(Learner *l, LearnPsLink *k) {
    int P = l->rb.n_sources;
    k->reply = xcalloc((size_t)P, sizeof *k->reply);
    for (int p = 0; p < P; p++) k->reply[p].tversion = UINT64_MAX;
    k->gradbuf = xcalloc((size_t)P, sizeof *k->gradbuf);
    for (int p = 0; p < P; p++) sendbuf_init(&k->gradbuf[p], proto_grad_bytes(l->rb.source_len[p]));
}

void learnps_link_free(Learner *l, LearnPsLink *k) {
    for (int p = 0; k->gradbuf && p < l->rb.n_sources; p++) sendbuf_free(&k->gradbuf[p]);
    free(k->gradbuf);
    free(k->reply);
}

void learnps_on_params(Learner *l, LearnPsLink *k, const Msg *m) {
    int p = role_params_source(&l->rb, m, k->pulling);
    const float *src = m->payload;
    memcpy(l->params + m->h.params.offset, src, m->h.count * sizeof(float));
    k->reply[p].version = m->h.version;
    if (m->h.flags & MSG_HAS_TARGET) {
        memcpy(l->target + m->h.params.offset, src + m->h.count, m->h.count * sizeof(float));
        k->reply[p].tversion = m->h.params.target_version;
    }
    if (++k->got == l->rb.n_sources) k->pulling = false;
}

void learnps_link_finish(Learner *l, LearnPsLink *k) {
    /* Tell every PS that no gradient of ours follows (see proto.h). */
    MsgHeader h = {0};
    SendBuf *bufs[ROLE_MAX_SOURCES];
    for (int p = 0; p < l->rb.n_sources; p++) {
        comm_send_ctl(&l->rb.comm, l->rb.source_rank[p], TAG_STOPPED, h, &l->rb.m, sizeof l->rb.m);
        bufs[p] = &k->gradbuf[p];
    }
    if (l->own) pshard_write_held(l->own); /* easgd: the learner's own copy in a final checkpoint */
    role_shutdown(&l->rb, bufs, l->rb.n_sources);
}

static void pull_params(Learner *l, bool want_target) {
    LearnPsLink *k = &l->fam.ps->link;
    MsgHeader h = {0};
    for (int p = 0; p < l->rb.n_sources; p++) {
        h.param_req.target_held = want_target ? k->reply[p].tversion : 0;
        h.flags = want_target ? 0 : MSG_NO_TARGET;
        comm_send_ctl(&l->rb.comm, l->rb.source_rank[p], TAG_PARAM_REQ, h, NULL, 0);
    }
    k->got = 0;
    k->pulling = true;
}

static void push_grad(Learner *l, bool want_params) {
    LearnPsLink *k = &l->fam.ps->link;
    for (int p = 0; p < l->rb.n_sources; p++) {
        SendBuf *s = &k->gradbuf[p];
        comm_wait_send(&l->rb.comm, s);
        memcpy(sendbuf_payload(s), l->grad + l->rb.source_off[p], l->rb.source_len[p] * sizeof(float));
        MsgHeader h = {0};
        h.count = l->rb.source_len[p];
        h.version = k->reply[p].version;
        h.grad.learner = (uint64_t)l->rb.ctx->index;
        h.grad.target_held = k->reply[p].tversion;
        h.flags = want_params ? MSG_WANT_PARAMS : 0;
        comm_send(&l->rb.comm, s, l->rb.source_rank[p], TAG_GRAD, h, proto_grad_bytes(l->rb.source_len[p]));
    }
    if (want_params) {
        k->got = 0;
        k->pulling = true;
    }
}

/* A copy of the network filled by PARAMS, the first pull before any
 * gradient. */
static void init_ps(Learner *l) {
    const Config *cfg = l->rb.cfg;
    LearnPs *ps = l->fam.ps = xcalloc(1, sizeof *ps);
    ps->copy_params = xmalloc_for(l->n * sizeof(float), "network parameters", "network.hidden");
    ps->copy_target = xmalloc_for(l->n * sizeof(float), "target network", "network.hidden");
    l->params = ps->copy_params;
    l->target = ps->copy_target;
    learnps_link_init(l, &ps->link);
    ps->pull_every = cfg->sync.mode == SYNC_PS_SYNC ? 1 : (uint64_t)cfg->sync.learner_pull_every;
    pull_params(l, true);
    LEARNER_WAIT_UNTIL(l, !ps->link.pulling);
}

/* Each gradient goes out in slices; with a pull due, wait for the PARAMS. */
static bool step_ps(Learner *l, bool have_grad) {
    if (!have_grad) return !l->stop;
    LearnPs *ps = l->fam.ps;
    double t0 = now_seconds();
    push_grad(l, ++ps->pushed % ps->pull_every == 0);
    double t1 = now_seconds();
    trace_span(&l->rb.trace, TR_SEND_GRAD, t0, t1, (uint32_t)l->rb.n_sources);
    if (ps->link.pulling) {
        comm_expect(&l->rb.comm, l->rb.source_rank, l->rb.n_sources);
        LEARNER_WAIT_UNTIL(l, !ps->link.pulling);
        trace_span(&l->rb.trace, TR_WAIT_PARAMS, t1, now_seconds(), 0);
    }
    l->rb.m.sync_seconds += now_seconds() - t0;
    uint64_t v = UINT64_MAX;
    for (int p = 0; p < l->rb.n_sources; p++)
        if (ps->link.reply[p].version < v) v = ps->link.reply[p].version;
    l->rb.m.params_version = v;
    return !l->stop;
}

static void on_params_ps(Learner *l, const Msg *m) { learnps_on_params(l, &l->fam.ps->link, m); }

static void finish_ps(Learner *l) {
    LearnPs *ps = l->fam.ps;
    learnps_link_finish(l, &ps->link);
    learnps_link_free(l, &ps->link);
    free(ps->copy_params);
    free(ps->copy_target);
    free(ps);
}

const LearnerSync learnps_sync = {init_ps, step_ps, on_params_ps, finish_ps};

/* ---- no parameter servers: the learner is the parameter source ---- */

static void init_local(Learner *l) {
    PShard *sh = l->fam.local = xcalloc(1, sizeof *sh);
    pshard_init(sh, &l->rb, l->args, 0, 0, l->n, true);
    l->own = sh;
    l->params = sh->params;
    l->target = sh->target;
}

static bool step_local(Learner *l, bool have_grad) {
    if (have_grad) learncore_apply_own(l);
    return !l->stop;
}

static void finish_local(Learner *l) {
    learncore_finish_own(l);
    pshard_free(l->fam.local);
    free(l->fam.local);
}

const LearnerSync learnps_local = {init_local, step_local, NULL, finish_local};
