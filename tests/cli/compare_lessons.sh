# SPDX-License-Identifier: MIT
# scripts/compare's report teaches at any scale, checked on run directories
# fabricated by tests/cli/compare_fab.py (no training: each figure is the
# model's times 1 + a deviation this script picks) and read with --from:
# "What this run shows" reports each of its five lessons supported, with
# the largest deviation the test put in, or not supported here with the
# reason (no such cells, one learner count, outside the tolerance, no
# updates); a matrix of runs without updates says so in the report's first
# line; the cores caveat is one line; the staleness words name only the
# modes present; the projection's compute per gradient is said to come from
# one-learner cells only where there are some; bytes_per_worker.png draws
# identical series once, in kB, with a panel of a PS shard's inbound bytes.
# And a matrix whose run.max_env_steps is not above replay.min_size is
# refused before any job starts (exit 2, one line), through the launcher
# stand-in that runs nothing.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../comparelib.sh"
cd "$TEST_ROOT" || exit 1
C="$TEST_ROOT/scripts/compare"
FAB="$TEST_ROOT/tests/cli/compare_fab.py"
W="$TEST_TMP/compare_lessons"
rm -rf "$W"
mkdir -p "$W"
compare_standins "$W"
# lesson N's line of report R ("N. ...")
lesson() { grep "^$2\. " "$1/report.md"; }

# ---- every lesson's cells, each within its own deviation -----------------------
A="$W/all"
python3 "$FAB" "$A/runs" ps_sync:1:1::0.03 ps_sync:2:1::0.03 ps_sync:4:1::0.03 ps_async:1:1::0.03 \
    ps_async:2:1::0.03 ps_async:4:1::0.03 ps_sync:2:2::0.04 ps_sync:4:2::0.04 allreduce:1::ring:0.01 \
    allreduce:2::ring:0.01 allreduce:4::ring:0.01 allreduce:2::naive:0.05 allreduce:4::naive:0.05 \
    gossip:2:::0.02 gossip:4:::0.02
run_cmd "$C" --from "$A"/runs/*/ --out "$A/report"
expect_rc "all lessons' cells: exit 0" 0
R="$A/report"
expect_eq "the section comes before the learning table" \
    "$(grep -n '^## ' "$R/report.md" | head -2 | cut -d: -f2 | tr '\n' '|')" "## What this run shows|## Learning|"
expect_contains "1: a single PS's N K, within the 3% put in" "$(lesson "$R" 1)" \
    "**supported: measured within 3.0% of the model (N·K) at N = 1, 2, 4 (ps_sync, ps_async)**"
expect_contains "2: P shards' N K / P, within 4%" "$(lesson "$R" 2)" \
    "**supported: measured within 4.0% of the model (N·K/P) at N=2 P=2, N=4 P=2**"
expect_contains "3: the ring's 2(N-1)/N K, within 1%" "$(lesson "$R" 3)" \
    "**supported: measured within 1.0% of the model (2(N-1)/N·K) at N = 1, 2, 4"
expect_contains "4: the naive driver's (N-1) K, within 5%" "$(lesson "$R" 4)" \
    "**supported: measured within 5.0% of the model ((N-1)·K) at N = 2, 4"
expect_contains "5: gossip's 2K per exchange, within 2%" "$(lesson "$R" 5)" \
    "**supported: measured within 2.0% of the model (2K) at N = 2, 4 (gossip)**"
expect_contains "K stated" "$(cat "$R/report.md")" "K = 4,000 bytes here"
# the cores caveat: one line, naming every group over the cores
ranks_max=$(python3 -c 'import json, glob
print(max(sum(len(v) for v in json.load(open(p))["roles"].values()) for p in glob.glob("'"$A"'/runs/*/summary.json")))')
if [ "$ranks_max" -gt "$(nproc)" ]; then
    expect_eq "cores caveat: said once" "$(grep -c 'time-share the cores' "$R/report.md")" 1
else
    expect_eq "cores caveat: none (every job fits the cores)" "$(grep -c 'time-share the cores' "$R/report.md")" 0
fi
# the plot: the two PS modes' identical per-worker points drawn once, named together; kB; the PS-shard panel
gp=$(cat "$R/plots/bytes_per_worker.gp" 2>/dev/null)
expect_eq "bytes_per_worker.png is a PNG" "$(head -c 8 "$R/bytes_per_worker.png" 2>/dev/null | od -An -tx1 | tr -d ' \n')" \
    "89504e470d0a1a0a"
expect_eq "bytes_per_worker: ps_sync P=1 and ps_async P=1 named together, twice (both panels), never apart" \
    "$(grep -o "title 'ps_sync P=1 = ps_async P=1'" <<<"$gp" | wc -l) $(grep -c "title 'ps_async P=1'" <<<"$gp")" "2 0"
expect_contains "bytes_per_worker: the ring's model and its 2K limit" "$gp" "2K, the ring''s limit"
expect_contains "bytes_per_worker: in kB" "$gp" "set ylabel 'kB sent per worker per gradient'"
expect_contains "bytes_per_worker: a panel of one PS's inbound bytes" "$gp" \
    "set title 'into one parameter server per round of N gradients'"
expect_contains "bytes_per_worker: the sharded model" "$gp" "model: N K / 2 (P = 2)"
check "bytes_into_ps.dat: ps_sync P=1 at N=4 takes 4 K x 1.03" python3 - "$R/plots/bytes_into_ps.dat" <<'PY'
import sys
rows, title = {}, None
for line in open(sys.argv[1]):
    if line.startswith("# "):
        title = line[2:].split(": learners")[0]
    elif line.strip():
        rows.setdefault(title, []).append(line.split())
got = [r for r in rows.get("ps_sync P=1", []) if r[0] == "4"]
print("# %s" % got)
sys.exit(not (got and abs(float(got[0][1]) - 4 * 4000 * 1.03) < 1 and abs(float(got[0][4]) - 16000) < 1))
PY

# ---- lessons not supported here, each with its reason ----------------------------
F="$W/few"
python3 "$FAB" "$F/runs" ps_sync:2:1::0.02 allreduce:2::ring:0.02 gossip:2:::0.02 gossip:4:::0.3
run_cmd "$C" --from "$F"/runs/*/ --out "$F/report"
expect_rc "few cells: exit 0" 0
R="$F/report"
expect_contains "1: one learner count" "$(lesson "$R" 1)" \
    "**not supported here: the matrix has them at one learner count only (N = 2); how the bytes move with N needs two or more"
expect_contains "2: no sharded cells" "$(lesson "$R" 2)" \
    "**not supported here: the matrix has no cells of ps_sync, ps_async or ps_bounded with 2 or more parameter servers"
expect_contains "3: one learner count" "$(lesson "$R" 3)" "**not supported here: the matrix has them at one learner count only (N = 2)"
expect_contains "4: no naive cells" "$(lesson "$R" 4)" \
    "**not supported here: the matrix has no allreduce cells with the naive algorithm"
expect_contains "5: gossip at N=4 30% off" "$(lesson "$R" 5)" \
    "**not supported here: gossip N=4 measured 10400 bytes against the model's 2K = 8000, off by more than the 10% tolerance**"
expect_eq "staleness words: none of ps_bounded, whose cells the report lacks" "$(grep -ci 'only .ps_bounded. drops' "$R/report.md")" 0
expect_eq "title: the modes the report has" "$(head -1 "$R/report.md")" "# ps_sync, allreduce, gossip: CartPole-v1"
expect_eq "definitions: no words on ps_async or ps_bounded, which it lacks" \
    "$(sed -n '/^## Where the figures come from/,$p' "$R/report.md" | grep -c 'ps_async\|ps_bounded')" 0
expect_contains "staleness words: allreduce's, whose cells it has" "$(cat "$R/report.md")" "*allreduce* has no parameter-server ranks"
expect_eq "communication words: no naive or mpi model without such cells" \
    "$(grep '^Bytes one learner sends and receives' "$R/report.md" | grep -c 'naive, \|mpi, not visible')" 0
# a report of gossip runs alone: no words on the PS modes' or allreduce's sync
run_cmd "$C" --from "$A"/runs/gossip-*/ --out "$W/gossip"
expect_eq "gossip alone: the time split names no PS or allreduce sync" \
    "$(sed -n '/^## Where the time goes/,/^|/p' "$W/gossip/report.md" | grep -c 'PS modes: \|Per PS shard\|allreduce: ')" 0
expect_eq "gossip alone: no allreduce in the staleness words" "$(grep '^Staleness: ' "$W/gossip/report.md" | grep -c allreduce)" 0
# the projection (a matrix on a network): where its compute per gradient comes from
proj() {
    python3 - "$TEST_ROOT" "$1" "$2" <<'PY'
import glob, os, sys
sys.path.insert(0, sys.argv[1])
from tools.compare.dims import Dims
from tools.compare.fromdirs import cell_of
from tools.compare.modelcheck import ModelCheck
cells = [cell_of(d, {}) for d in sorted(glob.glob(os.path.join(sys.argv[2], "runs", "*")))]
for c in cells:
    c.load()
os.makedirs(sys.argv[3], exist_ok=True)
mc = ModelCheck(sys.argv[3], cells, Dims(cells), {"nodes": 8, "placement": "spread", "link": "1gbit"})
print("\n".join(mc.projection()))
PY
}
p=$(proj "$F" "$W/proj-few")
expect_contains "projection without one-learner cells: says the compute is over all cells" "$p" \
    "median over all this matrix's cells, as it has no one-learner cells"
expect_eq "projection without one-learner cells: no claim of them" "$(grep -c "this matrix's one-learner cells" <<<"$p")" 0
# the fabricated compute per gradient: 2 ms x (1 + index + N); one learner: 4 ms
p=$(proj "$A" "$W/proj-all")
expect_contains "projection with one-learner cells: their compute (4.0 ms)" "$p" \
    "(4.0 ms, median over this matrix's one-learner cells:"

# ---- runs that made no updates ------------------------------------------------------
Z="$W/zero"
python3 "$FAB" "$Z/runs" ps_sync:1:1:::0 ps_sync:2:1:::0 allreduce:2::ring::0
run_cmd "$C" --from "$Z"/runs/*/ --out "$Z/report"
expect_rc "no updates: the report is written (exit 0)" 0
expect_contains "no updates: said on the terminal too" "$err" \
    "compare: warning: No finished cell made an update (allreduce-ring-L2-s1, ps_sync-L1-P1-s1, ps_sync-L2-P1-s1); the report says so at its top"
R="$Z/report"
want="**No finished cell made an update** (allreduce-ring-L2-s1, ps_sync-L1-P1-s1, ps_sync-L2-P1-s1)"
line=$(sed -n 3p "$R/report.md")
expect_eq "no updates: said in the report's first line after the title" "${line:0:${#want}}" "$want"
expect_contains "no updates: the budget that ran out, and what to raise" "$(sed -n 3p "$R/report.md")" \
    "run.max_env_steps 1000, replay.min_size 1000: learning starts once replay holds replay.min_size transitions, so raise run.max_env_steps"
expect_contains "no updates: lesson 1 has nothing measured" "$(lesson "$R" 1)" \
    "**not supported here: its cells (2) made no updates, so nothing was measured**"
expect_eq "no updates: no lesson supported" "$(grep -c '^[1-5]\. .*\*\*supported' "$R/report.md")" 0
Z2="$W/zero2"
python3 "$FAB" "$Z2/runs" ps_sync:1:1:::0 ps_sync:2:1
run_cmd "$C" --from "$Z2"/runs/*/ --out "$Z2/report"
expect_contains "some without updates: counted" "$(sed -n 3p "$Z2/report/report.md")" \
    "**1 of 2 finished cells made no updates** (ps_sync-L1-P1-s1)"
python3 "$FAB" "$W/upd/runs" ps_sync:2:1
run_cmd "$C" --from "$W/upd/runs/ps_sync-L2-P1-s1" --out "$W/upd/report"
expect_eq "every cell with updates: no such line" "$(grep -c 'made no updates\|made an update' "$W/upd/report/report.md")" 0

# ---- a budget that leaves no updates: refused before anything runs ------------------
rm -f "$W/launches"
run_cmd env GORILA_LAUNCH="$W/bin/none" "$C" configs/cartpole.yaml --set run.max_env_steps=1000 --modes ps_sync,allreduce \
    --learners 1,2 --seeds 1 --out "$W/budget"
expect_rc "max_env_steps = min_size: exit 2" 2
expect_eq "max_env_steps = min_size: one line" "$(wc -l <<<"$err")" 1
expect_contains "max_env_steps = min_size: says why and what to raise" "$err" \
    "compare: error: run.max_env_steps (1000) is not above replay.min_size (1000): learning starts once replay holds replay.min_size transitions"
expect_contains "max_env_steps = min_size: names the key to raise" "$err" "raise run.max_env_steps (e.g. --set run.max_env_steps=10000)"
expect_eq "max_env_steps = min_size: no job, no directory" "$(launches) $([ -e "$W/budget" ] && echo made || echo none)" "0 none"
run_cmd env GORILA_LAUNCH="$W/bin/none" "$C" configs/cartpole.yaml --set run.max_env_steps=1500 --set replay.min_size=2000 \
    --modes ps_sync --learners 1 --seeds 1 --out "$W/budget2"
expect_rc "max_env_steps under a raised min_size: exit 2" 2
expect_contains "max_env_steps under a raised min_size: the effective values" "$err" \
    "run.max_env_steps (1500) is not above replay.min_size (2000)"
rm -f "$W/launches"
run_cmd env GORILA_LAUNCH="$W/bin/none" "$C" configs/cartpole.yaml --set run.max_env_steps=1001 --modes ps_sync \
    --learners 1 --seeds 1 --out "$W/budget3"
expect_rc "max_env_steps above min_size: accepted (the stand-in's job fails, reported)" 0
expect_eq "max_env_steps above min_size: its job launched" "$(launches)" 1
done_testing
