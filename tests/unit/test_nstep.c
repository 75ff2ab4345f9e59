/* SPDX-License-Identifier: MIT */
/* test_nstep.c: the n-step builder against hand-worked episodes.
 *
 * Every episode below has L steps t = 0 .. L-1 with observation s_t,
 * action 100 + t and reward r_t = t + 1; step t leads to s_{t+1}, so the
 * final observation is s_L. With g = 0.5 all sums are exact in float, so
 * expected values compare with ==. The sums used, worked by hand:
 *
 *   S(t, k) = r_t + g r_{t+1} + ... + g^(k-1) r_{t+k-1}
 *   S(t,1) = t+1        S(0,2) = 1 + 1      = 2      S(0,3) = 1 + 1 + 0.75       = 2.75
 *   S(1,2) = 2 + 1.5    = 3.5                S(1,3) = 2 + 1.5 + 1         = 4.5
 *   S(2,2) = 3 + 2      = 5                  S(2,3) = 3 + 2 + 1.25        = 6.25
 *   S(3,2) = 4 + 2.5    = 6.5                S(3,3) = 4 + 2.5 + 1.5       = 8
 *   S(4,2) = 5 + 3      = 8                  S(4,3) = 5 + 3 + 1.75        = 9.75
 *   S(5,2) = 6 + 3.5    = 9.5                S(5,3) = 6 + 3.5 + 2         = 11.5
 *   S(6,2) = 7 + 4      = 11
 *   S(0,4) = 1 + 1 + 0.75 + 0.5         = 3.25
 *   S(1,4) = 2 + 1.5 + 1 + 0.625        = 5.125
 *   S(2,4) = 3 + 2 + 1.25 + 0.75        = 7
 *   S(4,4) = 5 + 3 + 1.75 + 1           = 10.75
 *   S(0,5) = 1 + 1 + 0.75 + 0.5 + 0.3125   = 3.5625
 *   S(1,5) = 2 + 1.5 + 1 + 0.625 + 0.375   = 5.5
 *   S(2,5) = 3 + 2 + 1.25 + 0.75 + 0.4375  = 7.4375
 *   S(3,5) = 4 + 2.5 + 1.5 + 0.875 + 0.5   = 9.375
 * and g^1..g^5 = 0.5, 0.25, 0.125, 0.0625, 0.03125.
 *
 * Each expected row says which push emits it (`at`), the sum, where
 * next_obs points, and the discount when the episode ends in termination
 * and in truncation (equal for rows emitted before the end: g^n).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "nstep.h"

enum { O = 2 };

typedef struct {
    int t;          /* the step the transition starts at: obs = s_t */
    int at;         /* emitted by the push of step `at` */
    double reward;  /* S(t, k) */
    int next;       /* next_obs = s_next */
    double disc_term, disc_trunc;
} Row;

static void state(int t, float *s) {
    s[0] = (float)t;
    s[1] = (float)(1000 + t);
}

/* Room for the rows of one whole episode, so rows can be checked after. */
typedef struct {
    float obs[64 * O], next_obs[64 * O], reward[64], discount[64];
    int32_t action[64];
    int at[64];
    Batch b;
} Log;

static void log_init(Log *lg) {
    memset(lg, 0, sizeof *lg);
    lg->b = (Batch){.n = 0, .obs_dim = O, .obs = lg->obs, .action = lg->action, .reward = lg->reward,
                    .next_obs = lg->next_obs, .discount = lg->discount, .weight = NULL};
}

/* Push one episode of L steps (states, actions and rewards as above),
 * appending the emitted rows to lg and recording which push emitted each. */
static void run_episode(NStep *ns, int L, bool terminated, Log *lg) {
    for (int t = 0; t < L; t++) {
        float s[O], s1[O];
        state(t, s);
        state(t + 1, s1);
        bool last = t == L - 1;
        int before = lg->b.n;
        int k = nstep_push(ns, s, 100 + t, (float)(t + 1), s1, last && terminated, last && !terminated, &lg->b);
        cr_assert_eq(lg->b.n, before + k, "push %d: returned %d rows but appended %d", t, k, lg->b.n - before);
        cr_assert(k <= ns->n);
        for (int i = before; i < lg->b.n; i++) lg->at[i] = t;
    }
    cr_assert_eq(nstep_pending(ns), 0, "episode end leaves nothing pending");
}

static void check_rows(const Log *lg, int first, const Row *want, int nwant, bool terminated, const char *what) {
    cr_assert_eq(lg->b.n - first, nwant, "%s: %d rows emitted, expected %d", what, lg->b.n - first, nwant);
    for (int i = 0; i < nwant; i++) {
        const Row *w = &want[i];
        int r = first + i;
        float s[O], s1[O];
        state(w->t, s);
        state(w->next, s1);
        double disc = terminated ? w->disc_term : w->disc_trunc;
        cr_assert_eq(lg->at[r], w->at, "%s row %d: emitted at step %d, expected %d", what, i, lg->at[r], w->at);
        cr_assert(memcmp(&lg->obs[r * O], s, sizeof s) == 0, "%s row %d: obs is s_%g, expected s_%d", what, i,
                  (double)lg->obs[r * O], w->t);
        cr_assert_eq(lg->action[r], 100 + w->t, "%s row %d: action", what, i);
        cr_assert_eq(lg->reward[r], (float)w->reward, "%s row %d: reward %.9g, expected %.9g", what, i,
                     (double)lg->reward[r], w->reward);
        cr_assert(memcmp(&lg->next_obs[r * O], s1, sizeof s1) == 0, "%s row %d: next_obs is s_%g, expected s_%d",
                  what, i, (double)lg->next_obs[r * O], w->next);
        cr_assert_eq(lg->discount[r], (float)disc, "%s row %d: discount %.9g, expected %.9g", what, i,
                     (double)lg->discount[r], disc);
    }
}

/* Run the episode ending in termination, then (fresh builder) in
 * truncation, and compare both with the table. */
static void check_case(int n, int L, const Row *want, int nwant) {
    for (int term = 1; term >= 0; term--) {
        char what[64];
        snprintf(what, sizeof what, "n=%d L=%d %s", n, L, term ? "terminated" : "truncated");
        NStep ns;
        nstep_init(&ns, n, 0.5, O);
        Log lg;
        log_init(&lg);
        run_episode(&ns, L, term, &lg);
        check_rows(&lg, 0, want, nwant, term, what);
        nstep_free(&ns);
    }
}

#define CHECK_CASE(n, L, rows) check_case((n), (L), (rows), (int)(sizeof(rows) / sizeof((rows)[0])))

/* ---- n = 1: exactly the plain transitions ------------------------------ */

Test(nstep, n1_length1) {
    const Row rows[] = {{0, 0, 1, 1, 0, 0.5}};
    CHECK_CASE(1, 1, rows);
}

Test(nstep, n1_length2) {
    const Row rows[] = {{0, 0, 1, 1, 0.5, 0.5}, {1, 1, 2, 2, 0, 0.5}};
    CHECK_CASE(1, 2, rows);
}

Test(nstep, n1_length4) {
    const Row rows[] = {{0, 0, 1, 1, 0.5, 0.5}, {1, 1, 2, 2, 0.5, 0.5}, {2, 2, 3, 3, 0.5, 0.5}, {3, 3, 4, 4, 0, 0.5}};
    CHECK_CASE(1, 4, rows);
}

/* ---- n = 3 ------------------------------------------------------------- */

Test(nstep, n3_length1_shorter_than_n) {
    const Row rows[] = {{0, 0, 1, 1, 0, 0.5}};
    CHECK_CASE(3, 1, rows);
}

Test(nstep, n3_length2_is_n_minus_1) {
    const Row rows[] = {{0, 1, 2, 2, 0, 0.25}, {1, 1, 2, 2, 0, 0.5}};
    CHECK_CASE(3, 2, rows);
}

Test(nstep, n3_length3_is_n) {
    /* The oldest transition's n-th step is the ending one: discount 0 when
     * terminated, g^3 when truncated. */
    const Row rows[] = {{0, 2, 2.75, 3, 0, 0.125}, {1, 2, 3.5, 3, 0, 0.25}, {2, 2, 3, 3, 0, 0.5}};
    CHECK_CASE(3, 3, rows);
}

Test(nstep, n3_length4_is_n_plus_1) {
    const Row rows[] = {
        {0, 2, 2.75, 3, 0.125, 0.125},
        {1, 3, 4.5, 4, 0, 0.125},
        {2, 3, 5, 4, 0, 0.25},
        {3, 3, 4, 4, 0, 0.5},
    };
    CHECK_CASE(3, 4, rows);
}

Test(nstep, n3_length7) {
    const Row rows[] = {
        {0, 2, 2.75, 3, 0.125, 0.125}, {1, 3, 4.5, 4, 0.125, 0.125}, {2, 4, 6.25, 5, 0.125, 0.125},
        {3, 5, 8, 6, 0.125, 0.125},    {4, 6, 9.75, 7, 0, 0.125},    {5, 6, 9.5, 7, 0, 0.25},
        {6, 6, 7, 7, 0, 0.5},
    };
    CHECK_CASE(3, 7, rows);
}

/* ---- n = 5 ------------------------------------------------------------- */

Test(nstep, n5_length1) {
    const Row rows[] = {{0, 0, 1, 1, 0, 0.5}};
    CHECK_CASE(5, 1, rows);
}

Test(nstep, n5_length2) {
    const Row rows[] = {{0, 1, 2, 2, 0, 0.25}, {1, 1, 2, 2, 0, 0.5}};
    CHECK_CASE(5, 2, rows);
}

Test(nstep, n5_length4_is_n_minus_1) {
    const Row rows[] = {
        {0, 3, 3.25, 4, 0, 0.0625},
        {1, 3, 4.5, 4, 0, 0.125},
        {2, 3, 5, 4, 0, 0.25},
        {3, 3, 4, 4, 0, 0.5},
    };
    CHECK_CASE(5, 4, rows);
}

Test(nstep, n5_length5_is_n) {
    const Row rows[] = {
        {0, 4, 3.5625, 5, 0, 0.03125}, {1, 4, 5.125, 5, 0, 0.0625}, {2, 4, 6.25, 5, 0, 0.125},
        {3, 4, 6.5, 5, 0, 0.25},       {4, 4, 5, 5, 0, 0.5},
    };
    CHECK_CASE(5, 5, rows);
}

Test(nstep, n5_length6_is_n_plus_1) {
    const Row rows[] = {
        {0, 4, 3.5625, 5, 0.03125, 0.03125}, {1, 5, 5.5, 6, 0, 0.03125}, {2, 5, 7, 6, 0, 0.0625},
        {3, 5, 8, 6, 0, 0.125},              {4, 5, 8, 6, 0, 0.25},      {5, 5, 6, 6, 0, 0.5},
    };
    CHECK_CASE(5, 6, rows);
}

Test(nstep, n5_length8) {
    const Row rows[] = {
        {0, 4, 3.5625, 5, 0.03125, 0.03125}, {1, 5, 5.5, 6, 0.03125, 0.03125}, {2, 6, 7.4375, 7, 0.03125, 0.03125},
        {3, 7, 9.375, 8, 0, 0.03125},        {4, 7, 10.75, 8, 0, 0.0625},      {5, 7, 11.5, 8, 0, 0.125},
        {6, 7, 11, 8, 0, 0.25},              {7, 7, 8, 8, 0, 0.5},
    };
    CHECK_CASE(5, 8, rows);
}

/* ---- episodes in sequence ---------------------------------------------- */

/* Three episodes through one builder: a terminated one shorter than n, a
 * truncated one longer than n, a terminated one of exactly n. Each must
 * come out exactly as if the builder were fresh. */
Test(nstep, back_to_back_episodes_do_not_leak) {
    const Row ep1[] = {{0, 1, 2, 2, 0, 0.25}, {1, 1, 2, 2, 0, 0.5}};
    const Row ep2[] = {
        {0, 2, 2.75, 3, 0.125, 0.125}, {1, 3, 4.5, 4, 0.125, 0.125}, {2, 4, 6.25, 5, 0.125, 0.125},
        {3, 5, 8, 6, 0.125, 0.125},    {4, 6, 9.75, 7, 0, 0.125},    {5, 6, 9.5, 7, 0, 0.25},
        {6, 6, 7, 7, 0, 0.5},
    };
    const Row ep3[] = {{0, 2, 2.75, 3, 0, 0.125}, {1, 2, 3.5, 3, 0, 0.25}, {2, 2, 3, 3, 0, 0.5}};
    NStep ns;
    nstep_init(&ns, 3, 0.5, O);
    Log lg;
    log_init(&lg);
    run_episode(&ns, 2, true, &lg);
    check_rows(&lg, 0, ep1, 2, true, "episode 1");
    int first = lg.b.n;
    run_episode(&ns, 7, false, &lg);
    check_rows(&lg, first, ep2, 7, false, "episode 2");
    first = lg.b.n;
    run_episode(&ns, 3, true, &lg);
    check_rows(&lg, first, ep3, 3, true, "episode 3");
    nstep_free(&ns);
}

/* nstep_clear drops an abandoned episode; the next starts clean. */
Test(nstep, clear_drops_pending) {
    NStep ns;
    nstep_init(&ns, 3, 0.5, O);
    Log lg;
    log_init(&lg);
    float s[O] = {99, 99};
    nstep_push(&ns, s, 7, 50.0f, s, false, false, &lg.b);
    nstep_push(&ns, s, 7, 50.0f, s, false, false, &lg.b);
    cr_assert_eq(lg.b.n, 0);
    cr_assert_eq(nstep_pending(&ns), 2);
    cr_assert_eq(nstep_clear(&ns), 2);
    cr_assert_eq(nstep_pending(&ns), 0);
    const Row rows[] = {{0, 2, 2.75, 3, 0, 0.125}, {1, 2, 3.5, 3, 0, 0.25}, {2, 2, 3, 3, 0, 0.5}};
    run_episode(&ns, 3, true, &lg);
    check_rows(&lg, 0, rows, 3, true, "after clear");
    nstep_free(&ns);
}

/* ---- gamma at its ends ------------------------------------------------- */

/* g = 1, n = 3, L = 5: plain sums; discount 1 unless terminated.
 *   t0: 1+2+3 = 6 -> s3   t1: 2+3+4 = 9 -> s4   t2: 3+4+5 = 12 -> s5 (end)
 *   t3: 4+5 = 9           t4: 5 */
Test(nstep, gamma_one) {
    const Row rows[] = {
        {0, 2, 6, 3, 1, 1}, {1, 3, 9, 4, 1, 1}, {2, 4, 12, 5, 0, 1}, {3, 4, 9, 5, 0, 1}, {4, 4, 5, 5, 0, 1},
    };
    for (int term = 1; term >= 0; term--) {
        NStep ns;
        nstep_init(&ns, 3, 1.0, O);
        Log lg;
        log_init(&lg);
        run_episode(&ns, 5, term, &lg);
        check_rows(&lg, 0, rows, 5, term, term ? "g=1 terminated" : "g=1 truncated");
        nstep_free(&ns);
    }
}

/* g = 0, n = 3, L = 4: every reward is r_t alone and every discount 0
 * (0^k = 0 for k >= 1), but next_obs still points k steps ahead. */
Test(nstep, gamma_zero) {
    const Row rows[] = {{0, 2, 1, 3, 0, 0}, {1, 3, 2, 4, 0, 0}, {2, 3, 3, 4, 0, 0}, {3, 3, 4, 4, 0, 0}};
    for (int term = 1; term >= 0; term--) {
        NStep ns;
        nstep_init(&ns, 3, 0.0, O);
        Log lg;
        log_init(&lg);
        run_episode(&ns, 4, term, &lg);
        check_rows(&lg, 0, rows, 4, term, term ? "g=0 terminated" : "g=0 truncated");
        nstep_free(&ns);
    }
}

/* ---- edges ------------------------------------------------------------- */

/* Terminated and truncated together: termination wins (discount 0). */
Test(nstep, terminated_wins_over_truncated) {
    NStep ns;
    nstep_init(&ns, 2, 0.5, O);
    Log lg;
    log_init(&lg);
    float s0[O], s1[O], s2[O];
    state(0, s0);
    state(1, s1);
    state(2, s2);
    cr_assert_eq(nstep_push(&ns, s0, 100, 1.0f, s1, false, false, &lg.b), 0);
    cr_assert_eq(nstep_push(&ns, s1, 101, 2.0f, s2, true, true, &lg.b), 2);
    cr_assert_eq(lg.discount[0], 0.0f);
    cr_assert_eq(lg.discount[1], 0.0f);
    cr_assert_eq(lg.reward[0], 2.0f); /* 1 + 0.5 * 2 */
    nstep_free(&ns);
}

/* Rows are appended after what out already holds, which stays untouched. */
Test(nstep, push_appends_after_existing_rows) {
    NStep ns;
    nstep_init(&ns, 1, 0.5, O);
    Log lg;
    log_init(&lg);
    lg.b.n = 2;
    lg.reward[0] = 42.0f;
    lg.reward[1] = 43.0f;
    float s0[O], s1[O];
    state(0, s0);
    state(1, s1);
    cr_assert_eq(nstep_push(&ns, s0, 100, 1.0f, s1, false, false, &lg.b), 1);
    cr_assert_eq(lg.b.n, 3);
    cr_assert_eq(lg.reward[0], 42.0f);
    cr_assert_eq(lg.reward[1], 43.0f);
    cr_assert_eq(lg.reward[2], 1.0f);
    cr_assert_eq(lg.action[2], 100);
    nstep_free(&ns);
}

/* n = 100, g = 0.99, reward 1 at every step, in double: the running
 * transition's return is the geometric sum (1 - 0.99^100) / 0.01
 * = 63.396765872677... (0.99^100 = 0.366032341273229...), its discount
 * 0.99^100. The returns must be accurate to float rounding, not drift
 * by the 100 float additions a float accumulator would make. */
Test(nstep, n100_geometric_sum_in_double) {
    NStep ns;
    nstep_init(&ns, NSTEP_MAX, 0.99, 1);
    float obs[NSTEP_MAX], next_obs[NSTEP_MAX], reward[NSTEP_MAX], discount[NSTEP_MAX];
    int32_t action[NSTEP_MAX];
    Batch out = {0, 1, obs, action, reward, next_obs, discount, NULL};
    float s = 0;
    for (int t = 0; t < 99; t++) cr_assert_eq(nstep_push(&ns, &s, 0, 1.0f, &s, false, false, &out), 0);
    cr_assert_eq(nstep_push(&ns, &s, 0, 1.0f, &s, false, false, &out), 1);
    cr_assert_eq(reward[0], (float)63.396765872677);
    cr_assert_eq(discount[0], (float)0.366032341273229);
    /* Truncate after 100 more pending: the oldest pending then has
     * 100 steps to the end and the newest 1. */
    out.n = 0;
    cr_assert_eq(nstep_push(&ns, &s, 0, 1.0f, &s, false, true, &out), NSTEP_MAX);
    cr_assert_eq(reward[0], (float)63.396765872677);
    cr_assert_eq(discount[0], (float)0.366032341273229);
    cr_assert_eq(reward[NSTEP_MAX - 1], 1.0f);
    cr_assert_eq(discount[NSTEP_MAX - 1], 0.99f);
    cr_assert_eq(reward[NSTEP_MAX - 2], 1.99f);
    nstep_free(&ns);
}

Test(nstep, free_is_safe_on_zeroed_struct_and_twice) {
    NStep ns;
    memset(&ns, 0, sizeof ns);
    nstep_free(&ns);
    nstep_init(&ns, 4, 0.9, 3);
    nstep_free(&ns);
    nstep_free(&ns);
}
