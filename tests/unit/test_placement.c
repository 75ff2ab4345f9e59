/* SPDX-License-Identifier: MIT */
/* test_placement.c: core placement (placement.h): ranks onto cores, nodes and hosts. */
#include <criterion/criterion.h>
#include <string.h>

#include "config.h"
#include "placement.h"
#include "util.h"

static Layout layout_of(int A, int S, int L, int P) {
    Config cfg;
    config_defaults(&cfg);
    cfg.roles.actors = A;
    cfg.roles.replay_shards = S;
    cfg.roles.learners = L;
    cfg.roles.param_servers = P;
    Layout lay;
    layout_init(&lay, &cfg);
    return lay;
}

Test(placement, learner_with_its_ps_and_actor_with_its_replay) {
    /* ranks: 0 coord, 1 actor, 2 replay, 3 learner, 4 ps; 2 cores */
    Layout lay = layout_of(1, 1, 1, 1);
    int ranks[5] = {0, 1, 2, 3, 4}, cpus[2] = {0, 1}, core[5];
    placement_assign(&lay, ranks, 5, cpus, 2, core);
    cr_assert_eq(core[3], core[4], "learner and PS share a core");
    cr_assert_eq(core[1], core[2], "actor and replay share a core");
    cr_assert_eq(core[0], core[1], "the coordinator joins the first replay group");
    cr_assert_neq(core[3], core[1], "the two groups get different cores");
}

Test(placement, uneven_layout_deals_groups_round_robin) {
    /* 3 actors, 2 replay, 2 learners, 3 PS: ranks 0 coord, 1-3 actors,
     * 4-5 replay, 6-7 learners, 8-10 ps. Groups in order: L0 {6, 8, 10},
     * L1 {7, 9}, R0 {4, 1, 3, 0}, R1 {5, 2} -> cores 0, 1, 0, 1. */
    Layout lay = layout_of(3, 2, 2, 3);
    int ranks[11], cpus[2] = {4, 7}, core[11];
    for (int i = 0; i < 11; i++) ranks[i] = i;
    placement_assign(&lay, ranks, 11, cpus, 2, core);
    const int want[11] = {4, 4, 7, 4, 4, 7, 4, 7, 4, 7, 4};
    for (int i = 0; i < 11; i++) cr_assert_eq(core[i], want[i], "rank %d", i);
}

Test(placement, only_ranks_on_the_node_count) {
    /* This node holds ranks 3 and 4 only (learner and PS): one group, so
     * both go to the first core offered. */
    Layout lay = layout_of(1, 1, 1, 1);
    int ranks[2] = {3, 4}, cpus[2] = {2, 3}, core[2];
    placement_assign(&lay, ranks, 2, cpus, 2, core);
    cr_assert_eq(core[0], 2);
    cr_assert_eq(core[1], 2);
}

/* placement_nodes: the default job over 3 hosts of 2 slots (the simulated
 * cluster): learner+PS on the first host, replay+actor on the second, the
 * coordinator on the third. */
Test(placement_nodes, default_job_over_three_hosts) {
    Layout lay = layout_of(1, 1, 1, 1);
    int slots[3] = {2, 2, 2}, node[5];
    char err[ERR_LEN];
    cr_assert_eq(placement_nodes(&lay, slots, 3, false, node, err), 0);
    cr_assert_eq(node[3], 0, "learner on the first host");
    cr_assert_eq(node[4], 0, "its PS with it");
    cr_assert_eq(node[2], 1, "replay on the second");
    cr_assert_eq(node[1], 1, "its actor with it");
    cr_assert_eq(node[0], 2, "the coordinator on the third");
}

Test(placement_nodes, too_few_slots_is_an_error_unless_oversubscribed) {
    Layout lay = layout_of(1, 1, 1, 1);
    int slots[2] = {2, 2}, node[5];
    char err[ERR_LEN] = "";
    cr_assert_eq(placement_nodes(&lay, slots, 2, false, node, err), -1);
    cr_assert(strstr(err, "4 slots for the job's 5 ranks"), "%s", err);
    cr_assert_eq(placement_nodes(&lay, slots, 2, true, node, err), 0);
    int count[2] = {0, 0};
    for (int r = 0; r < 5; r++) count[node[r]]++;
    cr_assert_eq(count[0], 3, "proportional: 5 * 2/4 = 2 each, the extra one to the first host");
    cr_assert_eq(count[1], 2);
    int zero[2] = {0, 0};
    cr_assert_eq(placement_nodes(&lay, zero, 2, true, node, err), -1, "no slots at all");
}

/* Every learner talks to every PS shard: 2 learners and 2 shards go to one
 * host when it has room for them. */
Test(placement_nodes, learners_and_ps_shards_together) {
    Layout lay = layout_of(2, 2, 2, 2);
    int slots[2] = {4, 4}, node[9];
    char err[ERR_LEN];
    cr_assert_eq(placement_nodes(&lay, slots, 2, true, node, err), 0);
    cr_assert_eq(node[5], node[6], "the learners together");
    cr_assert_eq(node[5], node[7], "with PS 0");
    cr_assert_eq(node[5], node[8], "and PS 1");
}

/* A host with no slots gets no rank, oversubscribed or not; a group larger
 * than any host is split in runs, learner l beside its PS shards p mod L. */
Test(placement_nodes, zero_slot_host_and_split_group) {
    Layout lay = layout_of(4, 1, 1, 1);
    int slots[4] = {2, 0, 2, 2}, node[8];
    char err[ERR_LEN];
    cr_assert_eq(placement_nodes(&lay, slots, 4, true, node, err), 0);
    for (int r = 0; r < 8; r++) cr_assert_neq(node[r], 1, "rank %d on the host with 0 slots", r);
    Layout big = layout_of(1, 1, 3, 3); /* 9 ranks; the learners' group: 6 */
    int four[3] = {4, 4, 2}, nb[9];
    cr_assert_eq(placement_nodes(&big, four, 3, false, nb, err), 0);
    for (int l = 0; l < 3; l++)
        cr_assert_eq(nb[layout_rank_of(&big, ROLE_LEARNER, l)], nb[layout_rank_of(&big, ROLE_PS, l)],
                     "learner %d beside PS %d in the split", l, l);
    int count[3] = {0};
    for (int r = 0; r < 9; r++) count[nb[r]]++;
    for (int i = 0; i < 3; i++) cr_assert_leq(count[i], four[i]);
}

/* placement_spread: 4 learners and 4 PS shards over 9 hosts (what
 * scripts/compare --simcluster 9 gives a 4-learner sharded cell): each
 * learner and each shard on a host of its own, the replay shard with its
 * actors on the ninth, the coordinator wrapping round to the first. */
Test(placement_spread, one_host_per_learner_and_per_ps_shard) {
    Layout lay = layout_of(2, 1, 4, 4);
    int slots[9] = {3, 3, 3, 3, 3, 3, 3, 3, 3}, node[12];
    char err[ERR_LEN];
    cr_assert_eq(placement_spread(&lay, slots, 9, false, node, err), 0);
    int seen[9] = {0};
    for (int l = 0; l < 4; l++) cr_assert_eq(node[layout_rank_of(&lay, ROLE_LEARNER, l)], l, "learner %d", l);
    for (int p = 0; p < 4; p++) cr_assert_eq(node[layout_rank_of(&lay, ROLE_PS, p)], 4 + p, "PS shard %d", p);
    for (int l = 0; l < 4; l++) seen[node[layout_rank_of(&lay, ROLE_LEARNER, l)]]++;
    for (int p = 0; p < 4; p++) seen[node[layout_rank_of(&lay, ROLE_PS, p)]]++;
    for (int i = 0; i < 8; i++) cr_assert_eq(seen[i], 1, "host %d holds one learner or shard", i);
    cr_assert_eq(node[layout_rank_of(&lay, ROLE_REPLAY, 0)], 8, "replay on the ninth host");
    for (int a = 0; a < 2; a++) cr_assert_eq(node[layout_rank_of(&lay, ROLE_ACTOR, a)], 8, "actor %d with it", a);
    cr_assert_eq(node[layout_rank_of(&lay, ROLE_COORD, 0)], 0, "the coordinator wraps round");
}

/* Fewer hosts than units: round-robin; full hosts are skipped when the
 * slots suffice (a replay group continues on the next host), hosts with 0
 * slots always; too few slots is placement_nodes' error. */
Test(placement_spread, round_robin_over_few_hosts) {
    Layout lay = layout_of(3, 1, 2, 1); /* 0 coord, 1-3 actors, 4 replay, 5-6 learners, 7 ps */
    int slots[3] = {2, 0, 6}, node[8];
    char err[ERR_LEN] = "";
    cr_assert_eq(placement_spread(&lay, slots, 3, false, node, err), 0);
    const int want[8] = {2, 2, 2, 2, 2, 0, 2, 0};
    for (int r = 0; r < 8; r++) cr_assert_eq(node[r], want[r], "rank %d on host %d", r, node[r]);
    int small[3] = {1, 1, 1};
    cr_assert_eq(placement_spread(&lay, small, 3, false, node, err), -1);
    cr_assert(strstr(err, "3 slots for the job's 8 ranks"), "%s", err);
    cr_assert_eq(placement_spread(&lay, small, 3, true, node, err), 0);
    cr_assert_neq(node[5], node[6], "oversubscribed: the two learners still apart");
}

/* A perfect packing exists and best fit finds it: 16 actors over 2
 * replay shards (groups of 9), a learner with its PS (2), the coordinator
 * (1) on hosts of 16 slots (room 11 and 10): no group is split. */
Test(placement_nodes, groups_kept_whole_when_they_fit) {
    Layout lay = layout_of(16, 2, 1, 1);
    int slots[2] = {16, 16}, node[21];
    char err[ERR_LEN];
    cr_assert_eq(placement_nodes(&lay, slots, 2, false, node, err), 0);
    for (int a = 0; a < 16; a++)
        cr_assert_eq(node[1 + a], node[17 + a % 2], "actor %d with replay shard %d", a, a % 2);
    cr_assert_eq(node[19], node[20], "learner with its PS");
    cr_assert_neq(node[17], node[18], "the two replay groups on different hosts");
}

/* Over many layouts and host lists: every rank on a host, no host over its
 * slots, and on 2 hosts of 8 slots every group (all learners with all PS
 * shards; each replay shard with its actors) kept whole when the job has
 * at most 10 ranks (its largest group, at most 7, fits whole on one host
 * and the rest, at most 10 - 3, on the other; even over a host's share;
 * with more ranks a perfect packing may not exist: 5 groups of 3). */
Test(placement_nodes, invariants_over_layouts) {
    for (int A = 1; A <= 6; A++)
        for (int S = 1; S <= 3; S++)
            for (int L = 1; L <= 3; L++)
                for (int P = 0; P <= 4; P += 2) {
                    Layout lay = layout_of(A, S, L, P);
                    int N = lay.size, node[32];
                    int slots[4] = {8, 8, 3, 1};
                    for (int n_nodes = 1; n_nodes <= 4; n_nodes++) {
                        int total = 0;
                        for (int i = 0; i < n_nodes; i++) total += slots[i];
                        char err[ERR_LEN];
                        int rc = placement_nodes(&lay, slots, n_nodes, false, node, err);
                        cr_assert_eq(rc, total >= N ? 0 : -1, "A%d S%d L%d P%d on %d hosts", A, S, L, P, n_nodes);
                        if (rc) continue;
                        int count[4] = {0};
                        for (int r = 0; r < N; r++) {
                            cr_assert(node[r] >= 0 && node[r] < n_nodes);
                            count[node[r]]++;
                        }
                        for (int i = 0; i < n_nodes; i++) cr_assert_leq(count[i], slots[i]);
                        if (n_nodes == 2 && N <= 10) {
                            int h = node[layout_rank_of(&lay, ROLE_LEARNER, 0)];
                            for (int l = 0; l < L; l++)
                                cr_assert_eq(node[layout_rank_of(&lay, ROLE_LEARNER, l)], h, "learner %d", l);
                            for (int p = 0; p < P; p++)
                                cr_assert_eq(node[layout_rank_of(&lay, ROLE_PS, p)], h, "ps %d", p);
                            for (int a = 0; a < A; a++)
                                cr_assert_eq(node[layout_rank_of(&lay, ROLE_ACTOR, a)],
                                             node[layout_rank_of(&lay, ROLE_REPLAY, a % S)], "actor %d (A%d S%d L%d P%d)", a, A, S, L, P);
                        }
                    }
                }
}
