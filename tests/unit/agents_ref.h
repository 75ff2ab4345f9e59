/* SPDX-License-Identifier: MIT */
/* agents_ref.h: double-precision references shared by test_qnet.c and
 * test_dqn.c. Written from the definitions in qnet.h and dqn.h (layout
 * offsets, W (in, out), ReLU MLP, dueling combination, Huber), independently of the
 * float kernels, so finite differences on them are accurate to ~1e-9. */
#ifndef GORILA_TESTS_AGENTS_REF_H
#define GORILA_TESTS_AGENTS_REF_H

#include <math.h>
#include <stdlib.h>

#include "qnet.h"
#include "rng.h"

/* q (A) = Q(x) for one row, all in double. */
static inline void ref_q_row(const QNet *net, const double *theta, const float *x, double *q) {
    double buf[2][512];
    int O = net->spec.obs_dim, A = net->spec.n_actions, L = net->n_linear;
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
