# SPDX-License-Identifier: MIT
# tests/tb/reader.sh: the independent reader of TensorBoard event files for
# the TAP scripts (source after tests/lib.sh; tests/cli/tensorboard.sh,
# tests/mpi/tensorboard.sh). It compiles TensorBoard's protos (tests/tb/proto)
# with protoc into $TEST_TMP/tb-pb, never into the tree, and finds a Python
# that has the protobuf runtime (Debian's python3-protobuf lives in
# /usr/bin/python3's path, which another python3 first on PATH may lack).
#
#   read_events NAME KIND TARGET [ARGS...]: run tests/tb/read_events.py; each
#   PASS or FAIL line becomes one TAP line prefixed with NAME. A reader that
#   cannot run is one failure that says what to install.

TB_PB="$TEST_TMP/tb-pb"
TB_PY=""
tb_setup_err=""
for py in python3 /usr/bin/python3; do
    if command -v "$py" >/dev/null && "$py" -c 'import google.protobuf' 2>/dev/null; then
        TB_PY=$py
        break
    fi
done
if [ -z "$TB_PY" ]; then
    tb_setup_err="no python3 with the protobuf runtime (Debian: python3-protobuf; scripts/install-deps.sh)"
elif ! command -v protoc >/dev/null; then
    tb_setup_err="protoc not found (Debian: protobuf-compiler; scripts/install-deps.sh)"
else
    rm -rf "$TB_PB"
    mkdir -p "$TB_PB"
    if ! protoc -I "$TEST_ROOT/tests/tb/proto" --python_out="$TB_PB" \
        "$TEST_ROOT"/tests/tb/proto/tensorboard/compat/proto/*.proto 2>"$TEST_TMP/tb-protoc.err"; then
        tb_setup_err="protoc failed: $(head -c 300 "$TEST_TMP/tb-protoc.err")"
    fi
    # Regular packages, so that an installed tensorboard package cannot
    # shadow the generated modules.
    for d in tensorboard tensorboard/compat tensorboard/compat/proto; do
        [ -d "$TB_PB/$d" ] && touch "$TB_PB/$d/__init__.py"
    done
fi

read_events() {
    local name=$1 status what n=0
    shift
    if [ -n "$tb_setup_err" ]; then
        not_ok "$name: cannot read events: $tb_setup_err"
        return
    fi
    while IFS=$'\t' read -r status what; do
        case $status in
        PASS) ok "$name: $what" ;;
        FAIL) not_ok "$name: $what" ;;
        *) echo "# $status${what:+ $what}" ;;
        esac
        n=$((n + 1))
    done < <("$TB_PY" "$TEST_ROOT/tests/tb/read_events.py" "$TB_PB" "$@" 2>&1)
    [ "$n" -gt 0 ] || not_ok "$name: read_events.py reported nothing"
}
