# SPDX-License-Identifier: MIT
# scripts/compare with the decentralized modes, without a job (the real
# matrix is tests/mpi/compare_decentral.sh): the layout of each mode under
# --allreduce-impls and --param-servers (through a launcher stand-in that
# runs nothing), and bad input refused before anything starts: exit 2, one
# line.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../comparelib.sh"
cd "$TEST_ROOT" || exit 1
C="$TEST_ROOT/scripts/compare"
W="$TEST_TMP/compare_decentral"
rm -rf "$W"
t0=$SECONDS
FX=tests/fixtures/configs/mpi-small.yaml
small=("$FX" --set run.max_env_steps=6000)

# the launcher stand-ins and launches (tests/comparelib.sh)
compare_standins "$W"

# ---- each mode's layout under --allreduce-impls and --param-servers ----------------------
rm -f "$W/launches"
run_cmd env GORILA_LAUNCH="$W/bin/none" "$C" "${small[@]}" --modes gossip,local_sgd,easgd --learners 2 --seeds 1 \
    --allreduce-impls ring,naive --param-servers 1,2 --out "$W/layout"
expect_rc "layouts: exit status 0 (the stand-in's cells fail)" 0
expect_eq "layouts: one job per gossip cell, per local_sgd algorithm, per easgd P" "$(launches)" 5
expect_eq "layouts: each cell's mode, parameter servers and algorithm" \
    "$(sed 's/.*sync.mode=\([a-z_]*\) .*roles.param_servers=\([0-9]*\)\( --set sync.allreduce_impl=\([a-z]*\)\)\{0,1\} .*run.name=\([^ ]*\) .*/\5 P\2 \4/' "$W/launches" | tr '\n' ';')" \
    "gossip-L2-s1 P0 ;local_sgd-ring-L2-s1 P0 ring;local_sgd-naive-L2-s1 P0 naive;easgd-L2-P1-s1 P1 ;easgd-L2-P2-s1 P2 ;"
expect_contains "layouts: the report's tables name P and the algorithm" "$(cat "$W/layout/report.md")" \
    "| local_sgd (naive) | 2 | 0 | 0/1 (1 failed) |"
expect_contains "layouts: the failed cells are listed as failed" "$(cat "$W/layout/report.md")" \
    "- easgd, 2 learners, 2 parameter servers, seed 1: failed (exit 3)"

# ---- bad input: exit 2, one line, nothing started ------------------------------------------
rm -f "$W/launches"
while IFS='|' read -r name args want; do
    eval "set -- $args"
    run_cmd env GORILA_LAUNCH="$W/bin/count" "$C" "$@"
    expect_rc "bad input ($name): exit status 2" 2
    expect_eq "bad input ($name): one line" "$(wc -l <<<"$err")" 1
    expect_contains "bad input ($name): says why" "$err" "$want"
done <<EOF
a misspelt mode|${small[*]} --modes gosip --out "$W/x"|compare: error: unknown mode 'gosip' in --modes (modes: ps_sync, ps_async, ps_bounded, allreduce, gossip, easgd, local_sgd)
only 1-learner gossip and local_sgd|${small[*]} --modes gossip,local_sgd --learners 1 --out "$W/x"|compare: error: gorila refuses every cell of this matrix: gossip and local_sgd with 1 learner
EOF
check "bad input: no output directory made" [ ! -e "$W/x" ]
expect_eq "bad input: no job launched" "$(launches)" 0
echo "# compare_decentral.sh: $((SECONDS - t0)) s"
done_testing
