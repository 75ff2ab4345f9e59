#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/cli/layers.sh: `make check-layers` (the dependency rule of
# docs/ARCHITECTURE.md) passes on this tree and fails, naming the file, when
# a lower layer includes mpi.h or a header from a layer above it. Runs on a
# copy of the sources, so the tree under test is never touched.
source "$(dirname "$0")/../lib.sh"

copy="$TEST_TMP/layers"
rm -rf "$copy"
mkdir -p "$copy"
cp -r "$TEST_ROOT/Makefile" "$TEST_ROOT/src" "$TEST_ROOT/envs" "$TEST_ROOT/agents" "$copy/"

run_cmd make -s -C "$copy" BUILD="$copy/build" check-layers
expect_rc "check-layers passes on the tree as it is" 0

# An env that includes mpi.h.
cp "$copy/envs/cartpole.c" "$copy/cartpole.c.orig"
sed -i '1i #include <mpi.h>' "$copy/envs/cartpole.c"
run_cmd make -s -C "$copy" BUILD="$copy/build" check-layers
expect_rc "an envs/ file including mpi.h fails check-layers" 2
expect_contains "the failure names the file and MPI" "$out$err" "envs/cartpole.c includes mpi.h: only src/mpi may use MPI"
cp "$copy/cartpole.c.orig" "$copy/envs/cartpole.c"

# A core file that includes a header of src/mpi.
sed -i '1i #include "comm.h"' "$copy/src/core/layout.c"
run_cmd make -s -C "$copy" BUILD="$copy/build" check-layers
expect_rc "a core file including a src/mpi header fails check-layers" 2
expect_contains "the failure names the file" "$out$err" "src/core/layout.c does not compile with the include paths of its layer"
sed -i '1d' "$copy/src/core/layout.c"

# An agent that includes an env header (agents see only src/base).
sed -i '1i #include "env.h"' "$copy/agents/dqn.c"
run_cmd make -s -C "$copy" BUILD="$copy/build" check-layers
expect_rc "an agents/ file including an envs/ header fails check-layers" 2
sed -i '1d' "$copy/agents/dqn.c"

rm -rf "$copy"
done_testing
