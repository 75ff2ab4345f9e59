# SPDX-License-Identifier: MIT
# run-all: alone (an ordinary user made and removed for the test)
# Building on a cluster without root (docs/MULTIHOST.md): an ordinary user
# (made here with useradd, removed at the end) with libyaml and OpenBLAS in
# a prefix of their own (copies of this machine's: shared libraries,
# headers, .pc files rewritten for the prefix) builds a copy of the tree
# they own with `make gorila install PREFIX=...`, naming the compiler
# (MPICC=) and the .pc files (PKG_CONFIG_PATH= on make's command line),
# with RPATH=1, while pkg-config's own search path is hidden
# (PKG_CONFIG_LIBDIR: as on a machine without the -dev packages, and
# without Criterion). Checked: the installed binary resolves both
# libraries from the prefix (ldd) with no LD_LIBRARY_PATH; the install
# holds the scripts, tools, configs, docs and license (VERSION and
# CHANGELOG.md where the tree has them); a local train run and a
# distributed run through the installed scripts/launch work from it; a
# relink with BLAS_PREFIX= and YAML_PREFIX= instead of pkg-config
# resolves from the prefix too. Needs root (useradd, runuser): elsewhere
# a counted SKIP with the reason.
source "$(dirname "$0")/../lib.sh"
cd "$TEST_ROOT" || exit 1

skip_all() {
    ok "make gorila install as an ordinary user, libraries in a private prefix # SKIP $1"
    done_testing
    exit
}
missing=""
for c in useradd userdel runuser ldd tar; do command -v "$c" >/dev/null || missing+=" $c"; done
[ -z "$missing" ] || skip_all "not installed:$missing"
[ "$(id -u)" -eq 0 ] || skip_all "useradd needs root (an ordinary user is made for the build)"

# The libraries to copy: where this machine's pkg-config finds them.
blas_lib=$(pkg-config --variable=libdir openblas 2>/dev/null)
blas_inc=$(pkg-config --variable=includedir openblas 2>/dev/null)
yaml_lib=$(pkg-config --variable=libdir yaml-0.1 2>/dev/null)
yaml_inc=$(pkg-config --variable=includedir yaml-0.1 2>/dev/null)
if [ -z "$blas_lib" ] || [ -z "$yaml_lib" ]; then
    not_ok "pkg-config finds openblas and yaml-0.1 on this machine (scripts/install-deps.sh)"
    done_testing
    exit
fi

U="gorilatest$$"
D=$(mktemp -d /tmp/gorila-install.XXXXXX)
chmod 755 "$D"
H="$D/home"  # the user's home: the prefix, the tree, the install, the runs
P="$H/local" # libyaml and OpenBLAS
I="$H/opt/gorila"
made_user=0
cleanup() {
    local pids
    if [ $made_user -eq 1 ]; then
        # (everything below runs under timeout; whatever is still left of
        # the user's is ended by pid before the user goes)
        pids=$(pgrep -u "$U" | xargs)
        # shellcheck disable=SC2086 # pids, one word each
        [ -z "$pids" ] || kill -KILL $pids 2>/dev/null
        userdel "$U" 2>/dev/null
    fi
    rm -rf "$D"
}
trap cleanup EXIT
trap 'exit 143' TERM
trap 'exit 130' INT
if ! useradd -M -d "$H" -s /bin/bash -U "$U" 2>"$D/useradd.err"; then
    skip_all "useradd refused: $(head -1 "$D/useradd.err")"
fi
made_user=1

# The private prefix, as a source build of each would leave it.
mkdir -p "$H/bin" "$P/lib/pkgconfig" "$P/include" "$H/src" "$H/no-pc" "$H/runs"
cp -P "$blas_lib"/libopenblas*.so* "$yaml_lib"/libyaml*.so* "$P/lib/"
cp "$blas_inc"/*.h "$yaml_inc/yaml.h" "$P/include/"
cat >"$P/lib/pkgconfig/openblas.pc" <<EOF
prefix=$P
libdir=\${prefix}/lib
includedir=\${prefix}/include
Name: openblas
Description: OpenBLAS (copied for tests/mpi/install.sh)
Version: $(pkg-config --modversion openblas)
Libs: -L\${libdir} -lopenblas
Cflags: -I\${includedir}
EOF
cat >"$P/lib/pkgconfig/yaml-0.1.pc" <<EOF
prefix=$P
libdir=\${prefix}/lib
includedir=\${prefix}/include
Name: LibYAML
Description: libyaml (copied for tests/mpi/install.sh)
Version: $(pkg-config --modversion yaml-0.1)
Libs: -L\${libdir} -lyaml
Cflags: -I\${includedir}
EOF
# MPICC=: a wrapper that notes each call, so the test sees it was used.
cat >"$H/bin/mpicc-noted" <<EOF
#!/bin/sh
echo "\$*" >>"$H/mpicc-calls"
exec mpicc "\$@"
EOF
chmod 755 "$H/bin/mpicc-noted"
# A copy of the tree (no build output, no git), the user's own.
tar -C "$TEST_ROOT" --exclude=./build --exclude='./build-*' --exclude=./.git --exclude=./runs -cf - . |
    tar -C "$H/src" -xf -
chown -R "$U:$U" "$H"

# as_user SECONDS CMD...: CMD as the user, in the home directory, with a
# clean environment (nothing of root's: no GORILA, no PKG_CONFIG_PATH).
as_user() {
    local t=$1
    shift
    run_cmd runuser -u "$U" -- env -i HOME="$H" USER="$U" PATH=/usr/local/bin:/usr/bin:/bin LANG=C.UTF-8 \
        TMPDIR=/tmp timeout -k 5 "$t" env -C "$H" "$@"
}
# ldd_from LIB: where the installed binary's LIB comes from (ldd, no
# LD_LIBRARY_PATH)
ldd_from() { as_user 20 ldd "$1" && sed -n "s/^[[:space:]]*$2[^ ]* => \([^ ]*\) .*/\1/p" <<<"$out" | head -1; }

as_user 240 env PKG_CONFIG_LIBDIR="$H/no-pc" make -C src -j2 gorila install PREFIX="$I" \
    MPICC="$H/bin/mpicc-noted" PKG_CONFIG_PATH="$P/lib/pkgconfig" RPATH=1
expect_rc "make gorila install as $U (PKG_CONFIG_PATH on the command line, RPATH=1): exit 0" 0
[ "$rc" -eq 0 ] || echo "# $(tail -n 5 <<<"$err" | tr '\n' ' ')"
check "MPICC= compiled and linked it" grep -qs -- '-o build/gorila' "$H/mpicc-calls"
check "make gorila built no unit tests (no Criterion needed)" [ ! -e "$H/src/build/tests/unit" ]
check "installed: $I/bin/gorila" [ -x "$I/bin/gorila" ]
expect_eq "ldd: libyaml from the private prefix" "$(ldd_from "$I/bin/gorila" libyaml)" "$P/lib/libyaml-0.so.2"
expect_eq "ldd: libopenblas from the private prefix" "$(ldd_from "$I/bin/gorila" libopenblas)" "$P/lib/libopenblas.so.0"
S="$I/share/gorila"
for f in scripts/launch scripts/slurm/gorila.sbatch scripts/slurm/hostfile scripts/compare tools/compare/cli.py \
    configs/cartpole.yaml configs/local/cartpole.yaml docs/MULTIHOST.md LICENSE; do
    check "installed: share/gorila/$f" [ -f "$S/$f" ]
done
for f in VERSION CHANGELOG.md; do
    if [ -f "$TEST_ROOT/$f" ]; then check "installed: share/gorila/$f" cmp -s "$TEST_ROOT/$f" "$S/$f"; fi
done
# A binary built with MinAtar (GPL-3.0-or-later as a whole) comes with that
# licence's text and the port's attribution
if "$I/bin/gorila" version | grep -q '^license: GPL-3.0-or-later'; then
    check "installed: the GPL's text beside a GPL binary" cmp -s envs/minatar/COPYING "$S/licenses/minatar/COPYING"
    check "installed: MinAtar's attribution" grep -q "Kenny Young" "$S/licenses/minatar/README.md"
else
    check "an MIT binary installs no GPL text" [ ! -e "$S/licenses/minatar" ]
fi
check "installed scripts are executable" test -x "$S/scripts/launch" -a -x "$S/scripts/slurm/gorila.sbatch"
check "no test-only license installed" [ -z "$(find "$I" -name 'LICENSE-*' 2>/dev/null)" ]
expect_eq "the install's build/gorila is the installed binary" "$(readlink -f "$S/build/gorila")" "$I/bin/gorila"

as_user 60 "$I/bin/gorila" train "$S/configs/local/cartpole.yaml" --set run.max_env_steps=1500 \
    --set run.out_dir="$H/runs" --set run.name=local
expect_rc "the installed gorila trains (local run, as $U)" 0
check "local run: summary.json" [ -f "$H/runs/local/summary.json" ]
as_user 90 "$S/scripts/launch" "$S/configs/cartpole.yaml" --set run.max_env_steps=1500 \
    --set run.out_dir="$H/runs" --set run.name=dist
expect_rc "the installed scripts/launch runs a 5-rank job (as $U)" 0
[ "$rc" -eq 0 ] || echo "# $(tail -n 5 <<<"$err" | tr '\n' ' ')"
expect_contains "launch started the installed binary" "$err" " $S/build/gorila train "
check "distributed run: summary.json" [ -f "$H/runs/dist/summary.json" ]

# The prefixes instead of pkg-config (a relink: the objects are built).
rm -f "$H/src/build/gorila"
as_user 60 env PKG_CONFIG_LIBDIR="$H/no-pc" make -C src gorila BLAS_PREFIX="$P" YAML_PREFIX="$P" RPATH=1
expect_rc "make gorila BLAS_PREFIX= YAML_PREFIX= RPATH=1: exit 0" 0
expect_eq "BLAS_PREFIX: libopenblas from the prefix" "$(ldd_from "$H/src/build/gorila" libopenblas)" "$P/lib/libopenblas.so.0"
expect_eq "YAML_PREFIX: libyaml from the prefix" "$(ldd_from "$H/src/build/gorila" libyaml)" "$P/lib/libyaml-0.so.2"
# Neither found: one line that says what to give.
as_user 30 env PKG_CONFIG_LIBDIR="$H/no-pc" make -C src gorila
expect_contains "no openblas.pc: make says what to give" "$err" "OpenBLAS not found: pkg-config has no openblas.pc"
done_testing
