# SPDX-License-Identifier: MIT
# scripts/costmodel and tools/compare/costmodel.py: the communication time of
# one update per mode against values worked out by hand from the message
# patterns (K = 4000 bytes, B = 1000 bytes/s, latency 1 ms, 4 nodes):
#   single PS  2 (a + N K / B)             = 2 (0.001 + 16)     = 32.002 s
#   sharded    2 (a + max(N K / P, K) / B) = 2 (0.001 + 4)      =  8.002 s
#   ring       2 (N-1) (a + K / (N B))     = 6 (0.001 + 1)      =  6.006 s
#   naive      2 (a + (N-1) K / B)         = 2 (0.001 + 12)     = 24.002 s
# The decentralized modes, per local step (one gradient), by hand with
# K = 4 MB = 4,000,000 bytes, B = 1 Gbit/s = 125,000,000 bytes/s, a = 50 us,
# N = 4 nodes:
#   gossip, G = 4     (a + K / B + 2 (N-1) a) / G
#                     = (0.00005 + 0.032 + 0.0003) / 4          = 0.0080875 s
#   local_sgd, H = 8  the ring on K' = K + 4 (n + 1 floats), / H:
#                     2 (N-1) (a + K' / (N B)) / H
#                     = 6 (0.00005 + 0.008000008) / 8           = 0.006037506 s
#                     naive, S = 262,144: (2 a + (N-1)(K' + S) / B) / H
#                     = (0.0001 + 3 x 4,262,148 / 125e6) / 8    = 0.012798944 s
#   easgd, tau = 4    2 (a + max(N K / P, K) / B) / tau
#                     P = 2: 2 (0.00005 + 0.064) / 4            = 0.032025 s
#                     P = 4: 2 (0.00005 + 0.032) / 4            = 0.016025 s
# rates parse as tc writes them, one node has nothing to move in an
# allreduce, and bad input is one line and exit 2.
source "$(dirname "$0")/../lib.sh"
cd "$TEST_ROOT" || exit 1
check "the four modes, 4 nodes, by hand" python3 -c '
import sys
sys.path.insert(0, ".")
from tools.compare.costmodel import comm_seconds as c
want = {"ps": 32.002, "ps_sharded": 8.002, "ring": 6.006, "naive": 24.002}
got = {m: c(m, 4, 4000, 1000, 0.001) for m in want}
print("#", got)
sys.exit(any(abs(got[m] - want[m]) > 1e-9 for m in want))'
check "the decentralized modes, 4 nodes, by hand" python3 -c '
import sys
sys.path.insert(0, ".")
from tools.compare.costmodel import comm_seconds as c
K, B, a = 4e6, 125e6, 50e-6
want = {"gossip G=4": 0.0080875, "local_sgd H=8": 0.006037506, "local_sgd naive H=8": 0.012798944,
        "easgd P=2 tau=4": 0.032025, "easgd P=4 tau=4": 0.016025, "gossip, the default G (4)": 0.0080875}
got = {"gossip G=4": c("gossip", 4, K, B, a, every=4), "local_sgd H=8": c("local_sgd", 4, K, B, a, every=8),
       "local_sgd naive H=8": c("local_sgd", 4, K, B, a, every=8, impl="naive", segment=262144),
       "easgd P=2 tau=4": c("easgd", 4, K, B, a, shards=2, every=4),
       "easgd P=4 tau=4": c("easgd", 4, K, B, a, every=4), "gossip, the default G (4)": c("gossip", 4, K, B, a)}
print("#", got)
sys.exit(any(abs(got[m] - want[m]) > 1e-12 for m in want))'
check "decentralized: gossip with one learner moves nothing; G = 0 and an unknown mode are refused" python3 -c '
import sys
sys.path.insert(0, ".")
from tools.compare.costmodel import comm_seconds as c
bad = 0
for args, kw in ((("gossip", 4, 4e6, 125e6, 5e-5), {"every": 0}), (("gosip", 4, 4e6, 125e6, 5e-5), {})):
    try:
        c(*args, **kw)
        bad += 1
    except ValueError:
        pass
sys.exit(bad or c("gossip", 1, 4e6, 125e6, 5e-5) != 0)'
check "projection: the four modes by default, the decentralized ones when asked, with their intervals" python3 -c '
import sys
sys.path.insert(0, ".")
from tools.compare import costmodel as cm
four = cm.projection([1000000], [125e6], [5e-5], [4], 0.0)
seven = cm.projection([1000000], [125e6], [5e-5], [4], 0.0, modes=cm.MODES + cm.DECENTRAL_MODES, every={"gossip": 4})
g = [r for r in seven if r[4] == "gossip"][0]
sys.exit(not ([r[4] for r in four] == list(cm.MODES) and seven[:4] == four and len(seven) == 7
              and abs(g[5] - 0.0080875) < 1e-12))'
# The naive driver sums and forwards each segment of S bytes as soon as it
# is in: with K = 4 S its NIC's in and out overlap but for one segment,
# 2 a + (N-1)(K + S) / B = 0.002 + 3 x 5000 / 1000 = 15.002 s.
check "naive, pipelined: K = 4000 in segments of 1000" python3 -c '
import sys
sys.path.insert(0, ".")
from tools.compare.costmodel import comm_seconds as c
sys.exit(abs(c("naive", 4, 4000, 1000, 0.001, segment=1000) - 15.002) > 1e-9)'
check "one node: the allreduces move nothing, a PS still round-trips" python3 -c '
import sys
sys.path.insert(0, ".")
from tools.compare.costmodel import comm_seconds as c
sys.exit(not (c("ring", 1, 4000, 1000, 0.001) == 0 and c("naive", 1, 4000, 1000, 0.001) == 0
              and abs(c("ps", 1, 4000, 1000, 0.001) - 8.002) < 1e-9))'
check "rates: 1gbit = 125e6 bytes/s, 100mbit = 12.5e6, 2.5gbit = 312.5e6" python3 -c '
import sys
sys.path.insert(0, ".")
from tools.compare.costmodel import parse_rate as r
sys.exit(not (r("1gbit") == 125e6 and r("100mbit") == 12.5e6 and r("2.5gbit") == 312.5e6))'
# tools/compare/modelcheck.py: the report's model against measurement, on
# cells made here (the same K, B and latency: single PS with 4 learners
# predicts 32.002 s). Measured 30 s: within 25%; 50 s with 11 ranks: off,
# and the reason names the ranks and the cores; 4 learners and 1 shard on
# 5 nodes: not compared (6 units); mpi: not modelled; communication under
# half of the update: not a target. The nominal rate is the payload of
# each 1514-byte frame.
check "modelcheck: verdicts against hand-computed predictions" python3 -c '
import sys
sys.path.insert(0, ".")
from tools.compare import modelcheck as mc
from tools.compare.runs import Cell

def cell(mode, L, ps, impl, sync, compute, ranks=5):
    c = Cell(mode, L, 1, ps=ps, impl=impl)
    c.exit = 0
    c.summary = {}
    c.figures = {"sync_s_pg": sync, "sync_s_pg_min": sync, "compute_pg": compute, "sample_wait_pg": 0.0, "n_params": 1000,
                 "ranks": ranks, "ps_busy": 0.5, "wall_seconds": 10.0, "updates": 10}
    return c

net = {"nodes": 6, "placement": "spread", "measured": {"latency_s": 0.001, "bandwidth_bytes_per_s": 1000.0}}
cells = [cell("ps_sync", 4, 1, None, 30.0, 1.0), cell("ps_async", 4, 1, None, 50.0, 1.0, ranks=11),
         cell("allreduce", 4, 0, "ring", 6.5, 100.0), cell("allreduce", 4, 0, "mpi", 3.0, 1.0)]
for c in cells:
    c.load = lambda: None
m = mc.ModelCheck("/nonexistent", cells, None, net)
m.cores = 2
rows = {(r["key"][0], r["key"][3]): r for r in m.rows()}
ps, bad = rows[("ps_sync", None)], rows[("ps_async", None)]
ring, mpi = rows[("allreduce", "ring")], rows[("allreduce", "mpi")]
fails = []
if abs(ps["predicted"] - 32.002) > 1e-9 or ps["verdict"] != "within 25%": fails.append(("ps", ps))
if not (bad["verdict"].startswith("**off by +56%**") and "11 ranks share 2 cores" in bad["verdict"]
        and "500.0 ms per update" in bad["verdict"]):
    fails.append(("bad", bad))
if abs(ring["predicted"] - 6.006) > 1e-9 or ring["verdict"] != "within 25% (communication under half the update)":
    fails.append(("ring", ring))
if not mpi["verdict"].startswith("not modelled (Open MPI"): fails.append(("mpi", mpi))
# the cores caveat: its explanation once, under the table, the rows referring to it
m.cells.append(cell("ps_bounded", 4, 1, None, 50.0, 1.0, ranks=11))
m.groups = mc.groups(m.cells)
text = "\n".join(m.against())
if text.count("includes waiting for the cores") != 1 or text.count("share 2 cores (see under the table)") != 2:
    fails.append(("cores caveat once", text))
m.cells.pop()
# a cell that made no updates: said so, not "no per-worker figures"
z = cell("ps_bounded", 2, 1, None, None, None)
z.figures.update({"gradients": 0, "updates": 0})
m.groups = mc.groups(m.cells + [z])
zr = [r for r in m.rows() if r["key"][0] == "ps_bounded"]
if not zr or zr[0]["verdict"] != "no updates, so nothing measured":
    fails.append(("no updates", zr))
m.groups = mc.groups(m.cells)
m.cores = None  # real hosts (--hostfile): their cores are their own
if "ranks share" in {(r["key"][0], r["key"][3]): r for r in m.rows()}[("ps_async", None)]["verdict"]:
    fails.append("a cores reason for real hosts")
m.cores = 2
net["nodes"] = 5
r5 = {(r["key"][0], r["key"][3]): r for r in m.rows()}[("ps_sync", None)]
if not r5["verdict"].startswith("not compared: learners and PS shards share nodes"): fails.append(("5 nodes", r5))
lat, bw, how = mc.network_params({"link": "1gbit"})
if not (how == "nominal" and lat == 0 and abs(bw - 125e6 * 1448 / 1514) < 1e-6): fails.append(("nominal", bw))
if mc._ranges([2, 3, 4, 9]) != "N = 2-4, 9" or mc._ranges([]) != "never": fails.append("ranges")
print("#", fails)
sys.exit(bool(fails))'
run_cmd scripts/costmodel --params 1056770 --rates 1gbit --latency-us 50 --compute-ms 18
expect_rc "costmodel: exit status 0" 0
expect_contains "costmodel: a 1M network on 1 Gbit/s: the ring beats a single PS from 2 nodes" "$out" \
    "ring faster than a single PS at: 2, 4, 8, 16, 32, 64, 128, 256 nodes"
run_cmd scripts/costmodel --csv --params 4610 --rates 1gbit --latency-us 5 --nodes 2,4
expect_eq "costmodel --csv: a header and 2 nodes x 4 modes" "$(wc -l <<<"$out")" 9
# (1 node has no exchange: its ring time 0 gave updates/s inf; inf and 1e30
# made tables of 0 and 30-digit numbers)
for bad in "--rates fast" "--latency-us -1" "--nodes 0" "--params x" "--compute-ms -2" "--nodes 1" "--nodes 2.5" \
    "--compute-ms inf" "--compute-ms nan" "--params 1e30" "--latency-us inf"; do
    # shellcheck disable=SC2086 # each case is an option and its value
    run_cmd scripts/costmodel $bad
    expect_rc "costmodel $bad: exit status 2" 2
    expect_eq "costmodel $bad: one line" "$(wc -l <<<"$err")" 1
done
# A reader that goes away (| head -1): no BrokenPipeError traceback
scripts/costmodel 2>"$TEST_TMP/costmodel-pipe.err" | head -1 >/dev/null
expect_eq "costmodel | head -1: nothing on stderr" "$(cat "$TEST_TMP/costmodel-pipe.err")" ""
done_testing
