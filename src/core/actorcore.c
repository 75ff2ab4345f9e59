/* actorcore.c: see actorcore.h. */
#include "actorcore.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

void actorcore_env_options(const Config *cfg, EnvOptions *opt) {
    memset(opt, 0, sizeof *opt);
    opt->max_episode_steps = cfg->env.max_episode_steps;
    if (!strcmp(cfg->env.name, "Pendulum-v1")) {
        opt->n_torques = cfg->env.n_torques;
        for (int i = 0; i < cfg->env.n_torques; i++) opt->torques[i] = cfg->env.torques[i];
    }
}

int actorcore_init(ActorCore *ac, const Config *cfg, const QNet *net, int index, char *err) {
    memset(ac, 0, sizeof *ac);
    ac->spec = env_find(cfg->env.name);
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
    ac->obs = xmalloc(E * O * sizeof(float));
    ac->next_obs = xmalloc(O * sizeof(float));
    ac->q = xmalloc(E * A * sizeof(float));
    ac->greedy = xcalloc(E, sizeof(bool));
    ac->ep_return = xcalloc(E, sizeof(double));
    ac->ep_len = xcalloc(E, sizeof(int));
    qnet_work_init(&ac->work, net, ac->E);
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
    }
    return 0;
}

void actorcore_free(ActorCore *ac) {
    if (ac->nstep)
        for (int e = 0; e < ac->E; e++) nstep_free(&ac->nstep[e]);
    free(ac->envs);
    free(ac->nstep);
    free(ac->obs);
    free(ac->next_obs);
    free(ac->q);
    free(ac->greedy);
    free(ac->ep_return);
    free(ac->ep_len);
    qnet_work_free(&ac->work);
    memset(ac, 0, sizeof *ac);
}

void actorcore_step(ActorCore *ac, const float *params, double eps, Batch *out, EpisodeEnd *ended, int *n_ended) {
    const size_t O = (size_t)ac->O, A = (size_t)ac->A;
    /* Decide explore/greedy first, so the forward pass can be skipped when
     * no environment needs it (all of warm-up at eps = 1). */
    bool any_greedy = false;
    for (int e = 0; e < ac->E; e++) {
        ac->greedy[e] = !(rng_uniform(&ac->rng) < eps);
        any_greedy |= ac->greedy[e];
    }
    if (any_greedy) {
        qnet_forward(ac->net, params, ac->obs, ac->E, ac->q, &ac->work);
        ac->forwards++;
    }
    *n_ended = 0;
    for (int e = 0; e < ac->E; e++) {
        int32_t action;
        if (ac->greedy[e]) qnet_argmax(ac->q + (size_t)e * A, 1, (int)A, &action);
        else action = (int32_t)rng_below(&ac->rng, A);
        float *obs = ac->obs + (size_t)e * O;
        EnvStep st = env_step(&ac->envs[e], action, ac->next_obs);
        ac->ep_return[e] += st.reward;
        ac->ep_len[e]++;
        nstep_push(&ac->nstep[e], obs, action, (float)st.reward, ac->next_obs, st.terminated, st.truncated, out);
        if (st.terminated || st.truncated) {
            ended[*n_ended].ret = ac->ep_return[e];
            ended[*n_ended].length = ac->ep_len[e];
            (*n_ended)++;
            ac->episodes++;
            ac->ep_return[e] = 0;
            ac->ep_len[e] = 0;
            env_reset(&ac->envs[e], obs);
        } else {
            memcpy(obs, ac->next_obs, O * sizeof(float));
        }
    }
    ac->steps += (uint64_t)ac->E;
}
