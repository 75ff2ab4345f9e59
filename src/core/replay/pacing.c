/* SPDX-License-Identifier: MIT */
/* pacing.c: see pacing.h.
 *
 * The limiter's arithmetic is in double, in exactly the order written in
 * pacing.h (e = spi * (I - m) - S; slack = tol * spi * max(I - m, 0) + B):
 * the roles' decisions must not move by a rounding when this code moves.
 */
#include "pacing.h"

#include <assert.h>
#include <stdlib.h>

#include "shard.h"
#include "util.h"

/* Counts travel through shard_range's size_t. */
_Static_assert(SIZE_MAX >= UINT64_MAX, "pacing_split needs a 64-bit size_t");

uint64_t pacing_split(uint64_t total, int parties, int i, uint64_t *off) {
    assert(parties >= 1 && i >= 0 && i < parties);
    size_t o, len;
    shard_range((size_t)total, parties, i, &o, &len);
    if (off) *off = (uint64_t)o;
    return (uint64_t)len;
}

uint64_t pacing_split_max(uint64_t total, int parties) { return pacing_split(total, parties, 0, NULL); }

int pacing_actor_shard(int actor, int shards) {
    assert(actor >= 0 && shards >= 1);
    return actor % shards;
}

/* ---- limiter ------------------------------------------------------------- */

void pacing_limiter_init(PacingLimiter *p, double spi, double tol, uint64_t min_size, int batch, int actors) {
    assert(spi > 0 && tol >= 0 && batch >= 1 && actors >= 0);
    *p = (PacingLimiter){.spi = spi, .tol = tol, .min_size = min_size, .batch = batch, .actors = actors};
}

static double debt(const PacingLimiter *p) {
    return p->spi * ((double)p->inserted - (double)p->min_size) - (double)p->sampled;
}

static double slack(const PacingLimiter *p, int B) {
    double over = (double)p->inserted - (double)p->min_size;
    return p->tol * p->spi * (over > 0 ? over : 0) + B;
}

void pacing_limiter_restored(PacingLimiter *p, uint64_t rows) {
    assert(p->inserted == 0 && p->sampled == 0 && p->restored == 0);
    p->restored = rows;
    p->min_size = rows < p->min_size ? p->min_size - rows : 0;
}

bool pacing_limiter_can_insert(const PacingLimiter *p) {
    return p->inserted < p->min_size || debt(p) <= slack(p, p->batch);
}

bool pacing_limiter_can_sample(const PacingLimiter *p, int rows) {
    if (p->inserted == 0 && p->restored == 0) return false;
    if (p->actors_done == p->actors) return true;
    return p->inserted >= p->min_size && debt(p) - rows >= -slack(p, rows);
}

void pacing_limiter_inserted(PacingLimiter *p, uint64_t rows, bool last) {
    if (last) p->actors_done++;
    p->inserted += rows;
}

void pacing_limiter_sampled(PacingLimiter *p, int rows) {
    assert(rows >= 0);
    p->sampled += (uint64_t)rows;
    if (p->actors_done == p->actors) p->unpaced += (uint64_t)rows;
}

/* ---- round-robin --------------------------------------------------------- */

void pacing_rr_init(PacingRR *rr, int shards, int actors, int start) {
    assert(shards >= 1 && actors >= 0 && start >= 0);
    rr->n = shards;
    rr->weight = xcalloc(2 * (size_t)shards, sizeof(int));
    rr->current = rr->weight + shards;
    rr->total = 0;
    for (int s = 0; s < shards; s++) {
        rr->weight[s] = (int)pacing_split((uint64_t)actors, shards, s, NULL);
        rr->total += rr->weight[s];
    }
    for (int k = 0; k < start; k++) pacing_rr_next(rr);
}

int pacing_rr_next(PacingRR *rr) {
    int best = 0;
    for (int s = 0; s < rr->n; s++) {
        rr->current[s] += rr->weight[s];
        if (rr->current[s] > rr->current[best]) best = s;
    }
    rr->current[best] -= rr->total;
    return best;
}

void pacing_rr_free(PacingRR *rr) {
    free(rr->weight);
    rr->weight = rr->current = NULL;
}
