#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""check_trace.py TRACE_JSON [options]: check a gorila trace.json.

Prints one line per check, "PASS<TAB>what" or "FAIL<TAB>what", and "#..."
diagnostics; tests/mpi/trace.sh turns them into TAP. Standard library only.

Layout: --actors A --replay S --learners L --ps P (ranks in gorila's fixed
order: coordinator, actors, replay shards, learners, parameter servers), or
--local for the local trainer's single track. --summary SUMMARY_JSON adds
the checks that the spans agree with the run's counters (only meaningful
when nothing was dropped); --cap N checks the bound of N events per track.
"""
import argparse
import json

KINDS = {
    "env batch", "send experience", "wait params", "wait sample", "gradient", "send gradient",
    "allreduce", "ring reduce-scatter", "ring allgather", "apply", "serve params", "insert",
    "sample", "evaluation", "checkpoint", "wait credit",
}


def result(ok, what, detail=""):
    print(("PASS" if ok else "FAIL") + "\t" + what + (f" ({detail})" if detail and not ok else ""))
    return ok


def layout(a):
    if a.local:
        return [("local trainer", None)]
    roles = [("coordinator", 1), ("actor", a.actors), ("replay", a.replay), ("learner", a.learners), ("ps", a.ps)]
    return [(role, i) for role, n in roles for i in range(n)]


def nests(spans):
    """Spans (start_ns, end_ns) of one track nest or are disjoint: sorted by
    start (the longer first), each either starts at or after the end of
    every open span or ends within the innermost one."""
    stack = []
    for s, e in sorted(spans, key=lambda x: (x[0], -x[1])):
        while stack and stack[-1] <= s:
            stack.pop()
        if stack and e > stack[-1]:
            return False, f"span [{s}, {e}] ns crosses the end of its parent at {stack[-1]} ns"
        stack.append(e)
    return True, ""


def main():
    p = argparse.ArgumentParser()
    p.add_argument("trace")
    p.add_argument("--actors", type=int, default=0)
    p.add_argument("--replay", type=int, default=0)
    p.add_argument("--learners", type=int, default=0)
    p.add_argument("--ps", type=int, default=0)
    p.add_argument("--local", action="store_true")
    p.add_argument("--envs", type=int, default=1, help="actor.envs (env batch = envs env steps)")
    p.add_argument("--summary")
    p.add_argument("--cap", type=int)
    a = p.parse_args()

    try:
        with open(a.trace) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        result(False, "trace.json is valid JSON", str(e))
        return
    result(True, "trace.json is valid JSON")
    ev = doc.get("traceEvents") if isinstance(doc, dict) else None
    other = doc.get("otherData", {}) if isinstance(doc, dict) else {}
    if not result(isinstance(ev, list) and doc.get("displayTimeUnit") == "ms" and isinstance(other, dict),
                  "JSON object format: traceEvents list, displayTimeUnit ms, otherData"):
        return

    ranks = layout(a)
    names, sort_index, tracks = {}, {}, {tid: [] for tid in range(len(ranks))}
    bad_events = []
    for e in ev:
        if e.get("ph") == "M":
            if e.get("name") == "thread_name":
                names[e["tid"]] = e["args"]["name"]
            elif e.get("name") == "thread_sort_index":
                sort_index[e["tid"]] = e["args"]["sort_index"]
        elif e.get("ph") == "X":
            ts, dur = e.get("ts"), e.get("dur")
            if (e.get("name") not in KINDS or e.get("pid") != 0 or e.get("tid") not in tracks
                    or not isinstance(ts, (int, float)) or not isinstance(dur, (int, float)) or ts < 0 or dur < 0):
                bad_events.append(e)
            else:
                tracks[e["tid"]].append(e)
        else:
            bad_events.append(e)
    result(not bad_events, "every event is a complete span of a known kind on a known track, ts >= 0, dur >= 0",
           f"{len(bad_events)} not, first {bad_events[:1]}")

    want = {tid: (role if idx is None else f"rank {tid} {role} {idx}") for tid, (role, idx) in enumerate(ranks)}
    wrong = [f"{tid}: {names.get(tid)!r} != {n!r}" for tid, n in want.items() if names.get(tid) != n]
    result(not wrong and len(names) == len(ranks), f"each of the {len(ranks)} tracks is named by rank, role and index",
           "; ".join(wrong) or f"{len(names)} named")
    result(all(sort_index.get(tid) == tid for tid in want), "tracks sort by rank (thread_sort_index)")

    def kinds(tid):
        return {e["name"] for e in tracks[tid]}

    def count(tid, kind):
        return sum(e["name"] == kind for e in tracks[tid])

    def arg_sum(tid, kind):
        return sum(e["args"]["arg"] for e in tracks[tid] if e["name"] == kind)

    empty = [want[t] for t, (role, _) in enumerate(ranks) if not tracks[t]]
    result(not empty, "every rank has events", ", ".join(empty))
    # With a small --cap a track keeps only its newest events, which need not
    # include every kind (a replay shard's last 64 may all be samples).
    need = {} if a.cap is not None else {
        "coordinator": ["evaluation", "checkpoint"], "actor": ["env batch", "send experience"],
        "replay": ["insert", "sample"], "ps": ["apply", "serve params", "checkpoint"],
        "local trainer": ["env batch", "gradient", "apply", "evaluation", "checkpoint"]}
    for role, kinds_needed in need.items():
        tids = [t for t, (r, _) in enumerate(ranks) if r == role]
        if not tids:
            continue
        miss = [f"{want[t]} lacks {k}" for t in tids for k in kinds_needed if k not in kinds(t)]
        result(not miss, f"{role} tracks have {', '.join(kinds_needed)} spans", "; ".join(miss))
    learners = [t for t, (r, _) in enumerate(ranks) if r == "learner"]
    if learners and a.cap is None:
        ring = ["ring reduce-scatter", "ring allgather"] if len(learners) > 1 else []
        kinds_needed = (["gradient", "allreduce", "apply"] + ring if a.ps == 0
                        else ["gradient", "send gradient", "wait params"])
        miss = [f"{want[t]} lacks {k}" for t in learners for k in kinds_needed if k not in kinds(t)]
        result(not miss, f"learner tracks have {', '.join(kinds_needed)} spans", "; ".join(miss))
        if a.ps == 0:
            t0 = learners[0]
            result("checkpoint" in kinds(t0) and "serve params" in kinds(t0),
                   "learner 0 (the only parameter source) has checkpoint and serve params spans",
                   ", ".join(sorted(kinds(t0))))

    crossed = []
    for tid, es in tracks.items():
        spans = []
        for e in es:
            s = round(e["ts"] * 1000)
            spans.append((s, s + round(e["dur"] * 1000)))
        ok, why = nests(spans)
        if not ok:
            crossed.append(f"{want[tid]}: {why}")
    result(not crossed, "spans on every track nest or are disjoint", "; ".join(crossed))

    dropped = other.get("dropped_events", {})
    result(all(str(t) in dropped for t in want), "otherData.dropped_events has every track", str(dropped))
    result(other.get("missing_tracks") == [], "no track is missing", str(other.get("missing_tracks")))
    print("# events per track: " + ", ".join(f"{t}:{len(es)}" for t, es in tracks.items())
          + "; dropped: " + str(dropped))

    if a.cap is not None:
        over = [f"{want[t]}: {len(es)}" for t, es in tracks.items() if len(es) > a.cap]
        result(not over and other.get("events_per_track") == a.cap,
               f"every track holds at most {a.cap} events (logging.trace_events)", "; ".join(over))
        actors = [t for t, (r, _) in enumerate(ranks) if r in ("actor", "local trainer")]
        none = [want[t] for t in actors if not dropped.get(str(t), 0) > 0]
        result(not none, "the actors' overflow is reported as dropped events", ", ".join(none))

    if a.summary:
        with open(a.summary) as f:
            roles = json.load(f)["roles"]
        idx = {role: 0 for role in ("actor", "replay", "learner", "ps")}
        diffs = []
        for t, (role, i) in enumerate(ranks):
            if role not in idx:
                continue
            r = roles[role][i]
            sent = r.get("msgs_sent", {})
            pairs = []
            if role == "actor":
                pairs = [("env batch", r["env_steps"] // a.envs), ("send experience", sent.get("experience", 0))]
            elif role == "replay":
                # Chunks that arrive after STOP are received and discarded,
                # not inserted: compare transitions, not messages.
                if arg_sum(t, "insert") != r["inserted"]:
                    diffs.append(f"{want[t]}: insert spans hold {arg_sum(t, 'insert')} transitions, "
                                 f"counters say {r['inserted']} inserted")
                pairs = [("sample", sent.get("sample", 0))]
            elif role == "ps":
                pairs = [("apply", r["updates"]), ("serve params", sent.get("params", 0))]
            elif role == "learner":
                pairs = [("gradient", r["gradients"])]
                if a.ps == 0 and i == 0:
                    pairs.append(("serve params", sent.get("params", 0)))
            for kind, n in pairs:
                if count(t, kind) != n:
                    diffs.append(f"{want[t]}: {count(t, kind)} {kind} spans, counters say {n}")
        result(not diffs, "span counts equal the run's counters (every event of every rank arrived)",
               "; ".join(diffs))
        multi = [f"{want[t]} ({len(tracks[t])} events in {roles[r][i]['msgs_sent'].get('trace')} messages)"
                 for t, (r, i) in enumerate(ranks) if r in roles and roles[r][i]["msgs_sent"].get("trace", 0) > 1]
        print("# tracks sent in several TRACE messages: " + (", ".join(multi) or "none"))


if __name__ == "__main__":
    try:
        main()
    except Exception as e:  # a crash must count as a failure, not as silence
        result(False, "check_trace.py ran", f"{type(e).__name__}: {e}")
