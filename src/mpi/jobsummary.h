/* SPDX-License-Identifier: MIT */
/* jobsummary.h: what a distributed job's run files say about its roles,
 * from the latest RoleMetrics of every rank (the coordinator's `last`):
 * metrics.csv's extra columns (bytes by message type, staleness, drops,
 * replay) and summary.json's members after the common ones (traffic per
 * message type and role, each rank's counters, the allreduce algorithm).
 * No messages; the coordinator calls these with what it gathered. */
#ifndef GORILA_JOBSUMMARY_H
#define GORILA_JOBSUMMARY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "json.h"
#include "layout.h"
#include "proto.h"
#include "runlog.h"

/* metrics.csv's extra columns, in order. */
enum { JOBSUM_EXTRA = TAG_COUNT + 6 };
typedef struct {
    char bytes[TAG_COUNT][48];
    const char *name[JOBSUM_EXTRA];
} JobSummaryColumns;
void jobsummary_columns(JobSummaryColumns *cols);

/* One metrics row's job-wide figures from last[0 .. lay->size): the extra
 * columns (JOBSUM_EXTRA values), the learners' cumulative loss sum and
 * update count, and actor 0's epsilon (NAN without actors). */
void jobsummary_row(const Layout *lay, const RoleMetrics *last, double *extra, double *loss_sum, uint64_t *loss_n,
                double *epsilon);

/* summary.json's common keys that only the ranks know: gradients and
 * samples trained (learners), stale priority updates (replay shards). */
void jobsummary_summary(const Config *cfg, const Layout *lay, const RoleMetrics *last, RunSummary *sum);

/* The communication model: the bytes one learner (index `learner` of
 * lay's) sends and receives to sync one gradient of a network of n floats,
 * headers included, in the sync mode and algorithm of cfg (docs/
 * ARCHITECTURE.md, "Communication per worker"). With K = 4n bytes and P
 * parameter-server shards:
 *   PS modes   sent P*40 + K (its gradient, in P GRAD slices); received,
 *              every pull (each gradient in ps_sync, every
 *              sync.learner_pull_every otherwise), P*40 + K, plus K of
 *              target when the target changed since its last pull: with
 *              hard updates a fraction U/target_every of its pulls, U the
 *              PS updates between two of them (updates_per_gradient times
 *              the pull interval; <= 0: learners at equal rates, 1 update
 *              per gradient in ps_sync, N otherwise), every pull with soft;
 *   ring       2(N-1)/N * 4(n+1) each way (the stop flag rides along);
 *   naive      learner 0 (the driver) (N-1) * 4(n+1) each way, the others
 *              4(n+1) each way;
 *   mpi        not modelled (MPI_Allreduce's traffic is not visible):
 *              returns false.
 *   local_sgd  the allreduce's figure (ring, naive) of n + 1 floats once
 *              every sync.average_every gradients;
 *   gossip     4n each way per round the learner is paired in, a round
 *              every sync.gossip_every gradients (jobsummary_gossip_paired; the
 *              stop-flag and consensus rounds are not counted);
 *   easgd      P headers + 4n each way every sync.easgd_every gradients.
 * With learner.accumulate A each figure is divided by A: one push, pull or
 * round per A gradients (updates_per_gradient is still per gradient; its
 * <= 0 default above is per push). rounds: gossip's exchange rounds so far
 * (RoleMetrics.sync_rounds; 0: the long-run fraction).
 * Returns true with *sent and *recv set. */
bool jobsummary_model_bytes(const Config *cfg, const Layout *lay, size_t n, int learner, double updates_per_gradient,
                        uint64_t rounds, double *sent, double *recv);

/* gossip: the fraction of its first `rounds` rounds in which learner has
 * a partner (gossip.h); rounds 0: every round with an even learner count,
 * (L-1)/L with an odd one. */
double jobsummary_gossip_paired(const Config *cfg, const Layout *lay, int learner, uint64_t rounds);

/* Which parameters the job's evaluations and checkpoints hold, in words
 * (summary.json evaluated_parameters; the coordinator's first line). */
const char *jobsummary_evaluated(const Config *cfg);

/* summary.json's members after the common ones: allreduce_impl,
 * bytes_sent by type (and "ring"), bytes_per_update overall and by role,
 * stale_gradients_dropped, roles (each rank's counters), and per_worker:
 * each learner's sync bytes sent and received per gradient beside the
 * model's, its seconds computing, syncing and waiting for samples per
 * gradient, and each parameter-server shard's busy fraction and bytes per
 * second in and out. run_updates: the updates of this segment; n_params:
 * the network's floats; run_seconds: this segment's wall time. */
void jobsummary_json(JsonW *j, const Config *cfg, const Layout *lay, const RoleMetrics *last, uint64_t run_updates,
                 size_t n_params, double run_seconds);

#endif
