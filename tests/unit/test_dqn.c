/* SPDX-License-Identifier: MIT */
/* test_dqn.c: DQN targets (double and vanilla, termination, truncation) on
 * a network small enough to work by hand, the Huber loss, importance
 * weights, |TD| output, target-network updates, and the full loss gradient
 * against central finite differences of an independent double-precision
 * loss. */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "agents_ref.h"
#include "dqn.h"
#include "qnet.h"
#include "rng.h"
#include "util.h"

/* ------------------------------------------------- the hand-worked network
 *
 * O = 2, A = 3, no hidden layer: Q(s) = s W + b, params = [W (2, 3), b (3)];
 * written by action (column of W), Q_a(s) = s . W[:, a] + b_a:
 *   online  W[:, a] = (1, 0), (0, 1), (0.5, 0.5)   b = 0
 *   target  W[:, a] = (0, 1), (1, 0), (0, 0)       b = (0, 0, 0.25)
 *
 * row  obs       a  next_obs  r     disc  weight
 *  0   (1, 0)    2  (2, 1)    0.5   0.9   1
 *  1   (0, 2)    1  (inf, 0)  -1    0     2      terminal: no bootstrap
 *  2   (0.5, 1)  0  (0, 0)    0     0.99  0.5    truncated: bootstraps
 *
 * Q_online(next_obs): row 0 (2, 1, 1.5), row 2 (0, 0, 0)
 * Q_target(next_obs): row 0 (1, 2, 0.25), row 2 (0, 0, 0.25)
 * Q_online(obs, a):   row 0 0.5, row 1 2, row 2 0.5
 *
 * double DQN: a* = (0, -, 0)  y = (0.5 + 0.9 * 1, -1, 0.99 * 0) = (1.4, -1, 0)
 *             td = (-0.9, 3, 0.5)
 * vanilla:    a* = (1, -, 2)  y = (0.5 + 0.9 * 2, -1, 0.99 * 0.25) = (2.3, -1, 0.2475)
 *             td = (-1.8, 3, 0.2525)
 * Huber, delta 1, weighted, mean over 3:
 *   double:  (1 * 0.405 + 2 * 2.5 + 0.5 * 0.125) / 3 = 5.4675 / 3 = 1.8225
 *   vanilla: (1 * 1.3 + 2 * 2.5 + 0.5 * 0.031878125) / 3 = 2.1053130208
 * dL/dQ(obs_i, a_i) = weight * clamp(td) / 3, double: (-0.3, 2/3, 1/12);
 * for a linear Q, dW[:, a] = sum over rows taking a of dq * obs, db[a] = sum dq:
 *   dW[:, a] = (1/24, 1/12), (0, 4/3), (-0.3, 0); db = (1/12, 2/3, -0.3)
 * so in (in, out) storage grad = [1/24, 0, -0.3, 1/12, 4/3, 0, 1/12, 2/3, -0.3].
 */
typedef struct {
    QNet net;
    float online[9], target[9];
    float obs[6], next_obs[6], reward[3], discount[3], weight[3];
    int32_t action[3];
    Batch b;
} Tiny;

static void tiny_init(Tiny *t) {
    QNetSpec s = {.obs_dim = 2, .n_actions = 3, .n_hidden = 0};
    char err[ERR_LEN];
    cr_assert_eq(qnet_init(&t->net, &s, err), 0);
    cr_assert_eq(t->net.n_params, 9);
    const float on[9] = {1, 0, 0.5f, 0, 1, 0.5f, 0, 0, 0}, tg[9] = {0, 1, 0, 1, 0, 0, 0, 0, 0.25f};
    const float obs[6] = {1, 0, 0, 2, 0.5f, 1}, nobs[6] = {2, 1, INFINITY, 0, 0, 0};
    const float r[3] = {0.5f, -1, 0}, disc[3] = {0.9f, 0, 0.99f}, w[3] = {1, 2, 0.5f};
    const int32_t a[3] = {2, 1, 0};
    memcpy(t->online, on, sizeof on);
    memcpy(t->target, tg, sizeof tg);
    memcpy(t->obs, obs, sizeof obs);
    memcpy(t->next_obs, nobs, sizeof nobs);
    memcpy(t->reward, r, sizeof r);
    memcpy(t->discount, disc, sizeof disc);
    memcpy(t->weight, w, sizeof w);
    memcpy(t->action, a, sizeof a);
    t->b = (Batch){.n = 3, .obs_dim = 2, .obs = t->obs, .action = t->action, .reward = t->reward,
                   .next_obs = t->next_obs, .discount = t->discount, .weight = t->weight};
}

Test(dqn, double_dqn_targets_loss_and_gradient_by_hand) {
    Tiny t;
    tiny_init(&t);
    Dqn d;
    dqn_init(&d, &t.net, 4);
    DqnParams p = {.double_dqn = true, .huber_delta = 1.0f};
    float grad[9], td[3];
    double loss = dqn_loss_grad(&d, &t.net, &p, t.online, t.target, &t.b, grad, td);
    cr_assert_eq(d.a_next[0], 0);
    cr_assert_eq(d.a_next[2], 0); /* a tie (0, 0, 0) goes to action 0 */
    const float y[3] = {1.4f, -1.0f, 0.0f}, tdw[3] = {-0.9f, 3.0f, 0.5f};
    for (int i = 0; i < 3; i++) {
        cr_assert_float_eq(d.y[i], y[i], 1e-6, "y[%d] = %.9g", i, d.y[i]);
        cr_assert_float_eq(d.td[i], tdw[i], 1e-6, "td[%d] = %.9g", i, d.td[i]);
        cr_assert_float_eq(td[i], fabsf(tdw[i]), 1e-6, "|td|[%d]", i);
    }
    cr_assert_float_eq(loss, 1.8225, 1e-6, "loss %.9g", loss);
    const float want[9] = {1.0f / 24, 0, -0.3f, 1.0f / 12, 4.0f / 3, 0, 1.0f / 12, 2.0f / 3, -0.3f};
    for (int k = 0; k < 9; k++) cr_assert_float_eq(grad[k], want[k], 1e-6, "grad[%d] = %.9g", k, grad[k]);
    dqn_free(&d);
}

Test(dqn, vanilla_targets_use_the_target_networks_argmax) {
    Tiny t;
    tiny_init(&t);
    Dqn d;
    dqn_init(&d, &t.net, 3);
    DqnParams p = {.double_dqn = false, .huber_delta = 1.0f};
    float grad[9];
    double loss = dqn_loss_grad(&d, &t.net, &p, t.online, t.target, &t.b, grad, NULL);
    cr_assert_eq(d.a_next[0], 1);
    cr_assert_eq(d.a_next[2], 2);
    const float y[3] = {2.3f, -1.0f, 0.2475f};
    for (int i = 0; i < 3; i++) cr_assert_float_eq(d.y[i], y[i], 1e-6, "y[%d] = %.9g", i, d.y[i]);
    cr_assert_float_eq(loss, 2.1053130208, 1e-6, "loss %.9g", loss);
    /* row 0 is now in the linear region: dq = -1 / 3 on action 2 */
    cr_assert_float_eq(grad[2], -1.0f / 3, 1e-6); /* W[0, 2] += dq * obs_0[0] */
    cr_assert_float_eq(grad[8], -1.0f / 3, 1e-6);
    dqn_free(&d);
}

Test(dqn, discount_zero_ends_the_return_and_nonzero_bootstraps) {
    Tiny t;
    tiny_init(&t);
    Dqn d;
    dqn_init(&d, &t.net, 3);
    DqnParams p = {.double_dqn = false, .huber_delta = 1.0f};
    float grad[9];
    /* row 1's next_obs holds inf: with discount 0 nothing of it may leak */
    dqn_loss_grad(&d, &t.net, &p, t.online, t.target, &t.b, grad, NULL);
    cr_assert_eq(d.y[1], -1.0f);
    for (int k = 0; k < 9; k++) cr_assert(isfinite(grad[k]));
    /* the same row with a non-zero discount and a finite next_obs bootstraps:
     * target Q((1, 2)) = (2, 1, 0.25), max 2, y = -1 + 0.5 * 2 = 0 */
    t.discount[1] = 0.5f;
    t.next_obs[2] = 1;
    t.next_obs[3] = 2;
    dqn_loss_grad(&d, &t.net, &p, t.online, t.target, &t.b, grad, NULL);
    cr_assert_float_eq(d.y[1], 0.0f, 1e-7);
    dqn_free(&d);
}

Test(dqn, huber_quadratic_and_linear_regions) {
    cr_assert_float_eq(dqn_huber(0.5f, 1.0f), 0.125f, 1e-7);
    cr_assert_float_eq(dqn_huber(-0.5f, 1.0f), 0.125f, 1e-7);
    cr_assert_float_eq(dqn_huber(3.0f, 1.0f), 2.5f, 1e-7);
    cr_assert_float_eq(dqn_huber(-3.0f, 1.0f), 2.5f, 1e-7);
    cr_assert_float_eq(dqn_huber(3.0f, 2.0f), 4.0f, 1e-7); /* 2 * (3 - 1) */
    cr_assert_float_eq(dqn_huber(1.0f, 1.0f), 0.5f, 1e-7); /* continuous at delta */
    cr_assert_float_eq(dqn_huber(1.0001f, 1.0f), 0.5001f, 1e-6);
    cr_assert_eq(dqn_huber(0.0f, 1.0f), 0.0f);
    cr_assert_eq(dqn_huber_grad(0.5f, 1.0f), 0.5f);
    cr_assert_eq(dqn_huber_grad(-0.25f, 1.0f), -0.25f);
    cr_assert_eq(dqn_huber_grad(3.0f, 1.0f), 1.0f);
    cr_assert_eq(dqn_huber_grad(-3.0f, 1.0f), -1.0f);
    cr_assert_eq(dqn_huber_grad(-3.0f, 2.5f), -2.5f);
    char err[ERR_LEN];
    DqnParams p = {.huber_delta = 0.0f};
    cr_assert_eq(dqn_check(&p, err), -1);
    p.huber_delta = 1.0f;
    cr_assert_eq(dqn_check(&p, err), 0);
}

/* ------------------------------------------------------- a random network */

typedef struct {
    QNet net;
    int B;
    float *online, *target, *f; /* f: obs, next_obs, reward, discount, weight */
    int32_t *action;
    Batch b;
} Rand;

static void rand_init(Rand *t, bool dueling, int B, uint64_t seed) {
    QNetSpec s = {.obs_dim = 4, .n_actions = 3, .n_hidden = 2, .hidden = {16, 12}, .dueling = dueling};
    char err[ERR_LEN];
    cr_assert_eq(qnet_init(&t->net, &s, err), 0);
    t->B = B;
    Rng r;
    rng_seed(&r, seed, 0);
    t->online = malloc(t->net.n_params * sizeof(float));
    t->target = malloc(t->net.n_params * sizeof(float));
    qnet_init_params(&t->net, t->online, &r);
    qnet_init_params(&t->net, t->target, &r);
    for (size_t k = 0; k < t->net.n_params; k++) t->online[k] *= 2.0f; /* Q-values of order 1 */
    t->f = malloc((size_t)B * 11 * sizeof(float));
    t->action = malloc((size_t)B * sizeof(int32_t));
    t->b = (Batch){.n = B, .obs_dim = 4, .obs = t->f, .next_obs = t->f + 4 * B, .reward = t->f + 8 * B,
                   .discount = t->f + 9 * B, .weight = t->f + 10 * B, .action = t->action};
    ref_fill(t->b.obs, 8 * (size_t)B, &r, -2, 2);
    for (int i = 0; i < B; i++) {
        t->action[i] = (int32_t)rng_below(&r, 3);
        t->b.reward[i] = (float)rng_uniform_range(&r, -2.5, 2.5);
        t->b.discount[i] = i % 4 == 3 ? 0.0f : 0.97f;
        t->b.weight[i] = (float)rng_uniform_range(&r, 0.1, 1.0);
    }
}

static void rand_free(Rand *t) {
    free(t->online), free(t->target), free(t->f), free(t->action);
}

/* The loss in double from the definitions in dqn.h, with the targets y held
 * fixed (semi-gradient): only the online Q(obs, action) moves. */
static void ref_targets(const Rand *t, bool double_dqn, const double *on, const double *tg, double *y) {
    double qo[8], qt[8];
    for (int i = 0; i < t->B; i++) {
        const float *nx = t->b.next_obs + 4 * (size_t)i;
        ref_q_row(&t->net, tg, nx, qt);
        ref_q_row(&t->net, double_dqn ? on : tg, nx, qo);
        int best = 0;
        for (int a = 1; a < 3; a++)
            if (qo[a] > qo[best]) best = a;
        /* The argmax must not hinge on rounding: gorila's float forward
         * (any BLAS kernel) sits within about 1e-6 of this double one, so a
         * runner-up closer than 1e-4 could be picked there instead. */
        for (int a = 0; a < 3; a++)
            cr_assert(a == best || qo[best] - qo[a] > 1e-4 * (1 + fabs(qo[best])),
                      "row %d: actions %d and %d tie within rounding; pick another seed", i, best, a);
        y[i] = t->b.discount[i] == 0 ? t->b.reward[i] : t->b.reward[i] + (double)t->b.discount[i] * qt[best];
    }
}

static double ref_huber(double x, double delta) {
    return fabs(x) <= delta ? 0.5 * x * x : delta * (fabs(x) - 0.5 * delta);
}

static double ref_dqn_loss(const Rand *t, const double *on, const double *y, double delta, double *td) {
    double q[8], L = 0;
    for (int i = 0; i < t->B; i++) {
        ref_q_row(&t->net, on, t->b.obs + 4 * (size_t)i, q);
        double e = q[t->action[i]] - y[i];
        if (td) td[i] = e;
        L += t->b.weight[i] * ref_huber(e, delta);
    }
    return L / t->B;
}

static void check_loss_gradient(bool dueling, bool double_dqn, uint64_t seed) {
    enum { B = 12 };
    Rand t;
    rand_init(&t, dueling, B, seed);
    Dqn d;
    dqn_init(&d, &t.net, B);
    const float delta = 1.0f;
    DqnParams p = {.double_dqn = double_dqn, .huber_delta = delta};
    float *grad = malloc(t.net.n_params * sizeof(float)), td_abs[B];
    double loss = dqn_loss_grad(&d, &t.net, &p, t.online, t.target, &t.b, grad, td_abs);

    double *on = ref_theta(&t.net, t.online), *tg = ref_theta(&t.net, t.target), y[B], td[B];
    ref_targets(&t, double_dqn, on, tg, y);
    double want = ref_dqn_loss(&t, on, y, delta, td);
    cr_assert(fabs(loss - want) <= 1e-5 * (1 + want), "loss %.9g vs %.9g", loss, want);
    int linear = 0, quadratic = 0;
    for (int i = 0; i < B; i++) {
        cr_assert(fabs(d.y[i] - y[i]) <= 1e-5 * (1 + fabs(y[i])), "y[%d] %.9g vs %.9g", i, d.y[i], y[i]);
        cr_assert(fabs(td_abs[i] - fabs(td[i])) <= 1e-5 * (1 + fabs(td[i])), "|td|[%d]", i);
        cr_assert(fabs(fabs(td[i]) - delta) > 1e-3, "seed %llu row %d sits on the Huber kink; pick another seed",
                  (unsigned long long)seed, i);
        linear += fabs(td[i]) > delta;
        quadratic += fabs(td[i]) < delta;
    }
    cr_assert(linear >= 2 && quadratic >= 2, "rows: %d linear, %d quadratic", linear, quadratic);

    const double h = 1e-6;
    for (size_t k = 0; k < t.net.n_params; k++) {
        double t0 = on[k];
        on[k] = t0 + h;
        double lp = ref_dqn_loss(&t, on, y, delta, NULL);
        on[k] = t0 - h;
        double lm = ref_dqn_loss(&t, on, y, delta, NULL);
        on[k] = t0;
        double fd = (lp - lm) / (2 * h);
        cr_assert(fabs(grad[k] - fd) <= 1e-4 * (1 + fabs(fd)), "param %zu: grad %.8g, fd %.8g", k, grad[k], fd);
    }
    free(on), free(tg), free(grad);
    dqn_free(&d);
    rand_free(&t);
}

Test(dqn, loss_gradient_matches_finite_differences) {
    check_loss_gradient(false, true, 21);
    check_loss_gradient(true, true, 22);
    check_loss_gradient(false, false, 23);
    check_loss_gradient(true, false, 25);
}

/* Weights enter the gradient linearly per row.
 *
 * Same batch, weight 1 against 0.25: bit-for-bit on every BLAS kernel. The
 * weight scales each row's loss gradient before it enters sgemm, and
 * scaling every input of a sum by a power of two scales each rounded
 * partial sum exactly, whatever order the kernel adds in.
 *
 * One row against the same row in a batch of two (the other weighted 0):
 * equal only up to rounding. sgemm with 1 and with 2 rows takes different
 * code paths, and OpenBLAS's Prescott, Haswell and Zen kernels add the
 * 4-16-12-3 network's dot products in another order for each (measured: 1
 * float ulp apart in the loss; Nehalem, Sandybridge, SkylakeX and
 * Cooperlake happen to agree).
 * Reordering a length-n float sum moves it by at most 2 n u sum|terms|
 * (u = 2^-24), so three layers of n <= 16 stay within about 100 u times the
 * terms' conditioning: 1e-5 relative (about 80 ulps) covers that with room
 * and is 10^5 times smaller than the errors this test is for (the zero row
 * counted, or the mean taken over the weights instead of the rows: a factor
 * of 2). Gradient entries are compared against the largest entry, since a
 * single entry may cancel to near zero. */
static void expect_close_to_half(double l3, double l1, const float *g2, const float *g1, size_t n) {
    const double rel = 1e-5;
    cr_assert(fabs(l3 - 0.5 * l1) <= rel * fabs(0.5 * l1), "loss %.17g vs half of %.17g", l3, l1);
    double gmax = 0;
    for (size_t k = 0; k < n; k++) gmax = fmax(gmax, fabs(0.5 * g1[k]));
    cr_assert(gmax > 0);
    for (size_t k = 0; k < n; k++)
        cr_assert(fabs(g2[k] - 0.5 * g1[k]) <= rel * gmax, "param %zu: %.9g vs %.9g", k, g2[k], 0.5 * g1[k]);
}

Test(dqn, importance_weights_scale_each_rows_gradient) {
    Rand t;
    rand_init(&t, true, 2, 31);
    Dqn d;
    dqn_init(&d, &t.net, 2);
    DqnParams p = {.double_dqn = true, .huber_delta = 1.0f};
    size_t n = t.net.n_params;
    float *g1 = malloc(n * sizeof(float)), *g2 = malloc(n * sizeof(float));
    /* row 0 alone with weight 1 vs weight 0.25 */
    t.b.n = 1;
    t.b.weight[0] = 1.0f;
    double l1 = dqn_loss_grad(&d, &t.net, &p, t.online, t.target, &t.b, g1, NULL);
    t.b.weight[0] = 0.25f;
    double l2 = dqn_loss_grad(&d, &t.net, &p, t.online, t.target, &t.b, g2, NULL);
    cr_assert_eq(l2, 0.25 * l1);
    for (size_t k = 0; k < n; k++) cr_assert_eq(g2[k], 0.25f * g1[k], "param %zu", k);
    /* both rows, row 1 weighted 0: half of row 0 alone (mean over 2 rows) */
    t.b.n = 2;
    t.b.weight[0] = 1.0f;
    t.b.weight[1] = 0.0f;
    double l3 = dqn_loss_grad(&d, &t.net, &p, t.online, t.target, &t.b, g2, NULL);
    expect_close_to_half(l3, l1, g2, g1, n);
    free(g1), free(g2);
    dqn_free(&d);
    rand_free(&t);
}

Test(dqn, update_is_bit_identical_on_rerun) {
    Rand t;
    rand_init(&t, true, 32, 41);
    Dqn d[2];
    DqnParams p = {.double_dqn = true, .huber_delta = 1.0f};
    size_t n = t.net.n_params;
    float *g[2], td[2][32];
    double loss[2];
    for (int k = 0; k < 2; k++) {
        dqn_init(&d[k], &t.net, 32);
        g[k] = malloc(n * sizeof(float));
        loss[k] = dqn_loss_grad(&d[k], &t.net, &p, t.online, t.target, &t.b, g[k], td[k]);
    }
    cr_assert_eq(loss[0], loss[1]);
    cr_assert_eq(memcmp(g[0], g[1], n * sizeof(float)), 0);
    cr_assert_eq(memcmp(td[0], td[1], sizeof td[0]), 0);
    for (int k = 0; k < 2; k++) dqn_free(&d[k]), free(g[k]);
    rand_free(&t);
}

Test(dqn, rejects_an_action_out_of_range, .init = cr_redirect_stderr, .exit_code = 1) {
    Tiny t;
    tiny_init(&t);
    Dqn d;
    dqn_init(&d, &t.net, 3);
    DqnParams p = {.double_dqn = true, .huber_delta = 1.0f};
    float grad[9];
    t.action[1] = 3;
    dqn_loss_grad(&d, &t.net, &p, t.online, t.target, &t.b, grad, NULL);
}

/* --------------------------------------------------------- target updates */

Test(dqn, hard_and_soft_target_updates_on_a_slice) {
    float online[6] = {1, 2, 3, 4, 5, 6}, target[6] = {0, 0, 0, 0, 0, 0};
    dqn_target_hard(target + 1, online + 1, 3); /* a shard: [1, 4) */
    const float w1[6] = {0, 2, 3, 4, 0, 0};
    cr_assert_eq(memcmp(target, w1, sizeof w1), 0);
    dqn_target_soft(target + 3, online + 3, 3, 0.25f); /* (1 - tau) t + tau o */
    cr_assert_float_eq(target[3], 4.0f, 1e-7);
    cr_assert_float_eq(target[4], 1.25f, 1e-7);
    cr_assert_float_eq(target[5], 1.5f, 1e-7);
    cr_assert_eq(target[2], 3.0f);
    dqn_target_soft(target, online, 6, 0.0f); /* tau 0: unchanged */
    cr_assert_float_eq(target[4], 1.25f, 0);
    cr_assert_eq(target[0], 0.0f);
    float odd[3] = {0.1f, -7.3f, 1e-30f}, t2[3] = {5, 6, 7};
    dqn_target_soft(t2, odd, 3, 1.0f); /* tau 1: an exact copy */
    cr_assert_eq(memcmp(t2, odd, sizeof odd), 0);
    dqn_target_hard(target, online, 0);
}
