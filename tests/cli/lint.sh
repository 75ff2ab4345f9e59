# SPDX-License-Identifier: MIT
# Lint of the scripts: flake8 (--max-line-length=120) on tools/ and every
# Python script in scripts/ and tests/, shellcheck (settings: .shellcheckrc)
# on every shell script in scripts/, tests/ and .ci/. A script is what ends
# in .py or .sh or starts with a python, bash or sh shebang. One check per
# file, its findings below it; a linter that is not installed is a counted
# SKIP (scripts/install-deps.sh installs both).
source "$(dirname "$0")/../lib.sh"
cd "$TEST_ROOT" || exit 1

py=()
sh=()
while IFS= read -r -d '' f; do
    case $f in
    *.py) py+=("$f") ;;
    *.sh) sh+=("$f") ;;
    *)
        first=$(head -n 1 "$f" 2>/dev/null | tr -d '\0')
        if [[ $first =~ ^'#!'.*python ]]; then
            py+=("$f")
        elif [[ $first =~ ^'#!'.*(/|env[[:space:]]+)(ba)?sh([[:space:]]|$) ]]; then
            sh+=("$f")
        fi
        ;;
    esac
done < <(find scripts tests .ci -type f -not -path 'tests/fixtures/*' -print0 | sort -z)
check "found the Python scripts (scripts/compare among them)" grep -qx scripts/compare < <(printf '%s\n' "${py[@]}")
check "found the shell scripts (tests/lib.sh among them)" grep -qx tests/lib.sh < <(printf '%s\n' "${sh[@]}")

# lint TOOL FILE ARGS...: one check, the findings as TAP comments
# lint_all TOOL ARGS... -- FILE...: one run of TOOL over every FILE (one
# process, not one per file: flake8 and shellcheck start slowly), then a
# check per file: ok when no finding names it. Each finding starts with
# "FILE:" (flake8's default format, shellcheck's -f gcc; a directory's
# findings name the files under it). A run that fails
# with no finding naming any file (the tool itself broke) fails every file.
lint_all() {
    local tool=$1 args=() f findings rc mine
    shift
    while [ "$1" != -- ]; do args+=("$1"); shift; done
    shift
    findings=$("$tool" "${args[@]}" "$@" 2>&1)
    rc=$?
    for f in "$@"; do
        mine=$(awk -v f="$f" '{ p = index($0, ":"); if (!p) next; n = substr($0, 1, p - 1); sub(/^\.\//, "", n)
            if (n == f || index(n, f "/") == 1) print }' <<<"$findings")
        if [ -z "$mine" ] && { [ $rc -eq 0 ] || grep -qE '^[^ :]+:[0-9]+:' <<<"$findings"; }; then ok "$tool $f"; else
            not_ok "$tool $f"
            while IFS= read -r line; do echo "# $line"; done <<<"${mine:-$findings}"
        fi
    done
}

if command -v flake8 >/dev/null; then
    lint_all flake8 --max-line-length=120 -- tools "${py[@]}"
else
    ok "flake8 # SKIP flake8 is not installed (Debian: apt-get install flake8; scripts/install-deps.sh)"
fi
if command -v shellcheck >/dev/null; then
    lint_all shellcheck -f gcc -- "${sh[@]}"
else
    ok "shellcheck # SKIP shellcheck is not installed (Debian: apt-get install shellcheck; scripts/install-deps.sh)"
fi
done_testing
