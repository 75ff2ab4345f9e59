# SPDX-License-Identifier: MIT
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

# The shell's library and program paths go to every rank (mpirun -x), only
# those set: a libyaml or a Python environment under $HOME needs no set-up
# on each node.
run_cmd env LD_LIBRARY_PATH=/opt/x/lib PYTHONPATH=/opt/x/py VIRTUAL_ENV=/opt/x/venv "$L" configs/cartpole.yaml --dry-run
for v in LD_LIBRARY_PATH PATH PYTHONPATH VIRTUAL_ENV; do
    expect_contains "dry run: $v goes to every rank" "$out" " -x $v "
done
run_cmd env -u LD_LIBRARY_PATH -u PYTHONPATH -u VIRTUAL_ENV "$L" configs/cartpole.yaml --dry-run
expect_eq "dry run: unset variables are not forwarded" "$(grep -oE -- '-x [A-Z_]+' <<<"$out" | grep -c 'LD_LIBRARY_PATH\|PYTHONPATH\|VIRTUAL_ENV')" 0

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
configs/cartpole.yaml --dry-run --max-restarts 99999999999999999999|--max-restarts expects at most 999999999, got 99999999999999999999
configs/cartpole.yaml --dry-run -- -np 3|give no -np after --: the launcher runs as many ranks as the config's layout needs
EOF2
# Its own preconditions: a GORILA that is a directory, or that fails without
# a word; a TMPDIR it cannot use (each attempt's output went to /stdout and
# /stdout.err at the root of the file system). Nothing starts.
run_cmd env GORILA="$TEST_TMP" "$L" configs/cartpole.yaml --dry-run
expect_rc "launch with GORILA a directory: exit 2" 2
expect_contains "launch with GORILA a directory: says so" "$err" "launch: error: $TEST_TMP not found: run make first"
run_cmd env GORILA=/bin/false "$L" configs/cartpole.yaml --dry-run
expect_rc "launch with a GORILA whose config check fails silently: exit 2" 2
expect_contains "launch with a GORILA whose config check fails silently: a line says why" "$err" \
    "launch: error: '/bin/false config check' failed (exit 1) without a message"
run_cmd env TMPDIR="$TEST_TMP/no-such-dir" "$L" configs/local/cartpole.yaml --dry-run
expect_rc "launch with an unusable TMPDIR: exit 2" 2
expect_contains "launch with an unusable TMPDIR: says so" "$err" \
    "launch: error: cannot create a temporary directory in $TEST_TMP/no-such-dir: set TMPDIR to a writable directory"
check "launch with an unusable TMPDIR: no TMPDIR created (by Open MPI)" [ ! -e "$TEST_TMP/no-such-dir" ]
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

# The restart policy (--max-restarts), with the stand-ins of
# tests/launchlib.sh (a gorila that exits with the statuses asked for, an
# mpirun that only runs the program). The same through the real mpirun:
# tests/mpi/launch.sh.
source "$(dirname "$0")/../launchlib.sh"
launch_standins "$TEST_TMP/launch-restart"

# Every status of exitcode.h after which a restart would fail the same way:
# one attempt, and the reason in the header's own words.
while IFS='|' read -r code meaning; do
    launch_with "$code 0" --max-restarts 3
    expect_rc "launch: exit $code is passed on" "$code"
    expect_eq "launch: exit $code is not restarted" "$calls" 1
    expect_contains "launch: exit $code says why" "$err" "launch: not restarting: $meaning (exit $code)"
done < <(sed -n 's|^ *GORILA_EXIT_[A-Z_]* = \([2-9]\),\{0,1\} */\* \(.*\) \*/$|\1\|\2|p' src/base/exitcode.h)
expect_eq "launch: exitcode.h lists statuses 2 .. 9" \
    "$(sed -n 's|^ *GORILA_EXIT_[A-Z_]* = \([2-9]\).*|\1|p' src/base/exitcode.h | tr '\n' ' ')" "2 3 4 5 6 7 8 9 "

launch_with "1 1 0" --max-restarts 3
expect_rc "launch: exit 1 twice, then success: exit 0" 0
expect_eq "launch: exit 1 is restarted" "$calls" 3
expect_contains "launch: a restart resumes the run" "$(sed -n 2p "$fake/calls")" "train --resume $fake/run"
expect_contains "launch: a restart says so" "$err" "launch: job failed (exit 1); restart 1 of 3 from $fake/run"

launch_with "1 1 1 1" --max-restarts 2
expect_rc "launch: out of restarts: the last status" 1
expect_eq "launch: at most N restarts" "$calls" 3
expect_contains "launch: gives up" "$err" "launch: giving up after 2 restarts"

launch_with "1 5 0" --max-restarts 3
expect_rc "launch: exit 1, then divergence: exit 5" 5
expect_eq "launch: divergence after a restart ends it" "$calls" 2

launch_with "KILL 0" --max-restarts 1
expect_rc "launch: a rank killed by a signal is restarted" 0
expect_eq "launch: killed once, then done" "$calls" 2

launch_with "4"
expect_rc "launch without --max-restarts: status passed on" 4
expect_eq "launch without --max-restarts: no restart message" "$(grep -c 'not restarting' <<<"$err")" 0


# Hosts that do not answer (docs/MULTIHOST.md, "Failures"): before each
# start every remote host must answer Open MPI's rsh agent, called as Open
# MPI will call it; one that does not is named in one line and nothing
# starts. A restart after a lost host that still does not answer stops
# (no restart into it); one that answers again is restarted.
hosts_with() { # CODES DOWN ARGS...: launch_with on 2 hosts through the stand-in agent
    local codes=$1
    # shellcheck disable=SC2086 # DOWN: host names separated by spaces, one a line
    printf '%s\n' $2 >"$fake/down"
    rm -f "$fake/agent-calls"
    shift 2
    launch_with "$codes" "$@" -- --mca plm_rsh_agent "$fake/agent"
    agent_calls=$(cat "$fake/agent-calls" 2>/dev/null)
}
hosts_with "0" "127.0.0.3" --host 127.0.0.2:1,127.0.0.3:1 --no-placement
expect_rc "launch: a host that does not answer: exit 2" 2
expect_eq "launch: a host that does not answer: the job is not started" "$calls" 0
expect_contains "launch: names the host, the agent's reason and the command tried" "$err" \
    "launch: error: host 127.0.0.3 does not answer (ssh: connect to host 127.0.0.3 port 22: Connection refused; tried: $fake/agent -o ConnectTimeout=10 -o BatchMode=yes 127.0.0.3 true): the job is not started"
expect_eq "launch: the host that answers is not named" "$(grep -c 'host 127.0.0.2 does not answer' <<<"$err")" 0
expect_eq "launch: one line, no mpirun" "$(grep -c . <<<"$err")" 1
hosts_with "0" "" --host 127.0.0.2:1,127.0.0.3:1 --no-placement
expect_rc "launch: every host answers: the job runs" 0
expect_eq "launch: each remote host probed once with a command" "$(sort <<<"$agent_calls" | xargs)" \
    "127.0.0.2 true 127.0.0.3 true"
hosts_with "0" "127.0.0.3" --host 127.0.0.2:1,127.0.0.3:1 --no-placement --no-probe
expect_rc "launch --no-probe: not probed, the job runs" 0
expect_eq "launch --no-probe: the agent is not called" "$agent_calls" ""
hosts_with "0" "127.0.0.3" --host 127.0.0.2:1,127.0.0.3:1 --no-placement --dry-run
expect_eq "launch --dry-run: the hosts are not probed" "$agent_calls" ""
# Memory: with hosts given, this machine's memory does not judge the job
# (each host checks its own ranks at start-up); without, it does.
run_cmd env GORILA_MEM_LIMIT=1G "$L" configs/cartpole.yaml --set replay.capacity=100000000 --dry-run
expect_rc "launch on this machine: a job too large for its memory is refused" 2
expect_contains "launch on this machine: names the key" "$err" "replay.capacity: 100000000 needs"
run_cmd env GORILA_MEM_LIMIT=1G "$L" configs/cartpole.yaml --set replay.capacity=100000000 \
    --host 127.0.0.2:8 --no-placement --dry-run
expect_rc "launch --host: the job is not judged by this machine's memory" 0
hosts_with "0" "" --host "localhost:1,$(hostname):1,127.0.0.1:1,127.0.0.2:1" --no-placement
expect_eq "launch: this machine (by name or address) is not probed: Open MPI starts nothing through the agent there" \
    "$agent_calls" "127.0.0.2 true"
SLURM_JOB_ID=1 hosts_with "0" "127.0.0.3" --host 127.0.0.2:1,127.0.0.3:1 --no-placement
expect_eq "launch: in a Slurm allocation (Open MPI's slurm launcher) nothing is probed" "$agent_calls" ""
hosts_with "LOSTDOWN 0" "" --host 127.0.0.2:1,127.0.0.3:1 --no-placement --max-restarts 2
expect_eq "launch: a lost host that still does not answer: no restart" "$calls" 1
expect_rc "launch: a lost host that still does not answer: the job's status" 1
expect_contains "launch: names the lost host" "$err" "launch: the job lost host 127.0.0.3"
expect_contains "launch: says why it does not restart, and how to resume elsewhere" "$err" \
    "launch: not restarting: host 127.0.0.3 does not answer (ssh: connect to host 127.0.0.3 port 22: Connection refused;"
expect_contains "launch: ... with the run directory" "$err" "scripts/launch --resume $fake/run --hostfile FILE"
expect_eq "launch: ... and no restart message" "$(grep -c 'restart 1 of' <<<"$err")" 0
hosts_with "LOST 0" "" --host 127.0.0.2:1,127.0.0.3:1 --no-placement --max-restarts 2
expect_rc "launch: a lost host that answers again: restarted, exit 0" 0
expect_eq "launch: a lost host that answers again: two attempts" "$calls" 2
expect_contains "launch: says the host answers again" "$err" \
    "launch: job failed (exit 1); restart 1 of 2 from $fake/run (host 127.0.0.3 answers again)"
rm -f "$fake/down"

# A damaged `latest` does not stop a restart (gorila falls back to the
# newest intact checkpoint); no complete checkpoint at all (a directory
# without MANIFEST) does: nothing to resume from.
echo garbage >"$fake/run/checkpoints/latest"
launch_with "1 0" --max-restarts 2
expect_rc "launch: a damaged latest is still restarted from" 0
expect_eq "launch: a damaged latest: two attempts" "$calls" 2
rm "$fake/run/checkpoints/ckpt-000001/MANIFEST" "$fake/run/checkpoints/latest"
launch_with "1 0" --max-restarts 2
expect_rc "launch: failure before the first checkpoint: status passed on" 1
expect_contains "launch: failure before the first checkpoint: not restarted" "$err" "before its first checkpoint; not restarting"
# Hosts (docs/MULTIHOST.md), without starting a job: the hostfile is read
# (comments, a host named twice adds its slots), gorila config place
# computes the placement, which is printed and given to mpirun as a
# sequential mapping; ssh gets a connect timeout unless plm_rsh_args is set.
hf="$TEST_TMP/launch-hostfile"
export TMPDIR="$TEST_TMP" # a dry run keeps its sequential hostfile: here, not in /tmp
printf '# two hosts\n127.0.0.2 slots=1   # first\n\n127.0.0.3 slots=3\n127.0.0.2 slots=1\n' >"$hf"
run_cmd "$L" configs/cartpole.yaml --hostfile "$hf" --dry-run
expect_rc "launch --hostfile: dry run" 0
expect_contains "launch --hostfile: sequential mapping" "$out" "--mca rmaps seq"
expect_contains "launch --hostfile: ssh connect timeout and no password prompt" "$out" "ConnectTimeout=10"
expect_contains "launch --hostfile: placement over the 2 hosts" "$err" "launch: placement over 2 hosts"
seqf=$(sed -n 's/.*--hostfile \([^ ]*gorila-hosts[^ ]*\) .*/\1/p' <<<"$out")
expect_eq "launch --hostfile: the dry run's sequential hostfile: one host per rank in rank order" \
    "$(xargs <"${seqf:-/dev/null}")" "127.0.0.3 127.0.0.3 127.0.0.3 127.0.0.2 127.0.0.2"
expect_contains "launch --hostfile: 127.0.0.2 holds 2 slots (named twice): learner with its PS" "$err" \
    "launch:   127.0.0.2: learner 0/1, ps 0/1"
expect_contains "launch --hostfile: replay with its actor and the coordinator on 127.0.0.3" "$err" \
    "launch:   127.0.0.3: coordinator 0/1, actor 0/1, replay 0/1"
run_cmd "$L" configs/cartpole.yaml --hostfile "$hf" --dry-run -- --mca plm_rsh_args "-p 2222"
expect_eq "launch --hostfile: a user's plm_rsh_args is kept alone" "$(grep -c ConnectTimeout <<<"$out")" 0
run_cmd "$L" configs/cartpole.yaml --hostfile "$hf" --no-placement --dry-run -- --map-by node
expect_contains "launch --no-placement: the hostfile goes to mpirun as it is" "$out" "--hostfile $hf"
expect_eq "launch --no-placement: no sequential mapping" "$(grep -c 'rmaps seq' <<<"$out")" 0
# --spread: each learner and each PS shard on a host of its own (gorila
# config place --spread), the replay shard with its actor on the next.
run_cmd "$L" configs/cartpole.yaml --set roles.learners=2 --set sync.mode=allreduce --set roles.param_servers=0 \
    --host 127.0.0.2:2,127.0.0.3:2,127.0.0.4:2 --spread --dry-run
expect_rc "launch --spread: dry run" 0
expect_contains "launch --spread: says how it places" "$err" "spread: each learner and each PS shard on a host of its own"
expect_contains "launch --spread: learner 1 alone on the second host" "$err" "launch:   127.0.0.3: learner 1/2"$'\n'
expect_contains "launch --spread: replay with its actor on the third" "$err" "launch:   127.0.0.4: actor 0/1, replay 0/1"
expect_contains "launch --spread: the coordinator wraps round to learner 0's host" "$err" \
    "launch:   127.0.0.2: coordinator 0/1, learner 0/2"
run_cmd "$L" configs/cartpole.yaml --host 127.0.0.2:8 --spread --no-placement --dry-run
expect_rc "launch --spread --no-placement: refused" 2
expect_contains "launch --spread --no-placement: says so" "$err" "either --spread or --no-placement"
run_cmd "$L" configs/cartpole.yaml --spread --dry-run
expect_rc "launch --spread without hosts: refused" 2
expect_contains "launch --spread without hosts: says so" "$err" "--spread places ranks across hosts"
run_cmd "$L" configs/cartpole.yaml --host 127.0.0.2:2,127.0.0.3:2 --dry-run
expect_rc "launch --host: 4 slots for 5 ranks refused" 2
expect_contains "launch --host: says so" "$err" "the hosts have 4 slots for the job's 5 ranks"
run_cmd "$L" configs/cartpole.yaml --host 127.0.0.2:2,127.0.0.3:2 --oversubscribe --dry-run
expect_rc "launch --host --oversubscribe: accepted" 0
expect_contains "launch --host --oversubscribe: passed to mpirun" "$out" "--oversubscribe"
printf '127.0.0.2\n' >"$hf"
run_cmd "$L" configs/cartpole.yaml --hostfile "$hf" --dry-run
expect_rc "launch --hostfile: a host without slots=N refused for placement" 2
expect_contains "launch --hostfile: names the line" "$err" "line 1: 127.0.0.2 has no slots=N"
printf '127.0.0.2 slots=8 cores=4\n' >"$hf"
run_cmd "$L" configs/cartpole.yaml --hostfile "$hf" --dry-run
expect_contains "launch --hostfile: unknown field refused" "$err" "unknown field \"cores=4\""
run_cmd "$L" configs/cartpole.yaml --host 127.0.0.2:many --dry-run
expect_contains "launch --host: bad slot count refused" "$err" "--host expects HOST[:SLOTS]"
run_cmd "$L" configs/cartpole.yaml --host 127.0.0.2:8 --dry-run -- --hostfile "$hf"
expect_contains "launch: hosts given twice refused" "$err" "not also --hostfile after --"
run_cmd "$L" configs/cartpole.yaml --hostfile "$TEST_TMP/no-such-hostfile" --dry-run
expect_contains "launch: missing hostfile" "$err" "does not exist"
run_cmd "$L" configs/cartpole.yaml --hostfile "$TEST_TMP" --dry-run
expect_rc "launch: a directory as the hostfile: exit 2" 2
expect_contains "launch: a directory as the hostfile: not 'does not exist'" "$err" "hostfile $TEST_TMP is not a regular file"
printf '127.0.0.2 slots=8\r\n' >"$hf"
run_cmd "$L" configs/cartpole.yaml --hostfile "$hf" --dry-run
expect_rc "launch: a hostfile with CRLF line ends (edited on Windows): accepted" 0
expect_contains "launch: a hostfile with CRLF line ends: its 8 slots" "$err" "launch:   127.0.0.2: coordinator 0/1"

rm -rf "$fake"
done_testing
