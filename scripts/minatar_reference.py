#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""minatar_reference.py: golden trajectories of MinAtar's five games,
computed by the reference itself (kenjyoung/MinAtar, release 1.0.15, commit
4241f24), for tests/cli/minatar.sh, which replays them through
`gorila env replay MinAtar/<Game>-v0|-v1` and compares.

Regenerate (Debian's numpy is installed for /usr/bin/python3):

    mkdir -p build/minatar-ref
    git -C /work/.mirror/kenjyoung+MinAtar/repo archive 4241f24 | tar x -C build/minatar-ref
    /usr/bin/python3 scripts/minatar_reference.py --minatar build/minatar-ref \\
        --out tests/fixtures/minatar

(any checkout of that commit will do; importing minatar.environment warns
when matplotlib is missing, which does not matter here). The output is a
function of the reference and this script only: every seed is fixed below.

Per game GAME (the reference's module name) the script writes:

  GAME.txt.gz       runs, each a section of the command script of one
                    `gorila env replay` process followed by the expected
                    per-episode digests:
                      run ID [--sticky P] [--no-ramping]
                      seed S | reset | step A      (commands, in order)
                      ...
                      episode SHA256 NLINES        (after each episode)
                    An episode is the output of one reset and of the steps
                    up to the next reset (a `seed` in it prints nothing);
                    SHA256 is over those lines, each ending in "\\n".
  GAME.full.txt.gz  the output lines of the first episode of the first run,
                    in full (so that a mismatch shows the first bad step).

Each line of output is what the reference gives: reset prints
"0 0 CELLS", step A prints "R T CELLS" (R the integer reward, T 0/1, CELLS
Environment.state() flattened in C order as 0/1 characters). For -v1 ids
action A is minimal_action_set()[A], as minatar/gym.py maps it.

The runs cover -v0 and -v1, sticky 0.1 and 0, ramping on and off, steps
after the end (the sticky draw still happens), `seed` in the middle of an
episode, last_action surviving reset, and long episodes: a policy that
looks two steps ahead (on deep copies of the environment, generator
included, so the look-ahead is exact) and avoids actions that end the
episode, so Asterix, Seaquest and Space Invaders live long enough to ramp.
"""
import argparse
import copy
import gzip
import hashlib
import os
import sys

GAMES = ["asterix", "breakout", "freeway", "seaquest", "space_invaders"]
TITLES = {g: g.title().replace("_", "") for g in GAMES}

# (version, sticky, ramping, seed, episodes, policy, max_steps, extra steps after the end, mid-episode seed)
RUNS = [
    (0, 0.1, True, 11, 3, "random", 3000, 3, 1011),
    (1, 0.1, True, 12, 3, "random", 3000, 2, None),
    (0, 0.0, False, 13, 3, "random", 3000, 2, 1013),
    (1, 0.0, True, 14, 2, "survive", 3000, 1, None),
    (0, 0.1, False, 15, 1, "survive", 1200, 2, None),
    (1, 0.1, True, 2**32 - 1, 1, "survive", 2500, 2, 4000000000),
] + [  # breadth: more seeds, short random episodes, every setting
    (s % 2, (0.1, 0.0, 0.25, 1.0)[s % 4], s % 3 != 0, 100 + s, 4, "random", 400, 2, 5000 + s if s % 2 else None)
    for s in range(12)
]


def cells(env):
    return (env.state().astype("uint8") + 48).tobytes().decode()


def out_line(reward, terminal, env):
    return "%d %d %s\n" % (int(reward), 1 if terminal else 0, cells(env))


def survives(env, action, actions, depth):
    """Whether acting `action` on a copy of env, then some action for
    depth - 1 more steps, keeps the episode going."""
    e = copy.deepcopy(env)
    _, t = e.act(action)
    if t:
        return False
    if depth <= 1:
        return True
    return any(survives(e, b, actions, depth - 1) for b in actions)


def invader_aim(g):
    """Space Invaders: fire when a shot would meet an alien (the lowest of
    its column, led by the sweep), else move toward one."""
    cols = [x for x in range(10) if g.alien_map[:, x].any()]
    step = max(1, min(int(g.alien_map.sum()), g.enemy_move_interval))

    def lead(x):
        y = max(y for y in range(10) if g.alien_map[y, x])
        return max(0, min(9, x + g.alien_dir * ((9 - y) // step)))
    if g.shot_timer == 0 and any(lead(x) == g.pos for x in cols):
        return 5
    target = min((lead(x) for x in cols), key=lambda x: abs(x - g.pos))
    return 0 if target == g.pos else 1 if target < g.pos else 3


def preferred(game, env, actions, rng):
    """A game-specific nudge (fire often, chase the ball, cross the road,
    surface with divers); otherwise a random action."""
    g = env.env
    if game == "breakout":
        return 1 if g.ball_x < g.pos else 3 if g.ball_x > g.pos else 0
    if game == "freeway" and rng.rand() < 0.7:
        return 2
    if game == "space_invaders":
        return invader_aim(g)
    if game == "seaquest":
        if g.diver_count > 0 and (g.oxygen < 40 or g.diver_count >= 6):
            return 2
        if g.divers and g.diver_count < 6 and rng.rand() < 0.6:  # chase a diver
            d = min(g.divers, key=lambda d: abs(d[0] - g.sub_x) + abs(d[1] - g.sub_y))
            if d[1] != g.sub_y:
                return 4 if d[1] > g.sub_y else 2 if g.sub_y > 1 else 0
            return 3 if d[0] > g.sub_x else 1 if d[0] < g.sub_x else 0
        if rng.rand() < 0.3:
            return 5
    return actions[rng.randint(len(actions))]


def choose(game, env, policy, actions, rng):
    if policy == "random":
        return actions[rng.randint(len(actions))]
    want = preferred(game, env, actions, rng)
    if survives(env, want, actions, 2):
        return want
    safe = [a for a in actions if survives(env, a, actions, 2)]
    return safe[rng.randint(len(safe))] if safe else want


def run(game, spec, Environment):
    version, sticky, ramping, seed, episodes, policy, max_steps, extra, mid_seed = spec
    env = Environment(game, sticky_action_prob=sticky, difficulty_ramping=ramping)
    action_set = env.minimal_action_set() if version == 1 else list(range(6))
    rng = __import__("numpy").random.RandomState(seed % 1000003)
    args = "MinAtar/%s-v%d" % (TITLES[game], version)
    if sticky != 0.1:
        args += " --sticky %g" % sticky
    if not ramping:
        args += " --no-ramping"
    cmds = ["run " + args + "\n", "seed %d\n" % seed]
    env.seed(seed)
    outputs, stats = [], []
    for ep in range(episodes):
        env.reset()
        cmds.append("reset\n")
        lines = [out_line(0, False, env)]
        terminal, steps, after = False, 0, 0
        while after < extra and steps < max_steps:
            if mid_seed is not None and ep == 1 % episodes and steps == 40:
                env.seed(mid_seed)
                cmds.append("seed %d\n" % mid_seed)
            i = action_set.index(choose(game, env, policy, action_set, rng))
            r, terminal = env.act(action_set[i])
            cmds.append("step %d\n" % i)
            lines.append(out_line(r, terminal, env))
            steps += 1
            after += terminal
        outputs.append(lines)
        stats.append("%d%s/r%s" % (steps, "T" if terminal else "", env.env.difficulty_ramp()))
        digest = hashlib.sha256("".join(lines).encode()).hexdigest()
        cmds.append("episode %s %d\n" % (digest, len(lines)))
    return cmds, outputs, stats


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--minatar", required=True, help="a checkout of kenjyoung/MinAtar at 4241f24")
    ap.add_argument("--out", default="tests/fixtures/minatar", help="output folder")
    ap.add_argument("--games", default=",".join(GAMES))
    a = ap.parse_args()
    sys.path.insert(0, os.path.abspath(a.minatar))
    from minatar.environment import Environment
    os.makedirs(a.out, exist_ok=True)
    for game in a.games.split(","):
        all_cmds, full = ["# MinAtar reference trajectories (scripts/minatar_reference.py): %s\n" % game], None
        nsteps = 0
        for spec in RUNS:
            cmds, outputs, stats = run(game, spec, Environment)
            print("  %s: steps/ramp per episode %s" % (cmds[0].strip(), " ".join(stats)), file=sys.stderr)
            all_cmds += cmds
            nsteps += sum(len(o) for o in outputs)
            if full is None:
                full = outputs[0]
        with gzip.GzipFile(os.path.join(a.out, game + ".txt.gz"), "wb", mtime=0) as f:
            f.write("".join(all_cmds).encode())
        with gzip.GzipFile(os.path.join(a.out, game + ".full.txt.gz"), "wb", mtime=0) as f:
            f.write("".join(full).encode())
        print("%s: %d runs, %d output lines" % (game, len(RUNS), nsteps), file=sys.stderr)


if __name__ == "__main__":
    main()
