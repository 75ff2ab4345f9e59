#!/usr/bin/env bash
# tests/cli/export.sh: `gorila eval --export FILE.npz` and scripts/npz_policy.py.
# Short local runs are exported; the file must be a valid zip of .npy arrays
# (checked with Python's own zipfile and zlib, not with gorila's code), its
# weights must be the raw parameters transposed to PyTorch's (out, in), and
# the script's greedy actions on a set of observations must equal gorila's
# own (`gorila eval RUN --actions OBSFILE`). numpy and torch are optional:
# the script's standard-library reader always runs; the numpy and torch
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

# same_actions NAME NPZ RUN OBS: the script (each backend there is) and
# gorila pick the same greedy actions, and not all the same action.
same_actions() {
    local name=$1 npz=$2 run=$3 obs=$4
    run_cmd "$GORILA" eval "$run" --actions "$obs"
    expect_rc "$name: eval --actions exits 0" 0
    local want=$out n
    n=$(grep -vc '^\(#.*\)\?$' "$obs")
    expect_eq "$name: eval --actions prints one action per observation" "$(wc -l <<<"$want")" "$n"
    check "$name: the greedy actions are not all the same (a real comparison)" \
        test "$(sort -u <<<"$want" | wc -l)" -gt 1
    run_cmd python3 "$POLICY" "$npz" "$obs" --backend stdlib
    expect_rc "$name: npz_policy.py (standard library) exits 0" 0
    expect_eq "$name: npz_policy.py (standard library) picks gorila's greedy actions" "$out" "$want"
    run_cmd python3 "$POLICY" "$npz" --backend stdlib <"$obs"
    expect_eq "$name: npz_policy.py reads the observations from stdin too" "$out" "$want"
    for b in numpy torch; do
        if python3 -c "import $b" 2>/dev/null && python3 -c "import numpy" 2>/dev/null; then
            run_cmd python3 "$POLICY" "$npz" "$obs" --backend "$b"
            expect_eq "$name: npz_policy.py ($b) picks gorila's greedy actions" "$out" "$want"
        else
            ok "$name: npz_policy.py ($b) # SKIP $b is not installed"
        fi
    done
}

# ---- CartPole, one hidden layer of 16
train c configs/local/cartpole.yaml run.max_env_steps=2000 network.hidden=[16]
run_cmd "$GORILA" eval "$RUNS/c" --episodes 1 --export "$X/c.npz"
expect_rc "eval --export c.npz: exit 0" 0
expect_contains "eval --export still evaluates" "$out" "1 greedy episodes"
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
run_cmd "$GORILA" eval "$RUNS/c" --episodes 1 --export "$X/c.bin"
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
"$GORILA" eval "$RUNS/c" --episodes 1 --export "$X/c2.npz" >/dev/null 2>&1
check "the same checkpoint exports the same bytes" cmp -s "$X/c.npz" "$X/c2.npz"

# ---- dueling, two square hidden layers (a missing transpose of an 8x8
# layer would keep every shape right and change the actions)
train d configs/local/cartpole.yaml run.max_env_steps=2000 network.hidden=[8,8] network.dueling=true run.seed=3
run_cmd "$GORILA" eval "$RUNS/d" --episodes 1 --export "$X/d.npz"
expect_rc "eval --export d.npz: exit 0" 0
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
train p configs/local/pendulum.yaml run.max_env_steps=1000 network.hidden=[5] env.torques=[-2,0,1,2]
run_cmd "$GORILA" eval "$RUNS/p" --episodes 1 --export "$X/p.npz"
expect_rc "eval --export p.npz: exit 0" 0
run_cmd zip_check "$X/p.npz"
expect_contains "p.npz: torques, float64, one per action" "$out" "torques 4 <f8"
expect_contains "p.npz: head (4 actions, 5 hidden)" "$out" "layers.1.weight 4x5 <f4"
run_cmd python3 "$POLICY" "$X/p.npz" --info --backend stdlib
expect_contains "p.npz: the torques as configured" "$out" "torques: [-2.0, 0.0, 1.0, 2.0]"
same_actions "p" "$X/p.npz" "$RUNS/p" "$X/pendulum.obs"

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

done_testing
