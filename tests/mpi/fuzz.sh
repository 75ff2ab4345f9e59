#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The config loader's fuzz target (make fuzz; .ci/run runs it for two
# minutes) builds from its source list and runs a few seconds on the seed
# corpus without a finding. A slow check, in the slow tier: the target is a
# separate link (clang, libFuzzer, sanitizers) that make and make check never
# build, so a new dependency of the config code (qnet_init did) would
# otherwise first fail in CI.
source "$(dirname "$0")/../lib.sh"
cd "$TEST_ROOT" || exit 1
if ! command -v clang >/dev/null; then
    ok "make fuzz # SKIP clang is not installed (scripts/install-deps.sh installs it)"
    done_testing
    exit
fi
B="$TEST_TMP/fuzz-build"
run_cmd make -s BUILD="$B" fuzz FUZZ_SECONDS=0
expect_rc "make fuzz: the target builds" 0
[ "$rc" -eq 0 ] || echo "# $(tail -n 3 <<<"$err" | tr '\n' ' ')"
# (new inputs go to the first corpus folder: a scratch one, never the seeds)
mkdir -p "$B/corpus"
run_cmd "$B/fuzz_config" -runs=2000 -max_len=4096 -timeout=5 -rss_limit_mb=2048 "$B/corpus" tests/fixtures/fuzz-seeds
expect_rc "fuzz_config: 2000 runs over the seeds, no finding" 0
expect_contains "fuzz_config: it ran" "$err" "Done 2000 runs"
check "fuzz_config: the seed corpus is left as it is" test -z "$(git status --porcelain tests/fixtures/fuzz-seeds 2>/dev/null)"
done_testing
