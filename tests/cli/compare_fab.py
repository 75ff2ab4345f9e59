#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Fabricated run directories for tests/cli/compare_lessons.sh: a
summary.json (and config.yaml) per cell, with the communication figures
set to the model times (1 + a chosen deviation), so the report's lessons
can be checked against numbers the test chose, without training anything.

usage: compare_fab.py DIR CELL...   CELL: mode:N[:P][:impl][:dev][:updates]
  mode  ps_sync, ps_async, ps_bounded, allreduce, gossip
  N     learners; P parameter servers (PS modes; default 1); impl ring or
  naive (allreduce); dev the relative deviation of the measured bytes from
  the model (default 0); updates (default 100; 0: a run that made none).
Run directories: DIR/<mode>[-<impl>]-L<N>[-P<P>]-s1."""
import json
import os
import sys

N_PARAMS = 1000
K = 4.0 * N_PARAMS
ROLES = ("coordinator", "actor", "replay", "learner", "ps")


def summary(mode, N, P, impl, dev, updates):
    ps_mode = mode.startswith("ps_")
    grads = updates * (N if mode in ("ps_sync", "allreduce") else 1)
    per_learner = grads // N if N else 0
    nul = updates == 0

    def v(x):
        return None if nul else x * (1 + dev)

    learners, ring = [], []
    for i in range(N):
        if ps_mode:
            sent = K
        elif mode == "allreduce" and impl == "naive":
            sent = (N - 1) * K if i == 0 else (K if N > 1 else 0)
        elif mode == "allreduce":
            sent = 2.0 * (N - 1) / N * K
        else:  # gossip: an exchange every 4 gradients
            sent = K / 4
        learners.append({"rank": 3 + i, "index": i, "gradients": per_learner,
                         "sync_bytes_sent_per_gradient": v(sent), "sync_bytes_recv_per_gradient": v(sent),
                         "model_bytes_sent_per_gradient": None if nul else sent,
                         "model_bytes_recv_per_gradient": None if nul else sent,
                         "compute_seconds_per_gradient": None if nul else 0.002 * (1 + i + N),
                         "sync_seconds_per_gradient": None if nul else 0.001,
                         "sample_wait_seconds_per_gradient": None if nul else 0.0001})
        r = {"rank": 3 + i, "index": i, "gradients": per_learner, "samples_trained": 64 * per_learner,
             "bytes_sent": {"grad": 0}}
        if mode == "gossip" and not nul:
            rounds = max(per_learner // 4, 1)
            r["ring"] = {"rounds": rounds, "msgs_sent": rounds, "bytes_sent": rounds * K * (1 + dev),
                         "msgs_recv": rounds, "bytes_recv": rounds * K * (1 + dev), "seconds": 0.01}
        ring.append(r)
    shards, ps = [], []
    if ps_mode:
        ps_updates = updates
        # bytes into a shard: K / P per gradient, so N K / P per round of N gradients
        per_update = K / P * (grads / updates if updates else 0)
        for j in range(P):
            shards.append({"rank": 3 + N + j, "index": j, "busy_fraction": 0.5, "bytes_in_per_second": 1e6,
                           "bytes_out_per_second": 1e6, "bytes_in_per_update": v(per_update)})
            ps.append({"rank": 3 + N + j, "index": j, "updates": ps_updates, "params_version": ps_updates,
                       "drops": 0, "staleness_histogram": [grads] + [0] * 15, "bytes_sent": {"params": 0}})
    s = {"mode": mode, "env": "CartPole-v1", "seed": 1, "solved": False, "updates": updates, "gradients": grads,
         "env_steps": 2000, "wall_seconds": 2.0, "updates_per_second": updates / 2.0,
         "env_steps_per_second": 1000.0, "last_eval_mean_return": 20.0, "best_eval_mean_return": 22.0,
         "stop_reason": "budget",
         "roles": {"coordinator": [{"rank": 0, "index": 0}], "actor": [{"rank": 1, "index": 0}],
                   "replay": [{"rank": 2, "index": 0}], "learner": ring, "ps": ps},
         "per_worker": {"n_params": N_PARAMS, "n_learners": N, "n_param_servers": P if ps_mode else 0,
                        "learners": learners, "ps_shards": shards}}
    if mode == "allreduce":
        s["allreduce_impl"] = impl
    return s


CONFIG = """run:
  mode: distributed
  seed: 1
  max_env_steps: {steps}
roles:
  learners: {N}
  param_servers: {P}
sync:
  mode: {mode}
{impl}replay:
  min_size: 1000
"""


def main(out, specs):
    for spec in specs:
        f = spec.split(":") + [""] * 6
        mode, N = f[0], int(f[1])
        P = int(f[2]) if f[2] else (1 if mode.startswith("ps_") else 0)
        impl = f[3] or ("ring" if mode == "allreduce" else None)
        dev = float(f[4]) if f[4] else 0.0
        updates = int(f[5]) if f[5] else 100
        name = "%s%s-L%d%s-s1" % (mode, "-" + impl if impl else "", N, "-P%d" % P if P else "")
        d = os.path.join(out, name)
        os.makedirs(d)
        with open(os.path.join(d, "summary.json"), "w") as fh:
            json.dump(summary(mode, N, P, impl, dev, updates), fh, indent=1)
        with open(os.path.join(d, "config.yaml"), "w") as fh:
            fh.write(CONFIG.format(steps=1000 if updates == 0 else 20000, N=N, P=P, mode=mode,
                                   impl="  allreduce_impl: %s\n" % impl if impl else ""))
        with open(os.path.join(d, "eval.csv"), "w") as fh:
            fh.write("wall_seconds,env_steps,mean_return\n1.0,1000,15.0\n2.0,2000,20.0\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
