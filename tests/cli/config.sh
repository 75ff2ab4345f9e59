#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/cli/config.sh: `gorila config check` (src/cli/cmd_config.c).
. "$(dirname "$0")/../lib.sh"

# A good config with an uneven layout: 1 + 3 + 2 + 2 + 3 = 11 ranks.
run_cmd "$GORILA" config check configs/cartpole.yaml --set roles.actors=3 --set roles.replay_shards=2 \
    --set roles.learners=2 --set roles.param_servers=3
expect_rc "check: valid config exits 0" 0
expect_eq "check: nothing on stderr" "$err" ""
expect_eq "check: last line is the rank count" "$(tail -n 1 <<<"$out")" "ranks: 11"
layout=$(sed -n '/^rank  role/,/^ranks:/p' <<<"$out")
want="rank  role         index
   0  coordinator  0/1
   1  actor        0/3
   2  actor        1/3
   3  actor        2/3
   4  replay       0/2
   5  replay       1/2
   6  learner      0/2
   7  learner      1/2
   8  ps           0/3
   9  ps           1/3
  10  ps           2/3
ranks: 11"
expect_eq "check: one layout row per rank, in role order" "$layout" "$want"
expect_contains "check: prints the effective config" "$out" "  name: \"cartpole\""
expect_contains "check: overrides show in the config" "$out" "  actors: 3"

# The printed config is itself a valid config that gives the same output.
sed -n '1,/^$/p' <<<"$out" >"$TEST_TMP/cartpole.yaml"
first=$out
run_cmd "$GORILA" config check "$TEST_TMP/cartpole.yaml"
expect_rc "check: its own output loads back" 0
# The memory plan's last line reads MemAvailable, which moves between two
# calls: the rest must be the same, byte for byte.
live() { grep -v ' usable (90% of MemAvailable ' <<<"$1"; }
expect_eq "check: and prints the same again (but the machine's free memory)" "$(live "$out")" "$(live "$first")"
check "check: the machine's memory is the only line left out" \
    test "$(($(wc -l <<<"$first") - $(live "$first" | wc -l)))" -eq 1

# A local run needs one rank.
run_cmd "$GORILA" config check configs/local/pendulum.yaml
expect_rc "check: local config exits 0" 0
expect_eq "check: local run is one rank" "$(sed -n '/^rank  role/,$p' <<<"$out")" "rank  role         index
   0  local        0/1
ranks: 1"
expect_contains "check: pendulum torques printed" "$out" "  torques: [-2, -1, 0, 1, 2]"

# --set, in both spellings, with a flow sequence and a switch to allreduce.
run_cmd "$GORILA" config check configs/acrobot.yaml --set 'network.hidden=[128,128]' \
    --set=sync.mode=allreduce --set roles.param_servers=0 --set roles.learners=4
expect_rc "--set: valid overrides exit 0" 0
expect_contains "--set: list value" "$out" "  hidden: [128, 128]"
expect_contains "--set: --set=k=v spelling" "$out" "  mode: allreduce"
expect_eq "--set: allreduce layout has no ps" "$(tail -n 1 <<<"$out")" "ranks: 7"

# --json: one JSON object {"config": {...}, "ranks": N} with every section
# and key of the YAML printout, in its order and with the same values. The
# YAML side is read here in Python, not by gorila, so the two printers are
# checked against each other and not against themselves.
json_vs_yaml() {
    python3 -c '
import json, re, sys
yaml_text, json_text = open(sys.argv[1]).read(), open(sys.argv[2]).read()
def value(v):
    if v in ("true", "false"): return v == "true"
    if v.startswith("\""):   # quoted string: JSON escapes plus \xNN and \UNNNNNNNN
        v = re.sub(r"\\x([0-9a-f]{2})", r"\\u00\1", v)
        return json.loads(re.sub(r"\\U([0-9a-f]{8})", lambda m: chr(int(m.group(1), 16)), v))
    if v == "[]": return []
    if v.startswith("[{"):   # network.conv: a flow list of flow mappings of integers
        return [{k: int(n) for k, n in re.findall(r"([a-z_]+): (-?[0-9]+)", m)} for m in re.findall(r"\{([^}]*)\}", v)]
    if v.startswith("["): return [value(e.strip()) for e in v[1:-1].split(",")]
    if re.fullmatch(r"-?[0-9]+", v): return int(v)
    try: return float(v)
    except ValueError: return v   # the name of a choice
yaml_cfg, ranks = {}, None
for line in yaml_text.splitlines():
    if m := re.fullmatch(r"([a-z_]+):", line): sec = yaml_cfg.setdefault(m.group(1), {})
    elif m := re.fullmatch(r"  ([a-z_0-9]+): (.*)", line): sec[m.group(1)] = value(m.group(2))
    elif m := re.fullmatch(r"ranks: ([0-9]+)", line): ranks = int(m.group(1))
    elif line == "": sec = None   # the memory plan and the layout follow
doc = json.loads(json_text)
assert list(doc) == ["config", "ranks", "n_params"], list(doc)
assert type(doc["n_params"]) is int and doc["n_params"] > 0, doc["n_params"]
assert doc["ranks"] == ranks and type(doc["ranks"]) is int, (doc["ranks"], ranks)
cfg = doc["config"]
assert list(cfg) == list(yaml_cfg), (list(cfg), list(yaml_cfg))
def same(a, b):   # equal, and a boolean only where the other is one too
    if isinstance(a, list): return isinstance(b, list) and len(a) == len(b) and all(map(same, a, b))
    if isinstance(a, dict): return isinstance(b, dict) and list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, bool) or isinstance(b, bool): return a is b
    if isinstance(a, str) or isinstance(b, str): return a == b
    return type(a) in (int, float) and type(b) in (int, float) and a == b
n = 0
for s in yaml_cfg:
    assert list(cfg[s]) == list(yaml_cfg[s]), (s, list(cfg[s]), list(yaml_cfg[s]))
    for k in yaml_cfg[s]:
        assert same(cfg[s][k], yaml_cfg[s][k]), (s + "." + k, cfg[s][k], yaml_cfg[s][k])
        n += 1
print(n, "keys,", ranks, "ranks")
' "$1" "$2" 2>&1
}
# json_check NAME WANT ARGS...: config check ARGS with and without --json agree.
json_check() {
    local name=$1 want=$2
    shift 2
    run_cmd "$GORILA" config check "$@"
    printf '%s\n' "$out" >"$TEST_TMP/config-check.yaml"
    run_cmd "$GORILA" config check "$@" --json
    expect_rc "--json $name: exits 0" 0
    expect_eq "--json $name: nothing on stderr" "$err" ""
    printf '%s\n' "$out" >"$TEST_TMP/config-check.json"
    expect_eq "--json $name: parses, same keys and values as the YAML" \
        "$(json_vs_yaml "$TEST_TMP/config-check.yaml" "$TEST_TMP/config-check.json")" "$want"
}
if command -v python3 >/dev/null; then
    json_check "an uneven job" "98 keys, 11 ranks" configs/cartpole.yaml --set roles.actors=3 \
        --set roles.replay_shards=2 --set roles.learners=2 --set roles.param_servers=3
    json_check "pendulum (torques, a list of numbers)" "99 keys, 1 ranks" configs/local/pendulum.yaml
    json_check "--set list, strings with escapes" "98 keys, 7 ranks" configs/acrobot.yaml \
        --set 'network.hidden=[128,128]' --set sync.mode=allreduce --set roles.param_servers=0 \
        --set roles.learners=4 --set 'run.out_dir="dir \"quoted\" \\ é"' --set run.seed=18446744073709551615
    run_cmd "$GORILA" config check configs/cartpole.yaml --json --set replay.min_size=2 --set replay.batch_size=2
    expect_eq "--json: the values are typed (numbers, booleans, strings, arrays)" "$(python3 -c '
import json, sys
c = json.load(sys.stdin)["config"]
print(c["run"]["name"], c["run"]["seed"], c["run"]["stop_when_solved"], c["sync"]["mode"], c["network"]["hidden"],
      c["replay"]["min_size"], c["optimizer"]["eps"], type(c["agent"]["gamma"]).__name__)' <<<"$out" 2>&1)" \
        "cartpole 1 True ps_sync [64, 64] 2 1e-08 float"
    # n_params: the Q-network's parameter count, by hand: 4 inputs, hidden
    # [64, 64], 2 actions: (4*64 + 64) + (64*64 + 64) + (64*2 + 2) = 4610;
    # hidden [1024, 1024]: 5120 + 1049600 + 2050 = 1056770.
    expect_eq "--json: n_params of CartPole's 4-64-64-2 network" \
        "$(python3 -c 'import json, sys; print(json.load(sys.stdin)["n_params"])' <<<"$out" 2>&1)" 4610
    run_cmd "$GORILA" config check configs/cartpole.yaml --json --set 'network.hidden=[1024,1024]'
    expect_eq "--json: n_params follows network.hidden" \
        "$(python3 -c 'import json, sys; print(json.load(sys.stdin)["n_params"])' <<<"$out" 2>&1)" 1056770
    # A run directory's config.yaml (written by train) works the same.
    jruns="$TEST_TMP/config-json-runs"
    rm -rf "$jruns"
    run_cmd "$GORILA" train configs/local/cartpole.yaml --set run.out_dir="$jruns" --set run.name=cj \
        --set run.max_env_steps=200 --set logging.progress=never
    expect_rc "--json: a short run for its config.yaml" 0
    json_check "a run directory's config.yaml" "98 keys, 1 ranks" "$jruns/cj/config.yaml"
    rm -rf "$jruns"
else
    not_ok "config check --json: python3 not found (scripts/install-deps.sh installs it)"
fi
# A bad config with --json: the same one line on stderr, exit 2, no JSON.
run_cmd "$GORILA" config check tests/fixtures/bad_configs/unknown_key_suggest.yaml --json
expect_rc "--json: a bad config exits 2" 2
expect_eq "--json: a bad config's message" "$err" \
    "gorila: error: tests/fixtures/bad_configs/unknown_key_suggest.yaml:4:3: roles.lerners: unknown key (did you mean \"learners\"?)"
expect_eq "--json: a bad config prints nothing on stdout" "$out" ""
run_cmd "$GORILA" config check configs/cartpole.yaml --json --set roles.actors=0
expect_rc "--json: a bad --set exits 2" 2
expect_eq "--json: a bad --set's message" "$err" \
    "gorila: error: --set roles.actors=0: roles.actors: expected an integer in [1, 1024], got 0"
run_cmd env GORILA_MEM_LIMIT=1G "$GORILA" config check configs/local/cartpole.yaml --set replay.capacity=50000000 --json
expect_rc "--json: a config too large for the machine exits 2" 2
expect_contains "--json: and says so" "$err" "gorila: error: replay.capacity: 50000000 needs 2.0 GiB"
run_cmd "$GORILA" config place configs/cartpole.yaml --hosts a:8 --json
expect_rc "--json is config check's only" 2

# Each kind of bad argument: exit 2, one clear line on stderr, nothing on stdout.
bad_args() {
    local name=$1 want=$2
    shift 2
    run_cmd "$GORILA" "$@"
    expect_rc "$name: exits 2" 2
    expect_eq "$name: message" "$err" "gorila: error: $want"
    expect_eq "$name: nothing on stdout" "$out" ""
}
bad_args "no subcommand" "config: expected a subcommand: check or place" config
bad_args "unknown subcommand" "config: unknown subcommand \"chek\" (expected check or place)" config chek configs/cartpole.yaml
bad_args "missing FILE" "config check: missing FILE (see gorila config check --help)" config check
bad_args "unknown flag" "config check: unknown option \"--frobnicate\" (see gorila config check --help)" \
    config check configs/cartpole.yaml --frobnicate
bad_args "--set without value" "config check: --set needs a key.path=value argument" \
    config check configs/cartpole.yaml --set
bad_args "two files" "config check: expected one FILE, got \"configs/cartpole.yaml\" and \"configs/acrobot.yaml\"" \
    config check configs/cartpole.yaml configs/acrobot.yaml
# sync.lr_scaling and sync.lr_warmup_updates (docs/CONFIG.md): an unknown
# rule, scaling where each gradient is applied alone, a warm-up with nothing
# to ramp to, a negative warm-up.
bad_args "sync.lr_scaling unknown" \
    "--set sync.lr_scaling=cubic: sync.lr_scaling: expected one of none, linear, sqrt, got \"cubic\"" \
    config check configs/cartpole.yaml --set sync.lr_scaling=cubic
bad_args "sync.lr_scaling in ps_async" \
    "--set sync.lr_scaling=linear: sync.lr_scaling: sync.lr_scaling linear (from --set) scales the rate where the learners' gradients or parameters are averaged (ps_sync, allreduce, gossip, easgd, local_sgd), but sync.mode ps_async (from --set) applies each gradient alone; use sync.lr_scaling: none" \
    config check configs/cartpole.yaml --set sync.mode=ps_async --set sync.lr_scaling=linear
bad_args "sync.lr_warmup_updates without scaling" \
    "--set sync.lr_warmup_updates=10: sync.lr_warmup_updates: sync.lr_warmup_updates (10, from --set) ramps the rate up to the scaled one, but sync.lr_scaling is none (the default); set sync.lr_scaling: linear or sqrt, or sync.lr_warmup_updates: 0" \
    config check configs/cartpole.yaml --set sync.lr_warmup_updates=10
bad_args "sync.lr_warmup_updates negative" \
    "--set sync.lr_warmup_updates=-1: sync.lr_warmup_updates: expected an integer in [0, 100000000], got -1" \
    config check configs/cartpole.yaml --set sync.lr_warmup_updates=-1
run_cmd "$GORILA" config check configs/cartpole.yaml --set roles.learners=2 --set sync.lr_scaling=sqrt \
    --set sync.lr_warmup_updates=500
expect_rc "sync.lr_scaling sqrt with a warm-up in ps_sync: valid" 0
# A sync mode's own key under another mode would be ignored silently: one
# line, exit 2 (unless at its default); under its mode it is taken.
bad_args "sync.gossip_every in ps_sync" \
    "--set sync.gossip_every=7: sync.gossip_every: sync.gossip_every applies to sync.mode gossip only, but sync.mode is ps_sync (from --set), which ignores it; set sync.mode: gossip, or remove sync.gossip_every" \
    config check configs/cartpole.yaml --set sync.mode=ps_sync --set sync.gossip_every=7
bad_args "sync.staleness in ps_async" \
    "--set sync.staleness=9: sync.staleness: sync.staleness applies to sync.mode ps_bounded only, but sync.mode is ps_async (from --set), which ignores it; set sync.mode: ps_bounded, or remove sync.staleness" \
    config check configs/cartpole.yaml --set sync.mode=ps_async --set sync.staleness=9
run_cmd "$GORILA" config check configs/cartpole.yaml --set sync.mode=ps_sync --set sync.gossip_every=4
expect_rc "sync.gossip_every at its default in ps_sync: valid" 0
run_cmd "$GORILA" config check configs/cartpole.yaml --set sync.mode=gossip --set roles.learners=2 \
    --set roles.param_servers=0 --set sync.gossip_every=7
expect_rc "sync.gossip_every in gossip: valid" 0
# learner.batch global: built for allreduce with uniform replay and a batch
# the learners divide; anything else is one line and exit 2.
for case in "sync.mode ps_sync|is built for sync.mode allreduce|--set learner.batch=global --set roles.learners=2" \
    "3 learners, batch 64|which does not divide it|--set learner.batch=global --set sync.mode=allreduce --set roles.param_servers=0 --set roles.learners=3" \
    "prioritized replay|normalizes importance weights per batch|--set learner.batch=global --set sync.mode=allreduce --set roles.param_servers=0 --set roles.learners=2 --set replay.kind=prioritized" \
    "with rate scaling|use one of the two|--set learner.batch=global --set sync.mode=allreduce --set roles.param_servers=0 --set roles.learners=2 --set sync.lr_scaling=linear" \
    "unknown value|expected one of per_learner, global, got \"everyone\"|--set learner.batch=everyone"; do
    IFS='|' read -r what want args <<<"$case"
    # shellcheck disable=SC2086 # the options, split on purpose
    run_cmd "$GORILA" config check configs/cartpole.yaml $args
    expect_rc "learner.batch global refused ($what): exit status 2" 2
    expect_contains "learner.batch global refused ($what): says why" "$err" "$want"
    expect_eq "learner.batch global refused ($what): one line" "$(wc -l <<<"$err")" 1
done
run_cmd "$GORILA" config check configs/cartpole.yaml --set learner.batch=global --set sync.mode=allreduce \
    --set roles.param_servers=0 --set roles.learners=2
expect_rc "learner.batch global, allreduce, 2 learners, batch 64: valid" 0
bad_args "missing file" "nope.yaml: cannot open config: No such file or directory" config check nope.yaml
bad_args "directory" "configs: expected a YAML file, got a directory" config check configs
# run.out_dir: up to 767 bytes (PATH_LEN 1024 less 257 for the run name and
# the files below it), no more.
long767=$(printf 'd%.0s' $(seq 767))
run_cmd "$GORILA" config check configs/cartpole.yaml --set "run.out_dir=$long767"
expect_rc "run.out_dir of 767 bytes is accepted" 0
run_cmd "$GORILA" config check configs/cartpole.yaml --set "run.out_dir=${long767}d"
expect_rc "run.out_dir of 768 bytes is refused" 2
expect_contains "run.out_dir limit message" "$err" "expected a directory path of 1 to 767 bytes"
# Files that are not regular are refused at once (reading a FIFO would block).
fifo="$TEST_TMP/config-fifo.yaml"
rm -f "$fifo"
mkfifo "$fifo"
run_cmd timeout 10 "$GORILA" config check "$fifo"
expect_rc "FIFO: exits 2 at once (no blocking read)" 2
expect_eq "FIFO: message" "$err" "gorila: error: $fifo: expected a regular YAML file, got a FIFO"
rm -f "$fifo"
bad_args "device" "/dev/null: expected a regular YAML file, got a device" config check /dev/null

# A bad file: its one error line on stderr, exit 2.
bad_args "bad file" \
    "tests/fixtures/bad_configs/unknown_key_suggest.yaml:4:3: roles.lerners: unknown key (did you mean \"learners\"?)" \
    config check tests/fixtures/bad_configs/unknown_key_suggest.yaml
bad_args "bad combination" \
    "tests/fixtures/bad_configs/combo_capacity_shards.yaml:4:3: replay.capacity: replay.capacity (1000) must be at least roles.replay_shards * replay.batch_size (8 * 128 = 1024): every shard must hold a full batch" \
    config check tests/fixtures/bad_configs/combo_capacity_shards.yaml
bad_args "bad --set" "--set roles.actors=0: roles.actors: expected an integer in [1, 1024], got 0" \
    config check configs/cartpole.yaml --set roles.actors=0
bad_args "--set of a section" "--set run=5: run: unknown key (\"run\" is a section, not a key: --set run.KEY=VALUE; valid keys: name, out_dir, seed, mode, max_env_steps, max_updates, max_seconds, stop_deadline_seconds, stop_when_solved, blas_threads, blas_kernel, wait, pin_cores)" \
    config check configs/cartpole.yaml --set run=5
bad_args "unknown --set key" "--set roles.lerners=2: roles.lerners: unknown key (did you mean \"roles.learners\"?)" \
    config check configs/cartpole.yaml --set roles.lerners=2
# run.name left out comes from the file name's stem; a file named .yaml has
# none (it named the run ".yaml", a hidden directory), nor has .x.yaml.
grep -v '^ *name:' configs/local/cartpole.yaml >"$TEST_TMP/.yaml"
bad_args "a config named .yaml without run.name" \
    "$TEST_TMP/.yaml: run.name: the file name \".yaml\" has no stem to name the run after; set run.name" \
    config check "$TEST_TMP/.yaml"
run_cmd "$GORILA" config check "$TEST_TMP/.yaml" --set run.name=ok
expect_rc "a config named .yaml with run.name: accepted" 0
bad_args "--set key in the wrong case" "--set RUN.SEED=2: RUN.SEED: unknown key (did you mean \"run.seed\"?)" \
    config check configs/cartpole.yaml --set RUN.SEED=2
bad_args "--set without =" "--set roles.actors: expected KEY.PATH=VALUE, e.g. --set roles.actors=4" \
    config check configs/cartpole.yaml --set roles.actors

# The Ape-X configs (configs/apex/): 4 actors with Ape-X epsilons, 3-step
# returns, prioritized replay in 2 shards, 1 learner, 1 PS = 9 ranks. All but
# the prioritized replay is checked now, on a copy with replay.kind uniform
# and the prioritized keys removed; then the configs as they are.
apex_uniform() {
    sed -e 's/^  kind: prioritized /  kind: uniform /' \
        -e '/^  \(alpha\|beta\|beta_final\|beta_steps\|priority_eps\|initial_priority\):/d' "$1"
}
# effective SECTION KEY: the value of SECTION.KEY in the config check output $out.
effective() {
    awk -v sec="$1:" -v key="  $2: " '$0 == sec { in_sec = 1; next } /^[a-z]/ { in_sec = 0 }
        in_sec && index($0, key) == 1 { print substr($0, length(key) + 1); exit }' <<<"$out"
}
# file_key SECTION KEY: the value of SECTION.KEY as written in the file $f.
file_key() {
    awk -v sec="$1:" -v key="  $2:" '$0 == sec { in_sec = 1; next } /^[a-z]/ { in_sec = 0 }
        in_sec && index($0, key) == 1 { print $2; exit }' "$f"
}
apex_layout="rank  role         index
   0  coordinator  0/1
   1  actor        0/4
   2  actor        1/4
   3  actor        2/4
   4  actor        3/4
   5  replay       0/2
   6  replay       1/2
   7  learner      0/1
   8  ps           0/1
ranks: 9"
for f in configs/apex/cartpole.yaml configs/apex/acrobot.yaml configs/apex/mountaincar.yaml; do
    name=apex/$(basename "$f" .yaml)
    apex_uniform "$f" >"$TEST_TMP/apex-uniform.yaml"
    run_cmd "$GORILA" config check "$TEST_TMP/apex-uniform.yaml"
    expect_rc "$name (uniform copy): valid" 0
    expect_eq "$name (uniform copy): 4 actors, 2 shards, 1 learner, 1 ps" "$(sed -n '/^rank  role/,$p' <<<"$out")" \
        "$apex_layout"
    expect_eq "$name: Ape-X epsilons 0.4^(1 + 7 i / 3)" \
        "$(effective explore kind) $(effective explore apex_eps) $(effective explore apex_alpha)" "apex 0.4 7"
    expect_eq "$name: 3-step returns" "$(effective agent n_step)" 3
    expect_eq "$name: distributed, ps_sync" "$(effective run mode) $(effective sync mode)" "distributed ps_sync"
    # beta anneals over the run's expected updates: the env steps after
    # min_size times the replay ratio's updates per env step.
    want=$((($(effective run max_env_steps) - $(effective replay min_size)) * $(effective agent gradient_steps) /
        $(effective agent train_every)))
    expect_eq "$name: beta_steps = expected updates ($want)" "$(file_key replay beta_steps)" "$want"
    expect_eq "$name: prioritized, alpha 0.6, beta 0.4 -> 1, actor priorities" \
        "$(file_key replay kind) $(file_key replay alpha) $(file_key replay beta) $(file_key replay beta_final) $(file_key replay initial_priority)" \
        "prioritized 0.6 0.4 1 actor"
    # The config as it is (needs replay.kind prioritized to be allowed).
    run_cmd "$GORILA" config check "$f"
    expect_rc "$name: valid as is" 0
    expect_eq "$name: as is: 9 ranks" "$(tail -n 1 <<<"$out")" "ranks: 9"
    expect_eq "$name: as is: prioritized replay settings" \
        "$(effective replay kind) $(effective replay alpha) $(effective replay beta) $(effective replay beta_final) $(effective replay beta_steps) $(effective replay initial_priority)" \
        "prioritized 0.6 0.4 1 $want actor"
done

# docs/CONFIG.md documents every key config check prints (pendulum has them all).
run_cmd "$GORILA" config check configs/pendulum.yaml
undocumented=$(awk '/^[a-z_]+:$/ { sec = substr($1, 1, length($1) - 1) } /^  [a-z_0-9]+:/ { print sec "." substr($1, 1, length($1) - 1) }' <<<"$out" |
    while read -r key; do grep -qF "\`$key\`" docs/CONFIG.md || echo "$key"; done)
expect_eq "every key is in docs/CONFIG.md" "$undocumented" ""
# ... and lists every key docs/CONFIG.md documents (one table row each).
keys=$(grep -c '^  [a-z_0-9]*:' <<<"$out")
# env.kwargs is printed for a Python environment only: one documented key fewer.
documented=$(($(grep -cE '^\| `[a-z_]+\.[a-z_0-9]+` \|' docs/CONFIG.md) - 1))
expect_eq "pendulum's effective config lists all $documented documented keys" "$keys" "$documented"

run_cmd "$GORILA" config check --help
expect_rc "--help exits 0" 0
expect_contains "--help shows usage" "$out" "usage: gorila config check FILE"

# config place: the host of each rank (docs/MULTIHOST.md); the placement
# itself is unit-tested (test_placement.c, placement_nodes).
run_cmd "$GORILA" config place configs/cartpole.yaml --hosts a:2,b:2,c:2
expect_rc "config place: exit 0" 0
expect_eq "config place: one line per rank, learner with its PS on a, replay with its actor on b" \
    "$(awk 'NR > 1 { print $1, $2, $4 }' <<<"$out" | xargs)" "0 coordinator c 1 actor b 2 replay b 3 learner a 4 ps a"
run_cmd "$GORILA" config place configs/cartpole.yaml --set roles.learners=2 --set roles.param_servers=2 \
    --hosts a:3,b:3,c:3,d:3,e:3,f:3 --spread
expect_rc "config place --spread: exit 0" 0
expect_eq "config place --spread: learners, then PS shards, each on a host of its own, then replay with its actor" \
    "$(awk 'NR > 1 { printf "%s%s=%s", (n++ ? " " : ""), $2 $3, $4 }' <<<"$out")" \
    "coordinator0/1=f actor0/1=e replay0/1=e learner0/2=a learner1/2=b ps0/2=c ps1/2=d"
run_cmd "$GORILA" config place configs/cartpole.yaml --hosts a:2,b:2 --spread
expect_rc "config place --spread: too few slots: exit 2" 2
expect_contains "config place --spread: says so" "$err" "the hosts have 4 slots for the job's 5 ranks"
run_cmd "$GORILA" config place configs/cartpole.yaml --hosts a:2,b:2
expect_rc "config place: too few slots: exit 2" 2
expect_contains "config place: says so" "$err" "the hosts have 4 slots for the job's 5 ranks"
run_cmd "$GORILA" config place configs/cartpole.yaml --hosts a:2,b:2 --oversubscribe
expect_rc "config place --oversubscribe: exit 0" 0
for bad in "a" "a:x" ":3" "a:2,,b:1" "a:-1" "a: 5" "a:+5" "a:5 " "a b:5"; do
    run_cmd "$GORILA" config place configs/cartpole.yaml --hosts "$bad"
    expect_rc "config place --hosts '$bad': exit 2 (as scripts/launch refuses it)" 2
done
# A host named twice adds up its slots, as in scripts/launch (docs/MULTIHOST.md
# "Hostfiles"): the same placement as one entry with the sum.
run_cmd "$GORILA" config place configs/cartpole.yaml --hosts a:2,b:1,a:1,b:1
expect_rc "config place: a host named twice: exit 0" 0
twice=$out
run_cmd "$GORILA" config place configs/cartpole.yaml --hosts a:3,b:2
expect_eq "config place: a host named twice adds up its slots" "$twice" "$out"
run_cmd "$GORILA" config place configs/cartpole.yaml
expect_contains "config place without --hosts: usage error" "$err" "missing --hosts"
run_cmd "$GORILA" config place configs/local/cartpole.yaml --hosts a:4
expect_contains "config place: a local config has no ranks to place" "$err" "runs in one process"

# The memory plan (docs/CONFIG.md "Memory plan", src/core/layout/memplan.h): what
# each rank allocates, per role; a job whose ranks do not fit this machine is
# refused by config check and by train before anything is allocated, naming
# the key behind the largest part. GORILA_MEM_LIMIT stands in for this
# machine's memory, so the verdicts do not depend on the machine under test.
run_cmd "$GORILA" config check configs/cartpole.yaml --set roles.actors=3 --set roles.replay_shards=2 \
    --set roles.learners=2 --set roles.param_servers=3
plan=$(sed -n '/^memory plan/,/^$/p' <<<"$out")
expect_eq "plan: one line per role, in rank order" "$(grep -E '^  [a-z]+ +[0-9]+ rank' <<<"$plan" | awk '{ print $1, $2 }' | xargs)" \
    "coordinator 1 actor 3 replay 2 learner 2 ps 3"
# 100000 transitions over 2 shards: 50000 rows of 2 * 4 * 4 + 12 bytes each.
expect_eq "plan: a replay shard's storage" "$(grep -E '^      replay storage ' <<<"$plan" | awk '{ print $3, $4, $5 }')" \
    "2.1 MiB replay.capacity"
expect_contains "plan: the machine line" "$plan" "  on one machine: 11 ranks, "

# GORILA_MEM_LIMIT set but empty is unset (the machine's own memory), not
# an error; a value in none of the documented forms (1e3) is refused.
run_cmd env GORILA_MEM_LIMIT= "$GORILA" config check configs/local/cartpole.yaml
expect_rc "GORILA_MEM_LIMIT empty: as if unset, exit 0" 0
expect_contains "GORILA_MEM_LIMIT empty: the machine's memory is used" "$out" "usable (90% of Mem"
run_cmd env GORILA_MEM_LIMIT=1e3 "$GORILA" config check configs/local/cartpole.yaml
expect_rc "GORILA_MEM_LIMIT=1e3: refused (exit 2)" 2
expect_contains "GORILA_MEM_LIMIT=1e3: says so" "$err" 'GORILA_MEM_LIMIT: expected a size such as 512M or 16G, got "1e3"'
memruns="$TEST_TMP/memplan-runs"
rm -rf "$memruns"
want="replay.capacity: 50000000 needs 2.0 GiB in the local trainer (replay storage), 2.1 GiB in all, and this machine has 921.6 MiB usable (90% of GORILA_MEM_LIMIT 1.0 GiB): lower replay.capacity"
run_cmd env GORILA_MEM_LIMIT=1G "$GORILA" config check configs/local/cartpole.yaml --set replay.capacity=50000000
expect_rc "memory: a local run too large for the machine: config check exits 2" 2
expect_eq "memory: names the key, its value and the machine" "$err" "gorila: error: $want"
expect_eq "memory: nothing on stdout" "$out" ""
run_cmd env GORILA_MEM_LIMIT=1G timeout 60 "$GORILA" train configs/local/cartpole.yaml --set replay.capacity=50000000 \
    --set run.out_dir="$memruns" --set run.max_env_steps=100
expect_rc "memory: train refuses it too (exit 2)" 2
expect_eq "memory: train says the same" "$err" "gorila: error: $want"
check "memory: train refused before writing anything" [ ! -e "$memruns" ]

run_cmd env GORILA_MEM_LIMIT=16G "$GORILA" config check configs/cartpole.yaml --set replay.capacity=1000000000
expect_rc "memory: replay.capacity 10^9 in a job: exit 2" 2
expect_eq "memory: per replay shard" "$err" "gorila: error: replay.capacity: 1000000000 needs 41.0 GiB per replay shard (replay storage); the 5 ranks on this machine need 41.1 GiB in all, and it has 14.4 GiB usable (90% of GORILA_MEM_LIMIT 16.0 GiB): lower replay.capacity"
# 1,024 actors: 32 GiB of it is the per-rank base, so the advice is the
# rank count, not the network.
run_cmd env GORILA_MEM_LIMIT=16G "$GORILA" config check configs/cartpole.yaml --set roles.actors=1024
expect_rc "memory: 1024 actors: exit 2" 2
expect_contains "memory: 1024 actors: names roles.actors and the base" "$err" \
    "gorila: error: roles.actors: 1024 actor ranks need 32.0 GiB for code, libraries and MPI alone (32.0 MiB each, before their buffers); the 1028 ranks on this machine need 32."
expect_contains "memory: 1024 actors: lower roles.actors" "$err" "(90% of GORILA_MEM_LIMIT 16.0 GiB): lower roles.actors"
# Ranks on other hosts (scripts/launch --hostfile): planned, not judged
# against this machine; each host checks its own at start-up.
run_cmd env GORILA_MEM_LIMIT=16G "$GORILA" config check configs/cartpole.yaml --set replay.capacity=1000000000 \
    --ranks-elsewhere
expect_rc "memory: --ranks-elsewhere leaves the check to the hosts: exit 0" 0
expect_contains "memory: --ranks-elsewhere still prints the plan" "$out" "replay storage"
run_cmd "$GORILA" config place configs/cartpole.yaml --hosts a:4 --ranks-elsewhere
expect_rc "memory: --ranks-elsewhere is config check's only" 2
run_cmd env GORILA_MEM_LIMIT=4G "$GORILA" config check configs/cartpole.yaml --set 'network.hidden=[4096,4096,4096,4096]'
expect_rc "memory: a network too large: exit 2" 2
expect_contains "memory: names network.hidden and the parameter servers" "$err" \
    "gorila: error: network.hidden: [4096, 4096, 4096, 4096] needs 3.8 GiB per parameter-server shard (parameter replies, evaluation snapshot, receive buffer and 6 more); the 5 ranks on this machine need "
run_cmd env GORILA_MEM_LIMIT=lots "$GORILA" config check configs/cartpole.yaml
expect_rc "memory: a bad GORILA_MEM_LIMIT: exit 2" 2
expect_eq "memory: says what it expects" "$err" \
    "gorila: error: GORILA_MEM_LIMIT: expected a size such as 512M or 16G, got \"lots\""

# Out of memory during the run (the check passed: GORILA_MEM_LIMIT says
# 64 GiB, but ulimit -v allows 1 GiB): exit 2, not 1 (a restart would fail
# the same way), naming the buffer and the key. 1 GiB leaves room for
# OpenBLAS's 128 MiB buffer, which it retries forever when it cannot map it.
# (An ASan build reserves terabytes of address space for its shadow memory:
# no ulimit -v for it.)
asan=0
grep -qa __asan_init "$GORILA" && asan=1
if [ $asan -eq 0 ]; then
    run_cmd bash -c 'ulimit -v 1048576 && exec env GORILA_MEM_LIMIT=64G timeout 60 "$0" train configs/local/cartpole.yaml \
        --set replay.capacity=50000000 --set run.out_dir="$1" --set run.max_env_steps=100' "$GORILA" "$memruns"
    expect_rc "out of memory in a local run: exit 2" 2
    expect_contains "out of memory: names the buffer and the key" "$err" \
        ": out of memory allocating replay storage (2.0 GiB): lower replay.capacity"
else
    for what in "out of memory in a local run: exit 2" "out of memory: names the buffer and the key"; do
        ok "$what # SKIP an ASan build cannot run under ulimit -v"
    done
fi

rm -rf "$memruns"

# MinAtar configs (configs/minatar/**): every one valid, with MinAtar's
# published DQN (examples/dqn.py) as its settings; network.conv printed
# layer by layer; the conv keys' refusals, one line and exit 2, from config
# check and from train. A build without MinAtar (make MINATAR=0) skips them.
if "$GORILA" env list | grep -q '^MinAtar/'; then
    for f in configs/minatar/*.yaml configs/minatar/local/*.yaml configs/minatar/apex/*.yaml \
        configs/minatar/layouts/*.yaml; do
        run_cmd "$GORILA" config check "$f"
        expect_rc "$f: valid" 0
        game=$(basename "$f" .yaml)
        game=${game%%-*}  # layouts/<game>-<layout>.yaml
        expect_eq "$f: the game's -v0 id" "$(effective env name)" \
            "\"MinAtar/$(sed -E 's/(^|_)([a-z])/\U\2/g' <<<"$game")-v0\""
        expect_eq "$f: dqn.py's network, batch, replay, target period" \
            "$(effective network conv) $(effective network hidden) $(effective replay batch_size) $(effective replay capacity) $(effective replay min_size) $(effective agent target_every)" \
            "[{filters: 16, kernel: 3, stride: 1}] [128] 32 100000 5000 1000"
        expect_eq "$f: dqn.py's optimizer (PyTorch's centered RMSprop, no clipping)" \
            "$(effective optimizer kind) $(effective optimizer lr) $(effective optimizer decay) $(effective optimizer eps) $(effective optimizer rmsprop_eps) $(effective optimizer centered) $(effective optimizer grad_clip)" \
            "rmsprop 0.00025 0.95 0.01 outside true 0"
        expect_eq "$f: sticky 0.1, ramping, an episode cap, no threshold, the paper's budget" \
            "$(effective env sticky_actions) $(effective env difficulty_ramping) $(effective env max_episode_steps) $(effective env reward_threshold) $(effective run stop_when_solved) $(effective run max_env_steps)" \
            '0.1 true 10000 "none" false 5000000'
        case $f in
        */apex/*)
            expect_eq "$f: Ape-X (prioritized, 3-step, per-actor epsilons, 4 actors)" \
                "$(effective replay kind) $(effective agent n_step) $(effective explore kind) $(effective roles actors)" \
                "prioritized 3 apex 4" ;;
        *)
            expect_eq "$f: dqn.py's agent (1-step, no double DQN, one update per frame) and epsilon" \
                "$(effective agent n_step) $(effective agent double_dqn) $(effective agent train_every) $(effective agent gradient_steps) $(effective explore start) $(effective explore end) $(effective explore start_step) $(effective explore decay_steps)" \
                "1 false 1 1 1 0.1 5000 100000"
            case $f in
            */local/*) want="local" ;;
            */layouts/*-in-learner.yaml) want="distributed 1 1 1 0 ps_sync" ;;
            */layouts/*-split-batch.yaml) want="distributed 1 1 2 0 allreduce" ;;
            *) want="distributed 1 1 1 1 ps_sync" ;;
            esac
            expect_eq "$f: run mode (and the default Gorila layout)" \
                "$(effective run mode)$([ "$want" = local ] || echo " $(effective roles actors) $(effective roles replay_shards) $(effective roles learners) $(effective roles param_servers) $(effective sync mode)")" \
                "$want"
            case $f in */layouts/*-split-batch.yaml)
                expect_eq "$f: the batch of 32 split, summed in shared memory" \
                    "$(effective learner batch) $(effective sync allreduce_impl)" "global hierarchical" ;;
            esac ;;
        esac
    done
    # The network, layer by layer: Breakout's C = 4: conv 16*4*9 + 16 = 592,
    # hidden 1024*128 + 128 = 131200, head 128*6 + 6 = 774.
    run_cmd "$GORILA" config check configs/minatar/local/breakout.yaml
    expect_eq "config check prints the conv network's shapes and parameters" \
        "$(sed -n '/^network: [0-9]/,/^$/p' <<<"$out")" \
        "network: 132566 parameters
  input     10x10x4 planes (height x width x channels)
  conv.0    16x8x8 (16 filters 3x3, stride 1)               592 parameters
  hidden.0  128 (from 1024)                              131200 parameters
  head      6 (from 128)                                    774 parameters"
    run_cmd "$GORILA" config check configs/minatar/local/seaquest.yaml \
        --set 'network.conv=[{filters: 8, kernel: 4, stride: 2}, {filters: 4, kernel: 2, stride: 1}]'
    expect_eq "two conv layers on Seaquest's 10 planes: 8x4x4, then 4x3x3" \
        "$(sed -n '/^  conv\./p' <<<"$out")" \
        "  conv.0    8x4x4 (8 filters 4x4, stride 2)                1288 parameters
  conv.1    4x3x3 (4 filters 2x2, stride 1)                 132 parameters"
    if command -v python3 >/dev/null; then
        json_check "a conv network" "98 keys, 1 ranks" configs/minatar/local/breakout.yaml
        run_cmd "$GORILA" config check configs/minatar/local/breakout.yaml --json
        expect_eq "--json: network.conv as objects, n_params 132566" "$(python3 -c '
import json, sys
d = json.load(sys.stdin)
print(d["config"]["network"]["conv"], d["n_params"])' <<<"$out")" "[{'filters': 16, 'kernel': 3, 'stride': 1}] 132566"
    fi
    for cmd in "config check" train; do
        # shellcheck disable=SC2086 # the command is two words
        bad_args "$cmd: a conv network on a vector environment" \
            "configs/minatar/local/breakout.yaml:50:3: network.conv: a conv network on a vector environment: env.name CartPole-v1 (from --set) gives 4 numbers, not planes; remove network.conv or use a MinAtar environment" \
            $cmd configs/minatar/local/breakout.yaml --set env.name=CartPole-v1 --set env.sticky_actions=0.1 \
            --set env.difficulty_ramping=true --set run.out_dir="$TEST_TMP/conv-refused"
    done
    f=configs/minatar/local/breakout.yaml
    bad_args "a kernel larger than the planes" \
        "--set network.conv=[{filters: 16, kernel: 11, stride: ...: network.conv: conv layer 0: kernel 11 does not fit the 10x10 input (expected 1 to 10) (env.name MinAtar/Breakout-v0: 10x10x4 planes)" \
        config check "$f" --set 'network.conv=[{filters: 16, kernel: 11, stride: 1}]'
    bad_args "a second layer larger than the first one's output" \
        "--set network.conv=[{filters: 16, kernel: 6, stride: 1...: network.conv: conv layer 1: kernel 6 does not fit the 5x5 input (expected 1 to 5) (env.name MinAtar/Breakout-v0: 10x10x4 planes)" \
        config check "$f" --set 'network.conv=[{filters: 16, kernel: 6, stride: 1}, {filters: 8, kernel: 6, stride: 1}]'
    bad_args "stride 0" \
        "--set network.conv=[{filters: 16, kernel: 3, stride: 0...: network.conv[0].stride: expected an integer in [1, 64], got 0" \
        config check "$f" --set 'network.conv=[{filters: 16, kernel: 3, stride: 0}]'
    bad_args "optimizer.rmsprop_eps with Adam" \
        "configs/minatar/local/breakout.yaml:70:3: optimizer.rmsprop_eps: optimizer.rmsprop_eps applies to optimizer.kind rmsprop only, but optimizer.kind is adam (from --set), which ignores it; set optimizer.kind: rmsprop, or remove optimizer.rmsprop_eps" \
        config check "$f" --set optimizer.kind=adam
fi

# gorila version: the release and the source id the Makefile computed
# (a hash of the sources: 12 hex digits), the same string a job exchanges.
run_cmd "$GORILA" version
expect_rc "version: exit 0" 0
check "version: release and source id ($out)" grep -qE '^gorila [0-9]+\.[0-9]+\.[0-9]+ \(source [0-9a-f]{12}\)$' <<<"$out"
other=$(dirname "$GORILA")/tests/gorila-other-build
if [ -x "$other" ]; then
    run_cmd "$other" version
    check "the test build differs only in its source id" [ "$out" != "$("$GORILA" version)" ]
fi

done_testing
