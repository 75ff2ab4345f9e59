#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/cli/export_conv.sh: the .npz export of networks with convolution
# layers, read by scripts/npz_policy.py (standard library, numpy, torch)
# and by a plain torch nn.Sequential built from the arrays.
# No config trains a conv network yet, so build/tests/npz_conv (tests/npz)
# builds the two networks of tests/npz/convnets.h directly and writes, per
# network, the export (npz_export_qnet, what `gorila export` writes),
# observations (planes (H, W, C) per row) and gorila's own "action,q..." per
# observation (qnet_forward, qnet_argmax). The script's actions must be
# gorila's and its Q-values gorila's to float32 rounding. numpy and torch
# are looked for in python3, then /usr/bin/python3; without them those
# checks are skipped, the standard-library ones always run.
source "$(dirname "$0")/../lib.sh"
cd "$TEST_ROOT" || exit 1
X="$TEST_TMP/export-conv"
rm -rf "$X"
mkdir -p "$X"
POLICY=scripts/npz_policy.py
FIXTURE="$(dirname "$GORILA")/tests/npz_conv"
if ! command -v python3 >/dev/null; then
    not_ok "python3 not found (scripts/install-deps.sh installs it)"
    done_testing
    exit
fi

# with_module MODULE...: a python that imports them all, or nothing
with_module() {
    local py mods="$*"
    for py in python3 /usr/bin/python3; do
        if command -v "$py" >/dev/null && "$py" -c "import ${mods// /, }" 2>/dev/null; then
            echo "$py"
            return
        fi
    done
}
NUMPY_PY=$(with_module numpy)
TORCH_PY=$(with_module numpy torch)

# compare_q NAME WANT GOT: the rows "action,q0,..." of GOT against WANT:
# the same Q-values within 1e-5 (relative to the largest |q|, at least 1)
# and the same action wherever the best two of WANT are more than 1e-5
# apart. Prints "ok N" (N rows), or the first difference.
compare_q() {
    python3 - "$@" <<'EOF'
import sys
name, want, got = sys.argv[1], open(sys.argv[2]).read().split(), open(sys.argv[3]).read().split()
if len(want) != len(got):
    sys.exit("%s: %d rows, expected %d" % (name, len(got), len(want)))
for i, (w, g) in enumerate(zip(want, got)):
    w, g = [float(v) for v in w.split(",")], [float(v) for v in g.split(",")]
    scale = max([1.0] + [abs(v) for v in w[1:]])
    if len(w) != len(g) or max(abs(a - b) for a, b in zip(w[1:], g[1:])) > 1e-5 * scale:
        sys.exit("%s row %d: q %s, gorila's %s" % (name, i + 1, g[1:], w[1:]))
    top = sorted(w[1:])
    if top[-1] - top[-2] > 1e-5 and int(w[0]) != int(g[0]):
        sys.exit("%s row %d: action %d, gorila's %d" % (name, i + 1, g[0], w[0]))
print("ok %d" % len(want))
EOF
}

run_cmd "$FIXTURE" "$X"
expect_rc "npz_conv writes the conv networks' exports" 0

for n in a b; do
    run_cmd python3 -m zipfile -t "$X/$n.npz"
    expect_rc "$n.npz: python3 -m zipfile -t finds no error" 0
    check "$n: gorila's greedy actions are not all the same (a real comparison)" \
        test "$(cut -d, -f1 "$X/$n.q" | sort -u | wc -l)" -gt 1
    run_cmd python3 "$POLICY" "$X/$n.npz" "$X/$n.obs" --backend stdlib --q
    expect_rc "$n: npz_policy.py (standard library) exits 0" 0
    printf '%s\n' "$out" >"$X/$n.stdlib.q"
    expect_eq "$n: npz_policy.py (standard library) has gorila's actions and Q-values" \
        "$(compare_q "$n stdlib" "$X/$n.q" "$X/$n.stdlib.q" 2>&1)" "ok 200"
    for b in numpy torch; do
        py=$NUMPY_PY
        [ "$b" = torch ] && py=$TORCH_PY
        if [ -z "$py" ]; then
            ok "$n: npz_policy.py ($b) # SKIP $b is not installed"
            continue
        fi
        run_cmd "$py" "$POLICY" "$X/$n.npz" "$X/$n.obs" --backend "$b" --q
        expect_rc "$n: npz_policy.py ($b) exits 0" 0
        printf '%s\n' "$out" >"$X/$n.$b.q"
        expect_eq "$n: npz_policy.py ($b) has gorila's actions and Q-values" \
            "$(compare_q "$n $b" "$X/$n.q" "$X/$n.$b.q" 2>&1)" "ok 200"
    done
done

# The metadata a consumer needs, as the script reads it.
run_cmd python3 "$POLICY" "$X/a.npz" --info --backend stdlib
expect_rc "a.npz: --info exits 0" 0
expect_contains "a.npz: format_version 2 (conv layers)" "$out" "format_version: 2"
expect_contains "a.npz: the planes (H, W, C)" "$out" "input_shape: (5, 6, 2)"
expect_contains "a.npz: each conv's (filters, kernel, stride)" "$out" "conv_layers: [(4, 3, 1), (3, 2, 2)]"
expect_contains "a.npz: conv.0.weight (out, in, kh, kw)" "$out" "array conv.0.weight (4, 2, 3, 3)"
expect_contains "a.npz: conv.1.weight (out, in, kh, kw)" "$out" "array conv.1.weight (3, 4, 2, 2)"
expect_contains "a.npz: layers.0 reads the flat (3, 1, 2) conv output" "$out" "array layers.0.weight (5, 6)"

# A plain torch nn.Sequential (Conv2d, ReLU, ..., Flatten, Linear, ...)
# built from the arrays with np.load, independently of npz_policy.py: the
# observation rows (H, W, C) permuted to (C, H, W).
if [ -n "$TORCH_PY" ]; then
    for n in a b; do
        run_cmd "$TORCH_PY" - "$X/$n.npz" "$X/$n.obs" <<'EOF'
import sys
import numpy as np
import torch
from torch import nn

z = np.load(sys.argv[1])
h, w, c0 = z["input_shape"].tolist()
c, mods, names = c0, [], []
for i, (f, k, s) in enumerate(z["conv_layers"].tolist()):
    mods += [nn.Conv2d(c, f, k, stride=s), nn.ReLU()]
    names.append(("conv.%d" % i, mods[-2]))
    c = f
mods.append(nn.Flatten())
L = len(z["hidden"])
for i in range(L + (0 if z["dueling"] else 1)):
    W = z["layers.%d.weight" % i]
    mods.append(nn.Linear(W.shape[1], W.shape[0]))
    names.append(("layers.%d" % i, mods[-1]))
    if i < L:
        mods.append(nn.ReLU())
body = nn.Sequential(*mods)
heads = {}
if z["dueling"]:
    for p in ("advantage", "value"):
        heads[p] = nn.Linear(z[p + ".weight"].shape[1], z[p + ".weight"].shape[0])
        names.append((p, heads[p]))
with torch.no_grad():
    for prefix, m in names:
        m.weight.copy_(torch.from_numpy(z[prefix + ".weight"]))
        m.bias.copy_(torch.from_numpy(z[prefix + ".bias"]))
    obs = torch.tensor(np.loadtxt(sys.argv[2], dtype=np.float32, ndmin=2))
    q = body(obs.reshape(-1, h, w, c0).permute(0, 3, 1, 2))
    if heads:
        adv = heads["advantage"](q)
        q = heads["value"](q) + adv - adv.mean(dim=1, keepdim=True)
for row in q.tolist():
    print("%d,%s" % (max(range(len(row)), key=lambda a: (row[a], -a)), ",".join("%.9g" % v for v in row)))
EOF
        expect_rc "$n: torch nn.Sequential from the arrays runs" 0
        printf '%s\n' "$out" >"$X/$n.seq.q"
        expect_eq "$n: torch nn.Sequential from the arrays has gorila's actions and Q-values" \
            "$(compare_q "$n sequential" "$X/$n.q" "$X/$n.seq.q" 2>&1)" "ok 200"
    done
else
    ok "torch nn.Sequential from the arrays # SKIP torch is not installed"
fi

done_testing
