# SPDX-License-Identifier: MIT
"""The report's "Model against measurement" and "Projection", for a matrix
run on a network (scripts/compare --simcluster or --hostfile): the cost
model of tools/compare/costmodel.py, fed with the network's measured
latency and bandwidth (gorila bench pingpong between two of its nodes),
set beside each cell's measured sync time per gradient, then projected to
many nodes. The decentralized modes (gossip, local_sgd, easgd) are
modelled per local step, each with its runs' interval between exchanges
(config.yaml), and projected in a table of their own and as more curves."""
import math
import os

from . import costmodel, facts
from .dims import batch_words
from .facts import ALLREDUCE, EASGD, GLOBAL_BATCH, GOSSIP, LOCAL_SGD
from .plots import COLORS
from .stats import DASH, median

TARGET = 0.25          # the bound on |measured / predicted - 1|
COMM_SHARE = 0.5       # ... where communication is at least this share of the update
PROJ_NODES = (2, 4, 8, 16, 32, 64, 128, 256)
PROJ_RATES = ("1gbit", "10gbit", "100gbit")
PROJ_LATENCIES = (5e-6, 50e-6)
MODE_WORDS = {"ps": "single PS: 2(a + N K / B)", "ps_sharded": "P shards: 2(a + max(N K / P, K) / B)",
              "ring": "ring: 2(N-1)(a + K / (N B))",
              "naive": "naive: 2a + (N-1)(K + S) / B, the driver's in and out overlapping but for one segment S"}
# the decentralized modes' words, shown where the matrix has them
DECENTRAL_WORDS = {GOSSIP: "gossip: (a + K / B + 2(N-1) a) / G, a pair exchange and the stop-flag ring every G "
                           "gradients",
                   LOCAL_SGD: "local_sgd: the allreduce's time (ring or naive, as above) on K + 4 bytes (the stop "
                              "flag rides along), over H, every H gradients",
                   EASGD: "easgd: 2(a + max(N K / P, K) / B) / tau, every tau gradients, as if all learners exchanged "
                          "at once (it is asynchronous)"}
# what ranks sharing the cores do to a measurement, said once under the table (rows refer to it)
CORES_NOTE_REF = "see under the table"
CORES_NOTE = ("Where ranks share the cores (simulated nodes on one machine): a learner's sync time includes waiting "
              "for the cores, and the nodes' TCP stacks run on them too.")
# a round waits for every learner (gossip: the stop-flag ring of each round)
SYNCHRONOUS = ("ps_sync", ALLREDUCE, GOSSIP, LOCAL_SGD)


def cell_kind(c):
    """The cost model's name for a cell's pattern, or None (mpi: Open MPI
    picks its own algorithm, not modelled)."""
    if c.mode == ALLREDUCE:
        return c.impl if c.impl in ("ring", "naive") else None
    if c.mode == LOCAL_SGD:
        return LOCAL_SGD if c.impl in ("ring", "naive") else None
    if c.mode in (GOSSIP, EASGD):
        return c.mode
    return "ps" if (c.ps or 1) == 1 else "ps_sharded"


def groups(cells):
    """{(mode, learners, P, algorithm, batch rule): [finished cells]}, from
    the cells' own P, algorithm and learner.batch (shown in the report's
    tables or not; the batch rule of allreduce only, the PS modes run
    per_learner). The two batch rules move the same bytes per round (one
    gradient of the parameters per learner), so the model predicts the
    same communication for both; what differs is the compute per
    gradient, 1/L of the batch with the global one, which the model
    leaves out."""
    out = {}
    for c in cells:
        if c.ok and c.figures:
            out.setdefault((c.mode, c.learners, c.ps if facts.has_ps(c.mode) else 0,
                            c.impl if facts.has_impl(c.mode) else None,
                            c.batch if c.mode == ALLREDUCE else None), []).append(c)
    return out


def mode_words(mode, impl, batch):
    """"ps_sync", "allreduce (ring)", "allreduce (ring, global batch)"."""
    parts = [x for x in (impl, batch_words(batch)) if x]
    return mode if not parts else "%s (%s)" % (mode, ", ".join(parts))


def model_words(r):
    """The model column of a row: its pattern, with the interval of a
    decentralized mode ("gossip, G=4")."""
    if r["kind"] not in costmodel.DECENTRAL_MODES or not r.get("every"):
        return r["kind"] or DASH
    return "%s, %s=%d" % (r["kind"], {GOSSIP: "G", LOCAL_SGD: "H", EASGD: "tau"}[r["kind"]], r["every"])


def _med(cells, key):
    v = [c.figures[key] for c in cells if c.figures.get(key) is not None]
    return median(v) if v else None


def sync_every(cells):
    """The gradients between two exchanges of a decentralized mode's cells
    (median over their runs' config.yaml), or None (the model's default)."""
    v = [c.sync_every for c in cells if c.sync_every]
    return int(median(v)) if v else None


def _ps_ms_per_update(cells):
    """The PS shards' busy time per update (ms): their own work, which the
    model leaves out."""
    v = [1e3 * c.figures["ps_busy"] * c.figures["wall_seconds"] / c.figures["updates"] for c in cells
         if c.figures.get("ps_busy") is not None and c.figures.get("wall_seconds") and c.figures.get("updates")]
    return median(v) if v else None


def network_params(network):
    """(latency s, bandwidth bytes/s, how it was found) of the network, or
    None when nothing is known of it."""
    m = (network or {}).get("measured") or {}
    if m.get("latency_s") is not None and m.get("bandwidth_bytes_per_s"):
        return m["latency_s"], m["bandwidth_bytes_per_s"], "measured"
    if (network or {}).get("link"):
        # TCP's payload of each 1514-byte frame on the wire is 1448 bytes
        return 0.0, costmodel.parse_rate(network["link"]) * 1448 / 1514, "nominal"
    return None


def reasons(c_list, kind, ratio, cores):
    """The factors the runs show that the model leaves out, as short clauses;
    cores: of the machine every node runs on (simulated nodes), else None."""
    out = []
    ranks = max((c.figures.get("ranks") or 0) for c in c_list)
    if ratio > 1 and cores and ranks > cores:
        out.append("%d ranks share %d cores (%s)" % (ranks, cores, CORES_NOTE_REF))
    if ratio > 1 and kind in ("ring", GOSSIP, LOCAL_SGD) and c_list[0].learners == 2:
        out.append("with 2 learners %s one node: the two send to each other at once, and each "
                   "direction's TCP acknowledgements wait behind the other direction's data in the same shaper queue"
                   % ("the partner is" if kind == GOSSIP else "both ring neighbours are"))
    ps_ms = _ps_ms_per_update(c_list)
    if ratio > 1 and kind in ("ps", "ps_sharded", EASGD) and ps_ms is not None:
        out.append("the PS shards were busy (not waiting) %.1f ms per update: summing, the optimizer step and "
                   "pushing bytes through TCP, on the shared cores; the model has none of it" % ps_ms)
    if ratio < 1:
        out.append("the model serializes each transfer; here sends and receives overlap (full duplex) and the "
                   "shaper passes its 5 ms bucket at line rate after an idle spell")
    return out or ["no factor found in the runs' figures"]


class ModelCheck:
    """The two sections and their plots, for one report."""

    def __init__(self, out, cells, dims, network):
        self.out = out
        self.cells = cells
        self.dims = dims
        self.network = network or {}
        self.params = network_params(network)
        self.groups = groups(cells)
        # simulated nodes share this machine's cores; real hosts have their own
        self.cores = (os.cpu_count() or 1) if self.network.get("simcluster") else None
        self.segment = facts.segment_bytes()
        n = [c.figures.get("n_params") for c in cells if c.ok and c.figures and c.figures.get("n_params")]
        self.n_params = int(median(n)) if n else None

    def rows(self):
        """One dict per group with a modelled pattern: the prediction, the
        measurement and the verdict."""
        if not self.params or not self.n_params:
            return []
        lat, bw, _ = self.params
        k_bytes = 4.0 * self.n_params
        nodes = self.network.get("nodes")
        spread = self.network.get("placement") == "spread"
        out = []
        for key in sorted(self.groups, key=lambda k: (k[0], k[3] or "", k[4] == GLOBAL_BATCH, k[2], k[1])):
            mode, L, P, impl, _ = key
            cl = self.groups[key]
            kind = cell_kind(cl[0])
            # synchronous: the learner that waited least (it arrived last, so
            # its time is the communication, not other learners' compute)
            sync = _med(cl, "sync_s_pg_min" if mode in SYNCHRONOUS else "sync_s_pg")
            mean_sync = _med(cl, "sync_s_pg")
            comp = _med(cl, "compute_pg")
            wait = _med(cl, "sample_wait_pg")
            r = {"key": key, "kind": kind, "measured": sync, "compute": comp, "runs": len(cl)}
            if kind is None or sync is None:
                r["verdict"] = ("not modelled (Open MPI's own algorithm)" if kind is None
                                else "no updates, so nothing measured" if not any(c.figures.get("gradients")
                                                                                  for c in cl)
                                else "no per-worker figures (summary.json has no per_worker)")
                out.append(r)
                continue
            pred = costmodel.comm_seconds(kind, L, k_bytes, bw, lat, shards=P or None, segment=self.segment,
                                          every=sync_every(cl), impl=impl if kind == LOCAL_SGD else "ring")
            r["predicted"] = pred
            r["every"] = sync_every(cl) or costmodel.EVERY.get(kind)
            total = mean_sync + (comp or 0) + (wait or 0)
            r["share"] = mean_sync / total if total > 0 else None
            units = L + P + 1
            if pred == 0:
                r["verdict"] = "no communication (one learner)"
            elif not spread or nodes is None or nodes < units:
                why = ("learners and PS shards share nodes (%s nodes for %d learners, %d shards and the rest)"
                       % (nodes, L, P) if spread else "placed with --placement pack: sync traffic stays within a node")
                r["verdict"] = "not compared: " + why
            else:
                ratio = sync / pred
                r["ratio"] = ratio
                target = r["share"] is not None and r["share"] >= COMM_SHARE
                r["target"] = target
                r["met"] = abs(ratio - 1) <= TARGET
                if r["met"]:
                    r["verdict"] = "within 25%%%s" % ("" if target else " (communication under half the update)")
                elif not target:
                    r["verdict"] = "off by %+.0f%%; communication is %.0f%% of the update, under half: not a target" % (
                        100 * (ratio - 1), 100 * (r["share"] or 0))
                else:
                    why = "; ".join(reasons(cl, kind, ratio, self.cores))
                    r["verdict"] = "**off by %+.0f%%**: %s" % (100 * (ratio - 1), why)
            out.append(r)
        return out

    def against(self):
        L = ["## Model against measurement", ""]
        if not self.params:
            err = (self.network.get("measured") or {}).get("error")
            if err:
                return L + ["Not available: the network could not be measured (%s), and a real network has no "
                            "nominal rate to fall back on." % err, ""]
            return L + ["Not available: the matrix ran on one machine (run it with `--simcluster NODES` or "
                        "`--hostfile FILE` to set the cost model beside a network).", ""]
        lat, bw, how = self.params
        m = self.network.get("measured") or {}
        if how == "measured":
            L.append("The network, measured before the matrix by `%s`: latency a = %.1f us (one-way time of an "
                     "8-byte message), bandwidth B = %.1f Mbit/s of payload (a %s-byte message's one-way time less "
                     "a)." % (m.get("command", "gorila bench pingpong"), lat * 1e6, bw * 8 / 1e6,
                              m.get("largest_bytes", "?")))
        else:
            L.append("The network was not measured (%s): the model uses the nominal link rate less TCP/IP/Ethernet "
                     "headers (B = %s x 1448/1514 = %.1f Mbit/s) and a = 0." % (
                         m.get("error", "no ping-pong"), self.network.get("link"), bw * 8 / 1e6))
        rows = self.rows()
        kinds = {r["kind"] for r in rows}
        decentral = [k for k in costmodel.DECENTRAL_MODES if k in kinds]
        words = list(MODE_WORDS.values()) + [DECENTRAL_WORDS[k] for k in decentral]
        sync = ["`%s`" % m for m in SYNCHRONOUS if m in (GOSSIP, LOCAL_SGD) and m in kinds]
        sync = "`ps_sync` and `allreduce`" if not sync else "`ps_sync`, `allreduce`%s and %s" % (
            "".join(", " + m for m in sync[:-1]), sync[-1])
        L += ["", "Prediction: the communication time of one update per learner (tools/compare/costmodel.py: %s; "
              "K = %s bytes, the parameters as float32), against the measured sync time per gradient "
              "(`per_worker.learners[].sync_seconds_per_gradient`, median over runs: in %s "
              "the least over the learners, since a round waits for every learner and the one that arrives last "
              "waits for no other's compute, so its sync time is the communication; in the asynchronous modes the "
              "mean). "
              "*share*: sync / (compute + sync + batch wait). Target: within %d%% wherever communication is at "
              "least half of the update and each learner and PS shard has a node of its own.%s"
              % ("; ".join(words), "{:,}".format(4 * self.n_params) if self.n_params else DASH, sync,
                 100 * TARGET, " In the decentralized modes an update is one learner's local step (one gradient), "
                 "and G, H and tau are the runs' own (`sync.gossip_every`, `sync.average_every`, "
                 "`sync.easgd_every` of their config.yaml)." if decentral else ""), ""]
        tab = ["| mode | learners | P | model | predicted ms | measured ms | measured / predicted | share | verdict |",
               "|---|---:|---:|---|---:|---:|---:|---:|---|"]
        for r in rows:
            mode, N, P, impl, batch = r["key"]
            tab.append("| %s | %d | %s | %s | %s | %s | %s | %s | %s |" % (
                mode_words(mode, impl, batch), N, P if facts.has_ps(mode) else DASH,
                model_words(r), DASH if r.get("predicted") is None else "%.1f" % (1e3 * r["predicted"]),
                DASH if r["measured"] is None else "%.1f" % (1e3 * r["measured"]),
                DASH if r.get("ratio") is None else "%.2f" % r["ratio"],
                DASH if r.get("share") is None else "%.0f%%" % (100 * r["share"]), r["verdict"]))
        L += tab + [""]
        if any(CORES_NOTE_REF in r["verdict"] for r in rows):
            L += [CORES_NOTE, ""]
        if any(r["key"][4] == GLOBAL_BATCH for r in rows):
            L += ["*global batch* rows (`learner.batch: global`): the same bytes per round as per_learner (each "
                  "learner still syncs a gradient of all the parameters), so the same prediction; each learner "
                  "computes 1/L of the batch, so communication is a larger share of its update.", ""]
        scored = [r for r in rows if r.get("target")]
        met = [r for r in scored if r.get("met")]
        if scored:
            L.append("**%d of %d** cells where communication is at least half of the update are within %d%% of the "
                     "model%s." % (len(met), len(scored), 100 * TARGET,
                                   "" if len(met) == len(scored) else "; the others say why above"))
        else:
            L.append("No cell has communication at least half of its update with a node per learner and shard: "
                     "the target has nothing to judge here.")
        return L + [""]

    def decentral_modes(self):
        """The decentralized modes of the matrix's finished cells, in the cost model's order."""
        modes = {k[0] for k in self.groups}
        return [m for m in costmodel.DECENTRAL_MODES if m in modes]

    def proj_modes(self):
        """The projection's patterns: the four of costmodel.MODES, then the matrix's decentralized modes."""
        return costmodel.MODES + tuple(self.decentral_modes())

    def proj_every(self):
        """{decentralized mode: its interval between exchanges in this matrix's runs} (the model's default
        where the runs do not say)."""
        out = {}
        for m in self.decentral_modes():
            out[m] = sync_every([c for k, cl in self.groups.items() if k[0] == m for c in cl]) or costmodel.EVERY[m]
        return out

    def projection_rows(self, compute_s):
        lat_bw = [(costmodel.parse_rate(r), lat) for r in PROJ_RATES for lat in PROJ_LATENCIES]
        return [(bw, lat, costmodel.projection([self.n_params], [bw], [lat], PROJ_NODES, compute_s,
                                               segment=self.segment, modes=self.proj_modes(),
                                               every=self.proj_every())) for bw, lat in lat_bw]

    def one_learner_compute(self):
        """(The measured compute per gradient of one learner alone, the
        words for where it comes from): the median over the matrix's
        one-learner cells, else over all its cells (with more learners
        sharing the cores, an overestimate), else (None, why)."""
        one = [c for cl in self.groups.values() for c in cl if c.learners == 1]
        v = _med(one, "compute_pg") if one else None
        if v is not None:
            return v, "median over this matrix's one-learner cells"
        v = _med([c for cl in self.groups.values() for c in cl], "compute_pg")
        if v is not None:
            return v, ("median over all this matrix's cells, as it has no one-learner cells with the figure: with "
                       "several learners sharing the cores, likely more than one learner alone takes")
        return None, "not measured (no finished cell reports it), so 0: communication alone"

    def projection(self, extra_params=()):
        L = ["## Projection", ""]
        if not self.n_params:
            return L + ["No finished run reports its parameter count: nothing to project.", ""]
        comp, whence = self.one_learner_compute()
        comp = comp or 0.0
        L += ["The model (above) for N = %s nodes, one learner each (the sharded PS with one shard per node), "
              "on links of 1, 10 and 100 Gbit/s with 5 and 50 us latency, for this config's %s parameters; time "
              "per update = the measured compute per gradient of one learner (%.1f ms, %s: a constant of this run, "
              "not a projection) + the model's communication. Data: "
              "`plots/projection.csv`; plot: `projection.png`.%s" % (
                  ", ".join(map(str, PROJ_NODES)), "{:,}".format(self.n_params), 1e3 * comp, whence,
                  " The projection is per_learner's (weak scaling: each node computes a whole batch); with the "
                  "global batch (`learner.batch: global`, strong scaling) each of N nodes computes 1/N of it, so "
                  "its time per update is about compute / N + the same communication, and communication "
                  "dominates sooner." if any(k[4] == GLOBAL_BATCH for k in self.groups) else ""), ""]
        tab = ["| link | latency | N | single PS ms | sharded ms | ring ms | naive ms | updates/s: PS | sharded | "
               "ring | naive |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        csv = ["params,rate_bytes_per_s,latency_s,nodes,mode,comm_s,update_s,updates_per_s"]
        dm = self.decentral_modes()
        dtab = ["| link | latency | N | %s | updates/s per learner: %s |" % (
            " | ".join("%s ms" % m for m in dm), " | ".join(dm)), "|---|---:|---:|" + "---:|" * (2 * len(dm))]
        for bw, lat, rows in self.projection_rows(comp):
            by = {}
            for r in rows:
                by.setdefault(r[3], {})[r[4]] = r
                csv.append("%d,%.6g,%.6g,%d,%s,%.6g,%.6g,%.6g" % r)
            for n in (8, 64, 256):
                m = by[n]
                tab.append("| %s | %g us | %d | %s | %s |" % (
                    _rate_words(bw), lat * 1e6, n, " | ".join("%.2f" % (1e3 * m[k][6]) for k in costmodel.MODES),
                    " | ".join("%.0f" % m[k][7] for k in costmodel.MODES)))
                dtab.append("| %s | %g us | %d | %s | %s |" % (
                    _rate_words(bw), lat * 1e6, n, " | ".join("%.2f" % (1e3 * m[k][6]) for k in dm),
                    " | ".join("%.0f" % m[k][7] for k in dm)))
        L += tab + [""]
        if dm:
            every = self.proj_every()
            L += ["The decentralized modes of this matrix, by the same model per local step (an update there is one "
                  "learner's step, one gradient, so the N learners together take N times as many): %s; easgd with "
                  "one shard per node and as if every learner exchanged at once (it is asynchronous), local_sgd "
                  "with the ring. Also in `plots/projection.csv` and `projection.png`." % "; ".join(
                      "%s every %s" % (m, plural_grad(every[m])) for m in dm), ""]
            L += dtab + [""]
        L += ["Crossovers (communication only: compute is the same in every mode, so it moves no crossover), "
              "N = 2 .. 256:", ""]
        params = sorted({self.n_params} | {p for p in extra_params if p})
        L += ["| parameters | link | latency | ring faster than a single PS | ring faster than one PS shard per "
              "node |", "|---:|---|---:|---|---|"]
        nodes = list(range(2, 257))
        for p in params:
            for rate in PROJ_RATES:
                bw = costmodel.parse_rate(rate)
                for lat in PROJ_LATENCIES:
                    L.append("| %s | %s | %g us | %s | %s |" % (
                        "{:,}".format(p), _rate_words(bw), lat * 1e6,
                        _ranges(costmodel.ring_wins("ps", 4.0 * p, bw, lat, nodes, self.segment)),
                        _ranges(costmodel.ring_wins("ps_sharded", 4.0 * p, bw, lat, nodes, self.segment))))
        os.makedirs(os.path.join(self.out, "plots"), exist_ok=True)
        with open(os.path.join(self.out, "plots", "projection.csv"), "w") as f:
            f.write("\n".join(csv) + "\n")
        return L + [""]


def plural_grad(n):
    return "%d gradient%s" % (n, "" if n == 1 else "s")


def add_plots(mc, p):
    """Adds the model's two plots to Plotter p (tools/compare/plots.py)."""
    rows = [r for r in mc.rows() if r["measured"] is not None]
    if rows:
        def series_of(r):
            return r["key"][:1] + r["key"][2:]
        series = sorted({series_of(r) for r in rows}, key=lambda s: (s[0], s[2] or "", s[3] == GLOBAL_BATCH, s[1]))
        blocks = []
        for s in series:
            rs = sorted((r for r in rows if series_of(r) == s), key=lambda r: r["key"][1])
            name = mode_words(s[0], s[2], s[3]) + (" P=%d" % s[1] if facts.has_ps(s[0]) else "")
            lines = ["%d %.6g %s\n" % (r["key"][1], 1e3 * r["measured"], "NaN" if r.get("predicted") is None
                                       else "%.6g" % (1e3 * r["predicted"])) for r in rs]
            blocks.append((name, s, "".join(lines)))
        f = p.write_data("sync_vs_learners.dat", "", (
            "# %s: learners, measured sync ms per gradient (median), model ms\n%s\n\n" % (b[0], b[2])
            for b in blocks))
        ns = sorted({r["key"][1] for r in rows})
        gp = p.terminal(1000, 560) + p.output("sync_vs_learners.png")
        gp += ("set title 'Sync time per worker per gradient: measured (points) and the model (lines)'\n"
               "set xlabel 'learners N (one per node)'\nset ylabel 'ms per gradient'\nset xtics (%s)\n"
               "set xrange [%g:%g]\nset yrange [0:*]\nset grid\nset key outside right top Left reverse\n"
               % (", ".join(map(str, ns)), min(ns) - 0.5, max(ns) + 0.5))
        parts = []
        by_impl = {"mpi": "#9467bd", "naive": "#ff7f0e", "ring": "#2ca02c"}
        by_ps = ["#d62728", "#1f77b4", "#17becf", "#8c564b", "#e377c2", "#7f7f7f"]
        for i, (name, s, _) in enumerate(blocks):
            if s[0] in costmodel.DECENTRAL_MODES:
                col = COLORS[s[0]]
            else:
                col = by_impl.get(s[2], "#000000") if s[0] == ALLREDUCE else by_ps[min(int(math.log2(max(s[1], 1))), 5)]
            glob = s[3] == GLOBAL_BATCH  # the global batch: open points, dashed line
            parts.append("%s index %d using 1:2 with points pt %d ps 1.5 lc rgb '%s' title %s"
                         % (_q(f), i, 6 if glob else 7, col, _q(name + ": measured")))
            if s[2] != "mpi":
                parts.append("%s index %d using 1:3 with lines lw 2 lc rgb '%s'%s title %s"
                             % (_q(f), i, col, " dt 2" if glob else "", _q(name + ": model")))
        gp += "plot " + ", \\\n     ".join(parts) + "\n"
        p.scripts.append(("sync_vs_learners.png", gp, "Sync time per worker per gradient against the learner count: "
                          "measured and the model"))
    if mc.n_params:
        comp = mc.one_learner_compute()[0] or 0.0
        data = []
        modes = mc.proj_modes()
        for bw, lat, prow in mc.projection_rows(comp):
            for mode in modes:
                data.append("# %s %g us %s\n%s\n\n" % (_rate_words(bw), lat * 1e6, mode, "".join(
                    "%d %.6g\n" % (r[3], r[7]) for r in prow if r[4] == mode)))
        f = p.write_data("projection.dat", "", data)
        gp = p.terminal(1500, 520) + p.output("projection.png")
        gp += ("set multiplot layout 1,%d title 'Projected updates per second, %s parameters (solid 5 us, dashed "
               "50 us)'\n" % (len(PROJ_RATES), "{:,}".format(mc.n_params)))
        colors = dict({"ps": "#1f77b4", "ps_sharded": "#2ca02c", "ring": "#d62728", "naive": "#ff7f0e"},
                      **{m: COLORS[m] for m in costmodel.DECENTRAL_MODES})
        idx = 0
        for rate in PROJ_RATES:
            bw = costmodel.parse_rate(rate)
            gp += ("set title '%s'\nset logscale xy\nset xlabel 'nodes N'\nset ylabel 'updates/s'\nset grid\n"
                   "set xtics (2, 8, 32, 128, 256)\nset xrange [2:256]\nset key bottom left\nunset arrow\n"
                   "unset label\n" % _rate_words(bw))
            # the crossover, at 5 us: the last N at which the ring beats one PS shard per node
            won = costmodel.ring_wins("ps_sharded", 4.0 * mc.n_params, bw, PROJ_LATENCIES[0], list(range(2, 257)))
            if won and won[-1] < 256:
                gp += ("set arrow from %d, graph 0 to %d, graph 1 nohead dt 3 lc rgb '#555555'\n"
                       "set label 'ring = sharded PS (5 us): N = %d' at %d, graph 0.95 right offset -0.5,0\n"
                       % (won[-1], won[-1], won[-1], won[-1]))
            parts = []
            for j, lat in enumerate(PROJ_LATENCIES):
                for mode in modes:
                    parts.append("%s index %d using 1:2 with lines lw 2 lc rgb '%s'%s title %s" % (
                        _q(f), idx, colors[mode], " dt 2" if j else "", _q(mode) if j == 0 else "''"))
                    idx += 1
            gp += "plot " + ", \\\n     ".join(parts) + "\n"
        gp += "unset multiplot\n"
        p.scripts.append(("projection.png", gp, "Projection: updates per second against nodes, per link rate"))


def _q(s):
    return "'" + s.replace("'", "''") + "'"


def _rate_words(bw):
    g = bw * 8 / 1e9
    return "%g Gbit/s" % g if g >= 1 else "%g Mbit/s" % (g * 1e3)


def _ranges(ns):
    """[2, 3, 4, 9] -> "N = 2-4, 9"; [] -> "never"."""
    if not ns:
        return "never"
    parts, start, prev = [], ns[0], ns[0]
    for n in ns[1:] + [None]:
        if n is not None and n == prev + 1:
            prev = n
            continue
        parts.append(str(start) if start == prev else "%d-%d" % (start, prev))
        if n is not None:
            start = prev = n
    return "N = " + ", ".join(parts)
