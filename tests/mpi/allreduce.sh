# Ring allreduce under mpirun -np P, P = 1..5 (tests/mpi/mpi_allreduce.c).
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../mpilib.sh"
prog="$(dirname "$GORILA")/tests/mpi_allreduce"
for p in 1 2 3 4 5; do
    # shellcheck disable=SC2086 # $MPIRUN (tests/mpilib.sh) is a command line: split on purpose
    run_cmd timeout 60 $MPIRUN -np "$p" "$prog"
    expect_rc "ring allreduce, $p ranks: exit status 0" 0
    n_ok=$(grep -c '^ok ' <<<"$out")
    n_bad=$(grep -c '^not ok ' <<<"$out")
    if [ "$n_ok" -eq 64 ] && [ "$n_bad" -eq 0 ]; then ok "ring allreduce, $p ranks: 64 checks pass"; else
        not_ok "ring allreduce, $p ranks: $n_ok passed, $n_bad failed"
        grep '^not ok' <<<"$out" | sed 's/^/# /'
    fi
done

# gorila bench allreduce: one JSON line per size, the ring equal to MPI_Allreduce
# on every size, the config's network size among them. (Times are not checked.)
# shellcheck disable=SC2086 # $MPIRUN (tests/mpilib.sh) is a command line: split on purpose
run_cmd timeout 60 $MPIRUN -np 2 "$GORILA" bench allreduce --max-floats 4096 --seconds 0.05 --json \
    --config "$TEST_ROOT/configs/cartpole.yaml"
expect_rc "bench allreduce: exit status 0" 0
rows=$(grep -c '"bench":"allreduce"' <<<"$out")
expect_eq "bench allreduce: rows for 1024, 4096 and the network's 4610 floats" "$rows" 3
check "bench allreduce: the network row is marked" grep -q '"floats":4610,"bytes":18440,"ranks":2,"network_size":true' <<<"$out"
expect_eq "bench allreduce: the ring equals MPI_Allreduce on every size" "$(grep -c '"ring_equals_mpi":true' <<<"$out")" 3
check "bench allreduce: OpenBLAS configuration printed" grep -q '"bench":"openblas"' <<<"$out"
# shellcheck disable=SC2086 # $MPIRUN (tests/mpilib.sh) is a command line: split on purpose
run_cmd timeout 60 $MPIRUN -np 1 "$GORILA" bench allreduce --max-floats 1024 --seconds 0.05
expect_rc "bench allreduce on one rank: exit status 2" 2
expect_contains "bench allreduce on one rank: says what to run" "$err" "needs 2 or more ranks"
run_cmd "$GORILA" bench allreduce --wait fast
expect_rc "bench allreduce --wait fast: exit status 2" 2
expect_contains "bench allreduce --wait fast: names the choices" "$err" "expected auto, poll or sleep"

# scripts/bench-layouts runs the local reference and the layouts asked for.
run_cmd timeout 120 "$TEST_ROOT/scripts/bench-layouts" --steps 3000 --only 'allreduce 1-1-2-0' --json
expect_rc "bench-layouts --only: exit status 0" 0
expect_eq "bench-layouts --only: the local trainer and one layout" "$(grep -c '"bench":"layout"' <<<"$out")" 2
check "bench-layouts: gradients per second reported" grep -q '"layout":"allreduce 1-1-2-0".*"gradients_per_second":[0-9]' <<<"$out"
done_testing
