/* SPDX-License-Identifier: MIT */
/* agentcfg.c: see agentcfg.h. */
#include "agentcfg.h"
#include "explore.h"
#include "util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(CFG_MAX_CONV <= QNET_MAX_CONV, "every network.conv layer fits a QNetSpec");

int agentcfg_qnet(const Config *cfg, QNet *net, char *err) {
    const EnvSpec *spec = config_env(cfg);
    if (!spec) return errf(err, "unknown environment \"%s\"", cfg->env.name);
    QNetSpec s;
    memset(&s, 0, sizeof s);
    s.obs_dim = spec->obs_dim;
    s.n_actions = spec->num_actions;
    if (!strcmp(spec->name, "Pendulum-v1") && cfg->env.n_torques > 0) s.n_actions = cfg->env.n_torques;
    s.n_hidden = cfg->network.n_hidden;
    for (int i = 0; i < s.n_hidden; i++) s.hidden[i] = cfg->network.hidden[i];
    s.dueling = cfg->network.dueling;
    if (spec->obs_type == ENV_OBS_PLANES) {
        s.in_h = spec->obs_shape[0];
        s.in_w = spec->obs_shape[1];
        s.in_c = spec->obs_shape[2];
    }
    s.n_conv = cfg->network.n_conv; /* config_validate refuses convs on a vector env */
    for (int i = 0; i < s.n_conv && i < QNET_MAX_CONV; i++)
        s.conv[i] = (QNetConvSpec){.filters = cfg->network.conv[i].filters, .kernel = cfg->network.conv[i].kernel,
                                   .stride = cfg->network.conv[i].stride};
    return qnet_init(net, &s, err);
}

void agentcfg_dqn_params(const Config *cfg, DqnParams *p) {
    p->double_dqn = cfg->agent.double_dqn;
    p->huber_delta = (float)cfg->agent.huber_delta;
}

double agentcfg_lr_scale(const Config *cfg) {
    if (cfg->run.mode != RUN_DISTRIBUTED || cfg->sync.mode == SYNC_PS_ASYNC || cfg->sync.mode == SYNC_PS_BOUNDED)
        return 1.0;
    double L = (double)cfg->roles.learners;
    return cfg->sync.lr_scaling == LR_SCALING_LINEAR ? L : cfg->sync.lr_scaling == LR_SCALING_SQRT ? sqrt(L) : 1.0;
}

void agentcfg_optim_params(const Config *cfg, OptimParams *p) {
    OptimKind k = cfg->optimizer.kind == OPT_SGD ? OPTIM_SGD : cfg->optimizer.kind == OPT_RMSPROP ? OPTIM_RMSPROP : OPTIM_ADAM;
    *p = optim_defaults(k);
    double scale = agentcfg_lr_scale(cfg);
    p->lr = (float)(cfg->optimizer.lr * scale);
    p->lr_from = (float)cfg->optimizer.lr;
    p->warmup_steps = scale != 1.0 ? (uint64_t)cfg->sync.lr_warmup_updates : 0;
    p->momentum = (float)cfg->optimizer.momentum;
    p->beta1 = (float)cfg->optimizer.beta1;
    p->beta2 = (float)cfg->optimizer.beta2;
    p->alpha = (float)cfg->optimizer.decay;
    p->eps = (float)cfg->optimizer.eps;
    p->centered = cfg->optimizer.centered;
    p->eps_outside = cfg->optimizer.kind == OPT_RMSPROP && cfg->optimizer.rmsprop_eps == RMSPROP_EPS_OUTSIDE;
}

double agentcfg_samples_per_insert(const Config *cfg) {
    if (cfg->replay.samples_per_insert > 0) return cfg->replay.samples_per_insert;
    return (double)cfg->replay.batch_size * cfg->agent.gradient_steps / cfg->agent.train_every;
}

bool agentcfg_target_update(const Config *cfg, uint64_t step, float *target, const float *online, size_t n) {
    if (cfg->agent.target_update == TARGET_SOFT) {
        dqn_target_soft(target, online, n, (float)cfg->agent.tau);
        return true;
    }
    if (step % (uint64_t)cfg->agent.target_every != 0) return false;
    dqn_target_hard(target, online, n);
    return true;
}

double agentcfg_epsilon(const Config *cfg, uint64_t env_steps, int actor, int n_actors) {
    if (cfg->explore.kind == EXPLORE_APEX)
        return explore_apex_eps(cfg->explore.apex_eps, cfg->explore.apex_alpha, actor, n_actors);
    return explore_linear_after(cfg->explore.start, cfg->explore.end, cfg->explore.start_step, cfg->explore.decay_steps,
                                env_steps);
}

void agentcfg_batch_init(Batch *b, int rows, int obs_dim) {
    size_t R = (size_t)rows, O = (size_t)obs_dim;
    /* obs, next_obs (R*O each), reward, discount, weight (R each) as floats,
     * then action (R int32). */
    float *mem = xmalloc_aligned((2 * R * O + 3 * R) * sizeof(float) + R * sizeof(int32_t));
    b->n = 0;
    b->obs_dim = obs_dim;
    b->obs = mem;
    b->next_obs = mem + R * O;
    b->reward = mem + 2 * R * O;
    b->discount = b->reward + R;
    b->weight = b->discount + R;
    b->action = (int32_t *)(b->weight + R);
    for (size_t i = 0; i < R; i++) b->weight[i] = 1.0f;
}

void agentcfg_batch_free(Batch *b) {
    free(b->obs);
    memset(b, 0, sizeof *b);
}

void agentcfg_diverge_hint(const Config *cfg, char *out) {
    snprintf(out, AGENTCFG_HINT_LEN, "lower optimizer.lr (now %g) or optimizer.grad_clip (now %g, 0 = off)",
             cfg->optimizer.lr, cfg->optimizer.grad_clip);
}

void agentcfg_grad_accumulate(float *sum, const float *part, size_t n, int k) {
    if (k == 0) {
        memcpy(sum, part, n * sizeof(float));
        return;
    }
    for (size_t i = 0; i < n; i++) sum[i] += part[i];
}

double agentcfg_grad_mean_clip(float *out, const float *sum, size_t n, int k, double clip) {
    /* times 1/k, as step_allreduce averages the learners: exact for k a
     * power of two, within an ulp otherwise */
    float s = 1.0f / (float)k;
    for (size_t i = 0; i < n; i++) out[i] = sum[i] * s;
    return optim_clip_norm(out, n, clip);
}

int agentcfg_learner_batch(const Config *cfg) {
    if (cfg->learner.batch != LEARNER_BATCH_GLOBAL || cfg->run.mode != RUN_DISTRIBUTED) return cfg->replay.batch_size;
    return cfg->replay.batch_size / cfg->roles.learners;
}

double agentcfg_loss_grad(const Config *cfg, Dqn *dqn, const QNet *net, const DqnParams *dp, const float *params,
                          const float *target, const Batch *b, float *grad, float *td, char *what) {
    return agentcfg_loss_grad_clip(dqn, net, dp, params, target, b, grad, td, cfg->optimizer.grad_clip, what);
}

double agentcfg_loss_grad_clip(Dqn *dqn, const QNet *net, const DqnParams *dp, const float *params, const float *target,
                               const Batch *b, float *grad, float *td, double clip, char *what) {
    double loss = dqn_loss_grad(dqn, net, dp, params, target, b, grad, td);
    /* The norm is summed in double over floats, so it is finite exactly
     * when every element is (clip 0 clips nothing but still measures). */
    double norm = optim_clip_norm(grad, net->n_params, clip);
    what[0] = '\0';
    if (!isfinite(loss)) snprintf(what, AGENTCFG_WHAT_LEN, "loss is %g", loss);
    else if (!isfinite(norm)) snprintf(what, AGENTCFG_WHAT_LEN, "gradient norm is %g", norm);
    /* A non-finite |td| nearly always shows in the loss too, but a
     * priority must never be set from one: checked on its own. */
    else if (td && !floats_finite(td, (size_t)b->n)) snprintf(what, AGENTCFG_WHAT_LEN, "a |td| of the batch is not finite");
    return loss;
}
