# SPDX-License-Identifier: MIT
# Ape-X exploration with many actors, per-actor returns: a short job with
# explore.kind apex, 3 actors on 2 replay shards and 3-step returns (uniform
# replay), whose summary.json must have an `actors` array (src/core/train/actorstats.h,
# docs/OUTPUTS.md) that agrees with what else the run wrote:
#   - one entry per actor, in order, with epsilon 0.4^(1 + 7 i / 2), computed
#     here, not by gorila;
#   - episodes that sum to the summary's `episodes` (a fresh run), equal the
#     actor's own count (roles.actor[].episodes) and its rows in episodes.csv;
#   - mean_return_last_100 and best_return equal to the mean of its last 100
#     returns in episodes.csv (more than 100 for some actor) and the largest.
# The job ends with one line of every actor's epsilon and mean; a local run
# (one actor) has no `actors` key.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../mpilib.sh"

if ! command -v python3 >/dev/null; then
    not_ok "python3 not found (scripts/install-deps.sh installs it)"
    done_testing
    exit
fi

job apex --set roles.actors=3 --set roles.replay_shards=2 --set explore.kind=apex --set agent.n_step=3 \
    --set run.max_env_steps=4500
expect_rc "apex: exit status 0" 0
if [ ! -f "$RUN/summary.json" ]; then
    not_ok "apex: summary.json written"
    done_testing
    exit
fi

# Each PASS/FAIL line of the checker is one TAP line; a checker that reports
# nothing is a failure.
n=0
while IFS=$'\t' read -r status what; do
    case $status in
    PASS) ok "apex: $what" ;;
    FAIL) not_ok "apex: $what" ;;
    *) echo "# $status${what:+ $what}" ;;
    esac
    n=$((n + 1))
done < <(python3 - "$RUN" 2>&1 <<'PY'
import csv, json, math, sys

run = sys.argv[1]
s = json.load(open(run + "/summary.json"))

def check(ok, what):
    print(("PASS" if ok else "FAIL") + "\t" + what)

N, eps0, alpha = 3, 0.4, 7.0
actors = s.get("actors")
check(isinstance(actors, list) and len(actors) == N, "summary.json has an actors array of %d entries (%s)"
      % (N, None if actors is None else len(actors)))
if not isinstance(actors, list) or len(actors) != N:
    sys.exit(0)
check([a.get("actor") for a in actors] == list(range(N)), "actors are in index order 0..%d" % (N - 1))
check(all(set(a) == {"actor", "epsilon", "episodes", "mean_return_last_100", "best_return"} for a in actors),
      "each entry has exactly actor, epsilon, episodes, mean_return_last_100, best_return")

# Ape-X: actor i of N explores with eps0^(1 + alpha * i / (N - 1)).
for i, a in enumerate(actors):
    want = eps0 ** (1 + alpha * i / (N - 1))
    got = a["epsilon"]
    check(got is not None and abs(got - want) <= 1e-12 * want,
          "actor %d epsilon %s = 0.4^(1 + 7*%d/2) = %.17g" % (i, got, i, want))
roles = s["roles"]["actor"]
check([r["epsilon"] for r in roles] == [a["epsilon"] for a in actors], "epsilons equal roles.actor[].epsilon")

check(s["resumed"] is False, "a fresh run")
total = sum(a["episodes"] for a in actors)
check(total == s["episodes"], "actors' episodes sum to the summary's episodes (%d = %d)" % (total, s["episodes"]))
check([a["episodes"] for a in actors] == [r["episodes"] for r in roles],
      "each actor's episodes equal its own count, roles.actor[].episodes (%s)" % [r["episodes"] for r in roles])

# 4500 env steps give the greedier actors about 150 short episodes each, so
# the last-100 window has wrapped (and the mean below must leave the oldest out).
check(max(a["episodes"] for a in actors) > 100, "an actor finished over 100 episodes: its window wrapped (%s)"
      % [a["episodes"] for a in actors])

rets = {i: [] for i in range(N)}
with open(run + "/episodes.csv") as f:
    for row in csv.DictReader(f):
        rets[int(row["actor"])].append(float(row["return"]))
for i, a in enumerate(actors):
    r = rets[i]
    check(a["episodes"] == len(r) and len(r) > 0,
          "actor %d: %d episodes, its rows in episodes.csv (%d)" % (i, a["episodes"], len(r)))
    if not r:
        continue
    last = r[-100:]
    want = sum(last) / len(last)
    m = a["mean_return_last_100"]
    check(m is not None and math.isfinite(m) and abs(m - want) <= 1e-9 * max(1.0, abs(want)),
          "actor %d: mean_return_last_100 %s = mean of its last %d returns in episodes.csv (%.10g)"
          % (i, m, len(last), want))
    check(a["best_return"] == max(r), "actor %d: best_return %s = its largest return (%s)" % (i, a["best_return"], max(r)))
PY
)
[ "$n" -gt 0 ] || not_ok "apex: the summary checker reported nothing"

line=$(grep '^actors: ' <<<"$out")
expect_contains "apex: the run ends with the actors line" "$line" "actors: eps 0.400 -> mean "
expect_eq "apex: the line shows every actor" "$(grep -o ' eps ' <<<"$line" | wc -l)" 3

# A local run has one actor and no actors array.
R="$RUNS/apex-local"
rm -rf "$R"
run_cmd timeout 120 "$GORILA" train "$SMALL" --local --set run.name=apex-local --set run.out_dir="$RUNS" \
    --set explore.kind=apex
expect_rc "local: exit status 0" 0
check "local: summary.json has no actors key" python3 -c 'import json, sys; sys.exit("actors" in json.load(open(sys.argv[1])))' \
    "$R/summary.json"
expect_eq "local: no actors line" "$(grep -c '^actors: ' <<<"$out")" 0
done_testing
