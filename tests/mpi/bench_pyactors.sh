#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/mpi/bench_pyactors.sh: a tiny run of scripts/bench-pyactors (a few
# thousand env steps per job, step_cost_us 5): its table has every column
# and row, its --json rows carry the figures from summary.json that the
# table is made of: each learning-off job ran its budget on the actors'
# stepping time (roles.actor[].stepping_seconds: more than 0, at most the
# job's wall time; the CPU time while stepping at most the elapsed time of
# as many cores as actors), with no batch served while an actor stepped;
# the learning-on rows trained. Timing is never checked. A build with make
# PYTHON=0 skips it.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../mpilib.sh"
cd "$TEST_ROOT" || exit 1
B=scripts/bench-pyactors
export GORILA

if "$GORILA" env rollout python:cartpole:make --episodes 1 2>&1 | grep -q "built without Python"; then
    for t in table json; do ok "bench-pyactors $t # SKIP built with make PYTHON=0"; done
    done_testing
    exit
fi

# One run of both parts: the table on stdout, the same rows as JSON lines
# in a file (--json-file), so the suite starts its 7 jobs once.
J="$TEST_TMP/bench_pyactors.jsonl"
rm -f "$J"
run_cmd timeout --kill-after=5 300 "$B" --steps 2000 --learn-steps 1500 --step-cost-us 5 --json-file "$J"
expect_rc "a run of both parts exits 0" 0
expect_contains "it names the CPU and the OpenBLAS kernel" "$out" "; OpenBLAS kernel "
expect_contains "the environment and its cost" "$out" 'env python:cartpole:make, env.kwargs {"step_cost_us": 5.0}'
expect_contains "the columns" "$out" \
    "actors              env_steps  stepping_s  env_steps/s per_actor     actor_cores   cpu_us/step   wall_s updates"
for row in "1 actor, 1 shard  " "2 actors, 1 shard " "2 actors, 2 shards"; do
    check "a row '$row' with the budget" grep -q "^$row       2000 " <<<"$out"
done
expect_contains "the ratio of 2 actors on one shard" "$out" "2 actors, 1 shard / 1 actor: "
expect_contains "the ratio of 2 actors on two shards" "$out" "2 actors, 2 shards / 1 actor: "
expect_contains "the learning-on part's local row" "$out" "local  "
check_json=$(/usr/bin/python3 - "$J" <<'PY'
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
bad = []
def want(cond, what):
    if not cond:
        bad.append(what)
off = [r for r in rows if r["bench"] == "pyactors" and r["learning"] == "off"]
on = [r for r in rows if r["bench"] == "pyactors" and r["learning"] == "on"]
ratios = [r for r in rows if r["bench"] == "pyactors_ratio"]
want([(r["actors"], r["replay_shards"]) for r in off] == [(1, 1), (2, 1), (2, 2)], "off rows")
want([(r["actors"], r["replay_shards"]) for r in on] == [(0, 1), (1, 1), (2, 1), (2, 2)], "on rows")
want(len(ratios) == 5, "5 ratio rows")
for r in off:
    n = r["actors"]
    want(r["env_steps"] == 2000, "off env_steps %s" % r["env_steps"])
    want(0 < r["stepping_seconds"] <= r["wall_seconds"], "stepping within wall %s" % r)
    want(r["sampled_while_stepping"] == 0, "no batch while stepping")
    want(len(r["per_actor_env_steps_per_second"]) == n, "one rate per actor")
    want(0 < r["actor_cores"] <= n * 1.05, "actor_cores within the actors' cores %s" % r["actor_cores"])
    want(abs(r["env_steps_per_second"] * r["stepping_seconds"] - 2000) < 1e-6 * 2000, "rate = steps / stepping")
    want(r["actor_cpu_us_per_step"] > 5, "the actors' CPU per step holds the 5 us spin %s" % r["actor_cpu_us_per_step"])
    want(r["cpu"] and r["blas_kernel"], "platform named")
for r in on:
    want(r["env_steps"] == 1500 and r["updates"] > 0, "on trained %s" % r)
    want((r["stepping_env_steps_per_second"] is None) == (r["actors"] == 0), "stepping rate for the jobs only")
print("; ".join(bad) if bad else "ok")
PY
)
expect_eq "the JSON rows hold the summary's figures" "$check_json" ok
done_testing
