#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/cli/bounds.sh: the house bounds, so they cannot creep back. No C
# function of the project (every tracked .c outside tests/) is longer than
# 100 lines, counted from its signature line to its closing brace,
# inclusive; src/mpi/coordinator.c is at most 600 lines; no source cites
# an outside tracker's issue numbers. The counter is
# checked first on a file made here, so a counter that finds nothing
# cannot pass.
source "$(dirname "$0")/../lib.sh"
cd "$TEST_ROOT" || exit 1

# long_functions FILE...: "file:line: N lines: signature" for each function
# over 100 lines. A function starts at a line that begins (column 0) with
# an identifier, has "(" and does not end in ";" (a prototype) or start a
# data definition; it ends at the first "}" in column 0.
long_functions() {
    awk '
        FNR == 1 { infn = 0 }
        /^[A-Za-z_].*\(/ && !/;[[:space:]]*$/ && !/^(typedef|struct|enum|union)[^(]*[;{]/ && !/=/ {
            if (!infn) { start = FNR; sig = $0; infn = 1 }
        }
        /^}/ && infn { n = FNR - start + 1; if (n > 100) printf "%s:%d: %d lines: %s\n", FILENAME, start, n, sig; infn = 0 }
    ' "$@"
}

w=$(mktemp -d "$TEST_TMP/bounds.XXXXXX")
{
    echo "static int short_one(int x) {"
    echo "    return x;"
    echo "}"
    echo "int long_one(int x)"
    echo "{"
    for i in $(seq 1 97); do echo "    x += $i;"; done
    echo "    return x;"
    echo "}"
    echo "int exactly_100(int x) {"
    for i in $(seq 1 97); do echo "    x += $i;"; done
    echo "    return x;"
    echo "}"
    echo "static const int table[] = {"
    for i in $(seq 1 120); do echo "    $i,"; done
    echo "};"
} >"$w/sample.c"
expect_eq "the counter finds the 101-line function and nothing else in a sample" \
    "$(long_functions "$w/sample.c" | sed "s|$w/||")" "sample.c:4: 101 lines: int long_one(int x)"
rm -rf "$w"

mapfile -t files < <(git ls-files '*.c' 2>/dev/null | grep -v '^tests/' ||
    find src envs agents -name '*.c')
check "C files found (${#files[@]})" [ "${#files[@]}" -gt 50 ]
expect_eq "no function over 100 lines in src/, envs/, agents/ or any other C folder" "$(long_functions "${files[@]}")" ""
n=$(wc -l <src/mpi/coordinator.c)
check "src/mpi/coordinator.c is at most 600 lines ($n)" [ "$n" -le 600 ]
# Comments explain without citing an issue tracker outside the repository
# ("issue 10" says nothing to a reader of the code).
cites=$(git ls-files 'src' 'envs' 'agents' 'tests' 'scripts' 'tools' 'Makefile' 2>/dev/null |
    grep -vE '^tests/(fixtures|tb)/' | xargs grep -nE '\bissues? [0-9]+' 2>/dev/null | grep -v '^tests/cli/bounds.sh:')
expect_eq "no source file cites an outside tracker's issue number" "$cites" ""
done_testing
