# SPDX-License-Identifier: MIT
# scripts/summary.sh: read summary.json from shell scripts (sourced by
# scripts/bench-layouts, scripts/run-compared and the tests).
#
# jget FILE KEY: a top-level scalar of a summary.json (written pretty, one
# key per line), without quotes; empty if absent.
jget() { sed -n "s/^  \"$2\": \"\{0,1\}\([^\",]*\)\"\{0,1\},\{0,1\}\$/\1/p" "$1" | head -1; }
