/* SPDX-License-Identifier: MIT */
/* qnet.h: the Q-network, optional convolution layers, then an MLP with
 * ReLU hidden layers and an optional dueling head, as math on one flat
 * float32 parameter array.
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
 *   conv.0.weight     (F0, C, K0, K0) conv.0.bias     (F0)      n_conv > 0
 *   conv.1.weight     (F1, F0, K1, K1) conv.1.bias    (F1)
 *   ...
 *   hidden.0.weight   (O', H0)        hidden.0.bias   (H0)
 *   hidden.1.weight   (H0, H1)        hidden.1.bias   (H1)
 *   ...
 *   head.weight       (Hlast, K)      head.bias       (K)
 *
 * K = A for the plain head. With dueling K = A + 1: columns 0 .. A-1 (and
 * bias entries 0 .. A-1) are the advantage stream, column A the value
 * stream, and Q(s, a) = V(s) + Adv(s, a) - mean_a' Adv(s, a').
 * With no hidden layers Hlast = O' (a linear Q-function). Each layer's
 * weights and bias are adjacent, so layer l owns one contiguous range.
 *
 * Convolutions (agents/conv.h) are PyTorch's nn.Conv2d with valid padding,
 * each followed by a ReLU, with its (out, in, kh, kw) weights. An
 * observation row of O = H*W*C floats is a stack of C planes stored
 * (H, W, C), as MinAtar gives them; the first layer reads it as (C, H, W),
 * what dqn.py's permute does. The last conv layer's output (F, OH, OW) is
 * flattened in that order, PyTorch's, into O' = F*OH*OW inputs of
 * hidden.0 (or of the head). Without convs O' = O.
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

#include "conv.h"
#include "rng.h"

#define QNET_MAX_HIDDEN 8
#define QNET_MAX_CONV 4
#define QNET_MAX_LINEAR (QNET_MAX_HIDDEN + 1)
#define QNET_MAX_VIEWS (2 * (QNET_MAX_LINEAR + QNET_MAX_CONV))
#define QNET_NAME_LEN 32

/* One convolution layer of the spec (network.conv[i]). */
typedef struct {
    int filters;                  /* F >= 1 */
    int kernel;                   /* K: square, 1 .. the input's height and width */
    int stride;                   /* >= 1 */
} QNetConvSpec;

/* What the trainer maps its config onto. */
typedef struct {
    int obs_dim;                  /* O >= 1 */
    int n_actions;                /* A >= 1 */
    int n_hidden;                 /* hidden layers, 0 .. QNET_MAX_HIDDEN */
    int hidden[QNET_MAX_HIDDEN];  /* widths H0 .. H(n_hidden-1), each >= 1 */
    bool dueling;
    /* Observation planes (H, W, C), in_h * in_w * in_c == obs_dim; all 0
     * for a vector observation. Required when n_conv > 0. */
    int in_h, in_w, in_c;
    int n_conv;                   /* conv layers before the MLP, 0 .. QNET_MAX_CONV */
    QNetConvSpec conv[QNET_MAX_CONV];
} QNetSpec;

/* A named view into the flat array: params[offset .. offset + rows*cols).
 * rows and cols: a linear weight (in, out), a bias (n, 1), a conv weight
 * (F, C*K*K). dims[0 .. ndim) is the tensor's own shape, for export:
 * (in, out), (n), or (F, C, K, K); unused dims are 0. */
typedef struct {
    char name[QNET_NAME_LEN];
    size_t offset, rows, cols;
    int ndim;
    size_t dims[4];
} QNetView;

/* One linear layer y = x W + b: W at w_off (in, out), b at b_off (out). */
typedef struct {
    int in, out;
    size_t w_off, b_off;
} QNetLinear;

typedef struct {
    QNetSpec spec;
    int n_conv;                         /* spec.n_conv */
    ConvLayer conv[QNET_MAX_CONV];      /* layer 0 reads the (H, W, C) rows */
    int n_linear;                       /* n_hidden + 1; the last is the head */
    QNetLinear lin[QNET_MAX_LINEAR];
    int n_views;
    QNetView views[QNET_MAX_VIEWS];     /* in layout order, tiling [0, n_params) */
    size_t n_params;
    int max_width;                      /* widest linear layer input or output, or conv output */
    size_t max_cols, max_z;             /* conv scratch per row: im2col columns, F*P */
} QNet;

/* Activations and scratch for batches of up to max_batch rows. Allocated in
 * qnet_work_init (one block); forward and backward never allocate. */
typedef struct {
    int max_batch;
    float *act[QNET_MAX_HIDDEN];  /* (max_batch, H_l) post-ReLU outputs */
    float *head;                  /* (max_batch, A+1) dueling head output */
    float *dbuf[2];               /* (max_batch, max_width) backward deltas */
    float *zeros;                 /* (max_width) zeros, padding for the first layer */
    float *conv_act[QNET_MAX_CONV]; /* (max_batch, F*P) post-ReLU conv outputs */
    float *cols;                  /* (max_batch * max_cols) im2col scratch */
    float *z;                     /* (max_batch * max_z) conv pre-activations / dZ */
    float *mem;                   /* the one allocation behind the views */
} QNetWork;

/* Check spec and fill net (shape, layout, views). Returns 0, or -1 with a
 * message in err (ERR_LEN bytes) when a size is out of range: among them a
 * conv kernel larger than its input, stride 0, more than QNET_MAX_CONV
 * layers, planes that do not multiply to obs_dim. */
int qnet_init(QNet *net, const QNetSpec *spec, char *err);

/* The view called name, or NULL. */
const QNetView *qnet_view(const QNet *net, const char *name);

/* Fill params (n_params) like PyTorch's nn.Linear and nn.Conv2d defaults:
 * weights and biases of a layer with fan_in inputs (C*K*K for a conv) ~
 * U(-1/sqrt(fan_in), 1/sqrt(fan_in)), drawn in layout order from rng. */
void qnet_init_params(const QNet *net, float *params, Rng *rng);

/* Floats qnet_work_init allocates for max_batch rows (for memory plans). */
size_t qnet_work_floats(const QNet *net, int max_batch);
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
 * The input gradient of the first layer (conv layer 0 when there are
 * convs) is not computed. */
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
 * weight gradients of every layer, conv and linear, input gradients of all
 * but the first). Only the products: im2col, bias and ReLU not counted. */
double qnet_forward_flops(const QNet *net, int B);
double qnet_backward_flops(const QNet *net, int B);

#endif
