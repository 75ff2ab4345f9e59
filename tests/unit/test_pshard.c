/* SPDX-License-Identifier: MIT */
/* test_pshard.c: the MPI-free part of a parameter slice (src/mpi/pshard.c).
 * P slices of a network, for any P, start as the local trainer's network
 * and step as the local trainer steps it (optimizer, then the target rule
 * on the new step count), bit for bit, with the versions counting steps
 * and target changes. P = 1 is what an allreduce learner holds. Serving,
 * checkpoint answers and reports send messages: tests/mpi covers them. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "agentcfg.h"
#include "config.h"
#include "shard.h"
#include "pshard.h"
#include "util.h"

#define MAX_P 5

/* What a role gives its PShard, without MPI: a Ctx, the config, the
 * layout and the network. No Comm: replicas (serves false) send nothing. */
typedef struct {
    Ctx ctx;
    Config cfg;
    Layout lay;
    JobArgs args;
    RoleBase rb;
} Owner;

static void owner_init(Owner *o, const Config *cfg) {
    memset(o, 0, sizeof *o);
    o->cfg = *cfg;
    ctx_init_tool(&o->ctx);
    o->ctx.index = 1; /* not the first of its role: pshard_report_if_due stays silent */
    layout_init(&o->lay, &o->cfg);
    o->args.cfg = &o->cfg;
    o->args.lay = &o->lay;
    o->rb.ctx = &o->ctx;
    o->rb.cfg = &o->cfg;
    o->rb.lay = &o->lay;
    char err[ERR_LEN];
    cr_assert_eq(agentcfg_qnet(&o->cfg, &o->rb.net, err), 0, "%s", err);
}

/* CartPole with 3 hidden units: 23 parameters, which no P in 2..5 divides. */
static Config small_config(void) {
    Config cfg;
    config_defaults(&cfg);
    cfg.network.n_hidden = 1;
    cfg.network.hidden[0] = 3;
    cfg.run.seed = 11;
    return cfg;
}

Test(pshard, slices_start_as_the_local_network) {
    Config cfg = small_config();
    Owner o[MAX_P];
    for (int P = 1; P <= MAX_P; P++) {
        size_t n = 0;
        float *want = NULL;
        for (int p = 0; p < P; p++) {
            owner_init(&o[p], &cfg);
            n = o[p].rb.net.n_params;
            if (!want) {
                want = malloc(n * sizeof(float));
                Rng r;
                rng_seed(&r, cfg.run.seed, RNG_STREAM_INIT);
                qnet_init_params(&o[p].rb.net, want, &r);
            }
            size_t off, len;
            shard_range(n, P, p, &off, &len);
            PShard s;
            pshard_init(&s, &o[p].rb, &o[p].args, p, off, len, false);
            cr_assert_eq(s.off, off);
            cr_assert_eq(s.len, len);
            cr_assert(memcmp(s.params, want + off, len * sizeof(float)) == 0, "P=%d slice %d: params", P, p);
            cr_assert(memcmp(s.target, want + off, len * sizeof(float)) == 0, "P=%d slice %d: target", P, p);
            cr_assert_eq(s.version, 0);
            cr_assert_eq(s.target_version, 0);
            cr_assert_eq(o[p].rb.m.params_version, 0);
            pshard_free(&s);
        }
        free(want);
    }
}

/* K steps of the same gradients on P slices and on the whole network as
 * src/core/train/trainer.c takes them. */
static void check_steps_like_local(const Config *cfg, int P, int K) {
    Owner o[MAX_P];
    PShard s[MAX_P];
    owner_init(&o[0], cfg);
    for (int p = 1; p < P; p++) owner_init(&o[p], cfg);
    const QNet *net = &o[0].rb.net;
    size_t n = net->n_params;
    for (int p = 0; p < P; p++) {
        size_t off, len;
        shard_range(n, P, p, &off, &len);
        pshard_init(&s[p], &o[p].rb, &o[p].args, p, off, len, false);
    }
    float *params = malloc(n * sizeof(float)), *target = malloc(n * sizeof(float));
    float *grad = malloc(n * sizeof(float));
    Rng r;
    rng_seed(&r, cfg->run.seed, RNG_STREAM_INIT);
    qnet_init_params(net, params, &r);
    memcpy(target, params, n * sizeof(float));
    OptimParams op;
    agentcfg_optim_params(cfg, &op);
    Optim opt;
    optim_init(&opt, &op, n);
    uint64_t target_version = 0;
    Rng g;
    rng_seed(&g, 99, 0);
    for (uint64_t k = 1; k <= (uint64_t)K; k++) {
        for (size_t i = 0; i < n; i++) grad[i] = (float)rng_uniform_range(&g, -1, 1);
        optim_step(&opt, params, grad);
        if (agentcfg_target_update(cfg, k, target, params, n)) target_version++;
        for (int p = 0; p < P; p++) {
            pshard_apply(&s[p], grad + s[p].off);
            cr_assert(memcmp(s[p].params, params + s[p].off, s[p].len * sizeof(float)) == 0,
                      "P=%d slice %d step %llu: params", P, p, (unsigned long long)k);
            cr_assert(memcmp(s[p].target, target + s[p].off, s[p].len * sizeof(float)) == 0,
                      "P=%d slice %d step %llu: target", P, p, (unsigned long long)k);
            cr_assert_eq(s[p].version, k);
            cr_assert_eq(o[p].rb.m.params_version, k);
            cr_assert_eq(s[p].target_version, target_version, "P=%d step %llu: target version %llu, want %llu", P,
                         (unsigned long long)k, (unsigned long long)s[p].target_version,
                         (unsigned long long)target_version);
        }
    }
    for (int p = 0; p < P; p++) pshard_free(&s[p]);
    optim_free(&opt);
    free(params);
    free(target);
    free(grad);
}

Test(pshard, slices_step_like_the_local_trainer) {
    const CfgOptim kinds[] = {OPT_ADAM, OPT_RMSPROP, OPT_SGD};
    for (int k = 0; k < 3; k++) {
        Config cfg = small_config();
        cfg.optimizer.kind = kinds[k];
        cfg.optimizer.momentum = 0.9;
        cfg.agent.target_update = TARGET_HARD;
        cfg.agent.target_every = 3;
        for (int P = 1; P <= MAX_P; P++) check_steps_like_local(&cfg, P, 10);
        cfg.agent.target_update = TARGET_SOFT;
        cfg.agent.tau = 0.1;
        for (int P = 1; P <= MAX_P; P++) check_steps_like_local(&cfg, P, 10);
    }
}

/* easgd's move (pshard_elastic_move): with alpha 1/4 and values whose
 * differences and quarters are exact in float, d = (x - c) / 4, the center
 * becomes c + d and the learner, taking d back, x - d: each moved a quarter
 * of the way toward the other, exactly. The version advances by the steps
 * sent, and a hard target rule fires at every multiple of target_every
 * crossed (once here: versions 1..6 with target_every 4). */
Test(pshard, elastic_move_pulls_center_and_learner_together) {
    Config cfg = small_config();
    cfg.agent.target_update = TARGET_HARD;
    cfg.agent.target_every = 4;
    Owner o;
    owner_init(&o, &cfg);
    PShard s;
    pshard_init(&s, &o.rb, &o.args, 0, 0, o.rb.net.n_params, false);
    size_t n = s.len;
    float *x = xmalloc(n * sizeof(float)), *d = xmalloc(n * sizeof(float)), *c0 = xmalloc(n * sizeof(float));
    for (size_t i = 0; i < n; i++) {
        s.params[i] = (float)i - 8.0f;
        x[i] = (float)i + 8.0f * (float)(i % 3);
        c0[i] = s.params[i];
    }
    pshard_elastic_move(&s, x, 0.25f, 6, d);
    for (size_t i = 0; i < n; i++) {
        float want_d = (x[i] - c0[i]) / 4.0f;
        cr_assert_eq(d[i], want_d, "d[%zu] = %g, want %g", i, d[i], want_d);
        cr_assert_eq(s.params[i], c0[i] + want_d, "center[%zu]", i);
        cr_assert_eq(x[i] - d[i], x[i] - want_d, "learner[%zu]", i);
        /* the gap closed by 2 alpha: what is left is (1 - 2 alpha) of it */
        cr_assert_eq((x[i] - d[i]) - s.params[i], (x[i] - c0[i]) / 2.0f, "gap[%zu]", i);
    }
    cr_assert_eq(s.version, 6);
    cr_assert_eq(s.target_version, 1, "one target copy, at version 4");
    cr_assert_eq(o.rb.m.params_version, 6);
    free(x);
    free(d);
    free(c0);
    pshard_free(&s);
}

Test(pshard, free_is_safe_on_a_zeroed_shard) {
    PShard s;
    memset(&s, 0, sizeof s);
    pshard_free(&s);
    pshard_free(&s);
}
