/* SPDX-License-Identifier: MIT */
/* actorstats.h: training returns per actor, so that with Ape-X exploration
 * (explore.kind: apex, one fixed epsilon per actor) the greedy actors'
 * returns can be told apart from the exploring ones'. For each actor: the
 * episodes it finished, the mean of its last up to RUNLOG_RECENT (100)
 * returns, its best return, and its exploration rate as last reported.
 *
 * The coordinator of a distributed job owns one ActorStats: it adds every
 * episode of the EPISODES messages, sets each actor's epsilon from its
 * last METRICS before writing summary.json's `actors` array
 * (actorstats_json) and the end-of-run line (actorstats_line).
 * Bookkeeping only: no MPI, no clock, no I/O beyond the JsonW it is given.
 * One allocation, in actorstats_init.
 */
#ifndef GORILA_ACTORSTATS_H
#define GORILA_ACTORSTATS_H

#include <stddef.h>
#include <stdint.h>

#include "json.h"
#include "runlog.h"

typedef struct {
    RecentReturns recent;  /* the last up to RUNLOG_RECENT returns */
    uint64_t episodes;     /* episodes finished (this segment of the run) */
    double best;           /* highest return; NaN before the first episode */
    double epsilon;        /* exploration rate (probability); NaN until set */
} ActorReturns;

typedef struct {
    int n;                 /* actors */
    ActorReturns *a;       /* (n) in actor index order */
} ActorStats;

/* Room for n_actors actors (n_actors >= 0), every one with no episode and
 * epsilon NaN. Dies through xcalloc when out of memory. */
void actorstats_init(ActorStats *s, int n_actors);
/* Safe on a zeroed or already freed ActorStats. */
void actorstats_free(ActorStats *s);

/* Record one finished episode of actor `actor` (0 <= actor < s->n, the
 * caller checks) with undiscounted return `ret`. */
void actorstats_add(ActorStats *s, int actor, double ret);
/* Set actor `actor`'s exploration rate (0 <= actor < s->n). */
void actorstats_set_epsilon(ActorStats *s, int actor, double epsilon);
/* Mean of actor `actor`'s last up to RUNLOG_RECENT returns; NaN before its
 * first episode. */
double actorstats_mean(const ActorStats *s, int actor);

/* Write key: [ {actor, epsilon, episodes, mean_return_last_100,
 * best_return}, ... ] into the JSON object open in j, one object per actor
 * in index order. NaN (no episode yet, epsilon never set) is written as
 * null. */
void actorstats_json(JsonW *j, const char *key, const ActorStats *s);

/* At most this many actors are shown by actorstats_line; more end in "...". */
#define ACTORSTATS_LINE_MAX 8
/* The end-of-run line, into out (size bytes, always terminated, cut to
 * fit), actors in index order, at most ACTORSTATS_LINE_MAX of them:
 *   actors: eps 0.400 -> mean 23.1 | eps 0.0016 -> mean 187.0 | ... (12 actors)
 * Epsilons of 0.01 and more print with 3 decimals, smaller ones with 2
 * significant digits; a mean not defined yet prints as "-". */
void actorstats_line(char *out, size_t size, const ActorStats *s);

#endif
