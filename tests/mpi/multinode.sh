# SPDX-License-Identifier: MIT
# run-all: alone (simulated nodes: network namespaces of fixed names)
# Jobs across hosts (docs/MULTIHOST.md) on a cluster simulated on this
# machine (scripts/simcluster, tests/simcluster/README.md): every sync mode
# with scripts/launch's computed placement across 3 nodes; a node whose
# Open MPI daemon is killed mid-run (and the host stays down: no restart
# into it); a run on 3 nodes resumed on 2; and the bad inputs: an
# unreachable host, a host without gorila, a host with another build, too
# few slots, a run directory the servers' hosts do not share. Each failure
# must end the job with a clear message naming the host, a non-zero status,
# within seconds, and (before the job is known to start) nothing in the run
# directory. Skipped, counted apart, where `unshare` is not permitted (not
# root). Uses pgrep on run names (mpilib.sh start_bg): never run beside
# restart.sh or replayckpt.sh.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../mpilib.sh"

SC="$TEST_ROOT/scripts/simcluster"
HF3="$TEST_ROOT/tests/simcluster/hostfile-3"
HF2="$TEST_ROOT/tests/simcluster/hostfile-2"
if ! why=$("$SC" check 2>&1); then
    echo "ok 1 - jobs across simulated nodes # SKIP ${why#simcluster: }"
    echo "1..1"
    exit 0
fi
read -r -a AGENT <<<"$("$SC" agent-args)"
BUILD_DIR=$(dirname "$GORILA")

host_of() { where_ranks | awk -v r="$1" '$1 == r { print $2 }'; }

# --- every sync mode across 3 nodes, placed by launch -----------------------
# mpi-small: rank 0 coordinator, 1 actor, 2 replay, 3.. learners, then PS.
mode_job() {
    local name=$1 t0
    shift
    t0=$(date +%s.%N)
    job "$name" --hostfile "$HF3" "$@" -- "${AGENT[@]}" --display-map
    echo "# $name: wall time $(elapsed "$t0") s across 3 simulated nodes"
    expect_rc "$name: exit status 0" 0
    expect_eq "$name: ranks on all 3 hosts of the hostfile" "$(nodes_used)" \
        "127.0.0.2 127.0.0.3 127.0.0.4"
    expect_contains "$name: launch printed the placement" "$err" "launch: placement over 3 hosts"
    expect_eq "$name: the actor runs beside its replay shard" "$(host_of 1)" "$(host_of 2)"
    local s="$RUN/summary.json"
    if [ ! -f "$s" ]; then not_ok "$name: summary.json written"; return; fi
    expect_eq "$name: env steps = budget" "$(jget "$s" env_steps)" 3000
    local u
    u=$(jget "$s" updates)
    check "$name: learned ($u updates)" [ "${u:-0}" -gt 50 ]
}
for mode in ps_sync ps_async ps_bounded; do
    mode_job "mn-$mode" --set sync.mode=$mode
    expect_eq "mn-$mode: the learner runs beside its parameter server" "$(host_of 3)" "$(host_of 4)"
done
check_artifacts mn-ps_bounded
mode_job mn-allreduce --set sync.mode=allreduce --set roles.param_servers=0 --set roles.learners=2
expect_eq "mn-allreduce: both learners reported" "$(jcount "$RUN/summary.json" learner)" 2
# mpirun's own mapping (--no-placement) runs too.
job mn-mapped --hostfile "$HF3" --no-placement -- "${AGENT[@]}" --map-by node --display-map
expect_rc "mn-mapped (--no-placement --map-by node): exit status 0" 0
expect_eq "mn-mapped: mpirun's round robin over the nodes" "$(host_of 0) $(host_of 1) $(host_of 2)" \
    "127.0.0.2 127.0.0.3 127.0.0.4"

# --- a node's daemon killed mid-run, the node gone -----------------------------
# The job runs until its budget of seconds, with --max-restarts 1; once it
# has a checkpoint (so a restart would go ahead), 127.0.0.3 goes down (the
# agent refuses it from then on) and its orted (found by the hostname of its
# UTS namespace) is killed. The launcher names the lost host and does not
# restart into it.
orted_of() {
    local p
    for p in $(pgrep -x orted); do
        [ "$(nsenter -t "$p" -u hostname 2>/dev/null)" = "$1" ] && { echo "$p"; return; }
    done
}
down_file="$TEST_TMP/mn-kill.down"
: >"$down_file"
export SIMCLUSTER_DOWN_FILE="$down_file"
start_bg mn-kill --hostfile "$HF3" --max-restarts 1 --set run.max_env_steps=0 --set run.max_seconds=60 \
    --set checkpoint.every_seconds=1 -- "${AGENT[@]}"
unset SIMCLUSTER_DOWN_FILE
if wait_for 30 grep -q "run directory:" "$TEST_TMP/mn-kill.out" &&
    wait_for 30 compgen -G "$RUN/checkpoints/ckpt-*/MANIFEST" >/dev/null; then
    victim=$(orted_of 127.0.0.3)
    check "mn-kill: found the Open MPI daemon of 127.0.0.3 (pid ${victim:-none})" [ -n "$victim" ]
    t0=$(date +%s.%N)
    echo 127.0.0.3 >"$down_file"
    [ -n "$victim" ] && kill -9 "$victim"
    wait_for 20 finished
    took=$(elapsed "$t0")
    check "mn-kill: the job ended $took s after the daemon died (within 20 s)" finished
    wait "$BG"
    rc=$?
    check "mn-kill: non-zero exit status ($rc)" [ "$rc" -ne 0 ]
    kerr=$(cat "$TEST_TMP/mn-kill.err")
    expect_contains "mn-kill: launch names the lost host" "$kerr" "launch: the job lost host 127.0.0.3"
    expect_contains "mn-kill: no restart into the host that stays down, and says how to resume" "$kerr" \
        "launch: not restarting: host 127.0.0.3 does not answer (ssh: connect to host 127.0.0.3 port 22: No route to host;"
    expect_eq "mn-kill: mpirun started once" "$(grep -c '^launch: mpirun ' <<<"$kerr")" 1
    sleep 1
    check "mn-kill: no rank of the job left running" [ -z "$(pgrep -f "run.name=mn-kill")" ]
else
    not_ok "mn-kill: the job started and checkpointed"
    kill "$BG" 2>/dev/null
    wait "$BG"
fi

# --- a run on 3 nodes resumed on 2 -------------------------------------------
job mn-move --hostfile "$HF3" --set checkpoint.save_replay=true -- "${AGENT[@]}"
expect_rc "mn-move: first part on 3 nodes: exit status 0" 0
steps1=$(jget "$RUN/summary.json" env_steps)
run_cmd timeout --kill-after=5 120 "$TEST_ROOT/scripts/launch" --resume "$RUN" --set run.max_env_steps=6000 \
    --hostfile "$HF2" -- "${AGENT[@]}" --display-map
expect_rc "mn-move: resumed on 2 nodes: exit status 0" 0
expect_contains "mn-move: placed over the 2 hosts" "$err" "launch: placement over 2 hosts"
expect_eq "mn-move: the resumed ranks ran on the 2 hosts" "$(nodes_used)" \
    "127.0.0.2 127.0.0.3"
expect_contains "mn-move: resumed from the checkpoint written on 3 nodes" "$out" "resuming from $RUN/checkpoints/ckpt-"
expect_contains "mn-move: with the replay shard's file" "$out" "replay transitions in 1 file"
check "mn-move: the run directory probe left nothing behind" [ -z "$(find "$RUN" "$RUNS" -maxdepth 1 -name '.gorila-probe-*')" ]
expect_eq "mn-move: env steps continue from $steps1 to the new budget" "$(jget "$RUN/summary.json" env_steps)" 6000
check_artifacts mn-move

# --- bad input: clear errors within seconds, nothing in the run directory ---
# bad NAME SECONDS NEEDLE [env...] -- [launch args]: the job must fail
# (not time out) within SECONDS, say NEEDLE, and leave no run directory.
bad() {
    local name=$1 limit=$2 needle=$3 t0 envs=()
    shift 3
    while [ $# -gt 0 ] && [ "$1" != -- ]; do envs+=("$1"); shift; done
    shift
    RUN="$RUNS/$name"
    rm -rf "$RUN"
    t0=$(date +%s.%N)
    run_cmd env ${envs[@]+"${envs[@]}"} timeout --kill-after=5 60 "$TEST_ROOT/scripts/launch" "$SMALL" \
        --set run.name="$name" --set run.out_dir="$RUNS" "$@"
    local took
    took=$(elapsed "$t0")
    expect_fail "$name: fails"
    check "$name: within $limit s ($took s)" awk -v t="$took" -v l="$limit" 'BEGIN { exit !(t <= l) }'
    expect_contains "$name: says why" "$out$err" "$needle"
    check "$name: nothing written to the run directory" [ ! -e "$RUN" ]
}
bad mn-down 20 "127.0.0.4" SIMCLUSTER_DOWN=127.0.0.4 -- --hostfile "$HF3" -- "${AGENT[@]}"
expect_contains "mn-down: launch names the host that does not answer, with ssh's reason" "$err" \
    "launch: error: host 127.0.0.4 does not answer (ssh: connect to host 127.0.0.4 port 22: No route to host;"
expect_rc "mn-down: exit status 2 (refused before mpirun)" 2
expect_eq "mn-down: mpirun never started (no Open MPI text naming other hosts)" \
    "$(grep -c -e '^launch: mpirun ' -e ORTE <<<"$out$err")" 0
bad mn-no-gorila 20 "127.0.0.3" SIMCLUSTER_MOUNTS="127.0.0.3:$BUILD_DIR" -- --hostfile "$HF3" -- "${AGENT[@]}"
expect_contains "mn-no-gorila: the missing executable is named" "$out$err" "$GORILA"
bad mn-mixed 20 "127.0.0.4 (rank" SIMCLUSTER_MOUNTS="127.0.0.4:$GORILA:$BUILD_DIR/tests/gorila-other-build" -- \
    --hostfile "$HF3" -- "${AGENT[@]}"
expect_contains "mn-mixed: refused as different builds" "$err" "the job's ranks run different builds of gorila"
expect_contains "mn-mixed: names the other build" "$err" "(source 0th3r0bui1d0): 127.0.0.4"
expect_rc "mn-mixed: exit status 2 (bad input: no restart)" 2
bad mn-no-room 5 "the hosts have 3 slots for the job's 5 ranks" -- --host 127.0.0.2:2,127.0.0.3 -- "${AGENT[@]}"
bad mn-no-room-mapped 5 "the hosts have 3 slots for the job's 5 ranks" -- --host 127.0.0.2:2,127.0.0.3 --no-placement \
    -- "${AGENT[@]}"
bad mn-unknown-host 5 "host no-such-host.invalid does not resolve" -- --host 127.0.0.2:4,no-such-host.invalid:2 \
    -- "${AGENT[@]}"

# The servers' hosts do not see the run directory (a local disk, not shared):
# found before anything is trained. Every rank ends with status 2 (a set-up
# fault, like mixed builds), the coordinator naming each host that does not
# share it, its writing ranks (the PS, and the replay shard that writes with
# checkpoint.save_replay) and the directory; no run directory is created.
mkdir -p "$RUNS"
place=$("$GORILA" config place "$SMALL" --hosts 127.0.0.2:2,127.0.0.3:2,127.0.0.4:2)
coord=$(awk '$2 == "coordinator" { print $4 }' <<<"$place")
ps_host=$(awk '$2 == "ps" { print $4 }' <<<"$place")
replay_host=$(awk '$2 == "replay" { print $4 }' <<<"$place")
private=""
for h in 127.0.0.2 127.0.0.3 127.0.0.4; do [ "$h" != "$coord" ] && private+=" $h:$RUNS"; done
RUN="$RUNS/mn-private"
rm -rf "$RUN"
run_cmd env SIMCLUSTER_MOUNTS="$private" timeout --kill-after=5 60 "$TEST_ROOT/scripts/launch" "$SMALL" \
    --set run.name=mn-private --set run.out_dir="$RUNS" --set checkpoint.save_replay=true --hostfile "$HF3" \
    -- "${AGENT[@]}"
expect_rc "mn-private: a run directory not shared: exit status 2 (set-up fault)" 2
expect_contains "mn-private: names the PS's host, rank and the directory" "$err" \
    "gorila: error: $ps_host (rank 4 ps 0) does not share run.out_dir $RUNS with the coordinator on $coord"
expect_contains "mn-private: names the replay shard's host and rank" "$err" "gorila: error: $replay_host (rank 2 replay 0)"
expect_contains "mn-private: says what must be shared" "$err" \
    "every host that runs a parameter server or a replay shard writes checkpoint files into the run directory"
expect_eq "mn-private: stopped before training (no role started, no run directory line)" \
    "$(grep -c -e '^job: ' -e '^run directory: ' <<<"$out")" 0
check "mn-private: no run directory created" [ ! -e "$RUN" ]
check "mn-private: no probe file left in run.out_dir" [ -z "$(find "$RUNS" -maxdepth 1 -name '.gorila-probe-*')" ]

done_testing
