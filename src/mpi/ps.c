/* SPDX-License-Identifier: MIT */
/* ps.c: the parameter server role. Shard p of P owns the slice
 * [off, off + len) = shard_range(n_params, P, p) of the flat parameters,
 * the same slice of the target network, and the optimizer state of that
 * slice. Modes (sync.mode):
 *
 *   ps_sync     a round collects one gradient from every learner, all
 *               computed on the current version; their mean is applied
 *               once; the new slice goes back to every learner (PARAMS).
 *   ps_async    every gradient is applied as it arrives (Hogwild-style
 *               on the shard; versions count applied gradients).
 *   ps_bounded  as async, but a gradient computed on a version more than
 *               sync.staleness versions old is dropped (Gorila's rule);
 *               every drop is counted and reported.
 *   easgd       the slice is EASGD's center variable: a learner sends its
 *               own parameters (GRAD with MSG_ELASTIC) every
 *               sync.easgd_every updates, the center moves toward them by
 *               sync.easgd_alpha and the move goes back (pshard_elastic);
 *               no optimizer step here. Versions count the learners'
 *               updates; `updates` counts exchanges.
 *
 * The staleness (current version - gradient's version) of every gradient
 * is counted in a histogram in all modes. The slice itself is a PShard
 * (pshard.h), the same code learner 0 serves the whole network with in
 * allreduce mode: it applies the step and the target rule, keeps the two
 * versions (PARAMS carry the target slice only to requesters whose copy is
 * out of date), answers PARAM_REQ and writes <dir>/ps-<p>.ckpt on
 * CKPT_REQ. What is this file's own: the modes above, which learner holds
 * which target version, and the final checkpoint's timing: a final request
 * (MSG_FINAL) waits until every learner's STOPPED marker has come in, so
 * that the last gradient of every learner is in the saved state.
 */
#include "agentcfg.h"
#include "clock.h"
#include "exitcode.h"
#include "shard.h"
#include "pshard.h"
#include "util.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    RoleBase rb;
    PShard sh;            /* the slice, its target and optimizer state, versions, replies */
    float *sum;           /* (sh.len) sync: the round's gradient sum */
    int L, first_learner;
    bool *got;            /* (L) sync: gradient of this round received */
    bool *want;           /* (L) sync: learner asked for PARAMS */
    uint64_t *tver;       /* (L) target version each learner holds */
    int n_got, learners_stopped;
} PS;

/* Training has diverged: end the job with GORILA_EXIT_DIVERGED. what:
 * "the gradient from learner 1 (rank 4)", ... */
static _Noreturn void diverged(const PS *s, const char *what) {
    char hint[AGENTCFG_HINT_LEN];
    agentcfg_diverge_hint(s->rb.cfg, hint);
    DIE_CODE(s->rb.ctx, GORILA_EXIT_DIVERGED, "training diverged: %s is not finite at version %" PRIu64
             " of parameter server %d; %s", what, s->sh.version, s->rb.ctx->index, hint);
}

/* grad is finite (on_grad checks it); a finite step can still overflow
 * the parameters, and then the job ends before a checkpoint could save
 * them. */
static void apply(PS *s, const float *grad) {
    double t0 = now_seconds();
    pshard_apply(&s->sh, grad);
    if (!floats_finite(s->sh.params, s->sh.len)) diverged(s, "the parameter slice after the step");
    double t1 = now_seconds();
    s->rb.m.apply_seconds += t1 - t0;
    trace_span(&s->rb.trace, TR_APPLY, t0, t1, (uint32_t)s->sh.version);
    s->rb.m.updates++;
    pshard_report_if_due(&s->sh);
}

static void on_grad(PS *s, const Msg *m) {
    PShard *sh = &s->sh;
    int l = m->source - s->first_learner;
    if (l < 0 || l >= s->L) DIE(s->rb.ctx, "GRAD from rank %d, which is not a learner", m->source);
    if (m->h.count != sh->len)
        DIE(s->rb.ctx, "GRAD from rank %d has %" PRIu64 " floats, this shard holds %zu", m->source,
            m->h.count, sh->len);
    if (m->h.version > sh->version)
        DIE(s->rb.ctx, "GRAD from rank %d claims version %" PRIu64 ", newer than this shard's %" PRIu64, m->source,
            m->h.version, sh->version);
    /* A learner checks its gradient before sending it; this catches one
     * that does not (or a message damaged on the way) before it is summed
     * or applied. */
    if (!floats_finite(m->payload, sh->len)) {
        char what[96];
        snprintf(what, sizeof what, "the gradient from learner %d (rank %d)", l, m->source);
        diverged(s, what);
    }
    uint64_t stale = sh->version - m->h.version;
    s->rb.m.staleness[stale < PROTO_STALENESS_BINS ? stale : PROTO_STALENESS_BINS - 1]++;
    const Config *cfg = s->rb.cfg;
    if (m->h.flags & MSG_ELASTIC) {
        /* easgd: the payload is the learner's parameters; the center moves
         * toward them and the move goes back (pshard_elastic). */
        if (cfg->sync.mode != SYNC_EASGD) DIE(s->rb.ctx, "an elastic exchange from rank %d in sync.mode %s", m->source,
                                              config_sync_name(cfg->sync.mode));
        double t0 = now_seconds();
        pshard_elastic(sh, m->source, m->payload, (float)cfg->sync.easgd_alpha, m->h.elastic.steps);
        if (!floats_finite(sh->params, sh->len)) diverged(s, "the center after an elastic exchange");
        s->rb.m.apply_seconds += now_seconds() - t0;
        s->rb.m.updates++;
        return;
    }
    s->tver[l] = m->h.grad.target_held;
    bool want = (m->h.flags & MSG_WANT_PARAMS) != 0;
    const float *g = m->payload;
    if (cfg->sync.mode == SYNC_PS_SYNC) {
        if (stale != 0 || s->got[l])
            DIE(s->rb.ctx, "ps_sync: learner rank %d sent a gradient for version %" PRIu64 " in round %" PRIu64, m->source,
                m->h.version, sh->version);
        if (s->n_got == 0) memcpy(s->sum, g, sh->len * sizeof(float));
        else
            for (size_t i = 0; i < sh->len; i++) s->sum[i] += g[i];
        s->got[l] = true;
        s->want[l] = want;
        if (++s->n_got < s->L) return;
        if (s->L > 1) optim_scale(s->sum, sh->len, 1.0f / (float)s->L);
        /* Finite gradients can still sum to Inf. */
        if (s->L > 1 && !floats_finite(s->sum, sh->len)) diverged(s, "the round's mean gradient");
        apply(s, s->sum);
        s->n_got = 0;
        for (int k = 0; k < s->L; k++) {
            s->got[k] = false;
            if (s->want[k]) pshard_send_params(sh, s->first_learner + k, s->tver[k] != sh->target_version);
        }
        return;
    }
    if (cfg->sync.mode == SYNC_PS_BOUNDED && stale > (uint64_t)cfg->sync.staleness) s->rb.m.drops++;
    else apply(s, g);
    if (want) pshard_send_params(sh, m->source, s->tver[l] != sh->target_version);
}

int ps_run(const Ctx *ctx, const JobArgs *args) {
    PS *s = xcalloc(1, sizeof *s);
    role_init(&s->rb, ctx, args);
    const Config *cfg = args->cfg;
    size_t n = s->rb.net.n_params, off, len;
    shard_range(n, args->lay->count[ROLE_PS], ctx->index, &off, &len);
    pshard_init(&s->sh, &s->rb, args, ctx->index, off, len, true);
    s->sum = xmalloc_for(len * sizeof(float), "gradient sum", "network.hidden");
    s->L = args->lay->count[ROLE_LEARNER];
    s->first_learner = layout_rank_of(args->lay, ROLE_LEARNER, 0);
    {   /* it waits for the learners' gradients (comm_expect; actors' pulls are not on a critical path) */
        int *peers = xmalloc((size_t)s->L * sizeof(int));
        for (int l = 0; l < s->L; l++) peers[l] = s->first_learner + l;
        comm_expect(&s->rb.comm, peers, s->L);
        free(peers);
    }
    s->got = xcalloc((size_t)s->L, sizeof(bool));
    s->want = xcalloc((size_t)s->L, sizeof(bool));
    s->tver = xcalloc((size_t)s->L, sizeof(uint64_t));
    log_info(ctx, "shard [%zu, %zu) of %zu parameters, mode %s, version %" PRIu64, off, off + len, n,
             config_sync_name(cfg->sync.mode), s->sh.version);
    bool stop = false;
    while (!stop) {
        Msg m;
        bool worked = false;
        while (!stop && comm_poll(&s->rb.comm, &m)) {
            worked = true;
            switch (m.tag) {
            case TAG_GRAD: on_grad(s, &m); break;
            case TAG_PARAM_REQ: {
                int l = m.source - s->first_learner;
                if (l >= 0 && l < s->L) s->tver[l] = m.h.param_req.target_held;
                pshard_on_param_req(&s->sh, &m);
                break;
            }
            /* A final request waits for every learner's STOPPED marker. */
            case TAG_CKPT_REQ: pshard_on_ckpt_req(&s->sh, &m, s->learners_stopped < s->L); break;
            case TAG_STOPPED: /* a learner's last-gradient marker */
                if (++s->learners_stopped == s->L) pshard_write_held(&s->sh);
                break;
            case TAG_STOP: stop = true; break;
            default: DIE(ctx, "unexpected %s message from rank %d", proto_tag_name(m.tag), m.source);
            }
        }
        if (stop) break;
        role_report(&s->rb, false);
        if (worked) comm_busy(&s->rb.comm);
        else comm_idle(&s->rb.comm);
    }
    if (s->n_got > 0)
        log_info(ctx, "ps_sync: the unfinished round's %d gradient(s) were not applied (the job stopped mid-round)",
                 s->n_got);
    role_shutdown(&s->rb, s->sh.bufs, s->sh.n_bufs);
    pshard_free(&s->sh);
    free(s->got);
    free(s->want);
    free(s->tver);
    free(s->sum);
    role_free(&s->rb);
    free(s);
    return 0;
}
