#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""minatar_check.py GORILA FIXTURES GAME: replay every run of
FIXTURES/GAME.txt.gz (written by scripts/minatar_reference.py) through
`GORILA env replay ARGS` and compare each episode's output with the
reference's SHA-256, and the first episode of the first run line by line
with FIXTURES/GAME.full.txt.gz. Prints one summary line; exits 1 (naming
the run, episode and, for the full episode, the first differing step) on
any difference, 0 when all are equal. Used by tests/cli/minatar.sh."""
import gzip
import hashlib
import subprocess
import sys


def parse(path):
    """[(args, commands, [(sha256, nlines), ...]), ...]"""
    runs = []
    with gzip.open(path, "rt") as f:
        for line in f:
            if line.startswith("#"):
                continue
            word = line.split()[0]
            if word == "run":
                runs.append((line.split()[1:], [], []))
            elif word == "episode":
                _, digest, n = line.split()
                runs[-1][2].append((digest, int(n)))
            else:
                runs[-1][1].append(line)
    return runs


def episodes(commands, lines):
    """Split the output lines by episode: a reset starts one."""
    eps, i = [], 0
    for c in commands:
        word = c.split()[0]
        if word == "seed":
            continue
        if word == "reset":
            eps.append([])
        eps[-1].append(lines[i])
        i += 1
    return eps


def main():
    gorila, fixtures, game = sys.argv[1:4]
    runs = parse("%s/%s.txt.gz" % (fixtures, game))
    with gzip.open("%s/%s.full.txt.gz" % (fixtures, game), "rt") as f:
        full = f.read().splitlines(keepends=True)
    problems, neps, nlines = [], 0, 0
    for k, (args, commands, expected) in enumerate(runs, 1):
        p = subprocess.run([gorila, "env", "replay"] + args, input="".join(commands).encode(),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if p.returncode != 0:
            problems.append("run %d (%s): exit %d: %s" % (k, " ".join(args), p.returncode, p.stderr.decode().strip()))
            continue
        got = episodes(commands, p.stdout.decode().splitlines(keepends=True))
        if len(got) != len(expected):
            problems.append("run %d: %d episodes, expected %d" % (k, len(got), len(expected)))
            continue
        for e, (lines, (digest, n)) in enumerate(zip(got, expected), 1):
            neps += 1
            nlines += len(lines)
            if hashlib.sha256("".join(lines).encode()).hexdigest() != digest or len(lines) != n:
                problems.append("run %d (%s) episode %d: output differs from the reference (%d lines, expected %d)"
                                % (k, " ".join(args), e, len(lines), n))
            if k == 1 and e == 1 and lines != full:
                bad = next((i for i, (a, b) in enumerate(zip(lines, full)) if a != b), min(len(lines), len(full)))
                problems.append("run 1 episode 1: line %d (%s) differs from %s.full.txt.gz:\n  got      %s\n"
                                "  expected %s" % (bad + 1, "reset" if bad == 0 else "step %d" % bad, game,
                                                   lines[bad][:80] if bad < len(lines) else "(none)",
                                                   full[bad][:80] if bad < len(full) else "(none)"))
    if problems:
        print("%s: %d difference(s):\n%s" % (game, len(problems), "\n".join(problems)))
        return 1
    print("%s: %d runs, %d episodes, %d lines equal to the reference" % (game, len(runs), neps, nlines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
