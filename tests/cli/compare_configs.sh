# SPDX-License-Identifier: MIT
# configs/compare/: the network sizes the PS-against-allreduce comparison
# moves. Each config is valid (gorila config check), its parameter count,
# computed here from network.hidden of the effective config (CartPole: 4
# inputs, 2 actions; weights and biases of every layer), is the one its
# header states, the sizes span CartPole's 4,610 to about 1M, and the
# configs too slow to train to the threshold here run in fixed-work
# throughput mode (no stop when solved, one evaluation at the end).
source "$(dirname "$0")/../lib.sh"
cd "$TEST_ROOT" || exit 1
counts=()
for f in configs/compare/*.yaml; do
    run_cmd "$GORILA" config check --json "$f"
    expect_rc "$f: config check exits 0" 0
    n=$(python3 -c '
import json, sys
c = json.loads(sys.argv[1])["config"]
sizes = [4] + c["network"]["hidden"] + [2]
print(sum(a * b + b for a, b in zip(sizes, sizes[1:])))' "$out")
    stated=$(sed -n 's/.*Q-network: \([0-9,]*\) parameters.*/\1/p' "$f" | tr -d ,)
    expect_eq "$f: $n parameters, as its header says" "$n" "$stated"
    counts+=("$n")
    if [ "$n" -gt 200000 ]; then
        cfg=$out
        check "$f: throughput mode (stop_when_solved false, eval only at the end)" python3 -c '
import json, sys
c = json.loads(sys.argv[1])["config"]
sys.exit(not (c["run"]["stop_when_solved"] is False and c["eval"]["every_updates"] == 0))' "$cfg"
    fi
done
sorted=$(printf '%s\n' "${counts[@]}" | sort -n)
check "the sizes start at CartPole's default network (4,610)" [ "$(head -1 <<<"$sorted")" -eq 4610 ]
check "the sizes reach about 1M parameters" [ "$(tail -1 <<<"$sorted")" -ge 1000000 ]
check "five sizes" [ "${#counts[@]}" -eq 5 ]
done_testing
