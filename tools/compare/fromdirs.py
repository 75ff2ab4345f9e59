# SPDX-License-Identifier: MIT
"""--from RUN_DIR...: the report from finished run directories."""
import datetime
import os
import shlex

from . import facts
from .errors import InputError
from .facts import ALLREDUCE, PER_LEARNER
from .report import write_report
from .runs import Cell, read_json_input, role_list, run_batch, run_variant


def cell_of(d, envs):
    """The cell of run directory d (its mode, learner count, seed, P,
    allreduce algorithm and learner.batch from summary.json, else its
    config.yaml); adds d to envs[its env]."""
    if not os.path.isdir(d):
        raise InputError("--from %s: no such directory" % d)
    s = read_json_input(os.path.join(d, "summary.json"),
                        "--from %s has no summary.json (not a finished run directory)" % d)
    cp = os.path.join(d, "config.yaml")
    cfg = facts.run_config(cp) if os.path.isfile(cp) else {}
    mode = s.get("mode") or cfg.get("sync.mode") or "?"
    try:
        L = int(cfg["roles.learners"]) if mode != "local" else 1
    except (KeyError, TypeError, ValueError):
        L = len(role_list(s, "learner")) or 1
    seed = s.get("seed")
    if not isinstance(seed, int):
        try:
            seed = int(cfg.get("run.seed", 0))
        except (TypeError, ValueError):
            seed = 0
    P, impl = run_variant(mode, s, lambda: cfg)
    batch = run_batch(s, lambda: cfg, cp if os.path.isfile(cp) else None)
    c = Cell(mode, L, seed, name=os.path.basename(os.path.normpath(d)), ps=P, impl=impl, batch=batch)
    c.run_dir = os.path.abspath(d)
    envs.setdefault(s.get("env") or cfg.get("env.name") or "?", []).append(d)
    return c


def batch_line(cells):
    """The runs' learner.batch, where an allreduce run has the global batch."""
    known = facts.learner_batches()
    ar = sorted({c.batch for c in cells if c.mode == ALLREDUCE and c.batch}, key=lambda b: (known + [b]).index(b))
    if ar in ([], [PER_LEARNER]):
        return []
    return ["- learner.batch (each run's `config.yaml`): %s for allreduce; the PS modes run per_learner"
            % ", ".join(ar)]


def head_lines(cells, argv):
    cmd = " ".join(shlex.quote(a) for a in argv)
    cfgs = sorted({os.path.relpath(os.path.join(c.run_dir, "config.yaml")) for c in cells})
    return [
        "- Command: `%s` (in `%s`)" % (cmd, os.getcwd()),
        "- Built from %d existing run directories (their `config.yaml`: %s); exit statuses are not known "
        "here, so every run with a summary.json counts as finished" % (
            len(cells), ", ".join("`%s`" % p for p in cfgs[:8]) + (" ..." if len(cfgs) > 8 else "")),
        "- Seeds: %s" % ", ".join(str(s) for s in sorted({c.seed for c in cells})),
    ] + batch_line(cells) + [
        "- Date: %s" % datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M:%S %Z"),
    ]


def from_dirs(opts, argv):
    facts.version_facts()  # the binary must answer before anything is read or made
    envs = {}
    cells = [cell_of(d, envs) for d in opts.from_dirs]
    if len(envs) > 1:
        raise InputError("--from runs are from different environments: " + "; ".join(
            "%s: %s" % (e, ", ".join(ds)) for e, ds in sorted(envs.items())))
    out = opts.out or os.path.join("runs", "compare-from-%s" % datetime.datetime.now().strftime("%Y%m%d-%H%M%S"))
    out = os.path.abspath(out)
    if os.path.exists(out):
        raise InputError("%s exists; choose another --out (a report is never written over)" % out)
    os.makedirs(out)
    write_report(out, cells, head_lines(cells, argv))
    print("report: %s" % os.path.join(out, "report.md"))
    return 0
