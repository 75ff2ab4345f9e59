/* SPDX-License-Identifier: MIT */
/* proto.h: every MPI tag and every message layout of gorila, in one place.
 * No numeric tag and no payload arithmetic appears anywhere else. The
 * layouts are plain byte arithmetic, no MPI: src/mpi sends and receives by
 * them, and the memory plan (memplan.h) sizes the buffers by them.
 *
 * A message is one contiguous byte buffer: a MsgHeader, then the payload.
 * The header repeats the tag, so a receiver can check that what arrived
 * under a tag is what the sender meant; comm.c validates tag, size and
 * counts of every message against the functions below before any role
 * looks at it, and a malformed message is a fatal error naming the sender.
 *
 * Who talks to whom (A actors, S replay shards, L learners, P PS shards):
 *
 *   actor a ---EXPERIENCE--> replay (a mod S) ---EXPERIENCE_ACK--> actor a
 *   learner ---SAMPLE_REQ--> replay s         ---SAMPLE----------> learner
 *   learner ---PRIORITY----> replay s                          (Ape-X)
 *   learner ---GRAD--------> ps p             ---PARAMS----------> learner
 *   actor/coord --PARAM_REQ-> ps p            ---PARAMS----------> requester
 *   every rank --METRICS/EPISODES--> coordinator
 *   coordinator --CKPT_REQ--> ps p, replay s  ---CKPT_DONE-------> coordinator
 *   coordinator --STOP--> all; all --TRACE, STOPPED--> coordinator; coordinator --EXIT--> all
 *   any rank --STOP_REQ--> coordinator   (it got a stop signal: the coordinator stops the job)
 *
 * In allreduce mode there are no PS ranks: learners sum gradients with
 * ring_allreduce_sum (TAG_RING) and learner 0 answers PARAM_REQ as if it
 * were the only PS shard (offset 0, all parameters).
 */
#ifndef GORILA_PROTO_H
#define GORILA_PROTO_H

#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "layout.h"
#include "qnet.h"
#include "trace.h"

enum {
    TAG_EXPERIENCE = 10, /* actor -> replay: count = n transitions; version = actor's params
                            version; exp.actor = actor index; flags MSG_HAS_PRIORITY.
                            payload: ExpLayout */
    TAG_EXPERIENCE_ACK,  /* replay -> actor: count = n inserted; no payload */
    TAG_SAMPLE_REQ,      /* learner -> replay: count = rows B; version = request sequence
                            number; sample_req.charged = rows charged to the shard's samples-per-insert
                            limiter (uniform: = B). flags MSG_PRIORITIZED: payload frac[B] f64,
                            the rows' positions in [0, 1) of the shard's total priority, and
                            B may be 0 (a charge only); else no payload */
    TAG_SAMPLE,          /* replay -> learner: count = B; version = request sequence;
                            sample.shard_size = shard size; flags MSG_PRIORITIZED (B may be 0).
                            payload: SampleLayout */
    TAG_PRIORITY,        /* learner -> replay: count = n. payload: PriorityLayout */
    TAG_GRAD,            /* learner -> ps: count = slice length; version = the shard's params
                            version the gradient was computed on; grad.learner = learner index;
                            grad.target_held = target version the learner holds; flags MSG_WANT_PARAMS.
                            payload: grad[count] f32 */
    TAG_PARAM_REQ,       /* any -> ps: param_req.target_held = target version held (MSG_NO_TARGET: none wanted);
                            coordinator only: flags MSG_SNAPSHOT, version = evaluation id.
                            no payload */
    TAG_PARAMS,          /* ps -> any: count = slice length; version = params version;
                            params.offset = slice offset; params.target_version;
                            flags MSG_HAS_TARGET.
                            payload: params[count] f32 (+ target[count] f32) */
    TAG_METRICS,         /* any -> coordinator: payload: RoleMetrics */
    TAG_EPISODES,        /* actor -> coordinator: count = n. payload: EpisodeRec[n] */
    TAG_CKPT_REQ,        /* coordinator -> ps (every parameter source) and, with
                            checkpoint.save_replay, replay shards: version = checkpoint id;
                            count = path bytes; ckpt_req.run_id = run id; flags MSG_FINAL, MSG_SNAPSHOT
                            (sources only; ckpt_req.snapshot = the evaluation id whose snapshot to write).
                            payload: directory path (no NUL) */
    TAG_CKPT_DONE,       /* ps / replay -> coordinator: version = checkpoint id; ckpt_done.saved = params
                            version saved (ps), transitions saved (replay); flags MSG_FAILED;
                            count = message bytes. payload: error text */
    TAG_STOP,            /* coordinator -> all: stop.reason = StopReason (runctl.h); no payload */
    TAG_STOPPED,         /* all -> coordinator: payload: RoleMetrics (final). Learners also
                            send it to every PS after their last GRAD: since MPI keeps the
                            order of messages between two ranks, a PS that has seen it from
                            every learner has applied every gradient there will be */
    TAG_EXIT,            /* coordinator -> all: leave the drain loop and finalize */
    TAG_TRACE,           /* any -> coordinator, with logging.trace only, in the shutdown just
                            before STOPPED (so a coordinator that has every STOPPED has every
                            trace): the rank's held events, oldest first, PROTO_TRACE_PER_MSG at
                            most per message. count = n events; version = index of the first
                            in the rank's sequence; trace.total = events the rank sends in all;
                            trace.dropped = events its ring dropped.
                            payload: TraceClock, then TraceEvent[count] (trace.h) */
    TAG_STOP_REQ,        /* any -> coordinator, once per rank: this rank got a stop signal
                            (SIGINT, SIGTERM, SIGUSR2; signals.h) and asks the coordinator to
                            stop the job as it does on its own signal; the rank keeps working
                            until the coordinator's STOP reaches it. version = the signal
                            number; no payload */
    TAG_LAST_,           /* end of the message tags */
    TAG_RING = 100,      /* reserved for ring_allreduce_sum */
    TAG_NAIVE = 101,     /* reserved for naive_allreduce (allreduce.h), learners' communicator only */
    TAG_PINGPONG = 102,  /* gorila bench pingpong (src/cli/bench_pingpong.c): its two ranks only */
    TAG_PAIR = 103       /* reserved for pair_exchange (gossip; allreduce.h), learners' communicator only */
};
#define TAG_FIRST TAG_EXPERIENCE
#define TAG_COUNT (TAG_LAST_ - TAG_FIRST)

enum {
    MSG_HAS_PRIORITY = 1u << 0, /* EXPERIENCE carries initial priorities */
    MSG_WANT_PARAMS = 1u << 1,  /* GRAD: answer with PARAMS after applying */
    MSG_HAS_TARGET = 1u << 2,   /* PARAMS carries the target slice too */
    MSG_NO_TARGET = 1u << 3,    /* PARAM_REQ / GRAD: never send the target */
    MSG_FAILED = 1u << 4,       /* CKPT_DONE: the shard could not write */
    MSG_FINAL = 1u << 5,        /* CKPT_REQ: the last checkpoint of the run: write it only
                                   after every learner's STOPPED marker (all gradients in) */
    MSG_LAST = 1u << 6,         /* EXPERIENCE: the actor's last chunk (its env-step share is
                                   used up); may carry 0 transitions */
    MSG_SNAPSHOT = 1u << 7,     /* PARAM_REQ: keep a copy of the whole slice state (params,
                                   target, optimizer, versions) as sent, for evaluation id
                                   `version`; CKPT_REQ: write that copy, not the live state */
    MSG_PRIORITIZED = 1u << 8,  /* SAMPLE_REQ / SAMPLE: prioritized replay (the layouts below) */
    MSG_ELASTIC = 1u << 9       /* easgd: GRAD carries the learner's parameter slice, not a gradient;
                                   the PARAMS answer carries alpha (x - center), the center's move */
};

typedef struct {
    uint32_t tag;      /* the MPI tag, repeated */
    uint32_t flags;    /* MSG_* */
    uint64_t count;    /* elements of the payload's main array (see the tag) */
    uint64_t version;
    /* Two words whose meaning depends on the tag (the list above): read and
     * write them by the name of the message kind, never by position. */
    union {
        struct { uint64_t actor, unused_; } exp;               /* EXPERIENCE: the actor's index */
        struct { uint64_t charged, unused_; } sample_req;      /* SAMPLE_REQ: rows charged to the limiter */
        struct { uint64_t shard_size, unused_; } sample;       /* SAMPLE: rows the shard holds */
        struct { uint64_t learner, target_held; } grad;        /* GRAD: learner index, target version held */
        struct { uint64_t learner, steps; } elastic;           /* GRAD with MSG_ELASTIC: learner index, its
                                                                  updates since its last exchange */
        struct { uint64_t unused_, target_held; } param_req;   /* PARAM_REQ: target version held */
        struct { uint64_t offset, target_version; } params;    /* PARAMS: slice offset, target version */
        struct { uint64_t run_id, snapshot; } ckpt_req;        /* CKPT_REQ: run id, evaluation id (MSG_SNAPSHOT) */
        struct { uint64_t saved, unused_; } ckpt_done;         /* CKPT_DONE: params version (ps), transitions (replay) */
        struct { uint64_t reason, unused_; } stop;             /* STOP: the StopReason */
        struct { uint64_t total, dropped; } trace;             /* TRACE: events sent in all, dropped by the ring */
    };
} MsgHeader;           /* 40 bytes; payloads start 8-byte aligned */
_Static_assert(sizeof(MsgHeader) == 40, "MsgHeader is 40 bytes on the wire");

/* Name of a tag for logs and per-type byte counts ("experience", ...). */
const char *proto_tag_name(int tag);

/* ---- EXPERIENCE: n transitions, struct of arrays ------------------------ */
/* Observation rows in replay's stored form, R = ObsRow.bytes each
 * (obsrow.h: 4 O bytes of f32, or ceil(O / 8) bytes of bits for a planes
 * environment, which the shard stores without unpacking):
 *   obs[n*R] | next_obs[n*R] | pad to 4 | action[n] i32 | reward[n] f32 |
 *   discount[n] f32 | priority[n] f32 (only with MSG_HAS_PRIORITY) */
typedef struct {
    size_t obs, next_obs, action, reward, discount, priority, bytes;
} ExpLayout;

static inline ExpLayout proto_exp_layout(size_t n, size_t row_bytes, int has_priority) {
    ExpLayout l;
    l.obs = 0;
    l.next_obs = l.obs + n * row_bytes;
    l.action = (l.next_obs + n * row_bytes + 3) / 4 * 4;
    l.reward = l.action + n * 4;
    l.discount = l.reward + n * 4;
    l.priority = l.discount + n * 4;
    l.bytes = l.priority + (has_priority ? n * 4 : 0);
    return l;
}

/* ---- SAMPLE: B transitions plus ids and importance weights -------------- */
/*   id[B] u64 | obs[B*O] f32 | next_obs[B*O] f32 | action[B] i32 |
 *   reward[B] f32 | discount[B] f32 | weight[B] f32
 * prioritized (MSG_PRIORITIZED) adds, for the learner's importance weights
 * and priority updates:
 *   | slot[B] u64 | prio[B] f64 (each row's priority p) | total f64 (the
 *   shard's total priority when it sampled) */
typedef struct {
    size_t id, obs, next_obs, action, reward, discount, weight, slot, prio, total, bytes;
} SampleLayout;

static inline SampleLayout proto_sample_layout(size_t B, size_t O, int prioritized) {
    SampleLayout l;
    l.id = 0;
    l.obs = l.id + B * 8;
    l.next_obs = l.obs + B * O * 4;
    l.action = l.next_obs + B * O * 4;
    l.reward = l.action + B * 4;
    l.discount = l.reward + B * 4;
    l.weight = l.discount + B * 4;
    l.slot = (l.weight + B * 4 + 7) / 8 * 8;
    l.prio = l.slot + B * 8;
    l.total = l.prio + B * 8;
    l.bytes = prioritized ? l.total + 8 : l.weight + B * 4;
    return l;
}

/* ---- SAMPLE_REQ (prioritized): frac[B] f64 -------------------------------- */
static inline size_t proto_sample_req_bytes(size_t B, int prioritized) { return prioritized ? B * 8 : 0; }

/* ---- PRIORITY: new |td| of sampled rows ---------------------------------- */
/*   slot[n] u64 | id[n] u64 | td_abs[n] f32 */
typedef struct {
    size_t slot, id, td, bytes;
} PriorityLayout;

static inline PriorityLayout proto_priority_layout(size_t n) {
    PriorityLayout l;
    l.slot = 0;
    l.id = n * 8;
    l.td = l.id + n * 8;
    l.bytes = l.td + n * 4;
    return l;
}

/* ---- GRAD / PARAMS: a slice of n floats (PARAMS: + the target slice) ----- */
static inline size_t proto_grad_bytes(size_t n) { return n * 4; }
static inline size_t proto_params_bytes(size_t n, int has_target) { return n * 4 * (has_target ? 2 : 1); }

/* ---- EPISODES ------------------------------------------------------------ */
typedef struct {
    double ret;          /* undiscounted return */
    uint64_t env_steps;  /* the actor's env-step count when it ended */
    int32_t length;
    int32_t actor;
} EpisodeRec;
#define PROTO_MAX_EPISODES 256 /* per EPISODES message */

/* ---- METRICS / STOPPED: counters every role reports ----------------------
 * Cumulative since the rank started (the coordinator differences them). */
#define PROTO_STALENESS_BINS 16 /* last bin collects everything >= 15 */
typedef struct {
    int32_t role, index;
    uint32_t done;                      /* actor: env-step quota used up */
    uint32_t pad_;
    uint64_t env_steps;                 /* actor: transitions generated */
    uint64_t episodes;                  /* actor */
    uint64_t updates;                   /* learner: gradients computed; ps: optimizer steps */
    uint64_t params_version;            /* ps / learner: current version */
    uint64_t inserted, sampled;         /* replay: transitions in / out */
    uint64_t sampled_unpaced;           /* replay: of sampled, served after its actors were all done */
    uint64_t replay_size;               /* replay: stored now */
    uint64_t drops;                     /* ps bounded: stale gradients dropped */
    uint64_t staleness[PROTO_STALENESS_BINS];
    uint64_t msgs_sent[TAG_COUNT], bytes_sent[TAG_COUNT];
    uint64_t msgs_recv[TAG_COUNT], bytes_recv[TAG_COUNT];
    uint64_t ring_msgs_sent, ring_bytes_sent;  /* learner, allreduce: ring traffic (learners' */
    uint64_t ring_msgs_recv, ring_bytes_recv;  /*   own communicator, not in the per-tag arrays) */
    uint64_t ring_rounds;               /* learner, allreduce: allreduce calls */
    uint64_t samples_trained;           /* learner: batch rows its gradients were computed on */
    double ring_seconds;                /* learner, allreduce: time inside the allreduce */
    double busy_seconds, wait_seconds;  /* time working / waiting for messages */
    double cpu_seconds;                 /* process CPU time (user + system) */
    double loss_sum;                    /* learner: sum of batch losses */
    double epsilon;                     /* actor: current exploration rate */
    double stepping_seconds;            /* actor: from the start of its first env step to the end of its
                                           latest (start-up and the wait for parameters left out) */
    double stepping_cpu_seconds;        /* actor: CPU time (user + system) since its first env step, as of
                                           its share used up or its STOP */
    double apply_seconds;               /* ps: time in the optimizer step */
    uint64_t priority_updates;          /* replay, prioritized: |td| updates received */
    uint64_t stale_priority_updates;    /* replay, prioritized: of those, for overwritten slots */
    /* learner: where its time goes (summary.json per_worker): computing
     * gradients (and, in allreduce, applying them), syncing them (PS modes:
     * sending GRAD and waiting for PARAMS; allreduce: inside the allreduce),
     * and waiting for a batch from the replay shards */
    double compute_seconds, sync_seconds, sample_wait_seconds;
    uint64_t loss_outliers;             /* learner: gradients dropped by learner.loss_outlier_sigma */
    /* learner, decentralized modes (gossip, easgd, local_sgd) */
    uint64_t sync_rounds;               /* exchange rounds: gossip's scheduled rounds, easgd's exchanges
                                           with the center, local_sgd's averages */
    uint64_t consensus_version;         /* the learner's own version when consensus was measured (0: never) */
    double consensus;                   /* the last distance measured: ||own - mean of the learners||
                                           (gossip, local_sgd), ||own - center|| (easgd) */
} RoleMetrics;

/* ---- TRACE: a rank's clocks, then n of its events ------------------------ */
#define PROTO_TRACE_PER_MSG 1024 /* events per TRACE message (24 KiB) */
static inline size_t proto_trace_bytes(size_t n) { return sizeof(TraceClock) + n * sizeof(TraceEvent); }

/* ---- limits of a job, to validate and size every payload ---------------- */
#define PROTO_MAX_TEXT 4096 /* CKPT_REQ path / CKPT_DONE error text, bytes */
typedef struct {
    size_t obs_dim;
    size_t exp_row_bytes; /* bytes of one observation row in EXPERIENCE (ObsRow.bytes) */
    size_t n_params;
    size_t max_batch;
    size_t max_chunk;
    size_t max_trace;    /* events a rank may send in TRACE (logging.trace_events); 0: tracing
                            is off and no TRACE message is valid */
    int prioritized;     /* replay.kind prioritized: SAMPLE_REQ/SAMPLE carry MSG_PRIORITIZED,
                            PRIORITY is valid */
    size_t shard_capacity; /* slots of a replay shard: a PRIORITY slot must be below it */
} ProtoLimits;

/* The limits of the job of cfg and lay with network net: what role_init
 * gives comm_init (which sizes every rank's receive buffer from them) and
 * what memplan.c plans that buffer from. */
ProtoLimits proto_limits(const Config *cfg, const Layout *lay, const QNet *net);

/* Payload bytes a message with header h must carry, or (size_t)-1 with
 * *why set when its counts are out of bounds or its tag is unknown. */
static inline size_t proto_payload_bytes(const MsgHeader *h, const ProtoLimits *L, const char **why) {
    switch (h->tag) {
    case TAG_EXPERIENCE:
        if ((h->count == 0 && !(h->flags & MSG_LAST)) || h->count > L->max_chunk)
            return *why = "transition count out of range", (size_t)-1;
        return proto_exp_layout(h->count, L->exp_row_bytes, (h->flags & MSG_HAS_PRIORITY) != 0).bytes;
    case TAG_SAMPLE_REQ: {
        int pr = (h->flags & MSG_PRIORITIZED) != 0;
        if (pr != L->prioritized) return *why = "replay kind differs from the job's", (size_t)-1;
        if ((h->count == 0 && !pr) || h->count > L->max_batch || h->sample_req.charged > L->max_batch ||
            (h->count == 0 && h->sample_req.charged == 0))
            return *why = "batch size out of range", (size_t)-1;
        return proto_sample_req_bytes(h->count, pr);
    }
    case TAG_SAMPLE: {
        int pr = (h->flags & MSG_PRIORITIZED) != 0;
        if (pr != L->prioritized) return *why = "replay kind differs from the job's", (size_t)-1;
        if ((h->count == 0 && !pr) || h->count > L->max_batch) return *why = "batch size out of range", (size_t)-1;
        return proto_sample_layout(h->count, L->obs_dim, pr).bytes;
    }
    case TAG_PRIORITY:
        if (!L->prioritized) return *why = "priority update, but the job's replay is uniform", (size_t)-1;
        if (h->count == 0 || h->count > L->max_batch) return *why = "priority count out of range", (size_t)-1;
        return proto_priority_layout(h->count).bytes;
    case TAG_GRAD:
        if (h->count > L->n_params) return *why = "gradient slice longer than the network", (size_t)-1;
        return proto_grad_bytes(h->count);
    case TAG_PARAMS:
        if (h->count > L->n_params || h->params.offset > L->n_params - h->count)
            return *why = "parameter slice outside the network", (size_t)-1;
        return proto_params_bytes(h->count, (h->flags & MSG_HAS_TARGET) != 0);
    case TAG_METRICS:
    case TAG_STOPPED:
        return sizeof(RoleMetrics);
    case TAG_EPISODES:
        if (h->count > PROTO_MAX_EPISODES) return *why = "episode count out of range", (size_t)-1;
        return h->count * sizeof(EpisodeRec);
    case TAG_CKPT_REQ:
    case TAG_CKPT_DONE:
        if (h->count > PROTO_MAX_TEXT) return *why = "text longer than 4096 bytes", (size_t)-1;
        return h->count;
    case TAG_TRACE:
        if (L->max_trace == 0) return *why = "tracing is off (logging.trace)", (size_t)-1;
        if (h->count > PROTO_TRACE_PER_MSG) return *why = "more events than one message may carry", (size_t)-1;
        if (h->trace.total > L->max_trace || h->version > h->trace.total || h->count > h->trace.total - h->version)
            return *why = "event range outside the rank's trace", (size_t)-1;
        return proto_trace_bytes(h->count);
    case TAG_STOP_REQ:
        if (h->version == 0 || h->version > 64) return *why = "signal number out of range", (size_t)-1;
        return 0;
    case TAG_EXPERIENCE_ACK:
    case TAG_PARAM_REQ:
    case TAG_STOP:
    case TAG_EXIT:
        return 0;
    default:
        return *why = "unknown tag", (size_t)-1;
    }
}

/* The values a payload carries that its size cannot vouch for: the
 * priorities of EXPERIENCE and PRIORITY (finite, >= 0), PRIORITY's slots
 * (inside a shard), SAMPLE_REQ's positions (in [0, 1)). Returns NULL, or
 * what is wrong (written into buf of cap bytes). Called after the size
 * check, so the layout fits. */
static inline const char *proto_payload_check(const MsgHeader *h, const void *payload, const ProtoLimits *L,
                                              char *buf, size_t cap) {
    const uint8_t *p = payload;
    size_t n = h->count;
    if (h->tag == TAG_EXPERIENCE && (h->flags & MSG_HAS_PRIORITY)) {
        if (!L->prioritized) return "priorities sent, but the job's replay is uniform";
        const float *pr = (const float *)(p + proto_exp_layout(n, L->exp_row_bytes, 1).priority);
        for (size_t i = 0; i < n; i++)
            if (!(pr[i] >= 0 && pr[i] <= 3.4e38f)) {
                snprintf(buf, cap, "priority %g of row %zu: |td| must be finite and >= 0", pr[i], i);
                return buf;
            }
    } else if (h->tag == TAG_PRIORITY) {
        PriorityLayout pl = proto_priority_layout(n);
        const float *td = (const float *)(p + pl.td);
        for (size_t i = 0; i < n; i++) {
            uint64_t slot;
            memcpy(&slot, p + pl.slot + i * 8, sizeof slot);
            if (slot >= L->shard_capacity) {
                snprintf(buf, cap, "slot %" PRIu64 " outside the shard (capacity %zu)", slot,
                         L->shard_capacity);
                return buf;
            }
            if (!(td[i] >= 0 && td[i] <= 3.4e38f)) {
                snprintf(buf, cap, "|td| %g for slot %" PRIu64 ": must be finite and >= 0", td[i], slot);
                return buf;
            }
        }
    } else if (h->tag == TAG_SAMPLE_REQ && (h->flags & MSG_PRIORITIZED)) {
        for (size_t i = 0; i < n; i++) {
            double f;
            memcpy(&f, p + i * 8, sizeof f);
            if (!(f >= 0 && f < 1)) {
                snprintf(buf, cap, "position %g of row %zu outside [0, 1)", f, i);
                return buf;
            }
        }
    }
    return NULL;
}

/* ---- upper bounds of payloads, for receive buffers ----------------------- */
static inline size_t proto_max_payload(const ProtoLimits *L) {
    size_t m = sizeof(RoleMetrics);
    size_t v;
    v = proto_exp_layout(L->max_chunk, L->exp_row_bytes, 1).bytes;
    if (v > m) m = v;
    v = proto_sample_layout(L->max_batch, L->obs_dim, 1).bytes;
    if (v > m) m = v;
    v = proto_priority_layout(L->max_batch).bytes;
    if (v > m) m = v;
    v = proto_params_bytes(L->n_params, 1);
    if (v > m) m = v;
    v = PROTO_MAX_EPISODES * sizeof(EpisodeRec);
    if (v > m) m = v;
    if (m < PROTO_MAX_TEXT) m = PROTO_MAX_TEXT;
    v = L->max_trace ? proto_trace_bytes(PROTO_TRACE_PER_MSG) : 0;
    if (v > m) m = v;
    return m;
}

#endif
