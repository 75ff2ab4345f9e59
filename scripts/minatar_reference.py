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

Some runs are one game's own (EXTRA_RUNS): Space Invaders under a "hunt"
policy that aims by simulating its shots (rollouts on deep copies), so an
episode clears waves fast enough to reach the last level of its ramp (6:
enemy_move_interval down from 12 to 6) and clears more waves after it, where
the ramp must stop. Seaquest under a "volley" policy that fires whenever it
can and moves sideways in between (four moves between two shots), so two of
its bullets fly one cell apart; when the one behind moves onto the one ahead
and an enemy spawned there, the reference's f_bullets.remove(bullet) removes
the bullet ahead, equal in value, and visits the one behind again (the only
such path: elsewhere the element in hand has moved before it is removed and
no earlier element can equal it; --coverage counts them).

--coverage counts, in the reference's own code, every list.remove call of
Seaquest by the line that makes it, and how many of them removed an element
other than the one passed (an earlier element equal in value: the quirk
envs/minatar/seaquest.c keeps), and prints the counts per run and in total
(the trajectories written are the same with or without it).
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


# Runs of one game only, after RUNS (same fields).
EXTRA_RUNS = {
    "space_invaders": [
        (1, 0.0, True, 14, 1, "hunt", 1700, 2, None),   # ramp 6 at step 808, then more waves at level 6
        (0, 0.1, True, 21, 1, "hunt", 1500, 2, None),   # sticky: ramp 6 at step 882, then more waves
    ],
    "seaquest": [
        (0, 0.0, True, 40, 1, "volley", 3000, 2, None),  # a bullet removed for another: hits a fish (line 103)
        (0, 0.0, True, 41, 1, "volley", 3000, 2, None),  # ... hits a sub (line 111)
    ],
}


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


def rollout(env, plan, horizon):
    """Reward of acting plan, then no-ops, for horizon steps on a copy of
    env; -1 when the episode ends."""
    e = copy.deepcopy(env)
    total = 0
    for k in range(horizon):
        r, t = e.act(plan[k] if k < len(plan) else 0)
        total += r
        if t:
            return -1
    return total


def invader_hunt(env):
    """Space Invaders: fire when a shot now kills within 10 frames more than
    no shot does (by simulation), else move left or right when moving 1 to 4
    times and then firing would; else invader_aim."""
    g = env.env
    if g.shot_timer == 0 and rollout(env, [5], 10) > rollout(env, [], 10):
        return 5
    for m in (1, 3):
        for moves in range(1, 5):
            if rollout(env, [m] * moves + [5], 12) > rollout(env, [m] * moves, 12):
                return m
    return invader_aim(g)


def seaquest_volley(g):
    """Seaquest: surface with divers when oxygen runs low, stay below row 2,
    fire whenever the gun is ready and otherwise move on sideways (turning
    at the walls)."""
    if g.diver_count > 0 and (g.oxygen < 40 or g.diver_count >= 6):
        return 2
    if g.sub_y == 0 or (g.oxygen > 60 and g.sub_y < 3):
        return 4
    if g.shot_timer == 0:
        return 5
    if g.sub_or:
        return 3 if g.sub_x < 9 else 1
    return 1 if g.sub_x > 0 else 3


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
    if policy == "hunt" and game == "space_invaders":
        want = invader_hunt(env)
    elif policy == "volley" and game == "seaquest":
        want = seaquest_volley(env.env)
    else:
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
        terminal, steps, after, ramps = False, 0, 0, []
        while after < extra and steps < max_steps:
            if mid_seed is not None and ep == 1 % episodes and steps == 40:
                env.seed(mid_seed)
                cmds.append("seed %d\n" % mid_seed)
            i = action_set.index(choose(game, env, policy, action_set, rng))
            ramp = env.env.difficulty_ramp()
            r, terminal = env.act(action_set[i])
            if env.env.difficulty_ramp() != ramp:
                ramps.append("%d@%d" % (env.env.difficulty_ramp(), steps + 1))
            cmds.append("step %d\n" % i)
            lines.append(out_line(r, terminal, env))
            steps += 1
            after += terminal
        outputs.append(lines)
        stats.append("%d%s/r%s%s" % (steps, "T" if terminal else "", env.env.difficulty_ramp(),
                                     "(%s)" % ",".join(ramps[-2:]) if ramps else ""))
        digest = hashlib.sha256("".join(lines).encode()).hexdigest()
        cmds.append("episode %s %d\n" % (digest, len(lines)))
    return cmds, outputs, stats


class RemoveCounter:
    """--coverage: Seaquest's list.remove calls counted by calling line."""

    def __init__(self):
        import collections
        self.calls, self.other = collections.Counter(), collections.Counter()
        self.total_calls, self.total_other = collections.Counter(), collections.Counter()
        self.on = False  # only the real environment's steps, not those of the copies a policy looks ahead on
        self.real = None  # the environment a run resets (copies are never reset)
        counter = self

        class CountingList(list):
            def remove(self, val):
                if counter.on:
                    line = sys._getframe(1).f_lineno
                    counter.calls[line] += 1
                    first = next(e for e in self if e == val)
                    counter.other[line] += first is not val
                list.remove(self, val)
        self.cls = CountingList

    def install(self, Environment):
        reset, act, counter = Environment.reset, Environment.act, self

        def counted_reset(env):
            reset(env)
            counter.real = env
            for name in ("f_bullets", "e_bullets", "e_fish", "e_subs", "divers"):
                if hasattr(env.env, name):
                    setattr(env.env, name, counter.cls(getattr(env.env, name)))

        def counted_act(env, a):
            counter.on = env is counter.real
            try:
                return act(env, a)
            finally:
                counter.on = False
        Environment.reset, Environment.act = counted_reset, counted_act

    def report(self):
        """The counts since the last report, added to the totals."""
        text = "remove calls by line %s; of another element: %s" % (
            dict(sorted(self.calls.items())), dict(sorted((k, v) for k, v in self.other.items() if v)) or "none")
        self.total_calls.update(self.calls)
        self.total_other.update(self.other)
        self.calls.clear()
        self.other.clear()
        return text


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--minatar", required=True, help="a checkout of kenjyoung/MinAtar at 4241f24")
    ap.add_argument("--out", default="tests/fixtures/minatar", help="output folder")
    ap.add_argument("--games", default=",".join(GAMES))
    ap.add_argument("--coverage", action="store_true", help="count Seaquest's list.remove calls (module docstring)")
    a = ap.parse_args()
    sys.path.insert(0, os.path.abspath(a.minatar))
    from minatar.environment import Environment
    counter = RemoveCounter() if a.coverage else None
    if counter:
        counter.install(Environment)
    os.makedirs(a.out, exist_ok=True)
    for game in a.games.split(","):
        all_cmds, full = ["# MinAtar reference trajectories (scripts/minatar_reference.py): %s\n" % game], None
        nsteps = 0
        runs = RUNS + EXTRA_RUNS.get(game, [])
        for spec in runs:
            cmds, outputs, stats = run(game, spec, Environment)
            print("  %s: steps/ramp per episode %s" % (cmds[0].strip(), " ".join(stats)), file=sys.stderr)
            if counter and game == "seaquest":
                print("    " + counter.report(), file=sys.stderr)
            all_cmds += cmds
            nsteps += sum(len(o) for o in outputs)
            if full is None:
                full = outputs[0]
        with gzip.GzipFile(os.path.join(a.out, game + ".txt.gz"), "wb", mtime=0) as f:
            f.write("".join(all_cmds).encode())
        with gzip.GzipFile(os.path.join(a.out, game + ".full.txt.gz"), "wb", mtime=0) as f:
            f.write("".join(full).encode())
        print("%s: %d runs, %d output lines" % (game, len(runs), nsteps), file=sys.stderr)
        if counter and game == "seaquest":
            counter.calls, counter.other = counter.total_calls, counter.total_other
            print("  all runs: " + counter.report(), file=sys.stderr)


if __name__ == "__main__":
    main()
