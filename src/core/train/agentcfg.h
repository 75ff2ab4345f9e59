/* SPDX-License-Identifier: MIT */
/* agentcfg.h: the one place where the config's agent, network and optimizer
 * sections become the plain parameter structs of agents/ (which know
 * nothing of Config), plus the small rules every trainer shares: the
 * samples-per-insert ratio and the target-network schedule. */
#ifndef GORILA_AGENTCFG_H
#define GORILA_AGENTCFG_H

#include <stdint.h>

#include "config.h"
#include "dqn.h"
#include "env.h"
#include "optim.h"
#include "qnet.h"

/* Network shape for the config's env (actions: the env's, or Pendulum's
 * torque count) and network section. Returns 0 or -1 with err. */
int agentcfg_qnet(const Config *cfg, QNet *net, char *err);

void agentcfg_dqn_params(const Config *cfg, DqnParams *p);
/* The optimizer of an update: optimizer.*, the rate times
 * agentcfg_lr_scale (reached over sync.lr_warmup_updates from the unscaled
 * rate). */
void agentcfg_optim_params(const Config *cfg, OptimParams *p);
/* sync.lr_scaling's factor: L (linear) or sqrt(L) (sqrt) for L =
 * roles.learners in a distributed ps_sync or allreduce job, whose update
 * averages the L learners' gradients; 1 otherwise (none, the asynchronous
 * modes, a local run). */
double agentcfg_lr_scale(const Config *cfg);

/* Samples drawn per transition inserted: replay.samples_per_insert, or when
 * that is 0, batch_size * gradient_steps / train_every (what the
 * single-process trainer does), so local and distributed runs of one config
 * learn from the same data ratio. */
double agentcfg_samples_per_insert(const Config *cfg);

/* Target-network rule after optimizer step number `step` (1-based) on a
 * slice of n floats: hard copy when step % target_every == 0, soft update
 * every step. Returns true when the target changed. */
bool agentcfg_target_update(const Config *cfg, uint64_t step, float *target, const float *online, size_t n);

/* One batch's DQN loss and gradient (dqn_loss_grad; |td| per row into td
 * when td is not NULL), the gradient clipped to optimizer.grad_clip (global
 * norm). what (AGENTCFG_WHAT_LEN bytes) gets "" or, when training has
 * diverged, what went non-finite, checked in this order: "loss is nan",
 * "gradient norm is inf", "a |td| of the batch is not finite". Returns the
 * loss. What the local trainer and a learner do per batch. */
enum { AGENTCFG_WHAT_LEN = 64 };
double agentcfg_loss_grad(const Config *cfg, Dqn *dqn, const QNet *net, const DqnParams *dp, const float *params,
                          const float *target, const Batch *b, float *grad, float *td, char *what);
/* The same with the gradient clipped to clip (0: not clipped): a learner of
 * learner.batch global clips only the averaged gradient. */
double agentcfg_loss_grad_clip(Dqn *dqn, const QNet *net, const DqnParams *dp, const float *params, const float *target,
                               const Batch *b, float *grad, float *td, double clip, char *what);
/* Gradient accumulation (learner.accumulate K): a learner computes K
 * mini-batch gradients unclipped at the same parameters and syncs their
 * mean, clipped, once. agentcfg_grad_accumulate adds part (n) into sum (n);
 * k is the number of parts already in sum (0: sum is overwritten with
 * part). agentcfg_grad_mean_clip writes into out (n) the mean of the k
 * parts, sum * (1/k), clipped to clip by its global norm (0: not clipped;
 * out may be sum); returns that norm before clipping (finite exactly when
 * every element is). Each part's loss is a mean over its rows, so for K
 * equal batches this is the gradient of the K*B-row batch, clipped, up to
 * summation order. */
void agentcfg_grad_accumulate(float *sum, const float *part, size_t n, int k);
double agentcfg_grad_mean_clip(float *out, const float *sum, size_t n, int k, double clip);
/* The rows one learner samples per gradient: replay.batch_size, or with
 * learner.batch global in a distributed job its 1/L share (the check makes
 * sure L divides it). */
int agentcfg_learner_batch(const Config *cfg);

/* The advice every "training diverged" message ends with, into out:
 * "lower optimizer.lr (now 0.001) or optimizer.grad_clip (now 10, 0 = off)". */
enum { AGENTCFG_HINT_LEN = 128 };
void agentcfg_diverge_hint(const Config *cfg, char *out);

/* Exploration rate after env_steps steps of an actor (linear schedule), or
 * Ape-X's per-actor constant eps_i for actor i of n. */
double agentcfg_epsilon(const Config *cfg, uint64_t env_steps, int actor, int n_actors);

/* Batch storage: one allocation behind the views of a Batch of `rows` rows
 * of obs_dim floats (n starts at 0). */
void agentcfg_batch_init(Batch *b, int rows, int obs_dim);
void agentcfg_batch_free(Batch *b);

#endif
