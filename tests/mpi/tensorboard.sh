# SPDX-License-Identifier: MIT
# TensorBoard event files from a distributed job: the coordinator writes
# them, from the same figures as metrics.csv (and, in the parameter-server
# modes, the gradients' mean staleness and the bytes sent per update),
# read back by the independent reader of tests/tb/read_events.py (see
# tests/cli/tensorboard.sh for the local trainer and the reader's own
# proof on files TensorFlow wrote). Then the row cadence as the coordinator
# sees the counters (in steps, as the actors report them), and a resume
# whose tb/ cannot be used, refused by every rank before any starts.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../mpilib.sh"
source "$TEST_ROOT/tests/tb/reader.sh"

TB=(--set logging.tensorboard=true --set logging.metrics_every_env_steps=100 --set logging.interval_seconds=86400
    --set roles.actors=2 --set roles.learners=2 --set roles.param_servers=2)

# ps_sync: 2 actors, 1 replay shard, 2 learners, 2 parameter servers.
job tb-sync "${TB[@]}"
expect_rc "ps_sync: exit status 0" 0
expect_eq "ps_sync: one events file in tb/" "$(find "$RUN/tb" -name 'events.out.tfevents.*' 2>/dev/null | wc -l)" 1
read_events ps_sync gorila "$RUN" --tags train/episode_return,eval/mean_return,train/loss,train/epsilon,rate/env_steps_per_second,dist/staleness_mean,dist/bytes_per_update

# The cadence: the coordinator's env steps move in steps (each actor
# reports every 20 ms), so a row comes at the first count at or past each
# multiple of 100, and a jump past several gives one row. Hence every row
# but the last (the run's final row) has passed a multiple of 100 that the
# row before it had not, and there are at most 3000 / 100 of them.
check "ps_sync: each row but the final one passed a new multiple of 100 env steps, at most 30 of them" \
    awk -F, 'NR > 1 { s[NR] = $2; n = NR } END { for (i = 3; i < n; i++) if (int(s[i] / 100) <= int(s[i - 1] / 100)) exit 1
        exit !(n - 2 <= 30 && n >= 3) }' "$RUN/metrics.csv"

# allreduce: no parameter server, so no staleness; bytes per update counts the ring.
job tb-allreduce "${TB[@]}" --set sync.mode=allreduce --set roles.param_servers=0
expect_rc "allreduce: exit status 0" 0
read_events allreduce gorila "$RUN" --tags train/loss,train/epsilon,rate/updates_per_second,dist/bytes_per_update

# A resume whose tb/ is a file: every rank refuses at start, with one line
# and exit status 2, before any role runs (the coordinator's metrics.csv
# keeps its rows).
cp "$RUN/metrics.csv" "$TEST_TMP/tb-mpi-metrics.csv"
rm -rf "$RUN/tb"
touch "$RUN/tb"
run_cmd timeout --kill-after=5 120 "$TEST_ROOT/scripts/launch" --resume "$RUN" --set run.max_env_steps=4000
expect_rc "resume with an unusable tb/: exit status 2" 2
expect_eq "resume with an unusable tb/: one gorila line, naming it" "$(grep '^gorila: ' <<<"$err" | sort -u)" \
    "gorila: error: logging.tensorboard: cannot use $RUN/tb: it exists and is not a directory"
check "resume with an unusable tb/: metrics.csv untouched" cmp -s "$RUN/metrics.csv" "$TEST_TMP/tb-mpi-metrics.csv"
done_testing
