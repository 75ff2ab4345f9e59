# SPDX-License-Identifier: MIT
"""The record an invocation of scripts/seeds keeps in its folder, seeds.json,
and what --resume reads of it and of the run directories.

seeds.json holds the invocation (the configs as given, with their absolute
paths and SHA-256, the --set list, -n, --first, --sweep, --compare, the
arms' labels and run names) and, as each run ends, its exit status and the
re-evaluations of its saved checkpoints keyed by the SHA-256 of its
summary.json. It is written whole through a temporary (os.replace): made
before the first run starts, rewritten after every run. The folder itself is
flock(2)ed while an invocation or a --resume works in it."""
import errno
import fcntl
import hashlib
import json
import os
import re
import tempfile

from ..compare.errors import InputError

NAME = "seeds.json"
FORMAT = "gorila-seeds-1"


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 16), b""):
            h.update(block)
    return h.hexdigest()


def write_json(path, obj):
    """path replaced whole by obj as JSON (a temporary beside it, fsync,
    os.replace): a reader sees the old file or the new one."""
    fd, tmp = tempfile.mkstemp(prefix=".seeds-", suffix=".tmp", dir=os.path.dirname(path) or ".")
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(obj, f, indent=2)
            f.write("\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def lock_folder(folder):
    """flock the folder for this process's lifetime (the descriptor is
    returned: keep it); InputError when another process holds it."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as e:
        os.close(fd)
        if e.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
            raise InputError("%s is in use by another scripts/seeds (the invocation that made it, or a --resume "
                             "of it, is still running)" % folder)
        raise InputError("%s: cannot lock it: %s" % (folder, e.strerror))
    return fd


class Record:
    """seeds.json of one folder: the invocation and the runs that ended."""

    def __init__(self, folder, invocation, runs=None):
        self.folder = folder
        self.invocation = invocation
        self.runs = dict(runs or {})

    @property
    def path(self):
        return os.path.join(self.folder, NAME)

    def save(self):
        write_json(self.path, {"format": FORMAT, "invocation": self.invocation, "runs": self.runs})

    def cached_evals(self, run_dir, summary_sha):
        """(saved_best, saved_final) recorded for this run directory's
        summary.json as it is now, or None."""
        e = self.runs.get(os.path.basename(run_dir))
        if not e or e.get("summary_sha256") != summary_sha:
            return None
        return e.get("saved_best"), e.get("saved_final")

    def recorded_rc(self, run_dir, summary_sha):
        e = self.runs.get(os.path.basename(run_dir))
        if not e or e.get("summary_sha256") != summary_sha or not isinstance(e.get("rc"), int):
            return None
        return e["rc"]

    def note(self, run_dir, rc, summary_sha, saved_best, saved_final):
        """A run ended: its exit status and re-evaluations, saved at once."""
        if not run_dir:
            return
        self.runs[os.path.basename(run_dir)] = {"rc": rc, "summary_sha256": summary_sha,
                                                "saved_best": saved_best, "saved_final": saved_final}
        self.save()


def invocation(o, arms, argv):
    """What --resume needs to rebuild the invocation o (cli.Options)."""
    return {
        "argv": list(argv),
        "cwd": os.getcwd(),
        "configs": list(o.configs),
        "config_paths": [os.path.abspath(c) for c in o.configs],
        "config_sha256": [sha256_file(c) for c in o.configs],
        "sets": list(o.sets),
        "n": o.n,
        "first": o.first,
        "compare": o.compare,
        "sweep": None if o.sweep is None else {"key": o.sweep[0], "values": list(o.sweep[1])},
        "arms": [{"label": a.label, "name_base": a.name_base} for a in arms],
    }


def create(folder, o, arms, argv):
    rec = Record(folder, invocation(o, arms, argv))
    try:
        rec.save()
    except OSError as e:
        raise InputError("cannot write %s: %s" % (rec.path, e.strerror or e))
    return rec


def load(folder):
    """The Record of the folder an earlier invocation made; InputError (one
    line) when there is none or it is not one."""
    if not os.path.isdir(folder):
        raise InputError("--resume %s: no such folder" % folder)
    path = os.path.join(folder, NAME)
    if not os.path.exists(path):
        raise InputError("--resume %s: no %s in it: not a folder scripts/seeds made (or made before --resume)"
                         % (folder, NAME))
    try:
        with open(path) as f:
            data = json.load(f)
    except (OSError, ValueError) as e:
        raise InputError("--resume %s: cannot read %s: %s" % (folder, NAME, one_line(e)))
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise InputError("--resume %s: %s is not a record of this scripts/seeds (format %r, expected %r)"
                         % (folder, NAME, data.get("format") if isinstance(data, dict) else None, FORMAT))
    inv = data.get("invocation")
    keys = ("configs", "config_paths", "config_sha256", "sets", "n", "first", "compare", "sweep", "arms")
    if not isinstance(inv, dict) or any(k not in inv for k in keys) or not well_formed(inv):
        raise InputError("--resume %s: %s has no complete invocation" % (folder, NAME))
    for given, path_, sha in zip(inv["configs"], inv["config_paths"], inv["config_sha256"]):
        what = given if given == path_ else "%s (%s)" % (given, path_)
        if not os.path.isfile(path_):
            raise InputError("--resume %s: the config %s is gone" % (folder, what))
        if sha256_file(path_) != sha:
            raise InputError("--resume %s: the config %s has changed since the runs began" % (folder, what))
    runs = data.get("runs") if isinstance(data.get("runs"), dict) else {}
    return Record(folder, inv, runs)


def well_formed(inv):
    def strs(x):
        return isinstance(x, list) and all(isinstance(v, str) for v in x)
    sweep = inv["sweep"]
    return (strs(inv["configs"]) and strs(inv["config_paths"]) and strs(inv["config_sha256"]) and strs(inv["sets"])
            and len(inv["configs"]) == len(inv["config_paths"]) == len(inv["config_sha256"]) > 0
            and isinstance(inv["n"], int) and isinstance(inv["first"], int) and isinstance(inv["compare"], bool)
            and isinstance(inv["arms"], list) and all(isinstance(a, dict) for a in inv["arms"])
            and (sweep is None or isinstance(sweep, dict) and isinstance(sweep.get("key"), str)
                 and strs(sweep.get("values"))))


def one_line(e):
    return " ".join(str(e).split())


# ---- what became of each run ------------------------------------------------------

DONE, RESUME, RESTART, NEW = "done", "resume", "restart", "new"


def run_dir_of(folder, name):
    """The newest run directory of run.name NAME in folder: NAME, or NAME-k
    with the largest k (gorila's name for a run whose name was taken: a run
    started again beside one killed before its first checkpoint); None."""
    pat = re.compile(re.escape(name) + r"(?:-([0-9]+))?")
    best, best_k = None, 0
    try:
        entries = os.listdir(folder)
    except OSError:
        return None
    for e in entries:
        m = pat.fullmatch(e)
        if m and os.path.isdir(os.path.join(folder, e)):
            k = int(m.group(1)) if m.group(1) else 1
            if k > best_k:
                best, best_k = os.path.join(folder, e), k
    return best


def has_checkpoint(run_dir):
    try:
        return any(e == "latest" or e.startswith("ckpt-") for e in os.listdir(os.path.join(run_dir, "checkpoints")))
    except OSError:
        return False


def finished(run_dir):
    """The run ended by itself: summary.json, a stop_reason other than
    signal, no held-out test owed (test-pending)."""
    try:
        with open(os.path.join(run_dir, "summary.json")) as f:
            s = json.load(f)
    except (OSError, ValueError):
        return False
    if not isinstance(s, dict) or s.get("stop_reason") == "signal":
        return False
    return not os.path.exists(os.path.join(run_dir, "test-pending"))


def state(folder, name):
    """(what to do, run directory or None) for the run named name."""
    d = run_dir_of(folder, name)
    if d is None:
        return NEW, None
    if finished(d):
        return DONE, d
    if has_checkpoint(d):
        return RESUME, d
    return RESTART, d
