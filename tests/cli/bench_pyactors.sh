#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/cli/bench_pyactors.sh: scripts/bench-pyactors's arguments (its runs
# are MPI jobs: tests/mpi/bench_pyactors.sh runs it): --help prints the
# usage and exits 0; every bad argument exits 2 with one line saying which,
# before any job starts.
source "$(dirname "$0")/../lib.sh"
cd "$TEST_ROOT" || exit 1
B=scripts/bench-pyactors
export GORILA

run_cmd "$B" --help
expect_rc "--help exits 0" 0
expect_contains "it prints the usage" "$out" "usage: scripts/bench-pyactors [--json] [--steps N]"
expect_contains "and what the rows measure" "$out" "roles.actor[].stepping_seconds"

# bad WHAT EXPECTED ARGS...: exit 2 and EXPECTED on stderr
bad() {
    local what=$1 want=$2
    shift 2
    run_cmd "$B" "$@"
    expect_rc "$what: exit 2" 2
    expect_contains "$what: it says why" "$err" "$want"
}
bad "--steps 0" "--steps must be at least 1" --steps 0
bad "--learn-steps -1" "--learn-steps must be at least 1" --learn-steps -1
bad "--repeat 0" "--repeat must be at least 1" --repeat 0
bad "a negative step cost" "--step-cost-us must be 0 or more" --step-cost-us -5
bad "--kwargs not an object" "--kwargs must be a JSON object" --kwargs '[1, 2]'
bad "--kwargs not JSON" "--kwargs must be a JSON object" --kwargs '{step'
bad "a registered environment" "--env must be a Python environment" --env CartPole-v1
bad "--set without =" "--set run.pin_cores: expected KEY=VALUE" --set run.pin_cores
bad "--only something else" "argument --only: invalid choice" --only both
bad "an unknown argument" "unrecognized arguments: --nope" --nope
bad "a missing gorila" "no/such/gorila not found: run make first" --gorila no/such/gorila
bad "a missing config" "no config no/such.yaml" --config no/such.yaml
done_testing
