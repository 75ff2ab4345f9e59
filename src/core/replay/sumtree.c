/* SPDX-License-Identifier: MIT */
/* sumtree.c: see sumtree.h.
 *
 * Levels. With K = SUMTREE_FANOUT, level `levels` holds the capacity
 * leaves and level l holds ceil(n_{l+1} / K) nodes, up to level 0, the
 * root. Node j of level l has the children j*K .. j*K + K-1 of level l+1,
 * which form group j of that level: 2K doubles at off[l+1] + j*2K, the K
 * children's sums, then their K minimums. So node j of level l sits at
 *   sum: off[l] + (j / K) * 2K + j % K     min: the same + K
 * Every level is allocated in whole groups (the padding has sum 0 and
 * minimum INFINITY), so every child group is complete.
 *
 *   capacity 20, K = 4:  level 0: 1 node      (root = total)  1 group
 *                        level 1: 2 nodes     (+2 padding)     1 group
 *                        level 2: 5 nodes     (+3 padding)     2 groups
 *                        level 3: 20 leaves                    5 groups
 */
#include "sumtree.h"

#include <assert.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

enum { K = SUMTREE_FANOUT, G = 2 * SUMTREE_FANOUT };
_Static_assert(K >= 2 && K <= 64 && (K & (K - 1)) == 0, "SUMTREE_FANOUT must be a power of two in 2 .. 64");

/* Index of node j of level l's sum in t->node (its minimum is K further). */
static inline size_t at(const SumTree *t, int l, size_t j) { return t->off[l] + (j / K) * G + j % K; }

/* The group of node j's children: K sums, then K minimums. */
static inline double *group(const SumTree *t, int l, size_t j) { return t->node + t->off[l + 1] + j * G; }

static size_t n_doubles(const SumTree *t) {
    return t->off[t->levels] + (t->capacity + K - 1) / K * G;
}

void sumtree_init(SumTree *t, size_t capacity) {
    assert(capacity >= 1);
    memset(t, 0, sizeof *t);
    size_t n[SUMTREE_MAX_LEVELS + 1];
    /* Count the levels bottom up: at least one level below the root. */
    int d = 0;
    size_t m = capacity;
    do {
        m = (m + K - 1) / K;
        d++;
    } while (m > 1);
    assert(d <= SUMTREE_MAX_LEVELS);
    n[d] = capacity;
    for (int l = d - 1; l >= 0; l--) n[l] = (n[l + 1] + K - 1) / K;
    size_t total = 0;
    for (int l = 0; l <= d; l++) {
        t->off[l] = total;
        size_t groups = (n[l] + K - 1) / K;
        if (groups > (SIZE_MAX / 4 / sizeof(double) - total) / G)
            DIE(NULL, "sum tree of %zu leaves overflows the address space", capacity);
        total += groups * G;
    }
    /* Aligned to 128 bytes, so a group's sum and minimum lines are one
     * aligned pair (what adjacent-line prefetchers fetch together). */
    char *p = xmalloc_for(total * sizeof(double) + 64, "replay sum tree", "replay.capacity");
    t->block = p;
    t->node = (double *)(p + ((uintptr_t)p % 128 ? 128 - (uintptr_t)p % 128 : 0));
    t->capacity = capacity;
    t->levels = d;
    sumtree_clear(t);
}

void sumtree_free(SumTree *t) {
    free(t->block);
    memset(t, 0, sizeof *t);
}

void sumtree_clear(SumTree *t) {
    size_t total = n_doubles(t);
    for (size_t g = 0; g < total; g += G)
        for (int k = 0; k < K; k++) {
            t->node[g + (size_t)k] = 0.0;
            t->node[g + K + (size_t)k] = INFINITY;
        }
}

void sumtree_set(SumTree *t, size_t leaf, double p) {
    assert(leaf < t->capacity);
    assert(p >= 0.0 && isfinite(p));
    int d = t->levels;
    size_t i = at(t, d, leaf);
    t->node[i] = p;
    t->node[i + K] = p > 0.0 ? p : INFINITY;
    /* Recompute every ancestor from its K children, in child order. */
    size_t j = leaf;
    for (int l = d - 1; l >= 0; l--) {
        j /= K;
        const double *cg = group(t, l, j);
        double s = cg[0], mn = cg[K];
        for (int k = 1; k < K; k++) {
            s += cg[k];
            mn = cg[K + k] < mn ? cg[K + k] : mn;
        }
        size_t a = at(t, l, j);
        t->node[a] = s;
        t->node[a + K] = mn;
    }
}

void sumtree_set_many(SumTree *t, const size_t *leaf, const double *p, int n) {
    assert(n >= 0);
    enum { GROUP = 16, DEEP = 3 }; /* the levels nearest the leaves are the ones that miss */
    int d = t->levels;
    for (int g = 0; g < n; g += GROUP) {
        int c = n - g < GROUP ? n - g : GROUP;
        for (int i = 0; i < c; i++) {
            size_t j = leaf[g + i];
            assert(j < t->capacity);
            /* the group holding the leaf, then its ancestors' groups: sums and minimums */
            for (int l = d; l >= 1 && l > d - DEEP; l--, j /= K) {
                const double *gr = group(t, l - 1, j / K);
                __builtin_prefetch(gr + (j % K), 1);
                __builtin_prefetch(gr + K + (j % K), 1);
            }
        }
        for (int i = 0; i < c; i++) sumtree_set(t, leaf[g + i], p[g + i]);
    }
}

double sumtree_get(const SumTree *t, size_t leaf) {
    assert(leaf < t->capacity);
    return t->node[at(t, t->levels, leaf)];
}

double sumtree_total(const SumTree *t) { return t->node[0]; }

double sumtree_min(const SumTree *t) { return t->node[K]; }

/* Which of the K children (sums cs[0 .. K-1], their parent's sum > 0) holds
 * *mass; subtracts the sums of the children passed over.
 *
 * The children's running sums e_k = cs[0] + ... + cs[k] are added in child
 * order, the order the parent's sum was computed in, and the pick is the
 * number of e_k <= mass: the first child whose interval [e_{k-1}, e_k)
 * holds the mass. That child is never empty (an empty child has e_k =
 * e_{k-1} <= mass). Counting instead of branching keeps the loop free of
 * unpredictable branches. The count is K only when rounding left the mass
 * at or past the parent's sum (or the caller passed mass >= total): then
 * the last non-empty child is taken with the mass it started at. A parent
 * with a positive sum has a positive child (a sum of non-negative doubles
 * is at least their maximum). The mass must be >= 0 (else an empty first
 * child could be taken): the callers clamp it, and a remaining mass
 * m - e_{k-1} is >= 0 since e_{k-1} <= m. */
static inline int pick(const double *cs, double *mass) {
    double m = *mass, e[K], acc = 0.0;
    int k = 0;
    for (int c = 0; c < K; c++) {
        acc += cs[c];
        e[c] = acc;
    }
    for (int c = 0; c < K; c++) k += e[c] <= m;
    if (k < K) {
        *mass = k ? m - e[k - 1] : m;
        return k;
    }
    int last = K - 1;
    while (last > 0 && cs[last] == 0.0) last--;
    assert(cs[last] > 0.0);
    *mass = last ? m - e[last - 1] : m;
    if (*mass < 0.0) *mass = 0.0;
    return last;
}

size_t sumtree_find(const SumTree *t, double mass) {
    assert(t->node[0] > 0.0 && "finding in an empty sum tree");
    assert(!isnan(mass));
    if (mass < 0.0) mass = 0.0; /* the first non-empty leaf (pick needs mass >= 0) */
    size_t j = 0;
    for (int l = 0; l < t->levels; l++) j = j * K + (size_t)pick(group(t, l, j), &mass);
    assert(j < t->capacity && sumtree_get(t, j) > 0.0);
    return j;
}

void sumtree_find_many(const SumTree *t, const double *mass, int n, size_t *leaf) {
    assert(n >= 0);
    assert(n == 0 || t->node[0] > 0.0);
    enum { GROUP = 32 };
    double m[GROUP];
    size_t j[GROUP];
    for (int g = 0; g < n; g += GROUP) {
        int c = n - g < GROUP ? n - g : GROUP;
        for (int i = 0; i < c; i++) {
            assert(!isnan(mass[g + i]));
            m[i] = mass[g + i] < 0.0 ? 0.0 : mass[g + i];
            j[i] = 0;
        }
        /* One level for the whole group, then the next: the group's child
         * lines of the next level are requested before any is read. */
        for (int l = 0; l < t->levels; l++) {
            for (int i = 0; i < c; i++) {
                j[i] = j[i] * K + (size_t)pick(group(t, l, j[i]), &m[i]);
                if (l + 1 < t->levels) __builtin_prefetch(group(t, l + 1, j[i]));
            }
        }
        for (int i = 0; i < c; i++) {
            assert(j[i] < t->capacity && sumtree_get(t, j[i]) > 0.0);
            leaf[g + i] = j[i];
        }
    }
}
