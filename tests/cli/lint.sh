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
lint() {
    local tool=$1 f=$2 findings
    shift 2
    if findings=$("$tool" "$@" "$f" 2>&1); then ok "$tool $f"; else
        not_ok "$tool $f"
        while IFS= read -r line; do echo "# $line"; done <<<"$findings"
    fi
}

if command -v flake8 >/dev/null; then
    lint flake8 tools --max-line-length=120
    for f in "${py[@]}"; do lint flake8 "$f" --max-line-length=120; done
else
    ok "flake8 # SKIP flake8 is not installed (Debian: apt-get install flake8; scripts/install-deps.sh)"
fi
if command -v shellcheck >/dev/null; then
    for f in "${sh[@]}"; do lint shellcheck "$f"; done
else
    ok "shellcheck # SKIP shellcheck is not installed (Debian: apt-get install shellcheck; scripts/install-deps.sh)"
fi
done_testing
