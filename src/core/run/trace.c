/* SPDX-License-Identifier: MIT */
/* trace.c: see trace.h. */
#include "trace.h"
#include "clock.h"
#include "util.h"

#include <inttypes.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *const kind_names[] = {
    "env batch", "send experience", "wait params", "wait sample", "gradient", "send gradient",
    "allreduce", "ring reduce-scatter", "ring allgather", "apply", "serve params", "insert",
    "sample", "evaluation", "checkpoint", "wait credit",
};
_Static_assert(sizeof kind_names / sizeof *kind_names == TR_KINDS, "one name per TraceKind");

void trace_init(Trace *t, size_t cap) {
    t->ev = cap ? xcalloc(cap, sizeof *t->ev) : NULL;
    t->cap = cap;
    t->n = t->head = 0;
    t->dropped = 0;
}

void trace_free(Trace *t) {
    free(t->ev);
    t->ev = NULL;
    t->cap = t->n = t->head = 0;
}

void trace_span(Trace *t, TraceKind k, double t0, double t1, uint32_t arg) {
    if (!t->ev) return;
    TraceEvent e = {t0, t1, (uint32_t)k, arg};
    if (t->n < t->cap) {
        t->ev[t->n++] = e;
    } else {
        t->ev[t->head] = e;
        t->head = (t->head + 1) % t->cap;
        t->dropped++;
    }
}

const char *trace_kind_name(TraceKind k) { return (unsigned)k < TR_KINDS ? kind_names[k] : "unknown"; }

/* head is 0 until the ring is full, then the oldest. */
TraceEvent trace_get(const Trace *t, size_t i) { return t->ev[(t->head + i) % t->cap]; }

void trace_clock(TraceClock *c) {
    /* The real-time read sits between two monotonic ones: take their mean,
     * so the pair is off by at most half the time one read takes. */
    struct timespec r;
    double a = now_seconds();
    clock_gettime(CLOCK_REALTIME, &r);
    double b = now_seconds();
    c->mono = a + (b - a) / 2;
    c->real_ns = (int64_t)r.tv_sec * 1000000000 + (int64_t)r.tv_nsec;
}

/* ---- trace.json --------------------------------------------------------- */

static int by_start(const void *pa, const void *pb) {
    const TraceEvent *a = pa, *b = pb;
    if (a->t0 != b->t0) return a->t0 < b->t0 ? -1 : 1;
    if (a->t1 != b->t1) return a->t1 > b->t1 ? -1 : 1; /* the container first */
    return 0;
}

/* Whole nanoseconds as microseconds with 3 decimals ("1042.125"). */
static void put_us(FILE *f, int64_t ns) {
    if (ns < 0) {
        fputc('-', f);
        ns = -ns;
    }
    fprintf(f, "%lld.%03lld", (long long)(ns / 1000), (long long)(ns % 1000));
}

static void put_str(FILE *f, const char *s) {
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') fputc('\\', f);
        if (*p >= 0x20) fputc(*p, f);
    }
    fputc('"', f);
}

int trace_write_json(FILE *f, TraceTrack *tracks, size_t n, size_t events_cap) {
    /* Each track's shift onto the first present track's monotonic clock,
     * through the real-time clocks (trace.h, "Clocks"); then the origin:
     * the earliest start of all. */
    int64_t base_ns = 0;
    for (size_t k = 0; k < n; k++) {
        if (!tracks[k].missing) {
            base_ns = tracks[k].clock.real_ns;
            break;
        }
    }
    double origin = INFINITY;
    for (size_t k = 0; k < n; k++) {
        TraceTrack *tr = &tracks[k];
        double shift = 1e-9 * (double)(tr->clock.real_ns - base_ns) - tr->clock.mono;
        for (size_t i = 0; i < tr->n; i++) origin = fmin(origin, tr->ev[i].t0 + shift);
        if (tr->n) qsort(tr->ev, tr->n, sizeof *tr->ev, by_start);
    }
    fputs("{\"traceEvents\":[\n", f);
    fputs("{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":0,\"tid\":0,\"args\":{\"name\":\"gorila\"}}", f);
    for (size_t k = 0; k < n; k++) {
        const TraceTrack *tr = &tracks[k];
        fprintf(f, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":0,\"tid\":%d,\"args\":{\"name\":", tr->tid);
        put_str(f, tr->name);
        fprintf(f, "}},\n{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":0,\"tid\":%d,"
                   "\"args\":{\"sort_index\":%d}}",
                tr->tid, tr->tid);
        double shift = 1e-9 * (double)(tr->clock.real_ns - base_ns) - tr->clock.mono;
        for (size_t i = 0; i < tr->n; i++) {
            const TraceEvent *e = &tr->ev[i];
            /* Start and end rounded separately: rounding is monotonic, so
             * spans that nest still nest. */
            int64_t ts = llround((e->t0 + shift - origin) * 1e9), te = llround((e->t1 + shift - origin) * 1e9);
            fprintf(f, ",\n{\"name\":\"%s\",\"ph\":\"X\",\"pid\":0,\"tid\":%d,\"ts\":",
                    trace_kind_name((TraceKind)e->kind), tr->tid);
            put_us(f, ts);
            fputs(",\"dur\":", f);
            put_us(f, te - ts);
            fprintf(f, ",\"args\":{\"arg\":%u}}", (unsigned)e->arg);
        }
    }
    fputs("\n],\n\"displayTimeUnit\":\"ms\",\n\"otherData\":{\"format\":\"gorila trace 1\",", f);
    fputs("\"clock\":\"per-track CLOCK_MONOTONIC, aligned by CLOCK_REALTIME; ts 0 = the earliest start\",", f);
    fprintf(f, "\"events_per_track\":%zu,\"dropped_events\":{", events_cap);
    for (size_t k = 0; k < n; k++)
        fprintf(f, "%s\"%d\":%" PRIu64, k ? "," : "", tracks[k].tid, tracks[k].dropped);
    fputs("},\"missing_tracks\":[", f);
    bool first = true;
    for (size_t k = 0; k < n; k++) {
        if (!tracks[k].missing) continue;
        fprintf(f, "%s%d", first ? "" : ",", tracks[k].tid);
        first = false;
    }
    fputs("]}}\n", f);
    return ferror(f) ? -1 : 0;
}

int trace_write_file(const char *path, TraceTrack *tracks, size_t n, size_t events_cap, char *err) {
    char tmp[PATH_LEN];
    if (snprintf(tmp, sizeof tmp, "%s.tmp", path) >= (int)sizeof tmp) return errf(err, "path too long: %s", path);
    int fd = open_tmp_exclusive(tmp);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
        int e = errno;
        if (fd >= 0) {
            close(fd);
            unlink(tmp);
        }
        return errf(err, "cannot create %s: %s", tmp, strerror(e));
    }
    const char *step = NULL;
    errno = 0;
    if (trace_write_json(f, tracks, n, events_cap) != 0 || fflush(f) != 0) step = "writing";
    else if (fsync(fileno(f)) != 0) step = "syncing";
    int e = errno;
    if (fclose(f) != 0 && !step) {
        step = "closing";
        e = errno;
    }
    if (step) {
        unlink(tmp);
        return errf(err, "cannot write %s: %s it: %s", tmp, step, strerror(e ? e : EIO));
    }
    if (rename(tmp, path) != 0) {
        e = errno;
        unlink(tmp);
        return errf(err, "cannot rename %s to %s: %s", tmp, path, strerror(e));
    }
    fsync_parent_dir(path); /* the rename itself made durable */
    return 0;
}
