#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/cli/export.sh: `gorila export RUN FILE.npz`, `gorila eval --export
# FILE` and scripts/npz_policy.py.
# Short local runs are exported; the file must be a valid zip of .npy arrays
# (checked with Python's own zipfile and zlib, not with gorila's code), its
# weights must be the checkpoint file's parameters (read from ps-0.ckpt by
# Python, not by gorila) transposed to PyTorch's (out, in), and the script's
# greedy actions on a set of observations must equal gorila's own (`gorila
# eval RUN --actions OBSFILE`). `gorila export` must not evaluate and must
# say in one line what it wrote; `gorila eval --export` evaluates only when
# --episodes, --seed or --json asks. numpy and torch are optional: the
# script's standard-library reader always runs; the numpy and torch
# backends run too where those packages are installed.
source "$(dirname "$0")/../lib.sh"
cd "$TEST_ROOT" || exit 1
RUNS="$TEST_TMP/export-runs"
X="$TEST_TMP/export"
rm -rf "$RUNS" "$X"
mkdir -p "$X"
POLICY=scripts/npz_policy.py
if ! command -v python3 >/dev/null; then
    not_ok "python3 not found (scripts/install-deps.sh installs it)"
    done_testing
    exit
fi

# train NAME CONFIG SET...: a short local run under $RUNS/NAME.
train() {
    local name=$1 config=$2
    shift 2
    local sets=()
    for s in "$@"; do sets+=(--set "$s"); done
    run_cmd "$GORILA" train "$config" --set run.out_dir="$RUNS" --set run.name="$name" \
        --set replay.min_size=200 --set eval.episodes=1 --set eval.every_updates=0 \
        --set logging.progress=never "${sets[@]}"
    expect_rc "train $name: exit status 0" 0
}

# Observations for CartPole (4 values, across and beyond the usual ranges),
# in both separators gorila and the script accept, with a comment and a
# blank line, which both skip.
awk 'BEGIN { srand(42); print "# x, x_dot, theta, theta_dot"
    for (i = 0; i < 400; i++) {
        if (i == 200) print ""
        sep = i % 2 ? "," : " "
        printf "%.6f%s%.6f%s%.6f%s%.6f\n", (rand() - .5) * 5, sep, (rand() - .5) * 4, sep, \
            (rand() - .5) * .5, sep, (rand() - .5) * 4 } }' >"$X/cartpole.obs"
# Pendulum: cos, sin, angular velocity
awk 'BEGIN { srand(7); for (i = 0; i < 300; i++) { t = (rand() - .5) * 6.2832
    printf "%.6f %.6f %.6f\n", cos(t), sin(t), (rand() - .5) * 16 } }' >"$X/pendulum.obs"

# zip_check FILE: Python's zipfile and zlib on the file, independently of
# gorila: every member stored, its CRC-32 equal to zlib.crc32 of its bytes,
# each a .npy v1.0 whose data starts on a 64-byte boundary. Prints
# "NAME SHAPE DESCR" per member, sorted, or an error.
zip_check() {
    python3 - "$1" <<'EOF'
import ast, struct, sys, zipfile, zlib
with zipfile.ZipFile(sys.argv[1]) as z:
    rows = []
    for i in z.infolist():
        d = z.read(i)
        assert i.compress_type == zipfile.ZIP_STORED, (i.filename, i.compress_type)
        assert zlib.crc32(d) == i.CRC, (i.filename, hex(i.CRC))
        assert d[:8] == b"\x93NUMPY\x01\x00", (i.filename, d[:8])
        (n,) = struct.unpack("<H", d[8:10])
        assert (10 + n) % 64 == 0 and d[9 + n : 10 + n] == b"\n", (i.filename, n)
        h = ast.literal_eval(d[10 : 10 + n].decode("latin1"))
        assert h["fortran_order"] is False
        rows.append("%s %s %s" % (i.filename[:-4], "x".join(map(str, h["shape"])) or "()", h["descr"]))
print("\n".join(sorted(rows)))
EOF
}

# same_actions NAME NPZ RUN OBS [EVAL_ARGS...]: the script (each backend
# there is) and gorila (eval RUN --actions OBS EVAL_ARGS..., e.g.
# --checkpoint best) pick the same greedy actions, and not all the same action.
same_actions() {
    local name=$1 npz=$2 run=$3 obs=$4
    shift 4
    run_cmd "$GORILA" eval "$run" --actions "$obs" "$@"
    expect_rc "$name: eval --actions exits 0" 0
    local want=$out n
    n=$(grep -vc '^\(#.*\)\?$' "$obs")
    expect_eq "$name: eval --actions prints one action per observation" "$(wc -l <<<"$want")" "$n"
    check "$name: the greedy actions are not all the same (a real comparison)" \
        test "$(sort -u <<<"$want" | wc -l)" -gt 1
    # The comparison is exact, so rows that hinge on rounding are left out:
    # gorila's float forward (any BLAS kernel) and the script's double one
    # differ by a few float ulps (about 170 u in the worst case for these
    # widths), so a row counts only where the best Q-value beats the
    # runner-up by more than 1e-5 of its size. The network differs per
    # kernel, so which rows those are does too; nearly all must remain.
    run_cmd python3 "$POLICY" "$npz" "$obs" --backend stdlib --q
    keep=$(awk -F, '
        { best = -1e300; second = -1e300
          for (i = 2; i <= NF; i++) { v = $i + 0; if (v > best) { second = best; best = v } else if (v > second) second = v }
          m = best < 0 ? -best : best
          print (best - second > 1e-5 * (1 + m)) ? 1 : 0 }' <<<"$out")
    local kept
    kept=$(grep -c 1 <<<"$keep")
    check "$name: at most 2% of the observations are near-ties of two actions ($kept of $n compared)" \
        test "$((kept * 50))" -ge "$((n * 49))"
    clear_rows() { paste -d' ' <(echo "$keep") - | awk '$1 == 1 { print $2 }'; }
    local want_clear
    want_clear=$(clear_rows <<<"$want")
    run_cmd python3 "$POLICY" "$npz" "$obs" --backend stdlib
    expect_rc "$name: npz_policy.py (standard library) exits 0" 0
    expect_eq "$name: npz_policy.py (standard library) picks gorila's greedy actions" "$(clear_rows <<<"$out")" "$want_clear"
    run_cmd python3 "$POLICY" "$npz" --backend stdlib <"$obs"
    expect_eq "$name: npz_policy.py reads the observations from stdin too" "$(clear_rows <<<"$out")" "$want_clear"
    for b in numpy torch; do
        if python3 -c "import $b" 2>/dev/null && python3 -c "import numpy" 2>/dev/null; then
            run_cmd python3 "$POLICY" "$npz" "$obs" --backend "$b"
            expect_eq "$name: npz_policy.py ($b) picks gorila's greedy actions" "$(clear_rows <<<"$out")" "$want_clear"
        else
            ok "$name: npz_policy.py ($b) # SKIP $b is not installed"
        fi
    done
}

# ---- CartPole, one hidden layer of 16
train c configs/local/cartpole.yaml run.max_env_steps=2000 network.hidden=[16]
run_cmd "$GORILA" export "$RUNS/c" "$X/c.npz"
expect_rc "export c.npz: exit 0" 0
run_cmd python3 -m zipfile -t "$X/c.npz"
expect_rc "c.npz: python3 -m zipfile -t finds no error" 0
if command -v unzip >/dev/null; then
    run_cmd unzip -tq "$X/c.npz"
    expect_rc "c.npz: unzip -t finds no error" 0
fi
run_cmd zip_check "$X/c.npz"
expect_rc "c.npz: every member stored, CRC-32 as zlib's, a 64-byte aligned .npy v1.0" 0
# Shapes follow from the config alone: obs 4 -> 16 -> 2 actions, weights (out, in).
expect_eq "c.npz: arrays, shapes (weights (out, in)) and types" "$out" "$(sort <<'EOF'
activation () <U4
dueling () |b1
env () <U11
format_version () <i8
hidden 1 <i8
layers.0.bias 16 <f4
layers.0.weight 16x4 <f4
layers.1.bias 2 <f4
layers.1.weight 2x16 <f4
num_actions () <i8
obs_dim () <i8
EOF
)"
run_cmd python3 "$POLICY" "$X/c.npz" --info --backend stdlib
expect_eq "c.npz: metadata as the config says" "$(sed -n '2,8p' <<<"$out")" \
    "$(printf 'env: CartPole-v1\nformat_version: 1\nobs_dim: 4\nnum_actions: 2\nhidden: [16]\nactivation: relu\ndueling: False')"

# The weights are the raw parameters, transposed: the .bin export is the flat
# agents/qnet.h array, W (in, out) row-major then b, layer after layer.
run_cmd "$GORILA" export "$RUNS/c" "$X/c.bin"
expect_eq "the .bin export keeps the raw blob (114 float32)" "$(stat -c %s "$X/c.bin")" $((114 * 4))
run_cmd python3 - "$X/c.npz" "$X/c.bin" <<'EOF'
import array, sys
sys.path.insert(0, "scripts")
import npz_policy
arrays = npz_policy.load_stdlib(sys.argv[1])
raw = array.array("f")
with open(sys.argv[2], "rb") as f:
    raw.frombytes(f.read())
off, bad = 0, 0
for l, (inp, out) in enumerate([(4, 16), (16, 2)]):
    shape, w = arrays["layers.%d.weight" % l]
    for i in range(inp):
        for o in range(out):
            bad += w[o * inp + i] != raw[off + i * out + o]   # npz (out, in) vs raw (in, out)
    off += inp * out
    bad += arrays["layers.%d.bias" % l][1] != list(raw[off : off + out])
    off += out
print("%d of %d floats placed, %d differ" % (off, len(raw), bad))
EOF
expect_eq "c.npz: every weight is the raw (in, out) parameter transposed, bit for bit" "$out" \
    "114 of 114 floats placed, 0 differ"
same_actions "c" "$X/c.npz" "$RUNS/c" "$X/cartpole.obs"

# ---- a zip bomb: the standard-library loader refuses a member whose size
# (the zip's file_size) is not what its .npy header and shape need, before
# inflating it. bomb.npz: c.npz with 20 MB of zeros after layers.0.bias's 16
# floats (deflated to some 20 KB); cut.npz: layers.0.bias's header claims 17
# floats and the member holds 16. The loader's reads are counted: a few
# hundred bytes of the bad member, not 20 MB.
python3 - "$X/c.npz" "$X/bomb.npz" "$X/cut.npz" <<'EOF'
import sys, zipfile
src = zipfile.ZipFile(sys.argv[1])
for out, bad in ((sys.argv[2], lambda b: b + bytes(20 << 20)),
                 (sys.argv[3], lambda b: b.replace(b"(16,)", b"(17,)"))):
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for i in src.infolist():
            data = src.read(i)
            z.writestr(i.filename, bad(data) if i.filename == "layers.0.bias.npy" else data)
EOF
check "bomb.npz is small ($(stat -c %s "$X/bomb.npz") bytes)" [ "$(stat -c %s "$X/bomb.npz")" -lt 200000 ]
for f in bomb cut; do
    run_cmd python3 "$POLICY" "$X/$f.npz" --info --backend stdlib
    expect_rc "$f.npz: refused (exit 1)" 1
    expect_eq "$f.npz: one line on stderr" "$(wc -l <<<"$err")" 1
    expect_contains "$f.npz: the line names the member and its sizes" "$err" \
        "layers.0.bias.npy: the zip declares $([ $f = bomb ] && echo $((128 + 64 + (20 << 20))) || echo 192) bytes for it"
    run_cmd python3 - "$X/$f.npz" <<'EOF'
import sys, zipfile
sys.path.insert(0, "scripts")
import npz_policy
got = {}
read = zipfile.ZipExtFile.read
def counted(self, n=-1):
    b = read(self, n)
    got[self.name] = got.get(self.name, 0) + len(b)
    return b
zipfile.ZipExtFile.read = counted
try:
    npz_policy.load_stdlib(sys.argv[1])
    print("accepted")
except ValueError:
    print("refused after reading %d bytes of it" % got.get("layers.0.bias.npy", 0))
EOF
    check "$f.npz: the loader read at most 4 KiB of the member ($out)" \
        python3 -c 'import sys; w = sys.argv[1].split(); sys.exit(not (w[0] == "refused" and int(w[3]) <= 4096))' "$out"
done
"$GORILA" export "$RUNS/c" "$X/c2.npz" >/dev/null 2>&1
check "the same checkpoint exports the same bytes" cmp -s "$X/c.npz" "$X/c2.npz"
run_cmd "$GORILA" eval "$RUNS/c" --episodes 1 --export "$X/c3.npz"
expect_contains "eval --export --episodes 1 exports and evaluates" "$out" "1 greedy episodes"
check "eval --export writes what export writes" cmp -s "$X/c.npz" "$X/c3.npz"

# ---- dueling, two square hidden layers (a missing transpose of an 8x8
# layer would keep every shape right and change the actions)
train d configs/local/cartpole.yaml run.max_env_steps=2000 network.hidden="[8,8]" network.dueling=true run.seed=3
run_cmd "$GORILA" export "$RUNS/d" "$X/d.npz"
expect_rc "export d.npz: exit 0" 0
expect_contains "export d.npz: the line names the dueling network" "$out" "CartPole-v1 network 4-8-8-2 dueling,"
run_cmd zip_check "$X/d.npz"
expect_rc "d.npz: a valid zip of .npy files" 0
expect_eq "d.npz: dueling heads named advantage and value, weights (out, in)" \
    "$(grep -E '^(layers|advantage|value)' <<<"$out")" "$(printf '%s\n' \
        'advantage.bias 2 <f4' 'advantage.weight 2x8 <f4' 'layers.0.bias 8 <f4' 'layers.0.weight 8x4 <f4' \
        'layers.1.bias 8 <f4' 'layers.1.weight 8x8 <f4' 'value.bias 1 <f4' 'value.weight 1x8 <f4')"
run_cmd python3 "$POLICY" "$X/d.npz" --info --backend stdlib
expect_contains "d.npz: dueling is true" "$out" "dueling: True"
same_actions "d" "$X/d.npz" "$RUNS/d" "$X/cartpole.obs"

# ---- Pendulum with four torques: the torque of each action index is in the file
train p configs/local/pendulum.yaml run.max_env_steps=1000 network.hidden=[5] env.torques="[-2,0,1,2]"
run_cmd "$GORILA" export "$RUNS/p" "$X/p.npz"
expect_rc "export p.npz: exit 0" 0
run_cmd zip_check "$X/p.npz"
expect_contains "p.npz: torques, float64, one per action" "$out" "torques 4 <f8"
expect_contains "p.npz: head (4 actions, 5 hidden)" "$out" "layers.1.weight 4x5 <f4"
run_cmd python3 "$POLICY" "$X/p.npz" --info --backend stdlib
expect_contains "p.npz: the torques as configured" "$out" "torques: [-2.0, 0.0, 1.0, 2.0]"
same_actions "p" "$X/p.npz" "$RUNS/p" "$X/pendulum.obs"

# ---- gorila export: best and final of one run, without evaluating
# ckpt_check NPZ CKPT_DIR [BIN]: read CKPT_DIR/ps-0.ckpt with Python (the
# header and section table of docs/CHECKPOINT.md, not gorila's reader; the
# local trainer writes one shard holding every parameter) and compare the
# npz's layers (a plain network) with its params section, bit for bit, and
# BIN's bytes with the section's. Prints "version V, N of N floats placed,
# D differ[, bin equal|bin differs]".
ckpt_check() {
    python3 - "$@" <<'PY'
import array, struct, sys
sys.path.insert(0, "scripts")
import npz_policy
with open(sys.argv[2] + "/ps-0.ckpt", "rb") as f:
    d = f.read()
assert d[:8] == b"GORILACK", d[:8]
(n_sections,) = struct.unpack_from("<I", d, 20)
obs, acts, n_hidden = struct.unpack_from("<3I", d, 28)
hidden = list(struct.unpack_from("<8I", d, 40)[:n_hidden])
assert struct.unpack_from("<I", d, 72)[0] == 0, "dueling: not handled here"
n_params, first, count = struct.unpack_from("<3Q", d, 88)
(version,) = struct.unpack_from("<Q", d, 168)
assert (first, count) == (0, n_params), (first, count, n_params)
pos, section = 256 + 16 * n_sections, None
for i in range(n_sections):
    sid, _, nbytes = struct.unpack_from("<IIQ", d, 256 + 16 * i)
    if sid == 1:
        section = d[pos:pos + nbytes]
    pos += nbytes
raw = array.array("f")
raw.frombytes(section)
arrays = npz_policy.load_stdlib(sys.argv[1])
widths = [obs] + hidden + [acts]
off, bad = 0, 0
for l in range(len(widths) - 1):
    inp, out = widths[l], widths[l + 1]
    shape, w = arrays["layers.%d.weight" % l]
    assert list(shape) == [out, inp], shape
    for i in range(inp):
        for o in range(out):
            bad += w[o * inp + i] != raw[off + i * out + o]
    off += inp * out
    bad += arrays["layers.%d.bias" % l][1] != list(raw[off:off + out])
    off += out
line = "version %d, %d of %d floats placed, %d differ" % (version, off, n_params, bad)
if len(sys.argv) > 3:
    with open(sys.argv[3], "rb") as f:
        line += ", bin equal" if f.read() == section else ", bin differs"
print(line)
PY
}
# Evaluations every 100 updates keep checkpoints/best apart from the final one
# whenever a later evaluation is worse; either way each export must be the
# parameters of the checkpoint it names.
train x configs/local/cartpole.yaml run.max_env_steps=3000 network.hidden=[16] eval.every_updates=100
XR="$RUNS/x"
final_dir=$XR/checkpoints/$(cat "$XR/checkpoints/latest")
for which in best final; do
    dir=$XR/checkpoints/best
    [ "$which" = final ] && dir=$final_dir
    run_cmd "$GORILA" export "$XR" "$X/x-$which.npz" --checkpoint "$which"
    expect_rc "export --checkpoint $which: exit 0" 0
    expect_eq "export --checkpoint $which: nothing on stderr" "$err" ""
    line=$out
    v=$(ckpt_check "$X/x-$which.npz" "$dir" | sed -n 's/^version \([0-9]*\),.*/\1/p')
    bytes=$(stat -c %s "$X/x-$which.npz")
    expect_eq "export --checkpoint $which: one line: file, format, size, network, parameters, checkpoint, updates" \
        "$(sed -E 's/ env steps.*//' <<<"$line")" \
        "wrote $X/x-$which.npz (npz, $bytes bytes): CartPole-v1 network 4-16-2, 114 parameters, from $dir ($which checkpoint, parameters after $v updates, $(sed -n 's/^env_steps //p' "$dir/MANIFEST")"
    # No evaluation: its lines ("loaded ...", "N greedy episodes ...") are absent
    # and the one line is all there is.
    expect_eq "export --checkpoint $which: no evaluation, only the wrote line" "$(wc -l <<<"$line")" 1
    check "export --checkpoint $which: no evaluation output" \
        bash -c '! grep -qE "greedy episodes|^loaded |mean [0-9]" <<<"$1"' _ "$line"
    run_cmd "$GORILA" export "$XR" "$X/x-$which.bin" --checkpoint "$which"
    expect_rc "export --checkpoint $which .bin: exit 0" 0
    expect_contains "export --checkpoint $which .bin: says raw float32, 456 bytes" "$out" \
        "wrote $X/x-$which.bin (raw float32, 456 bytes): CartPole-v1 network 4-16-2, 114 parameters, from $dir"
    run_cmd ckpt_check "$X/x-$which.npz" "$dir" "$X/x-$which.bin"
    expect_eq "export --checkpoint $which: the npz's arrays and the .bin are the checkpoint file's parameters" \
        "$out" "version $v, 114 of 114 floats placed, 0 differ, bin equal"
    j=$("$GORILA" eval "$XR" --checkpoint "$which" --json)
    expect_eq "export --checkpoint $which: the update count is the one eval reports" "$(jnum "$j" params_version)" "$v"
    run_cmd python3 "$POLICY" "$X/x-$which.npz" --info --backend stdlib
    expect_rc "npz_policy.py --info reads the $which export" 0
    same_actions "x-$which" "$X/x-$which.npz" "$XR" "$X/cartpole.obs" --checkpoint "$which"
done
run_cmd "$GORILA" export "$XR" "$X/x-latest.npz"
check "export without --checkpoint takes latest, the final one of a finished run" \
    cmp -s "$X/x-latest.npz" "$X/x-final.npz"
expect_contains "export without --checkpoint: names the final checkpoint" "$out" "from $final_dir (final checkpoint,"
run_cmd "$GORILA" export "$XR/checkpoints/best" "$X/x-bestdir.npz"
expect_rc "export of a checkpoint directory: exit 0" 0
check "export of a checkpoint directory: the same bytes as --checkpoint best" \
    cmp -s "$X/x-bestdir.npz" "$X/x-best.npz"
run_cmd "$GORILA" export "$XR" "$X/x-final.npz" --checkpoint final
expect_contains "export over its own earlier file: says replaced" "$out" "replaced $X/x-final.npz (npz,"
run_cmd "$GORILA" export "$XR" "$X/x.json.npz" --checkpoint best --json
expect_rc "export --json: exit 0" 0
run_cmd python3 -c '
import json, sys
o = json.loads(sys.argv[1])
print(o["path"], o["format"], o["bytes"], o["n_params"], o["env"], o["hidden"], o["checkpoint"], o["kind"],
      o["params_version"], o["replaced"])' "$out"
expect_eq "export --json: one object of the same facts" "$out" \
    "$X/x.json.npz npz $(stat -c %s "$X/x.json.npz") 114 CartPole-v1 [16] $XR/checkpoints/best best $(
        jnum "$("$GORILA" eval "$XR" --checkpoint best --json)" params_version) False"

# eval --export evaluates only when asked (--episodes, --seed or --json)
run_cmd "$GORILA" eval "$XR" --export "$X/x-eval.npz"
expect_rc "eval --export alone: exit 0" 0
expect_eq "eval --export alone: does not evaluate (nothing on stdout)" "$out" ""
expect_eq "eval --export alone: the wrote line on stderr, as export prints it" "$err" \
    "$("$GORILA" export "$XR" "$X/x-eval2.npz" | sed "s|x-eval2.npz|x-eval.npz|")"
check "eval --export alone: the same bytes as export" cmp -s "$X/x-eval.npz" "$X/x-final.npz"
run_cmd "$GORILA" eval "$XR" --export "$X/x-eval.npz" --seed 3
expect_contains "eval --export --seed: evaluates" "$out" "greedy episodes (eval seed 3)"
expect_contains "eval --export --seed: says it replaced the file" "$err" "replaced $X/x-eval.npz (npz,"
run_cmd "$GORILA" eval "$XR" --export "$X/x-eval.npz" --json --episodes 2
expect_rc "eval --export --json: exit 0" 0
expect_eq "eval --export --json: evaluates, stdout is the evaluation's JSON" "$(jnum "$out" episodes)" 2
expect_contains "eval --export --json: the wrote line on stderr" "$err" "replaced $X/x-eval.npz (npz,"

# export's bad input: one line on stderr, exit 2, nothing written
bad_export() {
    local name=$1 want=$2 dest=$3
    shift 3
    run_cmd "$GORILA" export "$@"
    expect_rc "export, $name: exit 2" 2
    expect_eq "export, $name: one line on stderr" "$(grep -c . <<<"$err")" 1
    expect_contains "export, $name: says why" "$err" "$want"
    expect_eq "export, $name: nothing on stdout" "$out" ""
    check "export, $name: nothing written at $dest" [ ! -e "$dest" ]
}
B="$X/bad"
mkdir -p "$B"
echo "a file" >"$B/afile"
bad_export "no arguments" "export: missing RUN|CHECKPOINT and FILE" "$B/none"
bad_export "no FILE" "export: missing FILE" "$B/none" "$XR"
bad_export "a missing run" "$B/no-run is not a directory" "$B/o1.npz" "$B/no-run" "$B/o1.npz"
bad_export "a directory that is no run" "is neither a run directory (no config.yaml) nor a checkpoint" "$B/o2.npz" \
    "$B" "$B/o2.npz"
bad_export "a missing checkpoint directory" "$XR/checkpoints/ckpt-999999 is not a directory" "$B/o3.npz" \
    "$XR/checkpoints/ckpt-999999" "$B/o3.npz"
bad_export "--checkpoint of no kind" "--checkpoint nowhere: not latest, final, best, or a checkpoint directory" \
    "$B/o4.npz" "$XR" "$B/o4.npz" --checkpoint nowhere
bad_export "a wrong extension" "export: $B/o5.pt: FILE must end in .npz (NumPy archive) or .bin" "$B/o5.pt" \
    "$XR" "$B/o5.pt"
bad_export "swapped arguments" "FILE must end in .npz" "$B/none" "$X/x-final.npz" "$XR"
bad_export "a missing output directory" "cannot write $B/no-dir/o6.npz" "$B/no-dir/o6.npz" "$XR" "$B/no-dir/o6.npz"
bad_export "an output path under a file" "cannot write $B/afile/o7.npz" "$B/afile/o7.npz" "$XR" "$B/afile/o7.npz"
bad_export "--episodes (export does not evaluate)" "export does not evaluate" "$B/o8.npz" \
    "$XR" "$B/o8.npz" --episodes 5
bad_export "three arguments" 'more than RUN|CHECKPOINT and FILE given ("extra")' "$B/o9.npz" "$XR" "$B/o9.npz" extra
mkdir -p "$B/ro"
chmod 555 "$B/ro"
if [ "$(id -u)" -ne 0 ]; then
    bad_export "a read-only directory" "cannot write $B/ro/o10.npz" "$B/ro/o10.npz" "$XR" "$B/ro/o10.npz"
else
    ok "export into a read-only directory # SKIP root writes there anyway"
fi
chmod 755 "$B/ro"
# A run with no best checkpoint (a copy without it): exit 4, as eval and a
# resume without a checkpoint (GORILA_EXIT_CKPT_READ).
cp -r "$XR" "$B/nobest"
rm -rf "$B/nobest/checkpoints/best"
run_cmd "$GORILA" export "$B/nobest" "$B/o11.npz" --checkpoint best
expect_rc "export --checkpoint best of a run without one: exit 4 (GORILA_EXIT_CKPT_READ)" 4
expect_contains "export --checkpoint best of a run without one: says so" "$err" "no best checkpoint in $B/nobest"
check "export --checkpoint best of a run without one: nothing written" [ ! -e "$B/o11.npz" ]
# A write that fails half-way (ulimit -f 1, as below for eval --export)
echo "keep me" >"$B/keep.npz"
run_cmd bash -c 'ulimit -f 1; exec "$@"' _ "$GORILA" export "$XR" "$B/keep.npz"
expect_rc "export, write fails half-way: exit 2" 2
expect_contains "export, write fails half-way: says why" "$err" "cannot write $B/keep.npz: File too large"
expect_eq "export, write fails half-way: the old file untouched" "$(cat "$B/keep.npz")" "keep me"
expect_eq "export: no temporary left behind" "$(find "$B" -name '*.tmp-*')" ""
run_cmd "$GORILA" export --help
expect_rc "export --help: exit 0" 0
expect_contains "export --help: usage on stdout" "$out" "usage: gorila export RUN|CHECKPOINT FILE"
run_cmd "$GORILA" --help
expect_contains "gorila --help lists export" "$out" "  export RUN|CHECKPOINT FILE.npz|FILE.bin"

# ---- errors
run_cmd bash -c 'printf "0 0 0 0\n\n1 2 3\n" | "$1" eval "$2" --actions -' _ "$GORILA" "$RUNS/c"
expect_rc "--actions: a short line: exit 2" 2
expect_contains "--actions: names the line and the count" "$err" "line 3: expected 4 values, got 3"
expect_eq "--actions: the lines before the bad one were answered" "$(wc -l <<<"$out")" 1
run_cmd bash -c 'printf "0 0 x 0\n" | "$1" eval "$2" --actions -' _ "$GORILA" "$RUNS/c"
expect_contains "--actions: a non-number" "$err" 'line 1: value 3: expected a number, got "x"'
run_cmd "$GORILA" eval "$RUNS/c" --actions "$X/missing.obs"
expect_rc "--actions: a missing file: exit 2" 2
expect_contains "--actions: a missing file: message" "$err" "cannot read $X/missing.obs"
run_cmd "$GORILA" eval "$RUNS/c" --actions
expect_contains "--actions without a file" "$err" "--actions needs a file name"
run_cmd "$GORILA" eval "$RUNS/c" --export "$X/no-such-dir/c.npz"
expect_rc "--export into a missing directory: exit 2" 2
expect_contains "--export into a missing directory: message" "$err" "cannot write $X/no-such-dir/c.npz"
run_cmd "$GORILA" eval --help
expect_contains "eval --help documents --actions" "$out" "--actions OBSFILE"
expect_contains "eval --help says what --export writes" "$out" "NumPy .npz"
run_cmd python3 "$POLICY" "$X/c.bin"
check "npz_policy.py refuses a raw .bin: exit status not 0" test "$rc" -ne 0
expect_contains "npz_policy.py refuses a raw .bin: one line naming the file" "$err" "npz_policy: $X/c.bin: not an .npz"
# A checkpoint directory copied out of its run: its network is in the run's
# config.yaml two levels up; say so (it was a bare ".../../../config.yaml:
# cannot open config"). Exit 2, nothing written.
mkdir -p "$X/lone-parent"
cp -r "$RUNS/c/checkpoints/best" "$X/lone-parent/lone"
for c in eval export; do
    if [ "$c" = eval ]; then
        run_cmd "$GORILA" eval "$X/lone-parent/lone" --episodes 1
    else
        run_cmd "$GORILA" export "$X/lone-parent/lone" "$X/lone.npz"
    fi
    expect_rc "$c of a checkpoint without its run: exit 2" 2
    expect_contains "$c of a checkpoint without its run: says so" "$err" \
        "$c: $X/lone-parent/lone is a checkpoint without its run: its network is described by the run's config.yaml, two levels up"
done
check "export of a checkpoint without its run: nothing written" [ ! -e "$X/lone.npz" ]
# A truncated archive, a missing one, a missing observations file: one line
# each saying which (all three were "not an .npz" or a traceback).
head -c 1000 "$X/c.npz" >"$X/trunc.npz"
run_cmd python3 "$POLICY" "$X/trunc.npz" --info
check "npz_policy.py on a truncated .npz: exit status not 0" test "$rc" -ne 0
expect_eq "npz_policy.py on a truncated .npz: says so" "$err" \
    "npz_policy: $X/trunc.npz: a damaged or truncated .npz (a zip archive without its directory at the end)"
run_cmd python3 "$POLICY" "$X/none.npz" --info
expect_eq "npz_policy.py on a missing file: says so" "$err" \
    "npz_policy: $X/none.npz: [Errno 2] No such file or directory: '$X/none.npz'"
run_cmd python3 "$POLICY" "$X/c.npz" "$X/no-obs.txt"
expect_eq "npz_policy.py with a missing observations file: one line" "$err" \
    "npz_policy: $X/no-obs.txt: No such file or directory"

# ---- --actions reads bounded input: a line of at most 64 KiB, 64 MiB in all,
# so an endless or binary source ends with an error instead of growing
# without bound (under a 2 GiB address-space limit it used to exit 0 and
# print nothing). Not under the sanitizer, whose shadow memory needs more.
vlimit="ulimit -v 2097152;"
[ -n "${ASAN_OPTIONS:-}" ] && vlimit=""
head -c 3000000 /dev/zero | tr '\0' '7' >"$X/noline.obs"
for src in /dev/zero "$X/noline.obs"; do
    run_cmd timeout --kill-after=5 60 bash -c "$vlimit"' exec "$1" eval "$2" --actions "$3"' _ "$GORILA" "$RUNS/c" "$src"
    expect_rc "--actions $src: exit 2" 2
    expect_contains "--actions $src: one line naming the file and the limit" "$err" \
        "eval: --actions $src: line 1 is longer than 65536 bytes, the limit of a line"
    expect_eq "--actions $src: no actions printed" "$out" ""
done
# 64 MiB of long comment lines (no forward passes: quick) from an endless pipe
long=$(printf '# %060000d' 0)
run_cmd timeout --kill-after=5 60 bash -c 'yes "$3" | "$1" eval "$2" --actions -' _ "$GORILA" "$RUNS/c" "$long"
expect_rc "--actions from an endless pipe: exit 2" 2
expect_contains "--actions from an endless pipe: stops at the size limit" "$err" "more than 64 MiB of input, the limit"
run_cmd bash -c 'printf "0 0 0 0\n0 0\0 0 0\n" | "$1" eval "$2" --actions -' _ "$GORILA" "$RUNS/c"
expect_rc "--actions: a NUL byte: exit 2" 2
expect_contains "--actions: a NUL byte: names the line" "$err" "line 2: a NUL byte"

# ---- --export writes a temporary beside FILE and renames it onto FILE, and
# only when FILE is missing or a regular file: anything else is refused
# with exit 2 and left as it was; a failed write removes only the temporary.
# (eval --export, here without evaluating, and export share the writer.)
E="$X/targets"
mkdir -p "$E"
run_cmd "$GORILA" eval "$RUNS/c" --export "$E/new.npz"
expect_rc "--export to a new file: exit 0" 0
expect_contains "--export to a new file: says so" "$err" "wrote $E/new.npz"
check "--export to a new file: the export's bytes" cmp -s "$E/new.npz" "$X/c.npz"
echo "an older file" >"$E/old.npz"
run_cmd "$GORILA" eval "$RUNS/c" --export "$E/old.npz"
expect_rc "--export over a regular file: exit 0" 0
expect_contains "--export over a regular file: says it replaced it" "$err" "replaced $E/old.npz"
check "--export over a regular file: now the whole export" cmp -s "$E/old.npz" "$X/c.npz"
if mknod "$E/fulldev" c 1 7 2>/dev/null; then
    # the same device numbers as /dev/full: every write fails with ENOSPC,
    # after which the old code removed the node
    run_cmd timeout 60 "$GORILA" eval "$RUNS/c" --export "$E/fulldev"
    expect_rc "--export to a character device: exit 2" 2
    expect_contains "--export to a character device: refused" "$err" "$E/fulldev is a character device, not a regular file: refused"
    check "--export to a character device: the node is still there, a character device" [ -c "$E/fulldev" ]
    rm -f "$E/fulldev"
else
    ok "--export to a character device # SKIP mknod needs root"
fi
mkfifo "$E/fifo"
run_cmd timeout 60 "$GORILA" eval "$RUNS/c" --export "$E/fifo"
expect_rc "--export to a FIFO: exit 2 at once (not blocked opening it)" 2
expect_contains "--export to a FIFO: refused" "$err" "$E/fifo is a FIFO, not a regular file: refused"
check "--export to a FIFO: still a FIFO" [ -p "$E/fifo" ]
mkdir -p "$E/dir.npz"
run_cmd "$GORILA" eval "$RUNS/c" --export "$E/dir.npz"
expect_rc "--export to a directory: exit 2" 2
expect_contains "--export to a directory: refused" "$err" "$E/dir.npz is a directory, not a regular file: refused"
check "--export to a directory: still a directory" [ -d "$E/dir.npz" ]
echo "the link's target" >"$E/victim"
ln -sfn "$E/victim" "$E/link.npz"
run_cmd "$GORILA" eval "$RUNS/c" --export "$E/link.npz"
expect_rc "--export to a symbolic link: exit 2" 2
expect_contains "--export to a symbolic link: refused, not followed" "$err" "$E/link.npz is a symbolic link: refused, not followed"
expect_eq "--export to a symbolic link: its target untouched" "$(cat "$E/victim")" "the link's target"
check "--export to a symbolic link: still a link" [ -L "$E/link.npz" ]
run_cmd "$GORILA" export "$RUNS/c" "$E/link.npz"
expect_rc "export to a symbolic link: exit 2" 2
expect_contains "export to a symbolic link: refused, not followed" "$err" "$E/link.npz is a symbolic link: refused, not followed"
expect_eq "export to a symbolic link: its target untouched" "$(cat "$E/victim")" "the link's target"
mkfifo "$E/fifo.npz"
run_cmd timeout 60 "$GORILA" export "$RUNS/c" "$E/fifo.npz"
expect_rc "export to a FIFO: exit 2 at once" 2
expect_contains "export to a FIFO: refused" "$err" "$E/fifo.npz is a FIFO, not a regular file: refused"
# A write that fails half-way: a 1 KiB file-size limit (ulimit -f 1) makes
# the ~2 KiB export fail with EFBIG (gorila ignores SIGXFSZ while exporting).
echo "keep me" >"$E/keep.npz"
run_cmd bash -c 'ulimit -f 1; exec "$@"' _ "$GORILA" eval "$RUNS/c" --export "$E/keep.npz"
expect_rc "--export, write fails half-way: exit 2" 2
expect_contains "--export, write fails half-way: says why" "$err" "cannot write $E/keep.npz: File too large"
expect_eq "--export, write fails half-way: the old file untouched" "$(cat "$E/keep.npz")" "keep me"
run_cmd bash -c 'ulimit -f 1; exec "$@"' _ "$GORILA" eval "$RUNS/c" --export "$E/gone.npz"
expect_rc "--export, write fails half-way, new file: exit 2" 2
check "--export, write fails half-way, new file: nothing left at the path" [ ! -e "$E/gone.npz" ]
expect_eq "--export: no temporary left behind" "$(find "$X" -name '*.tmp-*')" ""

# scripts/ckpt-sections: a checkpoint file's sections, size and SHA-256 of
# each; its params section is exactly the raw parameters gorila export writes.
ck="$RUNS/c/checkpoints/$(cat "$RUNS/c/checkpoints/latest")/ps-0.ckpt"
run_cmd "$TEST_ROOT/scripts/ckpt-sections" "$ck"
expect_rc "ckpt-sections: exit 0" 0
"$GORILA" export "$RUNS/c" "$X/c.bin" >/dev/null 2>&1
expect_eq "ckpt-sections: the params section is the exported parameters (size and SHA-256)" \
    "$(awk '$2 == "params" { print $3, $4 }' <<<"$out")" "$(stat -c %s "$X/c.bin") $(sha256sum <"$X/c.bin" | cut -d' ' -f1)"
expect_eq "ckpt-sections: the sections in file order" "$(awk '{ print $2 }' <<<"$out" | paste -sd' ')" \
    "params target_params optim_state rng_states envs"
printf 'not a checkpoint, 256 bytes or more %0256d' 0 >"$X/bad.ckpt"
run_cmd "$TEST_ROOT/scripts/ckpt-sections" "$X/bad.ckpt"
expect_rc "ckpt-sections: not a checkpoint, exit 2" 2
expect_contains "ckpt-sections: says so" "$err" "bad.ckpt: not a gorila checkpoint"

done_testing
