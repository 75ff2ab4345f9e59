# SPDX-License-Identifier: MIT
# The decentralized sync modes (docs/CONFIG.md sync.mode; src/mpi/learndecent.c
# and learnring.c) on the small job:
#   - gossip (2, 3 learners random; 4 learners hypercube; 3 learners ring),
#     local_sgd (2, 3 learners) and easgd (2 learners, 1 and 2 PS shards)
#     finish, and every learner met the others every `every` gradients:
#     its sync rounds are floor(gradients / every) or one more (the round a
#     stop sends a learner to early);
#   - the traffic is the model's (jobsummary_model_bytes) within 5%, sent and
#     received, for every learner; gossip moves exactly 4n bytes each way
#     per exchange (2K per exchange, sent and received, whatever N), with
#     n worked out here from the small config's layer sizes;
#   - local_sgd with H = 8 sends at most 1/7 of what the allreduce mode
#     sends per gradient (the ring's 2(N-1)/N K every gradient);
#   - every learner reports a consensus distance (with two learners, the
#     same for both: they sit on either side of their mean), and metrics.csv
#     has the column with values; summary.json says which parameters were
#     evaluated; easgd's center moved once per exchange on every shard;
#   - bad input is refused before anything starts (exit 2, one line).
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../mpilib.sh"
cd "$TEST_ROOT" || exit 1

# The small config's Q-network, [16, 16] on CartPole (4 observations, 2 actions).
N_PARAMS=$((4 * 16 + 16 + 16 * 16 + 16 + 16 * 2 + 2))

# check_job FILE MODE EVERY P: rounds against gradients, bytes against
# the model, consensus reported (the python below prints what it judged).
check_job() {
    python3 - "$@" "$N_PARAMS" <<'PY'
import json, math, sys
path, mode, every, P, n = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
s = json.load(open(path))
ls = sorted(s["roles"]["learner"], key=lambda x: x["index"])
pw = sorted(s["per_worker"]["learners"], key=lambda x: x["index"])
bad = []
for x, w in zip(ls, pw):
    g, r = x["gradients"], x.get("sync_rounds", 0)
    # the round that carries the stop, or an easgd exchange the stop cut short, is not counted
    low = g // every - 1
    if not low <= r <= g // every + 1:
        bad.append("learner %d: %d rounds for %d gradients" % (x["index"], r, g))
    # Bytes per round against the model's per gradient times the period:
    # per gradient, a learner that made few gradients (a loaded machine can
    # starve one: 10 against 680) reads low by the part-period it stopped in.
    for k in ("sent", "recv"):
        got, want = w["sync_bytes_%s_per_gradient" % k], w["model_bytes_%s_per_gradient" % k]
        if r == 0:
            if g >= 2 * every:
                bad.append("learner %d: no round in %d gradients" % (x["index"], g))
            continue
        # The round the stop cut short is not counted in r but its bytes
        # moved (a starved learner beside load: 21 exchanges' bytes, 20
        # rounds), so the bytes may be r or r + 1 rounds' worth.
        got_round, want_round = got * g / r, want * every
        got_total = got * g
        if not (want_round > 0 and any(abs(got_total / (want_round * k) - 1) <= 0.05 for k in (r, r + 1))):
            bad.append("learner %d: %s %.1f bytes per round, model %.1f (%.1f per gradient, model %.1f)" %
                       (x["index"], k, got_round, want_round, got, want))
    d = x.get("consensus_distance")
    if d is None or not (d > 0 and math.isfinite(d)):
        bad.append("learner %d: consensus distance %r" % (x["index"], d))
    if mode == "gossip":
        ring = x["ring"]
        if ring["bytes_sent"] != 4 * n * ring["rounds"] or ring["bytes_recv"] != 4 * n * ring["rounds"]:
            bad.append("learner %d: %d bytes out, %d in over %d exchanges, not 4n = %d each" %
                       (x["index"], ring["bytes_sent"], ring["bytes_recv"], ring["rounds"], 4 * n))
# Two learners measured at the same meeting sit on either side of their
# mean, at the same distance: a wrong mean (or an average that is not one)
# breaks the symmetry.
if mode != "easgd" and len(ls) == 2:
    d0, d1 = (x.get("consensus_distance") or 0 for x in ls)
    if not (d0 > 0 and abs(d0 - d1) <= 1e-4 * d0):
        bad.append("two learners' distances from their mean differ: %r, %r" % (d0, d1))
if mode == "easgd":
    exchanges = sum(x.get("sync_rounds", 0) for x in ls)
    for p in s["roles"]["ps"]:
        # an exchange cut short by the stop still reached some shards
        if not exchanges <= p["updates"] <= exchanges + len(ls):
            bad.append("ps %d: %d center moves for %d exchanges" % (p["index"], p["updates"], exchanges))
    if len(s["roles"]["ps"]) != P:
        bad.append("%d PS shards, not %d" % (len(s["roles"]["ps"]), P))
want = {"easgd": "center"}.get(mode, "learner 0")
if want not in s.get("evaluated_parameters", ""):
    bad.append("evaluated_parameters: %r" % s.get("evaluated_parameters"))
print("# %s: rounds %s, gradients %s" % (mode, [x.get("sync_rounds") for x in ls], [x["gradients"] for x in ls]))
for b in bad:
    print("# " + b)
sys.exit(1 if bad or s["updates"] == 0 else 0)
PY
}

# consensus_logged: metrics.csv's consensus_distance column has a number.
consensus_logged() {
    awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "consensus_distance") c = i; next }
        c && $c != "" && $c != "nan" { n++ } END { exit !(n > 0) }' "$RUN/metrics.csv"
}

# bytes_sent FILE: sync bytes sent per gradient, over all learners.
bytes_sent() {
    python3 -c 'import json, sys
w = json.load(open(sys.argv[1]))["per_worker"]["learners"]
print("%.3f" % (sum(x["sync_bytes_sent_per_gradient"] * x["gradients"] for x in w) / sum(x["gradients"] for x in w)))' \
        "$1" 2>/dev/null
}

# name mode learners P topology every
for spec in "gossip-2 gossip 2 0 random 4" "gossip-3 gossip 3 0 random 4" "gossip-4-cube gossip 4 0 hypercube 2" \
    "gossip-3-ring gossip 3 0 ring 1" "local_sgd-2 local_sgd 2 0 - 8" "local_sgd-3 local_sgd 3 0 - 4" \
    "easgd-2 easgd 2 1 - 4" "easgd-2-P2 easgd 2 2 - 2"; do
    read -r name mode L P topo every <<<"$spec"
    sets=(--set "sync.mode=$mode" --set "roles.learners=$L" --set "roles.param_servers=$P")
    case $mode in
    gossip) sets+=(--set "sync.gossip_topology=$topo" --set "sync.gossip_every=$every") ;;
    local_sgd) sets+=(--set "sync.average_every=$every") ;;
    easgd) sets+=(--set "sync.easgd_every=$every") ;;
    esac
    job "decentral-$name" "${sets[@]}"
    expect_rc "$name: exit status 0" 0
    check "$name: rounds every $every gradients, bytes within 5% of the model, consensus reported" \
        check_job "$RUN/summary.json" "$mode" "$every" "$P"
    check "$name: metrics.csv logs the consensus distance" consensus_logged
    [ "$name" = local_sgd-2 ] && lsgd=$(bytes_sent "$RUN/summary.json")
done

# local_sgd at H = 8 against the allreduce mode (a ring round per gradient).
job decentral-allreduce-2 --set sync.mode=allreduce --set roles.learners=2 --set roles.param_servers=0
expect_rc "allreduce, 2 learners: exit status 0" 0
ar=$(bytes_sent "$RUN/summary.json")
check "local_sgd H = 8 sends ${lsgd:-?} bytes per gradient, at most 1/7 of allreduce's ${ar:-?}" \
    awk -v a="${lsgd:-0}" -v b="${ar:-0}" 'BEGIN { exit !(a > 0 && b > 0 && a <= b / 7) }'

# A learner that never met the center (easgd_every beyond every learner's
# gradients; under a CPU hog a starved learner can end so) still reports
# sync_rounds, as 0: summary.json's decentralized keys are always there.
job decentral-easgd-never --set sync.mode=easgd --set roles.learners=2 --set sync.easgd_every=1000000
expect_rc "easgd, every 1000000: exit status 0" 0
expect_eq "easgd, every 1000000: each learner reports sync_rounds 0" "$(python3 -c '
import json, sys
print(" ".join(str(l.get("sync_rounds")) for l in json.load(open(sys.argv[1]))["roles"]["learner"]))' "$RUN/summary.json")" "0 0"

# Checkpoints hold every learner's own state (learner-<k>.ckpt beside the
# shard files; docs/CHECKPOINT.md) and a resume restores each bit for bit:
# a resume that applies no update saves again exactly what it loaded, the
# shard files and every learner's copy. With another learner count the
# copies do not apply: every learner starts from the sources' state, and
# says so.
for spec in "gossip 2 0 1" "local_sgd 3 0 1" "easgd 2 1 0"; do
    read -r mode L P first <<<"$spec"
    job "decentral-resume-$mode" --set "sync.mode=$mode" --set "roles.learners=$L" --set "roles.param_servers=$P"
    expect_rc "resume $mode: first run" 0
    expect_eq "resume $mode: the manifest lists the learner copies" "$(manifest learner_copies)" "$L first $first"
    # shellcheck disable=SC2119 # no extra --set: the resume as saved
    notrain_resume
    expect_rc "resume $mode: resume with no update to apply" 0
    check "resume $mode: the resume applied no update" [ "$NOTRAIN_OK" = 1 ]
    same=1
    for f in "$C1"/ps-*.ckpt "$C1"/learner-*.ckpt; do
        same_shard "$f" "$C2/$(basename "$f")" || { same=0; echo "# $(basename "$f") differs"; }
    done
    n=$(find "$C1" -name 'learner-*.ckpt' | wc -l)
    [ "$C1" != "$C2" ] && [ "$n" -eq $((L - first)) ] || same=0
    check "resume $mode: $n learner copies and the shards identical after resume, bit for bit" [ "$same" = 1 ]
done
# gorila eval says whose parameters a checkpoint holds.
run_cmd "$GORILA" eval "$RUNS/decentral-resume-gossip" --episodes 1
expect_contains "eval of a gossip run: learner 0's copy" "$out" "learner 0's copy (gossip)"
run_cmd "$GORILA" eval "$RUN" --episodes 1
expect_contains "eval of an easgd run: the center" "$out" "the EASGD center (easgd)"
# (a budget past the checkpoint's env steps, which the no-update resume
# above moved on by however far the actors got before its time stop)
C1="$RUN/checkpoints/$(cat "$RUN/checkpoints/latest")"
run_cmd timeout --kill-after=5 120 "$TEST_ROOT/scripts/launch" --resume "$RUN" --set roles.learners=3 \
    --set run.max_env_steps=$(($(manifest env_steps) + 1000))
expect_rc "resume easgd onto 3 learners: exit status 0" 0
expect_contains "resume easgd onto 3 learners: the learners say they start from the center" "$out$err" \
    "holds no copy of its own; it starts from the parameter sources' state"

# refused RUNNAME WHY ARGS...: exit 2, one line on stderr, no run directory.
refused() {
    local name=$1 why=$2
    shift 2
    rm -rf "${RUNS:?}/$name"
    run_cmd timeout 30 "$TEST_ROOT/scripts/launch" "$SMALL" "$@" --set run.name="$name" --set run.out_dir="$RUNS"
    expect_rc "$name: refused, exit 2" 2
    expect_eq "$name: one line on stderr" "$(wc -l <<<"$err")" 1
    expect_contains "$name: says why" "$err" "$why"
    check "$name: nothing started (no run directory)" [ ! -e "$RUNS/$name" ]
}
refused bad-mode 'sync.mode: expected one of ps_sync, ps_async, ps_bounded, allreduce, gossip, easgd, local_sgd' \
    --set sync.mode=gosip
refused gossip-every-0 "sync.gossip_every: expected an integer in [1, 1000000], got 0" \
    --set sync.mode=gossip --set roles.learners=2 --set roles.param_servers=0 --set sync.gossip_every=0
refused easgd-every-0 "sync.easgd_every: expected an integer in [1, 1000000], got 0" \
    --set sync.mode=easgd --set sync.easgd_every=0
refused average-every-0 "sync.average_every: expected an integer in [1, 1000000], got 0" \
    --set sync.mode=local_sgd --set roles.learners=2 --set roles.param_servers=0 --set sync.average_every=0
for a in 0 1 1.5 -0.2; do
    refused "easgd-alpha-$a" "sync.easgd_alpha" --set sync.mode=easgd --set sync.easgd_alpha=$a
done
refused gossip-1 "averages the parameters of several learners, but roles.learners is 1" \
    --set sync.mode=gossip --set roles.param_servers=0
refused local_sgd-1 "averages the parameters of several learners, but roles.learners is 1" \
    --set sync.mode=local_sgd --set roles.param_servers=0
refused easgd-no-ps "keeps its center variable on the parameter servers, but roles.param_servers is 0" \
    --set sync.mode=easgd --set roles.param_servers=0
refused gossip-ps "uses no parameter servers, but roles.param_servers is 1" --set sync.mode=gossip --set roles.learners=2
refused hypercube-3 "needs a power-of-2 learner count, but roles.learners is 3" \
    --set sync.mode=gossip --set roles.learners=3 --set roles.param_servers=0 --set sync.gossip_topology=hypercube
refused gossip-topology "sync.gossip_topology: expected one of random, ring, hypercube" \
    --set sync.mode=gossip --set roles.learners=2 --set roles.param_servers=0 --set sync.gossip_topology=star
done_testing
