# SPDX-License-Identifier: MIT
# gorila bench pingpong under mpirun: a row per size and the fit, as a
# table and as JSON lines; exactly 2 ranks or exit 2 with one line, never a
# hang; a bad option is exit 2 before anything is timed. (Times are not
# checked, only that they are numbers and what physics guarantees.)
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../mpilib.sh"

# shellcheck disable=SC2086 # $MPIRUN (tests/mpilib.sh) is a command line: split on purpose
run_cmd timeout 60 $MPIRUN -np 2 "$GORILA" bench pingpong --bytes 8,1024,1048576 --seconds 0.2
expect_rc "bench pingpong: exit status 0" 0
rows=$(grep -cE '^ *(8|1024|1048576) +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9]+$' <<<"$out")
expect_eq "bench pingpong: one table row per size" "$rows" 3
check "bench pingpong: the fit line" grep -qE '^fit: latency [0-9.]+ us, bandwidth [0-9.]+ Mbit/s \(payload\)$' <<<"$out"
check "bench pingpong: names both ranks' hosts" grep -qE '^ping-pong: rank 0 on [^ ]+, rank 1 on [^ ]+;' <<<"$out"
check "bench pingpong: OpenBLAS configuration and CPU printed" grep -q '^OpenBLAS: .*; CPU ' <<<"$out"
check "bench pingpong: one node, so the shared-memory note" grep -q '^note: .*shared memory, not a network' <<<"$out"

# --json (pingpong_json FILE SIZES): every line parses; a line per size in
# the order given (SIZES, ascending), then the fit; numbers positive and
# finite; the largest message moves at least as many bytes per second as
# the smallest (a one-way time that grew more than the size would be a
# measurement gone wrong).
pingpong_json() {
    python3 - "$@" <<'EOF2'
import json, math, sys
path, want = sys.argv[1], [int(b) for b in sys.argv[2].split(",")]
bad, sizes, fits = [], [], []
for line in open(path).read().splitlines():
    try:
        o = json.loads(line)
    except ValueError as e:
        bad.append("not JSON (%s): %s" % (e, line[:200]))
        continue
    if o.get("bench") != "pingpong":
        continue
    (fits if "fit" in o else sizes).append(o)
def positive(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) and x > 0
if [o.get("bytes") for o in sizes] != want:
    bad.append("sizes %s, expected %s" % ([o.get("bytes") for o in sizes], want))
for o in sizes:
    for k in ("one_way_s", "bytes_per_s", "iters"):
        if not positive(o.get(k)):
            bad.append("bytes %s: %s = %r" % (o.get("bytes"), k, o.get(k)))
    if positive(o.get("one_way_s")) and positive(o.get("bytes_per_s")) and \
            abs(o["bytes"] / o["one_way_s"] / o["bytes_per_s"] - 1) > 1e-9:
        bad.append("bytes %s: bytes_per_s is not bytes / one_way_s" % o["bytes"])
if len(sizes) == len(want) and all(positive(o.get("bytes_per_s")) for o in sizes) \
        and sizes[-1]["bytes_per_s"] < sizes[0]["bytes_per_s"]:
    bad.append("%d bytes at %g B/s, slower than %d bytes at %g B/s"
               % (sizes[-1]["bytes"], sizes[-1]["bytes_per_s"], sizes[0]["bytes"], sizes[0]["bytes_per_s"]))
if len(fits) != 1:
    bad.append("%d fit lines, expected 1" % len(fits))
else:
    f = fits[0]
    for k in ("latency_s", "bandwidth_bytes_per_s"):
        if not positive(f["fit"].get(k)):
            bad.append("fit: %s = %r" % (k, f["fit"].get(k)))
    if sizes and f["fit"].get("latency_s") != sizes[0].get("one_way_s"):
        bad.append("fit: latency_s is not the smallest size's one_way_s")
    h = f.get("hosts")
    if not (isinstance(h, list) and len(h) == 2 and all(isinstance(x, str) and x for x in h)):
        bad.append("hosts: %r" % (h,))
    elif f.get("same_host") is not (h[0] == h[1]):
        bad.append("same_host %r for hosts %r" % (f.get("same_host"), h))
    for k in ("same_host", "yield_when_idle"):
        if not isinstance(f.get(k), bool):
            bad.append("fit line: %s = %r" % (k, f.get(k)))
    for k in ("cpu", "corename"):
        if not (isinstance(f.get(k), str) and f[k]):
            bad.append("fit line: %s = %r" % (k, f.get(k)))
if bad:
    print("# " + "; ".join(bad)); sys.exit(1)
print("# %d sizes; fit: latency %.3g us, bandwidth %.4g Mbit/s"
      % (len(sizes), fits[0]["fit"]["latency_s"] * 1e6, fits[0]["fit"]["bandwidth_bytes_per_s"] * 8e-6))
EOF2
}
# shellcheck disable=SC2086 # $MPIRUN (tests/mpilib.sh) is a command line: split on purpose
run_cmd timeout 60 $MPIRUN -np 2 "$GORILA" bench pingpong --bytes 8,1024,1048576 --seconds 0.2 --json
expect_rc "bench pingpong --json: exit status 0" 0
printf '%s\n' "$out" >"$TEST_TMP/pingpong.jsonl"
check "bench pingpong --json: a line per size as given and the fit, positive finite numbers, largest rate >= smallest" \
    pingpong_json "$TEST_TMP/pingpong.jsonl" 8,1024,1048576
check "bench pingpong --json: OpenBLAS configuration printed" grep -q '^{"bench":"openblas"' <<<"$out"

# Wrong rank counts: every rank leaves with 2, rank 0 says what to run.
for p in 1 3; do
    # shellcheck disable=SC2086 # $MPIRUN (tests/mpilib.sh) is a command line: split on purpose
    run_cmd timeout 60 $MPIRUN -np "$p" "$GORILA" bench pingpong --bytes 8 --seconds 0.2
    expect_rc "bench pingpong on $p ranks: exit status 2" 2
    expect_eq "bench pingpong on $p ranks: one line says what to run" \
        "$(grep -c 'needs exactly 2 ranks, got '"$p"': mpirun --oversubscribe -np 2 gorila bench pingpong' <<<"$err")" 1
    check "bench pingpong on $p ranks: nothing timed" [ -z "$out" ]
done

# Bad options: exit 2 on every rank, before any timing.
# shellcheck disable=SC2086 # $MPIRUN (tests/mpilib.sh) is a command line: split on purpose
run_cmd timeout 60 $MPIRUN -np 2 "$GORILA" bench pingpong --bytes 8,0 --seconds 0.2
expect_rc "bench pingpong --bytes 8,0 under mpirun: exit status 2" 2
expect_contains "bench pingpong --bytes 8,0: says what a size may be" "$err" \
    'expected byte counts from 1 to 268435456 (256 MiB), got "0"'
check "bench pingpong --bytes 8,0: nothing timed" [ -z "$out" ]
for bad in "--bytes 8,,1024" "--bytes 268435457" "--bytes 1k" "--seconds 0.01" "--seconds 61" "--fast"; do
    # shellcheck disable=SC2086 # $bad: an option and its value, split on purpose
    run_cmd "$GORILA" bench pingpong $bad
    expect_rc "bench pingpong $bad: exit status 2" 2
    check "bench pingpong $bad: one error line" [ "$(grep -c '^gorila: error: bench pingpong: ' <<<"$err")" -eq 1 ]
done
run_cmd "$GORILA" bench pingpong --help
expect_rc "bench pingpong --help: exit status 0" 0
expect_contains "bench pingpong --help: prints the usage" "$out" "usage: mpirun -np 2 gorila bench pingpong"
done_testing
