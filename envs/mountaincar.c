/* SPDX-License-Identifier: MIT */
/* mountaincar.c: MountainCar-v0, Gymnasium's MountainCarEnv in C.
 *
 * Reference: gymnasium/envs/classic_control/mountain_car.py (Gymnasium 1.x,
 * commit 5af90e37, see docs/ENVIRONMENTS.md), operation for operation:
 *   velocity += (action - 1) * force + math.cos(3 * position) * (-gravity)
 *   velocity  = np.clip(velocity, -max_speed, max_speed)
 *   position += velocity
 *   position  = np.clip(position, min_position, max_position)
 *   if position == min_position and velocity < 0: velocity = 0
 * np.clip(v, lo, hi) is min(max(v, lo), hi) with numpy's comparisons.
 *
 * State (float64): position, velocity. Observation: the same, as float32.
 * Actions: 0 accelerate left, 1 none, 2 accelerate right. Reward -1 per
 * step. Terminated when position >= 0.5 and velocity >= 0 (goal_velocity).
 */
#include "env_specs.h"

#include <math.h>

static const double min_position = -1.2;
static const double max_position = 0.6;
static const double max_speed = 0.07;
static const double goal_position = 0.5;
static const double goal_velocity = 0.0;
static const double force = 0.001;
static const double gravity = 0.0025;

/* np.clip on a float64 scalar: max first (x > lo ? x : lo), then min. */
static double clip(double x, double lo, double hi) {
    x = x > lo ? x : lo;
    return x < hi ? x : hi;
}

static void mountaincar_reset_state(Env *e) {
    /* np.array([np_random.uniform(low=-0.6, high=-0.4), 0]) */
    e->state[0] = rng_uniform_range(&e->rng, -0.6, -0.4);
    e->state[1] = 0.0;
}

static EnvStep mountaincar_dynamics(Env *e, int action) {
    double position = e->state[0], velocity = e->state[1];
    velocity = velocity + ((double)(action - 1) * force + cos(3 * position) * (-gravity));
    velocity = clip(velocity, -max_speed, max_speed);
    position = position + velocity;
    position = clip(position, min_position, max_position);
    if (position == min_position && velocity < 0) velocity = 0.0;
    e->state[0] = position;
    e->state[1] = velocity;

    EnvStep r = {.reward = -1.0};
    r.terminated = position >= goal_position && velocity >= goal_velocity;
    return r;
}

static void mountaincar_observe(const Env *e, float *obs) {
    obs[0] = (float)e->state[0];
    obs[1] = (float)e->state[1];
}

/* Gymnasium's observation_space: [min_position, -max_speed] to
 * [max_position, max_speed], float32. */
static const float obs_low[2] = {(float)-1.2, (float)-0.07};
static const float obs_high[2] = {(float)0.6, (float)0.07};

const EnvSpec env_mountaincar = {
    .name = "MountainCar-v0",
    .obs_dim = 2,
    .num_actions = 3,
    .state_dim = 2,
    .max_episode_steps = 200,
    .reward_threshold = -110.0,
    .reset_state = mountaincar_reset_state,
    .dynamics = mountaincar_dynamics,
    .observe = mountaincar_observe,
    .obs_low = obs_low,
    .obs_high = obs_high,
};
