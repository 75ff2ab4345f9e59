/* SPDX-License-Identifier: MIT */
/* test_optim.c: Adam, RMSProp and SGD against hand-worked first steps and
 * against double-precision implementations written here from the
 * published update rules; slices, checkpoint state, clipping. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "optim.h"
#include "rng.h"
#include "util.h"

/* ------------------------------------------------------- hand-worked steps */

/* Adam with a constant gradient g: m_t = (1 - b1^t) g and v_t = (1 - b2^t) g^2,
 * so the bias-corrected ratio is g / (|g| + eps) and every step moves the
 * parameter by lr * sign(g) (to eps / |g| relative). */
Test(optim, adam_constant_gradient_moves_lr_per_step) {
    OptimParams p = optim_defaults(OPTIM_ADAM);
    p.lr = 0.1f;
    Optim o;
    optim_init(&o, &p, 2);
    float x[2] = {1.0f, -2.0f};
    const float g[2] = {0.5f, -3.0f};
    for (int t = 1; t <= 5; t++) {
        optim_step(&o, x, g);
        cr_assert_float_eq(x[0], 1.0f - 0.1f * t, 2e-6, "step %d: %.9g", t, x[0]);
        cr_assert_float_eq(x[1], -2.0f + 0.1f * t, 2e-6, "step %d: %.9g", t, x[1]);
    }
    cr_assert_eq(o.step, 5);
    /* m after 5 steps = (1 - 0.9^5) g = 0.40951 g */
    cr_assert_float_eq(o.state[0], 0.40951f * 0.5f, 1e-6);
    optim_free(&o);
}

/* Centered RMSProp, DQN hyperparameters, g = 1 once:
 *   ms = 0.05, mg = 0.05, ms - mg^2 = 0.0475, s = sqrt(0.0475 + 0.01)
 *   = 0.239791576, step = lr / s = 0.01 * 4.170288 = 0.04170288.
 * With eps outside the root (PyTorch) it would be 0.01 / 0.2279 = 0.04388. */
Test(optim, rmsprop_centered_first_step_by_hand) {
    OptimParams p = optim_defaults(OPTIM_RMSPROP);
    p.lr = 0.01f;
    Optim o;
    optim_init(&o, &p, 1);
    cr_assert_eq(o.n_state, 2); /* ms, mg */
    float x = 0.0f, g = 1.0f;
    optim_step(&o, &x, &g);
    cr_assert_float_eq(x, -0.04170288f, 1e-7, "%.9g", x);
    cr_assert_float_eq(o.state[0], 0.05f, 1e-7);
    cr_assert_float_eq(o.state[1], 0.05f, 1e-7);
    optim_free(&o);
}

/* The same step in PyTorch's form (torch.optim.RMSprop, as MinAtar's
 * dqn.py uses it): s = sqrt(0.0475) + 0.01 = 0.227944947, step = 0.01 / s
 * = 0.0438702. With a small gradient the forms part: uncentered, g = 1e-3,
 * ms = 0.05e-6: PyTorch divides by sqrt(5e-8) + 0.01 = 0.0102236, the
 * inside form by sqrt(0.01 + 5e-8) = 0.1000003, a step 9.78 times smaller. */
Test(optim, rmsprop_pytorch_form_by_hand) {
    OptimParams p = optim_defaults(OPTIM_RMSPROP);
    p.lr = 0.01f;
    p.eps_outside = true;
    Optim o;
    optim_init(&o, &p, 1);
    float x = 0.0f, g = 1.0f;
    optim_step(&o, &x, &g);
    cr_assert_float_eq(x, -0.0438702f, 1e-7, "%.9g", x);
    optim_free(&o);
    p.centered = false;
    float y[2] = {0, 0}, gs = 1e-3f;
    for (int k = 0; k < 2; k++) {
        p.eps_outside = k == 0;
        optim_init(&o, &p, 1);
        optim_step(&o, &y[k], &gs);
        optim_free(&o);
    }
    cr_assert_float_eq(y[0], (float)(-0.01 * 1e-3 / (sqrt(5e-8) + 0.01)), 1e-10, "%.9g", y[0]);
    cr_assert_float_eq(y[1], (float)(-0.01 * 1e-3 / sqrt(0.01 + 5e-8)), 1e-11, "%.9g", y[1]);
    cr_assert(y[0] / y[1] > 9.7 && y[0] / y[1] < 9.8, "ratio %g", y[0] / y[1]);
}

/* Plain (uncentered) RMSProp: ms = 0.05 g^2 with g = 2 -> 0.2, s = sqrt(0.21). */
Test(optim, rmsprop_uncentered_first_step_by_hand) {
    OptimParams p = optim_defaults(OPTIM_RMSPROP);
    p.lr = 0.01f;
    p.centered = false;
    Optim o;
    optim_init(&o, &p, 1);
    cr_assert_eq(o.n_state, 1);
    float x = 0.0f, g = 2.0f;
    optim_step(&o, &x, &g);
    cr_assert_float_eq(x, (float)(-0.01 * 2 / sqrt(0.21)), 1e-7, "%.9g", x);
    optim_free(&o);
}

/* Warm-up (sync.lr_warmup_updates): plain SGD from 0.1 to 0.4 over 3
 * updates, g = 1: update t of the ramp takes 0.1 + 0.3 t / 3, so 0.2, 0.3,
 * then 0.4 from the third on: x = -0.2, -0.5, -0.9, -1.3. */
Test(optim, warmup_ramps_the_rate_linearly) {
    OptimParams p = optim_defaults(OPTIM_SGD);
    p.momentum = 0.0f;
    p.lr = 0.4f;
    p.lr_from = 0.1f;
    p.warmup_steps = 3;
    Optim o;
    optim_init(&o, &p, 1);
    float x = 0.0f, g = 1.0f;
    const float want[4] = {-0.2f, -0.5f, -0.9f, -1.3f};
    for (int t = 0; t < 4; t++) {
        optim_step(&o, &x, &g);
        cr_assert_float_eq(x, want[t], 1e-6, "update %d: %.9g", t + 1, x);
    }
    optim_free(&o);
    char err[ERR_LEN];
    p.lr_from = NAN;
    cr_assert_eq(optim_check(&p, err), -1, "a NaN start rate is refused");
}

/* SGD, momentum 0.9, lr 0.1, g = 1: buf 1 then 1.9 then 2.71. */
Test(optim, sgd_momentum_by_hand) {
    OptimParams p = optim_defaults(OPTIM_SGD);
    p.lr = 0.1f;
    Optim o;
    optim_init(&o, &p, 1);
    float x = 0.0f, g = 1.0f;
    const float want[3] = {-0.1f, -0.29f, -0.561f};
    for (int t = 0; t < 3; t++) {
        optim_step(&o, &x, &g);
        cr_assert_float_eq(x, want[t], 1e-6, "step %d: %.9g", t, x);
    }
    optim_free(&o);
    p.momentum = 0.0f; /* no state at all */
    optim_init(&o, &p, 1);
    cr_assert_eq(o.n_state, 0);
    x = 1.0f;
    optim_step(&o, &x, &g);
    cr_assert_float_eq(x, 0.9f, 1e-7);
    optim_free(&o);
}

/* ------------------------------------------- double-precision references */

typedef struct {
    double m, v, buf;
} RefState;

/* One step of the published rule in double for one parameter. */
static double ref_step(const OptimParams *p, RefState *s, int t, double x, double g) {
    switch (p->kind) {
    case OPTIM_ADAM: { /* Kingma & Ba 2015, Algorithm 1, with PyTorch's eps placement */
        double b1 = p->beta1, b2 = p->beta2;
        s->m = b1 * s->m + (1 - b1) * g;
        s->v = b2 * s->v + (1 - b2) * g * g;
        double mhat = s->m / (1 - pow(b1, t)), vhat = s->v / (1 - pow(b2, t));
        return x - p->lr * mhat / (sqrt(vhat) + p->eps);
    }
    case OPTIM_RMSPROP: { /* Graves 2013 eq. 38-41 / DQN: eps inside the root; PyTorch: outside */
        double a = p->alpha;
        s->v = a * s->v + (1 - a) * g * g;
        s->m = a * s->m + (1 - a) * g;
        double var = p->centered ? s->v - s->m * s->m : s->v;
        double d = p->eps_outside ? g / (sqrt(var) + p->eps) : g / sqrt(var + p->eps);
        if (p->momentum > 0) {
            s->buf = p->momentum * s->buf + d;
            d = s->buf;
        }
        return x - p->lr * d;
    }
    case OPTIM_SGD:
        s->buf = p->momentum * s->buf + g;
        return x - p->lr * s->buf;
    }
    return x;
}

static void check_against_reference(OptimParams p, const char *what) {
    enum { N = 37, STEPS = 25 };
    Rng r;
    rng_seed(&r, 11, 0);
    float x[N];
    double xd[N];
    RefState rs[N];
    memset(rs, 0, sizeof rs);
    for (int i = 0; i < N; i++) xd[i] = x[i] = (float)rng_uniform_range(&r, -1, 1);
    Optim o;
    optim_init(&o, &p, N);
    for (int t = 1; t <= STEPS; t++) {
        float g[N];
        for (int i = 0; i < N; i++) {
            /* a drifting mean plus noise, and a few exact zeros */
            g[i] = i % 9 == 0 ? 0.0f : (float)(0.3 * sin(0.1 * t + i) + rng_uniform_range(&r, -0.5, 0.5));
            xd[i] = ref_step(&o.p, &rs[i], t, xd[i], g[i]);
        }
        optim_step(&o, x, g);
        for (int i = 0; i < N; i++)
            cr_assert(fabs(x[i] - xd[i]) <= 2e-6 * (1 + fabs(xd[i])), "%s step %d param %d: %.9g vs %.9g", what, t,
                      i, x[i], xd[i]);
    }
    cr_assert_eq(o.step, STEPS);
    optim_free(&o);
}

Test(optim, adam_matches_double_reference) {
    OptimParams p = optim_defaults(OPTIM_ADAM);
    p.lr = 0.01f;
    check_against_reference(p, "adam");
    p.beta1 = 0.0f;
    p.beta2 = 0.5f;
    p.eps = 1e-3f;
    check_against_reference(p, "adam b1=0");
}

Test(optim, rmsprop_matches_double_reference) {
    OptimParams p = optim_defaults(OPTIM_RMSPROP);
    p.lr = 0.01f;
    check_against_reference(p, "rmsprop centered");
    p.momentum = 0.9f;
    check_against_reference(p, "rmsprop centered momentum");
    p.centered = false;
    check_against_reference(p, "rmsprop momentum");
    p.momentum = 0.0f;
    check_against_reference(p, "rmsprop");
    p = optim_defaults(OPTIM_RMSPROP);
    p.lr = 0.01f;
    p.eps_outside = true;
    check_against_reference(p, "rmsprop centered, eps outside");
    p.momentum = 0.9f;
    check_against_reference(p, "rmsprop centered momentum, eps outside");
    p.centered = false;
    p.momentum = 0.0f;
    check_against_reference(p, "rmsprop eps outside");
}

Test(optim, sgd_matches_double_reference) {
    OptimParams p = optim_defaults(OPTIM_SGD);
    check_against_reference(p, "sgd momentum");
    p.momentum = 0.0f;
    check_against_reference(p, "sgd");
}

/* ------------------------------------------------- slices and checkpoints */

static const OptimKind kinds[] = {OPTIM_ADAM, OPTIM_RMSPROP, OPTIM_SGD};

static OptimParams with_momentum(OptimKind k) {
    OptimParams p = optim_defaults(k);
    p.momentum = 0.5f; /* every kind with its largest state (Adam ignores it) */
    return p;
}

Test(optim, stepping_two_slices_equals_stepping_the_whole) {
    enum { N = 1001, CUT = 389 };
    for (int ki = 0; ki < 3; ki++) {
        OptimParams p = with_momentum(kinds[ki]);
        Rng r;
        rng_seed(&r, 12, (uint64_t)ki);
        float *whole = malloc(N * sizeof(float)), *parts = malloc(N * sizeof(float)), *g = malloc(N * sizeof(float));
        for (int i = 0; i < N; i++) whole[i] = parts[i] = (float)rng_uniform_range(&r, -1, 1);
        Optim all, lo, hi;
        optim_init(&all, &p, N);
        optim_init(&lo, &p, CUT);
        optim_init(&hi, &p, N - CUT);
        for (int t = 0; t < 7; t++) {
            for (int i = 0; i < N; i++) g[i] = (float)rng_uniform_range(&r, -1, 1);
            optim_step(&all, whole, g);
            optim_step(&hi, parts + CUT, g + CUT); /* order between shards is irrelevant */
            optim_step(&lo, parts, g);
        }
        cr_assert_eq(memcmp(whole, parts, N * sizeof(float)), 0, "kind %d", ki);
        /* state views: each vector of the whole is the two halves' vectors */
        size_t nv = all.n_state / N;
        for (size_t v = 0; v < nv; v++) {
            cr_assert_eq(memcmp(all.state + v * N, lo.state + v * CUT, CUT * sizeof(float)), 0);
            cr_assert_eq(memcmp(all.state + v * N + CUT, hi.state + v * (N - CUT), (N - CUT) * sizeof(float)), 0);
        }
        optim_free(&all), optim_free(&lo), optim_free(&hi);
        free(whole), free(parts), free(g);
    }
}

Test(optim, state_and_step_restore_bit_for_bit) {
    enum { N = 100 };
    for (int ki = 0; ki < 3; ki++) {
        OptimParams p = with_momentum(kinds[ki]);
        Rng r;
        rng_seed(&r, 13, (uint64_t)ki);
        float x[N], y[N], g[N];
        for (int i = 0; i < N; i++) x[i] = (float)rng_uniform_range(&r, -1, 1);
        Optim a, b;
        optim_init(&a, &p, N);
        for (int t = 0; t < 5; t++) {
            for (int i = 0; i < N; i++) g[i] = (float)rng_uniform_range(&r, -1, 1);
            optim_step(&a, x, g);
        }
        /* "checkpoint": step and the state floats into a fresh optimizer */
        optim_init(&b, &p, N);
        cr_assert_eq(b.n_state, a.n_state);
        b.step = a.step;
        memcpy(b.state, a.state, a.n_state * sizeof(float));
        memcpy(y, x, sizeof x);
        for (int t = 0; t < 5; t++) {
            for (int i = 0; i < N; i++) g[i] = (float)rng_uniform_range(&r, -1, 1);
            optim_step(&a, x, g);
            optim_step(&b, y, g);
        }
        cr_assert_eq(memcmp(x, y, sizeof x), 0, "kind %d", ki);
        optim_free(&a), optim_free(&b);
    }
}

Test(optim, state_sizes_follow_the_documented_views) {
    Optim o;
    OptimParams p = optim_defaults(OPTIM_ADAM);
    optim_init(&o, &p, 10);
    cr_assert_eq(o.n_state, 20);
    optim_free(&o);
    p = optim_defaults(OPTIM_RMSPROP);
    p.momentum = 0.9f;
    optim_init(&o, &p, 10);
    cr_assert_eq(o.n_state, 30);
    optim_free(&o);
    optim_free(&o); /* safe twice */
}

Test(optim, check_rejects_bad_hyperparameters) {
    char err[ERR_LEN];
    OptimParams p = optim_defaults(OPTIM_ADAM);
    cr_assert_eq(optim_check(&p, err), 0);
    p.beta2 = 1.0f;
    cr_assert_eq(optim_check(&p, err), -1);
    cr_assert_str_eq(err, "optim: beta2 1 not in [0, 1)");
    p = optim_defaults(OPTIM_RMSPROP);
    p.eps = 0.0f;
    cr_assert_eq(optim_check(&p, err), -1);
    p = optim_defaults(OPTIM_SGD);
    p.lr = -1.0f;
    cr_assert_eq(optim_check(&p, err), -1);
    p.lr = NAN;
    cr_assert_eq(optim_check(&p, err), -1);
    p = optim_defaults(OPTIM_SGD);
    p.momentum = 1.0f;
    cr_assert_eq(optim_check(&p, err), -1);
}

/* --------------------------------------------------------------- clipping */

Test(optim, norm_and_clipping) {
    /* Criterion's float asserts evaluate their arguments twice: call first. */
    float g[3] = {3.0f, 0.0f, -4.0f};
    double n = optim_norm(g, 3);
    cr_assert_float_eq(n, 5.0, 1e-12);
    n = optim_sumsq(g, 3);
    cr_assert_float_eq(n, 25.0, 1e-12);
    n = optim_clip_norm(g, 3, 10.0); /* below: untouched */
    cr_assert_float_eq(n, 5.0, 1e-12);
    cr_assert_eq(g[0], 3.0f);
    n = optim_clip_norm(g, 3, 0.0); /* 0: no clipping */
    cr_assert_float_eq(n, 5.0, 1e-12);
    cr_assert_eq(g[2], -4.0f);
    n = optim_clip_norm(g, 3, 1.0); /* c = 1 / (5 + 1e-6) */
    cr_assert_float_eq(n, 5.0, 1e-12);
    cr_assert_float_eq(g[0], 0.6f, 1e-6);
    cr_assert_eq(g[1], 0.0f);
    cr_assert_float_eq(g[2], -0.8f, 1e-6);
    n = optim_norm(g, 3);
    cr_assert_float_eq(n, 5.0 / (5.0 + 1e-6), 1e-7, "%.12g", n);
    optim_scale(g, 3, 2.0f);
    cr_assert_float_eq(g[0], 1.2f, 1e-6);
    n = optim_norm(g, 0);
    cr_assert_eq(n, 0.0);
    float h[2] = {6.0f, 8.0f}; /* norm 10 to 9: a mild clip, c = 0.9 */
    n = optim_clip_norm(h, 2, 9.0);
    cr_assert_float_eq(n, 10.0, 1e-12);
    cr_assert_float_eq(h[0], 5.4f, 1e-5);
    cr_assert_float_eq(h[1], 7.2f, 1e-5);
}

Test(optim, norm_of_pieces_composes_and_matches_double) {
    enum { N = 1237 };
    float x[N];
    Rng r;
    rng_seed(&r, 14, 0);
    double want = 0;
    for (int i = 0; i < N; i++) {
        x[i] = (float)rng_uniform_range(&r, -3, 3);
        want += (double)x[i] * x[i];
    }
    cr_assert_float_eq(optim_sumsq(x, N), want, 1e-9 * want);
    cr_assert_float_eq(optim_sumsq(x, 500) + optim_sumsq(x + 500, N - 500), want, 1e-9 * want);
    cr_assert_float_eq(optim_norm(x, N), sqrt(want), 1e-9 * sqrt(want));
}

/* ------------------------------------------------------------ denormals */

/* A parameter whose gradient stays 0 has its squared-gradient average decay
 * by alpha per step; below 1.2e-38 (denormal) every operation on it is tens
 * of times slower, so a step flushes such values to zero. The caller's
 * floating-point mode is restored afterwards: the environments' physics must
 * keep IEEE denormals to stay bit-exact with their references. */
static float halve(volatile float x) { return x * 0.5f; }

Test(optim, denormal_state_is_flushed_and_mode_restored) {
    OptimParams p = optim_defaults(OPTIM_RMSPROP);
    p.eps_outside = true;
    Optim o;
    optim_init(&o, &p, 4);
    float x[4] = {1.0f, 1.0f, 1.0f, 1.0f};
    const float g[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (size_t i = 0; i < 8; i++) o.state[i] = 2e-38f; /* ms and mg: normal, just above the range */
    optim_step(&o, x, g);
    /* 0.95 * 2e-38 = 1.9e-38 is still normal; the next step gives 1.805e-38,
     * then 1.71e-38 ... until it would cross 1.18e-38 after ~10 steps. */
    for (int t = 0; t < 20; t++) optim_step(&o, x, g);
    for (size_t i = 0; i < 8; i++) cr_assert_eq(o.state[i], 0.0f, "state[%zu] = %g, not flushed", i, (double)o.state[i]);
    for (size_t i = 0; i < 4; i++) cr_assert_eq(x[i], 1.0f);
    float d = halve(2e-38f); /* 1e-38: denormal, kept when the mode is restored */
    cr_assert(d > 0.0f && d < 1.17549435e-38f, "denormals flushed outside the step: %g", (double)d);
    optim_free(&o);
}
