# Ring allreduce under mpirun -np P, P = 1..5 (tests/mpi/mpi_allreduce.c).
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../mpilib.sh"
prog="$(dirname "$GORILA")/tests/mpi_allreduce"
for p in 1 2 3 4 5; do
    run_cmd timeout 60 $MPIRUN -np $p "$prog"
    expect_rc "ring allreduce, $p ranks: exit status 0" 0
    n_ok=$(grep -c '^ok ' <<<"$out")
    n_bad=$(grep -c '^not ok ' <<<"$out")
    if [ "$n_ok" -eq 64 ] && [ "$n_bad" -eq 0 ]; then ok "ring allreduce, $p ranks: 64 checks pass"; else
        not_ok "ring allreduce, $p ranks: $n_ok passed, $n_bad failed"
        grep '^not ok' <<<"$out" | sed 's/^/# /'
    fi
done
done_testing
