# SPDX-License-Identifier: MIT
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


# same_double A B: A and B parse to the same double (awk reads numbers
# with strtod), so 261.02 and 261.01999999999998 are equal, 261.03 is not;
# nan never (mawk would call it equal to anything).
same_double() { [ -n "$1" ] && [ -n "$2" ] && [ "$1" != nan ] && [ "$2" != nan ] && awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 == b + 0) }'; }

# check_artifacts NAME: what the run in $RUN reports is true of what it
# saved. The best checkpoint, evaluated again with the run's eval seed,
# scores exactly best_eval_mean_return; the final checkpoint scores exactly
# last_eval_mean_return (when the run evaluated it); eval.csv's updates
# column never goes back. Evaluation is deterministic for given parameters
# and seed, so equality is exact (both sides print round-trip doubles).
check_artifacts() {
    local name=$1 s="$RUN/summary.json" j
    local best last bestck finalck
    best=$(jget "$s" best_eval_mean_return)
    last=$(jget "$s" last_eval_mean_return)
    bestck=$(jget "$s" best_checkpoint)
    finalck=$(jget "$s" final_checkpoint)
    check "$name: summary names its final checkpoint ($finalck)" [ -f "$RUN/$finalck/MANIFEST" ]
    if [ "$bestck" != null ] && [ -n "$bestck" ]; then
        j=$("$GORILA" eval "$RUN" --checkpoint best --json 2>/dev/null)
        check "$name: best checkpoint evaluates as logged ($(jnum "$j" mean) vs $best)" same_double "$(jnum "$j" mean)" "$best"
    elif [ "$best" != null ]; then
        not_ok "$name: evaluated (best $best) but no best checkpoint"
    fi
    if [ "$last" != null ] && [ -n "$last" ]; then
        j=$("$GORILA" eval "$RUN/$finalck" --json 2>/dev/null)
        check "$name: final checkpoint evaluates as last_eval_mean_return ($(jnum "$j" mean) vs $last)" \
            same_double "$(jnum "$j" mean)" "$last"
    fi
    check "$name: eval.csv updates never go back" awk -F, 'NR > 2 && $3 < prev { exit 1 } { prev = $3 }' "$RUN/eval.csv"
}

# Jobs in the background (tests/mpi/restart.sh, replayckpt.sh): run names
# are matched with pgrep, so two scripts that use them never run at once.
# start_bg NAME ARGS...: launch in the background; $BG is the launcher's pid.
start_bg() {
    local name=$1
    shift
    RUN="$RUNS/$name"
    rm -rf "$RUN"
    "$TEST_ROOT/scripts/launch" "$SMALL" --set run.name="$name" --set run.out_dir="$RUNS" "$@" \
        >"$TEST_TMP/$name.out" 2>"$TEST_TMP/$name.err" &
    BG=$!
}
# wait_for SECONDS CMD...: poll until CMD succeeds; false after SECONDS.
wait_for() {
    local end=$((SECONDS + $1))
    shift
    until "$@"; do
        [ $SECONDS -ge $end ] && return 1
        sleep 0.1
    done
}
# rank_pid NAME RANK: pid of the given MPI rank of run NAME.
rank_pid() {
    local p
    for p in $(pgrep -f "run.name=$1"); do
        tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$2" && { echo "$p"; return; }
    done
}
finished() { ! kill -0 "$BG" 2>/dev/null; }

# Jobs across simulated nodes (tests/mpi/simcluster.sh, multinode.sh), run
# with mpirun's --display-map: where_ranks prints "RANK HOST" for each rank
# of the map in $out (printed more than once: each once); nodes_used the
# hosts that got ranks, on one line.
where_ranks() {
    # shellcheck disable=SC2154 # out: set by run_cmd (tests/lib.sh, sourced before this file)
    awk '/Data for node:/ { node = $4 } /Process rank:/ { for (i = 1; i <= NF; i++) if ($i == "rank:") print $(i + 1), node }' <<<"$out" | sort -n -u
}
nodes_used() { where_ranks | awk '{ print $2 }' | sort -u | xargs; }
# elapsed SINCE: seconds since the date +%s.%N value SINCE, one decimal.
elapsed() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }

# same_shard A B: two shard files hold the same state, bit for bit: the whole
# file but the header's wall time (bytes 176..183), checkpoint number
# (seq, 200..207) and CRC (252..255), so the versions and the run id
# in the header count too (docs/CHECKPOINT.md).
same_shard() {
    cmp -s <(head -c 176 "$1") <(head -c 176 "$2") &&
        cmp -s <(head -c 200 "$1" | tail -c +185) <(head -c 200 "$2" | tail -c +185) &&
        cmp -s <(head -c 252 "$1" | tail -c +209) <(head -c 252 "$2" | tail -c +209) &&
        cmp -s <(tail -c +257 "$1") <(tail -c +257 "$2")
}

# notrain_resume [--set ...]: resume $RUN so that it loads, applies no update
# and saves again: no env-step budget (actors never finish, so the learners
# never drain replay), a time limit one microsecond past the checkpoint's
# wall time (the coordinator's first look at the clock stops the job), and
# replay.min_size out of reach (replay is not saved here: the shards start
# empty). C1 is the checkpoint it loaded, C2 the one it saved; NOTRAIN_OK=1
# when a try applied no update.
#
# What is guaranteed is only that a resume which applies no update saves
# exactly what it loaded. That no update is applied is not: the actors start
# stepping as soon as their parameters arrive, while the coordinator may look
# at the clock much later (its lock, the checkpoint it verifies, a busy CPU).
# A stalled coordinator let the actors insert the 5,000 rows min_size asked
# for, the learners applied real updates, and the shard legitimately differed
# (seen once in three runs on an AMD machine; reproduced by delaying rank 0's
# flock by 2 s). So min_size is 1,000,000 (the actors would need seconds of
# such a stall), whether an update was applied is checked in the MANIFESTs
# (params_version and updates), and a try that applied one is retried from
# what it saved rather than compared.
# shellcheck disable=SC2034,SC2154 # C1, C2 and NOTRAIN_OK are for the caller; rc is run_cmd's (lib.sh)
notrain_resume() {
    local try w before
    NOTRAIN_OK=0
    for try in 1 2 3; do
        C1="$RUN/checkpoints/$(cat "$RUN/checkpoints/latest")"
        before="$(manifest params_version) $(manifest updates)"
        w=$(awk -v w="$(manifest wall_seconds)" 'BEGIN { printf "%.9f", w + 1e-6 }')
        run_cmd timeout --kill-after=5 120 "$TEST_ROOT/scripts/launch" --resume "$RUN" --set run.max_env_steps=0 \
            --set run.max_seconds="$w" --set replay.capacity=1000000 --set replay.min_size=1000000 "$@"
        C2="$RUN/checkpoints/$(cat "$RUN/checkpoints/latest")"
        [ "$rc" -eq 0 ] || return 0 # expect_rc reports it
        if [ "$(manifest params_version) $(manifest updates)" = "$before" ]; then
            NOTRAIN_OK=1
            return 0
        fi
        echo "# try $try applied updates (params_version, updates: $before -> $(manifest params_version) $(manifest updates)); again"
    done
}
