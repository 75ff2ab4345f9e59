/* SPDX-License-Identifier: MIT */
/* test_actorcore.c: the actor core (actorcore.h), the MPI-free part of an actor rank. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "actorcore.h"
#include "agentcfg.h"
#include "config.h"
#include "rng.h"
#include "util.h"

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
