/* SPDX-License-Identifier: MIT */
/* jobtrace.h: the coordinator's side of logging.trace. Every other rank
 * sends its trace in the shutdown (TRACE messages before its STOPPED,
 * role.c); the coordinator keeps them here as they arrive and at the end
 * merges them with its own ring into <run dir>/trace.json, one track per
 * rank (trace.h writes the file and aligns the ranks' clocks).
 *
 * Nothing travels through the file system, so ranks on other hosts are
 * traced the same way. A rank that dies or hangs sends nothing: its track
 * is named "(no trace received)" and listed in otherData.missing_tracks.
 *
 * Memory: room for logging.trace_events events of every rank, allocated at
 * start so that a job too large to trace fails then, not at its end:
 * ranks x logging.trace_events x 24 bytes (4.8 MB per rank by default; the
 * pages of ranks that send fewer are never touched).
 */
#ifndef GORILA_JOBTRACE_H
#define GORILA_JOBTRACE_H

#include "comm.h"
#include "trace.h"

#define JOBTRACE_NAME_LEN 64

typedef struct {
    const Ctx *ctx;
    const Layout *lay;
    size_t cap;               /* events per rank; 0: tracing off, every call a no-op */
    TraceEvent *ev;           /* (size * cap) rank r's events at ev + r * cap */
    TraceTrack *tracks;       /* (size) .n: events received so far */
    uint64_t *total;          /* (size) events the rank said it sends */
    char (*names)[JOBTRACE_NAME_LEN]; /* (size) */
} JobTrace;

/* cap = logging.trace_events, or 0 when logging.trace is off. ctx and lay
 * are kept (not owned). */
void jobtrace_init(JobTrace *j, const Ctx *ctx, const Layout *lay, size_t cap);
void jobtrace_free(JobTrace *j); /* safe on a zeroed JobTrace */

/* Keep one TRACE message (comm_poll has checked its sizes and bounds).
 * Dies when it does not continue its sender's sequence. */
void jobtrace_on_msg(JobTrace *j, const Msg *m);

/* Write <dir>/trace.json (atomically): own, the coordinator's ring, as rank
 * 0's track, then every other rank's as received so far. Returns 0 (also
 * when tracing is off: nothing written), or -1 with err naming the file. */
int jobtrace_write(JobTrace *j, const Trace *own, const char *dir, char *err);

#endif
