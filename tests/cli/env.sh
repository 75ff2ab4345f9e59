#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/cli/env.sh: `gorila env list|rollout|replay|check` and `gorila bench
# env` through the real binary: output shape, determinism, the replay protocol
# against Gymnasium's fixtures (tests/fixtures/data/*.replay), every error
# path; and that docs/ENVIRONMENTS.md shows the environment template verbatim.
source "$(dirname "$0")/../lib.sh"
data="$(dirname "$0")/../fixtures/data"

# ---- env list
# The bundled four are facts below; the loops "for every environment" take
# the registry's names from env list, so that an environment added as
# docs/ENVIRONMENTS.md says is covered with no change here.
run_cmd "$GORILA" env list
expect_rc "env list exits 0" 0
envs=$(awk 'NR > 1 && NF == 5 {print $1}' <<<"$out")
expect_eq "env list: the bundled four first, in the registry's order" "$(head -4 <<<"$envs" | tr '\n' ' ')" \
    "CartPole-v1 MountainCar-v0 Acrobot-v1 Pendulum-v1 "
for row in "CartPole-v1 4 2 500 475" "MountainCar-v0 2 3 200 -110" "Acrobot-v1 6 3 500 -100" \
    "Pendulum-v1 3 3 200 -200"; do
    got=$(awk -v n="${row%% *}" '$1 == n {print $1, $2, $3, $4, $5}' <<<"$out")
    expect_eq "env list row ${row%% *}" "$got" "$row"
done
expect_contains "env list header" "$out" "reward_threshold"
expect_contains "env list explains Pendulum's threshold" "$out" "Gymnasium registers no reward threshold"
run_cmd "$GORILA" env list extra
expect_rc "env list rejects arguments" 2

# ---- env rollout
strip_rate() { grep -v '^steps/s:' <<<"$1"; }
run_cmd "$GORILA" env rollout CartPole-v1 --episodes 4 --seed 11
expect_rc "rollout exits 0" 0
first=$out
expect_eq "rollout prints one row per episode" "$(grep -cE '^ +[0-9]+ ' <<<"$out")" 4
sum=$(awk '$1 ~ /^[0-9]+$/ && NF == 4 {s += $3} END {print s}' <<<"$out")
expect_eq "rollout total steps is the sum of lengths" "$(sed -n 's/^total steps: //p' <<<"$out")" "$sum"
expect_contains "rollout reports steps/s" "$out" "steps/s:"
run_cmd "$GORILA" env rollout CartPole-v1 --seed=11 --episodes=4
expect_eq "rollout: same seed, same episodes" "$(strip_rate "$out")" "$(strip_rate "$first")"
run_cmd "$GORILA" env rollout CartPole-v1 --episodes 4 --seed 12
check "rollout: another seed, other episodes" test "$(strip_rate "$out")" != "$(strip_rate "$first")"
run_cmd "$GORILA" env rollout Pendulum-v1 --episodes 2 --seed 3
expect_rc "Pendulum rollout exits 0" 0
expect_eq "Pendulum episodes are truncated at 200" "$(awk '$1 ~ /^[0-9]+$/ && NF == 4 {print $3, $4}' <<<"$out" | sort -u)" "200 truncated"
run_cmd "$GORILA" env rollout Pendulum-v1 --episodes 1 --torques -2,-1,0,1,2
expect_contains "Pendulum rollout with 5 torques" "$out" "over 5 actions"
others=$(grep -vxE 'CartPole-v1|Pendulum-v1' <<<"$envs")
for n in $others; do
    run_cmd "$GORILA" env rollout "$n" --episodes 1 --seed 1
    expect_rc "rollout $n exits 0" 0
done

# ---- bad arguments
bad() { # bad NAME NEEDLE CMD...: exit status 2 and NEEDLE on stderr
    local name=$1 needle=$2
    shift 2
    run_cmd "$@"
    expect_rc "$name: exit status 2" 2
    expect_contains "$name: message" "$err" "$needle"
}
bad "rollout without a name" "expected an environment name" "$GORILA" env rollout
bad "rollout --episodes 0" "--episodes: expected an integer in [1," "$GORILA" env rollout CartPole-v1 --episodes 0
bad "rollout --episodes abc" "--episodes: expected an integer" "$GORILA" env rollout CartPole-v1 --episodes abc
bad "rollout --seed -1" "--seed: expected a non-negative integer" "$GORILA" env rollout CartPole-v1 --seed -1
bad "rollout --seed without value" "--seed needs a value" "$GORILA" env rollout CartPole-v1 --seed
bad "rollout unknown flag" 'unknown option "--episode" (did you mean --episodes?)' \
    "$GORILA" env rollout CartPole-v1 --episode 3
bad "rollout unknown flag, no near name" 'unknown option "--fast" (expected --episodes, --seed, --torques, --kwargs)' \
    "$GORILA" env rollout CartPole-v1 --fast
bad "rollout two names" 'unexpected argument "Acrobot-v1"' "$GORILA" env rollout CartPole-v1 Acrobot-v1
bad "unknown env, close" 'unknown environment "CartPol-v1" (did you mean CartPole-v1?)' \
    "$GORILA" env rollout CartPol-v1
bad "unknown env lists the names" "valid names: $(paste -sd, <<<"$envs" | sed 's/,/, /g')" \
    "$GORILA" env rollout Breakout-v5
bad "replay unknown env" 'unknown environment "pendulum"' "$GORILA" env replay pendulum
bad "torques on CartPole" "--torques applies to Pendulum-v1 only" "$GORILA" env replay CartPole-v1 --torques 1,2
bad "torques not numbers" "--torques: torque 2: expected a number" "$GORILA" env replay Pendulum-v1 --torques 1,x
bad "torques empty entry" "--torques: torque 2" "$GORILA" env replay Pendulum-v1 --torques 1,,2
bad "torques not finite" "expected a finite number" "$GORILA" env rollout Pendulum-v1 --torques 1,inf
bad "too many torques" "at most 32 torques" "$GORILA" env replay Pendulum-v1 \
    --torques "$(seq -s, 1 33)"
bad "replay rejects --seed" 'unknown option "--seed"' "$GORILA" env replay CartPole-v1 --seed 1
run_cmd "$GORILA" env --help
expect_rc "env --help exits 0" 0
expect_contains "env --help shows the replay commands" "$out" "state v1 ... vk"
run_cmd "$GORILA" bench env --help
expect_rc "bench env --help exits 0" 0
expect_contains "bench env --help shows the flags" "$out" "--steps N"
# Reference columns are built-in constants: labelled as such, with their
# source, in the table and in every JSON line that carries one.
run_cmd "$GORILA" bench nn --seconds 0.01
expect_rc "bench nn: exit 0" 0
expect_contains "bench nn: the PyTorch column is marked" "$out" "PyTorch*"
expect_contains "bench nn: the footnote says it is a constant and where from" "$out" \
    "* PyTorch: constant, not measured: PyTorch 1.13, one core, the project's machines (2026-11, docs/PERFORMANCE.md)"
# --flag=value works in every benchmark, as in bench env (bench nn and
# replay refused --seconds=1 as an unknown argument)
run_cmd "$GORILA" bench replay --seconds=0.02 --capacity=1000 --json
expect_rc "bench replay --seconds=S --capacity=C: exit 0" 0
expect_contains "bench replay --capacity=1000: taken" "$out" '"capacity":1000'
run_cmd "$GORILA" bench nn --seconds=nan
expect_rc "bench nn --seconds=nan: refused, exit 2" 2
expect_contains "bench nn --seconds=nan: as --seconds nan" "$err" 'bench nn: --seconds: expected a number in (0, 3600], got "nan"'
run_cmd "$GORILA" bench nn --seconds 0.01 --json
refs=$(grep -c '"pytorch_updates_per_second_constant"' <<<"$out")
labelled=$(grep '"pytorch_updates_per_second_constant"' <<<"$out" | grep -c '"reference_measured":false')
expect_eq "bench nn --json: both reference rows say the reference was not measured" "$refs/$labelled" "2/2"
# --minatar: MinAtar's conv net (dqn.py) on 4 and 10 planes at batch 32, in
# place of the MLP rows; the FLOPs per update include the conv layer.
run_cmd "$GORILA" bench nn --seconds 0.01 --minatar --json
expect_rc "bench nn --minatar: exit 0" 0
expect_eq "bench nn --minatar --json: two rows, both the conv net" \
    "$(grep -c '"bench":"nn"' <<<"$out")/$(grep -c '"conv":\[\[16,3,1\]\],"hidden":\[128\],"actions":6,"batch":32' <<<"$out")" "2/2"
# 4 planes: per row, conv 2*16*36*64 + linear 2*(1024*128 + 128*6) = 337408
# FLOPs forward, 73728 + 2*263680 backward; 96 rows forward, 32 backward.
check "bench nn --minatar: 4 planes, 51625984 FLOPs an update (the conv counted)" \
    grep -q '"obs_dim":400,"planes":\[10,10,4\].*"flops_per_update":51625984,' <<<"$out"
# bench replay: a smoke test (tiny windows, one small capacity for the JSON;
# the full table once with the shortest windows: it still fills 2^22 rows).
run_cmd "$GORILA" bench replay --seconds 0.01 --capacity 5000 --json
expect_rc "bench replay --json exits 0" 0
if command -v python3 >/dev/null; then
    rows=$(python3 -c '
import json, sys
lines = [json.loads(l) for l in sys.stdin]
assert lines[0]["bench"] == "openblas", lines[0]
for o in lines[1:]:
    assert o["bench"] == "replay" and o["capacity"] == 5000 and o["obs_dim"] == 4, o
    assert o["insert_per_second"] > 0 and o["sampled_per_second"] > 0, o
    upd = o["sampled_updated_per_second"]
    assert (upd is None) == (o["kind"] == "uniform") and (upd is None or upd > 0), o
    print(o["kind"], o["batch"])
' <<<"$out" 2>&1)
    expect_eq "bench replay --json: the openblas line, then both kinds at batch 64 and 512" "$rows" \
        "$(printf 'uniform 64\nuniform 512\nprioritized 64\nprioritized 512')"
else
    not_ok "bench replay --json parses: python3 not found (scripts/install-deps.sh installs it)"
fi
run_cmd "$GORILA" bench replay --seconds 0.001
expect_rc "bench replay table exits 0" 0
expect_contains "bench replay prints the OpenBLAS configuration" "$out" "OpenBLAS: "
expect_eq "bench replay: a row per capacity and kind" "$(grep -cE '^2\^[0-9]+ +(uniform|prioritized) ' <<<"$out")" 14
expect_contains "bench replay: reports the target beside the measurement" "$out" \
    "target: 2.0M sampled+updated transitions/s per shard at 2^20, batch 512; measured "
bad "bench replay --seconds 0" "--seconds: expected a number in (0, 3600]" "$GORILA" bench replay --seconds 0
run_cmd "$GORILA" bench env --steps 1000 --env CartPole-v1
expect_contains "bench env: the Gymnasium reference is labelled a constant" "$out" \
    "constant, not measured: Gymnasium Python CartPole-v1"
# Help exits 0 on every subcommand, with its usage on stdout.
for cmd in "bench" "bench nn" "bench replay" "eval" "train" "config check" "env"; do
    # shellcheck disable=SC2086
    run_cmd "$GORILA" $cmd --help
    expect_rc "$cmd --help exits 0" 0
    expect_contains "$cmd --help prints usage on stdout" "$out" "usage: gorila ${cmd%% *}"
done
bad "env without subcommand" "expected one of: list, rollout, replay" "$GORILA" env
bad "env unknown subcommand" 'unknown subcommand "lst" (did you mean list?)' "$GORILA" env lst

# ---- replay against Gymnasium's fixtures
# compare GOT WANT: same number of lines; flags and rewards equal; every
# other value within 1e-9 (relative to max(1, |v|)). Prints "lines exact".
compare() {
    awk -F, 'NR == FNR {want[FNR] = $0; nw = FNR; next}
        {
            n++; split(want[FNR], w, ",")
            if (NF != length(w)) { print "line " FNR ": " NF " fields, want " length(w); bad++; next }
            if ($0 == want[FNR]) exact++
            for (i = 1; i <= NF; i++) {
                d = $i - w[i]; if (d < 0) d = -d
                m = w[i] < 0 ? -w[i] : w[i]; if (m < 1) m = 1
                if (d / m > 1e-9) { print "line " FNR " field " i ": " $i " vs " w[i]; bad++ }
            }
        }
        END { if (n != nw) { print "got " n " lines, want " nw; bad++ } print n, exact + 0; exit bad > 0 }' "$2" "$1"
}
for f in "$data"/*.replay; do
    name=$(basename "$f" .replay)
    args=$(sed -n 's/^# args: *//p' "$f")
    # shellcheck disable=SC2086
    "$GORILA" env replay "$name" $args <"$f" >"$TEST_TMP/replay.out" 2>"$TEST_TMP/replay.err"
    rc=$?
    expect_eq "replay $name fixture exits 0" "$rc" 0
    sed -n 's/^#> //p' "$f" >"$TEST_TMP/replay.want"
    if res=$(compare "$TEST_TMP/replay.out" "$TEST_TMP/replay.want"); then
        ok "replay $name matches Gymnasium within 1e-9 ($(awk '{print $2 " of " $1}' <<<"$res" | tail -1) lines identical)"
    else
        not_ok "replay $name matches Gymnasium within 1e-9"
        head -5 <<<"$res" | sed 's/^/# /'
    fi
    # The fixture's own truncated column follows Gymnasium's TimeLimit rule,
    # truncated = (steps since the last `state` >= the registered limit), with
    # the obs size and limit taken from `env list`.
    read -r obs limit < <("$GORILA" env list | awk -v n="$name" '$1 == n {print $2, $4}')
    bad=$(awk -F, -v o="$obs" -v L="$limit" '/^state/ {t = 0} /^#> / {t++; want = t >= L ? 1 : 0
        if ($(o + 3) != want) { print "step " t ": truncated " $(o + 3) ", want " want; n++ } }
        END { print n + 0 " bad" }' "$f" | tail -1)
    expect_eq "fixture $name: truncated is set exactly when the step count reaches $limit" "$bad" "0 bad"
done

# ---- replay protocol errors (line numbers count every line)
replay_bad() { # replay_bad NAME ENV INPUT NEEDLE
    local name=$1 env=$2 input=$3 needle=$4
    run_cmd bash -c 'printf "%b" "$1" | "$2" env replay "$3"' _ "$input" "$GORILA" "$env"
    expect_rc "replay $name: exit status 2" 2
    expect_contains "replay $name: message" "$err" "$needle"
}
replay_bad "too few state values" CartPole-v1 '# comment\n\nstate 1 2 3\n' \
    "gorila env replay: line 3: state: expected 4 values for CartPole-v1, got 3"
replay_bad "too many state values" MountainCar-v0 'state 1 2 3\n' \
    "line 1: state: expected 2 values for MountainCar-v0, got 3"
replay_bad "non-numeric value" Acrobot-v1 'state 0 0 x 0\n' 'line 1: state: value 3: expected a number, got "x"'
replay_bad "non-finite value" Pendulum-v1 'state 0 nan\n' 'line 1: state: value 2: expected a finite number, got "nan"'
replay_bad "infinite value" Pendulum-v1 'state 1e999 0\n' "line 1: state: value 1: expected a finite number"
replay_bad "step before state" CartPole-v1 '\n  # indented comment\nstep 0\n' "line 3: step before any state command"
replay_bad "action out of range" CartPole-v1 'state 0 0 0 0\nstep 0\nstep 2\n' \
    "line 3: step: action for CartPole-v1: expected an integer in [0, 1], got 2"
replay_bad "negative action" MountainCar-v0 'state 0 0\nstep -1\n' "line 2: step: action for MountainCar-v0"
replay_bad "action not a number" Acrobot-v1 'state 0 0 0 0\nstep one\n' 'expected an integer, got "one"'
replay_bad "step without action" Acrobot-v1 'state 0 0 0 0\nstep\n' "line 2: step: expected 1 action index, got 0"
replay_bad "step with two actions" Acrobot-v1 'state 0 0 0 0\nstep 1 2\n' "line 2: step: expected 1 action index, got 2"
replay_bad "unknown command" CartPole-v1 'state 0 0 0 0\nreset\n' 'line 2: unknown command "reset" (expected state or step)'
replay_bad "Pendulum action past the torque set" Pendulum-v1 'state 0 0\nstep 3\n' "expected an integer in [0, 2], got 3"

run_cmd bash -c 'printf "state 0 0 0.3 0\nstep 1\nstep 1\nbogus\n" | "$1" env replay CartPole-v1' _ "$GORILA"
expect_rc "replay stops at the bad line" 2
expect_eq "replay answered the lines before the bad one" "$(wc -l <<<"$out")" 2
expect_eq "replay output has obs,reward,flags,state" "$(head -1 <<<"$out" | awk -F, '{print NF, $5, $6, $7}')" "11 1 1 0"
expect_eq "CartPole: a step beyond termination earns 0" "$(sed -n 2p <<<"$out" | cut -d, -f5-6)" "0,1"

run_cmd bash -c 'printf "state 0.5 0.01\r\n\t\r\nstep 1\r\n" | "$1" env replay MountainCar-v0' _ "$GORILA"
expect_rc "replay accepts CRLF and blank lines" 0

# ---- replay input that is not short text lines: refused with one line, exit 2
# a line past 64 KiB (65536 bytes, its newline included): one error line,
# and not read whole (a 300 MB line is refused as soon as 64 KiB are in)
long_line() { # long_line N: "state" and blanks, N bytes with the newline
    python3 -c 'import sys; n = int(sys.argv[1]); sys.stdout.write("state" + " " * (n - 6) + "\n")' "$1"
}
big_line() { { echo "# fine"; yes state | tr -d "\n" | head -c 300000000; }; }
export -f big_line
run_cmd bash -c '"$1" | "$2" env replay CartPole-v1' _ big_line "$GORILA"
expect_rc "replay: a 300 MB line: exit status 2" 2
expect_eq "replay: a 300 MB line: one line on stderr" "$err" \
    "gorila env replay: line 2: longer than 65536 bytes (a command is one short line)"
if [ -x /usr/bin/time ]; then
    big_line | /usr/bin/time -f %M -o "$TEST_TMP/replay-rss" "$GORILA" env replay CartPole-v1 >/dev/null 2>&1
    rss=$(tail -1 "$TEST_TMP/replay-rss")
    check "replay: a 300 MB line is not read whole (peak RSS $rss KB < 150 MB)" [ "${rss:-999999}" -lt 150000 ]
else
    ok "replay: a 300 MB line is not read whole # SKIP no /usr/bin/time"
fi
long_line 65537 >"$TEST_TMP/replay-long" && long_line 65536 >"$TEST_TMP/replay-64k"
run_cmd bash -c '"$1" env replay CartPole-v1 <"$2"' _ "$GORILA" "$TEST_TMP/replay-long"
expect_rc "replay: a line of 65537 bytes: exit status 2" 2
expect_contains "replay: a line of 65537 bytes: said" "$err" "line 1: longer than 65536 bytes"
run_cmd bash -c '"$1" env replay CartPole-v1 <"$2"' _ "$GORILA" "$TEST_TMP/replay-64k"
expect_rc "replay: a line of 65536 bytes is read (state without values: exit 2)" 2
expect_contains "replay: a line of 65536 bytes: parsed" "$err" "line 1: state: expected 4 values for CartPole-v1, got 0"
# NUL bytes: 200 KB of them, and one inside a command (which once read as "state 0 0 0 0")
run_cmd bash -c 'head -c 200000 /dev/zero | "$1" env replay CartPole-v1' _ "$GORILA"
expect_rc "replay: 200 KB of NUL bytes: exit status 2" 2
expect_eq "replay: 200 KB of NUL bytes: one line" "$err" "gorila env replay: line 1: a NUL byte at byte 1 (the input must be text)"
run_cmd bash -c 'printf "state 0 0 0 0\nstep 1\nstep 1\0junk\n" | "$1" env replay CartPole-v1' _ "$GORILA"
expect_rc "replay: a NUL inside a command: exit status 2" 2
expect_contains "replay: a NUL inside a command: said, with its place" "$err" "line 3: a NUL byte at byte 7"
expect_eq "replay: the step before it answered, not the one with the NUL" "$(grep -c . <<<"$out")" 1
# control bytes of the input are quoted, never written raw to the terminal
run_cmd bash -c 'printf "\033[2J\033]0;owned\007\n" | "$1" env replay CartPole-v1' _ "$GORILA"
expect_rc "replay: escape sequences as a command: exit status 2" 2
expect_eq "replay: escape sequences quoted as \\xHH" "$err" \
    'gorila env replay: line 1: unknown command "\x1b[2J\x1b]0;owned\x07" (expected state or step)'
check "replay: no raw control byte on stderr" bash -c '! LC_ALL=C grep -q "[[:cntrl:]]" <<<"$1"' _ "$err"
run_cmd bash -c 'printf "state 0 0 \033[31mx 0\n" | "$1" env replay CartPole-v1' _ "$GORILA"
expect_contains "replay: a bad value's quote escaped too" "$err" 'value 3: expected a number, got "\x1b[31mx"'

# truncation through the binary: 200 steps of Pendulum, flag only on the last
run_cmd bash -c '{ echo "state 0 0"; for i in $(seq 200); do echo "step 1"; done; } | "$1" env replay Pendulum-v1' _ "$GORILA"
expect_eq "replay: truncated exactly at step 200" "$(awk -F, '$6 == 1 {print NR}' <<<"$out")" "200"

# Flags as Gymnasium's TimeLimit reports them: `truncated = elapsed_steps >=
# max_episode_steps` (gymnasium/wrappers/common.py), whatever terminated says.
# A MountainCar car parked at the right edge (position 0.6, the clip bound,
# velocity 0.07, the speed bound) and pushed right (action 2) terminates on
# every step: the goal is position >= 0.5 with velocity >= 0, and pushing
# right adds force 0.001 while gravity's term -0.0025 cos(3 * 0.6) is also
# positive, so the velocity stays at its 0.07 clip and the position at 0.6.
# MountainCar-v0's registered limit is 200 steps.
run_cmd bash -c '{ echo "state 0.6 0.07"; for i in $(seq 201); do echo "step 2"; done; } | "$1" env replay MountainCar-v0' _ "$GORILA"
expect_rc "replay: 201 steps at the goal exit 0" 0
flags=$(cut -d, -f4,5 <<<"$out") # MountainCar: obs 2, reward, terminated, truncated
expect_eq "replay: the car at the goal terminates on every one of the 201 steps" \
    "$(cut -d, -f1 <<<"$flags" | sort -u)/$(wc -l <<<"$flags")" "1/201"
expect_eq "replay: step 199, before the limit, terminated and not truncated" "$(sed -n 199p <<<"$flags")" "1,0"
expect_eq "replay: step 200 terminates at the limit and reports both flags" "$(sed -n 200p <<<"$flags")" "1,1"
expect_eq "replay: step 201, past the limit, still reports both" "$(sed -n 201p <<<"$flags")" "1,1"
expect_eq "replay: truncated on steps 200 and 201 only" "$(awk -F, '$5 == 1 {print NR}' <<<"$out" | paste -sd' ')" \
    "200 201"
# A state command starts a new episode: the step count, and so truncated, start again.
run_cmd bash -c '{ echo "state 0.6 0.07"; for i in $(seq 200); do echo "step 2"; done; echo "state 0.6 0.07"; echo "step 2"; } | "$1" env replay MountainCar-v0' _ "$GORILA"
expect_eq "replay: after a new state, step 1 terminates without truncated" "$(tail -1 <<<"$out" | cut -d, -f4,5)" "1,0"

# ---- env check (the checks themselves, and their failures on broken
# environments, are unit-tested: tests/unit/test_env.c, suite envcheck)
for n in $envs; do
    run_cmd "$GORILA" env check "$n"
    expect_rc "env check $n exits 0" 0
    expect_eq "env check $n: one line per check, all pass" "$(grep -cE '^  pass  ' <<<"$out")" 10
    expect_contains "env check $n: summary" "$out" "$n: 10 passed, 0 failed, 0 skipped"
    [ "$n" = Pendulum-v1 ] && pendulum=$out
done
expect_contains "env check: default 10 episodes" "${pendulum:-}" "Pendulum-v1: 10 episodes, seed 0"
for c in spec obs_dim state_dim obs_finite obs_bounds reward flags past_end determinism seed; do
    expect_contains "env check names the $c check" "${pendulum:-}" "  pass  $c "
done
run_cmd "$GORILA" env check Acrobot-v1 --episodes 3 --seed 9
first=$out
expect_contains "env check --episodes" "$out" "Acrobot-v1: 3 episodes, seed 9"
run_cmd "$GORILA" env check Acrobot-v1 --episodes=3 --seed=9
expect_eq "env check: same seed, same report" "$out" "$first"
run_cmd "$GORILA" env check Pendulum-v1 --episodes 2 --torques -3,-1,0,1,3
expect_rc "env check Pendulum-v1 with 5 torques exits 0" 0
expect_contains "env check uses the torque set" "$out" "actions 5"
bad "check without a name" "env check: expected an environment name" "$GORILA" env check
bad "check unknown env" 'env check: unknown environment "CartPole-v2" (did you mean CartPole-v1?)' \
    "$GORILA" env check CartPole-v2
bad "check --episodes 0" "env check: --episodes: expected an integer in [1," "$GORILA" env check CartPole-v1 --episodes 0
bad "check torques on CartPole" "--torques applies to Pendulum-v1 only" "$GORILA" env check CartPole-v1 --torques 1,2
bad "check unknown flag" 'unknown option "--seeds" (did you mean --seed?)' "$GORILA" env check CartPole-v1 --seeds 1
bad "env unknown subcommand, close to check" 'unknown subcommand "chek" (did you mean check?)' "$GORILA" env chek
run_cmd "$GORILA" env --help
expect_contains "env --help shows check" "$out" "gorila env check NAME [--episodes N]"

# ---- docs: the template in "Adding an environment" is the tested file
template="$TEST_ROOT/tests/fixtures/env_template.c"
shown=$(awk '/^<!-- env-template: tests\/fixtures\/env_template.c -->$/ {on = 1; next}
    on == 1 && /^```c$/ {on = 2; next} on == 2 && /^```$/ {exit} on == 2 {print}' "$TEST_ROOT/docs/ENVIRONMENTS.md")
expect_eq "docs/ENVIRONMENTS.md shows tests/fixtures/env_template.c verbatim" "$shown" "$(cat "$template")"
check "docs: the template's spec limits are named" grep -q "ENV_MAX_OBS\` | 1024" "$TEST_ROOT/docs/ENVIRONMENTS.md"

# ---- bench env
# one line per row of env list's table (the four classic environments, and
# MinAtar's ten in a build with them)
run_cmd "$GORILA" bench env --steps 20000 --json
expect_rc "bench env --json exits 0" 0
expect_eq "bench env --json: one line per environment" "$(wc -l <<<"$out")" "$(wc -l <<<"$envs")"
if command -v python3 >/dev/null; then
    keys=$(python3 -c '
import json, sys
for line in sys.stdin:
    o = json.loads(line)
    assert o["bench"] == "env", o
    assert isinstance(o["steps_per_second"], (int, float)) and o["steps_per_second"] > 0, o
    assert o["steps"] == 20000, o
    for k in ("episodes", "seconds", "openblas_config", "openblas_corename", "openblas_coretype", "openblas_num_threads"):
        assert k in o, (k, o)
    print(o["env"], "gym_steps_per_second_constant" in o and o.get("reference_measured") is False)
' <<<"$out" 2>&1)
    # Gymnasium's measured speed is a constant for CartPole-v1 alone.
    expect_eq "bench env --json lines parse with the expected keys" "$keys" \
        "$(awk '{print $1, ($1 == "CartPole-v1" ? "True" : "False")}' <<<"$envs")"
else
    not_ok "bench env --json parses: python3 not found (scripts/install-deps.sh installs it)"
fi
run_cmd "$GORILA" bench env --steps 10000 --env Acrobot-v1
expect_rc "bench env table exits 0" 0
expect_contains "bench env prints the OpenBLAS configuration" "$out" "OpenBLAS: "
expect_contains "bench env prints OPENBLAS_NUM_THREADS" "$out" "OPENBLAS_NUM_THREADS="
expect_eq "bench env --env runs one environment" "$(grep -cE '^[A-Za-z]+-v[0-9] ' <<<"$out")" 1
bad "bench env --steps 0" "--steps: expected an integer in [1," "$GORILA" bench env --steps 0
bad "bench env --steps missing" "--steps needs a value" "$GORILA" bench env --steps
bad "bench env unknown flag" 'unknown option "--step" (did you mean --steps?)' "$GORILA" bench env --step 5
bad "bench env unknown env" 'unknown environment "Pong"' "$GORILA" bench env --env Pong

done_testing
