# SPDX-License-Identifier: MIT
# scripts/compare with the decentralized modes on a tiny real matrix
# (tests/fixtures/configs/mpi-small.yaml, 6000 env steps a job; gossip,
# local_sgd and easgd, 1 and 2 learners, one seed): gorila refuses gossip
# and local_sgd with one learner, so those two cells are skipped, said once
# on the terminal and once under the learning table, and never counted as
# failed; the other four run (gossip and local_sgd without parameter
# servers, easgd with the config's one). The report's "Consensus distance"
# rows are each run's metrics.csv (computed here, in Python, not by the
# script), consensus.png is a PNG, and in "Communication per worker" each
# new mode's measured bytes are within 5% of its model, whose value is
# worked out here from the formulas (gossip 4n f / G, local_sgd's ring
# 2(N-1)/N x 4(n+1) / H, easgd (P x 40 + 4n) / tau). Then: --from gives the
# same section, --resume keeps every cell, and the cost model's sections
# with the new modes (--hostfile, run here by stand-ins) against
# hand-computed predictions. The layouts under --allreduce-impls and
# --param-servers and bad input start no job: tests/cli/compare_decentral.sh.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../comparelib.sh"
cd "$TEST_ROOT" || exit 1
if [ -n "${ASAN_OPTIONS:-}" ]; then
    ok "scripts/compare, decentralized modes # SKIP runs MPI jobs; not under the sanitizer build (make test runs it)"
    done_testing
    exit
fi
C="$TEST_ROOT/scripts/compare"
W="$TEST_TMP/compare_decentral"
rm -rf "$W"
t0=$SECONDS
FX=tests/fixtures/configs/mpi-small.yaml
small=("$FX" --set run.max_env_steps=6000)

# the launcher stand-ins and launches (tests/comparelib.sh)
compare_standins "$W"
# the verdicts of a Python check, one "ok|not_ok TAB name TAB detail" line
# each, then "end": each becomes a TAP line, the detail a comment
verdicts() {
    local verdict name detail last=
    while IFS=$'\t' read -r verdict name detail; do
        last=$name
        if [ "$verdict" = end ]; then continue; fi
        if [ "$verdict" = ok ]; then ok "$name"; else
            not_ok "$name"
            echo "# $detail"
        fi
    done
    expect_eq "$1: the checks ran to their end" "$last" "end"
}
# G, H and tau of the fixture, as gorila reads it
read -r G H TAU < <("$GORILA" config check --json "${small[@]}" | python3 -c 'import json, sys
s = json.load(sys.stdin)["config"]["sync"]
print(s["gossip_every"], s["average_every"], s["easgd_every"])')
check "the fixture's intervals: G $G, H $H, tau $TAU" test $((${G:-0} >= 1 && ${H:-0} >= 1 && ${TAU:-0} >= 1)) -eq 1

# ---- the matrix ------------------------------------------------------------------
D="$W/m"
rm -f "$W/launches"
run_cmd env GORILA_LAUNCH="$W/bin/count" "$C" "${small[@]}" --modes gossip,local_sgd,easgd --learners 1,2 --seeds 1 \
    --out "$D"
expect_rc "matrix: exit status 0" 0
expect_eq "matrix: four jobs (no 1-learner gossip or local_sgd)" "$(launches)" 4
expect_eq "matrix: a progress line per cell that ran" "$(grep -c '^\[[1-4]/4\] ' <<<"$out")" 4
expect_eq "matrix: the skip said once on the terminal" "$(grep -c 'not run: ' <<<"$out")" 1
expect_contains "matrix: the skip says which cells and why" "$out" \
    "compare: not run: gossip and local_sgd with 1 learner (2 cells, skipped, not failed): these modes average the parameters of several learners"
expect_eq "matrix: the run directories" "$(find "$D/runs" -mindepth 1 -maxdepth 1 -type d -printf '%f\n' | sort | tr '\n' ' ')" \
    "easgd-L1-s1 easgd-L2-s1 gossip-L2-s1 local_sgd-L2-s1 "
expect_eq "matrix: gossip and local_sgd jobs without parameter servers, easgd with the config's one" \
    "$(grep -c 'sync.mode=gossip .*roles.param_servers=0 ' "$W/launches") $(grep -c 'sync.mode=local_sgd .*roles.param_servers=0 ' "$W/launches") $(grep -c 'sync.mode=easgd .*roles.param_servers=1 ' "$W/launches")" \
    "1 1 2"
R="$D/report.md"
expect_contains "report: the matrix line names the modes without parameter servers" "$(cat "$R")" \
    "roles.param_servers 1 for the PS modes, 0 for allreduce, gossip and local_sgd;"
expect_contains "report: four cells, none failed" "$(cat "$R")" "- Cells: 4 (4 finished, 0 failed)"
expect_eq "report: the skip said once, under the learning table" \
    "$(grep -c '^Not run: ' "$R") $(sed -n '/^## Learning$/,/^## Throughput/p' "$R" | grep -c '^Not run: gossip and local_sgd with 1 learner (2 cells, skipped, not failed)')" \
    "1 1"
expect_eq "report: no failed cells listed" "$(grep -c '^Failed cells' "$R")" 0
expect_eq "compare.json: the skipped cells" \
    "$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1])).get("skipped"))' "$D/compare.json")" \
    "['gossip-L1-s1', 'local_sgd-L1-s1']"
# the first row of section SECTION that starts with PREFIX
row() { awk -v s="## $1" -v p="$2" '$0 == s { on = 1; next } /^## / { on = 0 } on && index($0, p) == 1 { print; exit }' "$R"; }
for m in gossip local_sgd; do
    expect_contains "report: $m has no staleness (no PS ranks)" "$(row "Throughput, staleness, waiting" "| $m | 2 |")" \
        "| 0 (by construction) | 0 (by construction) | 0 (by construction) |"
done
for p in consensus bytes_per_worker eval_vs_steps; do
    expect_eq "$p.png is a PNG" "$(head -c 8 "$D/$p.png" 2>/dev/null | od -An -tx1 | tr -d ' \n')" "89504e470d0a1a0a"
    expect_contains "report embeds $p.png" "$(cat "$R")" "]($p.png)"
done
expect_contains "consensus.gp: titled per worker" "$(cat "$D/plots/consensus.gp" 2>/dev/null)" \
    "Consensus distance per worker"
# Consensus distance: each row from its run's metrics.csv (one seed: the
# run's own values); Communication per worker: each row's bytes from
# summary.json, within 5% of the model, and the model the formula's.
verdicts "report against the runs" < <(python3 - "$D" "$G" "$H" "$TAU" <<'PY'
import csv, json, os, sys
d, G, H, tau = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
rep = open(os.path.join(d, "report.md")).read()
DASH = "\u2014"


def say(good, name, got, want):
    print("%s\t%s\tgot %s, want %s" % ("ok" if good else "not_ok", name, got, want))


def row(section, prefix):
    parts = rep.split("\n## %s\n" % section)
    if len(parts) < 2:
        return ["(no section %s)" % section]
    rows = [r for r in parts[1].split("\n## ")[0].splitlines() if r.startswith(prefix)]
    return rows[0].strip("| ").split(" | ") if rows else ["(no row)"]


def blocks(path):
    out, title = {}, None
    for line in open(path):
        if line.startswith("# "):
            title = line[2:].split(": learners")[0]
            out[title] = []
        elif line.strip():
            out[title].append([float(x) for x in line.split()])
    return out


bpw = blocks(os.path.join(d, "plots", "bytes_per_worker.dat"))
for mode, L, title in (("gossip", 2, "gossip"), ("local_sgd", 2, "local_sgd (ring)"), ("easgd", 1, "easgd"),
                       ("easgd", 2, "easgd")):
    what = "%s L%d" % (mode, L)
    run = os.path.join(d, "runs", "%s-L%d-s1" % (mode, L))
    s = json.load(open(os.path.join(run, "summary.json")))
    say(s["mode"] == mode, "%s: summary.json has the cell's mode" % what, s["mode"], mode)
    # consensus distance: metrics.csv's logged values; mid-run: the first once half the env steps were reached
    vals = [(float(r["env_steps"]), float(r["consensus_distance"])) for r in csv.DictReader(open(os.path.join(
        run, "metrics.csv"))) if r.get("consensus_distance") not in (None, "", "nan")]
    end = s["env_steps"]
    mid = [v for x, v in vals if x >= end / 2]
    want = ["%.4g" % mid[0] if mid else DASH, "%.4g" % vals[-1][1] if vals else DASH]
    got = row("Consensus distance", "| %s | %d |" % (mode, L))
    say(got[-2:] == want and vals, "%s: consensus at mid-run and last, from metrics.csv" % what, got, want)
    ls = s["roles"]["learner"]
    rounds = "%.1f" % (sum(r["sync_rounds"] for r in ls) / len(ls))
    every = {"gossip": G, "local_sgd": H, "easgd": tau}[mode]
    say(got[2:4] == [str(every), rounds], "%s: every and exchanges per learner" % what, got[2:4], [every, rounds])
    # communication per worker
    pw = s["per_worker"]
    n, P = pw["n_params"], pw["n_param_servers"]
    w = pw["learners"]
    sent = sum(x["sync_bytes_sent_per_gradient"] for x in w) / len(w)
    model = sum(x["model_bytes_sent_per_gradient"] for x in w) / len(w)
    if mode == "gossip":
        theory = 4.0 * n * 1 / G   # N = 2: both learners paired every round
    elif mode == "local_sgd":
        theory = 2.0 * (L - 1) / L * 4 * (n + 1) / H
    else:
        theory = (P * 40 + 4.0 * n) / tau
    say(abs(model - theory) < 1e-6 * theory, "%s: the model is the formula's (%.1f bytes per gradient)" % (what, theory),
        model, theory)
    got = row("Communication per worker", "| %s | %d |" % (mode, L))
    want = ["%.0f" % sent, "%.0f" % model]
    say(got[2:4] == want, "%s: sent per gradient and its model from summary.json" % what, got[2:4], want)
    ratio = float(got[4]) if len(got) > 4 and got[4] != DASH else None
    # The model is the steady state, an exchange every `every` gradients; a
    # learner with g gradients made floor(g / every) of them, which differs
    # only for one the machine's load starved (9 gradients beside a CPU hog,
    # 2 exchanges where the model says 2.25). The ratio is held to the
    # same mean with each learner's count rounded down that way.
    ev = {"gossip": G, "local_sgd": H, "easgd": tau}[mode]
    exact = sum(x["model_bytes_sent_per_gradient"] * (x["gradients"] // ev) * ev / x["gradients"]
                for x in w if x["gradients"]) / len(w)
    want_r = exact / model
    say(ratio is not None and abs(ratio / want_r - 1) <= 0.05,
        "%s: measured within 5%% of the model (%.3f, whole exchanges)" % (what, want_r), ratio,
        "%.3f-%.3f" % (0.95 * want_r, 1.05 * want_r))
    pts = [p for p in bpw.get(title, []) if p[0] == L]
    say(len(pts) == 1 and abs(pts[0][1] - sent) <= 1e-5 * sent and abs(pts[0][4] - model) <= 1e-5 * model,
        "%s: bytes_per_worker.dat point and model line" % what, pts, (L, sent, model))
    png = os.path.join(d, "plots", "consensus_%s_L%d.dat" % (mode, L))
    say(os.path.isfile(png) and os.path.getsize(png) > 0, "%s: consensus.png's data file" % what, png, "a file")
say("\n- easgd: the center variable on the parameter servers\n" in rep,
    "the section says easgd evaluates the center", "", "- easgd: the center variable on the parameter servers")
print("end\tend\t")
PY
)

# ---- --from and --resume --------------------------------------------------------------
consensus() { sed -n '/^## Consensus distance$/,/^## Runs$/p' "$1"; }
run_cmd "$C" --from "$D"/runs/*/ --out "$W/from"
expect_rc "--from: exit status 0" 0
expect_eq "--from: the same Consensus distance section" "$(consensus "$W/from/report.md")" "$(consensus "$R")"
check "--from: a Consensus distance section" grep -q '^## Consensus distance$' "$W/from/report.md"
rm -f "$W/launches"
run_cmd env GORILA_LAUNCH="$W/bin/count" "$C" "${small[@]}" --modes gossip,local_sgd,easgd --learners 1,2 --seeds 1 \
    --out "$D" --resume
expect_rc "--resume: exit status 0" 0
expect_eq "--resume: every cell kept, none launched, the skip said again" \
    "$(grep -c 'already done (kept)' <<<"$out") $(launches) $(grep -c 'not run: ' <<<"$out")" "4 0 1"

# ---- the cost model's sections (--hostfile, run here by stand-ins) -------------------------
{
    printf '#!/usr/bin/env bash\n'
    echo "echo '{\"bench\": \"pingpong\", \"bytes\": 16777216, \"one_way_s\": 0.135, \"bytes_per_s\": 1.24e8}'"
    echo "echo '{\"bench\": \"pingpong\", \"fit\": {\"latency_s\": 5e-05, \"bandwidth_bytes_per_s\": 1.25e8}, \"hosts\": [\"a\", \"b\"], \"same_host\": false}'"
} >"$W/bin/mpirun"
chmod +x "$W/bin/mpirun"
for i in 2 3 4 5 6 7 8 9 10; do echo "127.0.0.$i slots=4"; done >"$W/hosts"
HD="$W/h"
rm -f "$W/launches"
run_cmd env GORILA_LAUNCH="$W/bin/local" GORILA_MPIRUN="$W/bin/mpirun" "$C" "${small[@]}" \
    --modes gossip,local_sgd,easgd --learners 2 --seeds 1 --hostfile "$W/hosts" --out "$HD"
expect_rc "--hostfile: exit status 0" 0
expect_eq "--hostfile: three jobs" "$(launches)" 3
# the predictions by hand: a = 50 us, B = 1.25e8 bytes/s, K = 4n, N = 2,
# one PS shard: gossip (a + K/B + 2a) / G; local_sgd's ring
# 2 (a + (K + 4) / (2B)) / H; easgd 2 (a + 2K/B) / tau; and the
# projection's at N = 8 nodes on 1 Gbit/s (1.25e8) with 5 us latency,
# easgd with one shard per node: gossip (a + K/B + 14a) / G, local_sgd
# 14 (a + (K + 4) / (8B)) / H, easgd 2 (a + K/B) / tau
verdicts "the cost model's sections" < <(python3 - "$HD" "$G" "$H" "$TAU" <<'PY'
import json, os, sys
d, G, H, tau = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
rep = open(os.path.join(d, "report.md")).read()
n = json.load(open(os.path.join(d, "runs", "gossip-L2-s1", "summary.json")))["per_worker"]["n_params"]
K, a, B = 4.0 * n, 50e-6, 1.25e8
want = {"gossip": (a + K / B + 2 * a) / G, "local_sgd (ring)": 2 * (a + (K + 4) / (2 * B)) / H,
        "easgd P=1": 2 * (a + 2 * K / B) / tau}


def say(good, name, got, want):
    print("%s\t%s\tgot %s, want %s" % ("ok" if good else "not_ok", name, got, want))


got = {}
title = None
for line in open(os.path.join(d, "plots", "sync_vs_learners.dat")):
    if line.startswith("# "):
        title = line[2:].split(": learners")[0]
    elif line.strip():
        got[title] = [float(x) for x in line.split()]
for t, w in want.items():
    g = got.get(t)
    say(g is not None and g[0] == 2 and abs(g[2] - 1e3 * w) <= 1e-5 * 1e3 * w,
        "model: %s's prediction at 2 learners (sync_vs_learners.dat, ms)" % t, g, 1e3 * w)
sec = rep.split("\n## Model against measurement\n")[1].split("\n## ")[0]
for prefix, model in (("| gossip | 2 | \u2014 |", "gossip, G=%d" % G), ("| local_sgd (ring) | 2 | \u2014 |", "local_sgd, H=%d" % H),
                      ("| easgd | 2 | 1 |", "easgd, tau=%d" % tau)):
    r = [x for x in sec.splitlines() if x.startswith(prefix)]
    say(len(r) == 1 and r[0].split(" | ")[3] == model, "model: a row %s with its model %s" % (prefix, model), r, model)
say("easgd: 2(a + max(N K / P, K) / B) / tau" in sec and "as if all learners exchanged at once" in sec,
    "model: the words name easgd's formula and its assumption", "", "")
proj = {}
for line in open(os.path.join(d, "plots", "projection.csv")):
    f = line.strip().split(",")
    if f[0] == str(n) and f[1] == "1.25e+08" and f[2] == "5e-06" and f[3] == "8":
        proj[f[4]] = float(f[5])
a = 5e-6
want = {"gossip": (a + K / B + 14 * a) / G, "local_sgd": 14 * (a + (K + 4) / (8 * B)) / H,
        "easgd": 2 * (a + K / B) / tau}
for m, w in want.items():
    say(m in proj and abs(proj[m] - w) <= 1e-5 * w, "projection.csv: %s at 8 nodes, 1 Gbit/s, 5 us" % m, proj.get(m), w)
say(sorted(proj) == sorted(["ps", "ps_sharded", "ring", "naive", "gossip", "local_sgd", "easgd"]),
    "projection.csv: the four patterns and the three new modes", sorted(proj), "seven")
psec = rep.split("\n## Projection\n")[1].split("\n## ")[0]
say("| link | latency | N | gossip ms | local_sgd ms | easgd ms | updates/s per learner: gossip | local_sgd | easgd |"
    in psec, "projection: a table of the decentralized modes", "", "")
print("end\tend\t")
PY
)
expect_eq "projection.png is a PNG" "$(head -c 8 "$HD/projection.png" 2>/dev/null | od -An -tx1 | tr -d ' \n')" \
    "89504e470d0a1a0a"

echo "# compare_decentral.sh: $((SECONDS - t0)) s"
done_testing
