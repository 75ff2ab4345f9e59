/* SPDX-License-Identifier: MIT */
/* test_pacing.c: the pacing policy (src/core/replay/pacing.h): the budget split,
 * the actor-to-shard mapping, the samples-per-insert limiter and the
 * learners' round-robin, first each on its own, then together in a
 * simulated job over many layouts.
 *
 * Expected values come from the documented rules, never from running the
 * code: a split is floor(total / k) or one more, the first total mod k parts
 * the larger; actor a feeds shard a mod S; a shard's limiter keeps its
 * sampled count S within
 *
 *   (1 - tol) spi (I - m) - batch - spi c  <=  S  <=  (1 + tol) spi (I - m) + B
 *
 * (I inserted, m its min_size, c the largest chunk), because a chunk goes in
 * only while the debt e = spi (I - m) - S is at most tol spi (I - m) + batch
 * and raises it by at most spi c, and a request of B rows is served only if
 * it leaves e >= -(tol spi (I - m) + B).
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "pacing.h"

/* ---- budget split ------------------------------------------------------- */

static void check_tiling(uint64_t total, int k) {
    uint64_t lo = total / (uint64_t)k, extra = total % (uint64_t)k, next = 0, sum = 0;
    for (int i = 0; i < k; i++) {
        uint64_t off;
        uint64_t len = pacing_split(total, k, i, &off);
        cr_assert_eq(off, next, "total %llu over %d: part %d starts at %llu, expected %llu", (unsigned long long)total,
                     k, i, (unsigned long long)off, (unsigned long long)next);
        uint64_t want = lo + ((uint64_t)i < extra ? 1 : 0); /* the larger parts first */
        cr_assert_eq(len, want, "total %llu over %d: part %d has %llu, expected %llu", (unsigned long long)total, k,
                     i, (unsigned long long)len, (unsigned long long)want);
        cr_assert_eq(pacing_split(total, k, i, NULL), len, "off may be NULL");
        next = off + len;
        sum += len;
    }
    cr_assert_eq(next, total, "total %llu over %d: parts end at %llu", (unsigned long long)total, k,
                 (unsigned long long)next);
    cr_assert_eq(sum, total);
    uint64_t ceil_share = total / (uint64_t)k + (total % (uint64_t)k != 0);
    cr_assert_eq(pacing_split_max(total, k), ceil_share, "total %llu over %d: largest share", (unsigned long long)total,
                 k);
}

Test(pacing_split, tiles_the_total_contiguously_and_evenly) {
    for (int k = 1; k <= 17; k++)
        for (uint64_t total = 0; total <= 300; total++) check_tiling(total, k);
    const uint64_t big[] = {1000003, 30000, 4294967296ull + 7, 1ull << 40, UINT64_MAX, UINT64_MAX - 1};
    const int ks[] = {1, 2, 3, 7, 64, 1000, 4099};
    for (size_t t = 0; t < sizeof big / sizeof big[0]; t++)
        for (size_t j = 0; j < sizeof ks / sizeof ks[0]; j++) check_tiling(big[t], ks[j]);
}

Test(pacing_split, sizes_differ_by_at_most_one) {
    for (int k = 1; k <= 12; k++) {
        for (uint64_t total = 0; total <= 100; total++) {
            uint64_t mn = UINT64_MAX, mx = 0;
            for (int i = 0; i < k; i++) {
                uint64_t len = pacing_split(total, k, i, NULL);
                mn = len < mn ? len : mn;
                mx = len > mx ? len : mx;
            }
            cr_assert(mx - mn <= 1, "total %llu over %d: parts from %llu to %llu", (unsigned long long)total, k,
                      (unsigned long long)mn, (unsigned long long)mx);
        }
    }
}

Test(pacing_split, actor_shard_is_a_mod_s_and_agrees_with_the_split) {
    for (int A = 1; A <= 40; A++) {
        for (int S = 1; S <= A; S++) {
            int fed[64] = {0};
            for (int a = 0; a < A; a++) {
                int s = pacing_actor_shard(a, S);
                cr_assert_eq(s, a % S, "actor %d of %d, %d shards", a, A, S);
                fed[s]++;
            }
            for (int s = 0; s < S; s++)
                cr_assert_eq(pacing_split((uint64_t)A, S, s, NULL), (uint64_t)fed[s],
                             "%d actors, %d shards: shard %d is fed by %d", A, S, s, fed[s]);
        }
    }
}

/* ---- limiter on its own -------------------------------------------------- */

Test(pacing_limiter, warm_up_inserts_freely_and_serves_nothing) {
    PacingLimiter p;
    pacing_limiter_init(&p, 8.0, 0.01, 100, 32, 2);
    for (int k = 0; k < 10; k++) {
        cr_assert(pacing_limiter_can_insert(&p), "below min_size every chunk goes in");
        cr_assert(!pacing_limiter_can_sample(&p, 32), "below min_size nothing is served");
        pacing_limiter_inserted(&p, 10, false);
    }
    cr_assert_eq(p.inserted, 100);
    /* At min_size exactly: e = 0, so a request of B leaves e = -B = -slack(B)
     * (B cancels: a request is served while e >= -tol spi (I - m), here 0). */
    cr_assert(pacing_limiter_can_sample(&p, 32));
    pacing_limiter_sampled(&p, 32);
    cr_assert(!pacing_limiter_can_sample(&p, 1), "one batch ahead: the learner waits for inserts");
}

Test(pacing_limiter, nothing_is_served_before_the_first_insert) {
    PacingLimiter p;
    pacing_limiter_init(&p, 1.0, 0.01, 0, 4, 1);
    cr_assert(!pacing_limiter_can_sample(&p, 4), "min_size 0 still needs something to sample");
    pacing_limiter_inserted(&p, 0, true); /* an actor with no share: empty last chunk */
    cr_assert(!pacing_limiter_can_sample(&p, 4), "lifted, but still empty");
    pacing_limiter_init(&p, 1.0, 0.01, 0, 4, 1);
    pacing_limiter_inserted(&p, 1, false);
    cr_assert(pacing_limiter_can_sample(&p, 4));
}

Test(pacing_limiter, debt_and_slack_at_the_boundaries) {
    PacingLimiter p;
    /* spi 2, tol 0, m 0, batch 4, 100 inserted: debt e = 200 - S, slack = B. */
    pacing_limiter_init(&p, 2.0, 0.0, 0, 4, 1);
    pacing_limiter_inserted(&p, 100, false);
    cr_assert(!pacing_limiter_can_insert(&p), "e 200 > slack 4: the actor waits");
    pacing_limiter_sampled(&p, 195);
    cr_assert(!pacing_limiter_can_insert(&p), "e 5 > slack 4");
    pacing_limiter_sampled(&p, 1);
    cr_assert(pacing_limiter_can_insert(&p), "e 4 <= slack 4");
    pacing_limiter_sampled(&p, 4);
    cr_assert(pacing_limiter_can_sample(&p, 4), "e 0, a request of 4 leaves -4 = -slack(4)");
    pacing_limiter_sampled(&p, 1);
    cr_assert(!pacing_limiter_can_sample(&p, 4), "e -1, a request of 4 would leave -5 < -4: the learner waits");
    cr_assert(!pacing_limiter_can_sample(&p, 1), "e -1, a request of 1 would leave -2 < -1");

    /* The tolerance widens both sides in proportion to I - m: tol 0.1,
     * spi 2, m 10, 110 inserted: e = 200 - S, slack(B) = 20 + B. */
    pacing_limiter_init(&p, 2.0, 0.1, 10, 4, 1);
    pacing_limiter_inserted(&p, 110, false);
    pacing_limiter_sampled(&p, 175);
    cr_assert(!pacing_limiter_can_insert(&p), "e 25 > slack 24");
    pacing_limiter_sampled(&p, 1);
    cr_assert(pacing_limiter_can_insert(&p), "e 24 <= slack 24");
    pacing_limiter_sampled(&p, 44);
    cr_assert(pacing_limiter_can_sample(&p, 4), "e -20, a request of 4 leaves -24 = -slack(4)");
    pacing_limiter_sampled(&p, 1);
    cr_assert(!pacing_limiter_can_sample(&p, 4), "e -21 would leave -25 < -24");
}

Test(pacing_limiter, lifted_once_every_actor_is_done) {
    PacingLimiter p;
    pacing_limiter_init(&p, 1.0, 0.0, 10, 4, 2);
    pacing_limiter_inserted(&p, 5, true);
    cr_assert(!pacing_limiter_can_sample(&p, 4), "one of two actors done, below min_size");
    pacing_limiter_inserted(&p, 1, true);
    cr_assert(pacing_limiter_can_sample(&p, 4), "every actor done: below min_size is no reason to wait");
    pacing_limiter_sampled(&p, 1000);
    cr_assert(pacing_limiter_can_sample(&p, 4), "nor is any debt");
    cr_assert_eq(p.unpaced, 1000, "rows served without a limit are counted apart");
}

/* Rows served while an actor still inserts are paced; from the last
 * actor's last chunk on, every served row also counts as unpaced. */
Test(pacing_limiter, unpaced_counts_only_rows_served_after_the_last_chunk) {
    PacingLimiter p;
    pacing_limiter_init(&p, 2.0, 0.0, 4, 4, 2);
    pacing_limiter_inserted(&p, 8, false);
    pacing_limiter_sampled(&p, 4);
    pacing_limiter_inserted(&p, 4, true);
    pacing_limiter_sampled(&p, 4);
    cr_assert_eq(p.unpaced, 0, "one actor still inserting: every row paced");
    pacing_limiter_inserted(&p, 2, true);
    pacing_limiter_sampled(&p, 4);
    pacing_limiter_sampled(&p, 8);
    cr_assert_eq(p.sampled, 20);
    cr_assert_eq(p.unpaced, 12);
}

/* A resumed shard: restored rows count towards min_size and make it
 * servable before the first insert; the debt then starts at 0 and the
 * ratio holds from there (one batch of slack, then inserts pay). */
Test(pacing_limiter, restored_rows_count_towards_min_size_and_the_debt_starts_at_zero) {
    PacingLimiter p;
    pacing_limiter_init(&p, 2.0, 0.0, 100, 4, 1);
    pacing_limiter_restored(&p, 250);
    cr_assert_eq(p.min_size, 0);
    cr_assert(pacing_limiter_can_sample(&p, 4), "restored past min_size: served before any insert");
    cr_assert(pacing_limiter_can_insert(&p), "and the actors may insert at once");
    pacing_limiter_sampled(&p, 4);
    cr_assert(!pacing_limiter_can_sample(&p, 4), "one batch ahead of spi x 0 inserts: the learner waits");
    pacing_limiter_inserted(&p, 2, false);
    cr_assert(pacing_limiter_can_sample(&p, 4), "2 inserts at spi 2 pay for the next batch");

    /* Restored less than min_size: the rest must be inserted first. */
    pacing_limiter_init(&p, 2.0, 0.0, 100, 4, 1);
    pacing_limiter_restored(&p, 60);
    cr_assert_eq(p.min_size, 40);
    cr_assert(!pacing_limiter_can_sample(&p, 4), "60 of 100 restored: wait for 40 more");
    pacing_limiter_inserted(&p, 39, false);
    cr_assert(!pacing_limiter_can_sample(&p, 4));
    pacing_limiter_inserted(&p, 1, false);
    cr_assert(pacing_limiter_can_sample(&p, 4), "restored + inserted reach min_size");

    /* Nothing restored is the fresh start: nothing served before an insert. */
    pacing_limiter_init(&p, 1.0, 0.0, 0, 4, 1);
    pacing_limiter_restored(&p, 0);
    cr_assert(!pacing_limiter_can_sample(&p, 4));
}

Test(pacing_limiter, one_of_insert_and_sample_is_always_allowed) {
    const double spis[] = {0.25, 1, 3, 8, 32}, tols[] = {0, 0.01, 0.5};
    const uint64_t mins[] = {0, 7, 64};
    const int batches[] = {1, 4, 32};
    for (size_t a = 0; a < 5; a++)
        for (size_t b = 0; b < 3; b++)
            for (size_t c = 0; c < 3; c++)
                for (size_t d = 0; d < 3; d++)
                    for (uint64_t I = 1; I <= 300; I += 7)
                        for (uint64_t S = 0; S <= 12000; S += 97) {
                            PacingLimiter p;
                            pacing_limiter_init(&p, spis[a], tols[b], mins[c], batches[d], 1);
                            p.inserted = I;
                            p.sampled = S;
                            cr_assert(pacing_limiter_can_insert(&p) || pacing_limiter_can_sample(&p, batches[d]),
                                      "stuck at spi %g tol %g m %llu batch %d, I %llu S %llu", spis[a], tols[b],
                                      (unsigned long long)mins[c], batches[d], (unsigned long long)I,
                                      (unsigned long long)S);
                        }
}

/* ---- round-robin on its own ---------------------------------------------- */

/* Actors feeding shard s under the documented mapping a mod S. */
static int fed_by(int A, int S, int s) {
    int n = 0;
    for (int a = 0; a < A; a++) n += a % S == s;
    return n;
}

Test(pacing_rr, every_window_of_one_cycle_is_proportional_to_the_actors) {
    enum { MAXS = 12 };
    for (int A = 1; A <= 12; A++) {
        for (int S = 1; S <= A && S <= MAXS; S++) {
            for (int start = 0; start <= A + 1; start++) {
                PacingRR rr;
                pacing_rr_init(&rr, S, A, start);
                cr_assert_eq(rr.total, A);
                /* 4 cycles of picks; every window of A consecutive picks
                 * (one cycle, wherever it starts) holds shard s exactly
                 * fed_by(s) times. */
                int picks[4 * 12], n = 4 * A;
                for (int k = 0; k < n; k++) {
                    picks[k] = pacing_rr_next(&rr);
                    cr_assert(picks[k] >= 0 && picks[k] < S);
                }
                for (int w = 0; w + A <= n; w++) {
                    int count[MAXS] = {0};
                    for (int k = w; k < w + A; k++) count[picks[k]]++;
                    for (int s = 0; s < S; s++)
                        cr_assert_eq(count[s], fed_by(A, S, s),
                                     "A %d S %d start %d: window at %d has shard %d %d times, expected %d", A, S, start,
                                     w, s, count[s], fed_by(A, S, s));
                }
                pacing_rr_free(&rr);
            }
        }
    }
}

Test(pacing_rr, learners_with_different_starts_begin_on_different_shards) {
    /* 4 actors on 2 shards (weights 2, 2): the sequence is 0 1 0 1, so
     * learner 0 starts on shard 0 and learner 1 on shard 1. */
    PacingRR a, b;
    pacing_rr_init(&a, 2, 4, 0);
    pacing_rr_init(&b, 2, 4, 1);
    cr_assert_eq(pacing_rr_next(&a), 0);
    cr_assert_eq(pacing_rr_next(&b), 1);
    pacing_rr_free(&a);
    pacing_rr_free(&b);
    pacing_rr_free(&a); /* safe twice: the pointers were cleared */
}

/* ---- a simulated job ----------------------------------------------------- *
 *
 * A deterministic event loop with the roles' rules (actor.c, replay.c,
 * learner.c) and pacing's decisions. Each tick, every actor and learner whose
 * period divides the tick acts once:
 *   actor    if its share is not used up and it holds a credit (at most 2
 *            chunks unacked), takes one env step (one transition); when the
 *            chunk is full or the share used up it sends it (the last one
 *            flagged, even if empty; an actor with no share sends an empty
 *            last chunk at the start);
 *   learner  if its batch has arrived, asks the shard its round-robin picks
 *            for the next (one request in flight; the gradient takes its
 *            period).
 * A shard handles a message as replay.c does: a chunk goes in at once if
 * nothing waits before it and the limiter allows, else it queues; then it
 * retries queued chunks (in order) and requests until nothing moves. An
 * insert acks the chunk (the actor gets its credit back) and serves nothing.
 */

enum { SIM_A = 8, SIM_S = 4, SIM_L = 4, SIM_CREDITS = 2, SIM_IDLE_TICKS = 12 };

typedef struct {
    int A, S, L, B, chunk;
    double spi, tol;
    uint64_t min_total, total;
    int actor_period[SIM_A], learner_period[SIM_L];
} SimSpec;

typedef struct {
    int shard;
    uint64_t quota, steps;
    int chunk_n, credits;
    bool done;
} SimActor;

typedef struct {
    int rows, source;
    bool last;
} SimChunk;

typedef struct {
    PacingLimiter lim;
    SimChunk pend[SIM_CREDITS * SIM_A];
    int n_pend, max_pend;
    bool req[SIM_L];          /* a request of B rows from learner l waits */
    bool lifted;
    uint64_t lift_inserted, lift_sampled;
} SimShard;

typedef struct {
    PacingRR rr;
    bool ready;               /* its batch arrived: may ask for the next */
    int waiting_at;           /* shard of the request in flight, -1 if none */
    uint64_t served, picks;
    int window[SIM_A];        /* the last A picks, a ring */
    int win_count[SIM_S];
} SimLearner;

typedef struct {
    const SimSpec *sp;
    SimActor actor[SIM_A];
    SimShard shard[SIM_S];
    SimLearner learner[SIM_L];
    uint64_t events;          /* state changes, to see a stall */
    uint64_t held_chunks, held_requests; /* the limiter said wait */
    int fed[SIM_S];           /* actors per shard, from a mod S */
} Sim;

static const char *spec_str(const SimSpec *sp, char *buf, size_t n) {
    snprintf(buf, n, "A %d S %d L %d spi %g tol %g B %d chunk %d min %llu total %llu", sp->A, sp->S, sp->L, sp->spi,
             sp->tol, sp->B, sp->chunk, (unsigned long long)sp->min_total, (unsigned long long)sp->total);
    return buf;
}

/* The limiter's promise for shard s, from its rules (see the top). */
static void check_ratio(const Sim *sim, int s, int max_chunk) {
    const SimShard *sh = &sim->shard[s];
    const SimSpec *sp = sim->sp;
    if (sh->lifted || sh->lim.inserted < sh->lim.min_size) return;
    double over = (double)(sh->lim.inserted - sh->lim.min_size), S = (double)sh->lim.sampled;
    double owed = sp->spi * over, eps = 1e-9 * (owed + 1);
    char b[200];
    cr_assert(S <= owed + sp->tol * owed + sp->B + eps, "%s: shard %d sampled %.0f of %.1f owed (+tol +B)",
              spec_str(sp, b, sizeof b), s, S, owed);
    cr_assert(S >= owed - sp->tol * owed - sp->B - sp->spi * max_chunk - eps,
              "%s: shard %d sampled %.0f of %.1f owed (-tol -B -chunk)", spec_str(sp, b, sizeof b), s, S, owed);
}

static void serve(Sim *sim, int s, int l) {
    SimShard *sh = &sim->shard[s];
    char b[200];
    cr_assert(sh->lifted || sh->lim.inserted >= sh->lim.min_size, "%s: shard %d served below min_size",
              spec_str(sim->sp, b, sizeof b), s);
    cr_assert(sh->lim.inserted > 0, "%s: shard %d served from nothing", spec_str(sim->sp, b, sizeof b), s);
    pacing_limiter_sampled(&sh->lim, sim->sp->B);
    sh->req[l] = false;
    sim->learner[l].ready = true;
    sim->learner[l].waiting_at = -1;
    sim->learner[l].served++;
    sim->events++;
    check_ratio(sim, s, sim->sp->chunk);
}

static void insert(Sim *sim, int s, const SimChunk *c) {
    SimShard *sh = &sim->shard[s];
    pacing_limiter_inserted(&sh->lim, (uint64_t)c->rows, c->last);
    sim->actor[c->source].credits--; /* the ack */
    sim->events++;
    check_ratio(sim, s, sim->sp->chunk);
    if (sh->lim.actors_done == sh->lim.actors && !sh->lifted) {
        /* Its actors are done: the limiter is lifted from here on. The
         * ratio it kept is recorded before any lifted sample. */
        sh->lifted = true;
        sh->lift_inserted = sh->lim.inserted;
        sh->lift_sampled = sh->lim.sampled;
    }
}

static void retry(Sim *sim, int s) {
    SimShard *sh = &sim->shard[s];
    bool again = true;
    while (again) {
        again = false;
        while (sh->n_pend > 0 && pacing_limiter_can_insert(&sh->lim)) {
            SimChunk c = sh->pend[0];
            memmove(&sh->pend[0], &sh->pend[1], (size_t)(sh->n_pend - 1) * sizeof sh->pend[0]);
            sh->n_pend--;
            insert(sim, s, &c);
            again = true;
        }
        for (int l = 0; l < sim->sp->L; l++) {
            if (sh->req[l] && pacing_limiter_can_sample(&sh->lim, sim->sp->B)) {
                serve(sim, s, l);
                again = true;
            }
        }
    }
}

static void send_chunk(Sim *sim, int a, bool last) {
    SimActor *ac = &sim->actor[a];
    SimShard *sh = &sim->shard[ac->shard];
    SimChunk c = {.rows = ac->chunk_n, .source = a, .last = last};
    ac->chunk_n = 0;
    ac->credits++;
    sim->events++;
    if (sh->n_pend == 0 && pacing_limiter_can_insert(&sh->lim)) insert(sim, ac->shard, &c);
    else {
        sh->pend[sh->n_pend++] = c;
        sim->held_chunks++;
    }
    if (sh->n_pend > sh->max_pend) sh->max_pend = sh->n_pend;
    retry(sim, ac->shard);
}

static void actor_tick(Sim *sim, int a) {
    SimActor *ac = &sim->actor[a];
    if (ac->done || ac->credits >= SIM_CREDITS) return;
    ac->steps++;
    ac->chunk_n++;
    sim->events++;
    bool last = ac->steps >= ac->quota;
    if (last || ac->chunk_n >= sim->sp->chunk) send_chunk(sim, a, last);
    if (last) ac->done = true;
}

static void learner_tick(Sim *sim, int l) {
    SimLearner *le = &sim->learner[l];
    if (!le->ready) return;
    int s = pacing_rr_next(&le->rr);
    /* Every window of one cycle (A picks) visits shard s fed[s] times. */
    int A = sim->sp->A;
    if (le->picks >= (uint64_t)A) le->win_count[le->window[le->picks % (uint64_t)A]]--;
    le->window[le->picks % (uint64_t)A] = s;
    le->win_count[s]++;
    le->picks++;
    if (le->picks >= (uint64_t)A)
        for (int k = 0; k < sim->sp->S; k++)
            if (le->win_count[k] != sim->fed[k]) {
                char b[200];
                cr_assert_fail("%s: learner %d, picks %llu: shard %d %d times in the last cycle, expected %d",
                        spec_str(sim->sp, b, sizeof b), l, (unsigned long long)le->picks, k, le->win_count[k],
                        sim->fed[k]);
            }
    le->ready = false;
    le->waiting_at = s;
    sim->shard[s].req[l] = true;
    sim->events++;
    retry(sim, s);
    if (sim->shard[s].req[l]) sim->held_requests++;
}

static bool actors_all_in(const Sim *sim) {
    for (int a = 0; a < sim->sp->A; a++)
        if (!sim->actor[a].done) return false;
    for (int s = 0; s < sim->sp->S; s++)
        if (sim->shard[s].n_pend) return false;
    return true;
}

static void sim_tick(Sim *sim, uint64_t t, bool actors_too) {
    if (actors_too)
        for (int a = 0; a < sim->sp->A; a++)
            if (t % (uint64_t)sim->sp->actor_period[a] == 0) actor_tick(sim, a);
    for (int l = 0; l < sim->sp->L; l++)
        if (t % (uint64_t)sim->sp->learner_period[l] == 0) learner_tick(sim, l);
}

/* Run one job to the end: every actor's share inserted, then a drain in
 * which the learners keep asking. Fails the test if nothing moves for
 * SIM_IDLE_TICKS ticks (every agent is due at least once in 3) before every
 * share is in, or if a learner is left waiting at a shard with anything in
 * it after. */
static void sim_run(Sim *sim, const SimSpec *sp) {
    char b[200];
    memset(sim, 0, sizeof *sim);
    sim->sp = sp;
    for (int s = 0; s < sp->S; s++) sim->fed[s] = fed_by(sp->A, sp->S, s);
    for (int s = 0; s < sp->S; s++) {
        /* As replay.c: every shard waits for the largest share of min_size. */
        uint64_t m = sp->min_total / (uint64_t)sp->S + (sp->min_total % (uint64_t)sp->S != 0);
        pacing_limiter_init(&sim->shard[s].lim, sp->spi, sp->tol, m, sp->B, sim->fed[s]);
    }
    for (int l = 0; l < sp->L; l++) {
        pacing_rr_init(&sim->learner[l].rr, sp->S, sp->A, l);
        sim->learner[l].ready = true;
        sim->learner[l].waiting_at = -1;
    }
    for (int a = 0; a < sp->A; a++) {
        sim->actor[a].shard = pacing_actor_shard(a, sp->S);
        sim->actor[a].quota = pacing_split(sp->total, sp->A, a, NULL);
    }
    for (int a = 0; a < sp->A; a++)
        if (sim->actor[a].quota == 0) {
            send_chunk(sim, a, true);
            sim->actor[a].done = true;
        }
    uint64_t t = 0, last_event = 0, seen = sim->events;
    while (!actors_all_in(sim)) {
        sim_tick(sim, ++t, true);
        if (sim->events != seen) {
            seen = sim->events;
            last_event = t;
        }
        if (t - last_event > SIM_IDLE_TICKS) {
            cr_assert_fail("%s: stalled at tick %llu", spec_str(sp, b, sizeof b), (unsigned long long)t);
            return;
        }
    }
    /* Drain: every shard is lifted now, so a learner waits only at a shard
     * that never received anything (all its actors had no share). */
    uint64_t before[SIM_L];
    for (int l = 0; l < sp->L; l++) before[l] = sim->learner[l].served;
    for (int k = 0; k < 6 * SIM_S * 3; k++) sim_tick(sim, ++t, false);
    for (int l = 0; l < sp->L; l++) {
        const SimLearner *le = &sim->learner[l];
        if (le->waiting_at >= 0)
            cr_assert_eq(sim->shard[le->waiting_at].lim.inserted, 0, "%s: learner %d left waiting at shard %d",
                         spec_str(sp, b, sizeof b), l, le->waiting_at);
        else
            cr_assert_geq(le->served - before[l], (uint64_t)sp->S, "%s: learner %d got %llu batches in the drain",
                          spec_str(sp, b, sizeof b), l, (unsigned long long)(le->served - before[l]));
    }
    /* Budgets: actor a's share is total / A, one more for the first
     * total mod A; shard s receives exactly the shares of its actors. */
    for (int s = 0; s < sp->S; s++) {
        uint64_t want = 0;
        for (int a = s; a < sp->A; a += sp->S)
            want += sp->total / (uint64_t)sp->A + ((uint64_t)a < sp->total % (uint64_t)sp->A);
        cr_assert_eq(sim->shard[s].lim.inserted, want, "%s: shard %d inserted %llu, expected %llu",
                     spec_str(sp, b, sizeof b), s, (unsigned long long)sim->shard[s].lim.inserted,
                     (unsigned long long)want);
        cr_assert(sim->shard[s].lifted);
        cr_assert_leq(sim->shard[s].max_pend, SIM_CREDITS * sim->fed[s], "at most two chunks per actor wait");
    }
    for (int l = 0; l < sp->L; l++) pacing_rr_free(&sim->learner[l].rr);
}

/* Layout number k's periods: mixed speeds, and in a third of the layouts
 * all actors fast, in another third all learners fast. */
static void speeds(SimSpec *sp, int k) {
    for (int a = 0; a < SIM_A; a++) sp->actor_period[a] = k % 3 == 0 ? 1 : 1 + (a * 7 + k) % 3;
    for (int l = 0; l < SIM_L; l++) sp->learner_period[l] = k % 3 == 1 ? 1 : 1 + (l * 5 + k) % 3;
}

Test(pacing_sim, no_stall_ratio_within_tolerance_picks_proportional) {
    const double spis[] = {0.25, 1, 8, 32}, tols[] = {0.01, 0, 0.1};
    const int batches[] = {1, 32}, chunks[] = {1, 5, 16};
    static Sim sim;
    int k = 0, actors_held = 0, learners_held = 0;
    for (int A = 1; A <= SIM_A; A++)
        for (int S = 1; S <= SIM_S && S <= A; S++)
            for (int L = 1; L <= SIM_L; L++)
                for (size_t i = 0; i < sizeof spis / sizeof spis[0]; i++)
                    for (size_t j = 0; j < sizeof batches / sizeof batches[0]; j++, k++) {
                        SimSpec sp = {.A = A, .S = S, .L = L, .B = batches[j], .spi = spis[i]};
                        sp.chunk = chunks[k % 3];
                        sp.tol = tols[(k / 3) % 3];
                        sp.min_total = (uint64_t)(sp.B * S) * (1 + (uint64_t)(k % 4));
                        speeds(&sp, k);
                        /* A budget large enough that the additive part of
                         * the bound, (B + spi c) / (spi (I - m)), is at
                         * most 2% on every shard, even the one with the
                         * fewest actors: I - m >= 50 (B / spi + c). */
                        uint64_t m = sp.min_total / (uint64_t)S + 1;
                        uint64_t need = m + (uint64_t)ceil(50.0 * (sp.B / sp.spi + sp.chunk));
                        uint64_t fewest = (uint64_t)(A / S);
                        sp.total = (uint64_t)A * ((need + fewest - 1) / fewest) + (uint64_t)(k % A);
                        sim_run(&sim, &sp);
                        actors_held += sim.held_chunks > 0;
                        learners_held += sim.held_requests > 0;
                        char b[200];
                        /* The ratio each shard kept up to its lift, counted
                         * from min_size on (warm-up inserts are owed no
                         * samples): spi within tol, plus the bound's
                         * additive part. */
                        for (int s = 0; s < S; s++) {
                            const SimShard *sh = &sim.shard[s];
                            double over = (double)(sh->lift_inserted - sh->lim.min_size);
                            double ratio = (double)sh->lift_sampled / over;
                            double extra = (sp.B + sp.spi * sp.chunk) / (sp.spi * over);
                            cr_assert(extra <= 0.02, "%s: shard %d budget too small for the check",
                                      spec_str(&sp, b, sizeof b), s);
                            cr_assert(fabs(ratio - sp.spi) <= sp.spi * (sp.tol + extra) + 1e-9,
                                      "%s: shard %d sampled %g per insert, expected %g within %g + %g",
                                      spec_str(&sp, b, sizeof b), s, ratio, sp.spi, sp.tol, extra);
                        }
                    }
    /* Both sides of the limiter were exercised, in most layouts. */
    cr_assert_gt(actors_held, k / 2, "actors were held in %d of %d layouts", actors_held, k);
    cr_assert_gt(learners_held, k / 2, "learners were held in %d of %d layouts", learners_held, k);
}

Test(pacing_sim, tiny_budgets_end_without_a_stall) {
    /* Shares of 0 or 1 steps (a resume with almost nothing left): actors
     * with no share send an empty last chunk at once; every shard is lifted
     * and the job ends. */
    static Sim sim;
    int k = 0;
    for (int A = 1; A <= SIM_A; A++)
        for (int S = 1; S <= SIM_S && S <= A; S++)
            for (int L = 1; L <= SIM_L; L++)
                for (uint64_t total = 0; total <= (uint64_t)A + 1; total++, k++) {
                    SimSpec sp = {.A = A, .S = S, .L = L, .B = 2, .chunk = 3, .spi = 1, .tol = 0.01};
                    sp.min_total = (uint64_t)(2 * S);
                    sp.total = total;
                    speeds(&sp, k);
                    sim_run(&sim, &sp);
                }
}
