/* SPDX-License-Identifier: MIT */
/* env_specs.h: the bundled environments, for env.c's registry only.
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

/* minatar/minatar_env.c (GPL-3.0-or-later, linked only in a build with
 * MINATAR=1, where env.c is compiled with GORILA_MINATAR and registers
 * them): MinAtar/<Game>-v0 (all 6 actions) and -v1 (the minimal action
 * set) for Asterix, Breakout, Freeway, Seaquest and SpaceInvaders, in that
 * order. */
#define ENV_MINATAR_COUNT 10
extern const EnvSpec env_minatar[ENV_MINATAR_COUNT];

/* Pendulum's default discrete torque set, {-2, 0, 2}. */
#define ENV_PENDULUM_DEFAULT_TORQUES 3

#endif
