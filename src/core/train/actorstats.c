/* SPDX-License-Identifier: MIT */
/* actorstats.c: see actorstats.h.
 *
 * The ring of the last returns is runlog.h's RecentReturns, the same one
 * whose mean is metrics.csv's mean_train_return over all actors, so an
 * actor's mean_return_last_100 and the job's mean_train_return are the
 * same statistic over different episodes.
 */
#include "actorstats.h"
#include "util.h"

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void actorstats_init(ActorStats *s, int n_actors) {
    memset(s, 0, sizeof *s);
    if (n_actors <= 0) return;
    s->n = n_actors;
    s->a = xcalloc((size_t)n_actors, sizeof *s->a);
    for (int i = 0; i < n_actors; i++) {
        s->a[i].best = NAN;
        s->a[i].epsilon = NAN;
    }
}

void actorstats_free(ActorStats *s) {
    free(s->a);
    memset(s, 0, sizeof *s);
}

void actorstats_add(ActorStats *s, int actor, double ret) {
    ActorReturns *a = &s->a[actor];
    recent_add(&a->recent, ret);
    a->episodes++;
    /* !(ret <= best) also takes the first return, when best is NaN */
    if (!(ret <= a->best)) a->best = ret;
}

void actorstats_set_epsilon(ActorStats *s, int actor, double epsilon) { s->a[actor].epsilon = epsilon; }

double actorstats_mean(const ActorStats *s, int actor) { return recent_mean(&s->a[actor].recent); }

void actorstats_json(JsonW *j, const char *key, const ActorStats *s) {
    json_begin_array(j, key);
    for (int i = 0; i < s->n; i++) {
        const ActorReturns *a = &s->a[i];
        json_begin_object(j, NULL);
        json_u64(j, "actor", (uint64_t)i);
        json_num(j, "epsilon", a->epsilon);
        json_u64(j, "episodes", a->episodes);
        json_num(j, "mean_return_last_100", actorstats_mean(s, i));
        json_num(j, "best_return", a->best);
        json_end_object(j);
    }
    json_end_array(j);
}

/* Append printf output at *len, never past size; false once it did not fit. */
static bool append(char *out, size_t size, size_t *len, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static bool append(char *out, size_t size, size_t *len, const char *fmt, ...) {
    if (*len >= size - 1) return false;
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(out + *len, size - *len, fmt, ap);
    va_end(ap);
    if (w < 0) return false;
    if ((size_t)w >= size - *len) {
        *len = size - 1; /* vsnprintf cut it and terminated */
        return false;
    }
    *len += (size_t)w;
    return true;
}

void actorstats_line(char *out, size_t size, const ActorStats *s) {
    if (size == 0) return;
    out[0] = '\0';
    size_t len = 0;
    if (!append(out, size, &len, "actors:")) return;
    int shown = s->n < ACTORSTATS_LINE_MAX ? s->n : ACTORSTATS_LINE_MAX;
    for (int i = 0; i < shown; i++) {
        double eps = s->a[i].epsilon, mean = actorstats_mean(s, i);
        char e[32], m[32];
        if (isnan(eps)) snprintf(e, sizeof e, "-");
        else snprintf(e, sizeof e, eps >= 0.01 ? "%.3f" : "%.2g", eps);
        if (isnan(mean)) snprintf(m, sizeof m, "-");
        else snprintf(m, sizeof m, "%.1f", mean);
        if (!append(out, size, &len, "%s eps %s -> mean %s", i ? " |" : "", e, m)) return;
    }
    if (s->n > shown) append(out, size, &len, " | ... (%d actors)", s->n);
}
