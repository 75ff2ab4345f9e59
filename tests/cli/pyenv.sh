#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/cli/pyenv.sh: Python environments (env.name python:MODULE:CALLABLE
# and gymnasium:ID) through the embedded interpreter (src/pyenv), with the
# pure-Python fixtures of tests/pyenv (a CartPole, environments that break
# the contract, a stub gymnasium package): local training, the errors at
# start (exit 2) and at run time (exit 9, no restart), env.kwargs. A build
# with make PYTHON=0 refuses such ids: then only that is checked, and the
# rest is counted as skipped.
. "$(dirname "$0")/../lib.sh"
root=${TEST_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
export PYTHONPATH="$root/tests/pyenv"
out_dir="$TEST_TMP/runs"

# train NAME ENV KWARGS [STEPS]: a short local run, rc/out/err as run_cmd.
train() {
    cat >"$TEST_TMP/$1.yaml" <<YAML
run: {name: $1, out_dir: "$out_dir", mode: local, max_env_steps: ${4:-1200}}
env: {name: "$2", kwargs: '$3'}
replay: {min_size: 300}
checkpoint: {every_updates: 200}
eval: {episodes: 2}
YAML
    run_cmd timeout 120 "$GORILA" train --local "$TEST_TMP/$1.yaml"
}

train nopy "python:cartpole:make" '{}'
if grep -q "built without Python" <<<"$err"; then
    expect_rc "a build without Python: a python: env exits 2" 2
    for t in train gymnasium errors runtime kwargs; do ok "pyenv $t # SKIP built with make PYTHON=0 (no embedded Python)"; done
    done_testing
    exit
fi

train local "python:cartpole:make" '{"max_steps": 5}'
expect_rc "local training on python:cartpole:make exits 0" 0
expect_contains "the summary names the Python environment" "$out" "python:cartpole:make: no reward threshold"
expect_contains "env.kwargs reached the callable (its truncated 5-step episodes)" "$out" "best eval 5.0"
check "config.yaml binds the full id" grep -qF 'name: "python:cartpole:make"' "$out_dir/local/config.yaml"
check "config.yaml binds the kwargs" grep -qF 'kwargs: "{\"max_steps\": 5}"' "$out_dir/local/config.yaml"

train gym "gymnasium:StubCartPole-v1" '{}' 600
expect_rc "gymnasium:ID through gymnasium.make exits 0" 0

train unknown "gymnasium:Nope-v0" '{}'
expect_rc "an id gymnasium does not know exits 2" 2
expect_contains "one line naming it" "$err" "gorila: error: env gymnasium:Nope-v0: the environment's constructor raised Error: Environment \`Nope-v0\` doesn't exist."
expect_contains "with the Python traceback" "$err" "Traceback (most recent call last)"
check "nothing was started (no run directory)" test ! -e "$out_dir/unknown"

train nomod "python:no_such_module:make" '{}'
expect_rc "a module not found exits 2" 2
expect_contains "it says which import failed" "$err" "env python:no_such_module:make: import raised ModuleNotFoundError"
train nocall "python:cartpole:nothere" '{}'
expect_rc "a callable not found exits 2" 2
expect_contains "it says the lookup failed" "$err" "looking up the callable raised AttributeError"
train shape "python:cartpole:WrongShape" '{}'
expect_rc "a wrong observation shape exits 2 at start" 2
expect_contains "it names the sizes" "$err" "the observation has 3 values, the observation_space 4"
train box "python:cartpole:BoxActions" '{}'
expect_rc "an action space that is not Discrete exits 2" 2
expect_contains "it names the space" "$err" "action_space is Box, expected Discrete(n)"
train badkw "python:cartpole:make" '{"nope": 1}'
expect_rc "a keyword the callable does not take exits 2" 2
expect_contains "the TypeError is shown" "$err" "TypeError"
train kwbuiltin "CartPole-v1" '{"a": 1}'
expect_rc "env.kwargs for a registered environment exits 2" 2
expect_contains "it says only Python environments take it" "$err" "only a Python environment"

train raise "python:cartpole:make" '{"fail_after": 700}'
expect_rc "an exception in step during training exits 9" 9
expect_contains "one line naming the environment and the step" "$err" "gorila: error: env python:cartpole:make: step: raised"
expect_contains "the exception is shown" "$err" "ValueError: fixture: step 700 fails"
check "the last periodic checkpoint is kept" test -e "$out_dir/raise/checkpoints/latest"
train nan "python:cartpole:make" '{"nan_after": 500}'
expect_rc "a non-finite observation exits 9" 9
expect_contains "it says which value" "$err" "observation value 1 is nan (not finite)"

done_testing
