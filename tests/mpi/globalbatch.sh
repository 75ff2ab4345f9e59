# SPDX-License-Identifier: MIT
# learner.batch global (docs/CONFIG.md): 2 allreduce learners split one
# batch of 32, so each trains 16 rows per gradient, against 32 with
# per_learner; at the same replay ratio (the limiter counts every learner's
# rows) the job then takes about twice the updates of the per_learner job
# in the same env steps: the one-learner update rate, not 1/L of it.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../mpilib.sh"
cd "$TEST_ROOT" || exit 1

# rows FILE: the learners' samples_trained / gradients, one per learner
rows() {
    python3 -c 'import json, sys
s = json.load(open(sys.argv[1]))
print(" ".join("%g" % (x["samples_trained"] / x["gradients"]) for x in s["roles"]["learner"]))' "$1" 2>/dev/null
}
ar=(--set sync.mode=allreduce --set roles.param_servers=0 --set roles.learners=2)
job global "${ar[@]}" --set learner.batch=global
expect_rc "global: exit status 0" 0
expect_eq "global: each learner trains 16 rows per gradient" "$(rows "$RUN/summary.json")" "16 16"
u_global=$(jget "$RUN/summary.json" updates)
job perlearner "${ar[@]}"
expect_rc "per_learner: exit status 0" 0
expect_eq "per_learner: each learner trains 32 rows per gradient" "$(rows "$RUN/summary.json")" "32 32"
u_per=$(jget "$RUN/summary.json" updates)
check "global takes about twice the updates of per_learner in the same env steps ($u_global against $u_per)" \
    awk -v g="${u_global:-0}" -v p="${u_per:-0}" 'BEGIN { exit !(p > 0 && g / p >= 1.7 && g / p <= 2.3) }'
done_testing
