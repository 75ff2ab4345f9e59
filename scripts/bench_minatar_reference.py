#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""bench_minatar_reference.py --minatar DIR [--seconds S] [--json]: env
steps/s of MinAtar's reference implementation (kenjyoung/MinAtar, release
1.0.15, commit 4241f24: minatar.Environment, sticky actions 0.1, ramping on),
to set beside `gorila bench env` on the same machine.

DIR is a checkout of the reference (make one as scripts/minatar_reference.py
says). Per game: Environment(game), seed(1), reset, then uniformly random
actions from the script's own numpy generator (drawn in batches of 4096 so
that the drawing costs little), a reset after each terminal; S seconds per
game (default 2), steps/s over that time, the act and state() of each step
counted (state() is what an agent reads each step). Also the process's CPU
time over the same steps (cpu_steps_per_second: steps per CPU second, the
fairer figure on a machine shared with other work). Needs numpy: run it
with Debian's /usr/bin/python3. Nothing passes or fails on time.
"""
import argparse
import json
import sys
import time


def bench(env_cls, game, seconds, np):
    env = env_cls(game)
    env.seed(1)
    env.reset()
    rng = np.random.RandomState(7)
    actions = rng.randint(6, size=4096)
    steps, t0, c0 = 0, time.perf_counter(), time.process_time()
    while True:
        for a in actions:
            _, done = env.act(int(a))
            env.state()
            if done:
                env.reset()
        steps += len(actions)
        t = time.perf_counter() - t0
        if t >= seconds:
            return steps / t, steps / (time.process_time() - c0)


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--minatar", required=True)
    p.add_argument("--seconds", type=float, default=2.0)
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    sys.path.insert(0, args.minatar)
    try:
        import numpy as np
        from minatar import Environment
    except ImportError as e:
        sys.exit("bench_minatar_reference.py: %s (needs numpy and a MinAtar "
                 "checkout as --minatar)" % e)
    ids = {"asterix": "Asterix", "breakout": "Breakout",
           "freeway": "Freeway", "seaquest": "Seaquest",
           "space_invaders": "SpaceInvaders"}
    for game, title in ids.items():
        sps, cpu_sps = bench(Environment, game, args.seconds, np)
        if args.json:
            print(json.dumps({"bench": "minatar_reference",
                              "env": "MinAtar/%s-v0" % title,
                              "steps_per_second": sps,
                              "cpu_steps_per_second": cpu_sps}))
        else:
            print("MinAtar/%s-v0: %.0f steps/s, %.0f per CPU second "
                  "(reference, Python)" % (title, sps, cpu_sps))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
