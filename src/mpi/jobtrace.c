/* SPDX-License-Identifier: MIT */
/* jobtrace.c: see jobtrace.h. */
#include "jobtrace.h"
#include "util.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "rank 3 learner 0", plus note. */
static void name_track(JobTrace *j, int r, const char *note) {
    Role role;
    int idx;
    layout_role_of(j->lay, r, &role, &idx);
    snprintf(j->names[r], sizeof j->names[r], "rank %d %s %d%s", r, role_name(role), idx, note);
}

void jobtrace_init(JobTrace *j, const Ctx *ctx, const Layout *lay, size_t cap) {
    memset(j, 0, sizeof *j);
    j->ctx = ctx;
    j->lay = lay;
    j->cap = cap;
    if (!cap) return;
    size_t size = (size_t)lay->size;
    j->ev = xcalloc(size * cap, sizeof *j->ev);
    j->tracks = xcalloc(size, sizeof *j->tracks);
    j->total = xcalloc(size, sizeof *j->total);
    j->names = xcalloc(size, sizeof *j->names);
    for (int r = 0; r < lay->size; r++) {
        name_track(j, r, "");
        j->tracks[r] = (TraceTrack){.tid = r, .name = j->names[r], .ev = j->ev + (size_t)r * cap, .missing = true};
    }
}

void jobtrace_free(JobTrace *j) {
    free(j->ev);
    free(j->tracks);
    free(j->total);
    free(j->names);
    memset(j, 0, sizeof *j);
}

void jobtrace_on_msg(JobTrace *j, const Msg *m) {
    int r = m->source;
    if (!j->cap || r <= 0 || r >= j->lay->size) DIE(j->ctx, "unexpected TRACE message from rank %d", r);
    TraceTrack *t = &j->tracks[r];
    /* One rank's messages arrive in the order it sent them (MPI keeps the
     * order between two ranks), each continuing where the last ended. */
    if (m->h.version != t->n || (!t->missing && m->h.trace.total != j->total[r]))
        DIE(j->ctx, "TRACE from rank %d carries events [%" PRIu64 ", +%" PRIu64 ") of %" PRIu64 ", expected the next from %zu of %" PRIu64, r,
            m->h.version, m->h.count, m->h.trace.total, t->n,
            j->total[r]);
    const uint8_t *p = m->payload;
    memcpy(&t->clock, p, sizeof t->clock);
    memcpy(t->ev + t->n, p + sizeof t->clock, m->h.count * sizeof *t->ev);
    t->n += m->h.count;
    t->dropped = m->h.trace.dropped;
    t->missing = false;
    j->total[r] = m->h.trace.total;
}

int jobtrace_write(JobTrace *j, const Trace *own, const char *dir, char *err) {
    if (!j->cap) return 0;
    TraceTrack *t0 = &j->tracks[0];
    /* Our own events are on this process's clock, read now. */
    for (size_t i = 0; i < own->n; i++) t0->ev[i] = trace_get(own, i);
    t0->n = own->n;
    t0->dropped = own->dropped;
    t0->missing = false;
    trace_clock(&t0->clock);
    for (int r = 1; r < j->lay->size; r++) {
        TraceTrack *t = &j->tracks[r];
        name_track(j, r, t->missing ? " (no trace received)" : t->n < j->total[r] ? " (trace incomplete)" : "");
    }
    char path[PATH_LEN];
    if (snprintf(path, sizeof path, "%s/trace.json", dir) >= (int)sizeof path)
        return errf(err, "run directory path too long for trace.json: %s", dir);
    return trace_write_file(path, j->tracks, (size_t)j->lay->size, j->cap, err);
}
