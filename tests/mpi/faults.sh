# SPDX-License-Identifier: MIT
# run-all: alone (a hung rank stopped before run.max_seconds: a deadline against load)
# Faults that must not pass silently in a distributed job:
#   - training that diverges to NaN/Inf ends the job with exit status 5
#     (GORILA_EXIT_DIVERGED), naming the learner, and no checkpoint holds
#     non-finite parameters;
#   - a rank that hangs (SIGSTOP) while the job stops: the coordinator ends
#     the job run.stop_deadline_seconds later with exit status 6
#     (GORILA_EXIT_HUNG), naming the rank;
#   - the job does not outlive scripts/launch killed with SIGKILL.
# Run names carry this shell's pid, so that the processes of a job can be
# told apart from any other job on the machine.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../mpilib.sh"
cd "$TEST_ROOT" || exit 1
LAUNCH="$TEST_ROOT/scripts/launch"

# run_pids NAME: pids of every process (launch, mpirun, ranks) of run NAME.
run_pids() { pgrep -f "run\.name=$1( |\$)"; }

# rank_pid NAME RANK: pid of MPI rank RANK of run NAME (from the rank's
# environment; mpirun's own command line names gorila too).
rank_pid() {
    local p r
    for p in $(run_pids "$1"); do
        r=$({ tr '\0' '\n' <"/proc/$p/environ"; } 2>/dev/null | sed -n 's/^OMPI_COMM_WORLD_RANK=//p')
        [ "$r" = "$2" ] && echo "$p" && return 0
    done
    return 1
}

# wait_running FILE: wait up to 30 s until the coordinator has printed the
# run directory into FILE (launch's stdout). Every rank is then past the
# job's start-up collectives, so stopping one cannot hang the start itself.
wait_running() {
    local _i
    for _i in $(seq 1 150); do
        grep -q "^run directory: " "$1" 2>/dev/null && return 0
        sleep 0.2
    done
    return 1
}

# within X LO HI: LO <= X <= HI.
within() { [ "$1" -ge "$2" ] && [ "$1" -le "$3" ]; }

# cleanup NAME: resume and kill whatever is left of run NAME.
cleanup() {
    local p
    for p in $(run_pids "$1"); do kill -CONT "$p" 2>/dev/null; kill -KILL "$p" 2>/dev/null; done
}

# checkpoints_finite RUN_DIR: every complete checkpoint's parameters are
# finite (exported, read as floats); prints how many it checked.
checkpoints_finite() {
    local d n=0 f="$TEST_TMP/faults-export.bin"
    for d in "$1"/checkpoints/ckpt-*; do
        [ -e "$d/MANIFEST" ] || continue
        "$GORILA" eval "$d" --episodes 1 --export "$f" >/dev/null 2>&1 || return 1
        od -An -v -f "$f" | grep -qiE 'nan|inf' && return 1
        n=$((n + 1))
    done
    echo "$n"
}

# ---- divergence -------------------------------------------------------------
# SGD at lr 10 with no clipping and an unbounded loss (Huber delta 1e6, no
# discount): the Q-values blow up within a few updates, on every run.
diverge=(--set optimizer.kind=sgd --set optimizer.lr=10 --set optimizer.grad_clip=0 --set agent.huber_delta=1e6
    --set agent.gamma=1 --set network.hidden=[16] --set checkpoint.every_updates=1 --set checkpoint.keep=100)
for mode in ps_sync allreduce; do
    extra=()
    [ $mode = allreduce ] && extra=(--set sync.mode=allreduce --set roles.param_servers=0)
    t0=$SECONDS
    job "faults-diverge-$mode-$$" "${diverge[@]}" "${extra[@]}"
    expect_rc "$mode divergence: exit status 5 (GORILA_EXIT_DIVERGED)" 5
    expect_contains "$mode divergence: says what diverged, where" "$err" "training diverged: "
    expect_contains "$mode divergence: names the learner and what to change" "$err" \
        "on learner 0 (rank 3); lower optimizer.lr (now 10)"
    if n=$(checkpoints_finite "$RUN"); then ok "$mode divergence: all $n complete checkpoints hold finite parameters"
    else not_ok "$mode divergence: a checkpoint holds non-finite parameters"; fi
    echo "# $mode divergence: $((SECONDS - t0)) s"
done

# ---- a hung rank during the stop --------------------------------------------
# The actor is stopped with SIGSTOP while the job runs; at run.max_seconds
# the coordinator begins the stop, waits run.stop_deadline_seconds for the
# actor's STOPPED, then names it and ends the job.
name="faults-hang-$$"
RUN="$RUNS/$name"
rm -rf "$RUN"
actor=$("$GORILA" config check "$SMALL" | awk '$2 == "actor" && $3 ~ /^0\// { print $1; exit }')
max_s=4
deadline=3
t0=$SECONDS
timeout --kill-after=5 60 "$LAUNCH" "$SMALL" --set run.name="$name" --set run.out_dir="$RUNS" \
    --set run.max_env_steps=0 --set run.max_seconds=$max_s --set run.stop_deadline_seconds=$deadline \
    --set logging.trace=true >"$TEST_TMP/$name.out" 2>"$TEST_TMP/$name.err" &
lpid=$!
if wait_running "$TEST_TMP/$name.out" && apid=$(rank_pid "$name" "$actor") && kill -STOP "$apid"; then
    ok "hung rank: actor (rank $actor) stopped with SIGSTOP"
else
    not_ok "hung rank: could not find and stop the actor (rank $actor)"
fi
wait "$lpid"
rc=$?
took=$((SECONDS - t0))
err=$(cat "$TEST_TMP/$name.err")
out=$(cat "$TEST_TMP/$name.out")
expect_rc "hung rank: exit status 6 (GORILA_EXIT_HUNG)" 6
expect_contains "hung rank: the stop began at run.max_seconds" "$err" "stopping: time"
expect_contains "hung rank: names the rank that did not answer" "$err" \
    "stop deadline passed: 1 rank did not answer within run.stop_deadline_seconds ($deadline s)"
expect_contains "hung rank: rank number, role, index and what it owes" "$err" "rank $actor (actor 0/1): no STOPPED"
# Start-up, max_seconds, the deadline and mpirun's abort (about 2 s).
check "hung rank: ended after the deadline, within $((max_s + deadline + 10)) s (took $took s)" \
    within "$took" $((max_s + deadline)) $((max_s + deadline + 10))
# logging.trace: the coordinator wrote what had arrived before it gave up
# (the learner's trace; the hung actor, and the servers never told to stop,
# sent none).
check "hung rank: trace.json written, the hung actor listed as missing" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(int(sys.argv[2]) not in d["otherData"]["missing_tracks"])' "$RUN/trace.json" "$actor"
sleep 1
check "hung rank: no process of the job is left" [ -z "$(run_pids "$name")" ]
cleanup "$name"

# ---- a hung PS during a checkpoint when the stop begins ----------------------
# The PS is stopped with SIGSTOP and a checkpoint requested (SIGUSR1 to the
# coordinator): it never answers CKPT_DONE. The stop at run.max_seconds
# first waits for that checkpoint (before any STOP goes out), so the report
# names the PS alone: the actor and learner were not yet asked for anything.
name="faults-hangckpt-$$"
RUN="$RUNS/$name"
rm -rf "$RUN"
ps=$("$GORILA" config check "$SMALL" | awk '$2 == "ps" && $3 ~ /^0\// { print $1; exit }')
timeout --kill-after=5 60 "$LAUNCH" "$SMALL" --set run.name="$name" --set run.out_dir="$RUNS" \
    --set run.max_env_steps=0 --set run.max_seconds=$max_s --set run.stop_deadline_seconds=$deadline \
    --set checkpoint.every_seconds=0 >"$TEST_TMP/$name.out" 2>"$TEST_TMP/$name.err" &
lpid=$!
if wait_running "$TEST_TMP/$name.out" && ppid=$(rank_pid "$name" "$ps") && cpid=$(rank_pid "$name" 0) &&
    kill -STOP "$ppid" && kill -USR1 "$cpid"; then
    ok "hung PS in a checkpoint: PS (rank $ps) stopped, a checkpoint requested"
else
    not_ok "hung PS in a checkpoint: could not find the PS (rank $ps) or the coordinator"
fi
wait "$lpid"
rc=$?
err=$(cat "$TEST_TMP/$name.err")
expect_rc "hung PS in a checkpoint: exit status 6 (GORILA_EXIT_HUNG)" 6
expect_contains "hung PS in a checkpoint: only the PS is named" "$err" \
    "stop deadline passed: 1 rank did not answer within run.stop_deadline_seconds ($deadline s)"
expect_contains "hung PS in a checkpoint: what it owes" "$err" "rank $ps (ps 0/1): no CKPT_DONE"
if grep -q "no STOPPED" <<<"$err"; then
    not_ok "hung PS in a checkpoint: a worker is said to owe STOPPED before STOP went out"
else
    ok "hung PS in a checkpoint: no worker is said to owe STOPPED before STOP went out"
fi
kill -CONT "$ppid" 2>/dev/null
sleep 1
check "hung PS in a checkpoint: no process of the job is left" [ -z "$(run_pids "$name")" ]
cleanup "$name"

# ---- the launcher killed with SIGKILL -----------------------------------------
name="faults-orphan-$$"
RUN="$RUNS/$name"
rm -rf "$RUN"
"$LAUNCH" "$SMALL" --set run.name="$name" --set run.out_dir="$RUNS" --set run.max_env_steps=0 \
    --set run.max_seconds=120 >"$TEST_TMP/$name.out" 2>"$TEST_TMP/$name.err" &
lpid=$!
check "launcher killed: the job is running" wait_running "$TEST_TMP/$name.out"
kill -KILL "$lpid"
wait "$lpid" 2>/dev/null
t0=$SECONDS
while [ -n "$(run_pids "$name")" ] && [ $((SECONDS - t0)) -lt 10 ]; do sleep 0.2; done
left=$(run_pids "$name" | wc -l)
check "launcher killed with SIGKILL: mpirun and every rank gone within 10 s (took $((SECONDS - t0)) s, $left left)" \
    [ "$left" -eq 0 ]
cleanup "$name"

# A full disk under a distributed job: the run directory on a 64 KiB tmpfs
# in a mount namespace of its own (mpirun and every rank inherit it). No
# shard file fits; the job ends with exit status 3, not 0.
mnt="$TEST_TMP/mpi-faults-full"
mkdir -p "$mnt"
if unshare -m true 2>/dev/null; then
    run_cmd timeout --kill-after=5 120 unshare -m sh -c 'mount -t tmpfs -o size=64k tmpfs "$1" && shift && exec "$@"' \
        sh "$mnt" "$TEST_ROOT/scripts/launch" configs/cartpole.yaml --set run.out_dir="$mnt" --set run.name=full \
        --set logging.progress=never --set run.max_env_steps=3000 --set checkpoint.every_updates=250
    expect_rc "disk full (distributed): exit status 3 (GORILA_EXIT_CKPT_WRITE)" 3
    expect_contains "disk full (distributed): says the final checkpoint could not be written" "$err" \
        "gorila: error: the final checkpoint could not be written:"
    expect_contains "disk full (distributed): and why" "$err" "No space left on device"
else
    ok "disk full (distributed): exit status 3 # SKIP cannot create a mount namespace here (unshare -m)"
fi

# A checkpoint that fails on one writer only: the replay shard's
# rank under a 60 KiB file size limit (SIGXFSZ ignored, so the write fails
# with EFBIG) cannot write its replay file once the buffer outgrows it,
# while the parameter server writes its shard. The coordinator removes
# each failed attempt's directory, with the shard it holds; only committed
# checkpoints stay. The replay shard is rank 2 of the small job's layout.
wrap="$TEST_TMP/mpi-faults-fsize.sh"
cat >"$wrap" <<EOF
#!/bin/bash
if [ "\${OMPI_COMM_WORLD_RANK:-}" = 2 ]; then trap '' XFSZ; ulimit -f 60; fi
exec "$GORILA" "\$@"
EOF
chmod +x "$wrap"
GORILA="$wrap" job fsize-$$ --set checkpoint.every_updates=100 --set checkpoint.save_replay=true
expect_rc "replay file too large: the final checkpoint fails, exit status 3" 3
failed=$(sed -n 's/.* warning: checkpoint \([0-9]*\) failed: replay 0 (rank 2).*File too large$/\1/p' <<<"$err" | xargs)
check "replay file too large: checkpoints failed on the replay shard (${failed:-none})" test -n "$failed"
left=""
for n in $failed; do
    d="$RUN/checkpoints/$(printf 'ckpt-%06d' "$n")"
    [ -e "$d" ] && left="$left $d"
done
expect_eq "replay file too large: no failed attempt's directory is left" "$left" ""
expect_eq "replay file too large: every ckpt-* left is committed" \
    "$(find "$RUN/checkpoints" -mindepth 1 -maxdepth 1 -name 'ckpt-*' ! -exec test -f '{}/MANIFEST' ';' -print)" ""

# A CSV that is a link, resumed through scripts/launch: the coordinator
# refuses it (exit status 8, not restarted), the file it points to untouched.
if [ -s "$RUN/checkpoints/latest" ]; then
    printf 'x,y\n1,2\n' >"$TEST_TMP/mpi-faults-outside.csv"
    rm -f "$RUN/eval.csv"
    ln -s "$TEST_TMP/mpi-faults-outside.csv" "$RUN/eval.csv"
    run_cmd timeout --kill-after=5 120 "$LAUNCH" --resume "$RUN" --set run.max_env_steps=5000 --max-restarts 2
    expect_rc "link: eval.csv a link, launch --resume: exit status 8" 8
    expect_contains "link: names it" "$err" "cannot open $RUN/eval.csv: it is a symbolic link"
    expect_contains "link: not restarted" "$err" "launch: not restarting:"
    expect_eq "link: the file it points to is untouched" "$(cat "$TEST_TMP/mpi-faults-outside.csv")" "x,y
1,2"
else
    not_ok "link: the fsize job committed no checkpoint to resume"
fi

done_testing
