# SPDX-License-Identifier: MIT
# run-all: alone (simulated nodes: network namespaces of fixed names)
# A cluster of 3 nodes simulated on this machine (scripts/simcluster,
# tests/simcluster/README.md): each host of tests/simcluster/hostfile-3 is
# started in a UTS namespace of its own, so Open MPI takes it for a node of
# its own (shared memory within it, TCP on loopback between nodes). Skipped,
# counted apart, where `unshare --uts` is not permitted (not root).
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../mpilib.sh"

SC="$TEST_ROOT/scripts/simcluster"
HOSTS=(127.0.0.2 127.0.0.3 127.0.0.4)
if ! why=$("$SC" check 2>&1); then
    echo "ok 1 - simulated cluster # SKIP ${why#simcluster: }"
    echo "1..1"
    exit 0
fi
read -r -a SCARGS <<<"$("$SC" mpirun-args 3)"

# Every rank runs `hostname`: 6 ranks, 2 on each simulated node.
# shellcheck disable=SC2086 # $MPIRUN is a list of words
run_cmd timeout --kill-after=5 60 $MPIRUN -np 6 --map-by node "${SCARGS[@]}" hostname
expect_rc "hostname across the hostfile: exit status 0" 0
expect_eq "ranks see the 3 hosts of the hostfile as their hostnames" "$(sort <<<"$out" | uniq -c | awk '{print $2 "x" $1}' | xargs)" \
    "${HOSTS[0]}x2 ${HOSTS[1]}x2 ${HOSTS[2]}x2"


# sim_job NAME [launch args...]: the small job across the 3 nodes, one rank
# per node in turn (--map-by node), its wall time as a TAP comment (timing
# belongs in benchmarks: scripts/bench-multinode; none asserted here).
sim_job() {
    local name=$1 t0
    shift
    t0=$(date +%s.%N)
    job "$name" "$@" -- "${SCARGS[@]}" --map-by node --display-map
    echo "# $name: wall time $(elapsed "$t0") s across 3 simulated nodes"
    expect_rc "$name: exit status 0" 0
    expect_eq "$name: ranks placed on all 3 simulated nodes" "$(nodes_used)" "${HOSTS[*]}"
    local s="$RUN/summary.json"
    if [ ! -f "$s" ]; then not_ok "$name: summary.json written"; return; fi
    expect_eq "$name: env steps = budget" "$(jget "$s" env_steps)" 3000
    expect_eq "$name: stopped by budget" "$(jget "$s" stop_reason)" budget
    local u
    u=$(jget "$s" updates)
    check "$name: learned ($u updates)" [ "${u:-0}" -gt 50 ]
    check "$name: final checkpoint" [ -s "$RUN/checkpoints/latest" ]
}

sim_job sim-ps-sync --set sync.mode=ps_sync
sim_job sim-allreduce --set sync.mode=allreduce --set roles.param_servers=0 --set roles.learners=2
expect_eq "sim-allreduce: both learners reported" "$(jcount "$RUN/summary.json" learner)" 2
# A Python environment across the nodes: scripts/launch forwards PYTHONPATH
# to every rank (the embedded interpreter finds tests/pyenv's chain there).
if PYTHONPATH="$TEST_ROOT/tests/pyenv" "$GORILA" env rollout python:chain:make --episodes 1 2>&1 |
    grep -q "built without Python"; then
    ok "sim-python: a Python environment across 3 simulated nodes # SKIP built with make PYTHON=0"
else
    PYTHONPATH="$TEST_ROOT/tests/pyenv" sim_job sim-python --set env.name=python:chain:make
    check "sim-python: summary.json names the Python environment" grep -q '"env": "python:chain:make"' "$RUN/summary.json"
fi

done_testing
