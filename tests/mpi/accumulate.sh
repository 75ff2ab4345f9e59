# SPDX-License-Identifier: MIT
# learner.accumulate K (docs/CONFIG.md): each learner sums K mini-batch
# gradients and syncs their mean once, so with K = 4 and 2 learners on the
# small job:
#   - an update takes 4 x 2 gradients in ps_sync and allreduce, and every
#     push is applied in ps_async. A learner pushes floor(g / 4) times for g
#     gradients (the batches of an unfinished sum at the stop are not sent),
#     so, as layouts.sh derives for K = 1: ps_sync's R rounds hold
#     R x L <= pushes < (R + 1) x L; ps_async applies every push; in
#     allreduce every learner runs U + 1 ring rounds for U updates (the
#     last carries the stop and applies nothing), with 4U <= g <= 4(U + 1);
#   - samples_per_insert still counts every batch (each batch is its own
#     request): 32 rows per gradient, and at least 90% of the replay
#     ratio's rows (8 per insert past min_size 200) trained. Only a lower
#     bound: once the actors have sent their last chunk the limiter serves
#     every request until the stop (src/core/replay/pacing.h), so a job may train
#     more, by timing;
#   - the sync bytes sent per gradient are a quarter of the K = 1 job's
#     (within 5%), and the job's bytes agree with jobsummary_model_bytes within
#     5% (summed over the learners, so a learner starved of batches in
#     ps_async, whose first pull weighs more, does not decide it);
#   - with the loss guard dropping batches the jobs end as before;
#   - bad values are refused before anything starts (exit 2, one line).
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../mpilib.sh"
cd "$TEST_ROOT" || exit 1

# relation FILE MODE K [guard]: the update count against each learner's
# gradients (guard: the loss guard is on, and ps_async sends nothing for a
# sum whose K batches were all dropped, so fewer pushes may be applied)
relation() {
    python3 - "$@" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
mode, K, guard = sys.argv[2], int(sys.argv[3]), len(sys.argv) > 4
ls = s["roles"]["learner"]
g = [x["gradients"] for x in ls]
pushes = sum(x // K for x in g)
L = len(ls)
if mode == "ps_sync":
    r = sum(p["updates"] for p in s["roles"]["ps"])
    print("# %d rounds, %d learners, gradients %s: %d pushes" % (r, L, g, pushes))
    ok = r * L <= pushes < (r + 1) * L
elif mode == "ps_async":
    applied = sum(p["updates"] + p["drops"] for p in s["roles"]["ps"])
    print("# %d applied or dropped, gradients %s: %d pushes" % (applied, g, pushes))
    ok = applied <= pushes if guard else applied == pushes
else:
    U = s["updates"]
    rounds = [x["ring"]["rounds"] for x in ls]
    print("# %d updates, ring rounds %s, gradients %s" % (U, rounds, g))
    ok = all(r == U + 1 for r in rounds) and all(K * U <= x <= K * (U + 1) for x in g)
ok = ok and s["gradients"] == sum(g) and all(x["samples_trained"] == 32 * x["gradients"] for x in ls)
sys.exit(0 if ok and s["updates"] > 0 else 1)
PY
}

# bytes FILE: the job's sync bytes sent per gradient, then the model's
# figures over the same gradients, sent and received (per_worker). A
# learner that made no gradient (starved by the machine's load: seen
# beside a CPU hog) has no per-gradient figures (null) and weighs nothing.
bytes() {
    python3 -c 'import json, sys
w = [x for x in json.load(open(sys.argv[1]))["per_worker"]["learners"] if x["gradients"]]
g = sum(x["gradients"] for x in w)
f = lambda k: sum(x[k] * x["gradients"] for x in w) / g
print("%.3f %.3f %.3f %.3f %.3f" % tuple(map(f, ("sync_bytes_sent_per_gradient", "model_bytes_sent_per_gradient",
      "sync_bytes_recv_per_gradient", "model_bytes_recv_per_gradient", "gradients"))))' "$1" 2>/dev/null
}
# within A B PCT: |A / B - 1| <= PCT%
within() { awk -v a="$1" -v b="$2" -v p="$3" 'BEGIN { exit !(b > 0 && a / b - 1 <= p / 100 && 1 - a / b <= p / 100) }'; }

for mode in ps_sync ps_async allreduce; do
    set_mode=(--set "sync.mode=$mode" --set roles.learners=2)
    [ $mode = allreduce ] && set_mode+=(--set roles.param_servers=0)
    job "accumulate-$mode-1" "${set_mode[@]}"
    expect_rc "$mode, K = 1: exit status 0" 0
    read -r sent1 _ _ _ _ <<<"$(bytes "$RUN/summary.json")"
    job "accumulate-$mode-4" "${set_mode[@]}" --set learner.accumulate=4
    expect_rc "$mode, K = 4: exit status 0" 0
    check "$mode, K = 4: updates against gradients (4 per learner per sync)" relation "$RUN/summary.json" $mode 4
    t=$(jget "$RUN/summary.json" samples_trained)
    i=$(jsum "$RUN/summary.json" replay inserted)
    check "$mode, K = 4: the replay ratio's rows trained ($t for $i inserted)" \
        awk -v t="${t:-0}" -v i="${i:-0}" 'BEGIN { exit !(i > 200 && t >= 0.9 * 8 * (i - 200)) }'
    read -r sent4 model_sent recv4 model_recv _ <<<"$(bytes "$RUN/summary.json")"
    check "$mode, K = 4: sync bytes sent per gradient ${sent4:-?} = 1/4 of K = 1's ${sent1:-?} within 5%" \
        within "${sent4:-0}" "$(awk -v s="${sent1:-0}" 'BEGIN { print s / 4 }')" 5
    check "$mode, K = 4: bytes sent per gradient ${sent4:-?} within 5% of the model ${model_sent:-?}" \
        within "${sent4:-0}" "${model_sent:-0}" 5
    check "$mode, K = 4: bytes received per gradient ${recv4:-?} within 5% of the model ${model_recv:-?}" \
        within "${recv4:-0}" "${model_recv:-0}" 5
done

# With the loss guard dropping batches: a dropped part adds zero to its sum
# (a whole sum dropped in ps_async sends nothing); the jobs still end. At
# 4 x the default replay ratio, so that the loss statistics see as many
# updates as a K = 1 job (on the default ratio's 86 updates the loss only
# falls, and nothing is an outlier).
for mode in ps_async allreduce; do
    ps=1
    [ $mode = allreduce ] && ps=0
    job "accumulate-guard-$mode" --set sync.mode=$mode --set roles.param_servers=$ps --set roles.learners=2 \
        --set learner.accumulate=4 --set learner.loss_outlier_sigma=0.5 --set replay.samples_per_insert=32
    expect_rc "$mode, K = 4, sigma 0.5: exit status 0" 0
    d=$(jsum "$RUN/summary.json" learner loss_outliers_dropped)
    check "$mode, K = 4, sigma 0.5: batches dropped (${d:-none})" [ "${d:-0}" -gt 0 ]
    check "$mode, K = 4, sigma 0.5: updates against gradients" relation "$RUN/summary.json" $mode 4 guard
done

# refused RUNNAME WHY ARGS...: gorila stops before any rank starts: exit 2,
# one line on stderr, no run directory.
refused() {
    local name=$1 why=$2
    shift 2
    rm -rf "${RUNS:?}/$name"
    run_cmd timeout 30 "$@" --set run.name="$name" --set run.out_dir="$RUNS"
    expect_rc "$name: refused, exit 2" 2
    expect_eq "$name: one line on stderr" "$(wc -l <<<"$err")" 1
    expect_contains "$name: says why" "$err" "$why"
    check "$name: nothing started (no run directory)" [ ! -e "$RUNS/$name" ]
}
refused accumulate-0 "learner.accumulate: expected an integer in [1, 1024], got 0" \
    "$TEST_ROOT/scripts/launch" "$SMALL" --set learner.accumulate=0
refused accumulate-1025 "learner.accumulate: expected an integer in [1, 1024], got 1025" \
    "$TEST_ROOT/scripts/launch" "$SMALL" --set learner.accumulate=1025
refused accumulate-prioritized "use replay.kind: uniform or learner.accumulate: 1" \
    "$TEST_ROOT/scripts/launch" "$SMALL" --set learner.accumulate=4 --set replay.kind=prioritized
refused accumulate-local "run.mode is local" "$GORILA" train "$SMALL" --local --set learner.accumulate=4
refused accumulate-local-mode "run.mode is local" "$GORILA" train "$SMALL" --set run.mode=local \
    --set learner.accumulate=2
done_testing
