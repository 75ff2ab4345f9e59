# SPDX-License-Identifier: MIT
# Faults that must not pass silently in a single-process run:
# training that diverges to NaN/Inf ends with exit status 5
# (GORILA_EXIT_DIVERGED) and a message saying what to change, before the
# parameters go non-finite, so no checkpoint holds them; and the stop
# deadline key of distributed runs is validated like every other key.
# (The distributed faults are tests/mpi/faults.sh.)
source "$(dirname "$0")/../lib.sh"
cd "$TEST_ROOT" || exit 1
RUNS="$TEST_TMP/cli-faults"
rm -rf "$RUNS"

# SGD at lr 10 with no clipping and an unbounded loss (Huber delta 1e6, no
# discount): the Q-values overflow within a few updates. Local runs are
# deterministic, so it is always the same update. A checkpoint after every
# update, all kept, shows that none was written once training diverged.
t0=$SECONDS
run_cmd "$GORILA" train configs/local/cartpole.yaml --set run.out_dir="$RUNS" --set run.name=diverge \
    --set logging.progress=never --set optimizer.kind=sgd --set optimizer.lr=10 --set optimizer.grad_clip=0 \
    --set agent.huber_delta=1e6 --set agent.gamma=1 --set network.hidden=[16] --set agent.train_every=1 \
    --set agent.gradient_steps=1 --set checkpoint.every_updates=1 --set checkpoint.keep=100
expect_rc "local divergence: exit status 5 (GORILA_EXIT_DIVERGED)" 5
expect_contains "local divergence: says what diverged and when" "$err" "gorila: error: training diverged: loss is"
expect_contains "local divergence: says what to change" "$err" \
    "(local trainer); lower optimizer.lr (now 10) or optimizer.grad_clip (now 0, 0 = off)"
expect_eq "local divergence: one error line" "$(grep -c 'error' <<<"$err")" 1
R="$RUNS/diverge"
at=$(sed -n 's/.* at update \([0-9]*\) (local trainer).*/\1/p' <<<"$err")
latest=$(sed -n 's/^updates //p' "$R/checkpoints/$(cat "$R/checkpoints/latest" 2>/dev/null)/MANIFEST" 2>/dev/null)
check "local divergence: the newest checkpoint ($latest updates) is from before the diverged update ($at)" \
    test "${latest:-x}" -lt "${at:-0}" 2>/dev/null
n=0
bad=""
for d in "$R"/checkpoints/ckpt-*; do
    [ -e "$d/MANIFEST" ] || continue
    "$GORILA" eval "$d" --episodes 1 --export "$TEST_TMP/cli-faults.bin" >/dev/null 2>&1 || bad="$bad $d (no export)"
    od -An -v -f "$TEST_TMP/cli-faults.bin" | grep -qiE 'nan|inf' && bad="$bad $d"
    n=$((n + 1))
done
expect_eq "local divergence: all $n checkpoints hold finite parameters" "$bad" ""
echo "# local divergence: $((SECONDS - t0)) s"

# The same with prioritized replay: the TD errors that set priorities are
# checked too (a priority never comes from a non-finite one), and the run
# ends the same way.
run_cmd "$GORILA" train configs/local/cartpole.yaml --set run.out_dir="$RUNS" --set run.name=diverge-prio \
    --set logging.progress=never --set optimizer.kind=sgd --set optimizer.lr=10 --set optimizer.grad_clip=0 \
    --set agent.huber_delta=1e6 --set agent.gamma=1 --set network.hidden=[16] --set agent.train_every=1 \
    --set agent.gradient_steps=1 --set replay.kind=prioritized
expect_rc "local divergence, prioritized replay: exit status 5 (GORILA_EXIT_DIVERGED)" 5
expect_contains "local divergence, prioritized replay: says so" "$err" "gorila: error: training diverged: "
expect_eq "local divergence, prioritized replay: one error line" "$(grep -c 'error' <<<"$err")" 1

# A full disk: the run directory on a 64 KiB tmpfs (in a mount namespace of
# its own) holds config.yaml and the CSVs, but no checkpoint of the 64-64
# CartPole network (its parameters, target and Adam moments are 74 KB).
# Every checkpoint write fails; the run must end with exit status 3
# (GORILA_EXIT_CKPT_WRITE) saying so, not 0 with nothing to resume.
mnt="$TEST_TMP/cli-faults-full"
mkdir -p "$mnt"
if unshare -m true 2>/dev/null; then
    run_cmd unshare -m sh -c 'mount -t tmpfs -o size=64k tmpfs "$1" && shift && exec "$@"' sh "$mnt" \
        "$GORILA" train configs/local/cartpole.yaml --set run.out_dir="$mnt" --set run.name=full \
        --set logging.progress=never --set run.max_env_steps=3000 --set checkpoint.every_updates=250
    expect_rc "disk full: exit status 3 (GORILA_EXIT_CKPT_WRITE)" 3
    expect_contains "disk full: says the final checkpoint could not be written" "$err" \
        "gorila: error: the final checkpoint could not be written:"
    expect_contains "disk full: and why" "$err" "No space left on device"
    expect_contains "disk full: the final line says there is no final checkpoint" "$out" "; no final checkpoint"
else
    ok "disk full: exit status 3 # SKIP cannot create a mount namespace here (unshare -m)"
fi

# A run's own files are never written through a link: a CSV
# replaced by a link to a file elsewhere is refused before anything is
# written (exit status 8, GORILA_EXIT_LOG_WRITE, one line naming it), and
# the file it points to is neither cut, appended to nor replaced; so is a
# checkpoints/ that is a link; a tb/ that is a link is refused like any
# unusable tb/ (exit status 2) and nothing lands in its target.
run_cmd "$GORILA" train configs/local/cartpole.yaml --set run.out_dir="$RUNS" --set run.name=csv \
    --set logging.progress=never --set run.max_env_steps=2000 --set run.stop_when_solved=false
expect_rc "links: first run" 0
outside="$TEST_TMP/cli-faults-outside"
rm -rf "$outside"
mkdir -p "$outside/tb" "$outside/ckpts"
printf 'x,y\n1,2\n3,4\n' >"$outside/file.csv"
sum=$(cksum <"$outside/file.csv")
for f in metrics.csv episodes.csv eval.csv; do
    rm -rf "$RUNS/csv-$f"
    cp -a "$RUNS/csv" "$RUNS/csv-$f"
    rm -f "$RUNS/csv-$f/$f"
    ln -s "$outside/file.csv" "$RUNS/csv-$f/$f"
    run_cmd "$GORILA" train --resume "$RUNS/csv-$f" --set run.max_env_steps=3000
    expect_rc "links: $f a link: refused, exit status 8" 8
    expect_contains "links: $f a link: one line naming it" "$err" \
        "gorila: error: cannot open $RUNS/csv-$f/$f: it is a symbolic link"
    expect_eq "links: $f a link: one error line" "$(grep -c 'error' <<<"$err")" 1
    expect_eq "links: $f a link: the file it points to is untouched" "$(cksum <"$outside/file.csv")" "$sum"
    check "links: $f a link: still a link" test -L "$RUNS/csv-$f/$f"
done
rm -rf "$RUNS/csv-ck"
cp -a "$RUNS/csv" "$RUNS/csv-ck"
mv "$RUNS/csv-ck/checkpoints" "$outside/ckpts/"
ln -s "$outside/ckpts/checkpoints" "$RUNS/csv-ck/checkpoints"
before=$(ls "$outside/ckpts/checkpoints")
run_cmd "$GORILA" train --resume "$RUNS/csv-ck" --set run.max_env_steps=3000
expect_rc "links: checkpoints/ a link: refused, exit status 8" 8
expect_contains "links: checkpoints/ a link: names it" "$err" \
    "gorila: error: cannot open $RUNS/csv-ck/checkpoints: it is a symbolic link"
expect_eq "links: checkpoints/ a link: nothing written in its target" "$(ls "$outside/ckpts/checkpoints")" "$before"
rm -rf "$RUNS/csv-tb"
cp -a "$RUNS/csv" "$RUNS/csv-tb"
ln -s "$outside/tb" "$RUNS/csv-tb/tb"
run_cmd "$GORILA" train --resume "$RUNS/csv-tb" --set run.max_env_steps=3000 --set logging.tensorboard=true
expect_rc "links: tb/ a link: refused, exit status 2" 2
expect_contains "links: tb/ a link: names it" "$err" "cannot open $RUNS/csv-tb/tb: it is a symbolic link"
expect_eq "links: tb/ a link: no events file in its target" "$(ls "$outside/tb")" ""

# The run directory itself and the directories above it may be links (runs/
# on a bigger disk): a fresh run through a linked out_dir, and a resume
# through a linked run directory, write into the real directory.
rm -rf "$outside/disk" "$RUNS/big" "$RUNS/csv-via"
mkdir -p "$outside/disk"
ln -s "$outside/disk" "$RUNS/big"
run_cmd "$GORILA" train configs/local/cartpole.yaml --set run.out_dir="$RUNS/big" --set run.name=r \
    --set logging.progress=never --set run.max_env_steps=2000 --set run.stop_when_solved=false \
    --set logging.tensorboard=true
expect_rc "links: out_dir a link: the run works" 0
check "links: out_dir a link: the files are in its target" test -s "$outside/disk/r/metrics.csv" -a \
    -s "$outside/disk/r/checkpoints/latest"
ln -s "$outside/disk/r" "$RUNS/csv-via"
rows=$(wc -l <"$outside/disk/r/metrics.csv")
run_cmd "$GORILA" train --resume "$RUNS/csv-via" --set run.max_env_steps=3000
expect_rc "links: run directory a link: the resume works" 0
check "links: run directory a link: metrics.csv grew" test "$(wc -l <"$outside/disk/r/metrics.csv")" -gt "$rows"
check "links: run directory a link: tb/ got a second events file" \
    test "$(find "$outside/disk/r/tb" -name 'events.out.tfevents.*' | wc -l)" -eq 2

# A full disk, simulated by a file size limit (ulimit -f, with SIGXFSZ
# ignored so that a write past it fails with EFBIG): at 40 KiB no
# checkpoint of the 64-64 network fits (74 KB). Every failed attempt
# removes what it wrote: no ckpt-* or best.new-* directory is left behind.
fsize() { local kib=$1; shift; bash -c 'trap "" XFSZ; ulimit -f "$0"; exec "$@"' "$kib" "$@"; }
run_cmd fsize 40 "$GORILA" train configs/local/cartpole.yaml --set run.out_dir="$RUNS" --set run.name=fsize \
    --set logging.progress=never --set run.max_env_steps=3000 --set run.stop_when_solved=false \
    --set checkpoint.every_updates=50
expect_rc "file size limit: no checkpoint fits, exit status 3" 3
expect_contains "file size limit: checkpoints failed" "$err" "File too large"
expect_eq "file size limit: no failed checkpoint directory left" \
    "$(find "$RUNS/fsize/checkpoints" -mindepth 1 -maxdepth 1 \( -name 'ckpt-*' -o -name 'best.new-*' \) | wc -l)" 0

# A CSV write failing mid-run (episodes.csv grown to just under the limit)
# stops the run; the final checkpoint then fails too, and both are said,
# the CSV's with its file and cause, exit status 8 (GORILA_EXIT_LOG_WRITE).
rm -rf "$RUNS/csv-full"
cp -a "$RUNS/csv" "$RUNS/csv-full"
row="1.000,100,0,5,10,10"
n=$(((40 * 1024 - 400 - $(stat -c %s "$RUNS/csv-full/episodes.csv")) / (${#row} + 1)))
yes "$row" | head -n "$n" >>"$RUNS/csv-full/episodes.csv"
run_cmd fsize 40 "$GORILA" train --resume "$RUNS/csv-full" --set run.max_env_steps=4000
expect_rc "csv full: exit status 8" 8
expect_contains "csv full: names the file and the reason" "$err" \
    "gorila: error: the run's files could not be written: cannot write $RUNS/csv-full/episodes.csv: File too large"
expect_contains "csv full: and the final checkpoint's failure" "$err" \
    "gorila: error: the final checkpoint could not be written:"

# Abandoned checkpoints do not pile up. A resume removes a
# ckpt-* above its checkpoint that never got a MANIFEST (what a kill in
# the middle of a write leaves: a shard's temporary file) and an
# abandoned-* without one, instead of keeping them; a damaged complete
# checkpoint the fallback skips is kept as abandoned-ckpt-<n>, at most
# checkpoint.keep_abandoned (2) of them, the oldest removed first.
A="$RUNS/aban"
ab_run() { run_cmd "$GORILA" train "$@" --set logging.progress=never --set run.stop_when_solved=false; }
ab_run configs/local/cartpole.yaml --set run.out_dir="$RUNS" --set run.name=aban --set run.max_env_steps=2000 \
    --set checkpoint.every_updates=100
expect_rc "abandoned: first run" 0
mkdir -p "$A/checkpoints/ckpt-000090" "$A/checkpoints/abandoned-ckpt-000080"
: >"$A/checkpoints/ckpt-000090/ps-0.ckpt.tmp.AbCdEf"
: >"$A/checkpoints/abandoned-ckpt-000080/ps-0.ckpt.tmp.GhIjKl"
set_aside=""
for k in 1 2 3; do
    latest=$(cat "$A/checkpoints/latest")
    printf 'GARBAGE!' | dd of="$A/checkpoints/$latest/ps-0.ckpt" bs=1 seek=300 conv=notrunc 2>/dev/null
    ab_run --resume "$A" --set run.max_env_steps=$((2000 + 1000 * k))
    expect_rc "abandoned: resume $k past the damaged $latest" 0
    name=$(sed -n "s|^gorila: note: $A/checkpoints/$latest is numbered above .*: kept as $A/checkpoints/||p" <<<"$err")
    check "abandoned: resume $k keeps $latest (as ${name:-nothing})" test -f "$A/checkpoints/$name/MANIFEST"
    set_aside="$set_aside $name"
    if [ "$k" = 1 ]; then
        expect_contains "abandoned: the unfinished ckpt-000090 is removed, said once" "$err" \
            "gorila: note: removed $A/checkpoints/ckpt-000090: an unfinished checkpoint (no MANIFEST)"
        check "abandoned: no ckpt-000090 left, nor kept as abandoned" \
            test ! -e "$A/checkpoints/ckpt-000090" -a ! -e "$A/checkpoints/abandoned-ckpt-000090"
        check "abandoned: the abandoned-* without a MANIFEST is removed" \
            test ! -e "$A/checkpoints/abandoned-ckpt-000080"
    fi
done
# shellcheck disable=SC2086
set -- $set_aside
expect_eq "abandoned: the two most recent are kept, the oldest ($1) removed" \
    "$(find "$A/checkpoints" -maxdepth 1 -name 'abandoned-*' -printf '%f\n' | sort | xargs)" "$(printf '%s\n' "$2" "$3" | sort | xargs)"
ab_run --resume "$A" --set run.max_env_steps=6000 --set checkpoint.keep_abandoned=0
expect_rc "abandoned: keep_abandoned 0" 0
expect_eq "abandoned: keep_abandoned 0 removes them all" "$(find "$A/checkpoints" -name 'abandoned-*' | wc -l)" 0

# A run.out_dir that is not a directory, or cannot be written, is a set-up
# fault: exit status 2 (GORILA_EXIT_USAGE, README "Exit statuses") with one
# line naming the key, not 8 (a log write failing mid-run).
: >"$RUNS/a-file"
for od in "$RUNS/a-file" "$RUNS/a-file/sub"; do
    run_cmd "$GORILA" train configs/local/cartpole.yaml --set run.out_dir="$od" --set logging.progress=never \
        --set run.max_env_steps=100
    expect_rc "run.out_dir $od: exit status 2" 2
    expect_eq "run.out_dir $od: one line naming the key" "$(grep -c '^gorila: error: run.out_dir: ' <<<"$err") $(wc -l <<<"$err")" "1 1"
done
expect_contains "run.out_dir a file: says so" "$err" "cannot create directory $RUNS/a-file/sub: Not a directory"
ro="$TEST_TMP/cli-faults-ro"
mkdir -p "$ro"
if unshare -m true 2>/dev/null; then
    run_cmd unshare -m sh -c 'mount --bind "$1" "$1" && mount -o remount,ro,bind "$1" && shift && exec "$@"' sh "$ro" \
        "$GORILA" train configs/local/cartpole.yaml --set run.out_dir="$ro" --set run.name=ro \
        --set logging.progress=never --set run.max_env_steps=100
    expect_rc "run.out_dir read-only: exit status 2" 2
    expect_eq "run.out_dir read-only: one line, with the reason" "$err" \
        "gorila: error: run.out_dir: cannot create run directory $ro/ro: Read-only file system"
else
    ok "run.out_dir read-only: exit status 2 # SKIP cannot create a mount namespace here (unshare -m)"
fi

# run.stop_deadline_seconds: > 0, a clear message otherwise.
run_cmd "$GORILA" config check configs/cartpole.yaml --set run.stop_deadline_seconds=2.5
expect_contains "stop deadline: a positive number is accepted" "$out" "stop_deadline_seconds: 2.5"
for v in 0 -1 nan x; do
    run_cmd "$GORILA" config check configs/cartpole.yaml --set run.stop_deadline_seconds=$v
    expect_rc "stop deadline $v: refused, exit status 2" 2
    expect_contains "stop deadline $v: says what is expected" "$err" "run.stop_deadline_seconds: expected a number in (0,"
done
run_cmd "$GORILA" config check configs/cartpole.yaml
expect_contains "stop deadline: default 10 s" "$out" "stop_deadline_seconds: 10"

done_testing
