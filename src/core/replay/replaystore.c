/* SPDX-License-Identifier: MIT */
/* replaystore.c: see replaystore.h.
 *
 * Invariant (prioritized): leaf s of the tree is > 0 exactly when slot s is occupied
 * (s < buf.size), and then holds that slot's current transition's
 * priority. Inserts set the leaves of the slots they write (replacing an
 * evicted row's priority), updates only touch slots that still hold the
 * sampled id, and restore rebuilds the tree from scratch.
 */
#include "replaystore.h"

#include <inttypes.h>
#include <assert.h>
#include <math.h>
#include <string.h>

#include "util.h"

void replaystore_init_rows(ReplayStore *pr, size_t capacity, ObsRow row, bool prioritized, double alpha, double eps) {
    memset(pr, 0, sizeof *pr);
    replaybuf_init_rows(&pr->buf, capacity, row);
    pr->max_priority = 1.0;
    if (!prioritized) return;
    assert(alpha >= 0.0 && isfinite(alpha) && eps > 0.0 && isfinite(eps));
    sumtree_init(&pr->tree, capacity);
    pr->prioritized = true;
    pr->alpha = alpha;
    pr->eps = eps;
}

void replaystore_init_prioritized(ReplayStore *pr, size_t capacity, int obs_dim, double alpha, double eps) {
    replaystore_init_rows(pr, capacity, obsrow_make(obs_dim, false), true, alpha, eps);
}

void replaystore_init_uniform(ReplayStore *pr, size_t capacity, int obs_dim) {
    replaystore_init_rows(pr, capacity, obsrow_make(obs_dim, false), false, 0.0, 0.0);
}

void replaystore_init_for(ReplayStore *pr, size_t capacity, ObsRow row, const Config *cfg) {
    bool prio = cfg->replay.kind == REPLAY_PRIORITIZED;
    replaystore_init_rows(pr, capacity, row, prio, cfg->replay.alpha, cfg->replay.priority_eps);
}

void replaystore_free(ReplayStore *pr) {
    replaybuf_free(&pr->buf);
    sumtree_free(&pr->tree);
    memset(pr, 0, sizeof *pr);
}

double replaystore_priority(const ReplayStore *pr, double td_abs) {
    assert(pr->prioritized);
    assert(td_abs >= 0.0 && isfinite(td_abs));
    return pow(td_abs + pr->eps, pr->alpha);
}

/* Set slot's priority and keep max_priority the largest ever set. */
static void set_priority(ReplayStore *pr, size_t slot, double p) {
    sumtree_set(&pr->tree, slot, p);
    if (p > pr->max_priority) pr->max_priority = p;
}

/* The priorities of n rows just inserted from slot `first` on (rows a
 * later row of the chunk overwrote are not stored: skipped, as
 * replaybuf_add_batch does). */
static void set_new(ReplayStore *pr, size_t first, size_t n, const float *td_abs) {
    size_t cap = pr->buf.capacity;
    for (size_t i = n > cap ? n - cap : 0; i < n; i++) {
        double p = td_abs ? replaystore_priority(pr, (double)td_abs[i]) : pr->max_priority;
        set_priority(pr, (first + i) % cap, p);
    }
}

size_t replaystore_add_batch(ReplayStore *pr, const Batch *chunk, const float *td_abs) {
    size_t first = replaybuf_add_batch(&pr->buf, chunk);
    if (pr->prioritized) set_new(pr, first, (size_t)chunk->n, td_abs);
    return first;
}

size_t replaystore_add_rows(ReplayStore *pr, const ReplayRows *rows, const float *td_abs) {
    size_t first = replaybuf_add_rows(&pr->buf, rows);
    if (pr->prioritized) set_new(pr, first, (size_t)rows->n, td_abs);
    return first;
}

void replaystore_sample_at(const ReplayStore *pr, const double *frac, int B, Batch *out, size_t *slots, uint64_t *ids,
                          double *prio) {
    assert(pr->prioritized && B >= 1 && B <= PRIO_MAX_BATCH);
    assert(replaybuf_size(&pr->buf) > 0 && "sampling from an empty replay buffer");
    double total = sumtree_total(&pr->tree);
    enum { GROUP = 256 };
    double mass[GROUP];
    size_t s[GROUP];
    for (int g = 0; g < B; g += GROUP) {
        int m = B - g < GROUP ? B - g : GROUP;
        for (int i = 0; i < m; i++) mass[i] = frac[g + i] * total;
        sumtree_find_many(&pr->tree, mass, m, s);
        for (int i = 0; i < m; i++) {
            if (slots) slots[g + i] = s[i];
            if (ids) ids[g + i] = replaybuf_slot_id(&pr->buf, s[i]);
            if (prio) prio[g + i] = sumtree_get(&pr->tree, s[i]);
        }
        /* out rows g .. g+m-1: gather into a view of them */
        size_t O = (size_t)out->obs_dim;
        Batch view = {.n = m, .obs_dim = out->obs_dim, .obs = out->obs + (size_t)g * O,
                      .action = out->action + g, .reward = out->reward + g,
                      .next_obs = out->next_obs + (size_t)g * O, .discount = out->discount + g};
        replaybuf_gather(&pr->buf, s, m, &view);
    }
    out->n = B;
}

void replaystore_sample(const ReplayStore *pr, Rng *rng, int B, Batch *out, size_t *slots, uint64_t *ids,
                       double *prio) {
    assert(B >= 1 && B <= PRIO_MAX_BATCH);
    if (!pr->prioritized) {
        assert(!prio && "a uniform store has no priorities to hand out");
        replaybuf_sample(&pr->buf, rng, B, out, slots, ids);
        return;
    }
    double frac[PRIO_MAX_BATCH < 4096 ? PRIO_MAX_BATCH : 4096];
    enum { CHUNK = sizeof frac / sizeof frac[0] };
    /* Stratum b of B is [b / B, (b + 1) / B); computed per row so that a
     * batch larger than the on-stack chunk gives the same draws. */
    for (int g = 0; g < B; g += CHUNK) {
        int m = B - g < CHUNK ? B - g : CHUNK;
        for (int i = 0; i < m; i++) {
            double f = ((double)(g + i) + rng_uniform(rng)) / (double)B;
            frac[i] = f < 1.0 ? f : nextafter(1.0, 0.0);
        }
        Batch view = *out;
        size_t O = (size_t)out->obs_dim;
        view.obs += (size_t)g * O;
        view.next_obs += (size_t)g * O;
        view.action += g;
        view.reward += g;
        view.discount += g;
        replaystore_sample_at(pr, frac, m, &view, slots ? slots + g : NULL, ids ? ids + g : NULL,
                             prio ? prio + g : NULL);
    }
    out->n = B;
}

void replaystore_sample_request(const ReplayStore *pr, Rng *rng, const double *frac, int B, Batch *out,
                                size_t *slots, uint64_t *ids, double *prio) {
    if (pr->prioritized) replaystore_sample_at(pr, frac, B, out, slots, ids, prio);
    else replaystore_sample(pr, rng, B, out, slots, ids, prio);
}

void replaystore_sample_weighted(const ReplayStore *pr, Rng *rng, int B, double beta, Batch *out, size_t *slots,
                                 uint64_t *ids, double *scratch) {
    if (!pr->prioritized) {
        /* weight 1; no slots or ids: a uniform store takes no updates */
        replaystore_sample(pr, rng, B, out, NULL, NULL, NULL);
        return;
    }
    replaystore_sample(pr, rng, B, out, slots, ids, scratch);
    double total = replaystore_total(pr);
    for (int b = 0; b < B; b++) scratch[b] /= total; /* P_i = p_i / total */
    prio_weights(scratch, B, (double)replaystore_size(pr), beta, out->weight);
}

bool replaystore_update(ReplayStore *pr, size_t slot, uint64_t id, double td_abs) {
    assert(pr->prioritized);
    if (!replaybuf_holds(&pr->buf, slot, id)) {
        pr->stale++;
        return false;
    }
    set_priority(pr, slot, replaystore_priority(pr, td_abs));
    return true;
}

size_t replaystore_update_many(ReplayStore *pr, const size_t *slots, const uint64_t *ids, const float *td_abs, int n) {
    assert(n >= 0);
    if (!pr->prioritized) return 0;
    enum { CHUNK = 256 };
    size_t leaf[CHUNK], done = 0;
    double p[CHUNK];
    for (int g = 0; g < n; g += CHUNK) {
        int c = n - g < CHUNK ? n - g : CHUNK, m = 0;
        for (int i = g; i < g + c; i++) {
            if (!replaybuf_holds(&pr->buf, slots[i], ids[i])) {
                pr->stale++;
                continue;
            }
            leaf[m] = slots[i];
            p[m] = replaystore_priority(pr, (double)td_abs[i]);
            if (p[m] > pr->max_priority) pr->max_priority = p[m];
            m++;
        }
        sumtree_set_many(&pr->tree, leaf, p, m);
        done += (size_t)m;
    }
    return done;
}

void prio_stratify(const double *totals, int S, int B, Rng *rng, int *shard_of, double *frac) {
    assert(S >= 1 && B >= 1);
    double T = 0.0;
    int last = -1;
    for (int s = 0; s < S; s++) {
        assert(totals[s] >= 0.0 && isfinite(totals[s]));
        T += totals[s];
        if (totals[s] > 0.0) last = s;
    }
    assert(last >= 0 && "stratifying over shards that are all empty");
    /* The masses grow with b, so one pass over the shards: move on while
     * the mass lies past the current shard's end or the shard is empty;
     * never past the last non-empty one (rounding at the very end). */
    int s = 0;
    double cum = 0.0;
    for (int b = 0; b < B; b++) {
        double m = ((double)b + rng_uniform(rng)) / (double)B * T;
        while (s < last && (totals[s] == 0.0 || m >= cum + totals[s])) {
            cum += totals[s];
            s++;
        }
        double f = (m - cum) / totals[s];
        shard_of[b] = s;
        frac[b] = f < 0.0 ? 0.0 : f < 1.0 ? f : nextafter(1.0, 0.0);
    }
}

void prio_weights(const double *prob, int B, double n_total, double beta, float *w) {
    assert(B >= 1 && n_total >= 1.0 && beta >= 0.0);
    (void)n_total; /* cancels under batch-max normalization: (N P_i)^-beta / (N P_min)^-beta */
    double pmin = prob[0];
    for (int i = 0; i < B; i++) {
        assert(prob[i] > 0.0 && prob[i] <= 1.0);
        if (prob[i] < pmin) pmin = prob[i];
    }
    for (int i = 0; i < B; i++) w[i] = (float)pow(pmin / prob[i], beta);
}

double prio_beta(double beta, double beta_final, uint64_t beta_steps, uint64_t updates) {
    if (updates >= beta_steps) return beta_final;
    return beta + (beta_final - beta) * ((double)updates / (double)beta_steps);
}

/* ---- serialization ------------------------------------------------------- */

size_t replaystore_serial_bytes(const ReplayStore *pr) {
    if (!pr->prioritized) return replaybuf_serial_bytes(&pr->buf);
    return replaybuf_serial_bytes(&pr->buf) + 8 + 8 * replaybuf_size(&pr->buf);
}

void replaystore_serialize(const ReplayStore *pr, void *buf) {
    const ReplayBuf *rb = &pr->buf;
    if (!pr->prioritized) {
        replaybuf_serialize(rb, buf);
        return;
    }
    replaybuf_serialize_prioritized(rb, buf);
    unsigned char *p = (unsigned char *)buf + replaybuf_serial_bytes(rb);
    memcpy(p, &pr->max_priority, 8);
    p += 8;
    /* Oldest first, like the rows. */
    size_t cap = rb->capacity, oldest = (rb->head + cap - rb->size) % cap;
    for (size_t k = 0; k < rb->size; k++) {
        double v = sumtree_get(&pr->tree, (oldest + k) % cap);
        memcpy(p + 8 * k, &v, 8);
    }
}

int replaystore_restore(ReplayStore *pr, const void *buf, size_t bytes, size_t *dropped, char *err) {
    if (!pr->prioritized) return replaybuf_restore(&pr->buf, buf, bytes, dropped, err);
    ReplaySerInfo info;
    if (replaybuf_serial_info(buf, bytes, pr->buf.obs_dim, &info, err) != 0) return -1;
    const unsigned char *block = NULL;
    uint64_t size = info.size;
    double maxp = pr->max_priority;
    /* Check the priority block before anything changes (replaybuf_restore
     * checks the rest and changes nothing on error either). */
    if (info.priorities) {
        block = (const unsigned char *)buf + info.prio;
        memcpy(&maxp, block, 8);
        if (!(maxp > 0.0 && isfinite(maxp)))
            return errf(err, "replay data has max priority %g, expected a finite number > 0", maxp);
        for (uint64_t k = 0; k < size; k++) {
            double v;
            memcpy(&v, block + 8 + 8 * k, 8);
            if (!(v > 0.0 && isfinite(v)))
                return errf(err, "replay data has priority %g for transition %" PRIu64 " of %" PRIu64 ", expected a finite "
                            "number > 0", v, k, size);
        }
    }
    size_t drop = 0;
    if (replaybuf_restore(&pr->buf, buf, bytes, &drop, err) != 0) return -1;
    if (dropped) *dropped = drop;
    /* The kept rows are the newest, compacted into slots 0 .. keep-1. */
    size_t keep = replaybuf_size(&pr->buf);
    sumtree_clear(&pr->tree);
    pr->max_priority = maxp;
    for (size_t k = 0; k < keep; k++) {
        double v = pr->max_priority;
        if (block) memcpy(&v, block + 8 + 8 * (drop + k), 8);
        sumtree_set(&pr->tree, k, v);
    }
    return 0;
}

int replaystore_append_serial(ReplayStore *pr, const void *buf, size_t bytes, uint64_t first, uint64_t step,
                             uint64_t count, char *err) {
    if (!pr->prioritized)
        return replaybuf_append_serial(&pr->buf, buf, bytes, first, step, count, err) == (size_t)-1 ? -1 : 0;
    ReplaySerInfo info;
    if (replaybuf_serial_info(buf, bytes, pr->buf.obs_dim, &info, err) != 0) return -1;
    const unsigned char *block = NULL; /* with priorities: max_priority, then one p per row */
    if (info.priorities) {
        block = (const unsigned char *)buf + info.prio;
        double maxp;
        memcpy(&maxp, block, 8);
        if (!(maxp > 0.0 && isfinite(maxp)))
            return errf(err, "replay data has max priority %g, expected a finite number > 0", maxp);
        for (uint64_t i = 0; i < count && first + i * step < info.size; i++) {
            uint64_t k = first + i * step;
            double v;
            memcpy(&v, block + 8 + 8 * k, 8);
            if (!(v > 0.0 && isfinite(v)))
                return errf(err, "replay data has priority %g for transition %" PRIu64 " of %" PRIu64 ", expected a finite "
                            "number > 0", v, k, info.size);
        }
    }
    size_t head = replaybuf_append_serial(&pr->buf, buf, bytes, first, step, count, err);
    if (head == (size_t)-1) return -1;
    if (block) {
        double maxp;
        memcpy(&maxp, block, 8);
        if (maxp > pr->max_priority) pr->max_priority = maxp;
    }
    /* Row i went to slot (head + i) % cap; rows a later one overwrote are
     * not stored (as in replaystore_add_batch). */
    size_t cap = pr->buf.capacity;
    for (uint64_t i = count > cap ? count - cap : 0; i < count; i++) {
        double v = pr->max_priority;
        if (block) memcpy(&v, block + 8 + 8 * (first + i * step), 8);
        set_priority(pr, (size_t)((head + i) % cap), v);
    }
    return 0;
}
