# SPDX-License-Identifier: MIT
# Every mismatch ends all ranks with one clear message and a non-zero exit,
# never a hang (each job runs under a 60 s guard), and a malformed message
# is a fatal error naming its sender.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../mpilib.sh"
cd "$TEST_ROOT" || exit 1
guard="timeout --kill-after=5 60"

# shellcheck disable=SC2086 # $guard and $MPIRUN are command lines: split on purpose
run_cmd $guard $MPIRUN -np 3 "$GORILA" train "$SMALL" --set run.out_dir="$RUNS"
expect_fail "wrong -np: non-zero exit"
expect_contains "wrong -np: says what is needed and what was given" "$err" \
    "needs 5 ranks (1 coordinator, 1 actor, 1 replay shard, 1 learner, 1 parameter server), but this job has 3"
expect_contains "wrong -np: says how to run it" "$err" "mpirun -np 5"
n=$(grep -c "gorila: error" <<<"$err")
expect_eq "wrong -np: one message, not one per rank" "$n" 1

# shellcheck disable=SC2086 # $guard and $MPIRUN are command lines: split on purpose
run_cmd $guard "$GORILA" train "$SMALL" --set run.out_dir="$RUNS"
expect_rc "distributed config without mpirun: exit status 2" 2
expect_contains "distributed config without mpirun: points at the launcher" "$err" "scripts/launch"
expect_contains "distributed config without mpirun: offers --local" "$err" "--local"

# A run.out_dir that is not a directory: a set-up fault, exit status 2 with
# its message, as in a local run (it was 8).
mkdir -p "$RUNS"
: >"$RUNS/a-file"
# shellcheck disable=SC2086 # $guard is a command line: split on purpose
run_cmd $guard "$TEST_ROOT/scripts/launch" "$SMALL" --set run.out_dir="$RUNS/a-file"
expect_rc "run.out_dir a file: exit status 2 (GORILA_EXIT_USAGE)" 2
expect_contains "run.out_dir a file: says so" "$err" "run.out_dir: $RUNS/a-file exists and is not a directory"

# shellcheck disable=SC2086 # $guard and $MPIRUN are command lines: split on purpose
run_cmd $guard $MPIRUN -np 2 "$GORILA" train "$SMALL" --set run.mode=local --set run.out_dir="$RUNS"
expect_fail "local config on 2 ranks: non-zero exit"
expect_contains "local config on 2 ranks: explains" "$err" "local (single-process) config, but this job has 2 ranks"

# shellcheck disable=SC2086 # $guard and $MPIRUN are command lines: split on purpose
run_cmd $guard $MPIRUN -np 5 "$GORILA" train tests/fixtures/configs/does-not-exist.yaml
expect_fail "missing config under mpirun: non-zero exit"
expect_contains "missing config under mpirun: names the file" "$err" "does-not-exist.yaml: cannot open config: No such file or directory"
expect_eq "missing config under mpirun: one message" "$(grep -c 'gorila: error' <<<"$err")" 1

# shellcheck disable=SC2086 # $guard and $MPIRUN are command lines: split on purpose
run_cmd $guard $MPIRUN -np 5 "$GORILA" train "$SMALL" --set roles.learners=two
expect_fail "bad --set under mpirun: non-zero exit"
expect_contains "bad --set under mpirun: the config error" "$err" 'roles.learners: expected a positive integer, got "two"'

# shellcheck disable=SC2086 # $guard and $MPIRUN are command lines: split on purpose
run_cmd $guard "$TEST_ROOT/scripts/launch" "$SMALL" --resume "$RUNS/no-such-run"
expect_rc "launch --resume of a missing run: exit status 2" 2
expect_contains "launch --resume of a missing run: says so" "$err" "does not exist"

mkdir -p "$RUNS/empty-run" && cp "$SMALL" "$RUNS/empty-run/config.yaml"
# shellcheck disable=SC2086 # $guard and $MPIRUN are command lines: split on purpose
run_cmd $guard $MPIRUN -np 5 "$GORILA" train --resume "$RUNS/empty-run"
expect_rc "resume without a checkpoint: exit status 4 (GORILA_EXIT_CKPT_READ)" 4
expect_contains "resume without a checkpoint: says so" "$err" "cannot resume: no checkpoint in"

# Malformed messages (tests/mpi/mpi_proto.c): rank 1 sends one, rank 0 receives.
proto="$(dirname "$GORILA")/tests/mpi_proto"
# shellcheck disable=SC2086 # $guard and $MPIRUN are command lines: split on purpose
run_cmd $guard $MPIRUN -np 2 "$proto" good
expect_contains "well-formed message is accepted" "$out" "ok: grad from rank 1, 40 bytes"
while IFS='|' read -r kind text; do
    # shellcheck disable=SC2086 # $guard and $MPIRUN are command lines: split on purpose
    run_cmd $guard $MPIRUN -np 2 "$proto" "$kind" </dev/null # mpirun would eat the rest of the list
    expect_fail "malformed ($kind): job fails"
    expect_contains "malformed ($kind): names sender and fault" "$err" "$text"
done <<'EOF2'
short|malformed grad message (tag 15) from rank 1 (learner 0): shorter than a message header
tag|malformed grad message (tag 15) from rank 1 (learner 0): header says tag 17
size|malformed grad message (tag 15) from rank 1 (learner 0): payload of 36 bytes, expected 40 for count 10
count|malformed grad message (tag 15) from rank 1 (learner 0): gradient slice longer than the network
unknown|malformed unknown message (tag 99) from rank 1 (learner 0): unknown tag
trace-off|malformed trace message (tag 25) from rank 1 (learner 0): tracing is off (logging.trace)
trace-range|malformed trace message (tag 25) from rank 1 (learner 0): event range outside the rank's trace
priority-slot|malformed priority message (tag 14) from rank 1 (learner 0): slot 100 outside the shard (capacity 100)
priority-nan|malformed priority message (tag 14) from rank 1 (learner 0): |td| nan for slot 4: must be finite and >= 0
priority-uniform|malformed priority message (tag 14) from rank 1 (learner 0): priority update, but the job's replay is uniform
experience-inf|malformed experience message (tag 10) from rank 1 (learner 0): priority inf of row 0: |td| must be finite and >= 0
sample-frac|malformed sample_req message (tag 12) from rank 1 (learner 0): position 1.5 of row 0 outside [0, 1)
EOF2
done_testing
