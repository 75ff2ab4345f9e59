/* SPDX-License-Identifier: MIT */
/* env_specs.h: the four bundled environments, for env.c's registry only.
 *
 * Private to envs/: everything outside goes through env_registry / env_find
 * (env.h). Each spec is defined in its own file and is bit-exact with
 * Gymnasium 1.x's classic_control implementation (see docs/ENVIRONMENTS.md).
 */
#ifndef GORILA_ENV_SPECS_H
#define GORILA_ENV_SPECS_H

#include "env.h"

extern const EnvSpec env_cartpole;    /* cartpole.c:    CartPole-v1 */
extern const EnvSpec env_mountaincar; /* mountaincar.c: MountainCar-v0 */
extern const EnvSpec env_acrobot;     /* acrobot.c:     Acrobot-v1 */
extern const EnvSpec env_pendulum;    /* pendulum.c:    Pendulum-v1 (discrete torque set) */

/* Pendulum's default discrete torque set, {-2, 0, 2}. */
#define ENV_PENDULUM_DEFAULT_TORQUES 3

#endif
