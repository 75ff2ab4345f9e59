# SPDX-License-Identifier: MIT
# learner.loss_outlier_sigma (src/core/train/lossguard.h): with a low bound some
# gradients are dropped in every sync mode, the job still ends (a dropped
# gradient in ps_sync and allreduce is a zero in the round, so nobody waits
# for it), and summary.json counts them per learner and in all; with the
# default 0 nothing is dropped; a local run refuses the key.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../mpilib.sh"
cd "$TEST_ROOT" || exit 1

# counts FILE: "LEARNERS_SUM TOP_LEVEL" of loss_outliers_dropped
counts() {
    python3 -c 'import json, sys
s = json.load(open(sys.argv[1]))
print(sum(x["loss_outliers_dropped"] for x in s["roles"]["learner"]), s["loss_outliers_dropped"])' "$1" 2>/dev/null
}
for mode in ps_sync ps_async allreduce; do
    ps=1
    [ $mode = allreduce ] && ps=0
    job "guard-$mode" --set sync.mode=$mode --set roles.param_servers=$ps --set roles.learners=2 \
        --set learner.loss_outlier_sigma=0.5
    expect_rc "$mode, sigma 0.5: exit status 0" 0
    read -r sum top <<<"$(counts "$RUN/summary.json")"
    check "$mode, sigma 0.5: gradients dropped (${sum:-none})" [ "${sum:-0}" -gt 0 ]
    expect_eq "$mode: the total is the learners' sum" "${top:-}" "${sum:-x}"
done
job guard-off --set roles.learners=2
expect_rc "sigma 0: exit status 0" 0
expect_eq "sigma 0: nothing dropped" "$(counts "$RUN/summary.json")" "0 0"
run_cmd "$GORILA" train "$SMALL" --local --set learner.loss_outlier_sigma=3 --set run.out_dir="$RUNS"
expect_rc "a local run refuses learner.loss_outlier_sigma: exit status 2" 2
expect_contains "a local run refuses learner.loss_outlier_sigma: says why" "$err" \
    "guards the learners of a distributed job, but run.mode is local"
done_testing
