# SPDX-License-Identifier: MIT
# scripts/compare --learner-batch per_learner,global on a tiny real matrix
# (tests/fixtures/configs/mpi-small.yaml, 2000 env steps a job; ps_sync and
# allreduce, 1 and 2 learners, one seed): the cells that run (the PS modes
# only per_learner, allreduce both rules, and the 1-learner allreduce cell
# once, since with one learner both rules are one update), what each run's
# config.yaml and summary.json say (a global gradient is replay.batch_size /
# L rows, taken here from gorila config check of the fixture, not from the
# script), the report's rows and labels for both rules (the global series'
# 1-learner row is the per_learner runs), the plots' series, --from and
# --resume (a kept run of the other rule is refused), the cost model's
# sections with global rows (through --hostfile stand-ins that run the jobs
# here). Bad input, refused before anything starts: tests/cli/compare_batch.sh.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../comparelib.sh"
cd "$TEST_ROOT" || exit 1
if [ -n "${ASAN_OPTIONS:-}" ]; then
    ok "scripts/compare --learner-batch # SKIP runs MPI jobs; not under the sanitizer build (make test runs it)"
    done_testing
    exit
fi
C="$TEST_ROOT/scripts/compare"
W="$TEST_TMP/compare_batch"
rm -rf "$W"
t0=$SECONDS
FX=tests/fixtures/configs/mpi-small.yaml
small=("$FX" --set run.max_env_steps=2000)

# the launcher stand-ins and launches (tests/comparelib.sh)
compare_standins "$W"
# learner.batch of a run's config.yaml (gorila writes every key; none: per_learner, a build before the key)
yaml_batch() { awk '/^learner:/ { on = 1; next } /^[^ ]/ { on = 0 } on && $1 == "batch:" { b = $2 } END { print b ? b : "per_learner" }' "$1"; }
# replay.batch_size of the fixture, as gorila reads it
B=$("$GORILA" config check --json "${small[@]}" | python3 -c 'import json, sys; print(json.load(sys.stdin)["config"]["replay"]["batch_size"])')
check "the fixture's replay.batch_size ($B) is even: 2 learners split it" [ $((B % 2)) -eq 0 ]

# ---- the matrix ------------------------------------------------------------------
D="$W/m"
rm -f "$W/launches"
run_cmd env GORILA_LAUNCH="$W/bin/count" "$C" "${small[@]}" --modes ps_sync,allreduce --learners 1,2 \
    --learner-batch per_learner,global --seeds 1 --out "$D"
expect_rc "matrix: exit status 0" 0
expect_eq "matrix: five jobs (no 1-learner global job)" "$(launches)" 5
expect_eq "matrix: a progress line per cell" "$(grep -c '^\[[1-5]/5\] ' <<<"$out")" 5
expect_contains "matrix: progress line names the global batch" "$out" "[5/5] allreduce (global batch) 2 learners seed 1: "
expect_eq "matrix: the run directories" "$(find "$D/runs" -mindepth 1 -maxdepth 1 -type d -printf '%f\n' | sort | tr '\n' ' ')" \
    "allreduce-L1-s1 allreduce-L2-s1 allreduce-global-L2-s1 ps_sync-L1-s1 ps_sync-L2-s1 "
for run in ps_sync-L1-s1:per_learner ps_sync-L2-s1:per_learner allreduce-L1-s1:per_learner \
    allreduce-L2-s1:per_learner allreduce-global-L2-s1:global; do
    name=${run%%:*}
    expect_eq "$name: config.yaml has learner.batch ${run#*:}" "$(yaml_batch "$D/runs/$name/config.yaml")" "${run#*:}"
done
expect_eq "matrix: every ps_sync job got learner.batch=per_learner" \
    "$(grep 'sync.mode=ps_sync' "$W/launches" | grep -c 'learner.batch=per_learner')" 2
expect_eq "matrix: one global job, allreduce with 2 learners" \
    "$(grep 'learner.batch=global' "$W/launches" | grep -c 'sync.mode=allreduce .*roles.learners=2 ')" 1
# rows per gradient: samples_trained / gradients = B per_learner, B / L global
while read -r name rows; do
    s="$D/runs/$name/summary.json"
    got=$(python3 -c 'import json, sys; s = json.load(open(sys.argv[1])); g = s["gradients"]
print("%s gradients, %s rows each" % (g, s["samples_trained"] / g if g else "no"))' "$s")
    expect_eq "$name: summary.json samples_trained per gradient is $rows" "${got#* gradients, }" "$rows.0 rows each"
    check "$name: it computed gradients (${got%%,*})" [ "${got%% *}" -gt 0 ]
done <<EOF
ps_sync-L2-s1 $B
allreduce-L1-s1 $B
allreduce-L2-s1 $B
allreduce-global-L2-s1 $((B / 2))
EOF

R="$D/report.md"
# the first row of section SECTION that starts with PREFIX, without the first N fields
row() { awk -v s="## $1" -v p="$2" '$0 == s { on = 1; next } /^## / { on = 0 } on && index($0, p) == 1 { print; exit }' "$R"; }
after() { cut -d'|' -f"$(($1 + 2))"-; }
for sec in Learning "Throughput, staleness, waiting" "Communication per worker" "Where the time goes"; do
    for label in "ps_sync | 1" "ps_sync | 2" "allreduce | 1" "allreduce | 2" "allreduce (global batch) | 1" \
        "allreduce (global batch) | 2"; do
        check "$sec: a row for $label" [ -n "$(row "$sec" "| $label |")" ]
    done
    expect_eq "$sec: the global batch's 1-learner row is the per_learner runs'" \
        "$(row "$sec" "| allreduce (global batch) | 1 |" | after 2)" "$(row "$sec" "| allreduce | 1 |" | after 2)"
done
expect_eq "report: no PS row with the global batch" "$(grep -c '^| ps_[a-z]* (global' "$R")" 0
expect_eq "throughput: samples/gradient per row (B, B / L global)" \
    "$(for l in "ps_sync | 2" "allreduce | 2" "allreduce (global batch) | 1" "allreduce (global batch) | 2"; do
        row "Throughput, staleness, waiting" "| $l |" | cut -d'|' -f7 | tr -d ' '
    done | tr '\n' ' ')" "$B.0 $B.0 $B.0 $((B / 2)).0 "
expect_contains "throughput: the samples/gradient column" "$(cat "$R")" \
    "| mode | learners | updates/s | env steps/s | gradients/update | samples/gradient | samples trained/s |"
expect_eq "runs table: a row per run, the global one once" \
    "$(sed -n '/^## Runs/,/^## /p' "$R" | grep -c '| runs/') $(grep -c '^| allreduce (global batch) | 2 | 1 | ok |.*| runs/allreduce-global-L2-s1 |$' "$R")" \
    "5 1"
expect_contains "report: the matrix line says the PS modes run per_learner" "$(cat "$R")" \
    "; learner.batch per_learner, global for allreduce (the PS modes run per_learner; with 1 learner the rules are one update"
expect_contains "report: explains both rules" "$(cat "$R")" "*per_learner* (Gorila's rule, weak scaling"
expect_contains "report: explains the 1-learner reference" "$(cat "$R")" \
    "show the other rule's runs again, as that series' 1-learner reference"
expect_eq "compare.json: the rules and each allreduce cell's" \
    "$(python3 -c 'import json, sys; s = json.load(open(sys.argv[1]))
print(s["learner_batch"], [(c["name"], c.get("learner_batch")) for c in s["cells"] if c["mode"] == "allreduce"])' "$D/compare.json")" \
    "['per_learner', 'global'] [('allreduce-L1-s1', 'per_learner'), ('allreduce-L2-s1', 'per_learner'), ('allreduce-global-L2-s1', 'global')]"
# the plots: a global series, with its 1-learner point, in every per-series data file
tp=$(awk '/^# mode allreduce \(global batch\):/ { on = 1; next } /^#/ { on = 0 } on && NF { print $1 }' "$D/plots/throughput.dat" | tr '\n' ' ')
expect_eq "throughput.dat: the global series at 1 and 2 learners" "$tp" "1 2 "
check "eval data files of the global series" [ -s "$D/plots/eval_time_allreduce-global_L1.dat" -a -s "$D/plots/eval_time_allreduce-global_L2.dat" ]
expect_contains "bytes_per_worker.dat: the global series, named with its algorithm" \
    "$(cat "$D/plots/bytes_per_worker.dat")" "# allreduce (ring, global batch): learners"
expect_contains "throughput.gp: the global series dashed" "$(cat "$D/plots/throughput.gp")" "dt 2 title 'allreduce (global batch)'"
for p in throughput eval_vs_time bytes_per_worker; do
    expect_eq "$p.png is a PNG" "$(head -c 8 "$D/$p.png" 2>/dev/null | od -An -tx1 | tr -d ' \n')" "89504e470d0a1a0a"
done
echo "# matrix: $((SECONDS - t0)) s"

# ---- --from and --resume -------------------------------------------------------------
tables() { sed -n '/^## Learning/,/^## Runs/p' "$1"; }
run_cmd "$C" --from "$D"/runs/*/ --out "$W/from"
expect_rc "--from: exit status 0" 0
expect_eq "--from: the same tables (learner.batch read from each run's config.yaml)" \
    "$(tables "$W/from/report.md")" "$(tables "$R")"
expect_contains "--from: the header names the rules" "$(cat "$W/from/report.md")" \
    "- learner.batch (each run's \`config.yaml\`): per_learner, global for allreduce"
rm -f "$W/launches"
run_cmd env GORILA_LAUNCH="$W/bin/count" "$C" "${small[@]}" --modes ps_sync,allreduce --learners 1,2 \
    --learner-batch per_learner,global --seeds 1 --out "$D" --resume
expect_rc "--resume of the matrix: exit 0" 0
expect_eq "--resume of the matrix: every cell kept, no job" "$(grep -c 'already done (kept)' <<<"$out") $(launches)" "5 0"
# a matrix of the global batch alone names no rule: allreduce-L2-s1 ran global, so --resume with both rules,
# whose allreduce-L2-s1 is per_learner, must not keep it
G="$W/g"
run_cmd "$C" "${small[@]}" --modes allreduce --learners 2 --learner-batch global --seeds 1 --out "$G" \
    --set logging.tensorboard=true
expect_rc "--learner-batch global alone: exit 0" 0
# --set logging.tensorboard=true reaches every cell: one TensorBoard run per
# cell under DIR/runs (tensorboard --logdir DIR/runs)
check "--set logging.tensorboard=true: the cell's run has its event file" \
    compgen -G "$G/runs/allreduce-L2-s1/tb/events.out.tfevents.*"
expect_eq "--learner-batch global alone: its run is named without the rule, and ran global" \
    "$(find "$G/runs" -mindepth 1 -maxdepth 1 -printf '%f') $(yaml_batch "$G/runs/allreduce-L2-s1/config.yaml")" "allreduce-L2-s1 global"
before=$(cd "$G" && find . -type f -print0 | sort -z | xargs -0 md5sum | md5sum)
rm -f "$W/launches"
run_cmd env GORILA_LAUNCH="$W/bin/count" "$C" "${small[@]}" --modes allreduce --learners 2 \
    --learner-batch per_learner,global --seeds 1 --out "$G" --resume --set logging.tensorboard=true
expect_rc "--resume with a kept run of the other rule: exit 2" 2
expect_eq "--resume with a kept run of the other rule: one line" "$(wc -l <<<"$err")" 1
expect_contains "--resume with a kept run of the other rule: says so" "$err" \
    "allreduce-L2-s1 ran with learner.batch global, this matrix's cell with learner.batch per_learner; --resume needs the same"
expect_eq "--resume with a kept run of the other rule: nothing launched or changed" \
    "$(launches) $(cd "$G" && find . -type f -print0 | sort -z | xargs -0 md5sum | md5sum)" "0 $before"

# ---- the cost model's sections with global rows (--hostfile, run here by stand-ins) ----------
{
    printf '#!/usr/bin/env bash\n'
    echo "echo '{\"bench\": \"pingpong\", \"bytes\": 16777216, \"one_way_s\": 0.135, \"bytes_per_s\": 1.24e8}'"
    echo "echo '{\"bench\": \"pingpong\", \"fit\": {\"latency_s\": 5e-05, \"bandwidth_bytes_per_s\": 1.25e8}, \"hosts\": [\"a\", \"b\"], \"same_host\": false}'"
} >"$W/bin/mpirun"
chmod +x "$W/bin/mpirun"
for i in 2 3 4 5 6 7 8 9 10; do echo "127.0.0.$i slots=4"; done >"$W/hosts"
H="$W/h"
rm -f "$W/launches"
run_cmd env GORILA_LAUNCH="$W/bin/local" GORILA_MPIRUN="$W/bin/mpirun" "$C" "${small[@]}" --modes allreduce \
    --learners 1,2 --learner-batch per_learner,global --seeds 1 --hostfile "$W/hosts" --out "$H"
expect_rc "--hostfile: exit status 0" 0
expect_eq "--hostfile: three jobs" "$(launches)" 3
R="$H/report.md"
mrow() { awk -v p="$1" '$0 == "## Model against measurement" { on = 1; next } /^## / { on = 0 } on && index($0, p) == 1 { print; exit }' "$R"; }
pl=$(mrow "| allreduce (ring) | 2 |")
gl=$(mrow "| allreduce (ring, global batch) | 2 |")
check "model: a per_learner row and a global row with 2 learners" [ -n "$pl" -a -n "$gl" ]
expect_eq "model: the same prediction for both rules (the same bytes per round)" \
    "$(cut -d'|' -f5,6 <<<"$gl")" "$(cut -d'|' -f5,6 <<<"$pl")"
expect_contains "model: says why the prediction is the same" "$(cat "$R")" "*global batch* rows (\`learner.batch: global\`): the same bytes per round"
expect_contains "projection: written, with the global batch's compute" "$(cat "$R")" \
    "with the global batch (\`learner.batch: global\`, strong scaling) each of N nodes computes 1/N of it"
expect_contains "sync_vs_learners.dat: the global series" "$(cat "$H/plots/sync_vs_learners.dat" 2>/dev/null)" \
    "# allreduce (ring, global batch): learners"
check "projection.csv written" [ -s "$H/plots/projection.csv" ]
echo "# compare_batch.sh: $((SECONDS - t0)) s"
done_testing
