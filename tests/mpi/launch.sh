# SPDX-License-Identifier: MIT
# scripts/launch's restart policy through the real mpirun (the stand-in
# cases are tests/cli/launch.sh): the exit status mpirun passes on is
# gorila's (exit 4 comes through and is not restarted), and a rank killed
# by a signal (137) is restarted. gorila is the stand-in of
# tests/launchlib.sh, started by mpirun as one rank.
source "$(dirname "$0")/../lib.sh"
cd "$TEST_ROOT" || exit 1
L="$TEST_ROOT/scripts/launch"
source "$(dirname "$0")/../launchlib.sh"
launch_standins "$TEST_TMP/launch-restart"

launch_with "4 0" --real-mpirun --max-restarts 2
expect_rc "launch under mpirun: exit 4 comes through and is not restarted" 4
expect_eq "launch under mpirun: one attempt" "$calls" 1
launch_with "KILL 0" --real-mpirun --max-restarts 2
expect_rc "launch under mpirun: a killed rank is restarted" 0
expect_eq "launch under mpirun: two attempts" "$calls" 2
done_testing
