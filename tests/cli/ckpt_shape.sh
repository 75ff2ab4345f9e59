#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/cli/ckpt_shape.sh: a checkpoint whose network shape is not the
# config's is refused by gorila train --resume, gorila eval --checkpoint and
# gorila export with exit status 4 (README: a checkpoint that is not this
# run's) and one error line naming both networks whole, conv layers
# included (the checkpoint file's section NET, docs/CHECKPOINT.md).
# Three short MinAtar Breakout runs (configs/minatar/local/breakout.yaml,
# 200 frames each):
#   c16   the config's network: conv 16 3x3 stride 1 -> 128 -> 6
#   k5    conv 8 5x5 stride 2
#   k2k1  conv 32 2x2 stride 2, then 8 1x1 stride 2
# k5 and k2k1 have the same parameter count (checked below), so only their
# conv layers tell their checkpoints apart.
source "$(dirname "$0")/../lib.sh"
cd "$TEST_ROOT" || exit 1
T="$TEST_TMP/ckpt-shape"
rm -rf "$T"
mkdir -p "$T"
CFG=configs/minatar/local/breakout.yaml
K5='network.conv=[{filters: 8, kernel: 5, stride: 2}]'
K2K1='network.conv=[{filters: 32, kernel: 2, stride: 2}, {filters: 8, kernel: 1, stride: 2}]'
SHORT=(--set "run.out_dir=$T" --set run.max_env_steps=200 --set replay.min_size=100 --set eval.every_updates=0
    --set eval.test_episodes=0 --set logging.progress=never)

# n_params CONFIG-SET...: the parameter count `gorila config check --json` prints
n_params() { "$GORILA" config check "$CFG" "$@" --json | sed -n 's/.*"n_params": *\([0-9]*\).*/\1/p'; }
# Both conv stacks on 10x10x4 planes, then 128 hidden units and 6 actions:
#   k5:   conv 8*(4*5*5)+8 = 808; output 8 x 3x3 ((10-5)/2+1 = 3) = 72 features
#   k2k1: conv 32*(4*2*2)+32 = 544, then 8*(32*1*1)+8 = 264, together 808;
#         output 32 x 5x5 ((10-2)/2+1), then 8 x 3x3 ((5-1)/2+1) = 72 features
#   both: 808 + 72*128+128 + 128*6+6 = 808 + 9344 + 774 = 10926
expect_eq "k5's parameter count" "$(n_params --set "$K5")" 10926
expect_eq "k2k1's parameter count, the same" "$(n_params --set "$K2K1")" 10926

for run in c16 k5 k2k1; do
    case $run in c16) set_net=() ;; k5) set_net=(--set "$K5") ;; k2k1) set_net=(--set "$K2K1") ;; esac
    run_cmd "$GORILA" train "$CFG" "${SHORT[@]}" --set "run.name=$run" "${set_net[@]}"
    expect_rc "train $run" 0
done
C16="10x10x4 planes -> conv [16 3x3 stride 1] -> hidden [128] -> 6 actions (132566 parameters)"
NK5="10x10x4 planes -> conv [8 5x5 stride 2] -> hidden [128] -> 6 actions (10926 parameters)"
NK2K1="10x10x4 planes -> conv [32 2x2 stride 2, 8 1x1 stride 2] -> hidden [128] -> 6 actions (10926 parameters)"

# expect_refused NAME CHECKPOINT-NET EXPECTED-NET: the last command exited 4
# with one stderr line saying the checkpoint has the one and the config the
# other, and printed nothing on stdout.
expect_refused() {
    expect_rc "$1: exit status 4" 4
    expect_contains "$1: names both networks" "$err" "network differs: checkpoint has $2, expected $3"
    expect_eq "$1: one error line" "$(grep -c . <<<"$err")" 1
    expect_eq "$1: nothing on stdout" "$out" ""
}

ck() { echo "$T/$1/checkpoints/ckpt-000001"; }
run_cmd "$GORILA" eval "$T/k5" --checkpoint "$(ck k2k1)" --episodes 1
expect_refused "eval, same parameter count" "$NK2K1" "$NK5"
run_cmd "$GORILA" export "$T/k5" "$T/k5.npz" --checkpoint "$(ck k2k1)"
expect_refused "export, same parameter count" "$NK2K1" "$NK5"
check "export: no file written" [ ! -e "$T/k5.npz" ]
run_cmd "$GORILA" train --resume "$T/k2k1" --set "$K5" --set run.max_env_steps=400
expect_refused "resume, same parameter count" "$NK2K1" "$NK5"
run_cmd "$GORILA" eval "$T/c16" --checkpoint "$(ck k5)" --episodes 1
expect_refused "eval, other conv" "$NK5" "$C16"
run_cmd "$GORILA" train --resume "$T/c16" --set 'network.hidden=[64]' --set run.max_env_steps=400
expect_refused "resume, other hidden" "$C16" \
    "10x10x4 planes -> conv [16 3x3 stride 1] -> hidden [64] -> 6 actions (66582 parameters)"
# and the run's own checkpoint still loads
run_cmd "$GORILA" eval "$T/k2k1" --episodes 1
expect_rc "eval of k2k1's own checkpoint" 0
done_testing
