/* placement.c: see placement.h. */
#include "placement.h"
#include "pacing.h"

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
