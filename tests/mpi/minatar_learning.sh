# SPDX-License-Identifier: MIT
# Learning on MinAtar Breakout with the conv DQN, in a test-sized budget:
# configs/minatar's published settings, shortened (12,000 frames, learning
# from frame 500, epsilon 1.0 -> 0.1 over the next 6,000, target copied
# every 200 updates, lr 1e-3), local and distributed (the default Gorila
# layout), each checked on the greedy mean of 30 evaluation episodes at the
# end against 1.2. Measured before the bound was set (2-core Xeon, SkylakeX
# kernel): a learner that learns nothing (optimizer.lr 1e-9) scores 0.53
# (its greedy policy nearly always loses the ball at once); the local
# trainer scored 2.43-3.60 on seeds 1-6, the distributed job 1.70-3.63 on
# seeds 1-3 (its message timing makes it vary run to run).
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../mpilib.sh"
cd "$TEST_ROOT" || exit 1

short=(--set run.max_env_steps=12000 --set replay.min_size=500 --set explore.start_step=500
    --set explore.decay_steps=6000 --set agent.target_every=200 --set optimizer.lr=1e-3
    --set eval.every_updates=0 --set eval.episodes=30 --set eval.test_episodes=0
    --set logging.progress=never --set run.seed=1 --set run.out_dir="$RUNS")

# learned NAME: the run's final greedy evaluation beats 1.2
learned() {
    local last
    last=$(jget "$RUN/summary.json" last_eval_mean_return)
    check "$1 learns Breakout: greedy mean $last >= 1.2 after 12000 frames" \
        awk -v b="${last:-0}" 'BEGIN { exit !(b >= 1.2) }'
    expect_eq "$1: ran its whole budget" "$(jget "$RUN/summary.json" env_steps)" 12000
}

RUN="$RUNS/minatar-learn-local"
rm -rf "$RUN"
run_cmd timeout --kill-after=5 300 "$GORILA" train configs/minatar/local/breakout.yaml \
    --set run.name=minatar-learn-local "${short[@]}"
expect_rc "local Breakout: exit status 0" 0
learned "local trainer"
check_artifacts "local Breakout"

RUN="$RUNS/minatar-learn-dist"
rm -rf "$RUN"
run_cmd timeout --kill-after=5 300 "$TEST_ROOT/scripts/launch" configs/minatar/breakout.yaml \
    --set run.name=minatar-learn-dist "${short[@]}"
expect_rc "distributed Breakout: exit status 0" 0
learned "distributed job (ps_sync, 5 ranks)"
check_artifacts "distributed Breakout"
done_testing
