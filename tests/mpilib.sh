# tests/mpilib.sh: helpers for the MPI integration tests (source after lib.sh).
# Root needs the run-as-root permission; small machines need oversubscription.
MPIRUN="mpirun --oversubscribe"
[ "$(id -u)" -eq 0 ] && MPIRUN="$MPIRUN --allow-run-as-root"
export OPENBLAS_NUM_THREADS=1
RUNS="$TEST_TMP/runs"
SMALL="$TEST_ROOT/tests/fixtures/configs/mpi-small.yaml"

# job NAME [launch args...]: run scripts/launch on the small config with
# run.name=NAME under a 120 s guard; $RUN is the run directory, $out, $err,
# $rc as run_cmd sets them.
job() {
    local name=$1
    shift
    RUN="$RUNS/$name"
    rm -rf "$RUN"
    run_cmd timeout --kill-after=5 120 "$TEST_ROOT/scripts/launch" "$SMALL" --set run.name="$name" \
        --set run.out_dir="$RUNS" "$@"
}

# jget FILE KEY: a top-level scalar of summary.json.
source "$TEST_ROOT/scripts/summary.sh"

# jsum FILE ROLE KEY: sum of KEY over the entries of roles.ROLE.
jsum() {
    awk -v role="\"$2\": [" -v key="\"$3\":" '
        index($0, role) { inrole = 1; next }
        inrole && /^    \]/ { inrole = 0 }
        inrole && $1 == key { gsub(/,/, "", $2); s += $2 }
        END { printf "%.10g\n", s }' "$1"
}

# jcount FILE ROLE: number of entries in roles.ROLE.
jcount() {
    awk -v role="\"$2\": [" 'index($0, role) { inrole = 1; next }
        inrole && /^    \]/ { inrole = 0 }
        inrole && /^      \{/ { n++ }
        END { print n + 0 }' "$1"
}

# manifest KEY: value from the newest checkpoint's MANIFEST of $RUN.
manifest() { sed -n "s/^$1 //p" "$RUN/checkpoints/$(cat "$RUN/checkpoints/latest")/MANIFEST"; }
