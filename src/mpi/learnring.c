/* SPDX-License-Identifier: MIT */
/* learnring.c: the learner's ring families (learnerint.h), allreduce and
 * local_sgd. Every learner holds the whole network as its own PShard
 * (restored from the checkpoint on resume, so the copies start equal);
 * learner 0's also answers PARAM_REQ from actors and the coordinator, as
 * the only parameter source, and CKPT_REQ, with the same code a
 * parameter-server shard runs.
 *
 *   allreduce  the clipped gradients of all learners are summed with
 *              ring_allreduce (allreduce.h; naive_allreduce with
 *              sync.allreduce_impl naive, MPI_Allreduce with mpi,
 *              hier_allreduce with hierarchical) on the
 *              learners' own communicator, averaged, and every learner
 *              applies the same optimizer step to its copy, so the copies
 *              stay bit-identical
 *   local_sgd  each learner applies its own gradients to its copy with its
 *              own optimizer state, and every sync.average_every steps the
 *              copies are averaged: the sum of n + 1 floats (the last, the
 *              stop flag), then / L, and every copy becomes the mean.
 *              Consensus (RoleMetrics.consensus): each learner's distance
 *              from the mean at every average, before it moves there.
 *
 * The ring carries one extra float, the sum of the learners' "stop" flags,
 * so that all learners leave the ring after the same round and none is
 * left waiting for a neighbour that stopped: a learner that has seen STOP
 * goes straight to its next round. While a learner waits in the ring it
 * keeps answering its main communicator (learncore_service): learner 0
 * serves the actors' parameter requests, batches keep arriving.
 */
#include "learnerint.h"
#include "clock.h"

#include <stdlib.h>
#include <string.h>

void learnring_init(Learner *l, LearnRing *r) {
    const WaitMode w = l->rb.cfg->run.wait;
    ring_init(&r->ring, l->rb.ctx, l->rb.comm.world, l->args->learners, &l->rb.comm.bells,
              w == WAIT_POLL ? RING_WAIT_POLL : w == WAIT_SLEEP ? RING_WAIT_SLEEP : RING_WAIT_AUTO);
    r->ring.service = learncore_service;
    r->ring.service_arg = l;
    r->ring.trace = &l->rb.trace;
    /* The node window holds the gradient and the stop flag (n + 1). */
    if (l->rb.cfg->sync.allreduce_impl == ALLREDUCE_HIERARCHICAL && l->rb.cfg->sync.mode != SYNC_GOSSIP)
        ring_hier_init(&r->ring, l->rb.comm.world, l->n + 1, 0);
    learncore_init_own(l, &r->sh);
}

void learnring_metrics(Learner *l, const Ring *ring) {
    RoleMetrics *m = &l->rb.m;
    m->ring_msgs_sent = ring->msgs_sent;
    m->ring_bytes_sent = ring->bytes_sent;
    m->ring_msgs_recv = ring->msgs_recv;
    m->ring_bytes_recv = ring->bytes_recv;
    m->ring_rounds = ring->rounds;
    m->ring_seconds = ring->seconds;
}

/* buf[0..count) summed over the learners by sync.allreduce_impl, timed as
 * sync and traced. */
static void sum_learners(Learner *l, Ring *ring, float *buf, size_t count) {
    double t0 = now_seconds(), waited = ring->wait_seconds;
    if (l->rb.cfg->sync.allreduce_impl == ALLREDUCE_MPI) {
        /* The reference: Open MPI's own algorithm, blocking (it spins,
         * yielding when oversubscribed); its traffic is not visible here. */
        MPI_CHECK(l->rb.ctx, MPI_Allreduce(MPI_IN_PLACE, buf, (int)count, MPI_FLOAT, MPI_SUM, l->args->learners));
        ring->rounds++;
        ring->seconds += now_seconds() - t0;
    } else if (l->rb.cfg->sync.allreduce_impl == ALLREDUCE_NAIVE) {
        /* Every buffer to learner 0 and the sum back: counted in the
         * same ring counters, learner 0's (L-1) times the others'. */
        naive_allreduce(ring, buf, count);
    } else if (l->rb.cfg->sync.allreduce_impl == ALLREDUCE_HIERARCHICAL) {
        /* Shared memory within the node, the ring among the nodes'
         * first learners: the counters are that ring's traffic. */
        hier_allreduce(ring, buf, count);
    } else {
        ring_allreduce(ring, buf, count);
    }
    double t_sync = now_seconds();
    trace_span(&l->rb.trace, TR_ALLREDUCE, t0, t_sync, 0);
    l->rb.m.sync_seconds += t_sync - t0;
    l->rb.comm.wait_seconds += ring->wait_seconds - waited;
    learnring_metrics(l, ring);
}

static void init_allreduce(Learner *l) {
    l->fam.ring = xcalloc(1, sizeof *l->fam.ring);
    learnring_init(l, l->fam.ring);
}

/* One ring round (a zero gradient when there is none); the same averaged
 * step on every copy. */
static bool step_allreduce(Learner *l, bool have_grad) {
    LearnRing *r = l->fam.ring;
    if (!have_grad) memset(l->grad, 0, l->n * sizeof(float));
    l->grad[l->n] = l->stop ? 1.0f : 0.0f;
    sum_learners(l, &r->ring, l->grad, l->n + 1);
    if (l->grad[l->n] > 0) return false;
    float L = (float)l->rb.lay->count[ROLE_LEARNER];
    optim_scale(l->grad, l->n, 1.0f / L);
    if (l->global) optim_clip_norm(l->grad, l->n, l->rb.cfg->optimizer.grad_clip);
    /* Each learner's gradient was finite, but their sum can overflow, and a
     * finite step can overflow the parameters. */
    if (!floats_finite(l->grad, l->n)) learner_diverged(l, "the learners' summed gradient is not finite");
    learncore_apply_own(l);
    return true;
}

static void finish_ring(Learner *l) {
    LearnRing *r = l->fam.ring;
    learncore_finish_own(l);
    ring_free(&r->ring);
    pshard_free(&r->sh);
    free(r);
}

const LearnerSync learnring_allreduce = {init_allreduce, step_allreduce, NULL, finish_ring};

static void init_local_sgd(Learner *l) {
    init_allreduce(l);
    l->fam.ring->every = (uint64_t)l->rb.cfg->sync.average_every;
}

/* Local steps, and every r->every the mean of all copies. */
static bool step_local_sgd(Learner *l, bool have_grad) {
    LearnRing *r = l->fam.ring;
    if (have_grad) learncore_apply_own(l);
    if (++r->steps % r->every != 0 && !l->stop) return true;
    float *buf = l->grad, *x = r->sh.params;
    memcpy(buf, x, l->n * sizeof(float));
    buf[l->n] = l->stop ? 1.0f : 0.0f;
    sum_learners(l, &r->ring, buf, l->n + 1);
    if (buf[l->n] > 0) return false;
    optim_scale(buf, l->n, 1.0f / (float)l->rb.lay->count[ROLE_LEARNER]);
    if (!floats_finite(buf, l->n)) learner_diverged(l, "the learners' mean parameters are not finite");
    learncore_consensus(l, learncore_distance(x, buf, l->n));
    memcpy(x, buf, l->n * sizeof(float));
    l->rb.m.sync_rounds++;
    return true;
}

const LearnerSync learnring_local_sgd = {init_local_sgd, step_local_sgd, NULL, finish_ring};
