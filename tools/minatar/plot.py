# SPDX-License-Identifier: MIT
"""The plots of scripts/minatar-results (curves --plot, evals --plot): a
data file OUT.dat and a gnuplot script OUT.gp beside OUT.png, drawn by
gnuplot as tools/compare/plots.py draws the comparison's plots."""
import os
import shutil
import subprocess

from tools.compare.plots import gnuplot_terminal, gp_quote

# a colour per group, in the order the groups were given (tools/compare/plots.py's palette)
PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#17becf", "#7f7f7f"]
JOIN = ", \\\n     "


class PlotFail(Exception):
    pass


def paths(out):
    """(data file, gnuplot script) beside the PNG OUT."""
    if not out.endswith(".png"):
        raise PlotFail("--plot %s: name a .png file (its data and gnuplot script go beside it as .dat, .gp)" % out)
    return out[:-4] + ".dat", out[:-4] + ".gp"


def terminal():
    """gnuplot's PNG terminal, or PlotFail with the comparison report's words."""
    if not shutil.which("gnuplot"):
        raise PlotFail("gnuplot is not installed: no plots (scripts/install-deps.sh installs gnuplot-nox)")
    term = gnuplot_terminal()
    if not term:
        raise PlotFail("gnuplot has neither the pngcairo nor the png terminal: no plots")
    return term


def header(term, out, title, xlabel, ylabel):
    font = "set termoption font 'Sans,10'\n" if term == "pngcairo" else ""
    return ("set terminal %s size 800,500 noenhanced\n%sset output %s\nset title %s\n"
            "set xlabel %s\nset ylabel %s\nset grid\nset key bottom right Left reverse opaque box\n"
            % (term, font, gp_quote(out), gp_quote(title), gp_quote(xlabel), gp_quote(ylabel)))


def draw(out, gp_text):
    """Writes OUT.gp and runs gnuplot on it."""
    _, gp = paths(out)
    with open(gp, "w") as f:
        f.write(gp_text)
    if os.path.exists(out):
        os.unlink(out)
    p = subprocess.run(["gnuplot", gp], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode != 0 or not os.path.isfile(out) or os.path.getsize(out) == 0:
        last = p.stdout.strip().splitlines()[-1:] or ["?"]
        raise PlotFail("gnuplot failed on %s: %s" % (gp, last[0]))


def yrange(values):
    """set yrange from 0 (or below) to a little above the highest value:
    gnuplot's autoscale does not see a filledcurves band's upper edge."""
    lo, hi = min([0.0] + values), max([1.0] + values)
    return "set yrange [%g:%g]\n" % (lo, hi + 0.06 * (hi - lo))


def seconds_unit(xmax):
    """(label, divisor) of a wall-time axis that ends at xmax seconds."""
    if xmax >= 4 * 3600:
        return "wall time (hours)", 3600.0
    if xmax >= 2000:
        return "wall time (minutes)", 60.0
    return "wall time (s)", 1.0


def curves_plot(out, res, groups, title):
    """res: curves()'s result; groups: [(key, legend)]. A block per group in
    OUT.dat (window_start window_end mean ci_low ci_high runs), a line at
    each window's middle and the 95% band around it."""
    term = terminal()
    dat, _ = paths(out)
    w = res["window"]
    with open(dat, "w") as f:
        for i, (key, legend) in enumerate(groups):
            f.write("# group %d: %s: window_start window_end mean ci95_low ci95_high runs\n" % (i, legend))
            for row in res["windows"]:
                c = row.get(key)
                if c:
                    f.write("%d %d %.6g %.6g %.6g %d\n" % (row["window_end"] - w, row["window_end"], c["mean"],
                                                           c["ci95"][0], c["ci95"][1], c["n"]))
            f.write("\n\n")
    gp = header(term, out, title or "mean training return per %s-frame window (band: 95%% bootstrap interval "
                "over runs)" % "{:,}".format(w), "frames (millions; a point at the middle of each window)",
                "mean return of training episodes")
    gp += "set xrange [0:%g]\n" % (res["windows"][-1]["window_end"] / 1e6)
    gp += yrange([row[k]["ci95"][1] for row in res["windows"] for k, _ in groups if row.get(k)])
    parts = []
    for i, (key, legend) in enumerate(groups):
        c = PALETTE[i % len(PALETTE)]
        x = "(($1+$2)/2e6)"
        parts.append("%s index %d using %s:4:5 with filledcurves fc rgb '%s' fs transparent solid 0.2 notitle"
                     % (gp_quote(dat), i, x, c))
        parts.append("%s index %d using %s:3 with linespoints lw 2 pt 7 ps 0.5 lc rgb '%s' title %s"
                     % (gp_quote(dat), i, x, c, gp_quote(legend)))
    draw(out, gp + "plot " + JOIN.join(parts) + "\n")


def evals_plot(out, bands, axis, threshold, title):
    """bands: [(legend, band rows (x median q25 q75 runs))] from
    tools/compare/plots.band; axis 0: wall seconds, 1: env steps."""
    term = terminal()
    dat, _ = paths(out)
    with open(dat, "w") as f:
        for i, (legend, rows) in enumerate(bands):
            f.write("# group %d: %s: %s median q25 q75 runs_counted\n"
                    % (i, legend, "wall_seconds" if axis == 0 else "env_steps"))
            f.writelines("%.6g %.6g %.6g %.6g %d\n" % r for r in rows)
            f.write("\n\n")
    xmax = max(r[0] for _, rows in bands for r in rows)
    xlabel, div = seconds_unit(xmax) if axis == 0 else ("frames (millions)", 1e6)
    gp = header(term, out, title or "greedy evaluation (median over runs; band: interquartile range)",
                xlabel, "evaluation mean return")
    gp += "set xrange [0:%g]\n" % (xmax / div)
    gp += yrange([r[3] for _, rows in bands for r in rows] + ([threshold] if threshold is not None else []))
    parts = []
    for i, (legend, rows) in enumerate(bands):
        c = PALETTE[i % len(PALETTE)]
        parts.append("%s index %d using ($1/%g):3:4 with filledcurves fc rgb '%s' fs transparent solid 0.2 "
                     "notitle" % (gp_quote(dat), i, div, c))
        parts.append("%s index %d using ($1/%g):2 with lines lw 2 lc rgb '%s' title %s"
                     % (gp_quote(dat), i, div, c, gp_quote(legend)))
    if threshold is not None:
        parts.append("%.17g with lines dt 2 lw 1.5 lc rgb '#444444' title %s"
                     % (threshold, gp_quote("threshold %g" % threshold)))
    draw(out, gp + "plot " + JOIN.join(parts) + "\n")
