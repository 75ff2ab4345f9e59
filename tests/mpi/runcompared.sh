# scripts/run-compared (what `make run` runs): the distributed job's output,
# then one line against the local trainer measured now (here first on
# --local-config configs/local/cartpole.yaml). Neither solves in
# 3000 env steps here, so the line compares env steps/s: the job's figure is
# its summary.json's, and the ratio is the two printed figures' quotient.
# make run's default, configs/cartpole.yaml beside itself in one process:
# both solve, and the line gives
# seconds to solve, the job's from its summary.json. Bad input exits 2.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../mpilib.sh"
cd "$TEST_ROOT" || exit 1
RC="$TEST_ROOT/scripts/run-compared"
rm -rf "$RUNS/rc"
run_cmd timeout --kill-after=5 120 "$RC" "$SMALL" --local-config configs/local/cartpole.yaml --set run.out_dir="$RUNS" \
    --set run.name=rc --set run.max_env_steps=3000
expect_rc "run-compared: the job's exit status (0)" 0
expect_contains "run-compared: the job's own output comes through" "$out" "run directory: $RUNS/rc"
last=$(tail -1 <<<"$out")
expect_contains "run-compared: the last line names the local config and the seed" "$last" \
    "compared with the local trainer, measured now on this machine (configs/local/cartpole.yaml, seed 3;"
rate=$(jget "$RUNS/rc/summary.json" env_steps_per_second)
check "run-compared: the job's env steps/s is its summary's, the ratio the quotient ($last)" python3 -c '
import re, sys
m = re.search(r"\): ([0-9]+) env steps/s against its ([0-9]+): ([0-9.]+)x its rate$", sys.argv[1])
sys.exit(not (m and int(m.group(1)) == round(float(sys.argv[2]))
              and abs(float(m.group(3)) - float(m.group(1)) / float(m.group(2))) < 0.01 + 0.5 / float(m.group(2))))' \
    "$last" "$rate"
rm -rf "$RUNS/rcs"
run_cmd timeout --kill-after=5 180 "$RC" configs/cartpole.yaml --set run.out_dir="$RUNS" --set run.name=rcs \
    --set logging.progress=never
expect_rc "run-compared, make run's configs: exit status 0" 0
last=$(tail -1 <<<"$out")
secs=$(jget "$RUNS/rcs/summary.json" solved_at_seconds)
expect_contains "run-compared, make run's default: the same config in one process" "$last" \
    "(configs/cartpole.yaml in one process, seed 1): solved in"
check "run-compared, both solved: seconds to solve, the job's from its summary, the ratio the quotient ($last)" \
    python3 -c '
import re, sys
m = re.search(r": solved in ([0-9.]+) s \(([0-9]+) env steps\) against its ([0-9.]+) s \(([0-9]+) env steps\): "
              r"([0-9.]+)x its time$", sys.argv[1])
sys.exit(not (m and abs(float(m.group(1)) - float(sys.argv[2])) < 0.006
              and abs(float(m.group(5)) - float(m.group(1)) / float(m.group(3))) < 0.01 + 0.01 / float(m.group(3))))' \
    "$last" "${secs:-nan}"
run_cmd "$RC"
expect_rc "run-compared without a config: exit status 2" 2
run_cmd "$RC" "$SMALL" --local-config configs/local/no-such.yaml
expect_rc "run-compared with a missing local config: exit status 2" 2
expect_contains "run-compared with a missing local config: says so" "$err" "no such config configs/local/no-such.yaml"
done_testing
