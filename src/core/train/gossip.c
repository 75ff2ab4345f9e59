/* SPDX-License-Identifier: MIT */
/* gossip.c: see gossip.h. */
#include "gossip.h"
#include "rng.h"

static int mod(int64_t a, int L) { return (int)(((a % L) + L) % L); }

/* Position of i in round t's permutation (Fisher-Yates from a generator
 * seeded by the run seed and t), and the learner at position q. */
static int random_peer(int L, int i, uint64_t t, uint64_t seed) {
    int perm[GOSSIP_MAX_LEARNERS] = {0};
    Rng r;
    rng_seed(&r, seed ^ (t * 0x9E3779B97F4A7C15ull), RNG_STREAM_GOSSIP);
    for (int k = 0; k < L; k++) perm[k] = k;
    for (int k = L - 1; k > 0; k--) {
        int j = (int)rng_below(&r, (uint64_t)k + 1);
        int tmp = perm[k];
        perm[k] = perm[j];
        perm[j] = tmp;
    }
    int pos = 0;
    while (perm[pos] != i) pos++;
    int other = pos ^ 1;
    return other < L ? perm[other] : -1;
}

static int ring_peer(int L, int i, uint64_t t) {
    if (L % 2 == 0) {
        int o = (int)(t % 2);
        /* pairs start at o, o+2, ...: i's pair starts at i when i - o is even */
        return (mod(i - o, L) % 2 == 0) ? mod(i + 1, L) : mod(i - 1, L);
    }
    int s = (int)(t % (uint64_t)L);
    if (i == s) return -1;
    int d = mod(i - s, L); /* 1 .. L-1: pairs (1,2), (3,4), ... after s */
    return d % 2 == 1 ? mod(i + 1, L) : mod(i - 1, L);
}

static int hypercube_peer(int L, int i, uint64_t t) {
    int dims = 0;
    while ((1 << dims) < L) dims++;
    if (dims == 0 || (1 << dims) != L) return -1;
    return i ^ (1 << (int)(t % (uint64_t)dims));
}

int gossip_peer(GossipTopology topo, int L, int i, uint64_t t, uint64_t seed) {
    if (L < 2 || i < 0 || i >= L || L > GOSSIP_MAX_LEARNERS) return -1;
    switch (topo) {
    case GOSSIP_RING: return ring_peer(L, i, t);
    case GOSSIP_HYPERCUBE: return hypercube_peer(L, i, t);
    default: return random_peer(L, i, t, seed);
    }
}

uint64_t gossip_paired_rounds(GossipTopology topo, int L, int i, uint64_t rounds, uint64_t seed) {
    if (L % 2 == 0 && L >= 2 && (topo != GOSSIP_HYPERCUBE || (L & (L - 1)) == 0)) return rounds;
    uint64_t n = 0;
    for (uint64_t t = 0; t < rounds; t++) n += gossip_peer(topo, L, i, t, seed) >= 0;
    return n;
}
