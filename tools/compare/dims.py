"""The dimensions of the matrix beyond mode and learner count: the number
of parameter-server shards of the PS modes (--param-servers; allreduce has
none, 0) and the algorithm of allreduce (--allreduce-impls). A report shows
each only where its cells have more than one value of it, so the report of
a matrix without them is what it was before they existed.

A group of cells is keyed (mode, learners, P, algorithm), P and algorithm
None where the report does not show them; a series of the plots is
(mode, P, algorithm)."""
from . import facts
from .facts import ALLREDUCE
from .stats import DASH


def mode_order():
    return facts.modes() + ["local"]


def _index(seq, x):
    return seq.index(x) if x in seq else len(seq)


def key_order(k):
    """Sort key of a group key: gorila's order of the modes (then local
    runs, then anything else), of the allreduce algorithms, then learners,
    then P."""
    impls = facts.version_facts().get("allreduce_impls") or []
    return (_index(mode_order(), k[0]), k[0], -1 if k[3] is None else _index(impls, k[3]), k[3] or "", k[1],
            -1 if k[2] is None else k[2])


def series_order(s):
    return key_order((s[0], 0, s[1], s[2]))


def plural(n, word):
    return "%d %s%s" % (n, word, "" if n == 1 else "s")


class Dims:
    """Which optional dimensions the cells show."""

    def __init__(self, cells):
        ps_modes = facts.ps_modes()
        self.ps = len({c.ps for c in cells if c.mode in ps_modes}) > 1
        self.impl = len({c.impl for c in cells if c.mode == ALLREDUCE}) > 1

    def key(self, c):
        return (c.mode, c.learners, c.ps if self.ps else None, c.impl if self.impl else None)

    @staticmethod
    def label(k):
        """The mode column of a group or series key: the mode, and the
        allreduce algorithm where shown."""
        return k[0] if k[-1] is None else "%s (%s)" % (k[0], k[-1])

    @staticmethod
    def ps_of(k):
        """P of a group or series key where it is shown and the mode has parameter servers, else None."""
        return k[-2] if k[0] != ALLREDUCE and k[-2] is not None else None

    def cols(self, k):
        """The first columns of a table row of group k."""
        return [self.label(k), k[1]] + ([DASH if k[2] is None else k[2]] if self.ps else [])

    def per(self):
        """What a group is, in the tables' words."""
        return "(mode, learner count%s)" % (", parameter servers" if self.ps else "")

    def head(self):
        return ["mode", "learners"] + (["param servers"] if self.ps else [])

    def align(self):
        return ["---", "---:"] + (["---:"] if self.ps else [])

    def text(self, k):
        """"ps_sync, 2 learners" (", 2 parameter servers" where shown)."""
        P = self.ps_of(k)
        return "%s, %s%s" % (self.label(k), plural(k[1], "learner"),
                             "" if P is None else ", " + plural(P, "parameter server"))

    def series_label(self, s):
        """A plot's name of series s: "ps_sync", "ps_sync P=2", "allreduce (naive)"."""
        P = self.ps_of(s)
        return self.label(s) + ("" if P is None else " P=%d" % P)

    def series_slug(self, s):
        """Its part of a data file's name: "ps_sync", "ps_sync-P2", "allreduce-naive"."""
        P = self.ps_of(s)
        return s[0] + ("" if s[2] is None else "-" + s[2]) + ("" if P is None else "-P%d" % P)

    def groups(self, cells, only_ok=False):
        """{group key: [cell]}, in the order cells come."""
        groups = {}
        for c in cells:
            if c.ok or not only_ok:
                groups.setdefault(self.key(c), []).append(c)
        return groups
