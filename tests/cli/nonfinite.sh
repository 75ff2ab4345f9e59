# SPDX-License-Identifier: MIT
# Non-finite values in a checkpoint whose sums were all recomputed (issue
# 29): no writer saves a NaN or Inf parameter, target value or optimizer
# state value, so one in a file is damage, like a replay row out of range.
# A local resume falls back to the newest intact checkpoint and says which
# it skipped and why (never "training diverged" at the first update); with
# none intact it ends with exit status 4 (GORILA_EXIT_CKPT_READ); gorila
# eval and export of the damaged checkpoint refuse it with exit status 4
# and one line. (The distributed path: tests/mpi/nonfinite.sh.)
source "$(dirname "$0")/../lib.sh"
cd "$TEST_ROOT" || exit 1
RUNS="$TEST_TMP/cli-nonfinite"
rm -rf "$RUNS"
R="$RUNS/nf"
patch() { python3 "$TEST_ROOT/tests/ckptpatch.py" "$@"; }
latest_dir() { echo "$R/checkpoints/$(cat "$R/checkpoints/latest")"; }

# A tiny run: a checkpoint every 50 updates, three kept.
run_cmd "$GORILA" train configs/local/cartpole.yaml --set run.out_dir="$RUNS" --set run.name=nf \
    --set network.hidden=[8] --set eval.episodes=2 --set eval.every_updates=0 --set logging.progress=never \
    --set run.max_env_steps=1200 --set replay.min_size=200 --set checkpoint.every_updates=50 --set checkpoint.keep=3
expect_rc "a tiny local run" 0
d=$(latest_dir)
# shellcheck disable=SC2012 # gorila's own checkpoint names: plain words
prev=$(ls -d "$R"/checkpoints/ckpt-* | sort | tail -2 | head -1)
patch "$d/ps-0.ckpt" params 3 inf

for cmd in eval export; do
    if [ $cmd = eval ]; then args=(--episodes 2); else args=("$TEST_TMP/cli-nonfinite.npz"); fi
    rm -f "$TEST_TMP/cli-nonfinite.npz"
    run_cmd "$GORILA" $cmd "$d" "${args[@]}"
    expect_rc "$cmd of the checkpoint: exit status 4 (GORILA_EXIT_CKPT_READ)" 4
    expect_contains "$cmd: names the file, the parameter and its value" "$err" \
        "gorila: error: $cmd: $d/ps-0.ckpt: parameter 3 of the network is inf"
    expect_eq "$cmd: one line" "$(wc -l <<<"$err")" 1
    check "$cmd: no evaluation, no file" [ -z "$out" -a ! -e "$TEST_TMP/cli-nonfinite.npz" ]
done
# The run directory: eval falls back to the previous checkpoint, saying so.
run_cmd "$GORILA" eval "$R" --episodes 2
expect_rc "eval of the run: falls back and evaluates" 0
expect_contains "eval of the run: says which checkpoint it skipped and why" "$err" \
    "gorila: warning: checkpoint $d is damaged ($d/ps-0.ckpt: parameter 3 of the network is inf"
expect_contains "eval of the run: ... and which it used" "$err" "; using $prev"

# The target network and the optimizer state count too (each in a copy of
# the intact checkpoint, beside the run's: no ckpt-* name, so no fallback
# sees it).
for sec in target optim; do
    c="$R/checkpoints/copy-$sec"
    cp -a "$prev" "$c"
    patch "$c/ps-0.ckpt" $sec 5 nan
    run_cmd "$GORILA" eval "$c" --episodes 2
    expect_rc "$sec: eval of the checkpoint: exit status 4" 4
    what="parameter 5 of the target network is nan"
    [ $sec = optim ] && what="adam state array 1 of 2 at parameter 5 is nan"
    expect_contains "$sec: names the file, the array and the parameter" "$err" "$c/ps-0.ckpt: $what"
    rm -rf "$c"
done

# A resume falls back to the intact checkpoint instead of "diverging" at
# its first update, and the run goes on.
run_cmd "$GORILA" train --resume "$R" --set run.max_env_steps=1500
expect_rc "resume: falls back and completes" 0
expect_contains "resume: says which checkpoint it skipped and why" "$err" \
    "gorila: warning: checkpoint $d is damaged ($d/ps-0.ckpt: parameter 3 of the network is inf"
expect_contains "resume: ... and which it resumed from" "$err" "; using $prev"
check "resume: no divergence" [ "$(grep -c diverged <<<"$err")" -eq 0 ]

# Every checkpoint so damaged: exit status 4, nothing trained.
for c in "$R"/checkpoints/ckpt-*; do patch "$c/ps-0.ckpt" params 0 -inf; done
run_cmd "$GORILA" train --resume "$R" --set run.max_env_steps=2000
expect_rc "all damaged: exit status 4 (GORILA_EXIT_CKPT_READ)" 4
expect_contains "all damaged: no intact checkpoint" "$err" "no intact checkpoint in $R"
expect_contains "all damaged: ... naming the value" "$err" "parameter 0 of the network is -inf"
check "all damaged: no divergence" [ "$(grep -c diverged <<<"$err")" -eq 0 ]

done_testing
