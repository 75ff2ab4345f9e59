# SPDX-License-Identifier: MIT
# scripts/compare on a tiny real matrix (CartPole, ps_sync and allreduce, 1
# and 2 learners, 2 seeds, 12000 env steps): the report has a row per cell
# and per (mode, learners) whose figures are the runs' summary.json (the
# expected medians computed here, in awk, not by the script), the plots are
# PNGs, --from on the same runs gives the same tables, bad input is refused
# and leaves an existing report directory as it was, a failed job shows as
# failed with its exit status while the matrix goes on, and --resume runs
# only the cells without a summary.json. Two more small matrices sweep the
# parameter-server count (--param-servers) and the allreduce algorithm
# (--allreduce-impls): a row per P and per algorithm, again checked against
# the runs' summary.json, and the bytes-per-worker plot against them too.
# (--hostfile through stand-ins, which starts no job: tests/cli/compare.sh.)
source "$(dirname "$0")/../lib.sh"
cd "$TEST_ROOT" || exit 1
# The sanitizer run (make test-asan: unit and CLI tests) starts no MPI jobs,
# as it runs none of tests/mpi: Open MPI's own allocations fail LeakSanitizer.
if [ -n "${ASAN_OPTIONS:-}" ]; then
    ok "scripts/compare # SKIP runs MPI jobs; not under the sanitizer build (make test runs it)"
    done_testing
    exit
fi
C="$TEST_ROOT/scripts/compare"
W="$TEST_TMP/compare"
rm -rf "$W"
mkdir -p "$W/bin"
source "$TEST_ROOT/scripts/summary.sh"
t0=$SECONDS
small=(configs/cartpole.yaml --set run.max_env_steps=12000 --set eval.every_updates=200 --set eval.episodes=20
    --set checkpoint.every_seconds=0)

# Stand-in launchers ($GORILA_LAUNCH): one that counts its launches, one that
# also makes every allreduce job diverge (exit 5, as tests/mpi/faults.sh does).
cat >"$W/bin/count" <<EOF
#!/usr/bin/env bash
echo "\$*" >>"$W/launches"
exec "$TEST_ROOT/scripts/launch" "\$@"
EOF
cat >"$W/bin/diverge" <<EOF
#!/usr/bin/env bash
echo "\$*" >>"$W/launches"
case " \$* " in *" sync.mode=allreduce "*)
    exec "$TEST_ROOT/scripts/launch" "\$@" --set optimizer.kind=sgd --set optimizer.lr=10 --set optimizer.grad_clip=0 \\
        --set agent.huber_delta=1e6 --set agent.gamma=1 --set network.hidden=[16] ;;
esac
exec "$TEST_ROOT/scripts/launch" "\$@"
EOF
chmod +x "$W/bin/count" "$W/bin/diverge"
launches() { if [ -f "$W/launches" ]; then wc -l <"$W/launches"; else echo 0; fi; }

# ---- the matrix -----------------------------------------------------------------
D="$W/m"
run_cmd "$C" "${small[@]}" --modes ps_sync,allreduce --learners 1,2 --seeds 2 --out "$D"
expect_rc "matrix: exit status 0" 0
expect_eq "matrix: one progress line per cell" "$(grep -c '^\[[1-8]/8\] ' <<<"$out")" 8
expect_contains "matrix: progress line names the cell and its exit status" "$out" "[8/8] allreduce 2 learners seed 2: "
expect_contains "matrix: progress line estimates the time left" "$out" " elapsed, ~"
expect_contains "matrix: says where the report is" "$out" "report: $D/report.md"
R="$D/report.md"
check "matrix: report.md written" [ -s "$R" ]
echo "# matrix: $((SECONDS - t0)) s"

# field N of the Markdown row that starts with PREFIX in section SECTION
row() { awk -v s="## $1" -v p="$2" '$0 == s { on = 1; next } /^## / { on = 0 } on && index($0, p) == 1 { print; exit }' "$R"; }
field() { awk -F' [|] ' -v n="$1" '{ sub(/^[|] /, ""); sub(/ [|]$/, ""); print $n }'; }
f1() { awk -v x="$1" -v f="$2" 'BEGIN { if (x == "" || x == "null") print "\342\200\224"; else printf f, x }'; }
# median and IQR of the numbers on stdin, as the report prints them: the
# median alone for one value, "M (IQR Q1–Q3)" for more (linear interpolation
# between order statistics), an em dash for none
stat() {
    sort -g | awk -v f="$1" '{ v[NR] = $1 }
        function q(p,   pos, lo, hi) { pos = (NR - 1) * p; lo = int(pos); hi = lo + 1; if (hi > NR - 1) hi = NR - 1
            return v[lo + 1] + (v[hi + 1] - v[lo + 1]) * (pos - lo) }
        END { if (NR == 0) { print "\342\200\224"; exit }
              m = sprintf(f, q(0.5)); if (NR == 1) print m; else printf "%s (IQR " f "\342\200\223" f ")\n", m, q(0.25), q(0.75) }'
}
for mode in ps_sync allreduce; do
    for L in 1 2; do
        solved=0
        steps=()
        secs=()
        finals=()
        bests=()
        ups=()
        for seed in 1 2; do
            s="$D/runs/$mode-L$L-s$seed/summary.json"
            check "$mode L$L seed $seed: run directory $mode-L$L-s$seed has summary.json" [ -f "$s" ]
            expect_eq "$mode L$L seed $seed: summary.json has the cell's mode" "$(jget "$s" mode)" "$mode"
            expect_eq "$mode L$L seed $seed: summary.json has the cell's seed" "$(jget "$s" seed)" "$seed"
            r=$(row Runs "| $mode | $L | $seed |")
            if [ -z "$r" ]; then not_ok "$mode L$L seed $seed: row in the runs table"; continue; fi
            sv=$(jget "$s" solved)
            want="ok | $([ "$sv" = true ] && echo yes || echo no) | $(f1 "$(jget "$s" solved_at_env_steps)" %.0f)"
            want+=" | $(f1 "$(jget "$s" solved_at_seconds)" %.2f) | $(f1 "$(jget "$s" last_eval_mean_return)" %.1f)"
            want+=" | $(f1 "$(jget "$s" best_eval_mean_return)" %.1f) | $(jget "$s" env_steps) | $(jget "$s" updates)"
            want+=" | $(f1 "$(jget "$s" updates_per_second)" %.0f) | $(f1 "$(jget "$s" env_steps_per_second)" %.0f)"
            expect_eq "$mode L$L seed $seed: runs-table row matches summary.json" \
                "$(field 4 <<<"$r") | $(field 5 <<<"$r") | $(field 6 <<<"$r") | $(field 7 <<<"$r") | $(field 8 <<<"$r") | $(field 9 <<<"$r") | $(field 10 <<<"$r") | $(field 11 <<<"$r") | $(field 12 <<<"$r") | $(field 13 <<<"$r")" \
                "$want"
            # bytes per update summed over the roles = all bytes sent / updates
            bpu=$(field 16 <<<"$r")
            check "$mode L$L seed $seed: bytes/update $bpu is summary.json's bytes_per_update" \
                awk -v a="$bpu" -v b="$(jget "$s" bytes_per_update)" 'BEGIN { d = a - b; exit !(d < 1 && d > -1) }'
            if [ "$mode" = allreduce ]; then
                expect_eq "$mode L$L seed $seed: no staleness (no PS ranks)" "$(field 17 <<<"$r")" "0 (by construction)"
            fi
            if [ "$sv" = true ]; then
                solved=$((solved + 1))
                steps+=("$(jget "$s" solved_at_env_steps)")
                secs+=("$(jget "$s" solved_at_seconds)")
            fi
            finals+=("$(jget "$s" last_eval_mean_return)")
            bests+=("$(jget "$s" best_eval_mean_return)")
            ups+=("$(jget "$s" updates_per_second)")
        done
        g=$(row Learning "| $mode | $L |")
        want="$solved/2 | $(printf '%s\n' "${steps[@]}" | grep . | stat %.0f) | $(printf '%s\n' "${secs[@]}" | grep . | stat %.2f)"
        want+=" | $(printf '%s\n' "${finals[@]}" | stat %.1f) | $(printf '%s\n' "${bests[@]}" | stat %.1f)"
        expect_eq "$mode L$L: learning row (solved, medians and IQR to solve, final and best eval) from summary.json" \
            "$(field 3 <<<"$g") | $(field 4 <<<"$g") | $(field 5 <<<"$g") | $(field 6 <<<"$g") | $(field 7 <<<"$g")" "$want"
        g=$(row "Throughput, staleness, waiting" "| $mode | $L |")
        u=$(printf '%s\n' "${ups[@]}" | sort -g | awk '{ v[NR] = $1 } END { printf "%.0f", v[1] + (v[2] - v[1]) * 0.5 }')
        expect_eq "$mode L$L: median updates/s from summary.json" "$(field 3 <<<"$g")" "$u"
        if [ $mode = ps_sync ]; then
            expect_eq "$mode L$L: ps_sync gradients are never stale (p99)" "$(field 9 <<<"$g")" "0"
        else
            expect_eq "$mode L$L: allreduce staleness by construction" "$(field 8 <<<"$g")" "0 (by construction)"
        fi
    done
done
# Communication per worker: each row's sent/gradient is the median over the
# cell's runs of the mean over learners of summary.json's
# sync_bytes_sent_per_gradient (computed here, in Python, not by the
# script), and within 5% of the model; every cell whose ranks outnumber the
# cores is warned about.
check "communication rows: measured bytes per worker from summary.json, within 5% of the model" python3 - "$D" "$R" <<'PY'
import json, statistics, sys
d, rep = sys.argv[1], open(sys.argv[2]).read()
sec = rep.split("## Communication per worker")[1].split("\n## ")[0]
bad = 0
for mode in ("ps_sync", "allreduce"):
    for L in (1, 2):
        means = []
        for seed in (1, 2):
            s = json.load(open("%s/runs/%s-L%d-s%d/summary.json" % (d, mode, L, seed)))
            ls = s["per_worker"]["learners"]
            means.append(sum(w["sync_bytes_sent_per_gradient"] for w in ls) / len(ls))
        row = [r for r in sec.splitlines() if r.startswith("| %s | %d |" % (mode, L))]
        cells = row[0].strip("| ").split(" | ") if row else []
        want = "%.0f" % statistics.median(means)
        ratio = cells[4] if len(cells) > 4 else ""
        ok = cells[2:3] == [want] and (ratio == "\u2014" if L == 1 and mode == "allreduce" else
                                       ratio and 0.95 <= float(ratio) <= 1.05)
        print("# %s L%d: %s, want sent %s, ratio %s" % (mode, L, row, want, ratio))
        bad += not ok
sys.exit(bad)
PY
ranks=$(python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); print(sum(len(v) for v in s["roles"].values()))' \
    "$D/runs/ps_sync-L2-s1/summary.json")
if [ "$ranks" -gt "$(nproc)" ]; then
    expect_contains "report: warns that ps_sync with 2 learners has more ranks than cores" \
        "$(grep -F "**More ranks than the $(nproc) cores** in " "$R")" "ps_sync, 2 learners ($ranks ranks)"
    expect_eq "report: the cores caveat said once" "$(grep -c 'time-share the cores' "$R")" 1
else
    check "report: ps_sync with 2 learners fits the cores ($ranks ranks, $(nproc) cores): no warning" \
        bash -c '! grep -qF "**ps_sync, 2 learners: " "$1"' _ "$R"
fi
expect_contains "report: states the command" "$(cat "$R")" "- Command: \`$C configs/cartpole.yaml"
expect_contains "report: states the machine" "$(cat "$R")" "$(nproc) cores (nproc)"
expect_contains "report: explains the staleness histogram's last bin" "$(cat "$R")" "the last counting every gradient 15 or more"
expect_contains "report: says how stopped runs enter the curves" "$(cat "$R")" "carries its last value forward"
for p in eval_vs_time eval_vs_steps throughput bytes_per_update staleness bytes_per_worker; do
    expect_eq "$p.png is a PNG" "$(head -c 8 "$D/$p.png" 2>/dev/null | od -An -tx1 | tr -d ' \n')" "89504e470d0a1a0a"
    expect_contains "report embeds $p.png" "$(cat "$R")" "]($p.png)"
done
check "bytes_per_worker: its data and gnuplot script in plots/" \
    [ -s "$D/plots/bytes_per_worker.dat" -a -s "$D/plots/bytes_per_worker.gp" ]
expect_eq "no --param-servers or --allreduce-impls: no such column, names or state" \
    "$(grep -c '| param servers |\|allreduce (' "$R"; find "$D/runs" -mindepth 1 -maxdepth 1 -name '*-P[0-9]*' -o -mindepth 1 -maxdepth 1 -name '*-ring-*' | grep -c .; grep -c '"param_servers"\|"allreduce_impl' "$D/compare.json")" \
    "$(printf '0\n0\n0')"

# ---- --from on the same runs -----------------------------------------------------------
run_cmd "$C" --from "$D"/runs/*/ --out "$W/from"
expect_rc "--from: exit status 0" 0
tables() { sed -n '/^## Learning/,/^## Runs/p' "$1"; }
expect_eq "--from: the same per-(mode, learners) tables" "$(tables "$W/from/report.md")" "$(tables "$R")"
expect_eq "--from: a runs-table row per run" "$(sed -n '/^## Runs/,/^## /p' "$W/from/report.md" | grep -c '^| [a-z_]* | [0-9]')" 8
# The report names the build that ran the jobs: what `gorila version` says,
# its lines joined by "; " (it used to claim that gorila had no version).
ver=$("$GORILA" version | awk 'NF { sub(/^[ \t]+/, ""); sub(/[ \t]+$/, ""); printf "%s%s", sep, $0; sep = "; " }')
check "gorila version prints something" [ -n "$ver" ]
expect_contains "report: gorila version's output" "$(cat "$R")" "- gorila: \`$GORILA version\`: $ver"
expect_contains "--from report: gorila version's output" "$(cat "$W/from/report.md")" "- gorila: \`$GORILA version\`: $ver"
expect_eq "report: no claim that gorila has no version" "$(grep -c 'has no --version' "$R" "$W/from/report.md")" \
    "$(printf '%s:0\n' "$R" "$W/from/report.md")"

# The summary.json fields a run writes (gradients, samples_trained,
# bytes_per_update_by_role, roles.learner[].ring) are shown when present;
# without them (runs of older builds) the report computes bytes by role or
# shows a dash. Both from hand-set values in copies of a real run.
mkdir -p "$W/newkeys" "$W/oldkeys"
cp -r "$D/runs/allreduce-L2-s1" "$W/newkeys/run"
cp -r "$D/runs/allreduce-L2-s1" "$W/oldkeys/run"
python3 - "$W/newkeys/run/summary.json" "$W/oldkeys/run/summary.json" <<'PY'
import json, sys
new, old = sys.argv[1], sys.argv[2]
s = json.load(open(new))
s["gradients"], s["samples_trained"] = 12345, 777000
s["bytes_per_update_by_role"] = {"coordinator": 1, "actor": 100, "replay": 2000, "learner": 55555}
for ln in s["roles"]["learner"]:
    ln["ring"] = {"msgs_sent": 1, "bytes_sent": 8, "msgs_recv": 1, "bytes_recv": 8, "rounds": 42,
                  "seconds": s["wall_seconds"] / 4}
json.dump(s, open(new, "w"), indent=2)
s = json.load(open(old))
for k in ("gradients", "samples_trained", "bytes_per_update_by_role"):
    s.pop(k, None)
for ln in s["roles"]["learner"]:
    ln.pop("ring", None)
    ln.pop("samples_trained", None)
json.dump(s, open(old, "w"), indent=2)
PY
run_cmd "$C" --from "$W/newkeys/run" --out "$W/newkeys/report"
expect_rc "--from, new summary keys: exit 0" 0
R="$W/newkeys/report/report.md"
r=$(row Runs "| allreduce | 2 | 1 |")
expect_eq "new keys: gradients, samples trained, bytes/update (sum of bytes_per_update_by_role)" \
    "$(field 14 <<<"$r") | $(field 15 <<<"$r") | $(field 16 <<<"$r")" "12345 | 777000 | 57656"
expect_contains "new keys: bytes by role from bytes_per_update_by_role" "$(cat "$R")" "| allreduce | 2 | 1 | 100 | 2000 | 55555 | 0 (no such ranks) |"
expect_contains "new keys: share of time in the ring, from roles.learner[].ring.seconds" \
    "$(grep -F '| allreduce | 2 |' "$R" | grep -F '(no such ranks) |')" "| 25% |"
run_cmd "$C" --from "$W/oldkeys/run" --out "$W/oldkeys/report"
expect_rc "--from, summary without the new keys: exit 0" 0
R="$W/oldkeys/report/report.md"
expect_eq "without them: samples trained is a dash" "$(field 15 <<<"$(row Runs '| allreduce | 2 | 1 |')")" "—"
R="$D/report.md"

# ---- bad input: exit 2, a message, the existing directory untouched ----------------------
tree_sum() { (cd "$1" && find . -type f -print0 | sort -z | xargs -0 md5sum | md5sum); }
before=$(tree_sum "$D")
rm -f "$W/launches"
cp -r "$D/runs/ps_sync-L1-s1" "$W/acrobot-run"
sed -i 's/"env": "CartPole-v1"/"env": "Acrobot-v1"/' "$W/acrobot-run/summary.json"
while IFS='|' read -r name args want; do
    eval "set -- $args"
    run_cmd env GORILA_LAUNCH="$W/bin/count" "$C" "$@"
    expect_rc "bad input ($name): exit status 2" 2
    expect_contains "bad input ($name): says why" "$err" "$want"
    expect_eq "bad input ($name): one line" "$(wc -l <<<"$err")" 1
    expect_eq "bad input ($name): $D untouched" "$(tree_sum "$D")" "$before"
done <<EOF
unknown mode|configs/cartpole.yaml --modes ps_sync,bogus --out "$W/x"|compare: error: unknown mode 'bogus' in --modes (modes: ps_sync, ps_async, ps_bounded, allreduce, gossip, easgd, local_sgd)
learner count 0|configs/cartpole.yaml --learners 1,0 --out "$W/x"|--learners: learner counts must be integers >= 1, got '0'
too many ranks|configs/cartpole.yaml --modes allreduce,ps_sync --learners 2,4 --max-ranks 7 --out "$W/x"|ps_sync with 4 learners needs 8 MPI ranks (coordinator 1, actors 1, replay shards 1, learners 4, parameter servers 1), more than --max-ranks 7
existing --out|${small[*]} --modes ps_sync --learners 1 --seeds 1 --out "$D"|$D exists; add --resume
missing config|"$W/none.yaml" --out "$W/x"|config $W/none.yaml: no such file
a --set the matrix owns|configs/cartpole.yaml --set sync.mode=ps_async --out "$W/x"|the matrix sets sync.mode itself (use --modes)
--resume with other --set|configs/cartpole.yaml --resume --out "$D"|was made with --set run.max_env_steps=12000
--from mixed environments|--from "$D/runs/ps_sync-L1-s1" "$W/acrobot-run" --out "$W/x"|--from runs are from different environments: Acrobot-v1: $W/acrobot-run; CartPole-v1: $D/runs/ps_sync-L1-s1
--from without summary.json|--from "$D/runs/ps_sync-L1-s1" "$D/logs" --out "$W/x"|--from $D/logs has no summary.json
--from onto an existing --out|--from "$D/runs/ps_sync-L1-s1" --out "$D"|$D exists; choose another --out
--param-servers 0|configs/cartpole.yaml --param-servers 1,0 --out "$W/x"|compare: error: --param-servers: parameter-server counts must be integers >= 1, got '0'
--param-servers x|configs/cartpole.yaml --param-servers x --out "$W/x"|compare: error: --param-servers: parameter-server counts must be integers >= 1, got 'x'
unknown --allreduce-impls|configs/cartpole.yaml --allreduce-impls ring,bogus --out "$W/x"|compare: error: unknown allreduce algorithm 'bogus' in --allreduce-impls (allreduce_impls: ring, naive, mpi, hierarchical)
EOF
check "bad input: no other output directory made" [ ! -e "$W/x" ]
expect_eq "bad input: no job launched" "$(launches)" 0

# ---- --resume of a finished matrix: nothing runs -------------------------------------------
rm -f "$W/launches"
run_cmd env GORILA_LAUNCH="$W/bin/count" "$C" "${small[@]}" --modes ps_sync,allreduce --learners 1,2 --seeds 2 --out "$D" --resume
expect_rc "--resume of a finished matrix: exit 0" 0
expect_eq "--resume of a finished matrix: no job launched" "$(launches)" 0
expect_eq "--resume of a finished matrix: every cell kept" "$(grep -c 'already done (kept)' <<<"$out")" 8
expect_eq "--resume of a finished matrix: the same tables" "$(tables "$R")" "$(tables "$W/from/report.md")"

# ---- a failed job: listed with its exit status, the matrix goes on -------------------------
F="$W/f"
rm -f "$W/launches"
run_cmd env GORILA_LAUNCH="$W/bin/diverge" "$C" "${small[@]}" --modes allreduce,ps_sync --learners 1 --seeds 1 --out "$F"
expect_rc "failed cell: compare still exits 0" 0
expect_eq "failed cell: both cells launched" "$(launches)" 2
expect_contains "failed cell: progress line has the exit status" "$out" "[1/2] allreduce 1 learner seed 1: failed (no summary.json) | exit 5;"
expect_contains "failed cell: the next cell ran" "$out" "[2/2] ps_sync 1 learner seed 1: "
R="$F/report.md"
expect_contains "failed cell: runs table says failed (exit 5)" "$(row Runs '| allreduce | 1 | 1 |')" "| failed (exit 5) |"
expect_contains "failed cell: learning table counts it" "$(row Learning '| allreduce | 1 |')" "| 0/1 (1 failed) |"
expect_contains "failed cell: the divergence message is quoted" "$(cat "$R")" "training diverged"
expect_contains "failed cell: the other cell is ok" "$(row Runs '| ps_sync | 1 | 1 |')" "| ok |"

# ---- --resume runs only the cells without summary.json -----------------------------------
rm -f "$W/launches"
run_cmd env GORILA_LAUNCH="$W/bin/count" "$C" "${small[@]}" --modes allreduce,ps_sync --learners 1 --seeds 1 --out "$F" --resume
expect_rc "--resume: exit 0" 0
expect_eq "--resume: one job launched (the failed cell)" "$(launches)" 1
expect_contains "--resume: it was the allreduce cell" "$(cat "$W/launches" 2>/dev/null)" "sync.mode=allreduce"
expect_contains "--resume: the finished cell kept" "$out" "[2/2] ps_sync 1 learner seed 1: already done (kept)"
check "--resume: the failed attempt's directory kept aside" [ -d "$F/runs/allreduce-L1-s1.incomplete-1" ]
check "--resume: the cell now has its summary.json" [ -f "$F/runs/allreduce-L1-s1/summary.json" ]
expect_contains "--resume: the report shows it ok" "$(row Runs '| allreduce | 1 | 1 |')" "| ok |"
expect_contains "--resume: the report names the first command" "$(cat "$R")" "- Resumed (--resume): the matrix was started"

# ---- --param-servers and --allreduce-impls: a row per P, a row per algorithm -------------
PD="$W/p"
AD="$W/a"
run_cmd "$C" "${small[@]}" --modes ps_sync --learners 1 --param-servers 1,2 --seeds 1 --out "$PD"
expect_rc "--param-servers 1,2: exit status 0" 0
expect_contains "--param-servers: progress line names P" "$out" "[2/2] ps_sync 1 learner 2 parameter servers seed 1: "
run_cmd "$C" "${small[@]}" --modes allreduce --learners 2 --allreduce-impls ring,naive --seeds 1 --out "$AD"
expect_rc "--allreduce-impls ring,naive: exit status 0" 0
expect_contains "--allreduce-impls: progress line names the algorithm" "$out" "[2/2] allreduce (naive) 2 learners seed 1: "
# Each cell's rows (learning, throughput, communication, runs) and its
# bytes_per_worker.dat points against its summary.json, formatted here.
last=
while IFS=$'\t' read -r verdict name detail; do
    last=$name
    if [ "$verdict" = end ]; then continue; fi
    if [ "$verdict" = ok ]; then ok "$name"; else
        not_ok "$name"
        echo "# $detail"
    fi
done < <(python3 - "$PD" "$AD" <<'PY'
import json, os, sys
pd, ad = sys.argv[1], sys.argv[2]
DASH = "\u2014"


def f(x, spec):
    return DASH if x is None else format(x, spec)


def row(rep, section, prefix):
    """The first row starting with prefix in the section (its first table)."""
    sec = rep.split("\n## %s\n" % section)[1].split("\n## ")[0]
    rows = [r for r in sec.splitlines() if r.startswith(prefix)]
    return rows[0].strip("| ").split(" | ") if rows else ["(no row)"]


def say(good, name, got, want):
    print("%s\t%s\tgot %s, want %s" % ("ok" if good else "not_ok", name, got, want))


def blocks(path):
    """{title: [[numbers] per line]} of bytes_per_worker.dat."""
    out, title = {}, None
    for line in open(path):
        if line.startswith("# "):
            title = line[2:].split(": learners")[0]
            out[title] = []
        elif line.strip():
            out[title].append(line.split())
    return out


cells = [(pd, "ps_sync-L1-P1-s1", "| ps_sync | 1 | 1 |", "ps_sync P=1", 1, None),
         (pd, "ps_sync-L1-P2-s1", "| ps_sync | 1 | 2 |", "ps_sync P=2", 2, None),
         (ad, "allreduce-ring-L2-s1", "| allreduce (ring) | 2 |", "allreduce (ring)", 0, "ring"),
         (ad, "allreduce-naive-L2-s1", "| allreduce (naive) | 2 |", "allreduce (naive)", 0, "naive")]
for d, name, prefix, title, P, impl in cells:
    what = prefix.strip("| ").replace(" | ", " ")
    s = json.load(open(os.path.join(d, "runs", name, "summary.json")))
    rep = open(os.path.join(d, "report.md")).read()
    ls = s["per_worker"]["learners"]
    say((s["per_worker"]["n_param_servers"], s.get("allreduce_impl")) == (P, impl),
        "%s: run directory %s ran with its P / algorithm" % (what, name),
        (s["per_worker"]["n_param_servers"], s.get("allreduce_impl")), (P, impl))
    solved = s["solved"] is True
    want = ["%d/1" % solved, f(s["solved_at_env_steps"] if solved else None, ".0f"),
            f(s["solved_at_seconds"] if solved else None, ".2f"), f(s["last_eval_mean_return"], ".1f"),
            f(s["best_eval_mean_return"], ".1f")]
    got = row(rep, "Learning", prefix + " ")[-5:]
    say(got == want, "%s: learning row from summary.json" % what, got, want)
    want = [f(s["updates_per_second"], ".0f"), f(s["env_steps_per_second"], ".0f")]
    got = row(rep, "Throughput, staleness, waiting", prefix + " ")[-8:-6]
    say(got == want, "%s: updates/s and env steps/s from summary.json" % what, got, want)
    mean = sum(w["sync_bytes_sent_per_gradient"] for w in ls) / len(ls)
    model = sum(w["model_bytes_sent_per_gradient"] for w in ls) / len(ls)
    want = ["%.0f" % mean, "%.0f" % model]
    got = row(rep, "Communication per worker", prefix + " ")[-6:-4]
    say(got == want, "%s: sent per gradient and its model from summary.json" % what, got, want)
    want = ["1", "ok", "yes" if solved else "no", f(s["solved_at_env_steps"], ".0f"), f(s["solved_at_seconds"], ".2f"),
            f(s["last_eval_mean_return"], ".1f"), f(s["best_eval_mean_return"], ".1f"), f(s["env_steps"], ".0f"),
            f(s["updates"], ".0f"), f(s["updates_per_second"], ".0f"), f(s["env_steps_per_second"], ".0f")]
    got = row(rep, "Runs", prefix + " 1 |")
    say(got[-16:-5] == want and got[-1] == "runs/" + name, "%s: runs-table row from summary.json" % what, got, want)
    b = blocks(os.path.join(d, "plots", "bytes_per_worker.dat"))
    want = [["%d" % len(ls), "%.6g" % mean, "%.6g" % mean, "%.6g" % mean, "%.6g" % model]]
    say(b.get(title) == want, "%s: bytes_per_worker.dat point and model from summary.json" % what, b.get(title), want)
    if impl == "naive":
        w0 = [w for w in ls if w["index"] == 0][0]
        want = [["%d" % len(ls)] + ["%.6g" % w0["sync_bytes_sent_per_gradient"]] * 3
                + ["%.6g" % w0["model_bytes_sent_per_gradient"]]]
        got = b.get(title + ", driver (learner 0)")
        say(got == want, "%s: bytes_per_worker.dat has the driver (learner 0)" % what, got, want)
for d, key, ckey, want in ((pd, "param_servers", "param_servers", [1, 2]),
                           (ad, "allreduce_impls", "allreduce_impl", ["ring", "naive"])):
    st = json.load(open(os.path.join(d, "compare.json")))
    got = (st.get(key), [c.get(ckey) for c in st["cells"]])
    say(got == (want, want), "compare.json records %s per cell" % key, got, (want, want))
print("end\tend\t")
PY
)
expect_eq "the checks against summary.json ran to their end" "$last" "end"
for d in "$PD" "$AD"; do
    expect_eq "$(basename "$d"): bytes_per_worker.png is a PNG" \
        "$(head -c 8 "$d/bytes_per_worker.png" 2>/dev/null | od -An -tx1 | tr -d ' \n')" "89504e470d0a1a0a"
    expect_contains "$(basename "$d"): report embeds bytes_per_worker.png" "$(cat "$d/report.md")" "](bytes_per_worker.png)"
done
expect_contains "--param-servers: the tables have a param servers column" "$(cat "$PD/report.md")" \
    "| mode | learners | param servers | solved |"
run_cmd "$C" --from "$PD"/runs/*/ "$AD"/runs/*/ --out "$W/pafrom"
expect_rc "--from on both: exit status 0" 0
expect_contains "--from: P read from the runs (allreduce 0)" "$(cat "$W/pafrom/report.md")" "| allreduce (naive) | 2 | 0 |"
run_cmd "$C" --from "$PD"/runs/*/ --out "$W/pfrom"
expect_eq "--from on the --param-servers runs: the same tables" "$(tables "$W/pfrom/report.md")" "$(tables "$PD/report.md")"
rm -f "$W/launches"
run_cmd env GORILA_LAUNCH="$W/bin/count" "$C" "${small[@]}" --modes ps_sync --learners 1 --param-servers 1,2 --seeds 1 \
    --out "$PD" --resume
expect_eq "--resume with --param-servers: both cells kept, no job launched" \
    "$(grep -c 'already done (kept)' <<<"$out") $(launches)" "2 0"
echo "# compare.sh: $((SECONDS - t0)) s"
done_testing
