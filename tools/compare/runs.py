# SPDX-License-Identifier: MIT
"""Run directories: one run's figures from its summary.json, eval.csv and
metrics.csv (the decentralized modes' consensus distance), and Cell, one
(mode, learner count, [parameter servers or allreduce algorithm and batch
rule,] seed) of the matrix."""
import json
import math
import os

from . import facts
from .errors import InputError, warn
from .facts import PER_LEARNER
from .stats import DASH, num

SUMMARY_NUMBERS = ("solved_at_env_steps", "solved_at_seconds", "last_eval_mean_return", "best_eval_mean_return",
                   "updates_per_second", "env_steps_per_second", "env_steps", "updates", "wall_seconds",
                   "stale_gradients_dropped", "bytes_per_update")


def read_json(path):
    with open(path) as f:
        return json.load(f)


def read_json_input(path, missing):
    """The JSON file a command line names (a run's summary.json, a report's
    compare.json): InputError `missing` when there is no such file, the
    path and the reason when it does not read as JSON."""
    if not os.path.isfile(path):
        raise InputError(missing)
    try:
        return read_json(path)
    except (OSError, ValueError) as e:
        raise InputError("%s: %s" % (path, e))


def read_eval_csv(path):
    """[(wall_seconds, env_steps, mean_return)] of eval.csv; [] without one."""
    rows = []
    try:
        with open(path) as f:
            header = f.readline().strip().split(",")
            for line in f:
                cells = line.strip().split(",")
                if len(cells) != len(header):
                    continue
                r = dict(zip(header, cells))
                try:
                    rows.append((float(r["wall_seconds"]), float(r["env_steps"]), float(r["mean_return"])))
                except (KeyError, ValueError):
                    continue
    except OSError:
        pass
    return rows


def read_consensus(path):
    """[(env_steps, consensus_distance)] of metrics.csv's rows that have a
    consensus distance (the decentralized modes log one once the learners
    have measured it; other modes leave it empty); [] without the file or
    the column."""
    rows = []
    try:
        with open(path) as f:
            header = f.readline().strip().split(",")
            if "consensus_distance" not in header or "env_steps" not in header:
                return []
            xi, ci = header.index("env_steps"), header.index("consensus_distance")
            for line in f:
                cells = line.strip().split(",")
                if len(cells) != len(header):
                    continue
                try:
                    x, v = float(cells[xi]), float(cells[ci])
                except ValueError:
                    continue
                if math.isfinite(x) and math.isfinite(v):
                    rows.append((x, v))
    except OSError:
        pass
    return rows


def role_list(summary, role):
    roles = summary.get("roles")
    if not isinstance(roles, dict):
        return []
    v = roles.get(role)
    return v if isinstance(v, list) else []


def _learner_total(s, key):
    """The top-level count where the run has it, else the sum of the
    learners' own counts (None when either is missing)."""
    v = num(s.get(key))
    learners = role_list(s, "learner")
    if v is None and learners and all(num(r.get(key)) is not None for r in learners):
        v = sum(r[key] for r in learners)
    return v


def _bytes_sent(ranks, updates):
    """Bytes all ranks of a role sent (every message type, and the ring's),
    per update."""
    total = 0
    for r in ranks:
        bs = r.get("bytes_sent")
        if isinstance(bs, dict):
            total += sum(v for v in bs.values() if num(v) is not None)
        ring = r.get("ring")
        if isinstance(ring, dict) and num(ring.get("bytes_sent")) is not None:
            total += ring["bytes_sent"]
    return total / updates


def _bytes_per_update(s, updates):
    """{role: bytes per update}: bytes_per_update_by_role where the run has
    it, else computed from the ranks' bytes_sent."""
    by = s.get("bytes_per_update_by_role")
    bpu = {}
    for role in facts.roles():
        ranks = role_list(s, role)
        if isinstance(by, dict):
            bpu[role] = num(by.get(role)) if role in by else (0 if not ranks else None)
        elif ranks and updates:
            bpu[role] = _bytes_sent(ranks, updates)
        else:
            bpu[role] = None if ranks else 0
    return bpu


def _wait_shares(s, wall):
    """{role: share of the wall time it spent waiting for messages, mean
    over its ranks}."""
    wait = {}
    for role in facts.roles():
        ranks = role_list(s, role)
        ws = [num(r.get("wait_seconds")) for r in ranks]
        wait[role] = (sum(ws) / len(ws) / wall) if ranks and wall and all(w is not None for w in ws) else None
    return wait


def _ring(f, learners, wall):
    rings = [r["ring"] for r in learners if isinstance(r.get("ring"), dict)]
    ring_s = [num(r.get("seconds")) for r in rings]
    f["ring_share"] = (sum(ring_s) / len(ring_s) / wall) if ring_s and wall and None not in ring_s else None
    rr = [num(r.get("rounds")) for r in rings]
    f["ring_rounds"] = max(rr) if rr and None not in rr else None


def _staleness_hist(s):
    """The staleness histogram summed over the PS shards, or None."""
    bins = facts.staleness_bins()
    hist = None
    for r in role_list(s, "ps"):
        h = r.get("staleness_histogram")
        if isinstance(h, list):
            hist = hist or [0] * bins
            for i, c in enumerate(h[:bins]):
                hist[i] += c if num(c) is not None else 0
    return hist


def _mean(xs):
    xs = [num(x) for x in xs]
    return sum(xs) / len(xs) if xs and all(x is not None for x in xs) else None


def _per_worker(f, s):
    """Per learner and per gradient (summary.json per_worker): sync bytes
    and the model's, the time split, and the PS shards' load; None where
    the run does not report them (older builds)."""
    pw = s.get("per_worker") if isinstance(s.get("per_worker"), dict) else {}
    ls = pw.get("learners") if isinstance(pw.get("learners"), list) else []
    ps = pw.get("ps_shards") if isinstance(pw.get("ps_shards"), list) else []
    for key, src in (("sync_sent_pg", "sync_bytes_sent_per_gradient"), ("sync_recv_pg", "sync_bytes_recv_per_gradient"),
                     ("model_sent_pg", "model_bytes_sent_per_gradient"),
                     ("model_recv_pg", "model_bytes_recv_per_gradient"),
                     ("compute_pg", "compute_seconds_per_gradient"), ("sync_s_pg", "sync_seconds_per_gradient"),
                     ("sample_wait_pg", "sample_wait_seconds_per_gradient")):
        f[key] = _mean([w.get(src) for w in ls])
    # the learner that waits least in a synchronous round arrives last: its
    # sync time is the closest to the communication alone
    syncs = [num(w.get("sync_seconds_per_gradient")) for w in ls]
    f["sync_s_pg_min"] = min(syncs) if syncs and all(v is not None for v in syncs) else None
    vals = [num(w.get("sync_bytes_sent_per_gradient")) for w in ls]
    f["sync_sent_pg_max"] = max(vals) if vals and all(v is not None for v in vals) else None
    # learner 0: the naive allreduce's driver
    first = [w for w in ls if w.get("index") == 0]
    f["sync_sent_pg_driver"] = num(first[0].get("sync_bytes_sent_per_gradient")) if first else None
    f["model_sent_pg_driver"] = num(first[0].get("model_bytes_sent_per_gradient")) if first else None
    f["ps_busy"] = _mean([p.get("busy_fraction") for p in ps])
    f["ps_in_bps"] = _mean([p.get("bytes_in_per_second") for p in ps])
    f["ps_out_bps"] = _mean([p.get("bytes_out_per_second") for p in ps])
    f["n_params"] = num(pw.get("n_params"))
    f["ranks"] = sum(len(role_list(s, r)) for r in facts.roles())


def _decentralized(f, s):
    """The decentralized modes' figures: exchanges or averages per learner
    (roles.learner[].sync_rounds, mean), the learners' last consensus
    distance (mean), and which parameters the evaluations ran."""
    learners = role_list(s, "learner")
    f["sync_rounds"] = _mean([r.get("sync_rounds") for r in learners]) if learners else None
    f["consensus_summary"] = _mean([r.get("consensus_distance") for r in learners]) if learners else None
    ev = s.get("evaluated_parameters")
    f["evaluated_parameters"] = ev if isinstance(ev, str) else None


def run_figures(s):
    """What the report shows of one run, from its summary.json (dict)."""
    f = {k: num(s.get(k)) for k in SUMMARY_NUMBERS}
    f["solved"] = s.get("solved") is True
    updates = f["updates"]
    wall = f["wall_seconds"]
    # gradients computed and samples trained by all learners
    g = f["gradients"] = _learner_total(s, "gradients")
    st = f["samples_trained"] = _learner_total(s, "samples_trained")
    f["gradients_per_update"] = g / updates if g is not None and updates else None
    # rows per gradient: replay.batch_size, or 1/L of it with learner.batch global
    f["samples_per_gradient"] = st / g if st is not None and g else None
    f["samples_per_second"] = st / wall if st is not None and wall else None
    f["bpu_from_summary"] = isinstance(s.get("bytes_per_update_by_role"), dict)
    bpu = f["bpu_role"] = _bytes_per_update(s, updates)
    vals = [bpu[r] for r in facts.roles() if role_list(s, r)]
    f["bpu_total"] = sum(vals) if vals and all(v is not None for v in vals) else None
    f["wait_share"] = _wait_shares(s, wall)
    _ring(f, role_list(s, "learner"), wall)
    f["staleness_hist"] = _staleness_hist(s)
    _per_worker(f, s)
    _decentralized(f, s)
    return f


def staleness_stats(hist):
    """(mean, p99) as text from a histogram whose last bin counts every
    gradient that stale or more."""
    if not hist:
        return DASH, DASH
    total = sum(hist)
    if total == 0:
        return DASH, DASH
    last = len(hist) - 1
    mean = sum(i * c for i, c in enumerate(hist)) / total
    mean_s = ("\u2265%.2f" if hist[last] else "%.2f") % mean
    cum = 0
    p99 = last
    for i, c in enumerate(hist):
        cum += c
        if cum >= 0.99 * total:
            p99 = i
            break
    p99_s = "\u2265%d" % last if p99 == last else "%d" % p99
    return mean_s, p99_s


def sum_hists(hists):
    """The bin-wise sum of the histograms that are there, or None."""
    total = None
    for h in hists:
        if h:
            total = [a + b for a, b in zip(total or [0] * facts.staleness_bins(), h)]
    return total


def finished_run(d):
    """A run directory with a summary.json of a run that was not stopped by
    a signal (an interrupted or timed-out cell runs again on --resume)."""
    try:
        return read_json(os.path.join(d, "summary.json")).get("stop_reason") != "signal"
    except (OSError, ValueError):
        return False


def _count(x):
    return x if isinstance(x, int) and not isinstance(x, bool) and x >= 0 else None


def run_variant(mode, s, config):
    """(P, allreduce algorithm) of a run of mode with summary.json s: P of a
    PS mode (easgd among them) from per_worker.n_param_servers, else the
    config's roles.param_servers (0 for allreduce, gossip and local_sgd);
    the algorithm of allreduce and local_sgd from allreduce_impl, else the
    config's sync.allreduce_impl; None where neither says. config: a
    function returning the run's flat config (as facts.config_check gives
    it), called only when summary.json does not say."""
    if facts.has_impl(mode):
        impl = s.get("allreduce_impl")
        if not isinstance(impl, str):
            impl = config().get("sync.allreduce_impl")
        return 0, impl if isinstance(impl, str) else None
    if not facts.has_ps(mode):
        return 0, None
    if mode not in facts.ps_modes():
        return None, None
    pw = s.get("per_worker") if isinstance(s.get("per_worker"), dict) else {}
    P = _count(pw.get("n_param_servers"))
    return (P if P is not None else _count(config().get("roles.param_servers"))), None


def run_batch(s, config, config_path=None):
    """learner.batch of a run with summary.json s: summary.json's
    learner_batch where it says, else the run's config (config: a function
    returning its flat config, as for run_variant), else the `batch:` line
    of config.yaml's `learner:` section (config_path; a config this build
    refuses), else per_learner (a build before the key, whose only rule
    it was)."""
    b = s.get("learner_batch")
    if not isinstance(b, str):
        b = config().get("learner.batch")
    if not isinstance(b, str) and config_path:
        b = facts.yaml_key(config_path, "learner", "batch")
    return b if isinstance(b, str) and b else PER_LEARNER


def cell_name(mode, learners, seed, ps=None, impl=None, batch=None):
    """A cell's run directory name: <mode>[-<algorithm>][-<batch rule>]-L<learners>[-P<ps>]-s<seed>."""
    return "%s%s%s-L%d%s-s%d" % (mode, "" if impl is None else "-" + impl, "" if batch is None else "-" + batch,
                                 learners, "" if ps is None else "-P%d" % ps, seed)


class Cell:
    def __init__(self, mode, learners, seed, name=None, ps=None, impl=None, batch=None):
        self.mode = mode
        self.learners = learners
        self.seed = seed
        self.ps = ps          # parameter-server shards (PS modes, easgd; 0 for allreduce, gossip, local_sgd)
        self.impl = impl      # the algorithm of allreduce and local_sgd (None: another mode, or not known)
        self.batch = batch    # learner.batch: per_learner or global (None: not known)
        self.name = name or cell_name(mode, learners, seed)
        self.extra = {}       # what compare.json records of it beyond mode, learners and seed
        self.sets = []        # the --set options of its job
        self.run_dir = None
        self.exit = None      # None: not run (or unknown, --from)
        self.seconds = None   # wall time of the launcher, this script's clock
        self.skipped = False  # --resume: kept from before
        self.timed_out = False
        self.interrupted = False
        self.log = None
        self.summary = None
        self.figures = None
        self.evals = []
        self.consensus = []   # [(env_steps, consensus_distance)] of metrics.csv (decentralized modes)
        self.sync_every = None  # gradients between two exchanges (decentralized modes; config.yaml)

    def state(self, out):
        """The cell for compare.json; paths inside DIR relative to it, so a
        copied or moved DIR can still be resumed."""
        def rel(p):
            if p and os.path.abspath(p).startswith(out + os.sep):
                return os.path.relpath(p, out)
            return p
        rec = {"name": self.name, "mode": self.mode, "learners": self.learners, "seed": self.seed}
        rec.update(self.extra)
        rec.update({"run_dir": rel(self.run_dir), "exit": self.exit, "seconds": self.seconds,
                    "timed_out": self.timed_out, "interrupted": self.interrupted, "log": rel(self.log)})
        return rec

    def load(self):
        """Reads the run's summary.json, eval.csv and, for a decentralized
        mode, metrics.csv's consensus distance and config.yaml's interval
        between exchanges, when it has them."""
        self.summary = self.figures = None
        self.evals = []
        self.consensus = []
        self.sync_every = None
        if not self.run_dir:
            return
        p = os.path.join(self.run_dir, "summary.json")
        if os.path.isfile(p):
            try:
                self.summary = read_json(p)
                self.figures = run_figures(self.summary)
            except (OSError, ValueError) as e:
                warn("%s: %s" % (p, e))
                self.summary = self.figures = None
        self.evals = read_eval_csv(os.path.join(self.run_dir, "eval.csv"))
        if facts.is_decentralized(self.mode):
            self.consensus = read_consensus(os.path.join(self.run_dir, "metrics.csv"))
            every = facts.yaml_key(os.path.join(self.run_dir, "config.yaml"), "sync", facts.every_key(self.mode))
            self.sync_every = int(every) if every and every.isdigit() and int(every) > 0 else None

    @property
    def ok(self):
        """Finished: a summary.json and no failure we know of."""
        return self.summary is not None and (self.exit is None or self.exit == 0) and not self.stopped

    @property
    def stopped(self):
        """Stopped by a signal: the run did not reach its own end."""
        return self.summary is not None and self.summary.get("stop_reason") == "signal"

    @property
    def failed(self):
        """Its job exited with a non-zero status."""
        return self.exit not in (None, 0)

    def status(self):
        if self.exit is None and self.summary is None:
            return "not run"
        if self.interrupted:
            return "interrupted (exit %d)" % self.exit
        if self.timed_out:
            return "timed out (exit %d)" % self.exit
        if self.exit is not None and self.exit != 0:
            return "failed (exit %d)" % self.exit
        if self.stopped:
            return "stopped by a signal"
        return "ok" if self.exit == 0 else "ok (exit unknown)"
