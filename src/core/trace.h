/* trace.h: a bounded timeline of what one process did, for trace.json.
 *
 * With logging.trace on, every rank records spans (a kind, a start and an
 * end on the monotonic clock of now_seconds) into a fixed ring of
 * logging.trace_events events: when the ring is full the oldest event is
 * overwritten and counted as dropped, so a long run keeps its newest
 * stretch and memory stays bounded. Recording is a few stores; nothing is
 * allocated or written while the run goes on.
 *
 * Spans of one rank nest or are disjoint (a caller never records a span
 * that starts inside another and ends after it): Chrome's trace viewer and
 * Perfetto draw them as a stack on the rank's track.
 *
 * MPI-free: how the ranks' events reach one file is src/dist's business.
 */
#ifndef GORILA_TRACE_H
#define GORILA_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
    TR_ENV_BATCH = 0,   /* actor: one lockstep step of its environments (forward + env steps) */
    TR_SEND_EXP,        /* actor: an EXPERIENCE chunk sent (incl. waiting for a credit) */
    TR_WAIT_PARAMS,     /* actor / learner: waiting for PARAMS */
    TR_WAIT_SAMPLE,     /* learner: waiting for a SAMPLE batch */
    TR_GRAD,            /* learner: loss and gradient of one batch */
    TR_SEND_GRAD,       /* learner: GRAD slices sent to the PS shards */
    TR_ALLREDUCE,       /* learner: one whole allreduce (parent of the two ring phases) */
    TR_RING_RS,         /* learner: the ring's reduce-scatter phase */
    TR_RING_AG,         /* learner: the ring's allgather phase */
    TR_APPLY,           /* ps / learner (allreduce): optimizer step and target rule */
    TR_SERVE_PARAMS,    /* ps / learner 0: PARAMS replies to one request */
    TR_INSERT,          /* replay: a chunk inserted */
    TR_SAMPLE,          /* replay: a batch sampled and sent */
    TR_EVAL,            /* coordinator / local trainer: one evaluation */
    TR_CKPT,            /* a checkpoint shard written (ps, learner 0) or committed (coordinator) */
    TR_KINDS
} TraceKind;

typedef struct {
    double t0, t1;      /* now_seconds() at start and end */
    uint32_t kind;      /* TraceKind */
    uint32_t arg;       /* kind-specific (a count, a shard, a version's low bits), 0 if none */
} TraceEvent;

typedef struct {
    TraceEvent *ev;     /* ring of cap events; NULL when tracing is off */
    size_t cap, n;      /* capacity; events held (<= cap) */
    size_t head;        /* index of the oldest event when n == cap */
    uint64_t dropped;   /* events overwritten */
} Trace;

/* cap 0: tracing off (every trace_span is a no-op). */
void trace_init(Trace *t, size_t cap);
void trace_free(Trace *t);

static inline bool trace_on(const Trace *t) { return t->ev != NULL; }

/* Record one span [t0, t1] of kind k. */
void trace_span(Trace *t, TraceKind k, double t0, double t1, uint32_t arg);

/* Name of a kind as it appears in trace.json ("env batch", ...). */
const char *trace_kind_name(TraceKind k);

#endif
