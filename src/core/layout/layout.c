/* SPDX-License-Identifier: MIT */
/* layout.c: see layout.h. */
#include "layout.h"

#include <assert.h>

static const Role order[] = {ROLE_COORD, ROLE_ACTOR, ROLE_REPLAY, ROLE_LEARNER, ROLE_PS};

void layout_init(Layout *lay, const Config *cfg) {
    for (int r = 0; r < ROLE_COUNT; r++) {
        lay->first[r] = -1;
        lay->count[r] = 0;
    }
    if (cfg->run.mode == RUN_LOCAL) {
        lay->first[ROLE_LOCAL] = 0;
        lay->count[ROLE_LOCAL] = 1;
        lay->size = 1;
        return;
    }
    lay->count[ROLE_COORD] = 1;
    lay->count[ROLE_ACTOR] = cfg->roles.actors;
    lay->count[ROLE_REPLAY] = cfg->roles.replay_shards;
    lay->count[ROLE_LEARNER] = cfg->roles.learners;
    lay->count[ROLE_PS] = cfg->roles.param_servers;
    int next = 0;
    for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
        Role r = order[i];
        if (lay->count[r] > 0) lay->first[r] = next;
        next += lay->count[r];
    }
    lay->size = next;
}

bool layout_params_in_learner(const Config *cfg) {
    return config_sync_no_ps(cfg->sync.mode) || cfg->roles.param_servers == 0;
}

int layout_first_copy(const Config *cfg) {
    if (!config_sync_decentral(cfg->sync.mode)) return -1;
    return cfg->sync.mode == SYNC_EASGD ? 0 : 1;
}

void layout_role_of(const Layout *lay, int rank, Role *role, int *index) {
    assert(rank >= 0 && rank < lay->size);
    for (int r = 0; r < ROLE_COUNT; r++) {
        if (lay->count[r] > 0 && rank >= lay->first[r] && rank < lay->first[r] + lay->count[r]) {
            *role = (Role)r;
            *index = rank - lay->first[r];
            return;
        }
    }
    assert(0 && "rank outside layout");
}

int layout_rank_of(const Layout *lay, Role role, int index) {
    assert(index >= 0 && index < lay->count[role]);
    return lay->first[role] + index;
}

void layout_print(const Layout *lay, FILE *f) {
    fprintf(f, "rank  role         index\n");
    for (int rank = 0; rank < lay->size; rank++) {
        Role role;
        int index;
        layout_role_of(lay, rank, &role, &index);
        fprintf(f, "%4d  %-11s  %d/%d\n", rank, role_name(role), index, lay->count[role]);
    }
}
