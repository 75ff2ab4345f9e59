/* SPDX-License-Identifier: MIT */
/* explore.h: exploration schedules and the epsilon-greedy choice.
 *
 * Pure functions of their arguments; the only state is the Rng the caller
 * owns (one per actor, RNG_STREAM_ACTOR + actor index).
 */
#ifndef GORILA_EXPLORE_H
#define GORILA_EXPLORE_H

#include <stdint.h>

#include "rng.h"

/* Ape-X defaults (Horgan et al. 2018): eps_i = 0.4^(1 + 7 i / (N - 1)). */
#define EXPLORE_APEX_EPS 0.4
#define EXPLORE_APEX_ALPHA 7.0

/* Linear decay from start (step 0) to end (step >= decay_steps), e.g.
 * start + (end - start) * step / decay_steps. decay_steps == 0 gives end.
 * Same as explore_linear_after with begin 0. */
double explore_linear(double start, double end, uint64_t decay_steps, uint64_t step);

/* The same decay begun at step begin: start for step < begin, then
 * explore_linear(start, end, decay_steps, step - begin). MinAtar's dqn.py
 * is begin 5000 (its replay start: random actions until then), start 1.0,
 * end 0.1, decay_steps 100000. */
double explore_linear_after(double start, double end, uint64_t begin, uint64_t decay_steps, uint64_t step);

/* Ape-X per-actor epsilon for actor i of n (0 <= i < n):
 * eps^(1 + alpha * i / (n - 1)), and eps itself when n == 1. */
double explore_apex_eps(double eps, double alpha, int i, int n);

/* Epsilon-greedy over one row of Q-values q (A): with probability eps a
 * uniformly random action (which may be the greedy one), otherwise the
 * argmax (ties: lowest index). Draws one uniform from rng, and one more
 * integer when exploring. */
int explore_egreedy(const float *q, int A, double eps, Rng *rng);

#endif
