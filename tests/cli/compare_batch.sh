# SPDX-License-Identifier: MIT
# scripts/compare --learner-batch: bad input refused before anything starts
# (exit 2, one line, no directory, no launch). Its real matrix is
# tests/mpi/compare_batch.sh.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../comparelib.sh"
cd "$TEST_ROOT" || exit 1
C="$TEST_ROOT/scripts/compare"
W="$TEST_TMP/compare_batch"
rm -rf "$W"
FX=tests/fixtures/configs/mpi-small.yaml
small=("$FX" --set run.max_env_steps=2000)
# a run directory that is never made: --from with --learner-batch is refused before it is read
D="$W/m"

# the launcher stand-ins and launches (tests/comparelib.sh)
compare_standins "$W"
# replay.batch_size of the fixture, as gorila reads it
B=$("$GORILA" config check --json "${small[@]}" | python3 -c 'import json, sys; print(json.load(sys.stdin)["config"]["replay"]["batch_size"])')
check "the fixture's replay.batch_size ($B) is even: 2 learners split it" [ $((B % 2)) -eq 0 ]

# ---- bad input: exit 2, one line, nothing started ------------------------------------------
rm -f "$W/launches"
while IFS='|' read -r name args want; do
    eval "set -- $args"
    run_cmd env GORILA_LAUNCH="$W/bin/count" "$C" "$@"
    expect_rc "bad input ($name): exit status 2" 2
    expect_eq "bad input ($name): one line" "$(wc -l <<<"$err")" 1
    expect_contains "bad input ($name): says why" "$err" "$want"
done <<EOF
unknown rule|${small[*]} --modes allreduce --learner-batch per_learner,bogus --out "$W/x"|compare: error: unknown learner.batch 'bogus' in --learner-batch (learner.batch: per_learner, global)
a rule twice|${small[*]} --modes allreduce --learner-batch global,global --out "$W/x"|compare: error: --learner-batch lists a rule twice: global,global
global without allreduce|${small[*]} --modes ps_sync,ps_async --learner-batch per_learner,global --out "$W/x"|compare: error: --learner-batch global applies to allreduce cells only (the PS modes run per_learner), and --modes has no allreduce
global with prioritized replay|${small[*]} --set replay.kind=prioritized --modes allreduce --learner-batch global --out "$W/x"|compare: error: --learner-batch global needs uniform replay, and the config has replay.kind prioritized
global with sync.lr_scaling|${small[*]} --set sync.lr_scaling=linear --modes ps_sync,allreduce --learner-batch per_learner,global --out "$W/x"|compare: error: --learner-batch global keeps the one-learner batch, and the config has sync.lr_scaling linear
global, a batch 3 learners do not divide|${small[*]} --modes allreduce --learners 2,3 --learner-batch global --out "$W/x"|compare: error: --learner-batch global splits replay.batch_size ($B) among the learners, and 3 (--learners) does not divide it
--set learner.batch with --learner-batch|${small[*]} --set learner.batch=global --modes allreduce --learner-batch global --out "$W/x"|compare: error: --set learner.batch=global: the matrix sets learner.batch itself (use --learner-batch)
--from with --learner-batch|--from "$D/runs/allreduce-L1-s1" --learner-batch global --out "$W/x"|--param-servers, --allreduce-impls and --learner-batch do not apply
EOF
check "bad input: no output directory made" [ ! -e "$W/x" ]
expect_eq "bad input: no job launched" "$(launches)" 0
done_testing
