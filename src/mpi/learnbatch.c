/* SPDX-License-Identifier: MIT */
/* learnbatch.c: the learner's batch pipeline, which every sync family runs
 * (learnerint.h): batches from the replay shards, their gradients, and
 * their accumulation.
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
 *
 * Accumulation (learner.accumulate K > 1): K batches' gradients, computed
 * unclipped at the same parameters (nothing syncs in between), are summed
 * and their mean, clipped as one gradient, is what syncs: one push (or one
 * ring round) per K batches, the update of one K*B-row batch.
 */
#include "learnerint.h"
#include "clock.h"
#include "replaystore.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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
    LearnBatch *bt = &l->bt;
    int S = bt->S, B = l->rb.cfg->replay.batch_size;
    LearnPrioRows *pr = &bt->pnext;
    memset(bt->charge, 0, (size_t)S * sizeof *bt->charge);
    for (int b = 0; b < B; b++) bt->charge[pacing_rr_next(&bt->rr)]++;
    prio_stratify(bt->total, S, B, &bt->rng, bt->shard_of, bt->frac);
    double sum = 0;
    for (int s = 0; s < S; s++) sum += bt->total[s];
    memset(pr->cnt, 0, (size_t)S * sizeof *pr->cnt);
    for (int b = 0; b < B; b++) pr->cnt[bt->shard_of[b]]++;
    bt->req_seq++;
    bt->waiting = 0;
    for (int s = 0, off = 0; s < S; s++) {
        pr->off[s] = off;
        off += pr->cnt[s];
        pr->share[s] = sum > 0 ? bt->total[s] / sum : 0;
        if (pr->cnt[s] == 0 && bt->charge[s] == 0) continue;
        SendBuf *buf = &bt->reqbuf[s];
        comm_wait_send(&l->rb.comm, buf);
        double *frac = sendbuf_payload(buf);
        for (int b = 0, k = 0; b < B; b++)
            if (bt->shard_of[b] == s) frac[k++] = bt->frac[b];
        MsgHeader h = {0};
        h.count = (uint64_t)pr->cnt[s];
        h.sample_req.charged = (uint64_t)bt->charge[s];
        h.version = bt->req_seq;
        h.flags = MSG_PRIORITIZED;
        comm_send(&l->rb.comm, buf, bt->first_replay + s, TAG_SAMPLE_REQ, h,
                  proto_sample_req_bytes((size_t)pr->cnt[s], 1));
        bt->waiting++;
    }
    bt->req_out = true;
}

/* Requests until D are in flight (prioritized: one). */
void learnbatch_request(Learner *l) {
    LearnBatch *bt = &l->bt;
    if (bt->prio) {
        request_prioritized(l);
        return;
    }
    while (bt->req_seq - bt->taken < (uint64_t)bt->D) {
        int shard = pacing_rr_next(&bt->rr);
        MsgHeader h = {0};
        h.count = (uint64_t)bt->batch;
        h.sample_req.charged = h.count;
        h.version = ++bt->req_seq;
        comm_send_ctl(&l->rb.comm, bt->first_replay + shard, TAG_SAMPLE_REQ, h, NULL, 0);
    }
    bt->req_out = true;
}

/* Every shard has answered: each row's probability is the one it was drawn
 * with, P = share of its shard x its priority / its shard's total when it
 * sampled (equal to p / sum of all priorities when the reported totals are
 * current), and the importance weights follow (replaystore.h). */
static void finish_prioritized(Learner *l) {
    LearnBatch *bt = &l->bt;
    LearnPrioRows *pr = &bt->pnext;
    uint64_t n = 0;
    for (int s = 0; s < bt->S; s++) n += bt->size[s];
    double beta = prio_beta(l->rb.cfg->replay.beta, l->rb.cfg->replay.beta_final, l->rb.cfg->replay.beta_steps,
                            l->rb.m.params_version);
    prio_weights(pr->prob, bt->next.n, (double)n, beta, bt->next.weight);
}

void learnbatch_on_sample(Learner *l, const Msg *m) {
    LearnBatch *bt = &l->bt;
    uint64_t seq = m->h.version;
    bool expected = bt->prio ? bt->req_out && seq == bt->req_seq
                            : seq > bt->taken && seq <= bt->req_seq && !bt->bq_ready[seq % (uint64_t)bt->D];
    if (!expected)
        DIE(l->rb.ctx, "SAMPLE %" PRIu64 " from rank %d, expected a request in (%" PRIu64 ", %" PRIu64 "]", seq,
            m->source, bt->prio ? bt->req_seq - 1 : bt->taken, bt->req_seq);
    int s = m->source - bt->first_replay, off = 0;
    size_t B = m->h.count, O = (size_t)bt->next.obs_dim;
    if (s < 0 || s >= bt->S) DIE(l->rb.ctx, "SAMPLE from rank %d, which is not a replay shard", m->source);
    if (bt->prio) {
        off = bt->pnext.off[s];
        if ((int)B != bt->pnext.cnt[s])
            DIE(l->rb.ctx, "SAMPLE of %zu rows from rank %d, asked for %d", B, m->source, bt->pnext.cnt[s]);
    } else if ((int)B != bt->batch) {
        DIE(l->rb.ctx, "SAMPLE of %zu rows from rank %d", B, m->source);
    }
    SampleLayout lay = proto_sample_layout(B, O, bt->prio);
    const uint8_t *p = m->payload;
    Batch *nx = bt->prio ? &bt->next : &bt->bq[seq % (uint64_t)bt->D];
    memcpy(nx->obs + (size_t)off * O, p + lay.obs, B * O * sizeof(float));
    memcpy(nx->next_obs + (size_t)off * O, p + lay.next_obs, B * O * sizeof(float));
    memcpy(nx->action + off, p + lay.action, B * sizeof(int32_t));
    memcpy(nx->reward + off, p + lay.reward, B * sizeof(float));
    memcpy(nx->discount + off, p + lay.discount, B * sizeof(float));
    memcpy(nx->weight + off, p + lay.weight, B * sizeof(float));
    for (size_t i = 0; i < B; i++)
        if (nx->action[off + i] < 0 || nx->action[off + i] >= l->rb.net.spec.n_actions)
            DIE(l->rb.ctx, "SAMPLE from rank %d has action %d out of range", m->source, nx->action[off + i]);
    if (bt->prio) {
        LearnPrioRows *pr = &bt->pnext;
        double total;
        memcpy(&total, p + lay.total, sizeof total);
        if (!(total >= 0) || !isfinite(total) || (B && !(total > 0)))
            DIE(l->rb.ctx, "SAMPLE from rank %d reports total priority %g", m->source, total);
        memcpy(pr->slot + off, p + lay.slot, B * sizeof(uint64_t));
        memcpy(pr->id + off, p + lay.id, B * sizeof(uint64_t));
        const double *prio = (const double *)(p + lay.prio);
        for (size_t i = 0; i < B; i++) pr->prob[off + i] = pr->share[s] * prio[i] / total;
        bt->total[s] = total;
        bt->size[s] = m->h.sample.shard_size;
        if (--bt->waiting > 0) return;
        nx->n = l->rb.cfg->replay.batch_size;
        finish_prioritized(l);
        bt->next_ready = true;
        bt->req_out = false;
    } else {
        nx->n = (int)B;
        bt->bq_ready[seq % (uint64_t)bt->D] = true;
        bt->next_ready = bt->bq_ready[(bt->taken + 1) % (uint64_t)bt->D];
    }
}

/* After an update on cur: its rows' new |td| to the shards they came from. */
static void send_priorities(Learner *l) {
    LearnBatch *bt = &l->bt;
    LearnPrioRows *pr = &bt->pcur;
    for (int s = 0; s < bt->S; s++) {
        int n = pr->cnt[s], off = pr->off[s];
        if (n == 0) continue;
        SendBuf *buf = &bt->priobuf[s];
        comm_wait_send(&l->rb.comm, buf);
        PriorityLayout pl = proto_priority_layout((size_t)n);
        uint8_t *p = sendbuf_payload(buf);
        memcpy(p + pl.slot, pr->slot + off, (size_t)n * sizeof(uint64_t));
        memcpy(p + pl.id, pr->id + off, (size_t)n * sizeof(uint64_t));
        memcpy(p + pl.td, bt->td + off, (size_t)n * sizeof(float));
        MsgHeader h = {0};
        h.count = (uint64_t)n;
        comm_send(&l->rb.comm, buf, bt->first_replay + s, TAG_PRIORITY, h, pl.bytes);
    }
}

static void prio_rows_init(LearnPrioRows *pr, int S, int B) {
    pr->off = xcalloc((size_t)S, sizeof *pr->off);
    pr->cnt = xcalloc((size_t)S, sizeof *pr->cnt);
    pr->share = xcalloc((size_t)S, sizeof *pr->share);
    pr->slot = xcalloc((size_t)B, sizeof *pr->slot);
    pr->id = xcalloc((size_t)B, sizeof *pr->id);
    pr->prob = xcalloc((size_t)B, sizeof *pr->prob);
}

static void prio_rows_free(LearnPrioRows *pr) {
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
    LearnBatch *bt = &l->bt;
    const Config *cfg = l->rb.cfg;
    int S = bt->S, B = cfg->replay.batch_size;
    bt->prio = true;
    rng_seed(&bt->rng, cfg->run.seed, RNG_STREAM_LEARNER + (uint64_t)l->rb.ctx->index);
    bt->total = xcalloc((size_t)S, sizeof *bt->total);
    bt->size = xcalloc((size_t)S, sizeof *bt->size);
    for (int s = 0; s < S; s++) bt->total[s] = (double)bt->rr.weight[s];
    prio_rows_init(&bt->pcur, S, B);
    prio_rows_init(&bt->pnext, S, B);
    bt->shard_of = xcalloc((size_t)B, sizeof *bt->shard_of);
    bt->charge = xcalloc((size_t)S, sizeof *bt->charge);
    bt->frac = xcalloc((size_t)B, sizeof *bt->frac);
    bt->td = xcalloc((size_t)B, sizeof *bt->td);
    bt->reqbuf = xcalloc((size_t)S, sizeof *bt->reqbuf);
    bt->priobuf = xcalloc((size_t)S, sizeof *bt->priobuf);
    for (int s = 0; s < S; s++) {
        sendbuf_init(&bt->reqbuf[s], proto_sample_req_bytes((size_t)B, 1));
        sendbuf_init(&bt->priobuf[s], proto_priority_layout((size_t)B).bytes);
    }
}

static void prio_free(Learner *l) {
    LearnBatch *bt = &l->bt;
    if (!bt->prio) return;
    for (int s = 0; s < bt->S; s++) {
        sendbuf_free(&bt->reqbuf[s]);
        sendbuf_free(&bt->priobuf[s]);
    }
    free(bt->reqbuf);
    free(bt->priobuf);
    free(bt->total);
    free(bt->size);
    prio_rows_free(&bt->pcur);
    prio_rows_free(&bt->pnext);
    free(bt->shard_of);
    free(bt->charge);
    free(bt->frac);
    free(bt->td);
}

/* The batch that arrived becomes current, the next is requested
 * (prefetch), and its gradient is computed into l->grad, clipped (with
 * learner.batch global not: the average is, in learnring.c's allreduce
 * step; with learner.accumulate above 1 not: the mean of the K is, in
 * learnbatch_accumulate). Returns
 * false when the loss guard drops it and nothing is to be sent. A
 * non-finite loss or gradient ends the job here, before the gradient is
 * sent or applied, so no parameter source ever holds (or checkpoints)
 * parameters it made non-finite. The norm is summed in double over
 * floats, so it is finite exactly when every element is. */
bool learnbatch_take(Learner *l) {
    LearnBatch *bt = &l->bt;
    Batch *ready = &bt->next;
    if (!bt->prio) {
        size_t k = (size_t)(++bt->taken % (uint64_t)bt->D);
        ready = &bt->bq[k];
        bt->bq_ready[k] = false;
    }
    Batch t = bt->cur;
    bt->cur = *ready;
    *ready = t;
    LearnPrioRows pt = bt->pcur;
    bt->pcur = bt->pnext;
    bt->pnext = pt;
    bt->next_ready = !bt->prio && bt->bq_ready[(bt->taken + 1) % (uint64_t)bt->D];
    learnbatch_request(l);
    double t0 = now_seconds();
    char what[AGENTCFG_WHAT_LEN];
    /* learner.batch global: the part is not clipped; the averaged whole is
     * (learnring.c), as the one learner's gradient would be. Likewise
     * one of K accumulated parts (learnbatch_accumulate). */
    double clip = l->global || bt->K > 1 ? 0.0 : l->rb.cfg->optimizer.grad_clip;
    double loss = agentcfg_loss_grad_clip(&bt->dqn, &l->rb.net, &bt->dp, l->params, l->target, &bt->cur, l->grad,
                                          bt->prio ? bt->td : NULL, clip, what);
    double t1 = now_seconds();
    trace_span(&l->rb.trace, TR_GRAD, t0, t1, (uint32_t)bt->cur.n);
    l->rb.m.compute_seconds += t1 - t0;
    if (what[0]) learner_diverged(l, what);
    if (bt->prio) send_priorities(l);
    l->rb.m.updates++;
    l->rb.m.samples_trained += (uint64_t)bt->cur.n;
    l->rb.m.loss_sum += loss;
    if (!lossguard_outlier(&bt->guard, loss)) return true;
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
 * batch was taken (learnbatch_take ran); *have, whether its gradient is in l->grad
 * (false: the loss guard dropped it in an asynchronous mode; in the
 * synchronous ones it is a zero and counts). A dropped part adds nothing
 * but still counts among the K, so it weighs as a zero in the mean.
 * Returns true when a sync is due: K batches taken, with *have telling
 * whether l->grad holds their mean, clipped (false when every part was
 * dropped); or STOP seen, when the parts of an unfinished sum are dropped
 * (*have false: in allreduce the round that carries the stop flag applies
 * nothing anyway). */
bool learnbatch_accumulate(Learner *l, bool took, bool *have) {
    LearnBatch *bt = &l->bt;
    if (took) {
        if (*have) agentcfg_grad_accumulate(bt->acc, l->grad, l->n, bt->kept++);
        bt->parts++;
    }
    if (bt->parts < bt->K && !l->stop) return false;
    *have = bt->parts == bt->K && bt->kept > 0;
    if (*have) {
        /* learner.batch global: the allreduce average is clipped instead */
        double clip = l->global ? 0.0 : l->rb.cfg->optimizer.grad_clip;
        double norm = agentcfg_grad_mean_clip(l->grad, bt->acc, l->n, bt->K, clip);
        /* Each part was finite, but their sum can overflow. */
        if (!isfinite(norm)) learner_diverged(l, "the accumulated gradient is not finite");
    }
    bt->parts = bt->kept = 0;
    return true;
}

void learnbatch_init(Learner *l) {
    LearnBatch *bt = &l->bt;
    const Config *cfg = l->rb.cfg;
    const Layout *lay = l->rb.lay;
    lossguard_init(&bt->guard, cfg->learner.loss_outlier_sigma);
    bt->batch = agentcfg_learner_batch(cfg);
    int B = cfg->replay.batch_size, O = l->rb.net.spec.obs_dim;
    bt->K = cfg->learner.accumulate;
    if (bt->K > 1) bt->acc = xmalloc_for(l->n * sizeof(float), "accumulated gradient", "network.hidden");
    dqn_init(&bt->dqn, &l->rb.net, B);
    agentcfg_dqn_params(cfg, &bt->dp);
    agentcfg_batch_init(&bt->cur, B, O);
    agentcfg_batch_init(&bt->next, B, O);
    bt->D = cfg->learner.prefetch;
    bt->bq = xcalloc((size_t)bt->D, sizeof *bt->bq);
    bt->bq_ready = xcalloc((size_t)bt->D, sizeof *bt->bq_ready);
    for (int k = 0; k < bt->D; k++) agentcfg_batch_init(&bt->bq[k], B, O);
    bt->S = lay->count[ROLE_REPLAY];
    bt->first_replay = layout_rank_of(lay, ROLE_REPLAY, 0);
    bt->replay_ranks = xmalloc((size_t)bt->S * sizeof(int));
    for (int s = 0; s < bt->S; s++) bt->replay_ranks[s] = bt->first_replay + s;
    pacing_rr_init(&bt->rr, bt->S, lay->count[ROLE_ACTOR], l->rb.ctx->index);
    if (cfg->replay.kind == REPLAY_PRIORITIZED) prio_init(l);
}

/* Our prioritized requests and updates complete before the shutdown (the
 * replay shards stop after the learners and keep receiving). */
void learnbatch_drain(Learner *l) {
    LearnBatch *bt = &l->bt;
    for (int s = 0; bt->prio && s < bt->S; s++) {
        comm_wait_send(&l->rb.comm, &bt->reqbuf[s]);
        comm_wait_send(&l->rb.comm, &bt->priobuf[s]);
    }
}

void learnbatch_free(Learner *l) {
    LearnBatch *bt = &l->bt;
    free(bt->replay_ranks);
    prio_free(l);
    pacing_rr_free(&bt->rr);
    free(bt->acc);
    dqn_free(&bt->dqn);
    agentcfg_batch_free(&bt->cur);
    agentcfg_batch_free(&bt->next);
    for (int k = 0; k < bt->D; k++) agentcfg_batch_free(&bt->bq[k]);
    free(bt->bq);
    free(bt->bq_ready);
}
