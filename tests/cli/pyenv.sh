#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/cli/pyenv.sh: Python environments (env.name python:MODULE:CALLABLE
# and gymnasium:ID) through the embedded interpreter (src/pyenv), with the
# pure-Python fixtures of tests/pyenv (a CartPole, environments that break
# the contract, a stub gymnasium package): local training, the errors at
# start (exit 2) and at run time (exit 9, no restart), env.kwargs, seeding
# as Gymnasium's, resuming (a fresh reset) and the checkpoint's whole id
# and kwargs (section envid: another is refused with exit 4). A build
# with make PYTHON=0 refuses such ids: then only that is checked, and the
# rest is counted as skipped.
. "$(dirname "$0")/../lib.sh"
declare -A evals made_n
root=${TEST_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
export PYTHONPATH="$root/tests/pyenv"
out_dir="$TEST_TMP/runs"

# train NAME ENV KWARGS [STEPS [ARG...]]: a short local run, rc/out/err as
# run_cmd; ARGs go to `gorila train` (--set KEY=VALUE).
train() {
    rm -rf "${out_dir:?}/$1" # a fresh run, also when TEST_TMP was not emptied
    cat >"$TEST_TMP/$1.yaml" <<YAML
run: {name: $1, out_dir: "$out_dir", mode: local, max_env_steps: ${4:-1200}}
env: {name: "$2", kwargs: '$3'}
replay: {min_size: 300}
checkpoint: {every_updates: 200}
eval: {episodes: 2}
YAML
    run_cmd timeout 120 "$GORILA" train --local "$TEST_TMP/$1.yaml" "${@:5}"
}

train nopy "python:cartpole:make" '{}'
if grep -q "built without Python" <<<"$err"; then
    expect_rc "a build without Python: a python: env exits 2" 2
    for t in train chain gymnasium errors runtime kwargs seeds resume envid trajectory envcmd envcheck evalslots; do ok "pyenv $t # SKIP built with make PYTHON=0 (no embedded Python)"; done
    done_testing
    exit
fi

train local "python:cartpole:make" '{"max_steps": 5}'
expect_rc "local training on python:cartpole:make exits 0" 0
expect_contains "the summary names the Python environment" "$out" "python:cartpole:make: no reward threshold"
expect_contains "env.kwargs reached the callable (its truncated 5-step episodes)" "$out" "best eval 5.0"
check "config.yaml binds the full id" grep -qF 'name: "python:cartpole:make"' "$out_dir/local/config.yaml"
check "config.yaml binds the kwargs" grep -qF 'kwargs: "{\"max_steps\": 5}"' "$out_dir/local/config.yaml"

# env.kwargs as a YAML mapping, in the file (flow) and by --set: stored as
# its compact JSON text, which reaches the callable and config.yaml; a
# resume given the same mapping again compares equal (the same text), another
# one differs (exit 4).
rm -rf "${out_dir:?}/kwmap"
cat >"$TEST_TMP/kwmap.yaml" <<YAML
run: {name: kwmap, out_dir: "$out_dir", mode: local, max_env_steps: 1200}
env:
  name: python:cartpole:make
  kwargs: {max_steps: 5}
replay: {min_size: 300}
checkpoint: {every_updates: 200}
eval: {episodes: 2}
YAML
run_cmd timeout 120 "$GORILA" train --local "$TEST_TMP/kwmap.yaml"
expect_rc "local training with env.kwargs as a YAML mapping exits 0" 0
expect_contains "the mapping reached the callable (its truncated 5-step episodes)" "$out" "best eval 5.0"
check "config.yaml binds it as its JSON text" grep -qF 'kwargs: "{\"max_steps\":5}"' "$out_dir/kwmap/config.yaml"
train kwset "python:cartpole:make" '{}' 1200 --set 'env.kwargs={"max_steps": 5}'
expect_rc "local training with --set 'env.kwargs={\"max_steps\": 5}' exits 0" 0
expect_contains "the --set mapping reached the callable" "$out" "best eval 5.0"
run_cmd timeout 120 "$GORILA" train --resume "$out_dir/kwmap" --set run.max_env_steps=1800 \
    --set 'env.kwargs={"max_steps": 5}'
expect_rc "a resume of the mapping-started run, given the mapping again, exits 0" 0
check "it ran to its new budget" grep -q '"env_steps": 1800' "$out_dir/kwmap/summary.json"
run_cmd timeout 60 "$GORILA" train --resume "$out_dir/kwmap" --set run.max_env_steps=2400 \
    --set 'env.kwargs={max_steps: 6}'
expect_rc "a resume with another mapping exits 4" 4
expect_contains "it names both texts" "$err" \
    "checkpoint has \"python:cartpole:make\" with env.kwargs {\"max_steps\":5}, expected \"python:cartpole:make\" with env.kwargs {\"max_steps\":6}"

# Learning through the bridge: the pure-Python chain of tests/pyenv
# (8 states, reward 1 at the right end, threshold 1 from its spec: the
# greedy policy must cross it from every start) is solved by a local run.
train chain "python:chain:make" '{}' 30000 --set eval.episodes=10 --set eval.every_updates=250
expect_rc "local training on python:chain:make exits 0" 0
expect_contains "it learns to cross the chain (solved: the spec's threshold 1)" "$out" "python:chain:make: solved at"

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

# The trajectory: the pure-Python CartPole stepped through the bridge by
# `gorila env replay` (state -> reset(options={"state": ...})) on
# Gymnasium's own transitions (tests/fixtures/data, 831 steps with
# terminations, steps past them and truncations), which the C CartPole-v1
# reproduces bit for bit (tests/cli/env.sh): every observation, reward and
# flag of the Python one, as %.17g text, equals both.
fixture="$root/tests/fixtures/data/CartPole-v1.replay"
run_cmd "$GORILA" env replay python:cartpole:make <"$fixture"
expect_rc "env replay of a Python id exits 0" 0
printf '%s\n' "$out" >"$TEST_TMP/py.replay"
sed -n 's/^#> //p' "$fixture" | cut -d, -f1-7 >"$TEST_TMP/gym.replay"
"$GORILA" env replay CartPole-v1 <"$fixture" | cut -d, -f1-7 >"$TEST_TMP/c.replay"
check "831 transitions, as Gymnasium's" test "$(wc -l <"$TEST_TMP/py.replay")" -eq 831
check "each equals Gymnasium's bit for bit (obs, reward, terminated, truncated)" \
    cmp "$TEST_TMP/py.replay" "$TEST_TMP/gym.replay"
check "each equals the C CartPole-v1's bit for bit" cmp "$TEST_TMP/py.replay" "$TEST_TMP/c.replay"
check "the fixture's truncations came through the bridge" test "$(awk -F, '$7 == 1' "$TEST_TMP/py.replay" | wc -l)" -ge 1
# step_cost_us (the known per-step cost scripts/bench-pyactors runs on)
# spins without touching the state: the same 831 transitions bit for bit.
run_cmd "$GORILA" env replay python:cartpole:make --kwargs '{"step_cost_us": 20}' <"$fixture"
expect_rc "env replay with step_cost_us exits 0" 0
printf '%s\n' "$out" >"$TEST_TMP/pycost.replay"
check "step_cost_us leaves every transition bit for bit as it was" cmp "$TEST_TMP/pycost.replay" "$TEST_TMP/py.replay"

# env rollout: a Python id with --kwargs; its failure exits 9; --kwargs
# only for Python ids.
run_cmd "$GORILA" env rollout python:cartpole:make --episodes 2 --kwargs '{"max_steps": 4}'
expect_rc "env rollout of a Python id exits 0" 0
expect_contains "its kwargs reached it (4-step truncated episodes)" "$out" "       2       4.000000        4 truncated"
run_cmd "$GORILA" env rollout python:cartpole:make --episodes 5 --kwargs '{"fail_after": 30}'
expect_rc "a step that raises in env rollout exits 9" 9
expect_contains "it says so" "$err" "gorila: error: env rollout: env python:cartpole:make failed (above); stopped"
run_cmd "$GORILA" env rollout CartPole-v1 --kwargs '{}'
expect_rc "--kwargs with a registered id exits 2" 2

# env check of a Python id: the checks without state copies (two instances
# seeded alike must step alike, another seed must differ, observations of
# the space's dtype, size and bounds, finite, rewards finite, episodes end);
# the state copies' checks are skipped, saying why. Each broken fixture
# fails its check with exit 1 and one line.
run_cmd "$GORILA" env check python:cartpole:make --kwargs '{"max_steps": 40}'
expect_rc "env check of the Python CartPole exits 0" 0
expect_contains "its summary: 7 passed, none failed, 3 skipped" "$out" "python:cartpole:make: 7 passed, 0 failed, 3 skipped"
expect_contains "the kwargs reached it (its own 40-step truncations)" "$out" "truncated, lengths"
check "... some truncated" grep -qE "flags .* [1-9][0-9]* truncated" <<<"$out"
expect_contains "determinism ran on two instances" "$out" "pass  determinism  two instances seeded alike"
expect_contains "state_dim is skipped, saying why" "$out" "skip  state_dim"
expect_contains "... its state lives in Python" "$out" "not run: a Python environment's state lives in Python"
expect_contains "past_end is skipped, saying why" "$out" "skip  past_end"
expect_contains "obs_bounds is skipped without low/high" "$out" "not run: the observation_space has no low/high arrays"
run_cmd "$GORILA" env check gymnasium:StubCartPole-v1 --episodes 2
expect_rc "env check of a gymnasium: id exits 0" 0
# check_broken FIXTURE CHECK LINE: env check exits 1 and prints "FAIL  CHECK ... LINE".
check_broken() {
    run_cmd "$GORILA" env check "python:cartpole:$1" --episodes 3
    expect_rc "env check of $1 exits 1" 1
    expect_contains "$1: its $2 check fails, saying where and why" "$out" "$3"
    check "$1: only that one fails" grep -q ": [0-9]* passed, 1 failed" <<<"$out"
}
check_broken Unseeded determinism "FAIL  determinism  two instances seeded alike and stepped alike give identical trajectories: episode 1 reset: two instances with one seed and one action sequence differ: obs["
check_broken FixedSeed seed "FAIL  seed         another seed gives another trajectory: seeds 0 and 1 gave identical trajectories over 3 episodes: reset must honour its seed="
check_broken Endless flags "FAIL  flags        every episode ends; truncated never with terminated, and at env.max_episode_steps: episode 1 step 100000: no terminated or truncated after 100000 steps"
check_broken InfReward reward "FAIL  reward       every reward is finite: episode 1 step 5: step: the reward is inf (not finite)"
check_broken Float64Steps obs_dim "episode 1 step 1: step: the observation's dtype is 'd', the observation_space's 'f'"
check_broken Bounded obs_bounds "outside [-0.5, 0.5]"
run_cmd "$GORILA" env check python:cartpole:make --kwargs '{"nan_after": 30}'
expect_rc "env check of a non-finite observation exits 1" 1
expect_contains "obs_finite fails, saying which value" "$out" "FAIL  obs_finite   every observation is finite: episode "
expect_contains "... the value" "$out" "step: observation value 1 is nan (not finite)"
expect_contains "the checks it stopped short of are skipped, saying so" "$out" "skip  seed         another seed gives another trajectory (not run to the end"
run_cmd "$GORILA" env check python:cartpole:make --kwargs '{"fail_after": 30}'
expect_rc "env check of an environment whose step raises exits 1" 1
expect_contains "the API check fails, with the exception" "$out" "step: raised ValueError: fixture: step 30 fails (Python traceback above)"
expect_contains "the traceback is on stderr" "$err" "Traceback (most recent call last)"
run_cmd "$GORILA" env check python:cartpole:WrongShape
expect_rc "env check of an environment the bridge refuses at open exits 2" 2
expect_contains "one line saying why" "$err" "gorila: error: env check: env python:cartpole:WrongShape: reset: the observation has 3 values, the observation_space 4"

# config check opens the environment as a run does (the network's sizes
# come from its spaces).
printf 'run: {name: c, mode: local}\nenv: {name: "python:cartpole:make"}\n' >"$TEST_TMP/check.yaml"
run_cmd "$GORILA" config check "$TEST_TMP/check.yaml"
expect_rc "config check of a Python id exits 0" 0
expect_contains "it prints the network from the environment's spaces" "$out" "network: 4610 parameters"
run_cmd "$GORILA" config check "$TEST_TMP/check.yaml" --json
expect_contains "--json counts its parameters" "$out" '"n_params": 4610'
run_cmd "$GORILA" config check "$TEST_TMP/check.yaml" --set env.name=python:cartpole:BoxActions
expect_rc "config check of a Python environment that breaks the contract exits 2" 2
expect_contains "it says why" "$err" "action_space is Box, expected Discrete(n)"

# Seeding: the first reset of each instance gets a seed from the run seed,
# a training slot's later resets none; an evaluation slot's instance, kept
# across episodes, gets its seed again at every episode's reset, from the
# evaluation seed (the fixture writes "INSTANCE SEED" per reset; instance 0
# is the bridge's probe, which resets once without one; 1 the training
# slot, then the evaluation's and the held-out test's slots).
seeds="$TEST_TMP/seeds.txt"
: >"$seeds"
train seeds "python:cartpole:Seeds" "{\"record\": \"$seeds\"}" 600
expect_rc "a run on the Seeds fixture exits 0" 0
bad_seeds=$(awk '$1 == 0 && $2 != "None" {print "seeded probe"}
                 $1 != 0 && !n[$1]++ && $2 == "None" {print "unseeded first reset of " $1}
                 $1 != 0 && $2 != "None" {s[$1]++}
                 END {for (i in n) if (s[i] != 1 && s[i] != n[i]) print i ": " s[i] " of " n[i] " resets seeded"}' "$seeds")
expect_eq "every instance's first reset is seeded, then either none (training) or all (evaluation)" "$bad_seeds" ""
expect_eq "the training slot's first reset alone is seeded" \
    "$(awk '$1 == 1 {n++; if ($2 != "None") s++} END {print (n > 100) " " s}' "$seeds")" "1 1"
check "an evaluation slot run twice is seeded twice (the held-out test's best and final)" \
    grep -qE '^2 [0-9]+ 2$' <(awk '$1 > 1 {n[$1]++; if ($2 != "None") s[$1]++} END {for (i in n) print n[i], i, s[i]}' "$seeds")
slot_seed=$(awk '$1 == 1 {print $2; exit}' "$seeds")
check "the training slot's first reset has a seed" test -n "$slot_seed" -a "$slot_seed" != None
cp "$seeds" "$TEST_TMP/seeds-1.txt"
: >"$seeds"
rm -rf "$out_dir/seeds2" "$out_dir/seeds3" "$out_dir/long-edited"
run_cmd timeout 120 "$GORILA" train --local "$TEST_TMP/seeds.yaml" --set run.name=seeds2
check "the same run seed gives the same seeds" cmp -s "$seeds" "$TEST_TMP/seeds-1.txt"
: >"$seeds"
run_cmd timeout 120 "$GORILA" train --local "$TEST_TMP/seeds.yaml" --set run.name=seeds3 --set run.seed=2
other=$(awk '$1 == 1 {print $2; exit}' "$seeds")
check "another run seed gives another seed ($slot_seed, $other)" test "$other" != None -a "$other" != "$slot_seed"

# Evaluation makes one Python instance per slot and keeps it across
# episodes and evaluations (a constructor may be costly): a run's
# constructions do not grow with its evaluations, and `gorila eval` of more
# episodes than slots (128) makes 128 (the fixture's "made" file gets a
# line per construction).
made="$TEST_TMP/made.txt"
for n in few many; do
    : >"$made"
    every=100000
    [ $n = many ] && every=20
    train "made-$n" "python:cartpole:make" "{\"max_steps\": 5, \"made\": \"$made\"}" 900 \
        --set eval.every_updates=$every --set eval.test_episodes=2
    expect_rc "a run evaluating every $every updates exits 0" 0
    evals[$n]=$(($(wc -l <"$out_dir/made-$n/eval.csv") - 1))
    made_n[$n]=$(wc -l <"$made")
done
check "the many-evaluations run evaluated more often (${evals[few]}, ${evals[many]})" test "${evals[many]}" -ge 5
expect_eq "constructions: the probe, 1 training slot, 2 evaluation slots, 2 held-out slots" "${made_n[few]}" 6
expect_eq "... and as many with ${evals[many]} evaluations as with ${evals[few]}" "${made_n[many]}" 6
: >"$made"
run_cmd timeout 120 "$GORILA" eval "$out_dir/made-many" --episodes 200
expect_rc "gorila eval of 200 episodes exits 0" 0
expect_contains "every episode ran (5 steps each)" "$out" "200 greedy episodes (eval seed 12345): mean 5.00, std 0.00"
expect_eq "gorila eval of 200 episodes makes the probe and 128 slots" "$(wc -l <"$made")" 129

# Resume: the network, optimizer and counters continue; each slot starts
# afresh, with a seeded reset from the checkpoint's generator (not the
# run's first seed again: the resumed run does not replay its episodes).
: >"$seeds"
run_cmd timeout 120 "$GORILA" train --resume "$out_dir/seeds" --set run.max_env_steps=1200
expect_rc "a resumed run on a Python environment exits 0" 0
expect_contains "it says the environment starts afresh" "$err" \
    "python environment: resumed with a fresh reset of each slot (its state is not saved)"
expect_contains "it continues from the checkpoint" "$err" "resumed from $out_dir/seeds/checkpoints/"
check "it ran to its new budget" grep -q '"env_steps": 1200' "$out_dir/seeds/summary.json"
resumed_seed=$(awk '$1 == 1 && $2 != "None" {s = $2} END {print s}' "$seeds")
check "the resumed slot's fresh reset is seeded anew ($slot_seed, $resumed_seed)" \
    test -n "$resumed_seed" -a "$resumed_seed" != "$slot_seed"

# The checkpoint records the whole id and kwargs: another of either is
# refused (exit 4), even for ids that agree in the header's 31 bytes.
run_cmd timeout 60 "$GORILA" train --resume "$out_dir/seeds" --set run.max_env_steps=1800 \
    --set env.name=python:cartpole:make
expect_rc "a resume under another id exits 4" 4
expect_contains "one line naming both" "$err" "env differs: checkpoint has \"python:cartpole:Seeds\" with env.kwargs {\"record\""
expect_contains "... the expected one too" "$err" "expected \"python:cartpole:make\" with env.kwargs {\"record\""
run_cmd timeout 60 "$GORILA" train --resume "$out_dir/seeds" --set run.max_env_steps=1800 \
    --set 'env.kwargs="{\"record\": \"/dev/null\"}"'
expect_rc "a resume with other kwargs exits 4" 4
expect_contains "it names both kwargs" "$err" "expected \"python:cartpole:Seeds\" with env.kwargs {\"record\": \"/dev/null\"}"
train long "python:cartpole:long_named_make_one" '{}' 600
expect_rc "a run on a 35-byte id exits 0" 0
run_cmd timeout 60 "$GORILA" train --resume "$out_dir/long" --set run.max_env_steps=900 \
    --set env.name=python:cartpole:long_named_make_two
expect_rc "a resume under an id with the same first 31 bytes exits 4" 4
expect_contains "it names both whole" "$err" \
    "checkpoint has \"python:cartpole:long_named_make_one\" with env.kwargs {}, expected \"python:cartpole:long_named_make_two\""
cp -r "$out_dir/long" "$out_dir/long-edited"
sed -i 's/long_named_make_one/long_named_make_two/' "$out_dir/long-edited/config.yaml"
run_cmd timeout 60 "$GORILA" eval "$out_dir/long-edited" --episodes 1
expect_rc "gorila eval of a checkpoint of another id exits 4" 4
expect_contains "it names both" "$err" "long_named_make_two"
run_cmd timeout 60 "$GORILA" export "$out_dir/long-edited" "$TEST_TMP/long.npz"
expect_rc "gorila export of a checkpoint of another id exits 4" 4

done_testing
