# SPDX-License-Identifier: MIT
# run.blas_kernel in a distributed job (docs/REPRODUCIBILITY.md): every rank
# checks the OpenBLAS kernel it runs; scripts/launch exports the config's
# kernel to every rank; a rank that runs another ends the job with exit 2
# before anything is written.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../mpilib.sh"
cd "$TEST_ROOT" || exit 1

# A kernel this CPU runs that differs from the one OpenBLAS takes here, so
# that the rank-side check has something to catch.
now=$("$GORILA" version | sed -n 's/.*; kernel \([^ ]*\).*/\1/p')
pin=""
for k in Sandybridge Nehalem Prescott Haswell; do
    if [ "$k" != "$now" ] && "$GORILA" version --kernels | grep -q "^$k runs"; then pin=$k; break; fi
done
if [ -z "$pin" ]; then
    ok "distributed run.blas_kernel # SKIP no second kernel runs on this CPU"
    done_testing
    exit
fi

job kernel-launch --set run.blas_kernel="$pin" --set run.max_env_steps=2000
expect_rc "launch with run.blas_kernel $pin: exit 0" 0
expect_eq "the job ran and recorded $pin" \
    "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["platform"]["blas_kernel"])' "$RUN/summary.json")" "$pin"

RUN="$RUNS/kernel-bare"
rm -rf "$RUN"
np=$("$GORILA" config check "$SMALL" | sed -n 's/^ranks: //p')
# shellcheck disable=SC2086 # $MPIRUN (tests/mpilib.sh) is a command line: split on purpose
run_cmd timeout --kill-after=5 60 env OPENBLAS_CORETYPE="$now" $MPIRUN -np "$np" "$GORILA" train "$SMALL" \
    --set run.name=kernel-bare --set run.out_dir="$RUNS" --set run.blas_kernel="$pin"
expect_rc "mpirun without the kernel: exit 2" 2
expect_contains "mpirun without the kernel: says which kernel runs and what to do" "$err" \
    "run.blas_kernel is $pin, but OpenBLAS runs $now on"
check "mpirun without the kernel: nothing written" [ ! -e "$RUN" ]

# A kernel this CPU lacks: every rank refuses it before its first product
# (OpenBLAS would load it and die of SIGILL there, which --max-restarts
# would take for a crash worth a restart).
lacking=$("$GORILA" version --kernels | grep -m1 ' lacks ' | cut -d' ' -f1)
if [ -z "$lacking" ]; then
    ok "distributed run.blas_kernel the CPU lacks # SKIP this CPU runs every kernel of the table"
else
    RUN="$RUNS/kernel-lacks"
    rm -rf "$RUN"
    # shellcheck disable=SC2086 # $MPIRUN (tests/mpilib.sh) is a command line: split on purpose
    run_cmd timeout --kill-after=5 60 env OPENBLAS_CORETYPE="$lacking" $MPIRUN -np "$np" "$GORILA" train "$SMALL" \
        --set run.name=kernel-lacks --set run.out_dir="$RUNS" --set run.blas_kernel="$lacking"
    expect_rc "a kernel the CPU lacks: exit 2, not SIGILL" 2
    expect_contains "a kernel the CPU lacks: names it and the missing flags" "$err" \
        "run.blas_kernel: the CPU of $(hostname) cannot run OpenBLAS's $lacking kernel (it lacks"
    check "a kernel the CPU lacks: nothing written" [ ! -e "$RUN" ]
fi

done_testing
