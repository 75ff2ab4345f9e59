# SPDX-License-Identifier: MIT
"""The MinAtar results' statistics (docs/RESULTS.md, "MinAtar"):

threshold RUN_DIR... [--at FRAMES] [--json]
    Each run's greedy evaluation at FRAMES env steps (default 1,000,000:
    the eval.csv row logged at exactly that step, which a run with
    run.max_env_steps FRAMES logs at its end), their median, and its
    floor: the per-game threshold the results are measured against.
    A run without that row is an error (it did not reach FRAMES).

curves [--ours RUN_DIR...] [--ref PREFIX...] [--window W] [--frames N] [--json]
    MinAtar's own statistic: per run, the mean return of the training
    episodes that ended in each window of W frames (default 250,000) up
    to N (default: the shortest run's end, rounded down to a window);
    per window, the mean over runs and its 95% percentile-bootstrap
    interval over runs (2,000 resamples, fixed seed). --ours reads a gorila
    run's episodes.csv (env_steps at the episode's end, return); --ref the
    PREFIX.episodes.csv that scripts/minatar_dqn_reference.py writes (frame,
    return). With both, each window says whether ours is inside the
    reference's interval or above it (the goal), or below.
"""
import argparse
import csv
import json
import math
import os
import statistics
import sys

from tools.seeds.stats import bootstrap_ci


class Fail(Exception):
    pass


def eval_at(run, at):
    path = os.path.join(run, "eval.csv")
    if not os.path.isfile(path):
        raise Fail("%s: no eval.csv (not a gorila run directory?)" % run)
    last = None
    with open(path) as f:
        for row in csv.DictReader(f):
            steps = int(row["env_steps"])
            last = steps
            if steps == at:
                return float(row["mean_return"])
    raise Fail("%s: no evaluation at %d env steps (its last is at %s): the run has not reached it"
               % (run, at, last))


def threshold(runs, at):
    values = [eval_at(r, at) for r in runs]
    med = statistics.median(values)
    return {"at_env_steps": at, "runs": [{"run": r, "eval": v} for r, v in zip(runs, values)],
            "median": med, "threshold": math.floor(med)}


def episodes(path, frame_col):
    out = []
    with open(path) as f:
        for row in csv.DictReader(f):
            out.append((int(row[frame_col]), float(row["return"])))
    if not out:
        raise Fail("%s: no episodes" % path)
    return out


def window_means(eps, window, n_windows):
    sums, counts = [0.0] * n_windows, [0] * n_windows
    for frame, ret in eps:
        w = (frame - 1) // window  # an episode ending at frame `window` belongs to the first window
        if 0 <= w < n_windows:
            sums[w] += ret
            counts[w] += 1
    return [sums[i] / counts[i] if counts[i] else None for i in range(n_windows)]


def summarize(per_run, i):
    vals = [m[i] for m in per_run if m[i] is not None]
    if not vals:
        return None
    lo, hi = bootstrap_ci(vals, stat=statistics.fmean) if len(vals) > 1 else (vals[0], vals[0])
    return {"n": len(vals), "mean": statistics.fmean(vals), "ci95": [lo, hi]}


def curves(ours, refs, window, frames):
    sets = {}
    if ours:
        sets["ours"] = [episodes(os.path.join(r, "episodes.csv"), "env_steps") for r in ours]
    if refs:
        sets["reference"] = [episodes(p + ".episodes.csv", "frame") for p in refs]
    if not sets:
        raise Fail("curves: give --ours RUN_DIR... and/or --ref PREFIX...")
    ends = [max(f for f, _ in eps) for runs in sets.values() for eps in runs]
    n = (frames if frames else min(ends)) // window
    if n < 1:
        raise Fail("curves: the shortest run ends at %d frames, less than one window of %d" % (min(ends), window))
    rows = []
    for i in range(n):
        row = {"window_end": (i + 1) * window}
        for name, runs in sets.items():
            row[name] = summarize([window_means(e, window, n) for e in runs], i)
        if "ours" in row and "reference" in row and row["ours"] and row["reference"]:
            row["ours_vs_reference"] = ("below" if row["ours"]["mean"] < row["reference"]["ci95"][0] else
                                        "above" if row["ours"]["mean"] > row["reference"]["ci95"][1] else "inside")
        rows.append(row)
    return {"window": window, "runs": {k: len(v) for k, v in sets.items()}, "windows": rows}


def fmt(cell):
    if not cell:
        return "-"
    return "%.2f [%.2f, %.2f] (n=%d)" % (cell["mean"], cell["ci95"][0], cell["ci95"][1], cell["n"])


def print_curves(res):
    cols = [k for k in ("ours", "reference") if k in res["runs"]]
    print("mean training return per %d-frame window, 95%% bootstrap interval over runs (%s)"
          % (res["window"], ", ".join("%s: %d runs" % (k, res["runs"][k]) for k in cols)))
    print("| frames | " + " | ".join(cols) + (" | ours vs reference |" if len(cols) == 2 else " |"))
    print("|---|" + "---|" * len(cols) + ("---|" if len(cols) == 2 else ""))
    for row in res["windows"]:
        line = "| %d | " % row["window_end"] + " | ".join(fmt(row[k]) for k in cols)
        print(line + (" | %s |" % row.get("ours_vs_reference", "-") if len(cols) == 2 else " |"))


def main(argv):
    ap = argparse.ArgumentParser(prog="minatar-results", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("threshold")
    t.add_argument("runs", nargs="+")
    t.add_argument("--at", type=int, default=1000000)
    t.add_argument("--json", action="store_true")
    c = sub.add_parser("curves")
    c.add_argument("--ours", nargs="*", default=[])
    c.add_argument("--ref", nargs="*", default=[])
    c.add_argument("--window", type=int, default=250000)
    c.add_argument("--frames", type=int, default=0)
    c.add_argument("--json", action="store_true")
    a = ap.parse_args(argv[1:])
    try:
        if a.cmd == "threshold":
            res = threshold(a.runs, a.at)
            if a.json:
                print(json.dumps(res))
            else:
                for r in res["runs"]:
                    print("%s: greedy evaluation %.2f at %d env steps" % (r["run"], r["eval"], a.at))
                print("median %.3f over %d runs; threshold (its floor) %d"
                      % (res["median"], len(res["runs"]), res["threshold"]))
        else:
            if a.window < 1:
                raise Fail("--window must be positive")
            res = curves(a.ours, a.ref, a.window, a.frames)
            print(json.dumps(res) if a.json else "", end="\n" if a.json else "")
            if not a.json:
                print_curves(res)
    except (Fail, OSError, KeyError, ValueError) as e:
        print("minatar-results: %s" % e, file=sys.stderr)
        return 2
    return 0
