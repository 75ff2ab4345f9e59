# SPDX-License-Identifier: MIT
# comparelib.sh: what the scripts/compare tests share (sourced after lib.sh).
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
