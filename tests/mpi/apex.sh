# SPDX-License-Identifier: MIT
# Prioritized replay (Ape-X mode) in real jobs: every sync mode on the
# 1/1/1/1 layout and on an uneven one (3 actors, 2 replay shards, 2
# learners, 3 parameter servers), each run to its budget. Checks that every
# sampled row's priority came back (the learners' PRIORITY updates reach the
# shards: updates received = rows trained, less at most one batch per
# learner still in flight at the stop), that stale updates are counted, and
# that what the run reports is true of what it saved (check_artifacts).
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../mpilib.sh"

PRIO=(--set replay.kind=prioritized --set agent.n_step=3 --set explore.kind=apex)
UNEVEN=(--set roles.actors=3 --set roles.replay_shards=2 --set roles.learners=2 --set roles.param_servers=3)

check_prio() { # NAME MODE
    local name=$1 s="$RUN/summary.json"
    expect_rc "$name: exit status 0" 0
    if [ ! -f "$s" ]; then not_ok "$name: summary.json written"; return; fi
    expect_eq "$name: stopped by budget" "$(jget "$s" stop_reason)" budget
    local trained upd stale B L
    trained=$(jget "$s" samples_trained)
    upd=$(jsum "$s" replay priority_updates)
    stale=$(jsum "$s" replay stale_priority_updates)
    B=32
    L=$(jcount "$s" learner)
    check "$name: every trained row's priority came back ($upd of $trained, at most $((L * B)) in flight at the stop)" \
        [ "$upd" -le "$trained" -a "$upd" -ge $((trained - L * B)) -a "$trained" -gt 0 ]
    check "$name: stale updates counted and no more than the updates ($stale)" [ "$stale" -ge 0 -a "$stale" -le "$upd" ]
    expect_eq "$name: summary's stale_priority_updates is the shards' sum" "$(jget "$s" stale_priority_updates)" "$stale"
    check_artifacts "$name"
}

for mode in ps_sync ps_async ps_bounded allreduce; do
    P=1
    [ $mode = allreduce ] && P=0
    job "prio-$mode" "${PRIO[@]}" --set sync.mode=$mode --set roles.param_servers=$P
    check_prio "prio-$mode" $mode
done
for mode in ps_sync ps_async ps_bounded; do
    job "prio-uneven-$mode" "${PRIO[@]}" "${UNEVEN[@]}" --set sync.mode=$mode
    check_prio "prio-uneven-$mode" $mode
done
job prio-uneven-allreduce "${PRIO[@]}" --set roles.actors=3 --set roles.replay_shards=2 --set roles.learners=3 \
    --set roles.param_servers=0 --set sync.mode=allreduce
check_prio prio-uneven-allreduce allreduce

# Schaul et al.'s initial priority: the running maximum, no actor priorities.
job prio-max "${PRIO[@]}" --set replay.initial_priority=max
check_prio prio-max ps_sync

# A buffer that wraps every 400 transitions: rows sampled among the oldest
# are overwritten before their update comes back, and those updates must be
# ignored and counted, not applied to the new transitions.
job prio-wrap "${PRIO[@]}" --set replay.capacity=400 --set replay.min_size=200 --set sync.mode=ps_async
check_prio prio-wrap ps_async
stale=$(jsum "$RUN/summary.json" replay stale_priority_updates)
check "prio-wrap: updates for overwritten slots were ignored and counted ($stale)" [ "${stale%.*}" -gt 0 ]
done_testing
