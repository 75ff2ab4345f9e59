/* sumtree.c: see sumtree.h.
 *
 * Levels. With K = SUMTREE_FANOUT, level `levels` holds the capacity
 * leaves and level l holds ceil(n_{l+1} / K) nodes, up to level 0, the
 * root. Node j of level l has the children j*K .. j*K + K-1 of level l+1.
 * Every level is allocated rounded up to a multiple of K nodes (the
 * padding is 0 in sum[] and INFINITY in min[]), so every child group is
 * whole and starts on a multiple of K doubles, 64 bytes for K = 8.
 *
 *   capacity 20, K = 4:  level 0: 1 node      (root = total)
 *                        level 1: 2 nodes     (+2 padding)
 *                        level 2: 5 nodes     (+3 padding)
 *                        level 3: 20 leaves
 */
#include "sumtree.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

enum { K = SUMTREE_FANOUT };
_Static_assert(K >= 2 && K <= 64, "SUMTREE_FANOUT must be in 2 .. 64");

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
    size_t nodes = 0;
    for (int l = 0; l <= d; l++) {
        t->off[l] = nodes;
        if (n[l] > SIZE_MAX / 4 / sizeof(double) - nodes - K)
            DIE(NULL, "sum tree of %zu leaves overflows the address space", capacity);
        nodes += round_up(n[l], K);
    }
    size_t bytes = round_up(nodes * sizeof(double), 64);
    char *p = xmalloc_aligned(2 * bytes);
    t->block = p;
    t->sum = (double *)p;
    t->min = (double *)(p + bytes);
    t->capacity = capacity;
    t->levels = d;
    for (size_t i = 0; i < nodes; i++) {
        t->sum[i] = 0.0;
        t->min[i] = INFINITY;
    }
}

void sumtree_free(SumTree *t) {
    free(t->block);
    memset(t, 0, sizeof *t);
}

void sumtree_clear(SumTree *t) {
    size_t nodes = t->off[t->levels] + round_up(t->capacity, K);
    for (size_t i = 0; i < nodes; i++) {
        t->sum[i] = 0.0;
        t->min[i] = INFINITY;
    }
}

void sumtree_set(SumTree *t, size_t leaf, double p) {
    assert(leaf < t->capacity);
    assert(p >= 0.0 && isfinite(p));
    size_t i = leaf;
    int d = t->levels;
    t->sum[t->off[d] + i] = p;
    t->min[t->off[d] + i] = p > 0.0 ? p : INFINITY;
    /* Recompute every ancestor from its K children, in child order. */
    for (int l = d - 1; l >= 0; l--) {
        size_t j = i / K;
        const double *cs = t->sum + t->off[l + 1] + j * K;
        const double *cm = t->min + t->off[l + 1] + j * K;
        double s = cs[0], mn = cm[0];
        for (int k = 1; k < K; k++) {
            s += cs[k];
            mn = cm[k] < mn ? cm[k] : mn;
        }
        t->sum[t->off[l] + j] = s;
        t->min[t->off[l] + j] = mn;
        i = j;
    }
}

double sumtree_get(const SumTree *t, size_t leaf) {
    assert(leaf < t->capacity);
    return t->sum[t->off[t->levels] + leaf];
}

double sumtree_total(const SumTree *t) { return t->sum[0]; }

double sumtree_min(const SumTree *t) { return t->min[0]; }

/* Which of the K children (sums cs[0 .. K-1], their parent's sum > 0) holds
 * *mass; subtracts the sums of the children passed over. The first child
 * whose sum exceeds the remaining mass wins; empty children are never
 * taken, and when rounding leaves the mass at or past the last non-empty
 * child's end that child is taken: a parent with a positive sum has at
 * least one positive child (a sum of non-negative doubles is at least
 * their maximum). */
static inline int pick(const double *cs, double *mass) {
    int last = -1;
    double m = *mass, before = m;
    for (int k = 0; k < K; k++) {
        double s = cs[k];
        if (s > 0.0) {
            if (m < s) {
                *mass = m;
                return k;
            }
            last = k;
            before = m;
            m -= s;
        }
    }
    assert(last >= 0);
    *mass = before;
    return last;
}

size_t sumtree_find(const SumTree *t, double mass) {
    assert(t->sum[0] > 0.0 && "finding in an empty sum tree");
    size_t j = 0;
    for (int l = 0; l < t->levels; l++) j = j * K + (size_t)pick(t->sum + t->off[l + 1] + j * K, &mass);
    assert(j < t->capacity && t->sum[t->off[t->levels] + j] > 0.0);
    return j;
}

void sumtree_find_many(const SumTree *t, const double *mass, int n, size_t *leaf) {
    assert(n >= 0);
    assert(n == 0 || t->sum[0] > 0.0);
    enum { GROUP = 16 };
    double m[GROUP];
    size_t j[GROUP];
    for (int g = 0; g < n; g += GROUP) {
        int c = n - g < GROUP ? n - g : GROUP;
        for (int i = 0; i < c; i++) {
            m[i] = mass[g + i];
            j[i] = 0;
        }
        /* One level for the whole group, then the next: the group's child
         * lines of the next level are requested before any is read. */
        for (int l = 0; l < t->levels; l++) {
            const double *row = t->sum + t->off[l + 1];
            for (int i = 0; i < c; i++) {
                j[i] = j[i] * K + (size_t)pick(row + j[i] * K, &m[i]);
                if (l + 1 < t->levels) __builtin_prefetch(t->sum + t->off[l + 2] + j[i] * K);
            }
        }
        for (int i = 0; i < c; i++) {
            assert(j[i] < t->capacity && t->sum[t->off[t->levels] + j[i]] > 0.0);
            leaf[g + i] = j[i];
        }
    }
}
