# SPDX-License-Identifier: MIT
# scripts/seeds: the statistics' unit tests (tests/cli/seeds_stats.py, values
# worked out by hand), then real local CartPole runs of 3000 env steps
# (a fraction of a second each): a row per seed that says what its
# summary.json says, one "none" marker and never null or nan, the solved
# count and the steps-to-solve median and IQM over all runs (unsolved at
# the budget; expected values computed here, in awk, from the runs'
# summary.json), --markdown, a failed seed (a stand-in gorila that exits 5)
# counted with its status while the table goes on, the held-out test
# columns and --solved-on (the stand-in adds the test keys), --compare and
# --sweep interleaved with P(X > Y) checked against the runs, SIGINT,
# SIGTERM and SIGKILL to scripts/seeds stopping its run (never left running
# unattended), --resume of a --compare stopped by SIGTERM (finished runs
# read, not run again; the interrupted one continued with `train --resume`;
# one killed before its first checkpoint run again beside it; the rest run;
# refusals), and bad input refused with one line and exit 2 before any
# run starts.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../comparelib.sh"
cd "$TEST_ROOT" || exit 1
S="$TEST_ROOT/scripts/seeds"
W="$TEST_TMP/seeds"
rm -rf "$W"
mkdir -p "$W/bin"
source "$TEST_ROOT/scripts/summary.sh"
C=configs/local/cartpole.yaml
BUDGET=3000
fast=(--set "run.max_env_steps=$BUDGET")
NONE="—"

# ---- the statistics -------------------------------------------------------------
while IFS= read -r line; do
    case $line in
    "PASS "*) ok "stats: ${line#PASS }" ;;
    "FAIL "*) not_ok "stats: ${line#FAIL }" ;;
    *) echo "$line" ;;
    esac
done < <(python3 "$TEST_ROOT/tests/cli/seeds_stats.py" 2>&1 || echo "FAIL tests/cli/seeds_stats.py exited non-zero")

# A stand-in for gorila ($GORILA of scripts/seeds): logs every `train` (and
# `eval`, to $SEEDS_W/evals),
# fails the seed $FAIL_SEED (exit 5, no run), and with $INJECT_TEST adds the
# held-out test keys to summary.json: seed 6 solved on the test (best
# 480.5, no final), every other seed not (100.25, 90.0).
cat >"$W/bin/gorila" <<'EOF'
#!/usr/bin/env bash
[ "$1" = eval ] && echo "$*" >>"$SEEDS_W/evals"
[ "$1" = train ] || exec "$REAL_GORILA" "$@"
echo "$*" >>"$SEEDS_W/trains"
case " $* " in *" run.seed=${FAIL_SEED:-none} "*)
    echo "stand-in: seed $FAIL_SEED fails" >&2
    exit 5 ;;
esac
out=$("$REAL_GORILA" "$@" 2>&1)
rc=$?
echo "$out"
dir=$(sed -n 's/^run directory: //p' <<<"$out" | tail -1)
if [ -n "${INJECT_TEST:-}" ] && [ -f "$dir/summary.json" ]; then
    python3 -c '
import json, sys
p = sys.argv[1]
s = json.load(open(p))
six = s["seed"] == 6
s.update(test_eval_seed=777, test_eval_episodes=100, test_best_return=480.5 if six else 100.25,
         test_final_return=None if six else 90.0, solved_test=six)
json.dump(s, open(p, "w"), indent=2)
' "$dir/summary.json"
fi
exit $rc
EOF
chmod +x "$W/bin/gorila"
export REAL_GORILA="$GORILA" SEEDS_W="$W"
stand_in() { GORILA="$W/bin/gorila" "$@"; }
trains() { if [ -f "$W/trains" ]; then wc -l <"$W/trains"; else echo 0; fi; }

# rows OUT: the per-run rows (the lines after the header up to the first blank line)
rows() { awk '/^(config +)?seed +solved/ { t = 1; next } t && /^$/ { exit } t' <<<"$1"; }
# steps DIR SOLVED: env steps to solve of the run in DIR (SOLVED: true or false), unsolved at the budget
steps() {
    local s="$1/summary.json"
    if [ "$2" = true ]; then
        local v
        v=$(jget "$s" solved_at_env_steps)
        [ "$v" != null ] || v=$(jget "$s" best_at_env_steps)
        echo "$v"
    else echo $BUDGET; fi
}
# metric OUT NAME: the fields after NAME in the summary table of OUT (one config)
metric() { grep -m1 "^$2  " <<<"$1" | sed "s/^$2 *//"; }

# ---- one config, three seeds ----------------------------------------------------
R="$W/plain"
run_cmd "$S" $C -n 3 --first 6 "${fast[@]}" --set run.out_dir="$R" --solved-on selection
expect_rc "plain: exit status 0" 0
expect_contains "plain: first line names the config, environment and seeds" "$out" "$C: CartPole-v1, seeds 6-8"
expect_contains "plain: the row header" "$out" \
    "seed  solved  solved_test at_env_steps at_seconds env_steps wall_seconds best_eval saved_best last_eval saved_final test_best test_final"
expect_eq "plain: three rows, seeds 6, 7, 8" "$(rows "$out" | awk '{ print $1 }' | paste -sd' ')" "6 7 8"
check "plain: neither null nor nan anywhere" bash -c '! grep -qwE "null|nan|NaN" <<<"$1"' _ "$out"
expect_contains "plain: says where the runs go" "$out" "run directories: $R/seeds-cartpole/<config>-s<seed>"
check "plain: one folder for the invocation, a run directory per seed in it" \
    test -f "$R/seeds-cartpole/cartpole-s6/summary.json" \
    -a -f "$R/seeds-cartpole/cartpole-s7/summary.json" -a -f "$R/seeds-cartpole/cartpole-s8/summary.json"
expect_eq "plain: nothing else in run.out_dir" "$(cd "$R" && echo *)" "seeds-cartpole"
k=0
vals=()
for seed in 6 7 8; do
    d="$R/seeds-cartpole/cartpole-s$seed"
    sv=$(jget "$d/summary.json" solved)
    [ "$sv" = true ] && k=$((k + 1))
    vals+=("$(steps "$d" "$sv")")
    at=$(jget "$d/summary.json" solved_at_env_steps)
    [ "$at" = null ] && at=$NONE
    # the held-out test evaluation of the run's end (eval.test_episodes):
    # as summary.json has it, the none marker where it has null
    st=$(jget "$d/summary.json" solved_test)
    [ "$st" = null ] && st=$NONE
    want="$seed $sv $st $at"
    expect_eq "plain: seed $seed: solved, solved_test, at env steps as summary.json has them" \
        "$(rows "$out" | awk -v s="$seed" '$1 == s { print $1, $2, $3, $4 }')" "$want"
    expect_eq "plain: seed $seed: env steps as summary.json" \
        "$(rows "$out" | awk -v s="$seed" '$1 == s { print $6 }')" "$(jget "$d/summary.json" env_steps)"
    tb=$(jget "$d/summary.json" test_best_return) tf=$(jget "$d/summary.json" test_final_return)
    tb=$([ "$tb" = null ] && echo "$NONE" || printf '%.1f' "$tb")
    tf=$([ "$tf" = null ] && echo "$NONE" || printf '%.1f' "$tf")
    expect_eq "plain: seed $seed: test columns as summary.json has them ($tb $tf)" \
        "$(rows "$out" | awk -v s="$seed" '$1 == s { print $12, $13 }')" "$tb $tf"
done
echo "# plain: $k of 3 solved; env steps to solve ${vals[*]}"
# Wilson: (p + z^2/2n -+ z sqrt(p(1-p)/n + z^2/4n^2)) / (1 + z^2/n), z = 1.959964
want=$(awk -v k=$k -v n=3 'BEGIN { z = 1.959964; p = k / n; d = 1 + z * z / n; c = (p + z * z / (2 * n)) / d
    h = z / d * sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    printf "solved: %d/%d (%.0f%%), Wilson 95%% CI [%.0f%%, %.0f%%]", k, n, 100 * p, 100 * (c - h), 100 * (c + h) }')
expect_contains "plain: solved k/3 with its Wilson interval" "$out" "$want"
# n = 3: the median is the middle value and the IQM (nothing cut) the mean
want=$(printf '%s\n' "${vals[@]}" | sort -n | awk '{ v[NR] = $1; s += $1 } END { printf "3 %d %d", v[2], int(s / 3 + 0.5) }')
expect_eq "plain: env steps to solve over all 3 runs: n, median, IQM" \
    "$(metric "$out" "env steps to solve" | awk '{ print $1, $2, $3 }')" "$want"
expect_contains "plain: the IQM's bootstrap interval and mean ± sd" "$(metric "$out" "env steps to solve")" " ± "
check "plain: seconds to 2 decimals, returns to 1" grep -qE '^seconds to solve +3 +[0-9]+\.[0-9]{2} ' <<<"$out"
check "plain: best eval to 1 decimal" grep -qE '^best eval +3 +-?[0-9]+\.[0-9] ' <<<"$out"
expect_contains "plain: says what an unsolved run counts as" "$out" \
    "unsolved runs count at their budget: $BUDGET env steps (run.max_env_steps)"
expect_contains "plain: says how the IQM is trimmed" "$out" "scipy.stats.trim_mean(x, 0.25)"
expect_contains "plain: --solved-on selection said" "$out" "solved: judged on the selection evaluation"
expect_contains "plain: saved checkpoints as logged" "$out" "saved checkpoints that do not evaluate as logged: 0"
expect_contains "plain: Measured on" "$out" "Measured on: CPU "

# Again, the same seeds: the statistics are the same (the bootstrap is seeded;
# the seconds differ, the env steps and evaluations do not).
first=$out
run_cmd "$S" $C -n 3 --first 6 "${fast[@]}" --set run.out_dir="$R" --solved-on selection
expect_eq "again: env steps to solve, the same line (bootstrap seeded)" \
    "$(metric "$out" "env steps to solve")" "$(metric "$first" "env steps to solve")"
expect_eq "again: best eval, the same line" "$(metric "$out" "best eval")" "$(metric "$first" "best eval")"
check "again: a new folder for the invocation, -2" [ -f "$R/seeds-cartpole-2/cartpole-s6/summary.json" ]
expect_eq "again: its run directories named as the first's, and its record" "$(cd "$R/seeds-cartpole-2" && echo *)" \
    "cartpole-s6 cartpole-s7 cartpole-s8 seeds.json"

# ---- --markdown, the test columns and the default --solved-on test --------------
R="$W/md"
run_cmd stand_in "$S" $C -n 2 --first 6 "${fast[@]}" --set run.out_dir="$R" --markdown
expect_rc "markdown: exit status 0" 0
expect_contains "markdown: the row header" "$out" "| seed | solved | solved test | at env steps |"
expect_eq "markdown: two rows" "$(grep -cE '^\| [67] \|' <<<"$out")" 2
expect_contains "markdown: the metric table" "$out" "| metric | n | median | IQM | IQM 95% CI | mean ± sd |"
if grep -q '"solved_test"' "$R/seeds-cartpole/cartpole-s6/summary.json"; then
    expect_contains "markdown: solved judged on solved_test" "$out" "judged on the held-out test evaluation"
else
    expect_contains "markdown: no solved_test: a note, judged on solved" "$out" \
        "note: no summary.json has solved_test (no held-out test evaluation): solved is judged on the selection"
fi

R="$W/test"
run_cmd env INJECT_TEST=1 GORILA="$W/bin/gorila" "$S" $C -n 2 --first 6 "${fast[@]}" --set run.out_dir="$R"
expect_rc "test keys: exit status 0" 0
expect_eq "test keys: seed 6: solved_test true, test best 480.5, no test final" \
    "$(rows "$out" | awk '$1 == 6 { print $3, $12, $13 }')" "true 480.5 $NONE"
expect_eq "test keys: seed 7: solved_test false, test best 100.2, test final 90.0" \
    "$(rows "$out" | awk '$1 == 7 { print $3, $12, $13 }')" "false 100.2 90.0"
expect_contains "test keys: judged on solved_test by default: 1 of 2" "$out" "solved: 1/2 ("
expect_contains "test keys: says so" "$out" "solved: judged on the held-out test evaluation (summary.json solved_test)"
want=$(printf '%s\n' "$(steps "$R/seeds-cartpole/cartpole-s6" true)" $BUDGET | sort -n |
    awk '{ v[NR] = $1 } END { printf "2 %d", int((v[1] + v[2]) / 2 + 0.5) }')
expect_eq "test keys: env steps to solve: seed 6 at its solve point, seed 7 at the budget" \
    "$(metric "$out" "env steps to solve" | awk '{ print $1, $2 }')" "$want"
expect_eq "test keys: test best summarised: n 2, median 290.4" \
    "$(metric "$out" "test best" | awk '{ print $1, $2 }')" "2 290.4"
expect_eq "test keys: test final over the one run that has it" \
    "$(metric "$out" "test final" | awk '{ print $1, $2, $3, $4, $5 }')" "1 of 2 90.0 90.0"
k=0
for seed in 6 7; do [ "$(jget "$R/seeds-cartpole/cartpole-s$seed/summary.json" solved)" = true ] && k=$((k + 1)); done
run_cmd "$S" --solved-on selection $C -n 2 --first 6 "${fast[@]}" --set run.out_dir="$R"
expect_contains "test keys: --solved-on selection counts summary.json solved" "$out" "solved: $k/2 ("

# ---- a failed seed ----------------------------------------------------------------
R="$W/fail"
run_cmd env FAIL_SEED=7 GORILA="$W/bin/gorila" "$S" $C -n 3 --first 6 "${fast[@]}" --set run.out_dir="$R"
expect_rc "failed seed: exit status 1" 1
expect_eq "failed seed: its row says exit 5, the rest the none marker" \
    "$(rows "$out" | awk '$1 == 7 { print $2, $3, $5, $7, $9 }')" "exit 5 $NONE $NONE $NONE"
expect_eq "failed seed: the table goes on: rows 6, 7, 8" "$(rows "$out" | awk '{ print $1 }' | paste -sd' ')" "6 7 8"
expect_contains "failed seed: named on stderr with its status" "$err" "cartpole seed 7 failed (exit 5)"
expect_contains "failed seed: counted in N" "$out" "solved: "
check "failed seed: N is 3" grep -qE '^solved: [0-3]/3 ' <<<"$out"
expect_eq "failed seed: env steps to solve over 3 runs" "$(metric "$out" "env steps to solve" | awk '{ print $1 }')" 3
expect_eq "failed seed: best eval over the 2 runs with one" "$(metric "$out" "best eval" | awk '{ print $1, $2, $3 }')" \
    "2 of 3"

# ---- --compare ------------------------------------------------------------------
# The second config has the same file name as the first, in another folder
# (as configs/cartpole.yaml beside configs/local/cartpole.yaml).
mkdir -p "$W/slow"
sed 's/^  lr: 2.3e-3 /  lr: 1.0e-3 /' $C >"$W/slow/cartpole.yaml"
check "compare: the second config differs in its rate" grep -q '^  lr: 1.0e-3 ' "$W/slow/cartpole.yaml"
R="$W/compare"
run_cmd stand_in "$S" --compare $C "$W/slow/cartpole.yaml" -n 2 --first 6 "${fast[@]}" --set run.out_dir="$R"
expect_rc "compare: exit status 0" 0
expect_eq "compare: interleaved, seed by seed" "$(rows "$out" | awk '{ print $1 "/" $2 }' | paste -sd' ')" \
    "local/cartpole/6 slow/cartpole/6 local/cartpole/7 slow/cartpole/7"
expect_eq "compare: the trains in that order" "$(grep -o 'run.name=[^ ]*' "$W/trains" | tail -4 | paste -sd' ')" \
    "run.name=local-cartpole-s6 run.name=slow-cartpole-s6 run.name=local-cartpole-s7 run.name=slow-cartpole-s7"
expect_eq "compare: one folder, a run directory per config and seed, none with -2, the record" \
    "$(cd "$R" && echo *)/$(cd "$R/seeds-compare-cartpole-cartpole" && echo *)" \
    "seeds-compare-cartpole-cartpole/local-cartpole-s6 local-cartpole-s7 seeds.json slow-cartpole-s6 slow-cartpole-s7"
expect_contains "compare: a solved row per config" "$out" "config          solved  rate  Wilson 95% CI"
expect_contains "compare: the P(X > Y) table" "$out" "P(X > Y)"
# P(local/cartpole > slow/cartpole) from the four summary.json: fewer env steps to
# solve wins, unsolved loses to solved, ties count half.
pairs=()
for cfg in local-cartpole slow-cartpole; do
    for seed in 6 7; do
        d="$R/seeds-compare-cartpole-cartpole/$cfg-s$seed"
        sv=$(jget "$d/summary.json" solved)
        if [ "$sv" = true ]; then v=$(jget "$d/summary.json" solved_at_env_steps); else v=inf; fi
        pairs+=("$cfg $v")
    done
done
want=$(printf '%s\n' "${pairs[@]}" | awk '
    function big(v) { return v == "inf" ? 1e18 : v + 0 }
    $1 == "local-cartpole" { x[++nx] = big($2) } $1 == "slow-cartpole" { y[++ny] = big($2) }
    END { for (i = 1; i <= nx; i++) for (j = 1; j <= ny; j++) w += (x[i] < y[j]) + 0.5 * (x[i] == y[j])
          printf "%.2f", w / (nx * ny) }')
echo "# compare: runs ${pairs[*]}"
expect_eq "compare: P(local/cartpole > slow/cartpole) as the runs give it" \
    "$(grep -E '^local/cartpole +slow/cartpole +[0-9]' <<<"$out" | awk '{ print $3 }')" "$want"

# ---- --sweep --------------------------------------------------------------------
R="$W/sweep"
run_cmd "$S" $C --sweep optimizer.lr=0.001,0.002 -n 1 --first 6 "${fast[@]}" --set run.out_dir="$R"
expect_rc "sweep: exit status 0" 0
expect_eq "sweep: a row per value" "$(rows "$out" | awk '{ print $1 "/" $2 }' | paste -sd' ')" \
    "optimizer.lr=0.001/6 optimizer.lr=0.002/6"
D="$R/seeds-sweep-cartpole-optimizer.lr"
check "sweep: one folder, run directories named after the value" test -f "$D/optimizer.lr_0.001-s6/summary.json" \
    -a -f "$D/optimizer.lr_0.002-s6/summary.json"
check "sweep: each ran with its value" grep -q '^  lr: 0.002$' "$D/optimizer.lr_0.002-s6/config.yaml"
check "sweep: P(X > Y) of the two values" grep -qE '^optimizer.lr=0.001 +optimizer.lr=0.002 +[01]\.[0-9]{2} ' <<<"$out"

# ---- signals: the run stops with scripts/seeds, never runs on unattended ------------
# scripts/seeds in the background with SIGINT restored (a background job
# of a script otherwise ignores it), two seeds of a run too long to finish
# (no stop when solved); once the first run has its config.yaml, SIGNAL
# goes to the seeds process alone. The run (gorila train) must stop cleanly (summary.json stop_reason
# signal) and no process of it may be left; the second seed never starts.
signal_run() {
    local sig=$1 want=$2
    R="$W/sig-$sig"
    (trap - INT; exec "$S" $C -n 2 --first 6 --set run.max_env_steps=100000000 --set run.stop_when_solved=false \
        --set run.out_dir="$R" >"$R.out" 2>"$R.err") &
    local spid=$!
    check "$sig: the first run started" wait_for "its config.yaml" test -s "$R/seeds-cartpole/cartpole-s6/config.yaml"
    local tpid
    tpid=$(pgrep -P "$spid" -f " train ")
    check "$sig: the run is a child of scripts/seeds" test -n "$tpid"
    kill -"$sig" "$spid"
    check "$sig: scripts/seeds ends" wait_for "scripts/seeds to end" gone "$spid"
    alive "$spid" && kill -KILL "$spid"
    { wait "$spid"; } 2>/dev/null
    expect_eq "$sig: exit status $want" "$?" "$want"
    check "$sig: the run ends" wait_for "the run to end" gone "${tpid:-0}"
    [ -n "$tpid" ] && alive "$tpid" && kill -KILL "$tpid"
    expect_eq "$sig: the run stopped cleanly (summary.json stop_reason)" "$(python3 -c 'import json, sys
print(json.load(open(sys.argv[1])).get("stop_reason"))' "$R/seeds-cartpole/cartpole-s6/summary.json" 2>&1)" signal
    check "$sig: the second seed did not start" test ! -e "$R/seeds-cartpole/cartpole-s7"
}
signal_run INT 130
expect_contains "INT: scripts/seeds says so" "$(cat "$R.err")" "seeds: interrupted"
signal_run TERM 143
expect_contains "TERM: scripts/seeds says so" "$(cat "$R.err")" "seeds: interrupted"
signal_run KILL 137

# ---- --resume: an interrupted --compare continued -----------------------------------
# fast: 3000 env steps; long: no env-step limit, stops at run.max_seconds 4
# (stop_when_solved off), so that its run is the one SIGTERM interrupts.
# Order: fast-s6, long-s6 (interrupted), fast-s7 (made here as a run killed
# before its first checkpoint: a config.yaml alone), long-s7 (not started).
Q="$W/rs"
mkdir -p "$Q"
sed 's/^  max_env_steps: 50000 /  max_env_steps: 3000 /' $C >"$Q/fast.yaml"
sed 's/^  max_env_steps: 50000 /  max_env_steps: 0 /; s/^  max_seconds: 0 /  max_seconds: 4 /
    s/^  stop_when_solved: true /  stop_when_solved: false /' $C >"$Q/long.yaml"
check "resume: the configs as meant" bash -c 'grep -q "^  max_env_steps: 3000 " "$1/fast.yaml" &&
    grep -q "^  max_seconds: 4 " "$1/long.yaml" && grep -q "^  stop_when_solved: false " "$1/long.yaml"' _ "$Q"
R="$W/resume"
D="$R/seeds-compare-fast-long"
# (the real gorila: the stand-in, a shell, would not pass the signal on)
(trap - INT; exec "$S" --compare "$Q/fast.yaml" "$Q/long.yaml" -n 2 --first 6 \
    --set run.out_dir="$R" >"$R.out" 2>"$R.err") &
spid=$!
check "resume: the second run started" wait_for "long-s6's config.yaml" test -s "$D/long-s6/config.yaml"
kill -TERM "$spid"
check "resume: scripts/seeds ends" wait_for "scripts/seeds to end" gone "$spid"
alive "$spid" && kill -KILL "$spid"
{ wait "$spid"; } 2>/dev/null
expect_eq "resume: the first invocation ended by SIGTERM" "$?" 143
check "resume: seeds.json was written" test -s "$D/seeds.json"
expect_contains "resume: the interrupted invocation says how to continue" "$(cat "$R.err")" \
    "scripts/seeds --resume $D continues"
expect_eq "resume: before: long-s6 stopped by the signal, fast-s7 and long-s7 not started" \
    "$(jget "$D/long-s6/summary.json" stop_reason)/$(cd "$D" && echo *)" "signal/fast-s6 long-s6 seeds.json"
mkdir "$D/fast-s7"
cp "$D/fast-s6/config.yaml" "$D/fast-s7/config.yaml"
sum6=$(sha256sum <"$D/fast-s6/summary.json")
rm -f "$W/trains" "$W/evals"
run_cmd stand_in "$S" --resume "$D"
expect_rc "resume: exit status 0" 0
expect_contains "resume: says what it found" "$out" "resuming: 1 finished earlier (read, not run again), 1 \
interrupted (continued from its checkpoint), 1 killed before its first checkpoint (run again beside it), 1 not started"
expect_eq "resume: three trains: long-s6 resumed, fast-s7 and long-s7 new; fast-s6 not run again" \
    "$(sed -E 's/.*--resume ([^ ]*).*/resume \1/; s/^train .*run\.name=([^ ]*).*/new \1/' "$W/trains" | paste -sd' ')" \
    "resume $D/long-s6 new fast-s7 new long-s7"
expect_eq "resume: fast-s6's summary.json untouched" "$(sha256sum <"$D/fast-s6/summary.json")" "$sum6"
expect_eq "resume: saved checkpoints of the three runs evaluated, fast-s6's taken from seeds.json" \
    "$(grep -oE -- "$D/[^ ]+ --checkpoint [a-z]+" "$W/evals" | sed "s|^$D/||; s/ --checkpoint / /" | paste -sd' ')" \
    "long-s6 best long-s6 final fast-s7-2 best fast-s7-2 final long-s7 best long-s7 final"
expect_eq "resume: long-s6 resumed to its end (summary.json resumed, stop_reason)" \
    "$(jget "$D/long-s6/summary.json" resumed) $(jget "$D/long-s6/summary.json" stop_reason)" "true time"
check "resume: fast-s7 run again as fast-s7-2, the old directory kept" \
    test -f "$D/fast-s7-2/summary.json" -a -f "$D/fast-s7/config.yaml" -a ! -e "$D/fast-s7/summary.json"
expect_contains "resume: says fast-s7 is run again, nothing removed" "$err" \
    "fast seed 7: $D/fast-s7 has no checkpoint (killed before its first): run again from the start beside it"
check "resume: long-s7 run" test -f "$D/long-s7/summary.json"
expect_eq "resume: the rows in order, marked" "$(rows "$out" | awk '{ print $1 "/" $2 "/" ($NF ~ /^\(/ ? $NF : "-") }' |
    paste -sd' ')" "fast/6/(earlier) long/6/(resumed) fast/7/- long/7/-"
expect_eq "resume: the earlier row as summary.json says (env steps, best eval)" \
    "$(rows "$out" | awk '$1 == "fast" && $2 == 6 { print $7, $9 }')" \
    "$(jget "$D/fast-s6/summary.json" env_steps) $(printf '%.1f' "$(jget "$D/fast-s6/summary.json" best_eval_mean_return)")"
check "resume: the statistics over 2 runs of each config" \
    bash -c 'grep -qE "^fast +[0-2]/2 " <<<"$1" && grep -qE "^long +[0-2]/2 " <<<"$1"' _ "$out"
expect_eq "resume: env steps to solve over 2 + 2 runs" \
    "$(grep -A1 '^env steps to solve' <<<"$out" | awk '{ print $(NF - 7) }' | paste -sd' ')" "2 2"
expect_contains "resume: a note names the resumed run" "$out" \
    "resumed from a checkpoint (summary.json resumed), so their wall seconds include a restart"
expect_contains "resume: ... long seed 6" "$(grep '^resumed from a checkpoint' <<<"$out")" ": long seed 6"
expect_contains "resume: a note counts the earlier runs" "$out" "1 of 4 runs finished in an earlier invocation"

# Again, in Markdown: every run finished, none runs; the marks in the seed cells
rm -f "$W/trains" "$W/evals"
run_cmd stand_in "$S" --resume "$D" --markdown
expect_rc "resume again: exit status 0" 0
expect_eq "resume again: nothing trained, nothing evaluated (seeds.json has the saved checkpoints' returns)" \
    "$(trains)/$([ -e "$W/evals" ] && cat "$W/evals")" 0/
expect_eq "resume again: four rows, each marked earlier in its seed cell" \
    "$(grep -cE '^\| (fast|long) \| [67] \(earlier\) \|' <<<"$out")" 4
expect_eq "resume again: every row has the header's cells" \
    "$(grep -E '^\| (config|fast|long) \|' <<<"$out" | head -5 | awk -F'|' '{ print NF }' | sort -u)" 16
expect_eq "resume again: fast seed 7 is fast-s7-2's run" \
    "$(grep -E '^\| fast \| 7 ' <<<"$out" | awk -F'|' '{ gsub(/ /, "", $8); print $8 }')" \
    "$(jget "$D/fast-s7-2/summary.json" env_steps)"

# refused: one line, exit 2, nothing run
resume_bad() {
    local name=$1 want=$2
    shift 2
    rm -f "$W/trains"
    run_cmd stand_in "$@"
    expect_rc "resume refused: $name: exit status 2" 2
    expect_eq "resume refused: $name: one line on stderr, nothing on stdout, nothing run" \
        "$(wc -l <<<"$err")/$out/$(trains)" "1//0"
    expect_contains "resume refused: $name: the line says why" "$err" "$want"
}
resume_bad "a folder that does not exist" "--resume $W/no-such: no such folder" "$S" --resume "$W/no-such"
resume_bad "a folder with no record" "--resume $W/plain: no seeds.json in it: not a folder scripts/seeds made" \
    "$S" --resume "$W/plain"
resume_bad "a run directory" "no seeds.json in it" "$S" --resume "$D/fast-s6"
resume_bad "with -n" "--resume DIR takes only --markdown and --solved-on" "$S" --resume "$D" -n 3
resume_bad "while another scripts/seeds holds the folder" "is in use by another scripts/seeds" \
    flock "$D" "$S" --resume "$D"
echo "# edited" >>"$Q/long.yaml"
resume_bad "a config changed since" "the config $Q/long.yaml has changed since the runs began" \
    "$S" --resume "$D"
rm "$Q/long.yaml"
resume_bad "a config gone" "the config $Q/long.yaml is gone" "$S" --resume "$D"

# ---- bad input: one line on stderr, exit 2, nothing run ---------------------------
rm -f "$W/trains"
bad() {
    local name=$1 want=$2
    shift 2
    run_cmd stand_in "$S" "$@" "${fast[@]}" --set run.out_dir="$W/bad"
    expect_rc "bad input: $name: exit status 2" 2
    expect_eq "bad input: $name: one line on stderr" "$(wc -l <<<"$err")" 1
    expect_contains "bad input: $name: the line says why" "$err" "$want"
    expect_eq "bad input: $name: nothing ran, nothing on stdout" "$(trains)/$([ -e "$W/bad" ] && echo dir)/$out" "0//"
}
bad "--compare of two environments" "different environments (cartpole: CartPole-v1, acrobot: Acrobot-v1)" \
    --compare $C configs/local/acrobot.yaml
bad "--sweep of an unknown key" "foo.bar: unknown key" $C --sweep foo.bar=1,2
bad "--sweep value the loader refuses" 'run.max_env_steps: expected a non-negative integer, got "abc"' \
    $C --sweep run.max_env_steps=1000,abc
bad "--sweep without =" "expected key=v1,v2,..." $C --sweep optimizer.lr
bad "--sweep with an empty value" "an empty value" $C --sweep optimizer.lr=0.001,,0.002
bad "--sweep of run.seed" "scripts/seeds sets run.seed on every run itself" $C --sweep run.seed=1,2
bad "--sweep of environments" "different environments" $C --sweep env.name=CartPole-v1,Acrobot-v1
bad "--compare of one config" "--compare needs two configs or more" --compare $C
bad "two configs without --compare" "one CONFIG, got 2" $C "$W/slow/cartpole.yaml"
bad "a config gorila refuses" "no-such.yaml" "$W/no-such.yaml"
bad "-n 0" "-n: 0 is out of range" $C -n 0
bad "--solved-on other" "--solved-on: expected test or selection" $C --solved-on best
bad "an unknown option" "unknown option --seeds" $C --seeds 3

run_cmd "$S" --help
expect_rc "--help: exit status 0" 0
expect_contains "--help: --compare" "$out" "--compare A.yaml B.yaml"
expect_contains "--help: --sweep" "$out" "--sweep key=v1,v2"
expect_contains "--help: --solved-on" "$out" "--solved-on test (default)"
expect_contains "--help: --resume" "$out" "scripts/seeds --resume DIR [--markdown]"
expect_contains "--help: the record" "$out" "seeds.json, the record of the invocation"
done_testing
