/* SPDX-License-Identifier: MIT */
/* evaluator.h: greedy evaluation of a parameter vector (no MPI).
 *
 * Runs eval.episodes episodes with the greedy policy (argmax Q, no
 * exploration). Episode k always starts from the environment seeded with
 * (eval.seed, RNG_STREAM_EVAL_ENV + k), so every evaluation of a run, and of
 * runs with the same eval.seed, faces the same start states: differences
 * between evaluations come from the parameters alone. Up to
 * EVAL_MAX_PARALLEL episodes run in lockstep with one batched forward per
 * step. Used by the single-process trainer, the coordinator and
 * `gorila eval`. A Python environment (src/pyenv) gets one instance per
 * slot, made by evaluator_init and kept across episodes and evaluations,
 * each episode's reset seeded anew as above (env_reseed).
 */
#ifndef GORILA_EVALUATOR_H
#define GORILA_EVALUATOR_H

#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "env.h"
#include "qnet.h"

#define EVAL_MAX_PARALLEL 128
/* How often a running evaluation asks whether to give up (Evaluator.abandon):
 * every EVAL_CHECK_SECONDS of its time, reading the clock once every
 * EVAL_CLOCK_EVERY batched steps (a forward and one env step per active
 * episode each, microseconds at least), never once per env step. */
#define EVAL_CHECK_SECONDS 0.05
#define EVAL_CLOCK_EVERY 16

/* Asked while an evaluation runs: true gives it up (a stop signal came). */
typedef bool (*EvalAbandonFn)(void *arg);

typedef struct {
    int episodes;
    double mean, std, min, max;
    uint64_t env_steps;     /* steps the evaluation took */
    double seconds;
} EvalResult;

typedef struct {
    const QNet *net;
    const EnvSpec *spec;
    EnvOptions opt;
    uint64_t seed;
    int episodes, P, O, A;
    Env *envs;              /* (P) */
    int *episode_of;        /* (P) episode each slot runs, -1 when idle */
    float *obs;             /* (P, O) observations of the active slots, packed */
    float *q;               /* (P, A) */
    int32_t *act;           /* (P) */
    int *slot_of_row;       /* (P) */
    double *returns;        /* (episodes) */
    QNetWork work;
    EvalAbandonFn abandon;  /* NULL: never give up (evaluator_set_abandon) */
    void *abandon_arg;
} Evaluator;

/* episodes <= 0 means cfg->eval.episodes. Returns 0 or -1 with err. */
int evaluator_init(Evaluator *ev, const Config *cfg, const QNet *net, int episodes, char *err);
void evaluator_free(Evaluator *ev);

/* Ask abandon(arg) every EVAL_CHECK_SECONDS of each evaluation (NULL:
 * never); the caller's pointers are kept. */
void evaluator_set_abandon(Evaluator *ev, EvalAbandonFn abandon, void *arg);

/* Evaluate params (n_params). Returns true with res filled, or false when
 * abandon said to give up: the episodes are left unfinished and res holds
 * only the time and steps taken (episodes 0, the returns NaN). */
bool evaluator_run(Evaluator *ev, const float *params, EvalResult *res);

#endif
