/* SPDX-License-Identifier: MIT */
/* acrobot.c: Acrobot-v1, Gymnasium's AcrobotEnv in C.
 *
 * Reference: gymnasium/envs/classic_control/acrobot.py (Gymnasium 1.x,
 * commit 9fa9225b, see docs/ENVIRONMENTS.md), with book_or_nips = "book"
 * (Gymnasium's default; the "nips" variant drops the dtheta1**2 term).
 *
 * One step: augment the state with the torque, integrate _dsdt over
 * [0, dt] with ONE classic Runge-Kutta-4 step (rk4() with t = [0, dt]),
 * wrap both angles into [-pi, pi] by repeated +/-2pi (wrap()), bound the
 * velocities to [-4pi, 4pi] and [-9pi, 9pi] (bound() = min(max(x, m), M)).
 * Bit-exactness notes:
 *   - `v**2` on a float64 is the C library's pow(v, 2), which differs from
 *     v * v in the last bit for some v: we call pow (the Makefile passes
 *     -fno-builtin-pow so gcc cannot rewrite it; tests check the binary).
 *     Squares of the constants (lc1**2 = 0.25, l1**2 = 1) are exact, so
 *     they are written as literals.
 *   - rk4's combination is numpy's, element by element:
 *       y0 + dt / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4)   (left to right).
 *   - reset draws U(-0.1, 0.1)^4 and rounds it to float32 (.astype), as
 *     Gymnasium does; steps then run in float64 (np.append promotes).
 *
 * State (float64): theta1, theta2, dtheta1, dtheta2. Observation (float32):
 * cos theta1, sin theta1, cos theta2, sin theta2, dtheta1, dtheta2.
 * Actions: torque -1, 0, +1. Reward -1 per step, 0 on the terminating step;
 * terminated when -cos(theta1) - cos(theta2 + theta1) > 1.
 */
#include "env_specs.h"

#include <math.h>

static const double dt = 0.2;
static const double max_vel_1 = 4 * M_PI;
static const double max_vel_2 = 9 * M_PI;
static const double avail_torque[3] = {-1.0, 0.0, 1.0};

/* Gymnasium's wrap() needs |x| / 2pi iterations; a state set from outside
 * (replay, tests) may hold a huge angle. Past this many iterations (where
 * Python would loop for minutes) we finish with fmod: a documented
 * divergence for inputs Gymnasium itself cannot handle in practice. */
enum { WRAP_MAX_ITERATIONS = 1 << 20 };

static double wrap(double x, double m, double big_m) {
    double diff = big_m - m;
    long n = 0;
    while (x > big_m && n++ < WRAP_MAX_ITERATIONS) x = x - diff;
    while (x < m && n++ < WRAP_MAX_ITERATIONS) x = x + diff;
    if (n > WRAP_MAX_ITERATIONS) {
        x = fmod(x - m, diff);
        x = x < 0 ? x + diff + m : x + m;
    }
    return x;
}

/* Python's min(max(x, m), M): max keeps x unless m > x, min keeps it unless M < it. */
static double bound(double x, double m, double big_m) {
    x = m > x ? m : x;
    return big_m < x ? big_m : x;
}

/* _dsdt: y = (theta1, theta2, dtheta1, dtheta2, a) -> dy (dy[4] = 0). */
static void dsdt(const double *y, double *dy) {
    const double m1 = 1.0, m2 = 1.0, l1 = 1.0, lc1 = 0.5, lc2 = 0.5, i1 = 1.0, i2 = 1.0, g = 9.8;
    const double lc1_sq = 0.25, lc2_sq = 0.25, l1_sq = 1.0; /* lc1**2, lc2**2, l1**2 (exact) */
    double a = y[4];
    double theta1 = y[0], theta2 = y[1], dtheta1 = y[2], dtheta2 = y[3];
    double cos_theta2 = cos(theta2), sin_theta2 = sin(theta2);
    double d1 = m1 * lc1_sq + m2 * (l1_sq + lc2_sq + 2 * l1 * lc2 * cos_theta2) + i1 + i2;
    double d2 = m2 * (lc2_sq + l1 * lc2 * cos_theta2) + i2;
    double phi2 = m2 * lc2 * g * cos(theta1 + theta2 - M_PI / 2.0);
    double phi1 = -m2 * l1 * lc2 * pow(dtheta2, 2) * sin_theta2 - 2 * m2 * l1 * lc2 * dtheta2 * dtheta1 * sin_theta2 +
                  (m1 * lc1 + m2 * l1) * g * cos(theta1 - M_PI / 2) + phi2;
    double ddtheta2 = (a + d2 / d1 * phi1 - m2 * l1 * lc2 * pow(dtheta1, 2) * sin_theta2 - phi2) /
                      (m2 * lc2_sq + i2 - pow(d2, 2) / d1);
    double ddtheta1 = -(d2 * ddtheta2 + phi1) / d1;
    dy[0] = dtheta1;
    dy[1] = dtheta2;
    dy[2] = ddtheta1;
    dy[3] = ddtheta2;
    dy[4] = 0.0;
}

/* rk4(derivs, y0, [0, dt]): one step, numpy's element-wise arithmetic. */
static void rk4(const double *y0, double *out) {
    double k1[5], k2[5], k3[5], k4[5], y[5];
    double dt2 = dt / 2.0;
    dsdt(y0, k1);
    for (int i = 0; i < 5; i++) y[i] = y0[i] + dt2 * k1[i];
    dsdt(y, k2);
    for (int i = 0; i < 5; i++) y[i] = y0[i] + dt2 * k2[i];
    dsdt(y, k3);
    for (int i = 0; i < 5; i++) y[i] = y0[i] + dt * k3[i];
    dsdt(y, k4);
    for (int i = 0; i < 4; i++) out[i] = y0[i] + dt / 6.0 * (k1[i] + 2 * k2[i] + 2 * k3[i] + k4[i]);
}

static void acrobot_reset_state(Env *e) {
    /* np_random.uniform(low=-0.1, high=0.1, size=(4,)).astype(np.float32) */
    for (int i = 0; i < 4; i++) e->state[i] = (double)(float)rng_uniform_range(&e->rng, -0.1, 0.1);
}

static EnvStep acrobot_dynamics(Env *e, int action) {
    double *s = e->state;
    double s_augmented[5] = {s[0], s[1], s[2], s[3], avail_torque[action]};
    double ns[4];
    rk4(s_augmented, ns);
    s[0] = wrap(ns[0], -M_PI, M_PI);
    s[1] = wrap(ns[1], -M_PI, M_PI);
    s[2] = bound(ns[2], -max_vel_1, max_vel_1);
    s[3] = bound(ns[3], -max_vel_2, max_vel_2);

    EnvStep r = {0};
    r.terminated = -cos(s[0]) - cos(s[1] + s[0]) > 1.0;
    r.reward = r.terminated ? 0.0 : -1.0;
    return r;
}

static void acrobot_observe(const Env *e, float *obs) {
    const double *s = e->state;
    obs[0] = (float)cos(s[0]);
    obs[1] = (float)sin(s[0]);
    obs[2] = (float)cos(s[1]);
    obs[3] = (float)sin(s[1]);
    obs[4] = (float)s[2];
    obs[5] = (float)s[3];
}

/* Gymnasium's observation_space: +-[1, 1, 1, 1, max_vel_1, max_vel_2], float32. */
static const float obs_high[6] = {1, 1, 1, 1, (float)(4 * M_PI), (float)(9 * M_PI)};
static const float obs_low[6] = {-1, -1, -1, -1, -(float)(4 * M_PI), -(float)(9 * M_PI)};

const EnvSpec env_acrobot = {
    .name = "Acrobot-v1",
    .obs_dim = 6,
    .num_actions = 3,
    .state_dim = 4,
    .max_episode_steps = 500,
    .reward_threshold = -100.0,
    .reset_state = acrobot_reset_state,
    .dynamics = acrobot_dynamics,
    .observe = acrobot_observe,
    .obs_low = obs_low,
    .obs_high = obs_high,
};
