/* SPDX-License-Identifier: MIT */
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
 * The file. trace_write_file merges tracks (one per rank, or the local
 * trainer's one) into one JSON document in Chrome's "JSON Object Format",
 * which Perfetto (https://ui.perfetto.dev) and chrome://tracing open:
 *
 *   {"traceEvents":[
 *   {"name":"thread_name","ph":"M","pid":0,"tid":3,"args":{"name":"rank 3 learner 0"}},
 *   {"name":"thread_sort_index","ph":"M","pid":0,"tid":3,"args":{"sort_index":3}},
 *   {"name":"gradient","ph":"X","pid":0,"tid":3,"ts":1042.125,"dur":210.500,"args":{"arg":0}},
 *   ...],
 *   "displayTimeUnit":"ms",
 *   "otherData":{..., "dropped_events":{"3":0, ...}, "missing_tracks":[...]}}
 *
 * Clocks. Events carry their process's monotonic clock, which has a
 * different origin on every host. Each track therefore comes with a
 * TraceClock, its monotonic and real-time (CLOCK_REALTIME) clocks read at
 * one instant, and the writer places an event at
 *     (t - clock.mono) + (clock.real_ns - first track's real_ns) / 1e9,
 * then shifts every track by the earliest start so that ts >= 0. On one
 * host this is exact to the skew of the two clock reads (well under a
 * microsecond); across hosts it is as good as their NTP sync. Within a
 * track the mapping is monotonic, so spans that nest still nest; times are
 * rounded to whole nanoseconds (printed as microseconds with 3 decimals),
 * start and end separately, which keeps that true after rounding too.
 *
 * MPI-free: how the ranks' events reach the coordinator is src/mpi's
 * business (TAG_TRACE, role.c, jobtrace.c).
 */
#ifndef GORILA_TRACE_H
#define GORILA_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

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
    TR_WAIT_CREDIT,     /* actor: both chunks unacknowledged (replay's limiter holds one), so
                           no env step until an EXPERIENCE_ACK returns */
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

/* The i-th oldest event held (i < t->n). */
TraceEvent trace_get(const Trace *t, size_t i);

/* A process's two clocks read at one instant (see "Clocks" above). */
typedef struct {
    double mono;        /* now_seconds() */
    int64_t real_ns;    /* CLOCK_REALTIME, nanoseconds since the Unix epoch */
} TraceClock;
void trace_clock(TraceClock *c);

/* One track of trace.json: the events of one process. */
typedef struct {
    int tid;            /* track id; tracks sort by it (the rank) */
    const char *name;   /* "rank 3 learner 0" (printable ASCII) */
    TraceEvent *ev;     /* (n) any order, on this track's monotonic clock; the writer sorts
                           them in place (by start, the longer first at equal starts, so a
                           parent precedes the spans it contains) */
    size_t n;
    TraceClock clock;   /* this track's clocks at one instant */
    uint64_t dropped;   /* events its ring overwrote */
    bool missing;       /* nothing arrived for it (its rank died or hung): named, empty,
                           listed in otherData.missing_tracks */
} TraceTrack;

/* Write tracks[0..n) as one trace document to f (events_cap: the bound per
 * track, recorded in otherData). Returns 0, or -1 when a write to f failed.
 * Sorts each track's events in place. */
int trace_write_json(FILE *f, TraceTrack *tracks, size_t n, size_t events_cap);

/* The same, atomically into path (written to path.tmp, flushed, fsynced,
 * renamed over path). Returns 0, or -1 with err naming the file and the step
 * that failed (the temporary is removed). */
int trace_write_file(const char *path, TraceTrack *tracks, size_t n, size_t events_cap, char *err);

#endif
