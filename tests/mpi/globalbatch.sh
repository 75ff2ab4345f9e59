# SPDX-License-Identifier: MIT
# run-all: alone (an update ratio that holds only when the learners keep up with the limiter)
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
# paced FILE: the rows the replay shards served under the samples-per-insert
# limiter (sampled less sampled_unpaced: after the actors' last chunk the
# learners train unpaced until the STOP reaches them, many batches on a
# loaded machine; docs/OUTPUTS.md)
paced() {
    python3 -c 'import json, sys
print(sum(r["sampled"] - r["sampled_unpaced"] for r in json.load(open(sys.argv[1]))["roles"]["replay"]))' "$1" 2>/dev/null
}
ar=(--set sync.mode=allreduce --set roles.param_servers=0 --set roles.learners=2)
job global "${ar[@]}" --set learner.batch=global
expect_rc "global: exit status 0" 0
expect_eq "global: each learner trains 16 rows per gradient" "$(rows "$RUN/summary.json")" "16 16"
u_global=$(jget "$RUN/summary.json" updates)
s_global=$(jget "$RUN/summary.json" samples_trained)
paced_global=$(paced "$RUN/summary.json")
job perlearner "${ar[@]}"
expect_rc "per_learner: exit status 0" 0
expect_eq "per_learner: each learner trains 32 rows per gradient" "$(rows "$RUN/summary.json")" "32 32"
u_per=$(jget "$RUN/summary.json" updates)
s_per=$(jget "$RUN/summary.json" samples_trained)
paced_per=$(paced "$RUN/summary.json")
# Exact by construction, whatever the load: an update of the global job
# trains 32 rows (2 gradients of 16), one of the per_learner job 64, so per
# sampled row the global job takes twice the updates (up to the one
# unfinished round each job may stop in: 2 gradients)
check "global takes twice the updates per trained row ($u_global in $s_global rows, $u_per in $s_per)" \
    awk -v ug="${u_global:-0}" -v sg="${s_global:-0}" -v up="${u_per:-0}" -v sp="${s_per:-0}" \
    'BEGIN { exit !(ug > 0 && up > 0 && sg >= 32 * ug && sg <= 32 * (ug + 1) && sp >= 64 * up && sp <= 64 * (up + 1)) }'
# At the same replay ratio the limiter then lets the global job take about
# twice the updates in the same env steps: counted on the rows served under
# the limiter (32 per update of the global job, 64 per_learner), since the
# unpaced rows after the actors' last chunk grow with load (a loaded run:
# 683 against 567 updates in all, of which 345 paced per_learner). True when
# the learners kept up with the limiter; on a loaded machine they may not (a
# CPU hog beside the job left it at 1.01x): then a counted skip saying so.
allowed=$((8 * 3000)) # replay.samples_per_insert 0: batch 32 x 1 gradient step / train_every 4 per insert, 3000 env steps
if [ "${paced_global:-0}" -ge $((allowed * 85 / 100)) ] && [ "${paced_per:-0}" -ge $((allowed * 85 / 100)) ]; then
    check "global takes about twice the paced updates of per_learner in the same env steps ($paced_global rows / 32 against $paced_per / 64)" \
        awk -v g="${paced_global:-0}" -v p="${paced_per:-0}" 'BEGIN { exit !(p > 0 && (g / 32) / (p / 64) >= 1.7 && (g / 32) / (p / 64) <= 2.3) }'
else
    ok "global takes about twice the paced updates of per_learner in the same env steps # SKIP the learners fell behind the limiter on this machine's load (paced rows: global $paced_global, per_learner $paced_per, of the $allowed allowed)"
fi
done_testing
