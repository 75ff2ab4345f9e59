# SPDX-License-Identifier: MIT
# OpenBLAS kernels and reproducibility (docs/REPRODUCIBILITY.md):
# `gorila version` names the CPU and kernel, `--kernels` says which kernels
# this CPU can execute, run.blas_kernel pins one (twice the same run,
# recorded in summary.json; refused when the CPU lacks it), and the tables
# of docs/RESULTS.md and docs/PERFORMANCE.md say what they ran on.
source "$(dirname "$0")/../lib.sh"
cd "$TEST_ROOT" || exit 1
RUNS="$TEST_TMP/kernel-runs"
rm -rf "$RUNS"

# --- gorila version ---------------------------------------------------------
run_cmd "$GORILA" version
expect_rc "version: exit 0" 0
check "version: the CPU and the kernel in use" grep -qE '^CPU .+; OpenBLAS .+; kernel [A-Za-z0-9]+ \(' <<<"$out"
run_cmd env OPENBLAS_CORETYPE=Prescott "$GORILA" version
expect_contains "version: OPENBLAS_CORETYPE is shown and taken" "$out" "kernel Prescott (OPENBLAS_CORETYPE=Prescott)"

run_cmd "$GORILA" version --kernels
expect_rc "version --kernels: exit 0" 0
kernels=$out
for k in Prescott Nehalem Sandybridge Haswell Zen SkylakeX Cooperlake; do
    check "version --kernels lists $k" grep -qE "^$k (runs|lacks .+)$" <<<"$kernels"
done
# The table against the CPU flags read here: a kernel runs exactly when the
# CPU has every flag its instructions need (SSE3 is "pni" in cpuinfo).
flags=" $(grep -m1 '^flags' /proc/cpuinfo | cut -d: -f2) "
has() { local f; for f in "$@"; do [[ $flags == *" $f "* ]] || return 1; done; }
expect_runs() { # KERNEL FLAGS...
    local k=$1 want=lacks
    shift
    if has "$@"; then want=runs; fi
    check "version --kernels: $k $want on this CPU" grep -qE "^$k $want" <<<"$kernels"
}
expect_runs Prescott sse2 pni
expect_runs Sandybridge avx
expect_runs Haswell avx2 fma
expect_runs SkylakeX avx512f avx512cd avx512bw avx512dq avx512vl
expect_runs Cooperlake avx512f avx512bw avx512_bf16
expect_runs Bulldozer fma4 xop
run_cmd "$GORILA" version --bogus
expect_rc "version --bogus: usage error" 2

# --- run.blas_kernel --------------------------------------------------------
small=(configs/local/cartpole.yaml --set run.out_dir="$RUNS" --set run.max_env_steps=3000
    --set network.hidden=[16] --set eval.episodes=5 --set eval.every_updates=500 --set logging.progress=never)
# same_run WHAT RUN_A RUN_B: two local runs are the same run: their CSVs
# bit for bit but for the wall-clock column, and their final parameters
# (exported .npz) byte for byte.
same_run() {
    local what=$1 a=$2 b=$3 f col
    for f in episodes.csv eval.csv; do
        col=$(head -1 "$a/$f" | tr ',' '\n' | grep -nx wall_seconds | cut -d: -f1)
        check "$what: the same $f" cmp -s <(cut -d, -f"$col" --complement "$a/$f") <(cut -d, -f"$col" --complement "$b/$f")
    done
    "$GORILA" eval "$a" --episodes 1 --export "$a.npz" >/dev/null 2>&1
    "$GORILA" eval "$b" --episodes 1 --export "$b.npz" >/dev/null 2>&1
    check "$what: the same final parameters (exported .npz)" bash -c "[ -s '$a.npz' ] && cmp -s '$a.npz' '$b.npz'"
}
# A kernel this CPU runs, preferring one that is not OpenBLAS's own choice
# here, so that the restart with OPENBLAS_CORETYPE is exercised.
pin=""
for k in Sandybridge Nehalem Prescott; do
    if grep -q "^$k runs" <<<"$kernels"; then pin=$k; break; fi
done
if [ -z "$pin" ]; then
    ok "pinned kernel runs # SKIP this CPU runs none of Sandybridge, Nehalem, Prescott"
else
    for n in a b; do
        run_cmd env -u OPENBLAS_CORETYPE "$GORILA" train "${small[@]}" --set run.name="pin-$n" --set run.blas_kernel="$pin"
        expect_rc "run.blas_kernel $pin, run $n: exit 0" 0
    done
    A="$RUNS/pin-a" B="$RUNS/pin-b"
    kernel_of() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["platform"]["blas_kernel"])' "$1"; }
    expect_eq "summary.json records the pinned kernel" "$(kernel_of "$A/summary.json")" "$pin"
    expect_contains "config.yaml keeps the key (resume pins it too)" "$(cat "$A/config.yaml")" "blas_kernel: \"$pin\""
    same_run "pinned kernel twice" "$A" "$B"
fi
# An OPENBLAS_CORETYPE in the environment gives way to the config's kernel,
# with a note.
if [ -n "$pin" ]; then
    run_cmd env OPENBLAS_CORETYPE=Haswell "$GORILA" train "${small[@]}" --set run.name=pin-c --set run.blas_kernel="$pin"
    expect_rc "run.blas_kernel over OPENBLAS_CORETYPE: exit 0" 0
    expect_contains "run.blas_kernel over OPENBLAS_CORETYPE: says so" "$err" "run.blas_kernel $pin overrides"
    expect_eq "run.blas_kernel over OPENBLAS_CORETYPE: recorded" "$(kernel_of "$RUNS/pin-c/summary.json")" "$pin"
    # Started under another kernel, the pinned run is still the same run.
    same_run "pinned kernel from under OPENBLAS_CORETYPE=Haswell" "$A" "$RUNS/pin-c"
fi
lacking=$(grep -m1 ' lacks ' <<<"$kernels" | cut -d' ' -f1)
if [ -z "$lacking" ]; then
    ok "a kernel the CPU lacks is refused # SKIP this CPU runs every kernel of the table"
else
    run_cmd "$GORILA" train "${small[@]}" --set run.name=lacking --set run.blas_kernel="$lacking"
    expect_rc "run.blas_kernel $lacking (the CPU lacks it): exit 2" 2
    expect_contains "run.blas_kernel $lacking: names the kernel and the missing flags" "$err" \
        "this CPU cannot run OpenBLAS's $lacking kernel (it lacks"
    check "run.blas_kernel $lacking: nothing written" [ ! -e "$RUNS/lacking" ]
fi
run_cmd "$GORILA" config check configs/local/cartpole.yaml --set run.blas_kernel=Pentium9
expect_rc "run.blas_kernel: an unknown kernel is a config error" 2
expect_contains "run.blas_kernel: the error lists the kernels" "$err" "expected auto or an OpenBLAS kernel (Prescott"
run_cmd "$GORILA" config check configs/local/cartpole.yaml --set run.blas_kernel=Haswel
expect_contains "run.blas_kernel: a near miss gets a suggestion (CONFIG \"did you mean\")" "$err" \
    'got "Haswel" (did you mean "Haswell"?)'
run_cmd "$GORILA" config check configs/local/cartpole.yaml
expect_contains "run.blas_kernel: default auto" "$out" 'blas_kernel: "auto"'

# --- the docs' tables say what they ran on ----------------------------------
# Every section (a markdown heading) of RESULTS.md and PERFORMANCE.md that
# holds a table has a "Measured on:" line naming CPU and kernel, or saying
# that they were not recorded.
for doc in docs/RESULTS.md docs/PERFORMANCE.md; do
    missing=$(awk '
        /^#/ { if (table && !named) print sec; sec = $0; table = 0; named = 0; next }
        /^\|/ { table = 1 }
        /^Measured on: / { named = 1 }
        END { if (table && !named) print sec }' "$doc")
    check "$doc: every section with a table names its CPU and kernel${missing:+ (missing: ${missing//$'\n'/; })}" \
        [ -z "$missing" ]
    check "$doc: each Measured-on line names a kernel or says it was not recorded" \
        bash -c "! grep '^Measured on: ' '$doc' | grep -vE 'kernel|not recorded'"
done

done_testing
