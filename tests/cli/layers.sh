#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/cli/layers.sh: `make check-layers` (the dependency rule of
# docs/ARCHITECTURE.md) passes on this tree and fails, naming the file, when
# a lower layer includes mpi.h or a header from a layer above it, or a room
# of src/core reaches another room's private headers; and the source id
# covers every room. Runs on a
# copy of the sources, so the tree under test is never touched.
source "$(dirname "$0")/../lib.sh"

copy="$TEST_TMP/layers"
rm -rf "$copy"
mkdir -p "$copy"
cp -r "$TEST_ROOT/Makefile" "$TEST_ROOT/VERSION" "$TEST_ROOT/src" "$TEST_ROOT/envs" "$TEST_ROOT/agents" "$copy/"

# Each broken copy is checked on the file it broke (LAYER_ONLY), the
# restored copy on every file at the end (make check runs it on the tree).
# An env that includes mpi.h.
cp "$copy/envs/cartpole.c" "$copy/cartpole.c.orig"
sed -i '1i #include <mpi.h>' "$copy/envs/cartpole.c"
run_cmd make -s -C "$copy" BUILD="$copy/build" LAYER_ONLY=envs/cartpole.c check-layers
expect_rc "an envs/ file including mpi.h fails check-layers" 2
expect_contains "the failure names the file and MPI" "$out$err" "envs/cartpole.c includes mpi.h: only src/mpi may use MPI"
cp "$copy/cartpole.c.orig" "$copy/envs/cartpole.c"

# A core file that includes a header of src/mpi.
sed -i '1i #include "comm.h"' "$copy/src/core/layout/layout.c"
run_cmd make -s -C "$copy" BUILD="$copy/build" LAYER_ONLY=src/core/layout/layout.c check-layers
expect_rc "a core file including a src/mpi header fails check-layers" 2
expect_contains "the failure names the file" "$out$err" "src/core/layout/layout.c does not compile with the include paths of its layer"
sed -i '1d' "$copy/src/core/layout/layout.c"

# An agent that includes an env header (agents see only src/base).
sed -i '1i #include "env.h"' "$copy/agents/dqn.c"
run_cmd make -s -C "$copy" BUILD="$copy/build" LAYER_ONLY=agents/dqn.c check-layers
expect_rc "an agents/ file including an envs/ header fails check-layers" 2
sed -i '1d' "$copy/agents/dqn.c"

# A room's private header, included from another room: not on its path.
sed -i '1i #include "configint.h"' "$copy/src/core/run/runctl.c"
run_cmd make -s -C "$copy" BUILD="$copy/build" LAYER_ONLY=src/core/run/runctl.c check-layers
expect_rc "a run/ file including config/'s private header fails check-layers" 2
expect_contains "the failure names the file" "$out$err" "src/core/run/runctl.c does not compile with the include paths of its layer"
sed -i '1d' "$copy/src/core/run/runctl.c"
# ... or reached through a path from a room's public folder.
sed -i '1i #include "private/configint.h"' "$copy/src/core/run/runctl.c"
run_cmd make -s -C "$copy" BUILD="$copy/build" LAYER_ONLY=src/core/run/runctl.c check-layers
expect_rc "a quoted include with a path fails check-layers" 2
expect_contains "the failure says why" "$out$err" "src/core/run/runctl.c: a quoted include names a path"
sed -i '1d' "$copy/src/core/run/runctl.c"
run_cmd make -s -C "$copy" BUILD="$copy/build" check-layers
expect_rc "check-layers passes again on the restored copy" 0

# The source id covers every room: a change to a file in any of them is a
# new build (version.sh checks that the binary embeds this id).
id0=$(make -s --no-print-directory -C "$copy" source-id 2>/dev/null)
for room in "$copy"/src/core/*/; do
    f=$(find "$room" -name '*.[ch]' | sort | head -1)
    cp "$f" "$f.orig"
    echo "/* touched */" >>"$f"
    id1=$(make -s --no-print-directory -C "$copy" source-id 2>/dev/null)
    check "a change in src/core/$(basename "$room")/ changes the source id ($id0 -> $id1)" [ -n "$id1" ] && [ "$id1" != "$id0" ]
    mv "$f.orig" "$f"
done
f=$(find "$copy"/src/core/*/private -name '*.h' | head -1)
echo "/* touched */" >>"$f"
id1=$(make -s --no-print-directory -C "$copy" source-id 2>/dev/null)
check "a change in a private header changes the source id" [ -n "$id1" ] && [ "$id1" != "$id0" ]

# make check-cycles on objects made here: two files that call each other
# are a cycle, named; one way only is none. (The tree's own objects pass
# in make test, which runs check-layers after check-cycles.)
o="$TEST_TMP/cycles"
mkdir -p "$o"
printf 'int b_f(void);\nint a_f(void) { return b_f(); }\n' >"$o/a.c"
printf 'int a_f(void);\nint b_f(void) { return a_f() + 1; }\n' >"$o/b.c"
printf 'int b_g(void) { return 1; }\n' >"$o/c.c"
for f in a b c; do gcc -c "$o/$f.c" -o "$o/$f.o"; done
run_cmd make -s -C "$copy" BUILD="$o/build" LIB_OBJ="$o/a.o $o/b.o" CLI_OBJ= check-cycles
expect_rc "two objects that call each other fail check-cycles" 2
expect_contains "the failure names the cycle" "$out$err" "check-cycles: a cycle between object files:"
expect_contains "the failure names the files" "$out$err" "$o/a.o"
run_cmd make -s -C "$copy" BUILD="$o/build" LIB_OBJ="$o/a.o $o/c.o" CLI_OBJ= check-cycles
expect_rc "objects that call one way pass check-cycles" 0

rm -rf "$copy" "$o"
done_testing
