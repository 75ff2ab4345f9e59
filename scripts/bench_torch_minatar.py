#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""bench_torch_minatar.py [--seconds S] [--json]: PyTorch's updates/s of the
DQN update that `gorila bench nn --minatar` times, on the same network,
batch and update, for comparing the two in one session.

The network is MinAtar's dqn.py net (10x10xC planes as (C, H, W), conv 16
3x3 stride 1, ReLU, 1024 -> 128 -> ReLU -> 6 actions), C = 4 and 10, batch
32. One update, as gorila's bench: target forward on s', online forward on
s (with gradients) and s' (without: double DQN's argmax), Huber loss
(delta 1) on the taken actions, backward, one Adam step (lr 1e-4) over all
parameters. Observations are uniform in [-1, 1], rewards 1, a discount of
0 for one row in ten. Torch runs on one thread (torch.set_num_threads(1));
S seconds per case (default 1) in 5 windows after a warm-up of S/10, the
best window reported, as gorila's bench does. Needs PyTorch: run it with
Debian's /usr/bin/python3 (python3-torch). Nothing passes or fails on time.
"""
import argparse
import json
import sys
import time

try:
    import torch
except ImportError:
    sys.exit("bench_torch_minatar.py: needs PyTorch (Debian: apt-get install "
             "python3-torch; run with /usr/bin/python3)")

WINDOWS = 5


def build(c):
    return torch.nn.Sequential(
        torch.nn.Conv2d(c, 16, 3, 1), torch.nn.ReLU(), torch.nn.Flatten(),
        torch.nn.Linear(1024, 128), torch.nn.ReLU(), torch.nn.Linear(128, 6))


def case(c, batch, seconds):
    g = torch.Generator().manual_seed(1)
    online = build(c)
    target = build(c)
    target.load_state_dict(online.state_dict())
    opt = torch.optim.Adam(online.parameters(), lr=1e-4)
    s = torch.rand(batch, c, 10, 10, generator=g) * 2 - 1
    s2 = torch.rand(batch, c, 10, 10, generator=g) * 2 - 1
    a = torch.randint(0, 6, (batch, 1), generator=g)
    r = torch.ones(batch)
    disc = torch.where(torch.randint(0, 10, (batch,), generator=g) == 0,
                       0.0, 0.99)

    def update():
        with torch.no_grad():
            best = online(s2).argmax(1, keepdim=True)
            y = r + disc * target(s2).gather(1, best).squeeze(1)
        q = online(s).gather(1, a).squeeze(1)
        loss = torch.nn.functional.smooth_l1_loss(q, y)
        opt.zero_grad()
        loss.backward()
        opt.step()

    end = time.perf_counter() + seconds / 10
    while time.perf_counter() < end:
        update()
    best = 0.0
    for _ in range(WINDOWS):
        n, t0 = 0, time.perf_counter()
        while True:
            update()
            n += 1
            t = time.perf_counter() - t0
            if t >= seconds / WINDOWS:
                break
        best = max(best, n / t)
    return best


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--seconds", type=float, default=1.0)
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    if not 0 < args.seconds <= 3600:
        p.error("--seconds: expected a number in (0, 3600]")
    torch.set_num_threads(1)
    for c in (4, 10):
        ups = case(c, 32, args.seconds)
        if args.json:
            print(json.dumps({"bench": "torch_minatar", "planes": c,
                              "batch": 32, "updates_per_second": ups,
                              "torch": torch.__version__, "threads": 1}))
        else:
            print("minatar-C%d batch 32: %.1f updates/s (PyTorch %s, 1 "
                  "thread)" % (c, ups, torch.__version__))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
