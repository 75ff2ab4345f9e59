/* SPDX-License-Identifier: MIT */
/* test_lossguard.c: learner.loss_outlier_sigma's judge (lossguard.h). */
#include <criterion/criterion.h>
#include <math.h>

#include "lossguard.h"

/* Losses alternating 1.0 and 1.2: mean 1.1, population standard deviation
 * 0.1 (Welford over the first LOSSGUARD_WINDOW, exact). */
static void feed(LossGuard *g, int n) {
    for (int i = 0; i < n; i++) cr_assert_not(lossguard_outlier(g, i % 2 ? 1.2 : 1.0), "loss %d", i);
}

Test(lossguard, running_mean_and_deviation_are_exact_over_the_window) {
    LossGuard g;
    lossguard_init(&g, 3.0);
    feed(&g, 200);
    cr_assert_float_eq(g.mean, 1.1, 1e-12);
    cr_assert_float_eq(sqrt(g.var), 0.1, 1e-12);
}

/* sigma 3: the bound is 1.1 + 3 x 0.1 = 1.4. */
Test(lossguard, drops_above_mean_plus_sigma_deviations) {
    LossGuard g;
    lossguard_init(&g, 3.0);
    feed(&g, 200);
    cr_assert(lossguard_outlier(&g, 1.45), "above 1.4");
    cr_assert_not(lossguard_outlier(&g, 1.3), "under 1.4 (the statistics moved little)");
    cr_assert(lossguard_outlier(&g, 100.0));
    cr_assert_eq(g.dropped, 2);
    cr_assert_eq(g.n, 203, "every loss joins the statistics, dropped or not");
    cr_assert_not(lossguard_outlier(&g, NAN), "a non-finite loss is not judged here");
    cr_assert_eq(g.n, 203);
}

Test(lossguard, nothing_dropped_before_the_warmup_or_when_off) {
    LossGuard g;
    lossguard_init(&g, 3.0);
    feed(&g, LOSSGUARD_WARMUP - 1);
    cr_assert_not(lossguard_outlier(&g, 100.0), "loss %d: still warming up", LOSSGUARD_WARMUP);
    cr_assert(lossguard_outlier(&g, 1000.0), "judged from the %dth loss on", LOSSGUARD_WARMUP + 1);
    LossGuard off;
    lossguard_init(&off, 0.0);
    feed(&off, 500);
    cr_assert_not(lossguard_outlier(&off, 1e9), "sigma 0: off");
    cr_assert_eq(off.dropped, 0);
}

/* After the window the weights are exponential: a lasting rise becomes
 * the new normal instead of being dropped for ever. */
Test(lossguard, a_lasting_rise_is_accepted) {
    LossGuard g;
    lossguard_init(&g, 3.0);
    feed(&g, 2000);
    int dropped = 0;
    for (int i = 0; i < 5000; i++) dropped += lossguard_outlier(&g, i % 2 ? 2.2 : 2.0);
    cr_assert_lt(dropped, 5000 / 10, "%d of 5000", dropped);
    cr_assert_not(lossguard_outlier(&g, 2.2), "the new level is normal");
}
