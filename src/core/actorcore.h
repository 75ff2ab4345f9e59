/* actorcore.h: the acting half of DQN, shared by the actor role and the
 * single-process trainer (no MPI here).
 *
 * E environments are stepped in lockstep: one batched Q-network forward
 * over the E current observations, an epsilon-greedy choice per
 * environment, one step of each, and one n-step builder per environment
 * that turns steps into finished transitions (agents/batch.h layout).
 * Finished environments are reset at once, so every call produces exactly
 * E environment steps.
 *
 * Seeding: environment e of actor i (global index g = i * E + e) is seeded
 * with (run.seed, RNG_STREAM_ENV + g); the exploration generator with
 * (run.seed, RNG_STREAM_ACTOR + i). A run is reproducible for a given
 * config, and actors never share a stream.
 */
#ifndef GORILA_ACTORCORE_H
#define GORILA_ACTORCORE_H

#include <stdbool.h>
#include <stdint.h>

#include "batch.h"
#include "config.h"
#include "env.h"
#include "nstep.h"
#include "qnet.h"

typedef struct {
    double ret;      /* undiscounted return */
    int length;      /* steps */
} EpisodeEnd;

typedef struct {
    const QNet *net;
    const EnvSpec *spec;
    int E, O, A, n_step;
    Env *envs;            /* (E) */
    NStep *nstep;         /* (E) */
    float *obs;           /* (E, O) observation each env is in */
    float *next_obs;      /* (O) scratch */
    float *q;             /* (E, A) */
    bool *greedy;         /* (E) this step's choice: greedy or random */
    double *ep_return;    /* (E) return of the running episode */
    int *ep_len;          /* (E) */
    QNetWork work;        /* E rows */
    Rng rng;              /* exploration */
    uint64_t steps;       /* environment steps taken (all envs) */
    uint64_t episodes;    /* episodes finished */
    uint64_t forwards;    /* batched forward passes run */
} ActorCore;

/* Map the config's env section to EnvOptions. */
void actorcore_env_options(const Config *cfg, EnvOptions *opt);

/* Build E = cfg->actor.envs environments for actor `index` and reset them.
 * net is kept (not owned). Returns 0 or -1 with err (bad env options). */
int actorcore_init(ActorCore *ac, const Config *cfg, const QNet *net, int index, char *err);
void actorcore_free(ActorCore *ac);

/* Capacity a transition output batch needs for one actorcore_step. */
static inline int actorcore_max_emit(const ActorCore *ac) { return ac->E * ac->n_step; }

/* One lockstep step of all E environments with exploration rate eps on
 * params (n_params). Transitions are appended to out (out->n grows; room
 * for actorcore_max_emit more rows is the caller's duty). Episodes that
 * ended are written to ended (room for E) and counted in *n_ended. The
 * network forward is skipped when every environment explores. */
void actorcore_step(ActorCore *ac, const float *params, double eps, Batch *out, EpisodeEnd *ended, int *n_ended);

#endif
