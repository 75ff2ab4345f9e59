/* SPDX-License-Identifier: MIT */
/* qnet.h: the Q-network, an MLP with ReLU hidden layers and an optional
 * dueling head, as math on one flat float32 parameter array.
 *
 * A QNet is only a shape: it owns no memory. The parameters live in one
 * contiguous float array of net->n_params floats that the caller owns
 * (learner, parameter-server shard, actor, checkpoint), so that shards and
 * allreduce blocks are plain contiguous ranges of it. Gradients, optimizer
 * moments and the target network use the same layout.
 *
 * Layout, in this order (row-major matrices; a linear layer computes
 * y = x W + b with W stored (in, out), the JAX/Flax and Keras kernel
 * convention; PyTorch's nn.Linear.weight is the transpose, W^T (out, in)):
 *
 *   hidden.0.weight   (O, H0)         hidden.0.bias   (H0)
 *   hidden.1.weight   (H0, H1)        hidden.1.bias   (H1)
 *   ...
 *   head.weight       (Hlast, K)      head.bias       (K)
 *
 * K = A for the plain head. With dueling K = A + 1: columns 0 .. A-1 (and
 * bias entries 0 .. A-1) are the advantage stream, column A the value
 * stream, and Q(s, a) = V(s) + Adv(s, a) - mean_a' Adv(s, a').
 * With no hidden layers Hlast = O (a linear Q-function). Each layer's
 * weights and bias are adjacent, so layer l owns one contiguous range.
 *
 * Shape letters: B batch, O obs_dim, A actions, H hidden width.
 * Every function here is deterministic: the same inputs give bit-identical
 * outputs (OpenBLAS must run single-threaded for its part of that).
 */
#ifndef GORILA_QNET_H
#define GORILA_QNET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rng.h"

#define QNET_MAX_HIDDEN 8
#define QNET_MAX_LINEAR (QNET_MAX_HIDDEN + 1)
#define QNET_MAX_VIEWS (2 * QNET_MAX_LINEAR)
#define QNET_NAME_LEN 32

/* What the trainer maps its config onto. */
typedef struct {
    int obs_dim;                  /* O >= 1 */
    int n_actions;                /* A >= 1 */
    int n_hidden;                 /* hidden layers, 0 .. QNET_MAX_HIDDEN */
    int hidden[QNET_MAX_HIDDEN];  /* widths H0 .. H(n_hidden-1), each >= 1 */
    bool dueling;
} QNetSpec;

/* A named view into the flat array: params[offset .. offset + rows*cols). */
typedef struct {
    char name[QNET_NAME_LEN];
    size_t offset, rows, cols;
} QNetView;

/* One linear layer y = x W + b: W at w_off (in, out), b at b_off (out). */
typedef struct {
    int in, out;
    size_t w_off, b_off;
} QNetLinear;

typedef struct {
    QNetSpec spec;
    int n_linear;                       /* n_hidden + 1; the last is the head */
    QNetLinear lin[QNET_MAX_LINEAR];
    int n_views;
    QNetView views[QNET_MAX_VIEWS];     /* in layout order, tiling [0, n_params) */
    size_t n_params;
    int max_width;                      /* widest layer input or output */
} QNet;

/* Activations and scratch for batches of up to max_batch rows. Allocated in
 * qnet_work_init (one block); forward and backward never allocate. */
typedef struct {
    int max_batch;
    float *act[QNET_MAX_HIDDEN];  /* (max_batch, H_l) post-ReLU outputs */
    float *head;                  /* (max_batch, A+1) dueling head output */
    float *dbuf[2];               /* (max_batch, max_width) backward deltas */
    float *zeros;                 /* (max_width) zeros, padding for the first layer */
    float *mem;                   /* the one allocation behind the views */
} QNetWork;

/* Check spec and fill net (shape, layout, views). Returns 0, or -1 with a
 * message in err (ERR_LEN bytes) when a size is out of range. */
int qnet_init(QNet *net, const QNetSpec *spec, char *err);

/* The view called name, or NULL. */
const QNetView *qnet_view(const QNet *net, const char *name);

/* Fill params (n_params) like PyTorch's nn.Linear default: weights and
 * biases of a layer with fan_in inputs ~ U(-1/sqrt(fan_in), 1/sqrt(fan_in)),
 * drawn in layout order from rng. */
void qnet_init_params(const QNet *net, float *params, Rng *rng);

/* Workspace for batches of up to max_batch (>= 1) rows; dies on OOM. */
void qnet_work_init(QNetWork *w, const QNet *net, int max_batch);
/* Safe on a zeroed struct and twice in a row. */
void qnet_work_free(QNetWork *w);

/* q = Q(obs) for B rows (1 <= B <= w->max_batch; dies otherwise).
 * params: (n_params), obs: (B, O), q: (B, A) written. The activations stay
 * in w for qnet_backward. */
void qnet_forward(const QNet *net, const float *params, const float *obs, int B, float *q,
                  QNetWork *w);

/* Given dq = dL/dQ (B, A), write grad = dL/dparams (all n_params, not
 * accumulated). Uses the activations of the first B rows of the last
 * qnet_forward on w, which must have run on the same params with obs as its
 * first B rows (a forward over more rows is fine: only the first B count).
 * The input gradient of the first layer is not computed. */
void qnet_backward(const QNet *net, const float *params, const float *obs, const float *dq,
                   int B, float *grad, QNetWork *w);

/* Naive reference versions (plain loops, double accumulation), for tests.
 * Same contracts as above; they share the workspace. */
void qnet_forward_ref(const QNet *net, const float *params, const float *obs, int B, float *q,
                      QNetWork *w);
void qnet_backward_ref(const QNet *net, const float *params, const float *obs, const float *dq,
                       int B, float *grad, QNetWork *w);

/* out[i] = argmax_a q[i, a] for B rows; ties go to the lowest index; NaN
 * loses to any number (an all-NaN row gives 0). q: (B, A), out: (B). */
void qnet_argmax(const float *q, int B, int A, int32_t *out);

/* FLOPs (multiply and add counted separately) of a forward over B rows and
 * of a backward over B rows, as this implementation does them (backward:
 * weight gradients of every layer, input gradients of all but the first). */
double qnet_forward_flops(const QNet *net, int B);
double qnet_backward_flops(const QNet *net, int B);

#endif
