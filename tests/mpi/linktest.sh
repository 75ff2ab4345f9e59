# SPDX-License-Identifier: MIT
# run-all: alone (simulated nodes and shaped links: namespaces of fixed names, rates measured)
# The shaped simulated network (scripts/simcluster linktest and shaped-run,
# tests/simcluster/README.md): nodes in network namespaces of their own,
# joined to a bridge inside a private namespace by veth pairs with tbf at
# the link's rate on both ends. Checks the bad inputs first (a rate that
# does not parse, too many nodes, a machine that refuses qdiscs or
# namespaces, simulated with a failing tc or unshare first in PATH: one
# line, exit 2, nothing started), then that linktest measures 100 Mbit/s
# links within 10% each way (and shared links split), and that a small
# CartPole job runs across 2 shaped nodes with its traffic through their
# shapers. The parts that need the kernel's namespaces and tbf are skipped,
# counted apart, where it refuses them (not root, no tbf).
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../mpilib.sh"

SC="$TEST_ROOT/scripts/simcluster"
# The state directory of a shaped run (simcluster-net.*) goes in here: it
# must be gone afterwards.
SCTMP="$TEST_TMP/linktest-tmp"
rm -rf "$SCTMP"
mkdir -p "$SCTMP"
leftovers() { find "$SCTMP" -maxdepth 1 -name 'simcluster-net.*' | wc -l; }

# bad NAME WANT ARGS...: refused with exit 2, one line on stderr that
# contains WANT, nothing on stdout, nothing left behind.
bad() {
    local name=$1 want=$2
    shift 2
    TMPDIR=$SCTMP run_cmd timeout 30 "$@"
    expect_rc "$name: exit status 2" 2
    expect_eq "$name: one line on stderr, none on stdout" "$(wc -l <<<"$err") ${#out}" "1 0"
    expect_contains "$name: says why" "$err" "$want"
    expect_eq "$name: nothing started" "$(leftovers)" 0
}
bad "--link fast" "--link fast is not a rate" "$SC" linktest --link fast
bad "--nodes 17" "--nodes 17: linktest takes 2 to 16 nodes" "$SC" linktest --nodes 17
bad "shaped-run --nodes 40" "--nodes 40: shaped-run takes 1 to 16 nodes" "$SC" shaped-run --nodes 40 -- true
# A machine that refuses tbf, or namespaces: a tc, an unshare that fail as
# they do there (the message is the same as without root: "shaped network").
fake="$TEST_TMP/linktest-fake"
mkdir -p "$fake/tc" "$fake/unshare"
printf '#!/bin/sh\necho "Error: Specified qdisc kind is unknown." >&2\nexit 2\n' >"$fake/tc/tc"
printf '#!/bin/sh\necho "unshare: unshare failed: Operation not permitted" >&2\nexit 1\n' >"$fake/unshare/unshare"
chmod +x "$fake/tc/tc" "$fake/unshare/unshare"
bad "no tbf" "shaped network" env PATH="$fake/tc:$PATH" "$SC" linktest --link 100mbit
bad "no namespaces" "shaped network" env PATH="$fake/unshare:$PATH" "$SC" shaped-run -- true
# scripts/compare --simcluster refuses what shaped-run would (one line, exit 2, no --out made)
C="$TEST_ROOT/scripts/compare"
printf 'h1 slots=2\n' >"$TEST_TMP/compare-hosts"
for args in "--simcluster 40" "--simcluster 2 --link fast" "--link 1gbit" "--simcluster 2 --hostfile $TEST_TMP/compare-hosts" \
    "--placement spread" "--simcluster 2 --placement wide" "--hostfile $TEST_TMP/no-such-hostfile" \
    "--hostfile $TEST_TMP/compare-hosts --link 1gbit"; do
    # shellcheck disable=SC2086 # each case is options and their values
    run_cmd "$C" configs/cartpole.yaml $args --out "$TEST_TMP/compare-bad"
    expect_rc "compare $args: exit status 2" 2
    expect_eq "compare $args: one line" "$(wc -l <<<"$err")" 1
    check "compare $args: nothing made" [ ! -e "$TEST_TMP/compare-bad" ]
done

if ! why=$("$SC" check --shaped 2>&1); then
    ok "linktest at 100 Mbit/s # SKIP ${why#simcluster: }"
    ok "a job across 2 shaped nodes # SKIP ${why#simcluster: }"
    done_testing
    exit
fi

# --- linktest: 3 nodes at 100 Mbit/s, half a second per transfer ---------
t0=$(date +%s.%N)
TMPDIR=$SCTMP run_cmd timeout --kill-after=5 60 "$SC" linktest --link 100mbit --nodes 3 --seconds 0.5
echo "# linktest: $(elapsed "$t0") s"
while IFS= read -r line; do echo "# $line"; done <<<"$out"
expect_rc "linktest: exit status 0" 0
expect_contains "linktest: every rate holds" "$out" "linktest: ok: all 15 rates hold at 100 Mbit/s"
# passed WHAT: the verdict line of WHAT says ok
passed() { grep -qF "  ok    $1 " <<<"$out"; }
for h in 10.77.0.1 10.77.0.2 10.77.0.3; do
    check "linktest: $h out within 10% (its own shaper)" passed "$h out"
    check "linktest: $h in within 10% (the bridge's shaper)" passed "$h in"
done
check "linktest: node to node" passed "10.77.0.3 -> 10.77.0.1"
check "linktest: two senders share a node's ingress" passed "sum into 10.77.0.1"
check "linktest: two receivers share a node's egress" passed "sum out of 10.77.0.1"
expect_eq "linktest: no FAIL line" "$(grep -c FAIL <<<"$out$err")" 0
expect_eq "linktest: its namespaces and files are gone" "$(leftovers)" 0

# --- a small job across 2 shaped nodes, with the launcher -----------------
# After the job, each node's shaper must have carried its share: bytes sent
# through the tbf on each node's end of its link, as tc counts them.
RUN="$RUNS/shaped"
rm -rf "$RUN"
t0=$(date +%s.%N)
TMPDIR=$SCTMP run_cmd timeout --kill-after=5 120 "$SC" shaped-run --link 1gbit --nodes 2 --slots 3 -- bash -c '
    "$1" "$2" --set run.max_env_steps=2000 --set run.stop_when_solved=false --set eval.episodes=2 --set run.out_dir="$3" --set run.name=shaped \
        --hostfile "$SIMCLUSTER_HOSTFILE" -- $SIMCLUSTER_MPIRUN_ARGS --display-map
    rc=$?
    for h in $SIMCLUSTER_HOSTS; do
        nsenter --net="/proc/$(cat "$SIMCLUSTER_NODES_DIR/$h")/ns/net" tc -s qdisc show dev eth0 |
            awk -v h="$h" "/Sent/ { print \"shaped-bytes\", h, \$2 }"
    done
    exit $rc' shaped-job "$TEST_ROOT/scripts/launch" "$TEST_ROOT/configs/cartpole.yaml" "$RUNS"
echo "# shaped job: $(elapsed "$t0") s across 2 nodes at 1 Gbit/s"
expect_rc "shaped job: exit status 0" 0
expect_eq "shaped job: ranks on both nodes" "$(nodes_used)" "10.77.0.1 10.77.0.2"
s="$RUN/summary.json"
if [ -f "$s" ]; then
    expect_eq "shaped job: env steps = budget" "$(jget "$s" env_steps)" 2000
    expect_eq "shaped job: stopped by budget" "$(jget "$s" stop_reason)" budget
else
    not_ok "shaped job: summary.json written"
fi
for h in 10.77.0.1 10.77.0.2; do
    b=$(awk -v h="$h" '$1 == "shaped-bytes" && $2 == h { print $3 }' <<<"$out")
    check "shaped job: $h sent through its shaper (${b:-no} bytes)" [ "${b:-0}" -gt 10000 ]
done
expect_eq "shaped job: its namespaces and files are gone" "$(leftovers)" 0

# --- scripts/compare --simcluster: every cell's job across the shaped nodes --
# Placed --spread (learner, PS, replay each on a node of its own), the
# network measured first (gorila bench pingpong between two nodes), and the
# report's cost-model sections.
D="$TEST_TMP/compare-shaped"
rm -rf "$D"
TMPDIR=$SCTMP run_cmd timeout --kill-after=5 300 "$C" configs/cartpole.yaml --simcluster 3 --link 1gbit \
    --modes ps_sync,allreduce --learners 1 --seeds 1 --set run.max_env_steps=2000 --set eval.episodes=2 \
    --set checkpoint.every_seconds=0 --out "$D"
expect_rc "compare --simcluster: exit status 0" 0
R=$(cat "$D/report.md" 2>/dev/null)
expect_contains "compare --simcluster: the report states the network and the placement" "$R" \
    "- Network: every job across 3 simulated nodes (\`scripts/simcluster shaped-run\`), each NIC shaped to 1gbit each way, placed by scripts/launch: each learner and each PS shard on a node of its own"
for cell in ps_sync-L1-s1 allreduce-L1-s1; do
    check "compare --simcluster: $cell finished" [ -f "$D/runs/$cell/summary.json" ]
    check "compare --simcluster: $cell ran through shaped-run" grep -q "shaped network: 3 nodes" "$D/logs/$cell.log"
done
check "compare --simcluster: the PS on a node of its own (--spread)" grep -q "launch:   10.77.0.2: ps 0/1$" \
    "$D/logs/ps_sync-L1-s1.log"
check "compare --simcluster: the network measured (a latency and a bandwidth in compare.json)" python3 -c '
import json, sys
m = json.load(open(sys.argv[1]))["network"]["measured"]
print("#", m)
sys.exit(not (0 < m["latency_s"] < 0.1 and 1e6 < m["bandwidth_bytes_per_s"] < 1e9 and m["same_host"] is False))' \
    "$D/compare.json"
expect_contains "compare --simcluster: the report uses the measurement" "$R" "The network, measured before the matrix by"
expect_contains "compare --simcluster: the model beside the PS cell" "$R" "| ps_sync | 1 | 1 | ps | "
expect_contains "compare --simcluster: one learner's allreduce moves nothing" "$R" "no communication (one learner)"
expect_contains "compare --simcluster: the projection" "$R" "## Projection"
check "compare --simcluster: the projection's data" [ -s "$D/plots/projection.csv" ]
expect_eq "compare --simcluster: its namespaces and files are gone" "$(leftovers)" 0

done_testing
