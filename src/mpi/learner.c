/* SPDX-License-Identifier: MIT */
/* learner.c: the learner role. Computes DQN gradients on batches from the
 * replay shards and syncs them in one of two ways:
 *
 *   parameter servers (ps_sync, ps_async, ps_bounded): the global-norm
 *   clipped gradient is cut into the PS shards' slices (shard_range) and
 *   each slice is sent to its shard tagged with the version of that shard's
 *   parameters it was computed on; fresh parameters (and the target slice
 *   when it changed) come back in the shards' PARAMS replies. In ps_sync
 *   every update pulls; otherwise every sync.learner_pull_every updates.
 *
 *   allreduce: the clipped gradients of all learners are summed with
 *   ring_allreduce (allreduce.h; naive_allreduce with sync.allreduce_impl
 *   naive, MPI_Allreduce with mpi) on the learners' own communicator,
 *   averaged, and
 *   every learner applies the same optimizer step to its full copy of the
 *   parameters, so the copies stay bit-identical. Each copy is a PShard
 *   (pshard.h) of the whole network; learner 0's also answers PARAM_REQ
 *   from actors and the coordinator, as the only parameter source, and
 *   CKPT_REQ, with the same code a parameter-server shard runs.
 *   The ring carries one extra float, the sum of the learners' "stop" flags,
 *   so that all learners leave the ring after the same round and none is
 *   left waiting for a neighbour that stopped. While a learner waits in the
 *   ring it keeps answering its main communicator (service below): learner
 *   0 serves the actors' parameter requests, batches keep arriving.
 *
 * Accumulation (learner.accumulate K > 1): K batches' gradients, computed
 * unclipped at the same parameters (nothing syncs in between), are summed
 * and their mean, clipped as one gradient, is what syncs: one push (or one
 * ring round) per K batches, the update of one K*B-row batch.
 *
 * Prefetch: as soon as a batch is taken the request for the next one goes
 * out, so sampling overlaps the gradient computation. learner.prefetch
 * requests are in flight at a time (1 by default; above 1 with uniform
 * replay only): a batch is then sampled that many updates before it is
 * used, and a replay shard that is slow to wake has that many gradients'
 * time to answer. Replies carry their request's sequence number and land
 * in its slot of a ring of batches, so shards may answer out of order.
 * Shards are visited in smooth weighted round-robin, each
 * weighted by the number of actors feeding it (actor a feeds shard a mod S),
 * so that every shard is sampled in proportion to what it receives and the
 * shards' samples-per-insert limiters (replay.c) hold all actors to the
 * same pace even when S does not divide A. Learner i starts i steps into
 * the sequence, so learners do not all hit the same shard at once.
 */
#include "allreduce.h"
#include "agentcfg.h"
#include "clock.h"
#include "exitcode.h"
#include "gossip.h"
#include "lossguard.h"
#include "pacing.h"
#include "replaystore.h"
#include "role.h"
#include "pshard.h"
#include "util.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    RoleBase rb;
    const JobArgs *args;
    size_t n;
    float *params, *target;   /* (n) what gradients are computed on (views): the
                                 learner's copy in PS modes, its PShard's in allreduce */
    float *grad;              /* (n + 1) the gradient; allreduce: + the stop flag */
    Dqn dqn;
    DqnParams dp;
    Batch cur, next;          /* next: prioritized replay's one batch in flight */
    bool next_ready, req_out;
    uint64_t req_seq;         /* the last request sent */
    /* uniform replay: a ring of D batches, slot seq % D for request seq */
    int D;                    /* learner.prefetch */
    Batch *bq;                /* (D) */
    bool *bq_ready;           /* (D) */
    uint64_t taken;           /* the last request whose batch became cur */
    int S, first_replay;
    int *replay_ranks; /* (S) the replay shards' ranks (comm_expect) */
    PacingRR rr;              /* which shard to sample next (prioritized: to charge) */
    /* prioritized replay (Ape-X): a batch is spread over the shards in
     * proportion to their total priority; see request_prioritized */
    bool prio;
    Rng rng;                  /* the stratified draws */
    double *total;            /* (S) each shard's total priority, as last reported */
    uint64_t *size;           /* (S) each shard's size, as last reported */
    struct PrioRows {
        int *off, *cnt;       /* (S) the shard's rows in the batch: [off, off + cnt) */
        double *share;        /* (S) total[s] / sum of totals when the batch was drawn */
        uint64_t *slot, *id;  /* (B) */
        double *prob;         /* (B) as read: the row's priority; then its probability */
    } pcur, pnext;            /* of cur and next, swapped with them */
    int waiting;              /* replies still missing for next */
    int *shard_of, *charge;   /* (B), (S) scratch */
    double *frac, *frac_s;    /* (B) scratch */
    float *td;                /* (B) |td| of cur's rows */
    SendBuf *reqbuf, *priobuf; /* (S) SAMPLE_REQ and PRIORITY to each shard */
    /* parameter-server mode */
    SendBuf *gradbuf;         /* (n_sources) */
    struct {
        uint64_t version;     /* params version of the slice held */
        uint64_t tversion;    /* target version of the slice held */
    } *reply;                 /* (n_sources) what each source's last PARAMS carried */
    float *copy_params, *copy_target;  /* (n) the storage behind params, target */
    int got;                  /* PARAMS received in the current pull */
    bool pulling;
    uint64_t pull_every;      /* updates between pulls */
    /* allreduce mode */
    PShard sh;                /* this learner's copy of the network; learner 0 serves it */
    Ring ring;                /* the learners' ring (allreduce.h) */
    bool stop;
    LossGuard guard;             /* learner.loss_outlier_sigma */
    int batch;                   /* rows per gradient (agentcfg_learner_batch) */
    bool global;                 /* learner.batch global: clip the averaged gradient, not the part */
    uint64_t pushed;             /* gradients sent (the pull schedule counts these, not dropped ones) */
    /* decentralized modes (gossip, easgd, local_sgd): each learner steps
     * its own PShard; every `every` step calls its copy meets the others */
    uint64_t every;              /* sync.gossip_every, easgd_every or average_every */
    uint64_t steps;              /* step calls (batches, or K-batch sums) since the start */
    uint64_t since;              /* of those, since the last exchange (easgd) */
    Ring ctl;                    /* gossip: the learners' one-float stop-flag round, and the
                                    consensus measurement (not counted as sync traffic) */
    float *peer;                 /* (n + 1) gossip: the partner's parameters; consensus scratch */
    double elastic_sq;           /* easgd: sum of the center's moves squared, this exchange */
    /* learner.accumulate K > 1: K mini-batch gradients per sync (accumulate) */
    int K;
    float *acc;                  /* (n) the sum of the parts kept so far */
    int parts, kept;             /* batches taken since the last sync; of those, gradients in acc */
} Learner;

/* Prioritized: the next batch's B rows are drawn as one buffer of all
 * shards would draw them. prio_stratify places B stratified draws over the
 * shards' total priorities (as last reported) and gives each row a
 * position in [0, 1) of its shard's total; each shard is asked for its
 * rows. Independently, the B rows are charged to the shards' samples-per-
 * insert limiters by the same weighted round-robin as uniform replay (by
 * actors), so every shard's limiter sees its share of the job's samples
 * whichever shard the rows come from. A shard with rows or a charge gets a
 * request (most get one every batch, so their reported totals stay
 * fresh). */
static void request_prioritized(Learner *l) {
    int S = l->S, B = l->rb.cfg->replay.batch_size;
    struct PrioRows *pr = &l->pnext;
    memset(l->charge, 0, (size_t)S * sizeof *l->charge);
    for (int b = 0; b < B; b++) l->charge[pacing_rr_next(&l->rr)]++;
    prio_stratify(l->total, S, B, &l->rng, l->shard_of, l->frac);
    double sum = 0;
    for (int s = 0; s < S; s++) sum += l->total[s];
    memset(pr->cnt, 0, (size_t)S * sizeof *pr->cnt);
    for (int b = 0; b < B; b++) pr->cnt[l->shard_of[b]]++;
    l->req_seq++;
    l->waiting = 0;
    for (int s = 0, off = 0; s < S; s++) {
        pr->off[s] = off;
        off += pr->cnt[s];
        pr->share[s] = sum > 0 ? l->total[s] / sum : 0;
        if (pr->cnt[s] == 0 && l->charge[s] == 0) continue;
        SendBuf *buf = &l->reqbuf[s];
        comm_wait_send(&l->rb.comm, buf);
        double *frac = sendbuf_payload(buf);
        for (int b = 0, k = 0; b < B; b++)
            if (l->shard_of[b] == s) frac[k++] = l->frac[b];
        MsgHeader h = {0};
        h.count = (uint64_t)pr->cnt[s];
        h.sample_req.charged = (uint64_t)l->charge[s];
        h.version = l->req_seq;
        h.flags = MSG_PRIORITIZED;
        comm_send(&l->rb.comm, buf, l->first_replay + s, TAG_SAMPLE_REQ, h,
                  proto_sample_req_bytes((size_t)pr->cnt[s], 1));
        l->waiting++;
    }
    l->req_out = true;
}

/* Requests until D are in flight (prioritized: one). */
static void request_sample(Learner *l) {
    if (l->prio) {
        request_prioritized(l);
        return;
    }
    while (l->req_seq - l->taken < (uint64_t)l->D) {
        int shard = pacing_rr_next(&l->rr);
        MsgHeader h = {0};
        h.count = (uint64_t)l->batch;
        h.sample_req.charged = h.count;
        h.version = ++l->req_seq;
        comm_send_ctl(&l->rb.comm, l->first_replay + shard, TAG_SAMPLE_REQ, h, NULL, 0);
    }
    l->req_out = true;
}

/* Every shard has answered: each row's probability is the one it was drawn
 * with, P = share of its shard x its priority / its shard's total when it
 * sampled (equal to p / sum of all priorities when the reported totals are
 * current), and the importance weights follow (replaystore.h). */
static void finish_prioritized(Learner *l) {
    struct PrioRows *pr = &l->pnext;
    uint64_t n = 0;
    for (int s = 0; s < l->S; s++) n += l->size[s];
    double beta = prio_beta(l->rb.cfg->replay.beta, l->rb.cfg->replay.beta_final, l->rb.cfg->replay.beta_steps,
                            l->rb.m.params_version);
    prio_weights(pr->prob, l->next.n, (double)n, beta, l->next.weight);
}

static void on_sample(Learner *l, const Msg *m) {
    uint64_t seq = m->h.version;
    bool expected = l->prio ? l->req_out && seq == l->req_seq
                            : seq > l->taken && seq <= l->req_seq && !l->bq_ready[seq % (uint64_t)l->D];
    if (!expected)
        DIE(l->rb.ctx, "SAMPLE %" PRIu64 " from rank %d, expected a request in (%" PRIu64 ", %" PRIu64 "]", seq,
            m->source, l->prio ? l->req_seq - 1 : l->taken, l->req_seq);
    int s = m->source - l->first_replay, off = 0;
    size_t B = m->h.count, O = (size_t)l->next.obs_dim;
    if (s < 0 || s >= l->S) DIE(l->rb.ctx, "SAMPLE from rank %d, which is not a replay shard", m->source);
    if (l->prio) {
        off = l->pnext.off[s];
        if ((int)B != l->pnext.cnt[s])
            DIE(l->rb.ctx, "SAMPLE of %zu rows from rank %d, asked for %d", B, m->source, l->pnext.cnt[s]);
    } else if ((int)B != l->batch) {
        DIE(l->rb.ctx, "SAMPLE of %zu rows from rank %d", B, m->source);
    }
    SampleLayout lay = proto_sample_layout(B, O, l->prio);
    const uint8_t *p = m->payload;
    Batch *nx = l->prio ? &l->next : &l->bq[seq % (uint64_t)l->D];
    memcpy(nx->obs + (size_t)off * O, p + lay.obs, B * O * sizeof(float));
    memcpy(nx->next_obs + (size_t)off * O, p + lay.next_obs, B * O * sizeof(float));
    memcpy(nx->action + off, p + lay.action, B * sizeof(int32_t));
    memcpy(nx->reward + off, p + lay.reward, B * sizeof(float));
    memcpy(nx->discount + off, p + lay.discount, B * sizeof(float));
    memcpy(nx->weight + off, p + lay.weight, B * sizeof(float));
    for (size_t i = 0; i < B; i++)
        if (nx->action[off + i] < 0 || nx->action[off + i] >= l->rb.net.spec.n_actions)
            DIE(l->rb.ctx, "SAMPLE from rank %d has action %d out of range", m->source, nx->action[off + i]);
    if (l->prio) {
        struct PrioRows *pr = &l->pnext;
        double total;
        memcpy(&total, p + lay.total, sizeof total);
        if (!(total >= 0) || !isfinite(total) || (B && !(total > 0)))
            DIE(l->rb.ctx, "SAMPLE from rank %d reports total priority %g", m->source, total);
        memcpy(pr->slot + off, p + lay.slot, B * sizeof(uint64_t));
        memcpy(pr->id + off, p + lay.id, B * sizeof(uint64_t));
        const double *prio = (const double *)(p + lay.prio);
        for (size_t i = 0; i < B; i++) pr->prob[off + i] = pr->share[s] * prio[i] / total;
        l->total[s] = total;
        l->size[s] = m->h.sample.shard_size;
        if (--l->waiting > 0) return;
        nx->n = l->rb.cfg->replay.batch_size;
        finish_prioritized(l);
        l->next_ready = true;
        l->req_out = false;
    } else {
        nx->n = (int)B;
        l->bq_ready[seq % (uint64_t)l->D] = true;
        l->next_ready = l->bq_ready[(l->taken + 1) % (uint64_t)l->D];
    }
}

/* After an update on cur: its rows' new |td| to the shards they came from. */
static void send_priorities(Learner *l) {
    struct PrioRows *pr = &l->pcur;
    for (int s = 0; s < l->S; s++) {
        int n = pr->cnt[s], off = pr->off[s];
        if (n == 0) continue;
        SendBuf *buf = &l->priobuf[s];
        comm_wait_send(&l->rb.comm, buf);
        PriorityLayout pl = proto_priority_layout((size_t)n);
        uint8_t *p = sendbuf_payload(buf);
        memcpy(p + pl.slot, pr->slot + off, (size_t)n * sizeof(uint64_t));
        memcpy(p + pl.id, pr->id + off, (size_t)n * sizeof(uint64_t));
        memcpy(p + pl.td, l->td + off, (size_t)n * sizeof(float));
        MsgHeader h = {0};
        h.count = (uint64_t)n;
        comm_send(&l->rb.comm, buf, l->first_replay + s, TAG_PRIORITY, h, pl.bytes);
    }
}

static void prio_rows_init(struct PrioRows *pr, int S, int B) {
    pr->off = xcalloc((size_t)S, sizeof *pr->off);
    pr->cnt = xcalloc((size_t)S, sizeof *pr->cnt);
    pr->share = xcalloc((size_t)S, sizeof *pr->share);
    pr->slot = xcalloc((size_t)B, sizeof *pr->slot);
    pr->id = xcalloc((size_t)B, sizeof *pr->id);
    pr->prob = xcalloc((size_t)B, sizeof *pr->prob);
}

static void prio_rows_free(struct PrioRows *pr) {
    free(pr->off);
    free(pr->cnt);
    free(pr->share);
    free(pr->slot);
    free(pr->id);
    free(pr->prob);
}

/* Prioritized sampling state; before any shard has reported, its total
 * is taken as its actor count (any positive stand-in gives exact weights:
 * each row's probability uses the totals it was drawn with). */
static void prio_init(Learner *l) {
    const Config *cfg = l->rb.cfg;
    int S = l->S, B = cfg->replay.batch_size;
    l->prio = true;
    rng_seed(&l->rng, cfg->run.seed, RNG_STREAM_LEARNER + (uint64_t)l->rb.ctx->index);
    l->total = xcalloc((size_t)S, sizeof *l->total);
    l->size = xcalloc((size_t)S, sizeof *l->size);
    for (int s = 0; s < S; s++) l->total[s] = (double)l->rr.weight[s];
    prio_rows_init(&l->pcur, S, B);
    prio_rows_init(&l->pnext, S, B);
    l->shard_of = xcalloc((size_t)B, sizeof *l->shard_of);
    l->charge = xcalloc((size_t)S, sizeof *l->charge);
    l->frac = xcalloc((size_t)B, sizeof *l->frac);
    l->td = xcalloc((size_t)B, sizeof *l->td);
    l->reqbuf = xcalloc((size_t)S, sizeof *l->reqbuf);
    l->priobuf = xcalloc((size_t)S, sizeof *l->priobuf);
    for (int s = 0; s < S; s++) {
        sendbuf_init(&l->reqbuf[s], proto_sample_req_bytes((size_t)B, 1));
        sendbuf_init(&l->priobuf[s], proto_priority_layout((size_t)B).bytes);
    }
}

static void prio_free(Learner *l) {
    if (!l->prio) return;
    for (int s = 0; s < l->S; s++) {
        sendbuf_free(&l->reqbuf[s]);
        sendbuf_free(&l->priobuf[s]);
    }
    free(l->reqbuf);
    free(l->priobuf);
    free(l->total);
    free(l->size);
    prio_rows_free(&l->pcur);
    prio_rows_free(&l->pnext);
    free(l->shard_of);
    free(l->charge);
    free(l->frac);
    free(l->td);
}

static void on_params(Learner *l, const Msg *m) {
    int p = role_params_source(&l->rb, m, l->pulling);
    const float *src = m->payload;
    if (m->h.flags & MSG_ELASTIC) {
        /* easgd: the center moved by d = alpha (x - center); so does this
         * copy, the other way (pshard_elastic). */
        float *x = l->sh.params + m->h.params.offset;
        double sq = 0;
        for (size_t i = 0; i < m->h.count; i++) {
            x[i] -= src[i];
            sq += (double)src[i] * src[i];
        }
        l->elastic_sq += sq;
        l->reply[p].version = m->h.version;
        if (++l->got == l->rb.n_sources) l->pulling = false;
        return;
    }
    memcpy(l->params + m->h.params.offset, src, m->h.count * sizeof(float));
    l->reply[p].version = m->h.version;
    if (m->h.flags & MSG_HAS_TARGET) {
        memcpy(l->target + m->h.params.offset, src + m->h.count, m->h.count * sizeof(float));
        l->reply[p].tversion = m->h.params.target_version;
    }
    if (++l->got == l->rb.n_sources) l->pulling = false;
}

static void handle(Learner *l, const Msg *m) {
    switch (m->tag) {
    case TAG_SAMPLE: on_sample(l, m); break;
    case TAG_PARAMS: on_params(l, m); break;
    case TAG_PARAM_REQ:
        if (!l->sh.serves) DIE(l->rb.ctx, "PARAM_REQ from rank %d, but this learner serves no parameters", m->source);
        pshard_on_param_req(&l->sh, m);
        break;
    case TAG_CKPT_REQ:
        if (!l->sh.serves && l->sh.copy < 0)
            DIE(l->rb.ctx, "CKPT_REQ from rank %d, but this learner holds no checkpointed state", m->source);
        /* A final one is written when the learners have left the ring for good. */
        pshard_on_ckpt_req(&l->sh, m, true);
        break;
    case TAG_STOP: l->stop = true; break;
    default: DIE(l->rb.ctx, "unexpected %s message from rank %d", proto_tag_name(m->tag), m->source);
    }
}

/* Poll until cond holds or STOP arrives (cond re-evaluated per message). */
#define WAIT_UNTIL(l, cond)                                                                            \
    do {                                                                                               \
        while (!(cond) && !(l)->stop) {                                                                \
            Msg m_;                                                                                    \
            if (comm_poll(&(l)->rb.comm, &m_)) handle((l), &m_);                                       \
            else {                                                                                     \
                role_report(&(l)->rb, false);                                                          \
                comm_idle(&(l)->rb.comm);                                                              \
            }                                                                                          \
        }                                                                                              \
    } while (0)

/* The ring's hook while it waits: take one message of the main
 * communicator, if any (allreduce.h). */
static bool service(void *arg) {
    Learner *l = arg;
    Msg m;
    if (!comm_poll(&l->rb.comm, &m)) return false;
    handle(l, &m);
    return true;
}

static void pull_params(Learner *l, bool want_target) {
    MsgHeader h = {0};
    for (int p = 0; p < l->rb.n_sources; p++) {
        h.param_req.target_held = want_target ? l->reply[p].tversion : 0;
        h.flags = want_target ? 0 : MSG_NO_TARGET;
        comm_send_ctl(&l->rb.comm, l->rb.source_rank[p], TAG_PARAM_REQ, h, NULL, 0);
    }
    l->got = 0;
    l->pulling = true;
}

static void push_grad(Learner *l, bool want_params) {
    for (int p = 0; p < l->rb.n_sources; p++) {
        SendBuf *s = &l->gradbuf[p];
        comm_wait_send(&l->rb.comm, s);
        memcpy(sendbuf_payload(s), l->grad + l->rb.source_off[p], l->rb.source_len[p] * sizeof(float));
        MsgHeader h = {0};
        h.count = l->rb.source_len[p];
        h.version = l->reply[p].version;
        h.grad.learner = (uint64_t)l->rb.ctx->index;
        h.grad.target_held = l->reply[p].tversion;
        h.flags = want_params ? MSG_WANT_PARAMS : 0;
        comm_send(&l->rb.comm, s, l->rb.source_rank[p], TAG_GRAD, h, proto_grad_bytes(l->rb.source_len[p]));
    }
    if (want_params) {
        l->got = 0;
        l->pulling = true;
    }
}

/* Training has diverged: end the job with GORILA_EXIT_DIVERGED, saying
 * what went non-finite (what: "loss is nan", ...), where, and what to
 * change. */
static _Noreturn void diverged(const Learner *l, const char *what) {
    char hint[AGENTCFG_HINT_LEN];
    agentcfg_diverge_hint(l->rb.cfg, hint);
    DIE_CODE(l->rb.ctx, GORILA_EXIT_DIVERGED, "training diverged: %s at update %" PRIu64 " on learner %d (rank %d); %s",
             what, l->rb.m.updates + 1, l->rb.ctx->index, l->rb.ctx->rank, hint);
}

/* ---- the two ways of syncing ---------------------------------------------
 * learner_run calls init once, step after every update (with
 * learner.accumulate K, every K batches; have_grad false when STOP came
 * before the next batch or the K-th, or when the loss guard dropped the
 * gradient, or all K, in an asynchronous mode), and finish after STOP: the last
 * messages, then the shutdown drain of the strategy's own send buffers. */
typedef struct {
    void (*init)(Learner *l);
    bool (*step)(Learner *l, bool have_grad); /* false: leave (STOP seen; allreduce: by every learner
                                                 in the same round) */
    void (*finish)(Learner *l);
} LearnerSync;

/* Parameter servers: a copy of the network filled by PARAMS, the first
 * pull before any gradient. */
static void init_ps(Learner *l) {
    const Config *cfg = l->rb.cfg;
    int P = l->rb.n_sources;
    l->copy_params = xmalloc_for(l->n * sizeof(float), "network parameters", "network.hidden");
    l->copy_target = xmalloc_for(l->n * sizeof(float), "target network", "network.hidden");
    l->params = l->copy_params;
    l->target = l->copy_target;
    l->reply = xcalloc((size_t)P, sizeof *l->reply);
    for (int p = 0; p < P; p++) l->reply[p].tversion = UINT64_MAX;
    l->gradbuf = xcalloc((size_t)P, sizeof *l->gradbuf);
    for (int p = 0; p < P; p++) sendbuf_init(&l->gradbuf[p], proto_grad_bytes(l->rb.source_len[p]));
    l->pull_every = cfg->sync.mode == SYNC_PS_SYNC ? 1 : (uint64_t)cfg->sync.learner_pull_every;
    pull_params(l, true);
    WAIT_UNTIL(l, !l->pulling);
}

/* Each gradient goes out in slices; with a pull due, wait for the PARAMS. */
static bool step_ps(Learner *l, bool have_grad) {
    if (!have_grad) return !l->stop;
    double t0 = now_seconds();
    push_grad(l, ++l->pushed % l->pull_every == 0);
    double t1 = now_seconds();
    trace_span(&l->rb.trace, TR_SEND_GRAD, t0, t1, (uint32_t)l->rb.n_sources);
    if (l->pulling) {
        comm_expect(&l->rb.comm, l->rb.source_rank, l->rb.n_sources);
        WAIT_UNTIL(l, !l->pulling);
        trace_span(&l->rb.trace, TR_WAIT_PARAMS, t1, now_seconds(), 0);
    }
    l->rb.m.sync_seconds += now_seconds() - t0;
    uint64_t v = UINT64_MAX;
    for (int p = 0; p < l->rb.n_sources; p++)
        if (l->reply[p].version < v) v = l->reply[p].version;
    l->rb.m.params_version = v;
    return !l->stop;
}

static void finish_ps(Learner *l) {
    /* Tell every PS that no gradient of ours follows (see proto.h). */
    MsgHeader h = {0};
    SendBuf *bufs[ROLE_MAX_SOURCES];
    for (int p = 0; p < l->rb.n_sources; p++) {
        comm_send_ctl(&l->rb.comm, l->rb.source_rank[p], TAG_STOPPED, h, &l->rb.m, sizeof l->rb.m);
        bufs[p] = &l->gradbuf[p];
    }
    pshard_write_held(&l->sh); /* easgd: the learner's own copy in a final checkpoint */
    role_shutdown(&l->rb, bufs, l->rb.n_sources);
}

/* Apply l->grad to the learner's own PShard (allreduce, or the parameters
 * inside the learner): the step, timed and traced, then the finite check (a
 * finite step can overflow the parameters) and the report a version mark
 * may owe. */
static void apply_own(Learner *l) {
    double t1 = now_seconds();
    pshard_apply(&l->sh, l->grad);
    double t2 = now_seconds();
    trace_span(&l->rb.trace, TR_APPLY, t1, t2, (uint32_t)l->sh.version);
    l->rb.m.compute_seconds += t2 - t1;
    if (!floats_finite(l->sh.params, l->n)) diverged(l, "the parameters are not finite after the step");
    pshard_report_if_due(&l->sh);
}

/* The learner's PShard of the whole network: in the decentralized modes a
 * copy of its own (restored from its learner-<k>.ckpt on resume) unless it
 * is the parameter source (learner 0 in gossip and local_sgd); otherwise
 * learner 0's serves and the others are replicas. */
static void init_own(Learner *l) {
    int first = layout_first_copy(l->rb.cfg), me = l->rb.ctx->index;
    if (first >= 0 && me >= first) pshard_init_copy(&l->sh, &l->rb, l->args, me);
    else pshard_init(&l->sh, &l->rb, l->args, 0, 0, l->n, me == 0);
    l->params = l->sh.params;
    l->target = l->sh.target;
}

/* Allreduce: every learner holds the whole network as a PShard (restored
 * from the checkpoint on resume, so the copies start equal); learner 0's
 * serves it. */
static void init_allreduce(Learner *l) {
    const WaitMode w = l->rb.cfg->run.wait;
    ring_init(&l->ring, l->rb.ctx, l->rb.comm.world, l->args->learners, &l->rb.comm.bells,
              w == WAIT_POLL ? RING_WAIT_POLL : w == WAIT_SLEEP ? RING_WAIT_SLEEP : RING_WAIT_AUTO);
    l->ring.service = service;
    l->ring.service_arg = l;
    l->ring.trace = &l->rb.trace;
    init_own(l);
}

/* The ring's counters into the learner's metrics. */
static void ring_metrics(Learner *l) {
    RoleMetrics *m = &l->rb.m;
    m->ring_msgs_sent = l->ring.msgs_sent;
    m->ring_bytes_sent = l->ring.bytes_sent;
    m->ring_msgs_recv = l->ring.msgs_recv;
    m->ring_bytes_recv = l->ring.bytes_recv;
    m->ring_rounds = l->ring.rounds;
    m->ring_seconds = l->ring.seconds;
}

/* buf[0..count) summed over the learners by sync.allreduce_impl, timed as
 * sync and traced. */
static void sum_learners(Learner *l, float *buf, size_t count) {
    double t0 = now_seconds(), waited = l->ring.wait_seconds;
    if (l->rb.cfg->sync.allreduce_impl == ALLREDUCE_MPI) {
        /* The reference: Open MPI's own algorithm, blocking (it spins,
         * yielding when oversubscribed); its traffic is not visible here. */
        MPI_CHECK(l->rb.ctx, MPI_Allreduce(MPI_IN_PLACE, buf, (int)count, MPI_FLOAT, MPI_SUM, l->args->learners));
        l->ring.rounds++;
        l->ring.seconds += now_seconds() - t0;
    } else if (l->rb.cfg->sync.allreduce_impl == ALLREDUCE_NAIVE) {
        /* Every buffer to learner 0 and the sum back: counted in the
         * same ring counters, learner 0's (L-1) times the others'. */
        naive_allreduce(&l->ring, buf, count);
    } else {
        ring_allreduce(&l->ring, buf, count);
    }
    double t_sync = now_seconds();
    trace_span(&l->rb.trace, TR_ALLREDUCE, t0, t_sync, 0);
    l->rb.m.sync_seconds += t_sync - t0;
    l->rb.comm.wait_seconds += l->ring.wait_seconds - waited;
    ring_metrics(l);
}

/* One ring round (a zero gradient when there is none); the same averaged
 * step on every copy. */
static bool step_allreduce(Learner *l, bool have_grad) {
    if (!have_grad) memset(l->grad, 0, l->n * sizeof(float));
    l->grad[l->n] = l->stop ? 1.0f : 0.0f;
    sum_learners(l, l->grad, l->n + 1);
    if (l->grad[l->n] > 0) return false;
    float L = (float)l->rb.lay->count[ROLE_LEARNER];
    optim_scale(l->grad, l->n, 1.0f / L);
    if (l->global) optim_clip_norm(l->grad, l->n, l->rb.cfg->optimizer.grad_clip);
    /* Each learner's gradient was finite, but their sum can overflow, and a
     * finite step can overflow the parameters. */
    if (!floats_finite(l->grad, l->n)) diverged(l, "the learners' summed gradient is not finite");
    apply_own(l);
    return true;
}

static void finish_allreduce(Learner *l) {
    pshard_write_held(&l->sh);
    role_shutdown(&l->rb, l->sh.bufs, l->sh.n_bufs);
}

/* A parameter-server mode without parameter servers (roles.param_servers
 * 0, one learner): the learner holds the whole network as the job's
 * parameter source and applies its own gradient, the step the one PS would
 * have applied (the same optimizer, clip and finite checks), so the next
 * gradient is computed at the parameters a PS would have sent back, with
 * no round trip. */
static void init_local(Learner *l) {
    pshard_init(&l->sh, &l->rb, l->args, 0, 0, l->n, true);
    l->params = l->sh.params;
    l->target = l->sh.target;
}

static bool step_local(Learner *l, bool have_grad) {
    if (have_grad) apply_own(l);
    return !l->stop;
}

/* ---- the decentralized modes ---------------------------------------------
 * gossip and local_sgd: every learner holds the whole network as a PShard
 * (learner 0's serves the actors and the coordinator, as in allreduce) and
 * applies its own gradients to it with its own optimizer state. easgd: the
 * same local copy (serving nothing) beside the center variable on the
 * parameter servers, which serve the actors and evaluations. Every
 * l->every step calls the copies meet:
 *   local_sgd  the learners' parameters are averaged: sum_learners of
 *              n + 1 floats (the last, the stop flag), then / L, and every
 *              copy becomes the mean
 *   gossip     round t: a one-float stop-flag sum over all learners (ctl),
 *              then each averages its parameters with the partner
 *              gossip_peer names (pair_exchange: n floats each way;
 *              (a + b) / 2 is the same bits on both sides)
 *   easgd      the parameters go to the PS shards (GRAD with MSG_ELASTIC);
 *              each answers with the center's move, which the copy takes
 *              back (on_params)
 * A learner that has seen STOP goes straight to its next meeting in
 * local_sgd and gossip, where all must leave after the same round (as in
 * allreduce); in easgd, asynchronous like Gorila, it simply leaves.
 * Consensus (RoleMetrics.consensus), measured as the copies meet, before
 * they move: local_sgd, each learner's distance from the mean at every
 * average; gossip, the same every GOSSIP_CONSENSUS_ROUNDS rounds by one
 * more allreduce of the parameters on ctl (not counted as sync traffic);
 * easgd, the distance from the center at every exchange (|move| / alpha). */
#define GOSSIP_CONSENSUS_ROUNDS 16

static double distance(const float *a, const float *b, size_t n) {
    double sq = 0;
    for (size_t i = 0; i < n; i++) sq += ((double)a[i] - b[i]) * ((double)a[i] - b[i]);
    return sqrt(sq);
}

static void note_consensus(Learner *l, double d) {
    l->rb.m.consensus = d;
    l->rb.m.consensus_version = l->sh.version ? l->sh.version : 1;
}

static void init_replica(Learner *l) {
    init_allreduce(l);
    const Config *cfg = l->rb.cfg;
    if (cfg->sync.mode == SYNC_LOCAL_SGD) {
        l->every = (uint64_t)cfg->sync.average_every;
        return;
    }
    l->every = (uint64_t)cfg->sync.gossip_every;
    ring_init(&l->ctl, l->rb.ctx, l->rb.comm.world, l->args->learners, &l->rb.comm.bells, l->ring.poll ? RING_WAIT_POLL
                                                                                                        : RING_WAIT_SLEEP);
    l->ctl.service = service;
    l->ctl.service_arg = l;
    l->peer = xmalloc_for((l->n + 1) * sizeof(float), "gossip partner's parameters", "network.hidden");
}

/* local_sgd: local steps, and every l->every the mean of all copies. */
static bool step_local_sgd(Learner *l, bool have_grad) {
    if (have_grad) apply_own(l);
    if (++l->steps % l->every != 0 && !l->stop) return true;
    float *buf = l->grad;
    memcpy(buf, l->sh.params, l->n * sizeof(float));
    buf[l->n] = l->stop ? 1.0f : 0.0f;
    sum_learners(l, buf, l->n + 1);
    if (buf[l->n] > 0) return false;
    optim_scale(buf, l->n, 1.0f / (float)l->rb.lay->count[ROLE_LEARNER]);
    if (!floats_finite(buf, l->n)) diverged(l, "the learners' mean parameters are not finite");
    note_consensus(l, distance(l->sh.params, buf, l->n));
    memcpy(l->sh.params, buf, l->n * sizeof(float));
    l->rb.m.sync_rounds++;
    return true;
}

/* gossip: every learner's distance from the mean of all (an allreduce of
 * the parameters on ctl). */
static void gossip_consensus(Learner *l) {
    memcpy(l->peer, l->sh.params, l->n * sizeof(float));
    ring_allreduce(&l->ctl, l->peer, l->n);
    optim_scale(l->peer, l->n, 1.0f / (float)l->rb.lay->count[ROLE_LEARNER]);
    note_consensus(l, distance(l->sh.params, l->peer, l->n));
}

static bool step_gossip(Learner *l, bool have_grad) {
    if (have_grad) apply_own(l);
    if (++l->steps % l->every != 0 && !l->stop) return true;
    const Config *cfg = l->rb.cfg;
    double t0 = now_seconds(), waited = l->ring.wait_seconds + l->ctl.wait_seconds;
    float flag = l->stop ? 1.0f : 0.0f;
    ring_allreduce(&l->ctl, &flag, 1);
    bool go_on = !(flag > 0);
    if (go_on) {
        uint64_t t = l->rb.m.sync_rounds++;
        /* before the exchange: how far the copies drifted apart */
        if (t % GOSSIP_CONSENSUS_ROUNDS == 0) gossip_consensus(l);
        int L = l->rb.lay->count[ROLE_LEARNER];
        int peer = gossip_peer(cfg->sync.gossip_topology, L, l->rb.ctx->index, t, cfg->run.seed);
        if (peer >= 0) {
            pair_exchange(&l->ring, l->sh.params, l->peer, l->n, peer);
            for (size_t i = 0; i < l->n; i++) l->sh.params[i] = (l->sh.params[i] + l->peer[i]) * 0.5f;
            if (!floats_finite(l->sh.params, l->n)) diverged(l, "the parameters are not finite after a gossip exchange");
        }
    }
    double t1 = now_seconds();
    trace_span(&l->rb.trace, TR_ALLREDUCE, t0, t1, 0);
    l->rb.m.sync_seconds += t1 - t0;
    l->rb.comm.wait_seconds += l->ring.wait_seconds + l->ctl.wait_seconds - waited;
    ring_metrics(l);
    return go_on;
}

/* easgd: the local copy (drawn from the run seed like the center, or read
 * from the checkpoint's center on resume) and the PS path's buffers. */
static void init_easgd(Learner *l) {
    int P = l->rb.n_sources;
    l->reply = xcalloc((size_t)P, sizeof *l->reply);
    l->gradbuf = xcalloc((size_t)P, sizeof *l->gradbuf);
    for (int p = 0; p < P; p++) sendbuf_init(&l->gradbuf[p], proto_grad_bytes(l->rb.source_len[p]));
    init_own(l);
    l->every = (uint64_t)l->rb.cfg->sync.easgd_every;
}

static bool step_easgd(Learner *l, bool have_grad) {
    if (have_grad) apply_own(l);
    l->since++;
    if (++l->steps % l->every != 0) return !l->stop;
    double t0 = now_seconds();
    for (int p = 0; p < l->rb.n_sources; p++) {
        SendBuf *b = &l->gradbuf[p];
        comm_wait_send(&l->rb.comm, b);
        memcpy(sendbuf_payload(b), l->sh.params + l->rb.source_off[p], l->rb.source_len[p] * sizeof(float));
        MsgHeader h = {0};
        h.count = l->rb.source_len[p];
        h.version = l->reply[p].version;
        h.elastic.learner = (uint64_t)l->rb.ctx->index;
        h.elastic.steps = l->since;
        h.flags = MSG_ELASTIC;
        comm_send(&l->rb.comm, b, l->rb.source_rank[p], TAG_GRAD, h, proto_grad_bytes(l->rb.source_len[p]));
    }
    l->since = 0;
    l->got = 0;
    l->pulling = true;
    l->elastic_sq = 0;
    double t1 = now_seconds();
    trace_span(&l->rb.trace, TR_SEND_GRAD, t0, t1, (uint32_t)l->rb.n_sources);
    comm_expect(&l->rb.comm, l->rb.source_rank, l->rb.n_sources);
    WAIT_UNTIL(l, !l->pulling);
    trace_span(&l->rb.trace, TR_WAIT_PARAMS, t1, now_seconds(), 0);
    l->rb.m.sync_seconds += now_seconds() - t0;
    if (!l->pulling) {
        l->rb.m.sync_rounds++;
        note_consensus(l, sqrt(l->elastic_sq) / l->rb.cfg->sync.easgd_alpha);
        if (!floats_finite(l->sh.params, l->n)) diverged(l, "the parameters are not finite after an elastic exchange");
    }
    return !l->stop;
}

static const LearnerSync via_ps = {init_ps, step_ps, finish_ps};
static const LearnerSync via_local_sgd = {init_replica, step_local_sgd, finish_allreduce};
static const LearnerSync via_gossip = {init_replica, step_gossip, finish_allreduce};
static const LearnerSync via_easgd = {init_easgd, step_easgd, finish_ps};
static const LearnerSync via_allreduce = {init_allreduce, step_allreduce, finish_allreduce};
static const LearnerSync via_local = {init_local, step_local, finish_allreduce};

/* The batch that arrived becomes current, the next is requested
 * (prefetch), and its gradient is computed into l->grad, clipped (with
 * learner.batch global not: the average is, in step_allreduce; with
 * learner.accumulate above 1 not: the mean of the K is, in accumulate). Returns
 * false when the loss guard drops it and nothing is to be sent. A
 * non-finite loss or gradient ends the job here, before the gradient is
 * sent or applied, so no parameter source ever holds (or checkpoints)
 * parameters it made non-finite. The norm is summed in double over
 * floats, so it is finite exactly when every element is. */
static bool learn(Learner *l) {
    Batch *ready = &l->next;
    if (!l->prio) {
        size_t k = (size_t)(++l->taken % (uint64_t)l->D);
        ready = &l->bq[k];
        l->bq_ready[k] = false;
    }
    Batch t = l->cur;
    l->cur = *ready;
    *ready = t;
    struct PrioRows pt = l->pcur;
    l->pcur = l->pnext;
    l->pnext = pt;
    l->next_ready = !l->prio && l->bq_ready[(l->taken + 1) % (uint64_t)l->D];
    request_sample(l);
    double t0 = now_seconds();
    char what[AGENTCFG_WHAT_LEN];
    /* learner.batch global: the part is not clipped; the averaged whole is
     * (step_allreduce), as the one learner's gradient would be. Likewise
     * one of K accumulated parts (accumulate). */
    double clip = l->global || l->K > 1 ? 0.0 : l->rb.cfg->optimizer.grad_clip;
    double loss = agentcfg_loss_grad_clip(&l->dqn, &l->rb.net, &l->dp, l->params, l->target, &l->cur, l->grad,
                                          l->prio ? l->td : NULL, clip, what);
    double t1 = now_seconds();
    trace_span(&l->rb.trace, TR_GRAD, t0, t1, (uint32_t)l->cur.n);
    l->rb.m.compute_seconds += t1 - t0;
    if (what[0]) diverged(l, what);
    if (l->prio) send_priorities(l);
    l->rb.m.updates++;
    l->rb.m.samples_trained += (uint64_t)l->cur.n;
    l->rb.m.loss_sum += loss;
    if (!lossguard_outlier(&l->guard, loss)) return true;
    /* Dropped (learner.loss_outlier_sigma). A synchronous round waits for
     * every learner: there a zero gradient takes its place (the round's
     * average counts it); the asynchronous modes send nothing. */
    l->rb.m.loss_outliers++;
    SyncMode mode = l->rb.cfg->sync.mode;
    if (mode != SYNC_PS_SYNC && mode != SYNC_ALLREDUCE) return false;
    memset(l->grad, 0, l->n * sizeof(float));
    return true;
}

/* learner.accumulate K > 1, after each pass of the loop: took, whether a
 * batch was taken (learn ran); *have, whether its gradient is in l->grad
 * (false: the loss guard dropped it in an asynchronous mode; in the
 * synchronous ones it is a zero and counts). A dropped part adds nothing
 * but still counts among the K, so it weighs as a zero in the mean.
 * Returns true when a sync is due: K batches taken, with *have telling
 * whether l->grad holds their mean, clipped (false when every part was
 * dropped); or STOP seen, when the parts of an unfinished sum are dropped
 * (*have false: in allreduce the round that carries the stop flag applies
 * nothing anyway). */
static bool accumulate(Learner *l, bool took, bool *have) {
    if (took) {
        if (*have) agentcfg_grad_accumulate(l->acc, l->grad, l->n, l->kept++);
        l->parts++;
    }
    if (l->parts < l->K && !l->stop) return false;
    *have = l->parts == l->K && l->kept > 0;
    if (*have) {
        /* learner.batch global: the allreduce average is clipped instead */
        double clip = l->global ? 0.0 : l->rb.cfg->optimizer.grad_clip;
        double norm = agentcfg_grad_mean_clip(l->grad, l->acc, l->n, l->K, clip);
        /* Each part was finite, but their sum can overflow. */
        if (!isfinite(norm)) diverged(l, "the accumulated gradient is not finite");
    }
    l->parts = l->kept = 0;
    return true;
}

int learner_run(const Ctx *ctx, const JobArgs *args) {
    Learner *l = xcalloc(1, sizeof *l);
    role_init(&l->rb, ctx, args);
    l->args = args;
    const Config *cfg = args->cfg;
    l->n = l->rb.net.n_params;
    lossguard_init(&l->guard, cfg->learner.loss_outlier_sigma);
    l->batch = agentcfg_learner_batch(cfg);
    l->global = cfg->learner.batch == LEARNER_BATCH_GLOBAL;
    int B = cfg->replay.batch_size, O = l->rb.net.spec.obs_dim;
    l->grad = xmalloc_for((l->n + 1) * sizeof(float), "gradient", "network.hidden");
    l->K = cfg->learner.accumulate;
    if (l->K > 1) l->acc = xmalloc_for(l->n * sizeof(float), "accumulated gradient", "network.hidden");
    dqn_init(&l->dqn, &l->rb.net, B);
    agentcfg_dqn_params(cfg, &l->dp);
    agentcfg_batch_init(&l->cur, B, O);
    agentcfg_batch_init(&l->next, B, O);
    l->D = cfg->learner.prefetch;
    l->bq = xcalloc((size_t)l->D, sizeof *l->bq);
    l->bq_ready = xcalloc((size_t)l->D, sizeof *l->bq_ready);
    for (int k = 0; k < l->D; k++) agentcfg_batch_init(&l->bq[k], B, O);
    l->S = args->lay->count[ROLE_REPLAY];
    l->first_replay = layout_rank_of(args->lay, ROLE_REPLAY, 0);
    l->replay_ranks = xmalloc((size_t)l->S * sizeof(int));
    for (int s = 0; s < l->S; s++) l->replay_ranks[s] = l->first_replay + s;
    pacing_rr_init(&l->rr, l->S, args->lay->count[ROLE_ACTOR], ctx->index);
    if (cfg->replay.kind == REPLAY_PRIORITIZED) prio_init(l);
    const LearnerSync *via = cfg->sync.mode == SYNC_ALLREDUCE   ? &via_allreduce
                             : cfg->sync.mode == SYNC_LOCAL_SGD ? &via_local_sgd
                             : cfg->sync.mode == SYNC_GOSSIP    ? &via_gossip
                             : cfg->sync.mode == SYNC_EASGD     ? &via_easgd
                             : layout_params_in_learner(cfg)    ? &via_local
                                                                : &via_ps;
    via->init(l);
    if (!l->stop) request_sample(l);
    /* The strategy's step decides when to leave: in allreduce mode a STOP
     * can arrive inside the ring (the learner serves its messages there),
     * and this learner must still run the round in which all of them see
     * it, or its neighbours would wait for it forever. */
    for (;;) {
        if (!l->next_ready && !l->stop) {
            double t0 = now_seconds();
            comm_expect(&l->rb.comm, l->replay_ranks, l->S);
            WAIT_UNTIL(l, l->next_ready);
            double t1 = now_seconds();
            trace_span(&l->rb.trace, TR_WAIT_SAMPLE, t0, t1, 0);
            l->rb.m.sample_wait_seconds += t1 - t0;
        }
        bool took = l->next_ready;
        bool have = took && learn(l);
        if (l->K > 1 && !accumulate(l, took, &have)) {
            role_report(&l->rb, false);
            continue;
        }
        if (!via->step(l, have)) break;
        role_report(&l->rb, false);
    }
    /* In allreduce mode the ring may end before this learner has seen its
     * STOP; the coordinator sends CKPT_REQ before STOP, so once STOP is in,
     * any final checkpoint request is too. */
    WAIT_UNTIL(l, false);
    /* Our prioritized requests and updates complete before the shutdown
     * (the replay shards stop after the learners and keep receiving). */
    for (int s = 0; l->prio && s < l->S; s++) {
        comm_wait_send(&l->rb.comm, &l->reqbuf[s]);
        comm_wait_send(&l->rb.comm, &l->priobuf[s]);
    }
    via->finish(l);
    for (int p = 0; l->gradbuf && p < l->rb.n_sources; p++) sendbuf_free(&l->gradbuf[p]);
    free(l->reply);
    free(l->replay_ranks);
    prio_free(l);
    pacing_rr_free(&l->rr);
    free(l->gradbuf);
    free(l->copy_params);
    free(l->copy_target);
    free(l->grad);
    free(l->acc);
    ring_free(&l->ring);
    ring_free(&l->ctl);
    free(l->peer);
    pshard_free(&l->sh);
    dqn_free(&l->dqn);
    agentcfg_batch_free(&l->cur);
    agentcfg_batch_free(&l->next);
    for (int k = 0; k < l->D; k++) agentcfg_batch_free(&l->bq[k]);
    free(l->bq);
    free(l->bq_ready);
    role_free(&l->rb);
    free(l);
    return 0;
}
