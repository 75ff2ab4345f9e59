#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/cli/runall.sh: tests/run-all itself, on scripts made here. A check
# that fails makes the status column FAIL and the summary count it; a
# script that exits non-zero, or reports nothing, is one more failure; a
# skip is counted apart; each script gets a scratch directory of its own;
# single scripts run with nothing set by hand; the times file is written;
# a script of a cli folder that starts mpirun fails.
source "$(dirname "$0")/../lib.sh"
cd "$TEST_ROOT" || exit 1

w=$(mktemp -d "$TEST_TMP/runall.XXXXXX")
mkdir -p "$w/build" "$w/t"
cat >"$w/t/pass.sh" <<'S'
echo "ok 1 - one"; echo "ok 2 - two # SKIP not here"; echo "$TEST_TMP" >"$TEST_TMP/where"; echo "$TEST_TMP"
S
cat >"$w/t/fail.sh" <<'S'
echo "ok 1 - one"; echo "not ok 2 - two"
S
cat >"$w/t/crash.sh" <<'S'
echo "ok 1 - one"; exit 3
S
cat >"$w/t/silent.sh" <<'S'
true
S
# run_all ARGS...: tests/run-all with a build directory of its own, from
# an environment without the variables a run sets
run_all() { run_cmd env -u GORILA -u TEST_TMP -u TEST_ROOT tests/run-all "$w/build" "$@"; }

run_all "$w/t/pass.sh"
expect_rc "a passing script: exit 0" 0
expect_contains "a passing script: summary" "$out" "1 passed, 0 failed"
expect_contains "a passing script: the skip counted apart" "$out" "1 skipped (not counted as passed"
status=$(grep -F "$w/t/pass.sh " <<<"$out" | awk '{print $NF}')
expect_eq "a passing script: status ok" "$status" "ok"
where=$(cat "$w/build/test-tmp/"*pass.sh/where 2>/dev/null)
check "a script's TEST_TMP is a directory of its own under BUILD/test-tmp ($where)" \
    bash -c '[[ "$1" == "$2"/test-tmp/*pass.sh ]] && [ -d "$1" ]' _ "$where" "$w/build"

run_all "$w/t/fail.sh"
expect_rc "a failing check: exit 1" 1
expect_contains "a failing check: summary" "$out" "1 passed, 1 failed"
status=$(grep -F "$w/t/fail.sh " <<<"$out" | tail -1 | awk '{print $NF}')
expect_eq "a failing check: status FAIL, not ok" "$status" "FAIL"

run_all "$w/t/crash.sh"
expect_rc "a script that exits 3: exit 1" 1
expect_contains "a script that exits 3: summary" "$out" "1 passed, 1 failed"
expect_contains "a script that exits 3: status" "$out" "FAIL: exit status 3"

run_all "$w/t/silent.sh"
expect_rc "a script that reports nothing: exit 1" 1
expect_contains "a script that reports nothing: status" "$out" "FAIL: reported no tests"

run_all -j 2 "$w/t/pass.sh" "$w/t/fail.sh"
expect_contains "two scripts at -j 2: summed" "$out" "2 passed, 1 failed"
expect_eq "the times file: a line per script" "$(wc -l <"$w/build/test-times.txt")" 2
check "the times file: seconds then name" grep -qE "^[0-9]+ $w/t/fail.sh$" "$w/build/test-times.txt"

# A script of a cli folder starts no MPI job: mpirun (directly or through
# scripts/launch) is a stand-in that records the call and fails, and the
# script fails with it; `mpirun --version` is the real one. Scripts of
# other folders (tests/mpi) get the real mpirun.
mkdir -p "$w/cli"
cat >"$w/cli/job.sh" <<'S'
mpirun -np 1 true; echo "ok 1 - after mpirun"
S
cat >"$w/cli/launch.sh" <<S
GORILA="$GORILA" "\$TEST_ROOT/scripts/launch" configs/local/cartpole.yaml --no-probe >/dev/null 2>&1; echo "ok 1 - after launch"
S
cat >"$w/cli/version.sh" <<'S'
if mpirun --version | grep -q 'Open MPI'; then echo "ok 1 - mpirun --version"; else echo "not ok 1 - mpirun --version"; fi
S
cat >"$w/t/where.sh" <<'S'
case $(command -v mpirun) in "$(dirname "$TEST_TMP")"/.no-mpi/*) echo "not ok 1 - the stand-in out of cli" ;; *) echo "ok 1 - no stand-in" ;; esac
S
run_all "$w/cli/job.sh"
expect_rc "a cli script that runs mpirun: exit 1" 1
expect_contains "a cli script that runs mpirun: its status says so" "$out" \
    "FAIL: started an MPI job (mpirun -np 1 true): tests/cli starts none"
expect_contains "a cli script that runs mpirun: the stand-in says why" "$out" \
    "mpirun: not started: a script in tests/cli starts no MPI job"
expect_contains "a cli script that runs mpirun: counted" "$out" "1 passed, 1 failed"
run_all "$w/cli/launch.sh"
expect_rc "a cli script that runs scripts/launch: exit 1" 1
expect_contains "a cli script that runs scripts/launch: its status says so" "$out" "FAIL: started an MPI job (mpirun -np 1 "
run_all "$w/cli/version.sh"
expect_rc "a cli script may ask mpirun --version" 0
expect_contains "mpirun --version: the real one" "$out" "1 passed, 0 failed"
run_all "$w/t/where.sh"
expect_contains "a script of another folder: no stand-in" "$out" "1 passed, 0 failed"
check "no tests/cli script sources tests/mpilib.sh (the MPI tests' helpers)" \
    bash -c '! grep -lE "^[[:space:]]*(source|\.) .*mpilib\.sh" tests/cli/*.sh'

# -j: a free slot takes the next script while a long one runs (slow.sh
# waits, up to 60 s, for the third script to start), and the scripts slowest
# in the times file start first; the report keeps the order given.
mkdir -p "$w/s/cli"
cat >"$w/s/cli/slow.sh" <<S
echo slow >>"$w/s/started"
for _ in \$(seq 300); do grep -qx c "$w/s/started" && break; sleep 0.2; done
if grep -qx c "$w/s/started"; then echo "ok 1 - c started while slow ran"; else echo "not ok 1 - c never started"; fi
S
for n in a b c; do printf 'echo %s >>"%s"\necho "ok 1 - %s"\n' "$n" "$w/s/started" "$n" >"$w/s/cli/$n.sh"; done
run_all -j 2 "$w/s/cli/slow.sh" "$w/s/cli/a.sh" "$w/s/cli/b.sh" "$w/s/cli/c.sh"
expect_contains "-j 2: a long script holds up no slot" "$out" "4 passed, 0 failed"
expect_eq "-j 2: reported in the order given" "$(grep -o "$w/s/cli/[a-z]*\.sh" <<<"$out" | xargs -n1 basename | tr '\n' ' ')" \
    "slow.sh a.sh b.sh c.sh "
rm -f "$w/s/started"
printf '%s\n' "9 $w/s/cli/c.sh" "5 $w/s/cli/b.sh" "1 $w/s/cli/a.sh" >"$w/build/test-times.txt"
run_all -j 1 "$w/s/cli/a.sh" "$w/s/cli/b.sh" "$w/s/cli/c.sh"
expect_eq "the slowest of the last run start first" "$(tr '\n' ' ' <"$w/s/started")" "c b a "
expect_eq "... and are reported in the order given" "$(grep -o "$w/s/cli/[a-z]*\.sh" <<<"$out" | xargs -n1 basename | tr '\n' ' ')" \
    "a.sh b.sh c.sh "

run_cmd tests/run-all "$w/build" "$w/t/none.sh"
expect_rc "a missing script: exit 2" 2
run_cmd tests/run-all "$w/build" bogus
expect_rc "an unknown group: exit 2" 2
expect_contains "an unknown group: message" "$err" "unknown group 'bogus'"
run_cmd tests/run-all -j 0 "$w/build" cli
expect_rc "-j 0: exit 2" 2
rm -rf "$w"
done_testing
