/* SPDX-License-Identifier: MIT */
/* gossip.h: which learner exchanges with which in sync.mode gossip.
 *
 * Exchange rounds are numbered t = 0, 1, 2, ... (one every
 * sync.gossip_every updates of each learner). In each round the learners
 * are split into disjoint pairs, and a learner left over (an odd count)
 * sits the round out, so every exchange is between two learners that both
 * expect it: no cycle of waits, hence no deadlock, for any learner count.
 * Every learner computes the whole round's pairing from (topology, L, t,
 * seed) alone, so all agree without a message.
 *
 *   random     a permutation of 0 .. L-1 drawn from the run seed and t
 *              (RNG_STREAM_GOSSIP); positions 2k and 2k+1 pair; with L
 *              odd the last position sits out
 *   ring       L even: round t pairs (o, o+1), (o+2, o+3), ... mod L with
 *              o = t mod 2, so the two rounds cover every ring edge;
 *              L odd: learner s = t mod L sits out and s+1, s+2 | s+3,
 *              s+4 | ... (mod L) pair, so L rounds cover every edge
 *   hypercube  L a power of 2: partner i XOR 2^(t mod log2 L); log2 L
 *              rounds mix every learner's parameters into every other's
 */
#ifndef GORILA_GOSSIP_H
#define GORILA_GOSSIP_H

#include <stdint.h>

#include "config.h"

#define GOSSIP_MAX_LEARNERS 256 /* roles.learners' bound */

/* Learner i's partner in round t (0 <= i < L), or -1 when it sits out.
 * Symmetric: gossip_peer(.., j, ..) == i when it returns j. */
int gossip_peer(GossipTopology topo, int L, int i, uint64_t t, uint64_t seed);

/* Rounds among the first `rounds` in which learner i has a partner. */
uint64_t gossip_paired_rounds(GossipTopology topo, int L, int i, uint64_t rounds, uint64_t seed);

#endif
