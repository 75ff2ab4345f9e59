#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""torch_reference.py: PyTorch's answers for the convolutional Q-network and
for PyTorch's RMSprop, on fixed weights, inputs and gradients, for the unit
tests in tests/unit/test_torchref.c.

Regenerate (Debian's python3-torch, 1.13, is installed for /usr/bin/python3;
the `python3` first on PATH may lack torch and numpy):

    /usr/bin/python3 scripts/torch_reference.py --out tests/fixtures/torch

The output is a function of this script and of PyTorch only: nothing is
random. Every input comes from gen() below, an integer hash that the C test
reproduces exactly (test_torchref.c, gen_unit): value i of stream s is
(2 k / 2^24 - 1) * scale, k a 24-bit hash of (s, i), computed in float32, so
the C side rebuilds the same float32 numbers without storing them.

Files (whitespace-separated records `NAME COUNT V1 .. VCOUNT`, `#` starts a
comment line; integers for shapes, %.9g for float32 values, which
round-trips them):

  qnet_small.txt    6x6x3 planes, conv 4 3x3 s1, conv 5 2x2 s2, FC 8,
                    3 actions, dueling, batch 3
  qnet_minatar.txt  10x10x10 planes (MinAtar Seaquest's), conv 16 3x3 s1
                    (-> 16x8x8 = 1024), FC 4 (dqn.py has 128; the conv, the
                    flatten order and the 1024-wide layer are the same,
                    the file ten times smaller), 6 actions, plain head,
                    batch 2
    records: in_hwc (H, W, C); conv (filters, kernel, stride per layer);
    hidden; actions; dueling; batch; scales (one float32 per parameter
    view, in gorila's layout order: conv.i.weight, conv.i.bias,
    hidden.i.weight, hidden.i.bias, head.weight, head.bias); check (the
    first 4 parameters, to catch a generator mismatch plainly); q (B, A);
    grad (gorila's flat layout) for dL/dQ = dq.
    Streams: view v's parameters s = v + 1 (scaled by its scale), the
    observations s = 100 (scale 1, in (H, W, C) rows), dq s = 101 (scale 1).
  rmsprop.txt       torch.optim.RMSprop on 16 parameters over 6 steps:
    params0 (the start of every case); grad.t, the gradient of step t
    (1-based; parameter i's scaled by GRAD_SCALES[i % 4], so that large and
    small gradients meet eps 0.01); then per case NAME in CASES, case.NAME
    (lr, alpha, eps, centered, momentum) and NAME.after.t, the parameters
    after step t.

gorila's linear weights are (in, out): torch's nn.Linear weight is their
transpose; the dueling head is one (in, A + 1) layer whose column A is the
value stream, Q = V + Adv - mean(Adv). Observations are (H, W, C) rows,
permuted to (C, H, W) as MinAtar's dqn.py does.
"""
import argparse
import os

import numpy as np
import torch

MASK32 = 0xFFFFFFFF


def gen_unit(stream, n):
    """n float32 values in [-1, 1): (2 k / 2^24 - 1), k a hash of (stream, i)."""
    out = np.empty(n, dtype=np.float32)
    for i in range(n):
        h = (i * 2654435761 + stream * 97531 + 12345) & MASK32
        h ^= h >> 15
        h = (h * 2246822519) & MASK32
        h ^= h >> 13
        k = h >> 8
        out[i] = np.float32(2.0 * k / 16777216.0 - 1.0)
    return out


def gen(stream, n, scale):
    return gen_unit(stream, n) * np.float32(scale)


class Net(torch.nn.Module):
    def __init__(self, hwc, convs, hidden, actions, dueling):
        super().__init__()
        h, w, c = hwc
        self.convs = torch.nn.ModuleList()
        for f, k, s in convs:
            self.convs.append(torch.nn.Conv2d(c, f, k, stride=s))
            c, h, w = f, (h - k) // s + 1, (w - k) // s + 1
        width = c * h * w
        self.hidden = torch.nn.ModuleList()
        for out in hidden:
            self.hidden.append(torch.nn.Linear(width, out))
            width = out
        self.actions, self.dueling = actions, dueling
        self.head = torch.nn.Linear(width, actions + 1 if dueling else actions)

    def forward(self, obs):
        x = obs.permute(0, 3, 1, 2)
        for conv in self.convs:
            x = torch.relu(conv(x))
        x = x.flatten(1)
        for lin in self.hidden:
            x = torch.relu(lin(x))
        h = self.head(x)
        if not self.dueling:
            return h
        adv, v = h[:, :self.actions], h[:, self.actions:]
        return v + adv - adv.mean(dim=1, keepdim=True)

    def layers(self):
        """(module, is_linear) in gorila's layout order."""
        return [(m, False) for m in self.convs] + [(m, True) for m in self.hidden] + [(self.head, True)]


def fmt(values):
    return " ".join("%.9g" % float(v) for v in values)


def record(out, name, values, ints=False):
    values = list(values)
    body = " ".join(str(int(v)) for v in values) if ints else fmt(values)
    out.append("%s %d %s" % (name, len(values), body))


def qnet_case(path, hwc, convs, hidden, actions, dueling, batch):
    net = Net(hwc, convs, hidden, actions, dueling)
    scales, flat_params = [], []
    stream = 1
    with torch.no_grad():
        for mod, linear in net.layers():
            fan_in = mod.weight[0].numel()
            scale = np.float32(1.0 / np.sqrt(fan_in))
            for p, is_weight in ((mod.weight, True), (mod.bias, False)):
                shape = tuple(p.shape[::-1]) if (linear and is_weight) else tuple(p.shape)
                vals = gen(stream, int(np.prod(shape)), scale)
                t = torch.from_numpy(vals.reshape(shape))
                p.copy_(t.t() if (linear and is_weight) else t)
                scales.append(scale)
                flat_params.append(vals)
                stream += 1
    obs = torch.from_numpy(gen(100, batch * hwc[0] * hwc[1] * hwc[2], 1.0).reshape(batch, *hwc))
    dq = torch.from_numpy(gen(101, batch * actions, 1.0).reshape(batch, actions))
    q = net(obs)
    (q * dq).sum().backward()
    grads = []
    for mod, linear in net.layers():
        grads.append((mod.weight.grad.t() if linear else mod.weight.grad).contiguous().numpy().ravel())
        grads.append(mod.bias.grad.numpy().ravel())
    out = ["# gorila conv Q-network against PyTorch %s: scripts/torch_reference.py, do not edit" % torch.__version__]
    record(out, "in_hwc", hwc, ints=True)
    record(out, "conv", [v for c in convs for v in c], ints=True)
    record(out, "hidden", hidden, ints=True)
    record(out, "actions", [actions], ints=True)
    record(out, "dueling", [1 if dueling else 0], ints=True)
    record(out, "batch", [batch], ints=True)
    record(out, "scales", scales)
    record(out, "check", np.concatenate(flat_params)[:4])
    record(out, "q", q.detach().numpy().ravel())
    record(out, "grad", np.concatenate(grads))
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


N_RMS = 16
STEPS = 6
GRAD_SCALES = (1.0, 0.1, 1e-3, 1e-5)
# name, torch.optim.RMSprop arguments (dqn.py's first)
CASES = (
    ("dqn_py", dict(lr=0.00025, alpha=0.95, centered=True, eps=0.01)),
    ("centered_lr", dict(lr=0.01, alpha=0.95, centered=True, eps=0.01)),
    ("plain", dict(lr=0.01, alpha=0.9, centered=False, eps=0.01)),
    ("momentum", dict(lr=0.01, alpha=0.95, centered=True, eps=0.01, momentum=0.9)),
)


def rmsprop_cases(path):
    scales = np.array([GRAD_SCALES[i % 4] for i in range(N_RMS)], dtype=np.float32)
    out = ["# torch.optim.RMSprop (PyTorch %s): scripts/torch_reference.py, do not edit" % torch.__version__]
    record(out, "steps", [STEPS], ints=True)
    record(out, "params0", gen(200, N_RMS, 1.0))
    grads = [gen(200 + t, N_RMS, 1.0) * scales for t in range(1, STEPS + 1)]
    for t, g in enumerate(grads, 1):
        record(out, "grad.%d" % t, g)
    for name, args in CASES:
        p = torch.nn.Parameter(torch.from_numpy(gen(200, N_RMS, 1.0)))
        opt = torch.optim.RMSprop([p], **args)
        record(out, "case." + name, [args["lr"], args["alpha"], args["eps"], 1 if args["centered"] else 0,
                                     args.get("momentum", 0.0)])
        for t, g in enumerate(grads, 1):
            p.grad = torch.from_numpy(g.copy())
            opt.step()
            record(out, "%s.after.%d" % (name, t), p.detach().numpy())
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True, help="directory for the fixture files")
    a = ap.parse_args()
    torch.set_num_threads(1)
    os.makedirs(a.out, exist_ok=True)
    qnet_case(os.path.join(a.out, "qnet_small.txt"), (6, 6, 3), ((4, 3, 1), (5, 2, 2)), (8,), 3, True, 3)
    qnet_case(os.path.join(a.out, "qnet_minatar.txt"), (10, 10, 10), ((16, 3, 1),), (4,), 6, False, 2)
    rmsprop_cases(os.path.join(a.out, "rmsprop.txt"))


if __name__ == "__main__":
    main()
