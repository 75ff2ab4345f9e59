/* SPDX-License-Identifier: MIT */
/* actorcore.c: see actorcore.h. */
#include "actorcore.h"
#include "agentcfg.h"
#include "util.h"

#include <math.h>

#include <stdlib.h>
#include <string.h>

void actorcore_env_options(const Config *cfg, EnvOptions *opt) {
    memset(opt, 0, sizeof *opt);
    opt->max_episode_steps = cfg->env.max_episode_steps;
    const EnvSpec *spec = config_env(cfg);
    unsigned takes = spec ? spec->options : 0;
    if (takes & ENV_TAKES_TORQUES) {
        opt->n_torques = cfg->env.n_torques;
        for (int i = 0; i < cfg->env.n_torques; i++) opt->torques[i] = cfg->env.torques[i];
    }
    if (takes & ENV_TAKES_MINATAR) {
        opt->sticky_given = true;
        opt->sticky_actions = cfg->env.sticky_actions;
        opt->no_difficulty_ramping = !cfg->env.difficulty_ramping;
    }
}

int actorcore_init(ActorCore *ac, const Config *cfg, const QNet *net, int index, char *err) {
    memset(ac, 0, sizeof *ac);
    ac->spec = config_env(cfg);
    if (!ac->spec) return errf(err, "unknown environment \"%s\"", cfg->env.name);
    ac->net = net;
    ac->E = cfg->actor.envs;
    ac->O = ac->spec->obs_dim;
    ac->A = net->spec.n_actions;
    ac->n_step = cfg->agent.n_step;
    if (net->spec.obs_dim != ac->O) return errf(err, "network input %d != observation size %d", net->spec.obs_dim, ac->O);
    size_t E = (size_t)ac->E, O = (size_t)ac->O, A = (size_t)ac->A;
    ac->envs = xcalloc(E, sizeof *ac->envs);
    ac->nstep = xcalloc(E, sizeof *ac->nstep);
    ac->obs = xmalloc(2 * E * O * sizeof(float));
    ac->next_obs = xmalloc(O * sizeof(float));
    ac->q = xmalloc(2 * E * A * sizeof(float));
    ac->prio = cfg->replay.kind == REPLAY_PRIORITIZED && cfg->replay.initial_priority == PRIORITY_ACTOR;
    if (ac->prio) {
        size_t rows = E * (size_t)ac->n_step;
        agentcfg_batch_init(&ac->stage, (int)rows, ac->O);
        ac->stage_boot = xcalloc(rows, sizeof *ac->stage_boot);
        ac->stage_qsa = xcalloc(rows, sizeof *ac->stage_qsa);
        ac->qsa = xcalloc(rows, sizeof *ac->qsa);
        ac->n_qsa = xcalloc(E, sizeof *ac->n_qsa);
    }
    ac->greedy = xcalloc(E, sizeof(bool));
    ac->ep_return = xcalloc(E, sizeof(double));
    ac->ep_len = xcalloc(E, sizeof(int));
    qnet_work_init(&ac->work, net, 2 * ac->E);
    rng_seed(&ac->rng, cfg->run.seed, RNG_STREAM_ACTOR + (uint64_t)index);
    EnvOptions opt;
    actorcore_env_options(cfg, &opt);
    for (int e = 0; e < ac->E; e++) {
        uint64_t g = (uint64_t)index * E + (uint64_t)e;
        if (env_init(&ac->envs[e], ac->spec, &opt, cfg->run.seed, RNG_STREAM_ENV + g, err) != 0) {
            actorcore_free(ac);
            return -1;
        }
        if (ac->envs[e].num_actions != ac->A) {
            int na = ac->envs[e].num_actions;
            actorcore_free(ac);
            return errf(err, "environment has %d actions, network %d", na, (int)A);
        }
        nstep_init(&ac->nstep[e], ac->n_step, cfg->agent.gamma, ac->O);
        env_reset(&ac->envs[e], ac->obs + (size_t)e * O);
        ac->env_failed |= ac->envs[e].failed; /* actorcore_step does nothing then */
    }
    return 0;
}

void actorcore_free(ActorCore *ac) {
    if (ac->nstep)
        for (int e = 0; e < ac->E; e++) nstep_free(&ac->nstep[e]);
    if (ac->envs)
        for (int e = 0; e < ac->E; e++) env_free(&ac->envs[e]);
    free(ac->envs);
    free(ac->nstep);
    free(ac->obs);
    free(ac->next_obs);
    free(ac->q);
    free(ac->greedy);
    free(ac->ep_return);
    free(ac->ep_len);
    if (ac->prio) agentcfg_batch_free(&ac->stage);
    free(ac->stage_boot);
    free(ac->stage_qsa);
    free(ac->qsa);
    free(ac->n_qsa);
    qnet_work_free(&ac->work);
    memset(ac, 0, sizeof *ac);
}

/* The forward over the E current observations and the truncated finals
 * kept after them; then every staged row gets its |td| and moves to out. */
static void forward_and_score(ActorCore *ac, const float *params, Batch *out) {
    const size_t O = (size_t)ac->O, A = (size_t)ac->A;
    qnet_forward(ac->net, params, ac->obs, ac->E + ac->n_final, ac->q, &ac->work);
    ac->forwards++;
    if (!ac->prio) return;
    Batch *st = &ac->stage;
    for (int i = 0; i < st->n; i++) {
        double target = st->reward[i];
        if (ac->stage_boot[i] >= 0) {
            const float *q = ac->q + (size_t)ac->stage_boot[i] * A;
            float best = q[0];
            for (size_t a = 1; a < A; a++)
                if (q[a] > best || isnan(q[a])) best = q[a];
            target += (double)st->discount[i] * best;
        }
        int r = out->n++;
        memcpy(out->obs + (size_t)r * O, st->obs + (size_t)i * O, O * sizeof(float));
        memcpy(out->next_obs + (size_t)r * O, st->next_obs + (size_t)i * O, O * sizeof(float));
        out->action[r] = st->action[i];
        out->reward[r] = st->reward[i];
        out->discount[r] = st->discount[i];
        out->weight[r] = (float)fabs(target - (double)ac->stage_qsa[i]);
    }
    st->n = 0;
    ac->n_final = 0;
}

/* Initial priorities: the rows env e's nstep_push just staged (the last k)
 * take their Q(s, a) from the env's queue, oldest first, and their
 * bootstrap row: none when terminated (discount 0), the final observation
 * when truncated (copied after the current observations for the next
 * forward), else the env's next observation (forward row e). */
static void stage_rows(ActorCore *ac, int e, int k, bool truncated, const float *final_obs) {
    const size_t O = (size_t)ac->O;
    int n = ac->n_step, boot_final = -1;
    float *fifo = ac->qsa + (size_t)e * (size_t)n;
    for (int j = ac->stage.n - k; j < ac->stage.n; j++) {
        ac->stage_qsa[j] = fifo[0];
        memmove(fifo, fifo + 1, (size_t)(--ac->n_qsa[e]) * sizeof *fifo);
        if (ac->stage.discount[j] == 0) {
            ac->stage_boot[j] = -1;
        } else if (truncated) {
            if (boot_final < 0) {
                boot_final = ac->E + ac->n_final++;
                memcpy(ac->obs + (size_t)boot_final * O, final_obs, O * sizeof(float));
            }
            ac->stage_boot[j] = boot_final;
        } else {
            ac->stage_boot[j] = e;
        }
    }
}

void actorcore_step(ActorCore *ac, const float *params, double eps, Batch *out, EpisodeEnd *ended, int *n_ended) {
    const size_t O = (size_t)ac->O, A = (size_t)ac->A;
    /* Decide explore/greedy first, so the forward pass can be skipped when
     * no environment needs it (all of warm-up at eps = 1). */
    bool any_greedy = false;
    *n_ended = 0;
    if (ac->env_failed) return;
    for (int e = 0; e < ac->E; e++) {
        ac->greedy[e] = !(rng_uniform(&ac->rng) < eps);
        any_greedy |= ac->greedy[e];
    }
    if (any_greedy || ac->prio) forward_and_score(ac, params, out);
    *n_ended = 0;
    for (int e = 0; e < ac->E; e++) {
        int32_t action;
        if (ac->greedy[e]) qnet_argmax(ac->q + (size_t)e * A, 1, (int)A, &action);
        else action = (int32_t)rng_below(&ac->rng, A);
        float *obs = ac->obs + (size_t)e * O;
        if (ac->prio) ac->qsa[(size_t)e * (size_t)ac->n_step + (size_t)ac->n_qsa[e]++] = ac->q[(size_t)e * A + (size_t)action];
        EnvStep st = env_step(&ac->envs[e], action, ac->next_obs);
        if (ac->envs[e].failed) { /* a Python environment: nothing of this step is kept */
            ac->env_failed = true;
            return;
        }
        ac->ep_return[e] += st.reward;
        ac->ep_len[e]++;
        int k = nstep_push(&ac->nstep[e], obs, action, (float)st.reward, ac->next_obs, st.terminated, st.truncated,
                           ac->prio ? &ac->stage : out);
        if (ac->prio) stage_rows(ac, e, k, st.truncated && !st.terminated, ac->next_obs);
        if (st.terminated || st.truncated) {
            ended[*n_ended].ret = ac->ep_return[e];
            ended[*n_ended].length = ac->ep_len[e];
            (*n_ended)++;
            ac->episodes++;
            ac->ep_return[e] = 0;
            ac->ep_len[e] = 0;
            env_reset(&ac->envs[e], obs);
            if (ac->envs[e].failed) {
                ac->env_failed = true;
                return;
            }
        } else {
            memcpy(obs, ac->next_obs, O * sizeof(float));
        }
    }
    ac->steps += (uint64_t)ac->E;
}

void actorcore_flush(ActorCore *ac, const float *params, Batch *out) {
    if (ac->prio && ac->stage.n) forward_and_score(ac, params, out);
}
