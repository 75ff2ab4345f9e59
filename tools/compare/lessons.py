# SPDX-License-Identifier: MIT
"""The report's "What this run shows": five lessons of the communication
model (docs/ARCHITECTURE.md "Communication per worker"), each checked
against the run's own measurements and reported as supported (every group
of cells that bears on it within TOLERANCE of the model) or not supported
here, with the reason (the matrix lacks the cells, a measurement is
missing, or a group is outside the tolerance).

With K = 4n the parameter bytes, N learners and P parameter servers:
  1. a single PS takes N*K per round of N gradients: it grows with N;
  2. P shards divide that by P: N*K/P into each;
  3. the ring's per-worker bytes, 2(N-1)/N*K, approach 2K;
  4. the naive allreduce's driver sends (N-1)*K, growing with N;
  5. gossip moves 2K per exchange (K each way) whatever N.
Also here: the cells whose runs made no updates (note_no_updates), the
line the report opens with when there are any."""
import os

from . import facts
from .facts import ALLREDUCE, GOSSIP
from .stats import median, num

TOLERANCE = 0.10  # |measured / model - 1| for "supported"
# a lesson about how bytes move with N needs cells at two learner counts or more
ABOUT_N = {1, 3, 4, 5}


def _updated(c):
    """A finished cell whose run made updates (else nothing per gradient)."""
    f = c.figures or {}
    return c.ok and bool(f.get("updates")) and bool(f.get("gradients"))


def k_bytes(c):
    n = (c.figures or {}).get("n_params")
    return 4.0 * n if n else None


def shard_in_per_round(c):
    """[bytes into each PS shard per round of N gradients (one per
    learner)]: per_worker.ps_shards[].bytes_in_per_update times the shard's
    updates (roles.ps[].updates, else the run's) over the run's gradients,
    times N; None where the run does not say."""
    s = c.summary or {}
    pw = s.get("per_worker") if isinstance(s.get("per_worker"), dict) else {}
    shards = pw.get("ps_shards") if isinstance(pw.get("ps_shards"), list) else []
    ps = {r.get("index"): r for r in (s.get("roles") or {}).get("ps") or [] if isinstance(r, dict)}
    g = c.figures.get("gradients")
    out = []
    for sh in shards:
        b = num(sh.get("bytes_in_per_update"))
        u = num((ps.get(sh.get("index")) or {}).get("updates")) or c.figures.get("updates")
        if b is None or not u or not g:
            return None
        out.append(b * u / g * c.learners)
    return out or None


def gossip_per_exchange(c):
    """Bytes a gossip learner sends and receives per exchange with its
    partner (roles.learner[].ring: bytes_sent + bytes_recv over rounds),
    mean over the learners; None where the run does not report it."""
    vals = []
    for r in (c.summary.get("roles") or {}).get("learner") or []:
        ring = r.get("ring") if isinstance(r, dict) else None
        if not isinstance(ring, dict) or not num(ring.get("rounds")):
            continue
        sent, recv = num(ring.get("bytes_sent")), num(ring.get("bytes_recv"))
        if sent is not None and recv is not None:
            vals.append((sent + recv) / ring["rounds"])
    return sum(vals) / len(vals) if vals else None


def _bears(lesson, c):
    """Cell c is one of the cells lesson (1-5) is about."""
    if lesson in (1, 2):
        return c.mode in facts.gradient_ps_modes() and c.ps is not None and (lesson == 1) == (c.ps == 1)
    if lesson in (3, 4):
        return c.mode == ALLREDUCE and c.impl == ("ring" if lesson == 3 else "naive")
    return c.mode == GOSSIP


def _point(lesson, c):
    """(measured, model) of cell c for lesson (1-5), or None where c does not
    bear on it; measured None where the run does not report it."""
    if not _bears(lesson, c):
        return None
    K, N, f = k_bytes(c), c.learners, c.figures
    if K is None:
        return (None, None)
    if lesson in (1, 2):
        ins = shard_in_per_round(c)
        return (None if ins is None else max(ins), N * K / c.ps)
    if lesson == 3:
        return (f.get("sync_sent_pg"), 2.0 * (N - 1) / N * K)
    if lesson == 4:
        return (f.get("sync_sent_pg_driver"), (N - 1) * K)
    return (gossip_per_exchange(c), 2.0 * K)


LESSONS = {
    1: ("A single parameter server takes N·K bytes in per round (each of the N learners sends it a gradient of "
        "K bytes), so its inbound traffic grows with N: it is the bottleneck.",
        "single-PS cells (ps_sync, ps_async or ps_bounded with 1 parameter server)", "N·K"),
    2: ("Sharding the parameters over P parameter servers divides that by P: N·K/P into each shard.",
        "cells of ps_sync, ps_async or ps_bounded with 2 or more parameter servers (--param-servers 1,2)",
        "N·K/P"),
    3: ("The ring allreduce's bytes per worker, 2(N-1)/N·K, approach 2K as N grows: every learner sends "
        "about twice the parameters whatever N.",
        "allreduce cells with the ring (sync.allreduce_impl ring)", "2(N-1)/N·K"),
    4: ("The naive allreduce's driver (learner 0) sends (N-1)·K: it grows with N, as a single PS's does.",
        "allreduce cells with the naive algorithm (--allreduce-impls ring,naive)", "(N-1)·K"),
    5: ("Gossip moves 2K bytes per exchange (K to its partner, K back) whatever N.",
        "gossip cells", "2K"),
}
HOW = {1: "bytes into the shard per round of N gradients: `per_worker.ps_shards[].bytes_in_per_update` x the "
          "shard's updates / the run's gradients x N",
       2: "the busiest shard's, as in 1",
       3: "`per_worker.learners[].sync_bytes_sent_per_gradient`, mean over the learners",
       4: "learner 0's `sync_bytes_sent_per_gradient`",
       5: "`roles.learner[].ring` (bytes_sent + bytes_recv) / rounds, mean over the learners"}


def _groups(lesson, cells):
    """{(mode, N, P): [(measured, model)]} of the finished cells that made
    updates and bear on lesson."""
    out = {}
    for c in cells:
        if not _updated(c):
            continue
        p = _point(lesson, c)
        if p is not None:
            out.setdefault((c.mode, c.learners, c.ps if facts.has_ps(c.mode) else 0), []).append(p)
    return out


def _deviation(m, model):
    if model == 0:
        return 0.0 if abs(m) < 1 else float("inf")
    return abs(m / model - 1)


def _ns(keys):
    return ", ".join(str(n) for n in sorted({k[1] for k in keys}))


def verdict(lesson, cells):
    """"supported: ..." or "not supported here: ..." for lesson (1-5)."""
    _, needs, formula = LESSONS[lesson]
    bearing = [c for c in cells if c.ok and _bears(lesson, c)]
    if not bearing:
        return "not supported here: the matrix has no %s" % needs
    groups = _groups(lesson, cells)
    if not groups:
        return "not supported here: its cells (%d) made no updates, so nothing was measured" % len(bearing)
    missing = sorted(k for k, pts in groups.items() if all(m is None for m, _ in pts))
    if missing:
        return ("not supported here: the runs of %s do not report the figure (%s; a build before it)"
                % ("; ".join("%s N=%d" % (k[0], k[1]) for k in missing), HOW[lesson]))
    med = {k: (median([m for m, _ in pts if m is not None]), median([mo for m, mo in pts if m is not None]))
           for k, pts in groups.items()}
    if lesson in ABOUT_N and len({k[1] for k in med}) < 2:
        return ("not supported here: the matrix has them at one learner count only (N = %s); how the bytes move "
                "with N needs two or more (e.g. --learners %s)" % (_ns(med), "2,4" if lesson == 5 else "1,2,4"))
    dev = {k: _deviation(*v) for k, v in med.items()}
    worst = max(dev, key=lambda k: dev[k])
    where = "at N = %s (%s)" % (_ns(med), ", ".join(m for m in facts.modes() if any(k[0] == m for k in med)))
    if lesson == 2:
        where = "at %s" % ", ".join("N=%d P=%d" % (k[1], k[2]) for k in sorted(med, key=lambda k: (k[2], k[1])))
    if dev[worst] > TOLERANCE:
        return ("not supported here: %s N=%d%s measured %.0f bytes against the model's %s = %.0f, %s the %.0f%% "
                "tolerance" % (worst[0], worst[1], " P=%d" % worst[2] if lesson in (1, 2) else "", med[worst][0],
                               formula, med[worst][1], "off by more than" if dev[worst] != float("inf") else "beyond",
                               100 * TOLERANCE))
    if lesson in (1, 4):
        for m in {k[0] for k in med}:
            ks = sorted((k for k in med if k[0] == m), key=lambda k: k[1])
            vals = [med[k][0] for k in ks]
            if any(b <= a for a, b in zip(vals, vals[1:])):
                return "not supported here: %s's measured bytes do not grow with N (%s)" % (
                    m, ", ".join("N=%d: %.0f" % (k[1], med[k][0]) for k in ks))
    return "supported: measured within %.1f%% of the model (%s) %s" % (100 * dev[worst], formula, where)


def section(cells):
    """The lines of "What this run shows"."""
    ks = sorted({int(k_bytes(c)) for c in cells if _updated(c) and k_bytes(c)})
    L = ["## What this run shows", "",
         "Five lessons of the communication model (docs/ARCHITECTURE.md, \"Communication per worker\"), each "
         "checked against this run's measurements: *supported* where every (mode, learners, parameter servers) "
         "group that bears on it is measured within %d%% of the model (median over its runs; the measurements "
         "include the 40-byte message headers and the stop flag the formulas leave out), else *not supported "
         "here*, with the reason. K = 4n bytes, n the parameter count (%s), N learners, P parameter servers."
         % (100 * TOLERANCE, "K = %s bytes here" % " and ".join("{:,}".format(k) for k in ks) if ks
            else "no finished run with updates reports it"), ""]
    for i in sorted(LESSONS):
        L.append("%d. %s **%s**" % (i, LESSONS[i][0], verdict(i, cells)))
    L += ["", "Measured: %s." % "; ".join("(%d) %s" % (i, HOW[i]) for i in sorted(HOW)), ""]
    return L


def note_no_updates(cells):
    """The report's opening line when finished cells made no updates (their
    runs ended before learning started), naming them and the budget that
    ran out; [] when every finished cell made updates."""
    fin = [c for c in cells if c.ok]
    none = [c for c in fin if not _updated(c)]
    if not none:
        return []
    cfg = os.path.join(none[0].run_dir or "", "config.yaml")
    steps, least = facts.yaml_key(cfg, "run", "max_env_steps"), facts.yaml_key(cfg, "replay", "min_size")
    secs = facts.yaml_key(cfg, "run", "max_seconds")
    timed = secs not in (None, "0")
    budget = ""
    if steps and least:
        budget = (" Their budget (config.yaml): run.max_env_steps %s, replay.min_size %s%s: learning starts once "
                  "replay holds replay.min_size transitions, so raise run.max_env_steps well above it (or lower "
                  "replay.min_size)%s." % (steps, least, ", run.max_seconds %s" % secs if timed else "",
                                           ", or raise run.max_seconds" if timed else ""))
    names = ", ".join(c.name for c in none[:8]) + (" ..." if len(none) > 8 else "")
    return ["**%s** (%s): their runs ended before learning started, so they have no rates, bytes or "
            "times per gradient and bear on none of the lessons below.%s"
            % ("No finished cell made an update" if len(none) == len(fin)
               else "%d of %d finished cells made no updates" % (len(none), len(fin)), names, budget), ""]
