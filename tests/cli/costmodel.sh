# scripts/costmodel and tools/compare/costmodel.py: the communication time of
# one update per mode against values worked out by hand from the message
# patterns (K = 4000 bytes, B = 1000 bytes/s, latency 1 ms, 4 nodes):
#   single PS  2 (a + N K / B)             = 2 (0.001 + 16)     = 32.002 s
#   sharded    2 (a + max(N K / P, K) / B) = 2 (0.001 + 4)      =  8.002 s
#   ring       2 (N-1) (a + K / (N B))     = 6 (0.001 + 1)      =  6.006 s
#   naive      2 (a + (N-1) K / B)         = 2 (0.001 + 12)     = 24.002 s
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
run_cmd scripts/costmodel --params 1056770 --rates 1gbit --latency-us 50 --compute-ms 18
expect_rc "costmodel: exit status 0" 0
expect_contains "costmodel: a 1M network on 1 Gbit/s: the ring beats a single PS from 2 nodes" "$out" \
    "ring faster than a single PS at: 2, 4, 8, 16, 32, 64, 128, 256 nodes"
run_cmd scripts/costmodel --csv --params 4610 --rates 1gbit --latency-us 5 --nodes 2,4
expect_eq "costmodel --csv: a header and 2 nodes x 4 modes" "$(wc -l <<<"$out")" 9
for bad in "--rates fast" "--latency-us -1" "--nodes 0" "--params x" "--compute-ms -2"; do
    # shellcheck disable=SC2086 # each case is an option and its value
    run_cmd scripts/costmodel $bad
    expect_rc "costmodel $bad: exit status 2" 2
    expect_eq "costmodel $bad: one line" "$(wc -l <<<"$err")" 1
done
done_testing
