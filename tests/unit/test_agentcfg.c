/* SPDX-License-Identifier: MIT */
/* test_agentcfg.c: the config-to-agent mapping (agentcfg.h): learning-rate scaling, the
 * global batch and accumulated gradients, and the agent's other settings. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agentcfg.h"
#include "config.h"
#include "rng.h"
#include "util.h"

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

/* network.conv on a MinAtar env: the planes' shape from the env spec, the
 * layers from the config. Breakout (C = 4, 6 actions), 16 3x3 filters at
 * stride 1, hidden [128]: conv 16*4*9 + 16 = 592, hidden (16*8*8 = 1024)
 * * 128 + 128 = 131200, head 128 * 6 + 6 = 774: 132566 in all. */
Test(agentcfg, conv_network_from_the_config_and_the_env_planes) {
    Config cfg;
    char err[ERR_LEN];
    const char text[] = "env: {name: MinAtar/Breakout-v0}\n"
                        "network: {conv: [{filters: 16, kernel: 3, stride: 1}], hidden: [128]}\n";
    cr_assert_eq(config_load_string(&cfg, "t.yaml", text, strlen(text), err), 0, "%s", err);
    QNet net;
    cr_assert_eq(agentcfg_qnet(&cfg, &net, err), 0, "%s", err);
    cr_expect_eq(net.spec.in_h, 10);
    cr_expect_eq(net.spec.in_w, 10);
    cr_expect_eq(net.spec.in_c, 4);
    cr_expect_eq(net.n_conv, 1);
    cr_expect_eq(net.conv[0].out_h, 8);
    cr_expect_eq(net.n_params, (size_t)132566);
    /* Without convs the same env is an MLP on the 400 floats. */
    cfg.network.n_conv = 0;
    cr_assert_eq(agentcfg_qnet(&cfg, &net, err), 0, "%s", err);
    cr_expect_eq(net.n_params, (size_t)(400 * 128 + 128 + 774));
}

/* optimizer.rmsprop_eps outside: PyTorch's form for RMSprop; inside (the
 * default) today's; never for Adam, where eps is outside anyway. */
Test(agentcfg, rmsprop_eps_form) {
    Config cfg;
    config_defaults(&cfg);
    OptimParams p;
    cfg.optimizer.kind = OPT_RMSPROP;
    agentcfg_optim_params(&cfg, &p);
    cr_expect_not(p.eps_outside);
    cfg.optimizer.rmsprop_eps = RMSPROP_EPS_OUTSIDE;
    agentcfg_optim_params(&cfg, &p);
    cr_expect(p.eps_outside);
    cr_expect_eq(p.kind, OPTIM_RMSPROP);
}

/* explore.start_step: start until then, then the linear decay (dqn.py:
 * 1.0 until frame 5000, 0.1 from 105000). */
Test(agentcfg, epsilon_begins_its_decay_at_start_step) {
    Config cfg;
    config_defaults(&cfg);
    cfg.explore.start = 1.0;
    cfg.explore.end = 0.1;
    cfg.explore.decay_steps = 100000;
    cfg.explore.start_step = 5000;
    cr_assert_float_eq(agentcfg_epsilon(&cfg, 4999, 0, 1), 1.0, 1e-12);
    cr_assert_float_eq(agentcfg_epsilon(&cfg, 5000, 0, 1), 1.0, 1e-12);
    cr_assert_float_eq(agentcfg_epsilon(&cfg, 55000, 0, 1), 0.55, 1e-12);
    cr_assert_float_eq(agentcfg_epsilon(&cfg, 105000, 0, 1), 0.1, 1e-12);
}
