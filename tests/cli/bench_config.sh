#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/cli/bench_config.sh: `gorila bench nn --config FILE [--set k=v]...`
# times FILE's own DQN update and prints its network as `gorila config
# check` does: the same parameter count and the same layer lines, checked
# here against config check and against counts worked out from the layer
# sizes. Timing is never checked (the rows run 0.05 s).
source "$(dirname "$0")/../lib.sh"
cd "$TEST_ROOT" || exit 1
CFG=configs/minatar/local/breakout.yaml

# netblock TEXT: the lines from "network: N parameters" to the next blank
# or table line (the layer lines)
netblock() { sed -n '/^network: [0-9]* parameters$/,/^\(  *$\|[^ ]\)/p' <<<"$1" | sed '/^network  /d; /^$/d' |
    sed '1!{/^[^ ]/d}'; }

run_cmd "$GORILA" config check "$CFG"
check_out=$out
run_cmd "$GORILA" bench nn --config "$CFG" --seconds 0.05
expect_rc "bench nn --config: exit 0" 0
bench_out=$out
# MinAtar Breakout, dqn.py's network on 10x10x4 planes:
#   conv.0   16 filters 3x3 over 4 planes: 16*(4*3*3) + 16 = 592
#            output 16 x 8x8 (10-3+1 = 8) = 1024 features
#   hidden.0 1024*128 + 128 = 131200
#   head     128*6 + 6 = 774
#   total    592 + 131200 + 774 = 132566
want=$((16 * (4 * 3 * 3) + 16 + 1024 * 128 + 128 + 128 * 6 + 6))
expect_eq "the count worked out by hand" "$want" 132566
expect_contains "bench: the parameter count" "$bench_out" "network: $want parameters"
expect_eq "bench: the layer lines are config check's" "$(netblock "$bench_out")" "$(netblock "$check_out")"
expect_eq "bench: ... five of them (count, input, conv.0, hidden.0, head)" "$(netblock "$bench_out" | wc -l)" 5
expect_contains "bench: conv.0 line" "$bench_out" "conv.0    16x8x8 (16 filters 3x3, stride 1)               592 parameters"
expect_contains "bench: hidden.0 line" "$bench_out" "hidden.0  128 (from 1024)                              131200 parameters"
expect_contains "bench: the row names the network and the batch (replay.batch_size 32)" "$bench_out" \
    "10x10x4-c16k3s1-128-6           32"
expect_contains "bench: the table has ms/update" "$bench_out" "ms/update"
expect_contains "bench: says the update is the config's (vanilla DQN, RMSprop)" "$bench_out" \
    "DQN update of $CFG (vanilla DQN, Huber 1, backward, grad clip 0, rmsprop lr 0.00025)"
expect_contains "bench: prints the OpenBLAS kernel and CPU" "$bench_out" "OpenBLAS: OpenBLAS"
expect_contains "bench: ... and the CPU" "$bench_out" "; CPU "

# Another shape through --set: two hidden layers, dueling, batch 8.
SETS=(--set 'network.hidden=[64,32]' --set network.dueling=true --set replay.batch_size=8)
run_cmd "$GORILA" config check "$CFG" "${SETS[@]}" --json
check_n=$(sed -n 's/.*"n_params": *\([0-9]*\).*/\1/p' <<<"$out")
run_cmd "$GORILA" bench nn --config "$CFG" "${SETS[@]}" --seconds 0.05 --json
expect_rc "bench nn --config --set --json: exit 0" 0
row=$(grep '"bench": "nn"' <<<"$out")
#   conv.0 592; hidden.0 1024*64 + 64 = 65600; hidden.1 64*32 + 32 = 2080;
#   dueling head 6 advantages + 1 value from 32: 32*7 + 7 = 231
want=$((592 + 1024 * 64 + 64 + 64 * 32 + 32 + 32 * 7 + 7))
expect_eq "--set: the count worked out by hand" "$want" 68503
expect_eq "--set: config check --json has it" "$check_n" "$want"
expect_contains "--set --json: n_params" "$row" "\"n_params\": $want,"
expect_contains "--set --json: the shape" "$row" \
    '"network": "10x10x4-c16k3s1-64-32-6 dueling", "n_params": 68503, "obs_dim": 400, "planes": [10, 10, 4], "conv": [[16, 3, 1]], "hidden": [64, 32], "dueling": true, "actions": 6, "batch": 8, "double_dqn": false'
expect_contains "--set --json: the optimizer" "$row" '"optimizer": "rmsprop"'
check "--set --json: ms_per_update is 1000 / updates_per_second" python3 -c '
import json, sys
r = json.loads(sys.argv[1])
sys.exit(abs(r["ms_per_update"] * r["updates_per_second"] - 1000) > 1e-6)' "$row"
expect_eq "--json: the openblas line first" "$(head -1 <<<"$out" | grep -c '"bench":"openblas"')" 1

# Errors: one line, exit 2, nothing on stdout.
printf 'run: [\n' >"$TEST_TMP/broken.yaml"
for args in "--config $TEST_TMP/nope.yaml" "--config $TEST_TMP/broken.yaml" "--config $CFG --set network.hidden=[0]" \
    "--config $CFG --set no.such.key=1" "--config $CFG --minatar" "--set network.hidden=[8]"; do
    # shellcheck disable=SC2086 # the words are the arguments
    run_cmd "$GORILA" bench nn $args --seconds 0.05
    expect_rc "bench nn $args: exit 2" 2
    expect_eq "bench nn $args: one error line" "$(grep -c . <<<"$err")" 1
    expect_eq "bench nn $args: nothing on stdout" "$out" ""
done
expect_contains "a missing config names the file" "$(
    "$GORILA" bench nn --config "$TEST_TMP/nope.yaml" 2>&1
)" "bench nn: $TEST_TMP/nope.yaml: cannot open config"
done_testing
