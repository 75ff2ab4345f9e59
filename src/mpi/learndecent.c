/* SPDX-License-Identifier: MIT */
/* learndecent.c: the learner's decentralized sync families (learnerint.h),
 * gossip and easgd. Every learner applies its own gradients to its own
 * copy of the network (a PShard, with its own optimizer state), and every
 * `every` step calls its copy meets the others:
 *
 *   gossip  (sync.gossip_every) round t: a one-float stop-flag sum over all
 *           learners (ctl), then each averages its parameters with the
 *           partner gossip_peer names (pair_exchange: n floats each way;
 *           (a + b) / 2 is the same bits on both sides). Learner 0's copy
 *           serves the actors and the coordinator, as in allreduce.
 *   easgd   (sync.easgd_every) the parameters go to the PS shards (GRAD with
 *           MSG_ELASTIC, over the PS path's link, learnps.c); each answers
 *           with the center's move, which the copy takes back
 *           (on_params_easgd). The center variable on the parameter servers
 *           serves the actors and evaluations; the copies serve nothing.
 *
 * A learner that has seen STOP goes straight to its next meeting in gossip,
 * where all must leave after the same round (as in allreduce); in easgd,
 * asynchronous like Gorila, it simply leaves.
 * Consensus (RoleMetrics.consensus), measured as the copies meet, before
 * they move: gossip, each learner's distance from the mean of all every
 * GOSSIP_CONSENSUS_ROUNDS rounds, by one more allreduce of the parameters
 * on ctl (not counted as sync traffic); easgd, the distance from the
 * center at every exchange (|move| / alpha).
 */
#include "learnerint.h"
#include "clock.h"
#include "gossip.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define GOSSIP_CONSENSUS_ROUNDS 16

struct LearnGossip {
    LearnRing r;              /* the pair exchanges' ring, the own copy, every and steps */
    Ring ctl;                 /* the learners' one-float stop-flag round, and the consensus
                                 measurement (not counted as sync traffic) */
    float *peer;              /* (n + 1) the partner's parameters; consensus scratch */
};

struct LearnEasgd {
    LearnPsLink link;         /* to the PS shards, which hold the center */
    PShard sh;                /* the learner's own copy (drawn from the run seed like the center,
                                 or read from the checkpoint's center on resume) */
    uint64_t every;           /* sync.easgd_every */
    uint64_t steps;           /* step calls (batches, or K-batch sums) since the start */
    uint64_t since;           /* of those, since the last exchange */
    double elastic_sq;        /* sum of the center's moves squared, this exchange */
};

/* ---- gossip ---- */

static void init_gossip(Learner *l) {
    LearnGossip *g = l->fam.gossip = xcalloc(1, sizeof *g);
    learnring_init(l, &g->r);
    g->r.every = (uint64_t)l->rb.cfg->sync.gossip_every;
    ring_init(&g->ctl, l->rb.ctx, l->rb.comm.world, l->args->learners, &l->rb.comm.bells,
              g->r.ring.poll ? RING_WAIT_POLL : RING_WAIT_SLEEP);
    g->ctl.service = learncore_service;
    g->ctl.service_arg = l;
    g->peer = xmalloc_for((l->n + 1) * sizeof(float), "gossip partner's parameters", "network.hidden");
}

/* Every learner's distance from the mean of all (an allreduce of the
 * parameters on ctl). */
static void gossip_consensus(Learner *l, LearnGossip *g) {
    memcpy(g->peer, g->r.sh.params, l->n * sizeof(float));
    ring_allreduce(&g->ctl, g->peer, l->n);
    optim_scale(g->peer, l->n, 1.0f / (float)l->rb.lay->count[ROLE_LEARNER]);
    learncore_consensus(l, learncore_distance(g->r.sh.params, g->peer, l->n));
}

static bool step_gossip(Learner *l, bool have_grad) {
    LearnGossip *g = l->fam.gossip;
    if (have_grad) learncore_apply_own(l);
    if (++g->r.steps % g->r.every != 0 && !l->stop) return true;
    const Config *cfg = l->rb.cfg;
    double t0 = now_seconds(), waited = g->r.ring.wait_seconds + g->ctl.wait_seconds;
    float flag = l->stop ? 1.0f : 0.0f;
    ring_allreduce(&g->ctl, &flag, 1);
    bool go_on = !(flag > 0);
    if (go_on) {
        uint64_t t = l->rb.m.sync_rounds++;
        /* before the exchange: how far the copies drifted apart */
        if (t % GOSSIP_CONSENSUS_ROUNDS == 0) gossip_consensus(l, g);
        int L = l->rb.lay->count[ROLE_LEARNER];
        int peer = gossip_peer(cfg->sync.gossip_topology, L, l->rb.ctx->index, t, cfg->run.seed);
        if (peer >= 0) {
            float *x = g->r.sh.params;
            const float *y = g->peer;
            pair_exchange(&g->r.ring, x, g->peer, l->n, peer);
            for (size_t i = 0; i < l->n; i++) x[i] = (x[i] + y[i]) * 0.5f;
            if (!floats_finite(x, l->n)) learner_diverged(l, "the parameters are not finite after a gossip exchange");
        }
    }
    double t1 = now_seconds();
    trace_span(&l->rb.trace, TR_ALLREDUCE, t0, t1, 0);
    l->rb.m.sync_seconds += t1 - t0;
    l->rb.comm.wait_seconds += g->r.ring.wait_seconds + g->ctl.wait_seconds - waited;
    learnring_metrics(l, &g->r.ring);
    return go_on;
}

static void finish_gossip(Learner *l) {
    LearnGossip *g = l->fam.gossip;
    learncore_finish_own(l);
    ring_free(&g->r.ring);
    ring_free(&g->ctl);
    free(g->peer);
    pshard_free(&g->r.sh);
    free(g);
}

const LearnerSync learndecent_gossip = {init_gossip, step_gossip, NULL, finish_gossip};

/* ---- easgd ---- */

static void init_easgd(Learner *l) {
    LearnEasgd *e = l->fam.easgd = xcalloc(1, sizeof *e);
    learnps_link_init(l, &e->link);
    learncore_init_own(l, &e->sh);
    e->every = (uint64_t)l->rb.cfg->sync.easgd_every;
}

static bool step_easgd(Learner *l, bool have_grad) {
    LearnEasgd *e = l->fam.easgd;
    if (have_grad) learncore_apply_own(l);
    e->since++;
    if (++e->steps % e->every != 0) return !l->stop;
    double t0 = now_seconds();
    for (int p = 0; p < l->rb.n_sources; p++) {
        SendBuf *b = &e->link.gradbuf[p];
        comm_wait_send(&l->rb.comm, b);
        memcpy(sendbuf_payload(b), e->sh.params + l->rb.source_off[p], l->rb.source_len[p] * sizeof(float));
        MsgHeader h = {0};
        h.count = l->rb.source_len[p];
        h.version = e->link.reply[p].version;
        h.elastic.learner = (uint64_t)l->rb.ctx->index;
        h.elastic.steps = e->since;
        h.flags = MSG_ELASTIC;
        comm_send(&l->rb.comm, b, l->rb.source_rank[p], TAG_GRAD, h, proto_grad_bytes(l->rb.source_len[p]));
    }
    e->since = 0;
    e->link.got = 0;
    e->link.pulling = true;
    e->elastic_sq = 0;
    double t1 = now_seconds();
    trace_span(&l->rb.trace, TR_SEND_GRAD, t0, t1, (uint32_t)l->rb.n_sources);
    comm_expect(&l->rb.comm, l->rb.source_rank, l->rb.n_sources);
    LEARNER_WAIT_UNTIL(l, !e->link.pulling);
    trace_span(&l->rb.trace, TR_WAIT_PARAMS, t1, now_seconds(), 0);
    l->rb.m.sync_seconds += now_seconds() - t0;
    if (!e->link.pulling) {
        l->rb.m.sync_rounds++;
        learncore_consensus(l, sqrt(e->elastic_sq) / l->rb.cfg->sync.easgd_alpha);
        if (!floats_finite(e->sh.params, l->n))
            learner_diverged(l, "the parameters are not finite after an elastic exchange");
    }
    return !l->stop;
}

/* The center moved by d = alpha (x - center); so does this copy, the other
 * way (pshard_elastic). A PARAMS without MSG_ELASTIC is taken as the PS
 * path takes it. */
static void on_params_easgd(Learner *l, const Msg *m) {
    LearnEasgd *e = l->fam.easgd;
    if (!(m->h.flags & MSG_ELASTIC)) {
        learnps_on_params(l, &e->link, m);
        return;
    }
    int p = role_params_source(&l->rb, m, e->link.pulling);
    const float *src = m->payload;
    float *x = e->sh.params + m->h.params.offset;
    double sq = 0;
    for (size_t i = 0; i < m->h.count; i++) {
        x[i] -= src[i];
        sq += (double)src[i] * src[i];
    }
    e->elastic_sq += sq;
    e->link.reply[p].version = m->h.version;
    if (++e->link.got == l->rb.n_sources) e->link.pulling = false;
}

static void finish_easgd(Learner *l) {
    LearnEasgd *e = l->fam.easgd;
    learnps_link_finish(l, &e->link);
    learnps_link_free(l, &e->link);
    pshard_free(&e->sh);
    free(e);
}

const LearnerSync learndecent_easgd = {init_easgd, step_easgd, on_params_easgd, finish_easgd};
