/* SPDX-License-Identifier: MIT */
/* sumtree.h: a sum tree (and min tree) over `capacity` non-negative
 * priorities, the index behind proportional prioritized replay (no MPI, no
 * allocation after init).
 *
 * Leaf i holds priority p_i >= 0 (0 = empty: never sampled, not in the
 * minimum). Every inner node holds the sum (and the minimum over non-empty
 * leaves) of its children, so the root holds the total mass and
 * sumtree_find walks from the root to the leaf whose prefix-sum interval
 * [p_0 + ... + p_{i-1}, p_0 + ... + p_i) holds a given mass: O(log N).
 *
 * Layout: a K-ary tree (K = SUMTREE_FANOUT children per node) stored level
 * by level, root first. The K children of a node form a group of 2K
 * doubles, their K sums then their K minimums, aligned to 128 bytes: a step
 * of the descent reads one cache line (K = 8 sums), and a set, which
 * recomputes the parent's sum and minimum from the group, touches the two
 * adjacent lines of one 128-byte block per level. Wider nodes make the tree
 * shallower (7 levels below the root instead of 20 for 2^20 leaves), and at
 * capacities past the caches each level is a cache miss: docs/PERFORMANCE.md
 * has the measurement that chose K = 8 (2 and 16 were slower; 4 ties on
 * sample-and-update, samples slower and inserts faster).
 *
 * Numerics: a node's sum is recomputed from its children (in child order)
 * on every set, never updated by a difference, so rounding cannot drift:
 * the same leaves always give the same tree, whatever the order of sets.
 * Internal sums may differ from a left-to-right linear prefix sum in the
 * last bits; sumtree_find is exact with respect to the tree's own sums and
 * never returns an empty leaf (see sumtree_find).
 */
#ifndef GORILA_SUMTREE_H
#define GORILA_SUMTREE_H

#include <stddef.h>

#ifndef SUMTREE_FANOUT
#define SUMTREE_FANOUT 8 /* children per node: 2, 4, 8 or 16 */
#endif

enum { SUMTREE_MAX_LEVELS = 64 };

typedef struct {
    size_t capacity;                    /* leaves 0 .. capacity-1 */
    int levels;                         /* levels below the root (>= 1); level `levels` holds the leaves */
    size_t off[SUMTREE_MAX_LEVELS + 1]; /* first double of level l in node[]; level 0 is the root */
    double *node;                       /* groups of K sums then K minimums (INFINITY: no non-empty leaf) */
    void *block;                        /* the allocation behind node (node is block aligned to 128) */
} SumTree;

/* A tree of capacity >= 1 empty leaves (every priority 0, total 0, min
 * INFINITY). Dies (xmalloc) if the memory is not there. */
void sumtree_init(SumTree *t, size_t capacity);

/* Release the memory; safe on a zeroed struct and twice. */
void sumtree_free(SumTree *t);

/* Set leaf (< capacity) to p, which must be finite and >= 0 (asserted: a
 * NaN here would poison the total; callers check |td| first). p = 0 empties
 * the leaf. O(K log_K N). */
void sumtree_set(SumTree *t, size_t leaf, double p);

/* sumtree_set(t, leaf[i], p[i]) for i = 0 .. n-1, in that order (so the
 * same tree results), with the lines of each group of sets requested
 * before the first is made: at capacities past the caches the misses of a
 * group overlap instead of queueing. */
void sumtree_set_many(SumTree *t, const size_t *leaf, const double *p, int n);

/* Set every leaf to 0. O(N). */
void sumtree_clear(SumTree *t);

/* The priority of leaf (< capacity). */
double sumtree_get(const SumTree *t, size_t leaf);

/* Sum of every leaf (the root). */
double sumtree_total(const SumTree *t);

/* Minimum over leaves with p > 0; INFINITY when every leaf is empty. */
double sumtree_min(const SumTree *t);

/* The leaf whose prefix-sum interval holds mass, for mass in [0, total);
 * the total must be > 0 (asserted). At every node the descent goes to the
 * first child whose sum exceeds the remaining mass, skipping empty children,
 * and to the last non-empty child when rounding leaves mass at or past the
 * node's sum; so the result is always a non-empty leaf, also for a mass at
 * or past the total (the last non-empty leaf) or below 0 (the first). */
size_t sumtree_find(const SumTree *t, double mass);

/* sumtree_find for n masses at once (leaf[i] = sumtree_find(t, mass[i])):
 * the descents run level by level in groups with the next level's lines
 * prefetched, so that for large trees the cache misses of a group overlap
 * instead of queueing. Same results as n single calls. */
void sumtree_find_many(const SumTree *t, const double *mass, int n, size_t *leaf);

#endif
