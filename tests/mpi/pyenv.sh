#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/mpi/pyenv.sh: a distributed job on a Python environment
# (python:cartpole:make, the pure-Python CartPole of tests/pyenv) through
# scripts/launch, which forwards PYTHONPATH to every rank: it finishes with
# exit 0 and its budget of env steps, and resumes saying each slot starts
# afresh; an exception in an actor's step ends every rank with exit 9 and
# one line naming the environment, never a hang (a 120 s guard); run.pin_cores
# auto pins a C environment's ranks, not a Python one's. A build
# with make PYTHON=0 skips it.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../mpilib.sh"
cd "$TEST_ROOT" || exit 1
export PYTHONPATH="$TEST_ROOT/tests/pyenv"

job pyenv --set env.name=python:cartpole:make
if grep -q "built without Python" <<<"$err"; then
    expect_rc "a build without Python refuses a python: env (exit 2)" 2
    for t in job resume chain fail; do ok "mpi pyenv $t # SKIP built with make PYTHON=0"; done
    done_testing
    exit
fi
expect_rc "a distributed job on python:cartpole:make exits 0" 0
check "summary.json names the environment" grep -q '"env": "python:cartpole:make"' "$RUN/summary.json"
expect_eq "it ran its budget of env steps" "$(jget "$RUN/summary.json" env_steps)" 3000
expect_contains "its checkpoint records the whole id (section envid)" \
    "$("$TEST_ROOT/scripts/ckpt-sections" "$RUN/checkpoints/$(cat "$RUN/checkpoints/latest")/ps-0.ckpt")" " envid "

# run.pin_cores auto (the default) leaves a Python environment's ranks
# free to move (two pinned actors shared one core: docs/PERFORMANCE.md,
# "Python actors"); true pins them as it pins a C environment's.
expect_contains "run.pin_cores auto: a Python environment's ranks are not pinned" "$err" \
    "5 ranks on 2 cores, not pinned (run.pin_cores auto: a Python environment's actors"
run_cmd timeout --kill-after=5 120 "$TEST_ROOT/scripts/launch" --resume "$RUN" --set run.max_env_steps=4000 \
    --set run.pin_cores=true
expect_rc "the job resumes (exit 0)" 0
expect_contains "run.pin_cores true pins them" "$err" "5 ranks on 2 cores, pinned (run.pin_cores):"
expect_contains "it says each slot starts afresh" "$out$err" \
    "python environment: resumed with a fresh reset of each slot (its state is not saved)"
expect_eq "it ran to its new budget" "$(jget "$RUN/summary.json" env_steps)" 4000

# The pure-Python chain (tests/pyenv/chain.py) is learned by a distributed
# job too: solved, the greedy policy crossing it from every start.
job pyenv-chain --set env.name=python:chain:make --set run.stop_when_solved=true --set run.max_env_steps=30000 \
    --set eval.every_updates=250 --set eval.episodes=10
expect_rc "a distributed job on python:chain:make exits 0" 0
expect_eq "it solves the chain" "$(jget "$RUN/summary.json" stop_reason)" solved

job pyenv-c --set run.max_env_steps=300
expect_contains "run.pin_cores auto pins a C environment's ranks" "$err" "5 ranks on 2 cores, pinned (run.pin_cores):"

job pyenv-fail --set env.name=python:cartpole:make --set 'env.kwargs="{\"fail_after\": 700}"'
expect_rc "an exception in an actor's step ends the job with exit 9" 9
expect_contains "one line naming the environment and the step" "$err" \
    "env python:cartpole:make: step: raised"
expect_contains "the exception is shown" "$err" "ValueError: fixture: step 700 fails"

done_testing
