# SPDX-License-Identifier: MIT
# Timelines (logging.trace): a real job writes one trace.json in Chrome's
# JSON object format, every rank on its own named track, spans that nest,
# the per-rank bound kept and its overflow reported; and with tracing off
# nothing is written or sent. tests/mpi/check_trace.py does the checking
# (one TAP line per check); the local trainer's one-track trace is checked
# here too. (The hung-rank case, where the coordinator writes what arrived,
# is in faults.sh.)
#
# The learners record their own spans (src/mpi/learn*.c), so "every
# learner track has gradient spans" is checked in the ps_sync and allreduce
# jobs.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../mpilib.sh"
CHECK="$TEST_ROOT/tests/mpi/check_trace.py"

# check_trace NAME FILE ARGS...: run check_trace.py; each PASS/FAIL line
# becomes one TAP line, anything else a comment. A checker that reports
# nothing is a failure.
check_trace() {
    local name=$1 file=$2 status what n=0
    shift 2
    while IFS=$'\t' read -r status what; do
        case $status in
        PASS) ok "$name: $what" ;;
        FAIL) not_ok "$name: $what" ;;
        \#*) echo "$status${what:+ $what}" ;;
        *) echo "# $status${what:+ $what}" ;;
        esac
        n=$((n + 1))
    done < <(python3 "$CHECK" "$file" "$@" 2>&1)
    [ "$n" -gt 0 ] || not_ok "$name: check_trace.py reported nothing"
}

# trace_bytes NAME: bytes_sent.trace of $RUN/summary.json (0 when absent).
trace_bytes() { python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["bytes_sent"].get("trace", 0))' \
    "$RUN/summary.json"; }

# size_note NAME: trace.json's size and events, as a comment.
size_note() {
    local bytes events
    bytes=$(wc -c <"$RUN/trace.json")
    events=$(grep -c '"ph":"X"' "$RUN/trace.json")
    echo "# $1: trace.json $bytes bytes, $events events, $((bytes / (events > 0 ? events : 1))) bytes per event"
}

TRACE=(--set logging.trace=true --set roles.actors=2 --set roles.replay_shards=1 --set roles.learners=2)

# ps_sync: 2 actors, 1 replay shard, 2 learners, 1 parameter server.
job trace-sync "${TRACE[@]}" --set roles.param_servers=1
expect_rc "ps_sync: exit status 0" 0
if [ -f "$RUN/trace.json" ]; then
    ok "ps_sync: trace.json written"
    size_note ps_sync
    check_trace ps_sync "$RUN/trace.json" --actors 2 --replay 1 --learners 2 --ps 1 --envs 2 \
        --summary "$RUN/summary.json"
    check "ps_sync: TRACE messages counted in bytes_sent ($(trace_bytes) bytes)" [ "$(trace_bytes)" -gt 0 ]
else
    not_ok "ps_sync: trace.json written"
fi
check "ps_sync: no temporary left" [ ! -e "$RUN/trace.json.tmp" ]

# allreduce: 2 learners, no parameter server (learner 0 is the source).
job trace-allreduce "${TRACE[@]}" --set sync.mode=allreduce --set roles.param_servers=0
expect_rc "allreduce: exit status 0" 0
if [ -f "$RUN/trace.json" ]; then
    ok "allreduce: trace.json written"
    size_note allreduce
    check_trace allreduce "$RUN/trace.json" --actors 2 --replay 1 --learners 2 --ps 0 --envs 2 \
        --summary "$RUN/summary.json"
else
    not_ok "allreduce: trace.json written"
fi

# A small bound: every track keeps at most 64 events, the actors (about 750
# env batches each) report what they dropped.
job trace-cap "${TRACE[@]}" --set roles.param_servers=1 --set logging.trace_events=64
expect_rc "trace_events 64: exit status 0" 0
if [ -f "$RUN/trace.json" ]; then
    size_note "trace_events 64"
    check_trace "trace_events 64" "$RUN/trace.json" --actors 2 --replay 1 --learners 2 --ps 1 --cap 64
else
    not_ok "trace_events 64: trace.json written"
fi

# Off (the default): no file, no TRACE message.
job trace-off
expect_rc "off: exit status 0" 0
check "off: no trace.json" [ ! -e "$RUN/trace.json" ]
expect_eq "off: no TRACE bytes sent" "$(trace_bytes)" 0

# The local trainer: one track.
RUN="$RUNS/trace-local"
rm -rf "$RUN"
run_cmd timeout 60 "$GORILA" train "$SMALL" --set run.mode=local --set run.name=trace-local \
    --set run.out_dir="$RUNS" --set logging.trace=true
expect_rc "local: exit status 0" 0
if [ -f "$RUN/trace.json" ]; then
    check_trace local "$RUN/trace.json" --local
else
    not_ok "local: trace.json written"
fi
RUN="$RUNS/trace-local-off"
rm -rf "$RUN"
run_cmd timeout 60 "$GORILA" train "$SMALL" --set run.mode=local --set run.name=trace-local-off \
    --set run.out_dir="$RUNS"
check "local, off: no trace.json" [ "$rc" -eq 0 ] && [ ! -e "$RUN/trace.json" ]
done_testing
