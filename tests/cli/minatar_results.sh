# SPDX-License-Identifier: MIT
# scripts/minatar-results on run directories and reference logs made here
# with known values: the threshold is the floor of the median of each
# run's evaluation at exactly 1,000,000 env steps (a run without that row
# is refused); the curves average the training episodes that ended in
# each window per run (an episode ending on a window's last frame belongs
# to it), then over runs, and say whether ours is inside, above or below
# the reference's interval; a resumed run's rolled-back rows and a run's
# partial last window are left out; --group, --plot's data file and
# legend; evals' first frames at a threshold, group medians and band.
# Every expected value is worked out by hand in the comments. The PNG
# checks are a counted SKIP only where gnuplot is not installed.
source "$(dirname "$0")/../lib.sh"
cd "$TEST_ROOT" || exit 1
R="$TEST_ROOT/scripts/minatar-results"
W="$TEST_TMP/minatar-results"
rm -rf "$W"
mkdir -p "$W"

# mkrun NAME EVAL_AT_1M: a run whose eval.csv has rows at 500k and 1M
mkrun() {
    mkdir -p "$W/$1"
    printf 'wall_seconds,env_steps,updates,episodes,mean_return,std_return,min_return,max_return,solved\n' >"$W/$1/eval.csv"
    printf '1,500000,495000,20,1.0,0,0,0,0\n2,1000000,995000,20,%s,0,0,0,0\n' "$2" >>"$W/$1/eval.csv"
}
mkrun a 12.5
mkrun b 9.0
mkrun c 14.0
mkrun d 10.75
mkrun e 30.0
# sorted: 9.0 10.75 12.5 14.0 30.0 -> median 12.5 -> threshold 12
run_cmd "$R" threshold "$W"/a "$W"/b "$W"/c "$W"/d "$W"/e
expect_rc "threshold: exit 0" 0
expect_contains "threshold: median 12.5 of the five, floor 12" "$out" "median 12.500 over 5 runs; threshold (its floor) 12"
run_cmd "$R" threshold --json "$W"/a "$W"/b "$W"/c "$W"/d
# four runs: 9.0 10.75 12.5 14.0 -> median (10.75 + 12.5) / 2 = 11.625 -> 11
expect_eq "threshold --json: an even count takes the middle pair's mean" \
    "$(python3 -c 'import json,sys; d=json.loads(sys.stdin.read()); print(d["median"], d["threshold"])' <<<"$out")" "11.625 11"
mkdir -p "$W/short"
printf 'wall_seconds,env_steps,updates,episodes,mean_return,std_return,min_return,max_return,solved\n1,500000,1,20,3,0,0,0,0\n' >"$W/short/eval.csv"
run_cmd "$R" threshold "$W"/a "$W"/short
expect_rc "threshold: a run that did not reach 1M frames: exit 2" 2
expect_contains "threshold: the error names the run and its last evaluation" "$err" "short: no evaluation at 1000000 env steps (its last is at 500000)"

# curves, window 100: ours (gorila episodes.csv) and the reference's logs
# mkours NAME FRAME RETURN...: a run whose training episodes end at those frames
mkours() {
    local name=$1 i=0
    shift
    mkdir -p "$W/$name"
    printf 'wall_seconds,env_steps,actor,episode,return,length\n' >"$W/$name/episodes.csv"
    while [ $# -gt 0 ]; do
        printf '0,%s,0,%d,%s,1\n' "$1" $i "$2" >>"$W/$name/episodes.csv"
        i=$((i + 1))
        shift 2
    done
}
mkours o1 50 1 100 3 150 10 250 0
mkours o2 100 5 199 6 200 8 260 2
# o1: window 1 (frames 1-100): (1 + 3) / 2 = 2; window 2 (101-200): 10; window 3 (201-300): 0
# o2: window 1: 5; window 2: (6 + 8) / 2 = 7; window 3: 2
# ours: window 1 mean 3.5, window 2 8.5, window 3 1
printf 'frame,return\n40,1\n100,1\n180,1\n300,1\n' >"$W/r1.episodes.csv"
printf 'frame,return\n60,3\n120,1\n290,3\n' >"$W/r2.episodes.csv"
# reference: window 1: r1 1, r2 3 -> mean 2, interval [1, 3]; window 2: 1 and 1 -> [1, 1]; window 3: 1, 3 -> [1, 3]
# ours vs reference: 3.5 above 3; 8.5 above 1; 1 inside [1, 3]
run_cmd "$R" curves --ours "$W"/o1 "$W"/o2 --ref "$W"/r1 "$W"/r2 --window 100 --frames 300 --json
expect_rc "curves: exit 0" 0
got=$(python3 -c '
import json, sys
d = json.loads(sys.stdin.read())
print(" ".join("%g/%g/%s" % (w["ours"]["mean"], w["reference"]["mean"], w["ours_vs_reference"]) for w in d["windows"]))' <<<"$out")
expect_eq "curves: window means over runs and the verdicts" "$got" "3.5/2/above 8.5/1/above 1/2/inside"
got=$(python3 -c '
import json, sys
d = json.loads(sys.stdin.read())
print(" ".join("%g-%g" % tuple(w["reference"]["ci95"]) for w in d["windows"]))' <<<"$out")
expect_eq "curves: the reference's intervals span its runs' window means" "$got" "1-3 1-1 1-3"
# --permutation: per window the pooled runs' window means split every way
# into groups of 2 and 2 (C(4,2) = 6 splits):
# window 1: ours {2, 5}, ref {1, 3}, observed 3.5 - 2 = 1.5; the six splits'
#   differences are 1.5, -2.5, -0.5, 0.5, 2.5, -1.5 -> 4 of 6 at |d| >= 1.5
# window 2: ours {10, 7}, ref {1, 1}, observed 7.5; splits 7.5, 1.5, 1.5,
#   -1.5, -1.5, -7.5 -> 2 of 6
# window 3: ours {0, 2}, ref {1, 3}, observed -1; splits -1, -2, 0, 0, 2, 1 -> 4 of 6
run_cmd "$R" curves --ours "$W"/o1 "$W"/o2 --ref "$W"/r1 "$W"/r2 --window 100 --frames 300 --permutation --json
expect_rc "curves --permutation: exit 0" 0
got=$(python3 -c '
import json, sys
d = json.loads(sys.stdin.read())
print(" ".join("%g/%.4f/%d" % (w["permutation"]["difference"], w["permutation"]["p"], w["permutation"]["splits"])
               for w in d["windows"]))' <<<"$out")
expect_eq "curves --permutation: the difference and the exact p per window" "$got" \
    "1.5/0.6667/6 7.5/0.3333/6 -1/0.6667/6"
run_cmd "$R" curves --ours "$W"/o1 "$W"/o2 --ref "$W"/r1 "$W"/r2 --window 100 --frames 300 --permutation
expect_contains "curves --permutation: a column of the markdown table" "$out" "| inside | -1.00, p 0.667 |"
run_cmd "$R" curves --ours "$W"/o1 "$W"/o2 --window 100 --permutation
expect_rc "curves --permutation without --ref: exit 2" 2
expect_contains "curves --permutation without --ref: says what is missing" "$err" "--permutation: give --ours, and --ref or --ref-means"
# --ref-means: r2's window means (3, 1, 3: above) recorded in a CSV stand in
# for its log, so the means, intervals and p values are those of --ref r1 r2
printf '# r2 as recorded\nrun,window_end,mean\nr2,100,3\nr2,300,3\nr2,200,1\n' >"$W/r2-means.csv"
run_cmd "$R" curves --ours "$W"/o1 "$W"/o2 --ref "$W"/r1 --ref-means "$W/r2-means.csv" --window 100 --frames 300 \
    --permutation --json
expect_rc "curves --ref-means: exit 0" 0
got=$(python3 -c '
import json, sys
d = json.loads(sys.stdin.read())
print(d["runs"]["reference"], " ".join("%g/%g-%g/%s/%.4f" % (w["reference"]["mean"], w["reference"]["ci95"][0],
      w["reference"]["ci95"][1], w["ours_vs_reference"], w["permutation"]["p"]) for w in d["windows"]))' <<<"$out")
expect_eq "curves --ref-means: a recorded run counts as the run its log would" "$got" \
    "2 2/1-3/above/0.6667 1/1-1/above/0.3333 2/1-3/inside/0.6667"
printf 'run,window_end,mean\nx,100,3\nx,300,3\n' >"$W/gap-means.csv"
run_cmd "$R" curves --ours "$W"/o1 --ref-means "$W/gap-means.csv" --window 100
expect_rc "curves --ref-means with a missing window: exit 2" 2
expect_contains "curves --ref-means with a missing window: names the run and its windows" "$err" \
    "run x's windows end at 100,300, not at every 100 frames from 100"
run_cmd "$R" curves --ours "$W"/o1 --ref-means "$W/r2-means.csv" --window 50
expect_rc "curves --ref-means recorded on other windows than --window: exit 2" 2
printf 'run,window_end,mean\nx,100,three\n' >"$W/bad-means.csv"
run_cmd "$R" curves --ours "$W"/o1 --ref-means "$W/bad-means.csv" --window 100
expect_contains "curves --ref-means with a bad number: names the file and row" "$err" "bad-means.csv: row 2"
# 13 and 13 runs: C(26, 13) = 10,400,600 splits, above the 2,000,000 counted
thirteen() { for _ in 1 2 3 4 5 6 7 8 9 10 11 12 13; do printf '%s ' "$1"; done; }
# shellcheck disable=SC2046 # one word per run
run_cmd "$R" curves --ours $(thirteen "$W"/o1) --ref $(thirteen "$W"/r1) --window 100 --permutation
expect_rc "curves --permutation with too many splits: exit 2" 2
expect_contains "curves --permutation with too many splits: says so" "$err" "13 and 13 runs make 10400600 splits"
run_cmd "$R" curves --ours "$W"/o1 --ref "$W"/r1 --window 100
expect_contains "curves: a markdown table" "$out" "| 100 | 2.00 [2.00, 2.00] (n=1) | 1.00 [1.00, 1.00] (n=1) | above |"
run_cmd "$R" curves --window 100
expect_rc "curves without runs: exit 2" 2
run_cmd "$R" curves --ours "$W"/nothing --window 100
expect_rc "curves with a missing run: exit 2" 2

# is_png FILE: FILE starts with PNG's 8-byte signature
is_png() { [ "$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ]; }
# blocks DATA_FILE: "block:start-end:mean ..." of a curves --plot data file
blocks() { awk '/^# group/ { b = $3 + 0 } !/^#/ && NF { printf "%s%d:%s-%s:%s", sep, b, $1, $2, $3; sep = " " }' "$1"; }
has_gnuplot=0
command -v gnuplot >/dev/null && has_gnuplot=1

# curves --plot: the legend names the group, its runs and their seeds
# (run.seed of config.yaml; env.seed is not it)
printf 'run:\n  name: "o1"\n  seed: 3\n' >"$W/o1/config.yaml"
printf 'env:\n  seed: 12345\nrun:\n  seed: 4\n' >"$W/o2/config.yaml"
run_cmd "$R" curves --ours "$W"/o1 "$W"/o2 --ref "$W"/r1 "$W"/r2 --window 100 --frames 300 \
    --ours-label "gorila local" --plot "$W/curves.png"
if [ $has_gnuplot = 1 ]; then
    expect_rc "curves --plot: exit 0" 0
    check "curves --plot: the file is a PNG" is_png "$W/curves.png"
    # the numbers worked out above: ours 3.5, 8.5, 1; the reference 2, 1, 2
    expect_eq "curves --plot: the data file holds each group's window means" "$(blocks "$W/curves.dat")" \
        "0:0-100:3.5 0:100-200:8.5 0:200-300:1 1:0-100:2 1:100-200:1 1:200-300:2"
    expect_contains "curves --plot: the legend names the label, the runs and their seeds" \
        "$(cat "$W/curves.gp")" "title 'gorila local, 2 runs (seeds 3-4)'"
    expect_contains "curves --plot: the reference's default label" "$(cat "$W/curves.gp")" "title 'dqn.py, 2 runs'"
else
    ok "curves --plot # SKIP gnuplot is not installed"
fi
# --group mixes run directories and reference prefixes:
# "two" = o1 and r1: (2 + 1) / 2 = 1.5, (10 + 1) / 2 = 5.5, (0 + 1) / 2 = 0.5
# "other" = o2 and r2: (5 + 3) / 2 = 4, (7 + 1) / 2 = 4, (2 + 3) / 2 = 2.5
run_cmd "$R" curves --group two "$W"/o1 "$W"/r1 --group other "$W"/o2 "$W"/r2 --window 100 --frames 300 --json
got=$(python3 -c '
import json, sys
d = json.loads(sys.stdin.read())
print(" ".join("%g/%g" % (w["two"]["mean"], w["other"]["mean"]) for w in d["windows"]))' <<<"$out")
expect_eq "curves --group: a run directory and a reference prefix in one group" "$got" "1.5/4 5.5/4 0.5/2.5"
# a run that stopped part-way has no value in a window it did not finish:
# o4 says it ended at 220 frames (metrics.csv), so its episode at 210 is
# of a partial window; r3 at 160 (its last progress.csv row), r4 at 200
# (meta.json's frames_done)
mkours o4 50 2 150 4 210 8
printf 'wall_seconds,env_steps\n1,100\n2,220\n' >"$W/o4/metrics.csv"
printf 'frame,return\n40,1\n150,5\n' >"$W/r3.episodes.csv"
printf 'frame,wall_seconds\n100,1\n160,2\n' >"$W/r3.progress.csv"
printf 'frame,return\n40,3\n190,7\n' >"$W/r4.episodes.csv"
printf '{"frames_done": 200}\n' >"$W/r4.meta.json"
# "part" = o1 and o4: (2 + 2) / 2 = 2, (10 + 4) / 2 = 7, o1's 0 alone
# "refs" = r3 and r4: (1 + 3) / 2 = 2, r4's 7 alone, none
run_cmd "$R" curves --group part "$W"/o1 "$W"/o4 --group refs "$W"/r3 "$W"/r4 --window 100 --frames 300 --json
got=$(python3 -c '
import json, sys
d = json.loads(sys.stdin.read())
f = lambda c: "%g/%d" % (c["mean"], c["n"]) if c else "-"
print(" ".join("%s,%s" % (f(w["part"]), f(w["refs"])) for w in d["windows"]))' <<<"$out")
expect_eq "curves: a window past a run's end has no value of it" "$got" "2/2,2/2 7/2,7/1 0/1,-"
run_cmd "$R" curves --group lonely --window 100
expect_rc "curves --group without runs: exit 2" 2
expect_eq "curves --group without runs: one line" "$err" \
    "minatar-results: --group lonely: no run directories or reference prefixes after its label"
# a resumed run: its second segment starts from a checkpoint at about 120
# frames (wall time and env steps both go back), so the episodes ending at
# 150 and 250 were rolled back: windows 1 | (4 + 6) / 2 = 5 | 2
mkdir -p "$W/o3"
printf 'wall_seconds,env_steps,actor,episode,return,length\n1,50,0,0,1,1\n2,150,0,1,100,1\n3,250,0,2,100,1\n1.5,120,0,0,4,1\n2.5,180,0,1,6,1\n3.5,260,0,2,2,1\n' \
    >"$W/o3/episodes.csv"
run_cmd "$R" curves --ours "$W"/o3 --window 100 --frames 300 --json
got=$(python3 -c '
import json, sys
print(" ".join("%g" % w["ours"]["mean"] for w in json.loads(sys.stdin.read())["windows"]))' <<<"$out")
expect_eq "curves: a resumed run's rolled-back episodes are left out" "$got" "1 5 2"
# a run still going: the last line of each CSV without its newline is
# the row being written. o5 ended episodes at 50 (return 2) and 150 (4),
# and is writing one at 190 (its return cut at "10"); its metrics.csv's
# complete rows end at 220, its torn row at "29". Were the torn rows read,
# window 2 would be (4 + 10) / 2 = 7, and the run's end 190 would leave
# window 2 unfinished (no value)
mkdir -p "$W/o5"
printf 'wall_seconds,env_steps,actor,episode,return,length\n1,50,0,0,2,1\n2,150,0,1,4,1\n3,190,0,2,10' \
    >"$W/o5/episodes.csv"
printf 'wall_seconds,env_steps\n1,100\n2,220\n3,29' >"$W/o5/metrics.csv"
run_cmd "$R" curves --ours "$W"/o5 --window 100 --frames 300 --json
expect_rc "curves: a run whose CSVs end in a row being written: exit 0" 0
got=$(python3 -c '
import json, sys
f = lambda c: "%g" % c["mean"] if c else "-"
print(" ".join(f(w["ours"]) for w in json.loads(sys.stdin.read())["windows"]))' <<<"$out")
# windows 1 and 2: 2 and 4; window 3 (201-300) is past the run's end, 220
expect_eq "curves: the row being written is left out, and the run ends at its last complete row" "$got" "2 4 -"
# a complete row that is not a number: one line naming the file and line
mkdir -p "$W/o6"
printf 'wall_seconds,env_steps,actor,episode,return,length\n1,50,0,0,2,1\n2,x,0,1,4,1\n' >"$W/o6/episodes.csv"
run_cmd "$R" curves --ours "$W"/o6 --window 100
expect_rc "curves: a bad episodes row: exit 2" 2
expect_eq "curves: a bad episodes row: one line naming the file and line" "$err" \
    "minatar-results: $W/o6/episodes.csv:3: not an episodes row (env_steps, return)"

# evals: runs A, B, C evaluated at 100, 200, 300 env steps
# mkeval NAME "WALL STEPS UPDATES RETURN"...
mkeval() {
    local name=$1
    shift
    mkdir -p "$W/$name"
    printf 'wall_seconds,env_steps,updates,episodes,mean_return,std_return,min_return,max_return,solved\n' >"$W/$name/eval.csv"
    for row in "$@"; do
        # shellcheck disable=SC2086 # the row's four fields
        set -- $row
        printf '%s,%s,%s,20,%s,0,0,0,0\n' "$1" "$2" "$3" "$4" >>"$W/$name/eval.csv"
    done
}
mkeval A "10 100 95 1" "20 200 195 2" "30 300 295 3"
mkeval B "11 100 95 3" "25.5 200 195 4" "31 300 295 5"
mkeval C "12 100 95 5" "22 200 195 6" "33 300 295 9"
# D resumed from a checkpoint at 120 updates: its rows at 195 and 295
# updates (returns 9) were rolled back; the new segment's are 2 and 3
mkeval D "10 100 95 1" "20 200 195 9" "30 300 295 9" "21 205 195 2" "31 305 295 3"
# threshold 4: A never (best 3); B at 200 frames, 25.5 s (4 reaches 4); C at 100, 12 s
# group median: sorted 100, 200, not reached -> 200 frames; 12, 25.5, not reached -> 25.5 s
run_cmd "$R" evals --group abc "$W"/A "$W"/B "$W"/C --group resumed "$W"/D --threshold 4
expect_rc "evals: exit 0" 0
expect_contains "evals: a run that never reached the threshold" "$out" "| abc | A | 3 (300) | 3.00 (300) | not reached | not reached |"
expect_contains "evals: the first evaluation at the threshold counts" "$out" "| abc | B | 3 (300) | 5.00 (300) | 200 | 25.5 |"
expect_contains "evals: the first that reached it" "$out" "| abc | C | 3 (300) | 9.00 (300) | 100 | 12.0 |"
expect_contains "evals: the group's median, a run not reaching it counted last" "$out" \
    "| abc | median (2 of 3 reached) | | | 200 | 25.5 |"
expect_contains "evals: a resumed run's rolled-back evaluations do not reach it" "$out" \
    "| resumed | median (0 of 1 reached) | | | not reached | not reached |"
expect_contains "evals: says which evaluations a resume rolled back" "$out" \
    "D: left out 2 evaluation(s) that a resume rolled back (at env steps 200, 300)"
run_cmd "$R" evals --group abc "$W"/A "$W"/B "$W"/C --threshold 4 --json
got=$(python3 -c '
import json, sys
g = json.loads(sys.stdin.read())["groups"][0]
print(" ".join(str(r["reached_env_steps"]) for r in g["runs"]), g["median_env_steps"], g["median_seconds"])' <<<"$out")
expect_eq "evals --json: each run's first frames at the threshold and the medians" "$got" "None 200 100 200 25.5"
run_cmd "$R" evals --group abc "$W"/A "$W"/B "$W"/C --threshold 4 --plot "$W/evals.png"
if [ $has_gnuplot = 1 ]; then
    expect_rc "evals --plot: exit 0" 0
    check "evals --plot: the file is a PNG" is_png "$W/evals.png"
    # at 100 frames the runs' returns are 1, 3, 5: median 3, quartiles 2 and 4;
    # at 300: 3, 5, 9: median 5, quartiles 4 and 7 (type 7: 3 + 0.5 * 2, 5 + 0.5 * 4)
    expect_eq "evals --plot: the band's first and last points" \
        "$(grep -v '^#' "$W/evals.dat" | grep . | sed -n '1p;$p' | tr '\n' '|')" "100 3 2 4 3|300 5 4 7 3|"
    expect_contains "evals --plot: the threshold drawn" "$(cat "$W/evals.gp")" "title 'threshold 4'"
    # returns and evaluations rise: the key sits bottom right, away from the curves' ends
    expect_contains "evals --plot: the key bottom right" "$(cat "$W/evals.gp")" "set key bottom right"
    run_cmd "$R" evals --group abc "$W"/A "$W"/B "$W"/C --axis seconds --plot "$W/evals-s.png"
    # against wall seconds the last point is C's end, 33 s: 3, 5, 9 again
    expect_eq "evals --axis seconds: the band ends at the longest run's wall time" \
        "$(grep -v '^#' "$W/evals-s.dat" | grep . | tail -1)" "33 5 4 7 3"
else
    ok "evals --plot # SKIP gnuplot is not installed"
fi

# bad input: one line on stderr, exit 2
run_cmd "$R" evals --group abc "$W"/A "$W"/o1 --threshold 4
expect_rc "evals: a run without eval.csv: exit 2" 2
expect_eq "evals: a run without eval.csv: one line naming it" "$err" "minatar-results: $W/o1: no eval.csv (not a gorila run directory?)"
for bad in abc nan; do
    run_cmd "$R" evals --group abc "$W"/A --threshold $bad
    expect_rc "evals --threshold $bad: exit 2" 2
    expect_eq "evals --threshold $bad: one line" "$err" "minatar-results: --threshold: not a number: '$bad'"
done
run_cmd "$R" evals --group abc
expect_rc "evals --group without runs: exit 2" 2
expect_eq "evals --group without runs: one line" "$(wc -l <<<"$err")" 1
run_cmd "$R" evals --group abc "$W"/A --plot "$W/evals.svg"
expect_rc "evals --plot other than .png: exit 2" 2
expect_contains "evals --plot other than .png: says why" "$err" "--plot $W/evals.svg: name a .png file"
# without gnuplot (a PATH that has python3 only, the interpreter itself,
# not a version manager's shim): the comparison tool's words, no PNG
mkdir -p "$W/nognuplot"
ln -sf "$(python3 -c 'import sys; print(sys.executable)')" "$W/nognuplot/python3"
rm -f "$W/none.png"
run_cmd env PATH="$W/nognuplot" "$R" evals --group abc "$W"/A --plot "$W/none.png"
expect_rc "evals --plot without gnuplot: exit 2" 2
expect_eq "evals --plot without gnuplot: says so in one line" "$err" \
    "minatar-results: gnuplot is not installed: no plots (scripts/install-deps.sh installs gnuplot-nox)"
check "evals --plot without gnuplot: no PNG" test ! -e "$W/none.png"
done_testing
