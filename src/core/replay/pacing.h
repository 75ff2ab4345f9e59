/* SPDX-License-Identifier: MIT */
/* pacing.h: who gets how much, and who may go next: the pure policy that
 * keeps a distributed job's actors and learners at the configured pace.
 * No MPI, no I/O, no allocation after pacing_rr_init; the roles
 * (src/mpi/actor.c, replay.c, learner.c) hold the state and call these.
 *
 *   budget split   a count (env steps, actors, replay.min_size) over parties,
 *                  by shard_range: contiguous, the first total mod k parts
 *                  one item larger;
 *   actor -> shard actor a feeds replay shard a mod S, so shard s is fed by
 *                  pacing_split(A, S, s) actors;
 *   limiter        a replay shard's samples-per-insert limiter;
 *   round-robin    the order in which a learner visits the replay shards,
 *                  each as often as the actors feeding it.
 */
#ifndef GORILA_PACING_H
#define GORILA_PACING_H

#include <stdbool.h>
#include <stdint.h>

/* ---- budget split ------------------------------------------------------- */

/* Part i of `total` items split over `parties` (shard_range of shard.h):
 * returns its size and, when off is not NULL, stores its first item in
 * *off. Parts are contiguous and in order, sum to total, and differ in size
 * by at most one (the first total mod parties get the extra item; total <
 * parties gives some empty parts). parties >= 1, 0 <= i < parties. */
uint64_t pacing_split(uint64_t total, int parties, int i, uint64_t *off);

/* The largest part of that split, ceil(total / parties). A replay shard
 * holds this much of replay.capacity and waits for this much of
 * replay.min_size, so S shards together hold at least the configured
 * amount. parties >= 1. */
uint64_t pacing_split_max(uint64_t total, int parties);

/* The replay shard actor `actor` sends its experience to: actor mod shards.
 * Shard s is therefore fed by pacing_split(A, shards, s, NULL) of A actors
 * (the actors s, s + S, s + 2S, ...). shards >= 1, actor >= 0. */
int pacing_actor_shard(int actor, int shards);

/* ---- samples-per-insert limiter (one per replay shard) ------------------- */

/* With I transitions inserted, S sampled and m = min_size, the sampling debt
 * is e = spi * (I - m) - S, and with slack(B) = tol * spi * max(I - m, 0) + B
 *
 *   a request of B rows is served only if I >= m and e - B >= -slack(B),
 *   a chunk is inserted only if I < m or e <= slack(batch),
 *
 * (B cancels in the first: a request waits while e < -tol * spi * (I - m)),
 * so while I >= m, S stays within a factor tol of spi * (I - m), give or take
 * one batch and one chunk, whichever side is faster: a learner that runs
 * ahead waits for inserts, an actor that runs ahead waits for its ack. One of the two is always allowed (e > slack(batch)
 * means e > 0, and then any request fits), so the limiter alone cannot
 * deadlock. Two rules come before it for sampling: nothing is served
 * before anything was inserted (or restored, below), and once every actor
 * of the shard has sent its last chunk every request is served (no insert
 * could ever pay a debt back, and a learner would wait for ever).
 *
 * A resumed shard that restored R transitions from a checkpoint
 * (pacing_limiter_restored) counts them towards its min_size, which
 * becomes max(m - R, 0), and may serve before its first insert. I and S
 * still count only this segment's inserts and samples, so the debt starts
 * at 0: learning restarts at once when R covers the shard's min_size, at
 * the configured ratio (one batch of slack, then one batch per 1 / spi
 * inserts), rather than replaying the restored data spi * R times before
 * the actors may insert again, or waiting for min_size new inserts. */
typedef struct {
    double spi;          /* samples per insert to hold (agentcfg_samples_per_insert) */
    double tol;          /* relative tolerance (replay.spi_tolerance) */
    uint64_t min_size;   /* inserts before the first sample: the shard's share of replay.min_size */
    int batch;           /* replay.batch_size: the slack every insert decision allows */
    int actors;          /* actors feeding the shard */
    int actors_done;     /* of them, how many have sent their last chunk */
    uint64_t inserted;   /* transitions inserted so far */
    uint64_t sampled;    /* transitions served so far */
    uint64_t unpaced;    /* of them, served after every actor had sent its last chunk (no limit then) */
    uint64_t restored;   /* transitions the shard started with (a resume; 0 otherwise) */
} PacingLimiter;

/* A limiter with nothing inserted or sampled. spi > 0, tol >= 0,
 * batch >= 1, actors >= 0. */
void pacing_limiter_init(PacingLimiter *p, double spi, double tol, uint64_t min_size, int batch, int actors);

/* The shard starts with `rows` transitions restored from a checkpoint
 * (call once, before anything is inserted or sampled): min_size shrinks by
 * them (not below 0) and, with rows > 0, requests may be served before the
 * first insert. */
void pacing_limiter_restored(PacingLimiter *p, uint64_t rows);

/* Whether a chunk may be inserted now. */
bool pacing_limiter_can_insert(const PacingLimiter *p);

/* Whether a request of `rows` rows may be served now. */
bool pacing_limiter_can_sample(const PacingLimiter *p, int rows);

/* Count an inserted chunk of `rows` transitions (0 for an empty last
 * chunk); last: it was its actor's last. */
void pacing_limiter_inserted(PacingLimiter *p, uint64_t rows, bool last);

/* Count a served request of `rows` rows (also in `unpaced` once every
 * actor of the shard has sent its last chunk: between that moment and the
 * job's STOP reaching the learners, they sample without limit, so a short
 * run on a loaded machine can train well past its ratio at the very end;
 * summary.json reports these rows apart as sampled_unpaced). */
void pacing_limiter_sampled(PacingLimiter *p, int rows);

/* ---- smooth weighted round-robin over replay shards (one per learner) --- */

/* Each pick, every shard gains its weight, the richest is picked (the
 * lowest index on a tie) and pays the total. Over any `total` consecutive
 * picks shard s is picked exactly weight[s] times, spread out rather than
 * in runs. Weights are the actors feeding each shard, so every shard is
 * sampled in proportion to what it receives. */
typedef struct {
    int n;               /* shards */
    int total;           /* sum of the weights: the number of actors */
    int *weight;         /* (n) actors feeding each shard */
    int *current;        /* (n) running credit */
} PacingRR;

/* Round-robin over `shards` shards fed by `actors` actors (actor a feeds
 * pacing_actor_shard(a, shards)), advanced `start` picks so that learners
 * given different starts do not all visit the same shard at once.
 * Allocates the two arrays; free with pacing_rr_free. shards >= 1,
 * actors >= 0, start >= 0. */
void pacing_rr_init(PacingRR *rr, int shards, int actors, int start);

/* The next shard to sample from, in [0, n). With every weight 0 it
 * returns 0. */
int pacing_rr_next(PacingRR *rr);

/* Safe on a zeroed struct. */
void pacing_rr_free(PacingRR *rr);

#endif
