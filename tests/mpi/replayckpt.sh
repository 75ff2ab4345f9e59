# SPDX-License-Identifier: MIT
# Replay contents in distributed checkpoints (checkpoint.save_replay), with
# real mpirun jobs:
#  - a prioritized job killed mid-run has one replay file per shard in its
#    checkpoints, listed in the MANIFEST; resumed with the same shard count,
#    every shard starts with exactly the saved transitions (and their
#    priorities), learning goes on at once and the job completes;
#  - resumed with another shard count, the saved transitions are dealt out
#    (the total kept, up to the capacity; a smaller capacity drops the oldest
#    and says how many);
#  - a damaged replay file makes the resume fall back to the previous
#    checkpoint with a warning; so does a FIFO in place of any part of a
#    checkpoint (never a hang), and a replay row out of range in a file whose
#    sums were all recomputed (exit 4 when every checkpoint has one), for the
#    replay files and for the local trainer's replay section alike;
#  - uniform replay saves and restores its shard too;
#  - a checkpoint without replay files resumes with empty shards, and one
#    with them resumed with save_replay off says it does not restore them;
#  - the stop deadline covers a replay shard that never answers the final
#    CKPT_REQ (SIGSTOP): exit status 6, naming it.
# Uses pgrep on run names (rk-*): never run two copies at once.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../mpilib.sh"
cd "$TEST_ROOT" || exit 1

PRIO=(--set replay.kind=prioritized --set replay.initial_priority=max --set checkpoint.save_replay=true)

latest_dir() { echo "$RUN/checkpoints/$(cat "$RUN/checkpoints/latest")"; }
# A committed checkpoint with replay files, numbered at least $1.
have_replay_ckpt() {
    [ -s "$RUN/checkpoints/latest" ] || return 1
    local d n
    d=$(latest_dir)
    n=$(sed -n 's/^seq //p' "$d/MANIFEST" 2>/dev/null)
    [ -f "$d/replay-0.ckpt" ] && [ "${n:-0}" -ge "$1" ]
}
# replay_total [DIR]: transitions the replay files of a checkpoint hold
# (the MANIFEST's "replay s bytes N crc32c X transitions T" lines, summed).
replay_total() {
    awk '$1 == "replay" && $7 == "transitions" { s += $8 } END { print s + 0 }' "${1:-$(latest_dir)}/MANIFEST"
}
# restored_sum: the transitions every replay shard says it restored ($err).
restored_sum() { grep -o 'restored [0-9]* transitions' <<<"$err" | awk '{ s += $2 } END { print s + 0 }'; }
resume() { run_cmd timeout --kill-after=5 120 "$TEST_ROOT/scripts/launch" --resume "$RUN" "$@"; }

# --- prioritized, killed mid-run, resumed with the same shard count ---------
# A capacity the run does not fill, so that what a shard holds after the
# resume is exactly the saved rows plus the new ones.
CAP=200000
start_bg rk-prio "${PRIO[@]}" --set run.max_env_steps=0 --set run.max_seconds=60 --set checkpoint.every_seconds=0.3 \
    --set replay.capacity=$CAP
if wait_for 60 have_replay_ckpt 3; then ok "prio: checkpoints with replay files while running"; else
    not_ok "prio: checkpoints with replay files while running"; fi
kill -9 "$(rank_pid rk-prio 1)" 2>/dev/null
wait_for 60 finished || kill -9 "$BG"
wait "$BG"
rc=$?
check "prio: the killed job exits non-zero ($rc)" [ "$rc" -ne 0 ]
d=$(latest_dir)
steps=$(manifest env_steps)
updates=$(manifest updates)
saved=$(replay_total)
expect_eq "prio: the MANIFEST lists one replay file" "$(sed -n 's/^replay_shards //p' "$d/MANIFEST")" 1
check "prio: it holds transitions, fewer than the capacity ($saved)" [ "$saved" -gt 0 -a "$saved" -lt $CAP ]
expect_eq "prio: its size is the file's" "$(awk '$1 == "replay" { print $4 }' "$d/MANIFEST")" \
    "$(stat -c %s "$d/replay-0.ckpt")"
check "prio: no replay file in best" [ ! -e "$RUN/checkpoints/best/replay-0.ckpt" ]
resume --set run.max_env_steps=$((steps + 2000))
expect_rc "prio: resumed with the same shard count, the job completes" 0
expect_contains "prio: the resume names the saved replay" "$out" \
    "$steps env steps, $updates updates, $saved replay transitions in 1 file"
expect_contains "prio: the shard starts with the saved transitions, their ids and priorities" "$err" \
    "restored $saved transitions from replay-0.ckpt (next id $saved, with their priorities)"
expect_contains "prio: the restored rows cover min_size: learning starts at once" "$err" "min size 0 left to insert"
s="$RUN/summary.json"
size=$(jsum "$s" replay size)
ins=$(jsum "$s" replay inserted)
check "prio: the shard took new transitions ($ins)" [ "$ins" -gt 0 ]
expect_eq "prio: shard size at the end = saved + inserted since ($saved + $ins)" "$size" $((saved + ins))
u2=$(jget "$s" updates)
check "prio: updates continue from the checkpoint ($updates -> $u2)" [ "$u2" -gt "$updates" ]
expect_eq "prio: runs on to the new budget" "$(jget "$s" env_steps)" $((steps + 2000))

# --- another shard count: the saved transitions are dealt out ----------------
steps=$(manifest env_steps)
saved=$(replay_total)
resume --set run.max_env_steps=$((steps + 1000)) --set roles.actors=2 --set roles.replay_shards=2
expect_rc "deal: resumed with 2 actors and 2 replay shards, the job completes" 0
expect_eq "deal: both shards restored from the one saved file" \
    "$(grep -c "dealt from the checkpoint's 1 replay file to 2 shards" <<<"$err")" 2
expect_eq "deal: the saved transitions, all of them, are dealt ($saved)" "$(restored_sum)" "$saved"
n0=$(grep -o 'replay 0/2\] restored [0-9]*' <<<"$err" | awk '{ print $NF }')
n1=$(grep -o 'replay 1/2\] restored [0-9]*' <<<"$err" | awk '{ print $NF }')
check "deal: evenly ($n0 and $n1)" [ $((n0 - n1)) -ge -1 -a $((n0 - n1)) -le 1 ]
expect_eq "deal: the final checkpoint has 2 replay files" "$(sed -n 's/^replay_shards //p' "$(latest_dir)/MANIFEST")" 2

# Back to one shard of 1000 (a resume is config.yaml plus its own --set):
# the newest of each part kept, the rest dropped and counted.
steps=$(manifest env_steps)
saved=$(replay_total)
resume --set run.max_env_steps=$((steps + 500)) --set replay.capacity=1000
expect_rc "shrink: resumed on one shard of 1000, the job completes" 0
expect_eq "shrink: the shard is filled to its capacity" "$(restored_sum)" 1000
expect_contains "shrink: and says how many it dropped" "$err" \
    "dropped $((saved - 1000)) saved transitions, the oldest, beyond the shard's capacity of 1000"

# --- a damaged replay file: back to the previous checkpoint ------------------
d=$(latest_dir)
# shellcheck disable=SC2012 # gorila's own checkpoint names: plain words
prev=$(ls -d "$RUN"/checkpoints/ckpt-* | sort | tail -2 | head -1)
prev_saved=$(replay_total "$prev")
printf '\xff' | dd of="$d/replay-0.ckpt" bs=1 seek=400 conv=notrunc status=none
resume --set run.max_env_steps=$(($(manifest env_steps) + 500))
expect_rc "damaged: the resume completes" 0
expect_contains "damaged: warns that the newest checkpoint is damaged" "$err" "gorila: warning: checkpoint $d is damaged ("
expect_contains "damaged: ... naming the replay file" "$err" "replay-0.ckpt: file CRC"
expect_contains "damaged: ... and resumes from the previous one" "$err" "; using $prev"
expect_eq "damaged: restored the previous checkpoint's replay" "$(restored_sum)" "$prev_saved"

# patch_row FILE FIELD ROW VALUE: set FIELD (obs, action, reward, next_obs or
# discount; obs: its element 1) of replay row ROW (0 = oldest) of the replay
# section of checkpoint FILE (a replay-<s>.ckpt, or a local trainer's
# ps-0.ckpt) to VALUE, then recompute every CRC of the file (sections,
# table, header) and rebind its line of the MANIFEST (size, whole-file CRC)
# and the MANIFEST's own CRC: only a check of the rows themselves can see
# the change. Layout: docs/CHECKPOINT.md.
cat >"$TEST_TMP/patch_row.py" <<'PY'
import os, re, struct, sys
T = []
for i in range(256):
    c = i
    for _ in range(8):
        c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
    T.append(c)
def crc32c(b):
    c, t = 0xFFFFFFFF, T
    for x in b:
        c = t[(c ^ x) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF
assert crc32c(b"123456789") == 0xE3069283
path, field, row, value = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
b = bytearray(open(path, "rb").read())
ns = struct.unpack_from("<I", b, 20)[0]
off, secs = 256 + 16 * ns, []
for i in range(ns):
    sid, _, n = struct.unpack_from("<IIQ", b, 256 + 16 * i)
    secs.append((i, sid, off, n))
    off += n
base = [s for s in secs if s[1] == 5][0][2]
O = struct.unpack_from("<I", b, base + 12)[0]
S = struct.unpack_from("<Q", b, base + 24)[0]
assert row < S, (row, S)
obs = 4 * S * O
at = base + 40 + {"obs": 4 * (row * O + 1), "action": obs + 4 * row, "reward": obs + 4 * S + 4 * row,
                  "next_obs": obs + 8 * S + 4 * (row * O + 1), "discount": 2 * obs + 8 * S + 4 * row}[field]
struct.pack_into("<i" if field == "action" else "<f", b, at, int(value) if field == "action" else float(value))
for i, _, o, n in secs:
    struct.pack_into("<I", b, 256 + 16 * i + 4, crc32c(b[o:o + n]))
struct.pack_into("<I", b, 24, crc32c(b[256:256 + 16 * ns]))
struct.pack_into("<I", b, 252, crc32c(b[:252]))
open(path, "wb").write(b)
d, name = os.path.split(path)
m = re.match(r"(ps|replay)-(\d+)\.ckpt$", name)
prefix = ("shard " if m.group(1) == "ps" else "replay ") + m.group(2) + " bytes "
lines = open(os.path.join(d, "MANIFEST")).read().split("\n")[:-2]  # without the crc32c line
for k, l in enumerate(lines):
    if l.startswith(prefix):
        w = l.split(" ")
        w[3], w[5] = str(len(b)), "%08x" % crc32c(b)
        lines[k] = " ".join(w)
text = "\n".join(lines) + "\n"
open(os.path.join(d, "MANIFEST"), "w").write(text + "crc32c %08x\n" % crc32c(text.encode()))
PY
patch_row() { python3 "$TEST_TMP/patch_row.py" "$@"; }

# --- a FIFO in place of a checkpoint's part: refused, never a hang --------------
# latest, the MANIFEST, a shard file, a replay file: each replaced by a FIFO
# (no writer ever opens it), gorila eval of the run falls back past it with
# a warning naming it; a resume with the replay file a FIFO falls back too.
d=$(latest_dir)
for part in checkpoints/latest "${d#"$RUN"/}/MANIFEST" "${d#"$RUN"/}/ps-0.ckpt" "${d#"$RUN"/}/replay-0.ckpt"; do
    mv "$RUN/$part" "$RUN/$part.aside"
    mkfifo "$RUN/$part"
    run_cmd timeout --kill-after=5 60 "$GORILA" eval "$RUN" --episodes 1
    check "fifo $part: eval of the run does not hang ($rc)" [ "$rc" -ne 124 -a "$rc" -ne 137 ]
    expect_rc "fifo $part: eval falls back and evaluates" 0
    expect_contains "fifo $part: ... naming it" "$err" "$RUN/$part: not a regular file (a FIFO)"
    rm -f "$RUN/$part"
    mv "$RUN/$part.aside" "$RUN/$part"
done
# shellcheck disable=SC2012 # gorila's own checkpoint names: plain words
prev=$(ls -d "$RUN"/checkpoints/ckpt-* | sort | tail -2 | head -1)
mv "$d/replay-0.ckpt" "$TEST_TMP/replay-0.aside"
mkfifo "$d/replay-0.ckpt"
run_cmd timeout --kill-after=5 120 "$TEST_ROOT/scripts/launch" --resume "$RUN" \
    --set run.max_env_steps=$(($(manifest env_steps) + 500))
check "fifo replay file: the resume does not hang ($rc)" [ "$rc" -ne 124 -a "$rc" -ne 137 ]
expect_rc "fifo replay file: the resume completes" 0
expect_contains "fifo replay file: falls back past it, naming it" "$err" \
    "replay-0.ckpt: not a regular file (a FIFO)); using $prev"
rm -f "$TEST_TMP/replay-0.aside"

# --- a replay row out of range, every sum made right ----------------------------
# Damage only the rows themselves show (an action the network does not have,
# a NaN discount) makes the checkpoint damaged: the resume falls back to the
# previous one, naming the file and the row, instead of a learner dying on
# the row (exit 1, and --max-restarts resuming the same rows) or a "training
# diverged". With every checkpoint so damaged the resume ends with exit 4.
d=$(latest_dir)
# shellcheck disable=SC2012 # gorila's own checkpoint names: plain words
prev=$(ls -d "$RUN"/checkpoints/ckpt-* | sort | tail -2 | head -1)
prev_saved=$(replay_total "$prev")
rows=$(awk '$1 == "replay" { print $8 }' "$d/MANIFEST")
patch_row "$d/replay-0.ckpt" action 5 7
resume --set run.max_env_steps=$(($(manifest env_steps) + 500))
expect_rc "bad row: the resume completes" 0
expect_contains "bad row: falls back past the checkpoint" "$err" "gorila: warning: checkpoint $d is damaged ("
expect_contains "bad row: ... naming the file, the row and the field" "$err" \
    "replay-0.ckpt: replay row 5 of $rows (0 = oldest): action is 7, expected 0 .. 1"
expect_contains "bad row: ... and resumes from the previous one" "$err" "; using $prev"
expect_eq "bad row: restored the previous checkpoint's replay" "$(restored_sum)" "$prev_saved"
for c in "$RUN"/checkpoints/ckpt-*; do patch_row "$c/replay-0.ckpt" discount 0 nan; done
resume --set run.max_env_steps=$(($(manifest env_steps) + 500)) --max-restarts 2
expect_rc "bad rows everywhere: exit status 4 (GORILA_EXIT_CKPT_READ)" 4
expect_contains "bad rows everywhere: says no intact checkpoint is left" "$err" "no intact checkpoint in"
expect_contains "bad rows everywhere: ... naming the row" "$err" "replay row 0 of"
check "bad rows everywhere: no restart is tried" [ "$(grep -c "restart 1 of" <<<"$err")" -eq 0 ]

# --- the local trainer's replay section -----------------------------------------
LOCAL=(configs/local/cartpole.yaml --set run.out_dir="$RUNS" --set run.name=rk-local --set network.hidden=[16]
    --set eval.episodes=5 --set eval.every_updates=500 --set logging.progress=never --set checkpoint.save_replay=true)
RUN="$RUNS/rk-local"
rm -rf "$RUN"
run_cmd timeout --kill-after=5 120 "$GORILA" train "${LOCAL[@]}" --set run.max_env_steps=3000
expect_rc "local: a run with save_replay" 0
run_cmd timeout --kill-after=5 120 "$GORILA" train --resume "$RUN" --set run.max_env_steps=4000
expect_rc "local: resumed once" 0
d=$(latest_dir)
# shellcheck disable=SC2012 # gorila's own checkpoint names: plain words
prev=$(ls -d "$RUN"/checkpoints/ckpt-* | sort | tail -2 | head -1)
patch_row "$d/ps-0.ckpt" discount 3 nan
run_cmd timeout --kill-after=5 120 "$GORILA" train --resume "$RUN" --set run.max_env_steps=5000
expect_rc "local bad row: the resume completes" 0
expect_contains "local bad row: falls back, naming the file, the row and the field" "$err" \
    "ps-0.ckpt: replay row 3 of"
expect_contains "local bad row: ... a NaN discount" "$err" \
    "discount is nan, expected a discount in [0, 1]: the replay contents are damaged); using $prev"
# The damaged checkpoint is set aside (a resume renames the line it
# abandons), so it neither counts towards checkpoint.keep nor makes keep
# prune the good one it fell back to, although a best checkpoint took the
# next number; its bytes are kept under another name.
check "local bad row: the damaged checkpoint is set aside" [ ! -e "$d" ]
check "local bad row: ... as abandoned-$(basename "$d")" [ -e "$(dirname "$d")/abandoned-$(basename "$d")" ]
check "local bad row: the one it fell back to is kept" [ -e "$prev/MANIFEST" ]
d=$(latest_dir)
mv "$d/MANIFEST" "$TEST_TMP/MANIFEST.aside"
mkfifo "$d/MANIFEST"
run_cmd timeout --kill-after=5 120 "$GORILA" train --resume "$RUN" --set run.max_env_steps=6000
check "local fifo MANIFEST: the resume does not hang ($rc)" [ "$rc" -ne 124 -a "$rc" -ne 137 ]
expect_rc "local fifo MANIFEST: the resume falls back and completes" 0
expect_contains "local fifo MANIFEST: ... naming it" "$err" "$d/MANIFEST: not a regular file (a FIFO)"
if [ -p "$d/MANIFEST" ]; then # not replaced by the resume: put it back
    rm -f "$d/MANIFEST"
    mv "$TEST_TMP/MANIFEST.aside" "$d/MANIFEST"
fi
rm -f "$TEST_TMP/MANIFEST.aside"
for c in "$RUN"/checkpoints/ckpt-*; do patch_row "$c/ps-0.ckpt" action 0 -3; done
run_cmd timeout --kill-after=5 120 "$GORILA" train --resume "$RUN" --set run.max_env_steps=7000
expect_rc "local bad rows everywhere: exit status 4" 4
expect_contains "local bad rows everywhere: naming the row" "$err" "action is -3, expected 0 .. 1"

# --- uniform replay -----------------------------------------------------------
job rk-uni --set checkpoint.save_replay=true
expect_rc "uniform: a job with save_replay" 0
saved=$(replay_total)
check "uniform: its final checkpoint holds the shard's transitions ($saved)" [ "$saved" -gt 0 -a "$saved" -le 3000 ]
resume --set run.max_env_steps=4000
expect_rc "uniform: resumed, the job completes" 0
expect_contains "uniform: the shard starts with the saved transitions" "$err" \
    "restored $saved transitions from replay-0.ckpt (next id $saved)"

# --- without replay files, and with save_replay off ----------------------------
resume --set run.max_env_steps=5000 --set checkpoint.save_replay=false
expect_rc "off: resumed with save_replay off" 0
expect_contains "off: says the saved replay is not restored" "$out" "(not restored: checkpoint.save_replay is off)"
check "off: no shard restored anything" [ "$(restored_sum)" -eq 0 ]
check "off: and its checkpoint has no replay files" [ ! -e "$(latest_dir)/replay-0.ckpt" ]
resume --set run.max_env_steps=6000 --set checkpoint.save_replay=true
expect_rc "none: a checkpoint without replay resumed with save_replay on" 0
expect_contains "none: the shard starts empty" "$err" "the checkpoint holds no replay"
check "none: and saves its replay again" [ -e "$(latest_dir)/replay-0.ckpt" ]

# --- a replay shard that never answers the final CKPT_REQ ----------------------
start_bg rk-hang --set checkpoint.save_replay=true --set run.max_env_steps=0 --set run.max_seconds=3 \
    --set run.stop_deadline_seconds=2
t0=$SECONDS
wait_for 60 grep -q "run directory" "$TEST_TMP/rk-hang.out"
rpid=$(rank_pid rk-hang 2)
if [ -n "$rpid" ] && kill -STOP "$rpid"; then ok "hang: replay shard (rank 2) stopped with SIGSTOP"; else
    not_ok "hang: could not find and stop the replay shard (rank 2)"; fi
wait_for 60 finished || kill -9 "$BG"
wait "$BG"
expect_eq "hang: exit status 6 (GORILA_EXIT_HUNG)" "$?" 6
check "hang: within the deadline's reach ($((SECONDS - t0)) s)" [ $((SECONDS - t0)) -le 20 ]
expect_contains "hang: names the replay shard and the CKPT_DONE it owes" "$(cat "$TEST_TMP/rk-hang.err")" \
    "rank 2 (replay 0/1): no CKPT_DONE"
[ -n "$rpid" ] && kill -9 "$rpid" 2>/dev/null
done_testing
