#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Read TensorBoard event files with TensorBoard's own protos; check them.

    read_events.py PB_DIR gorila RUN_DIR [--tags T,...] [--start STEP]
    read_events.py PB_DIR tensorflow FILE
    read_events.py PB_DIR tfevents-js FILE
    read_events.py PB_DIR dump FILE...

PB_DIR holds the Python modules protoc generated from tests/tb/proto
(protoc -I tests/tb/proto --python_out=PB_DIR ...); nothing of gorila's
is used to read. Each check prints one line, PASS or FAIL, a tab and what
was checked (tests/cli/tensorboard.sh turns them into TAP).

Every record is read as TFRecord frames it: uint64 length (little-endian),
uint32 masked CRC-32C of those 8 bytes, the data, uint32 masked CRC-32C of
the data, the CRC computed by crc32c() below, written here from the
definition (reflected polynomial 0x82F63B78) and checked against the
published check value before anything else.

gorila: every file in RUN_DIR/tb, oldest first; the first event of each is
file_version "brain.Event:2"; then summaries of simple_value scalars
(and, with --start, a SessionLog START at that step right after the
version of the last file: a resumed run); steps never go back within a
file; every tag of --tags appears; and the run's CSVs agree: one event
with train/epsilon per metrics.csv row, at its env steps, with its epsilon
and loss; one train/episode_return per episodes.csv row; one
eval/mean_return per eval.csv row.

tensorflow: the file TensorFlow 2 wrote (tests/tb/README.md): 100 events
of my_metric, steps 0..99, each a float tensor of value 0.5 * step.
tfevents-js: its 2-event test asset: tag "hello", simple_value 1, step 0.

dump: no checks; the scalars of the files as TensorBoard's protos decode
them, one CSV line each, wall_time,step,tag,value (repr of the doubles; a
simple_value, or a tensor's one float as check_tensorflow reads it), for
tests/cli/tbdump.sh to hold scripts/tb-dump's output against.
"""
import csv
import glob
import math
import os
import struct
import sys


def crc32c(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def masked(crc):
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


results = []


def report(ok, what):
    results.append(ok)
    print("%s\t%s" % ("PASS" if ok else "FAIL", what))
    return ok


def records(path):
    """The data of every record of path; the problems found on the way."""
    data = open(path, "rb").read()
    out, bad, at = [], [], 0
    while at < len(data):
        if len(data) - at < 12:
            bad.append("%d bytes at offset %d: a torn header" % (len(data) - at, at))
            break
        head = data[at:at + 8]
        (n,) = struct.unpack("<Q", head)
        (hcrc,) = struct.unpack("<I", data[at + 8:at + 12])
        if hcrc != masked(crc32c(head)):
            bad.append("record %d: length CRC %08x, computed %08x" % (len(out), hcrc, masked(crc32c(head))))
            break
        if len(data) - at - 12 < n + 4:
            bad.append("record %d: %d bytes of data and CRC announced, %d left" % (len(out), n + 4,
                                                                                   len(data) - at - 12))
            break
        body = data[at + 12:at + 12 + n]
        (dcrc,) = struct.unpack("<I", data[at + 12 + n:at + 16 + n])
        if dcrc != masked(crc32c(body)):
            bad.append("record %d: data CRC %08x, computed %08x" % (len(out), dcrc, masked(crc32c(body))))
        out.append(body)
        at += 16 + n
    return out, bad


def events(path, event_pb2, name):
    """Parse every record of path as an Event; checks framing and parsing."""
    recs, bad = records(path)
    report(not bad and len(recs) > 0, "%s: %d records, every length and data CRC right%s"
           % (name, len(recs), "" if not bad else ": " + "; ".join(bad[:3])))
    evs, errors = [], []
    for i, r in enumerate(recs):
        e = event_pb2.Event()
        try:
            e.ParseFromString(r)
        except Exception as x:  # noqa: BLE001 - any decode failure is the finding
            errors.append("record %d: %s" % (i, x))
            continue
        evs.append(e)
    report(not errors, "%s: every record parses as a tensorboard.Event%s"
           % (name, "" if not errors else ": " + "; ".join(errors[:3])))
    if evs:
        e = evs[0]
        report(e.WhichOneof("what") == "file_version" and e.file_version == "brain.Event:2" and e.wall_time > 0,
               "%s: first event is file_version brain.Event:2 (got %r, wall_time %.3f)"
               % (name, e.file_version, e.wall_time))
    return evs


def scalars(e):
    return {v.tag: v.simple_value for v in e.summary.value}


def close(a, b):
    """a (a float32 from an event, 24 bits) against b (a CSV cell printed
    to 6 significant digits, so within 5e-6 of its value relative)."""
    return math.isclose(a, b, rel_tol=1e-5, abs_tol=1e-6)


def check_gorila(run, event_pb2, tags, start):
    files = sorted(glob.glob(os.path.join(run, "tb", "events.out.tfevents.*")))
    report(len(files) > 0, "gorila: %d events file(s) in %s/tb" % (len(files), run))
    rows = []  # (step, {tag: value}) over all files, in file order
    for k, path in enumerate(files):
        name = "gorila " + os.path.basename(path)
        evs = events(path, event_pb2, name)
        body = evs[1:]
        if start is not None and k == len(files) - 1:
            e = body[0] if body else None
            report(e is not None and e.WhichOneof("what") == "session_log"
                   and e.session_log.status == event_pb2.SessionLog.START and e.step == start,
                   "%s: a resumed segment begins with SessionLog START at step %d (got %s)"
                   % (name, start, None if e is None else "%s step %d" % (e.WhichOneof("what"), e.step)))
            body = body[1:]
        kinds = {e.WhichOneof("what") for e in body}
        report(kinds == {"summary"}, "%s: every later event is a summary (%s)" % (name, sorted(kinds)))
        simple = all(v.WhichOneof("value") == "simple_value" for e in body for v in e.summary.value)
        report(simple and all(len(e.summary.value) > 0 for e in body),
               "%s: every value is a simple_value scalar, none empty" % name)
        steps = [e.step for e in body]
        report(all(a <= b for a, b in zip(steps, steps[1:])), "%s: steps never go back (%d events, steps %s..%s)"
               % (name, len(body), steps[0] if steps else "-", steps[-1] if steps else "-"))
        walls = [e.wall_time for e in evs]
        report(all(a <= b for a, b in zip(walls, walls[1:])), "%s: wall_time never goes back" % name)
        rows += [(e.step, scalars(e)) for e in body]
    seen = set()
    for _, s in rows:
        seen.update(s)
    missing = [t for t in tags if t not in seen]
    report(not missing, "gorila: tags %s all appear (seen: %s)" % (",".join(tags), ",".join(sorted(seen))))
    if start is not None:
        return  # the CSVs of a resumed run hold both segments; compared on fresh runs
    compare_csv(run, rows)


def compare_csv(run, rows):
    metrics = list(csv.DictReader(open(os.path.join(run, "metrics.csv"))))
    got = [(st, s) for st, s in rows if "train/epsilon" in s]
    bad = []
    if len(got) != len(metrics):
        bad.append("%d events with train/epsilon, %d rows" % (len(got), len(metrics)))
    for (st, s), m in zip(got, metrics):
        if st != int(m["env_steps"]) or not close(s["train/epsilon"], float(m["epsilon"])):
            bad.append("row at %s steps, eps %s: event at %d, eps %r" % (m["env_steps"], m["epsilon"], st,
                                                                         s["train/epsilon"]))
        if (m["loss"] == "") != ("train/loss" not in s) or (m["loss"] and not close(s["train/loss"], float(m["loss"]))):
            bad.append("row at %s steps: loss %r, event %r" % (m["env_steps"], m["loss"], s.get("train/loss")))
        if (m["mean_train_return"] == "") != ("train/mean_return" not in s) or (
                m["mean_train_return"] and not close(s["train/mean_return"], float(m["mean_train_return"]))):
            bad.append("row at %s steps: mean_train_return %r, event %r"
                       % (m["env_steps"], m["mean_train_return"], s.get("train/mean_return")))
    report(not bad, "gorila: one event per metrics.csv row (%d), at its env steps, with its epsilon, loss and "
           "mean_train_return%s" % (len(metrics), "" if not bad else ": " + "; ".join(bad[:3])))
    for csvname, col, tag in (("episodes.csv", "return", "train/episode_return"),
                              ("eval.csv", "mean_return", "eval/mean_return")):
        want = [(int(r["env_steps"]), float(r[col])) for r in csv.DictReader(open(os.path.join(run, csvname)))]
        have = [(st, s[tag]) for st, s in rows if tag in s]
        same = len(want) == len(have) and all(a == c and close(d, b) for (a, b), (c, d) in zip(want, have))
        report(same, "gorila: one %s event per %s row (%d rows, %d events), same env steps and values"
               % (tag, csvname, len(want), len(have)))


def check_tensorflow(path, event_pb2):
    name = "tensorflow " + os.path.basename(path)
    evs = events(path, event_pb2, name)[1:]
    got = []
    for e in evs:
        for v in e.summary.value:
            t = v.tensor
            # A TF2 scalar: a float tensor of shape [], its 4 bytes in tensor_content.
            x = struct.unpack("<f", t.tensor_content)[0] if t.tensor_content else (t.float_val or [None])[0]
            got.append((e.step, v.tag, v.metadata.plugin_data.plugin_name, x))
    want = [(s, "my_metric", "scalars", 0.5 * s) for s in range(100)]
    report(got == want, "%s: 100 scalars my_metric (plugin scalars), steps 0..99, value 0.5 * step (first %s)"
           % (name, got[:2]))


def dump(paths, event_pb2):
    for path in paths:
        recs, bad = records(path)
        if bad:
            sys.exit("%s: %s" % (path, "; ".join(bad)))
        for r in recs:
            e = event_pb2.Event()
            e.ParseFromString(r)
            for v in e.summary.value:
                if v.WhichOneof("value") == "simple_value":
                    x = v.simple_value
                else:
                    t = v.tensor
                    x = struct.unpack("<f", t.tensor_content)[0] if t.tensor_content else (t.float_val or [None])[0]
                print("%r,%d,%s,%r" % (e.wall_time, e.step, v.tag, x))


def check_tfevents_js(path, event_pb2):
    name = "tfevents-js " + os.path.basename(path)
    evs = events(path, event_pb2, name)[1:]
    got = [(e.step, [(v.tag, v.simple_value) for v in e.summary.value]) for e in evs]
    report(got == [(0, [("hello", 1.0)])], "%s: one summary, hello = 1.0 at step 0 (got %s)" % (name, got))


def main():
    args = sys.argv[1:]
    if len(args) < 3:
        sys.exit(__doc__)
    pb_dir, kind, target = args[:3]
    opts = dict(zip(args[3::2], args[4::2]))
    sys.path.insert(0, pb_dir)
    from tensorboard.compat.proto import event_pb2  # generated into pb_dir by protoc

    if kind == "dump":
        dump(args[2:], event_pb2)
        return
    report(crc32c(b"123456789") == 0xE3069283, "the reader's CRC-32C gives the published check value E3069283")
    if kind == "gorila":
        tags = [t for t in opts.get("--tags", "").split(",") if t]
        start = int(opts["--start"]) if "--start" in opts else None
        check_gorila(target, event_pb2, tags, start)
    elif kind == "tensorflow":
        check_tensorflow(target, event_pb2)
    elif kind == "tfevents-js":
        check_tfevents_js(target, event_pb2)
    else:
        sys.exit("unknown kind %r" % kind)
    sys.exit(0 if all(results) else 1)


if __name__ == "__main__":
    main()
