# SPDX-License-Identifier: MIT
"""What scripts/compare knows of gorila, asked of the binary itself rather
than copied from its C source:

- `gorila version --json`: the sync modes (config.c's table of sync.mode
  names; what each asks of its layout is the table below, checked by
  gorila config check for every cell), the allreduce algorithms
  (sync.allreduce_impl), the roles of a distributed job (summary.json's
  `roles` keys) and the bins of the parameter servers' staleness
  histogram (src/core/layout/proto.h PROTO_STALENESS_BINS; the last bin counts
  every gradient that many versions old, less one, or more);
- `gorila config check --json CONFIG [--set k=v]...`: the effective config
  and the number of MPI ranks its job needs, for a config given on the
  command line and for a run directory's config.yaml (--from).
"""
import functools
import json
import os
import subprocess

from .errors import InputError, warn

HERE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GORILA = os.environ.get("GORILA", os.path.join(HERE, "build", "gorila"))
# The launcher; tests put a stand-in here (it must behave like scripts/launch).
LAUNCH = os.environ.get("GORILA_LAUNCH", os.path.join(HERE, "scripts", "launch"))
SIMCLUSTER = os.path.join(HERE, "scripts", "simcluster")
# mpirun for the network's ping-pong across real hosts (tests put a stand-in here).
MPIRUN = os.environ.get("GORILA_MPIRUN", "mpirun")
# The centralized mode without parameter servers: its learners average
# their gradients among themselves (roles.param_servers=0).
ALLREDUCE = "allreduce"
# The decentralized modes' names, for the cost model's formulas (one per
# message pattern, modelcheck.py): each learner keeps its own copy of the
# parameters and its own optimizer, takes local steps, and every few
# gradients averages its copy with others' (docs/CONFIG.md sync.mode):
# gossip with one partner, local_sgd with all learners in an allreduce,
# easgd with a center variable on the parameter servers. What each mode
# asks of its layout (parameter servers, an allreduce algorithm, a least
# learner count, its period's key) is the binary's `sync_mode_facts`
# (mode_facts below), never copied here.
GOSSIP = "gossip"
LOCAL_SGD = "local_sgd"
EASGD = "easgd"
# learner.batch, the scaling rule of a synchronous update (docs/CONFIG.md):
# per_learner (Gorila's, weak scaling: each of L learners samples
# replay.batch_size rows) and global (Horovod's, strong scaling: the L
# learners split one replay.batch_size). PER_LEARNER is also the rule of a
# run whose config has no learner.batch (a build before the key).
PER_LEARNER = "per_learner"
GLOBAL_BATCH = "global"


@functools.lru_cache(maxsize=None)
def version_facts():
    """`gorila version --json` as a dict (asked once); InputError when the
    binary cannot say."""
    what = "`%s version --json`" % GORILA
    try:
        p = subprocess.run([GORILA, "version", "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise InputError("%s failed: %s (run make first)" % (what, e))
    if p.returncode != 0:
        raise InputError("%s failed (exit %d): %s" % (what, p.returncode, " ".join(p.stderr.split()) or "no output"))
    try:
        v = json.loads(p.stdout)
    except ValueError as e:
        raise InputError("%s: not JSON: %s" % (what, e))
    for key, kind in (("sync_modes", list), ("roles", list), ("staleness_bins", int)):
        if not isinstance(v.get(key), kind) or isinstance(v.get(key), bool):
            raise InputError("%s has no %s" % (what, key))
    return v


def modes():
    """Every sync.mode, in gorila's order."""
    return list(version_facts()["sync_modes"])


def mode_facts(mode):
    """What `gorila version --json` says sync mode `mode` asks of its layout
    (`sync_mode_facts`: param_servers, allreduce_impl, min_learners,
    decentralized, every_key); {} for a mode it does not list (gorila's own
    config check then refuses the cell with its reason)."""
    return (version_facts().get("sync_mode_facts") or {}).get(mode) or {}


def ps_modes():
    """The modes with parameter servers (easgd among them: its center)."""
    return [m for m in modes() if has_ps(m)]


def gradient_ps_modes():
    """The modes whose parameter servers receive gradients (and keep a
    staleness histogram of them): the PS modes but easgd, whose learners
    send their parameters."""
    return [m for m in ps_modes() if not is_decentralized(m)]


def has_ps(mode):
    """Mode runs with parameter servers (roles.param_servers >= 1)."""
    return bool(mode_facts(mode).get("param_servers", mode != ALLREDUCE))


def has_impl(mode):
    """Mode runs an allreduce algorithm (sync.allreduce_impl)."""
    return bool(mode_facts(mode).get("allreduce_impl", mode == ALLREDUCE))


def is_decentralized(mode):
    """Each learner steps its own copy (gossip, easgd, local_sgd)."""
    return bool(mode_facts(mode).get("decentralized", False))


def min_learners(mode):
    """The fewest learners gorila runs mode with (2 where learners average
    with each other)."""
    return int(mode_facts(mode).get("min_learners", 1))


def every_key(mode):
    """The sync key of a decentralized mode's period in gradients
    (\"gossip_every\", ...); None for the others."""
    return mode_facts(mode).get("every_key")


# The mode-specific sync keys the binary does not name in sync_mode_facts
# (docs/CONFIG.md, "sync"), with the modes that use them; each mode's period
# key (every_key) and sync.allreduce_impl (allreduce_impl) come from
# sync_mode_facts. gorila refuses such a key set to other than its default
# under a mode that does not use it. sync.learner_pull_every: ps_sync always
# pulls after every update, the decentralized modes never pull.
MODE_ONLY_SYNC_KEYS = {"sync.staleness": ("ps_bounded",), "sync.learner_pull_every": ("ps_async", "ps_bounded"),
                       "sync.gossip_topology": (GOSSIP,), "sync.easgd_alpha": (EASGD,)}


def mode_sync_keys():
    """{key: [modes that use it]} of every mode-specific sync key."""
    out = {k: [m for m in modes() if m in ms] for k, ms in MODE_ONLY_SYNC_KEYS.items()}
    for m in modes():
        own = (["sync." + every_key(m)] if every_key(m) else []) + (["sync.allreduce_impl"] if has_impl(m) else [])
        for k in own:
            out.setdefault(k, [])
            if m not in out[k]:
                out[k].append(m)
    return out


def mode_uses(mode, key):
    """False for a mode-specific sync key (mode_sync_keys) that mode does not
    use; True for every other key."""
    users = mode_sync_keys().get(key)
    return users is None or mode in users


def allreduce_impls():
    """Every sync.allreduce_impl, in gorila's order; InputError when the
    binary does not list them (a build older than the option)."""
    v = version_facts().get("allreduce_impls")
    if not isinstance(v, list):
        raise InputError("`%s version --json` has no allreduce_impls (a build without sync.allreduce_impl)" % GORILA)
    return list(v)


def learner_batches():
    """Every learner.batch, in gorila's order: `gorila version --json`
    learner_batches where the binary lists them, else the two rules of
    configkeys.c (per_learner, global)."""
    v = version_facts().get("learner_batches")
    return list(v) if isinstance(v, list) and v else [PER_LEARNER, GLOBAL_BATCH]


def roles():
    """The roles of a distributed job, in rank order (summary.json's `roles`)."""
    return list(version_facts()["roles"])


def staleness_bins():
    """Bins of roles.ps[].staleness_histogram; the last counts every
    gradient staleness_bins() - 1 or more versions old."""
    return version_facts()["staleness_bins"]


def _flatten(obj):
    """{"config": {"run": {"seed": 1}}, "ranks": N, "n_params": K} -> {"run.seed": 1, "ranks": N,
    "n_params": K}."""
    out = {}
    for section, keys in obj.get("config", {}).items():
        if isinstance(keys, dict):
            for k, v in keys.items():
                out[section + "." + k] = v
        else:
            out[section] = keys
    out["ranks"] = obj.get("ranks")
    out["n_params"] = obj.get("n_params")
    return out


def _error_text(p):
    msg = (p.stderr.strip() + "\n" + p.stdout.strip()).strip()
    if msg.startswith("gorila: error: "):
        msg = msg[len("gorila: error: "):]
    return msg or "gorila config check failed (exit %d)" % p.returncode


def config_check(config, sets=(), extra=()):
    """Runs `gorila config check --json`; returns the effective config as a
    flat dict ({"section.key": value}, values as JSON gives them) with the
    rank count under "ranks" and the Q-network's parameter count under
    "n_params", or raises InputError with gorila's own
    message."""
    args = [GORILA, "config", "check", "--json"] + list(extra) + [config]
    for s in sets:
        args += ["--set", s]
    p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        raise InputError(_error_text(p))
    try:
        cfg = _flatten(json.loads(p.stdout))
    except (ValueError, AttributeError) as e:
        raise InputError("`gorila config check --json %s` printed no JSON object: %s" % (config, e))
    if not isinstance(cfg["ranks"], int):
        raise InputError("could not read the rank count from 'gorila config check'")
    return cfg


def run_config(path):
    """A run directory's config.yaml (written by gorila) as config_check
    reads it, its memory not checked against this machine (the run may have
    been on another); {} with a warning when gorila refuses it (a config of
    another build)."""
    try:
        return config_check(path, extra=["--ranks-elsewhere"])
    except InputError as e:
        warn("%s: %s; using its summary.json alone" % (path, e))
        return {}


def yaml_key(path, section, key):
    """The value of `key:` in top-level `section:` of a config.yaml as
    gorila writes it (two-space indents; quotes and comments dropped), or
    None: for a run's config that this build's config check refuses."""
    on = False
    try:
        with open(path, errors="replace") as f:
            for line in f:
                text = line.split("#", 1)[0].rstrip()
                if not text:
                    continue
                if not text[0].isspace():
                    on = text == section + ":"
                elif on and text.strip().startswith(key + ":"):
                    return text.strip()[len(key) + 1:].strip().strip('"') or None
    except OSError:
        return None
    return None


def compare_config_params():
    """The Q-network parameter counts of configs/compare/*.yaml (the sizes
    the comparison spans), from gorila config check; those it refuses are
    left out with a warning."""
    d = os.path.join(HERE, "configs", "compare")
    out = []
    for name in sorted(os.listdir(d)) if os.path.isdir(d) else []:
        if name.endswith(".yaml"):
            try:
                n = config_check(os.path.join(d, name), extra=["--ranks-elsewhere"]).get("n_params")
            except InputError as e:
                warn("%s: %s" % (name, e))
                continue
            if isinstance(n, int):
                out.append(n)
    return sorted(set(out))


def segment_bytes():
    """The naive allreduce's segment in bytes (`gorila version --json`
    allreduce_segment_floats; the cost model's default where the binary
    does not say)."""
    from .costmodel import SEGMENT_BYTES
    n = version_facts().get("allreduce_segment_floats")
    return 4 * n if isinstance(n, int) and n > 0 else SEGMENT_BYTES
