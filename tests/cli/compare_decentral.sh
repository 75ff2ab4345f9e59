# SPDX-License-Identifier: MIT
# scripts/compare with the decentralized modes, without a job (the real
# matrix is tests/mpi/compare_decentral.sh): the layout of each mode under
# --allreduce-impls and --param-servers (through a launcher stand-in that
# runs nothing), each mode given only its own sync keys of --set, and bad
# input refused before anything starts: exit 2, one line.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../comparelib.sh"
cd "$TEST_ROOT" || exit 1
C="$TEST_ROOT/scripts/compare"
W="$TEST_TMP/compare_decentral"
rm -rf "$W"
t0=$SECONDS
FX=tests/fixtures/configs/mpi-small.yaml
small=("$FX" --set run.max_env_steps=6000)

# the launcher stand-ins and launches (tests/comparelib.sh)
compare_standins "$W"

# ---- each mode's layout under --allreduce-impls and --param-servers ----------------------
rm -f "$W/launches"
run_cmd env GORILA_LAUNCH="$W/bin/none" "$C" "${small[@]}" --modes gossip,local_sgd,easgd --learners 2 --seeds 1 \
    --allreduce-impls ring,naive --param-servers 1,2 --out "$W/layout"
expect_rc "layouts: exit status 0 (the stand-in's cells fail)" 0
expect_eq "layouts: one job per gossip cell, per local_sgd algorithm, per easgd P" "$(launches)" 5
expect_eq "layouts: each cell's mode, parameter servers and algorithm" \
    "$(sed 's/.*sync.mode=\([a-z_]*\) .*roles.param_servers=\([0-9]*\)\( --set sync.allreduce_impl=\([a-z]*\)\)\{0,1\} .*run.name=\([^ ]*\) .*/\5 P\2 \4/' "$W/launches" | tr '\n' ';')" \
    "gossip-L2-s1 P0 ;local_sgd-ring-L2-s1 P0 ring;local_sgd-naive-L2-s1 P0 naive;easgd-L2-P1-s1 P1 ;easgd-L2-P2-s1 P2 ;"
expect_contains "layouts: the report's tables name P and the algorithm" "$(cat "$W/layout/report.md")" \
    "| local_sgd (naive) | 2 | 0 | 0/1 (1 failed) |"
expect_contains "layouts: the failed cells are listed as failed" "$(cat "$W/layout/report.md")" \
    "- easgd, 2 learners, 2 parameter servers, seed 1: failed (exit 3)"

# ---- each mode gets only the sync keys it uses (docs/CONFIG.md "sync") --------------------
# gorila refuses a mode-specific sync key set under another mode (unless at
# its default): every such --set goes only to the cells of its modes, any
# other key to every cell. The table below is CONFIG.md's, not the script's.
rm -f "$W/launches"
run_cmd env GORILA_LAUNCH="$W/bin/none" "$C" "${small[@]}" --learners 2 --seeds 1 --out "$W/keys" \
    --set sync.staleness=2 --set sync.learner_pull_every=2 --set sync.gossip_every=3 --set sync.gossip_topology=ring \
    --set sync.easgd_every=5 --set sync.easgd_alpha=0.25 --set sync.average_every=6 --set sync.allreduce_impl=naive \
    --set optimizer.lr=0.002
expect_rc "sync keys: exit status 0 (the stand-in's cells fail)" 0
expect_eq "sync keys: one job per mode" "$(launches)" 7
keys_of() { # the sync keys but sync.mode, and optimizer.lr, of each launch: "mode: key key ..."
    awk '{ m = ""; k = ""
        for (i = 1; i <= NF; i++) {
            if ($i ~ /^sync\.mode=/) m = substr($i, 11)
            else if ($i ~ /^(sync\.|optimizer\.lr=)/) { sub(/=.*/, "", $i); k = k " " $i }
        }
        print m ":" k }' "$W/launches" | sort
}
expect_eq "sync keys: each mode's own, and the other keys everywhere" "$(keys_of)" "$(sort <<'EOF'
ps_sync: optimizer.lr
ps_async: sync.learner_pull_every optimizer.lr
ps_bounded: sync.staleness sync.learner_pull_every optimizer.lr
allreduce: sync.allreduce_impl optimizer.lr
gossip: sync.gossip_every sync.gossip_topology optimizer.lr
easgd: sync.easgd_every sync.easgd_alpha optimizer.lr
local_sgd: sync.average_every sync.allreduce_impl optimizer.lr
EOF
)"
rm -f "$W/launches"
run_cmd env GORILA_LAUNCH="$W/bin/none" "$C" "${small[@]}" --modes ps_sync --learners 1 --seeds 1 --out "$W/keys1" \
    --set sync.gossip_every=3
expect_rc "sync keys: a key no mode of --modes uses: exit status 0" 0
expect_contains "sync keys: ... said" "$err" \
    "--set sync.gossip_every=3: only gossip uses sync.gossip_every, and --modes has no gossip, so it changes nothing"
expect_eq "sync keys: ... and not passed" "$(launches)/$(grep -c gossip_every "$W/launches")" "1/0"

# ---- bad input: exit 2, one line, nothing started ------------------------------------------
rm -f "$W/launches"
while IFS='|' read -r name args want; do
    eval "set -- $args"
    run_cmd env GORILA_LAUNCH="$W/bin/count" "$C" "$@"
    expect_rc "bad input ($name): exit status 2" 2
    expect_eq "bad input ($name): one line" "$(wc -l <<<"$err")" 1
    expect_contains "bad input ($name): says why" "$err" "$want"
done <<EOF
a misspelt mode|${small[*]} --modes gosip --out "$W/x"|compare: error: unknown mode 'gosip' in --modes (modes: ps_sync, ps_async, ps_bounded, allreduce, gossip, easgd, local_sgd)
only 1-learner gossip and local_sgd|${small[*]} --modes gossip,local_sgd --learners 1 --out "$W/x"|compare: error: gorila refuses every cell of this matrix: gossip and local_sgd with 1 learner
EOF
check "bad input: no output directory made" [ ! -e "$W/x" ]
expect_eq "bad input: no job launched" "$(launches)" 0
echo "# compare_decentral.sh: $((SECONDS - t0)) s"
done_testing
