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
void agentcfg_optim_params(const Config *cfg, OptimParams *p);

/* Samples drawn per transition inserted: replay.samples_per_insert, or when
 * that is 0, batch_size * gradient_steps / train_every (what the
 * single-process trainer does), so local and distributed runs of one config
 * learn from the same data ratio. */
double agentcfg_samples_per_insert(const Config *cfg);

/* Target-network rule after optimizer step number `step` (1-based) on a
 * slice of n floats: hard copy when step % target_every == 0, soft update
 * every step. Returns true when the target changed. */
bool agentcfg_target_update(const Config *cfg, uint64_t step, float *target, const float *online, size_t n);

/* Exploration rate after env_steps steps of an actor (linear schedule), or
 * Ape-X's per-actor constant eps_i for actor i of n. */
double agentcfg_epsilon(const Config *cfg, uint64_t env_steps, int actor, int n_actors);

/* Batch storage: one allocation behind the views of a Batch of `rows` rows
 * of obs_dim floats (n starts at 0). */
void agentcfg_batch_init(Batch *b, int rows, int obs_dim);
void agentcfg_batch_free(Batch *b);

#endif
