# SPDX-License-Identifier: MIT
# scripts/compare stopped by a signal while a job runs (a stand-in launcher
# of no MPI, tests/comparelib.sh compare_slow, behaves as scripts/launch
# does on signals): kill -INT of the compare process alone, its job ending
# by itself as the signal comes, records the job's own exit status 0 (not
# 130) and --resume keeps the cell; kill -TERM (timeout, systemd, scancel)
# is passed on to the job, which stops (exit 130, recorded as interrupted),
# compare writes its report and exits 143, and --resume runs the cell again;
# kill -KILL of compare leaves no job behind (parent-death signal: the job
# gets SIGTERM); --jobs-timeout stops a job as SIGTERM does (SIGKILL with
# the real launcher on an MPI job: tests/mpi/compare_signals.sh). Each
# compare runs in the
# background with SIGINT restored (a background job of a script otherwise
# ignores it).
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../comparelib.sh"
cd "$TEST_ROOT" || exit 1
C="$TEST_ROOT/scripts/compare"
W="$TEST_TMP/compare_signals"
rm -rf "$W"
compare_slow "$W"
compare_standins "$W"
FX=tests/fixtures/configs/mpi-small.yaml
matrix=("$FX" --modes ps_sync --learners 1 --seeds 2)

# cell NAME KEY: compare.json's KEY of cell NAME
cell() {
    python3 -c 'import json, sys
c = [c for c in json.load(open(sys.argv[1]))["cells"] if c["name"] == sys.argv[2]]
print(c[0].get(sys.argv[3]) if c else "no cell")' "$1/compare.json" "$2" "$3"
}

# ---- SIGINT to compare alone; the job ends by itself (exit 0) ----------------------
D="$W/int"
touch "$W/finish"
export GORILA_LAUNCH="$W/bin/slow"
start_compare "$D" "${matrix[@]}"
check "int: the first job started" wait_for "the first job" test -s "$W/job.pid"
jpid=$(cat "$W/job.pid" 2>/dev/null)
kill -INT "$cpid"
touch "$W/release"
finish_compare
expect_eq "int: compare exits 130" "$rc" 130
expect_eq "int: the cell records the job's own exit status 0" "$(cell "$D" ps_sync-L1-s1 exit)" 0
expect_eq "int: the cell is not marked interrupted" "$(cell "$D" ps_sync-L1-s1 interrupted)" False
check "int: report.md written" test -s "$D/report.md"
expect_contains "int: compare says it was interrupted" "$(cat "$D.err")" "compare: interrupted (SIGINT)"
reap "$jpid"
rm -f "$W/launches"
run_cmd "$C" "${matrix[@]}" --out "$D" --resume
expect_rc "int: --resume exits 0" 0
expect_eq "int: --resume runs only the second cell" "$(launches)" 1
expect_eq "int: --resume keeps the first cell with exit 0" "$(cell "$D" ps_sync-L1-s1 exit)" 0
expect_eq "int: the second cell exit 0" "$(cell "$D" ps_sync-L1-s2 exit)" 0

# ---- SIGTERM: passed on, the job stops, the report is written ------------------------
D="$W/term"
rm -f "$W/finish" "$W/release" "$W/launches"
start_compare "$D" "${matrix[@]}"
check "term: the first job started" wait_for "the first job" test -s "$W/job.pid"
jpid=$(cat "$W/job.pid" 2>/dev/null)
kill -TERM "$cpid"
finish_compare
expect_eq "term: compare exits 143" "$rc" 143
expect_eq "term: the job got SIGTERM once" "$(cat "$W/job.signals" 2>/dev/null)" TERM
check "term: the job is gone" wait_for "the job to end" gone "$jpid"
expect_eq "term: the cell records the job's exit status 130" "$(cell "$D" ps_sync-L1-s1 exit)" 130
expect_eq "term: the cell is marked interrupted" "$(cell "$D" ps_sync-L1-s1 interrupted)" True
check "term: report.md written" test -s "$D/report.md"
expect_eq "term: the second cell did not run" "$(launches)" 1
reap "$jpid"
touch "$W/release"
rm -f "$W/launches"
run_cmd "$C" "${matrix[@]}" --out "$D" --resume
expect_rc "term: --resume exits 0" 0
expect_eq "term: --resume runs the interrupted cell again and the second" "$(launches)" 2
expect_eq "term: the first cell now exit 0" "$(cell "$D" ps_sync-L1-s1 exit)" 0

# ---- SIGKILL: the job gets SIGTERM from the kernel ----------------------------------
D="$W/kill"
rm -f "$W/release" "$W/launches"
start_compare "$D" "${matrix[@]}"
check "kill: the first job started" wait_for "the first job" test -s "$W/job.pid"
jpid=$(cat "$W/job.pid" 2>/dev/null)
kill -KILL "$cpid"
finish_compare
expect_eq "kill: compare died of SIGKILL" "$rc" 137
check "kill: the job ends without compare" wait_for "the job to end" gone "$jpid"
expect_eq "kill: the job got SIGTERM" "$(cat "$W/job.signals" 2>/dev/null)" TERM
reap "$jpid"
touch "$W/release"
rm -f "$W/launches"
run_cmd "$C" "${matrix[@]}" --out "$D" --resume
expect_rc "kill: --resume exits 0" 0
expect_eq "kill: --resume runs both cells (the first was stopped)" "$(launches)" 2

# ---- --jobs-timeout: the job is stopped the same way, the cell timed out (124) ----
D="$W/timeout"
rm -f "$W/release" "$W/launches" "$W/job.signals"
run_cmd "$C" "$FX" --modes ps_sync --learners 1 --seeds 1 --jobs-timeout 1 --out "$D"
expect_rc "timeout: compare exits 0" 0
expect_eq "timeout: the job got SIGTERM" "$(cat "$W/job.signals" 2>/dev/null)" TERM
expect_eq "timeout: the cell exit 124" "$(cell "$D" ps_sync-L1-s1 exit)" 124
expect_eq "timeout: the cell timed out" "$(cell "$D" ps_sync-L1-s1 timed_out)" True
unset GORILA_LAUNCH

done_testing
