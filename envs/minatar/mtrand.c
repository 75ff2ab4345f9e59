/* SPDX-License-Identifier: GPL-3.0-or-later */
/* mtrand.c: see mtrand.h. */
#include "mtrand.h"

#define MT_M 397
#define MT_MATRIX_A 0x9908b0dfU
#define MT_UPPER 0x80000000U
#define MT_LOWER 0x7fffffffU

void mtrand_seed(MtRand *r, uint32_t seed) {
    for (int i = 0; i < MTRAND_N; i++) {
        r->key[i] = seed;
        seed = 1812433253U * (seed ^ (seed >> 30)) + (uint32_t)i + 1U;
    }
    r->pos = MTRAND_N;
}

void mtrand_regenerate(MtRand *r) {
    uint32_t *k = r->key;
    int i = 0;
    for (; i < MTRAND_N - MT_M; i++) {
        uint32_t y = (k[i] & MT_UPPER) | (k[i + 1] & MT_LOWER);
        k[i] = k[i + MT_M] ^ (y >> 1) ^ (-(y & 1U) & MT_MATRIX_A);
    }
    for (; i < MTRAND_N - 1; i++) {
        uint32_t y = (k[i] & MT_UPPER) | (k[i + 1] & MT_LOWER);
        k[i] = k[i + (MT_M - MTRAND_N)] ^ (y >> 1) ^ (-(y & 1U) & MT_MATRIX_A);
    }
    uint32_t y = (k[MTRAND_N - 1] & MT_UPPER) | (k[0] & MT_LOWER);
    k[MTRAND_N - 1] = k[MT_M - 1] ^ (y >> 1) ^ (-(y & 1U) & MT_MATRIX_A);
    r->pos = 0;
}

int64_t mtrand_randint(MtRand *r, int64_t low, int64_t high) {
    uint64_t rng = (uint64_t)(high - low - 1);
    if (rng == 0) return low;
    /* The games' ranges are small: numpy's 32-bit branch (rng < 2^32 - 1). */
    uint32_t mask = (uint32_t)rng;
    mask |= mask >> 1;
    mask |= mask >> 2;
    mask |= mask >> 4;
    mask |= mask >> 8;
    mask |= mask >> 16;
    uint32_t v;
    while ((v = mtrand_next32(r) & mask) > (uint32_t)rng) {
    }
    return low + (int64_t)v;
}
