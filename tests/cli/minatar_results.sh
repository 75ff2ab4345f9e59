# SPDX-License-Identifier: MIT
# scripts/minatar-results on run directories and reference logs made here
# with known values: the threshold is the floor of the median of each
# run's evaluation at exactly 1,000,000 env steps (a run without that row
# is refused); the curves average the training episodes that ended in
# each window per run (an episode ending on a window's last frame belongs
# to it), then over runs, and say whether ours is inside, above or below
# the reference's interval. Every expected value is worked out by hand in
# the comments.
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
run_cmd "$R" curves --ours "$W"/o1 --ref "$W"/r1 --window 100
expect_contains "curves: a markdown table" "$out" "| 100 | 2.00 [2.00, 2.00] (n=1) | 1.00 [1.00, 1.00] (n=1) | above |"
run_cmd "$R" curves --window 100
expect_rc "curves without runs: exit 2" 2
run_cmd "$R" curves --ours "$W"/nothing --window 100
expect_rc "curves with a missing run: exit 2" 2
done_testing
