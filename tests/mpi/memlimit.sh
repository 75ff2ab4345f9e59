# SPDX-License-Identifier: MIT
# tests/mpi/memlimit.sh: the memory plan in a job under mpirun (the local
# and `config check` side is tests/cli/config.sh): the start-up check
# refuses a job too large for this machine before it writes anything, and a
# rank out of memory during the run exits 2, naming the buffer and the key.
source "$(dirname "$0")/../lib.sh"
cd "$TEST_ROOT" || exit 1
memruns="$TEST_TMP/memplan-runs"
asan=0
grep -qa __asan_init "$GORILA" && asan=1

# The same in a job, under mpirun: the start-up check (every machine's
# ranks against its memory, src/mpi/job.c), then a rank out of memory.
. "$TEST_ROOT/tests/mpilib.sh"
# Under an ASan build, leak detection stays off for mpirun jobs: Open MPI's
# own allocations at exit (ompi_op_base_op_select and its plugins) are
# reported as leaks, whatever gorila does.
mpi_asan=()
[ $asan -eq 1 ] && mpi_asan=(ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0")
# shellcheck disable=SC2086 # $MPIRUN (tests/mpilib.sh) is a command line: split on purpose
run_cmd env ${mpi_asan[@]+"${mpi_asan[@]}"} GORILA_MEM_LIMIT=1G timeout 120 $MPIRUN -np 5 "$GORILA" train configs/cartpole.yaml \
    --set replay.capacity=50000000 --set run.out_dir="$memruns"
expect_rc "memory: a job too large for the machine: exit 2" 2
expect_contains "memory: the job says why" "$err" "gorila: error: replay.capacity: 50000000 needs 2.0 GiB per replay shard (replay storage); the 5 ranks on this machine need 2.2 GiB in all"
check "memory: the job wrote nothing" [ ! -e "$memruns" ]
if [ $asan -eq 0 ]; then
    run_cmd bash -c 'ulimit -v 1048576 && exec env GORILA_MEM_LIMIT=64G timeout 120 '"$MPIRUN"' -np 5 "$0" train \
        configs/cartpole.yaml --set replay.capacity=50000000 --set run.out_dir="$1" --set run.max_env_steps=100 \
        --set logging.progress=never' "$GORILA" "$memruns"
    expect_rc "out of memory on a rank of a job: exit 2" 2
    expect_contains "out of memory on a rank: names the buffer and the key" "$err" \
        ": out of memory allocating replay storage (2.0 GiB): lower replay.capacity"
else
    for what in "out of memory on a rank of a job: exit 2" "out of memory on a rank: names the buffer and the key"; do
        ok "$what # SKIP an ASan build cannot run under ulimit -v"
    done
fi

done_testing
