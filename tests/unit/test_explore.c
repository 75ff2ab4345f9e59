/* SPDX-License-Identifier: MIT */
/* test_explore.c: the linear schedule, Ape-X per-actor epsilons and the
 * epsilon-greedy choice (frequencies with a fixed seed). */
#include <criterion/criterion.h>
#include <math.h>

#include "explore.h"
#include "rng.h"

Test(explore, linear_schedule_start_middle_end_beyond) {
    cr_assert_float_eq(explore_linear(1.0, 0.1, 100, 0), 1.0, 1e-12);
    cr_assert_float_eq(explore_linear(1.0, 0.1, 100, 50), 0.55, 1e-12);
    cr_assert_float_eq(explore_linear(1.0, 0.1, 100, 25), 0.775, 1e-12);
    cr_assert_float_eq(explore_linear(1.0, 0.1, 100, 99), 0.109, 1e-12);
    cr_assert_eq(explore_linear(1.0, 0.1, 100, 100), 0.1);
    cr_assert_eq(explore_linear(1.0, 0.1, 100, 1000000), 0.1);
    cr_assert_eq(explore_linear(1.0, 0.1, 0, 0), 0.1); /* no decay: end at once */
    cr_assert_float_eq(explore_linear(0.0, 1.0, 4, 1), 0.25, 1e-12); /* rising works too */
}

/* dqn.py's schedule: 1.0 through the 5000 replay-start frames, then 1.0 ->
 * 0.1 over 100000 frames: 0.55 at frame 55000, 0.1 from 105000. Begin 0 is
 * explore_linear exactly. */
Test(explore, linear_schedule_after_an_offset) {
    cr_assert_eq(explore_linear_after(1.0, 0.1, 5000, 100000, 0), 1.0);
    cr_assert_eq(explore_linear_after(1.0, 0.1, 5000, 100000, 4999), 1.0);
    cr_assert_eq(explore_linear_after(1.0, 0.1, 5000, 100000, 5000), 1.0);
    cr_assert_float_eq(explore_linear_after(1.0, 0.1, 5000, 100000, 5001), 1.0 - 0.9e-5, 1e-12);
    cr_assert_float_eq(explore_linear_after(1.0, 0.1, 5000, 100000, 55000), 0.55, 1e-12);
    cr_assert_eq(explore_linear_after(1.0, 0.1, 5000, 100000, 105000), 0.1);
    cr_assert_eq(explore_linear_after(1.0, 0.1, 5000, 0, 5000), 0.1); /* no decay: end once begun */
    cr_assert_eq(explore_linear_after(1.0, 0.1, 5000, 0, 4999), 1.0);
    for (uint64_t t = 0; t < 130; t += 7)
        cr_assert_eq(explore_linear_after(1.0, 0.1, 0, 100, t), explore_linear(1.0, 0.1, 100, t));
}

Test(explore, apex_epsilons_span_eps_to_eps_to_the_one_plus_alpha) {
    const double eps = EXPLORE_APEX_EPS, alpha = EXPLORE_APEX_ALPHA;
    cr_assert_float_eq(explore_apex_eps(eps, alpha, 0, 8), 0.4, 1e-15);
    cr_assert_float_eq(explore_apex_eps(eps, alpha, 7, 8), pow(0.4, 8.0), 1e-15); /* 6.5536e-4 */
    cr_assert_float_eq(explore_apex_eps(eps, alpha, 7, 8), 6.5536e-4, 1e-12);
    cr_assert_float_eq(explore_apex_eps(eps, alpha, 0, 1), 0.4, 1e-15); /* N = 1 */
    /* i = 1 of 3: 0.4^(1 + 3.5) */
    cr_assert_float_eq(explore_apex_eps(eps, alpha, 1, 3), pow(0.4, 4.5), 1e-15);
    double prev = 1.0;
    for (int i = 0; i < 16; i++) {
        double e = explore_apex_eps(eps, alpha, i, 16);
        cr_assert(e < prev, "actor %d: %g not below %g", i, e, prev);
        prev = e;
    }
}

/* eps 0.3 over 4 actions with action 2 greedy: P(2) = 0.7 + 0.3 / 4 = 0.775,
 * the others 0.075 each. With n = 100000 draws the standard deviations are
 * 132 and 83 counts; the bounds are more than 6 of them. */
Test(explore, egreedy_frequencies_match_eps) {
    const float q[4] = {0.1f, -1.0f, 2.0f, 1.9f};
    Rng r;
    rng_seed(&r, 77, RNG_STREAM_ACTOR);
    enum { N = 100000 };
    int counts[4] = {0};
    for (int i = 0; i < N; i++) {
        int a = explore_egreedy(q, 4, 0.3, &r);
        cr_assert(a >= 0 && a < 4);
        counts[a]++;
    }
    cr_assert(fabs(counts[2] - 77500.0) < 900, "greedy %d", counts[2]);
    for (int a = 0; a < 4; a++)
        if (a != 2) cr_assert(fabs(counts[a] - 7500.0) < 600, "action %d: %d", a, counts[a]);
}

Test(explore, egreedy_extremes_and_ties) {
    const float q[3] = {5.0f, 5.0f, 1.0f};
    Rng r;
    rng_seed(&r, 78, RNG_STREAM_ACTOR);
    for (int i = 0; i < 1000; i++) cr_assert_eq(explore_egreedy(q, 3, 0.0, &r), 0); /* tie: lowest */
    int counts[3] = {0};
    for (int i = 0; i < 30000; i++) counts[explore_egreedy(q, 3, 1.0, &r)]++;
    for (int a = 0; a < 3; a++) cr_assert(fabs(counts[a] - 10000.0) < 600, "action %d: %d", a, counts[a]);
}

Test(explore, egreedy_repeats_with_the_seed) {
    const float q[5] = {0, 1, 2, 3, 4};
    Rng a, b;
    rng_seed(&a, 9, RNG_STREAM_ACTOR + 3);
    rng_seed(&b, 9, RNG_STREAM_ACTOR + 3);
    for (int i = 0; i < 1000; i++) cr_assert_eq(explore_egreedy(q, 5, 0.5, &a), explore_egreedy(q, 5, 0.5, &b));
}
