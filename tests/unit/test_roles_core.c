/* SPDX-License-Identifier: MIT */
/* test_roles_core.c: the MPI-free pieces the roles are built from:
 * core placement, the config-to-agent mapping, the actor core and the
 * greedy evaluator. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "actorcore.h"
#include "config.h"
#include "evaluator.h"
#include "agentcfg.h"
#include "placement.h"
#include "rng.h"
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

/* sync.lr_scaling: the rate times L (linear) or sqrt(L) (sqrt) where an
 * update averages L learners' gradients (ps_sync, allreduce), reached over
 * sync.lr_warmup_updates from optimizer.lr; 1 in the asynchronous modes and
 * in a local run. */
Test(agentcfg, lr_scaling) {
    Config cfg;
    config_defaults(&cfg);
    cfg.run.mode = RUN_DISTRIBUTED;
    cfg.optimizer.lr = 1e-3;
    cfg.roles.learners = 4;
    cfg.sync.mode = SYNC_PS_SYNC;
    cr_assert_float_eq(agentcfg_lr_scale(&cfg), 1.0, 1e-12, "none");
    cfg.sync.lr_scaling = LR_SCALING_LINEAR;
    cfg.sync.lr_warmup_updates = 100;
    cr_assert_float_eq(agentcfg_lr_scale(&cfg), 4.0, 1e-12, "linear, 4 learners");
    OptimParams op;
    agentcfg_optim_params(&cfg, &op);
    cr_assert_float_eq(op.lr, 4e-3f, 1e-9);
    cr_assert_float_eq(op.lr_from, 1e-3f, 1e-9);
    cr_assert_eq(op.warmup_steps, 100);
    cfg.sync.lr_scaling = LR_SCALING_SQRT;
    cfg.sync.mode = SYNC_ALLREDUCE;
    cr_assert_float_eq(agentcfg_lr_scale(&cfg), 2.0, 1e-12, "sqrt, 4 learners");
    cfg.sync.mode = SYNC_PS_ASYNC;
    cr_assert_float_eq(agentcfg_lr_scale(&cfg), 1.0, 1e-12, "ps_async applies each gradient alone");
    cfg.sync.mode = SYNC_PS_BOUNDED;
    cr_assert_float_eq(agentcfg_lr_scale(&cfg), 1.0, 1e-12, "ps_bounded applies each gradient alone");
    /* the decentralized modes average the learners' parameters: scaled */
    SyncMode avg[] = {SYNC_GOSSIP, SYNC_EASGD, SYNC_LOCAL_SGD};
    for (int k = 0; k < 3; k++) {
        cfg.sync.mode = avg[k];
        cr_assert_float_eq(agentcfg_lr_scale(&cfg), 2.0, 1e-12, "sqrt, 4 learners, %s", config_sync_name(avg[k]));
    }
    cfg.sync.mode = SYNC_PS_SYNC;
    cfg.run.mode = RUN_LOCAL;
    cr_assert_float_eq(agentcfg_lr_scale(&cfg), 1.0, 1e-12, "a local run has one learner");
    agentcfg_optim_params(&cfg, &op);
    cr_assert_eq(op.warmup_steps, 0, "no ramp where nothing is scaled");
}

/* learner.batch global (Horovod's rule): L learners each take 1/L of one
 * batch, their unclipped gradients are averaged and the average clipped;
 * that is the one-learner gradient of the whole batch (each part's loss is
 * a mean over its rows, so the mean of L equal parts' gradients is the
 * whole's), up to summation order. Clipping each part before averaging, as
 * a per_learner learner does, is not: the test shows the difference, so it
 * would fail if the order were wrong. CartPole's 4-64-64-2 network, 8 rows
 * split in 2 and in 4, a clip norm small enough to act. */
static void random_rows(Rng *r, int B, float *obs, float *nobs, int32_t *a, float *rew, float *disc, float *w) {
    for (int i = 0; i < 4 * B; i++) {
        obs[i] = (float)rng_uniform_range(r, -1, 1);
        nobs[i] = (float)rng_uniform_range(r, -1, 1);
    }
    for (int i = 0; i < B; i++) {
        a[i] = (int32_t)(rng_next(r) % 2);
        rew[i] = (float)rng_uniform_range(r, -1, 1);
        disc[i] = i % 3 ? 0.99f : 0.0f;
        w[i] = 1.0f;
    }
}

/* The two tests below: CartPole's 4-64-64-2 network (parameters and
 * target drawn from seed), a clip norm of 0.05 and `rows` random rows. */
enum { GC_MAX_ROWS = 16 };
typedef struct {
    Config cfg;
    QNet net;
    DqnParams dp;
    Dqn dqn;
    size_t n;
    float *params, *target;
    float obs[4 * GC_MAX_ROWS], nobs[4 * GC_MAX_ROWS], rew[GC_MAX_ROWS], disc[GC_MAX_ROWS], w[GC_MAX_ROWS];
    int32_t act[GC_MAX_ROWS];
} GradCase;

static void gradcase_init(GradCase *g, int rows, uint64_t seed) {
    cr_assert_leq(rows, GC_MAX_ROWS);
    config_defaults(&g->cfg);
    g->cfg.optimizer.grad_clip = 0.05;
    char err[ERR_LEN];
    cr_assert_eq(agentcfg_qnet(&g->cfg, &g->net, err), 0, "%s", err);
    g->n = g->net.n_params;
    Rng r;
    rng_seed(&r, seed, 0);
    g->params = malloc(g->n * sizeof(float));
    g->target = malloc(g->n * sizeof(float));
    qnet_init_params(&g->net, g->params, &r);
    qnet_init_params(&g->net, g->target, &r);
    random_rows(&r, rows, g->obs, g->nobs, g->act, g->rew, g->disc, g->w);
    agentcfg_dqn_params(&g->cfg, &g->dp);
    dqn_init(&g->dqn, &g->net, rows);
}

static void gradcase_free(GradCase *g) {
    dqn_free(&g->dqn);
    free(g->params);
    free(g->target);
}

/* The gradient of rows [first, first + m), clipped at clip (0: not). */
static void gradcase_grad(GradCase *g, int first, int m, double clip, float *out) {
    Batch b = {.n = m, .obs_dim = 4, .obs = g->obs + 4 * first, .action = g->act + first, .reward = g->rew + first,
               .next_obs = g->nobs + 4 * first, .discount = g->disc + first, .weight = g->w + first};
    char what[AGENTCFG_WHAT_LEN];
    agentcfg_loss_grad_clip(&g->dqn, &g->net, &g->dp, g->params, g->target, &b, out, NULL, clip, what);
    cr_assert_str_empty(what);
}

/* The clipped gradient of the first `rows` rows into out, the reference;
 * returns its norm before clipping, which must be large enough for the
 * clip to act (else the tests would mean nothing). */
static double gradcase_whole(GradCase *g, int rows, float *out) {
    gradcase_grad(g, 0, rows, 0.0, out);
    double norm = 0;
    for (size_t i = 0; i < g->n; i++) norm += (double)out[i] * out[i];
    norm = sqrt(norm);
    cr_assert_gt(norm, 2 * g->cfg.optimizer.grad_clip, "the clip must act for the test to mean anything");
    gradcase_grad(g, 0, rows, g->cfg.optimizer.grad_clip, out);
    return norm;
}

Test(agentcfg, global_batch_parts_make_the_one_learner_gradient) {
    enum { B = 8 };
    GradCase g;
    gradcase_init(&g, B, 7);
    size_t n = g.n;
    double clip = g.cfg.optimizer.grad_clip;
    float *whole = malloc(n * sizeof(float)), *part = malloc(n * sizeof(float));
    float *avg = malloc(n * sizeof(float)), *wrong = malloc(n * sizeof(float));
    gradcase_whole(&g, B, whole);
    for (int L = 2; L <= 4; L += 2) {
        memset(avg, 0, n * sizeof(float));
        memset(wrong, 0, n * sizeof(float));
        int m = B / L;
        for (int k = 0; k < L; k++) {
            gradcase_grad(&g, m * k, m, 0.0, part);
            for (size_t i = 0; i < n; i++) avg[i] += part[i] / (float)L;
            optim_clip_norm(part, n, clip); /* what a per_learner learner sends */
            for (size_t i = 0; i < n; i++) wrong[i] += part[i] / (float)L;
        }
        optim_clip_norm(avg, n, clip);
        double scale = 0, err_ok = 0, err_wrong = 0;
        for (size_t i = 0; i < n; i++) {
            scale = fmax(scale, fabs(whole[i]));
            err_ok = fmax(err_ok, fabs(avg[i] - whole[i]));
            err_wrong = fmax(err_wrong, fabs(wrong[i] - whole[i]));
        }
        /* float sums of 8 rows in another grouping: a few ulps of the largest element */
        cr_assert_leq(err_ok, 1e-5 * scale, "L = %d: %g against %g", L, err_ok, scale);
        cr_assert_gt(err_wrong, 1e-3 * scale, "L = %d: clipping the parts differs (%g)", L, err_wrong);
    }
    gradcase_free(&g);
    free(whole);
    free(part);
    free(avg);
    free(wrong);
}

/* learner.accumulate K: one learner's K unclipped mini-batch gradients at
 * the same parameters, summed (agentcfg_grad_accumulate), averaged and then
 * clipped (agentcfg_grad_mean_clip), are the clipped gradient of the K*B
 * rows as one batch (each batch's loss is a mean over its rows), up to
 * summation order: the same tolerance as the global batch above, since
 * the float sums over 8 rows are only grouped differently. K = 2, 4 and
 * 8, and K = 3 over 9 rows (1/3 is not exact in float: still a few ulps).
 * The reference is the whole batch's gradient, computed independently;
 * clipping each part before the mean differs (so the test would see the
 * wrong order), and K = 1 is the part itself, bit for bit, clipped. */
Test(agentcfg, accumulated_parts_make_the_gradient_of_their_union) {
    GradCase g;
    gradcase_init(&g, 9, 11);
    size_t n = g.n;
    double clip = g.cfg.optimizer.grad_clip;
    float *whole = malloc(n * sizeof(float)), *part = malloc(n * sizeof(float));
    float *sum = malloc(n * sizeof(float)), *mean = malloc(n * sizeof(float)), *wrong = malloc(n * sizeof(float));
    const int Ks[] = {1, 2, 4, 8, 3};
    for (size_t t = 0; t < sizeof Ks / sizeof Ks[0]; t++) {
        int K = Ks[t], rows = K == 3 ? 9 : 8, m = rows / K;
        double norm = gradcase_whole(&g, rows, whole);
        memset(wrong, 0, n * sizeof(float));
        for (int k = 0; k < K; k++) {
            gradcase_grad(&g, m * k, m, 0.0, part);
            agentcfg_grad_accumulate(sum, part, n, k);
            optim_clip_norm(part, n, clip);
            for (size_t i = 0; i < n; i++) wrong[i] += part[i] / (float)K;
        }
        double before = agentcfg_grad_mean_clip(mean, sum, n, K, clip);
        cr_assert_float_eq(before, norm, 1e-5 * norm, "K = %d: the norm before clipping", K);
        double scale = 0, err_ok = 0, err_wrong = 0;
        for (size_t i = 0; i < n; i++) {
            scale = fmax(scale, fabs(whole[i]));
            err_ok = fmax(err_ok, fabs(mean[i] - whole[i]));
            err_wrong = fmax(err_wrong, fabs(wrong[i] - whole[i]));
        }
        if (K == 1) {
            cr_assert_eq(memcmp(mean, whole, n * sizeof(float)), 0, "K = 1: the batch's own clipped gradient");
            continue;
        }
        cr_assert_leq(err_ok, 1e-5 * scale, "K = %d: %g against %g", K, err_ok, scale);
        cr_assert_gt(err_wrong, 1e-3 * scale, "K = %d: clipping the parts differs (%g)", K, err_wrong);
    }
    /* in place (out = sum), and no clip: the plain mean */
    float a[3] = {1, 2, 3}, b2[3] = {3, 6, 9};
    agentcfg_grad_accumulate(a, b2, 3, 1);
    double nrm = agentcfg_grad_mean_clip(a, a, 3, 2, 0.0);
    cr_assert(a[0] == 2 && a[1] == 4 && a[2] == 6, "mean of two parts in place: %g %g %g", a[0], a[1], a[2]);
    cr_assert_float_eq(nrm, sqrt(56.0), 1e-12);
    gradcase_free(&g);
    free(whole);
    free(part);
    free(sum);
    free(mean);
    free(wrong);
}

Test(agentcfg, samples_per_insert_and_pendulum_actions) {
    Config cfg;
    config_defaults(&cfg);
    cfg.replay.batch_size = 64;
    cfg.agent.train_every = 16;
    cfg.agent.gradient_steps = 8;
    cr_assert_float_eq(agentcfg_samples_per_insert(&cfg), 32.0, 1e-12); /* 64 * 8 / 16 */
    cfg.replay.samples_per_insert = 5;
    cr_assert_float_eq(agentcfg_samples_per_insert(&cfg), 5.0, 1e-12);
    char err[ERR_LEN];
    QNet net;
    snprintf(cfg.env.name, sizeof cfg.env.name, "Pendulum-v1");
    cfg.env.n_torques = 5;
    cr_assert_eq(agentcfg_qnet(&cfg, &net, err), 0, "%s", err);
    cr_assert_eq(net.spec.n_actions, 5, "one action per torque");
    cr_assert_eq(net.spec.obs_dim, 3);
    snprintf(cfg.env.name, sizeof cfg.env.name, "NoSuchEnv-v0");
    cr_assert_eq(agentcfg_qnet(&cfg, &net, err), -1);
}

Test(agentcfg, target_rule_hard_every_c_or_soft_every_step) {
    Config cfg;
    config_defaults(&cfg);
    cfg.agent.target_update = TARGET_HARD;
    cfg.agent.target_every = 3;
    float online[2] = {1.0f, 2.0f}, target[2] = {0, 0};
    cr_assert_not(agentcfg_target_update(&cfg, 1, target, online, 2));
    cr_assert_not(agentcfg_target_update(&cfg, 2, target, online, 2));
    cr_assert_eq(target[0], 0.0f);
    cr_assert(agentcfg_target_update(&cfg, 3, target, online, 2));
    cr_assert_eq(target[0], 1.0f);
    cr_assert_eq(target[1], 2.0f);
    cfg.agent.target_update = TARGET_SOFT;
    cfg.agent.tau = 0.25;
    target[0] = 0;
    cr_assert(agentcfg_target_update(&cfg, 4, target, online, 2));
    cr_assert_float_eq(target[0], 0.25f, 1e-7); /* 0.75 * 0 + 0.25 * 1 */
}

Test(agentcfg, epsilon_linear_or_apex_per_actor) {
    Config cfg;
    config_defaults(&cfg);
    cfg.explore.start = 1.0;
    cfg.explore.end = 0.1;
    cfg.explore.decay_steps = 1000;
    cr_assert_float_eq(agentcfg_epsilon(&cfg, 0, 0, 1), 1.0, 1e-12);
    cr_assert_float_eq(agentcfg_epsilon(&cfg, 500, 0, 1), 0.55, 1e-12);
    cr_assert_float_eq(agentcfg_epsilon(&cfg, 5000, 0, 1), 0.1, 1e-12);
    cfg.explore.kind = EXPLORE_APEX;
    cfg.explore.apex_eps = 0.4;
    cfg.explore.apex_alpha = 7;
    cr_assert_float_eq(agentcfg_epsilon(&cfg, 0, 0, 4), 0.4, 1e-12);
    cr_assert_float_eq(agentcfg_epsilon(&cfg, 0, 3, 4), pow(0.4, 8), 1e-15);
}

/* An actor core on CartPole: E envs per step, every transition chains to
 * the next (1-step: next_obs of one step is obs of the next, within an
 * episode), terminations carry discount 0, and the same seed replays the
 * same stream. */
static void run_actor(uint64_t seed, int E, double eps, const float *params, Batch *all, int steps, int *episodes) {
    Config cfg;
    config_defaults(&cfg);
    cfg.run.seed = seed;
    cfg.actor.envs = E;
    cfg.network.n_hidden = 1;
    cfg.network.hidden[0] = 4;
    char err[ERR_LEN];
    QNet net;
    cr_assert_eq(agentcfg_qnet(&cfg, &net, err), 0);
    ActorCore ac;
    cr_assert_eq(actorcore_init(&ac, &cfg, &net, 0, err), 0, "%s", err);
    EpisodeEnd ended[16];
    *episodes = 0;
    all->n = 0;
    for (int s = 0; s < steps; s++) {
        int n_ended = 0;
        actorcore_step(&ac, params, eps, all, ended, &n_ended);
        *episodes += n_ended;
    }
    cr_assert_eq(ac.steps, (uint64_t)(steps * E));
    if (eps >= 1.0) cr_assert_eq(ac.forwards, 0, "pure exploration needs no forward pass");
    actorcore_free(&ac);
}

Test(actorcore, steps_chain_and_repeat) {
    float params[4 * 4 + 4 + 4 * 2 + 2] = {0};
    Batch a, b;
    agentcfg_batch_init(&a, 2000, 4);
    agentcfg_batch_init(&b, 2000, 4);
    int ep_a, ep_b;
    run_actor(11, 1, 1.0, params, &a, 1000, &ep_a);
    run_actor(11, 1, 1.0, params, &b, 1000, &ep_b);
    cr_assert_eq(a.n, 1000, "1-step, one env: one transition per step");
    cr_assert_eq(ep_a, ep_b);
    cr_assert(ep_a > 10, "random CartPole episodes are short (%d)", ep_a);
    cr_assert_eq(memcmp(a.obs, b.obs, 1000 * 4 * sizeof(float)), 0, "same seed, same stream");
    cr_assert_eq(memcmp(a.action, b.action, 1000 * sizeof(int32_t)), 0);
    int terminal = 0;
    for (int i = 0; i + 1 < a.n; i++) {
        if (a.discount[i] == 0.0f) {
            terminal++;
            continue;
        }
        cr_assert_float_eq(a.discount[i], 0.99f, 1e-7);
        cr_assert_eq(memcmp(a.next_obs + 4 * i, a.obs + 4 * (i + 1), 4 * sizeof(float)), 0, "row %d chains", i);
        cr_assert_eq(a.reward[i], 1.0f);
    }
    cr_assert_eq(terminal, ep_a - (a.discount[a.n - 1] == 0.0f ? 1 : 0), "every episode ended in a termination");
    run_actor(12, 1, 1.0, params, &b, 1000, &ep_b);
    cr_assert_neq(memcmp(a.obs, b.obs, 1000 * 4 * sizeof(float)), 0, "another seed, another stream");
    agentcfg_batch_free(&a);
    agentcfg_batch_free(&b);
}

Test(actorcore, lockstep_envs_and_greedy_forward) {
    float params[4 * 4 + 4 + 4 * 2 + 2] = {0};
    Batch a;
    agentcfg_batch_init(&a, 4000, 4);
    int ep;
    run_actor(3, 4, 0.0, params, &a, 500, &ep);
    cr_assert_eq(a.n, 2000, "4 envs x 500 steps");
    /* All-zero weights: Q is 0 for both actions, argmax takes action 0. */
    for (int i = 0; i < a.n; i++) cr_assert_eq(a.action[i], 0);
    agentcfg_batch_free(&a);
}

/* Ape-X initial priorities from the acting forward (actorcore.h): every
 * row's |td| (in weight) equals |reward + discount * max_a Q(next_obs, a) -
 * Q(obs, action)| computed here row by row with the reference forward, and
 * the rows are exactly those a run without priorities emits (held back one
 * step, then flushed). 3-step returns, 3 envs and a 12-step time limit
 * exercise termination, truncation (the final observation's extra forward
 * row) and the plain bootstrap from the next step's forward.
 *
 * Why the two runs' rows may be compared bit for bit on any BLAS: their
 * greedy actions are argmaxes of rows of batched forwards of different
 * heights, E rows unscored and E + n_final (the truncated finals appended)
 * prioritized. sgemm may add a row's dot products in another order for
 * another number of rows (OpenBLAS's Prescott, Nehalem, Haswell and Zen
 * kernels do for some shapes), so the same observation's Q-values can
 * differ in their last bits between the runs, and a near-tie could flip an
 * action and part the two streams. A flip needs a small margin: evaluated
 * in float in any order, with or without fused multiply-adds, each layer
 * (n inputs plus the bias) is within gamma_{n+1} = (n+1) u / (1 - (n+1) u),
 * u = 2^-24, of its exact value times the same layer on |params| and
 * |input|; ReLU is 1-Lipschitz, so this 4-5-2 network's Q(s, a) is within
 * gamma_5 + gamma_6 + gamma_5 gamma_6 < 12 u of exact, times qabs(s, a),
 * the network on |params| and |s|. Both runs pick the same action whenever
 * the exact best Q exceeds the runner-up by more than 12 u (qabs best +
 * qabs runner-up), and the reference forward (double sums, float layer
 * outputs) is within 3 u qabs of exact: a reference margin above 15 u
 * (qabs best + qabs runner-up) rules a flip out. check_margin asks every
 * greedy choice for 1e-5 (about 168 u, 11 times that). It uses no BLAS and
 * gives the same answer on every machine; it fails, naming the step, only
 * if the seeds, the network or the environment change and bring a
 * near-tie, which then needs other seeds. A real bug (a forward row used
 * for the wrong env, the finals' rows in the wrong place) changes actions
 * or rows wholesale and still fails the memcmp below. */
#define GREEDY_MARGIN 1e-5

typedef struct {
    const QNet *net;
    float *abs_params;
    QNetWork w;
    double min_margin; /* smallest margin / (qabs best + qabs runner-up) seen */
    int greedy;        /* greedy choices checked */
} MarginCheck;

static void margin_init(MarginCheck *m, const QNet *net, const float *params) {
    cr_assert_not(net->spec.dueling, "the margin bound above is for a plain head");
    m->net = net;
    m->abs_params = xmalloc(net->n_params * sizeof(float));
    for (size_t k = 0; k < net->n_params; k++) m->abs_params[k] = fabsf(params[k]);
    qnet_work_init(&m->w, net, 1);
    m->min_margin = INFINITY;
    m->greedy = 0;
}

static void margin_free(MarginCheck *m) {
    free(m->abs_params);
    qnet_work_free(&m->w);
}

/* The greedy choice at observation obs (step s, env e): the reference
 * margin between the best and the runner-up Q-value, against their qabs. */
static void check_margin(MarginCheck *m, const float *params, const float *obs, int s, int e) {
    const int O = m->net->spec.obs_dim, A = m->net->spec.n_actions;
    float q[8], qabs[8], xabs[8];
    cr_assert(A >= 2 && A <= 8 && O <= 8);
    for (int k = 0; k < O; k++) xabs[k] = fabsf(obs[k]);
    qnet_forward_ref(m->net, params, obs, 1, q, &m->w);
    qnet_forward_ref(m->net, m->abs_params, xabs, 1, qabs, &m->w);
    int best = 0;
    for (int a = 1; a < A; a++)
        if (q[a] > q[best]) best = a;
    int second = best == 0 ? 1 : 0;
    for (int a = 0; a < A; a++)
        if (a != best && q[a] > q[second]) second = a;
    double margin = ((double)q[best] - q[second]) / ((double)qabs[best] + qabs[second]);
    cr_assert(margin > GREEDY_MARGIN,
              "step %d env %d: greedy Q-values %.9g and %.9g are a near-tie (relative margin %.3g <= %g): "
              "another BLAS kernel could pick the other action here; choose other seeds", s, e, q[best], q[second],
              margin, GREEDY_MARGIN);
    if (margin < m->min_margin) m->min_margin = margin;
    m->greedy++;
}

static int run_scored(bool prio, const float *params, Batch *out, int *truncated) {
    Config cfg;
    config_defaults(&cfg);
    cfg.run.seed = 5;
    cfg.actor.envs = 3;
    cfg.agent.n_step = 3;
    cfg.env.max_episode_steps = 12;
    cfg.network.n_hidden = 1;
    cfg.network.hidden[0] = 5;
    if (prio) cfg.replay.kind = REPLAY_PRIORITIZED;
    char err[ERR_LEN];
    QNet net;
    cr_assert_eq(agentcfg_qnet(&cfg, &net, err), 0);
    ActorCore ac;
    cr_assert_eq(actorcore_init(&ac, &cfg, &net, 0, err), 0, "%s", err);
    cr_assert_eq(ac.prio, prio);
    EpisodeEnd ended[3];
    out->n = 0;
    *truncated = 0;
    MarginCheck mc;
    margin_init(&mc, &net, params);
    float acted[3 * 4]; /* each env's observation as it chooses */
    for (int s = 0; s < 300; s++) {
        int n_ended = 0;
        memcpy(acted, ac.obs, sizeof acted);
        actorcore_step(&ac, params, 0.3, out, ended, &n_ended);
        for (int e = 0; e < 3; e++)
            if (ac.greedy[e]) check_margin(&mc, params, acted + 4 * e, s, e);
        for (int i = 0; i < n_ended; i++) *truncated += ended[i].length == 12;
    }
    cr_assert(mc.greedy > 300, "greedy choices: %d", mc.greedy);
    fprintf(stderr, "# %s run: %d greedy choices, smallest relative margin %.3g\n", prio ? "scored" : "unscored",
            mc.greedy, mc.min_margin);
    margin_free(&mc);
    actorcore_flush(&ac, params, out);
    actorcore_free(&ac);
    return (int)net.n_params;
}

Test(actorcore, initial_priorities_from_the_acting_forward) {
    Config cfg;
    config_defaults(&cfg);
    cfg.network.n_hidden = 1;
    cfg.network.hidden[0] = 5;
    char err[ERR_LEN];
    QNet net;
    cr_assert_eq(agentcfg_qnet(&cfg, &net, err), 0);
    float *params = xmalloc(net.n_params * sizeof(float));
    Rng rng;
    rng_seed(&rng, 17, 0);
    qnet_init_params(&net, params, &rng);
    Batch p, u;
    agentcfg_batch_init(&p, 3000, 4);
    agentcfg_batch_init(&u, 3000, 4);
    int trunc_p, trunc_u;
    run_scored(true, params, &p, &trunc_p);
    run_scored(false, params, &u, &trunc_u);
    cr_assert(trunc_p > 5, "the time limit truncated episodes (%d)", trunc_p);
    cr_assert_eq(p.n, u.n, "the same transitions: %d against %d", p.n, u.n);
    cr_assert_eq(memcmp(p.obs, u.obs, (size_t)p.n * 4 * sizeof(float)), 0);
    cr_assert_eq(memcmp(p.next_obs, u.next_obs, (size_t)p.n * 4 * sizeof(float)), 0);
    cr_assert_eq(memcmp(p.action, u.action, (size_t)p.n * sizeof(int32_t)), 0);
    cr_assert_eq(memcmp(p.reward, u.reward, (size_t)p.n * sizeof(float)), 0);
    cr_assert_eq(memcmp(p.discount, u.discount, (size_t)p.n * sizeof(float)), 0);
    QNetWork w;
    qnet_work_init(&w, &net, 1);
    int terminal = 0, bootstrapped = 0;
    for (int i = 0; i < p.n; i++) {
        float q[2], qn[2];
        qnet_forward_ref(&net, params, p.obs + 4 * i, 1, q, &w);
        qnet_forward_ref(&net, params, p.next_obs + 4 * i, 1, qn, &w);
        double target = p.reward[i];
        if (p.discount[i] != 0) target += p.discount[i] * fmax(qn[0], qn[1]), bootstrapped++;
        else terminal++;
        double want = fabs(target - q[p.action[i]]);
        cr_assert(fabs(p.weight[i] - want) <= 1e-5 * (1 + want), "row %d: %g, reference %g", i, p.weight[i], want);
    }
    cr_assert(terminal > 0 && bootstrapped > 0);
    qnet_work_free(&w);
    agentcfg_batch_free(&p);
    agentcfg_batch_free(&u);
    free(params);
}

/* The evaluator against an independent run of the same episodes: a
 * network whose head bias prefers action 1 acts like "always push right";
 * the returns of that fixed policy from the evaluator's seeded starts,
 * computed here with the environment alone, must match. */
Test(evaluator, matches_a_hand_run_of_the_same_policy) {
    Config cfg;
    config_defaults(&cfg);
    cfg.network.n_hidden = 1;
    cfg.network.hidden[0] = 4;
    cfg.eval.seed = 99;
    char err[ERR_LEN];
    QNet net;
    cr_assert_eq(agentcfg_qnet(&cfg, &net, err), 0);
    float params[4 * 4 + 4 + 4 * 2 + 2] = {0};
    const QNetView *hb = qnet_view(&net, "head.bias");
    cr_assert_not_null(hb);
    params[hb->offset + 1] = 1.0f; /* Q(s, 1) = 1 > Q(s, 0) = 0 everywhere */
    Evaluator ev;
    cr_assert_eq(evaluator_init(&ev, &cfg, &net, 300, err), 0, "%s", err);
    EvalResult r1, r2;
    evaluator_run(&ev, params, &r1);
    evaluator_run(&ev, params, &r2);
    cr_assert_eq(r1.episodes, 300);
    double sum = 0;
    for (int k = 0; k < 300; k++) {
        Env e;
        EnvOptions opt = {0};
        cr_assert_eq(env_init(&e, env_find("CartPole-v1"), &opt, 99, RNG_STREAM_EVAL_ENV + (uint64_t)k, err), 0);
        float obs[4];
        env_reset(&e, obs);
        for (;;) {
            EnvStep st = env_step(&e, 1, obs);
            sum += st.reward;
            if (st.terminated || st.truncated) break;
        }
    }
    cr_assert_float_eq(r1.mean, sum / 300, 1e-9);
    cr_assert_eq(r1.mean, r2.mean, "evaluations are repeatable");
    cr_assert(r1.max < 100, "pushing right always falls fast (%g)", r1.max);
    evaluator_free(&ev);
}
