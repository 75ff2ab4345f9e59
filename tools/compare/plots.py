# SPDX-License-Identifier: MIT
"""The plots beside report.md: data files and gnuplot scripts in DIR/plots/,
PNGs in DIR."""
import math
import os
import re
import shutil
import subprocess

from . import facts
from .facts import ALLREDUCE
from .dims import key_order, plural, series_order
from .lessons import shard_in_per_round
from .runs import sum_hists
from .stats import median, quantile

COLORS = {"ps_sync": "#1f77b4", "ps_async": "#ff7f0e", "ps_bounded": "#2ca02c", "allreduce": "#d62728",
          "gossip": "#9467bd", "easgd": "#8c564b", "local_sgd": "#17becf", "local": "#7f7f7f"}
ROLE_COLORS = ["#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22"]
JOIN = ", \\\n     "  # between the parts of a gnuplot plot command


def band(runs, axis, xmax, points=200):
    """Median and interquartile range of evaluation return on a grid of the
    axis (0: wall seconds, 1: env steps). Each run's value at x is its latest
    evaluation at or before x, carried forward after it ended; a point is
    drawn only where at least half of the group's runs have evaluated."""
    runs = [r for r in runs if r]
    if not runs:
        return []
    xmin = min(r[0][axis] for r in runs)
    if xmax <= xmin:
        return []
    out = []
    need = (len(runs) + 1) // 2
    for k in range(points + 1):
        x = xmin + (xmax - xmin) * k / points
        vals = []
        for r in runs:
            v = None
            for row in r:
                if row[axis] <= x + 1e-12:
                    v = row[2]
                else:
                    break
            if v is not None:
                vals.append(v)
        if len(vals) >= need and vals:
            out.append((x, median(vals), quantile(vals, 0.25), quantile(vals, 0.75), len(vals)))
    return out


def gnuplot_terminal():
    try:
        p = subprocess.run(["gnuplot", "-e", "set terminal"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if re.search(r"^\s*pngcairo\s", p.stdout, re.M):
        return "pngcairo"
    if re.search(r"^\s*png\s", p.stdout, re.M):
        return "png"
    return None


def gp_quote(s):
    return "'" + s.replace("'", "''") + "'"


class Plotter:
    """The plots of one report: each method adds (file, gnuplot script,
    caption) to self.scripts for the groups it has data for. A series is a
    mode, or (with the report's Dims) a (mode, P, algorithm, batch rule):
    its colour is its mode's, the second and later series of a mode
    dashed."""

    def __init__(self, out, cells, term, dims):
        self.out = out
        self.term = term
        self.dims = dims
        self.data = os.path.join(out, "plots")
        self.groups = dims.groups(cells, only_ok=True)
        self.keys = sorted(self.groups, key=key_order)
        self.learner_counts = sorted({k[1] for k in self.keys})
        self.series = sorted({k[:1] + k[2:] for k in self.keys}, key=series_order)
        self.scripts = []

    @staticmethod
    def key(s, L):
        """The group key of series s at L learners."""
        return (s[0], L) + tuple(s[1:])

    def variant(self, s):
        """0 for the first series of its mode, 1 for the second, ..."""
        same = [x for x in self.series if x[0] == s[0]]
        return same.index(s) if s in same else 0

    def style(self, s):
        """Colour and dash of series s (no dash for a mode's first series)."""
        i = self.variant(s)
        return "lc rgb '%s'%s" % (COLORS.get(s[0], "#000000"), " dt %d" % (i + 1) if i else "")

    def terminal(self, w, h):
        font = "set termoption font 'Sans,10'\n" if self.term == "pngcairo" else ""
        return "set terminal %s size %d,%d noenhanced\n%s" % (self.term, w, h, font)

    def output(self, fname):
        return "set output %s\n" % gp_quote(os.path.join(self.out, fname))

    def write_data(self, name, header, rows):
        path = os.path.join(self.data, name)
        with open(path, "w") as f:
            f.write(header)
            for row in rows:
                f.write(row)
        return path

    # -- evaluation return against wall time and env steps: a panel per learner count

    def eval_panel(self, axis, L):
        """[(mode, data file, runs)] of one learner count's panel."""
        lines = []
        # the panel's axis ends with its longest run; the others carry their last value to there
        ends = [c.evals[-1][axis] for s in self.series for c in self.groups.get(self.key(s, L), []) if c.evals]
        for s in self.series:
            if self.key(s, L) not in self.groups or not ends:
                continue
            b = band([c.evals for c in self.groups[self.key(s, L)]], axis, max(ends))
            if not b:
                continue
            name = "eval_%s_%s_L%d.dat" % ("time" if axis == 0 else "steps", self.dims.series_slug(s), L)
            dfile = self.write_data(name,
                                    "# x median q25 q75 runs_counted\n",
                                    ("%.6g %.6g %.6g %.6g %d\n" % row for row in b))
            lines.append((s, dfile, len(self.groups[self.key(s, L)])))
        return lines

    def eval_plot(self, axis, fname, xlabel):
        panels = [(L, lines) for L in self.learner_counts for lines in [self.eval_panel(axis, L)] if lines]
        if not panels:
            return
        gp = self.terminal(560 * len(panels), 480) + self.output(fname)
        gp += "set multiplot layout 1,%d title %s\n" % (
            len(panels), gp_quote("evaluation return (median, band: interquartile range) against " + xlabel))
        gp += ("set xlabel %s\nset ylabel 'evaluation mean return'\nset key bottom right opaque box\nset grid\n"
               % gp_quote(xlabel))
        for L, lines in panels:
            gp += "set title '%s'\n" % plural(L, "learner")
            parts = []
            for s, dfile, n in lines:
                parts.append("%s using 1:3:4 with filledcurves fc rgb '%s' fs transparent solid 0.2 notitle"
                             % (gp_quote(dfile), COLORS.get(s[0], "#000000")))
                parts.append("%s using 1:2 with lines lw 2 %s title '%s (%s)'"
                             % (gp_quote(dfile), self.style(s), self.dims.series_label(s), plural(n, "run")))
            gp += "plot " + JOIN.join(parts) + "\n"
        gp += "unset multiplot\n"
        self.scripts.append((fname, gp, "Evaluation return against %s" % ("wall time" if axis == 0 else "env steps")))

    # -- throughput against learner count, a line per mode: median, bars: IQR

    def throughput_rows(self):
        for s in self.series:
            yield "# mode %s: learners updates/s (median q25 q75) env_steps/s (median q25 q75)\n" % (
                self.dims.series_label(s))
            for L in self.learner_counts:
                if self.key(s, L) not in self.groups:
                    continue
                figs = [c.figures for c in self.groups[self.key(s, L)]]
                u = [f["updates_per_second"] for f in figs if f["updates_per_second"] is not None]
                e = [f["env_steps_per_second"] for f in figs if f["env_steps_per_second"] is not None]
                if not u or not e:
                    continue
                yield "%d %.6g %.6g %.6g %.6g %.6g %.6g\n" % (L, median(u), quantile(u, .25), quantile(u, .75),
                                                              median(e), quantile(e, .25), quantile(e, .75))
            yield "\n\n"

    def throughput_plot(self):
        tfile = self.write_data("throughput.dat", "", self.throughput_rows())
        if not self.keys:
            return
        lc = self.learner_counts
        gp = self.terminal(1100, 420) + self.output("throughput.png")
        gp += "set multiplot layout 1,2 title 'throughput (median over seeds, bars: interquartile range)'\n"
        gp += ("set xlabel 'learners'\nset xtics (%s)\nset xrange [%g:%g]\nset grid\nset key top left\n"
               "set yrange [0:*]\n" % (", ".join(str(L) for L in lc), min(lc) - 0.5, max(lc) + 0.5))
        for col, label in ((2, "updates/s"), (5, "env steps/s")):
            gp += "set title '%s'\nset ylabel '%s'\n" % (label, label)
            parts = ["%s index %d using 1:%d:%d:%d with yerrorlines lw 2 pt 7 %s title '%s'"
                     % (gp_quote(tfile), i, col, col + 1, col + 2, self.style(s), self.dims.series_label(s))
                     for i, s in enumerate(self.series)]
            gp += "plot " + JOIN.join(parts) + "\n"
        gp += "unset multiplot\n"
        self.scripts.append(("throughput.png", gp,
                             "Throughput: updates/s and env steps/s per mode and learner count"))

    # -- bytes sent per update by role, a stacked bar per (mode, learners)

    def bytes_plot(self):
        roles = facts.roles()
        rows = []
        for k in self.keys:
            vals = []
            for role in roles:
                v = [c.figures["bpu_role"][role] for c in self.groups[k] if c.figures["bpu_role"][role] is not None]
                vals.append(median(v) if v else 0)
            rows.append(("%s L%d" % (self.dims.series_label(k[:1] + k[2:]), k[1]), vals))
        if not rows or not any(sum(v) > 0 for _, v in rows):
            return
        bfile = self.write_data("bytes_per_update.dat", "cell " + " ".join(roles) + "\n",
                                ('"%s" %s\n' % (label, " ".join("%.6g" % v for v in vals)) for label, vals in rows))
        gp = self.terminal(max(640, 90 * len(rows) + 200), 440) + self.output("bytes_per_update.png")
        gp += ("set title 'bytes sent per update, by role (median over seeds)'\nset ylabel 'bytes / update'\n"
               "set style data histograms\nset style histogram rowstacked\nset style fill solid 0.8 border -1\n"
               "set boxwidth 0.7\nset xtics rotate by -30\nset key outside right top\nset grid ytics\n"
               "set yrange [0:*]\n")
        parts = ["%s using %d%s title columnheader(%d) lc rgb '%s'"
                 % (gp_quote(bfile), i + 2, ":xtic(1)" if i == 0 else "", i + 2, ROLE_COLORS[i % len(ROLE_COLORS)])
                 for i in range(len(roles))]
        gp += "plot " + JOIN.join(parts) + "\n"
        self.scripts.append(("bytes_per_update.png", gp, "Bytes sent per update, by role"))

    # -- staleness histogram of the PS modes, a panel per learner count

    def staleness_panel(self, L):
        """[(mode, data file, histogram)] of one learner count's panel."""
        lines = []
        last = facts.staleness_bins() - 1
        for s in self.series:
            if s[0] not in facts.gradient_ps_modes() or self.key(s, L) not in self.groups:
                continue
            h = sum_hists(c.figures["staleness_hist"] for c in self.groups[self.key(s, L)])
            if not h or sum(h) == 0:
                continue
            # log scale: an empty bin is no point
            sfile = self.write_data("staleness_%s_L%d.dat" % (self.dims.series_slug(s), L),
                                    "# staleness share_of_gradients_percent count (last bin: %d or more)\n" % last,
                                    ("%d %s %d\n" % (i, "%.6g" % (100.0 * v / sum(h)) if v else "NaN", v)
                                     for i, v in enumerate(h)))
            lines.append((s, sfile, h))
        return lines

    def staleness_plot(self):
        panels = [(L, lines) for L in self.learner_counts for lines in [self.staleness_panel(L)] if lines]
        if not panels:
            return
        last = facts.staleness_bins() - 1
        smallest = min(100.0 * v / sum(h) for _, lines in panels for _, _, h in lines for v in h if v)
        ymin = min(0.1, 10 ** math.floor(math.log10(smallest)))
        gp = self.terminal(520 * len(panels), 420) + self.output("staleness.png")
        gp += ("set multiplot layout 1,%d title 'staleness of the gradients the parameter servers received "
               "(all seeds; log scale, empty bins not drawn)'\n" % len(panels))
        gp += ("set xlabel 'staleness (versions; last bin: %d or more)'\nset ylabel '%% of gradients'\n"
               "set xrange [-0.5:%g]\nset xtics 0,1,%d\nset logscale y\nset grid\nset key top right\n"
               % (last, last + 0.5, last))
        gp += "set yrange [%g:100]\n" % ymin
        for L, lines in panels:
            gp += "set title '%s'\n" % plural(L, "learner")
            parts = ["%s using 1:2 with linespoints lw 2 pt 7 %s title '%s'"
                     % (gp_quote(f), self.style(s), self.dims.series_label(s)) for s, f, _ in lines]
            gp += "plot " + JOIN.join(parts) + "\n"
        gp += "unset multiplot\n"
        self.scripts.append(("staleness.png", gp, "Staleness histogram of the parameter-server modes"))

    # -- bytes sent per worker per gradient against the learner count: measured points, the model as lines

    def worker_rows(self, s, key, mkey):
        """Rows (learners, median, q25, q75 over the runs, the model's median or NaN) of figure key of series s."""
        rows = []
        for L in self.learner_counts:
            cells = [c for c in self.groups.get(self.key(s, L), []) if c.impl != "mpi"]
            v = [c.figures[key] for c in cells if c.figures.get(key) is not None]
            m = [c.figures[mkey] for c in cells if c.figures.get(mkey) is not None]
            if v:
                model = "%.6g" % median(m) if m else "NaN"
                rows.append("%d %.6g %.6g %.6g %s\n" % (L, median(v), quantile(v, .25), quantile(v, .75), model))
        return rows

    def worker_blocks(self):
        """[(title, series, point type, what, rows)]: per series the mean
        over its learners, and for the naive allreduce also learner 0, its
        driver; allreduce with mpi left out (its traffic is not visible)."""
        blocks = []
        for s in self.series:
            impls = sorted({c.impl for k, cs in self.groups.items() if k[:1] + k[2:] == s for c in cs} - {None})
            title = self.dims.series_label(s)
            if facts.has_impl(s[0]) and s[2] is None and len(impls) == 1:
                title = self.dims.series_label((s[0], s[1], impls[0], s[3]))
            pt = (7, 5, 9, 11, 13)[self.variant(s) % 5]
            blocks.append((title, s, pt, "the mean over learners",
                           self.worker_rows(s, "sync_sent_pg", "model_sent_pg")))
            if "naive" in impls:
                blocks.append((title + ", driver (learner 0)", s, 6, "learner 0",
                               self.worker_rows(s, "sync_sent_pg_driver", "model_sent_pg_driver")))
        return [b for b in blocks if b[4]]

    def shard_blocks(self):
        """[(title, series, rows)]: per PS-mode series (gradients to the
        parameter servers), the bytes into its busiest shard per round of N
        gradients (lessons.shard_in_per_round) against N, with the model
        N*K/P."""
        blocks = []
        for s in self.series:
            if s[0] not in facts.gradient_ps_modes():
                continue
            rows = []
            for L in self.learner_counts:
                cells = [c for c in self.groups.get(self.key(s, L), []) if c.ps and c.figures.get("n_params")]
                v = [max(x) for x in (shard_in_per_round(c) for c in cells) if x]
                m = [L * 4.0 * c.figures["n_params"] / c.ps for c in cells]
                if v:
                    rows.append("%d %.6g %.6g %.6g %.6g\n" % (L, median(v), quantile(v, .25), quantile(v, .75),
                                                              median(m)))
            if rows:
                blocks.append((self.dims.series_label(s), s, rows))
        return blocks

    @staticmethod
    def same_groups(rows_of):
        """[[index]]: the series whose points (learners, median) are the same
        within 1% at every learner count, drawn once and named together."""
        def pts(rows):
            return [tuple(float(x) for x in r.split()[:2]) for r in rows]
        out = []
        for i, rows in enumerate(rows_of):
            for g in out:
                a, b = pts(rows_of[g[0]]), pts(rows)
                if len(a) == len(b) and all(x[0] == y[0] and abs(x[1] - y[1]) <= 0.01 * max(abs(x[1]), abs(y[1]))
                                            for x, y in zip(a, b)):
                    g.append(i)
                    break
            else:
                out.append([i])
        return out

    def bytes_per_worker_plot(self):
        blocks = self.worker_blocks()
        shards = self.shard_blocks()
        if not blocks and not shards:
            return
        wfile = self.write_data("bytes_per_worker.dat", "", (
            "# %s: learners bytes_sent_per_gradient (median q25 q75 over the runs of %s) model (median)\n%s\n\n"
            % (title, what, "".join(rows)) for title, _, _, what, rows in blocks))
        sfile = self.write_data("bytes_into_ps.dat", "", (
            "# %s: learners bytes into the busiest PS shard per round of N gradients (median q25 q75 over the runs) "
            "model N*K/P (median)\n%s\n\n" % (title, "".join(rows)) for title, _, rows in shards))
        n = [c.figures["n_params"] for cs in self.groups.values() for c in cs if c.figures.get("n_params")]
        K = 4.0 * median(n) if n else None
        lc = self.learner_counts
        # the model's curves run on to 8 learners at least, so the ring's approach to 2K shows
        curves = bool(shards) or any(not facts.is_decentralized(b[1][0]) for b in blocks)
        xmax = self.xmax = max(lc + [8]) if curves else max(lc)
        measured = ([float(r.split()[1]) for b in blocks for r in b[4]]
                    + [float(r.split()[1]) for b in shards for r in b[2]])
        top = max(measured + ([2 * K, (xmax - 1) * K if self.has_ar(blocks, "naive") else 0] if K else [0])
                  + ([xmax * K] if K and shards else []))
        unit, scale = ("MB", 1e6) if top >= 1e6 else ("kB", 1e3)
        panels = int(bool(blocks)) + int(bool(shards))
        # the legend below the panels: a line per entry, two columns
        entries = len(blocks) + 5 + len(shards) + 2
        gp = self.terminal(820 * panels, 520 + 11 * entries) + self.output("bytes_per_worker.png")
        gp += "set multiplot layout 1,%d title %s\n" % (panels, gp_quote(
            "Bytes to sync: measured (points, median; bars: IQR) and the model (lines); K = %s bytes"
            % ("{:,}".format(int(K)) if K else "?")))
        xt = sorted(set(lc) | {x for x in (1, 2, 4, 8, 16, 32, 64) if x <= xmax})
        gp += ("set xlabel 'learners N'\nset xtics (%s)\nset xrange [0.5:%g]\nset yrange [0:*]\nset grid\n"
               "set key below Left reverse maxcols 2 height 1.5\nset samples 200\nset format y '%%g'\n"
               "set offsets 0, 0, graph 0.08, 0\n"
               % (", ".join(map(str, xt)), xmax + 0.5))
        if blocks:
            gp += self.worker_panel(wfile, blocks, K, unit, scale)
        if shards:
            gp += self.shard_panel(sfile, shards, unit, scale)
        gp += "unset multiplot\n"
        self.scripts.append(("bytes_per_worker.png", gp, "Bytes per worker per gradient, and into one parameter "
                             "server per round, against the learner count: measured and the model"))

    def dodge(self, j, n):
        """The sideways nudge of the j-th of n series of points (learners), so
        that none hides another at the same learner count."""
        return (j - (n - 1) / 2.0) * 0.012 * self.xmax

    def has_ar(self, blocks, impl):
        """Some allreduce cell behind blocks ran algorithm impl."""
        return any(c.impl == impl for b in blocks if b[1][0] == ALLREDUCE
                   for k, cs in self.groups.items() if k[:1] + k[2:] == b[1] for c in cs)

    def worker_panel(self, wfile, blocks, K, unit, scale):
        """The left panel: what one learner sends per gradient."""
        gp = ("set title 'sent by one learner per gradient'\nset ylabel '%s sent per worker per gradient'\n"
              % unit)
        parts = []
        groups = self.same_groups([b[4] for b in blocks])
        for j, g in enumerate(groups):
            title, s, pt, _, _ = blocks[g[0]]
            dx = self.dodge(j, len(groups))
            name = " = ".join(blocks[i][0] for i in g)
            # a point type per series drawn (the driver's open circle kept), so series that nearly meet stay apart
            pt = pt if pt == 6 else (7, 5, 9, 11, 13, 15)[j % 6]
            parts.append("%s index %d using ($1%+g):($2/%g):($3/%g):($4/%g) with yerrorbars pt %d ps 2 lw 2 "
                         "lc rgb '%s' title %s" % (gp_quote(wfile), g[0], dx, scale, scale, scale, pt,
                                                   COLORS.get(s[0], "#000000"), gp_quote(name)))
            if facts.is_decentralized(s[0]):  # its model depends on the interval between exchanges
                parts.append("%s index %d using 1:($5/%g) with linespoints lw 1 pt 2 ps 1 %s title %s"
                             % (gp_quote(wfile), g[0], scale, self.style(s), gp_quote("model: " + name)))
        if K:
            k = K / scale
            modes = {b[1][0] for b in blocks}
            if modes & set(facts.gradient_ps_modes()) or self.has_ar(blocks, "naive"):
                parts.append("%g with lines dt 2 lw 1 lc rgb '#555555' title 'model: K (a PS learner; a naive "
                             "non-driver)'" % k)
            if self.has_ar(blocks, "ring"):
                parts.append("(x >= 1 ? 2*(x-1)/x*%g : 1/0) with lines dt 2 lw 2 lc rgb '%s' title "
                             "'model: ring 2(N-1)/N K'" % (k, COLORS["allreduce"]))
                parts.append("%g with lines dt 3 lw 1 lc rgb '%s' title '2K, the ring''s limit'"
                             % (2 * k, COLORS["allreduce"]))
            if self.has_ar(blocks, "naive"):
                parts.append("(x >= 1 ? (x-1)*%g : 1/0) with lines dt 4 lw 2 lc rgb '#ff7f0e' title "
                             "'model: naive driver (N-1) K'" % k)
        return gp + "plot " + JOIN.join(parts) + "\n"

    def shard_panel(self, sfile, shards, unit, scale):
        """The right panel: what one parameter-server shard takes in per round."""
        gp = ("set title 'into one parameter server per round of N gradients'\n"
              "set ylabel '%s into the busiest PS shard per round'\n" % unit)
        parts = []
        groups = self.same_groups([b[2] for b in shards])
        for j, g in enumerate(groups):
            title, s, _ = shards[g[0]]
            parts.append("%s index %d using ($1%+g):($2/%g):($3/%g):($4/%g) with yerrorbars pt %d ps 2 lw 2 "
                         "lc rgb '%s' title %s" % (gp_quote(sfile), g[0], self.dodge(j, len(groups)), scale, scale,
                                                   scale, (7, 5, 9, 11, 13)[j % 5], COLORS.get(s[0], "#000000"),
                                                   gp_quote(" = ".join(shards[i][0] for i in g))))
        n = [c.figures["n_params"] for cs in self.groups.values() for c in cs if c.figures.get("n_params")]
        k = 4.0 * median(n) / scale
        for P in sorted({c.ps for cs in self.groups.values() for c in cs if c.mode in facts.gradient_ps_modes()
                         and c.ps}):
            parts.append("(x >= 1 ? x*%g/%d : 1/0) with lines dt %d lw 2 lc rgb '#555555' title %s"
                         % (k, P, 2 + min(P, 4), gp_quote("model: N K" if P == 1 else "model: N K / %d (P = %d)"
                                                          % (P, P))))
        return gp + "plot " + JOIN.join(parts) + "\n"

    # -- consensus distance of the decentralized modes against env steps: a panel per learner count

    def consensus_panel(self, L):
        """[(series, data file, runs)] of one learner count's panel: a
        block per run of each decentralized series (metrics.csv's rows
        with a consensus distance)."""
        lines = []
        for s in self.series:
            cells = [c for c in self.groups.get(self.key(s, L), []) if facts.is_decentralized(s[0]) and c.consensus]
            if not cells:
                continue
            dfile = self.write_data("consensus_%s_L%d.dat" % (self.dims.series_slug(s), L), "", (
                "# run %s: env_steps consensus_distance\n%s\n\n" % (
                    c.name, "".join("%.6g %.6g\n" % row for row in c.consensus)) for c in cells))
            lines.append((s, dfile, len(cells)))
        return lines

    def consensus_plot(self):
        panels = [(L, lines) for L in self.learner_counts for lines in [self.consensus_panel(L)] if lines]
        if not panels:
            return
        values = [v for k in self.keys if facts.is_decentralized(k[0]) for c in self.groups[k] for _, v in c.consensus]
        gp = self.terminal(560 * len(panels), 480) + self.output("consensus.png")
        gp += "set multiplot layout 1,%d title %s\n" % (len(panels), gp_quote(
            "Consensus distance per worker: a learner's L2 distance from the learners' mean (easgd: from the "
            "center), mean over learners; a line per run"))
        gp += ("set xlabel 'env steps'\nset ylabel 'consensus distance'\nset key top right opaque box\nset grid\n%s"
               % ("set logscale y\n" if values and min(values) > 0 else "set yrange [0:*]\n"))
        for L, lines in panels:
            gp += "set title '%s'\n" % plural(L, "learner")
            parts = []
            for s, dfile, n in lines:
                for i in range(n):
                    parts.append("%s index %d using 1:2 with linespoints lw 2 pt 7 ps 0.8 %s %s" % (
                        gp_quote(dfile), i, self.style(s), "title '%s (%s)'" % (self.dims.series_label(s), plural(
                            n, "run")) if i == 0 else "notitle"))
            gp += "plot " + JOIN.join(parts) + "\n"
        gp += "unset multiplot\n"
        self.scripts.append(("consensus.png", gp, "Consensus distance per worker against env steps"))

    def run(self, notes):
        """Runs gnuplot on every script; returns [(file, caption)] of the
        PNGs it made, and adds a note for each it failed on."""
        made = []
        for fname, gp, caption in self.scripts:
            gpfile = os.path.join(self.data, fname.replace(".png", ".gp"))
            with open(gpfile, "w") as f:
                f.write(gp)
            p = subprocess.run(["gnuplot", gpfile], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            png = os.path.join(self.out, fname)
            if p.returncode != 0 or not os.path.isfile(png) or os.path.getsize(png) == 0:
                notes.append("gnuplot failed on %s: %s" % (fname, p.stdout.strip().splitlines()[-1:] or "?"))
                continue
            made.append((fname, caption))
        return made


def make_plots(out, cells, notes, dims, more=None):
    """Writes the data files (DIR/plots/) and PNGs (DIR/*.png); returns
    [(file, caption)] of the plots made. more(plotter): adds scripts of its
    own (the cost model's)."""
    if not any(c.ok for c in cells):
        notes.append("No finished runs: no plots.")
        return []
    if not shutil.which("gnuplot"):
        notes.append("gnuplot is not installed: no plots.")
        return []
    term = gnuplot_terminal()
    if not term:
        notes.append("gnuplot has neither the pngcairo nor the png terminal: no plots.")
        return []
    p = Plotter(out, cells, term, dims)
    os.makedirs(p.data, exist_ok=True)
    p.eval_plot(0, "eval_vs_time.png", "wall time (s)")
    p.eval_plot(1, "eval_vs_steps.png", "env steps")
    p.throughput_plot()
    p.bytes_plot()
    p.staleness_plot()
    p.bytes_per_worker_plot()
    p.consensus_plot()
    if more:
        more(p)
    return p.run(notes)
