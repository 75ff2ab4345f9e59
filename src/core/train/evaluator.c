/* SPDX-License-Identifier: MIT */
/* evaluator.c: see evaluator.h. */
#include "evaluator.h"
#include "actorcore.h"
#include "clock.h"
#include "exitcode.h"
#include "util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int evaluator_init(Evaluator *ev, const Config *cfg, const QNet *net, int episodes, char *err) {
    memset(ev, 0, sizeof *ev);
    ev->spec = config_env(cfg);
    if (!ev->spec) return errf(err, "unknown environment \"%s\"", cfg->env.name);
    ev->net = net;
    actorcore_env_options(cfg, &ev->opt);
    ev->seed = cfg->eval.seed;
    ev->episodes = episodes > 0 ? episodes : cfg->eval.episodes;
    ev->P = ev->episodes < EVAL_MAX_PARALLEL ? ev->episodes : EVAL_MAX_PARALLEL;
    ev->O = ev->spec->obs_dim;
    ev->A = net->spec.n_actions;
    size_t P = (size_t)ev->P;
    ev->envs = xcalloc(P, sizeof *ev->envs);
    ev->episode_of = xcalloc(P, sizeof(int));
    ev->obs = xmalloc(P * (size_t)ev->O * sizeof(float));
    ev->q = xmalloc(P * (size_t)ev->A * sizeof(float));
    ev->act = xmalloc(P * sizeof(int32_t));
    ev->slot_of_row = xmalloc(P * sizeof(int));
    ev->returns = xcalloc((size_t)ev->episodes, sizeof(double));
    qnet_work_init(&ev->work, net, ev->P);
    if (ev->spec->ext_hooks) { /* a Python environment: one instance per slot, made here once */
        for (int s = 0; s < ev->P; s++) {
            if (env_init(&ev->envs[s], ev->spec, &ev->opt, ev->seed, RNG_STREAM_EVAL_ENV + (uint64_t)s, err) != 0) {
                evaluator_free(ev);
                return -1;
            }
        }
        return 0;
    }
    /* Validate the options once (every episode's env_init repeats them). */
    Env probe;
    if (env_init(&probe, ev->spec, &ev->opt, ev->seed, RNG_STREAM_EVAL_ENV, err) != 0) {
        evaluator_free(ev);
        return -1;
    }
    env_free(&probe);
    return 0;
}

void evaluator_free(Evaluator *ev) {
    if (ev->envs)
        for (int s = 0; s < ev->P; s++) env_free(&ev->envs[s]);
    free(ev->envs);
    free(ev->episode_of);
    free(ev->obs);
    free(ev->q);
    free(ev->act);
    free(ev->slot_of_row);
    free(ev->returns);
    qnet_work_free(&ev->work);
    memset(ev, 0, sizeof *ev);
}

/* Start episode k in slot s; its observation goes to ev->obs row s. Its
 * environment starts as a new one seeded with (eval.seed,
 * RNG_STREAM_EVAL_ENV + k) would: a registered one is made anew (cheap),
 * a Python one's instance (made in evaluator_init; its constructor may be
 * costly) is kept and its reset seeded again from that generator, which
 * Gymnasium's reset(seed=...) re-seeds whenever it is given. */
static void start(Evaluator *ev, int s, int k) {
    char err[ERR_LEN];
    if (ev->spec->ext_hooks) {
        env_reseed(&ev->envs[s], ev->seed, RNG_STREAM_EVAL_ENV + (uint64_t)k);
    } else {
        env_free(&ev->envs[s]); /* the slot's last episode's (a byte state) */
        if (env_init(&ev->envs[s], ev->spec, &ev->opt, ev->seed, RNG_STREAM_EVAL_ENV + (uint64_t)k, err) != 0)
            DIE_CODE(NULL, GORILA_EXIT_FAILED, "evaluation environment: %s", err); /* validated in evaluator_init */
    }
    env_reset(&ev->envs[s], ev->obs + (size_t)s * (size_t)ev->O);
    if (ev->envs[s].failed) DIE_CODE(NULL, GORILA_EXIT_ENV, "evaluation: environment %s failed in reset (above)",
                                     ev->spec->name);
    ev->episode_of[s] = k;
    ev->returns[k] = 0;
}

void evaluator_set_abandon(Evaluator *ev, EvalAbandonFn abandon, void *arg) {
    ev->abandon = abandon;
    ev->abandon_arg = arg;
}

/* Whether to give up now: the clock every EVAL_CLOCK_EVERY batched steps,
 * the caller's test every EVAL_CHECK_SECONDS (*next_check). */
static bool give_up(Evaluator *ev, uint64_t batch, double *next_check) {
    if (!ev->abandon || batch % EVAL_CLOCK_EVERY != 0) return false;
    double t = now_seconds();
    if (t < *next_check) return false;
    *next_check = t + EVAL_CHECK_SECONDS;
    return ev->abandon(ev->abandon_arg);
}

bool evaluator_run(Evaluator *ev, const float *params, EvalResult *res) {
    double t0 = now_seconds(), next_check = t0 + EVAL_CHECK_SECONDS;
    const size_t O = (size_t)ev->O, A = (size_t)ev->A;
    int next = 0, active = 0;
    uint64_t steps = 0, batches = 0;
    /* An evaluation that came too late: a stop asked for before it began. */
    if (ev->abandon && ev->abandon(ev->abandon_arg)) active = -1;
    for (int s = 0; s < ev->P && active >= 0; s++) {
        start(ev, s, next++);
        active++;
    }
    /* Slots stay at fixed rows of ev->obs; idle slots are compacted out of
     * the forward by gathering active rows to the front of ev->q's input. */
    float *packed = ev->obs; /* rows 0..P-1 are slots; when all are active no copy is needed */
    while (active > 0) {
        if (give_up(ev, ++batches, &next_check)) {
            active = -1;
            break;
        }
        int rows = 0;
        for (int s = 0; s < ev->P; s++) {
            if (ev->episode_of[s] < 0) continue;
            if (rows != s) memmove(ev->obs + (size_t)rows * O, ev->obs + (size_t)s * O, O * sizeof(float));
            ev->slot_of_row[rows++] = s;
        }
        /* After compaction, slot s's observation lives in row r; remap slots
         * so that slot r is the r-th active episode. */
        for (int r = 0; r < rows; r++) {
            int s = ev->slot_of_row[r];
            if (s != r) { /* a swap: slot s keeps r's byte state to free or reuse, none is shared */
                Env e = ev->envs[r];
                ev->envs[r] = ev->envs[s];
                ev->envs[s] = e;
                ev->episode_of[r] = ev->episode_of[s];
                ev->episode_of[s] = -1;
            }
        }
        for (int s = rows; s < ev->P; s++) ev->episode_of[s] = -1;
        qnet_forward(ev->net, params, packed, rows, ev->q, &ev->work);
        qnet_argmax(ev->q, rows, (int)A, ev->act);
        for (int r = 0; r < rows; r++) {
            float *obs = ev->obs + (size_t)r * O;
            EnvStep st = env_step(&ev->envs[r], ev->act[r], obs);
            if (ev->envs[r].failed)
                DIE_CODE(NULL, GORILA_EXIT_ENV, "evaluation: environment %s failed in step (above)", ev->spec->name);
            steps++;
            int k = ev->episode_of[r];
            ev->returns[k] += st.reward;
            if (st.terminated || st.truncated) {
                if (next < ev->episodes) {
                    start(ev, r, next++);
                } else {
                    ev->episode_of[r] = -1;
                    active--;
                }
            }
        }
    }
    if (active < 0) {
        *res = (EvalResult){.episodes = 0, .mean = NAN, .std = NAN, .min = NAN, .max = NAN, .env_steps = steps,
                            .seconds = now_seconds() - t0};
        return false;
    }
    double sum = 0, mn = INFINITY, mx = -INFINITY;
    for (int k = 0; k < ev->episodes; k++) {
        sum += ev->returns[k];
        if (ev->returns[k] < mn) mn = ev->returns[k];
        if (ev->returns[k] > mx) mx = ev->returns[k];
    }
    double mean = sum / ev->episodes, var = 0;
    for (int k = 0; k < ev->episodes; k++) var += (ev->returns[k] - mean) * (ev->returns[k] - mean);
    res->episodes = ev->episodes;
    res->mean = mean;
    res->std = sqrt(var / ev->episodes);
    res->min = mn;
    res->max = mx;
    res->env_steps = steps;
    res->seconds = now_seconds() - t0;
    return true;
}
