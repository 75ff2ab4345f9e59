/* SPDX-License-Identifier: MIT */
/* dqn.h: the DQN loss and its gradient for one Batch, and the target
 * network updates.
 *
 * For row i of a Batch (see batch.h: n-step rewards and terminations are
 * already folded into reward and discount):
 *   a*_i  = argmax_a Q_online(next_obs_i, a)   double DQN
 *         = argmax_a Q_target(next_obs_i, a)   otherwise (ties: lowest a)
 *   y_i   = reward_i + discount_i * Q_target(next_obs_i, a*_i)
 *           (exactly reward_i when discount_i == 0: no bootstrap, so a
 *           non-finite target Q after a termination cannot leak in)
 *   td_i  = Q_online(obs_i, action_i) - y_i
 *   loss  = (1/B) sum_i weight_i * huber(td_i)
 *   huber(x) = x^2 / 2                 for |x| <= delta
 *            = delta (|x| - delta / 2)  otherwise
 * The gradient is taken with respect to the online parameters only (y is a
 * constant): dL/dQ(obs_i, action_i) = weight_i * clamp(td_i, -delta, delta) / B.
 *
 * Cost of one call: one target forward over B rows, one online forward over
 * 2B rows (obs and next_obs in one pass; B rows without double DQN), one
 * backward over B rows.
 */
#ifndef GORILA_DQN_H
#define GORILA_DQN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "batch.h"
#include "qnet.h"

typedef struct {
    bool double_dqn;     /* a* from the online network (van Hasselt et al. 2016) */
    float huber_delta;   /* > 0; use a huge value for a plain squared loss */
} DqnParams;

/* Buffers for batches of up to max_batch rows; after dqn_loss_grad the
 * per-row views y, td and a_next hold that call's targets, TD errors and
 * bootstrap actions (B rows each). */
typedef struct {
    int max_batch;
    QNetWork work;       /* 2 * max_batch rows: online forward on obs, next_obs */
    float *x2;           /* (2B, O) obs then next_obs, one gemm's input */
    float *q2;           /* (2B, A) online Q of obs then of next_obs */
    float *qt;           /* (B, A) target Q of next_obs */
    float *dq;           /* (B, A) dL/dQ */
    float *y;            /* (B) targets */
    float *td;           /* (B) td errors Q_online(obs, action) - y */
    int32_t *a_next;     /* (B) a* */
    float *mem;          /* the one float allocation behind the views */
} Dqn;

/* Dies on max_batch < 1 or out of memory. */
void dqn_init(Dqn *d, const QNet *net, int max_batch);
/* Safe on a zeroed struct. */
void dqn_free(Dqn *d);

/* Check p: 0, or -1 with a message in err (ERR_LEN). */
int dqn_check(const DqnParams *p, char *err);

/* The loss above for batch b; writes grad (n_params, overwritten) with the
 * gradient with respect to online, and td_abs (B) with |td_i| if non-NULL.
 * online and target: (n_params) flat parameters (they may be the same
 * array). Every array of b must be set (weight all 1 for uniform replay).
 * d's buffers are reused: one Dqn per thread. Returns the loss. Dies when b->n is not in [1, max_batch], when
 * b->obs_dim differs from the network's, or when an action is out of range:
 * those are bugs upstream. */
double dqn_loss_grad(Dqn *d, const QNet *net, const DqnParams *p, const float *online, const float *target,
                     const Batch *b, float *grad, float *td_abs);

/* The Huber function above and its derivative clamp(x, -delta, delta). */
float dqn_huber(float x, float delta);
float dqn_huber_grad(float x, float delta);

/* Target network updates on a slice of n floats (the caller passes
 * target + off and online + off, e.g. a parameter-server shard):
 * hard: target = online; soft: target = (1 - tau) target + tau online,
 * so tau = 1 is an exact copy and tau = 0 leaves target alone. */
void dqn_target_hard(float *target, const float *online, size_t n);
void dqn_target_soft(float *target, const float *online, size_t n, float tau);

#endif
