# SPDX-License-Identifier: MIT
# scripts/tb-dump: TensorBoard event files as CSV with Python's standard
# library alone. Its rows are held against what TensorBoard's own protos
# decode (tests/tb/read_events.py dump, compiled by protoc as for
# tests/cli/tensorboard.sh) for the files other programs wrote (tests/tb/data:
# TensorFlow 2's tensor scalars, tfevents-js's simple_value) and for
# gorila's own (a fresh run, then the same run resumed: two files), and
# against metrics.csv; a damaged file (a changed byte, a cut tail) is exit 1
# naming the record, after the rows before it; bad arguments are exit 2.
source "$(dirname "$0")/../lib.sh"
cd "$TEST_ROOT" || exit 1
source tests/tb/reader.sh
D="$TEST_TMP/tbdump"
rm -rf "$D"
mkdir -p "$D"
DUMP="$TEST_ROOT/scripts/tb-dump"
TF=tests/tb/data/events.out.tfevents.1585499054.Jaakkos-Mac-mini.local.11684.5.v2
JS=tests/tb/data/events.out.tfevents.1687811641.v2

# same NAME DUMP_CSV PROTOC_CSV: the same rows in the same order: wall_time
# the same double, step and tag the same, value the same float32 (every
# value in these files is one).
same() {
    check "$1" python3 -c '
import csv, struct, sys
got = list(csv.reader(open(sys.argv[1])))
want = list(csv.reader(open(sys.argv[2])))
if got[0] != ["wall_time", "step", "tag", "value"]:
    sys.exit("header %r" % got[0])
got = got[1:]
if len(got) != len(want) or not want:
    sys.exit("%d rows, protoc %d" % (len(got), len(want)))
f32 = lambda x: struct.pack("<f", float(x))
for g, w in zip(got, want):
    if float(g[0]) != float(w[0]) or g[1] != w[1] or g[2] != w[2] or f32(g[3]) != f32(w[3]):
        sys.exit("row %r, protoc %r" % (g, w))
' "$2" "$3"
}
# protoc_dump OUT FILE...: TensorBoard's protos' reading of the files
protoc_dump() {
    local out=$1
    shift
    if [ -n "$tb_setup_err" ]; then
        echo "# cannot read events with protoc: $tb_setup_err"
        : >"$out"
    else
        "$TB_PY" tests/tb/read_events.py "$TB_PB" dump "$@" >"$out"
    fi
}

# ---- files other programs wrote -------------------------------------------------
run_cmd "$DUMP" "$TF"
expect_rc "TensorFlow's file: exit status 0" 0
printf '%s\n' "$out" >"$D/tf.csv"
protoc_dump "$D/tf-protoc.csv" "$TF"
same "TensorFlow's file: the rows protoc's reading gives (tensor scalars)" "$D/tf.csv" "$D/tf-protoc.csv"
expect_eq "TensorFlow's file: my_metric = 0.5 * step for steps 0..99" \
    "$(tail -n +2 "$D/tf.csv" | awk -F, '$3 == "my_metric" && $4 == 0.5 * $2 { n++ } END { print n + 0 }')" 100
expect_eq "TensorFlow's file: nothing on stderr" "$err" ""

run_cmd "$DUMP" "$JS"
expect_rc "tfevents-js's file: exit status 0" 0
expect_eq "tfevents-js's file: hello = 1 at step 0" "$out" "wall_time,step,tag,value
1687811641.0,0,hello,1"

# ---- gorila's own ---------------------------------------------------------------
run_cmd "$GORILA" train configs/local/cartpole.yaml --set run.out_dir="$D/runs" --set run.name=tb \
    --set logging.progress=never --set run.stop_when_solved=false --set run.max_env_steps=2000 \
    --set logging.tensorboard=true
expect_rc "gorila run with logging.tensorboard: exit status 0" 0
R="$D/runs/tb"
run_cmd "$DUMP" "$R"
expect_rc "tb-dump of the run: exit status 0" 0
printf '%s\n' "$out" >"$D/run.csv"
protoc_dump "$D/run-protoc.csv" "$R"/tb/events.out.tfevents.*
same "gorila run: the rows protoc's reading gives" "$D/run.csv" "$D/run-protoc.csv"
check "gorila run: one train/epsilon per metrics.csv row, at its env steps, with its epsilon" python3 -c '
import csv, struct, sys
eps = [(r["step"], r["value"]) for r in csv.DictReader(open(sys.argv[1])) if r["tag"] == "train/epsilon"]
rows = list(csv.DictReader(open(sys.argv[2])))
f32 = lambda x: struct.pack("<f", float(x))
sys.exit(not (len(eps) == len(rows) > 10 and all(
    s == r["env_steps"] and f32(v) == f32(r["epsilon"]) for (s, v), r in zip(eps, rows))))
' "$D/run.csv" "$R/metrics.csv"

run_cmd "$GORILA" train --resume "$R" --set run.max_env_steps=2500
expect_rc "resumed: exit status 0" 0
run_cmd "$DUMP" "$R"
expect_rc "tb-dump of the resumed run: exit status 0" 0
printf '%s\n' "$out" >"$D/resumed.csv"
protoc_dump "$D/resumed-protoc.csv" "$R"/tb/events.out.tfevents.*
same "resumed: both files' rows, oldest first, as protoc reads them" "$D/resumed.csv" "$D/resumed-protoc.csv"
check "resumed: more rows than the first segment" [ "$(wc -l <"$D/resumed.csv")" -gt "$(wc -l <"$D/run.csv")" ]

# ---- damaged files --------------------------------------------------------------
# The first file of the run: its record 0 is the file version (no row),
# record 1 the first summary. A byte changed inside record 2's data:
# exit 1, the data CRC named, and record 1's rows printed first.
f=$(find "$R/tb" -name 'events.out.tfevents.*' | sort | head -1)
cp "$f" "$D/bad"
python3 - "$D/bad" <<'PY'
import struct, sys
p = sys.argv[1]
b = bytearray(open(p, "rb").read())
at = 0
for _ in range(2):
    (n,) = struct.unpack("<Q", b[at:at + 8])
    at += 16 + n
b[at + 12 + 3] ^= 0x40
open(p, "wb").write(b)
PY
run_cmd "$DUMP" "$D/bad"
expect_rc "a changed byte: exit status 1" 1
expect_contains "a changed byte: names the record and the CRC" "$err" "tb-dump: error: $D/bad: record 2 at offset"
expect_contains "a changed byte: ... data CRC" "$err" "data CRC"
expect_eq "a changed byte: record 1's rows came first" "$(sed -n 2p <<<"$out" | cut -d, -f2-3)" \
    "$(sed -n 2p "$D/run.csv" | cut -d, -f2-3)"
head -c -3 "$f" >"$D/torn"
run_cmd "$DUMP" "$D/torn"
expect_rc "a cut tail: exit status 1" 1
expect_contains "a cut tail: says so" "$err" "(cut short)"

# ---- bad arguments --------------------------------------------------------------
run_cmd "$DUMP"
expect_rc "no argument: exit status 2" 2
run_cmd "$DUMP" "$D/no-such"
expect_rc "no such file: exit status 2" 2
expect_eq "no such file: one line" "$err" "tb-dump: error: $D/no-such: no such file or directory"
mkdir -p "$D/empty"
run_cmd "$DUMP" "$D/empty"
expect_rc "a directory without event files: exit status 2" 2
expect_contains "a directory without event files: says where they would be" "$err" "logging.tensorboard: true"
done_testing
