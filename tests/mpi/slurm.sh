# SPDX-License-Identifier: MIT
# run-all: alone (Slurm daemons on ports of their own, in namespaces of fixed node names)
# scripts/launch inside a Slurm allocation (docs/MULTIHOST.md, "On a Slurm
# cluster"):
#  - scripts/slurm/hostfile reads node lists and tasks per node from fake
#    SLURM_* variables (no daemon needed), with its own parser and, where
#    scontrol can read a slurm.conf, the same as `scontrol show hostnames`;
#    lists it cannot read: one line, exit 2, nothing on stdout;
#  - scripts/launch --dry-run in a fake allocation: the hosts come from it
#    (placed as a hostfile's), a single node that is this host runs as on
#    one machine, --hostfile/--host override, a bad list starts nothing;
#  - a real Slurm from Debian's packages (munged, slurmctld, slurmd), all of
#    it in a temporary directory with ports of its own, started and stopped
#    by this script by pid (also on failure), runs scripts/slurm/gorila.sbatch
#    with `sbatch --wait`: in a 1-node allocation of 2 tasks and in a 3-node
#    allocation of 2 tasks each, whose nodes (127.0.0.2-4, the names of
#    tests/simcluster/hostfile-3) are three slurmd on this machine
#    (`slurmd -N NAME`: Debian's Slurm 22.05 is built to allow it), each
#    in PID and UTS namespaces of its own (hostname: the node's name, as
#    scripts/simcluster's nodes), so nothing a job started outlives it.
#    Where the packages are missing or a daemon does not start, those
#    checks are counted SKIPs with the reason. TEST_SLURM_NODES=1 runs the
#    cluster with one node, named as this host (for a Slurm built without
#    support for several slurmd on one host; the 3-node job is a SKIP).
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../mpilib.sh"
cd "$TEST_ROOT" || exit 1
# Nothing of a Slurm job this test may itself run in leaks into the fake
# allocations or the cluster below.
while read -r v; do unset "$v"; done < <(compgen -e | grep '^SLURM')
HF="$TEST_ROOT/scripts/slurm/hostfile"
L="$TEST_ROOT/scripts/launch"
SB="$TEST_ROOT/scripts/slurm/gorila.sbatch"
C=configs/cartpole.yaml
D=$(mktemp -d "$TEST_TMP/slurm.XXXXXX")
chmod 755 "$D" # munged wants its socket's directories searchable by all
HOSTFILE3="$TEST_ROOT/tests/simcluster/hostfile-3"

# --- the cluster's slurm.conf (scontrol reads it below too) ---------------
# free_ports N: N consecutive TCP ports nobody listens on, from a random base.
free_ports() {
    local base i used
    used=" $(ss -Htanl 2>/dev/null | awk '{ n = split($4, a, ":"); print a[n] }' | xargs) "
    for _ in 1 2 3 4 5 6 7 8 9 10; do
        base=$((20000 + (RANDOM * 32768 + RANDOM) % 40000))
        for ((i = 0; i < $1; i++)); do [[ $used == *" $((base + i)) "* ]] && continue 2; done
        echo "$base"
        return 0
    done
    return 1
}
port=$(free_ports 5) || port=$((20000 + RANDOM % 40000))
me=$(hostname -s)
NODES=(127.0.0.2 127.0.0.3 127.0.0.4)
[ "${TEST_SLURM_NODES:-3}" = 1 ] && NODES=("$me")
# write_conf: slurm.conf for NODES; more than one: one slurmd each on this
# machine, a port each, else a node named as this host.
write_conf() {
    local i
    mkdir -p "$D/state" "$D/spool" "$D/log"
    cat >"$D/slurm.conf" <<EOF
# A throw-away cluster on this machine (tests/mpi/slurm.sh).
ClusterName=gorilatest
SlurmctldHost=$me(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$D/munge/socket
StateSaveLocation=$D/state
SlurmdSpoolDir=$D/spool/%n
SlurmctldPidFile=$D/slurmctld.pid
SlurmdPidFile=$D/slurmd.%n.pid
SlurmctldLogFile=$D/log/slurmctld.log
SlurmdLogFile=$D/log/slurmd.%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
ReturnToService=2
InactiveLimit=0
KillWait=5
# sbatch --wait polls every 2 s when MinJobAge is below 4 s (else up to 32 s)
MinJobAge=4
EOF
    if [ ${#NODES[@]} -eq 1 ]; then
        echo "NodeName=${NODES[0]} NodeAddr=127.0.0.1 CPUs=2 State=UNKNOWN" >>"$D/slurm.conf"
    else
        for i in "${!NODES[@]}"; do
            echo "NodeName=${NODES[$i]} NodeAddr=127.0.0.1 Port=$((port + 2 + i)) CPUs=2 State=UNKNOWN"
        done >>"$D/slurm.conf"
    fi
    # (MaxTime above the job scripts' --time of an hour: a job that asks for
    # more than its partition allows stays pending, PartitionTimeLimit)
    echo "PartitionName=test Nodes=ALL Default=YES MaxTime=120 State=UP" >>"$D/slurm.conf"
}
write_conf
export SLURM_CONF="$D/slurm.conf"

# --- scripts/slurm/hostfile -----------------------------------------------
# hosts_of: HOST:SLOTS ... of the hostfile in $out
hosts_of() { awk '!/^#/ { sub(/slots=/, "", $2); printf "%s%s:%s", (n++ ? " " : ""), $1, $2 }' <<<"$out"; }
scontrol_ok=0
command -v scontrol >/dev/null && [ "$(timeout 10 scontrol show hostnames 'n[1-2]' 2>/dev/null | xargs)" = "n1 n2" ] && scontrol_ok=1
while IFS='|' read -r list tasks want; do
    run_cmd env SLURM_JOB_ID=42 SLURM_JOB_NODELIST="$list" SLURM_TASKS_PER_NODE="$tasks" "$HF" --no-scontrol
    expect_rc "hostfile $list $tasks: exit 0" 0
    expect_eq "hostfile $list $tasks: hosts and slots" "$(hosts_of)" "$want"
    expect_contains "hostfile $list $tasks: says where they came from" "$(head -1 <<<"$out")" \
        "# Slurm job 42: SLURM_JOB_NODELIST=$list SLURM_TASKS_PER_NODE=$tasks (expanded by scripts/slurm/hostfile)"
    if [ $scontrol_ok -eq 1 ]; then
        expect_eq "hostfile $list: the parser's names are scontrol's" "$(hosts_of | sed 's/:[0-9]*//g')" \
            "$(timeout 10 scontrol show hostnames "$list" | xargs)"
        run_cmd env SLURM_JOB_ID=42 SLURM_JOB_NODELIST="$list" SLURM_TASKS_PER_NODE="$tasks" "$HF"
        expect_eq "hostfile $list $tasks: the same through scontrol" "$(hosts_of)" "$want"
        expect_contains "hostfile $list $tasks: expanded by scontrol" "$out" "(expanded by scontrol show hostnames)"
    fi
done <<'EOF'
node[1-3,5],other|2(x3),1,4|node1:2 node2:2 node3:2 node5:1 other:4
n[08-11]|1(x4)|n08:1 n09:1 n10:1 n11:1
n[8-11]|2,1(x2),3|n8:2 n9:1 n10:1 n11:3
rack[1-2]-n[1-2]|3(x4)|rack1-n1:3 rack1-n2:3 rack2-n1:3 rack2-n2:3
node7|16|node7:16
127.0.0.[2-4]|2(x3)|127.0.0.2:2 127.0.0.3:2 127.0.0.4:2
a-b.c_d[9-10],x[1,3-4,7]|1,2,1(x4)|a-b.c_d9:1 a-b.c_d10:2 x1:1 x3:1 x4:1 x7:1
EOF
[ $scontrol_ok -eq 1 ] || ok "hostfile: the same through scontrol # SKIP scontrol is not installed or cannot read $SLURM_CONF"
run_cmd env SLURM_JOB_ID=7 SLURM_NODELIST='n[1-2]' SLURM_TASKS_PER_NODE='1(x2)' "$HF" --no-scontrol
expect_eq "hostfile: old Slurm's SLURM_NODELIST" "$(hosts_of)" "n1:1 n2:1"

one_error_line() { [ "$(wc -l <<<"$err")" -eq 1 ] && [[ $err == "slurm hostfile: error: "* ]]; }
# Lists and counts it cannot read: one line, exit 2, no hostfile. Through
# scontrol as scripts/launch calls it: scontrol itself prints "node]" for
# "node[1-" with status 0, so the list is checked first.
while IFS='|' read -r list tasks want; do
    run_cmd env SLURM_JOB_NODELIST="$list" SLURM_TASKS_PER_NODE="$tasks" "$HF"
    expect_rc "hostfile \"$list\" \"$tasks\": exit 2" 2
    expect_eq "hostfile \"$list\" \"$tasks\": nothing on stdout" "$out" ""
    check "hostfile \"$list\" \"$tasks\": one error line" one_error_line
    expect_contains "hostfile \"$list\" \"$tasks\": says why" "$err" "$want"
done <<'EOF'
node[1-|1|SLURM_JOB_NODELIST "node[1-" cannot be read: a [ without its ]
node]|1|SLURM_JOB_NODELIST "node]" cannot be read: a ] without its [
n[[1]]|1|cannot be read: a [ inside brackets
n[3-1]|1|cannot be read: the range 3-1 goes down
n[a-b]|1|cannot be read: "a-b" in [a-b] is not a number or a range N-M
n[]|1|cannot be read: an empty range []
n[1,]|1|cannot be read: an empty range in [1,]
a,,b|1(x2)|cannot be read: an empty name (two commas, or one at an end)
n 1|1|cannot be read: unexpected " " in "n 1"
n[1-999999]|1|cannot be read: it names more than 65536 hosts
n[1-2]|1|SLURM_JOB_NODELIST "n[1-2]" names 2 nodes but SLURM_TASKS_PER_NODE "1" counts tasks for 1
n1|2(x|SLURM_TASKS_PER_NODE "2(x" cannot be read: "2(x" is not N or N(xK)
n1|0|SLURM_TASKS_PER_NODE "0" cannot be read: "0" counts no task
n1||SLURM_TASKS_PER_NODE is not set or empty
|1|SLURM_JOB_NODELIST is not set or empty
EOF

# --- scripts/launch --dry-run in a fake allocation ------------------------
# fake LIST TASKS LAUNCH-ARGS...: run_cmd scripts/launch in Slurm job 42.
fake() {
    local list=$1 tasks=$2
    shift 2
    run_cmd env TMPDIR="$D" SLURM_JOB_ID=42 SLURM_JOB_NODELIST="$list" SLURM_TASKS_PER_NODE="$tasks" "$L" "$@"
}
# (TMPDIR: the hostfiles a dry run keeps go with $D)
# placement: the placement lines of $err; seqfile: the kept sequential hostfile's contents
placement() { grep '^launch:   [^ ]*: \|^launch: placement over' <<<"$err"; }
seqfile() { sed -n 's/^launch: dry run: the sequential hostfile \(.*\) is kept.*/\1/p' <<<"$err" | xargs cat 2>/dev/null; }

run_cmd env TMPDIR="$D" "$L" "$C" --dry-run --hostfile "$HOSTFILE3"
want_place=$(placement)
want_seq=$(seqfile)
fake '127.0.0.[2-4]' '2(x3)' "$C" --dry-run
expect_rc "launch in a 3-node allocation: exit 0" 0
expect_contains "launch in a 3-node allocation: says it uses the allocation" "$err" \
    "launch: inside Slurm job 42: hosts 127.0.0.2:2 127.0.0.3:2 127.0.0.4:2 from SLURM_JOB_NODELIST"
expect_eq "launch in a 3-node allocation: placed as over tests/simcluster/hostfile-3" "$(placement)" "$want_place"
expect_eq "launch in a 3-node allocation: the same rank per host" "$(seqfile)" "$want_seq"
expect_contains "launch in a 3-node allocation: a sequential mapping" "$out" "--mca rmaps seq"

fake 'node[1-3,5],other' '2(x3),1,4' "$C" --dry-run --spread --set roles.learners=2
expect_rc "launch, nodes whose names do not resolve here: exit 0 (Slurm reaches them)" 0
expect_contains "launch, node list with ranges: all its hosts" "$err" \
    "hosts node1:2 node2:2 node3:2 node5:1 other:4 from SLURM_JOB_NODELIST"
expect_contains "launch --spread in an allocation: spread placement" "$err" "launch: placement over 5 hosts (spread"

fake 'node[1-3]' '2(x3)' "$C" --dry-run --no-placement
kept=$(sed -n "s/^launch: dry run: the allocation's hostfile \(.*\) is kept$/\1/p" <<<"$err")
expect_contains "launch --no-placement in an allocation: mpirun gets its hostfile" "$out" "--hostfile $kept "
expect_eq "launch --no-placement: the allocation's hostfile" "$(grep -v '^#' "$kept" 2>/dev/null | xargs)" \
    "node1 slots=2 node2 slots=2 node3 slots=2"

fake "$me" 2 "$C" --dry-run
expect_rc "launch, one node that is this host: exit 0" 0
expect_contains "launch, one node that is this host: says it runs here" "$err" \
    "launch: inside Slurm job 42: host $me:2 from SLURM_JOB_NODELIST, this host: the job runs here (oversubscribed: 5 ranks on 2 tasks)"
check "launch, one node that is this host: no hostfile (no rsh)" [ "${out/--hostfile/}" = "$out" ]
expect_contains "launch, one node that is this host: 5 ranks on 2 tasks oversubscribe" "$out" "mpirun -np 5 --oversubscribe "
run_cmd env TMPDIR="$D" SLURM_JOB_ID=42 SLURM_JOB_NODELIST=cn17 SLURM_TASKS_PER_NODE=8 SLURMD_NODENAME=cn17 "$L" "$C" --dry-run
expect_contains "launch, one node named by SLURMD_NODENAME: runs here" "$err" "host cn17:8 from SLURM_JOB_NODELIST, this host: the job runs here"
expect_eq "launch, one node of 8 tasks: no hostfile, no oversubscription" "$(grep -c -- '--hostfile\|--oversubscribe' <<<"$out")" 0
fake cn17 8 "$C" --dry-run
expect_contains "launch, one node that is another host: its hostfile" "$err" "launch: inside Slurm job 42: hosts cn17:8 from SLURM_JOB_NODELIST"
expect_contains "launch, one node that is another host: mpirun gets hosts" "$out" "--hostfile "

fake 'node[1-3]' '2(x3)' "$C" --dry-run --hostfile "$HOSTFILE3"
expect_contains "launch --hostfile in an allocation: overrides it" "$err" \
    "launch: inside Slurm job 42: hosts from --hostfile $HOSTFILE3, not from the allocation"
expect_eq "launch --hostfile in an allocation: the hostfile's placement" "$(placement)" "$want_place"
fake 'node[1-3]' '2(x3)' "$C" --dry-run --host 127.0.0.2:5
expect_contains "launch --host in an allocation: overrides it" "$err" "hosts from --host 127.0.0.2:5, not from the allocation"
fake 'node[1-3]' '2(x3)' "$C" --dry-run --no-placement -- --host 127.0.0.2:5
expect_contains "launch -- --host in an allocation: overrides it" "$err" "hosts from --host after --, not from the allocation"
expect_eq "launch -- --host in an allocation: no allocation hostfile" "$(grep -c -- '--hostfile' <<<"$out")" 0

fake 'node[1-2]' '2(x2)' "$C" --dry-run
expect_rc "launch, 4 tasks for 5 ranks: exit 2" 2
expect_contains "launch, 4 tasks for 5 ranks: says so" "$err" "4 slots for the job's 5 ranks"

# A list it cannot read: one line, exit 2, no job (a real run, not a dry one).
rm -rf "$RUNS/slurm-bad"
fake 'node[1-' 2 "$C" --set run.name=slurm-bad --set run.out_dir="$RUNS"
expect_rc "launch, a node list it cannot read: exit 2" 2
expect_eq "launch, a node list it cannot read: one line" "$err" \
    "launch: error: inside Slurm job 42: SLURM_JOB_NODELIST \"node[1-\" cannot be read: a [ without its ]; nothing started"
check "launch, a node list it cannot read: no run directory" [ ! -e "$RUNS/slurm-bad" ]
fake 'n[1-2]' 2 "$C" --set run.name=slurm-bad --set run.out_dir="$RUNS"
expect_contains "launch, tasks for fewer nodes than listed: exit 2, says so" "$rc $err" \
    "2 launch: error: inside Slurm job 42: SLURM_JOB_NODELIST \"n[1-2]\" names 2 nodes but SLURM_TASKS_PER_NODE \"2\" counts tasks for 1; nothing started"

# The job script, run as Slurm would (a copy, from elsewhere): it finds the
# clone by the submit directory and refuses what it cannot run.
cp "$SB" "$D/job-script"
run_cmd env -C / SLURM_JOB_ID=42 SLURM_SUBMIT_DIR="$D" bash "$D/job-script" "$C"
expect_rc "gorila.sbatch submitted from outside a clone: exit 2" 2
expect_contains "gorila.sbatch submitted from outside a clone: says so" "$err" "gorila.sbatch: error: $D/scripts/launch not found: submit from the root of a gorila clone, or set GORILA_ROOT"
run_cmd env -C / SLURM_JOB_ID=42 SLURM_SUBMIT_DIR="$TEST_ROOT" bash "$D/job-script"
expect_rc "gorila.sbatch without arguments: exit 2" 2
expect_contains "gorila.sbatch without arguments: says so" "$err" "gorila.sbatch: error: no arguments"
run_cmd env -C / SLURM_JOB_ID=42 GORILA_ROOT="$TEST_ROOT" bash "$D/job-script" --dry-run "$TEST_ROOT/$C"
expect_contains "gorila.sbatch: GORILA_ROOT names the clone" "$rc $out" "0 mpirun -np 5 "

# --- a real Slurm ---------------------------------------------------------
# Every daemon: started by this script, in the background, under a timeout
# that ends it even if this script is killed outright (SIGKILL runs no
# trap); stopped by its pid on every exit (cleanup), after the cluster's
# jobs are cancelled. Long waits (sbatch) run in the background, so that a
# SIGTERM (tests/run-all's timeout) gets to the trap at once.
LIFETIME=270
pids=()
sb_pid=0
ctld=0
cleanup() {
    local p end ids
    [ "$sb_pid" -gt 0 ] && kill "$sb_pid" 2>/dev/null && wait "$sb_pid" 2>/dev/null
    sb_pid=0
    if [ "$ctld" -gt 0 ] && kill -0 "$ctld" 2>/dev/null; then
        ids=$(timeout 5 squeue -h -o %i 2>/dev/null | xargs)
        if [ -n "$ids" ]; then
            # shellcheck disable=SC2086 # job ids, one word each
            timeout 10 scancel $ids 2>/dev/null
            end=$((SECONDS + 15))
            while [ $SECONDS -lt $end ] && [ -n "$(timeout 5 squeue -h -o %i 2>/dev/null)" ]; do sleep 0.5; done
        fi
    fi
    # Last started, first stopped: the slurmds (each takes its PID namespace,
    # and any job step left in it, with it), slurmctld, munged.
    for ((i = ${#pids[@]} - 1; i >= 0; i--)); do kill "${pids[$i]}" 2>/dev/null; done
    end=$((SECONDS + 10))
    for p in ${pids[@]+"${pids[@]}"}; do
        while kill -0 "$p" 2>/dev/null && [ $SECONDS -lt $end ]; do sleep 0.1; done
        kill -KILL "$p" 2>/dev/null
        wait "$p" 2>/dev/null
    done
    pids=()
    ctld=0
}
trap 'cleanup' EXIT
trap 'exit 143' TERM
trap 'exit 130' INT
# skip_cluster WHY: the cluster's checks, each a counted SKIP.
skip_cluster() {
    cleanup
    ok "a job in a 1-node allocation (sbatch --wait scripts/slurm/gorila.sbatch) # SKIP $1"
    ok "a job in a 3-node allocation (sbatch --wait scripts/slurm/gorila.sbatch) # SKIP $1"
    ok "the resume chain of gorila.sbatch (GORILA_CHAIN) # SKIP $1"
    ok "the srun route (scripts/slurm/gorila-srun.sbatch) # SKIP $1"
    [ "$tap_fail" -eq 0 ] && rm -rf "$D"
    done_testing
    exit
}
missing=""
for c in munged munge unmunge slurmctld slurmd sbatch scontrol sinfo squeue scancel unshare; do
    command -v "$c" >/dev/null || missing+=" $c"
done
[ -z "$missing" ] || skip_cluster "not installed:$missing (Debian: apt-get install munge slurmctld slurmd slurm-client; scripts/install-deps.sh)"
[ "$(id -u)" -eq 0 ] || skip_cluster "the daemons run as root here (slurmd starts jobs as their user)"
# up_within SECONDS READY PID...: poll READY until it succeeds (true), or
# until SECONDS pass or one of the PIDs (the daemons it waits for) is gone
# (false).
up_within() {
    local end=$((SECONDS + $1)) ready=$2 p
    shift 2
    until "$ready"; do
        for p in "$@"; do kill -0 "$p" 2>/dev/null || return 1; done
        [ $SECONDS -ge $end ] && return 1
        sleep 0.2
    done
}
# why LOG...: the last error line of the first LOG that has one, else its
# last line, for a SKIP.
why() {
    local f w
    for f in "$@"; do
        w=$(grep -i 'error\|fatal\|failed' "$f" 2>/dev/null | tail -1)
        [ -n "$w" ] || w=$(tail -n 1 "$f" 2>/dev/null)
        [ -n "$w" ] && { tr -d '\r' <<<"$w" | cut -c1-200; return; }
    done
}
ns_why=$(unshare --pid --fork --mount-proc --kill-child --uts true 2>&1) ||
    skip_cluster "each slurmd runs in PID and UTS namespaces of its own, refused here: ${ns_why:-unshare failed}"

# munged: its own key (generated here), socket, pid and seed files.
mkdir -p "$D/munge" "$D/munge-key"
chmod 755 "$D/munge"
chmod 700 "$D/munge-key"
dd if=/dev/urandom of="$D/munge-key/munge.key" bs=1024 count=1 2>/dev/null
chmod 400 "$D/munge-key/munge.key"
timeout "$LIFETIME" munged --foreground --key-file="$D/munge-key/munge.key" --socket="$D/munge/socket" \
    --pid-file="$D/munge/munged.pid" --seed-file="$D/munge-key/seed" --log-file="$D/log/munged.log" \
    >"$D/log/munged.out" 2>&1 &
pids+=($!)
munge_ok() { timeout 5 munge -S "$D/munge/socket" -n </dev/null 2>/dev/null | timeout 5 unmunge -S "$D/munge/socket" >/dev/null 2>&1; }
up_within 20 munge_ok "${pids[0]}" || skip_cluster "munged did not start: $(why "$D/log/munged.out")"

# slurmctld: state, pid and log files under $D (slurm.conf).
timeout "$LIFETIME" slurmctld -D -i -f "$SLURM_CONF" >"$D/log/slurmctld.out" 2>&1 &
ctld=$!
pids+=("$ctld")
ctld_ok() { timeout 5 scontrol ping 2>/dev/null | grep -q 'is UP'; }
up_within 30 ctld_ok "$ctld" || skip_cluster "slurmctld did not start: $(why "$D/log/slurmctld.out" "$D/log/slurmctld.log")"

# One slurmd per node, each as the child of a shell that is the first
# process of a PID namespace of its own (with its /proc, which
# proctrack/linuxproc reads): when that shell goes, the kernel ends every
# process in the namespace, job steps included; the shell also reaps the
# slurmstepd that slurmd leaves to it. Several nodes: each also in a UTS
# namespace whose hostname is the node's name, as scripts/simcluster's
# nodes are, so that Open MPI's session directories and shared-memory
# files (named by host and pid) of one node are not another's.
for n in "${NODES[@]}"; do
    mkdir -p "$D/spool/$n"
    ns=(--pid --fork --mount-proc --kill-child)
    host=""
    tmp=""
    nopt=()
    # Several nodes: each also its own /tmp (a directory of $D bound over it
    # in the node's mount namespace), as real nodes have: Slurm's PMIx
    # plugin makes /tmp/spmix_appdir_UID_JOB.STEP on every node of a step.
    [ ${#NODES[@]} -gt 1 ] && ns+=(--uts) host=$n tmp="$D/nodetmp/$n" nopt=(-N "$n")
    [ -z "$tmp" ] || { mkdir -p "$tmp"; chmod 1777 "$tmp"; }
    timeout "$LIFETIME" unshare "${ns[@]}" bash -c '[ -z "$1" ] || hostname "$1" || exit 1
        [ -z "$2" ] || mount --bind "$2" /tmp || exit 1; shift 2; slurmd "$@" & wait $!' \
        slurmd-ns "$host" "$tmp" -D -f "$SLURM_CONF" "${nopt[@]}" >"$D/log/slurmd.$n.out" 2>&1 &
    pids+=($!)
done
nodes_idle() { [ "$(timeout 5 sinfo -h -N -o '%N %t' 2>/dev/null | awk '$2 == "idle"' | wc -l)" -eq ${#NODES[@]} ]; }
if ! up_within 30 nodes_idle "${pids[@]}"; then
    w=""
    for n in "${NODES[@]}"; do w=$(why "$D/log/slurmd.$n.out" "$D/log/slurmd.$n.log"); [ -n "$w" ] && break; done
    skip_cluster "slurmd did not start on ${NODES[*]}: ${w:-$(timeout 5 sinfo -h -N -o '%N %t %E' 2>/dev/null | xargs)}"
fi
echo "# Slurm $(sinfo -V 2>/dev/null | awk '{ print $2 }'): nodes $(timeout 5 sinfo -h -o %N) up, ports $port-$((port + 4)), in $D"

# submit NAME SBATCH-ARGS... -- GORILA-ARGS...: sbatch --wait the job
# script ($SB, or SCRIPT=path) with a run of 3000 env steps named NAME, 90 s
# at most; $out: the job's output, $rc: sbatch's status (the job's), $job:
# its id, $RUN: the run directory. WHEN_STARTED: a command run (with the job
# id) once the job's output names its run directory.
submit() {
    local name=$1 sargs=() t0 o
    o="$D/$name.out"
    shift
    while [ $# -gt 0 ] && [ "$1" != -- ]; do sargs+=("$1"); shift; done
    shift
    RUN="$RUNS/$name"
    rm -rf "$RUN"
    t0=$(date +%s.%N)
    timeout -k 5 90 sbatch --wait "${sargs[@]}" -o "$o" -J "$name" "${SCRIPT:-$SB}" "$C" \
        --set run.max_env_steps=3000 --set run.stop_when_solved=false --set run.name="$name" --set run.out_dir="$RUNS" "$@" \
        >"$D/$name.sbatch" 2>&1 &
    sb_pid=$!
    if [ -n "${WHEN_STARTED:-}" ]; then
        local end=$((SECONDS + 60)) id=""
        while kill -0 "$sb_pid" 2>/dev/null && [ $SECONDS -lt $end ]; do
            id=$(sed -n 's/^Submitted batch job \([0-9]*\).*/\1/p' "$D/$name.sbatch" 2>/dev/null)
            [ -n "$id" ] && grep -q '^run directory: ' "$o" 2>/dev/null && { sleep 2; $WHEN_STARTED "$id"; break; }
            sleep 0.2
        done
    fi
    wait "$sb_pid"
    rc=$?
    sb_pid=0
    out=$(cat "$o" 2>/dev/null)
    job=$(sed -n 's/^Submitted batch job \([0-9]*\).*/\1/p' "$D/$name.sbatch")
    echo "# $name: Slurm job ${job:-?}, sbatch --wait exit $rc after $(elapsed "$t0") s"
    if [ "$rc" -ne 0 ]; then
        while IFS= read -r line; do echo "#   $line"; done < <(tail -n 15 "$o" "$D/$name.sbatch" "$D/log/slurmctld.log" 2>/dev/null)
        # (timed out: the job must not hold the nodes the next one needs)
        [ -n "$job" ] && timeout 10 scancel "$job" 2>/dev/null
    fi
}
# run_ok NAME: the run directory of $RUN is complete.
run_ok() {
    local s="$RUN/summary.json"
    check "$1: summary.json written" [ -f "$s" ]
    [ -f "$s" ] || return
    expect_eq "$1: stopped by the budget of 3000 env steps" "$(jget "$s" stop_reason)" budget
    check "$1: a final checkpoint" [ -f "$RUN/$(jget "$s" final_checkpoint)/MANIFEST" ]
}

# A 1-node allocation of 2 tasks: on this host, as the single-host run.
one=${NODES[0]}
submit slurm-1node -N 1 -n 2 -w "$one" --
expect_rc "1-node allocation: sbatch --wait exit status 0" 0
expect_contains "1-node allocation: launch says it runs on the node, oversubscribed" "$out" \
    "host $one:2 from SLURM_JOB_NODELIST, this host: the job runs here (oversubscribed: 5 ranks on 2 tasks)"
expect_contains "1-node allocation: mpirun without hosts" "$out" "launch: mpirun -np 5 --oversubscribe "
run_ok "1-node allocation"

# A 3-node allocation of 2 tasks each: placed as over tests/simcluster/hostfile-3.
if [ ${#NODES[@]} -eq 1 ]; then
    ok "a job in a 3-node allocation # SKIP one slurmd only (TEST_SLURM_NODES=1)"
else
    submit slurm-3node -N 3 --ntasks-per-node=2 -- -- --display-map
    expect_rc "3-node allocation: sbatch --wait exit status 0" 0
    expect_contains "3-node allocation: launch says it uses the allocation" "$out" \
        "launch: inside Slurm job $job: hosts 127.0.0.2:2 127.0.0.3:2 127.0.0.4:2 from SLURM_JOB_NODELIST"
    err=$out
    expect_eq "3-node allocation: placed as over tests/simcluster/hostfile-3" "$(placement)" "$want_place"
    expect_eq "3-node allocation: ranks on all 3 nodes" "$(nodes_used)" "${NODES[*]}"
    expect_eq "3-node allocation: each rank on its placed node" "$(where_ranks | awk '{ print $2 }')" "$want_seq"
    run_ok "3-node allocation"
fi

# chain_wait NAME: the job the last one's output says goes on with the run
# ("the run goes on in job N"): wait for it to end (90 s at most); $out:
# its output, $job2: its id.
chain_wait() {
    local end=$((SECONDS + 90))
    job2=$(sed -n 's/.*the run goes on in job \([0-9]*\).*/\1/p' <<<"$out" | head -1)
    out=""
    [ -n "$job2" ] || return 1
    while [ -n "$(timeout 5 squeue -h -j "$job2" -o %i 2>/dev/null)" ] && [ $SECONDS -lt $end ]; do sleep 0.5; done
    out=$(cat "$D/chain-$job2.out" 2>/dev/null)
    echo "# $1: the next job of the chain, $job2, ended (output $D/chain-$job2.out)"
}
# check_chain NAME RESUMED: the job in $out was stopped by the signal with a
# final checkpoint and submitted the next, which resumed the run (its
# output has RESUMED) and ran it to its time budget; no third job.
check_chain() {
    expect_rc "$1: the stopped job exits 0" 0
    expect_eq "$1: stopped by the signal" "$(jget "$RUN/summary.json" stop_reason)" signal
    expect_contains "$1: it submitted the next job" "$out" "stopped with a final checkpoint; the run goes on in job "
    chain_wait "$1"
    check "$1: the next job was submitted (job ${job2:-none})" [ -n "$job2" ]
    expect_contains "$1: the next job resumed the run" "$out" "$2"
    expect_eq "$1: the resumed run ended by its time budget" "$(jget "$RUN/summary.json" stop_reason)" time
    check "$1: a final checkpoint" [ -f "$RUN/$(jget "$RUN/summary.json" final_checkpoint)/MANIFEST" ]
    check "$1: no other run directory (${RUN}-2)" [ ! -e "$RUN-2" ]
    expect_eq "$1: no third job" "$(timeout 5 squeue -h -o %i 2>/dev/null | xargs)" ""
}
# The time limit's signal, at once: to the batch script (gorila.sbatch,
# --signal=B:TERM) or to every rank (gorila-srun.sbatch, --signal=TERM).
sig_batch() { timeout 10 scancel --batch --signal=TERM "$1"; }
sig_steps() { timeout 10 scancel --signal=TERM "$1"; }
# A run with a time budget of 10 s over all its jobs (run.max_seconds
# counts from the first) and no env-step budget.
CHAIN_SETS=(--set run.max_env_steps=0 --set run.max_seconds=10 --set run.stop_when_solved=false)
export GORILA_CHAIN_OPTS="-o $D/chain-%j.out"

# The resume chain (mpirun route): the batch script passes the signal to
# scripts/launch, the job stops with a final checkpoint, and with
# GORILA_CHAIN=1 the script submits `--resume RUN_DIR`.
GORILA_CHAIN=1 WHEN_STARTED=sig_batch submit slurm-chain -N 1 -n 2 -w "$one" -- "${CHAIN_SETS[@]}"
check_chain "gorila.sbatch chain" "gorila train --resume $RUN"

# The srun route: srun --mpi=pmix starts the ranks, placed over the nodes.
pmix=$(timeout 10 srun --mpi=list 2>&1)
if ! grep -qw pmix <<<"$pmix"; then
    ok "the srun route (scripts/slurm/gorila-srun.sbatch) # SKIP Slurm has no PMIx plugin (mpi_pmix.so): srun --mpi=list: $(xargs <<<"$pmix" | cut -c1-150)"
elif [ ${#NODES[@]} -eq 1 ]; then
    ok "the srun route (scripts/slurm/gorila-srun.sbatch) # SKIP one slurmd only (TEST_SLURM_NODES=1)"
else
    SRB="$TEST_ROOT/scripts/slurm/gorila-srun.sbatch"
    SCRIPT=$SRB submit slurm-srun -N 3 --ntasks-per-node=2 --
    expect_rc "srun route, 3 nodes: sbatch --wait exit status 0" 0
    expect_contains "srun route: srun --mpi=pmix, the config's 5 ranks, placed" "$out" \
        "srun --mpi=pmix -n 5 --kill-on-bad-exit=1 --distribution=arbitrary $TEST_ROOT/build/gorila train $C"
    expect_eq "srun route: placed as scripts/launch places them" \
        "$(grep '^gorila-srun.sbatch:   ' <<<"$out" | sed 's/^gorila-srun.sbatch:/launch:/')" \
        "$(grep '^launch:   ' <<<"$want_place")"
    run_ok "srun route"
    SCRIPT=$SRB submit slurm-srun-few -N 1 -n 2 -w "$one" --
    expect_rc "srun route, 2 tasks for 5 ranks: exit 2" 2
    expect_contains "srun route, 2 tasks for 5 ranks: says so" "$out" \
        "gorila-srun.sbatch: error: the job needs 5 ranks but Slurm job $job has 2 tasks: sbatch --ntasks=5 (or more)"
    GORILA_CHAIN=1 SCRIPT=$SRB WHEN_STARTED=sig_steps submit slurm-srun-chain -N 3 --ntasks-per-node=2 -- "${CHAIN_SETS[@]}"
    check_chain "gorila-srun.sbatch chain" "srun --mpi=pmix -n 5 --kill-on-bad-exit=1 --distribution=arbitrary $TEST_ROOT/build/gorila train --resume $RUN"
fi
cleanup
left=$(pgrep -f -- "$D" | xargs)
check "the daemons and their jobs are gone${left:+ (left: $left)}" [ -z "$left" ]
[ "$tap_fail" -eq 0 ] && rm -rf "$D"
done_testing
