# SPDX-License-Identifier: MIT
# The held-out test evaluation at the end of a run (src/core/train/heldout.h):
# the saved best and final networks scored on eval.test_seed. Each score
# must be what `gorila eval` gives for that checkpoint on that seed and
# episode count (an independent path: the CLI loads the files itself),
# solved_test must be the threshold applied to the best's score, the final
# line must say it, and the keys are null where nothing was scored.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../mpilib.sh"
cd "$TEST_ROOT" || exit 1

# evalmean RUN WHICH SEED EPISODES: gorila eval's mean for a checkpoint.
evalmean() {
    "$GORILA" eval "$1" --checkpoint "$2" --seed "$3" --episodes "$4" --json 2>/dev/null |
        python3 -c 'import json, sys; print(json.load(sys.stdin)["mean"])'
}

# same A B: two means printed by different writers (%.17g and JSON) agree.
same() { python3 -c 'import sys; sys.exit(abs(float(sys.argv[1]) - float(sys.argv[2])) > 1e-9)' "$1" "$2"; }

test_checks() { # NAME RUN SEED EPISODES
    local name=$1 run=$2 seed=$3 eps=$4 s="$2/summary.json" tb tf thr st
    expect_eq "$name: test seed recorded" "$(jget "$s" test_eval_seed)" "$seed"
    expect_eq "$name: test episodes recorded" "$(jget "$s" test_eval_episodes)" "$eps"
    tb=$(jget "$s" test_best_return)
    tf=$(jget "$s" test_final_return)
    check "$name: best's test score ($tb) is gorila eval's on seed $seed" same "$tb" "$(evalmean "$run" best "$seed" "$eps")"
    check "$name: final's test score ($tf) is gorila eval's on seed $seed" same "$tf" "$(evalmean "$run" final "$seed" "$eps")"
    thr=$(jget "$s" reward_threshold)
    st=$(awk -v b="$tb" -v t="$thr" 'BEGIN { print (b >= t) ? "true" : "false" }')
    expect_eq "$name: solved_test is best's test score >= $thr" "$(jget "$s" solved_test)" "$st"
    expect_contains "$name: the final line gives the test scores" "$out" \
        "held-out test ($eps episodes, seed $seed): best $(printf '%.1f' "$tb"), final $(printf '%.1f' "$tf")"
    check "$name: the selection score is still the logged one" [ -n "$(jget "$s" best_eval_mean_return)" ]
}

# Local: a run that evaluates every 100 updates, so best and final differ.
RUN="$RUNS/te-local"
rm -rf "$RUN"
run_cmd timeout --kill-after=5 120 "$GORILA" train configs/local/cartpole.yaml --set run.out_dir="$RUNS" \
    --set run.name=te-local --set run.max_env_steps=4000 --set eval.every_updates=100 --set eval.episodes=5 \
    --set eval.test_episodes=20 --set eval.test_seed=777 --set logging.progress=never
expect_rc "local: exit status 0" 0
test_checks local "$RUN" 777 20

# Distributed: the coordinator scores the files the job saved.
RUN="$RUNS/te-dist"
rm -rf "$RUN"
run_cmd timeout --kill-after=5 120 "$TEST_ROOT/scripts/launch" "$SMALL" --set run.out_dir="$RUNS" --set run.name=te-dist \
    --set eval.test_episodes=10 --set eval.test_seed=4242
expect_rc "distributed: exit status 0" 0
test_checks distributed "$RUN" 4242 10

# Off: eval.test_episodes 0 scores nothing and says nothing.
RUN="$RUNS/te-off"
rm -rf "$RUN"
run_cmd timeout --kill-after=5 120 "$GORILA" train configs/local/cartpole.yaml --set run.out_dir="$RUNS" \
    --set run.name=te-off --set run.max_env_steps=1500 --set eval.test_episodes=0 --set logging.progress=never
expect_rc "off: exit status 0" 0
for k in test_eval_seed test_best_return test_final_return solved_test; do
    expect_eq "off: $k is null" "$(jget "$RUN/summary.json" "$k")" null
done
check "off: no test scores in the final line" bash -c '! grep -q "held-out test" <<<"$1"' _ "$out"

# Bad input: selecting and reporting on the same episodes.
run_cmd "$GORILA" config check configs/local/cartpole.yaml --set eval.test_seed=12345
expect_rc "test seed = eval seed: refused, exit 2" 2
expect_contains "test seed = eval seed: says why" "$err" "the test episodes would be the ones checkpoints/best was selected on"
expect_eq "test seed = eval seed: one line" "$(wc -l <<<"$err")" 1
run_cmd "$GORILA" config check configs/local/cartpole.yaml --set eval.test_seed=12345 --set eval.test_episodes=0
expect_rc "test seed = eval seed with no test episodes: valid" 0
done_testing
