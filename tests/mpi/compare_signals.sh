#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# scripts/compare killed (SIGKILL) while its real launcher runs a small MPI
# job: the job gets SIGTERM from the kernel (compare's parent-death signal),
# stops cleanly (summary.json stop_reason signal) and no gorila or mpirun
# process of it is left. The stand-in cases are tests/cli/compare_signals.sh.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../comparelib.sh"
cd "$TEST_ROOT" || exit 1
C="$TEST_ROOT/scripts/compare"
W="$TEST_TMP/compare_signals"
rm -rf "$W"
mkdir -p "$W"
FX=tests/fixtures/configs/mpi-small.yaml


# ---- SIGKILL with the real launcher: no gorila or mpirun left ------------------------
D="$W/real"
rm -f "$W/launches"
start_compare "$D" "$FX" --modes ps_sync --learners 1 --seeds 1 --set run.max_env_steps=100000000 \
    --set run.max_seconds=0 --set run.stop_when_solved=false
run="$D/runs/ps_sync-L1-s1"
# processes of this matrix's job: its run directory is in their arguments
job_pids() { pgrep -f -- "run.out_dir=$D/runs" | grep -vx "$cpid"; }
no_job() { [ -z "$(job_pids)" ]; }
check "real: the job started" wait_for "the job's config.yaml" test -s "$run/config.yaml"
check "real: its processes run" test -n "$(job_pids)"
kill -KILL "$cpid"
finish_compare
check "real: no process of the job is left" wait_for "the job's processes to end" no_job
left=$(job_pids)
if [ -n "$left" ]; then
    ps -o pid=,args= -p "$(tr '\n' , <<<"$left" | sed 's/,$//')" | sed 's/^/# left: /'
    for p in $left; do reap "$p"; done
fi
expect_eq "real: the job stopped cleanly (summary.json stop_reason)" \
    "$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1])).get("stop_reason"))' "$run/summary.json" 2>&1)" signal
done_testing
