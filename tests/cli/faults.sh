# SPDX-License-Identifier: MIT
# Faults that must not pass silently in a single-process run (issue 8):
# training that diverges to NaN/Inf ends with exit status 5
# (GORILA_EXIT_DIVERGED) and a message saying what to change, before the
# parameters go non-finite, so no checkpoint holds them; and the stop
# deadline key of distributed runs is validated like every other key.
# (The distributed faults are tests/mpi/faults.sh.)
source "$(dirname "$0")/../lib.sh"
cd "$TEST_ROOT" || exit 1
RUNS="$TEST_TMP/cli-faults"
rm -rf "$RUNS"

# SGD at lr 10 with no clipping and an unbounded loss (Huber delta 1e6, no
# discount): the Q-values overflow within a few updates. Local runs are
# deterministic, so it is always the same update. A checkpoint after every
# update, all kept, shows that none was written once training diverged.
t0=$SECONDS
run_cmd "$GORILA" train configs/local/cartpole.yaml --set run.out_dir="$RUNS" --set run.name=diverge \
    --set logging.progress=never --set optimizer.kind=sgd --set optimizer.lr=10 --set optimizer.grad_clip=0 \
    --set agent.huber_delta=1e6 --set agent.gamma=1 --set network.hidden=[16] --set agent.train_every=1 \
    --set agent.gradient_steps=1 --set checkpoint.every_updates=1 --set checkpoint.keep=100
expect_rc "local divergence: exit status 5 (GORILA_EXIT_DIVERGED)" 5
expect_contains "local divergence: says what diverged and when" "$err" "gorila: error: training diverged: loss is"
expect_contains "local divergence: says what to change" "$err" \
    "(local trainer); lower optimizer.lr (now 10) or optimizer.grad_clip (now 0, 0 = off)"
expect_eq "local divergence: one error line" "$(grep -c 'error' <<<"$err")" 1
R="$RUNS/diverge"
at=$(sed -n 's/.* at update \([0-9]*\) (local trainer).*/\1/p' <<<"$err")
latest=$(sed -n 's/^updates //p' "$R/checkpoints/$(cat "$R/checkpoints/latest" 2>/dev/null)/MANIFEST" 2>/dev/null)
check "local divergence: the newest checkpoint ($latest updates) is from before the diverged update ($at)" \
    test "${latest:-x}" -lt "${at:-0}" 2>/dev/null
n=0
bad=""
for d in "$R"/checkpoints/ckpt-*; do
    [ -e "$d/MANIFEST" ] || continue
    "$GORILA" eval "$d" --episodes 1 --export "$TEST_TMP/cli-faults.bin" >/dev/null 2>&1 || bad="$bad $d (no export)"
    od -An -v -f "$TEST_TMP/cli-faults.bin" | grep -qiE 'nan|inf' && bad="$bad $d"
    n=$((n + 1))
done
expect_eq "local divergence: all $n checkpoints hold finite parameters" "$bad" ""
echo "# local divergence: $((SECONDS - t0)) s"

# The same with prioritized replay: the TD errors that set priorities are
# checked too (a priority never comes from a non-finite one), and the run
# ends the same way.
run_cmd "$GORILA" train configs/local/cartpole.yaml --set run.out_dir="$RUNS" --set run.name=diverge-prio \
    --set logging.progress=never --set optimizer.kind=sgd --set optimizer.lr=10 --set optimizer.grad_clip=0 \
    --set agent.huber_delta=1e6 --set agent.gamma=1 --set network.hidden=[16] --set agent.train_every=1 \
    --set agent.gradient_steps=1 --set replay.kind=prioritized
expect_rc "local divergence, prioritized replay: exit status 5 (GORILA_EXIT_DIVERGED)" 5
expect_contains "local divergence, prioritized replay: says so" "$err" "gorila: error: training diverged: "
expect_eq "local divergence, prioritized replay: one error line" "$(grep -c 'error' <<<"$err")" 1

# A full disk: the run directory on a 64 KiB tmpfs (in a mount namespace of
# its own) holds config.yaml and the CSVs, but no checkpoint of the 64-64
# CartPole network (its parameters, target and Adam moments are 74 KB).
# Every checkpoint write fails; the run must end with exit status 3
# (GORILA_EXIT_CKPT_WRITE) saying so, not 0 with nothing to resume.
mnt="$TEST_TMP/cli-faults-full"
mkdir -p "$mnt"
if unshare -m true 2>/dev/null; then
    run_cmd unshare -m sh -c 'mount -t tmpfs -o size=64k tmpfs "$1" && shift && exec "$@"' sh "$mnt" \
        "$GORILA" train configs/local/cartpole.yaml --set run.out_dir="$mnt" --set run.name=full \
        --set logging.progress=never --set run.max_env_steps=3000 --set checkpoint.every_updates=250
    expect_rc "disk full: exit status 3 (GORILA_EXIT_CKPT_WRITE)" 3
    expect_contains "disk full: says the final checkpoint could not be written" "$err" \
        "gorila: error: the final checkpoint could not be written:"
    expect_contains "disk full: and why" "$err" "No space left on device"
    expect_contains "disk full: the final line says there is no final checkpoint" "$out" "; no final checkpoint"
else
    ok "disk full: exit status 3 # SKIP cannot create a mount namespace here (unshare -m)"
fi

# A CSV that cannot be written (metrics.csv replaced by /dev/full before a
# resume): exit status 8 (GORILA_EXIT_LOG_WRITE) with the file named.
run_cmd "$GORILA" train configs/local/cartpole.yaml --set run.out_dir="$RUNS" --set run.name=csv \
    --set logging.progress=never --set run.max_env_steps=2000 --set run.stop_when_solved=false
expect_rc "csv: first run" 0
rm -f "$RUNS/csv/metrics.csv"
ln -s /dev/full "$RUNS/csv/metrics.csv"
run_cmd "$GORILA" train --resume "$RUNS/csv" --set run.max_env_steps=4000
expect_rc "csv: a CSV write failing ends the run with exit status 8" 8
expect_contains "csv: names the file and the reason" "$err" "metrics.csv: No space left on device"

# A run.out_dir that is not a directory, or cannot be written, is a set-up
# fault: exit status 2 (GORILA_EXIT_USAGE, README "Exit statuses") with one
# line naming the key, not 8 (a log write failing mid-run) (issue 29).
: >"$RUNS/a-file"
for od in "$RUNS/a-file" "$RUNS/a-file/sub"; do
    run_cmd "$GORILA" train configs/local/cartpole.yaml --set run.out_dir="$od" --set logging.progress=never \
        --set run.max_env_steps=100
    expect_rc "run.out_dir $od: exit status 2" 2
    expect_eq "run.out_dir $od: one line naming the key" "$(grep -c '^gorila: error: run.out_dir: ' <<<"$err") $(wc -l <<<"$err")" "1 1"
done
expect_contains "run.out_dir a file: says so" "$err" "cannot create directory $RUNS/a-file/sub: Not a directory"
ro="$TEST_TMP/cli-faults-ro"
mkdir -p "$ro"
if unshare -m true 2>/dev/null; then
    run_cmd unshare -m sh -c 'mount --bind "$1" "$1" && mount -o remount,ro,bind "$1" && shift && exec "$@"' sh "$ro" \
        "$GORILA" train configs/local/cartpole.yaml --set run.out_dir="$ro" --set run.name=ro \
        --set logging.progress=never --set run.max_env_steps=100
    expect_rc "run.out_dir read-only: exit status 2" 2
    expect_eq "run.out_dir read-only: one line, with the reason" "$err" \
        "gorila: error: run.out_dir: cannot create run directory $ro/ro: Read-only file system"
else
    ok "run.out_dir read-only: exit status 2 # SKIP cannot create a mount namespace here (unshare -m)"
fi

# run.stop_deadline_seconds: > 0, a clear message otherwise.
run_cmd "$GORILA" config check configs/cartpole.yaml --set run.stop_deadline_seconds=2.5
expect_contains "stop deadline: a positive number is accepted" "$out" "stop_deadline_seconds: 2.5"
for v in 0 -1 nan x; do
    run_cmd "$GORILA" config check configs/cartpole.yaml --set run.stop_deadline_seconds=$v
    expect_rc "stop deadline $v: refused, exit status 2" 2
    expect_contains "stop deadline $v: says what is expected" "$err" "run.stop_deadline_seconds: expected a number in (0,"
done
run_cmd "$GORILA" config check configs/cartpole.yaml
expect_contains "stop deadline: default 10 s" "$out" "stop_deadline_seconds: 10"

done_testing
