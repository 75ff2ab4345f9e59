# Checkpoints, restarts and signals with real mpirun jobs:
#  - a killed actor ends the job with a non-zero status (never a hang) and
#    a restart resumes from the last checkpoint with its counters, even with
#    another number of actors and replay shards;
#  - scripts/launch --max-restarts restarts a failed job by itself;
#  - resume equality: the parameters, target and optimizer state after a
#    resume are those saved, bit for bit, also when re-sharded over another
#    number of parameter servers;
#  - SIGUSR1 checkpoints and keeps going; SIGTERM stops cleanly.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../mpilib.sh"
cd "$TEST_ROOT" || exit 1

have_ckpt() { [ -s "$RUN/checkpoints/latest" ]; }

# --- a killed actor ---------------------------------------------------------
start_bg killed --set run.max_env_steps=0 --set run.max_seconds=60 --set checkpoint.every_seconds=0.3
if wait_for 60 have_ckpt; then ok "killed: a checkpoint is written while running"; else not_ok "killed: checkpoint"; fi
actor=$(rank_pid killed 1)
check "killed: found the actor's process ($actor)" [ -n "$actor" ]
kill -9 "$actor" 2>/dev/null
if wait_for 60 finished; then ok "killed: the job ends (no hang)"; else
    not_ok "killed: the job ends (no hang)"
    kill -9 "$BG"
fi
wait "$BG"
rc=$?
check "killed: launcher exits non-zero ($rc)" [ "$rc" -ne 0 ]
steps=$(manifest env_steps)
updates=$(manifest updates)
check "killed: the checkpoint has counters ($steps env steps, $updates updates)" [ "${updates:-0}" -gt 0 ]
run_cmd timeout --kill-after=5 120 "$TEST_ROOT/scripts/launch" --resume "$RUN" \
    --set run.max_env_steps=$((steps + 2000)) --set roles.actors=2 --set roles.replay_shards=2
expect_rc "killed: resumed with 2 actors and 2 replay shards" 0
expect_contains "killed: resumes with the checkpoint's counters" "$out" \
    "$steps env steps, $updates updates"
expect_eq "killed: summary says resumed" "$(jget "$RUN/summary.json" resumed)" true
expect_eq "killed: runs on to the new budget" "$(jget "$RUN/summary.json" env_steps)" $((steps + 2000))
u2=$(jget "$RUN/summary.json" updates)
check "killed: updates continue from the checkpoint ($updates -> $u2)" [ "$u2" -gt "$updates" ]

# --- --max-restarts ---------------------------------------------------------
# A time budget, not a step budget: the job must still be running when the
# actor is killed, however fast the machine is (run.max_seconds counts the
# run's whole time, across restarts).
start_bg restarts --set run.max_env_steps=0 --set run.max_seconds=3 --set checkpoint.every_seconds=0.3 --max-restarts 1
wait_for 60 have_ckpt
kill -9 "$(rank_pid restarts 1)" 2>/dev/null
wait_for 120 finished || kill -9 "$BG"
wait "$BG"
expect_eq "max-restarts: the job completes after one restart (exit status)" "$?" 0
expect_contains "max-restarts: launcher restarted it" "$(cat "$TEST_TMP/restarts.err")" "restart 1 of 1 from"
expect_eq "max-restarts: ran to its time limit" "$(jget "$RUN/summary.json" stop_reason)" time
expect_eq "max-restarts: summary says resumed" "$(jget "$RUN/summary.json" resumed)" true

# --- resume equality ----------------------------------------------------------
# same_shard A B: two shard files hold the same state, bit for bit: the whole
# file but the header's wall time (bytes 176..183), checkpoint number
# (reserved[2], 200..207) and CRC (252..255), so the versions and the run id
# in the header count too (docs/CHECKPOINT.md).
same_shard() {
    cmp -s <(head -c 176 "$1") <(head -c 176 "$2") &&
        cmp -s <(head -c 200 "$1" | tail -c +185) <(head -c 200 "$2" | tail -c +185) &&
        cmp -s <(head -c 252 "$1" | tail -c +209) <(head -c 252 "$2" | tail -c +209) &&
        cmp -s <(tail -c +257 "$1") <(tail -c +257 "$2")
}
job equal --set roles.actors=3 --set roles.replay_shards=2 --set roles.learners=2 --set roles.param_servers=3
expect_rc "equal: first run" 0
c1="$RUN/checkpoints/$(cat "$RUN/checkpoints/latest")"
steps=$(manifest env_steps)
"$GORILA" eval "$c1" --episodes 1 --export "$TEST_TMP/equal-1.bin" >/dev/null
# A resume of a run that met its stop condition says so and writes nothing.
sum1=$(cat "$RUN/summary.json")
run_cmd timeout --kill-after=5 120 "$TEST_ROOT/scripts/launch" --resume "$RUN"
expect_rc "complete: resume of a finished run exits 0" 0
expect_contains "complete: says it is already complete" "$out" "is already complete (budget"
expect_contains "complete: says which limit to raise" "$out" "raise run.max_env_steps or run.max_updates with --set"
expect_eq "complete: no new checkpoint" "$RUN/checkpoints/$(cat "$RUN/checkpoints/latest")" "$c1"
check "complete: summary.json untouched" [ "$sum1" = "$(cat "$RUN/summary.json")" ]
# notrain: --set options for a resume that loads, applies no update and
# saves again: no env-step budget (actors never finish, so the learners
# never drain replay), replay.min_size at the whole capacity (distributed
# replay is not checkpointed: it starts empty and the learners wait for
# 5,000 new transitions), and a time limit one microsecond past the
# checkpoint's wall time, so the first look at the clock stops the job.
notrain() {
    local w
    w=$(awk -v w="$(manifest wall_seconds)" 'BEGIN { printf "%.9f", w + 1e-6 }')
    NOTRAIN=(--set run.max_env_steps=0 --set run.max_seconds="$w" --set replay.min_size=5000)
}
notrain
run_cmd timeout --kill-after=5 120 "$TEST_ROOT/scripts/launch" --resume "$RUN" "${NOTRAIN[@]}"
expect_rc "equal: resume with no update to apply" 0
c2="$RUN/checkpoints/$(cat "$RUN/checkpoints/latest")"
check "equal: a new checkpoint was written" [ "$c1" != "$c2" ]
for p in 0 1 2; do
    if same_shard "$c1/ps-$p.ckpt" "$c2/ps-$p.ckpt"; then
        ok "equal: shard $p identical after resume, bit for bit"
    else not_ok "equal: shard $p identical after resume"; fi
done
notrain
run_cmd timeout --kill-after=5 120 "$TEST_ROOT/scripts/launch" --resume "$RUN" "${NOTRAIN[@]}" \
    --set roles.param_servers=2
expect_rc "equal: resume re-sharded over 2 parameter servers" 0
c3="$RUN/checkpoints/$(cat "$RUN/checkpoints/latest")"
expect_eq "equal: re-sharded checkpoint has 2 shards" "$(ls "$c3"/ps-*.ckpt | wc -l)" 2
"$GORILA" eval "$c3" --episodes 1 --export "$TEST_TMP/equal-3.bin" >/dev/null
if cmp -s "$TEST_TMP/equal-1.bin" "$TEST_TMP/equal-3.bin"; then ok "equal: re-sharded parameters equal the saved ones"; else
    not_ok "equal: re-sharded parameters equal the saved ones"; fi

# Allreduce: every learner restores the whole network, learner 0 saves it.
job equal-ar --set sync.mode=allreduce --set roles.param_servers=0 --set roles.learners=2
expect_rc "equal-ar: first run (allreduce)" 0
c1="$RUN/checkpoints/$(cat "$RUN/checkpoints/latest")"
notrain
run_cmd timeout --kill-after=5 120 "$TEST_ROOT/scripts/launch" --resume "$RUN" "${NOTRAIN[@]}"
expect_rc "equal-ar: resume with no update to apply" 0
c2="$RUN/checkpoints/$(cat "$RUN/checkpoints/latest")"
if [ "$c1" != "$c2" ] && same_shard "$c1/ps-0.ckpt" "$c2/ps-0.ckpt"; then
    ok "equal-ar: learner 0's shard identical after resume, bit for bit"
else not_ok "equal-ar: learner 0's shard identical after resume ($c1, $c2)"; fi

# Every checkpoint of the run damaged (one byte of each shard 0 flipped):
# no fallback is left, the resume ends with exit status 4, naming the damage.
for d in "$RUN"/checkpoints/ckpt-*; do
    printf '\xff' | dd of="$d/ps-0.ckpt" bs=1 seek=300 conv=notrunc status=none
done
run_cmd timeout --kill-after=5 120 "$TEST_ROOT/scripts/launch" --resume "$RUN" --set run.max_env_steps=0 \
    --set run.max_seconds=100
expect_rc "damaged: resume with every checkpoint damaged exits 4 (GORILA_EXIT_CKPT_READ)" 4
expect_contains "damaged: says no intact checkpoint is left" "$err" "no intact checkpoint in"

# --- signals --------------------------------------------------------------------
# The launcher runs in a session of its own, so that a SIGTERM to its whole
# process group (what a terminal's Ctrl-C or a batch system does) can be
# tested: mpirun must not see it, only the launcher's clean stop.
start_bg() {
    local name=$1
    shift
    RUN="$RUNS/$name"
    rm -rf "$RUN"
    setsid "$TEST_ROOT/scripts/launch" "$SMALL" --set run.name="$name" --set run.out_dir="$RUNS" "$@" \
        >"$TEST_TMP/$name.out" 2>"$TEST_TMP/$name.err" &
    BG=$!
}
start_bg signals --set run.max_env_steps=0 --set run.max_seconds=60
wait_for 60 grep -q "run directory" "$TEST_TMP/signals.out"
sleep 1
kill -USR1 "$BG"
if wait_for 30 have_ckpt; then ok "SIGUSR1: checkpoint written while the job goes on"; else not_ok "SIGUSR1: checkpoint"; fi
check "SIGUSR1: job still running" kill -0 "$BG"
kill -TERM -- "-$BG"
wait_for 60 finished || kill -9 "$BG"
wait "$BG"
expect_eq "SIGTERM to the launcher's process group: clean exit" "$?" 0
expect_eq "SIGTERM: stop reason" "$(jget "$RUN/summary.json" stop_reason)" signal
n=$(ls -d "$RUN"/checkpoints/ckpt-* | wc -l)
check "SIGTERM: final checkpoint after the SIGUSR1 one ($n)" [ "$n" -ge 2 ]
done_testing
