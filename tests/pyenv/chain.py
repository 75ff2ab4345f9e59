# SPDX-License-Identifier: MIT
"""A pure-Python chain for the bridge's learning tests (no gymnasium).

N states in a row, the agent starts in the left half (a position drawn
from the generator reset(seed=...) seeds, as Gymnasium's np_random). The
action that moves right alternates along the chain (1 at even positions, 0
at odd ones), the other moves left (the left end holds), so a policy must
tell the states apart: one that takes the same action everywhere (as an
untrained network's greedy policy often does: its one-hot inputs differ
little against its biases) never crosses. Reaching the right end gives reward 1
and ends the episode (terminated); after max_steps steps (default 2N) the
episode is truncated with reward 0. The observation is the one-hot position
(float32). A greedy policy that moves right from every state returns 1: the spec's
reward threshold, so a run that solves it has learned to cross the chain.
A random walk seldom does (it must step right N-1 times more often than
left within 2N steps), and an untrained network's greedy actions cross it
only if every state happens to prefer "right".
"""
import numpy as np


class Discrete:
    def __init__(self, n):
        self.n, self.start = n, 0


class Box:
    def __init__(self, n):
        self.shape, self.dtype = (n,), np.dtype(np.float32)
        self.low, self.high = np.zeros(n, np.float32), np.ones(n, np.float32)


class Spec:
    reward_threshold = 1.0


class Chain:
    def __init__(self, n=8, max_steps=None):
        if n < 2:
            raise ValueError("chain: n must be at least 2, got %r" % (n,))
        self.n = int(n)
        self.max_steps = int(max_steps) if max_steps is not None else 2 * self.n
        self.action_space = Discrete(2)
        self.observation_space = Box(self.n)
        self.spec = Spec()
        self.pos, self.t = 0, 0
        self.rng = np.random.default_rng()

    def _obs(self):
        o = np.zeros(self.n, np.float32)
        o[self.pos] = 1.0
        return o

    def reset(self, seed=None, options=None):
        if seed is not None:
            self.rng = np.random.default_rng(seed)
        self.pos, self.t = int(self.rng.integers(0, self.n // 2)), 0
        return self._obs(), {}

    def step(self, action):
        self.t += 1
        right = int(action) == (1 if self.pos % 2 == 0 else 0)
        self.pos = min(self.pos + 1, self.n - 1) if right else max(self.pos - 1, 0)
        terminated = self.pos == self.n - 1
        truncated = not terminated and self.t >= self.max_steps
        return self._obs(), 1.0 if terminated else 0.0, terminated, truncated, {}


def make(**kwargs):
    return Chain(**kwargs)
