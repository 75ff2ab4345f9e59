/* SPDX-License-Identifier: MIT */
/* cartpole.c: CartPole-v1, Gymnasium's CartPoleEnv in C.
 *
 * Reference: gymnasium/envs/classic_control/cartpole.py (Gymnasium 1.x,
 * commit 4b96acf5, see docs/ENVIRONMENTS.md). Every expression below keeps
 * Gymnasium's operands and Python's left-to-right evaluation order, so that
 * from the same float64 state the next state is bit-identical:
 *   - np.square(v) is v * v (numpy's square loop multiplies; not pow);
 *   - np.cos/np.sin on a float64 scalar are the C library's cos/sin when
 *     numpy does not dispatch them to SIMD code (see ENVIRONMENTS.md);
 *   - constants are computed as __init__ computes them (total_mass =
 *     masspole + masscart, not the literal 1.1).
 * Integrator: explicit Euler (kinematics_integrator = "euler").
 *
 * State (float64): x, x_dot, theta, theta_dot. Observation: the same four,
 * rounded to float32. Actions: 0 push left, 1 push right.
 * Reward 1 per step, the terminating step included; a step taken after the
 * episode terminated earns 0 (Gymnasium's steps_beyond_terminated).
 */
#include "env_specs.h"

#include <float.h>
#include <math.h>

static const double gravity = 9.8;
static const double masspole = 0.1;
static const double total_mass = 0.1 + 1.0;      /* masspole + masscart (1.0) */
static const double length = 0.5;                /* half the pole's length */
static const double polemass_length = 0.1 * 0.5; /* masspole * length */
/* force = force_mag if action == 1 else -force_mag, as a table: a random
 * action would mispredict a branch half the time. */
static const double force_of_action[2] = {-10.0, 10.0}; /* {-force_mag, force_mag} */
static const double tau = 0.02;
static const double theta_threshold_radians = 12 * 2 * M_PI / 360;
static const double x_threshold = 2.4;

static void cartpole_reset_state(Env *e) {
    /* np_random.uniform(low=-0.05, high=0.05, size=(4,)) */
    for (int i = 0; i < 4; i++) e->state[i] = rng_uniform_range(&e->rng, -0.05, 0.05);
}

static EnvStep cartpole_dynamics(Env *e, int action) {
    double *s = e->state;
    double x = s[0], x_dot = s[1], theta = s[2], theta_dot = s[3];
    double force = force_of_action[action];
    double costheta = cos(theta);
    double sintheta = sin(theta);

    double temp = (force + polemass_length * (theta_dot * theta_dot) * sintheta) / total_mass;
    double thetaacc =
        (gravity * sintheta - costheta * temp) / (length * (4.0 / 3.0 - masspole * (costheta * costheta) / total_mass));
    double xacc = temp - polemass_length * thetaacc * costheta / total_mass;

    x = x + tau * x_dot;
    x_dot = x_dot + tau * xacc;
    theta = theta + tau * theta_dot;
    theta_dot = theta_dot + tau * thetaacc;
    s[0] = x;
    s[1] = x_dot;
    s[2] = theta;
    s[3] = theta_dot;

    EnvStep r = {.reward = 1.0};
    r.terminated =
        x < -x_threshold || x > x_threshold || theta < -theta_threshold_radians || theta > theta_threshold_radians;
    if (r.terminated && e->terminated) r.reward = 0.0; /* a step beyond termination */
    return r;
}

static void cartpole_observe(const Env *e, float *obs) {
    for (int i = 0; i < 4; i++) obs[i] = (float)e->state[i];
}

/* Gymnasium's observation_space: +-[x_threshold * 2, float32 max,
 * theta_threshold_radians * 2, float32 max], as float32. */
static const float obs_high[4] = {(float)(2.4 * 2), FLT_MAX, (float)(12 * 2 * M_PI / 360 * 2), FLT_MAX};
static const float obs_low[4] = {-(float)(2.4 * 2), -FLT_MAX, -(float)(12 * 2 * M_PI / 360 * 2), -FLT_MAX};

const EnvSpec env_cartpole = {
    .name = "CartPole-v1",
    .obs_dim = 4,
    .num_actions = 2,
    .state_dim = 4,
    .max_episode_steps = 500,
    .reward_threshold = 475.0,
    .reset_state = cartpole_reset_state,
    .dynamics = cartpole_dynamics,
    .observe = cartpole_observe,
    .obs_low = obs_low,
    .obs_high = obs_high,
};
