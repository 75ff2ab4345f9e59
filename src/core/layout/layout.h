/* SPDX-License-Identifier: MIT */
/* layout.h: which rank plays which role.
 *
 * A distributed job has 1 + actors + replay_shards + learners + param_servers
 * ranks, in this fixed order:
 *
 *   rank 0                      coordinator
 *   1 .. A                      actors        0 .. A-1
 *   A+1 .. A+S                  replay shards 0 .. S-1
 *   A+S+1 .. A+S+L              learners      0 .. L-1
 *   A+S+L+1 .. A+S+L+P          parameter servers 0 .. P-1
 *
 * A local run (run.mode: local) is one rank with ROLE_LOCAL.
 */
#ifndef GORILA_LAYOUT_H
#define GORILA_LAYOUT_H

#include "config.h"
#include "ctx.h"

typedef struct {
    int size;                 /* ranks the job needs */
    int first[ROLE_COUNT];    /* first rank of each role (-1 if none) */
    int count[ROLE_COUNT];    /* ranks of each role */
} Layout;

/* Derive the layout from cfg->run.mode and cfg->roles. */
void layout_init(Layout *lay, const Config *cfg);

/* Role and index of a rank; rank must be in [0, lay->size). */
void layout_role_of(const Layout *lay, int rank, Role *role, int *index);

/* Rank of (role, index); index must be in [0, lay->count[role]). */
int layout_rank_of(const Layout *lay, Role role, int index);

/* Does learner 0 hold the parameters (the job's only parameter source)?
 * In sync.mode allreduce, gossip and local_sgd, and in a parameter-server mode with
 * roles.param_servers 0 (one learner, its parameters in its own process:
 * Ape-X's layout, no round trip per update). A distributed cfg. */
bool layout_params_in_learner(const Config *cfg);

/* The first learner that writes a copy of its own into live checkpoints
 * (learner-<k>.ckpt, runckpt_write_copy): in the decentralized modes every
 * learner whose state the parameter sources do not hold, 1 in gossip and
 * local_sgd (learner 0's is the job's shard file), 0 in easgd (the shards
 * hold the center). -1 in the other modes: no copies. */
int layout_first_copy(const Config *cfg);

/* Print "rank role index" rows, one per rank, to f. */
void layout_print(const Layout *lay, FILE *f);

#endif
