# SPDX-License-Identifier: MIT
# docs/ENVIRONMENTS.md, "Adding an environment", followed on a copy of the
# tree with the template (tests/fixtures/env_template.c, PointMass-v0):
# copied to envs/pointmass.c, declared in envs/env_specs.h, added to
# env_registry[] in envs/env.c; the copy builds (gorila and the unit
# tests), `gorila env list` shows it, `gorila env check` passes on it, a
# config trains on it, and the tests that go over every environment (the
# env and config unit suites, tests/cli/env.sh) pass on the copy with no change to them.
# In the slow tier (make test) for its build of the copy; it starts no MPI
# job.
source "$(dirname "$0")/../lib.sh"
copy="$TEST_TMP/tree"
rm -rf "$copy"
mkdir -p "$copy"
cp -r "$TEST_ROOT/Makefile" "$TEST_ROOT/VERSION" "$TEST_ROOT/src" "$TEST_ROOT/envs" "$TEST_ROOT/agents" \
    "$TEST_ROOT/tests" "$TEST_ROOT/configs" "$TEST_ROOT/docs" "$copy/"

# The recipe's steps 1 to 3.
cp "$copy/tests/fixtures/env_template.c" "$copy/envs/pointmass.c"
printf 'extern const EnvSpec env_pointmass;\n' >>"$copy/envs/env_specs.h"
# (after the bundled classic four, which the tests expect first)
sed -i 's/^\(    &env_cartpole, .*&env_pendulum,\)$/\1\n    \&env_pointmass,/' "$copy/envs/env.c"
check "envs/env.c: env_registry[] takes &env_pointmass" \
    awk '/^const EnvSpec \*const env_registry\[\] = \{/ { on = 1 } on && /&env_pointmass,/ { f = 1 } on && /^};/ { exit !f }' \
    "$copy/envs/env.c"

# The tree's own objects go along (their times set to now, after the
# sources'), so make rebuilds only what the new environment touches (env.c
# and what depends on env_specs.h), not the whole tree: same Makefile, same
# flags. Without a build beside the sources the copy builds from scratch.
if [ -d "$TEST_ROOT/build/obj" ]; then
    mkdir -p "$copy/build"
    (cd "$TEST_ROOT/build" && tar cf - obj libgorila.a minatar-build python-build source-id 2>/dev/null) |
        (cd "$copy/build" && tar xmf -)
    touch "$copy/envs/env.c" "$copy/envs/env_specs.h" "$copy/envs/pointmass.c"
fi
run_cmd make -s -C "$copy" -j2 build/gorila build/tests/unit
expect_rc "the copy builds with the new environment" 0
G="$copy/build/gorila"

run_cmd "$G" env list
expect_rc "env list: exit 0" 0
expect_eq "env list: the new environment's row (its spec's sizes, limit and threshold)" \
    "$(awk '$1 == "PointMass-v0" {print $1, $2, $3, $4, $5}' <<<"$out")" "PointMass-v0 3 3 200 -20"
run_cmd "$G" env check PointMass-v0
expect_rc "env check PointMass-v0: exit 0" 0
expect_contains "env check PointMass-v0: every check passes" "$out" "PointMass-v0: 10 passed, 0 failed, 0 skipped"
run_cmd "$G" train "$copy/configs/local/cartpole.yaml" --set env.name=PointMass-v0 --set run.max_env_steps=600 \
    --set run.out_dir="$TEST_TMP/runs" --set run.name=pointmass --set logging.progress=never
expect_rc "a local run trains on it (env.name: PointMass-v0)" 0
expect_eq "... and its summary names it" "$(sed -n 's/^  "env": "\(.*\)",$/\1/p' "$TEST_TMP/runs/pointmass/summary.json")" \
    "PointMass-v0"

# The tests over every environment, unchanged, on the copy: the unit suites
# that walk env_registry[] (env_*, envcheck, config_*; minatar_env beside
# them), not the whole binary again (make test ran it on the tree).
run_cmd "$copy/build/tests/unit" --jobs=2 --filter '@(env*|config*|minatar_env)/*'
expect_rc "the environment and config unit tests pass on the copy" 0
check "... and they ran (Criterion's synthesis counts 40 or more)" \
    awk '/Synthesis: Tested:/ { for (i = 1; i <= NF; i++) if ($i == "Tested:") n = $(i + 1) } END { exit !(n + 0 >= 40) }' <<<"$out$err"
[ "$rc" -eq 0 ] || echo "# $(grep -E 'FAIL|Synthesis' <<<"$err$out" | head -5 | tr '\n' ' ')"
mkdir -p "$TEST_TMP/env"
run_cmd env GORILA="$G" TEST_ROOT="$copy" TEST_TMP="$TEST_TMP/env" bash "$copy/tests/cli/env.sh"
expect_rc "tests/cli/env.sh passes on the copy" 0
[ "$rc" -eq 0 ] || grep '^not ok' <<<"$out" | head -5 | sed 's/^/# /'
expect_contains "tests/cli/env.sh ran env check on it" "$out" " - env check PointMass-v0: summary"
expect_contains "tests/cli/env.sh ran a rollout of it" "$out" " - rollout PointMass-v0 exits 0"
rm -rf "$copy"
done_testing
