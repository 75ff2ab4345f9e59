# tests/mpi/mpilib.sh: how the MPI tests start jobs (sourced after lib.sh).
# Root needs the run-as-root permission; small machines need oversubscription.
MPIRUN="mpirun --oversubscribe"
[ "$(id -u)" -eq 0 ] && MPIRUN="$MPIRUN --allow-run-as-root"
