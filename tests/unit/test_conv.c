/* SPDX-License-Identifier: MIT */
/* test_conv.c: one convolution layer (agents/conv.c): shapes and refusals,
 * the im2col + sgemm forward and backward against the naive reference, and
 * the backward against central finite differences of a double-precision
 * convolution written here from the definition in conv.h. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "agents_ref.h"
#include "conv.h"
#include "rng.h"
#include "util.h"

/* A layer on samples stored (C, H, W) contiguously (hwc false) or as
 * observation rows (H, W, C) (hwc true), parameters at off. */
static ConvLayer make_layer(int C, int H, int W, int F, int K, int s, bool hwc, size_t off) {
    ConvLayer L;
    char err[ERR_LEN];
    size_t sc = hwc ? 1 : (size_t)H * W, sy = hwc ? (size_t)W * C : (size_t)W, sx = hwc ? (size_t)C : 1;
    cr_assert_eq(conv_init(&L, C, H, W, sc, sy, sx, F, K, s, off, err), 0, "%s", err);
    return L;
}

Test(conv, output_shape_and_parameter_layout) {
    ConvLayer L = make_layer(3, 6, 6, 4, 3, 1, true, 10);
    cr_assert_eq(L.out_h, 4);
    cr_assert_eq(L.out_w, 4);
    cr_assert_eq(L.w_off, 10);
    cr_assert_eq(L.b_off, 10 + 4 * 3 * 3 * 3);
    cr_assert_eq(conv_n_params(&L), 4 * 27 + 4);
    cr_assert_eq(conv_out_size(&L), 4 * 16);
    cr_assert_eq(conv_cols_size(&L, 5), 27 * 5 * 16);
    L = make_layer(4, 7, 5, 2, 3, 2, false, 0); /* (7-3)/2+1 = 3, (5-3)/2+1 = 2: the last column unread */
    cr_assert_eq(L.out_h, 3);
    cr_assert_eq(L.out_w, 2);
    L = make_layer(1, 4, 4, 1, 4, 3, false, 0); /* the kernel fills the plane: one output */
    cr_assert_eq(L.out_h * L.out_w, 1);
}

Test(conv, init_refuses_bad_shapes_with_one_message) {
    ConvLayer L;
    char err[ERR_LEN];
    cr_assert_eq(conv_init(&L, 3, 4, 6, 1, 1, 1, 2, 5, 1, 0, err), -1);
    cr_assert_str_eq(err, "conv: kernel 5 does not fit the 4x6 input (expected 1 to 4)");
    cr_assert_eq(conv_init(&L, 3, 4, 4, 1, 1, 1, 2, 0, 1, 0, err), -1);
    cr_assert_str_eq(err, "conv: kernel 0 does not fit the 4x4 input (expected 1 to 4)");
    cr_assert_eq(conv_init(&L, 3, 4, 4, 1, 1, 1, 2, 3, 0, 0, err), -1);
    cr_assert_str_eq(err, "conv: stride 0, expected 1 to 65536");
    cr_assert_eq(conv_init(&L, 3, 4, 4, 1, 1, 1, 0, 3, 1, 0, err), -1);
    cr_assert_str_eq(err, "conv: 0 filters, expected 1 to 65536");
    cr_assert_eq(conv_init(&L, 0, 4, 4, 1, 1, 1, 2, 3, 1, 0, err), -1);
    cr_assert_str_eq(err, "conv: input 4x4x0 (height x width x channels) must be at least 1x1x1");
}

/* A hand-worked layer: one 3x3 plane [[1,2,3],[4,5,6],[7,8,9]], two 2x2
 * filters at stride 1: f0 = [[1,0],[0,1]] bias 0 gives the diagonal sums
 * (6, 8, 12, 14); f1 = [[0,0],[0,-1]] bias 4.5 gives 4.5 - (5, 6, 8, 9),
 * all negative, so 0 after the ReLU. y is (F, OH, OW) per sample. */
Test(conv, forward_by_hand) {
    ConvLayer L = make_layer(1, 3, 3, 2, 2, 1, false, 0);
    const float p[10] = {1, 0, 0, 1, 0, 0, 0, -1, 0, 4.5f};
    const float x[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    float y[8], cols[16], z[8];
    conv_forward(&L, p, x, 1, cols, z, y);
    const float want[8] = {6, 8, 12, 14, 0, 0, 0, 0};
    for (int i = 0; i < 8; i++) cr_assert_eq(y[i], want[i], "y[%d] = %g", i, y[i]);
    float yr[8];
    conv_forward_ref(&L, p, x, 1, yr);
    cr_assert_eq(memcmp(y, yr, sizeof y), 0);
}

typedef struct {
    int C, H, W, F, K, s, B;
    bool hwc;
} Shape;

static const Shape shapes[] = {
    {3, 6, 6, 4, 3, 1, 3, true},  {4, 4, 4, 5, 2, 2, 2, false}, {2, 7, 5, 3, 3, 2, 4, true},
    {1, 5, 5, 2, 5, 1, 3, false}, {10, 10, 10, 16, 3, 1, 2, true}, {2, 9, 8, 3, 4, 3, 1, false},
};
#define N_SHAPES (sizeof shapes / sizeof shapes[0])

typedef struct {
    ConvLayer L;
    float *p, *x, *dy, *y, *y2, *g, *g2, *dx, *dx2, *cols, *z;
} Case;

static Case make_case(const Shape *s, uint64_t seed) {
    Case c;
    c.L = make_layer(s->C, s->H, s->W, s->F, s->K, s->s, s->hwc, 3);
    size_t np = 3 + conv_n_params(&c.L), nx = (size_t)s->B * c.L.in_size, ny = (size_t)s->B * conv_out_size(&c.L);
    c.p = calloc(np, sizeof(float)), c.g = calloc(np, sizeof(float)), c.g2 = calloc(np, sizeof(float));
    c.x = malloc(nx * sizeof(float)), c.dx = malloc(nx * sizeof(float)), c.dx2 = malloc(nx * sizeof(float));
    c.dy = malloc(ny * sizeof(float)), c.y = malloc(ny * sizeof(float)), c.y2 = malloc(ny * sizeof(float));
    c.cols = malloc(conv_cols_size(&c.L, s->B) * sizeof(float));
    c.z = malloc(ny * sizeof(float));
    Rng r;
    rng_seed(&r, seed, 0);
    double bound = 1.0 / sqrt((double)s->C * s->K * s->K);
    ref_fill(c.p + 3, conv_n_params(&c.L), &r, -bound, bound);
    for (int f = 0; f < s->F; f++) c.p[c.L.b_off + f] += 0.05f; /* more units active */
    ref_fill(c.x, nx, &r, -1, 1);
    ref_fill(c.dy, ny, &r, -1, 1);
    return c;
}

static void free_case(Case *c) {
    free(c->p), free(c->g), free(c->g2), free(c->x), free(c->dx), free(c->dx2);
    free(c->dy), free(c->y), free(c->y2), free(c->cols), free(c->z);
}

static void check_close(const float *got, const float *want, size_t n, const char *what, size_t si) {
    double scale = 0;
    for (size_t i = 0; i < n; i++) scale = fmax(scale, fabs(want[i]));
    for (size_t i = 0; i < n; i++)
        cr_assert(fabs((double)got[i] - want[i]) <= 1e-5 * (scale + 1e-3), "shape %zu %s[%zu]: %.9g vs %.9g", si,
                  what, i, got[i], want[i]);
}

Test(conv, im2col_sgemm_matches_the_naive_reference) {
    for (size_t si = 0; si < N_SHAPES; si++) {
        const Shape *s = &shapes[si];
        Case c = make_case(s, 10 + si);
        size_t ny = (size_t)s->B * conv_out_size(&c.L), nx = (size_t)s->B * c.L.in_size;
        conv_forward(&c.L, c.p, c.x, s->B, c.cols, c.z, c.y);
        conv_forward_ref(&c.L, c.p, c.x, s->B, c.y2);
        check_close(c.y, c.y2, ny, "y", si);
        memset(c.dx, 0x7f, nx * sizeof(float)); /* every element must be written */
        conv_backward(&c.L, c.p, c.x, c.y, c.dy, s->B, c.cols, c.z, c.g, c.dx);
        conv_backward_ref(&c.L, c.p, c.x, c.y2, c.dy, s->B, c.g2, c.dx2);
        check_close(c.g + 3, c.g2 + 3, conv_n_params(&c.L), "grad", si);
        check_close(c.dx, c.dx2, nx, "dx", si);
        cr_assert_eq(c.g[0], 0.0f, "wrote before its offset");
        /* without dx: the same weight gradient, bit for bit */
        conv_backward(&c.L, c.p, c.x, c.y, c.dy, s->B, c.cols, c.z, c.g2, NULL);
        cr_assert_eq(memcmp(c.g, c.g2, (3 + conv_n_params(&c.L)) * sizeof(float)), 0, "shape %zu", si);
        free_case(&c);
    }
}

/* L = sum c * relu(conv(x) + b), all in double, from the definition:
 * y[b][f][oy][ox] = relu(bias[f] + sum_{c,ky,kx} W[f][c][ky][kx] x[b][c][oy s + ky][ox s + kx]).
 * Also returns the smallest |pre-activation| in *margin. */
static double ref_loss(const ConvLayer *L, const double *w, const double *x, const float *dy, int B,
                       double *margin) {
    double loss = 0;
    *margin = INFINITY;
    size_t i = 0;
    for (int b = 0; b < B; b++)
        for (int f = 0; f < L->out_c; f++)
            for (int oy = 0; oy < L->out_h; oy++)
                for (int ox = 0; ox < L->out_w; ox++, i++) {
                    double z = w[L->b_off + f];
                    for (int c = 0; c < L->in_c; c++)
                        for (int ky = 0; ky < L->k; ky++)
                            for (int kx = 0; kx < L->k; kx++)
                                z += w[L->w_off + (((size_t)f * L->in_c + c) * L->k + ky) * L->k + kx] *
                                     x[(size_t)b * L->in_size + c * L->sc + (oy * L->stride + ky) * L->sy +
                                       (ox * L->stride + kx) * L->sx];
                    *margin = fmin(*margin, fabs(z));
                    loss += dy[i] * (z > 0 ? z : 0);
                }
    return loss;
}

/* Central differences with h = 1e-6 in double: the loss is piecewise
 * linear in each variable, so the difference is exact up to rounding
 * (~1e-16 |L| / h, about 1e-9 here) unless a pre-activation is within
 * h |x| of its kink, which the margin check excludes. The float backward
 * sums at most B*P*F products of terms <= ~1 in magnitude, so its error
 * is under (B*P*F) 2^-24 of a sum of |terms| of order 10: < 1e-4. */
Test(conv, backward_matches_finite_differences) {
    for (size_t si = 0; si < N_SHAPES; si++) {
        const Shape *s = &shapes[si];
        if (s->C * s->H * s->W * s->B > 400) continue; /* keep it fast: the small ones cover the strides */
        Case c = make_case(s, 40 + si);
        size_t np = 3 + conv_n_params(&c.L), nx = (size_t)s->B * c.L.in_size;
        conv_forward(&c.L, c.p, c.x, s->B, c.cols, c.z, c.y);
        conv_backward(&c.L, c.p, c.x, c.y, c.dy, s->B, c.cols, c.z, c.g, c.dx);
        double *w = malloc(np * sizeof(double)), *x = malloc(nx * sizeof(double)), margin;
        for (size_t k = 0; k < np; k++) w[k] = c.p[k];
        for (size_t k = 0; k < nx; k++) x[k] = c.x[k];
        ref_loss(&c.L, w, x, c.dy, s->B, &margin);
        cr_assert(margin > 1e-4, "shape %zu: a pre-activation %.3g from the kink: pick another seed", si, margin);
        const double h = 1e-6;
        for (int pass = 0; pass < 2; pass++) {
            double *v = pass ? x : w;
            const float *g = pass ? c.dx : c.g;
            size_t from = pass ? 0 : 3, n = pass ? nx : np;
            for (size_t k = from; k < n; k++) {
                double v0 = v[k], m;
                v[k] = v0 + h;
                double lp = ref_loss(&c.L, w, x, c.dy, s->B, &m);
                v[k] = v0 - h;
                double lm = ref_loss(&c.L, w, x, c.dy, s->B, &m);
                v[k] = v0;
                double fd = (lp - lm) / (2 * h);
                cr_assert(fabs(g[k] - fd) <= 1e-4 * (1 + fabs(fd)), "shape %zu %s %zu: backward %.8g, fd %.8g", si,
                          pass ? "input" : "param", k, g[k], fd);
            }
        }
        free(w), free(x);
        free_case(&c);
    }
}

Test(conv, flop_counts_follow_the_formula) {
    ConvLayer L = make_layer(10, 10, 10, 16, 3, 1, true, 0);
    double f = 2.0 * 16 * 90 * 64 * 32;
    cr_assert_float_eq(conv_forward_flops(&L, 32), f, 1e-6);
    cr_assert_float_eq(conv_backward_flops(&L, 32, 0), f, 1e-6);
    cr_assert_float_eq(conv_backward_flops(&L, 32, 1), 2 * f, 1e-6);
}

/* Input planes stored (H, W, C) (cells C floats apart along a row: the
 * gathered-tile im2col) and the same values stored (C, H, W) (adjacent
 * cells: the strided im2col) give bit-identical outputs and weight
 * gradients: the two gathers copy the same values into the same columns,
 * and everything after them is the same sgemm. Stride 1 and 2. */
Test(conv, plane_layouts_give_identical_results) {
    const int H = 10, W = 9, C = 4, F = 5, K = 3, B = 3;
    size_t in = (size_t)H * W * C;
    for (int stride = 1; stride <= 2; stride++) {
        ConvLayer hwc, chw;
        char err[256];
        cr_assert_eq(conv_init(&hwc, C, H, W, 1, (size_t)W * C, C, F, K, stride, 0, err), 0, "%s", err);
        cr_assert_eq(conv_init(&chw, C, H, W, (size_t)H * W, W, 1, F, K, stride, 0, err), 0, "%s", err);
        size_t np = conv_n_params(&hwc), ny = (size_t)B * conv_out_size(&hwc);
        float *p = calloc(np, sizeof(float)), *xh = calloc(B * in, sizeof(float)), *xc = calloc(B * in, sizeof(float));
        float *cols = calloc(conv_cols_size(&hwc, B), sizeof(float)), *z = calloc(ny, sizeof(float));
        float *y1 = calloc(ny, sizeof(float)), *y2 = calloc(ny, sizeof(float)), *dy = calloc(ny, sizeof(float));
        float *g1 = calloc(np, sizeof(float)), *g2 = calloc(np, sizeof(float));
        Rng r;
        rng_seed(&r, 77, (uint64_t)stride);
        ref_fill(p, np, &r, -0.3, 0.3);
        ref_fill(dy, ny, &r, -1, 1);
        for (int b = 0; b < B; b++)
            for (int y = 0; y < H; y++)
                for (int x = 0; x < W; x++)
                    for (int c = 0; c < C; c++) {
                        float v = (float)rng_below(&r, 2); /* binary planes, as MinAtar's */
                        xh[(size_t)b * in + ((size_t)y * W + x) * C + c] = v;
                        xc[(size_t)b * in + ((size_t)c * H + y) * W + x] = v;
                    }
        conv_forward(&hwc, p, xh, B, cols, z, y1);
        conv_forward(&chw, p, xc, B, cols, z, y2);
        cr_assert_eq(memcmp(y1, y2, ny * sizeof(float)), 0, "stride %d: outputs differ", stride);
        conv_backward(&hwc, p, xh, y1, dy, B, cols, z, g1, NULL);
        conv_backward(&chw, p, xc, y2, dy, B, cols, z, g2, NULL);
        cr_assert_eq(memcmp(g1, g2, np * sizeof(float)), 0, "stride %d: gradients differ", stride);
        free(p), free(xh), free(xc), free(cols), free(z), free(y1), free(y2), free(dy), free(g1), free(g2);
    }
}
