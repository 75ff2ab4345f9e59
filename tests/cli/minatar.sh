#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/cli/minatar.sh: `gorila env replay MinAtar/...` is bit-exact with
# the reference MinAtar. Every run of tests/fixtures/minatar (written by the
# reference itself through scripts/minatar_reference.py) is replayed step
# by step and compared: the first episode of each game line by line, every
# episode by the SHA-256 of its output (tests/cli/minatar_check.py). Then
# the protocol's refusals, one line and exit 2 each, and `env list`.
# A build with make MINATAR=0 has no MinAtar: then only that is checked.
source "$(dirname "$0")/../lib.sh"
cd "$TEST_ROOT" || exit 1

if ! "$GORILA" env list | grep -q '^MinAtar/Breakout-v0 '; then
    run_cmd "$GORILA" env replay MinAtar/Breakout-v0 </dev/null
    expect_rc "a build without MinAtar: env replay MinAtar/... exits 2" 2
    expect_contains "it says the build has no MinAtar" "$err" "this build has no MinAtar"
    done_testing
    exit
fi

fx=tests/fixtures/minatar
for g in asterix breakout freeway seaquest space_invaders; do
    run_cmd python3 tests/cli/minatar_check.py "$GORILA" "$fx" "$g"
    expect_rc "$g: every fixture run replays as the reference (${out%%$'\n'*})" 0
done
check "fixtures: at most 3 MB" [ "$(cat "$fx"/* | wc -c)" -le 3000000 ]

# replay LINES ID [ARGS]: run the commands, set rc, out, err
replay() {
    local lines=$1
    shift
    run_cmd "$GORILA" env replay "$@" <<<"$lines"
}
refused() { # NAME FRAGMENT: exit 2 and one stderr line holding FRAGMENT
    expect_rc "$1: exit 2" 2
    expect_contains "$1: says why" "$err" "$2"
    expect_eq "$1: one line on stderr" "$(wc -l <<<"$err")" 1
}
replay "reset" MinAtar/Breakout-v0
refused "reset before any seed" "reset before any seed: the reference's constructor draws from an unseeded generator"
replay "step 0" MinAtar/Breakout-v0
refused "step before any seed" "step before any seed"
replay $'seed 1\nstep 0' MinAtar/Breakout-v0
refused "step after seed, before the first reset" "step before the first reset"
expect_eq "seed prints nothing" "$out" ""
replay $'seed 1\nreset\nstep 3' MinAtar/Breakout-v1
refused "-v1 Breakout takes 3 actions: step 3 out of range" "line 3: step: action for MinAtar/Breakout-v1"
expect_eq "the lines before the bad one were answered" "$(wc -l <<<"$out")" 1
replay $'seed 1\nreset\nstep 6' MinAtar/Seaquest-v0
refused "-v0 takes 6 actions: step 6" "expected an integer in [0, 5]"
replay $'seed 1\nreset\nstep x' MinAtar/Asterix-v0
refused "a non-number action" "expected an integer"
replay "seed 4294967296" MinAtar/Freeway-v0
refused "seed 2^32" "a seed is 0 <= S < 2^32"
replay "seed -1" MinAtar/Freeway-v0
refused "seed -1" "a seed is 0 <= S < 2^32"
replay "seed 1 2" MinAtar/Freeway-v0
refused "seed with two values" "seed: expected 1 seed"
replay "jump 1" MinAtar/Freeway-v0
refused "an unknown command" "unknown command \"jump\""
replay "$(printf 'seed 1\nj\033[2Jump')" MinAtar/Freeway-v0
refused "a control byte of the input is quoted in the message" 'unknown command "j\x1b[2Jump"'

replay "$(printf 'seed 1\n# %070000d' 0)" MinAtar/Freeway-v0
refused "a line over 64 KiB" "line 2: longer than 65536 bytes (a command is one short line)"
run_cmd "$GORILA" env replay MinAtar/Freeway-v0 < <(printf 'seed 1\nre\0set\n')
refused "a NUL byte" "line 2: a NUL byte at byte 3 (the input must be text)"
replay "" MinAtar/Pong-v0
refused "an unknown MinAtar id" "unknown MinAtar environment \"MinAtar/Pong-v0\""
replay "" MinAtar/Breakout-v0 --sticky 1.5
refused "--sticky out of [0, 1]" "--sticky: expected a probability in [0, 1]"
replay "" MinAtar/Breakout-v0 --torques 1
refused "an option of another env" "unknown option \"--torques\""

# After the end: the sticky draw still happens, "0 1" and the cells unchanged
replay $'seed 3\nreset'"$(printf '\nstep 0%.0s' $(seq 40))" MinAtar/Breakout-v0 --sticky 0
last=$(grep -n '^[0-9]* 1 ' <<<"$out" | head -1 | cut -d: -f1)
check "Breakout, noop from seed 3: the ball is missed within 40 steps" [ -n "$last" ]
cells=$(sed -n "${last}p" <<<"$out" | cut -d' ' -f3)
expect_eq "steps after the end print 0 1 and the same cells" "$(tail -n +$((last + 1)) <<<"$out" | sort -u)" "0 1 $cells"
expect_eq "a state line: 10x10x4 cells" "${#cells}" 400

# The ten ids are environments gorila trains on: one table with the
# classic ones (planes as HxWxC, no time limit or threshold: "-").
run_cmd "$GORILA" env list
expect_rc "env list: exit 0" 0
expect_eq "env list: the ten MinAtar ids" "$(grep -c '^MinAtar/[A-Za-z]*-v[01] ' <<<"$out")" 10
row() { awk -v n="$1" '$1 == n {print $2, $3, $4, $5}' <<<"$out"; }
expect_eq "env list: Seaquest-v1's planes, minimal actions, no limit, no threshold" "$(row MinAtar/Seaquest-v1)" \
    "10x10x10 6 - -"
expect_eq "env list: SpaceInvaders-v1" "$(row MinAtar/SpaceInvaders-v1)" "10x10x6 4 - -"
expect_eq "env list: Breakout-v0 takes all 6 actions" "$(row MinAtar/Breakout-v0)" "10x10x4 6 - -"
expect_eq "env list: one table (no second header)" "$(grep -c '^name ' <<<"$out")" 1
expect_contains "env list: the MinAtar options are named" "$out" "env.sticky_actions"

# env check on every id (Freeway's episodes are 2500 steps: 2 of them)
for id in Asterix-v0 Asterix-v1 Breakout-v0 Breakout-v1 Freeway-v0 Freeway-v1 Seaquest-v0 Seaquest-v1 \
    SpaceInvaders-v0 SpaceInvaders-v1; do
    eps=5
    [[ $id == Freeway* ]] && eps=2
    run_cmd "$GORILA" env check "MinAtar/$id" --episodes $eps --seed 4
    expect_rc "env check MinAtar/$id: exit 0 (${out##*$'\n'})" 0
done
expect_contains "env check: planes, a byte state, no limit, no threshold" "$out" \
    "obs 10x10x6 planes, actions 4, state "
expect_contains "env check: ... no limit, no threshold" "$out" "time limit none, threshold none"
run_cmd "$GORILA" env rollout MinAtar/Breakout-v1 --episodes 3 --seed 2
expect_rc "env rollout MinAtar/Breakout-v1: exit 0" 0
expect_eq "env rollout: no time limit, every episode terminates" "$(grep -c ' terminated$' <<<"$out")" 3
first=$out
run_cmd "$GORILA" env rollout MinAtar/Breakout-v1 --episodes 3 --seed 2
expect_eq "env rollout: same seed, same episodes" "$(grep -v steps/s <<<"$out")" "$(grep -v steps/s <<<"$first")"
run_cmd "$GORILA" env replay MinAtar/Breakout-v1 --torques 1,2 </dev/null
expect_rc "env replay: a classic option on MinAtar exits 2" 2
done_testing
