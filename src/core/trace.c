/* trace.c: see trace.h. */
#include "trace.h"
#include "util.h"

#include <stdlib.h>

static const char *const kind_names[TR_KINDS] = {
    "env batch", "send experience", "wait params", "wait sample", "gradient", "send gradient",
    "allreduce", "ring reduce-scatter", "ring allgather", "apply", "serve params", "insert",
    "sample", "evaluation", "checkpoint",
};

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
