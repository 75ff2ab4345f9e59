# SPDX-License-Identifier: MIT
# gorila train (local) and gorila eval, through the real binary: the run
# directory and its files, resume with the same counters, evaluation of a
# checkpoint, and every bad argument.
source "$(dirname "$0")/../lib.sh"
cd "$TEST_ROOT" || exit 1
source "$TEST_ROOT/scripts/summary.sh"
RUNS="$TEST_TMP/cli-runs"
rm -rf "$RUNS"
small=(configs/local/cartpole.yaml --set run.out_dir="$RUNS" --set run.max_env_steps=3000
    --set network.hidden=[16] --set eval.episodes=5 --set eval.every_updates=500 --set logging.progress=never)

run_cmd "$GORILA" train "${small[@]}" --set run.name=t1
expect_rc "local train: exit status 0" 0
R="$RUNS/t1"
expect_contains "local train: prints the run directory" "$out" "run directory: $R"
for f in config.yaml metrics.csv episodes.csv eval.csv summary.json checkpoints/latest; do
    check "local train: writes $f" [ -s "$R/$f" ]
done
expect_eq "metrics.csv header" "$(head -1 "$R/metrics.csv")" \
    "wall_seconds,env_steps,updates,env_steps_per_second,updates_per_second,mean_train_return,last_eval_return,epsilon,loss"
expect_eq "eval.csv header" "$(head -1 "$R/eval.csv")" \
    "wall_seconds,env_steps,updates,episodes,mean_return,std_return,min_return,max_return,solved"
for k in solved solved_at_env_steps solved_at_seconds env_steps updates wall_seconds last_eval_mean_return \
    best_eval_mean_return env_steps_per_second updates_per_second mode; do
    expect_contains "summary.json has $k" "$(cat "$R/summary.json")" "\"$k\":"
done
expect_contains "summary mode is local" "$(cat "$R/summary.json")" '"mode": "local"'
expect_contains "summary env steps = budget" "$(cat "$R/summary.json")" '"env_steps": 3000,'
n_ep=$(($(wc -l <"$R/episodes.csv") - 1))
check "episodes.csv has the training episodes ($n_ep)" [ "$n_ep" -gt 20 ]
run_cmd "$GORILA" config check "$R/config.yaml"
expect_rc "the saved config.yaml loads back" 0

# Without run.name, the run directory says which config, mode, learner
# count and seed: <file name>-<mode>-l<learners>-s<seed>, -2 on a clash;
# a run.name given is the name. (Both "run directory:" lines, first and
# last, name it.)
named() {
    run_cmd "$GORILA" train "$@" --set run.out_dir="$RUNS/named" --set run.max_env_steps=200 \
        --set logging.progress=never
    sed -n 's/^run directory: //p' <<<"$out" | sort -u
}
expect_eq "no run.name: <config>-local-l1-s<seed>" "$(named configs/local/cartpole.yaml)" \
    "$RUNS/named/cartpole-local-l1-s1"
expect_eq "no run.name, the same again: -2" "$(named configs/local/cartpole.yaml)" \
    "$RUNS/named/cartpole-local-l1-s1-2"
expect_eq "no run.name, another seed: its own name" "$(named configs/local/acrobot.yaml --set run.seed=17)" \
    "$RUNS/named/acrobot-local-l1-s17"
expect_eq "no run.name, a distributed config with --local: mode local, 1 learner" \
    "$(named configs/cartpole.yaml --local --set roles.learners=2 --set run.seed=4)" "$RUNS/named/cartpole-local-l1-s4"
expect_eq "run.name given: that name" "$(named configs/local/cartpole.yaml --set run.name=mine)" "$RUNS/named/mine"

# The same config again goes to a new directory, never over the old one.
run_cmd "$GORILA" train "${small[@]}" --set run.name=t1
expect_contains "a second run gets its own directory" "$out" "run directory: $RUNS/t1-2"
if cmp -s <(grep -v wall "$R/eval.csv" | cut -d, -f2-) <(grep -v wall "$RUNS/t1-2/eval.csv" | cut -d, -f2-); then
    ok "same seed, same evaluations"
else
    not_ok "same seed, same evaluations"
fi

# local_time_split: the process's acting, learning and evaluating time
# (docs/OUTPUTS.md). They are disjoint parts of the run, so together within
# its wall time; every env step of this process is counted; the bound of
# an actor/learner split, (A + U) / max(A, U), lies in [1, 2] whatever A
# and U are, and is computed from the reported parts.
check "local_time_split: parts within the wall time, env steps counted, bound from A and U" python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))
t = s["local_time_split"]
a, u = t["act_us_per_env_step"], t["learn_us_per_env_step"]
print("#", t, s["wall_seconds"])
ok = (t["act_seconds"] > 0 and t["learn_seconds"] > 0 and t["eval_seconds"] >= 0
      and t["act_seconds"] + t["learn_seconds"] + t["eval_seconds"] <= s["wall_seconds"]
      and t["env_steps"] == s["env_steps"] == 3000
      and abs(a - 1e6 * t["act_seconds"] / 3000) < 1e-6 * a and abs(u - 1e6 * t["learn_seconds"] / 3000) < 1e-6 * u
      and 1 <= t["actor_learner_bound"] <= 2 and abs(t["actor_learner_bound"] - (a + u) / max(a, u)) < 1e-9)
sys.exit(not ok)' "$R/summary.json"

# Resume: counters continue from the checkpoint. Before it, the last rows
# of episodes.csv and metrics.csv are torn as a full disk tears them (a
# prefix of a row, no newline); the resume cuts them back to the last
# complete row, says so, and appends whole rows after it.
printf '9.999,99,0,9' >>"$R/episodes.csv"
printf '9.999,99,9,0.5' >>"$R/metrics.csv"
run_cmd "$GORILA" train --resume "$R" --set run.max_env_steps=5000
expect_rc "resume: exit status 0" 0
expect_contains "resume: continues from the checkpoint's counters" "$err" "resumed from $R/checkpoints/ckpt-"
expect_contains "resume: runs to the new budget" "$(cat "$R/summary.json")" '"env_steps": 5000,'
check "resume: appends to metrics.csv" [ "$(grep -c '^wall_seconds' "$R/metrics.csv")" -eq 1 ]
expect_contains "resume: warns of the torn episodes.csv row it cut" "$err" \
    "gorila: warning: $R/episodes.csv: cut 12 bytes after its last complete row"
expect_contains "resume: warns of the torn metrics.csv row it cut" "$err" \
    "gorila: warning: $R/metrics.csv: cut 14 bytes after its last complete row"
for f in episodes metrics eval; do
    expect_eq "resume: every row of $f.csv has the header's field count (none glued to a torn one)" \
        "$(awk -F, 'NR == 1 { n = NF } NR > 1 && NF != n' "$R/$f.csv")" ""
    expect_eq "resume: $f.csv ends with a whole row" "$(tail -c 1 "$R/$f.csv" | od -An -c | tr -d ' ')" '\n'
done

# A run killed (SIGKILL) after a checkpoint and some more rows: the resume
# continues from that checkpoint, so the rows logged after it are of a
# stretch of training that was thrown away. Before appending it cuts them
# from every CSV (one line each on stderr); the rows up to the checkpoint
# keep their bytes, and each file then covers every env step once: the
# episode numbers run 0, 1, 2, ... across the seam, eval.csv's updates rise
# (each evaluation of newer parameters), the env steps never go back. The
# run is stopped (SIGSTOP) to look at its files, and killed once every CSV
# has a row after its newest checkpoint (else it goes on); no clock rows
# (interval_seconds), no repeated env steps but the end's.
K="$RUNS/kill"
# (In a subshell that waits for it, whose stderr takes the shell's "Killed".)
rm -f "$TEST_TMP/kill.pid"
("$GORILA" train configs/local/cartpole.yaml --set run.out_dir="$RUNS" --set run.name=kill --set run.max_env_steps=0 \
    --set run.max_seconds=120 --set run.stop_when_solved=false --set network.hidden=[16] --set replay.min_size=200 \
    --set eval.episodes=3 --set eval.every_updates=50 --set checkpoint.every_updates=400 \
    --set checkpoint.every_seconds=0 --set logging.interval_seconds=86400 --set logging.progress=never \
    >/dev/null 2>&1 &
echo $! >"$TEST_TMP/kill.pid"
wait) 2>/dev/null &
waiter=$!
for _ in $(seq 100); do [ -s "$TEST_TMP/kill.pid" ] && break; sleep 0.02; done
victim=$(cat "$TEST_TMP/kill.pid")
ck_field() { sed -n "s/^$1 //p" "$K/checkpoints/$(cat "$K/checkpoints/latest")/MANIFEST"; }
# The complete lines of a file (a kill may leave a row torn, which the
# resume cuts first).
whole() { if [ "$(tail -c 1 "$1" | od -An -c | tr -d ' ')" = '\n' ]; then cat "$1"; else sed '$d' "$1"; fi; }
past=""
for _ in $(seq 600); do
    sleep 0.05
    kill -STOP "$victim" 2>/dev/null || break
    if [ -s "$K/checkpoints/latest" ]; then
        x=$(ck_field env_steps)
        past=y
        for f in metrics episodes eval; do
            [ -n "$(whole "$K/$f.csv" | awk -F, -v x="$x" 'NR > 1 && $2 > x')" ] || past=""
        done
        if [ -n "$past" ]; then
            kill -KILL "$victim"
            break
        fi
    fi
    kill -CONT "$victim"
done
wait "$waiter"
check "kill: every CSV has a row after the newest checkpoint when the run is killed" [ -n "$past" ]
x=$(ck_field env_steps)
ck=$(cat "$K/checkpoints/latest")
for f in metrics episodes eval; do whole "$K/$f.csv" >"$TEST_TMP/kill-$f.csv"; done
run_cmd "$GORILA" train --resume "$K" --set run.max_env_steps=$(((x / 100 + 10) * 100 + 50)) --set run.max_seconds=0
expect_rc "kill: resume exit status 0" 0
for f in metrics episodes eval; do
    n=$(awk -F, -v x="$x" 'NR > 1 && $2 > x' "$TEST_TMP/kill-$f.csv" | wc -l)
    rows=rows
    [ "$n" = 1 ] && rows=row
    expect_contains "kill: the resume says it dropped $f.csv's $n $rows after $ck" "$err" \
        "gorila: resume: $K/$f.csv: dropped $n $rows logged after checkpoint $ck (env steps > $x)"
    kept=$(awk -F, -v x="$x" 'NR == 1 || $2 <= x' "$TEST_TMP/kill-$f.csv")
    expect_eq "kill: $f.csv's rows up to the checkpoint are the killed run's, as they were" \
        "$(head -n "$(wc -l <<<"$kept")" "$K/$f.csv")" "$kept"
    expect_eq "kill: $f.csv's env steps never go back" \
        "$(awk -F, 'NR > 2 && $2 < p { print NR ": " $2 " after " p } { p = $2 }' "$K/$f.csv")" ""
    check "kill: $f.csv has rows of the resumed segment" \
        [ "$(awk -F, -v x="$x" 'NR > 1 && $2 > x' "$K/$f.csv" | wc -l)" -gt 0 ]
done
expect_eq "kill: episodes.csv numbers every episode once, 0, 1, 2, ... across the seam" \
    "$(awk -F, 'NR > 1 && $4 != NR - 2 { print NR ": episode " $4; exit }' "$K/episodes.csv")" ""
expect_eq "kill: episodes.csv has the run's episodes" "$(($(wc -l <"$K/episodes.csv") - 1))" \
    "$(jget "$K/summary.json" episodes)"
expect_eq "kill: eval.csv's updates rise (every evaluation once)" \
    "$(awk -F, 'NR > 2 && $3 <= p { print NR ": " $3 " after " p } { p = $3 }' "$K/eval.csv")" ""
expect_eq "kill: metrics.csv has every env step once (the end row may repeat the last)" \
    "$(awk -F, -v n="$(wc -l <"$K/metrics.csv")" 'NR > 2 && NR < n && $2 <= p { print NR ": " $2 } { p = $2 }' \
        "$K/metrics.csv")" ""

# Prioritized replay (local): trains, reports its stale priority updates
# (null with uniform replay), and with checkpoint.save_replay resumes with
# the replay and its priorities.
expect_contains "uniform run: stale_priority_updates is null" "$(cat "$R/summary.json")" \
    '"stale_priority_updates": null'
run_cmd "$GORILA" train "${small[@]}" --set run.name=prio --set replay.kind=prioritized --set checkpoint.save_replay=true
expect_rc "prioritized local train: exit status 0" 0
P="$RUNS/prio"
expect_contains "prioritized: summary counts stale priority updates" "$(cat "$P/summary.json")" \
    '"stale_priority_updates": 0'
run_cmd "$GORILA" train --resume "$P" --set run.max_env_steps=4000
expect_rc "prioritized resume: exit status 0" 0
expect_contains "prioritized resume: the replay came back" "$err" "3000 env steps, "
# With priorities from the acting forward the last step's transition (one
# env, 1-step returns) waits for the next forward to be scored, so the
# checkpoint holds 2999 of the 3000 (src/core/train/actorcore.h).
expect_contains "prioritized resume: with its transitions (all but the one awaiting its priority)" "$err" \
    "replay 2999 transitions"
expect_contains "prioritized resume: runs to the new budget" "$(cat "$P/summary.json")" '"env_steps": 4000,'
# Into a smaller replay.capacity: the checkpoint holds 3998 (each of the
# two segments left its last step's transition unscored, as above), 1000
# fit; the resume says how many it dropped and that the newest were kept
# (replaybuf_restore), as a replay shard does.
run_cmd "$GORILA" train --resume "$P" --set run.max_env_steps=4100 --set replay.capacity=1000
expect_rc "prioritized resume into a smaller capacity: exit status 0" 0
expect_contains "smaller capacity: the replay holds the capacity" "$err" "4000 env steps, "
expect_contains "smaller capacity: ... 1000 transitions" "$err" "replay 1000 transitions"
expect_contains "smaller capacity: says how many were dropped and which were kept" "$err" \
    "dropped 2998 saved transitions, the oldest, beyond replay.capacity 1000 (kept the newest 1000)"
run_cmd "$GORILA" train "${small[@]}" --set run.name=prio-max --set replay.kind=prioritized \
    --set replay.initial_priority=max --set replay.alpha=0
expect_rc "prioritized, initial_priority max, alpha 0: exit status 0" 0

# Evaluate the checkpoint.
run_cmd "$GORILA" eval "$R" --episodes 7 --json
expect_rc "eval: exit status 0" 0
expect_contains "eval: JSON line" "$out" '"episodes": 7'
run_cmd "$GORILA" eval "$R/checkpoints/$(cat "$R/checkpoints/latest")" --episodes 3
expect_contains "eval of one checkpoint directory" "$out" "3 greedy episodes"
run_cmd "$GORILA" eval "$R" --episodes 3 --export "$TEST_TMP/params.bin"
check "eval --export writes n_params floats (16-unit net: 4*16+16+16*2+2 = 114)" \
    [ "$(stat -c %s "$TEST_TMP/params.bin")" -eq $((114 * 4)) ]

# Bad arguments: a clear message and exit status 2.
# --- what a run reports is what it saves ----------------------------------
# A run that solves and stops: seed 7 of configs/local/cartpole.yaml solves
# at its second evaluation (docs/RESULTS.md).
solve=(configs/local/cartpole.yaml --set run.out_dir="$RUNS" --set run.seed=7 --set logging.progress=never)
run_cmd "$GORILA" train "${solve[@]}" --set run.name=solve
expect_rc "solve: exit status 0" 0
S="$RUNS/solve"
expect_eq "solve: stopped because it solved" "$(jget "$S/summary.json" stop_reason)" solved
at=$(jget "$S/summary.json" solved_at_env_steps)
expect_contains "solve: the final line says when it solved" "$out" "CartPole-v1: solved at $at env steps"
expect_eq "solve: summary names checkpoints/best" "$(jget "$S/summary.json" best_checkpoint)" checkpoints/best
fin=$(jget "$S/summary.json" final_checkpoint)
check "solve: summary names its final checkpoint ($fin)" [ -f "$S/$fin/MANIFEST" ]
j=$("$GORILA" eval "$S" --checkpoint best --json)
expect_eq "solve: best evaluates as logged" "$(jnum "$j" mean)" "$(awk -v x="$(jget "$S/summary.json" best_eval_mean_return)" 'BEGIN { printf "%.17g", x }')"
expect_contains "solve: eval --json names the kind" "$j" '"kind": "best"'
j=$("$GORILA" eval "$S" --checkpoint final --json)
expect_eq "solve: the final checkpoint is the solving evaluation's parameters" "$(jnum "$j" mean)" \
    "$(awk -v x="$(jget "$S/summary.json" last_eval_mean_return)" 'BEGIN { printf "%.17g", x }')"
expect_contains "solve: its manifest has the logged evaluation" "$j" '"logged_eval_episodes": 100'
run_cmd "$GORILA" eval "$S" --checkpoint best --episodes 3
expect_contains "solve: eval says which checkpoint it loaded" "$out" "loaded $S/checkpoints/best (best checkpoint, parameters after"
# Resuming a finished run: nothing to do, exit 0, nothing written.
before=$(cat "$S/summary.json" "$S/eval.csv" "$S/checkpoints/latest" | cksum)
run_cmd "$GORILA" train --resume "$S"
expect_rc "solve: resume of a solved run exits 0" 0
expect_contains "solve: says it is already complete" "$out" "is already complete (solved at $at env steps"
expect_contains "solve: says how to go on" "$out" "set run.stop_when_solved=false with --set to continue it"
expect_eq "solve: nothing written" "$(cat "$S/summary.json" "$S/eval.csv" "$S/checkpoints/latest" | cksum)" "$before"
expect_eq "solve: the one line says it all (nothing on stderr: no 'resumed from' before it)" "$err" ""
# Going on (a limit raised): the first solve and the best are kept.
best1=$(jget "$S/summary.json" best_eval_mean_return)
run_cmd "$GORILA" train --resume "$S" --set run.stop_when_solved=false --set run.max_env_steps=$((at + 3000))
expect_rc "solve: resume with stop_when_solved=false runs" 0
expect_contains "solve: a resume that trains says what it read" "$err" "resumed from $S/checkpoints/"
expect_eq "solve: solved_at_env_steps kept across segments" "$(jget "$S/summary.json" solved_at_env_steps)" "$at"
check "solve: the best is kept or beaten ($best1 -> $(jget "$S/summary.json" best_eval_mean_return))" \
    awk -v a="$best1" -v b="$(jget "$S/summary.json" best_eval_mean_return)" 'BEGIN { exit !(b >= a) }'
check "solve: eval.csv updates never go back" awk -F, 'NR > 2 && $3 < prev { exit 1 } { prev = $3 }' "$S/eval.csv"

# One job per run directory: a second resume while one runs is refused.
"$GORILA" train --resume "$S" --set run.stop_when_solved=false --set run.max_env_steps=0 --set run.max_seconds=1000 \
    >/dev/null 2>&1 &
holder=$!
for _ in $(seq 50); do [ -s "$S/lock" ] && grep -q "^$holder " "$S/lock" && break; sleep 0.1; done
run_cmd "$GORILA" train --resume "$S" --set run.stop_when_solved=false --set run.max_env_steps=0 --set run.max_seconds=1000
expect_rc "lock: a second resume exits 7 (GORILA_EXIT_LOCKED)" 7
expect_contains "lock: says who holds it" "$err" "is in use by process $holder on"
# The lock file removed while its job runs: the directory itself is locked
# too, so a second job is still refused.
rm -f "$S/lock"
run_cmd timeout --kill-after=5 60 "$GORILA" train --resume "$S" --set run.stop_when_solved=false --set run.max_env_steps=0 --set run.max_seconds=1000
expect_rc "lock: with the lock file removed, a second resume still exits 7" 7
expect_contains "lock: with the lock file removed, says the directory is in use" "$err" \
    "gorila: error: run directory $S is in use by another process (another job or resume is running)"
kill -INT $holder 2>/dev/null
wait $holder
expect_eq "lock: the holder stops cleanly on SIGINT" "$?" 0

while IFS='|' read -r args want; do
    # shellcheck disable=SC2086
    run_cmd "$GORILA" $args
    expect_rc "bad arguments ($args): exit 2" 2
    expect_contains "bad arguments ($args): message" "$err" "$want"
done <<EOF2
train|train: missing CONFIG
train configs/local/cartpole.yaml --bogus|train: unknown option --bogus
train configs/local/cartpole.yaml configs/local/acrobot.yaml|more than one config given
train configs/local/cartpole.yaml --set|--set needs key.path=value
train configs/local/cartpole.yaml --resume $R|give either CONFIG or --resume
train --resume $TEST_TMP/nope|--resume $TEST_TMP/nope: not a run directory
train configs/local/cartpole.yaml --set run.seed=-1|run.seed
eval|eval: missing RUN or CHECKPOINT
eval $TEST_TMP/nope|is not a directory
eval $R --episodes 0|--episodes: expected an integer in [1, 100000], got 0
eval $R --frobnicate|eval: unknown option --frobnicate
eval $TEST_TMP|is neither a run directory (no config.yaml) nor a checkpoint (no MANIFEST)
eval $R --checkpoint nowhere|--checkpoint nowhere: not latest, final, best, or a checkpoint directory
eval $R/checkpoints/latest --checkpoint best|is not a directory
EOF2
# run.max_updates stops at exactly that many updates: the env steps of one
# batch of environments call for several, and all of them were done (8 for 1).
run_cmd "$GORILA" train "${small[@]}" --set run.max_env_steps=0 --set run.max_updates=3 --set run.name=maxupd \
    --set run.stop_when_solved=false --set eval.test_episodes=0
expect_rc "run.max_updates 3: exit 0" 0
expect_contains "run.max_updates 3: exactly 3 updates" "$(cat "$RUNS/maxupd/summary.json")" '"updates": 3,'
expect_contains "run.max_updates 3: a budget stop" "$(cat "$RUNS/maxupd/summary.json")" '"stop_reason": "budget"'
# Started with stdin, stdout and stderr closed, the run's files must not take
# fds 0-2: its messages would land in them (they did in metrics.csv).
"$GORILA" train "${small[@]}" --set run.max_env_steps=300 --set run.name=fds --set logging.progress=always \
    <&- >&- 2>&-
rc=$?
expect_eq "train with fds 0-2 closed: exit 0" "$rc" 0
for f in metrics.csv episodes.csv eval.csv; do
    expect_eq "train with fds 0-2 closed: $f has only CSV rows" \
        "$(awk -F, 'NR == 1 { n = NF } NR > 1 && NF != n' "$RUNS/fds/$f")" ""
done
check "train with fds 0-2 closed: summary.json has no message in it" \
    python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$RUNS/fds/summary.json"
# A reader that goes away (| head -1) must not kill the run half-way:
# the run completes with its summary.json (it was SIGPIPE, 141, and none).
"$GORILA" train "${small[@]}" --set run.max_env_steps=300 --set run.name=pipe 2>&1 | head -1 >/dev/null
expect_eq "train | head -1: the run's exit status is its own" "${PIPESTATUS[0]}" 0
expect_contains "train | head -1: the run completed" "$(cat "$RUNS/pipe/summary.json" 2>&1)" '"stop_reason": "budget"'
# eval --json to a stdout that cannot be written: not a silent exit 0
run_cmd sh -c '"$@" >/dev/full' sh "$GORILA" eval "$R" --episodes 2 --json
expect_rc "eval --json >/dev/full: exit 1" 1
expect_contains "eval --json >/dev/full: says so" "$err" "writing to standard output failed: No space left on device"
# ---- MinAtar: a planes environment through the local trainer (the MLP
# reads the flattened planes); no threshold of its own, said as such; and a
# resume continues every environment slot where it was (section ENVS of the
# checkpoint: each slot's state, MT19937 and sticky last_action, its step
# count and running episode, and the steps not yet trained on), so N steps
# and N/2 + resume N/2 are the same run, bit for bit.
if "$GORILA" env list | grep -q '^MinAtar/Breakout-v1 '; then
    mat=(configs/local/cartpole.yaml --set env.name=MinAtar/Breakout-v1 --set run.out_dir="$RUNS"
        --set checkpoint.every_seconds=0 --set checkpoint.save_replay=true --set replay.min_size=200
        --set eval.episodes=5 --set eval.every_updates=100 --set logging.progress=never --set actor.envs=2)
    run_cmd "$GORILA" train "${mat[@]}" --set run.name=mat-full --set run.max_env_steps=2000
    expect_rc "MinAtar: local train exits 0" 0
    expect_contains "MinAtar: the final line says there is no threshold" "$out" \
        "MinAtar/Breakout-v1: no reward threshold (best eval"
    expect_contains "MinAtar: summary.json's threshold is null" "$(cat "$RUNS/mat-full/summary.json")" \
        '"reward_threshold": null,'
    expect_contains "MinAtar: never solved" "$(cat "$RUNS/mat-full/summary.json")" '"solved": false,'
    check "MinAtar: a final checkpoint" [ -s "$RUNS/mat-full/checkpoints/latest" ]
    run_cmd "$GORILA" train "${mat[@]}" --set run.name=mat-half --set run.max_env_steps=1000
    run_cmd "$GORILA" train --resume "$RUNS/mat-half" --set run.max_env_steps=2000
    expect_rc "MinAtar: resume exits 0" 0
    "$GORILA" export "$RUNS/mat-full" "$TEST_TMP/mat-full.bin" >/dev/null 2>&1
    "$GORILA" export "$RUNS/mat-half" "$TEST_TMP/mat-half.bin" >/dev/null 2>&1
    check "MinAtar: 2000 steps = 1000 + resume 1000, the final parameters bit for bit" \
        cmp "$TEST_TMP/mat-full.bin" "$TEST_TMP/mat-half.bin"
    expect_eq "MinAtar: ... and every episode (env steps, return, length)" \
        "$(cut -d, -f2,5,6 "$RUNS/mat-half/episodes.csv")" "$(cut -d, -f2,5,6 "$RUNS/mat-full/episodes.csv")"
    expect_eq "MinAtar: ... and every evaluation" "$(cut -d, -f2,3,5- "$RUNS/mat-half/eval.csv")" \
        "$(cut -d, -f2,3,5- "$RUNS/mat-full/eval.csv")"
    run_cmd "$GORILA" eval "$RUNS/mat-full" --episodes 3 --json
    expect_contains "MinAtar: eval --json: no threshold is null" "$out" '"reward_threshold": null'
    run_cmd "$GORILA" eval "$RUNS/mat-full" --episodes 3
    expect_contains "MinAtar: eval says there is no threshold" "$out" "(no reward threshold)"
    run_cmd "$GORILA" train "${mat[@]}" --set run.name=mat-thr --set run.max_env_steps=600 \
        --set env.reward_threshold=-1
    expect_contains "MinAtar: env.reward_threshold gives it one (solved at the first evaluation)" "$out" \
        "MinAtar/Breakout-v1: solved at"
fi
# The MinAtar keys are refused elsewhere unless at their defaults.
run_cmd "$GORILA" train "${small[@]}" --set env.sticky_actions=0.2
expect_rc "env.sticky_actions on CartPole: exit 2" 2
expect_contains "... says only MinAtar takes it" "$err" "only the MinAtar environments take env.sticky_actions"
run_cmd "$GORILA" train "${small[@]}" --set run.name=t-none --set env.reward_threshold=none --set run.max_env_steps=1200
expect_rc "env.reward_threshold=none on CartPole: runs" 0
expect_contains "... and is never solved" "$(cat "$RUNS/t-none/summary.json")" '"reward_threshold": null,'

# A conv network trains: MinAtar Breakout with the published DQN's config
# (configs/minatar/local/breakout.yaml: 16 3x3 filters, PyTorch's RMSprop,
# epsilon held at 1 until the replay start) on a tiny budget; exit 0, a
# finite loss, and epsilon where the offset schedule puts it. Skipped
# without MinAtar (make MINATAR=0).
if "$GORILA" env list | grep -q '^MinAtar/'; then
    run_cmd "$GORILA" train configs/minatar/local/breakout.yaml --set run.out_dir="$RUNS" --set run.name=conv \
        --set run.max_env_steps=2000 --set replay.min_size=500 --set explore.start_step=500 \
        --set eval.every_updates=0 --set eval.episodes=2 --set eval.test_episodes=0 --set env.max_episode_steps=500 \
        --set logging.metrics_every_env_steps=1000 --set checkpoint.every_seconds=0 --set logging.progress=never
    expect_rc "MinAtar conv train: exit status 0" 0
    # the row at the budget (the final row after it repeats the counters without a loss)
    last=$(awk -F, '$2 == 2000 && $9 != "" { print; exit }' "$RUNS/conv/metrics.csv")
    expect_eq "MinAtar conv train: the budget, updates from step min_size on" "$(cut -d, -f2,3 <<<"$last")" "2000,1501"
    check "MinAtar conv train: a finite positive loss ($last)" awk -F, '{ exit !($9 + 0 > 0 && $9 + 0 < 1e6) }' <<<"$last"
    # epsilon 1 - 0.9 * (2000 - 500) / 100000 = 0.9865 at the last step
    check "MinAtar conv train: epsilon decays from explore.start_step ($last)" \
        awk -F, '{ exit !($8 > 0.9864 && $8 < 0.9866) }' <<<"$last"
else
    ok "MinAtar conv train # SKIP built without MinAtar"
fi

done_testing
