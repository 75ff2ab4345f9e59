/* SPDX-License-Identifier: MIT */
/* pendulum.c: Pendulum-v1, Gymnasium's PendulumEnv in C, with a discrete
 * torque set so that DQN can drive it.
 *
 * Reference: gymnasium/envs/classic_control/pendulum.py (Gymnasium 1.x,
 * commit 9e061130, see docs/ENVIRONMENTS.md). Action i applies the float64
 * torque e->torques[i] (default {-2, 0, 2}; EnvOptions can set up to
 * ENV_MAX_ACTIONS), which goes through Gymnasium's step() unchanged:
 *   u = np.clip(u, -max_torque, max_torque)[0]
 *   costs = angle_normalize(th) ** 2 + 0.1 * thdot**2 + 0.001 * (u**2)
 *   newthdot = thdot + (3 * g / (2 * l) * np.sin(th) + 3.0 / (m * l**2) * u) * dt
 *   newthdot = np.clip(newthdot, -max_speed, max_speed)
 *   newth = th + newthdot * dt
 * Bit-exactness notes: `**2` on a float64 is pow(v, 2) (not v * v; see
 * acrobot.c); angle_normalize's `%` is Python/numpy's floored modulo, not
 * C's fmod: fmod, then + 2pi when the remainder is negative, +0.0 when it
 * is zero. l**2 = 1 is exact, so 3.0 / (m * l**2) is written with l * l.
 *
 * State (float64): theta, theta_dot. Observation (float32): cos theta,
 * sin theta, theta_dot. Reward -costs. Never terminates (only the 200-step
 * time limit ends an episode). Gymnasium registers no reward threshold for
 * Pendulum-v1; -200 is the project's "solved" bar for the discrete torque
 * set (see docs/ENVIRONMENTS.md).
 */
#include "env_specs.h"

#include <math.h>

static const double max_speed = 8;
static const double max_torque = 2.0;
static const double dt = 0.05;
static const double g = 10.0;
static const double m = 1.0;
static const double l = 1.0;

/* ((x + np.pi) % (2 * np.pi)) - np.pi with numpy's remainder (npy_divmod). */
static double angle_normalize(double x) {
    double a = x + M_PI, b = 2 * M_PI;
    double mod = fmod(a, b);
    if (mod != 0) {
        if ((b < 0) != (mod < 0)) mod += b;
    } else {
        mod = copysign(0.0, b);
    }
    return mod - M_PI;
}

/* np.clip on a float64 scalar: max first, then min. */
static double clip(double x, double lo, double hi) {
    x = x > lo ? x : lo;
    return x < hi ? x : hi;
}

static void pendulum_reset_state(Env *e) {
    /* np_random.uniform(low=[-pi, -1], high=[pi, 1]) */
    e->state[0] = rng_uniform_range(&e->rng, -M_PI, M_PI);
    e->state[1] = rng_uniform_range(&e->rng, -1.0, 1.0);
}

static EnvStep pendulum_dynamics(Env *e, int action) {
    double th = e->state[0], thdot = e->state[1];
    double u = clip(e->torques[action], -max_torque, max_torque);
    double costs = pow(angle_normalize(th), 2) + 0.1 * pow(thdot, 2) + 0.001 * pow(u, 2);

    double newthdot = thdot + (3 * g / (2 * l) * sin(th) + 3.0 / (m * (l * l)) * u) * dt;
    newthdot = clip(newthdot, -max_speed, max_speed);
    double newth = th + newthdot * dt;
    e->state[0] = newth;
    e->state[1] = newthdot;

    EnvStep r = {.reward = -costs, .terminated = false};
    return r;
}

static void pendulum_observe(const Env *e, float *obs) {
    obs[0] = (float)cos(e->state[0]);
    obs[1] = (float)sin(e->state[0]);
    obs[2] = (float)e->state[1];
}

/* Gymnasium's observation_space: +-[1, 1, max_speed], float32. */
static const float obs_high[3] = {1, 1, 8};
static const float obs_low[3] = {-1, -1, -8};

const EnvSpec env_pendulum = {
    .name = "Pendulum-v1",
    .obs_dim = 3,
    .num_actions = ENV_PENDULUM_DEFAULT_TORQUES,
    .state_dim = 2,
    .max_episode_steps = 200,
    .options = ENV_TAKES_TORQUES,
    .reward_threshold = -200.0,
    .reset_state = pendulum_reset_state,
    .dynamics = pendulum_dynamics,
    .observe = pendulum_observe,
    .obs_low = obs_low,
    .obs_high = obs_high,
};
