# SPDX-License-Identifier: MIT
"""The dimensions of the matrix beyond mode and learner count: the number
of parameter-server shards of the PS modes, easgd among them
(--param-servers; allreduce, gossip and local_sgd have none, 0), the
algorithm of allreduce and local_sgd (--allreduce-impls) and allreduce's
batch rule, learner.batch (--learner-batch: per_learner or global; every
other mode runs per_learner). A report shows each only where its cells
have more than one value of it, so the report of a matrix without them is
what it was before they existed.

A group of cells is keyed (mode, learners, P, algorithm, batch rule), P,
algorithm and batch rule None where the report does not show them; a
series of the plots is (mode, P, algorithm, batch rule). The functions
below that take "a group or series key" read P, the algorithm and the
batch rule from its end (k[-3], k[-2], k[-1])."""
from . import facts
from .facts import ALLREDUCE, GLOBAL_BATCH, PER_LEARNER
from .stats import DASH


def mode_order():
    return facts.modes() + ["local"]


def _index(seq, x):
    return seq.index(x) if x in seq else len(seq)


def key_order(k):
    """Sort key of a group key: gorila's order of the modes (then local
    runs, then anything else), of the allreduce algorithms, the batch rules
    (per_learner first), then learners, then P."""
    impls = facts.version_facts().get("allreduce_impls") or []
    batch = k[4] if len(k) > 4 else None
    return (_index(mode_order(), k[0]), k[0], -1 if k[3] is None else _index(impls, k[3]), k[3] or "",
            -1 if batch is None else _index(facts.learner_batches(), batch), batch or "", k[1],
            -1 if k[2] is None else k[2])


def series_order(s):
    return key_order((s[0], 0) + tuple(s[1:]))


def plural(n, word):
    return "%d %s%s" % (n, word, "" if n == 1 else "s")


def batch_words(batch):
    """How a label names a batch rule: "global batch" (per_learner, the
    rule of every other cell, is not named)."""
    return None if batch in (None, PER_LEARNER) else "%s batch" % batch


class Dims:
    """Which optional dimensions the cells show."""

    def __init__(self, cells):
        ps_modes = facts.ps_modes()
        self.ps = len({c.ps for c in cells if c.mode in ps_modes}) > 1
        self.impl = len({c.impl for c in cells if facts.has_impl(c.mode)}) > 1
        # the batch rule only splits allreduce's cells: the PS modes run per_learner
        self.batches = sorted({c.batch for c in cells if c.mode == ALLREDUCE and c.batch},
                              key=lambda b: _index(facts.learner_batches(), b))
        self.batch = len(self.batches) > 1
        self.aliased = set()  # group keys whose cells are another rule's 1-learner runs (groups())

    def key(self, c):
        return (c.mode, c.learners, c.ps if self.ps else None, c.impl if self.impl else None,
                c.batch if self.batch and c.mode == ALLREDUCE else None)

    @staticmethod
    def label(k):
        """The mode column of a group or series key: the mode, and in
        parentheses the allreduce algorithm (allreduce, local_sgd) and the
        batch rule where shown ("allreduce (ring, global batch)")."""
        parts = [x for x in (k[-2], batch_words(k[-1])) if x]
        return k[0] if not parts else "%s (%s)" % (k[0], ", ".join(parts))

    @staticmethod
    def ps_of(k):
        """P of a group or series key where it is shown and the mode has parameter servers, else None."""
        return k[-3] if facts.has_ps(k[0]) and k[-3] is not None else None

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
        """A plot's name of series s: "ps_sync", "ps_sync P=2", "allreduce (naive)", "allreduce (global batch)"."""
        P = self.ps_of(s)
        return self.label(s) + ("" if P is None else " P=%d" % P)

    def series_slug(self, s):
        """Its part of a data file's name: "ps_sync", "ps_sync-P2", "allreduce-naive", "allreduce-ring-global"."""
        P = self.ps_of(s)
        return (s[0] + ("" if s[2] is None else "-" + s[2]) + ("" if s[3] in (None, PER_LEARNER) else "-" + s[3])
                + ("" if P is None else "-P%d" % P))

    def groups(self, cells, only_ok=False):
        """{group key: [cell]}, in the order cells come. With one learner
        the two batch rules are one update (the learner takes the whole
        batch), so a matrix runs the 1-learner allreduce cells once, with
        per_learner: where a rule shown has cells at other learner counts
        and none with 1 learner, its 1-learner group is the other rule's
        runs (the same list; keys in self.aliased), the series' 1-learner
        reference."""
        groups = {}
        for c in cells:
            if c.ok or not only_ok:
                groups.setdefault(self.key(c), []).append(c)
        if self.batch:
            series = {k[:1] + k[2:] for k in groups}
            for k in list(groups):
                if k[0] != ALLREDUCE or k[1] != 1:
                    continue
                for b in self.batches:
                    other = k[:4] + (b,)
                    if other not in groups and other[:1] + other[2:] in series:
                        groups[other] = groups[k]
                        self.aliased.add(other)
        return groups

    def batch_note(self):
        """The report's words on the batch rules, where they are shown."""
        if not self.batch:
            return []
        return ["Batch rules (`learner.batch`, allreduce only: the PS modes run per_learner): *per_learner* "
                "(Gorila's rule, weak scaling; not named in the mode column) samples `replay.batch_size` rows per "
                "learner and gradient, so L learners average L batches; *%s batch* (Horovod's rule, strong "
                "scaling) splits one `replay.batch_size` among the L learners, 1/L each, so the averaged gradient "
                "is the one-learner update of that batch. With 1 learner the two rules are the same update, so "
                "scripts/compare runs each 1-learner allreduce cell once, per_learner, and %s"
                % (GLOBAL_BATCH, "the 1-learner rows of a rule without 1-learner runs of its own show the other "
                   "rule's runs again, as that series' 1-learner reference (the runs table lists each run once)."
                   if self.aliased else "here every rule shown has 1-learner runs of its own (or none has)."), ""]
