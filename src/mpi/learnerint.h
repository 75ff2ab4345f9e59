/* SPDX-License-Identifier: MIT */
/* learnerint.h (private to the learner's files): the state every sync
 * family of the learner shares, and how the files divide the work.
 *
 *   learner.c      learner_run, the one entry point: the loop (a batch, its
 *                  gradient, the family's step) and the choice of family
 *   learnbatch.c   the batch pipeline every family runs: sampling requests
 *                  (uniform with prefetch, or prioritized), SAMPLE replies,
 *                  priorities back, the gradient, accumulation
 *   learncore.c    what the families share: the message loop (handle,
 *                  LEARNER_WAIT_UNTIL, the ring's service hook) and the
 *                  learner's own copy of the network (a PShard)
 *   learnps.c      the parameter-server path: ps_sync, ps_async and
 *                  ps_bounded, the local mode without parameter servers,
 *                  and the link to the PS shards easgd exchanges over
 *   learnring.c    allreduce and local_sgd: the learners' ring
 *   learndecent.c  the decentralized modes gossip and easgd
 *
 * Each file depends only on those above it in this order, with learner.c
 * on top (no link cycle): learnbatch, learncore, learnps and learnring,
 * learndecent, learner.
 */
#ifndef GORILA_LEARNERINT_H
#define GORILA_LEARNERINT_H

#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agentcfg.h"
#include "allreduce.h"
#include "exitcode.h"
#include "lossguard.h"
#include "pacing.h"
#include "pshard.h"
#include "rng.h"
#include "role.h"
#include "util.h"

typedef struct Learner Learner;

/* A prioritized batch's rows, per replay shard (learnbatch.c). */
typedef struct {
    int *off, *cnt;           /* (S) the shard's rows in the batch: [off, off + cnt) */
    double *share;            /* (S) total[s] / sum of totals when the batch was drawn */
    uint64_t *slot, *id;      /* (B) */
    double *prob;             /* (B) as read: the row's priority; then its probability */
} LearnPrioRows;

/* The batch pipeline (learnbatch.c), which every family runs. */
typedef struct {
    Dqn dqn;
    DqnParams dp;
    LossGuard guard;          /* learner.loss_outlier_sigma */
    int batch;                /* rows per gradient (agentcfg_learner_batch) */
    Batch cur, next;          /* next: prioritized replay's one batch in flight */
    bool next_ready, req_out;
    uint64_t req_seq;         /* the last request sent */
    /* uniform replay: a ring of D batches, slot seq % D for request seq */
    int D;                    /* learner.prefetch */
    Batch *bq;                /* (D) */
    bool *bq_ready;           /* (D) */
    uint64_t taken;           /* the last request whose batch became cur */
    int S, first_replay;
    int *replay_ranks;        /* (S) the replay shards' ranks (comm_expect) */
    PacingRR rr;              /* which shard to sample next (prioritized: to charge) */
    /* prioritized replay (Ape-X): a batch is spread over the shards in
     * proportion to their total priority (learnbatch.c) */
    bool prio;
    Rng rng;                  /* the stratified draws */
    double *total;            /* (S) each shard's total priority, as last reported */
    uint64_t *size;           /* (S) each shard's size, as last reported */
    LearnPrioRows pcur, pnext; /* of cur and next, swapped with them */
    int waiting;              /* replies still missing for next */
    int *shard_of, *charge;   /* (B), (S) scratch */
    double *frac;             /* (B) scratch */
    float *td;                /* (B) |td| of cur's rows */
    SendBuf *reqbuf, *priobuf; /* (S) SAMPLE_REQ and PRIORITY to each shard */
    /* learner.accumulate K > 1: K mini-batch gradients per sync */
    int K;
    float *acc;               /* (n) the sum of the parts kept so far */
    int parts, kept;          /* batches taken since the last sync; of those, gradients in acc */
} LearnBatch;

/* A sync family. learner_run calls init once, step after every update
 * (with learner.accumulate K, every K batches; have_grad false when STOP
 * came before the next batch or the K-th, or when the loss guard dropped
 * the gradient, or all K, in an asynchronous mode), and finish after STOP:
 * the last messages, the shutdown drain of the family's own send buffers,
 * then its state freed. on_params takes a PARAMS message; NULL: none is
 * expected (one that comes is fatal). */
typedef struct {
    void (*init)(Learner *l);
    bool (*step)(Learner *l, bool have_grad); /* false: leave (STOP seen; allreduce: by every learner
                                                 in the same round) */
    void (*on_params)(Learner *l, const Msg *m);
    void (*finish)(Learner *l);
} LearnerSync;

/* The link to the PS shards (learnps.c): the PS path's, and easgd's. */
typedef struct {
    SendBuf *gradbuf;         /* (n_sources) */
    struct {
        uint64_t version;     /* params version of the slice held */
        uint64_t tversion;    /* target version of the slice held */
    } *reply;                 /* (n_sources) what each source's last PARAMS carried */
    int got;                  /* PARAMS received in the current pull */
    bool pulling;
} LearnPsLink;

/* The ring families' state (learnring.c), gossip's too (learndecent.c). */
typedef struct {
    PShard sh;                /* this learner's copy of the network; learner 0 serves it */
    Ring ring;                /* the learners' ring (allreduce.h) */
    uint64_t every;           /* local_sgd: sync.average_every; gossip: sync.gossip_every */
    uint64_t steps;           /* step calls (batches, or K-batch sums) since the start */
} LearnRing;

typedef struct LearnPs LearnPs;
typedef struct LearnGossip LearnGossip;
typedef struct LearnEasgd LearnEasgd;

struct Learner {
    RoleBase rb;
    const JobArgs *args;
    size_t n;
    float *params, *target;   /* (n) what gradients are computed on (views): the
                                 learner's copy in the PS path, its own PShard's otherwise */
    float *grad;              /* (n + 1) the gradient; allreduce: + the stop flag */
    bool stop;
    bool global;              /* learner.batch global: clip the averaged gradient, not the part */
    LearnBatch bt;
    const LearnerSync *via;
    PShard *own;              /* the learner's own copy of the whole network, in every family but
                                 the PS path (NULL there): what it answers PARAM_REQ and CKPT_REQ from */
    union {                   /* the family's own state (via) */
        LearnPs *ps;
        PShard *local;
        LearnRing *ring;
        LearnGossip *gossip;
        LearnEasgd *easgd;
    } fam;
};

/* Training has diverged: end the job with GORILA_EXIT_DIVERGED, saying
 * what went non-finite (what: "loss is nan", ...), where, and what to
 * change. Here, not in a file, so that the batch pipeline at the bottom
 * of the learner's files can call it too. */
static inline _Noreturn void learner_diverged(const Learner *l, const char *what) {
    char hint[AGENTCFG_HINT_LEN];
    agentcfg_diverge_hint(l->rb.cfg, hint);
    DIE_CODE(l->rb.ctx, GORILA_EXIT_DIVERGED, "training diverged: %s at update %" PRIu64 " on learner %d (rank %d); %s",
             what, l->rb.m.updates + 1, l->rb.ctx->index, l->rb.ctx->rank, hint);
}

/* ---- learnbatch.c: the batch pipeline ---- */

/* Batches, the prefetch ring, the shards' order, the loss guard, the
 * accumulator and (replay.kind prioritized) the prioritized state. */
void learnbatch_init(Learner *l);
/* Sample requests until learner.prefetch are in flight (prioritized: one). */
void learnbatch_request(Learner *l);
/* A SAMPLE reply into its slot; dies on one not asked for. */
void learnbatch_on_sample(Learner *l, const Msg *m);
/* The batch that arrived becomes current, the next is requested, and its
 * gradient goes into l->grad; false when the loss guard dropped it and
 * nothing is to be sent. */
bool learnbatch_take(Learner *l);
/* learner.accumulate K > 1, after each pass of learner_run's loop: true
 * when a sync is due, with *have telling whether l->grad holds the mean. */
bool learnbatch_accumulate(Learner *l, bool took, bool *have);
/* Complete the prioritized requests and updates before the shutdown. */
void learnbatch_drain(Learner *l);
void learnbatch_free(Learner *l);

/* ---- learncore.c: the message loop and the learner's own copy ---- */

void learncore_handle(Learner *l, const Msg *m);

/* Poll until cond holds or STOP arrives (cond re-evaluated per message). */
#define LEARNER_WAIT_UNTIL(l, cond)                                                                    \
    do {                                                                                               \
        while (!(cond) && !(l)->stop) {                                                                \
            Msg m_;                                                                                    \
            if (comm_poll(&(l)->rb.comm, &m_)) learncore_handle((l), &m_);                             \
            else {                                                                                     \
                role_report(&(l)->rb, false);                                                          \
                comm_idle(&(l)->rb.comm);                                                              \
            }                                                                                          \
        }                                                                                              \
    } while (0)

/* The ring's hook while it waits (allreduce.h): take one message of the
 * main communicator, if any. arg: the Learner. */
bool learncore_service(void *arg);

/* sh becomes the learner's own copy (l->own, and l->params, l->target its
 * views): in the decentralized modes a copy of its own (restored from its
 * learner-<k>.ckpt on resume) unless it is the parameter source (learner 0
 * in gossip and local_sgd); otherwise learner 0's serves and the others
 * are replicas. */
void learncore_init_own(Learner *l, PShard *sh);
/* Apply l->grad to the own copy: the step, timed and traced, the finite
 * check and the report a version mark may owe. */
void learncore_apply_own(Learner *l);
/* The own copy's held final checkpoint, then the shutdown drain of its
 * reply buffers. */
void learncore_finish_own(Learner *l);
/* Consensus (RoleMetrics.consensus) measured: d, at the own copy's version. */
void learncore_consensus(Learner *l, double d);
/* Euclidean distance of a and b (n floats), summed in double. */
double learncore_distance(const float *a, const float *b, size_t n);

/* ---- learnps.c: the parameter-server path ---- */

extern const LearnerSync learnps_sync;  /* ps_sync, ps_async, ps_bounded */
extern const LearnerSync learnps_local; /* a PS mode without parameter servers */

/* The link's buffers, one slice per PS shard. */
void learnps_link_init(Learner *l, LearnPsLink *k);
void learnps_link_free(Learner *l, LearnPsLink *k);
/* A PARAMS reply (not elastic) into l->params and l->target. */
void learnps_on_params(Learner *l, LearnPsLink *k, const Msg *m);
/* STOPPED to every PS shard (no gradient of ours follows), the own copy's
 * held final checkpoint if any, and the shutdown drain of the link. */
void learnps_link_finish(Learner *l, LearnPsLink *k);

/* ---- learnring.c: allreduce and local_sgd ---- */

extern const LearnerSync learnring_allreduce;
extern const LearnerSync learnring_local_sgd;

/* The learners' ring and the own copy in r (l->own). */
void learnring_init(Learner *l, LearnRing *r);
/* The ring's counters into the learner's metrics. */
void learnring_metrics(Learner *l, const Ring *ring);

/* ---- learndecent.c: gossip and easgd ---- */

extern const LearnerSync learndecent_gossip;
extern const LearnerSync learndecent_easgd;

#endif
