# SPDX-License-Identifier: MIT
# tests/lib.sh: TAP helpers for shell tests. Source it, then call check
# or the helpers below; end with `done_testing`.
#   $GORILA    the binary under test
#   $TEST_TMP  scratch directory of this script (tests/run-all makes it)
set -u
: "${GORILA:?run through tests/run-all}"
: "${TEST_TMP:?run through tests/run-all}"
tap_n=0
tap_fail=0
echo "TAP version 13"

ok() { tap_n=$((tap_n + 1)); echo "ok $tap_n - $*"; }
not_ok() { tap_n=$((tap_n + 1)); tap_fail=$((tap_fail + 1)); echo "not ok $tap_n - $*"; }

# check NAME CMD...: pass when CMD exits 0.
check() {
    local name=$1
    shift
    if "$@"; then ok "$name"; else not_ok "$name"; fi
}

# run_cmd CMD...: run CMD, keep stdout in $out, stderr in $err, status in $rc.
run_cmd() {
    local o e
    o=$(mktemp "$TEST_TMP/out.XXXXXX")
    e=$(mktemp "$TEST_TMP/err.XXXXXX")
    "$@" >"$o" 2>"$e"
    rc=$?
    out=$(cat "$o")
    err=$(cat "$e")
    rm -f "$o" "$e"
}

# expect_rc NAME WANT: the last run_cmd exited with status WANT.
expect_rc() {
    if [ "$rc" -eq "$2" ]; then ok "$1"; else
        not_ok "$1 (exit status $rc, wanted $2)"
        echo "# stdout: ${out:0:500}"
        echo "# stderr: ${err:0:500}"
    fi
}

# expect_contains NAME HAYSTACK NEEDLE: fixed-string match.
expect_contains() {
    if grep -qF -- "$3" <<<"$2"; then ok "$1"; else
        not_ok "$1"
        echo "# expected to find: $3"
        echo "# in: ${2:0:800}"
    fi
}

# expect_eq NAME GOT WANT
expect_eq() {
    if [ "$2" == "$3" ]; then ok "$1"; else
        not_ok "$1"
        echo "# got:  ${2:0:800}"
        echo "# want: ${3:0:800}"
    fi
}

done_testing() {
    echo "1..$tap_n"
    [ "$tap_fail" -eq 0 ]
}

# expect_fail NAME: the last run_cmd failed by itself (non-zero status, and
# not killed by the timeout guard: 124, or 137 after --kill-after).
expect_fail() {
    if [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && [ "$rc" -ne 137 ]; then ok "$1 (exit status $rc)"; else
        not_ok "$1 (exit status $rc)"
        echo "# stderr: ${err:0:500}"
    fi
}

# jnum JSON KEY: a number from a one-line JSON object (gorila eval --json).
jnum() { sed -n "s/.*\"$2\": \([^,}]*\).*/\1/p" <<<"$1"; }
