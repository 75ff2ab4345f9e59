/* SPDX-License-Identifier: MIT */
/* test_replaystore.c: the sum tree against a brute-force reference, and
 * proportional prioritized replay: sampling distributions (one buffer,
 * several shards, alpha = 0) against exact probabilities, importance
 * weights, stale updates, eviction, the beta schedule, serialization.
 *
 * Chi-square tests. Counts of D draws over K rows with exact probabilities
 * P_i give X2 = sum (count_i - D P_i)^2 / (D P_i), compared with the
 * 0.999 quantile of the chi-square distribution with K - 1 degrees of
 * freedom (values below; computed from the regularized incomplete gamma
 * function, e.g. df 9: 27.877 as in any table). Every generator is
 * seeded, so a pass or fail reproduces. Stratified sampling has less
 * variance than independent draws, so X2 is, if anything, smaller than
 * the chi-square law: the test stays one-sided on the safe side (a wrong
 * P(i) still shows, as the bias grows with D while the noise grows with
 * sqrt(D)).
 *
 * Transition k (its id when inserted in order) is recognisable: obs[j] =
 * 10k + j, action = k, like test_replaybuf.c.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "replaystore.h"
#include "sumtree.h"
#include "util.h"

enum { O = 2, MAXB = 1024 };

/* chi-square 0.999 quantiles by degrees of freedom */
static const double CHI2_999_DF19 = 43.820, CHI2_999_DF23 = 49.728, CHI2_999_DF29 = 58.301;

#include "rows.h"

/* Rows of transitions k0 .. k0+n-1. */
static void rows_fill(Rows *r, int n, uint64_t k0) {
    rows_init(r, n);
    for (int i = 0; i < n; i++) {
        uint64_t k = k0 + (uint64_t)i;
        for (int j = 0; j < O; j++) {
            r->obs[i * O + j] = (float)(10 * k + (uint64_t)j);
            r->next_obs[i * O + j] = -r->obs[i * O + j];
        }
        r->action[i] = (int32_t)k;
        r->reward[i] = (float)k;
        r->discount[i] = 0.5f;
    }
}

/* ---- sum tree ------------------------------------------------------------ */

/* The leaf a left-to-right scan of ref puts mass in (-1 if none). */
static long linear_find(const double *ref, size_t n, double mass) {
    double pre = 0;
    for (size_t k = 0; k < n; k++) {
        if (ref[k] > 0 && mass < pre + ref[k]) return (long)k;
        pre += ref[k];
    }
    return -1;
}

/* Priorities k / 8, k in 0 .. 63, with a quarter of them 0: every partial
 * sum of up to 2^40 of them is exact in double, so the tree's sums and the
 * linear prefix sums agree to the bit and find must match the scan
 * exactly, at any mass. */
Test(sumtree, matches_brute_force_on_random_sets_and_finds) {
    static const size_t caps[] = {1, 2, 3, 7, 8, 9, 63, 64, 65, 100, 513, 1000, 4097};
    Rng rng;
    rng_seed(&rng, 7, 1);
    for (size_t c = 0; c < sizeof caps / sizeof caps[0]; c++) {
        size_t N = caps[c];
        SumTree t;
        sumtree_init(&t, N);
        double *ref = xcalloc(N, sizeof(double));
        cr_assert_eq(sumtree_total(&t), 0.0);
        cr_assert(isinf(sumtree_min(&t)));
        for (int it = 0; it < 2000; it++) {
            size_t i = (size_t)rng_below(&rng, N);
            double p = rng_below(&rng, 4) == 0 ? 0.0 : (double)rng_below(&rng, 64) / 8.0;
            sumtree_set(&t, i, p);
            ref[i] = p;
            double total = 0, mn = INFINITY;
            for (size_t k = 0; k < N; k++) {
                total += ref[k];
                if (ref[k] > 0 && ref[k] < mn) mn = ref[k];
            }
            cr_assert_eq(sumtree_total(&t), total, "capacity %zu step %d", N, it);
            cr_assert_eq(sumtree_min(&t), mn, "capacity %zu step %d", N, it);
            cr_assert_eq(sumtree_get(&t, i), p);
            if (total == 0) continue;
            double m[8];
            size_t got[8];
            for (int r = 0; r < 8; r++) m[r] = rng_uniform(&rng) * total;
            m[0] = 0.0;                  /* the first non-empty leaf */
            m[1] = nextafter(total, 0);  /* the last */
            sumtree_find_many(&t, m, 8, got);
            for (int r = 0; r < 8; r++) {
                long want = linear_find(ref, N, m[r]);
                cr_assert_eq((long)sumtree_find(&t, m[r]), want, "capacity %zu mass %g", N, m[r]);
                cr_assert_eq((long)got[r], want);
            }
            /* Out of range through rounding: the last / first non-empty leaf. */
            long last = -1, first = -1;
            for (size_t k = 0; k < N; k++)
                if (ref[k] > 0) {
                    last = (long)k;
                    if (first < 0) first = (long)k;
                }
            cr_assert_eq((long)sumtree_find(&t, total), last);
            cr_assert_eq((long)sumtree_find(&t, total * 2), last);
            cr_assert_eq((long)sumtree_find(&t, -1.0), first);
        }
        sumtree_clear(&t);
        cr_assert_eq(sumtree_total(&t), 0.0);
        cr_assert(isinf(sumtree_min(&t)));
        free(ref);
        sumtree_free(&t);
        sumtree_free(&t); /* safe twice */
    }
}

/* Arbitrary doubles: internal sums may round differently from a linear
 * prefix sum, so find must land on a non-empty leaf whose linear interval
 * holds the mass up to rounding, and the total must equal the linear sum
 * to a few ulps. */
Test(sumtree, arbitrary_priorities_find_within_rounding) {
    Rng rng;
    rng_seed(&rng, 7, 2);
    size_t N = 777;
    SumTree t;
    sumtree_init(&t, N);
    double *ref = xcalloc(N, sizeof(double));
    for (int it = 0; it < 5000; it++) {
        size_t i = (size_t)rng_below(&rng, N);
        double p = rng_below(&rng, 5) == 0 ? 0.0 : exp(10 * rng_normal(&rng));
        sumtree_set(&t, i, p);
        ref[i] = p;
    }
    double total = 0;
    for (size_t k = 0; k < N; k++) total += ref[k];
    cr_assert(fabs(sumtree_total(&t) - total) <= 1e-12 * total);
    for (int r = 0; r < 20000; r++) {
        double m = rng_uniform(&rng) * sumtree_total(&t);
        size_t f = sumtree_find(&t, m);
        cr_assert(ref[f] > 0, "empty leaf %zu", f);
        double pre = 0;
        for (size_t k = 0; k < f; k++) pre += ref[k];
        double tol = 1e-12 * total;
        cr_assert(m >= pre - tol && m < pre + ref[f] + tol, "mass %g outside [%g, %g)", m, pre, pre + ref[f]);
    }
    free(ref);
    sumtree_free(&t);
}

/* ---- one buffer ---------------------------------------------------------- */

static double chi2(const uint64_t *count, const double *prob, int K, uint64_t draws) {
    double x2 = 0;
    for (int i = 0; i < K; i++) {
        double e = (double)draws * prob[i];
        x2 += ((double)count[i] - e) * ((double)count[i] - e) / e;
    }
    return x2;
}

/* 20 rows with TD errors 0, 0.1, ..., 1.9 (alpha 0.7, eps 0.01): 200,000
 * draws in batches of 64 against P(i) = p_i / sum p; df = 19. */
Test(replaystore, sampling_matches_exact_probabilities) {
    enum { K = 20, B = 64, BATCHES = 3125 };
    ReplayStore pr;
    replaystore_init_prioritized(&pr, K, O, 0.7, 0.01);
    Rows in, out;
    rows_fill(&in, K, 0);
    float td[K];
    for (int i = 0; i < K; i++) td[i] = 0.1f * (float)i;
    cr_assert_eq(replaystore_add_batch(&pr, &in.b, td), 0);
    double p[K], sum = 0;
    for (int i = 0; i < K; i++) {
        p[i] = pow((double)td[i] + 0.01, 0.7);
        cr_assert_eq(sumtree_get(&pr.tree, (size_t)i), p[i]);
        sum += p[i];
    }
    cr_assert(fabs(replaystore_total(&pr) - sum) <= 1e-12 * sum);
    double prob[K];
    for (int i = 0; i < K; i++) prob[i] = p[i] / sum;

    Rng rng;
    rng_seed(&rng, 11, 0);
    uint64_t count[K] = {0};
    size_t slots[B];
    uint64_t ids[B];
    double prio[B];
    rows_init(&out, B);
    for (int bt = 0; bt < BATCHES; bt++) {
        replaystore_sample(&pr, &rng, B, &out.b, slots, ids, prio);
        cr_assert_eq(out.b.n, B);
        for (int b = 0; b < B; b++) {
            cr_assert_eq(ids[b], (uint64_t)slots[b]);        /* filled in order from empty */
            cr_assert_eq(out.action[b], (int32_t)ids[b]);  /* the row is that transition */
            cr_assert_eq(out.obs[b * O + 1], (float)(10 * ids[b] + 1));
            cr_assert_eq(prio[b], p[slots[b]]);
            count[slots[b]]++;
        }
    }
    double x2 = chi2(count, prob, K, (uint64_t)B * BATCHES);
    cr_assert(x2 < CHI2_999_DF19, "chi-square %g >= %g (df 19)", x2, CHI2_999_DF19);
    replaystore_free(&pr);
    replaystore_free(&pr);
}

/* alpha = 0: every priority exactly 1 whatever the TD error, on insert
 * and on update, and every stored row equally likely (30 rows of a ring
 * of 40, df = 29). */
Test(replaystore, alpha_zero_is_uniform) {
    enum { K = 30, B = 32, BATCHES = 4000 };
    ReplayStore pr;
    replaystore_init_prioritized(&pr, 40, O, 0.0, 1e-6);
    Rows in, out;
    rows_fill(&in, K, 0);
    float td[K];
    for (int i = 0; i < K; i++) td[i] = (float)(i * i) * 3.7f;
    replaystore_add_batch(&pr, &in.b, td);
    for (int i = 0; i < K; i++) cr_assert_eq(sumtree_get(&pr.tree, (size_t)i), 1.0);
    cr_assert(replaystore_update(&pr, 3, 3, 1e6));
    cr_assert_eq(sumtree_get(&pr.tree, 3), 1.0);
    cr_assert_eq(pr.max_priority, 1.0);
    cr_assert_eq(replaystore_total(&pr), (double)K);
    double prob[K];
    for (int i = 0; i < K; i++) prob[i] = 1.0 / K;
    Rng rng;
    rng_seed(&rng, 12, 0);
    uint64_t count[K] = {0};
    size_t slots[B];
    double prio[B];
    rows_init(&out, B);
    for (int bt = 0; bt < BATCHES; bt++) {
        replaystore_sample(&pr, &rng, B, &out.b, slots, NULL, prio);
        for (int b = 0; b < B; b++) {
            cr_assert(slots[b] < K, "an empty slot was sampled");
            cr_assert_eq(prio[b], 1.0);
            count[slots[b]]++;
        }
    }
    double x2 = chi2(count, prob, K, (uint64_t)B * BATCHES);
    cr_assert(x2 < CHI2_999_DF29, "chi-square %g >= %g (df 29)", x2, CHI2_999_DF29);
    replaystore_free(&pr);
}

/* ---- several shards as one ----------------------------------------------- */

/* Three shards of different sizes and priority scales, one of them
 * wrapped (evictions), sampled the way a learner does: prio_stratify over
 * the shards' totals, then each shard resolves its draws. The counts of
 * all 24 stored rows against P(i) = p_i / (sum over all shards); df = 23. */
Test(replaystore, three_uneven_shards_sample_as_one_buffer) {
    enum { S = 3, B = 128, BATCHES = 2000 };
    static const size_t cap[S] = {5, 12, 8};
    static const int inserted[S] = {9, 12, 7}; /* shard 0 wraps: 4 evicted */
    static const double scale[S] = {0.5, 3.0, 20.0};
    ReplayStore pr[S];
    Rng rng;
    rng_seed(&rng, 13, 0);
    int base[S], K = 0;
    for (int s = 0; s < S; s++) {
        replaystore_init_prioritized(&pr[s], cap[s], O, 0.6, 0.01);
        Rows in;
        rows_fill(&in, inserted[s], 0);
        float td[16];
        for (int i = 0; i < inserted[s]; i++) td[i] = (float)(scale[s] * rng_uniform(&rng));
        replaystore_add_batch(&pr[s], &in.b, td);
        base[s] = K;
        K += (int)replaystore_size(&pr[s]);
    }
    cr_assert_eq(K, 24);
    double T = 0, prob[24], totals[S];
    for (int s = 0; s < S; s++) T += totals[s] = replaystore_total(&pr[s]);
    for (int s = 0; s < S; s++)
        for (size_t k = 0; k < replaystore_size(&pr[s]); k++)
            prob[base[s] + (int)k] = sumtree_get(&pr[s].tree, k) / T;

    uint64_t count[24] = {0};
    int shard_of[B];
    double frac[B], prio[B];
    size_t slots[B];
    Rows out;
    rows_init(&out, B);
    for (int bt = 0; bt < BATCHES; bt++) {
        prio_stratify(totals, S, B, &rng, shard_of, frac);
        /* The draws come in shard order: one contiguous run per shard. */
        for (int b = 0, e; b < B; b = e) {
            int s = shard_of[b];
            for (e = b; e < B && shard_of[e] == s; e++) cr_assert(frac[e] >= 0 && frac[e] < 1);
            if (e < B) cr_assert(shard_of[e] > s);
            replaystore_sample_at(&pr[s], frac + b, e - b, &out.b, slots + b, NULL, prio + b);
            for (int i = b; i < e; i++) {
                count[base[s] + (int)slots[i]]++;
                /* the probability a learner gives the row's weight */
                double P = (totals[s] / T) * (prio[i] / replaystore_total(&pr[s]));
                cr_assert(fabs(P - prob[base[s] + (int)slots[i]]) <= 1e-12);
            }
        }
    }
    double x2 = chi2(count, prob, K, (uint64_t)B * BATCHES);
    cr_assert(x2 < CHI2_999_DF23, "chi-square %g >= %g (df 23)", x2, CHI2_999_DF23);
    for (int s = 0; s < S; s++) replaystore_free(&pr[s]);
}

/* Shards with total 0 (first, middle, last) never get a draw; fractions
 * stay in [0, 1) and the draws come out in shard order. */
Test(replaystore, stratify_skips_empty_shards) {
    static const double totals[6] = {0, 2.5, 0, 0, 7.25, 0};
    enum { B = 97 };
    int shard_of[B];
    double frac[B];
    Rng rng;
    rng_seed(&rng, 14, 0);
    int n1 = 0;
    for (int rep = 0; rep < 200; rep++) {
        prio_stratify(totals, 6, B, &rng, shard_of, frac);
        for (int b = 0; b < B; b++) {
            cr_assert(shard_of[b] == 1 || shard_of[b] == 4, "draw in empty shard %d", shard_of[b]);
            cr_assert(frac[b] >= 0 && frac[b] < 1);
            if (b) cr_assert(shard_of[b] >= shard_of[b - 1]);
            n1 += shard_of[b] == 1;
        }
    }
    /* Stratified: shard 1 holds 2.5 / 9.75 of the mass, so 24 or 25 of every
     * 97 draws (the strata boundaries fall where they fall). */
    cr_assert(n1 >= 200 * 24 && n1 <= 200 * 25, "%d draws in shard 1", n1);
    static const double one[1] = {4.0};
    prio_stratify(one, 1, B, &rng, shard_of, frac);
    for (int b = 0; b < B; b++) {
        cr_assert_eq(shard_of[b], 0);
        cr_assert(frac[b] >= (double)b / B && frac[b] < (double)(b + 1) / B + 1e-15);
    }
}

/* ---- importance weights and beta ----------------------------------------- */

Test(prio, weights_by_hand) {
    /* N = 10 rows, batch of 4 drawn with P = 0.1, 0.2, 0.4, 0.05:
     *   N P           = 1, 2, 4, 0.5
     * beta = 0.5: (N P)^-0.5 = 1, 1/sqrt(2), 1/2, sqrt(2); the batch max is
     *   sqrt(2) (the least likely row), so w = 1/sqrt(2) = 0.70710678,
     *   1/2 = 0.5, 1/(2 sqrt(2)) = 0.35355339, 1.
     * beta = 1: (N P)^-1 = 1, 0.5, 0.25, 2; divided by 2: 0.5, 0.25, 0.125, 1.
     * beta = 0: all 1. */
    static const double prob[4] = {0.1, 0.2, 0.4, 0.05};
    float w[4];
    prio_weights(prob, 4, 10, 0.5, w);
    static const float half[4] = {0.70710678f, 0.5f, 0.35355339f, 1.0f};
    for (int i = 0; i < 4; i++) cr_assert_float_eq(w[i], half[i], 1e-7, "beta 0.5, row %d: %g", i, w[i]);
    cr_assert_eq(w[3], 1.0f);
    prio_weights(prob, 4, 10, 1.0, w);
    static const float one[4] = {0.5f, 0.25f, 0.125f, 1.0f};
    for (int i = 0; i < 4; i++) cr_assert_eq(w[i], one[i], "beta 1, row %d: %g", i, w[i]);
    prio_weights(prob, 4, 10, 0.0, w);
    for (int i = 0; i < 4; i++) cr_assert_eq(w[i], 1.0f);
    /* N cancels under batch-max normalization. */
    float w2[4];
    prio_weights(prob, 4, 1e6, 0.5, w2);
    prio_weights(prob, 4, 10, 0.5, w);
    cr_assert_eq(memcmp(w, w2, sizeof w), 0);
}

Test(prio, beta_schedule_endpoints) {
    cr_assert_eq(prio_beta(0.4, 1.0, 100, 0), 0.4);
    cr_assert_float_eq(prio_beta(0.4, 1.0, 100, 50), 0.7, 1e-15);
    cr_assert_eq(prio_beta(0.4, 1.0, 100, 100), 1.0);
    cr_assert_eq(prio_beta(0.4, 1.0, 100, 1000000), 1.0);
    cr_assert_eq(prio_beta(0.4, 1.0, 0, 0), 1.0); /* beta_steps 0: beta_final at once */
    cr_assert_eq(prio_beta(0.5, 0.5, 10, 3), 0.5);
}

/* ---- updates, eviction ---------------------------------------------------- */

/* A sampled row whose slot is overwritten before its new priority arrives:
 * the update is ignored and counted; other rows' updates land. */
Test(replaystore, stale_updates_are_ignored_and_counted) {
    ReplayStore pr;
    replaystore_init_prioritized(&pr, 4, O, 1.0, 0.5);
    Rows in, out;
    rows_fill(&in, 4, 0);
    replaystore_add_batch(&pr, &in.b, NULL); /* max_priority: 1 each */
    cr_assert_eq(replaystore_total(&pr), 4.0);
    size_t slots[8];
    uint64_t ids[8];
    Rng rng;
    rng_seed(&rng, 15, 0);
    rows_init(&out, 8);
    replaystore_sample(&pr, &rng, 8, &out.b, slots, ids, NULL);
    /* Two new rows overwrite slots 0 and 1 (ids 0 and 1). */
    rows_fill(&in, 2, 4);
    replaystore_add_batch(&pr, &in.b, NULL);
    uint64_t stale = 0, landed = 0;
    for (int b = 0; b < 8; b++) {
        bool gone = slots[b] < 2;
        cr_assert_eq(replaystore_update(&pr, slots[b], ids[b], 2.5), !gone);
        stale += gone;
        landed += !gone;
    }
    cr_assert_eq(pr.stale, stale);
    cr_assert(stale > 0 && landed > 0);
    /* Slots 0, 1 keep the new rows' priority 1; 2, 3 got (2.5 + 0.5)^1 = 3. */
    cr_assert_eq(sumtree_get(&pr.tree, 0), 1.0);
    cr_assert_eq(sumtree_get(&pr.tree, 1), 1.0);
    cr_assert_eq(sumtree_get(&pr.tree, 2), 3.0);
    cr_assert_eq(sumtree_get(&pr.tree, 3), 3.0);
    cr_assert_eq(pr.max_priority, 3.0);
    /* A never-inserted id is stale too. */
    cr_assert_not(replaystore_update(&pr, 2, 99, 1.0));
    cr_assert_eq(pr.stale, stale + 1);
    /* The next max-priority insert uses the raised max. */
    rows_fill(&in, 1, 6);
    size_t s = replaystore_add_batch(&pr, &in.b, NULL);
    cr_assert_eq(sumtree_get(&pr.tree, s), 3.0);
    replaystore_free(&pr);
}

/* Many chunks (one larger than the ring) into a ring of 10: after every
 * insert the total equals the sum of the live rows' priorities, each slot
 * holds its own row's priority, and empty slots hold 0. alpha = 1 and
 * TD errors in quarters keep every sum exact. */
Test(replaystore, eviction_replaces_old_priorities) {
    enum { CAP = 10 };
    ReplayStore pr;
    replaystore_init_prioritized(&pr, CAP, O, 1.0, 0.25);
    Rng rng;
    rng_seed(&rng, 16, 0);
    double prio_of_id[200];
    uint64_t next = 0;
    static const int chunks[] = {3, 4, 1, 7, 13, 2, 0, 9, 10, 5, 11, 6};
    for (size_t c = 0; c < sizeof chunks / sizeof chunks[0]; c++) {
        int n = chunks[c];
        Rows in;
        rows_fill(&in, n, next);
        float td[16];
        for (int i = 0; i < n; i++) {
            td[i] = (float)rng_below(&rng, 40) / 4.0f;
            prio_of_id[next + (uint64_t)i] = (double)td[i] + 0.25;
        }
        replaystore_add_batch(&pr, &in.b, td);
        next += (uint64_t)n;
        double want = 0;
        size_t size = replaystore_size(&pr);
        for (size_t s = 0; s < CAP; s++) {
            if (s < size) {
                double p = prio_of_id[replaybuf_slot_id(&pr.buf, s)];
                cr_assert_eq(sumtree_get(&pr.tree, s), p, "slot %zu after chunk %zu", s, c);
                want += p;
            } else {
                cr_assert_eq(sumtree_get(&pr.tree, s), 0.0);
            }
        }
        cr_assert_eq(replaystore_total(&pr), want, "after chunk %zu: %g vs %g", c, replaystore_total(&pr), want);
    }
    cr_assert_eq(replaystore_size(&pr), (size_t)CAP);
    replaystore_free(&pr);
}

/* ---- serialization ---------------------------------------------------------- */

static unsigned char *ser(const ReplayStore *pr, size_t *bytes) {
    *bytes = replaystore_serial_bytes(pr);
    unsigned char *buf = xmalloc(*bytes);
    replaystore_serialize(pr, buf);
    return buf;
}

/* Wrapped ring of 6 with set priorities: round trip into an equal, a
 * smaller (keeps the newest 4) and a larger buffer. */
Test(replaystore, serialize_round_trip_keeps_priorities) {
    ReplayStore a;
    replaystore_init_prioritized(&a, 6, O, 1.0, 0.5);
    Rows in;
    rows_fill(&in, 9, 0);
    float td[9] = {0, 1, 2, 3, 4, 5, 6, 7, 8};
    replaystore_add_batch(&a, &in.b, td); /* ids 6 7 8 3 4 5 in slots 0 .. 5, priority id + 0.5 */
    cr_assert(replaystore_update(&a, 2, 8, 20.0));
    cr_assert_eq(a.max_priority, 20.5);
    size_t bytes;
    unsigned char *buf = ser(&a, &bytes);
    cr_assert_eq(bytes, replaybuf_serial_bytes(&a.buf) + 8 + 8 * 6);
    size_t caps[3] = {6, 4, 10};
    for (int c = 0; c < 3; c++) {
        ReplayStore b;
        replaystore_init_prioritized(&b, caps[c], O, 1.0, 0.5);
        size_t dropped = 99;
        char err[ERR_LEN];
        cr_assert_eq(replaystore_restore(&b, buf, bytes, &dropped, err), 0, "%s", err);
        cr_assert_eq(dropped, caps[c] < 6 ? 6 - caps[c] : 0);
        cr_assert_eq(b.max_priority, a.max_priority);
        double total = 0;
        for (size_t s = 0; s < replaystore_size(&b); s++) {
            uint64_t id = replaybuf_slot_id(&b.buf, s);
            /* the same id's priority as in a */
            double want = -1;
            for (size_t t = 0; t < 6; t++)
                if (replaybuf_slot_id(&a.buf, t) == id) want = sumtree_get(&a.tree, t);
            cr_assert_eq(sumtree_get(&b.tree, s), want, "capacity %zu id %llu", caps[c], (unsigned long long)id);
            total += want;
        }
        for (size_t s = replaystore_size(&b); s < caps[c]; s++) cr_assert_eq(sumtree_get(&b.tree, s), 0.0);
        cr_assert_eq(replaystore_total(&b), total);
        replaystore_free(&b);
    }
    /* A uniform buffer reads the version-2 section and skips the priorities. */
    ReplayBuf u;
    replaybuf_init(&u, 6, O);
    char err[ERR_LEN];
    cr_assert_eq(replaybuf_restore(&u, buf, bytes, NULL, err), 0, "%s", err);
    cr_assert_eq(replaybuf_size(&u), 6);
    cr_assert_eq(replaybuf_slot_id(&u, 0), 3);
    replaybuf_free(&u);
    /* A bad priority is refused and nothing changes. */
    ReplayStore b;
    replaystore_init_prioritized(&b, 6, O, 1.0, 0.5);
    double bad = NAN;
    memcpy(buf + bytes - 8, &bad, 8);
    cr_assert_eq(replaystore_restore(&b, buf, bytes, NULL, err), -1);
    cr_assert_str_eq(err, "replay data has priority nan for transition 5 of 6, expected a finite number > 0");
    cr_assert_eq(replaystore_size(&b), 0);
    cr_assert_eq(replaystore_total(&b), 0.0);
    /* A length that does not add up: replaybuf's message. */
    cr_assert_eq(replaystore_restore(&b, buf, bytes - 8, NULL, err), -1);
    cr_assert(strstr(err, "version-2 header says 6 transitions") != NULL, "%s", err);
    replaystore_free(&b);
    free(buf);
    replaystore_free(&a);
}

/* A version-1 section (uniform run, older build) loads with every row at
 * max_priority. */
Test(replaystore, version_one_loads_as_uniform_max) {
    ReplayBuf u;
    replaybuf_init(&u, 8, O);
    Rows in;
    rows_fill(&in, 5, 0);
    replaybuf_add_batch(&u, &in.b);
    size_t bytes = replaybuf_serial_bytes(&u);
    unsigned char *buf = xmalloc(bytes);
    replaybuf_serialize(&u, buf);
    ReplayStore b;
    replaystore_init_prioritized(&b, 8, O, 0.6, 1e-6);
    char err[ERR_LEN];
    cr_assert_eq(replaystore_restore(&b, buf, bytes, NULL, err), 0, "%s", err);
    cr_assert_eq(replaystore_size(&b), 5);
    for (size_t s = 0; s < 5; s++) cr_assert_eq(sumtree_get(&b.tree, s), 1.0);
    cr_assert_eq(replaystore_total(&b), 5.0);
    cr_assert_eq(b.max_priority, 1.0);
    free(buf);
    replaybuf_free(&u);
    replaystore_free(&b);
}

/* A chunk larger than the ring keeps the last `capacity` rows, each with
 * its own priority. */
Test(replaystore, oversized_chunk_keeps_the_newest_rows) {
    ReplayStore pr;
    replaystore_init_prioritized(&pr, 4, O, 1.0, 0.5);
    Rows in;
    rows_fill(&in, 11, 0);
    float td[11];
    for (int i = 0; i < 11; i++) td[i] = (float)i;
    replaystore_add_batch(&pr, &in.b, td);
    cr_assert_eq(replaystore_size(&pr), 4);
    for (size_t s = 0; s < 4; s++) {
        uint64_t id = replaybuf_slot_id(&pr.buf, s);
        cr_assert(id >= 7);
        cr_assert_eq(sumtree_get(&pr.tree, s), (double)id + 0.5);
    }
    cr_assert_eq(replaystore_total(&pr), 7.5 + 8.5 + 9.5 + 10.5);
    cr_assert_eq(pr.max_priority, 10.5);
    replaystore_free(&pr);
}

/* Appending saved rows (a resume dealing shards out again): each row keeps
 * the priority saved with it as it is, max_priority rises to the data's;
 * version-1 rows get max_priority; a bad saved priority changes nothing. */
Test(replaystore, append_serial_keeps_saved_priorities_and_max) {
    ReplayStore a;
    replaystore_init_prioritized(&a, 6, O, 1.0, 0.5);
    Rows in;
    rows_fill(&in, 9, 0);
    float td[9] = {0, 1, 2, 3, 4, 5, 6, 7, 8};
    replaystore_add_batch(&a, &in.b, td); /* logical rows: ids 3 .. 8, priority id + 0.5 */
    cr_assert(replaystore_update(&a, 2, 8, 20.0)); /* id 8: 20.5 */
    size_t bytes;
    unsigned char *buf = ser(&a, &bytes);

    /* Into a buffer of another alpha: the saved p is kept, not recomputed. */
    ReplayStore b;
    replaystore_init_prioritized(&b, 4, O, 0.3, 1e-3);
    char err[ERR_LEN];
    cr_assert_eq(replaystore_append_serial(&b, buf, bytes, 1, 2, 3, err), 0, "%s", err); /* ids 4, 6, 8 */
    cr_assert_eq(replaystore_size(&b), 3);
    cr_assert_eq(b.max_priority, 20.5);
    const double want[3] = {4.5, 6.5, 20.5};
    const int32_t action[3] = {4, 6, 8};
    for (size_t s = 0; s < 3; s++) {
        cr_assert_eq(sumtree_get(&b.tree, s), want[s], "slot %zu", s);
        cr_assert_eq(b.buf.action[s], action[s]);
        cr_assert_eq(replaybuf_slot_id(&b.buf, s), s, "new ids");
    }
    cr_assert_eq(replaystore_total(&b), 4.5 + 6.5 + 20.5);
    /* Two more: the ring wraps, the evicted slot's priority is replaced. */
    cr_assert_eq(replaystore_append_serial(&b, buf, bytes, 0, 1, 2, err), 0, "%s", err); /* ids 3, 4 */
    cr_assert_eq(replaystore_size(&b), 4);
    cr_assert_eq(sumtree_get(&b.tree, 0), 4.5, "slot 0 now holds id 4 of the data");
    cr_assert_eq(sumtree_get(&b.tree, 3), 3.5);
    cr_assert_eq(replaystore_total(&b), 4.5 + 6.5 + 20.5 + 3.5);

    /* Version-1 data: every row at max_priority. */
    ReplayBuf u;
    replaybuf_init(&u, 8, O);
    replaybuf_add_batch(&u, &in.b);
    size_t ubytes = replaybuf_serial_bytes(&u);
    unsigned char *ubuf = xmalloc(ubytes);
    replaybuf_serialize(&u, ubuf);
    ReplayStore c;
    replaystore_init_prioritized(&c, 8, O, 1.0, 0.5);
    c.max_priority = 3.0;
    cr_assert_eq(replaystore_append_serial(&c, ubuf, ubytes, 0, 3, 3, err), 0, "%s", err);
    for (size_t s = 0; s < 3; s++) cr_assert_eq(sumtree_get(&c.tree, s), 3.0);
    cr_assert_eq(c.max_priority, 3.0);

    /* A bad saved priority of a row taken: refused, nothing changes. */
    double bad = -1.0;
    memcpy(buf + bytes - 8 * 6 + 8 * 2, &bad, 8); /* logical row 2 */
    ReplayStore d;
    replaystore_init_prioritized(&d, 4, O, 1.0, 0.5);
    cr_assert_eq(replaystore_append_serial(&d, buf, bytes, 0, 2, 2, err), -1);
    cr_assert_str_eq(err, "replay data has priority -1 for transition 2 of 6, expected a finite number > 0");
    cr_assert_eq(replaystore_size(&d), 0);
    cr_assert_eq(d.max_priority, 1.0);
    /* a row not taken may be anything */
    cr_assert_eq(replaystore_append_serial(&d, buf, bytes, 1, 2, 3, err), 0, "%s", err);
    replaystore_free(&d);
    replaystore_free(&c);
    replaybuf_free(&u);
    free(ubuf);
    replaystore_free(&b);
    free(buf);
    replaystore_free(&a);
}


/* The actors' initial priorities are tested with the actor core
 * (tests/unit/test_actorcore.c: actorcore.initial_priorities_from_the_acting_forward). */

/* ---- one type, both kinds ------------------------------------------------ */

/* A uniform store is a ReplayBuf and nothing more: the same rows, draws
 * and ids as the ring itself from the same generator, the weights 1, no
 * priority ever set, the version-1 bytes of replaybuf_serialize, and a
 * round trip through a prioritized store's version-2 bytes that keeps the
 * rows and drops the priorities. The reference is replaybuf, whose own
 * tests (test_replaybuf.c) pin its sampling. */
Test(replaystore, uniform_store_is_the_ring_alone) {
    enum { CAP = 7, N = 10, B = 16 };
    ReplayStore u;
    ReplayBuf ref;
    replaystore_init_uniform(&u, CAP, O);
    replaybuf_init(&ref, CAP, O);
    cr_assert(!replaystore_prioritized(&u));
    Rows in;
    rows_fill(&in, N, 0);
    float td[N] = {0};
    cr_assert_eq(replaystore_add_batch(&u, &in.b, td), replaybuf_add_batch(&ref, &in.b));
    cr_assert_eq(replaystore_size(&u), CAP);
    cr_assert_eq(replaystore_total(&u), (double)CAP, "a uniform store's mass is its row count");
    Rows got, want;
    rows_init(&got, B);
    rows_init(&want, B);
    for (int i = 0; i < B; i++) got.weight[i] = -1.0f;
    size_t slots[B], wslots[B];
    uint64_t ids[B], wids[B];
    Rng r1, r2;
    rng_seed(&r1, 3, 9);
    rng_seed(&r2, 3, 9);
    double scratch[B];
    for (int i = 0; i < B; i++) slots[i] = ids[i] = 777;
    replaystore_sample_weighted(&u, &r1, B, 0.7, &got.b, slots, ids, scratch);
    replaybuf_sample(&ref, &r2, B, &want.b, wslots, wids);
    cr_assert_eq(memcmp(got.obs, want.obs, sizeof got.obs), 0);
    cr_assert_eq(memcmp(got.action, want.action, sizeof got.action), 0);
    for (int i = 0; i < B; i++) {
        cr_assert_eq(got.weight[i], 1.0f, "row %d", i);
        cr_assert(slots[i] == 777 && ids[i] == 777, "row %d: a uniform store hands out no slots or ids to update", i);
    }
    /* A request: drawn from the shard's own generator, the positions unread. */
    double frac[B];
    for (int i = 0; i < B; i++) frac[i] = NAN;
    replaystore_sample_request(&u, &r1, frac, B, &got.b, slots, ids, NULL);
    replaybuf_sample(&ref, &r2, B, &want.b, wslots, wids);
    cr_assert_eq(memcmp(ids, wids, sizeof ids), 0);
    float new_td[B];
    for (int i = 0; i < B; i++) new_td[i] = 5.0f;
    cr_assert_eq(replaystore_update_many(&u, slots, ids, new_td, B), 0, "nothing to set in a uniform store");
    cr_assert_eq(u.stale, 0);
    size_t bytes = replaystore_serial_bytes(&u);
    cr_assert_eq(bytes, replaybuf_serial_bytes(&ref));
    unsigned char *a = xmalloc(bytes), *b = xmalloc(bytes);
    replaystore_serialize(&u, a);
    replaybuf_serialize(&ref, b);
    cr_assert_eq(memcmp(a, b, bytes), 0, "the version-1 bytes");
    free(a);
    free(b);
    /* Version-2 bytes into a uniform store: rows kept, priorities skipped. */
    ReplayStore p;
    replaystore_init_prioritized(&p, CAP, O, 1.0, 0.5);
    replaystore_add_batch(&p, &in.b, NULL);
    size_t pbytes;
    unsigned char *pb = ser(&p, &pbytes);
    ReplayStore back;
    replaystore_init_uniform(&back, CAP, O);
    char err[ERR_LEN];
    cr_assert_eq(replaystore_restore(&back, pb, pbytes, NULL, err), 0, "%s", err);
    cr_assert_eq(replaystore_size(&back), CAP);
    cr_assert_eq(replaybuf_slot_id(&back.buf, 0), replaybuf_slot_id(&p.buf, p.buf.head));
    free(pb);
    replaystore_free(&back);
    replaystore_free(&p);
    replaystore_free(&u);
    replaybuf_free(&ref);
}

/* The local trainer's weighted sample of a prioritized store: the draws
 * of replaystore_sample from the same generator, and the weights
 * prio_weights gives for P_i = p_i / total (weights_by_hand checks
 * prio_weights itself). */
Test(replaystore, weighted_sample_uses_the_draws_probabilities) {
    enum { N = 12, B = 8 };
    ReplayStore pr;
    replaystore_init_prioritized(&pr, 16, O, 1.0, 0.5);
    Rows in;
    rows_fill(&in, N, 0);
    float td[N];
    for (int i = 0; i < N; i++) td[i] = (float)(i % 5);
    replaystore_add_batch(&pr, &in.b, td);
    Rows got, want;
    rows_init(&got, B);
    rows_init(&want, B);
    Rng r1, r2;
    rng_seed(&r1, 5, 2);
    rng_seed(&r2, 5, 2);
    size_t slots[B];
    uint64_t ids[B];
    double scratch[B], p[B], prob[B];
    replaystore_sample_weighted(&pr, &r1, B, 0.6, &got.b, slots, ids, scratch);
    replaystore_sample(&pr, &r2, B, &want.b, NULL, NULL, p);
    for (int i = 0; i < B; i++) prob[i] = p[i] / replaystore_total(&pr);
    float w[B];
    prio_weights(prob, B, N, 0.6, w);
    cr_assert_eq(memcmp(got.action, want.action, sizeof got.action), 0);
    for (int i = 0; i < B; i++) cr_assert_eq(got.weight[i], w[i], "row %d", i);
    cr_assert(replaystore_update_many(&pr, slots, ids, td, B) == B);
    replaystore_free(&pr);
}
