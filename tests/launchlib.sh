# SPDX-License-Identifier: MIT
# launchlib.sh: what the scripts/launch tests share (sourced after lib.sh;
# $L is scripts/launch).
#
# launch_standins DIR: sets $fake to DIR and makes there a stand-in gorila
# ($GORILA is honoured by the script) that exits with the statuses listed
# in $fake/codes, one line per attempt ("KILL": dies of SIGKILL), and
# records its arguments; a stand-in mpirun in $fake/bin that only runs the
# program; and a stand-in for Open MPI's rsh agent (ssh) that records each
# call's host and command (a host listed in $fake/down refuses the
# connection).
launch_standins() {
    fake=$1
    rm -rf "$fake"
    mkdir -p "$fake/bin" "$fake/run/checkpoints/ckpt-000001"
    touch "$fake/run/checkpoints/ckpt-000001/MANIFEST"
    echo ckpt-000001 >"$fake/run/checkpoints/latest"
    cat >"$fake/gorila" <<EOF2
#!/usr/bin/env bash
[ "\$1" = config ] && { echo "ranks: 1"; exit 0; }
n=\$(( \$(cat "$fake/count" 2>/dev/null || echo 0) + 1 ))
echo \$n >"$fake/count"
echo "\$*" >>"$fake/calls"
echo "run directory: $fake/run"
code=\$(sed -n "\${n}p" "$fake/codes")
[ "\$code" = KILL ] && kill -KILL \$\$
# LOST: Open MPI's words for a node it lost; LOSTDOWN: and the host stays down.
case \$code in LOST*) echo "  Remote daemon: [[4242,0],2] on node 127.0.0.3" >&2; code=1 ;; esac
[ "\${code:-}" = 1 ] && [ "\$(sed -n "\${n}p" "$fake/codes")" = LOSTDOWN ] && echo 127.0.0.3 >"$fake/down"
exit "\${code:-0}"
EOF2
    cat >"$fake/bin/mpirun" <<EOF2
#!/usr/bin/env bash
while [ \$# -gt 0 ] && [ "\$1" != "$fake/gorila" ]; do shift; done
exec "\$@"
EOF2
    # A stand-in for Open MPI's rsh agent (ssh): records each call's host and
    # command; a host listed in $fake/down refuses the connection.
    cat >"$fake/agent" <<EOF2
#!/usr/bin/env bash
while [ "\${1#-}" != "\$1" ]; do [ "\$1" = -o ] && shift; shift; done
echo "\$*" >>"$fake/agent-calls"
if grep -qxF "\$1" "$fake/down" 2>/dev/null; then
    echo "ssh: connect to host \$1 port 22: Connection refused" >&2
    exit 255
fi
EOF2
    chmod +x "$fake/gorila" "$fake/bin/mpirun" "$fake/agent"
}

# launch_with CODES [--real-mpirun] ARGS...: run launch on the stand-in
# gorila, under the stand-in mpirun or (--real-mpirun) the one on $PATH;
# $calls is how many times it was started.
launch_with() {
    local codes=$1 path=$fake/bin:$PATH
    shift
    if [ "${1:-}" = --real-mpirun ]; then path=$PATH; shift; fi
    # shellcheck disable=SC2086 # CODES: exit statuses separated by spaces, one a line
    printf '%s\n' $codes >"$fake/codes"
    rm -f "$fake/count" "$fake/calls"
    run_cmd env PATH="$path" GORILA="$fake/gorila" "$L" configs/local/cartpole.yaml "$@"
    # shellcheck disable=SC2034 # calls: read by the scripts that source this file
    calls=$(cat "$fake/count" 2>/dev/null || echo 0)
}
