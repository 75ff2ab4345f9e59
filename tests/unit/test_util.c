/* SPDX-License-Identifier: MIT */
/* test_util.c: the leaf helpers every module relies on: rng, rank layout,
 * strict number parsing, did-you-mean, the finite-float check. */
#include <criterion/criterion.h>
#include <float.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "layout.h"
#include "rng.h"
#include "util.h"

/* xoshiro256** from state {1, 2, 3, 4}, worked by hand from the published
 * algorithm (result = rotl(s1 * 5, 7) * 9, then the xor/shift update):
 *   draw 0: rotl(10, 7) * 9 = 1280 * 9                        = 11520
 *   update: s = {7, 0, 262146, rotl(6, 45)}  -> draw 1: rotl(0, 7) * 9 = 0
 *   update: s1 = 262146 ^ 7 = 262149         -> draw 2: 262149 * 5 * 128 * 9
 *                                                       = 1509978240 */
Test(rng, xoshiro256ss_matches_hand_worked_sequence) {
    Rng r = {{1, 2, 3, 4}};
    const uint64_t want[] = {11520ULL, 0ULL, 1509978240ULL};
    for (int i = 0; i < 3; i++) cr_assert_eq(rng_next(&r), want[i], "draw %d", i);
}

Test(rng, streams_differ_and_repeat) {
    Rng a, b, c;
    rng_seed(&a, 42, 1);
    rng_seed(&b, 42, 2);
    rng_seed(&c, 42, 1);
    int same = 0;
    for (int i = 0; i < 100; i++) {
        uint64_t x = rng_next(&a), y = rng_next(&b), z = rng_next(&c);
        same += x == y;
        cr_assert_eq(x, z);
    }
    cr_assert_eq(same, 0);
}

Test(rng, uniform_range_and_below_stay_in_bounds) {
    Rng r;
    rng_seed(&r, 7, 0);
    double sum = 0;
    int counts[3] = {0};
    for (int i = 0; i < 30000; i++) {
        double u = rng_uniform_range(&r, -0.05, 0.05);
        cr_assert(u >= -0.05 && u < 0.05);
        sum += u;
        uint64_t k = rng_below(&r, 3);
        cr_assert(k < 3);
        counts[k]++;
    }
    cr_assert(fabs(sum / 30000) < 0.002, "mean %g", sum / 30000);
    for (int k = 0; k < 3; k++) cr_assert(counts[k] > 9500 && counts[k] < 10500, "count %d", counts[k]);
}

Test(layout, fixed_role_order_and_inverse) {
    Config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.run.mode = RUN_DISTRIBUTED;
    cfg.roles.actors = 3;
    cfg.roles.replay_shards = 2;
    cfg.roles.learners = 2;
    cfg.roles.param_servers = 3;
    Layout lay;
    layout_init(&lay, &cfg);
    cr_assert_eq(lay.size, 11);
    const Role want[11] = {ROLE_COORD,  ROLE_ACTOR,   ROLE_ACTOR,   ROLE_ACTOR, ROLE_REPLAY, ROLE_REPLAY,
                           ROLE_LEARNER, ROLE_LEARNER, ROLE_PS,      ROLE_PS,    ROLE_PS};
    const int want_idx[11] = {0, 0, 1, 2, 0, 1, 0, 1, 0, 1, 2};
    for (int rank = 0; rank < 11; rank++) {
        Role role;
        int idx;
        layout_role_of(&lay, rank, &role, &idx);
        cr_assert_eq(role, want[rank], "rank %d", rank);
        cr_assert_eq(idx, want_idx[rank], "rank %d", rank);
        cr_assert_eq(layout_rank_of(&lay, role, idx), rank);
    }
}

Test(layout, allreduce_has_no_param_servers_and_local_is_one_rank) {
    Config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.roles.actors = 1;
    cfg.roles.replay_shards = 1;
    cfg.roles.learners = 4;
    Layout lay;
    layout_init(&lay, &cfg);
    cr_assert_eq(lay.size, 7);
    cr_assert_eq(lay.first[ROLE_PS], -1);
    cfg.run.mode = RUN_LOCAL;
    layout_init(&lay, &cfg);
    cr_assert_eq(lay.size, 1);
    Role role;
    int idx;
    layout_role_of(&lay, 0, &role, &idx);
    cr_assert_eq(role, ROLE_LOCAL);
}

Test(util, parse_u64_is_strict) {
    char err[ERR_LEN];
    uint64_t v;
    cr_assert_eq(parse_u64("123", &v, err), 0);
    cr_assert_eq(v, 123);
    cr_assert_eq(parse_u64("-1", &v, err), -1);
    cr_assert_str_eq(err, "expected a non-negative integer, got \"-1\"");
    cr_assert_eq(parse_u64("12x", &v, err), -1);
    cr_assert_eq(parse_u64("", &v, err), -1);
    cr_assert_eq(parse_u64("99999999999999999999999", &v, err), -1);
    cr_assert_str_eq(err, "integer \"99999999999999999999999\" is too large");
}

Test(util, parse_int_range_and_double) {
    char err[ERR_LEN];
    long v;
    double d;
    cr_assert_eq(parse_int_range("5", 1, 10, &v, err), 0);
    cr_assert_eq(v, 5);
    cr_assert_eq(parse_int_range("11", 1, 10, &v, err), -1);
    cr_assert_str_eq(err, "expected an integer in [1, 10], got 11");
    cr_assert_eq(parse_double("1e-3", &d, err), 0);
    cr_assert_float_eq(d, 1e-3, 1e-18);
    cr_assert_eq(parse_double("nan", &d, err), -1);
    cr_assert_eq(parse_double("1e999", &d, err), -1);
}

Test(util, did_you_mean_finds_typos_only) {
    const char *const keys[] = {"learners", "actors", "replay_shards", "param_servers", NULL};
    cr_assert_str_eq(did_you_mean("lerners", keys), "learners");
    cr_assert_str_eq(did_you_mean("actros", keys), "actors");
    cr_assert_str_eq(did_you_mean("replay_shard", keys), "replay_shards");
    cr_assert_null(did_you_mean("banana", keys));
    /* Never the word itself: the next closest, if any is close enough. */
    const char *const near[] = {"run", "runs", NULL};
    cr_assert_str_eq(did_you_mean("run", near), "runs");
    const char *const sections[] = {"run", "env", "roles", NULL};
    cr_assert_null(did_you_mean("run", sections));
    /* A word that differs only in case is the closest there is. */
    cr_assert_str_eq(did_you_mean("LEARNERS", keys), "learners");
    cr_assert_str_eq(did_you_mean("Actros", keys), "actors");
}

Test(util, errf_and_err_prefix_compose) {
    char err[ERR_LEN];
    cr_assert_eq(errf(err, "bad %s", "thing"), -1);
    cr_assert_eq(err_prefix(err, "file.yaml:%d:%d", 3, 4), -1);
    cr_assert_str_eq(err, "file.yaml:3:4: bad thing");
}

/* Every position of an odd-length array (so the vectorised body and the
 * tail both see the bad value), every kind of non-finite value, and the
 * extremes that are still finite. */
Test(util, floats_finite_finds_nan_and_inf_anywhere) {
    float x[37];
    for (size_t i = 0; i < 37; i++) x[i] = (float)i - 18.5f;
    cr_assert(floats_finite(x, 37));
    cr_assert(floats_finite(x, 0));
    const float bad[] = {NAN, -NAN, INFINITY, -INFINITY};
    for (size_t b = 0; b < 4; b++)
        for (size_t i = 0; i < 37; i++) {
            float keep = x[i];
            x[i] = bad[b];
            cr_assert(!floats_finite(x, 37), "bad value %zu at %zu not found", b, i);
            cr_assert(floats_finite(x, i), "prefix before %zu", i);
            x[i] = keep;
        }
    const float edge[] = {FLT_MAX, -FLT_MAX, FLT_MIN, -FLT_MIN, 1e-45f, -0.0f, 0.0f};
    cr_assert(floats_finite(edge, 7));
}

/* host_name: the system's name, cut to the buffer and always terminated. */
Test(util, host_name_cut_and_terminated) {
    char full[256], small[4];
    host_name(full, sizeof full, "?");
    char want[256];
    cr_assert_eq(gethostname(want, sizeof want), 0);
    cr_assert_str_eq(full, want);
    memset(small, 'x', sizeof small);
    host_name(small, sizeof small, "?");
    size_t n = strlen(want) < 3 ? strlen(want) : 3;
    cr_assert_eq(strnlen(small, sizeof small), n, "terminated after at most 3 bytes");
    cr_assert_eq(strncmp(small, want, n), 0, "the first bytes of the name");
}
