#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""minatar_dqn_reference.py --minatar DIR --game GAME --frames N --out PREFIX

Runs MinAtar's own DQN (examples/dqn.py of kenjyoung/MinAtar, release
1.0.15, commit 4241f24) unchanged from a checkout DIR of the reference, so
that gorila's local trainer can be set beside it on the same machine. The
reference is not part of this project (GPL-3.0-or-later); make the checkout
as docs/RESULTS.md says:

  mkdir -p build/minatar-ref
  git -C MINATAR_CHECKOUT archive 4241f24 | tar x -C build/minatar-ref

What this wrapper changes, and nothing else:
- NUM_FRAMES (a module constant of dqn.py, 5,000,000) is set to N;
- PyTorch runs on one thread (torch.set_num_threads(1)), and so do
  numpy's OpenBLAS and OpenMP (OMP_NUM_THREADS, OPENBLAS_NUM_THREADS and
  MKL_NUM_THREADS set to 1 before the imports: without them the process
  kept both cores busy);
- minatar.Environment.act is wrapped to write each finished training
  episode to PREFIX.episodes.csv (frame at its end, return) as it ends,
  and the wall time every 10,000 frames to PREFIX.progress.csv, so that a
  run stopped early still leaves its curve. dqn.py writes the same returns
  to PREFIX_data_and_weights at the end of the run (torch.save);
- dqn.py's own --save is always on: every 1,000 episodes it writes
  PREFIX_checkpoint (network, optimizer, replay buffer, frame). When that
  file exists, the wrapper continues the run from it with dqn.py's own
  --loadfile and appends to the CSVs (episodes logged after the
  checkpoint are dropped: dqn.py plays them again; PREFIX.meta.json's
  resumed_at_frames lists every frame the run was continued from). Writing the checkpoint
  (about 300 MB with a full buffer) takes seconds: time per frame is
  measured on a separate short run with --no-save
  (scripts/bench-minatar-dqn).

dqn.py takes no seed: its network initialisation, replay sampling and
exploration use the unseeded global generators of torch, random and numpy,
and Environment() draws its own seed. Two runs differ; PREFIX.meta.json
records that, with the versions and the command. Needs Debian's
/usr/bin/python3 with python3-torch and python3-numpy.
"""
import argparse
import json
import os
import platform
import sys
import time


def open_log(path, header, start):
    """The CSV at path for appending, keeping only rows at frames <= start
    (a fresh file with its header when start is 0)."""
    rows = []
    if start and os.path.exists(path):
        with open(path) as f:
            rows = [r for r in f.read().splitlines()[1:] if int(r.split(",")[0]) <= start]
    f = open(path, "w")
    f.write(header + "\n" + "".join(r + "\n" for r in rows))
    f.flush()
    return f


def last_wall(path, start):
    """The wall seconds logged at the last progress row at or before start."""
    wall = 0.0
    if os.path.exists(path):
        with open(path) as f:
            for r in f.read().splitlines()[1:]:
                frame, w = r.split(",")
                if int(frame) <= start:
                    wall = float(w)
    return wall


def resumes(meta_path, start):
    """The frames of every resume of this run so far, this one (start) last:
    the list the previous segment's meta.json kept, or its single
    resumed_at_frame; [] for a run from frame 0."""
    if not start:
        return []
    try:
        with open(meta_path) as f:
            old = json.load(f)
        done = old.get("resumed_at_frames", [old.get("resumed_at_frame", 0)])
        done = [int(x) for x in done if x]
    except (OSError, ValueError, TypeError, AttributeError):
        done = []
    return done + [start]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--minatar", required=True, help="checkout of kenjyoung/MinAtar at 4241f24")
    ap.add_argument("--game", required=True, help="breakout, freeway, asterix, seaquest, space_invaders")
    ap.add_argument("--frames", type=int, required=True, help="frames to train (dqn.py's NUM_FRAMES)")
    ap.add_argument("--out", required=True, help="output prefix")
    ap.add_argument("--no-save", action="store_true",
                    help="no PREFIX_checkpoint (for timing: writing it takes seconds)")
    a = ap.parse_args()
    if a.frames <= 0:
        sys.exit("minatar_dqn_reference.py: --frames must be positive")
    dqn_path = os.path.join(a.minatar, "examples", "dqn.py")
    if not os.path.isfile(dqn_path):
        sys.exit("minatar_dqn_reference.py: %s not found (make the checkout as --help says)" % dqn_path)
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = "1"  # before the imports: numpy's OpenBLAS threads too
    try:
        import torch
        import numpy
    except ImportError as e:
        sys.exit("minatar_dqn_reference.py: %s; run it with Debian's /usr/bin/python3 "
                 "(python3-torch, python3-numpy)" % e)
    sys.path.insert(0, os.path.join(a.minatar, "examples"))
    sys.path.insert(0, a.minatar)
    torch.set_num_threads(1)
    import minatar
    import dqn

    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    ckpt = a.out + "_checkpoint"
    start, wall0 = 0, 0.0
    if os.path.exists(ckpt) and not a.no_save:
        start = int(torch.load(ckpt)["frame"])
        wall0 = last_wall(a.out + ".progress.csv", start)
    episodes = open_log(a.out + ".episodes.csv", "frame,return", start)
    progress = open_log(a.out + ".progress.csv", "frame,wall_seconds", start)
    state = {"frame": start, "ret": 0.0, "t0": time.perf_counter() - wall0}
    act = minatar.Environment.act

    def logged_act(self, action):
        r, done = act(self, action)
        state["frame"] += 1
        state["ret"] += r
        if done:
            episodes.write("%d,%g\n" % (state["frame"], state["ret"]))
            episodes.flush()
            state["ret"] = 0.0
        if state["frame"] % 10000 == 0:
            progress.write("%d,%.3f\n" % (state["frame"], time.perf_counter() - state["t0"]))
            progress.flush()
        return r, done

    minatar.Environment.act = logged_act
    dqn.NUM_FRAMES = a.frames
    meta = {
        "reference": "kenjyoung/MinAtar examples/dqn.py (release 1.0.15, commit 4241f24), unchanged",
        "changed_by_wrapper": ["NUM_FRAMES", "torch.set_num_threads(1)", "Environment.act logged"],
        "seeded": False,
        "resumed_at_frame": start,
        "resumed_at_frames": resumes(a.out + ".meta.json", start),
        "game": a.game,
        "frames": a.frames,
        "torch": torch.__version__,
        "numpy": numpy.__version__,
        "python": platform.python_version(),
        "torch_threads": torch.get_num_threads(),
        "command": " ".join([sys.executable] + sys.argv),
    }
    with open(a.out + ".meta.json", "w") as f:
        json.dump(meta, f, indent=1)
    sys.argv = ["dqn.py", "--game", a.game, "--output", a.out, "--verbose"] + ([] if a.no_save else ["--save"])
    if start:
        sys.argv += ["--loadfile", ckpt]
    dqn.main()
    meta["wall_seconds"] = time.perf_counter() - state["t0"]
    meta["frames_done"] = state["frame"]
    with open(a.out + ".meta.json", "w") as f:
        json.dump(meta, f, indent=1)


if __name__ == "__main__":
    main()
