# SPDX-License-Identifier: MIT
# comparelib.sh: what the scripts/compare tests share (sourced after lib.sh;
# tests/cli/seeds.sh uses wait_for, alive and gone).
#
# wait_for WHAT CMD...: polls CMD every 0.1 s for at most 60 s; false (and
# a comment naming WHAT) when it never held. alive PID, gone PID.
wait_for() {
    local what=$1 _
    shift
    for _ in $(seq 600); do
        "$@" && return 0
        sleep 0.1
    done
    echo "# gave up waiting for $what"
    return 1
}
alive() { kill -0 "$1" 2>/dev/null; }
gone() { ! kill -0 "$1" 2>/dev/null; }
#
# compare_standins W: launcher stand-ins for $GORILA_LAUNCH in W/bin, each
# appending its arguments to W/launches: "count" then runs the job,
# "none" fails (exit 3) without running anything, "local" runs a
# --hostfile job on this machine (drops --hostfile FILE and --spread).
# launches: how many launches W/launches recorded.
compare_standins() {
    local w=$1
    mkdir -p "$w/bin"
    cat >"$w/bin/count" <<EOT
#!/usr/bin/env bash
echo "\$*" >>"$w/launches"
exec "$TEST_ROOT/scripts/launch" "\$@"
EOT
    printf '#!/usr/bin/env bash\necho "$*" >>"%s"\nexit 3\n' "$w/launches" >"$w/bin/none"
    cat >"$w/bin/local" <<EOT
#!/usr/bin/env bash
args=()
while [ \$# -gt 0 ]; do
    case \$1 in
    --hostfile) shift 2 ;;
    --spread) shift ;;
    *) args+=("\$1"); shift ;;
    esac
done
echo "\${args[*]}" >>"$w/launches"
exec "$TEST_ROOT/scripts/launch" "\${args[@]}"
EOT
    chmod +x "$w/bin/count" "$w/bin/none" "$w/bin/local"
}
launches() { if [ -f "$W/launches" ]; then wc -l <"$W/launches"; else echo 0; fi; }

# compare_slow W: a stand-in W/bin/slow for scripts/launch, a job of no MPI
# that behaves as the launcher does on signals. It appends its arguments to
# W/launches, makes its run directory (its --set run.out_dir and run.name),
# says "run directory: DIR", writes its pid to W/job.pid and runs until
# W/release exists (then summary.json of a finished run, exit 0). Its first
# SIGINT or SIGTERM (named in W/job.signals) is a clean stop: summary.json
# with stop_reason signal, exit 130; unless W/finish exists: then it ends
# as a job does that reached its end as the signal came (exit 0).
compare_slow() {
    local w=$1
    mkdir -p "$w/bin"
    cat >"$w/bin/slow" <<EOT
#!/usr/bin/env bash
echo "\$*" >>"$w/launches"
out=. name=job
for a in "\$@"; do
    case \$a in run.out_dir=*) out=\${a#run.out_dir=} ;; run.name=*) name=\${a#run.name=} ;; esac
done
dir=\$out/\$name
mkdir -p "\$dir"
echo "run directory: \$dir"
summary() {
    printf '{"stop_reason": "%s", "solved": false, "env_steps": 100, "wall_seconds": 1.0}\n' "\$1" >"\$dir/summary.json"
}
got=""
trap 'got=INT' INT
trap 'got=TERM' TERM
echo \$\$ >"$w/job.pid"
while [ ! -e "$w/release" ]; do
    if [ -n "\$got" ]; then
        echo "\$got" >>"$w/job.signals"
        [ -e "$w/finish" ] && break
        summary signal
        exit 130
    fi
    sleep 0.05
done
summary max_env_steps
exit 0
EOT
    chmod +x "$w/bin/slow"
}

# The signal tests' compare in the background (tests/cli/compare_signals.sh
# and tests/mpi/compare_signals.sh; they set W, the scratch folder, and C,
# scripts/compare).
# start_compare OUT ARGS...: scripts/compare in the background, SIGINT not
# ignored; its pid in $cpid, its output in OUT.out and OUT.err
start_compare() {
    local d=$1
    shift
    rm -f "$W/job.pid" "$W/job.signals"
    (trap - INT; exec "$C" "$@" --out "$d" >"$d.out" 2>"$d.err") &
    cpid=$!
}
# finish_compare: its exit status in $rc (the caller's, as run_cmd sets it)
finish_compare() {
    { wait "$cpid"; } 2>/dev/null
    # shellcheck disable=SC2034 # rc is read by the sourcing script
    rc=$?
}
# reap PID: a job this test started, left running (without the fix), ended
reap() { if alive "$1"; then kill -KILL "$1" 2>/dev/null; fi; }
