/* SPDX-License-Identifier: MIT */
/* test_gossip.c: gossip's pairing schedule (gossip.h): every round a
 * matching (disjoint pairs, at most one learner left over, and only with
 * an odd count), the topologies' edges, and the count the traffic model
 * reads. */
#include <criterion/criterion.h>
#include <stdbool.h>

#include "gossip.h"

static const GossipTopology topos[] = {GOSSIP_RANDOM, GOSSIP_RING, GOSSIP_HYPERCUBE};

static bool pow2(int L) { return (L & (L - 1)) == 0; }

/* Round t of topology topo on L learners is a matching: partners agree,
 * nobody pairs with itself, and exactly L mod 2 learners sit out. */
static void assert_matching(GossipTopology topo, int L, uint64_t t, uint64_t seed) {
    int out = 0;
    for (int i = 0; i < L; i++) {
        int p = gossip_peer(topo, L, i, t, seed);
        if (p < 0) {
            out++;
            continue;
        }
        cr_assert(p < L && p != i, "topology %d, L %d, round %llu: learner %d paired with %d", topo, L,
                  (unsigned long long)t, i, p);
        cr_assert_eq(gossip_peer(topo, L, p, t, seed), i, "topology %d, L %d, round %llu: %d -> %d -> %d", topo, L,
                     (unsigned long long)t, i, p, gossip_peer(topo, L, p, t, seed));
    }
    cr_assert_eq(out, L % 2, "topology %d, L %d, round %llu: %d sit out", topo, L, (unsigned long long)t, out);
}

Test(gossip, every_round_is_a_matching_for_any_learner_count) {
    for (size_t k = 0; k < sizeof topos / sizeof topos[0]; k++)
        for (int L = 2; L <= 17; L++) {
            if (topos[k] == GOSSIP_HYPERCUBE && !pow2(L)) continue;
            for (uint64_t t = 0; t < 64; t++) assert_matching(topos[k], L, t, 7);
        }
    assert_matching(GOSSIP_RANDOM, 256, 3, 7);
}

Test(gossip, one_learner_or_out_of_range_has_no_partner) {
    cr_assert_eq(gossip_peer(GOSSIP_RANDOM, 1, 0, 0, 1), -1);
    cr_assert_eq(gossip_peer(GOSSIP_RING, 4, 4, 0, 1), -1);
    cr_assert_eq(gossip_peer(GOSSIP_RING, 4, -1, 0, 1), -1);
    cr_assert_eq(gossip_peer(GOSSIP_HYPERCUBE, 6, 0, 0, 1), -1, "6 is no power of 2");
}

/* Ring: only neighbours pair, and every ring edge is used within L rounds
 * (2 when L is even). */
Test(gossip, ring_pairs_neighbours_and_covers_every_edge) {
    for (int L = 2; L <= 11; L++) {
        bool used[16] = {false}; /* edge (i, i+1 mod L) */
        int rounds = L % 2 ? L : 2;
        for (int t = 0; t < rounds; t++)
            for (int i = 0; i < L; i++) {
                int p = gossip_peer(GOSSIP_RING, L, i, (uint64_t)t, 0);
                if (p < 0) continue;
                bool right = p == (i + 1) % L, left = i == (p + 1) % L;
                cr_assert(right || left, "L %d round %d: %d and %d are not neighbours", L, t, i, p);
                used[right ? i : p] = true;
            }
        for (int e = 0; e < L; e++) cr_assert(used[e], "L %d: edge %d-%d never used in %d rounds", L, e, (e + 1) % L, rounds);
    }
}

/* Hypercube: partners differ in bit t mod log2 L. */
Test(gossip, hypercube_partner_differs_in_the_rounds_bit) {
    for (int L = 2; L <= 64; L *= 2) {
        int dims = 0;
        while ((1 << dims) < L) dims++;
        for (uint64_t t = 0; t < 20; t++)
            for (int i = 0; i < L; i++)
                cr_assert_eq(gossip_peer(GOSSIP_HYPERCUBE, L, i, t, 0), i ^ (1 << (t % (uint64_t)dims)), "L %d t %llu",
                             L, (unsigned long long)t);
    }
}

/* Random: the same seed and round give the same pairing; rounds differ;
 * with an odd count each learner sits out about 1 round in L (3000
 * rounds, L = 3: 1000 expected, binomial sd 26; the bounds are 4 sd). */
Test(gossip, random_is_seeded_varies_by_round_and_sits_out_fairly) {
    int L = 6, differ = 0;
    for (uint64_t t = 0; t < 50; t++) {
        for (int i = 0; i < L; i++)
            cr_assert_eq(gossip_peer(GOSSIP_RANDOM, L, i, t, 42), gossip_peer(GOSSIP_RANDOM, L, i, t, 42));
        differ += gossip_peer(GOSSIP_RANDOM, L, 0, t, 42) != gossip_peer(GOSSIP_RANDOM, L, 0, t + 1, 42);
    }
    cr_assert_gt(differ, 25, "learner 0's partner changed in only %d of 50 rounds", differ);
    int seeds_differ = 0;
    for (uint64_t t = 0; t < 20; t++)
        seeds_differ += gossip_peer(GOSSIP_RANDOM, L, 0, t, 1) != gossip_peer(GOSSIP_RANDOM, L, 0, t, 2);
    cr_assert_gt(seeds_differ, 5, "seeds 1 and 2 gave learner 0 the same partner in %d of 20 rounds",
                 20 - seeds_differ);
    for (int i = 0; i < 3; i++) {
        uint64_t paired = gossip_paired_rounds(GOSSIP_RANDOM, 3, i, 3000, 9);
        cr_assert(paired >= 3000 - 1104 && paired <= 3000 - 896, "learner %d sat out %llu of 3000 rounds", i,
                  (unsigned long long)(3000 - paired));
    }
}

/* The count the traffic model uses is the count of rounds with a partner. */
Test(gossip, paired_rounds_counts_the_rounds_with_a_partner) {
    for (size_t k = 0; k < 2; k++)
        for (int L = 2; L <= 7; L++)
            for (int i = 0; i < L; i++) {
                uint64_t n = 0;
                for (uint64_t t = 0; t < 100; t++) n += gossip_peer(topos[k], L, i, t, 5) >= 0;
                cr_assert_eq(gossip_paired_rounds(topos[k], L, i, 100, 5), n, "topology %d L %d learner %d",
                             topos[k], L, i);
            }
    cr_assert_eq(gossip_paired_rounds(GOSSIP_RING, 5, 2, 10, 0), 8, "L 5: each sits out 2 of 10 ring rounds");
}
