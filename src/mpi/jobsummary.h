/* jobsummary.h: what a distributed job's run files say about its roles,
 * from the latest RoleMetrics of every rank (the coordinator's `last`):
 * metrics.csv's extra columns (bytes by message type, staleness, drops,
 * replay) and summary.json's members after the common ones (traffic per
 * message type and role, each rank's counters, the allreduce algorithm).
 * No messages; the coordinator calls these with what it gathered. */
#ifndef GORILA_JOBSUMMARY_H
#define GORILA_JOBSUMMARY_H

#include <stdint.h>

#include "config.h"
#include "json.h"
#include "layout.h"
#include "proto.h"
#include "runlog.h"

/* metrics.csv's extra columns, in order. */
enum { JOBSUM_EXTRA = TAG_COUNT + 5 };
typedef struct {
    char bytes[TAG_COUNT][48];
    const char *name[JOBSUM_EXTRA];
} JobSumColumns;
void jobsum_columns(JobSumColumns *cols);

/* One metrics row's job-wide figures from last[0 .. lay->size): the extra
 * columns (JOBSUM_EXTRA values), the learners' cumulative loss sum and
 * update count, and actor 0's epsilon (NAN without actors). */
void jobsum_row(const Layout *lay, const RoleMetrics *last, double *extra, double *loss_sum, uint64_t *loss_n,
                double *epsilon);

/* summary.json's common keys that only the ranks know: gradients and
 * samples trained (learners), stale priority updates (replay shards). */
void jobsum_summary(const Config *cfg, const Layout *lay, const RoleMetrics *last, RunSummary *sum);

/* summary.json's members after the common ones: allreduce_impl,
 * bytes_sent by type (and "ring"), bytes_per_update overall and by role,
 * stale_gradients_dropped, and roles (each rank's counters). run_updates:
 * the updates of this segment. */
void jobsum_json(JsonW *j, const Config *cfg, const Layout *lay, const RoleMetrics *last, uint64_t run_updates);

#endif
