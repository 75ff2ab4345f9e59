#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Stop signals in a distributed job (src/core/run/signals.h, comm.c's STOP_REQ,
# coordinator.c): the launcher's SIGTERM during the held-out test gives the
# test up (final checkpoint, test keys null, test-pending kept) and
# --resume then runs only the test; SIGTERM to one actor's pid, to one
# learner's pid, and to every rank at once (a batch system's cancel) stops
# the job cleanly with a final checkpoint, the log naming the rank.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../mpilib.sh"
cd "$TEST_ROOT" || exit 1

# start_session NAME ARGS...: the launcher in a session of its own (as
# restart.sh does), in the background; $BG.
start_session() {
    local name=$1
    shift
    RUN="$RUNS/$name"
    rm -rf "$RUN"
    setsid timeout --kill-after=5 90 "$TEST_ROOT/scripts/launch" "$SMALL" --set run.name="$name" \
        --set run.out_dir="$RUNS" "$@" >"$TEST_TMP/$name.out" 2>"$TEST_TMP/$name.err" &
    BG=$!
}
# launcher_pid: the launcher under timeout (its child).
launcher_pid() { pgrep -P "$BG" -f scripts/launch; }

# ---- the launcher's SIGTERM during the held-out test ---------------------------
# MountainCar with a huge episode limit: an untrained greedy car never
# reaches the flag, so the held-out test (400 episodes of 10^6 steps) runs
# far longer than the guard; the final evaluation (1 episode) well under a
# second on the small network. test-pending appears with the final checkpoint.
start_session sig-test --set env.name=MountainCar-v0 --set env.max_episode_steps=1000000 --set eval.every_updates=0 \
    --set eval.episodes=1 --set eval.test_episodes=400
check "test: the final checkpoint is committed" wait_for 60 [ -e "$RUN/test-pending" ]
sleep 3
kill -TERM "$(launcher_pid)"
wait "$BG"
expect_eq "test: SIGTERM to the launcher during the test: exit status 0 (124: the test ran on)" "$?" 0
s="$RUN/summary.json"
for k in test_best_return test_final_return solved_test; do
    expect_eq "test: $k is null" "$(jget "$s" "$k")" null
done
skipped=$(jget "$s" test_skipped)
check "test: test_skipped says a signal ($skipped)" grep -q "by a signal" <<<"$skipped"
expect_eq "test: stop reason is the budget" "$(jget "$s" stop_reason)" budget
final=$(jget "$s" final_checkpoint)
check "test: final checkpoint $final present" [ -f "$RUN/$final/MANIFEST" ]
check "test: test-pending stays" [ -e "$RUN/test-pending" ]
run_cmd timeout --kill-after=5 90 "$TEST_ROOT/scripts/launch" --resume "$RUN" --set eval.test_episodes=3
expect_rc "resume: exit status 0" 0
expect_contains "resume: runs only the test" "$out" "training is complete (budget) but its held-out test was not written"
expect_contains "resume: the final line has the test" "$out" "held-out test (3 episodes, seed 54321)"
expect_eq "resume: test_final_return" "$(jget "$s" test_final_return)" -1000000
expect_eq "resume: test_skipped null" "$(jget "$s" test_skipped)" null
check "resume: test-pending removed" [ ! -e "$RUN/test-pending" ]
run_cmd timeout --kill-after=5 90 "$TEST_ROOT/scripts/launch" --resume "$RUN" --set eval.test_episodes=3
expect_contains "resume again: nothing to do" "$out" "is already complete (budget"

# ---- SIGTERM to ranks ------------------------------------------------------------
# rank_signal NAME WHAT RANKS...: a job with no budget, SIGTERM to the pids
# of RANKS once it runs; it must end by itself with 0, a final checkpoint,
# and the coordinator's line naming a rank that got it.
rank_signal() {
    local name=$1 what=$2 r pids=""
    shift 2
    start_session "$name" --set run.max_env_steps=0 --set run.max_seconds=20 --set eval.test_episodes=0
    wait_for 60 grep -qs "run directory" "$TEST_TMP/$name.out"
    sleep 1
    for r in "$@"; do pids="$pids $(rank_pid "$name" "$r")"; done
    # shellcheck disable=SC2086 # a list of pids
    kill -TERM $pids
    wait "$BG"
    expect_eq "$what: SIGTERM to rank(s) $* (pids$pids): exit status 0 (124: ignored)" "$?" 0
    expect_eq "$what: stop reason" "$(jget "$RUN/summary.json" stop_reason)" signal
    final=$(jget "$RUN/summary.json" final_checkpoint)
    check "$what: final checkpoint $final present" [ -f "$RUN/$final/MANIFEST" ]
}
rank_signal sig-actor actor 1
expect_contains "actor: the log names it" "$(cat "$TEST_TMP/sig-actor.err")" \
    "stopping: signal (SIGTERM to rank 1 (actor 0/1))"
rank_signal sig-learner learner 3
expect_contains "learner: the log names it" "$(cat "$TEST_TMP/sig-learner.err")" \
    "stopping: signal (SIGTERM to rank 3 (learner 0/1))"
rank_signal sig-all "every rank" 0 1 2 3 4
expect_contains "every rank: the log names one" "$(cat "$TEST_TMP/sig-all.err")" "stopping: signal (SIGTERM to"
done_testing
