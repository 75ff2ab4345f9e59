# SPDX-License-Identifier: MIT
"""report.md: a section per function, each returning its lines. The
decentralized modes (gossip, local_sgd, easgd) add the section "Consensus
distance" and its plot consensus.png."""
import os
import re
import subprocess

from . import facts
from .errors import warn
from .facts import ALLREDUCE, GORILA, HERE, compare_config_params
from .lessons import note_no_updates, section as lessons_section
from .modelcheck import ModelCheck, add_plots
from .plots import make_plots
from .dims import Dims, key_order
from .runs import role_list, staleness_stats, sum_hists
from .stats import DASH, fmt, fmt_median, fmt_stat, median, quantile

BY_CONSTRUCTION = "0 (by construction)"
PLOT_NOTES = {
    "bytes_per_worker.png": "Left: bytes one learner sends per gradient to sync it (`per_worker.learners[]` "
                            "`sync_bytes_sent_per_gradient`; mean over the learners, median over the runs; for the "
                            "naive allreduce also learner 0, its driver), against the model: K for a PS learner, "
                            "2(N-1)/N K for the ring (which approaches 2K), (N-1) K for the naive driver (curves run "
                            "on to 8 learners at least, past the measured points), and for the decentralized modes "
                            "`model_bytes_sent_per_gradient` of the same runs. Right (PS modes): bytes into the "
                            "busiest parameter-server shard per round of N gradients (`per_worker.ps_shards[]` "
                            "`bytes_in_per_update` x the shard's updates / the run's gradients x N), against N K / P: "
                            "the single PS's inbound traffic, the bottleneck, grows with N. Series whose points are "
                            "the same within 1% are drawn once and named together (\"a = b\"), the others nudged "
                            "sideways so none hides another; kB or MB (10^3, 10^6 bytes). allreduce with `mpi` is "
                            "left out: MPI_Allreduce's traffic is not visible to gorila. Data: "
                            "`plots/bytes_per_worker.dat`, `plots/bytes_into_ps.dat`.",
    "consensus.png": "A line per run: metrics.csv's `consensus_distance` (the mean over the learners of each one's "
                     "last measured L2 distance from the mean of all learners' parameters; easgd: from the center "
                     "variable) at each logged row that has one, against the run's env steps; a log scale where "
                     "every value is above 0.",
}


def md_table(header, rows, align):
    out = ["| " + " | ".join(header) + " |", "|" + "|".join(align) + "|"]
    for r in rows:
        out.append("| " + " | ".join(str(x) for x in r) + " |")
    return "\n".join(out)


def _first_line(args, timeout):
    """The first line of what args print, or "" (no such program, no output)."""
    try:
        p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return p.stdout.splitlines()[0] if p.stdout else ""


def _gorila_version_line():
    """What `gorila version` prints (its lines joined by "; "): the release
    and source id of the binary that ran the jobs (which may differ from
    the commit of the source line), and whatever else it reports."""
    try:
        p = subprocess.run([GORILA, "version"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           timeout=10)
    except (OSError, subprocess.TimeoutExpired) as e:
        return "- gorila: `%s version` failed: %s" % (GORILA, e)
    out = "; ".join(ln.strip() for ln in p.stdout.splitlines() if ln.strip())
    if p.returncode == 0 and out:
        return "- gorila: `%s version`: %s" % (GORILA, out)
    why = " ".join(p.stderr.split()) or "no output"
    return "- gorila: `%s version` failed (exit %d): %s" % (GORILA, p.returncode, why)


def _source_line():
    try:
        p = subprocess.run(["git", "-C", HERE, "describe", "--always", "--dirty"], stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, text=True, timeout=10)
        if p.returncode != 0 or not p.stdout.strip():
            return None
        b = subprocess.run(["git", "-C", HERE, "rev-parse", "--abbrev-ref", "HEAD"], stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return None
    return "- Source: commit %s%s" % (p.stdout.strip(), " on branch " + b if b else "")


def machine_lines():
    u = os.uname()
    system = " ".join([u.sysname, u.release, u.machine])
    lines = ["- Machine: %s, %d cores (nproc), %s" % (u.nodename, os.cpu_count() or 0, system)]
    try:
        with open("/proc/cpuinfo") as f:
            m = re.search(r"^model name\s*:\s*(.*)$", f.read(), re.M)
        if m:
            lines.append("- CPU: %s" % m.group(1).strip())
    except OSError:
        pass
    lines.append(_gorila_version_line())
    source = _source_line()
    if source:
        lines.append(source)
    first = _first_line([GORILA, "bench", "env", "--steps", "1", "--env", "CartPole-v1"], 30)
    if first.startswith("OpenBLAS"):
        lines.append("- %s" % first)
    first = _first_line(["mpirun", "--version"], 10)
    if first:
        lines.append("- MPI: %s" % first.strip())
    return lines


class Report:
    """The report of a set of cells (their runs loaded)."""

    def __init__(self, out, cells, skipped_note=None):
        self.out = out
        self.cells = cells
        self.skipped_note = skipped_note  # the matrix's line on the cells gorila refuses (1-learner gossip, ...)
        for c in cells:
            c.load()
        self.dims = Dims(cells)
        self.groups = self.dims.groups(cells)
        self.keys = sorted(self.groups, key=key_order)
        self.roles = facts.roles()

    def finished(self, k):
        """The finished cells of group k."""
        return [c for c in self.groups[k] if c.ok]

    def no_such_ranks(self, k, role):
        """Group k has finished runs and none of them has ranks of role."""
        fin = self.finished(k)
        return fin and all(not role_list(c.summary, role) for c in fin)

    def header(self, head_lines, interrupted):
        cells = self.cells
        env = next((c.summary.get("env") for c in cells if c.summary), None)
        n_failed = sum(1 for c in cells if c.failed)
        n_notrun = sum(1 for c in cells if c.exit is None and c.summary is None)
        modes = [m for m in facts.modes() + ["local"] if any(c.mode == m for c in cells)]
        L = ["# %s: %s" % (", ".join(modes) or "No cells", env or "no finished runs"), ""]
        L += note_no_updates(cells)
        L += head_lines
        L += machine_lines()
        L.append("- Cells: %d (%d finished, %d failed%s)" % (
            len(cells), sum(1 for c in cells if c.ok), n_failed, ", %d not run" % n_notrun if n_notrun else ""))
        if interrupted:
            L.append("- **Interrupted**: the cells not run are listed as such; `--resume` runs them.")
        return L + [""] + self.dims.batch_note()

    def learning(self):
        L = ["## Learning", "",
             "Per %s. *solved*: runs whose evaluation reached the threshold, of all cells "
             "(failed cells count as not solved). Env steps and seconds to solve are over the solved runs; "
             "final and best evaluation over the finished runs. Each: median, with the interquartile range "
             "when there are two runs or more." % self.dims.per(), ""]
        rows = []
        for k in self.keys:
            g = self.groups[k]
            fin = self.finished(k)
            solved = [c for c in fin if c.figures["solved"]]
            failed = [c for c in g if c.failed]
            sv = "%d/%d" % (len(solved), len(g))
            if failed:
                sv += " (%d failed)" % len(failed)
            rows.append(self.dims.cols(k) + [
                sv, fmt_stat([c.figures["solved_at_env_steps"] for c in solved], ".0f"),
                fmt_stat([c.figures["solved_at_seconds"] for c in solved], ".2f"),
                fmt_stat([c.figures["last_eval_mean_return"] for c in fin], ".1f"),
                fmt_stat([c.figures["best_eval_mean_return"] for c in fin], ".1f")])
        L.append(md_table(self.dims.head() + ["solved", "env steps to solve", "seconds to solve",
                                              "final eval (final checkpoint)", "best eval (checkpoints/best)"], rows,
                          self.dims.align() + ["---:"] * 5))
        return L + [""] + ([self.skipped_note, ""] if self.skipped_note else [])

    def throughput_row(self, k):
        F = [c.figures for c in self.finished(k)]
        if not facts.has_ps(k[0]):
            smean = sp99 = drop = BY_CONSTRUCTION
        else:
            smean, sp99 = staleness_stats(sum_hists(f["staleness_hist"] for f in F))
            drop = fmt_median([f["stale_gradients_dropped"] for f in F], ".0f")
        # rows per gradient, where the batch rules are shown: replay.batch_size per_learner, 1/L of it global
        per_gradient = [fmt_median([f["samples_per_gradient"] for f in F], ".1f")] if self.dims.batch else []
        return self.dims.cols(k) + [
                fmt_median([f["updates_per_second"] for f in F], ".0f"),
                fmt_median([f["env_steps_per_second"] for f in F], ".0f"),
                fmt_median([f["gradients_per_update"] for f in F], ".2f")] + per_gradient + [
                fmt_median([f["samples_per_second"] for f in F], ".0f"),
                fmt_median([f["bpu_total"] for f in F], ".0f"),
                smean, sp99, drop]

    def throughput(self):
        L = ["## Throughput, staleness, waiting", "",
             "Medians over the finished runs of each %s, except staleness, which pools the "
             "histograms of all its runs and PS shards.%s" % (self.dims.per(), (
                 " *samples/gradient*: `samples_trained` / `gradients`, the rows of one gradient "
                 "(`replay.batch_size` per_learner, 1/L of it with the global batch).") if self.dims.batch else ""),
             ""]
        rows = [self.throughput_row(k) for k in self.keys]
        L.append(md_table(self.dims.head() + ["updates/s", "env steps/s", "gradients/update"]
                          + (["samples/gradient"] if self.dims.batch else [])
                          + ["samples trained/s", "bytes/update", "staleness mean", "staleness p99",
                             "dropped gradients"],
                          rows, self.dims.align() + ["---:"] * (9 if self.dims.batch else 8)))
        return L + [""]

    def bytes_by_role(self):
        L = ["Bytes sent per update, by role (all ranks of the role, ring traffic included where the run "
             "reports it):", ""]
        rows = []
        for k in self.keys:
            F = [c.figures for c in self.finished(k)]
            rows.append(self.dims.cols(k) + [
                "0 (no such ranks)" if self.no_such_ranks(k, r) else fmt_median([f["bpu_role"][r] for f in F], ".0f")
                for r in self.roles])
        L.append(md_table(self.dims.head() + self.roles, rows, self.dims.align() + ["---:"] * len(self.roles)))
        return L + [""]

    def waiting_row(self, k):
        F = [c.figures for c in self.finished(k)]
        r = self.dims.cols(k)
        for role in self.roles:
            if self.no_such_ranks(k, role):
                r.append("\u2014 (no such ranks)")
            else:
                v = [f["wait_share"][role] for f in F if f["wait_share"][role] is not None]
                r.append(DASH if not v else "%.0f%%" % (100 * median(v)))
        v = [f["ring_share"] for f in F if f["ring_share"] is not None]
        r.append(DASH if not v else "%.0f%%" % (100 * median(v)))
        return r

    def waiting(self):
        L = ["Share of the wall time spent waiting for messages (per role: mean over its ranks of "
             "`wait_seconds` / `wall_seconds`); *learner in ring*: mean over learners of the ring's "
             "`seconds` / `wall_seconds` (allreduce, where the run reports it):", ""]
        rows = [self.waiting_row(k) for k in self.keys]
        L.append(md_table(self.dims.head() + self.roles + ["learner in ring"], rows,
                          self.dims.align() + ["---:"] * (len(self.roles) + 1)))
        return L + [""]

    def communication_row(self, k):
        F = [c.figures for c in self.finished(k)]

        def med(key, spec):
            return fmt_median([f[key] for f in F if f.get(key) is not None], spec)

        ratio = [f["sync_sent_pg"] / f["model_sent_pg"] for f in F
                 if f.get("sync_sent_pg") is not None and f.get("model_sent_pg")]
        return self.dims.cols(k) + [
                med("sync_sent_pg", ".0f"), med("model_sent_pg", ".0f"),
                DASH if not ratio else "%.3f" % median(ratio), med("sync_sent_pg_max", ".0f"),
                med("sync_recv_pg", ".0f"), med("model_recv_pg", ".0f")]

    def communication(self):
        modes = {c.mode for c in self.cells}
        impls = {c.impl for c in self.cells if c.mode == ALLREDUCE}
        model = []
        if modes & set(facts.gradient_ps_modes()):
            model.append("PS, K up and K down per learner (plus the target when it changed, and 40-byte headers), so "
                         "N*K into a single PS per round and N*K/P into each of P shards")
        model += [words for impl, words in (
            ("ring", "ring, 2(N-1)K/N each way whatever N"),
            ("naive", "naive, (N-1)K into and out of the driver, K at the others"),
            ("mpi", "mpi, not visible")) if impl in impls]
        L = ["## Communication per worker", "",
             "Bytes one learner sends and receives to sync one gradient (`summary.json` "
             "`per_worker.learners[]`: PS modes its GRAD and PARAM_REQ out and PARAMS in, allreduce the "
             "algorithm's own messages; mean over the learners, median over the runs), beside the model "
             "(`model_bytes_*_per_gradient`, src/mpi/jobsummary.h).%s%s" % (
                 " With K the parameter bytes, N learners and P PS shards the model is: %s." % "; ".join(model)
                 if model else "", " *max* is the busiest learner (the naive driver)." if "naive" in impls
                 else " *max* is the busiest learner."), ""]
        if self.decentral():
            L += ["The decentralized modes, per gradient, with n the parameter count (K = 4n) and G, H and tau the "
                  "gradients between two exchanges (`sync.gossip_every`, `sync.average_every`, `sync.easgd_every`): "
                  "*gossip*, K sent and K received per exchange with one partner whatever N, so 4n f / G each way, f "
                  "the share of learners paired in a round (1 with N even; with N odd one learner sits each round "
                  "out), the stop flag's ring of one float per round not counted; *local_sgd*, the allreduce of n + 1 "
                  "floats (the parameters and a stop flag) every H gradients, ring 2(N-1)/N x 4(n+1) / H each way "
                  "(naive: the driver's (N-1) x 4(n+1) / H); *easgd*, a learner's parameter slices to the P shards "
                  "and the center's moves back, (P x 40 + 4n) / tau each way, whatever N.", ""]
        rows = [self.communication_row(k) for k in self.keys]
        L.append(md_table(self.dims.head() + ["sent/gradient", "model", "sent/model", "max sent", "received/gradient",
                                              "model"], rows, self.dims.align() + ["---:"] * 6))
        return L + [""]

    def time_row(self, k):
        F = [c.figures for c in self.finished(k)]

        def ms(key):
            return fmt_median([1e3 * f[key] for f in F if f.get(key) is not None], ".3f")

        busy = [f["ps_busy"] for f in F if f.get("ps_busy") is not None]
        bps = [f["ps_in_bps"] / 1e6 for f in F if f.get("ps_in_bps") is not None]
        out = [f["ps_out_bps"] / 1e6 for f in F if f.get("ps_out_bps") is not None]
        return self.dims.cols(k) + [
                ms("compute_pg"), ms("sync_s_pg"), ms("sample_wait_pg"),
                DASH if not busy else "%.0f%%" % (100 * median(busy)),
                DASH if not bps else "%.2f / %.2f" % (median(bps), median(out))]

    def time_split(self):
        modes = {k[0] for k in self.keys}
        ps = bool(modes & set(facts.gradient_ps_modes()))
        sync = [w for cond, w in ((ps, "PS modes: sending GRAD and waiting for PARAMS, which includes the PS's own "
                                       "work"), (ALLREDUCE in modes, "allreduce: inside the allreduce")) if cond]
        L = ["## Where the time goes", "",
             "Per learner and per gradient, in milliseconds (`per_worker.learners[]`): computing the gradient%s, "
             "syncing it%s, and waiting for a batch.%s%s" % (
                 " (and in allreduce applying it)" if ALLREDUCE in modes else "",
                 " (%s)" % "; ".join(sync) if sync else "",
                 " Per PS shard: the fraction of its time busy, and MB/s in / out (`per_worker.ps_shards[]`)."
                 if any(facts.has_ps(m) for m in modes) else "",
                 " Decentralized modes: computing includes the learner's own optimizer step, and syncing is its "
                 "exchanges (gossip's pair exchange and stop flag, local_sgd's average, easgd's round trip to the "
                 "center) over all its gradients." if self.decentral() else ""), ""]
        rows = [self.time_row(k) for k in self.keys]
        L.append(md_table(self.dims.head() + ["compute ms", "sync ms", "batch wait ms", "PS busy", "PS MB/s in / out"],
                          rows, self.dims.align() + ["---:"] * 5))
        return L + [""]

    @staticmethod
    def consensus_at(c):
        """(at mid-run, last) consensus distance of a finished cell: the
        first value metrics.csv logged once the run had reached half its
        env steps, and the last it logged; the last falls back to the mean
        of the learners' own last measurement (summary.json
        roles.learner[].consensus_distance) when metrics.csv has none."""
        rows = c.consensus
        last = rows[-1][1] if rows else c.figures.get("consensus_summary")
        end = c.figures.get("env_steps") or (rows[-1][0] if rows else None)
        mid = next((v for x, v in rows if end is not None and x >= end / 2), None)
        return mid, last

    def consensus_row(self, k):
        fin = self.finished(k)
        at = [self.consensus_at(c) for c in fin]
        mid = [a[0] for a in at if a[0] is not None]
        last = [a[1] for a in at if a[1] is not None]
        rounds = [c.figures["sync_rounds"] for c in fin if c.figures.get("sync_rounds") is not None]
        every = [c.sync_every for c in fin if c.sync_every]

        def g(v):
            return DASH if not v else "%.4g" % median(v) + (
                "" if len(v) < 2 else " (IQR %.4g\u2013%.4g)" % (quantile(v, .25), quantile(v, .75)))

        return self.dims.cols(k) + [DASH if not every else "%g" % median(every), fmt_median(rounds, ".1f"),
                                    g(mid), g(last)]

    def consensus(self):
        """The section "Consensus distance": where any cell is decentralized."""
        dm = self.decentral()
        if not dm:
            return []
        keys = [k for k in self.keys if facts.is_decentralized(k[0])]
        L = ["## Consensus distance", "",
             "How far the learners' copies of the parameters drift apart in the decentralized modes: each "
             "learner's L2 distance from the mean of all learners' parameters (easgd: from the center variable "
             "on the parameter servers), as metrics.csv's `consensus_distance` logs it (the mean over the "
             "learners of each one's last measurement). Per %s, median over the finished runs (with the "
             "interquartile range from two runs): *at mid-run*, the first value logged once the run had reached "
             "half its env steps; *last*, the last value logged (summary.json's `roles.learner[].consensus_distance`, "
             "mean over the learners, where metrics.csv has none). *every*: gradients between two exchanges "
             "(`sync.gossip_every`, `sync.average_every`, `sync.easgd_every` of the runs' config.yaml); "
             "*exchanges/learner*: `roles.learner[].sync_rounds`, mean over the learners. Plot: "
             "`consensus.png`." % self.dims.per(), ""]
        L.append(md_table(self.dims.head() + ["every", "exchanges/learner", "at mid-run", "last"],
                          [self.consensus_row(k) for k in keys], self.dims.align() + ["---:"] * 4))
        L.append("")
        L.append("What the evaluations ran (summary.json `evaluated_parameters`):")
        L.append("")
        for m in dm:
            said = sorted({c.figures["evaluated_parameters"] for k in keys if k[0] == m for c in self.finished(k)
                           if c.figures.get("evaluated_parameters")})
            L.append("- %s: %s" % (m, "; ".join(said) if said else DASH))
        return L + [""]

    def cores_warnings(self):
        """One line naming the (mode, learners) groups whose ranks outnumber
        the cores, and what that does to their figures (said once)."""
        cores = os.cpu_count() or 1
        over = []
        for k in self.keys:
            if k in self.dims.aliased:  # another group's runs, named there
                continue
            ranks = [c.figures["ranks"] for c in self.finished(k) if c.figures.get("ranks")]
            if ranks and max(ranks) > cores:
                over.append("%s (%d ranks)" % (self.dims.text(k), max(ranks)))
        if not over:
            return []
        return ["- **More ranks than the %d cores** in %s: %s. Ranks time-share the cores, so rates and times "
                "there measure the sharing as much as communication." % (
                    cores, "1 group" if len(over) == 1 else "%d groups" % len(over), "; ".join(over)), ""]

    def decentral(self):
        """The decentralized modes among the report's groups, in gorila's order."""
        modes = {k[0] for k in self.keys}
        return [m for m in facts.modes() if facts.is_decentralized(m) and m in modes]

    def staleness_note(self):
        """The staleness columns explained: a sentence per kind of mode the
        report has cells of."""
        bins = facts.staleness_bins()
        modes = {k[0] for k in self.keys}
        dm = self.decentral()
        parts = []
        if modes & set(facts.gradient_ps_modes()):
            parts.append("`roles.ps[].staleness_histogram` has %d bins, the last counting every gradient %d or more "
                         "versions old, so a mean marked \u2265 counts those as %d and is a lower bound, and a p99 of "
                         "\u2265%d means at least 1%% were that stale." % (bins, bins - 1, bins - 1, bins - 1))
        if ALLREDUCE in modes:
            parts.append("*allreduce* has no parameter-server ranks: the learners average their gradients in an "
                         "allreduce and all apply the same update in lockstep, so every gradient is computed on the "
                         "current parameters (staleness 0) and none is dropped, by construction rather than by "
                         "measurement.")
        if "ps_sync" in modes:
            parts.append("`ps_sync` applies one averaged step per round of all learners.")
        if "ps_bounded" in modes:
            parts.append("Only `ps_bounded` drops gradients (more than `sync.staleness` versions old).")
        if any(not facts.has_ps(m) for m in dm):
            parts.append("*gossip* and *local_sgd* have no parameter-server ranks%s: each learner applies its own "
                         "gradient to its own copy at once, so staleness is 0 and nothing is dropped, by construction."
                         % (" either" if ALLREDUCE in modes else ""))
        if facts.EASGD in dm:
            parts.append("*easgd*'s parameter servers count, per exchange, the center's versions (the learners' local "
                         "steps) since that learner's last exchange: how far the others moved meanwhile, not the age "
                         "of a gradient; nothing is dropped.")
        return ["Staleness: " + " ".join(parts), ""] if parts else []

    def run_row(self, c):
        f = c.figures
        rd = os.path.relpath(c.run_dir, self.out) if c.run_dir else DASH
        if f is None:
            return self.dims.cols(self.dims.key(c)) + [c.seed, c.status()] + [DASH] * 13 + [rd]
        st_cell = BY_CONSTRUCTION if not facts.has_ps(c.mode) else "%s / %s" % staleness_stats(f["staleness_hist"])
        return self.dims.cols(self.dims.key(c)) + [
                c.seed, c.status(), "yes" if f["solved"] else "no",
                fmt(f["solved_at_env_steps"], ".0f"), fmt(f["solved_at_seconds"], ".2f"),
                fmt(f["last_eval_mean_return"], ".1f"), fmt(f["best_eval_mean_return"], ".1f"),
                fmt(f["env_steps"], ".0f"), fmt(f["updates"], ".0f"),
                fmt(f["updates_per_second"], ".0f"), fmt(f["env_steps_per_second"], ".0f"),
                fmt(f["gradients"], ".0f"), fmt(f["samples_trained"], ".0f"),
                fmt(f["bpu_total"], ".0f"), st_cell, rd]

    def runs(self):
        order = sorted(self.cells, key=lambda c: (key_order(self.dims.key(c)), c.seed, c.name))
        rows = [self.run_row(c) for c in order]
        L = ["## Runs", ""]
        L.append(md_table(self.dims.head() + ["seed", "status", "solved", "solved at env steps", "solved at s",
                                              "final eval", "best eval", "env steps", "updates", "updates/s",
                                              "env steps/s", "gradients", "samples trained", "bytes/update",
                                              "staleness mean / p99", "run"], rows,
                          self.dims.align() + ["---:", "---"] + ["---:"] * 13 + ["---"]))
        return L + [""]

    def failed_line(self, c):
        tail = ""
        if c.log and os.path.isfile(c.log):
            with open(c.log, errors="replace") as fh:
                errs = [ln.rstrip() for ln in fh if re.match(r"^(error:|gorila: error:|launch: )", ln)]
            if errs:
                tail = ": `%s`" % errs[-1].replace("`", "'")[:300]
        return "- %s, seed %d: %s%s%s" % (
            self.dims.text(self.dims.key(c)), c.seed, c.status(),
            " (log: %s)" % os.path.relpath(c.log, self.out) if c.log else "", tail)

    def failed(self):
        bad = [c for c in self.cells if c.failed]
        if not bad:
            return []
        return (["Failed cells (exit statuses: README \"Exit statuses\"):", ""]
                + [self.failed_line(c) for c in bad] + [""])

    def plots(self, more=None):
        notes = []
        plots = make_plots(self.out, self.cells, notes, self.dims, more)
        L = ["## Plots", ""]
        if plots:
            L += ["Evaluation curves: each run's value at a point is its latest evaluation (`eval.csv`) at or "
                  "before it, and a run that stopped (solved, or out of budget) carries its last value forward to "
                  "the end of the axis; a curve starts where at least half of its runs have evaluated. Line: "
                  "median over the runs; band: interquartile range. Data and gnuplot scripts are in `plots/`.", ""]
            for fname, caption in plots:
                L += ["### %s" % caption, "", "![%s](%s)" % (caption, fname), ""]
                L += [PLOT_NOTES[fname], ""] if fname in PLOT_NOTES else []
        L += ["- " + n for n in notes]
        if notes:
            L.append("")
        return L, plots

    def definitions(self):
        return ["## Where the figures come from", "",
                "Every figure is read from the runs' `summary.json` and `eval.csv` (docs/OUTPUTS.md): "
                "*final eval* is `last_eval_mean_return` (the evaluation of `final_checkpoint`), *best eval* "
                "`best_eval_mean_return` (`checkpoints/best`); env steps and seconds to solve are "
                "`solved_at_env_steps` and `solved_at_seconds`; updates/s and env steps/s are "
                "`updates_per_second` and `env_steps_per_second`; *gradients* is `gradients` (else the sum of "
                "`roles.learner[].gradients`), *samples trained* `samples_trained` (else the learners' "
                "`samples_trained`; %s where the run has neither), per second of `wall_seconds`; bytes per update "
                "by role is `bytes_per_update_by_role` where the run has it, else the role's `bytes_sent` summed "
                "over message types (plus `roles.learner[].ring.bytes_sent`) over `updates`; *bytes/update* is "
                "their sum; dropped gradients is `stale_gradients_dropped`. An update is one optimizer step of "
                "parameter source 0%s." % (DASH, self.per_update_words()), ""]

    def per_update_words(self):
        """What an update is in the modes the report has, and so gradients/update."""
        modes = {k[0] for k in self.keys}
        words = [w for m, w in (("ps_sync", "in `ps_sync` one per round of all learners, so about L gradients"),
                                ("allreduce", "in `allreduce` one per allreduce round, so about L gradients%s" % (
                                    " (with `learner.batch: global` each 1/L of the batch)" if self.dims.batch
                                    else "")),
                                ("ps_async", "in `ps_async` one per gradient"),
                                ("ps_bounded", "in `ps_bounded` one per gradient not dropped"))
                 if m in modes]
        if self.decentral():
            words.append("in %s the version of the evaluated parameters (learner 0's local steps; easgd: the "
                         "center's)" % " and ".join("`%s`" % m for m in self.decentral()))
        return " (%s)" % "; ".join(words) if words else ""


def write_report(out, cells, head_lines, interrupted=False, network=None, skipped_note=None):
    """Writes DIR/report.md (through a temporary); returns the plots made.
    network: compare.json's "network" (a matrix run across nodes), for the
    cost model's sections; skipped_note: the matrix's line on the cells
    gorila refused (1-learner gossip and local_sgd), under the learning
    table."""
    r = Report(out, cells, skipped_note)
    mc = ModelCheck(out, cells, r.dims, network) if network else None
    L = r.header(head_lines, interrupted)
    L += lessons_section(cells)
    L += r.learning()
    L += r.cores_warnings()
    L += r.throughput() + r.bytes_by_role() + r.waiting() + r.staleness_note()
    L += r.communication() + r.time_split() + r.consensus()
    if mc:
        L += mc.against() + mc.projection(compare_config_params())
    L += r.runs() + r.failed()
    plot_lines, plots = r.plots((lambda p: add_plots(mc, p)) if mc else None)
    L += plot_lines + r.definitions()
    tmp = os.path.join(out, ".report.md.tmp")
    with open(tmp, "w") as f:
        f.write("\n".join(L) + "\n")
    os.replace(tmp, os.path.join(out, "report.md"))
    none = note_no_updates(cells)
    if none:
        warn("%s; the report says so at its top" % none[0].split(":", 1)[0].replace("**", ""))
    return plots
