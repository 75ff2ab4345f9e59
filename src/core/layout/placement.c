/* SPDX-License-Identifier: MIT */
/* placement.c: see placement.h. */
#include "placement.h"
#include "pacing.h"
#include "util.h"

#include <stdlib.h>

/* Group id of a world rank: learner groups 0 .. L-1, then replay groups
 * L .. L+S-1. */
static int group_of(const Layout *lay, int rank) {
    Role role;
    int i;
    layout_role_of(lay, rank, &role, &i);
    int L = lay->count[ROLE_LEARNER], S = lay->count[ROLE_REPLAY];
    switch (role) {
    case ROLE_LEARNER: return i;
    case ROLE_PS: return L > 0 ? i % L : L;
    case ROLE_REPLAY: return L + i;
    case ROLE_ACTOR: return L + (S > 0 ? pacing_actor_shard(i, S) : 0);
    default: return L; /* coordinator: with the first replay group */
    }
}

void placement_assign(const Layout *lay, const int *node_ranks, int n_node, const int *cpus, int n_cpus,
                      int *core_of) {
    int groups = lay->count[ROLE_LEARNER] + lay->count[ROLE_REPLAY] + 1;
    int *slot = malloc((size_t)groups * sizeof(int));
    for (int g = 0; g < groups; g++) slot[g] = -1;
    int next = 0;
    /* Deal groups in group order, counting only groups present here. */
    for (int g = 0; g < groups; g++) {
        for (int i = 0; i < n_node; i++) {
            if (group_of(lay, node_ranks[i]) == g) {
                slot[g] = next++ % n_cpus;
                break;
            }
        }
    }
    for (int i = 0; i < n_node; i++) core_of[i] = cpus[slot[group_of(lay, node_ranks[i])]];
    free(slot);
}

/* Appends the ranks of node group g (placement_nodes) to list; returns
 * the count. Group 0: every learner and every PS shard (each learner
 * exchanges a gradient slice and parameters with every shard each update),
 * learner l followed by the shards p mod L == l, so a split keeps those
 * together; groups 1 .. S: replay shard s and its actors; then the
 * coordinator. */
static int node_group(const Layout *lay, int g, int *list) {
    int L = lay->count[ROLE_LEARNER], S = lay->count[ROLE_REPLAY], n = 0;
    if (g == 0) {
        for (int l = 0; l < L; l++) {
            list[n++] = layout_rank_of(lay, ROLE_LEARNER, l);
            for (int p = l; p < lay->count[ROLE_PS]; p += L) list[n++] = layout_rank_of(lay, ROLE_PS, p);
        }
    } else if (g <= S) {
        int s = g - 1;
        list[n++] = layout_rank_of(lay, ROLE_REPLAY, s);
        for (int a = 0; a < lay->count[ROLE_ACTOR]; a++)
            if (pacing_actor_shard(a, S) == s) list[n++] = layout_rank_of(lay, ROLE_ACTOR, a);
    } else {
        list[n++] = layout_rank_of(lay, ROLE_COORD, 0);
    }
    return n;
}

/* The slots' total (*total) and whether they hold all N ranks (*capped);
 * -1 with err when there are none, or too few and not oversubscribed. */
static int count_slots(const int *slots, int n_nodes, int N, bool oversubscribe, long *total, bool *capped,
                       char *err) {
    *total = 0;
    for (int i = 0; i < n_nodes; i++) *total += slots[i];
    if (*total < 1) return errf(err, "the hosts have no slots");
    if (*total < N && !oversubscribe)
        return errf(err, "the hosts have %ld slot%s for the job's %d ranks (add slots or hosts, or "
                         "--oversubscribe)", *total, *total == 1 ? "" : "s", N);
    *capped = *total >= N;
    return 0;
}

int placement_nodes(const Layout *lay, const int *slots, int n_nodes, bool oversubscribe, int *node_of, char *err) {
    int N = lay->size;
    long total;
    bool capped;
    if (count_slots(slots, n_nodes, N, oversubscribe, &total, &capped, err) != 0) return -1;
    int *room = xcalloc((size_t)n_nodes, sizeof(int));
    int given = 0;
    for (int i = 0; i < n_nodes; i++) given += room[i] = (int)((long)N * slots[i] / total);
    for (int i = 0; given < N; i = (i + 1) % n_nodes) /* total >= 1: some host has a slot */
        if (slots[i] > 0 && (!capped || room[i] < slots[i])) room[i]++, given++;
    /* Groups by size, largest first (stable: the learners' group before
     * replay groups of the same size), the coordinator last. */
    int groups = 1 + lay->count[ROLE_REPLAY] + 1;
    int *size = xmalloc((size_t)groups * sizeof(int)), *order = xmalloc((size_t)groups * sizeof(int));
    int *list = xmalloc((size_t)N * sizeof(int));
    for (int g = 0; g < groups; g++) size[g] = node_group(lay, g, list), order[g] = g;
    for (int i = 1; i < groups - 1; i++)
        for (int j = i; j > 0 && size[order[j]] > size[order[j - 1]]; j--) {
            int t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    /* free: the hard limit (the slots, or the share when oversubscribed). */
    int *free_ = xmalloc((size_t)n_nodes * sizeof(int));
    for (int i = 0; i < n_nodes; i++) free_[i] = capped ? slots[i] : room[i];
    for (int o = 0; o < groups; o++) {
        int n = node_group(lay, order[o], list);
        /* The node with the least room that holds the whole group; else the
         * roomiest whose free slots hold it (over its share); else in runs:
         * the roomiest node with a free slot takes as many as its room (at
         * least one), and so on. */
        int at = -1;
        for (int i = 0; i < n_nodes; i++)
            if (room[i] >= n && (at < 0 || room[i] < room[at])) at = i;
        for (int i = 0; at < 0 && i < n_nodes; i++)
            if (free_[i] >= n && (at < 0 || room[i] > room[at])) at = i;
        for (int k = 0; k < n;) {
            int i = at;
            if (i < 0)
                for (int j = 0; j < n_nodes; j++)
                    if (free_[j] > 0 && (i < 0 || room[j] > room[i])) i = j;
            int take = at >= 0 ? n : room[i] > 0 ? room[i] : 1;
            if (take > free_[i]) take = free_[i];
            if (take > n - k) take = n - k;
            for (int t = 0; t < take; t++, k++) node_of[list[k]] = i;
            room[i] -= take;
            free_[i] -= take;
        }
    }
    free(free_);
    free(size);
    free(order);
    free(list);
    free(room);
    return 0;
}

int placement_spread(const Layout *lay, const int *slots, int n_nodes, bool oversubscribe, int *node_of, char *err) {
    int N = lay->size;
    long total;
    bool capped;
    if (count_slots(slots, n_nodes, N, oversubscribe, &total, &capped, err) != 0) return -1;
    int L = lay->count[ROLE_LEARNER], P = lay->count[ROLE_PS], S = lay->count[ROLE_REPLAY];
    int *free_ = xmalloc((size_t)n_nodes * sizeof(int)), *list = xmalloc((size_t)N * sizeof(int));
    for (int i = 0; i < n_nodes; i++) free_[i] = slots[i];
    /* Units in order: each learner, each PS shard, each replay shard with
     * its actors (node_group's), the coordinator; a unit starts at the node
     * after the one the previous unit ended on, or the next with a free
     * slot (a node with no slots never; a full node only when the slots
     * suffice: oversubscribed, nothing is full and slots do not weigh). */
    int units = L + P + S + 1, at = 0;
    for (int u = 0; u < units; u++, at = (at + 1) % n_nodes) {
        int n;
        if (u < L) list[0] = layout_rank_of(lay, ROLE_LEARNER, u), n = 1;
        else if (u < L + P) list[0] = layout_rank_of(lay, ROLE_PS, u - L), n = 1;
        else n = node_group(lay, 1 + (u - L - P), list); /* replay groups, then the coordinator */
        for (int k = 0; k < n; k++) {
            while (slots[at] == 0 || (capped && free_[at] == 0)) at = (at + 1) % n_nodes;
            node_of[list[k]] = at;
            free_[at]--;
        }
    }
    free(free_);
    free(list);
    return 0;
}
