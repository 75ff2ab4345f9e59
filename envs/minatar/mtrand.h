/* SPDX-License-Identifier: GPL-3.0-or-later */
/* mtrand.h: the random numbers of numpy's legacy RandomState, which
 * MinAtar's games draw from (numpy.random.RandomState(seed): MT19937
 * seeded with init_genrand, rand() and randint() in their draw order), so
 * that a game seeded with S plays exactly as the reference seeded with S.
 *
 * Part of gorila's port of MinAtar (Young & Tian 2019; github
 * kenjyoung/MinAtar, GPL-3.0-or-later): see envs/minatar/README.md. The
 * generator is the Mersenne Twister of Matsumoto & Nishimura (1998); the
 * conversions are numpy's (random/src/mt19937 and distributions). */
#ifndef GORILA_MINATAR_MTRAND_H
#define GORILA_MINATAR_MTRAND_H

#include <stdint.h>

#define MTRAND_N 624

typedef struct {
    uint32_t key[MTRAND_N];
    int pos;  /* next word of key to temper; MTRAND_N: regenerate first */
} MtRand;

/* RandomState(seed) for 0 <= seed < 2^32: numpy's mt19937_seed. */
void mtrand_seed(MtRand *r, uint32_t seed);

/* Refill all MTRAND_N words of the key (numpy's mt19937_gen); pos = 0. */
void mtrand_regenerate(MtRand *r);

/* The next tempered 32-bit word. Inline: the games draw it every step. */
static inline uint32_t mtrand_next32(MtRand *r) {
    if (r->pos == MTRAND_N) mtrand_regenerate(r);
    uint32_t y = r->key[r->pos++];
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680U;
    y ^= (y << 15) & 0xefc60000U;
    y ^= y >> 18;
    return y;
}

/* RandomState.rand(): a double in [0, 1) from two words, 53 bits. */
static inline double mtrand_rand(MtRand *r) {
    uint32_t a = mtrand_next32(r) >> 5, b = mtrand_next32(r) >> 6;
    return ((double)a * 67108864.0 + (double)b) / 9007199254740992.0;
}

/* RandomState.randint(low, high) for low < high: uniform in [low, high)
 * by masked rejection (numpy's legacy bounded integers); high - low == 1
 * returns low and draws nothing, as numpy does. */
int64_t mtrand_randint(MtRand *r, int64_t low, int64_t high);

#endif
