# SPDX-License-Identifier: MIT
# Checkpoints, restarts and signals with real mpirun jobs:
#  - a killed actor ends the job with a non-zero status (never a hang) and
#    a restart resumes from the last checkpoint with its counters, even with
#    another number of actors and replay shards;
#  - scripts/launch --max-restarts restarts a failed job by itself (its
#    coordinator killed), and the resume cuts the rows its CSVs got after
#    the checkpoint;
#  - resume equality: the parameters, target and optimizer state after a
#    resume that applies no update are those saved, bit for bit, also when
#    re-sharded over another number of parameter servers;
#  - a checkpoint copied in from another run is refused (exit 4, both run
#    ids named) by eval of the run and by a resume;
#  - gorila eval racing a job that prunes every 10 ms never says damaged;
#  - SIGUSR1 checkpoints and keeps going; SIGTERM stops cleanly.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../mpilib.sh"
cd "$TEST_ROOT" || exit 1

have_ckpt() { [ -s "$RUN/checkpoints/latest" ]; }

# --- a killed actor ---------------------------------------------------------
start_bg killed --set run.max_env_steps=0 --set run.max_seconds=60 --set checkpoint.every_seconds=0.3
if wait_for 60 have_ckpt; then ok "killed: a checkpoint is written while running"; else not_ok "killed: checkpoint"; fi
actor=$(rank_pid killed 1)
check "killed: found the actor's process ($actor)" [ -n "$actor" ]
kill -9 "$actor" 2>/dev/null
if wait_for 60 finished; then ok "killed: the job ends (no hang)"; else
    not_ok "killed: the job ends (no hang)"
    kill -9 "$BG"
fi
wait "$BG"
rc=$?
check "killed: launcher exits non-zero ($rc)" [ "$rc" -ne 0 ]
steps=$(manifest env_steps)
updates=$(manifest updates)
ck=$(cat "$RUN/checkpoints/latest")
check "killed: the checkpoint has counters ($steps env steps, $updates updates)" [ "${updates:-0}" -gt 0 ]
# What the checkpoint records is what its files hold: parameter source 0's
# shard header (param_version, u64 at offset 168: docs/CHECKPOINT.md) has
# the manifest's params_version, and its updates are that version.
hdr=$(od -An -t u8 -j 168 -N 8 "$RUN/checkpoints/$ck/ps-0.ckpt" | tr -d ' ')
expect_eq "killed: ps-0.ckpt holds parameters of the manifest's version" "$hdr" "$(manifest params_version)"
expect_eq "killed: the manifest's updates are its params_version" "$updates" "$(manifest params_version)"
# The complete rows the killed job left (a torn last one the resume cuts).
whole() { if [ "$(tail -c 1 "$1" | od -An -c | tr -d ' ')" = '\n' ]; then cat "$1"; else sed '$d' "$1"; fi; }
for f in metrics episodes eval; do whole "$RUN/$f.csv" >"$TEST_TMP/killed-$f.csv"; done
# A row below the checkpoint's env steps was logged before it was
# requested, so of parameters no newer than the ones it saved (source 0
# writes after the request). Rows at or above them may be newer.
for f in metrics eval; do
    expect_eq "killed: $f.csv's rows before the checkpoint are of its version or older" \
        "$(awk -F, -v x="$steps" -v u="$updates" 'NR > 1 && $2 < x && $3 > u { print NR ": " $2 " env steps, " $3 " updates" }' \
            "$TEST_TMP/killed-$f.csv")" ""
done
run_cmd timeout --kill-after=5 120 "$TEST_ROOT/scripts/launch" --resume "$RUN" \
    --set run.max_env_steps=$((steps + 2000)) --set roles.actors=2 --set roles.replay_shards=2
expect_rc "killed: resumed with 2 actors and 2 replay shards" 0
# The coordinator cuts the rows logged after the checkpoint from every CSV
# (saying so), keeps the rows up to it as they were, and appends after
# them: neither the env steps nor the updates go back (the resumed job
# counts on from the checkpoint's). Rows after it are those above its env
# steps and, in metrics.csv and eval.csv, those above its updates: the job
# usually goes on checkpointing at the env steps its dead actor left, and
# logs rows at them, of newer parameters, between the checkpoint's request
# and its end (rows at the step of its version or older stay).
for f in metrics episodes eval; do
    u=$updates
    [ "$f" = episodes ] && u=-1 # no updates column
    after() { awk -F, -v x="$steps" -v u="$u" 'NR > 1 && ($2 > x || (u >= 0 && $3 > u))' "$TEST_TMP/killed-$f.csv"; }
    n=$(after | wc -l)
    nu=$(after | awk -F, -v x="$steps" '$2 <= x' | wc -l)
    rows=rows
    [ "$n" = 1 ] && rows=row
    also=
    [ "$nu" -gt 0 ] && also=", or updates > $updates"
    if [ "$n" -gt 0 ]; then
        expect_contains "killed: the resume says it dropped $f.csv's $n $rows after $ck ($nu for their updates)" "$err" \
            "gorila: resume: $RUN/$f.csv: dropped $n $rows logged after checkpoint $ck (env steps > $steps$also)"
    else
        expect_eq "killed: nothing said of $f.csv (no row after the checkpoint)" "$(grep -c "resume: $RUN/$f.csv" <<<"$err")" 0
    fi
    kept=$(awk -F, -v x="$steps" -v u="$u" 'NR == 1 || ($2 <= x && (u < 0 || $3 <= u))' "$TEST_TMP/killed-$f.csv")
    expect_eq "killed: $f.csv's rows up to the checkpoint are the killed job's, as they were" \
        "$(head -n "$(wc -l <<<"$kept")" "$RUN/$f.csv")" "$kept"
    expect_eq "killed: $f.csv's env steps never go back" \
        "$(awk -F, 'NR > 2 && $2 < p { print NR ": " $2 " after " p } { p = $2 }' "$RUN/$f.csv")" ""
    [ "$f" = episodes ] && continue
    expect_eq "killed: $f.csv's updates never go back" \
        "$(awk -F, 'NR > 2 && $3 < p { print NR ": " $3 " after " p } { p = $3 }' "$RUN/$f.csv")" ""
done
expect_contains "killed: resumes with the checkpoint's counters" "$out" \
    "$steps env steps, $updates updates"
expect_eq "killed: summary says resumed" "$(jget "$RUN/summary.json" resumed)" true
expect_eq "killed: runs on to the new budget" "$(jget "$RUN/summary.json" env_steps)" $((steps + 2000))
u2=$(jget "$RUN/summary.json" updates)
check "killed: updates continue from the checkpoint ($updates -> $u2)" [ "$u2" -gt "$updates" ]

# --- --max-restarts ---------------------------------------------------------
# A time budget, not a step budget: the job must still be running when the
# rank is killed, however fast the machine is (run.max_seconds counts the
# run's whole time, across restarts). The coordinator is the rank killed, once metrics.csv has rows after the
# newest checkpoint (looked at while it is stopped, so that no checkpoint
# is committed meanwhile): the restart resumes from that checkpoint, cuts
# those rows, and the env steps of every CSV never go back.
start_bg restarts --set run.max_env_steps=0 --set run.max_seconds=3 --set checkpoint.every_seconds=0.3 --max-restarts 1
wait_for 60 have_ckpt
coord=$(rank_pid restarts 0)
rows_past() { awk -F, -v x="$(manifest env_steps)" 'NR > 1 && $2 > x { n++ } END { exit !n }' "$RUN/metrics.csv"; }
for _ in $(seq 300); do
    kill -STOP "$coord" 2>/dev/null || break
    if rows_past; then
        kill -KILL "$coord"
        break
    fi
    kill -CONT "$coord"
    sleep 0.02
done
wait_for 120 finished || kill -9 "$BG"
wait "$BG"
expect_eq "max-restarts: the job completes after one restart (exit status)" "$?" 0
expect_contains "max-restarts: launcher restarted it" "$(cat "$TEST_TMP/restarts.err")" "restart 1 of 1 from"
check "max-restarts: the restart cut metrics.csv's rows logged after its checkpoint" \
    grep -Eq "^gorila: resume: $RUN/metrics.csv: dropped [1-9][0-9]* rows? logged after checkpoint ckpt-[0-9]{6} \(env steps > [0-9]+(, or updates > [0-9]+)?\)\$" \
    "$TEST_TMP/restarts.err"
for f in metrics episodes eval; do
    expect_eq "max-restarts: $f.csv's env steps never go back" \
        "$(awk -F, 'NR > 2 && $2 < p { print NR ": " $2 " after " p } { p = $2 }' "$RUN/$f.csv")" ""
done
for f in metrics eval; do
    expect_eq "max-restarts: $f.csv's updates never go back" \
        "$(awk -F, 'NR > 2 && $3 < p { print NR ": " $3 " after " p } { p = $3 }' "$RUN/$f.csv")" ""
done
expect_eq "max-restarts: ran to its time limit" "$(jget "$RUN/summary.json" stop_reason)" time
expect_eq "max-restarts: summary says resumed" "$(jget "$RUN/summary.json" resumed)" true

# --- resume equality (same_shard and notrain_resume: tests/mpilib.sh) -----------
job equal --set roles.actors=3 --set roles.replay_shards=2 --set roles.learners=2 --set roles.param_servers=3
expect_rc "equal: first run" 0
c1="$RUN/checkpoints/$(cat "$RUN/checkpoints/latest")"
steps=$(manifest env_steps)
# A resume of a run that met its stop condition says so and writes nothing.
sum1=$(cat "$RUN/summary.json")
run_cmd timeout --kill-after=5 120 "$TEST_ROOT/scripts/launch" --resume "$RUN"
expect_rc "complete: resume of a finished run exits 0" 0
expect_contains "complete: says it is already complete" "$out" "is already complete (budget"
expect_contains "complete: says which limit to raise" "$out" "raise run.max_env_steps or run.max_updates with --set"
expect_eq "complete: no new checkpoint" "$RUN/checkpoints/$(cat "$RUN/checkpoints/latest")" "$c1"
check "complete: summary.json untouched" [ "$sum1" = "$(cat "$RUN/summary.json")" ]
notrain_resume
expect_rc "equal: resume with no update to apply" 0
check "equal: the resume applied no update" [ "$NOTRAIN_OK" = 1 ]
check "equal: a new checkpoint was written" [ "$C1" != "$C2" ]
for p in 0 1 2; do
    if same_shard "$C1/ps-$p.ckpt" "$C2/ps-$p.ckpt"; then
        ok "equal: shard $p identical after resume, bit for bit"
    else not_ok "equal: shard $p identical after resume"; fi
done
notrain_resume --set roles.param_servers=2
expect_rc "equal: resume re-sharded over 2 parameter servers" 0
check "equal: the re-sharded resume applied no update" [ "$NOTRAIN_OK" = 1 ]
# shellcheck disable=SC2012 # gorila's own checkpoint names: plain words
expect_eq "equal: re-sharded checkpoint has 2 shards" "$(ls "$C2"/ps-*.ckpt | wc -l)" 2
"$GORILA" eval "$C1" --episodes 1 --export "$TEST_TMP/equal-1.bin" >/dev/null 2>&1
"$GORILA" eval "$C2" --episodes 1 --export "$TEST_TMP/equal-3.bin" >/dev/null 2>&1
if [ -s "$TEST_TMP/equal-1.bin" ] && cmp -s "$TEST_TMP/equal-1.bin" "$TEST_TMP/equal-3.bin"; then
    ok "equal: re-sharded parameters equal the saved ones"
else
    not_ok "equal: re-sharded parameters equal the saved ones"
fi

# Allreduce: every learner restores the whole network, learner 0 saves it.
job equal-ar --set sync.mode=allreduce --set roles.param_servers=0 --set roles.learners=2
expect_rc "equal-ar: first run (allreduce)" 0
notrain_resume
expect_rc "equal-ar: resume with no update to apply" 0
check "equal-ar: the resume applied no update" [ "$NOTRAIN_OK" = 1 ]
if [ "$C1" != "$C2" ] && same_shard "$C1/ps-0.ckpt" "$C2/ps-0.ckpt"; then
    ok "equal-ar: learner 0's shard identical after resume, bit for bit"
else not_ok "equal-ar: learner 0's shard identical after resume ($C1, $C2)"; fi

# The parameters inside the learner (ps_sync, roles.param_servers 0): the
# learner saves the whole network as one shard and restores it; the same
# checkpoint resumes with a parameter server rank (re-sharded), since where
# the parameters live is a layout choice, not part of the state.
job equal-pil --set roles.param_servers=0
expect_rc "equal-pil: first run (ps_sync, parameters in the learner)" 0
notrain_resume
expect_rc "equal-pil: resume with no update to apply" 0
check "equal-pil: the resume applied no update" [ "$NOTRAIN_OK" = 1 ]
if [ "$C1" != "$C2" ] && same_shard "$C1/ps-0.ckpt" "$C2/ps-0.ckpt"; then
    ok "equal-pil: the learner's shard identical after resume, bit for bit"
else not_ok "equal-pil: the learner's shard identical after resume ($C1, $C2)"; fi
notrain_resume --set roles.param_servers=2
expect_rc "equal-pil: resume onto 2 parameter servers" 0
check "equal-pil: that resume applied no update" [ "$NOTRAIN_OK" = 1 ]
"$GORILA" eval "$C1" --episodes 1 --export "$TEST_TMP/pil-1.bin" >/dev/null 2>&1
"$GORILA" eval "$C2" --episodes 1 --export "$TEST_TMP/pil-2.bin" >/dev/null 2>&1
if [ -s "$TEST_TMP/pil-1.bin" ] && cmp -s "$TEST_TMP/pil-1.bin" "$TEST_TMP/pil-2.bin"; then
    ok "equal-pil: the parameter servers hold the learner's parameters"
else
    not_ok "equal-pil: the parameter servers hold the learner's parameters"
fi
RUN="$RUNS/equal-ar"

# --- a checkpoint copied in from another run ------------------------------------
# Every run directory records its run id (<run>/run_id). A checkpoint of
# another run of the same env and network (equal's), copied into equal-ar's
# checkpoints and named by its latest, is refused by eval of the run and by a
# resume, naming both ids (exit 4); named by its own path, eval evaluates it.
A="$RUN" B="$RUNS/equal"
idA=$(cat "$A/run_id" 2>/dev/null) idB=$(cat "$B/run_id" 2>/dev/null)
check "run id: each run directory records its own ($idA, $idB)" [ ${#idA} -eq 16 -a ${#idB} -eq 16 -a "$idA" != "$idB" ]
expect_eq "run id: its checkpoints carry it" "$(manifest run_id)" "$idA"
fname=$(cat "$B/checkpoints/latest")
aside="$TEST_TMP/equal-ar-aside"
rm -rf "$aside"
cp "$A/checkpoints/latest" "$TEST_TMP/equal-ar-latest"
[ -e "$A/checkpoints/$fname" ] && mv "$A/checkpoints/$fname" "$aside"
cp -r "$B/checkpoints/$fname" "$A/checkpoints/$fname"
printf '%s\n' "$fname" >"$A/checkpoints/latest"
run_cmd timeout --kill-after=5 60 "$GORILA" eval "$A" --episodes 1
expect_rc "foreign: eval of the run refuses another run's checkpoint (exit 4)" 4
expect_contains "foreign: ... naming both run ids" "$err" "belongs to run $idB, but run directory $A is run $idA"
run_cmd timeout --kill-after=5 120 "$TEST_ROOT/scripts/launch" --resume "$A" --set run.max_env_steps=1
expect_rc "foreign: a resume refuses it (exit 4)" 4
expect_contains "foreign: ... naming both run ids" "$err" "belongs to run $idB, but run directory $A is run $idA"
run_cmd timeout --kill-after=5 60 "$GORILA" eval "$A/checkpoints/$fname" --episodes 1
expect_rc "foreign: named by its path, it is evaluated" 0
rm -rf "${A:?}/checkpoints/$fname"
[ -e "$aside" ] && mv "$aside" "$A/checkpoints/$fname"
cp "$TEST_TMP/equal-ar-latest" "$A/checkpoints/latest"

# Every checkpoint of the run damaged (one byte of each shard 0 flipped):
# no fallback is left, the resume ends with exit status 4, naming the damage.
for d in "$RUN"/checkpoints/ckpt-*; do
    printf '\xff' | dd of="$d/ps-0.ckpt" bs=1 seek=300 conv=notrunc status=none
done
run_cmd timeout --kill-after=5 120 "$TEST_ROOT/scripts/launch" --resume "$RUN" --set run.max_env_steps=0 \
    --set run.max_seconds=100
expect_rc "damaged: resume with every checkpoint damaged exits 4 (GORILA_EXIT_CKPT_READ)" 4
expect_contains "damaged: says no intact checkpoint is left" "$err" "no intact checkpoint in"

# --- eval racing a job that prunes ------------------------------------------------
# A local job checkpointing every 10 ms with keep 1 deletes each checkpoint
# right after it commits the next; gorila eval of the run takes no lock, so
# the checkpoint it chose may be pruned under it. That must never make the
# healthy run look damaged (exit 4, or a "damaged" note). Bounded: at most 40
# evaluations, as many as fit while the job runs; no timing is asserted.
R6="$RUNS/prune-race"
rm -rf "$R6"
"$GORILA" train configs/local/cartpole.yaml --set run.out_dir="$RUNS" --set run.name=prune-race \
    --set run.max_env_steps=0 --set run.max_seconds=30 --set run.stop_when_solved=false --set network.hidden=[16] \
    --set checkpoint.every_seconds=0.01 --set checkpoint.keep=1 --set logging.progress=never \
    >"$TEST_TMP/prune-race.out" 2>&1 &
P6=$!
wait_for 60 [ -s "$R6/checkpoints/latest" ]
n=0 bad=0
while [ $n -lt 40 ] && kill -0 "$P6" 2>/dev/null; do
    run_cmd timeout --kill-after=5 60 "$GORILA" eval "$R6" --episodes 1
    n=$((n + 1))
    if [ "$rc" -ne 0 ] || grep -q "damaged" <<<"$err"; then
        bad=$((bad + 1))
        echo "# eval $n: exit status $rc: ${err:0:300}"
    fi
done
kill -TERM "$P6" 2>/dev/null
wait "$P6"
check "prune race: $n evaluations while every checkpoint is pruned 10 ms later, none says damaged ($bad)" \
    [ "$n" -gt 0 -a "$bad" -eq 0 ]

# --- signals --------------------------------------------------------------------
# The launcher runs in a session of its own, so that a SIGTERM to its whole
# process group (what a terminal's Ctrl-C or a batch system does) can be
# tested: mpirun must not see it, only the launcher's clean stop.
start_session() {
    local name=$1
    shift
    RUN="$RUNS/$name"
    rm -rf "$RUN"
    setsid "$TEST_ROOT/scripts/launch" "$SMALL" --set run.name="$name" --set run.out_dir="$RUNS" "$@" \
        >"$TEST_TMP/$name.out" 2>"$TEST_TMP/$name.err" &
    BG=$!
}
start_session signals --set run.max_env_steps=0 --set run.max_seconds=60
wait_for 60 grep -q "run directory" "$TEST_TMP/signals.out"
sleep 1
kill -USR1 "$BG"
if wait_for 30 have_ckpt; then ok "SIGUSR1: checkpoint written while the job goes on"; else not_ok "SIGUSR1: checkpoint"; fi
check "SIGUSR1: job still running" kill -0 "$BG"
kill -TERM -- "-$BG"
wait_for 60 finished || kill -9 "$BG"
wait "$BG"
expect_eq "SIGTERM to the launcher's process group: clean exit" "$?" 0
# The launcher's tees share its process group: killed by the same SIGTERM,
# they lost the job's last lines and at times mpirun died of SIGPIPE (141).
check "SIGTERM: the job's own stop report reached the launcher's stderr" \
    grep -q "stopping: signal" "$TEST_TMP/signals.err"
expect_eq "SIGTERM: stop reason" "$(jget "$RUN/summary.json" stop_reason)" signal
# shellcheck disable=SC2012 # gorila's own checkpoint names: plain words
n=$(ls -d "$RUN"/checkpoints/ckpt-* | wc -l)
check "SIGTERM: final checkpoint after the SIGUSR1 one ($n)" [ "$n" -ge 2 ]
done_testing
