# SPDX-License-Identifier: MIT
# gorila version --json: one JSON object with the build, the platform and
# the names tools read instead of copying them from the C source
# (tools/compare/facts.py). Each name list is checked against the C source
# it comes from and against what the binary accepts, so that a field that
# goes missing or disagrees with the code fails here.
source "$(dirname "$0")/../lib.sh"
cd "$TEST_ROOT" || exit 1

run_cmd "$GORILA" version --json
expect_rc "version --json: exit 0" 0
json=$out
expect_eq "version --json: one line" "$(wc -l <<<"$json")" 1
# field KEY: the value of top-level KEY as JSON (lists and objects compact),
# or MISSING; the whole output must parse as one JSON object
field() {
    python3 -c 'import json, sys
v = json.loads(sys.argv[1])
assert isinstance(v, dict)
k = sys.argv[2]
print(json.dumps(v[k], separators=(",", ":")) if k in v else "MISSING")' "$json" "$1"
}
if field version >/dev/null; then ok "version --json: a JSON object"; else not_ok "version --json: a JSON object"; fi
# a C string list as a JSON array: '"a", "b", NULL' -> ["a","b"]
c_list() { sed 's/, *NULL//; s/ //g; s/^/[/; s/$/]/'; }

# The release: the VERSION file, which is CHANGELOG.md's top entry
release=$(cat VERSION)
check "VERSION holds one release number" grep -qxE '[0-9]+\.[0-9]+\.[0-9]+' VERSION
expect_eq "version: the VERSION file" "$(field version)" "\"$release\""
top=$(sed -n 's/^## \[\([^]]*\)\].*/\1/p' CHANGELOG.md | grep -vx Unreleased | head -1)
expect_eq "CHANGELOG.md's top release entry is VERSION" "$top" "$release"
expect_contains "gorila version: the release first" "$("$GORILA" version | head -1)" "gorila $release ("
# In a git checkout, the commit it was built from (`git describe`: a tag, or
# tag-N-gHASH, or HASH, and -dirty for uncommitted changes); outside one, null
if git rev-parse --git-dir >/dev/null 2>&1; then
    desc=$(field git_describe | tr -d '"')
    commit=$(sed 's/-dirty$//; s/.*-g\([0-9a-f]*\)$/\1/' <<<"$desc")
    check "git_describe names a commit of this checkout ($desc)" git cat-file -e "$commit^{commit}"
    expect_contains "gorila version: the checkout line" "$("$GORILA" version)" "checkout: $desc"
else
    expect_eq "git_describe: null outside a checkout" "$(field git_describe)" "null"
fi
# A build with MinAtar (make MINATAR=1, the default: `gorila env list` then
# lists the MinAtar/ ids) links envs/minatar, GPL-3.0-or-later, and is so as
# a whole; make MINATAR=0 builds an MIT-only binary.
if "$GORILA" env list | grep -q '^MinAtar/Breakout-v0 '; then
    expect_eq "license: GPL-3.0-or-later (a build with MinAtar, envs/minatar/COPYING)" "$(field license)" \
        '"GPL-3.0-or-later"'
else
    expect_eq "license: MIT (the root LICENSE; a build without MinAtar)" "$(field license)" '"MIT"'
fi
check "LICENSE is the MIT licence" grep -q "^MIT License" LICENSE
build=$("$GORILA" version | head -1)
expect_eq "build: the first line of gorila version" "$(field build)" "\"$build\""
expect_contains "source: the source id in the build" "$build" "(source $(field source | tr -d '"'))"
expect_eq "source: the id make computes for this tree (make source-id)" "$(field source | tr -d '"')" \
    "$(make -s --no-print-directory source-id 2>/dev/null)"
for k in cpu blas_kernel blas_config openblas_coretype; do
    check "platform has $k" python3 -c 'import json, sys; assert sys.argv[2] in json.loads(sys.argv[1])["platform"]' \
        "$json" "$k"
done
kernel=$(field platform | python3 -c 'import json, sys; print(json.load(sys.stdin)["blas_kernel"])')
expect_contains "platform: the kernel gorila version names" "$("$GORILA" version)" "; kernel $kernel"

bins=$(sed -n 's/^#define PROTO_STALENESS_BINS \([0-9][0-9]*\).*/\1/p' src/core/layout/proto.h)
check "PROTO_STALENESS_BINS found in src/core/layout/proto.h" [ -n "$bins" ]
expect_eq "staleness_bins: PROTO_STALENESS_BINS" "$(field staleness_bins)" "$bins"
seg=$(sed -n 's/^#define RING_SEGMENT \([0-9][0-9]*\).*/\1/p' src/mpi/allreduce.h)
check "RING_SEGMENT found in src/mpi/allreduce.h" [ -n "$seg" ]
expect_eq "allreduce_segment_floats: RING_SEGMENT" "$(field allreduce_segment_floats)" "$seg"

# sync.mode and sync.allreduce_impl: the config loader's tables, wherever
# in src/core they are, and the names the loader lists when it refuses one
# (a table may span lines: joined from its "{" to its "};")
table() {
    cat src/core/*/*.c | awk -v t="char *const $1[] = {" 'index($0, t) { on = 1 } on { printf "%s ", $0 } on && /};/ { exit }' |
        tr -s ' ' | sed -n 's/.*= {\(.*\)};.*/\1/p' | c_list
}
expect_eq "sync_modes: the sync_modes table of src/core" "$(field sync_modes)" "$(table sync_modes)"
expect_eq "allreduce_impls: the allreduce_impls table of src/core" "$(field allreduce_impls)" \
    "$(table allreduce_impls)"
refused() { # KEY=VALUE...: the names of the loader's "expected one of A, B, got" as a JSON array
    "$GORILA" config check configs/cartpole.yaml "${@/#/--set=}" 2>&1 |
        sed -n 's/.*expected one of \(.*\), got .*/"\1"/p' | sed 's/, /","/g; s/^/[/; s/$/]/'
}
expect_eq "sync_modes: what config check accepts" "$(field sync_modes)" "$(refused sync.mode=bogus)"
expect_eq "allreduce_impls: what config check accepts" "$(field allreduce_impls)" \
    "$(refused sync.mode=allreduce roles.param_servers=0 sync.allreduce_impl=bogus)"
# sync_mode_facts: what each mode asks of its layout, as config check
# enforces it: with its own facts a mode is taken; with a parameter server
# it says it uses none, or with fewer learners than its least, refused.
fact() { field sync_mode_facts | python3 -c 'import json, sys; print(json.load(sys.stdin)[sys.argv[1]][sys.argv[2]])' "$1" "$2"; }
for m in $(field sync_modes | tr -d '[]"' | tr , ' '); do
    ps=0
    [ "$(fact "$m" param_servers)" = True ] && ps=1
    least=$(fact "$m" min_learners)
    run_cmd "$GORILA" config check configs/cartpole.yaml --set sync.mode="$m" --set roles.param_servers=$ps \
        --set roles.learners="$least"
    expect_rc "sync_modes: config check takes sync.mode=$m with its facts ($ps PS, $least learners)" 0
    run_cmd "$GORILA" config check configs/cartpole.yaml --set sync.mode="$m" --set roles.param_servers=$((1 - ps)) \
        --set roles.learners=2
    if [ $ps = 0 ]; then
        expect_rc "sync_mode_facts: $m uses no parameter servers: refused with one" 2
    else
        expect_rc "sync_mode_facts: $m uses parameter servers: refused without (2 learners)" 2
    fi
    if [ "$least" -gt 1 ]; then
        run_cmd "$GORILA" config check configs/cartpole.yaml --set sync.mode="$m" --set roles.param_servers=$ps \
            --set roles.learners=$((least - 1))
        expect_rc "sync_mode_facts: $m with $((least - 1)) learner(s), below min_learners: refused" 2
    fi
    key=$(fact "$m" every_key)
    if [ "$key" != None ]; then
        run_cmd "$GORILA" config check configs/cartpole.yaml --set sync.mode="$m" --set roles.param_servers=$ps \
            --set roles.learners=2 --set "sync.$key=0"
        expect_contains "sync_mode_facts: $m's every_key sync.$key is its period (0 refused)" "$err" "sync.$key:"
    fi
done

# roles: the keys of summary.json's "roles" (src/mpi/jobsummary.c names
# them by role_name in the order of its roles[] array), in rank order
order=$(sed -n 's/.*Role roles\[N_ROLES\] = {\(.*\)};.*/\1/p' src/mpi/jobsummary.c | tr -d ' ' | tr , ' ')
names=""
for r in $order; do
    n=$(sed -n "s/.*\[$r\] = \"\([a-z]*\)\".*/\1/p" src/base/ctx.c)
    names="$names${names:+,}\"$n\""
done
names="[$names]"
check "the role names found in src/mpi/jobsummary.c and src/base/ctx.c" [ "$names" != "[]" ]
expect_eq "roles: summary.json's role keys" "$(field roles)" "$names"

run_cmd "$GORILA" version --json --kernels
expect_rc "version --json --kernels: usage error" 2
run_cmd "$GORILA" version --help
expect_contains "version --help names --json" "$out" "--json"
# A standard output that cannot be written (/dev/full: ENOSPC) is a failure,
# not a silent exit 0 with nothing written: one line naming it, exit 1
# (README "Exit statuses"). Likewise for a closed stdout (EBADF).
for c in "version --json" "version" "config check configs/local/cartpole.yaml --json" "env list" "help"; do
    read -r -a words <<<"$c"
    run_cmd "$GORILA" "${words[@]}"
    expect_rc "$c to a good stdout: exit 0" 0
    run_cmd sh -c '"$@" >/dev/full' sh "$GORILA" "${words[@]}"
    expect_rc "$c >/dev/full: exit 1" 1
    expect_contains "$c >/dev/full: says stdout failed" "$err" "writing to standard output failed: No space left on device"
    expect_eq "$c >/dev/full: one line on stderr" "$(wc -l <<<"$err")" 1
done
run_cmd sh -c '"$@" >&-' sh "$GORILA" env list
expect_rc "env list with stdout closed: exit 1" 1
expect_contains "env list with stdout closed: says so" "$err" "writing to standard output failed: Bad file descriptor"
done_testing
