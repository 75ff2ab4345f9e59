# scripts/launch without starting a job (--dry-run): the rank count comes
# from the config, --oversubscribe and the root permission are added when
# needed, extra arguments pass through, bad arguments are refused.
source "$(dirname "$0")/../lib.sh"
cd "$TEST_ROOT" || exit 1
L="$TEST_ROOT/scripts/launch"

run_cmd "$L" configs/cartpole.yaml --dry-run
expect_rc "dry run: exit status 0" 0
expect_contains "dry run: -np from the config (5 ranks)" "$out" "mpirun -np 5 "
if [ "$(nproc)" -lt 5 ]; then expect_contains "dry run: oversubscribes on $(nproc) cores" "$out" "--oversubscribe"; fi
if [ "$(id -u)" -eq 0 ]; then expect_contains "dry run: root may run mpirun" "$out" "--allow-run-as-root"; fi
expect_contains "dry run: runs gorila train on the config" "$out" "gorila train configs/cartpole.yaml"

run_cmd "$L" configs/cartpole.yaml --set roles.actors=3 --set roles.replay_shards=2 --set roles.learners=2 \
    --set roles.param_servers=3 --dry-run -- --mca btl self,vader
expect_contains "dry run: uneven layout needs 11 ranks" "$out" "mpirun -np 11 "
expect_contains "dry run: --set passes on to gorila" "$out" "--set roles.param_servers=3"
expect_contains "dry run: extra mpirun arguments pass through" "$out" "--mca btl self,vader"

run_cmd "$L" configs/local/cartpole.yaml --dry-run
expect_contains "dry run: a local config is one rank" "$out" "mpirun -np 1 "

while IFS='|' read -r args want; do
    # shellcheck disable=SC2086
    run_cmd "$L" $args
    expect_rc "launch $args: exit 2" 2
    expect_contains "launch $args: message" "$err" "$want"
done <<'EOF2'
configs/cartpole.yaml --bogus|unknown option --bogus (mpirun arguments go after --)
configs/cartpole.yaml --max-restarts x|--max-restarts expects a non-negative integer, got "x"
configs/cartpole.yaml configs/acrobot.yaml|more than one config given
configs/cartpole.yaml --set roles.learners=two|roles.learners: expected a positive integer, got "two"
tests/fixtures/configs/none.yaml|none.yaml: cannot open config: No such file or directory
--resume /nonexistent-run|run directory /nonexistent-run does not exist
EOF2
run_cmd "$L"
expect_rc "launch without arguments: usage, exit 2" 2
expect_contains "launch without arguments: usage text" "$err" "scripts/launch CONFIG"

run_cmd "$L" --help
expect_rc "launch --help: exit 0" 0
expect_contains "launch --help: usage on stdout" "$out" "scripts/launch CONFIG"

# A resume runs on the run's own config.yaml: another config beside --resume
# is refused, not ignored.
run_dir="$TEST_TMP/launch-resume-run"
mkdir -p "$run_dir"
cp configs/cartpole.yaml "$run_dir/config.yaml"
run_cmd "$L" configs/acrobot.yaml --resume "$run_dir" --dry-run
expect_rc "launch CONFIG --resume RUN: exit 2" 2
expect_contains "launch CONFIG --resume RUN: says why" "$err" "give either CONFIG or --resume RUN_DIR, not both"
run_cmd "$L" --resume "$run_dir" --dry-run
expect_rc "launch --resume RUN alone: exit 0" 0
expect_contains "launch --resume RUN: trains on the run's config" "$out" "gorila train --resume $run_dir"
rm -rf "$run_dir"
done_testing
