/* prioinit.h: the initial priority of new transitions from the acting
 * network's own TD error (replay.initial_priority: actor, as Ape-X's
 * actors do), shared by the local trainer and the distributed actor. No
 * MPI, no allocation after init.
 *
 * For row i of a batch of new transitions (agents/batch.h: n-step reward
 * and termination already folded into reward and discount):
 *   target_i = reward_i + discount_i * max_a Q(next_obs_i, a)
 *              (exactly reward_i when discount_i == 0, as in agents/dqn.h)
 *   td_abs_i = |target_i - Q(obs_i, action_i)|
 * with Q the network the actor acts with (it has no target network), in
 * one batched forward over obs and next_obs together (2B rows).
 */
#ifndef GORILA_PRIOINIT_H
#define GORILA_PRIOINIT_H

#include "batch.h"
#include "qnet.h"

/* Buffers for batches of up to max_rows rows. */
typedef struct {
    int max_rows;
    QNetWork work;  /* 2 * max_rows rows */
    float *x2;      /* (2B, O) obs then next_obs */
    float *q2;      /* (2B, A) Q of obs then of next_obs */
    float *mem;     /* the one allocation behind x2 and q2 */
} PrioInit;

/* max_rows >= 1; dies if the memory is not there. */
void prioinit_init(PrioInit *pi, const QNet *net, int max_rows);
/* Safe on a zeroed struct and twice. */
void prioinit_free(PrioInit *pi);

/* td_abs[i] = |TD error| of row i of rows (above) under params (n_params).
 * rows->n in [0, max_rows] (0 does nothing), rows->obs_dim the network's,
 * actions in range (asserted). td_abs: (rows->n), written; a row whose Q
 * values are not finite gives a non-finite td_abs, which the caller treats
 * as a divergence. */
void prio_actor_td(PrioInit *pi, const QNet *net, const float *params, const Batch *rows, float *td_abs);

#endif
