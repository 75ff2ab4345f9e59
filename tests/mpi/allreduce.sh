# SPDX-License-Identifier: MIT
# run-all: alone (simulated nodes: network namespaces of fixed names)
# Ring, naive and hierarchical allreduce, and gossip's pair exchange, under mpirun -np P, P = 1..5
# (tests/mpi/mpi_allreduce.c, found beside $GORILA: its build's own).
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../mpilib.sh"
prog="$(dirname "$GORILA")/tests/mpi_allreduce"
for p in 1 2 3 4 5; do
    # shellcheck disable=SC2086 # $MPIRUN (tests/mpilib.sh) is a command line: split on purpose
    run_cmd timeout 60 $MPIRUN -np "$p" "$prog"
    expect_rc "ring and naive allreduce, $p ranks: exit status 0" 0
    n_ok=$(grep -c '^ok ' <<<"$out")
    n_bad=$(grep -c '^not ok ' <<<"$out")
    n_naive=$(grep -c '^ok .* - naive ' <<<"$out")
    n_pair=$(grep -c '^ok .* - pair ' <<<"$out")
    n_hier=$(grep -c '^ok .* - hier ' <<<"$out")
    # the program's own plan ("1..N", rank 0's last line): all N ran and passed
    plan=$(sed -n 's/^1\.\.\([0-9][0-9]*\)$/\1/p' <<<"$out" | tail -1)
    if [ -n "$plan" ] && [ "$n_ok" -eq "$plan" ] && [ "$n_naive" -gt 0 ] && [ "$n_pair" -gt 0 ] && [ "$n_hier" -gt 0 ] &&
        [ "$n_bad" -eq 0 ]; then
        ok "ring, naive, hierarchical allreduce and gossip's pair exchange, $p ranks: all $plan planned checks pass ($n_naive naive, $n_pair pair, $n_hier hier)"
    else
        not_ok "ring, naive, hierarchical allreduce and gossip's pair exchange, $p ranks: $n_ok of ${plan:-no plan} passed ($n_naive naive, $n_pair pair, $n_hier hier), $n_bad failed"
        grep '^not ok' <<<"$out" | sed 's/^/# /'
    fi
done

# Across simulated nodes (TCP between them, scripts/simcluster): the same
# checks with every rank on a node of its own. Over TCP a short last
# segment (2700001 floats: 41 of 65536 and 13025, under the TCP BTL's
# 64 KiB eager limit) completes its send before the long ones, and a rank
# that posted the receive of the sum's last segment first took segment 0
# into it: a readv error, "Bad address". Receives in segment order fix it.
if why=$("$TEST_ROOT/scripts/simcluster" check 2>&1); then
    for p in 2 3; do
        # shellcheck disable=SC2086,SC2046 # command lines: split on purpose
        run_cmd timeout 120 $MPIRUN -np "$p" $("$TEST_ROOT/scripts/simcluster" mpirun-args 3) --map-by node "$prog"
        expect_rc "ring and naive allreduce, $p ranks on $p simulated nodes: exit status 0" 0
        n_ok=$(grep -c '^ok ' <<<"$out")
        n_bad=$(grep -c '^not ok ' <<<"$out")
        plan=$(sed -n 's/^1\.\.\([0-9][0-9]*\)$/\1/p' <<<"$out" | tail -1)
        if [ -n "$plan" ] && [ "$n_ok" -eq "$plan" ] && [ "$n_bad" -eq 0 ]; then
            ok "ring, naive, hierarchical allreduce and pair exchange, $p ranks on $p simulated nodes: all $plan planned checks pass"
        else
            not_ok "ring, naive and hierarchical allreduce, $p ranks on $p simulated nodes: $n_ok of ${plan:-no plan} passed, $n_bad failed"
            grep '^not ok\|readv\|Bad address' <<<"$out$err" | head -5 | sed 's/^/# /'
        fi
    done
else
    ok "ring and naive allreduce across simulated nodes # SKIP ${why#simcluster: }"
fi

# A training job on the naive allreduce, 2 and 3 learners: it finishes, and
# every learner's ring counters are exactly the algorithm's traffic. Each
# round moves the gradient and the stop flag, M + 1 floats, with M for the
# small config's [16, 16] network on CartPole (4 observations, 2 actions)
# worked out here from the layer sizes: learner 0 (the driver) sends and
# receives (L-1) 4 (M+1) bytes a round, every other learner 4 (M+1); all
# leave after the same round.
M=$((4 * 16 + 16 + 16 * 16 + 16 + 16 * 2 + 2))
naive_check() {
    python3 - "$@" <<'EOF2'
import json, sys
path, L, M = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
s = json.load(open(path))
bad = []
learners = sorted(s["roles"]["learner"], key=lambda ln: ln["index"])
if len(learners) != L:
    bad.append("%d learners reported, expected %d" % (len(learners), L))
rounds = {ln["index"]: ln.get("ring", {}).get("rounds", 0) for ln in learners}
if len(set(rounds.values())) != 1 or 0 in rounds.values():
    bad.append("rounds differ or are 0: %s" % rounds)
for ln in learners:
    ring = ln.get("ring", {})
    n = ring.get("rounds", 0)
    peers = L - 1 if ln["index"] == 0 else 1
    want = peers * 4 * (M + 1) * n
    for key in ("bytes_sent", "bytes_recv"):
        if ring.get(key) != want:
            bad.append("learner %d: %s %s, expected %d = %d x 4 x %d x %d rounds"
                       % (ln["index"], key, ring.get(key), want, peers, M + 1, n))
    for key in ("msgs_sent", "msgs_recv"):
        if ring.get(key) != peers * n:
            bad.append("learner %d: %s %s, expected %d" % (ln["index"], key, ring.get(key), peers * n))
if s["bytes_sent"]["ring"] != sum(ln["ring"]["bytes_sent"] for ln in learners if "ring" in ln):
    bad.append("bytes_sent.ring %s is not the learners' sum" % s["bytes_sent"]["ring"])
if bad:
    print("# " + "; ".join(bad)); sys.exit(1)
print("# learner 0 sent %d bytes in %d rounds" % (learners[0]["ring"]["bytes_sent"], learners[0]["ring"]["rounds"]))
EOF2
}
for L in 2 3; do
    name="naive-L$L"
    job "$name" --set sync.mode=allreduce --set sync.allreduce_impl=naive --set roles.param_servers=0 \
        --set roles.learners=$L
    expect_rc "$name: exit status 0" 0
    s="$RUN/summary.json"
    if [ ! -f "$s" ]; then not_ok "$name: summary.json written"; continue; fi
    expect_eq "$name: summary says allreduce_impl naive" "$(jget "$s" allreduce_impl)" naive
    check "$name: learner 0 moves (L-1) 4 (M+1) bytes a round, the others 4 (M+1) (M = $M)" \
        naive_check "$s" "$L" "$M"
done

# A training job on the hierarchical allreduce, 2 learners on this one node:
# it finishes, both learners made the same number of rounds (and some),
# and the node's sum went through shared memory only: no allreduce bytes
# through MPI on either learner (the leaders' ring has one node to span).
hier_check() {
    python3 - "$@" <<'EOF2'
import json, sys
s = json.load(open(sys.argv[1]))
learners = sorted(s["roles"]["learner"], key=lambda ln: ln["index"])
rings = [ln.get("ring", {}) for ln in learners]
rounds = [r.get("rounds", 0) for r in rings]
moved = [(r.get("bytes_sent"), r.get("bytes_recv"), r.get("msgs_sent"), r.get("msgs_recv")) for r in rings]
bad = []
if len(learners) != 2:
    bad.append("%d learners reported" % len(learners))
if len(set(rounds)) != 1 or 0 in rounds:
    bad.append("rounds differ or are 0: %s" % rounds)
if any(m != (0, 0, 0, 0) for m in moved) or s["bytes_sent"]["ring"] != 0:
    bad.append("MPI traffic on one node: %s, bytes_sent.ring %s" % (moved, s["bytes_sent"]["ring"]))
if bad:
    print("# " + "; ".join(bad)); sys.exit(1)
print("# %d rounds on each learner" % rounds[0])
EOF2
}
name="hier-L2"
job "$name" --set sync.mode=allreduce --set sync.allreduce_impl=hierarchical --set roles.param_servers=0 \
    --set roles.learners=2
expect_rc "$name: exit status 0" 0
s="$RUN/summary.json"
if [ -f "$s" ]; then
    expect_eq "$name: summary says allreduce_impl hierarchical" "$(jget "$s" allreduce_impl)" hierarchical
    check "$name: equal rounds on both learners, no MPI traffic for the node's sum" hier_check "$s"
else
    not_ok "$name: summary.json written"
fi

# gorila bench allreduce: one JSON line per size, the ring and the naive
# algorithm equal to MPI_Allreduce on every size, the config's network size
# among them. (Times are not checked.)
# shellcheck disable=SC2086 # $MPIRUN (tests/mpilib.sh) is a command line: split on purpose
run_cmd timeout 60 $MPIRUN -np 2 "$GORILA" bench allreduce --max-floats 4096 --seconds 0.05 --json \
    --config "$TEST_ROOT/configs/cartpole.yaml"
expect_rc "bench allreduce: exit status 0" 0
rows=$(grep -c '"bench":"allreduce"' <<<"$out")
expect_eq "bench allreduce: rows for 1024, 4096 and the network's 4610 floats" "$rows" 3
check "bench allreduce: the network row is marked" grep -q '"floats":4610,"bytes":18440,"ranks":2,"network_size":true' <<<"$out"
expect_eq "bench allreduce: the ring equals MPI_Allreduce on every size" "$(grep -c '"ring_equals_mpi":true' <<<"$out")" 3
expect_eq "bench allreduce: the naive allreduce equals MPI_Allreduce on every size" \
    "$(grep -c '"naive_equals_mpi":true' <<<"$out")" 3
expect_eq "bench allreduce: the hierarchical allreduce equals MPI_Allreduce on every size" \
    "$(grep -c '"hier_us":[0-9.]*,"hier_time_ratio":[0-9.]*,"hier_time_ratio_ring":[0-9.]*,"hier_equals_mpi":true' <<<"$out")" 3
check "bench allreduce: naive timed beside ring and MPI" grep -q '"naive_us":[0-9.]*,"naive_algbw_gbs":[0-9.]*,"naive_busbw_gbs":[0-9.]*,"naive_time_ratio":[0-9.]*' <<<"$out"
expect_eq "bench allreduce: gossip's pair exchange timed on every size" \
    "$(grep -c '"pair_us":[0-9.]*,"pair_time_ratio_ring":[0-9.]*,' <<<"$out")" 3
check "bench allreduce: OpenBLAS configuration printed" grep -q '"bench":"openblas"' <<<"$out"
# shellcheck disable=SC2086 # $MPIRUN (tests/mpilib.sh) is a command line: split on purpose
run_cmd timeout 60 $MPIRUN -np 1 "$GORILA" bench allreduce --max-floats 1024 --seconds 0.05
expect_rc "bench allreduce on one rank: exit status 2" 2
expect_contains "bench allreduce on one rank: says what to run" "$err" "needs 2 or more ranks"
run_cmd "$GORILA" bench allreduce --wait fast
expect_rc "bench allreduce --wait fast: exit status 2" 2
expect_contains "bench allreduce --wait fast: names the choices" "$err" "expected auto, poll or sleep"

# scripts/bench-layouts runs the local reference and the layouts asked for.
run_cmd timeout 120 "$TEST_ROOT/scripts/bench-layouts" --steps 3000 --only 'allreduce 1-1-2-0' --json
expect_rc "bench-layouts --only: exit status 0" 0
expect_eq "bench-layouts --only: the local trainer and one layout" "$(grep -c '"bench":"layout"' <<<"$out")" 2
check "bench-layouts: gradients per second reported" grep -q '"layout":"allreduce 1-1-2-0".*"gradients_per_second":[0-9]' <<<"$out"
# The bound line: A and U of the local run, and (A + U) / max(A, U) from
# them (in [1, 2]); each layout's of_bound is its env steps/s over the
# local rate times the bound, and its learners' busy share is in [0, 1].
check "bench-layouts: the bound from A and U, each layout against it" python3 -c '
import json, sys
rows = [json.loads(x) for x in sys.stdin if x.startswith("{")]
b = [r for r in rows if r["bench"] == "layout_bound"][0]
loc = [r for r in rows if r.get("layout") == "local"][0]
lay = [r for r in rows if r.get("layout") == "allreduce 1-1-2-0"][0]
a, u = b["act_us_per_env_step"], b["learn_us_per_env_step"]
rate = loc["env_steps_per_second"] * b["actor_learner_bound"]
print("#", b, lay["of_bound"], lay["learner_busy"])
sys.exit(not (abs(b["actor_learner_bound"] - (a + u) / max(a, u)) < 1e-9 and 1 <= b["actor_learner_bound"] <= 2
              and abs(b["bound_env_steps_per_second"] - rate) <= 1e-5 * rate
              and abs(lay["of_bound"] - lay["env_steps_per_second"] / b["bound_env_steps_per_second"]) < 0.006
              and 0 <= lay["learner_busy"] <= 1))' <<<"$out"
done_testing
