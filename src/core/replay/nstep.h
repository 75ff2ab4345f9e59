/* SPDX-License-Identifier: MIT */
/* nstep.h: n-step transition builder for one environment stream (no MPI).
 *
 * An actor keeps one NStep per environment and pushes every step into it.
 * The builder holds the last (up to n) steps whose n-step return is not yet
 * known and emits finished transitions in the layout of agents/batch.h,
 * rewards and episode ends folded into (reward, discount):
 *
 *   while the episode runs, once n steps are pending, the oldest (step t)
 *     is emitted: reward   = r_t + g r_{t+1} + ... + g^(n-1) r_{t+n-1}
 *                 next_obs = the observation after step t+n-1
 *                 discount = g^n
 *   on termination every pending step t is emitted, oldest first, with
 *     reward = r_t + ... + g^(k-1) r_{t+k-1} over the k steps from t to the
 *     end, next_obs = the final observation, discount = 0;
 *   on truncation (time limit) the same, but discount = g^k: the truncated
 *     state's value is bootstrapped.
 * After an ending step the builder is empty for the next episode. With
 * n = 1 the output is exactly the plain transitions (r_t, g or 0).
 * When a step is both terminated and truncated, termination wins (as in
 * Gymnasium: a true end is never bootstrapped).
 *
 * Numerics: returns are accumulated in double, newest reward first
 * (Horner): G = r_{t+k-1}; G = r_{t+k-2} + g G; ...; G = r_t + g G, then
 * rounded once to float. Powers g^k are products g*g*...*g in double,
 * precomputed at init, rounded once to float.
 *
 * Output: nstep_push appends the rows it emits to a caller-owned Batch
 * (rows out->n, out->n + 1, ..., and out->n grows), so an actor can
 * collect transitions straight into the chunk it sends to replay. One push
 * emits at most n rows; the caller makes sure out has room for
 * out->n + n rows. out->weight is neither read nor written.
 */
#ifndef GORILA_NSTEP_H
#define GORILA_NSTEP_H

#include <stdbool.h>
#include <stdint.h>

#include "batch.h"

#define NSTEP_MAX 100

typedef struct {
    int n;            /* steps per transition, 1 .. NSTEP_MAX */
    int obs_dim;      /* O */
    double gamma;     /* g in [0, 1] */
    int count;        /* pending steps, 0 .. n-1 between pushes */
    int start;        /* ring index of the oldest pending step */
    float *obs;       /* (n, O) ring: observation before each pending step */
    int32_t *action;  /* (n) ring */
    float *reward;    /* (n) ring, as pushed */
    double *gpow;     /* (n + 1) gpow[k] = g^k */
    void *block;      /* the one allocation behind the views */
} NStep;

/* Allocate a builder for n in [1, NSTEP_MAX] steps, discount gamma in
 * [0, 1], observations of obs_dim >= 1 floats. Bad arguments are the
 * caller's bug (config validation keeps them in range): assert. */
void nstep_init(NStep *ns, int n, double gamma, int obs_dim);

/* Release the memory; safe on a zeroed struct and twice. */
void nstep_free(NStep *ns);

/* Feed one environment step: obs (O) the observation the action was taken
 * in, next_obs (O) the one after it (the final observation when the step
 * ends the episode). Appends the finished transitions to out (see above;
 * out->obs_dim must be O) and returns how many (0 .. n). obs and next_obs
 * are copied; nothing is kept. */
int nstep_push(NStep *ns, const float *obs, int32_t action, float reward, const float *next_obs, bool terminated,
               bool truncated, Batch *out);

/* Steps waiting for their n-step return (0 .. n-1). */
static inline int nstep_pending(const NStep *ns) { return ns->count; }

/* Drop the pending steps without emitting them (an episode abandoned
 * without an end, e.g. at shutdown); returns how many were dropped so the
 * caller can count them. */
int nstep_clear(NStep *ns);

#endif
