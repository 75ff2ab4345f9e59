# SPDX-License-Identifier: MIT
# Non-finite values in a distributed checkpoint's parameter-server slice,
# every sum recomputed: damage, like a replay row out of range.
# The resume falls back to the newest intact checkpoint, saying which it
# skipped and why (never "training diverged" at the first update, and never
# the same on every later resume); with none intact it ends with exit status
# 4 (GORILA_EXIT_CKPT_READ) and no restart; gorila eval and export refuse
# the damaged checkpoint with exit status 4. Two parameter servers, so the
# damage sits in shard 1's slice. (The local trainer: tests/cli/nonfinite.sh.)
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../mpilib.sh"
cd "$TEST_ROOT" || exit 1
patch() { python3 "$TEST_ROOT/tests/ckptpatch.py" "$@"; }
latest_dir() { echo "$RUN/checkpoints/$(cat "$RUN/checkpoints/latest")"; }
resume() { run_cmd timeout --kill-after=5 120 "$TEST_ROOT/scripts/launch" --resume "$RUN" "$@"; }

job nf-ps --set roles.param_servers=2 --set run.max_env_steps=1500 --set eval.every_updates=0
expect_rc "a job with two parameter servers" 0
resume --set run.max_env_steps=2000
expect_rc "resumed once: a second checkpoint" 0
d=$(latest_dir)
# shellcheck disable=SC2012 # gorila's own checkpoint names: plain words
prev=$(ls -d "$RUN"/checkpoints/ckpt-* | sort | tail -2 | head -1)
check "two checkpoints ($prev, $d)" [ "$prev" != "$d" -a -f "$prev/MANIFEST" ]
# Parameter 1 of shard 1's slice: its first parameter is where shard 0's
# ends (header bytes 96..103 of ps-1.ckpt: slice_offset).
first=$(od -An -t u8 -j 96 -N 8 "$d/ps-1.ckpt" | tr -d ' ')
patch "$d/ps-1.ckpt" params 1 inf
want="$d/ps-1.ckpt: parameter $((first + 1)) of the network is inf"

for cmd in eval export; do
    if [ $cmd = eval ]; then args=(--episodes 2); else args=("$TEST_TMP/mpi-nonfinite.npz"); fi
    run_cmd "$GORILA" $cmd "$d" "${args[@]}"
    expect_rc "$cmd of the checkpoint: exit status 4" 4
    expect_contains "$cmd: names the file, the parameter and its value" "$err" "gorila: error: $cmd: $want"
    expect_eq "$cmd: one line" "$(wc -l <<<"$err")" 1
done

resume --set run.max_env_steps=2500
expect_rc "resume: falls back and completes" 0
expect_contains "resume: says which checkpoint it skipped and why" "$err" \
    "gorila: warning: checkpoint $d is damaged ($want"
expect_contains "resume: ... and which it resumed from" "$err" "; using $prev"
check "resume: no divergence" [ "$(grep -c diverged <<<"$err")" -eq 0 ]

for c in "$RUN"/checkpoints/ckpt-*; do [ ! -f "$c/ps-1.ckpt" ] || patch "$c/ps-1.ckpt" optim 2 nan; done
resume --set run.max_env_steps=3000 --max-restarts 2
expect_rc "all damaged: exit status 4 (GORILA_EXIT_CKPT_READ)" 4
expect_contains "all damaged: no intact checkpoint" "$err" "no intact checkpoint in $RUN"
expect_contains "all damaged: ... naming the optimizer state" "$err" "ps-1.ckpt: adam state array 1 of 2 at parameter"
check "all damaged: no divergence" [ "$(grep -c diverged <<<"$err")" -eq 0 ]
check "all damaged: no restart is tried" [ "$(grep -c "restart 1 of" <<<"$err")" -eq 0 ]

done_testing
