# SPDX-License-Identifier: MIT
"""scripts/seeds's command line: main(argv). Parses and checks the input
(nothing runs before every config and --set has passed `gorila config
check`), runs each (config, seed) once, interleaved, prints a row per run
as it ends and the statistics of tools/seeds/stats.py at the end."""
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import time

from ..compare import facts, job
from ..compare.errors import InputError
from ..compare.stats import DASH, num
from . import record, stats

USAGE = """\
scripts/seeds CONFIG [-n N] [--first S] [--set key=value]... [--markdown] [--solved-on test|selection]
scripts/seeds --compare A.yaml B.yaml [C.yaml...] [same options]
scripts/seeds CONFIG --sweep key=v1,v2[,...] [same options]
scripts/seeds --resume DIR [--markdown] [--solved-on test|selection]

Trains CONFIG once per seed (seeds S .. S+N-1, default 1..5), one run
after the other (never in parallel: the runs are timed), in the local
trainer or, for a distributed config, through scripts/launch. Prints a row
per run as it ends, then the statistics of all N runs (Agarwal et al.
2021, "Deep RL at the edge of the statistical precipice"):
  solved k/N with its Wilson 95% score interval;
  env steps to solve, seconds to solve, best eval, final eval (and the
  held-out test returns when the runs have them): n, median, IQM (mean of
  the middle 50%: scipy.stats.trim_mean(x, 0.25), floor(n/4) runs cut at
  each end), a 95% percentile-bootstrap interval of the IQM (2000
  resamples of each config's own runs, fixed seed: the same runs give the
  same interval) and mean +- sample sd.
Every run counts: an unsolved run counts at its budget (run.max_env_steps
env steps, or its env steps when that is 0; its wall seconds), a failed
run (non-zero exit, its status in its row) as unsolved; the returns are
over the runs that logged one. "\u2014" marks a value that does not exist.
Row columns:
  seed solved solved_test at_env_steps at_seconds env_steps wall_seconds
  best_eval saved_best last_eval saved_final test_best test_final
solved is summary.json's solved ("exit N" for a failed run);
best_eval and last_eval are what summary.json logged; saved_best and
saved_final evaluate the run's checkpoints/best and final checkpoint again
(`gorila eval --checkpoint best|final`, the run's eval seed and episodes),
and a line counts the runs where they differ from the logged ones.
solved_test, test_best and test_final are summary.json's solved_test,
test_best_return and test_final_return (the held-out test evaluation).
--solved-on test (default): a run is solved when summary.json's
solved_test is true (a run without the key: its `solved`, with a note;
solved on the test alone, it counts at best_at_env_steps, the step of the
network tested); --solved-on selection: summary.json's solved, as logged
during training. Runs that stopped before their env-step budget (a signal,
run.max_seconds) are named in a line under the statistics.
--compare A.yaml B.yaml ...: every config on the same seeds, interleaved
(seed S of A, seed S of B, seed S+1 of A, ...), one environment only; the
statistics side by side and, for each pair, the probability of
improvement P(X > Y) in env steps to solve (a random run of X needs fewer
than a random run of Y; an unsolved run loses to every solved one and
ties with another unsolved one; ties count half) with its bootstrap 95%
interval. --sweep key=v1,v2,...: the same over values of one config key
(each run gets --set key=v after the other --set). Bad input (a config or
value `gorila config check` refuses, an unknown key, configs of different
environments, a malformed --sweep) is one line on stderr and exit 2,
before anything runs.
--markdown: Markdown tables (for docs/RESULTS.md).
Run directories: one folder per invocation, made new (-2, -3, ... when
taken): runs/seeds-<config name>[-k]/ (--compare: seeds-compare-<config
names>, --sweep: seeds-sweep-<config name>-<key>; run.out_dir moves it),
printed first, and in it a run directory per config and seed:
<config>-s<seed> (<config> as labelled in the table, / as -; --sweep:
<key>_<value>-s<seed>), and seeds.json, the record of the invocation:
the configs as given (with their absolute paths and SHA-256), --set, -n,
--first, --sweep, --compare, written (atomically) before the first run
starts, then after every run its exit status and the re-evaluations of
its saved checkpoints. While an invocation runs, its folder is locked
(flock): a --resume of it meanwhile is refused (exit 2).
--resume DIR: continue the invocation that made DIR (runs/seeds-.../),
interrupted or not: the same configs, --set, seeds and interleaved order,
from DIR/seeds.json (DIR with none, a config gone or changed since: one
line, exit 2, nothing runs; only --markdown and --solved-on may be given
again). For each config and seed, in order, its run directory in DIR:
  finished (summary.json with a stop_reason other than signal, no
    held-out test owed): not run again; its row as summary.json says, with
    the exit status seeds.json recorded (0 when none), marked "(earlier)"
    (after the row; in a Markdown table, in its seed cell), saved_best and
    saved_final as seeds.json recorded them for that summary.json (else
    evaluated again, the same way);
  interrupted (stopped by a signal, killed, or its held-out test owed)
    with a checkpoint: continued, `gorila train --resume RUN_DIR` (a
    distributed config: `scripts/launch --resume RUN_DIR`), which trains
    on from its newest complete checkpoint with its own config.yaml (no
    --set: the run's keys, logging.progress=never among them, are in it),
    marked "(resumed)";
  with no checkpoint (killed before its first): nothing is removed; run again
    from the start as a new run beside it (gorila names it <name>-2, -3,
    ...; the newest of those names is the run's from then on);
  none: run, as a new invocation would.
Then the statistics over all runs. A resumed run's summary.json has
"resumed": true and cumulative wall_seconds and solved_at_seconds (the
checkpoint carries them), so seconds to solve stay counted from its start;
a line under the statistics names the runs resumed, whose wall time
includes a restart. --resume may be given again after another interruption.
SIGINT or SIGTERM to this script is passed on to the running run, which
stops cleanly with a final checkpoint (the same signal again: it is
killed); the run runs in a process group of its own and gets SIGTERM from
the kernel when this script dies (kill -9 too), so it never runs on
unattended. scripts/seeds --resume DIR then continues.
Exit status: 0 every run finished (exit 0), 1 some run failed, 2 bad input,
130 interrupted by SIGINT, 143 by SIGTERM (the statistics of the finished
runs are printed)."""

# Keys scripts/seeds sets on every run itself.
OWN_KEYS = ("run.seed", "run.name", "run.out_dir")
NAME_OK = re.compile(r"[^A-Za-z0-9._-]")
MAX_NAME = 63
MAX_SEED = 2 ** 64 - 1


def err(msg):
    print("seeds: error: " + msg, file=sys.stderr)


def one_line(text):
    return "; ".join(line.strip() for line in text.splitlines() if line.strip())


class Arm:
    """One config (with its --set) of the comparison: label, the arguments
    that train it, the facts of its effective config, its runs."""

    def __init__(self, label, config, sets, name_base):
        self.label = label
        self.config = config  # as given (as shown)
        self.path = config  # the file trained (--resume: its absolute path, as recorded)
        self.sets = list(sets)
        self.name_base = name_base
        self.out_dir = None  # the invocation's folder (make_parent)
        self.cfg = {}
        self.runs = []

    def run_name(self, seed):
        return "%s-s%d" % (self.name_base, seed)

    def run_sets(self, seed):
        """What scripts/seeds sets on the run of seed, after the arm's own."""
        out = ["run.seed=%d" % seed, "run.name=%s" % self.run_name(seed)]
        return out + (["run.out_dir=%s" % self.out_dir] if self.out_dir else [])

    @property
    def budget_steps(self):
        return self.cfg.get("run.max_env_steps") or 0

    @property
    def env(self):
        return self.cfg.get("env.name")


class Options:
    def __init__(self):
        self.n = 5
        self.first = 1
        self.sets = []
        self.markdown = False
        self.solved_on = "test"
        self.compare = False
        self.sweep = None
        self.configs = []
        self.resume = None  # --resume DIR
        self.given = []  # the options given, for --resume's check


def parse_int(text, option, lo, hi):
    try:
        v = int(text, 10)
    except ValueError:
        raise InputError("%s: expected an integer, got %r" % (option, text))
    if not lo <= v <= hi:
        raise InputError("%s: %d is out of range (%d to %d)" % (option, v, lo, hi))
    return v


def parse_args(argv):
    """argv without the program name; an Options, or None for --help."""
    o = Options()
    args = list(argv)
    i = 0

    def value(opt):
        if i + 1 >= len(args):
            raise InputError("%s needs a value" % opt)
        return args[i + 1]

    while i < len(args):
        a = args[i]
        if a in ("-h", "--help"):
            return None
        if a.startswith("-") and a != "-":
            o.given.append(a)
        if a == "--resume":
            if o.resume is not None:
                raise InputError("--resume given twice")
            o.resume = value(a)
            i += 2
        elif a == "-n":
            o.n = parse_int(value(a), "-n", 1, 100000)
            i += 2
        elif a == "--first":
            o.first = parse_int(value(a), "--first", 0, MAX_SEED)
            i += 2
        elif a == "--set":
            o.sets.append(value(a))
            i += 2
        elif a == "--markdown":
            o.markdown = True
            i += 1
        elif a == "--solved-on":
            o.solved_on = value(a)
            if o.solved_on not in ("test", "selection"):
                raise InputError("--solved-on: expected test or selection, got %r" % o.solved_on)
            i += 2
        elif a == "--compare":
            o.compare = True
            i += 1
        elif a == "--sweep":
            if o.sweep is not None:
                raise InputError("--sweep given twice: one key at a time")
            o.sweep = parse_sweep(value(a))
            i += 2
        elif a.startswith("-") and a != "-":
            raise InputError("unknown option %s (scripts/seeds --help)" % a)
        else:
            o.configs.append(a)
            i += 1
    if o.resume is not None:
        other = [g for g in o.given if g not in ("--resume", "--markdown", "--solved-on")] + o.configs
        if other:
            raise InputError("--resume DIR takes only --markdown and --solved-on (the configs, seeds and --set are "
                             "DIR/seeds.json's), got %s" % other[0])
        return o
    if o.first + o.n - 1 > MAX_SEED:
        raise InputError("--first %d -n %d: the last seed is past 2^64-1" % (o.first, o.n))
    if not o.configs:
        raise InputError("no CONFIG (scripts/seeds --help)")
    if o.compare:
        if o.sweep is not None:
            raise InputError("--compare and --sweep: one at a time")
        if len(o.configs) < 2:
            raise InputError("--compare needs two configs or more, got %d" % len(o.configs))
        paths = [os.path.realpath(c) for c in o.configs]
        for i, c in enumerate(paths):
            if c in paths[:i]:
                raise InputError("--compare: %s given twice" % o.configs[i])
    elif len(o.configs) > 1:
        raise InputError("one CONFIG, got %d (several: --compare A.yaml B.yaml ...)" % len(o.configs))
    return o


def parse_sweep(text):
    """key=v1,v2,... -> (key, [v1, v2, ...]); InputError when malformed."""
    key, eq, vals = text.partition("=")
    key = key.strip()
    if not eq or not key:
        raise InputError("--sweep %r: expected key=v1,v2,... (e.g. --sweep optimizer.lr=0.0005,0.001)" % text)
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)+", key):
        raise InputError("--sweep %r: %r is not a config key (section.key, e.g. optimizer.lr)" % (text, key))
    if key in OWN_KEYS:
        raise InputError("--sweep %s: scripts/seeds sets %s on every run itself (seeds: -n, --first)" % (key, key))
    values = [v.strip() for v in vals.split(",")]
    if vals.strip() == "" or any(v == "" for v in values):
        raise InputError("--sweep %r: an empty value (expected key=v1,v2,...)" % text)
    if len(set(values)) != len(values):
        raise InputError("--sweep %r: a value given twice" % text)
    return key, values


def config_base(path):
    base = os.path.basename(path)
    return base[:-5] if base.endswith(".yaml") else base


def safe_name(base, last_seed):
    """A run name prefix (only the characters run.name takes) that leaves
    room for "-s<last seed>"."""
    base = NAME_OK.sub("_", base)
    return base[:MAX_NAME - len("-s%d" % last_seed)]


def make_arms(o):
    last = o.first + o.n - 1
    if o.sweep is not None:
        key, values = o.sweep
        return [Arm("%s=%s" % (key, v), o.configs[0], o.sets + ["%s=%s" % (key, v)],
                    safe_name("%s_%s" % (key, v), last)) for v in values]
    labels = short_labels(o.configs)
    return [Arm(label, c, o.sets, safe_name(label.replace("/", "-"), last)) for c, label in zip(o.configs, labels)]


def parent_name(o):
    """The invocation's folder under run.out_dir, before any -k."""
    if o.sweep is not None:
        name = "seeds-sweep-%s-%s" % (config_base(o.configs[0]), o.sweep[0])
    elif o.compare:
        name = "seeds-compare-" + "-".join(config_base(c) for c in o.configs)
    else:
        name = "seeds-" + config_base(o.configs[0])
    return NAME_OK.sub("_", name)[:MAX_NAME - len("-9999")]


def make_parent(o, arms):
    """Make the invocation's own folder, <run.out_dir>/<parent_name>[-k],
    and point every arm's runs into it; its path."""
    out = arms[0].cfg.get("run.out_dir") or "runs"
    base = os.path.join(out, parent_name(o))
    try:
        os.makedirs(out, exist_ok=True)
        for k in range(1, 10000):
            path = base if k == 1 else "%s-%d" % (base, k)
            try:
                os.mkdir(path)
                break
            except FileExistsError:
                continue
        else:
            raise InputError("%s: too many folders of that name (up to -9999)" % base)
    except OSError as e:
        raise InputError("cannot make a folder for the runs in %s: %s" % (out, e))
    for a in arms:
        a.out_dir = path
    return path


def short_labels(paths):
    """Each config's name, with as many of its folders as it takes to tell
    the configs apart (configs/local/cartpole.yaml, configs/cartpole.yaml:
    local/cartpole, configs/cartpole)."""
    parts = [os.path.normpath(p).split(os.sep) for p in paths]
    for p in parts:
        p[-1] = config_base(p[-1])
    for k in range(1, max(len(p) for p in parts) + 1):
        labels = ["/".join(p[-k:]) for p in parts]
        if len(set(labels)) == len(labels):
            return labels
    return list(paths)


def config_check(config, sets, what=""):
    """facts.config_check, its refusal as one line naming the config (and
    what, the --sweep value it was checked with)."""
    try:
        return facts.config_check(config, sets)
    except InputError as e:
        msg = (what + ": " if what else "") + one_line(str(e))
        raise InputError(msg if msg.startswith(config + ":") else "%s: %s" % (config, msg))


def check_arms(o, arms):
    """gorila config check of every arm, as its last run will be named and
    seeded; InputError (one line) on the first refusal or when the arms'
    environments differ."""
    last = o.first + o.n - 1
    if o.sweep is not None:
        config_check(arms[0].path, o.sets)  # first alone, so that a fault of --set is not blamed on --sweep
    for a in arms:
        a.cfg = config_check(a.path, a.sets + a.run_sets(last),
                             "--sweep " + a.label if o.sweep is not None else "")
    envs = {}
    for a in arms:
        envs.setdefault(a.env, a.label)
    if len(envs) > 1:
        what = ", ".join("%s: %s" % (label, env) for env, label in envs.items())
        raise InputError("%s: different environments (%s); the runs compared must be of one environment"
                         % ("--sweep " + o.sweep[0] if o.sweep is not None else "--compare", what))


# ---- one run ---------------------------------------------------------------------

class Run:
    """One seed of one arm: its exit status, run directory, summary.json
    (or {}) and the re-evaluations of its saved checkpoints."""

    def __init__(self, seed):
        self.seed = seed
        self.rc = None
        self.dir = None
        self.summary = {}
        self.seconds = None  # the process's wall time, for a run with no summary
        self.saved_best = None
        self.saved_final = None
        self.summary_sha = None  # of summary.json as read
        self.origin = None  # --resume: "earlier" (not run again) or "resumed" (continued from its checkpoint)

    @property
    def failed(self):
        return self.rc != 0 or not self.summary

    def get(self, key):
        return num(self.summary.get(key))

    def flag(self, key):
        v = self.summary.get(key)
        return v if isinstance(v, bool) else None


def saved_eval(run_dir, which):
    """Mean return of `gorila eval RUN --checkpoint WHICH --json`, or None."""
    p = subprocess.run([facts.GORILA, "eval", run_dir, "--checkpoint", which, "--json"], stdout=subprocess.PIPE,
                       stderr=subprocess.DEVNULL, text=True)
    if p.returncode != 0:
        return None
    try:
        return num(json.loads(p.stdout).get("mean"))
    except (ValueError, AttributeError):
        return None


def read_summary(r):
    """r.summary and r.summary_sha from r.dir's summary.json ({} and None
    when it has none)."""
    r.summary, r.summary_sha = {}, None
    if not r.dir:
        return
    path = os.path.join(r.dir, "summary.json")
    try:
        with open(path) as f:
            r.summary = json.load(f)
        r.summary_sha = record.sha256_file(path)
    except (OSError, ValueError):
        r.summary = {}


def evaluate_saved(r, rec):
    """saved_best and saved_final: from seeds.json when it has them for this
    summary.json, else `gorila eval` of the checkpoints (then recorded)."""
    if not r.summary:
        return
    cached = rec.cached_evals(r.dir, r.summary_sha) if rec else None
    if cached is not None:
        r.saved_best, r.saved_final = cached
    if r.saved_best is None:
        r.saved_best = saved_eval(r.dir, "best")
    if r.saved_final is None:
        r.saved_final = saved_eval(r.dir, "final")


def read_earlier(seed, run_dir, rec):
    """A run an earlier invocation finished: read, not run again."""
    r = Run(seed)
    r.dir = run_dir
    r.origin = "earlier"
    read_summary(r)
    rc = rec.recorded_rc(r.dir, r.summary_sha)
    r.rc = 0 if rc is None else rc
    evaluate_saved(r, rec)
    remember(r, rec)
    return r


def run_one(arm, seed, rec=None, resume_dir=None):
    """Train seed of arm (resume_dir: continue that run directory from its
    checkpoint, with its own config.yaml); its Run, recorded in rec."""
    if resume_dir is not None:
        cmd = [facts.GORILA, "train", "--resume", resume_dir] if arm.cfg["ranks"] == 1 \
            else [facts.LAUNCH, "--resume", resume_dir]
    else:
        args = [arm.path]
        for s in arm.sets + arm.run_sets(seed) + ["logging.progress=never"]:
            args += ["--set", s]
        cmd = [facts.GORILA, "train"] + args if arm.cfg["ranks"] == 1 else [facts.LAUNCH] + args
    r = Run(seed)
    r.origin = "resumed" if resume_dir is not None else None
    t0 = time.monotonic()
    # in a process group of its own, SIGTERM when this script dies (tools/compare/job.py); its output to a
    # file, not a pipe, so that a run outliving this script by its clean stop is not killed writing to it
    with tempfile.TemporaryFile("w+", errors="replace") as out:
        p = job.start(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        try:
            p.wait()
        except KeyboardInterrupt as e:
            # Passed on to the run, which stops cleanly with a final
            # checkpoint: wait for it. A second one kills it.
            print("seeds: interrupted: waiting for %s seed %d to stop (again: kill it)" % (arm.label, seed),
                  file=sys.stderr)
            job.stop(p, job.signum_of(e))
            try:
                p.wait()
            except KeyboardInterrupt:
                p.kill()
                p.wait()
            raise
        out.seek(0)
        log = out.read()
    r.seconds = time.monotonic() - t0
    r.rc = p.returncode
    dirs = re.findall(r"^run directory: (.*)$", log, re.M)
    r.dir = dirs[-1] if dirs else resume_dir
    read_summary(r)
    if r.failed:
        why = "exit %d" % r.rc if r.rc != 0 else "no summary.json"
        print("seeds: %s seed %d failed (%s); the last lines of its output:" % (arm.label, seed, why),
              file=sys.stderr)
        for line in log.splitlines()[-5:]:
            print("  " + line, file=sys.stderr)
    evaluate_saved(r, rec)
    remember(r, rec)
    return r


def remember(r, rec):
    """The run's exit status and re-evaluations into seeds.json."""
    if rec is None:
        return
    try:
        rec.note(r.dir, r.rc, r.summary_sha, r.saved_best, r.saved_final)
    except OSError as e:
        print("seeds: warning: cannot update %s: %s (a --resume will evaluate this run's checkpoints again)"
              % (rec.path, e.strerror or e), file=sys.stderr)


def mismatches(r):
    """How many of the run's saved checkpoints do not evaluate as logged."""
    if not r.summary:
        return 0
    n = 0
    best, last = r.get("best_eval_mean_return"), r.get("last_eval_mean_return")
    if best is None or r.saved_best is None or best != r.saved_best:
        n += 1
    if last is not None and (r.saved_final is None or last != r.saved_final):
        n += 1
    return n


# ---- what a run counts as --------------------------------------------------------

def judged_solved(r, solved_on):
    """(solved, fell back): whether the run counts as solved (a failed run
    never), and whether --solved-on test had to use `solved` for want of a
    solved_test (absent, or null: no test evaluation)."""
    if r.failed:
        return False, False
    if solved_on == "test":
        t = r.flag("solved_test")
        if t is not None:
            return t, False
        return r.flag("solved") is True, True
    return r.flag("solved") is True, False


def steps_to_solve(arm, r, solved):
    """Env steps to solve: a solved run's solve point (solved_at_env_steps;
    best_at_env_steps, the step of the network the test evaluated, for a run
    solved on the test alone), an unsolved one's budget (run.max_env_steps;
    when that is 0, no limit: the env steps it ran, None without a
    summary.json)."""
    if solved:
        v = r.get("solved_at_env_steps")
        return v if v is not None else r.get("best_at_env_steps")
    if arm.budget_steps > 0:
        return arm.budget_steps
    return r.get("env_steps")


def seconds_to_solve(r, solved):
    if solved and r.get("solved_at_seconds") is not None:
        return r.get("solved_at_seconds")
    w = r.get("wall_seconds")
    return w if w is not None else r.seconds


# ---- formatting ------------------------------------------------------------------

def f_int(x):
    return DASH if x is None else "%d" % round(x)


def f_sec(x):
    return DASH if x is None else "%.2f" % x


def f_ret(x):
    return DASH if x is None else "%.1f" % x


def f_bool(x):
    return DASH if x is None else ("true" if x else "false")


def f_pct(x):
    return "%.0f%%" % (100 * x)


ROW_COLS = [("seed", "seed", "<", 5), ("solved", "solved", "<", 7), ("solved_test", "solved test", "<", 11),
            ("at_env_steps", "at env steps", ">", 12), ("at_seconds", "at seconds", ">", 10),
            ("env_steps", "env steps", ">", 9), ("wall_seconds", "wall s", ">", 12),
            ("best_eval", "best eval", ">", 9), ("saved_best", "saved best", ">", 10),
            ("last_eval", "last eval", ">", 9), ("saved_final", "saved final", ">", 11),
            ("test_best", "test best", ">", 9), ("test_final", "test final", ">", 10)]


def row_cells(r):
    s = r.summary
    solved = ("exit %d" % r.rc) if r.rc != 0 else (f_bool(r.flag("solved")) if s else "no summary")
    return [str(r.seed), solved, f_bool(r.flag("solved_test")), f_int(r.get("solved_at_env_steps")),
            f_sec(r.get("solved_at_seconds")), f_int(r.get("env_steps")), f_sec(r.get("wall_seconds")),
            f_ret(r.get("best_eval_mean_return")), f_ret(r.saved_best), f_ret(r.get("last_eval_mean_return")),
            f_ret(r.saved_final), f_ret(r.get("test_best_return")), f_ret(r.get("test_final_return"))]


class RowPrinter:
    """The per-run table, a row at a time as the runs end."""

    def __init__(self, markdown, label_width):
        self.md = markdown
        self.lw = label_width  # 0: one config, no config column

    def header(self):
        if self.md:
            names = (["config"] if self.lw else []) + [c[1] for c in ROW_COLS]
            aligns = ([":---"] if self.lw else []) + [("---:" if c[2] == ">" else ":---") for c in ROW_COLS]
            aligns[1 if self.lw else 0] = "---:"  # seed
            print("| " + " | ".join(names) + " |")
            print("|" + "|".join(aligns) + "|")
        else:
            self.line([c[0] for c in ROW_COLS], None)
        sys.stdout.flush()

    def line(self, cells, label, after=""):
        if self.md:
            print("| " + " | ".join(([label] if self.lw else []) + cells) + " |")
            return
        parts = ["%-*s" % (self.lw, "config" if label is None else label)] if self.lw else []
        for (key, _, align, width), c in zip(ROW_COLS, cells):
            parts.append(c.ljust(width) if align == "<" else c.rjust(width))
        print(" ".join(parts).rstrip() + after)

    def row(self, arm, r):
        """The run's row; one --resume did not run from the start is marked
        "(earlier)" or "(resumed)": in the seed cell of a Markdown table,
        after the last column of a plain one (the columns stay in place)."""
        cells = row_cells(r)
        mark = " (%s)" % r.origin if r.origin else ""
        if self.md:
            cells[0] += mark
            mark = ""
        self.line(cells, arm.label, mark)
        sys.stdout.flush()


def table(headers, rows, aligns, markdown):
    """Lines of a table: aligns is a string of "<" and ">" per column."""
    if markdown:
        out = ["| " + " | ".join(headers) + " |",
               "|" + "|".join("---:" if a == ">" else ":---" for a in aligns) + "|"]
        out += ["| " + " | ".join(r) + " |" for r in rows]
        return out
    widths = [max(len(x) for x in col) for col in zip(headers, *rows)]
    out = []
    for r in [headers] + rows:
        out.append("  ".join(c.ljust(w) if a == "<" else c.rjust(w) for c, w, a in zip(r, widths, aligns)).rstrip())
    return out


def interval(ci, f):
    return DASH if ci is None else "[%s, %s]" % (f(ci[0]), f(ci[1]))


def mean_sd(values, f):
    m, sd = stats.mean_sd(values)
    return DASH if m is None else "%s \u00b1 %s" % (f(m), f(sd))


def metric_row(label, values, n_runs, f):
    """n (of the runs, when fewer), median, IQM, IQM's CI, mean +- sd."""
    values = [v for v in values if v is not None]
    n = "%d" % len(values) if len(values) == n_runs else "%d of %d" % (len(values), n_runs)
    if not values:
        return [label, n, DASH, DASH, DASH, DASH]
    return [label, n, f(stats.median(values)), f(stats.iqm(values)), interval(stats.bootstrap_ci(values), f),
            mean_sd(values, f)]


# ---- the summary -----------------------------------------------------------------

def arm_figures(arm, solved_on):
    """What the statistics take of an arm's runs: per metric, the values
    (None where a run has none), the solved count, and how many runs had no
    solved_test (--solved-on test)."""
    fig = {"steps": [], "seconds": [], "best": [], "final": [], "test_best": [], "test_final": [], "improve": []}
    solved = fell_back = 0
    for r in arm.runs:
        ok, fb = judged_solved(r, solved_on)
        solved += ok
        fell_back += fb
        fig["steps"].append(steps_to_solve(arm, r, ok))
        fig["seconds"].append(seconds_to_solve(r, ok))
        fig["best"].append(r.get("best_eval_mean_return"))
        fig["final"].append(r.get("last_eval_mean_return"))
        fig["test_best"].append(r.get("test_best_return"))
        fig["test_final"].append(r.get("test_final_return"))
        # P(X > Y): an unsolved run is worse than any solved one, whatever the budgets
        fig["improve"].append(fig["steps"][-1] if ok else math.inf)
    return fig, solved, fell_back


METRICS = [("steps", "env steps to solve", f_int), ("seconds", "seconds to solve", f_sec),
           ("best", "best eval", f_ret), ("final", "final eval", f_ret),
           ("test_best", "test best", f_ret), ("test_final", "test final", f_ret)]


def summary(o, arms):
    """The lines after the per-run table."""
    md = o.markdown
    several = len(arms) > 1
    out = [""]
    figs = [arm_figures(a, o.solved_on) for a in arms]
    rows = []
    for a, (_, solved, _) in zip(arms, figs):
        n = len(a.runs)
        w = stats.wilson(solved, n)
        rows.append([a.label, "%d/%d" % (solved, n), DASH if n == 0 else f_pct(solved / n),
                     DASH if w is None else "[%s, %s]" % (f_pct(w[0]), f_pct(w[1]))])
    if several:
        out += table(["config", "solved", "rate", "Wilson 95% CI"], rows, "<>>>", md)
    else:
        out.append("solved: %s (%s), Wilson 95%% CI %s" % tuple(rows[0][1:]))
    out.append("")
    any_test = any(v is not None for fig, _, _ in figs for v in fig["test_best"] + fig["test_final"])
    rows = []
    for key, title, f in METRICS:
        if key.startswith("test") and not any_test:
            continue
        for i, (a, (fig, _, _)) in enumerate(zip(arms, figs)):
            r = metric_row(a.label, fig[key], len(a.runs), f)
            first = title if i == 0 or md else ""
            rows.append([first] + (r if several else r[1:]))
    heads = ["metric"] + (["config"] if several else []) + ["n", "median", "IQM", "IQM 95% CI", "mean \u00b1 sd"]
    out += table(heads, rows, ("<<" if several else "<") + ">>>>>", md)
    if several:
        out.append("")
        rows = []
        for i in range(len(arms)):
            for j in range(i + 1, len(arms)):
                x, y = figs[i][0]["improve"], figs[j][0]["improve"]
                p = stats.prob_improvement(x, y, lower_is_better=True)
                ci = stats.prob_improvement_ci(x, y, lower_is_better=True)
                rows.append([arms[i].label, arms[j].label, DASH if p is None else "%.2f" % p,
                             interval(ci, lambda v: "%.2f" % v)])
        out += table(["X", "Y", "P(X > Y)", "95% CI"], rows, "<<>>", md)
        out.append("")
        out.append("P(X > Y): probability of improvement in env steps to solve, the chance that a random run of X "
                   "solves in fewer env steps than a random run of Y (an unsolved run loses to every solved one and "
                   "ties with another unsolved one; ties count half); P(Y > X) = 1 - P(X > Y); 95%% CI: bootstrap, "
                   "%d resamples of each config's own runs, seed %d." % (stats.BOOT_REPS, stats.BOOT_SEED))
    out.append("")
    out += notes(o, arms, figs)
    return out


# summary.json stop_reason of a run that stopped before its budget of env steps
CUT_SHORT = {"signal": "stopped by a signal", "time": "stopped at run.max_seconds"}


def notes(o, arms, figs):
    out = []
    budgets = set(a.budget_steps for a in arms)
    if budgets == {0}:
        b = "the env steps they ran (run.max_env_steps is 0: no limit)"
    elif len(budgets) == 1:
        b = "%d env steps (run.max_env_steps)" % budgets.pop()
    else:
        b = "their config's run.max_env_steps (%s)" % ", ".join(
            "%s: %s" % (a.label, a.budget_steps or "0, the env steps they ran") for a in arms)
    out.append("unsolved runs count at their budget: %s for env steps to solve, their wall seconds for seconds to "
               "solve; a failed run counts as unsolved; the evaluations are over the runs that logged one."
               % b)
    out.append("IQM: mean of the middle 50%% (scipy.stats.trim_mean(x, 0.25): floor(n/4) runs cut at each end); "
               "95%% CI: percentile bootstrap, %d resamples of each config's own runs, seed %d; sd: sample (n - 1); "
               "\u2014: none." % (stats.BOOT_REPS, stats.BOOT_SEED))
    fell_back = sum(fb for _, _, fb in figs)
    judged = sum(1 for a in arms for r in a.runs if not r.failed)
    if o.solved_on == "selection":
        out.append("solved: judged on the selection evaluation (summary.json solved; --solved-on selection).")
    elif judged == 0:
        pass
    elif fell_back == 0:
        out.append("solved: judged on the held-out test evaluation (summary.json solved_test).")
    elif fell_back == judged:
        out.append("note: no summary.json has solved_test (no held-out test evaluation): solved is judged on the "
                   "selection evaluation (summary.json solved).")
    else:
        out.append("note: %d of %d runs have no solved_test in summary.json: those are judged on summary.json "
                   "solved, the others on solved_test." % (fell_back, judged))
    cut = []
    for a in arms:
        for r in a.runs:
            why = CUT_SHORT.get(r.summary.get("stop_reason"))
            if why and not r.failed:
                cut.append("%s seed %d: %s after %s env steps" % (a.label, r.seed, why, f_int(r.get("env_steps"))))
    if cut:
        out.append("stopped before their env-step budget (counted at it all the same when unsolved): "
                   + "; ".join(cut))
    earlier = sum(1 for a in arms for r in a.runs if r.origin == "earlier")
    if earlier:
        out.append("%d of %d runs finished in an earlier invocation (rows marked (earlier)): read from their "
                   "summary.json, not run again." % (earlier, sum(len(a.runs) for a in arms)))
    resumed = ["%s seed %d" % (a.label, r.seed) for a in arms for r in a.runs if r.summary.get("resumed") is True]
    if resumed:
        out.append("resumed from a checkpoint (summary.json resumed), so their wall seconds include a restart (the "
                   "start-up again, the replay buffer refilled unless checkpoint.save_replay): " + "; ".join(resumed))
    mism = sum(mismatches(r) for a in arms for r in a.runs)
    out.append("saved checkpoints that do not evaluate as logged: %d" % mism)
    kernels = set()
    for r in (r for a in arms for r in a.runs if r.summary):
        plat = r.summary.get("platform") or {}
        kernels.add("CPU %s, OpenBLAS kernel %s" % (plat.get("cpu"), plat.get("blas_kernel")))
    if kernels:
        out.append("Measured on: " + "; ".join(sorted(kernels)))
    return out


# ---- main ------------------------------------------------------------------------

def main(argv):
    """argv as sys.argv; returns the exit status."""
    job.install_stop_handlers()
    try:
        o = parse_args(argv[1:])
        if o is None:
            print(USAGE)
            return 0
        arms, parent, rec, plan, lock = prepare(o, argv)
    except InputError as e:
        err(one_line(str(e)))
        return 2
    except KeyboardInterrupt as e:
        print("seeds: interrupted before any run", file=sys.stderr)
        return 128 + job.signum_of(e)
    try:
        return run_all(o, arms, parent, rec, plan)
    finally:
        os.close(lock)


def prepare(o, argv):
    """(arms, the invocation's folder, its Record, the plan of --resume
    (None for a new invocation), the folder's lock): a new folder with its
    record, or the folder --resume names with the arms rebuilt from its
    record; InputError on bad input."""
    if o.resume is None:
        arms = make_arms(o)
        check_arms(o, arms)
        parent = make_parent(o, arms)
        lock = record.lock_folder(parent)
        try:
            return arms, parent, record.create(parent, o, arms, argv[1:]), None, lock
        except BaseException:
            os.close(lock)
            raise
    parent = o.resume
    rec = record.load(parent)
    lock = record.lock_folder(parent)
    try:
        arms = resumed_arms(o, rec)
        plan = {(a.name_base, seed): record.state(parent, a.run_name(seed))
                for seed in range(o.first, o.first + o.n) for a in arms}
    except BaseException:
        os.close(lock)
        raise
    return arms, parent, rec, plan, lock


def resumed_arms(o, rec):
    """o (parsed with --resume) completed from rec's invocation; its arms,
    checked as a new invocation's are and pointed into the folder."""
    inv = rec.invocation
    o.configs, o.sets, o.n, o.first, o.compare = inv["configs"], inv["sets"], inv["n"], inv["first"], inv["compare"]
    o.sweep = None if inv["sweep"] is None else (inv["sweep"]["key"], inv["sweep"]["values"])
    arms = make_arms(o)
    names = [(a.label, a.name_base) for a in arms]
    if names != [(x.get("label"), x.get("name_base")) for x in inv["arms"]]:
        raise InputError("--resume %s: %s names its runs otherwise than this scripts/seeds does (%s); made by "
                         "another version?" % (rec.folder, record.NAME, ", ".join(x[1] for x in names)))
    paths = dict(zip(inv["configs"], inv["config_paths"]))
    for a in arms:
        a.path = paths[a.config]
    check_arms(o, arms)
    for a in arms:
        a.out_dir = rec.folder
    return arms


RESUME_WHAT = {record.DONE: "finished earlier (read, not run again)",
               record.RESUME: "interrupted (continued from its checkpoint)",
               record.RESTART: "killed before its first checkpoint (run again beside it)",
               record.NEW: "not started (run now)"}


def run_all(o, arms, parent, rec, plan):
    """Every run in order, a row each, the statistics; the exit status."""
    seeds = list(range(o.first, o.first + o.n))
    several = len(arms) > 1
    printer = RowPrinter(o.markdown, max(len("config"), max(len(a.label) for a in arms)) if several else 0)
    if several:
        print("%s, seeds %s, interleaved: %s" % (arms[0].env, seed_range(seeds), ", ".join(a.label for a in arms)))
    else:
        print("%s: %s, seeds %s" % (arms[0].config, arms[0].env, seed_range(seeds)))
    print("run directories: %s/<config>-s<seed>" % parent)
    if plan is not None:
        kinds = [k for k, _ in plan.values()]
        print("resuming: " + ", ".join("%d %s" % (kinds.count(k), what) for k, what in RESUME_WHAT.items()
                                       if kinds.count(k)))
    print()
    printer.header()
    interrupted = 0
    try:
        for seed in seeds:
            for a in arms:
                r = one_of_plan(a, seed, rec, plan)
                a.runs.append(r)
                printer.row(a, r)
    except KeyboardInterrupt as e:
        interrupted = job.signum_of(e)
        print("seeds: interrupted; the statistics of the finished runs follow (the interrupted run is not among "
              "them); scripts/seeds --resume %s continues" % parent, file=sys.stderr)
    if any(a.runs for a in arms):
        for line in summary(o, arms):
            print(line)
    if interrupted:
        return 128 + interrupted
    return 1 if any(r.failed for a in arms for r in a.runs) else 0


def one_of_plan(a, seed, rec, plan):
    """Seed of arm a: run, or as --resume's plan says, read or resumed."""
    what, run_dir = plan[(a.name_base, seed)] if plan is not None else (record.NEW, None)
    if what == record.DONE:
        return read_earlier(seed, run_dir, rec)
    if what == record.RESUME:
        return run_one(a, seed, rec, resume_dir=run_dir)
    if what == record.RESTART:
        print("seeds: %s seed %d: %s has no checkpoint (killed before its first): run again from the start beside "
              "it (gorila names the new run directory -2, -3, ...); nothing removed" % (a.label, seed, run_dir),
              file=sys.stderr)
    return run_one(a, seed, rec)


def seed_range(seeds):
    return str(seeds[0]) if len(seeds) == 1 else "%d-%d" % (seeds[0], seeds[-1])
