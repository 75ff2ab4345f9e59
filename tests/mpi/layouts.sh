# SPDX-License-Identifier: MIT
# Real mpirun jobs: every sync mode on an even and an uneven layout, each run
# to its env-step budget and shut down cleanly. The uneven layout (3 actors,
# 2 replay shards, 2 learners, 3 parameter servers) cuts the 386 parameters
# of the [16, 16] network into shards of 129, 129 and 128.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../mpilib.sh"

UNEVEN=(--set roles.actors=3 --set roles.replay_shards=2 --set roles.learners=2 --set roles.param_servers=3)

check_job() { # NAME MODE PS LEARNERS
    local name=$1 mode=$2 P=$3 L=$4 s="$RUN/summary.json"
    expect_rc "$name: exit status 0" 0
    if [ ! -f "$s" ]; then not_ok "$name: summary.json written"; return; fi
    expect_eq "$name: mode" "$(jget "$s" mode)" "$mode"
    expect_eq "$name: env steps = budget" "$(jget "$s" env_steps)" 3000
    expect_eq "$name: stopped by budget" "$(jget "$s" stop_reason)" budget
    local u g
    u=$(jget "$s" updates)
    g=$(jsum "$s" learner gradients)
    check "$name: learned ($u updates, $g gradients)" [ "$u" -gt 50 ]
    expect_eq "$name: every learner reported" "$(jcount "$s" learner)" "$L"
    expect_eq "$name: every parameter server reported" "$(jcount "$s" ps)" "$P"
    if [ "$P" -gt 0 ]; then
        local applied drops
        applied=$(jsum "$s" ps updates)
        drops=$(jsum "$s" ps drops)
        # Every gradient reached every shard and was applied or dropped
        # (ps_sync applies one mean per round of L gradients; the round in
        # progress at the stop may hold up to L-1 that are never applied).
        if [ "$mode" = ps_sync ]; then
            local r=$((applied / P))
            check "$name: rounds x learners <= gradients < (rounds + 1) x learners ($r x $L, $g)" \
                [ $((r * L)) -le "$g" -a "$g" -lt $(((r + 1) * L)) ]
        else
            expect_eq "$name: applied + dropped = gradients x shards" $((applied + drops)) $((g * P))
        fi
        expect_eq "$name: manifest lists $P shards" "$(manifest shards)" "$P"
    fi
    check "$name: final checkpoint" [ -s "$RUN/checkpoints/latest" ]
    local rows
    rows=$(wc -l <"$RUN/eval.csv")
    check "$name: evaluations recorded ($((rows - 1)))" [ "$rows" -ge 2 ]
    check_artifacts "$name"
    # byte and transition counters print as integers, never 5.22218e+06
    check "$name: metrics.csv counters are integers" awk -F, 'NR > 1 { for (i = 10; i <= NF; i++) if ($i ~ /[eE]/) exit 1 }' \
        "$RUN/metrics.csv"
}

job even-sync
check_job even-sync ps_sync 1 1
if grep -q "rank  role" <<<"$out"; then ok "even-sync: rank layout printed at start"; else
    not_ok "even-sync: rank layout printed"
fi

for mode in ps_sync ps_async; do
    job "uneven-$mode" "${UNEVEN[@]}" --set sync.mode=$mode
    check_job "uneven-$mode" $mode 3 2
done

# Bounded staleness 0: two learners racing must see some gradients dropped.
job uneven-bounded "${UNEVEN[@]}" --set sync.mode=ps_bounded --set sync.staleness=0
check_job uneven-bounded ps_bounded 3 2
d=$(jget "$RUN/summary.json" stale_gradients_dropped)
check "uneven-bounded: stale gradients dropped and counted ($d)" [ "${d:-0}" -gt 0 ]

job allreduce --set sync.mode=allreduce --set roles.param_servers=0 --set roles.actors=3 \
    --set roles.replay_shards=2 --set roles.learners=3
check_job allreduce allreduce 0 3
expect_eq "allreduce: manifest lists 1 shard (learner 0)" "$(manifest shards)" 1

# A parameter-server mode without parameter servers: the one learner holds
# the parameters, applies every gradient it computes (updates = gradients,
# the loss guard being off) and serves the actors and the evaluations; its
# checkpoint is one shard, and no gradient crosses a process boundary.
for mode in ps_sync ps_async ps_bounded; do
    job "inlearner-$mode" --set sync.mode=$mode --set roles.param_servers=0
    check_job "inlearner-$mode" $mode 0 1
    s="$RUN/summary.json"
    expect_eq "inlearner-$mode: every gradient applied (updates = gradients)" "$(jget "$s" updates)" \
        "$(jsum "$s" learner gradients)"
    expect_eq "inlearner-$mode: manifest lists 1 shard (the learner)" "$(manifest shards)" 1
    check "inlearner-$mode: no parameter servers, no gradient or parameter messages to or from the learner" \
        python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
w, l = d["per_worker"], d["roles"]["learner"][0]
sys.exit(not (w["n_param_servers"] == 0 and "ps" not in d["roles"]
              and "grad" not in l["bytes_sent"] and "params" not in l["bytes_recv"]
              and w["learners"][0]["sync_bytes_sent_per_gradient"] == 0
              and w["learners"][0]["model_bytes_sent_per_gradient"] == 0))' "$s"
    expect_contains "inlearner-$mode: 4 ranks in the layout" "$out" "4 ranks"
done
run_cmd timeout 30 "$TEST_ROOT/scripts/launch" "$SMALL" --set roles.param_servers=0 --set roles.learners=2
expect_rc "inlearner with 2 learners: refused, exit 2" 2
expect_contains "inlearner with 2 learners: says why" "$err" "needs exactly one learner, but roles.learners is 2"
run_cmd timeout 30 "$TEST_ROOT/scripts/launch" "$SMALL" --set roles.param_servers=0 --set sync.mode=ps_async \
    --set sync.learner_pull_every=4
expect_rc "inlearner ps_async pulling every 4: refused, exit 2" 2
expect_contains "inlearner ps_async pulling every 4: says why" "$err" "sync.learner_pull_every is 4"

# learner.prefetch 3 with 2 learners and 2 shards: each learner keeps 3
# requests in flight (the shards would end the job if one sent a fourth),
# replies from two shards land in their own slots whatever their order, and
# every batch is used once: the shards served every gradient's rows and at
# most the 3 batches per learner still in flight at the stop.
job prefetch --set learner.prefetch=3 --set roles.learners=2 --set roles.replay_shards=2 --set roles.actors=2
check_job prefetch ps_sync 1 2
s="$RUN/summary.json"
g=$(jsum "$s" learner gradients)
served=$(jsum "$s" replay sampled)
B=$(awk '/batch_size:/ { print $2; exit }' "$RUN/config.yaml")
check "prefetch: rows served ($served) within [gradients, gradients + 3 x 2 learners] x batch ($g x $B)" \
    [ "$served" -ge $((g * B)) -a "$served" -le $(((g + 6) * B)) ]
run_cmd timeout 30 "$TEST_ROOT/scripts/launch" "$SMALL" --set learner.prefetch=2 --set replay.kind=prioritized
expect_rc "prefetch 2 with prioritized replay: refused, exit 2" 2
expect_contains "prefetch 2 with prioritized replay: says why" "$err" "use learner.prefetch: 1 or replay.kind: uniform"
run_cmd timeout 30 "$TEST_ROOT/scripts/launch" "$SMALL" --set learner.prefetch=9
expect_rc "prefetch 9: out of range, exit 2" 2

# Regressions from review:
# - three actors on one shard whose shares end exactly on a chunk boundary
#   all flag their last chunk at once; the flag must ride on the last full
#   chunk, or the shard sees more chunks in flight than credits allow;
job credits --set roles.actors=3 --set actor.envs=1 --set run.max_env_steps=2880 --set replay.samples_per_insert=32 \
    --set network.hidden="[64,64]"
expect_rc "credits: last chunks at a chunk boundary (exit status 0)" 0
# - an update budget stops the job within a few updates, not 250 ms late;
job max-updates --set run.max_env_steps=0 --set run.max_updates=550 --set eval.every_updates=0
expect_rc "max-updates: exit status 0" 0
u=$(jget "$RUN/summary.json" updates)
check "max-updates: stops near its update budget (550 -> $u)" [ "$u" -ge 550 -a "$u" -lt 825 ]
# - the final checkpoint's manifest has the final counters.
expect_eq "max-updates: manifest env steps = summary" "$(manifest env_steps)" "$(jget "$RUN/summary.json" env_steps)"
expect_eq "max-updates: manifest episodes = summary" "$(manifest episodes)" "$(jget "$RUN/summary.json" episodes)"

# Idle ranks sleep: the coordinator, which only listens, must not burn a
# core (a busy-waiting rank shows CPU time close to its wall time).
job idle --set run.max_env_steps=0 --set run.max_seconds=3
w=$(jget "$RUN/summary.json" wall_seconds)
c=$(jsum "$RUN/summary.json" coordinator cpu_seconds)
check "idle coordinator CPU $c s of $w s wall stays under half" awk -v c="$c" -v w="$w" 'BEGIN { exit !(c < 0.5 * w) }'

# run.wait: every rank polling, or every rank sleeping, the job runs the same.
for w in poll sleep; do
    job "wait-$w" --set run.wait=$w
    expect_rc "run.wait $w: exit status 0" 0
    expect_eq "run.wait $w: env steps = budget" "$(jget "$RUN/summary.json" env_steps)" 3000
    check_artifacts "wait-$w"
done
done_testing
