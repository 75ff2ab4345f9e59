/* SPDX-License-Identifier: MIT */
/* rows.h: storage for a packed Batch (agents/batch.h) of up to MAXB rows of
 * O-float observations, for the unit tests of replay storage. Define O and
 * MAXB before including it. */
#ifndef GORILA_TEST_ROWS_H
#define GORILA_TEST_ROWS_H

#include <string.h>

#include "batch.h"

typedef struct {
    float obs[MAXB * O], next_obs[MAXB * O], reward[MAXB], discount[MAXB], weight[MAXB];
    int32_t action[MAXB];
    Batch b;
} Rows;

/* n rows, all zero, viewed through r->b. */
static inline void rows_init(Rows *r, int n) {
    memset(r, 0, sizeof *r);
    r->b = (Batch){n, O, r->obs, r->action, r->reward, r->next_obs, r->discount, r->weight};
}

#endif
