# SPDX-License-Identifier: MIT
"""The MinAtar results' statistics (docs/RESULTS.md, "MinAtar"):

threshold RUN_DIR... [--at FRAMES] [--json]
    Each run's greedy evaluation at FRAMES env steps (default 1,000,000:
    the eval.csv row logged at exactly that step, which a run with
    run.max_env_steps FRAMES logs at its end), their median, and its
    floor: the per-game threshold the results are measured against.
    A run without that row is an error (it did not reach FRAMES).

curves [--ours RUN_DIR...] [--ref PREFIX...] [--ref-means CSV...] [--group LABEL RUN...]...
       [--window W] [--frames N] [--permutation] [--json] [--plot OUT.png]
       [--ours-label L] [--ref-label L] [--title T]
    MinAtar's own statistic: per run, the mean return of the training
    episodes that ended in each window of W frames (default 250,000) up
    to N (default: the shortest run's end, rounded down to a window);
    per window, the mean over runs and its 95% percentile-bootstrap
    interval over runs (2,000 resamples, fixed seed). --ours reads a gorila
    run's episodes.csv (env_steps at the episode's end, return); --ref the
    PREFIX.episodes.csv that scripts/minatar_dqn_reference.py writes (frame,
    return). With both, each window says whether ours is inside the
    reference's interval or above it (the goal), or below; with
    --permutation also how far the two differ beyond run-to-run spread:
    gorila's mean of the runs' window means minus the reference's, and the
    exact two-sided permutation p: the share of all ways to split the
    pooled runs' window means into two groups of the two sizes whose
    difference of means is at least as large in absolute value (every
    split counted, none sampled; refused above 2,000,000 splits; no test
    correction). --ref-means CSV adds to the reference runs whose logs
    are gone but whose window means were recorded: CSV has the columns
    run, window_end, mean (lines starting with # are comments), one row
    per run and window, the windows those of --window from the first;
    each run counts as one reference run. --group LABEL
    RUN... (repeatable) adds a group of its own, each RUN a gorila run
    directory or a reference PREFIX. --plot draws each group's mean per
    window (a point at the window's middle) and its 95% band; the legend
    names the group (--ours-label, default "gorila"; --ref-label, default
    "dqn.py"; a --group's LABEL), its run count and the seeds of its
    gorila runs (run.seed in their config.yaml). A finer --window (50000)
    makes a smoother plot. A window that ends after a run's end (a gorila
    run's last metrics.csv row, the reference's meta.json frames_done or
    last progress.csv row) has no value of that run: a run that stopped
    part-way does not count its last, partial window.

evals --group LABEL RUN_DIR... [--group ...] [--threshold T]
      [--axis frames|seconds] [--json] [--plot OUT.png] [--title T]
    The greedy evaluations (eval.csv) of gorila runs in groups: per run
    the evaluations, the best, and with --threshold T the env steps and
    wall seconds of its first evaluation with mean return >= T ("not
    reached" without one); per group the median of those over its runs,
    a run that did not reach T counting as later than any that did.
    --plot draws per group the median and interquartile range over its
    runs against env steps (--axis frames, the default) or wall seconds:
    a run's value is its latest evaluation, carried forward after it
    ended, up to the group's longest run, drawn where at least half the
    group's runs have evaluated; T as a dashed line.

A resumed run continues from its last checkpoint and appends to its
CSVs, so the rows its earlier segment wrote after that checkpoint are of
a stretch the resume rolled back: they are left out (evals says which).
In eval.csv a row whose updates are not above the row before it starts
the resumed segment, and the earlier rows at those updates or more go;
in episodes.csv a row whose env steps and wall seconds are both below
the row before it, and the earlier rows at its env steps or more go (an
episode of the old segment that ended between the checkpoint and the
new segment's first episode stays).

The runs may still be going: a CSV's last line without its newline (the
row being written) is left out, and a run's end is its last complete
row. A row that is not a number where one belongs is an error naming
the file and line.

--plot writes OUT.png with gnuplot, the numbers it draws in OUT.dat (a
block per group, its comment line says the columns) and the gnuplot
script in OUT.gp. Errors (a missing file, a bad number, no gnuplot) are
one line on stderr and exit status 2.
"""
import argparse
import csv
import io
import itertools
import json
import math
import os
import statistics
import sys

from tools.compare.plots import band
from tools.minatar import plot
from tools.seeds.stats import bootstrap_ci


class Fail(Exception):
    pass


def number(text, what):
    try:
        v = float(text)
    except ValueError:
        v = math.nan
    if not math.isfinite(v):
        raise Fail("%s: not a number: %r" % (what, text))
    return v


def csv_rows(path):
    """csv.DictReader of the file at path, less a last line without its
    newline: the row a run still going is writing (or the torn row a
    killed one left, which a resume trims)."""
    with open(path) as f:
        text = f.read()
    if not text.endswith("\n"):
        text = text[:text.rfind("\n") + 1]
    return csv.DictReader(io.StringIO(text))


def eval_rows(run, dropped=None):
    """[(wall_seconds, env_steps, mean_return, updates)] of RUN/eval.csv in
    the order the run made them, less the rows a resume rolled back (the
    module's docstring), which go to the list dropped."""
    path = os.path.join(run, "eval.csv")
    if not os.path.isfile(path):
        raise Fail("%s: no eval.csv (not a gorila run directory?)" % run)
    rows = []
    for line, row in enumerate(csv_rows(path), 2):
        try:
            r = (float(row["wall_seconds"]), int(row["env_steps"]), float(row["mean_return"]),
                 int(row["updates"]))
        except (KeyError, TypeError, ValueError):
            raise Fail("%s:%d: not an eval.csv row (wall_seconds, env_steps, updates, mean_return)"
                       % (path, line))
        if rows and r[3] <= rows[-1][3]:
            if dropped is not None:
                dropped.extend(x for x in rows if x[3] >= r[3])
            rows = [x for x in rows if x[3] < r[3]]
        rows.append(r)
    return rows


def eval_at(run, at):
    rows = eval_rows(run)
    for r in rows:
        if r[1] == at:
            return r[2]
    raise Fail("%s: no evaluation at %d env steps (its last is at %s): the run has not reached it"
               % (run, at, rows[-1][1] if rows else None))


def threshold(runs, at):
    values = [eval_at(r, at) for r in runs]
    med = statistics.median(values)
    return {"at_env_steps": at, "runs": [{"run": r, "eval": v} for r, v in zip(runs, values)],
            "median": med, "threshold": math.floor(med)}


def episodes(path, frame_col):
    """[(frame, return)] of an episodes.csv, less the rows a resume rolled
    back (gorila's: the module's docstring; the reference's have no wall
    time and are not resumed that way)."""
    out = []
    last_wall = None
    for line, row in enumerate(csv_rows(path), 2):
        try:
            frame, ret = int(row[frame_col]), float(row["return"])
            wall = float(row["wall_seconds"]) if "wall_seconds" in row else None
        except (KeyError, TypeError, ValueError):
            raise Fail("%s:%d: not an episodes row (%s, return)" % (path, line, frame_col))
        if out and wall is not None and frame < out[-1][0] and wall < last_wall:
            out = [e for e in out if e[0] < frame]
        out.append((frame, ret))
        last_wall = wall
    if not out:
        raise Fail("%s: no episodes" % path)
    return out


def last_csv_value(path, col):
    """col of a CSV file's last row, or None."""
    try:
        rows = list(csv_rows(path))
        return float(rows[-1][col]) if rows else None
    except (OSError, KeyError, TypeError, ValueError):
        return None


def run_end(spec, eps):
    """The frames a run has done, where it says (a gorila run's last
    metrics.csv row; the reference's meta.json frames_done or its last
    progress.csv row), at least its last episode's end; None where it
    does not say."""
    ends = [last_csv_value(os.path.join(spec, "metrics.csv"), "env_steps"),
            last_csv_value(spec + ".progress.csv", "frame")]
    try:
        with open(spec + ".meta.json") as f:
            ends.append(float(json.load(f)["frames_done"]))
    except (OSError, KeyError, TypeError, ValueError):
        pass
    ends = [e for e in ends if e is not None]
    return max(ends + [eps[-1][0]]) if ends else None


def window_means(run, window, n_windows):
    """run: (episodes, end); a window past the run's known end is None."""
    eps, end = run
    sums, counts = [0.0] * n_windows, [0] * n_windows
    for frame, ret in eps:
        w = (frame - 1) // window  # an episode ending at frame `window` belongs to the first window
        if 0 <= w < n_windows:
            sums[w] += ret
            counts[w] += 1
    return [sums[i] / counts[i] if counts[i] and (end is None or end >= (i + 1) * window) else None
            for i in range(n_windows)]


def summarize(per_run, i):
    vals = [m[i] for m in per_run if m[i] is not None]
    if not vals:
        return None
    lo, hi = bootstrap_ci(vals, stat=statistics.fmean) if len(vals) > 1 else (vals[0], vals[0])
    return {"n": len(vals), "mean": statistics.fmean(vals), "ci95": [lo, hi]}


def ours_run(run):
    eps = episodes(os.path.join(run, "episodes.csv"), "env_steps")
    return eps, run_end(run, eps)


def recorded_runs(path, window):
    """The runs of a --ref-means CSV as (episodes, end): one episode per
    window, ending on its last frame, whose return is the recorded mean,
    so that window_means gives back exactly the recorded values."""
    with open(path) as f:
        text = "".join(line for line in f if not line.startswith("#"))
    runs = {}
    for line, row in enumerate(csv.DictReader(io.StringIO(text)), 2):
        try:
            end, mean = int(row["window_end"]), float(row["mean"])
            name = row["run"].strip()
        except (KeyError, TypeError, ValueError, AttributeError):
            raise Fail("%s: row %d (not counting comments): not a run,window_end,mean row" % (path, line))
        runs.setdefault(name, []).append((end, mean))
    if not runs:
        raise Fail("%s: no recorded window means" % path)
    for name, eps in runs.items():
        eps.sort()
        if [e for e, _ in eps] != [(i + 1) * window for i in range(len(eps))]:
            raise Fail("%s: run %s's windows end at %s, not at every %d frames from %d (--window)"
                       % (path, name, ",".join(str(e) for e, _ in eps), window, window))
    return [(eps, eps[-1][0]) for eps in runs.values()]


def ref_run(prefix):
    eps = episodes(prefix + ".episodes.csv", "frame")
    return eps, run_end(prefix, eps)


def run_episodes(spec):
    """A --group RUN's episodes: a gorila run directory's episodes.csv, or
    a reference PREFIX's PREFIX.episodes.csv."""
    if os.path.isfile(os.path.join(spec, "episodes.csv")):
        return ours_run(spec)
    if os.path.isfile(spec + ".episodes.csv"):
        return ref_run(spec)
    raise Fail("%s: neither a gorila run directory (no episodes.csv) nor a reference prefix (no %s.episodes.csv)"
               % (spec, os.path.basename(spec)))


def run_seed(run):
    """run.seed of a gorila run's config.yaml, or None."""
    if run is None:
        return None
    try:
        with open(os.path.join(run, "config.yaml")) as f:
            in_run = False
            for line in f:
                if not line.startswith(" "):
                    in_run = line.rstrip() == "run:"
                elif in_run and line.strip().startswith("seed:"):
                    return int(line.split(":", 1)[1])
    except (OSError, ValueError):
        pass
    return None


def legend(label, runs):
    """LABEL, N runs (seeds 1-3, 7): the seeds when every run has one."""
    text = "%s, %d run%s" % (label, len(runs), "" if len(runs) == 1 else "s")
    seeds = sorted({run_seed(r) for r in runs} - {None})
    if not runs or len(seeds) != len(runs):
        return text
    spans = []
    for x in seeds:
        if spans and x == spans[-1][1] + 1:
            spans[-1][1] = x
        else:
            spans.append([x, x])
    text += " (seed%s %s)" % ("" if len(seeds) == 1 else "s",
                              ", ".join(str(a) if a == b else "%d-%d" % (a, b) for a, b in spans))
    return text


def group_args(groups, what):
    """[(label, [RUN...])] of repeated --group LABEL RUN... options."""
    out = []
    for g in groups or []:
        if len(g) < 2:
            raise Fail("--group %s: no %s after its label" % (g[0], what))
        if g[0] in [x[0] for x in out]:
            raise Fail("--group %s: the label is given twice" % g[0])
        out.append((g[0], g[1:]))
    return out


def curve_groups(a):
    """[(key, legend, [episodes per run])]: --ours, --ref, then each --group."""
    sets = []
    if a.ours:
        sets.append(("ours", legend(a.ours_label, a.ours),
                     [ours_run(r) for r in a.ours]))
    if a.ref or a.ref_means:
        runs = [ref_run(p) for p in a.ref]
        for path in a.ref_means:
            runs += recorded_runs(path, a.window)
        sets.append(("reference", legend(a.ref_label, a.ref + [None] * (len(runs) - len(a.ref))), runs))
    for label, runs in group_args(a.group, "run directories or reference prefixes"):
        if label in ("ours", "reference"):
            raise Fail("--group %s: the label is --ours's or --ref's" % label)
        sets.append((label, legend(label, runs), [run_episodes(r) for r in runs]))
    if not sets:
        raise Fail("curves: give --ours RUN_DIR..., --ref PREFIX... or --group LABEL RUN...")
    return sets


def curves(sets, window, frames, permute=False):
    ends = [max(f for f, _ in eps) for _, _, runs in sets for eps, _ in runs]
    n = (frames if frames else min(ends)) // window
    if n < 1:
        raise Fail("curves: the shortest run ends at %d frames, less than one window of %d" % (min(ends), window))
    rows = []
    means = {name: [window_means(e, window, n) for e in runs] for name, _, runs in sets}
    for i in range(n):
        row = {"window_end": (i + 1) * window}
        for name, _, _ in sets:
            row[name] = summarize(means[name], i)
        if permute:
            t = permutation(*[[m[i] for m in means[k] if m[i] is not None] for k in ("ours", "reference")])
            row["permutation"] = t and {"difference": t[0], "p": t[1], "splits": t[2]}
        if "ours" in row and "reference" in row and row["ours"] and row["reference"]:
            row["ours_vs_reference"] = ("below" if row["ours"]["mean"] < row["reference"]["ci95"][0] else
                                        "above" if row["ours"]["mean"] > row["reference"]["ci95"][1] else "inside")
        rows.append(row)
    return {"window": window, "runs": {k: len(v) for k, _, v in sets},
            "legends": {k: lg for k, lg, _ in sets}, "windows": rows}


MAX_SPLITS = 2000000


def permutation(xs, ys):
    """(mean(xs) - mean(ys), exact two-sided p, splits) over every split of
    xs + ys into groups of len(xs) and len(ys); None if either is empty."""
    nx, n = len(xs), len(xs) + len(ys)
    if not xs or not ys:
        return None
    splits = math.comb(n, nx)
    if splits > MAX_SPLITS:
        raise Fail("--permutation: %d and %d runs make %d splits, more than %d to count"
                   % (nx, len(ys), splits, MAX_SPLITS))
    pooled = xs + ys
    total = math.fsum(pooled)
    observed = math.fsum(xs) / nx - math.fsum(ys) / (n - nx)
    # a split as large as the observed one up to float rounding of the sums counts
    bar = abs(observed) - 1e-9 * max(1.0, abs(observed))
    hits = 0
    for idx in itertools.combinations(range(n), nx):
        sx = math.fsum(pooled[i] for i in idx)
        if abs(sx / nx - (total - sx) / (n - nx)) >= bar:
            hits += 1
    return observed, hits / splits, splits


def fmt(cell):
    if not cell:
        return "-"
    return "%.2f [%.2f, %.2f] (n=%d)" % (cell["mean"], cell["ci95"][0], cell["ci95"][1], cell["n"])


def print_curves(res):
    cols = list(res["runs"])
    vs = "ours" in cols and "reference" in cols
    print("mean training return per %d-frame window, 95%% bootstrap interval over runs (%s)"
          % (res["window"], "; ".join("%s: %s" % (k, res["legends"][k]) for k in cols)))
    pt = any("permutation" in row for row in res["windows"])
    print("| frames | " + " | ".join(cols) + (" | ours vs reference |" if vs else " |")
          + (" ours - reference, permutation p |" if pt else ""))
    print("|---|" + "---|" * len(cols) + ("---|" if vs else "") + ("---|" if pt else ""))
    for row in res["windows"]:
        line = "| %d | " % row["window_end"] + " | ".join(fmt(row[k]) for k in cols)
        line += (" | %s |" % row.get("ours_vs_reference", "-")) if vs else " |"
        if pt:
            t = row["permutation"]
            line += " %s |" % ("%+.2f, p %.3f" % (t["difference"], t["p"]) if t else "-")
        print(line)


def first_reach(rows, t):
    """(env_steps, wall_seconds) of the first evaluation >= t, or None."""
    for wall, steps, ret, _ in rows:
        if ret >= t:
            return steps, wall
    return None


def late_median(values):
    """The median of values, None (not reached) counting as later than
    any number; None when the median falls on one."""
    v = sorted(values, key=lambda x: math.inf if x is None else x)
    n = len(v)
    mid = v[n // 2 - 1: n // 2 + 1] if n % 2 == 0 else [v[n // 2]]
    return None if None in mid else mid[0] if len(mid) == 1 else statistics.fmean(mid)


def evals(groups, t):
    out = []
    for label, runs in group_args(groups, "run directories"):
        rs = []
        for run in runs:
            dropped = []
            rows = eval_rows(run, dropped)
            if not rows:
                raise Fail("%s: eval.csv has no evaluations" % run)
            reach = first_reach(rows, t) if t is not None else None
            best = max(rows, key=lambda r: r[2])
            rs.append({"run": run, "name": os.path.basename(os.path.normpath(run)), "rows": rows,
                       "evaluations": len(rows), "last_env_steps": rows[-1][1], "best": best[2],
                       "best_at_env_steps": best[1], "reached_env_steps": reach[0] if reach else None,
                       "reached_seconds": reach[1] if reach else None,
                       "rolled_back_env_steps": [x[1] for x in dropped]})
        g = {"label": label, "legend": legend(label, runs), "runs": rs}
        if t is not None:
            g["reached"] = sum(r["reached_env_steps"] is not None for r in rs)
            g["median_env_steps"] = late_median([r["reached_env_steps"] for r in rs])
            g["median_seconds"] = late_median([r["reached_seconds"] for r in rs])
        out.append(g)
    if not out:
        raise Fail("evals: give --group LABEL RUN_DIR...")
    return {"threshold": t, "groups": out}


def print_evals(res):
    t = res["threshold"]
    if t is not None:
        print("first greedy evaluation with mean return >= %g (a run that did not reach it counts as later "
              "than any that did)" % t)
    print("| group | run | evaluations (to env steps) | best (at env steps) |"
          + (" env steps to %g | seconds to %g |" % (t, t) if t is not None else ""))
    print("|---|---|---|---|" + ("---|---|" if t is not None else ""))
    for g in res["groups"]:
        for r in g["runs"]:
            line = "| %s | %s | %d (%d) | %.2f (%d) |" % (g["label"], r["name"], r["evaluations"],
                                                          r["last_env_steps"], r["best"], r["best_at_env_steps"])
            if t is not None:
                line += (" %d | %.1f |" % (r["reached_env_steps"], r["reached_seconds"])
                         if r["reached_env_steps"] is not None else " not reached | not reached |")
            print(line)
        if t is not None:
            m, s = g["median_env_steps"], g["median_seconds"]
            print("| %s | median (%d of %d reached) | | | %s | %s |"
                  % (g["label"], g["reached"], len(g["runs"]), "not reached" if m is None else "%.0f" % m,
                     "not reached" if s is None else "%.1f" % s))
    for g in res["groups"]:
        for r in g["runs"]:
            if r["rolled_back_env_steps"]:
                print("%s: left out %d evaluation(s) that a resume rolled back (at env steps %s)"
                      % (r["name"], len(r["rolled_back_env_steps"]), ", ".join(map(str, r["rolled_back_env_steps"]))))


class Parser(argparse.ArgumentParser):
    """Usage errors as one line and exit status 2, as the others."""

    def error(self, message):
        print("minatar-results: %s (%s --help)" % (message, self.prog), file=sys.stderr)
        sys.exit(2)


def section(name):
    """The module docstring's paragraph on subcommand name."""
    return next(p for p in __doc__.split("\n\n") if p.startswith(name + " "))


def parser():
    ap = Parser(prog="minatar-results", description=__doc__.split("\n\n")[0],
                epilog=__doc__.split("\n\n", 1)[1], formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    raw = argparse.RawDescriptionHelpFormatter
    t = sub.add_parser("threshold", help="the per-game threshold", description=section("threshold"),
                       formatter_class=raw)
    t.add_argument("runs", nargs="+")
    t.add_argument("--at", type=int, default=1000000)
    t.add_argument("--json", action="store_true")
    c = sub.add_parser("curves", help="mean training return per window, and --plot", description=section("curves"),
                       formatter_class=raw)
    c.add_argument("--ours", nargs="*", default=[])
    c.add_argument("--ref", nargs="*", default=[])
    c.add_argument("--ref-means", nargs="*", default=[], metavar="CSV",
                   help="reference runs as recorded window means (columns run, window_end, mean)")
    c.add_argument("--group", nargs="+", action="append", metavar=("LABEL", "RUN"),
                   help="a group of gorila run directories and/or reference prefixes (repeatable)")
    c.add_argument("--ours-label", default="gorila", help="--ours's name in the plot (default: gorila)")
    c.add_argument("--ref-label", default="dqn.py", help="--ref's name in the plot (default: dqn.py)")
    c.add_argument("--window", type=int, default=250000, help="frames per window (default: 250000)")
    c.add_argument("--frames", type=int, default=0, help="up to N frames (default: the shortest run's end)")
    c.add_argument("--permutation", action="store_true",
                   help="per window, the exact two-sided permutation test of ours against the reference")
    e = sub.add_parser("evals", help="greedy evaluations in groups, frames to --threshold, and --plot",
                       description=section("evals"), formatter_class=raw)
    e.add_argument("--group", nargs="+", action="append", metavar=("LABEL", "RUN_DIR"),
                   help="a group of gorila run directories (repeatable)")
    e.add_argument("--threshold", metavar="T", help="the first env steps and seconds at evaluation >= T")
    e.add_argument("--axis", choices=("frames", "seconds"), default="frames",
                   help="the plot's x axis: env steps (default) or wall seconds")
    for x in (c, e):
        x.add_argument("--json", action="store_true", help="the figures as one JSON object")
        x.add_argument("--plot", metavar="OUT.png", help="draw OUT.png (data: OUT.dat, script: OUT.gp)")
        x.add_argument("--title", help="the plot's title (default: what it shows)")
    return ap


def run_curves(a):
    if a.window < 1:
        raise Fail("--window must be positive")
    if a.plot:
        plot.paths(a.plot)
        plot.terminal()
    sets = curve_groups(a)
    if a.permutation and not (a.ours and (a.ref or a.ref_means)):
        raise Fail("--permutation: give --ours, and --ref or --ref-means")
    res = curves(sets, a.window, a.frames, a.permutation)
    if a.json:
        print(json.dumps(res))
    else:
        print_curves(res)
    if a.plot:
        plot.curves_plot(a.plot, res, [(k, lg) for k, lg, _ in sets], a.title)


def run_evals(a):
    t = number(a.threshold, "--threshold") if a.threshold is not None else None
    if a.plot:
        plot.paths(a.plot)
        plot.terminal()
    res = evals(a.group, t)
    axis = 1 if a.axis == "frames" else 0
    bands = []
    for g in res["groups"]:
        runs = [r.pop("rows") for r in g["runs"]]
        bands.append((g["legend"], band([[x[:3] for x in rows] for rows in runs], axis,
                                        max(rows[-1][axis] for rows in runs))))
    if a.json:
        print(json.dumps(res))
    else:
        print_evals(res)
    if a.plot:
        plot.evals_plot(a.plot, [b for b in bands if b[1]], axis, t, a.title)


def main(argv):
    a = parser().parse_args(argv[1:])
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
        elif a.cmd == "curves":
            run_curves(a)
        else:
            run_evals(a)
    except (Fail, plot.PlotFail, OSError, KeyError, ValueError) as e:
        print("minatar-results: %s" % e, file=sys.stderr)
        return 2
    return 0
