# SPDX-License-Identifier: MIT
"""A pure-Python CartPole-v1 with the Gymnasium API (the same float64
arithmetic as envs/cartpole.c), and fixtures that break the contract, for
tests/cli/pyenv.sh. Needs numpy only."""
import math
import time

import numpy as np


class Discrete:
    def __init__(self, n):
        self.n = n
        self.start = 0


class Box:
    def __init__(self, shape, dtype):
        self.shape = shape
        self.dtype = np.dtype(dtype)


class CartPole:
    """record: a file to which every reset appends "INSTANCE SEED" (SEED
    None when reset was given none; INSTANCE counts the instances made in
    this process from 0, the bridge's probe first). made: a file to which
    every construction appends "INSTANCE". step_cost_us: each step
    first spins until this thread has used that many microseconds of CPU
    time in it (time.thread_time: CPU, not wall time, so a step preempted on
    a loaded machine still costs its CPU), an environment of a known cost
    for scripts/bench-pyactors; 0 (the default) skips it. The spin touches
    no state: the trajectory is the same at any cost."""

    made = 0

    def __init__(self, max_steps=500, fail_after=-1, nan_after=-1, record=None, made=None, step_cost_us=0):
        self.action_space = Discrete(2)
        self.observation_space = Box((4,), np.float32)
        self.max_steps, self.fail_after, self.nan_after = max_steps, fail_after, nan_after
        self.rng = np.random.default_rng()
        self.steps = 0
        self.seeds = []
        self.record, self.instance = record, CartPole.made
        self.step_cost = float(step_cost_us) * 1e-6
        CartPole.made += 1
        if made:
            with open(made, "a") as f:
                f.write("%d\n" % self.instance)

    def reset(self, seed=None, options=None):
        self.seeds.append(seed)
        if self.record:
            with open(self.record, "a") as f:
                f.write("%d %s\n" % (self.instance, seed))
        if seed is not None:
            self.rng = np.random.default_rng(seed)
        self.state = [float(v) for v in self.rng.uniform(-0.05, 0.05, 4)]
        if options and "state" in options:  # gorila env replay's state command
            self.state = [float(v) for v in options["state"]]
        self.t = 0
        self.beyond = None  # steps since termination, as Gymnasium's steps_beyond_terminated
        return np.array(self.state, dtype=np.float32), {}

    def step(self, action):
        if self.step_cost > 0:
            clock = time.thread_time
            end = clock() + self.step_cost
            while clock() < end:
                pass
        self.steps += 1
        if self.steps == self.fail_after:
            raise ValueError("fixture: step %d fails" % self.steps)
        x, x_dot, theta, theta_dot = self.state
        force = 10.0 if action == 1 else -10.0
        costheta, sintheta = math.cos(theta), math.sin(theta)
        temp = (force + 0.1 * 0.5 * (theta_dot * theta_dot) * sintheta) / 1.1
        thetaacc = (9.8 * sintheta - costheta * temp) / (0.5 * (4.0 / 3.0 - 0.1 * (costheta * costheta) / 1.1))
        xacc = temp - 0.1 * 0.5 * thetaacc * costheta / 1.1
        x = x + 0.02 * x_dot
        x_dot = x_dot + 0.02 * xacc
        theta = theta + 0.02 * theta_dot
        theta_dot = theta_dot + 0.02 * thetaacc
        self.state = [x, x_dot, theta, theta_dot]
        self.t += 1
        terminated = x < -2.4 or x > 2.4 or theta < -(12 * 2 * math.pi / 360) or theta > 12 * 2 * math.pi / 360
        truncated = self.t >= self.max_steps
        reward = 1.0
        if terminated:  # Gymnasium pays the terminating step, nothing after it
            self.beyond = 0 if self.beyond is None else self.beyond + 1
            reward = 1.0 if self.beyond == 0 else 0.0
        obs = np.array(self.state, dtype=np.float32)
        if self.steps == self.nan_after:
            obs[1] = np.nan
        return obs, reward, terminated, truncated, {}


def make(**kwargs):
    return CartPole(**kwargs)


class WrongShape(CartPole):
    def reset(self, seed=None, options=None):
        obs, info = super().reset(seed=seed)
        return obs[:3], info


class BoxActions(CartPole):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.action_space = Box((1,), np.float32)


class Seeds(CartPole):
    """Truncates after 3 steps; writes the seed of every reset to the
    observation's first value (-1 for none)."""

    def __init__(self, record=None):
        super().__init__(max_steps=3, record=record)

    def reset(self, seed=None, options=None):
        obs, info = super().reset(seed=seed)
        obs[0] = -1.0 if seed is None else float(seed % 1000)
        return obs, info


# Fixtures for gorila env check, each breaking one of its checks.
class Unseeded(CartPole):
    """Ignores reset's seed: its start states come from a generator seeded
    by the operating system, so two instances seeded alike differ."""

    def reset(self, seed=None, options=None):
        return super().reset(seed=None, options=options)


class FixedSeed(CartPole):
    """Ignores reset's seed: every instance starts as if seeded with 0."""

    def reset(self, seed=None, options=None):
        return super().reset(seed=None if seed is None else 0, options=options)


class Endless(CartPole):
    """Never terminates or truncates."""

    def step(self, action):
        obs, reward, _, _, info = super().step(action)
        return obs, reward, False, False, info


class InfReward(CartPole):
    """Its 5th step pays inf."""

    def step(self, action):
        obs, reward, terminated, truncated, info = super().step(action)
        return obs, (math.inf if self.steps == 5 else reward), terminated, truncated, info


class Float64Steps(CartPole):
    """Resets give float32 observations, as its space says; steps float64."""

    def step(self, action):
        obs, reward, terminated, truncated, info = super().step(action)
        return obs.astype(np.float64), reward, terminated, truncated, info


class Bounded(CartPole):
    """Declares Gymnasium's CartPole bounds (low/high) but its cart velocity
    (obs[1]) may leave [-0.5, 0.5], which its space claims."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        high = np.array([4.8, 0.5, 0.42, np.inf], dtype=np.float32)
        self.observation_space.low, self.observation_space.high = -high, high


# Two ids that agree in their first 31 bytes (a checkpoint header's env
# field): python:cartpole:long_named_make_one and ..._two.
long_named_make_one = make
long_named_make_two = make
