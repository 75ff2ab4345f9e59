#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Stop signals and evaluations in the local trainer (src/core/run/signals.h,
# evaluator.h): a SIGINT during the held-out test or a periodic evaluation
# gives it up at once and stops cleanly with a final checkpoint, the test's
# keys null with test_skipped saying why; --resume then runs only the owed
# test; a second signal aborts. MountainCar with a huge episode limit: an
# untrained greedy car never reaches the flag, so every evaluation episode
# runs to the limit and an evaluation lasts far longer than the guard.
source "$(dirname "$0")/../lib.sh"
cd "$TEST_ROOT" || exit 1
RUNS="$TEST_TMP/runs"
COMMON=(configs/local/mountaincar.yaml --set run.out_dir="$RUNS" --set env.max_episode_steps=1000000
    --set logging.progress=never)

# start NAME ARGS...: gorila train in the background under a 90 s guard; $P.
start() {
    RUN="$RUNS/$1"
    rm -rf "$RUN"
    timeout --kill-after=5 90 "$GORILA" train "${COMMON[@]}" --set run.name="$1" "${@:2}" \
        >"$TEST_TMP/$1.out" 2>"$TEST_TMP/$1.err" &
    P=$!
}
# wait_for SECONDS CMD...: poll until CMD succeeds; false after SECONDS.
wait_for() {
    local end=$((SECONDS + $1))
    shift
    until "$@"; do
        [ $SECONDS -ge $end ] && return 1
        sleep 0.05
    done
}
jget() { sed -n "s/^  \"$2\": \(.*\),\{0,1\}$/\1/p" "$1" | sed 's/,$//; s/^"//; s/"$//'; }
has_rows() { [ "$(wc -l 2>/dev/null <"$1" || echo 0)" -ge 2 ]; }

# ---- a SIGINT during the held-out test -------------------------------------
# The final evaluation (1 episode) takes about a second; the test (40
# episodes of 10^6 steps) tens of seconds. test-pending appears when the
# final checkpoint is committed, just before them. On a slow machine the
# signal may still find the final evaluation: the test is then skipped,
# owed all the same.
start test-int --set run.max_env_steps=3000 --set eval.every_updates=0 --set eval.episodes=1 \
    --set eval.test_episodes=40
if wait_for 60 [ -e "$RUN/test-pending" ]; then ok "test: the final checkpoint is committed"; else not_ok "test: final checkpoint"; fi
sleep 4
kill -INT "$P"
wait "$P"
rc=$?
expect_eq "test: SIGINT during the held-out test: exit status 0 (124: the test ran on)" "$rc" 0
s="$RUN/summary.json"
for k in test_best_return test_final_return solved_test test_eval_seconds; do
    expect_eq "test: $k is null" "$(jget "$s" "$k")" null
done
skipped=$(jget "$s" test_skipped)
check "test: test_skipped says a signal ($skipped)" grep -q "by a signal" <<<"$skipped"
expect_eq "test: stop reason is the budget (training was complete)" "$(jget "$s" stop_reason)" budget
final=$(jget "$s" final_checkpoint)
check "test: final checkpoint $final present" [ -f "$RUN/$final/MANIFEST" ]
check "test: test-pending stays" [ -e "$RUN/test-pending" ]
expect_contains "test: the final line says --resume runs it" "$(cat "$TEST_TMP/test-int.out")" "--resume runs it"

# --resume: only the test (2 episodes here, to be short), then nothing left.
# Nothing was logged after the final checkpoint but at its env steps (the
# last metrics row, its evaluation), so no CSV row is cut.
rows=$(wc -l <"$RUN/metrics.csv")
csvs=$(cat "$RUN/metrics.csv" "$RUN/episodes.csv" "$RUN/eval.csv" | cksum)
run_cmd timeout --kill-after=5 90 "$GORILA" train --resume "$RUN" --set eval.test_episodes=2 --set logging.progress=never
expect_rc "resume: exit status 0" 0
expect_eq "resume: no CSV row cut (the rows at the final checkpoint's step stay)" \
    "$(cat "$RUN/metrics.csv" "$RUN/episodes.csv" "$RUN/eval.csv" | cksum) $(grep -c '^gorila: resume:' <<<"$err")" \
    "$csvs 0"
expect_contains "resume: runs only the test" "$out" "training is complete (budget) but its held-out test was not written"
expect_contains "resume: the final line has the test" "$out" "held-out test (2 episodes, seed 54321): best "
expect_contains "resume: the final checkpoint's test score" "$out" "final -1000000.0"
expect_eq "resume: test_final_return" "$(jget "$s" test_final_return)" -1000000
expect_eq "resume: test_skipped null" "$(jget "$s" test_skipped)" null
expect_eq "resume: env steps unchanged" "$(jget "$s" env_steps)" 3000
expect_eq "resume: no metrics row added" "$(wc -l <"$RUN/metrics.csv")" "$rows"
check "resume: test-pending removed" [ ! -e "$RUN/test-pending" ]
run_cmd timeout --kill-after=5 90 "$GORILA" train --resume "$RUN" --set eval.test_episodes=2 --set logging.progress=never
expect_rc "resume again: exit status 0" 0
expect_contains "resume again: nothing to do" "$out" "is already complete (budget"

# ---- a SIGINT during a periodic evaluation ----------------------------------
# 100 episodes of 10^6 steps from update 100: minutes, unless given up.
start eval-int --set run.max_env_steps=0 --set run.max_seconds=80 --set eval.every_updates=100 \
    --set eval.episodes=100 --set eval.test_episodes=40
wait_for 60 has_rows "$RUN/metrics.csv"
sleep 1.5
kill -INT "$P"
wait "$P"
rc=$?
expect_eq "eval: SIGINT during an evaluation: exit status 0 (124: the evaluation ran on)" "$rc" 0
expect_contains "eval: the evaluation was abandoned" "$(cat "$TEST_TMP/eval-int.err")" "evaluation abandoned after"
expect_eq "eval: nothing logged in eval.csv" "$(wc -l <"$RUN/eval.csv")" 1
s="$RUN/summary.json"
expect_eq "eval: stop reason" "$(jget "$s" stop_reason)" signal
expect_eq "eval: no evaluation recorded" "$(jget "$s" evaluations)" 0
expect_eq "eval: test not run" "$(jget "$s" test_skipped)" "stopped by a signal"
final=$(jget "$s" final_checkpoint)
check "eval: final checkpoint $final present" [ -f "$RUN/$final/MANIFEST" ]

# ---- a second signal aborts ---------------------------------------------------
# Both held while the trainer (timeout's child) is stopped, so both are
# seen (the kernel stacks both handlers at once, the later one running
# first): the second handler kills it with its signal (128 + 2 or 128 + 15,
# passed on by timeout), nothing written.
start second --set run.max_env_steps=0 --set run.max_seconds=80 --set eval.every_updates=0
wait_for 60 has_rows "$RUN/metrics.csv"
G=$(pgrep -P "$P") # gorila (named exe: it re-executes /proc/self/exe)
kill -STOP "$G"
kill -INT "$G"
kill -TERM "$G"
kill -CONT "$G"
wait "$P"
rc=$?
check "second signal: the trainer dies of a signal, SIGINT or SIGTERM (exit status $rc)" [ "$rc" -eq 130 -o "$rc" -eq 143 ]
check "second signal: no summary.json" [ ! -e "$RUN/summary.json" ]
done_testing
