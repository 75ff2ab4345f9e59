/* SPDX-License-Identifier: MIT */
/* learner.c: the learner role. Computes DQN gradients on batches from the
 * replay shards and syncs them by one of the sync families of
 * learnerint.h, chosen by sync.mode:
 *
 *   parameter servers (ps_sync, ps_async, ps_bounded; learnps.c): the
 *   gradient goes to the PS shards in slices and fresh parameters come
 *   back; without parameter servers the learner applies its own steps
 *
 *   allreduce and local_sgd (learnring.c): every learner holds the whole
 *   network and the learners' ring sums their gradients (allreduce) or
 *   averages their parameters (local_sgd)
 *
 *   gossip and easgd (learndecent.c): every learner steps its own copy,
 *   which meets a partner's (gossip) or the PS shards' center (easgd)
 *
 * Every family runs the same batch pipeline (learnbatch.c: sampling with
 * prefetch or prioritized replay, the gradient, accumulation) and the
 * same message loop (learncore.c). learner_run is the loop over batches;
 * the family's step decides when it ends.
 */
#include "learnerint.h"
#include "clock.h"

#include <stdlib.h>

static const LearnerSync *family(const Config *cfg) {
    switch (cfg->sync.mode) {
    case SYNC_ALLREDUCE: return &learnring_allreduce;
    case SYNC_LOCAL_SGD: return &learnring_local_sgd;
    case SYNC_GOSSIP: return &learndecent_gossip;
    case SYNC_EASGD: return &learndecent_easgd;
    default: return layout_params_in_learner(cfg) ? &learnps_local : &learnps_sync;
    }
}

int learner_run(const Ctx *ctx, const JobArgs *args) {
    Learner *l = xcalloc(1, sizeof *l);
    role_init(&l->rb, ctx, args);
    l->args = args;
    const Config *cfg = args->cfg;
    l->n = l->rb.net.n_params;
    l->global = cfg->learner.batch == LEARNER_BATCH_GLOBAL;
    l->grad = xmalloc_for((l->n + 1) * sizeof(float), "gradient", "network.hidden");
    learnbatch_init(l);
    l->via = family(cfg);
    l->via->init(l);
    if (!l->stop) learnbatch_request(l);
    /* The family's step decides when to leave: in allreduce mode a STOP
     * can arrive inside the ring (the learner serves its messages there),
     * and this learner must still run the round in which all of them see
     * it, or its neighbours would wait for it forever. */
    LearnBatch *bt = &l->bt;
    for (;;) {
        if (!bt->next_ready && !l->stop) {
            double t0 = now_seconds();
            comm_expect(&l->rb.comm, bt->replay_ranks, bt->S);
            LEARNER_WAIT_UNTIL(l, bt->next_ready);
            double t1 = now_seconds();
            trace_span(&l->rb.trace, TR_WAIT_SAMPLE, t0, t1, 0);
            l->rb.m.sample_wait_seconds += t1 - t0;
        }
        bool took = bt->next_ready;
        bool have = took && learnbatch_take(l);
        if (bt->K > 1 && !learnbatch_accumulate(l, took, &have)) {
            role_report(&l->rb, false);
            continue;
        }
        if (!l->via->step(l, have)) break;
        role_report(&l->rb, false);
    }
    /* In allreduce mode the ring may end before this learner has seen its
     * STOP; the coordinator sends CKPT_REQ before STOP, so once STOP is in,
     * any final checkpoint request is too. */
    LEARNER_WAIT_UNTIL(l, false);
    learnbatch_drain(l);
    l->via->finish(l);
    learnbatch_free(l);
    free(l->grad);
    role_free(&l->rb);
    free(l);
    return 0;
}
