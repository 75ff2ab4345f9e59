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

/* Regenerate all MTRAND_N words at once (numpy's mt19937_gen). */
static void regenerate(MtRand *r) {
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

uint32_t mtrand_next32(MtRand *r) {
    if (r->pos == MTRAND_N) regenerate(r);
    uint32_t y = r->key[r->pos++];
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680U;
    y ^= (y << 15) & 0xefc60000U;
    y ^= y >> 18;
    return y;
}

double mtrand_rand(MtRand *r) {
    uint32_t a = mtrand_next32(r) >> 5, b = mtrand_next32(r) >> 6;
    return ((double)a * 67108864.0 + (double)b) / 9007199254740992.0;
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
