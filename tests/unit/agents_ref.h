/* SPDX-License-Identifier: MIT */
/* agents_ref.h: double-precision references shared by test_qnet.c and
 * test_dqn.c. Written from the definitions in qnet.h and dqn.h (layout
 * offsets, W (in, out), ReLU MLP, convs, dueling combination, Huber), independently of the
 * float kernels, so finite differences on them are accurate to ~1e-9. */
#ifndef GORILA_TESTS_AGENTS_REF_H
#define GORILA_TESTS_AGENTS_REF_H

#include <math.h>
#include <stdlib.h>

#include "qnet.h"
#include "rng.h"

/* The conv layers of one row in double, from conv.h's definition:
 * out[f][oy][ox] = relu(b[f] + sum W[f][c][ky][kx] in[c][oy s + ky][ox s + kx]),
 * the first layer's input the (H, W, C) row read as (C, H, W). Writes the
 * flattened (F, OH, OW) output into out (at most 1024 values); returns its size. */
static inline int ref_conv_row(const QNet *net, const double *theta, const float *x, double *out) {
    double in[1024], cur[1024];
    const QNetSpec *s = &net->spec;
    int C = s->in_c, H = s->in_h, W = s->in_w, n = s->obs_dim;
    for (int c = 0; c < C; c++) /* (H, W, C) -> (C, H, W) */
        for (int y = 0; y < H; y++)
            for (int z = 0; z < W; z++) in[(c * H + y) * W + z] = x[(y * W + z) * C + c];
    for (int i = 0; i < net->n_conv; i++) {
        const ConvLayer *L = &net->conv[i];
        int K = L->k, st = L->stride, OH = (H - K) / st + 1, OW = (W - K) / st + 1;
        for (int f = 0; f < L->out_c; f++)
            for (int oy = 0; oy < OH; oy++)
                for (int ox = 0; ox < OW; ox++) {
                    double z = theta[L->b_off + (size_t)f];
                    for (int c = 0; c < C; c++)
                        for (int ky = 0; ky < K; ky++)
                            for (int kx = 0; kx < K; kx++)
                                z += theta[L->w_off + (((size_t)f * C + c) * K + ky) * K + kx] *
                                     in[(c * H + oy * st + ky) * W + ox * st + kx];
                    cur[(f * OH + oy) * OW + ox] = z < 0 ? 0.0 : z;
                }
        C = L->out_c, H = OH, W = OW, n = C * H * W;
        for (int k = 0; k < n; k++) in[k] = cur[k];
    }
    for (int k = 0; k < n; k++) out[k] = in[k];
    return n;
}

/* q (A) = Q(x) for one row, all in double. */
static inline void ref_q_row(const QNet *net, const double *theta, const float *x, double *q) {
    double buf[2][1024];
    int O = net->spec.obs_dim, A = net->spec.n_actions, L = net->n_linear;
    if (net->n_conv)
        ref_conv_row(net, theta, x, buf[0]);
    else
        for (int k = 0; k < O; k++) buf[0][k] = x[k];
    int cur = 0;
    for (int l = 0; l < L; l++) {
        const QNetLinear *lin = &net->lin[l];
        for (int j = 0; j < lin->out; j++) {
            double s = theta[lin->b_off + (size_t)j];
            for (int k = 0; k < lin->in; k++) s += theta[lin->w_off + (size_t)k * lin->out + j] * buf[cur][k];
            buf[1 - cur][j] = (l < L - 1 && s < 0) ? 0.0 : s;
        }
        cur = 1 - cur;
    }
    const double *h = buf[cur];
    if (!net->spec.dueling) {
        for (int a = 0; a < A; a++) q[a] = h[a];
        return;
    }
    double mean = 0;
    for (int a = 0; a < A; a++) mean += h[a];
    mean /= A;
    for (int a = 0; a < A; a++) q[a] = h[A] + h[a] - mean;
}

static inline double *ref_theta(const QNet *net, const float *params) {
    double *t = malloc(net->n_params * sizeof(double));
    for (size_t i = 0; i < net->n_params; i++) t[i] = params[i];
    return t;
}

/* Random floats in [lo, hi). */
static inline void ref_fill(float *x, size_t n, Rng *r, double lo, double hi) {
    for (size_t i = 0; i < n; i++) x[i] = (float)rng_uniform_range(r, lo, hi);
}

#endif
