# SPDX-License-Identifier: MIT
"""Running the matrix: every sync mode x learner count x seed (the PS modes,
easgd among them, also x parameter-server count, allreduce and local_sgd x
algorithm, allreduce x batch rule), one job at a time through the launcher,
recorded in DIR/compare.json after each job. A cell gorila refuses because
its mode averages among several learners and it has one (gossip, local_sgd)
is skipped, said once, and never counted as failed."""
import datetime
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time

from . import budget, facts, job, network
from .dims import Dims, plural
from .errors import InputError, warn
from .costmodel import parse_rate
from .facts import ALLREDUCE, GLOBAL_BATCH, GORILA, LAUNCH, PER_LEARNER, SIMCLUSTER
from .report import write_report
from .runs import Cell, cell_name, finished_run, read_json, read_json_input, run_batch, run_figures, run_variant
from .stats import fmt, fmt_secs

# keys the matrix sets itself: a --set of one of them would silently break it
MATRIX_KEYS = {"sync.mode": "--modes", "roles.learners": "--learners", "run.seed": "--seeds/--first-seed",
               "run.out_dir": "--out", "run.name": "(one per cell)"}


def parse_list(text, what):
    items = [x.strip() for x in text.split(",")]
    if not items or any(not x for x in items):
        raise InputError("%s: expected a comma-separated list, got %r" % (what, text))
    return items


def parse_modes(text):
    modes = parse_list(text, "--modes")
    known = facts.modes()
    for m in modes:
        if m not in known:
            raise InputError("unknown mode %r in --modes (modes: %s)" % (m, ", ".join(known)))
    if len(set(modes)) != len(modes):
        raise InputError("--modes lists a mode twice: %s" % text)
    return modes


def parse_counts(text, option, what):
    counts = []
    for x in parse_list(text, option):
        if not re.fullmatch(r"[0-9]+", x) or int(x) < 1:
            raise InputError("%s: %s must be integers >= 1, got %r" % (option, what, x))
        counts.append(int(x))
    if len(set(counts)) != len(counts):
        raise InputError("%s lists a count twice: %s" % (option, text))
    return counts


def parse_learners(text):
    return parse_counts(text, "--learners", "learner counts")


def parse_param_servers(text):
    return parse_counts(text, "--param-servers", "parameter-server counts")


def parse_impls(text):
    impls = parse_list(text, "--allreduce-impls")
    known = facts.allreduce_impls()
    for a in impls:
        if a not in known:
            raise InputError("unknown allreduce algorithm %r in --allreduce-impls (allreduce_impls: %s)"
                             % (a, ", ".join(known)))
    if len(set(impls)) != len(impls):
        raise InputError("--allreduce-impls lists an algorithm twice: %s" % text)
    return impls


def parse_batches(text):
    batches = parse_list(text, "--learner-batch")
    known = facts.learner_batches()
    for b in batches:
        if b not in known:
            raise InputError("unknown learner.batch %r in --learner-batch (learner.batch: %s)" % (b, ", ".join(known)))
    if len(set(batches)) != len(batches):
        raise InputError("--learner-batch lists a rule twice: %s" % text)
    return batches


def check_global_batch(base, modes, learners):
    """--learner-batch global: what gorila would refuse in every global
    cell (or what leaves it none), said once before anything runs. base:
    the effective config of the command line."""
    if ALLREDUCE not in modes:
        raise InputError("--learner-batch global applies to allreduce cells only (the PS modes run per_learner), "
                         "and --modes has no allreduce")
    kind = base.get("replay.kind") or "uniform"
    if kind != "uniform":
        raise InputError("--learner-batch global needs uniform replay, and the config has replay.kind %s "
                         "(prioritized replay normalizes its importance weights per batch, so the learners' parts "
                         "would not make the one-learner update)" % kind)
    scaling = base.get("sync.lr_scaling") or "none"
    if scaling != "none":
        raise InputError("--learner-batch global keeps the one-learner batch, and the config has sync.lr_scaling %s "
                         "(a rate scaled for a batch that grows with the learners); use sync.lr_scaling none"
                         % scaling)
    try:
        batch = int(base.get("replay.batch_size"))
    except (TypeError, ValueError):
        return
    bad = [L for L in learners if batch % L]
    if bad:
        raise InputError("--learner-batch global splits replay.batch_size (%d) among the learners, and %s "
                         "(--learners) %s not divide it"
                         % (batch, ", ".join(map(str, bad)), "does" if len(bad) == 1 else "do"))


def check_numbers(opts):
    if opts.seeds < 1:
        raise InputError("--seeds must be >= 1, got %d" % opts.seeds)
    if opts.first_seed < 0:
        raise InputError("--first-seed must be >= 0, got %d" % opts.first_seed)
    if opts.max_ranks < 1:
        raise InputError("--max-ranks must be >= 1, got %d" % opts.max_ranks)
    if opts.jobs_timeout is not None and opts.jobs_timeout <= 0:
        raise InputError("--jobs-timeout must be > 0 seconds, got %g" % opts.jobs_timeout)


def hostfile_hosts(path):
    """The hosts of a hostfile (HOST slots=N lines; # comments), in order,
    a host named twice once."""
    hosts = []
    try:
        with open(path) as f:
            for line in f:
                w = line.split("#", 1)[0].split()
                if w and w[0] not in hosts:
                    hosts.append(w[0])
    except OSError as e:
        raise InputError("--hostfile %s: %s" % (path, e.strerror or e))
    if not hosts:
        raise InputError("--hostfile %s names no host" % path)
    return hosts


def check_network(opts):
    """--simcluster NODES [--link RATE]: NODES within what shaped-run
    hosts, a rate tc understands, and a machine that can shape (scripts/
    simcluster check --shaped says why not); --hostfile FILE: real hosts;
    --placement: only with one of them. Sets opts.nodes (None: one
    machine)."""
    opts.nodes = None
    if opts.simcluster is not None and opts.hostfile is not None:
        raise InputError("give either --simcluster NODES or --hostfile FILE, not both")
    if opts.placement is not None:
        if opts.placement not in ("spread", "pack"):
            raise InputError("--placement: expected spread or pack, got %r" % opts.placement)
        if opts.simcluster is None and opts.hostfile is None:
            raise InputError("--placement places ranks across nodes: give --simcluster NODES or --hostfile FILE")
    opts.placement = opts.placement or "spread"
    if opts.hostfile is not None:
        if opts.link is not None:
            raise InputError("--link shapes simulated nodes (--simcluster); real hosts have their own network")
        opts.hostfile = os.path.abspath(opts.hostfile)
        opts.nodes = len(hostfile_hosts(opts.hostfile))
        return
    if opts.simcluster is None:
        if opts.link is not None:
            raise InputError("--link needs --simcluster NODES")
        return
    if not 1 <= opts.simcluster <= 16:
        raise InputError("--simcluster: expected 1 to 16 simulated nodes, got %d" % opts.simcluster)
    opts.nodes = opts.simcluster
    opts.link = opts.link or "1gbit"
    try:
        parse_rate(opts.link)
    except ValueError as e:
        raise InputError("--link: %s" % e)
    p = subprocess.run([SIMCLUSTER, "check", "--shaped"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode != 0:
        raise InputError("--simcluster: this machine cannot shape a simulated network: %s"
                         % (p.stdout.strip().splitlines() or ["scripts/simcluster check --shaped failed"])[-1])


def launch_args(config, sets, opts):
    """The command of one job: scripts/launch CONFIG --set ..., with
    --hostfile across its hosts, with --simcluster inside scripts/simcluster
    shaped-run across its nodes (placed --spread unless --placement pack)."""
    args = [LAUNCH, config]
    for s in sets:
        args += ["--set", s]
    spread = ["--spread"] if opts.placement == "spread" else []
    if opts.hostfile is not None:
        return args + ["--hostfile", opts.hostfile] + spread
    if opts.simcluster is None:
        return args
    return [SIMCLUSTER, "shaped-run", "--link", opts.link, "--nodes", str(opts.simcluster), "--", "bash", "-c",
            'exec "$0" "$@" --hostfile "$SIMCLUSTER_HOSTFILE" %s-- $SIMCLUSTER_MPIRUN_ARGS'
            % ("--spread " if spread else "")] + args


def set_key(s):
    """The key of a --set key=value."""
    return s.split("=", 1)[0].strip()


def mode_sets(mode, sets):
    """The --set options of a cell of mode: without the sync keys only other
    modes use (gorila refuses one set under another mode)."""
    return [s for s in sets if facts.mode_uses(mode, set_key(s))]


def check_mode_keys(user_sets, modes):
    """A mode-specific sync key of --set that no mode of --modes uses: said
    once (it changes nothing)."""
    for s in user_sets:
        if not any(facts.mode_uses(m, set_key(s)) for m in modes):
            users = facts.mode_sync_keys()[set_key(s)]
            warn("--set %s: only %s use%s %s, and --modes has %s, so it changes nothing"
                 % (s, " and ".join(users), "s" if len(users) == 1 else "", set_key(s),
                    "none of them" if len(users) > 1 else "no " + users[0]))


def check_sets(user_sets, batch_swept):
    """batch_swept: --learner-batch given, so the matrix sets learner.batch
    itself (without it a --set learner.batch is the config's, as any key)."""
    owned = dict(MATRIX_KEYS, **({"learner.batch": "--learner-batch"} if batch_swept else {}))
    for s in user_sets:
        key = set_key(s)
        if "=" not in s:
            raise InputError("--set expects key=value, got %r" % s)
        if key in owned:
            raise InputError("--set %s: the matrix sets %s itself (use %s)" % (s, key, owned[key]))


def lazy_config(path):
    """A function returning the flat config of a run's config.yaml at path
    ({} without one), read once and only when called."""
    got = []

    def config():
        if not got:
            got.append(facts.run_config(path) if os.path.isfile(path) else {})
        return got[0]
    return config


def save_state(out, state):
    tmp = os.path.join(out, ".compare.json.tmp")
    with open(tmp, "w") as f:
        json.dump(state, f, indent=2)
        f.write("\n")
    os.replace(tmp, os.path.join(out, "compare.json"))


def stop_job(p, signum, grace):
    """Stops job p as its first signal signum does (the launcher's clean stop
    with a final checkpoint); after grace seconds, or at a (further) stop
    signal to this script, kills it (its job follows: parent-death signal,
    scripts/launch). Returns (its exit status, that stop signal's
    KeyboardInterrupt or None)."""
    job.stop(p, signum)
    try:
        return p.wait(timeout=grace), None
    except subprocess.TimeoutExpired:
        p.kill()
        return p.wait(), None
    except KeyboardInterrupt as e:
        p.kill()
        return p.wait(), e


def wait_job(c, p, timeout):
    """Waits for the launcher p; returns (its exit status, the
    KeyboardInterrupt of a stop signal to this script, or None). A job past
    the time limit is stopped and, unless it still ended by itself with 0,
    marked timed out with status 124. A stop signal (SIGINT, SIGTERM) is
    passed on to the job, whose own status is returned: a job that ended
    before it could stop keeps its 0, any other is marked interrupted (and
    runs again on --resume)."""
    try:
        return p.wait(timeout=timeout), None
    except subprocess.TimeoutExpired:
        rc, stopped = stop_job(p, signal.SIGTERM, 30)
        if rc == 0 and stopped is None:
            return 0, None
        c.timed_out = True
        c.interrupted = stopped is not None
        return 124, stopped
    except KeyboardInterrupt as e:
        rc, _ = stop_job(p, job.signum_of(e), 60)  # a second signal only hastens the kill
        c.interrupted = rc != 0
        return rc, e


def run_cell(c, config, sets, out, opts):
    """Runs one job through the launcher; fills c.exit, c.seconds, c.run_dir.
    Interrupted (a stop signal to this script): the job is stopped, recorded
    with its own exit status, and the signal's KeyboardInterrupt raised."""
    os.makedirs(os.path.join(out, "logs"), exist_ok=True)
    c.log = os.path.join(out, "logs", c.name + ".log")
    args = launch_args(config, sets, opts)
    timeout = opts.jobs_timeout
    t0 = time.monotonic()
    with open(c.log, "w") as log:
        log.write("$ %s\n" % " ".join(shlex.quote(a) for a in args))
        log.flush()
        p = job.start(args, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        rc, stopped = wait_job(c, p, timeout)
    c.seconds = time.monotonic() - t0
    c.exit = rc if rc >= 0 else 128 - rc
    with open(c.log, errors="replace") as f:
        found = [ln[len("run directory: "):].strip() for ln in f if ln.startswith("run directory: ")]
    if found:
        c.run_dir = os.path.abspath(found[-1])
    elif os.path.isdir(os.path.join(out, "runs", c.name)):
        c.run_dir = os.path.join(out, "runs", c.name)
    if stopped is not None:
        raise stopped


def progress_line(k, n, c, label, elapsed, left):
    f = None
    if c.run_dir and os.path.isfile(os.path.join(c.run_dir, "summary.json")):
        try:
            f = run_figures(read_json(os.path.join(c.run_dir, "summary.json")))
        except (OSError, ValueError):
            f = None
    if c.skipped:
        what = "already done (kept)"
    elif f is None:
        what = "failed (no summary.json)" if c.exit else "no summary.json"
    elif f["solved"]:
        what = "solved at %s env steps (%s s)" % (
            fmt(f["solved_at_env_steps"], ".0f"), fmt(f["solved_at_seconds"], ".2f"))
    else:
        what = "not solved (best eval %s; %s env steps, %s s)" % (
            fmt(f["best_eval_mean_return"], ".1f"), fmt(f["env_steps"], ".0f"), fmt(f["wall_seconds"], ".2f"))
    ex = "exit %s%s" % (c.exit if c.exit is not None else "?", " (timed out)" if c.timed_out else "")
    tail = "%s elapsed" % fmt_secs(elapsed)
    if left is not None:
        tail += ", ~%s left" % fmt_secs(left)
    return "[%d/%d] %s seed %d: %s | %s; %s" % (k, n, label, c.seed, what, ex, tail)


class Matrix:
    """One `scripts/compare CONFIG ...` command: its cells, DIR and state."""

    def __init__(self, opts, argv):
        self.opts = opts
        self.argv = argv
        self.config = opts.config
        self.cells = []
        self.checked = {}     # (mode, learners, P, algorithm, batch rule) -> its effective config
        self.prior = {}       # --resume: name -> the cell as compare.json recorded it
        self.prior_state = None
        self.state = None
        self.head = []
        self.skipped = []     # cells gorila refuses with 1 learner (check_layouts)

    def check_input(self):
        """Everything about the command line that can be checked without
        gorila config check."""
        opts = self.opts
        if not os.path.isfile(self.config):
            raise InputError("config %s: no such file" % self.config)
        if not os.access(GORILA, os.X_OK):
            raise InputError("%s not found: run make first" % GORILA)
        self.modes = parse_modes(opts.modes if opts.modes is not None else ",".join(facts.modes()))
        self.learners = parse_learners(opts.learners)
        self.ps_opt = parse_param_servers(opts.param_servers) if opts.param_servers is not None else None
        self.impls_opt = parse_impls(opts.allreduce_impls) if opts.allreduce_impls is not None else None
        self.batches_opt = parse_batches(opts.learner_batch) if opts.learner_batch is not None else None
        check_numbers(opts)
        check_network(opts)
        self.user_sets = opts.set or []
        check_sets(self.user_sets, self.batches_opt is not None)
        self.seeds = list(range(opts.first_seed, opts.first_seed + opts.seeds))
        self.network = None
        if opts.nodes is not None:
            self.network = {"nodes": opts.nodes, "placement": opts.placement}
            if opts.simcluster is not None:
                self.network.update({"simcluster": True, "link": opts.link})
            else:
                self.network["hostfile"] = opts.hostfile

    def check_config(self):
        """The config itself: a distributed one; the PS count of PS cells."""
        # with --learner-batch every cell sets learner.batch itself: the config's own (global: allreduce only) is
        # checked as per_learner here
        # (the sync keys of one mode only are checked with the cells of their modes, below)
        sets = [s for s in self.user_sets if set_key(s) not in facts.mode_sync_keys()] + \
            (["learner.batch=%s" % PER_LEARNER] if self.batches_opt else [])
        check_mode_keys(self.user_sets, self.modes)
        try:
            base = facts.config_check(self.config, sets)
        except InputError:
            # a --set valid only in some modes (learner.batch=global: allreduce): the config as the first mode's
            # cells run it; the cells are checked one by one below
            m = self.modes[0]
            base = facts.config_check(self.config, sets + ["sync.mode=%s" % m] +
                                      ([] if facts.has_ps(m) else ["roles.param_servers=0"]))
        for s in self.user_sets:  # the algorithm a --set gives the allreduce cells
            if set_key(s) == "sync.allreduce_impl":
                base["sync.allreduce_impl"] = s.split("=", 1)[1].strip()
        if base.get("run.mode", "distributed") != "distributed":
            raise InputError("%s is a %s config (run.mode); compare needs a distributed one (e.g. "
                             "configs/cartpole.yaml)" % (self.config, base.get("run.mode")))
        try:
            base_ps = int(base.get("roles.param_servers", 1))
        except (TypeError, ValueError):
            base_ps = 1
        self.ps_counts = self.ps_opt or [base_ps if base_ps > 0 else 1]
        self.impls = self.impls_opt or [base.get("sync.allreduce_impl") or "ring"]
        # allreduce's batch rules; without --learner-batch the config's (learner.batch missing: a build before
        # the key, whose only rule was per_learner)
        self.batches = self.batches_opt or [base.get("learner.batch") or PER_LEARNER]
        has_ps = any(facts.has_ps(m) for m in self.modes)
        has_impl = any(facts.has_impl(m) for m in self.modes)
        if self.ps_opt and not has_ps:
            warn("--param-servers: no mode with parameter servers in --modes, so it changes nothing")
        if self.impls_opt and not has_impl:
            warn("--allreduce-impls: neither allreduce nor local_sgd is in --modes, so it changes nothing")
        if self.batches_opt and GLOBAL_BATCH in self.batches_opt:
            check_global_batch(base, self.modes, self.learners)
        elif self.batches_opt and ALLREDUCE not in self.modes:
            warn("--learner-batch: allreduce is not in --modes, so it changes nothing (the PS modes run per_learner)")
        # a dimension is in the cells' names (and the report) only where it has more than one value
        self.sweep_ps = has_ps and len(self.ps_counts) > 1
        self.sweep_impl = has_impl and len(self.impls) > 1
        self.sweep_batch = ALLREDUCE in self.modes and len(self.batches) > 1
        out = self.opts.out or os.path.join("runs", "compare-%s-%s" % (
            os.path.splitext(os.path.basename(self.config))[0], datetime.datetime.now().strftime("%Y%m%d-%H%M%S")))
        self.out = os.path.abspath(out)
        self.runs = os.path.join(self.out, "runs")

    def variants(self, m, L):
        """[(P, algorithm, batch rule)] of mode m's cells with L learners.
        The PS modes run per_learner (gorila refuses global there: the
        parameter servers would have to clip the average across their
        shards). With one learner both rules are one update (the learner
        takes the whole batch and the average of one gradient is itself),
        so where the matrix has both, a 1-learner global cell would repeat
        its per_learner cell's job: it is not run, and the report shows the
        per_learner runs as the global series' 1-learner reference
        (Dims.groups). The decentralized modes run per_learner too: gossip
        and local_sgd without parameter servers (local_sgd once per
        algorithm), easgd once per P."""
        if m == ALLREDUCE:
            batches = [b for b in self.batches if not (L == 1 and b == GLOBAL_BATCH and PER_LEARNER in self.batches)]
            return [(0, a, b) for a in self.impls for b in batches]
        batch = PER_LEARNER if self.batches_opt else self.batches[0]
        if facts.has_impl(m):
            return [(0, a, batch) for a in self.impls]
        if not facts.has_ps(m):
            return [(0, None, batch)]
        return [(P, None, batch) for P in self.ps_counts]

    def make_cell(self, m, L, seed, P, impl, batch):
        named_ps = P if self.sweep_ps and facts.has_ps(m) else None
        named_impl = impl if self.sweep_impl and facts.has_impl(m) else None
        # only the global cells are named: a per_learner run directory keeps the name it has in a matrix without
        # the sweep, so --resume with --learner-batch added keeps those runs (check_kept checks what they ran)
        named_batch = batch if self.sweep_batch and m == ALLREDUCE and batch != PER_LEARNER else None
        c = Cell(m, L, seed, name=cell_name(m, L, seed, named_ps, named_impl, named_batch), ps=P, impl=impl,
                 batch=batch)
        if named_ps is not None:
            c.extra["param_servers"] = P
        if named_impl is not None:
            c.extra["allreduce_impl"] = impl
        if self.sweep_batch and m == ALLREDUCE:
            c.extra["learner_batch"] = batch
        # the user's --set but the sync keys of other modes
        c.sets = mode_sets(m, self.user_sets) + ["sync.mode=%s" % m, "roles.learners=%d" % L,
                                                 "roles.param_servers=%d" % P]
        if facts.has_impl(m) and self.impls_opt:
            c.sets.append("sync.allreduce_impl=%s" % impl)
        if self.batches_opt:
            c.sets.append("learner.batch=%s" % batch)
        c.sets += ["run.seed=%d" % seed, "run.out_dir=%s" % self.runs, "run.name=%s" % c.name,
                   "logging.progress=never"]
        return c

    def make_cells(self):
        for seed in self.seeds:  # seed-major: an interrupted matrix has every (mode, learners) it reached
            for L in self.learners:
                for m in self.modes:
                    for P, impl, batch in self.variants(m, L):
                        self.cells.append(self.make_cell(m, L, seed, P, impl, batch))
        self.dims = Dims(self.cells)

    def label(self, c, with_=False):
        """"ps_sync 2 learners" ("allreduce (naive) ...", "... 2 parameter servers" where swept); with_:
        "ps_sync with 2 learners" ("... and 2 parameter servers")."""
        k = self.dims.key(c)
        P = self.dims.ps_of(k)
        return "%s%s%s%s" % (self.dims.label(k), " with " if with_ else " ", plural(c.learners, "learner"),
                             "" if P is None else (" and " if with_ else " ") + plural(P, "parameter server"))

    def check_layouts(self):
        """Every cell's layout, checked by gorila itself before anything
        runs. A 1-learner cell of a mode that averages among several
        learners (gossip, local_sgd), refused by gorila, is taken out of
        the matrix into self.skipped (reported once, not as failed); every
        other refusal is bad input."""
        refused = set()
        for c in self.cells:
            k = (c.mode, c.learners, c.ps, c.impl, c.batch)
            if k in self.checked or k in refused:
                continue
            what = self.label(c, with_=True)
            try:
                eff = facts.config_check(self.config, [s for s in c.sets
                                                       if not s.startswith(("run.out_dir=", "run.name="))])
            except InputError as e:
                if c.learners < facts.min_learners(c.mode):
                    refused.add(k)
                    continue
                raise InputError("%s: %s" % (what, e))
            ranks = int(eff["ranks"])
            if ranks > self.opts.max_ranks:
                raise InputError("%s needs %d MPI ranks (coordinator 1, actors %s, replay shards "
                                 "%s, learners %d, parameter servers %s), more than --max-ranks %d"
                                 % (what, ranks, eff.get("roles.actors"),
                                    eff.get("roles.replay_shards"), c.learners, eff.get("roles.param_servers"),
                                    self.opts.max_ranks))
            self.checked[k] = eff
        self.skipped = [c for c in self.cells if (c.mode, c.learners, c.ps, c.impl, c.batch) in refused]
        if self.skipped:
            if len(self.skipped) == len(self.cells):
                raise InputError("gorila refuses every cell of this matrix: %s with 1 learner (these modes average "
                                 "the parameters of several learners; give --learners 2 or more)"
                                 % self.skipped_modes())
            self.cells = [c for c in self.cells if c not in self.skipped]
            self.dims = Dims(self.cells)

    def skipped_modes(self):
        """"gossip and local_sgd": the modes of the skipped cells."""
        ms = [m for m in self.modes if any(c.mode == m for c in self.skipped)]
        return ms[0] if len(ms) == 1 else "%s and %s" % (", ".join(ms[:-1]), ms[-1])

    def skipped_note(self):
        """The one line that says which cells were skipped and why, or None."""
        if not self.skipped:
            return None
        return ("Not run: %s with 1 learner (%s, skipped, not failed): these modes average the parameters of "
                "several learners, and gorila refuses them with one (`gorila config check`: roles.learners 2 or "
                "more)." % (self.skipped_modes(), plural(len(self.skipped), "cell")))

    def check_resume(self):
        """An existing DIR: only with --resume, of the same --set and config."""
        out = self.out
        if not os.path.exists(out):
            return
        if not self.opts.resume:
            raise InputError("%s exists; add --resume to finish its matrix (cells with a summary.json are kept), "
                             "or choose another --out" % out)
        if not os.path.isdir(out):
            raise InputError("%s exists and is not a directory" % out)
        st = read_json_input(os.path.join(out, "compare.json"),
                             "%s has no compare.json: not a directory this script made; nothing to resume" % out)
        if st.get("sets", []) != self.user_sets:
            raise InputError("%s was made with %s; --resume needs the same --set options"
                             % (out, " ".join("--set " + x for x in st.get("sets", [])) or "no --set"))
        saved = os.path.join(out, "config.yaml")
        if os.path.isfile(saved):
            with open(saved, "rb") as a, open(self.config, "rb") as b:
                if a.read() != b.read():
                    raise InputError("%s differs from the config %s was made with (%s); --resume needs the same "
                                     "config" % (self.config, out, saved))
        if {k: v for k, v in (st.get("network") or {}).items() if k != "measured"} != (self.network or {}):
            def said(n):
                if not n:
                    return "no network (one machine)"
                return ", ".join("%s %s" % (k, n[k]) for k in sorted(n))
            raise InputError("%s was made with %s, this command asks for %s; --resume needs the same --simcluster, "
                             "--link, --hostfile and --placement" % (out, said(st.get("network")), said(self.network)))
        self.prior_state = st
        for rec in st.get("cells", []):
            self.prior[rec.get("name")] = rec
        self.check_kept()

    def check_kept(self):
        """--resume: the finished run of a cell, kept, must have the cell's P,
        allreduce algorithm and learner.batch (a matrix of one P, one
        algorithm or one batch rule does not name it in its run directories,
        and a per_learner cell never names its rule)."""
        for c in self.cells:
            d = os.path.join(self.runs, c.name)
            if not finished_run(d):
                continue
            cp = os.path.join(d, "config.yaml")
            config = lazy_config(cp)
            s = read_json(os.path.join(d, "summary.json"))
            P, impl = run_variant(c.mode, s, config)
            batch = run_batch(s, config, cp if os.path.isfile(cp) else None)
            if facts.has_impl(c.mode) and impl is not None and impl != c.impl:
                got, want = "sync.allreduce_impl %s" % impl, c.impl
            elif facts.has_ps(c.mode) and P is not None and P != c.ps:
                got, want = plural(P, "parameter server"), "%d" % c.ps
            elif c.batch is not None and batch != c.batch:
                got, want = "learner.batch %s" % batch, "learner.batch %s" % c.batch
            else:
                continue
            raise InputError("%s ran with %s, this matrix's cell with %s; --resume needs the same --param-servers, "
                             "--allreduce-impls and --learner-batch (or choose another --out)" % (d, got, want))

    def start_state(self):
        """DIR made, the config copied, compare.json's first state."""
        os.makedirs(self.runs, exist_ok=True)
        if not os.path.exists(os.path.join(self.out, "config.yaml")):
            shutil.copyfile(self.config, os.path.join(self.out, "config.yaml"))  # the config as given, for the record
        self.cmd = " ".join(shlex.quote(a) for a in self.argv)
        self.started = datetime.datetime.now().astimezone()
        self.state = {"config": os.path.abspath(self.config), "sets": self.user_sets, "command": self.cmd,
                      "cwd": os.getcwd(), "modes": self.modes, "learners": self.learners, "seeds": self.seeds}
        if self.network:
            self.state["network"] = dict(self.network)
            measured = ((self.prior_state or {}).get("network") or {}).get("measured")
            if measured and "error" not in measured:
                self.state["network"]["measured"] = measured
        if self.sweep_ps:
            self.state["param_servers"] = self.ps_counts
        if self.sweep_impl:
            self.state["allreduce_impls"] = self.impls
        if self.sweep_batch:
            self.state["learner_batch"] = self.batches
        if self.skipped:
            self.state["skipped"] = [c.name for c in self.skipped]
        self.state.update({"started": self.started.isoformat(timespec="seconds"), "cells": []})
        if self.prior_state:
            ps = self.prior_state
            self.state["first_command"] = ps.get("first_command", ps.get("command"))
            self.state["first_started"] = ps.get("first_started", ps.get("started"))
        names = {c.name for c in self.cells}
        for name, rec in self.prior.items():  # cells of an earlier, larger matrix stay recorded
            if name not in names:
                self.state["cells"].append(rec)

    def record(self):
        names = {c.name for c in self.cells}
        self.state["cells"] = [r for r in self.state["cells"] if r.get("name") not in names] + \
                              [c.state(self.out) for c in self.cells if c.exit is not None or c.run_dir]
        save_state(self.out, self.state)

    def ranks_line(self):
        parts = []
        for k, v in self.checked.items():
            dk = (k[0], k[1], k[2] if self.dims.ps else None, k[3] if self.dims.impl else None,
                  k[4] if self.dims.batch and k[0] == ALLREDUCE else None)
            P = self.dims.ps_of(dk)
            parts.append("%s L%d%s: %s" % (self.dims.label(dk), k[1], "" if P is None else " P=%d" % P, v["ranks"]))
        return "- Ranks per job: %s" % ", ".join(parts)

    def head_lines(self):
        seeds = self.seeds
        sets = self.user_sets
        head = [
            "- Command: `%s` (in `%s`)" % (self.cmd, os.getcwd()),
            "- Config: `%s` (copied to `config.yaml`; each run's effective config is its `config.yaml`)%s" % (
                self.config, (", with `--set " + "` `--set ".join(sets) + "`") if sets else ""),
            "- Matrix: modes %s; learners %s; seeds %s; roles.param_servers %s for the PS modes, 0 for %s%s%s; "
            "one job at a time through scripts/launch" % (
                ", ".join(self.modes), ", ".join(map(str, self.learners)),
                "%d..%d" % (seeds[0], seeds[-1]) if len(seeds) > 1 else seeds[0], ", ".join(map(str, self.ps_counts)),
                self.no_ps_words(), "; sync.allreduce_impl %s" % ", ".join(self.impls) if self.impls_opt else "",
                self.batch_words()),
            self.ranks_line(),
            "- Date: %s" % self.started.strftime("%Y-%m-%d %H:%M:%S %Z"),
        ]
        how = ("each learner and each PS shard on a node of its own while nodes last (`--spread`)"
               if self.opts.placement == "spread" else "learners with their PS shards on one node where they fit")
        if self.opts.simcluster is not None:
            head.append("- Network: every job across %d simulated nodes (`scripts/simcluster shaped-run`), each NIC "
                        "shaped to %s each way, placed by scripts/launch: %s (docs/MULTIHOST.md)"
                        % (self.opts.simcluster, self.opts.link, how))
        elif self.opts.hostfile is not None:
            head.append("- Network: every job across the %d hosts of `%s`, placed by scripts/launch: %s "
                        "(docs/MULTIHOST.md)" % (self.opts.nodes, self.opts.hostfile, how))
        if self.state.get("first_command"):
            head.insert(1, "- Resumed (--resume): the matrix was started on %s by `%s`" % (
                self.state.get("first_started"), self.state["first_command"]))
        if self.opts.jobs_timeout:
            head.append("- Job time limit: %g s (--jobs-timeout)" % self.opts.jobs_timeout)
        return head

    def no_ps_words(self):
        """"allreduce" (as it always said), or the modes without parameter
        servers this matrix has beyond it ("allreduce, gossip and local_sgd")."""
        ms = [ALLREDUCE] + [m for m in self.modes if not facts.has_ps(m) and m != ALLREDUCE]
        return ms[0] if len(ms) == 1 else "%s and %s" % (", ".join(ms[:-1]), ms[-1])

    def batch_words(self):
        """The matrix line's part on learner.batch (--learner-batch only)."""
        if ALLREDUCE not in self.modes or (not self.batches_opt and self.batches == [PER_LEARNER]):
            return ""
        words = "; learner.batch %s for allreduce (%s" % (
            ", ".join(self.batches), "the PS modes run per_learner" if self.batches_opt else "the config's")
        if self.sweep_batch and 1 in self.learners:
            words += ("; with 1 learner the rules are one update, so the 1-learner allreduce cells run once, "
                      "per_learner, and are the global series' 1-learner reference")
        return words + ")"

    def keep_finished(self):
        """--resume: the cells whose run finished are kept; returns how many
        cells are left to run."""
        to_run = 0
        for c in self.cells:
            d = os.path.join(self.runs, c.name)
            rec = self.prior.get(c.name, {})
            # a cell recorded as interrupted runs again even where its run wrote a summary.json (a build that
            # recorded 130 for a job that had ended by itself)
            if self.opts.resume and finished_run(d) and not (rec.get("interrupted") and rec.get("exit")):
                c.skipped = True
                c.run_dir = d
                c.exit = rec.get("exit", 0) if rec.get("exit") is not None else 0
                c.seconds = rec.get("seconds")
                c.timed_out = bool(rec.get("timed_out"))
                c.log = os.path.join(self.out, rec["log"]) if rec.get("log") else None
            else:
                to_run += 1
        return to_run

    def run_one(self, c, times):
        """Runs cell c afresh (an unfinished run of it kept aside)."""
        d = os.path.join(self.runs, c.name)
        if os.path.exists(d):
            i = 1
            while os.path.exists("%s.incomplete-%d" % (d, i)):
                i += 1
            os.rename(d, "%s.incomplete-%d" % (d, i))
        try:
            run_cell(c, self.config, c.sets, self.out, self.opts)
        finally:
            if c.exit is not None:
                times.append(c.seconds)
                self.record()

    def run_all(self, t_start):
        """Runs the cells not kept; returns (jobs run, the stop signal that
        interrupted them, or 0)."""
        to_run = self.keep_finished()
        self.record()
        times = []
        try:
            for k, c in enumerate(self.cells, 1):
                if not c.skipped:
                    self.run_one(c, times)
                left = (sum(times) / len(times)) * (to_run - len(times)) if times else None
                print(progress_line(k, len(self.cells), c, self.label(c), time.monotonic() - t_start, left),
                      flush=True)
        except KeyboardInterrupt as e:
            self.record()
            print("compare: interrupted (%s); `--resume` runs the remaining cells"
                  % signal.Signals(job.signum_of(e)).name, file=sys.stderr)
            return len(times), job.signum_of(e)
        return len(times), 0

    def run(self):
        self.check_input()
        self.check_config()
        self.make_cells()
        self.check_layouts()
        budget.check(self.checked)
        self.check_resume()
        self.start_state()
        self.head = self.head_lines()
        if self.skipped:
            note = self.skipped_note()
            print("compare: %s%s" % (note[0].lower(), note[1:]), flush=True)
        t_start = time.monotonic()
        if self.network and "measured" not in self.state["network"]:
            print("compare: measuring the network (gorila bench pingpong between two nodes) ...", flush=True)
            m = network.probe(self.opts, hostfile_hosts(self.opts.hostfile) if self.opts.hostfile else None)
            self.state["network"]["measured"] = m
            if "error" in m:
                warn("could not measure the network: %s; the cost model uses the nominal rate" % m["error"])
            else:
                print("compare: latency %.1f us, bandwidth %.1f Mbit/s" % (
                    1e6 * m["latency_s"], 8e-6 * m["bandwidth_bytes_per_s"]), flush=True)
            self.record()
        done_run, interrupted = self.run_all(t_start)
        self.state["finished"] = datetime.datetime.now().astimezone().isoformat(timespec="seconds")
        self.record()
        self.head.append("- Jobs run by this command: %d, %s in all%s" % (
            done_run, fmt_secs(time.monotonic() - t_start),
            "; kept from before (--resume): %d" % sum(1 for c in self.cells if c.skipped) if self.opts.resume else ""))
        write_report(self.out, self.cells, self.head, bool(interrupted), self.state.get("network"),
                     self.skipped_note())
        print("report: %s" % os.path.join(self.out, "report.md"))
        return 128 + interrupted if interrupted else 0


def matrix(opts, argv):
    return Matrix(opts, argv).run()
