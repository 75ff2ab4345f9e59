# SPDX-License-Identifier: MIT
# scripts/compare without a job (its matrix runs are tests/mpi/compare.sh):
# --hostfile through stand-ins (the launcher records its arguments and
# starts nothing, the mpirun stand-in answers the network's ping-pong): the
# jobs go to scripts/launch with the hostfile and --spread, the ping-pong to
# the hostfile's first two hosts, failed cells are reported with their exit
# status, the model section uses the measurement, --resume with another
# --placement is refused; a --set only some modes accept is checked per cell.
source "$(dirname "$0")/../lib.sh"
cd "$TEST_ROOT" || exit 1
C="$TEST_ROOT/scripts/compare"
W="$TEST_TMP/compare"
rm -rf "$W"
mkdir -p "$W/bin"
t0=$SECONDS
small=(configs/cartpole.yaml --set run.max_env_steps=12000 --set eval.every_updates=200 --set eval.episodes=20
    --set checkpoint.every_seconds=0)
launches() { if [ -f "$W/launches" ]; then wc -l <"$W/launches"; else echo 0; fi; }

# ---- --hostfile: real hosts, through stand-ins ------------------------------
# The launcher stand-in records its arguments and fails (no hosts here), the
# mpirun stand-in answers the network's ping-pong with a fixed fit: the jobs
# go to scripts/launch with the hostfile and --spread, the ping-pong to the
# hostfile's first two hosts, the cells are reported failed with their exit
# status, and the model section uses the (stand-in) measurement.
printf '#!/usr/bin/env bash\necho "$*" >>"%s"\nexit 3\n' "$W/launches" >"$W/bin/nohosts"
{
    printf '#!/usr/bin/env bash\necho "$*" >"%s"\n' "$W/mpirun-args"
    echo "echo '{\"bench\": \"pingpong\", \"bytes\": 16777216, \"one_way_s\": 0.135, \"bytes_per_s\": 1.24e8}'"
    echo "echo '{\"bench\": \"pingpong\", \"fit\": {\"latency_s\": 5e-05, \"bandwidth_bytes_per_s\": 1.25e8}, \"hosts\": [\"a\", \"b\"], \"same_host\": false}'"
} >"$W/bin/mpirun"
chmod +x "$W/bin/nohosts" "$W/bin/mpirun"
printf '127.0.0.2 slots=4\n127.0.0.3 slots=4\n127.0.0.4 slots=4\n' >"$W/hosts"
rm -f "$W/launches"
HD="$W/hostfile"
run_cmd env GORILA_LAUNCH="$W/bin/nohosts" GORILA_MPIRUN="$W/bin/mpirun" "$C" "${small[@]}" --modes ps_sync \
    --learners 1 --seeds 1 --hostfile "$W/hosts" --out "$HD"
expect_rc "--hostfile: exit status 0 (failed cells are reported)" 0
expect_contains "--hostfile: the job gets the hostfile and --spread" "$(cat "$W/launches" 2>/dev/null)" \
    "--hostfile $W/hosts --spread"
expect_contains "--hostfile: the ping-pong runs on the first two hosts" "$(cat "$W/mpirun-args" 2>/dev/null)" \
    "-np 2 --host 127.0.0.2:1,127.0.0.3:1 --map-by node"
R="$HD/report.md"
expect_contains "--hostfile: the report states the hosts and the placement" "$(cat "$R" 2>/dev/null)" \
    "- Network: every job across the 3 hosts of \`$W/hosts\`, placed by scripts/launch: each learner and each PS shard"
expect_contains "--hostfile: the cell failed with its exit status" "$(cat "$R" 2>/dev/null)" "exit 3"
expect_contains "--hostfile: the model section uses the measurement" "$(cat "$R" 2>/dev/null)" \
    "latency a = 50.0 us (one-way time of an 8-byte message), bandwidth B = 1000.0 Mbit/s"
rm -f "$W/launches"
run_cmd env GORILA_LAUNCH="$W/bin/nohosts" "$C" "${small[@]}" --modes ps_sync --learners 1 --seeds 1 \
    --hostfile "$W/hosts" --placement pack --out "$HD" --resume
expect_rc "--resume with another --placement: refused" 2
expect_contains "--resume with another --placement: says so" "$err" "--resume needs the same --simcluster"
expect_eq "--resume with another --placement: no job launched" "$(launches)" 0
# A --set that only some modes accept (learner.batch=global: allreduce) is
# checked per cell: an allreduce matrix runs, a ps_sync one is refused with
# gorila's reason before anything starts.
rm -f "$W/launches"
run_cmd env GORILA_LAUNCH="$W/bin/nohosts" "$C" "${small[@]}" --modes allreduce --learners 2 --seeds 1 \
    --set learner.batch=global --out "$W/global"
expect_rc "--set learner.batch=global, allreduce: accepted (the stand-in's cell fails)" 0
expect_contains "--set learner.batch=global, allreduce: the job gets it" "$(cat "$W/launches" 2>/dev/null)" \
    "--set learner.batch=global"
run_cmd "$C" "${small[@]}" --modes ps_sync --learners 2 --seeds 1 --set learner.batch=global --out "$W/global-ps"
expect_rc "--set learner.batch=global, ps_sync: refused" 2
expect_contains "--set learner.batch=global, ps_sync: gorila's reason" "$err" "is built for sync.mode allreduce"
check "--set learner.batch=global, ps_sync: nothing made" [ ! -e "$W/global-ps" ]
echo "# compare.sh: $((SECONDS - t0)) s"
done_testing
