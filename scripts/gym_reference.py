#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""gym_reference.py: replay fixtures for gorila's environments, computed by
Gymnasium's own classic-control code.

For each environment the script sets the internal state of Gymnasium's env
(env.unwrapped.state), calls its real step(), and writes the commands and
the answers in the format of `gorila env replay NAME`:

    state v1 ... vk          (a command: set the state, new episode)
    step A                   (a command: apply action index A)
    #> obs...,reward,terminated,truncated,state...   (Gymnasium's answer)

The answer lines start with '#', so a fixture file can be fed as it is to
`gorila env replay NAME [ARGS]` (ARGS from its "# args:" header line), and
the output compared with the "#> " lines. tests/unit/test_env.c and
tests/cli/env.sh do exactly that.

Requirements: numpy, and either a real Gymnasium 1.x (`import gymnasium`)
or a directory holding Gymnasium's classic_control sources plus stubs of
the few gymnasium modules they import, named by GYM_REFERENCE_PATH (see
docs/ENVIRONMENTS.md, "Regenerating the fixtures").

What the script adds around Gymnasium's step(), and why:
  - TimeLimit: a step counter per episode (reset by `state`); truncated is
    set when it reaches the registered limit, also on a step that
    terminated, exactly as Gymnasium's TimeLimit wrapper does
    (gymnasium/wrappers/common.py: `if self._elapsed_steps >=
    self._max_episode_steps: truncated = True`). `gorila env replay`
    reports the flags that way. (An earlier version of the script used gorila's
    learner-side rule, terminated wins; no committed fixture has a step that
    terminates at or past the limit, so their data is the same under both.)
  - A `state` command also clears CartPole's steps_beyond_terminated, as
    reset() would: it starts a new episode.
  - Pendulum: action i is the float64 torque TORQUES[i], passed to step()
    as np.array([torque], dtype=np.float64).
  - numpy dispatches float64 sin/cos to SIMD code (SVML) on AVX-512
    machines; those results differ from the C library's in the last bit
    for most arguments, so Gymnasium itself is not bit-reproducible across
    CPUs. By default the script disables that dispatch
    (NPY_DISABLE_CPU_FEATURES) so numpy calls the C library, as it does on
    any CPU without AVX-512, and checks that it did. --native-simd keeps
    numpy's dispatch (to measure the difference).

Usage:
    scripts/gym_reference.py --make-stub /tmp/gymref   # stubs + the files to fetch
    GYM_REFERENCE_PATH=/tmp/gymref /usr/bin/python3 scripts/gym_reference.py \\
        --out tests/fixtures/data [--seed 1] [--only CartPole-v1] [--native-simd] \\
        [--source "text recorded in the header"]
"""

import argparse
import math
import os
import random
import sys
import warnings

AVX512_FEATURES = "AVX512F AVX512CD AVX512_SKX AVX512_CLX AVX512_CNL AVX512_ICL AVX512_SPR"

# Gymnasium revisions the committed fixtures were computed from (files under
# gymnasium/envs/classic_control/ of Farama-Foundation/Gymnasium).
GYM_SOURCES = {
    "cartpole.py": "4b96acf53aad9d70eefdf76baf3d0c2f08608055",
    "mountain_car.py": "5af90e379d069e4cba7c8db44d4135466f209183",
    "acrobot.py": "9fa9225b4a12852c58b4e096535504026f9443ac",
    "pendulum.py": "9e06113040677f69752ba6fcec5f6b3478084db3",
    "utils.py": "5349c655b4d22711bfcbabd938ba5c7d0fadf423",
}

# Stand-ins for the few gymnasium modules those files import; enough to
# construct the envs, reset them with a seed and call step(). Our code.
STUB_FILES = {
    "gymnasium/__init__.py": '''"""Stub gymnasium package (gorila scripts/gym_reference.py --make-stub):
just what the classic_control env modules import. The env modules beside it
are Gymnasium's own."""
from gymnasium.core import Env
from gymnasium import spaces, logger, error, utils

__version__ = "stub package around Gymnasium's classic_control sources"
''',
    "gymnasium/core.py": '''from typing import Generic, TypeVar

import numpy as np

ObsType = TypeVar("ObsType")
ActType = TypeVar("ActType")


class Env(Generic[ObsType, ActType]):
    """The seeding part of gymnasium.Env."""

    metadata = {"render_modes": []}
    render_mode = None
    spec = None
    _np_random = None

    @property
    def np_random(self):
        if self._np_random is None:
            self._np_random = _rng(None)
        return self._np_random

    def reset(self, *, seed=None, options=None):
        if seed is not None:
            self._np_random = _rng(seed)


def _rng(seed):
    # as gymnasium.utils.seeding.np_random
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed)))
''',
    "gymnasium/spaces.py": '''import numpy as np


class Discrete:
    def __init__(self, n, seed=None, start=0):
        self.n, self.start = int(n), int(start)

    def contains(self, x):
        if isinstance(x, np.ndarray) and x.shape == ():
            x = x.item()
        return isinstance(x, (int, np.integer)) and self.start <= int(x) < self.start + self.n


class Box:
    def __init__(self, low, high, shape=None, dtype=np.float32, seed=None):
        self.dtype = np.dtype(dtype)
        self.low = np.broadcast_to(np.asarray(low, dtype=self.dtype), shape or np.shape(low))
        self.high = np.broadcast_to(np.asarray(high, dtype=self.dtype), shape or np.shape(high))
        self.shape = self.low.shape
''',
    "gymnasium/logger.py": '''import sys


def warn(msg, *args, **kwargs):
    print("gymnasium stub warning: %s" % msg, file=sys.stderr)
''',
    "gymnasium/error.py": '''class Error(Exception):
    pass


class DependencyNotInstalled(Error):
    pass
''',
    "gymnasium/utils/__init__.py": "",
    "gymnasium/vector/__init__.py": '''import enum


class AutoresetMode(enum.Enum):
    NEXT_STEP = "NextStep"
    SAME_STEP = "SameStep"
    DISABLED = "Disabled"


class VectorEnv:
    pass
''',
    "gymnasium/vector/utils/__init__.py": '''def batch_space(space, n=1):
    return space
''',
    "gymnasium/envs/__init__.py": "",
    "gymnasium/envs/classic_control/__init__.py": "",
}


def make_stub(root):
    """Write the stub package under root and say which files to fetch."""
    for rel, text in STUB_FILES.items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
    cc = os.path.join(root, "gymnasium", "envs", "classic_control")
    print("stub package written under %s; now fetch Gymnasium's sources into %s:" % (root, cc))
    for name, commit in GYM_SOURCES.items():
        print("  curl -fsSLo %s/%s https://raw.githubusercontent.com/Farama-Foundation/Gymnasium/%s/"
              "gymnasium/envs/classic_control/%s" % (cc, name, commit, name))


if __name__ == "__main__" and "--make-stub" in sys.argv:
    i = sys.argv.index("--make-stub")
    if i + 1 >= len(sys.argv):
        sys.exit("gym_reference: --make-stub needs a directory")
    make_stub(sys.argv[i + 1])
    sys.exit(0)

if "--native-simd" not in sys.argv:
    os.environ.setdefault("NPY_DISABLE_CPU_FEATURES", AVX512_FEATURES)
    # numpy warns about listed features it does not dispatch to; harmless,
    # and main() checks the outcome on probe arguments anyway.
    warnings.filterwarnings("ignore", message="During parsing environment variable")
if os.environ.get("GYM_REFERENCE_PATH"):
    sys.path.insert(0, os.environ["GYM_REFERENCE_PATH"])

import numpy as np  # noqa: E402

try:
    import gymnasium
    from gymnasium.envs.classic_control.acrobot import AcrobotEnv
    from gymnasium.envs.classic_control.cartpole import CartPoleEnv
    from gymnasium.envs.classic_control.mountain_car import MountainCarEnv
    from gymnasium.envs.classic_control.pendulum import PendulumEnv
except ImportError as e:
    if "-h" not in sys.argv and "--help" not in sys.argv:
        sys.exit(
            "gym_reference: cannot import Gymnasium's classic_control envs (%s): install gymnasium,"
            " or run --make-stub DIR, fetch the sources and set GYM_REFERENCE_PATH=DIR" % e
        )

PENDULUM_TORQUES = [-2.0, 0.0, 2.0, -3.0, 3.5, 0.7, -1.3, 100.0]
PI = math.pi


def fmt(v):
    return "%.17g" % float(v)


def trig_mismatches(n=20000):
    """How many float64 arguments numpy's sin/cos map differently from libm."""
    r = random.Random(12345)
    bad = 0
    for _ in range(n):
        x = r.uniform(-40.0, 40.0)
        bad += np.sin(np.float64(x)) != math.sin(x)
        bad += np.cos(np.float64(x)) != math.cos(x)
    return int(bad), 2 * n


def pow_differs(v):
    """True when v**2 (C pow) is not v*v: the cases that catch a compiler
    rewriting pow(v, 2) as a multiplication."""
    return math.pow(v, 2.0) != v * v


def find_pow_values(rng, lo, hi, count):
    out = []
    while len(out) < count:
        v = rng.uniform(lo, hi)
        if pow_differs(v):
            out.append(v)
    return out


class Fixture:
    """Runs one Gymnasium env and records commands and answers."""

    def __init__(self, name, env, limit, get_state, set_state, act):
        self.name = name
        self.env = env
        self.limit = limit
        self.get_state = get_state
        self.set_state = set_state
        self.act = act  # action index -> argument of env.step
        self.lines = []
        self.t = 0
        self.steps = 0

    def comment(self, text):
        self.lines.append("# " + text)

    def state(self, values):
        values = [float(v) for v in values]
        self.set_state(self.env, values)
        self.t = 0
        self.lines.append("state " + " ".join(fmt(v) for v in values))

    def step(self, a):
        obs, reward, terminated, truncated, _ = self.env.step(self.act(a))
        assert truncated is False
        self.t += 1
        truncated = self.t >= self.limit  # Gymnasium's TimeLimit, whatever terminated says
        vals = [fmt(o) for o in np.asarray(obs, dtype=np.float32)]
        vals += [fmt(reward), "1" if terminated else "0", "1" if truncated else "0"]
        vals += [fmt(s) for s in self.get_state(self.env)]
        self.lines.append("step %d" % a)
        self.lines.append("#> " + ",".join(vals))
        self.steps += 1
        return terminated, truncated

    def run(self, values, actions):
        self.state(values)
        for a in actions:
            self.step(a)


# ---------------------------------------------------------------- CartPole


def cartpole(rng):
    env = CartPoleEnv()

    def set_state(e, v):
        e.state = np.array(v, dtype=np.float64)
        e.steps_beyond_terminated = None

    f = Fixture("CartPole-v1", env, 500, lambda e: list(e.state), set_state, lambda a: a)
    thr = 12 * 2 * math.pi / 360
    acts = lambda n: [rng.randrange(2) for _ in range(n)]  # noqa: E731

    f.comment("random states in the normal ranges, 1-5 steps each")
    for _ in range(60):
        s = [rng.uniform(-2.4, 2.4), rng.uniform(-2, 2), rng.uniform(-thr, thr), rng.uniform(-3, 3)]
        f.run(s, acts(rng.randint(1, 5)))
    f.comment("states beyond the normal ranges (angles beyond pi, large velocities)")
    for _ in range(30):
        s = [rng.uniform(-10, 10), rng.uniform(-50, 50), rng.uniform(-12, 12), rng.uniform(-50, 50)]
        f.run(s, acts(rng.randint(1, 3)))
    f.comment("edges of termination: x and theta land next to +-threshold; steps beyond termination earn 0")
    for sign in (-1.0, 1.0):
        for k in range(-3, 4):
            v = rng.uniform(0.5, 2.0) * sign
            x = 2.4 * sign - 0.02 * v
            for _ in range(abs(k)):
                x = math.nextafter(x, math.inf if k > 0 else -math.inf)
            f.run([x, v, rng.uniform(-0.1, 0.1), rng.uniform(-0.5, 0.5)], acts(3))
            w = rng.uniform(0.5, 2.0) * sign
            th = thr * sign - 0.02 * w
            for _ in range(abs(k)):
                th = math.nextafter(th, math.inf if k > 0 else -math.inf)
            f.run([rng.uniform(-1, 1), rng.uniform(-1, 1), th, w], acts(3))
    f.comment("already beyond the thresholds: terminates at once")
    for s in ([2.5, 0, 0, 0], [-2.5, 0, 0, 0], [0, 0, 0.3, 0], [0, 0, -0.3, 0], [2.4, 0, thr, 0]):
        f.run(s, acts(2))
    f.comment("a balanced 503-step episode (simple feedback policy): truncated from step 500 on")
    f.state([0.01, -0.02, 0.03, 0.01])
    for _ in range(503):
        x, xd, th, thd = env.state
        f.step(1 if th + 0.25 * thd + 0.02 * x + 0.05 * xd > 0 else 0)
    return f


# ------------------------------------------------------------- MountainCar


def mountaincar(rng):
    env = MountainCarEnv()

    def set_state(e, v):
        e.state = np.array(v, dtype=np.float64)

    f = Fixture("MountainCar-v0", env, 200, lambda e: list(e.state), set_state, lambda a: a)
    acts = lambda n: [rng.randrange(3) for _ in range(n)]  # noqa: E731

    f.comment("random states in the normal ranges, 1-5 steps each")
    for _ in range(60):
        f.run([rng.uniform(-1.2, 0.6), rng.uniform(-0.07, 0.07)], acts(rng.randint(1, 5)))
    f.comment("at and near the left wall: position clipped to -1.2, velocity zeroed")
    for _ in range(15):
        f.run([-1.2 + rng.uniform(0, 0.01), rng.uniform(-0.07, 0.0)], acts(3))
    for a in range(3):
        f.run([-1.2, 0.0], [a, a])
        f.run([-1.2, -0.07], [a])
    f.comment("at the goal: position >= 0.5 with velocity >= 0 terminates")
    for _ in range(15):
        v = rng.uniform(0.0, 0.07)
        f.run([0.5 - v + rng.uniform(-0.003, 0.003), v], acts(2))
    for s in ([0.5, 0.0], [0.49, 0.01], [0.55, -0.001], [0.6, 0.07], [0.599, 0.07]):
        for a in range(3):
            f.run(s, [a])
    f.comment("beyond the ranges: clipped")
    for _ in range(15):
        f.run([rng.uniform(-3, 3), rng.uniform(-1, 1)], acts(2))
    f.comment("a 202-step random episode from a reset-like start: truncated from step 200 on")
    f.run([rng.uniform(-0.6, -0.4), 0.0], acts(202))
    return f


# ----------------------------------------------------------------- Acrobot


def acrobot(rng):
    env = AcrobotEnv()

    def set_state(e, v):
        e.state = np.array(v, dtype=np.float64)

    f = Fixture("Acrobot-v1", env, 500, lambda e: list(e.state), set_state, lambda a: a)
    acts = lambda n: [rng.randrange(3) for _ in range(n)]  # noqa: E731
    v1, v2 = 4 * PI, 9 * PI

    f.comment("random states in the normal ranges, 1-4 steps each")
    for _ in range(50):
        s = [rng.uniform(-PI, PI), rng.uniform(-PI, PI), rng.uniform(-v1, v1), rng.uniform(-v2, v2)]
        f.run(s, acts(rng.randint(1, 4)))
    f.comment("near the velocity bounds (+-4pi, +-9pi): bound() clips")
    for _ in range(20):
        s1, s2 = rng.choice((-1, 1)), rng.choice((-1, 1))
        s = [rng.uniform(-PI, PI), rng.uniform(-PI, PI), s1 * (v1 - rng.uniform(0, 0.3)),
             s2 * (v2 - rng.uniform(0, 0.6))]
        f.run(s, acts(2))
    f.comment("beyond the ranges: angles wrapped, velocities bounded")
    for _ in range(20):
        s = [rng.uniform(-20, 20), rng.uniform(-20, 20), rng.uniform(-60, 60), rng.uniform(-60, 60)]
        f.run(s, acts(2))
    f.comment("angles at +-pi exactly")
    for s in ([PI, -PI, 0.0, 0.0], [-PI, PI, 0.1, -0.1], [PI, PI, 1.0, 2.0]):
        f.run(s, acts(2))
    f.comment("near the goal height: -cos(t1) - cos(t1 + t2) around 1")
    for _ in range(25):
        s = [rng.uniform(1.8, PI) * rng.choice((-1, 1)), rng.uniform(-1.2, 1.2), rng.uniform(-2, 2), rng.uniform(-3, 3)]
        f.run(s, acts(2))
    f.comment("velocities whose square by pow() differs from v * v in the last bit")
    for v in find_pow_values(rng, -12, 12, 10):
        f.run([rng.uniform(-1, 1), rng.uniform(-1, 1), v, rng.uniform(-5, 5)], acts(1))
        f.run([rng.uniform(-1, 1), rng.uniform(-1, 1), rng.uniform(-5, 5), v], acts(1))
    f.comment("a 120-step random episode from a reset-like (float32) start")
    f.run([float(np.float32(rng.uniform(-0.1, 0.1))) for _ in range(4)], acts(120))
    return f


# ---------------------------------------------------------------- Pendulum


def pendulum(rng):
    env = PendulumEnv()

    def set_state(e, v):
        e.state = np.array(v, dtype=np.float64)

    def act(a):
        return np.array([PENDULUM_TORQUES[a]], dtype=np.float64)

    f = Fixture("Pendulum-v1", env, 200, lambda e: list(e.state), set_state, act)
    na = len(PENDULUM_TORQUES)
    acts = lambda n: [rng.randrange(na) for _ in range(n)]  # noqa: E731

    f.comment("random states in the normal ranges, every torque (incl. out-of-range ones, clipped)")
    for a in range(na):
        for _ in range(8):
            f.run([rng.uniform(-PI, PI), rng.uniform(-8, 8)], [a])
    f.comment("angles beyond pi and exactly at multiples of pi; speeds beyond +-8 (clipped)")
    for th in (PI, -PI, 3 * PI, -3 * PI, 0.0, 2 * PI, -2 * PI, 100.0, -1000.5):
        f.run([th, rng.uniform(-8, 8)], acts(1))
    for _ in range(30):
        f.run([rng.uniform(-60, 60), rng.uniform(-20, 20)], acts(rng.randint(1, 3)))
    f.comment("speeds whose square by pow() differs from v * v in the last bit")
    for v in find_pow_values(rng, -8, 8, 12):
        f.run([rng.uniform(-PI, PI), v], acts(1))
    f.comment("a 202-step random episode from a reset-like start: truncated from step 200 on")
    f.run([rng.uniform(-PI, PI), rng.uniform(-1, 1)], acts(202))
    return f


BUILDERS = {
    "CartPole-v1": (cartpole, ""),
    "MountainCar-v0": (mountaincar, ""),
    "Acrobot-v1": (acrobot, ""),
    "Pendulum-v1": (pendulum, "--torques " + ",".join(fmt(t) for t in PENDULUM_TORQUES)),
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, help="directory for NAME.replay files")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--only", choices=sorted(BUILDERS), help="one environment only")
    ap.add_argument("--native-simd", action="store_true", help="keep numpy's SIMD float64 sin/cos")
    ap.add_argument("--source", default="", help="where the Gymnasium sources came from (recorded)")
    ap.add_argument("--make-stub", metavar="DIR", help="write the stub package under DIR and exit")
    args = ap.parse_args()

    bad, probes = trig_mismatches()
    if bad and not args.native_simd:
        sys.exit(
            "gym_reference: numpy's float64 sin/cos still differ from the C library's (%d of %d probes);"
            " set NPY_DISABLE_CPU_FEATURES to the SIMD features numpy dispatches them to" % (bad, probes)
        )
    trig = ("C library (numpy SIMD dispatch off)" if not bad
            else "numpy SIMD (%d of %d probes differ from libm)" % (bad, probes))
    os.makedirs(args.out, exist_ok=True)
    for name, (build, extra) in BUILDERS.items():
        if args.only and name != args.only:
            continue
        f = build(random.Random("%s/%d" % (name, args.seed)))
        path = os.path.join(args.out, name + (".simd" if args.native_simd else "") + ".replay")
        with open(path, "w") as out:
            out.write("# %s: transitions computed by Gymnasium's own step() code.\n" % name)
            out.write("# generator: scripts/gym_reference.py --seed %d%s\n"
                      % (args.seed, " --native-simd" if args.native_simd else ""))
            out.write("# gymnasium: %s\n" % getattr(gymnasium, "__version__", "?"))
            if args.source:
                out.write("# source: %s\n" % args.source)
            out.write("# python %s, numpy %s, float64 sin/cos: %s\n" % (sys.version.split()[0], np.__version__, trig))
            out.write("# %d transitions; feed this file to `gorila env replay %s%s`;\n"
                      % (f.steps, name, (" " + extra) if extra else ""))
            out.write("# lines '#> ' hold Gymnasium's answer to the step above them.\n")
            out.write("# args: %s\n" % extra)
            out.write("\n".join(f.lines) + "\n")
        print("%s: %d transitions -> %s" % (name, f.steps, path))


if __name__ == "__main__":
    main()
