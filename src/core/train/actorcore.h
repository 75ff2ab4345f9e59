/* SPDX-License-Identifier: MIT */
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
 * Initial priorities (Ape-X; prioritized replay with
 * replay.initial_priority: actor): the actor scores every transition it
 * emits with its own network's |td| = |reward + discount * max_a Q(s', a)
 * - Q(s, a)|, taken from the same batched forward it acts with: Q(s, a) is
 * kept from the step that acted, and Q(s') is a row of the next step's
 * forward (the environment's next observation; or, after a time-limit
 * truncation, the final observation, added to that forward as an extra
 * row; a terminated row needs none). So a transition is held back one step
 * (`stage`) until its bootstrap row has been through the forward, and then
 * appended to out with its |td| in out->weight. The forward is never
 * skipped in this mode (Q(s, a) of a random action is needed too).
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
    float *obs;           /* (2E, O) observation each env is in; rows E..: truncated finals (prio) */
    float *next_obs;      /* (O) scratch */
    float *q;             /* (2E, A) */
    bool *greedy;         /* (E) this step's choice: greedy or random */
    double *ep_return;    /* (E) return of the running episode */
    int *ep_len;          /* (E) */
    QNetWork work;        /* 2E rows */
    Rng rng;              /* exploration */
    /* initial priorities (see the top of this file) */
    bool prio;            /* compute them */
    Batch stage;          /* rows emitted by the last step, awaiting their bootstrap Q */
    int *stage_boot;      /* (E n) forward row of each staged row's s' (-1: terminated, none) */
    float *stage_qsa;     /* (E n) Q(s, a) of each staged row, from the step that acted */
    float *qsa;           /* (E, n) per env: Q(s, a) of its pending steps, oldest first */
    int *n_qsa;           /* (E) */
    int n_final;          /* truncated final observations waiting in obs rows E .. E + n_final - 1 */
    uint64_t steps;       /* environment steps taken (all envs) */
    uint64_t episodes;    /* episodes finished */
    bool env_failed;      /* a (Python) environment raised or broke its contract in a reset or
                           * step (Env.failed; the bridge said why): actorcore_step returns at
                           * once, keeping nothing of that step; the caller ends with
                           * GORILA_EXIT_ENV */
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
 * for actorcore_max_emit more rows is the caller's duty); with initial
 * priorities on, they are the previous step's, each with its |td| in
 * out->weight. Episodes that ended are written to ended (room for E) and
 * counted in *n_ended. Without priorities the network forward is skipped
 * when every environment explores. */
void actorcore_step(ActorCore *ac, const float *params, double eps, Batch *out, EpisodeEnd *ended, int *n_ended);

/* Initial priorities: score and append the transitions still held back
 * (one extra forward); call before the last chunk. A no-op otherwise. */
void actorcore_flush(ActorCore *ac, const float *params, Batch *out);

#endif
