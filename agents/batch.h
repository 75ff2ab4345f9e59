/* SPDX-License-Identifier: MIT */
/* batch.h: a packed batch of transitions, the unit that replay hands to the
 * DQN update. Struct-of-arrays, row i of every array is transition i.
 *
 * n-step returns and episode ends are folded into two numbers per row, so
 * that the update needs no knowledge of episodes:
 *   reward[i]   = r_t + g r_{t+1} + ... + g^(k-1) r_{t+k-1}   (k <= n)
 *   discount[i] = g^k if the episode goes on after those k steps
 *                 (including a time-limit truncation: the value of the
 *                 truncated state is bootstrapped), 0 if it terminated
 *   next_obs[i] = the observation k steps after obs[i]
 * and the target is reward[i] + discount[i] * Q_target(next_obs[i], .).
 *
 * The arrays are views; whoever fills the batch owns the memory.
 */
#ifndef GORILA_BATCH_H
#define GORILA_BATCH_H

#include <stdint.h>

typedef struct {
    int n;              /* rows (B) */
    int obs_dim;        /* O */
    float *obs;         /* (B, O) */
    int32_t *action;    /* (B) */
    float *reward;      /* (B) n-step discounted reward */
    float *next_obs;    /* (B, O) */
    float *discount;    /* (B) gamma^k, or 0 after termination */
    float *weight;      /* (B) importance weights; all 1 for uniform replay */
} Batch;

#endif
