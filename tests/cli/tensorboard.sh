# SPDX-License-Identifier: MIT
# TensorBoard event files (logging.tensorboard) and metrics rows at training
# cadence (logging.metrics_every_env_steps, metrics_every_updates), through
# the real binary. The files gorila writes are read back by an independent
# reader, tests/tb/read_events.py: TensorBoard's own event.proto and
# summary.proto (tests/tb/proto, compiled here by protoc into this run's
# scratch directory) and a CRC-32C of its own. The same reader first reads
# two event files other programs wrote (tests/tb/data), so it is proven on
# input gorila did not write. The distributed job's file: tests/mpi/tensorboard.sh.
source "$(dirname "$0")/../lib.sh"
cd "$TEST_ROOT" || exit 1
RUNS="$TEST_TMP/cli-tb-runs"
rm -rf "$RUNS"
source tests/tb/reader.sh

# The reader on files written by others: TensorFlow 2's writer (100 scalars
# as float tensors) and tfevents-js's test asset (one simple_value).
read_events "TensorFlow's file" tensorflow tests/tb/data/events.out.tfevents.1585499054.Jaakkos-Mac-mini.local.11684.5.v2
read_events "tfevents-js's file" tfevents-js tests/tb/data/events.out.tfevents.1687811641.v2

base=(configs/local/cartpole.yaml --set run.out_dir="$RUNS" --set logging.progress=never
    --set run.stop_when_solved=false --set logging.interval_seconds=86400)
TAGS=train/episode_return,eval/mean_return,train/mean_return,train/loss,train/mean_q,train/epsilon
TAGS=$TAGS,rate/env_steps_per_second,rate/updates_per_second

# rows FILE: metrics.csv rows (the header apart).
rows() { echo $(($(wc -l <"$1") - 1)); }

# A row every 100 env steps over 3000: the local trainer steps one
# environment at a time (actor.envs 1), so env_steps passes every multiple
# of 100 exactly once: rows at 100, 200, ..., 3000 (30), then the row every
# run ends with (at 3000 again): 31. interval_seconds is a day, so no row
# comes from the clock.
run_cmd "$GORILA" train "${base[@]}" --set run.name=local --set run.max_env_steps=3000 \
    --set logging.tensorboard=true --set logging.metrics_every_env_steps=100
expect_rc "tensorboard run: exit status 0" 0
R="$RUNS/local"
expect_eq "metrics_every_env_steps 100 over 3000 env steps: 30 rows and the final one" "$(rows "$R/metrics.csv")" 31
expect_eq "the rows' env steps are the multiples of 100, then the final row's" \
    "$(cut -d, -f2 "$R/metrics.csv" | tail -n +2 | xargs)" "$(seq 100 100 3000 | xargs) 3000"
expect_eq "one events file in tb/" "$(find "$R/tb" -name 'events.out.tfevents.*' | wc -l)" 1
read_events "local run" gorila "$R" --tags "$TAGS"

# A resume adds a second file that begins with SessionLog START at the
# checkpoint's env steps (3000), so TensorBoard drops what an earlier
# segment wrote from there on.
run_cmd "$GORILA" train --resume "$R" --set run.max_env_steps=3500
expect_rc "resume: exit status 0" 0
expect_eq "resume: a second events file in tb/" "$(find "$R/tb" -name 'events.out.tfevents.*' | wc -l)" 2
read_events "resumed run" gorila "$R" --tags "$TAGS" --start 3000

# A tb/ that cannot be used (here a file where the directory should be:
# the same for root, whom permissions do not stop) is refused before
# anything starts: exit status 2, one line, the run's files untouched.
cp "$R/metrics.csv" "$TEST_TMP/tb-metrics-before.csv"
latest=$(cat "$R/checkpoints/latest")
rm -rf "$R/tb"
touch "$R/tb"
run_cmd "$GORILA" train --resume "$R" --set run.max_env_steps=4000
expect_rc "unusable tb/: exit status 2" 2
expect_eq "unusable tb/: one line on stderr, naming it" "$err" \
    "gorila: error: logging.tensorboard: cannot use $R/tb: it exists and is not a directory"
check "unusable tb/: metrics.csv untouched" cmp -s "$R/metrics.csv" "$TEST_TMP/tb-metrics-before.csv"
expect_eq "unusable tb/: no new checkpoint" "$(cat "$R/checkpoints/latest")" "$latest"

# A row every 100 updates: learning starts when replay holds
# replay.min_size 1000 transitions, at env step 1000; from there each env
# step adds one to the steps awaiting training, and every agent.train_every
# 16 of them give agent.gradient_steps 8 updates. Steps 1000..3000 are 2001,
# so 125 rounds: 1000 updates, in bursts of 8. Each burst passes at most
# one multiple of 100, so one row per multiple: 100, ..., 1000 (10), and
# the final row: 11.
run_cmd "$GORILA" train "${base[@]}" --set run.name=upd --set run.max_env_steps=3000 \
    --set logging.metrics_every_env_steps=0 --set logging.metrics_every_updates=100
expect_rc "metrics_every_updates run: exit status 0" 0
expect_contains "metrics_every_updates run: 1000 updates, as worked out" "$(cat "$RUNS/upd/summary.json")" \
    '"updates": 1000,'
expect_eq "metrics_every_updates 100 over 1000 updates: 10 rows and the final one" "$(rows "$RUNS/upd/metrics.csv")" 11
check "tensorboard off (the default): no tb/" [ ! -e "$RUNS/upd/tb" ]

# The defaults as shipped: configs/local/cartpole.yaml solves CartPole in
# about 7000 env steps (half a second); a row every 100 env steps gives one
# per multiple of 100 reached and the final one (and a row from the clock
# if a slow machine takes over 2 s), so 50 and more.
run_cmd "$GORILA" train configs/local/cartpole.yaml --set run.out_dir="$RUNS" --set run.name=dflt \
    --set logging.progress=never
expect_rc "default cadence: exit status 0" 0
steps=$(sed -n 's/^  "env_steps": \([0-9]*\),$/\1/p' "$RUNS/dflt/summary.json")
n=$(rows "$RUNS/dflt/metrics.csv")
want=$((steps / 100 + 1 > 50 ? steps / 100 + 1 : 50))
check "default cadence: $n rows for $steps env steps, at least one per 100 reached and 50" [ "$n" -ge "$want" ]
done_testing
