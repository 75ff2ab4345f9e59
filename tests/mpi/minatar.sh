# SPDX-License-Identifier: MIT
# A short distributed MinAtar job (configs/minatar/breakout.yaml, 10x10x4
# binary planes) with checkpoint.save_replay: observations travel from the
# actor to the replay shard and are stored and checkpointed as bits
# (src/core/replay/obsrow.h: ceil(400 / 8) = 50 bytes a row instead of
# 1600), it learns, and a resume restores the packed replay and goes on.
# Skipped without MinAtar (make MINATAR=0).
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../mpilib.sh"
cd "$TEST_ROOT" || exit 1

if ! "$GORILA" env list | grep -q '^MinAtar/Breakout-v0 '; then
    ok "distributed MinAtar # SKIP built without MinAtar"
    done_testing
    exit 0
fi

RUN="$RUNS/mpi-minatar"
rm -rf "$RUN"
ARGS=(--set run.out_dir="$RUNS" --set run.name=mpi-minatar --set replay.min_size=300 --set explore.start_step=300
    --set eval.every_updates=0 --set eval.episodes=2 --set eval.test_episodes=0 --set env.max_episode_steps=500
    --set checkpoint.save_replay=true --set checkpoint.every_seconds=0 --set logging.progress=never)
run_cmd timeout --kill-after=5 120 "$TEST_ROOT/scripts/launch" configs/minatar/breakout.yaml "${ARGS[@]}" \
    --set run.max_env_steps=1500
expect_rc "MinAtar job: exit status 0" 0
S="$RUN/summary.json"
steps=$(jget "$S" env_steps)
updates=$(jget "$S" updates)
expect_eq "MinAtar job: its env-step budget" "$steps" 1500
check "MinAtar job: it learned ($updates updates)" [ "${updates:-0}" -gt 500 ]
# Every EXPERIENCE message is a 40-byte header and, per transition, obs and
# next_obs of 50 bytes each (400 bits) and 12 bytes of action, reward and
# discount: at most 1500 x 112 + 40 per chunk of 32 (and a few short ones).
# Float rows would be 1500 x (2 x 1600 + 12) = 4.8 MB.
exp_bytes=$(awk '/"bytes_sent": \{/ { in_b = 1 } in_b && $1 == "\"experience\":" { gsub(/,/, "", $2); print $2; exit }' "$S")
check "MinAtar job: EXPERIENCE carries packed rows ($exp_bytes bytes for $steps transitions)" \
    [ "${exp_bytes:-0}" -ge $((1000 * 112)) -a "${exp_bytes:-0}" -le $((1500 * 112 + (1500 / 32 + 4) * 40)) ]
# The replay file: a 40-byte section header and 112 bytes a transition
# (version 3: packed, uniform), plus the file's own header and index.
d="$RUN/checkpoints/$(cat "$RUN/checkpoints/latest")"
read -r fbytes saved < <(awk '$1 == "replay" && $3 == "bytes" && $7 == "transitions" { print $4, $8 }' "$d/MANIFEST")
check "MinAtar job: a replay file of $saved transitions" [ "${saved:-0}" -ge 1000 ]
check "MinAtar job: ... of packed rows ($fbytes bytes)" \
    [ "${fbytes:-0}" -ge $((40 + saved * 112)) -a "${fbytes:-0}" -le $((40 + saved * 112 + 4096)) ]

run_cmd timeout --kill-after=5 120 "$TEST_ROOT/scripts/launch" --resume "$RUN" --set run.max_env_steps=2500
expect_rc "MinAtar resume: exit status 0" 0
expect_contains "MinAtar resume: the shard restores every saved transition" "$err" \
    "restored $saved transitions from replay-0.ckpt (next id $saved)"
expect_eq "MinAtar resume: runs to the new budget" "$(jget "$S" env_steps)" 2500
after=$(jget "$S" updates)
# min_size is met by the restored rows, so learning resumes at once: about
# one update per new env step (1000), not 300 fewer.
check "MinAtar resume: learning goes on at once ($updates -> $after updates)" \
    [ $((after - updates)) -gt 800 ]
done_testing
