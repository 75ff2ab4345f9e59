/* SPDX-License-Identifier: MIT */
/* rng.h: the one random number generator of gorila (header only, no state
 * outside the Rng struct the caller owns).
 *
 * xoshiro256** (Blackman & Vigna), seeded through splitmix64 from a 64-bit
 * seed and a 64-bit stream id, so that every component (each environment,
 * each actor, the replay sampler, weight init) gets its own independent,
 * reproducible sequence: rng_seed(&r, cfg->run.seed, STREAM_ID).
 * Never use rand()/srand(): they are global state.
 *
 * This header depends on nothing but the C library, so envs/ and agents/
 * may include it without pointing back into src/.
 */
#ifndef GORILA_RNG_H
#define GORILA_RNG_H

#include <stdint.h>
#include <math.h>

typedef struct {
    uint64_t s[4];
} Rng;

/* Stream ids: every consumer of randomness seeds its own Rng with
 * rng_seed(&r, run_seed, RNG_STREAM_X + index), so adding a consumer never
 * shifts another's sequence. */
enum {
    RNG_STREAM_INIT = 1,               /* network weight initialisation */
    RNG_STREAM_REPLAY = 0x100,         /* + replay shard index: sampling */
    RNG_STREAM_ACTOR = 0x10000,        /* + actor index: epsilon-greedy */
    RNG_STREAM_ENV = 0x1000000,        /* + global env index: resets */
    RNG_STREAM_EVAL_ENV = 0x2000000,   /* + eval env index (eval seed) */
    RNG_STREAM_TOOL = 0x4000000,       /* CLI tools (rollout, bench) */
    RNG_STREAM_LEARNER = 0x8000000,    /* + learner index: prioritized sampling over shards */
    RNG_STREAM_GOSSIP = 0x10000000     /* gossip's random pairing (the run seed mixed with the round) */
};

static inline uint64_t rng_splitmix64(uint64_t *x) {
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Seed from (seed, stream). Different streams give unrelated sequences. */
static inline void rng_seed(Rng *r, uint64_t seed, uint64_t stream) {
    uint64_t x = seed ^ (stream * 0xd1342543de82ef95ULL + 0x2545f4914f6cdd1dULL);
    for (int i = 0; i < 4; i++) r->s[i] = rng_splitmix64(&x);
    if ((r->s[0] | r->s[1] | r->s[2] | r->s[3]) == 0) r->s[0] = 1; /* never all-zero */
}

static inline uint64_t rng_rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static inline uint64_t rng_next(Rng *r) {
    uint64_t *s = r->s;
    uint64_t result = rng_rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rng_rotl(s[3], 45);
    return result;
}

/* Uniform double in [0, 1) with 53 random bits. */
static inline double rng_uniform(Rng *r) {
    return (double)(rng_next(r) >> 11) * 0x1.0p-53;
}

/* Uniform double in [lo, hi) (computed as lo + (hi - lo) * u, like numpy). */
static inline double rng_uniform_range(Rng *r, double lo, double hi) {
    return lo + (hi - lo) * rng_uniform(r);
}

/* Uniform float in [0, 1) with 24 random bits. */
static inline float rng_uniform_f(Rng *r) {
    return (float)(rng_next(r) >> 40) * 0x1.0p-24f;
}

/* Uniform integer in [0, n), unbiased (Lemire's multiply-and-reject).
 * n must be > 0. */
static inline uint64_t rng_below(Rng *r, uint64_t n) {
    uint64_t x = rng_next(r);
    __uint128_t m = (__uint128_t)x * n;
    uint64_t l = (uint64_t)m;
    if (l < n) {
        uint64_t t = (0 - n) % n;
        while (l < t) {
            x = rng_next(r);
            m = (__uint128_t)x * n;
            l = (uint64_t)m;
        }
    }
    return (uint64_t)(m >> 64);
}

/* Standard normal deviate (Box-Muller; one value per call, the second is
 * discarded so the state stays a plain Rng). */
static inline double rng_normal(Rng *r) {
    double u1 = 1.0 - rng_uniform(r); /* (0, 1] so log is finite */
    double u2 = rng_uniform(r);
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

#endif
