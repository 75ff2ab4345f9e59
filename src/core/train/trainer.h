/* SPDX-License-Identifier: MIT */
/* trainer.h: single-process training (run.mode: local). Actor, replay,
 * learner and optimizer in one loop, built from the same components the
 * distributed roles use (actorcore, replaybuf, dqn, optim, evaluator,
 * runlog), so that a local run is the reference a distributed run of the
 * same config is compared with.
 *
 * The loop, per iteration:
 *   1. actorcore_step: actor.envs environments step once (epsilon from the
 *      linear schedule over env steps), transitions go into the replay ring;
 *   2. once replay holds replay.min_size transitions, every
 *      agent.train_every env steps, agent.gradient_steps updates: sample a
 *      uniform batch, DQN loss and gradient, global-norm clip, optimizer
 *      step, target update (hard every target_every steps, or soft);
 *   3. every eval.every_updates updates a greedy evaluation; reaching the
 *      env's reward threshold marks the run solved (and stops it when
 *      run.stop_when_solved);
 *   4. a metrics row every logging.metrics_every_env_steps env steps (or
 *      metrics_every_updates updates, and at least every interval_seconds;
 *      with logging.tensorboard also an event in tb/), checkpoints on their
 *      schedule or on SIGUSR1; stop on budget, time limit or SIGINT/SIGTERM.
 * The schedules, the stop decision, the rates and the progress line are
 * runctl.h's, shared with the coordinator of a distributed job.
 */
#ifndef GORILA_TRAINER_H
#define GORILA_TRAINER_H

#include "config.h"

/* Train cfg in this process. resume_dir: a run directory to continue from
 * its last checkpoint, or NULL. Returns the process exit status (0 done,
 * 1 failure); errors are printed. */
int trainer_run(const Config *cfg, const char *resume_dir);

#endif
