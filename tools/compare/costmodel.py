# SPDX-License-Identifier: MIT
"""A cost model of one update's communication, per sync mode, on a network of
links of one rate and latency, and its projection to many nodes.

Each node has one NIC, full duplex: B bytes/s each way, and every message
costs a latency a on top of its bytes / B. One learner per node; K is the
parameter bytes (4 per float). Per update (one optimizer step of the
parameters):

  ps_sync, one PS      every learner sends K to the PS and gets K back; the
                       PS's NIC takes N*K in, then sends N*K out:
                       2 (a + N K / B)
  ps_sync, P shards    each shard takes N K / P and each learner still moves
                       K each way: 2 (a + max(N K / P, K) / B)
  ring                 2 (N - 1) steps of K / N each: 2 (N - 1) (a + K / (N B))
  naive                the driver takes (N - 1) K in and sends (N - 1) K out;
                       it sums and sends on each segment of S bytes as soon
                       as every rank's copy of it is in, so its NIC's in
                       and out overlap but for the last segment:
                       2 a + (N - 1) (K + S) / B, S = min(K, the segment:
                       gorila version --json allreduce_segment_floats x 4);
                       one segment (K <= S): 2 (a + (N - 1) K / B)

(ps_async and ps_bounded move the same bytes per gradient as ps_sync but
apply each gradient alone; their rate is bounded by the PS's NIC at
B / K updates per second each way.)

The decentralized modes: each learner applies its own gradient to its own
copy of the parameters (an update is one learner's local step, one
gradient), and every few gradients exchanges its copy; per update, the
exchange's time over that interval:

  gossip, every G      the learner and its partner send each other K at
                       once (full duplex), then all N pass a one-float stop
                       flag around a ring, 2 (N - 1) latency-bound steps:
                       (a + K / B + 2 (N - 1) a) / G; N = 1: 0 (no partner;
                       gorila refuses it). With N odd one learner sits a
                       round out, but the stop-flag ring makes every learner
                       wait for the round, so its time is the same.
  local_sgd, every H   the allreduce (ring or naive, as above) of the
                       n + 1 floats (parameters and a stop flag), K' = K + 4:
                       ring 2 (N - 1) (a + K' / (N B)) / H
  easgd, every tau     the learner sends its slice of K / P to each of P
                       shards and gets the shard's move of the center back;
                       the N learners' slices queue at a shard's NIC, as in
                       the sharded PS: 2 (a + max(N K / P, K) / B) / tau
                       (the 40-byte headers left out). easgd is
                       asynchronous: a learner exchanges when its own
                       interval is up, not in a round, so this is the time
                       if all N learners exchange at once, the worst case;
                       learners out of step queue less.

Time per update is the learners' compute time per gradient plus this;
updates per second its inverse (for the decentralized modes per learner:
the N learners together take N times as many local steps). The functions
are pure, so tests check them against hand-computed values.
"""
import math
import re

MODES = ("ps", "ps_sharded", "ring", "naive")
DECENTRAL_MODES = ("gossip", "local_sgd", "easgd")
# gradients between two exchanges where the caller does not say: gorila's
# defaults of sync.gossip_every, sync.average_every and sync.easgd_every
# (the report passes each run's own, from its config.yaml)
EVERY = {"gossip": 4, "local_sgd": 8, "easgd": 4}
RATE_UNITS = {"bit": 1, "kbit": 1e3, "mbit": 1e6, "gbit": 1e9, "tbit": 1e12}


def parse_rate(text):
    """A tc-style rate ("1gbit", "100mbit", "10gbit") in bytes per second;
    ValueError for anything else."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kmgt]?bit)\s*", text.lower())
    if not m or float(m.group(1)) <= 0:
        raise ValueError("expected a rate such as 100mbit, 1gbit or 10gbit, got %r" % text)
    return float(m.group(1)) * RATE_UNITS[m.group(2)] / 8


SEGMENT_BYTES = 262144  # the naive allreduce's segment; callers with a binary pass its own (facts.py)


def comm_seconds(mode, n, k_bytes, bw, lat, shards=None, segment=SEGMENT_BYTES, every=None, impl="ring"):
    """Seconds of communication per update for n learners (one per node).
    shards: P of ps_sharded and easgd (default n, one per node); every:
    gradients between two exchanges of a decentralized mode (default
    EVERY); impl: local_sgd's allreduce, ring or naive."""
    if n < 1 or k_bytes < 0 or bw <= 0 or lat < 0:
        raise ValueError("n >= 1, k_bytes >= 0, bw > 0, lat >= 0")
    if mode in DECENTRAL_MODES:
        return _decentral_seconds(mode, n, k_bytes, bw, lat, shards, segment, EVERY[mode] if every is None else every,
                                  impl)
    if mode == "ps":
        return 2 * (lat + n * k_bytes / bw)
    if mode == "ps_sharded":
        p = shards or n
        return 2 * (lat + max(n * k_bytes / p, k_bytes) / bw)
    if mode == "ring":
        return 0.0 if n == 1 else 2 * (n - 1) * (lat + k_bytes / (n * bw))
    if mode == "naive":
        return 0.0 if n == 1 else 2 * lat + (n - 1) * (k_bytes + min(k_bytes, segment)) / bw
    raise ValueError("unknown mode %r (modes: %s)" % (mode, ", ".join(MODES + DECENTRAL_MODES)))


def _decentral_seconds(mode, n, k_bytes, bw, lat, shards, segment, every, impl):
    if every < 1:
        raise ValueError("every >= 1")
    if mode == "gossip":
        return 0.0 if n == 1 else (lat + k_bytes / bw + 2 * (n - 1) * lat) / every
    if mode == "local_sgd":
        if impl not in ("ring", "naive"):
            raise ValueError("local_sgd: impl ring or naive, got %r" % impl)
        return comm_seconds(impl, n, k_bytes + 4, bw, lat, segment=segment) / every
    return comm_seconds("ps_sharded", n, k_bytes, bw, lat, shards=shards or n) / every


def ring_wins(other, k_bytes, bw, lat, nodes, segment=SEGMENT_BYTES):
    """The node counts of `nodes` at which the ring's communication is
    shorter than `other`'s (a mode of MODES)."""
    return [n for n in nodes if comm_seconds("ring", n, k_bytes, bw, lat)
            < comm_seconds(other, n, k_bytes, bw, lat, segment=segment)]


def projection(params, rates, latencies, nodes, compute_s, segment=SEGMENT_BYTES, modes=MODES, every=None):
    """Rows (params, rate_bytes_s, latency_s, n, mode, comm_s, update_s,
    updates_per_s) for every combination, of each mode of `modes` (MODES
    and DECENTRAL_MODES; ps_sharded and easgd with one shard per node,
    local_sgd with the ring); every: {mode: gradients between exchanges}
    (default EVERY)."""
    rows = []
    for n_params in params:
        k = 4.0 * n_params
        for bw in rates:
            for lat in latencies:
                for n in nodes:
                    for mode in modes:
                        c = comm_seconds(mode, n, k, bw, lat, segment=segment, every=(every or {}).get(mode))
                        t = compute_s + c
                        rows.append((n_params, bw, lat, n, mode, c, t, 1 / t if t > 0 else math.inf))
    return rows
