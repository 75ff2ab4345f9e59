/* SPDX-License-Identifier: MIT */
/* test_qnet.c: the Q-network's layout, initialization, forward and backward
 * (BLAS against the naive reference, and against central finite
 * differences of an independent double-precision forward), determinism and
 * argmax. */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "agents_ref.h"
#include "qnet.h"
#include "rng.h"
#include "util.h"

static QNet make_net(int O, int A, bool dueling, int n_hidden, const int *hidden) {
    QNetSpec s = {.obs_dim = O, .n_actions = A, .n_hidden = n_hidden, .dueling = dueling};
    for (int l = 0; l < n_hidden; l++) s.hidden[l] = hidden[l];
    QNet net;
    char err[ERR_LEN];
    cr_assert_eq(qnet_init(&net, &s, err), 0, "%s", err);
    return net;
}

/* Shapes for the numeric tests: plain and dueling, batch 1, no hidden layer,
 * three hidden layers, an input wider than the loop kernel's limit (so layer
 * 0 takes the sgemm path), a single action, and inputs of 2, 3, 4, 5, 6 and
 * 9 for every pass variant of the loop kernel (first, middle, last, short). */
typedef struct {
    int O, A;
    bool dueling;
    int n_hidden, hidden[3];
    int B;
} Shape;

static const Shape shapes[] = {
    {4, 2, false, 2, {16, 16}, 7},  {4, 3, true, 2, {16, 12}, 5},  {4, 2, false, 2, {8, 8}, 1},
    {4, 2, true, 2, {8, 8}, 1},     {3, 4, false, 0, {0}, 6},      {20, 2, true, 1, {9}, 4},
    {5, 3, false, 3, {7, 6, 5}, 3}, {2, 1, true, 3, {3, 4, 5}, 2}, {6, 5, true, 1, {33}, 9},
    {9, 2, false, 2, {5, 4}, 3},
};
#define N_SHAPES (sizeof shapes / sizeof shapes[0])

static QNet shape_net(const Shape *s) { return make_net(s->O, s->A, s->dueling, s->n_hidden, s->hidden); }

/* Biases are drawn away from zero and inputs are wide, so most hidden units
 * are active and no pre-activation sits within the finite-difference step
 * of the ReLU kink. */
static void random_params(const QNet *net, float *p, Rng *r) {
    qnet_init_params(net, p, r);
    for (int l = 0; l < net->n_linear; l++)
        for (int j = 0; j < net->lin[l].out; j++) p[net->lin[l].b_off + j] += 0.1f;
}

Test(qnet, layout_order_and_sizes_for_4_64_64_2) {
    int h[2] = {64, 64};
    QNet net = make_net(4, 2, false, 2, h);
    cr_assert_eq(net.n_params, (size_t)(64 * 4 + 64 + 64 * 64 + 64 + 2 * 64 + 2));
    const char *names[] = {"hidden.0.weight", "hidden.0.bias", "hidden.1.weight", "hidden.1.bias", "head.weight",
                           "head.bias"};
    const size_t rows[] = {4, 64, 64, 64, 64, 2}, cols[] = {64, 1, 64, 1, 2, 1}; /* W is (in, out) */
    cr_assert_eq(net.n_views, 6);
    size_t next = 0;
    for (int i = 0; i < 6; i++) {
        cr_assert_str_eq(net.views[i].name, names[i]);
        cr_assert_eq(net.views[i].offset, next, "view %s", names[i]); /* contiguous, in order */
        cr_assert_eq(net.views[i].rows, rows[i]);
        cr_assert_eq(net.views[i].cols, cols[i]);
        next += rows[i] * cols[i];
        cr_assert_eq(qnet_view(&net, names[i]), &net.views[i]);
    }
    cr_assert_eq(next, net.n_params);
    cr_assert_null(qnet_view(&net, "nope"));
}

Test(qnet, dueling_head_has_the_value_in_its_last_column) {
    int h[1] = {8};
    QNet net = make_net(3, 4, true, 1, h);
    const QNetView *w = qnet_view(&net, "head.weight"), *b = qnet_view(&net, "head.bias");
    cr_assert(w && b);
    cr_assert_eq(w->rows, 8);
    cr_assert_eq(w->cols, 5);
    cr_assert_eq(b->offset, w->offset + 8 * 5);
    cr_assert_eq(b->offset + 5, net.n_params);
    cr_assert_eq(net.n_params, (size_t)(3 * 8 + 8 + 8 * 5 + 5));
    /* Zero weights, advantage biases (1, 2, 3, 6) (mean 3), value bias 10:
     * Q = 10 + adv - 3 = (8, 9, 10, 13) whatever the input. */
    float p[3 * 8 + 8 + 8 * 5 + 5] = {0}, obs[3] = {0.5f, -1, 2}, q[4];
    const float hb[5] = {1, 2, 3, 6, 10};
    memcpy(p + b->offset, hb, sizeof hb);
    QNetWork wk;
    qnet_work_init(&wk, &net, 1);
    qnet_forward(&net, p, obs, 1, q, &wk);
    const float want[4] = {8, 9, 10, 13};
    for (int a = 0; a < 4; a++) cr_assert_eq(q[a], want[a], "q[%d] = %g", a, q[a]);
    qnet_work_free(&wk);
}

/* A hand-worked two-layer net: W0 (2, 2) = [[1, -1], [2, 1]] (in, out),
 * b0 = (0, -1); W1 (2, 1) = [[3], [-2]], b1 = 0.5. For x = (1, 1):
 * z0 = (1 + 2, -1 + 1) + (0, -1) = (3, -1) -> relu (3, 0); q = 9 + 0.5. */
Test(qnet, forward_by_hand_shows_the_in_out_orientation) {
    int h[1] = {2};
    QNet net = make_net(2, 1, false, 1, h);
    const float p[9] = {1, -1, 2, 1, 0, -1, 3, -2, 0.5f};
    cr_assert_eq(net.n_params, 9);
    float x[2] = {1, 1}, q;
    QNetWork w;
    qnet_work_init(&w, &net, 1);
    qnet_forward(&net, p, x, 1, &q, &w);
    cr_assert_eq(q, 9.5f);
    qnet_work_free(&w);
}

Test(qnet, init_rejects_bad_shapes) {
    char err[ERR_LEN];
    QNet net;
    QNetSpec s = {.obs_dim = 4, .n_actions = 2, .n_hidden = 9};
    cr_assert_eq(qnet_init(&net, &s, err), -1);
    cr_assert_str_eq(err, "qnet: 9 hidden layers, expected 0 to 8");
    s.n_hidden = 2;
    s.hidden[0] = 4;
    s.hidden[1] = 0;
    cr_assert_eq(qnet_init(&net, &s, err), -1);
    cr_assert_str_eq(err, "qnet: hidden layer 1 has width 0, expected 1 to 65536");
    s.hidden[1] = 4;
    s.obs_dim = 0;
    cr_assert_eq(qnet_init(&net, &s, err), -1);
    s.obs_dim = 4;
    s.n_actions = 0;
    cr_assert_eq(qnet_init(&net, &s, err), -1);
    s.n_actions = 2;
    cr_assert_eq(qnet_init(&net, &s, err), 0);
}

Test(qnet, init_params_is_seeded_and_bounded_by_fan_in) {
    int h[2] = {64, 32};
    QNet net = make_net(4, 2, false, 2, h);
    float *a = malloc(net.n_params * sizeof(float)), *b = malloc(net.n_params * sizeof(float));
    Rng r1, r2;
    rng_seed(&r1, 5, RNG_STREAM_INIT);
    rng_seed(&r2, 5, RNG_STREAM_INIT);
    qnet_init_params(&net, a, &r1);
    qnet_init_params(&net, b, &r2);
    cr_assert_eq(memcmp(a, b, net.n_params * sizeof(float)), 0);
    for (int l = 0; l < net.n_linear; l++) {
        const QNetLinear *L = &net.lin[l];
        double bound = 1.0 / sqrt(L->in), maxabs = 0;
        size_t n = (size_t)L->out * L->in + L->out;
        for (size_t i = 0; i < n; i++) {
            double v = fabs(a[L->w_off + i]);
            cr_assert(v <= bound, "layer %d element %zu: %g > %g", l, i, v, bound);
            if (v > maxabs) maxabs = v;
        }
        cr_assert(maxabs > 0.8 * bound, "layer %d uses only %g of its range %g", l, maxabs, bound);
    }
    free(a);
    free(b);
}

static void check_close(const float *got, const float *want, size_t n, double rtol, const char *what, int shape) {
    double scale = 0;
    for (size_t i = 0; i < n; i++)
        if (fabs(want[i]) > scale) scale = fabs(want[i]);
    for (size_t i = 0; i < n; i++)
        cr_assert(fabs((double)got[i] - want[i]) <= rtol * (scale + 1e-3), "shape %d %s[%zu]: %.9g vs %.9g", shape,
                  what, i, got[i], want[i]);
}

Test(qnet, blas_forward_and_backward_match_the_naive_reference) {
    for (size_t si = 0; si < N_SHAPES; si++) {
        const Shape *s = &shapes[si];
        QNet net = shape_net(s);
        int B = s->B, A = s->A;
        Rng r;
        rng_seed(&r, 100 + si, 0);
        float *p = malloc(net.n_params * sizeof(float));
        float *obs = malloc((size_t)B * s->O * sizeof(float));
        float *dq = malloc((size_t)B * A * sizeof(float));
        float *q1 = malloc((size_t)B * A * sizeof(float)), *q2 = malloc((size_t)B * A * sizeof(float));
        float *g1 = malloc(net.n_params * sizeof(float)), *g2 = malloc(net.n_params * sizeof(float));
        random_params(&net, p, &r);
        ref_fill(obs, (size_t)B * s->O, &r, -2, 2);
        ref_fill(dq, (size_t)B * A, &r, -1, 1);
        QNetWork w;
        qnet_work_init(&w, &net, B);
        qnet_forward_ref(&net, p, obs, B, q2, &w);
        qnet_backward_ref(&net, p, obs, dq, B, g2, &w);
        qnet_forward(&net, p, obs, B, q1, &w);
        qnet_backward(&net, p, obs, dq, B, g1, &w);
        check_close(q1, q2, (size_t)B * A, 1e-5, "q", (int)si);
        check_close(g1, g2, net.n_params, 1e-5, "grad", (int)si);
        qnet_work_free(&w);
        free(p), free(obs), free(dq), free(q1), free(q2), free(g1), free(g2);
    }
}

/* L = sum_{i,a} c[i,a] Q(obs_i)[a], so dL/dQ = c; its gradient by central
 * differences of the double forward, against qnet_backward in float. */
static double ref_loss(const QNet *net, const double *theta, const float *obs, const float *c, int B) {
    double q[64], L = 0;
    int A = net->spec.n_actions;
    for (int i = 0; i < B; i++) {
        ref_q_row(net, theta, obs + (size_t)i * net->spec.obs_dim, q);
        for (int a = 0; a < A; a++) L += c[(size_t)i * A + a] * q[a];
    }
    return L;
}

/* The float forward q (B, A) agrees with the double reference, and the
 * backward g with central finite differences of the double loss, on net's
 * parameters p, observations obs and loss weights c (shape si, for the
 * messages). */
static void check_against_double(const QNet *net, const float *p, const float *obs, const float *c, int B,
                                 const float *q, const float *g, size_t si) {
    int A = net->spec.n_actions;
    size_t O = (size_t)net->spec.obs_dim;
    double *theta = ref_theta(net, p), qd[64];
    for (int i = 0; i < B; i++) {
        ref_q_row(net, theta, obs + (size_t)i * O, qd);
        for (int a = 0; a < A; a++)
            cr_assert(fabs(q[(size_t)i * A + a] - qd[a]) <= 1e-5 * (1 + fabs(qd[a])), "shape %zu q[%d,%d]", si, i, a);
    }
    const double h = 1e-6;
    for (size_t k = 0; k < net->n_params; k++) {
        double t0 = theta[k];
        theta[k] = t0 + h;
        double lp = ref_loss(net, theta, obs, c, B);
        theta[k] = t0 - h;
        double lm = ref_loss(net, theta, obs, c, B);
        theta[k] = t0;
        double fd = (lp - lm) / (2 * h);
        cr_assert(fabs(g[k] - fd) <= 1e-4 * (1 + fabs(fd)), "shape %zu param %zu: backward %.8g, fd %.8g", si, k,
                  g[k], fd);
    }
    free(theta);
}

Test(qnet, backward_matches_finite_differences) {
    for (size_t si = 0; si < N_SHAPES; si++) {
        const Shape *s = &shapes[si];
        QNet net = shape_net(s);
        int B = s->B, A = s->A;
        Rng r;
        rng_seed(&r, 200 + si, 0);
        float *p = malloc(net.n_params * sizeof(float));
        float *obs = malloc((size_t)B * s->O * sizeof(float));
        float *c = malloc((size_t)B * A * sizeof(float)), *q = malloc((size_t)B * A * sizeof(float));
        float *g = malloc(net.n_params * sizeof(float));
        random_params(&net, p, &r);
        ref_fill(obs, (size_t)B * s->O, &r, -2, 2);
        ref_fill(c, (size_t)B * A, &r, -1, 1);
        QNetWork w;
        qnet_work_init(&w, &net, B);
        qnet_forward(&net, p, obs, B, q, &w);
        qnet_backward(&net, p, obs, c, B, g, &w);

        check_against_double(&net, p, obs, c, B, q, g, si);
        qnet_work_free(&w);
        free(p), free(obs), free(c), free(q), free(g);
    }
}

Test(qnet, forward_and_backward_are_bit_identical_on_rerun) {
    int h[2] = {64, 64};
    QNet net = make_net(4, 2, true, 2, h);
    int B = 64;
    Rng r;
    rng_seed(&r, 3, 0);
    float *p = malloc(net.n_params * sizeof(float)), *obs = malloc(B * 4 * sizeof(float));
    float *dq = malloc(B * 2 * sizeof(float)), *q[2], *g[2];
    for (int k = 0; k < 2; k++) q[k] = malloc(B * 2 * sizeof(float)), g[k] = malloc(net.n_params * sizeof(float));
    random_params(&net, p, &r);
    ref_fill(obs, B * 4, &r, -1, 1);
    ref_fill(dq, B * 2, &r, -1, 1);
    QNetWork w[2];
    for (int k = 0; k < 2; k++) {
        qnet_work_init(&w[k], &net, B);
        qnet_forward(&net, p, obs, B, q[k], &w[k]);
        qnet_backward(&net, p, obs, dq, B, g[k], &w[k]);
    }
    cr_assert_eq(memcmp(q[0], q[1], B * 2 * sizeof(float)), 0);
    cr_assert_eq(memcmp(g[0], g[1], net.n_params * sizeof(float)), 0);
    for (int k = 0; k < 2; k++) qnet_work_free(&w[k]), free(q[k]), free(g[k]);
    free(p), free(obs), free(dq);
}

/* Smallest |z| / zabs over the hidden pre-activations of one row, in
 * double: z = b + sum_k W x_k with x the previous layer's output, zabs the
 * same pre-activation in the network on |params| and |x| (which bounds the
 * rounding of z in float, whatever the order). */
static double relu_margin(const QNet *net, const float *p, const float *x) {
    double h[2][512], ha[2][512], m = INFINITY;
    for (int k = 0; k < net->spec.obs_dim; k++) h[0][k] = x[k], ha[0][k] = fabs(x[k]);
    int cur = 0;
    for (int l = 0; l < net->n_linear - 1; l++) {
        const QNetLinear *lin = &net->lin[l];
        for (int j = 0; j < lin->out; j++) {
            double z = p[lin->b_off + j], zabs = fabs(z);
            for (int k = 0; k < lin->in; k++) {
                double wk = p[lin->w_off + (size_t)k * lin->out + j];
                z += wk * h[cur][k];
                zabs += fabs(wk) * ha[cur][k];
            }
            if (zabs > 0 && fabs(z) / zabs < m) m = fabs(z) / zabs;
            h[1 - cur][j] = z < 0 ? 0.0 : z;
            ha[1 - cur][j] = zabs;
        }
        cur = 1 - cur;
    }
    return m;
}

/* The DQN update runs the forward over 2B rows (obs then next_obs) and the
 * backward over the first B: that must equal a forward over B rows.
 *
 * Two checks. First, bit for bit and by construction on any BLAS: two
 * forwards over the same 2B rows but for the last B (which the backward
 * must not read) give the same gradient; same shapes, so the same order of
 * every sum, and a row's results never depend on another row's values (in
 * any BLAS that computes each element as its own dot product: OpenBLAS,
 * BLIS, MKL, the reference BLAS).
 *
 * Second, against a forward over B rows: only close. sgemm over B and over
 * 2B rows may add a row's dot products in another order (OpenBLAS's
 * Prescott, Nehalem, Haswell and Zen kernels do for some shapes), so the
 * hidden activations may differ in their last bits. Evaluated in float in
 * any order, a layer with n inputs is within gamma_{n+1} (gamma_m = m u /
 * (1 - m u), u = 2^-24) of exact times the same layer on |params| and
 * |input|, and ReLU is 1-Lipschitz: each activation is within gamma_{38}
 * (layers of 4 and 32 inputs) of exact times the activation of the
 * network on |params| and |obs|. Unless an activation's ReLU flips, the
 * backward signals d (from dq and the weights alone) are the same, so only
 * the weight gradients sum_i x_i d_i move, each by at most (2 gamma_{38} +
 * 2 gamma_{16}) times gabs = the same backward on |params|, |obs| and |dq|,
 * about 108 u gabs. The tolerance is 4e-5 gabs (about 670 u, 6 times that);
 * a bug reading the wrong rows moves entries by a fraction of gabs itself
 * (a shift by one row: 0.27 gabs), thousands of times more. A ReLU flip needs a pre-activation within its own
 * rounding, under gamma_{38} of its value on |params| and |obs|, of 0: none
 * is within 1e-5 (168 u) of that, checked in double (relu_margin: no BLAS,
 * the same answer on every machine). */
Test(qnet, backward_uses_the_first_rows_of_a_longer_forward) {
    int h[2] = {32, 32};
    QNet net = make_net(4, 3, false, 2, h);
    int B = 16;
    Rng r;
    rng_seed(&r, 4, 0);
    size_t n = net.n_params;
    float *p = malloc(n * sizeof(float)), *obs = malloc(2 * B * 4 * sizeof(float));
    float *dq = malloc(B * 3 * sizeof(float)), *q = malloc(2 * B * 3 * sizeof(float));
    float *g1 = malloc(n * sizeof(float)), *g2 = malloc(n * sizeof(float)), *g3 = malloc(n * sizeof(float));
    random_params(&net, p, &r);
    ref_fill(obs, 2 * B * 4, &r, -1, 1);
    ref_fill(dq, B * 3, &r, -1, 1);
    QNetWork w;
    qnet_work_init(&w, &net, 2 * B);
    qnet_forward(&net, p, obs, B, q, &w);
    qnet_backward(&net, p, obs, dq, B, g1, &w);
    qnet_forward(&net, p, obs, 2 * B, q, &w);
    qnet_backward(&net, p, obs, dq, B, g2, &w);
    /* the next_obs half replaced: the gradient does not change at all */
    ref_fill(obs + B * 4, B * 4, &r, -3, 3);
    qnet_forward(&net, p, obs, 2 * B, q, &w);
    qnet_backward(&net, p, obs, dq, B, g3, &w);
    cr_assert_eq(memcmp(g2, g3, n * sizeof(float)), 0, "the backward read rows past the first B");

    double margin = INFINITY;
    for (int i = 0; i < B; i++) margin = fmin(margin, relu_margin(&net, p, obs + 4 * i));
    cr_assert(margin > 1e-5, "a pre-activation within %.3g of its |terms| of 0: pick another seed", margin);
    float *pa = malloc(n * sizeof(float)), *oa = malloc(B * 4 * sizeof(float));
    float *da = malloc(B * 3 * sizeof(float)), *gabs = malloc(n * sizeof(float));
    for (size_t k = 0; k < n; k++) pa[k] = fabsf(p[k]);
    for (int k = 0; k < B * 4; k++) oa[k] = fabsf(obs[k]);
    for (int k = 0; k < B * 3; k++) da[k] = fabsf(dq[k]);
    qnet_forward_ref(&net, pa, oa, B, q, &w);
    qnet_backward_ref(&net, pa, oa, da, B, gabs, &w);
    for (size_t k = 0; k < n; k++)
        cr_assert(fabs((double)g2[k] - g1[k]) <= 4e-5 * gabs[k], "param %zu: %.9g vs %.9g (|terms| %.3g)", k, g2[k],
                  g1[k], gabs[k]);
    qnet_work_free(&w);
    free(pa), free(oa), free(da), free(gabs);
    free(p), free(obs), free(dq), free(q), free(g1), free(g2), free(g3);
}

Test(qnet, argmax_takes_the_lowest_index_on_ties) {
    const float q[] = {1, 3, 3, 2,  /* tie at 1 and 2 */
                       5, 5, 5, 5,  /* all equal */
                       -1, -2, -3, 0, NAN, 1, 2, 0};
    int32_t out[4];
    qnet_argmax(q, 4, 4, out);
    cr_assert_eq(out[0], 1);
    cr_assert_eq(out[1], 0);
    cr_assert_eq(out[2], 3);
    cr_assert_eq(out[3], 2); /* NaN never wins over a number */
}

Test(qnet, flop_counts_follow_the_formula) {
    int h[2] = {64, 64};
    QNet net = make_net(4, 2, false, 2, h);
    cr_assert_float_eq(qnet_forward_flops(&net, 10), 2.0 * (4 * 64 + 64 * 64 + 64 * 2) * 10, 1e-6);
    cr_assert_float_eq(qnet_backward_flops(&net, 10), (2.0 * 4 * 64 + 4.0 * (64 * 64 + 64 * 2)) * 10, 1e-6);
}

Test(qnet, forward_dies_on_a_batch_larger_than_the_workspace, .init = cr_redirect_stderr, .exit_code = 1) {
    int h[1] = {4};
    QNet net = make_net(2, 2, false, 1, h);
    QNetWork w;
    qnet_work_init(&w, &net, 2);
    float p[64] = {0}, obs[6] = {0}, q[6];
    qnet_forward(&net, p, obs, 3, q, &w);
}

Test(qnet, work_free_is_safe_on_zeroed_and_twice) {
    QNetWork w;
    memset(&w, 0, sizeof w);
    qnet_work_free(&w);
    qnet_work_free(&w);
}

/* ------------------------------------------------------------------ convs */

/* obs (H, W, C) planes, convs {filters, kernel, stride}, then the MLP. */
static QNet make_conv_net(int H, int W, int C, int n_conv, const QNetConvSpec *conv, int n_hidden,
                          const int *hidden, int A, bool dueling) {
    QNetSpec s = {.obs_dim = H * W * C, .n_actions = A, .n_hidden = n_hidden, .dueling = dueling,
                  .in_h = H, .in_w = W, .in_c = C, .n_conv = n_conv};
    for (int l = 0; l < n_hidden; l++) s.hidden[l] = hidden[l];
    for (int i = 0; i < n_conv; i++) s.conv[i] = conv[i];
    QNet net;
    char err[ERR_LEN];
    cr_assert_eq(qnet_init(&net, &s, err), 0, "%s", err);
    return net;
}

/* The MinAtar DQN (dqn.py): 10x10x4 planes, conv 16 3x3 stride 1 ->
 * 16x8x8 = 1024 -> 128 -> 6 actions. */
static QNet minatar_net(int C, bool dueling) {
    const QNetConvSpec cv[1] = {{16, 3, 1}};
    const int h[1] = {128};
    return make_conv_net(10, 10, C, 1, cv, 1, h, 6, dueling);
}

Test(qnet, conv_layout_puts_convs_first_with_4d_shapes) {
    QNet net = minatar_net(4, false);
    const char *names[] = {"conv.0.weight", "conv.0.bias", "hidden.0.weight", "hidden.0.bias", "head.weight",
                           "head.bias"};
    const int ndim[] = {4, 1, 2, 1, 2, 1};
    const size_t dims[6][4] = {{16, 4, 3, 3}, {16}, {1024, 128}, {128}, {128, 6}, {6}};
    cr_assert_eq(net.n_views, 6);
    size_t next = 0;
    for (int i = 0; i < 6; i++) {
        const QNetView *v = &net.views[i];
        cr_assert_str_eq(v->name, names[i]);
        cr_assert_eq(v->offset, next, "view %s", names[i]);
        cr_assert_eq(v->ndim, ndim[i], "view %s", names[i]);
        size_t n = 1;
        for (int d = 0; d < 4; d++) {
            cr_assert_eq(v->dims[d], dims[i][d], "view %s dim %d", names[i], d);
            if (d < v->ndim) n *= v->dims[d];
        }
        cr_assert_eq(v->rows * v->cols, n, "view %s: rows x cols is the tensor's size", names[i]);
        next += n;
    }
    cr_assert_eq(next, net.n_params);
    cr_assert_eq(net.n_params, (size_t)(16 * 4 * 9 + 16 + 1024 * 128 + 128 + 128 * 6 + 6));
    cr_assert_eq(net.lin[0].in, 1024);
    cr_assert_eq(minatar_net(10, false).n_params, 133430); /* Breakout/Seaquest-sized planes: ~133k */
    /* the existing views keep their rows and cols meaning */
    const QNetView *hw = qnet_view(&net, "hidden.0.weight");
    cr_assert(hw->rows == 1024 && hw->cols == 128);
}

Test(qnet, init_refuses_bad_conv_shapes) {
    char err[ERR_LEN];
    QNet net;
    QNetSpec s = {.obs_dim = 100, .n_actions = 3, .n_hidden = 1, .hidden = {8}, .in_h = 5, .in_w = 5, .in_c = 4,
                  .n_conv = 2, .conv = {{4, 3, 1}, {2, 4, 1}}};
    cr_assert_eq(qnet_init(&net, &s, err), -1);
    cr_assert_str_eq(err, "qnet: conv layer 1: kernel 4 does not fit the 3x3 input (expected 1 to 3)");
    s.conv[1].kernel = 2;
    s.conv[1].stride = 0;
    cr_assert_eq(qnet_init(&net, &s, err), -1);
    cr_assert_str_eq(err, "qnet: conv layer 1: stride 0, expected 1 to 65536");
    s.conv[1].stride = 1;
    s.conv[0].kernel = 6;
    cr_assert_eq(qnet_init(&net, &s, err), -1);
    cr_assert_str_eq(err, "qnet: conv layer 0: kernel 6 does not fit the 5x5 input (expected 1 to 5)");
    s.conv[0].kernel = 3;
    s.n_conv = QNET_MAX_CONV + 1;
    cr_assert_eq(qnet_init(&net, &s, err), -1);
    cr_assert_str_eq(err, "qnet: 5 conv layers, expected 0 to 4");
    s.n_conv = 2;
    s.in_c = 3;
    cr_assert_eq(qnet_init(&net, &s, err), -1);
    cr_assert_str_eq(err, "qnet: observation planes 5x5x3 hold 75 floats, obs_dim is 100");
    s.in_h = s.in_w = s.in_c = 0;
    cr_assert_eq(qnet_init(&net, &s, err), -1);
    cr_assert_str_eq(err, "qnet: observation planes 0x0x0 (height x width x channels) with conv layers, expected "
                          "each >= 1");
    s.n_conv = 0; /* a vector observation: no planes needed */
    cr_assert_eq(qnet_init(&net, &s, err), 0, "%s", err);
    s.in_h = s.in_w = 5, s.in_c = 4, s.n_conv = 2;
    cr_assert_eq(qnet_init(&net, &s, err), 0, "%s", err);
    cr_assert_eq(net.lin[0].in, 2 * 2 * 2); /* 5 -> 3 -> 2, two filters */
}

/* The shapes of the conv numeric tests: the fixture's small net (two convs,
 * one of stride 2, dueling), a conv straight into the head, three convs,
 * and the MinAtar net with dueling. */
typedef struct {
    int H, W, C, n_conv;
    QNetConvSpec conv[3];
    int n_hidden, hidden[2], A;
    bool dueling;
    int B;
} ConvShape;

static const ConvShape conv_shapes[] = {
    {6, 6, 3, 2, {{4, 3, 1}, {5, 2, 2}}, 1, {8}, 3, true, 3},
    {5, 4, 2, 1, {{3, 2, 1}}, 0, {0}, 2, false, 2},
    {7, 7, 2, 3, {{3, 3, 1}, {2, 2, 1}, {2, 2, 2}}, 2, {6, 5}, 4, true, 2},
    {10, 10, 4, 1, {{16, 3, 1}}, 1, {32}, 6, true, 4},
};
#define N_CONV_SHAPES (sizeof conv_shapes / sizeof conv_shapes[0])

static QNet conv_shape_net(const ConvShape *s) {
    return make_conv_net(s->H, s->W, s->C, s->n_conv, s->conv, s->n_hidden, s->hidden, s->A, s->dueling);
}

Test(qnet, conv_forward_and_backward_match_the_naive_reference) {
    for (size_t si = 0; si < N_CONV_SHAPES; si++) {
        const ConvShape *s = &conv_shapes[si];
        QNet net = conv_shape_net(s);
        int B = s->B, A = s->A, O = net.spec.obs_dim;
        Rng r;
        rng_seed(&r, 300 + si, 0);
        float *p = malloc(net.n_params * sizeof(float)), *obs = malloc((size_t)B * O * sizeof(float));
        float *dq = malloc((size_t)B * A * sizeof(float));
        float *q1 = malloc((size_t)B * A * sizeof(float)), *q2 = malloc((size_t)B * A * sizeof(float));
        float *g1 = malloc(net.n_params * sizeof(float)), *g2 = malloc(net.n_params * sizeof(float));
        random_params(&net, p, &r);
        ref_fill(obs, (size_t)B * O, &r, 0, 1);
        ref_fill(dq, (size_t)B * A, &r, -1, 1);
        QNetWork w;
        qnet_work_init(&w, &net, B);
        cr_assert_eq(qnet_work_floats(&net, B) * sizeof(float) >= (size_t)B * net.max_cols * sizeof(float), 1);
        qnet_forward_ref(&net, p, obs, B, q2, &w);
        qnet_backward_ref(&net, p, obs, dq, B, g2, &w);
        qnet_forward(&net, p, obs, B, q1, &w);
        qnet_backward(&net, p, obs, dq, B, g1, &w);
        check_close(q1, q2, (size_t)B * A, 1e-5, "q", (int)si);
        check_close(g1, g2, net.n_params, 1e-5, "grad", (int)si);
        qnet_work_free(&w);
        free(p), free(obs), free(dq), free(q1), free(q2), free(g1), free(g2);
    }
}

/* As backward_matches_finite_differences, through the convs: the double
 * forward (agents_ref.h) is piecewise linear in each parameter, so central
 * differences with h = 1e-6 are exact to rounding (~1e-9) unless a ReLU
 * input is within h |x| of 0 (the +0.1 biases make that unlikely; a miss
 * would show as one isolated large error). The float backward's error is
 * below the same 1e-4 (1 + |fd|): sums of at most ~1000 float products of
 * magnitude <= 1 lose under 1000 * 2^-24 < 1e-4 of their |terms|. */
Test(qnet, conv_backward_matches_finite_differences) {
    for (size_t si = 0; si < 3; si++) { /* the MinAtar net's 133k parameters would take too long */
        const ConvShape *s = &conv_shapes[si];
        QNet net = conv_shape_net(s);
        int B = s->B, A = s->A, O = net.spec.obs_dim;
        Rng r;
        rng_seed(&r, 400 + si, 0);
        float *p = malloc(net.n_params * sizeof(float)), *obs = malloc((size_t)B * O * sizeof(float));
        float *c = malloc((size_t)B * A * sizeof(float)), *q = malloc((size_t)B * A * sizeof(float));
        float *g = malloc(net.n_params * sizeof(float));
        random_params(&net, p, &r);
        ref_fill(obs, (size_t)B * O, &r, 0, 1);
        ref_fill(c, (size_t)B * A, &r, -1, 1);
        QNetWork w;
        qnet_work_init(&w, &net, B);
        qnet_forward(&net, p, obs, B, q, &w);
        qnet_backward(&net, p, obs, c, B, g, &w);
        check_against_double(&net, p, obs, c, B, q, g, si);
        qnet_work_free(&w);
        free(p), free(obs), free(c), free(q), free(g);
    }
}

/* The DQN update's forward over 2B rows and backward over B, with convs:
 * the conv backward recomputes im2col from obs, so it must read only the
 * first B rows of obs and of the conv activations. */
Test(qnet, conv_backward_uses_only_the_first_rows) {
    QNet net = conv_shape_net(&conv_shapes[0]);
    int B = 4, A = 3, O = net.spec.obs_dim;
    size_t n = net.n_params;
    Rng r;
    rng_seed(&r, 5, 0);
    float *p = malloc(n * sizeof(float)), *obs = malloc(2 * (size_t)B * O * sizeof(float));
    float *dq = malloc((size_t)B * A * sizeof(float)), *q = malloc(2 * (size_t)B * A * sizeof(float));
    float *g1 = malloc(n * sizeof(float)), *g2 = malloc(n * sizeof(float));
    random_params(&net, p, &r);
    ref_fill(obs, 2 * (size_t)B * O, &r, 0, 1);
    ref_fill(dq, (size_t)B * A, &r, -1, 1);
    QNetWork w;
    qnet_work_init(&w, &net, 2 * B);
    qnet_forward(&net, p, obs, 2 * B, q, &w);
    qnet_backward(&net, p, obs, dq, B, g1, &w);
    ref_fill(obs + (size_t)B * O, (size_t)B * O, &r, -3, 3);
    qnet_forward(&net, p, obs, 2 * B, q, &w);
    qnet_backward(&net, p, obs, dq, B, g2, &w);
    cr_assert_eq(memcmp(g1, g2, n * sizeof(float)), 0, "the backward read rows past the first B");
    qnet_work_free(&w);
    free(p), free(obs), free(dq), free(q), free(g1), free(g2);
}

Test(qnet, conv_init_params_bounded_by_fan_in_and_mlp_draws_follow) {
    QNet net = conv_shape_net(&conv_shapes[0]);
    float *a = malloc(net.n_params * sizeof(float));
    Rng r;
    rng_seed(&r, 6, RNG_STREAM_INIT);
    qnet_init_params(&net, a, &r);
    for (int i = 0; i < net.n_conv; i++) {
        const ConvLayer *L = &net.conv[i];
        double bound = 1.0 / sqrt((double)L->in_c * L->k * L->k), maxabs = 0;
        for (size_t k = 0; k < conv_n_params(L); k++) maxabs = fmax(maxabs, fabs(a[L->w_off + k]));
        cr_assert(maxabs <= bound && maxabs > 0.7 * bound, "conv %d: max %g, bound %g", i, maxabs, bound);
    }
    /* drawn in layout order: the MLP's values come after the convs' draws */
    Rng r2;
    rng_seed(&r2, 6, RNG_STREAM_INIT);
    size_t first = net.lin[0].w_off;
    for (size_t k = 0; k < first; k++) rng_uniform_range(&r2, -1, 1);
    double bound = 1.0 / sqrt((double)net.lin[0].in);
    cr_assert_eq(a[first], (float)rng_uniform_range(&r2, -bound, bound));
    free(a);
}

Test(qnet, conv_flop_counts_include_the_convs) {
    QNet net = minatar_net(4, false);
    double conv = 2.0 * 16 * 36 * 64, mlp = 2.0 * (1024 * 128 + 128 * 6);
    cr_assert_float_eq(qnet_forward_flops(&net, 32), (conv + mlp) * 32, 1e-3);
    /* backward: conv 0 weight gradient only; both linear layers take their input gradient */
    cr_assert_float_eq(qnet_backward_flops(&net, 32), (conv + 2 * mlp) * 32, 1e-3);
}
