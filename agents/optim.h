/* SPDX-License-Identifier: MIT */
/* optim.h: first-order optimizers over a contiguous slice of a flat float
 * array, and global-norm gradient clipping.
 *
 * An Optim owns the state for exactly n parameters: a parameter-server
 * shard that owns params[off .. off+len) makes one Optim of n = len and
 * steps it with params + off and grad + off; a learner that applies the
 * whole update makes one of n = n_params. Elementwise rules mean that
 * stepping two halves with two Optims equals stepping the whole with one.
 *
 * Update rules (g = gradient, p = parameter, t = step count after ++):
 *   SGD      buf = momentum * buf + g                       (PyTorch; buf
 *            p  -= lr * buf                                  starts at 0)
 *   Adam     m = beta1 m + (1 - beta1) g                    (PyTorch Adam,
 *            v = beta2 v + (1 - beta2) g g                   no weight decay)
 *            p -= (lr / (1 - beta1^t)) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)
 *            computed as a_t m / (sqrt(v) + eps_t), a_t = lr sqrt(1 - beta2^t)
 *            / (1 - beta1^t), eps_t = eps sqrt(1 - beta2^t) (Kingma & Ba)
 *   RMSProp  ms = alpha ms + (1 - alpha) g g
 *            mg = alpha mg + (1 - alpha) g                  (centered only)
 *            var = ms - mg mg   centered, or ms
 *            s  = sqrt(var + eps)                           (default)
 *            s  = sqrt(max(var, 0)) + eps                   (eps_outside)
 *            buf = momentum buf + g / s,  p -= lr buf       (momentum > 0)
 *            p -= lr g / s                                  (momentum == 0)
 * By default RMSProp puts eps inside the square root, as DQN (Mnih et al.
 * 2015, eps 0.01, alpha 0.95), Gorila and TensorFlow's RMSProp do. Inside,
 * eps is a floor on the variance estimate: it bounds the step by
 * lr |g| / sqrt(eps) even when ms - mg^2 is 0 (a constant gradient) or
 * slightly negative from rounding, and the published Nature DQN
 * hyperparameters (lr 2.5e-4, eps 0.01) assume it there.
 * eps_outside is PyTorch's torch.optim.RMSprop, which MinAtar's dqn.py uses
 * (lr 2.5e-4, alpha 0.95, centered, eps 0.01): there eps only bounds the
 * step by lr |g| / eps, and with eps 0.01 a step where var is small
 * (var << eps^2 = 1e-4) is up to 1/sqrt(eps) = 10 times the inside form's.
 * The max(var, 0) differs from PyTorch only where its centered var rounds
 * below 0 and PyTorch's step is NaN.
 *
 * State (for checkpoints): `step` and the n_state floats at `state`, whose
 * views are, in order:  SGD [buf] (momentum > 0 only); Adam [m, v];
 * RMSProp [ms, mg (centered only), buf (momentum > 0 only)], n floats each.
 * Writing step and state[0 .. n_state) and reading them back restores the
 * optimizer bit for bit.
 */
#ifndef GORILA_OPTIM_H
#define GORILA_OPTIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum { OPTIM_SGD, OPTIM_ADAM, OPTIM_RMSPROP } OptimKind;

typedef struct {
    OptimKind kind;
    float lr;
    float momentum;        /* SGD, RMSProp: 0 for none */
    float beta1, beta2;    /* Adam */
    float alpha;           /* RMSProp decay of the squared-gradient average */
    float eps;             /* Adam: outside the sqrt; RMSProp: inside unless eps_outside */
    bool centered;         /* RMSProp: subtract the squared mean gradient */
    bool eps_outside;      /* RMSProp: PyTorch's form, g / (sqrt(var) + eps); false: g / sqrt(var + eps) */
    /* warm-up (sync.lr_warmup_updates): update t of the first warmup_steps
     * uses lr_from + (lr - lr_from) t / warmup_steps; 0: lr from the first */
    float lr_from;
    uint64_t warmup_steps;
} OptimParams;

typedef struct {
    OptimParams p;
    size_t n;              /* parameters in the slice */
    uint64_t step;         /* updates applied so far */
    size_t n_state;        /* floats in state */
    float *state;          /* views in the order documented above */
} Optim;

/* Defaults: PyTorch's Adam (lr 1e-3, betas 0.9/0.999, eps 1e-8), DQN's
 * RMSProp (lr 2.5e-4, alpha 0.95, eps 0.01, centered, no momentum) and SGD
 * (lr 1e-2, momentum 0.9). */
OptimParams optim_defaults(OptimKind kind);

/* Check hyperparameters: 0, or -1 with a message in err (ERR_LEN). */
int optim_check(const OptimParams *p, char *err);

/* State for n parameters, zeroed, step 0. p must pass optim_check (dies
 * otherwise). */
void optim_init(Optim *o, const OptimParams *p, size_t n);
/* Safe on a zeroed struct. */
void optim_free(Optim *o);

/* One update of params[0 .. n) with grad[0 .. n) (both the slice start;
 * the caller owns them). */
void optim_step(Optim *o, float *params, const float *grad);

/* Euclidean norm of x[0 .. n), accumulated in double in a fixed order. */
double optim_norm(const float *x, size_t n);
/* Sum of squares of x[0 .. n) in double (for norms over pieces). */
double optim_sumsq(const float *x, size_t n);
/* x[0 .. n) *= s. */
void optim_scale(float *x, size_t n, float s);
/* Global-norm clipping like torch.nn.utils.clip_grad_norm_: with
 * c = max_norm / (norm + 1e-6), scale g by c when c < 1. Returns the norm
 * before clipping. max_norm <= 0 means no clipping (the norm is still
 * returned). */
double optim_clip_norm(float *g, size_t n, double max_norm);

#endif
