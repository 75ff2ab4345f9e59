#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/cli/license.sh: every source file says its licence. Each C file,
# header, shell or Python script, executable script and the Makefile has an
# SPDX-License-Identifier line in its first three lines; the identifier is
# MIT (the root LICENSE) everywhere but under envs/minatar/, the port of
# MinAtar's rules, which is GPL-3.0-or-later like the original. Third-party
# files that keep their own licence (TensorBoard's .proto files under
# tests/tb, with tests/tb/LICENSE-tensorboard) are not ours to tag.
source "$(dirname "$0")/../lib.sh"
cd "$TEST_ROOT" || exit 1

# is_source FILE: a file that must carry an identifier
is_source() {
    case $1 in
    tests/tb/proto/*) return 1 ;;
    *.c | *.h | *.sh | *.py | Makefile | */Makefile | *.sbatch) return 0 ;;
    *.*) return 1 ;;
    esac
    [ -f "$1" ] && head -c 2 "$1" | grep -q '^#!'
}

# spdx_problems FILE...: one line per file whose identifier is missing or
# not the one its folder allows; nothing when all are right
spdx_problems() {
    local f id
    for f in "$@"; do
        is_source "$f" || continue
        id=$(head -n 3 "$f" | sed -n 's/.*SPDX-License-Identifier: *\([^ */]*\).*/\1/p' | head -1)
        case $f in
        envs/minatar/*) allowed="GPL-3.0-or-later" ;;
        *) allowed="MIT" ;;
        esac
        if [ -z "$id" ]; then echo "$f: no SPDX-License-Identifier in its first 3 lines"
        elif [ "$id" != "$allowed" ]; then echo "$f: SPDX-License-Identifier $id, expected $allowed here"
        fi
    done
}

if git rev-parse --git-dir >/dev/null 2>&1; then
    mapfile -t files < <(git ls-files)
else
    mapfile -t files < <(find . -path ./build -prune -o -path './build-*' -prune -o -type f -print | sed 's|^\./||')
fi
check "source files found (${#files[@]})" [ "${#files[@]}" -gt 100 ]
n=0
for f in "${files[@]}"; do is_source "$f" && n=$((n + 1)); done
check "C, shell and Python sources among them ($n)" [ "$n" -gt 200 ]
problems=$(spdx_problems "${files[@]}")
expect_eq "every source file has the SPDX identifier its folder allows" "$problems" ""

# The check itself: files made here that it must refuse, and ones it must take
scratch=$(mktemp -d "$TEST_TMP/license.XXXXXX")
mkdir -p "$scratch/src/base" "$scratch/envs/minatar" "$scratch/scripts"
printf '/* util.c: no identifier */\nint x;\n' >"$scratch/src/base/none.c"
printf '/* SPDX-License-Identifier: GPL-3.0-or-later */\n' >"$scratch/src/base/gpl.c"
printf '/* SPDX-License-Identifier: GPL-3.0-or-later */\n' >"$scratch/envs/minatar/breakout.c"
printf '/* SPDX-License-Identifier: MIT */\n' >"$scratch/envs/minatar/mit.c"
printf '#!/bin/sh\necho hi\necho there\n# SPDX-License-Identifier: MIT\n' >"$scratch/scripts/late"
printf '#!/bin/sh\n# SPDX-License-Identifier: MIT\n' >"$scratch/scripts/tool"
printf '/* SPDX-License-Identifier: MIT */\n' >"$scratch/src/base/ok.h"
got=$(cd "$scratch" && spdx_problems src/base/none.c src/base/gpl.c envs/minatar/breakout.c envs/minatar/mit.c \
    scripts/late scripts/tool src/base/ok.h)
expect_eq "the check refuses a missing, a misplaced GPL, a MIT port and a late identifier" "$got" \
"src/base/none.c: no SPDX-License-Identifier in its first 3 lines
src/base/gpl.c: SPDX-License-Identifier GPL-3.0-or-later, expected MIT here
envs/minatar/mit.c: SPDX-License-Identifier MIT, expected GPL-3.0-or-later here
scripts/late: no SPDX-License-Identifier in its first 3 lines"
rm -rf "$scratch"

# The identifier is no part of any help text: each script's --help is its
# whole header comment after the SPDX line (the shell scripts print that
# block; the Python ones argparse's text, which never had it)
for s in launch simcluster bench-layouts bench-multinode; do
    want=$(awk 'NR > 2 && !/^#/ { exit } NR > 2' "scripts/$s" | sed 's/^# \{0,1\}//')
    run_cmd "scripts/$s" --help
    expect_rc "scripts/$s --help: exit 0" 0
    expect_eq "scripts/$s --help: its header comment, all of it, without the SPDX line" "$out" "$want"
done
for s in compare seeds costmodel tb-dump; do
    run_cmd "scripts/$s" --help
    expect_eq "scripts/$s --help: exit 0, no SPDX line" "$rc $(grep -c SPDX <<<"$out$err")" "0 0"
done

check "LICENSE at the root is the MIT licence" grep -q '^MIT License' LICENSE
check "README has a License section naming MIT" grep -qE '^## Licen[cs]e' README.md
done_testing
