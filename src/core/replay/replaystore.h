/* SPDX-License-Identifier: MIT */
/* replaystore.h: the replay storage of a replay shard, of the local trainer
 * and of run checkpoints: one ReplayBuf (the rows) and, when the store is
 * prioritized, a SumTree over its slots (proportional prioritized replay,
 * Schaul et al. 2016, as in Ape-X, Horgan et al. 2018). Prioritization is
 * a property of the store, fixed at init; every call below works on both
 * kinds, so callers do not branch on it (the few that need to know, such
 * as the sample message layout, ask replaystore_prioritized). Also the
 * sampling math a learner needs to sample several shards as one. No MPI,
 * no allocation after init.
 *
 * A uniform store is exactly a ReplayBuf: sampling draws rows uniformly
 * with replacement (replaybuf_sample), priority updates are ignored, its
 * checkpoint data is replay section version 1 (3 with packed rows).
 *
 * Priorities. A transition with TD error td has priority
 *   p = (|td| + eps)^alpha
 * and is drawn with probability P(i) = p_i / sum_k p_k. alpha = 0 makes
 * every p exactly 1 (pow(x, 0) == 1), so sampling is exactly uniform over
 * the stored rows; eps > 0 keeps a row with td = 0 drawable. A new row
 * gets either the priority of its own |td| from the acting network
 * (replay.initial_priority: actor, from the acting forward: actorcore.h) or max_priority, the
 * largest p ever set in this buffer (Schaul's "maximal priority", so that
 * every new row is seen at least about once; starts at 1).
 *
 * Slots and ids. Leaf s of the tree holds the priority of slot s of the
 * ring (0 while the slot is empty). A sample hands out (slot, id) pairs
 * (replaybuf.h); the learner's new |td| comes back with both, and an update
 * whose slot has been overwritten since is ignored and counted in `stale`
 * rather than landing on the new transition.
 *
 * Sampling is stratified: B draws at masses (b + U_b) / B * total, b = 0 ..
 * B-1, one per equal slice of the mass (Schaul et al., Appendix B.2.1).
 * Every row's chance to appear in a slice, summed over slices, is B P(i):
 * unbiased, with less variance than B independent draws.
 *
 * Several shards as one (exact): a learner that knows every shard's total
 * T_s stratifies over the combined mass T = sum T_s (prio_stratify), so draw
 * b lands in shard s at fraction f of T_s and shard s resolves f * T_s in its
 * own tree (replaystore_sample_at). Draw b then picks row i of shard s with
 * probability (T_s / T) * (p_i / T_s') = p_i / T when the shard's total at
 * sampling, T_s', is the T_s the learner stratified with: exactly as if all
 * shards were one buffer. With totals a message old the two differ a
 * little, and the importance weight must use the probability the row was
 * really drawn with, (T_s / T) * (p_i / T_s').
 *
 * Importance weights (prio_weights). w_i = (N P_i)^-beta, normalized by the
 * maximum over the batch (as Ape-X does), not by the maximum over the whole
 * buffer (Schaul et al.: 1 / max_i w_i = (N P_min)^beta). The buffer-wide
 * normalization needs the global minimum priority, which in a sharded
 * replay is either stale or one more message per batch; the batch maximum
 * needs nothing but the batch. Both keep every weight in (0, 1], so
 * weights only ever scale an update down and the learning rate keeps its
 * meaning; with batch normalization a batch's largest weight is exactly 1.
 * Since (N P_i)^-beta / (N P_min)^-beta = (P_min / P_i)^beta, N cancels.
 *
 * Who talks to it: the local trainer (src/core/train/trainer.c), the replay and
 * learner roles of a distributed job, `gorila bench replay`, checkpoints.
 */
#ifndef GORILA_PRIOREPLAY_H
#define GORILA_PRIOREPLAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "batch.h"
#include "config.h"
#include "replaybuf.h"
#include "rng.h"
#include "sumtree.h"

typedef struct {
    ReplayBuf buf;         /* the rows */
    bool prioritized;      /* replay.kind prioritized: tree, alpha, eps and max_priority are in use */
    SumTree tree;          /* prioritized: leaf s holds the priority of slot s (0 = empty slot) */
    double alpha, eps;     /* p = (|td| + eps)^alpha */
    double max_priority;   /* the largest p ever set (Schaul's initial priority); starts at 1 */
    uint64_t stale;        /* priority updates ignored: the slot was overwritten since it was sampled */
} ReplayStore;

/* An empty prioritized store of capacity >= 1 rows of obs_dim >= 1
 * floats, alpha >= 0, eps > 0 (asserted; the config validator checks the
 * ranges). Dies (xmalloc) if the memory is not there. */
void replaystore_init_prioritized(ReplayStore *pr, size_t capacity, int obs_dim, double alpha, double eps);

/* An empty uniform store (a ReplayBuf and no tree). */
void replaystore_init_uniform(ReplayStore *pr, size_t capacity, int obs_dim);

/* The general form: rows stored as `row` says (obsrow.h: packed bits for a
 * planes environment), prioritized (alpha, eps as above) or uniform
 * (alpha and eps not read). The two above store float rows. */
void replaystore_init_rows(ReplayStore *pr, size_t capacity, ObsRow row, bool prioritized, double alpha, double eps);

/* The store the config asks for, rows as `row` says: prioritized (alpha,
 * priority_eps) when replay.kind is prioritized, uniform otherwise. */
void replaystore_init_for(ReplayStore *pr, size_t capacity, ObsRow row, const Config *cfg);

static inline bool replaystore_prioritized(const ReplayStore *pr) { return pr->prioritized; }

/* Release the memory; safe on a zeroed struct and twice. */
void replaystore_free(ReplayStore *pr);

/* (td_abs + eps)^alpha; td_abs >= 0 and finite. Prioritized only. */
double replaystore_priority(const ReplayStore *pr, double td_abs);

/* Insert the chunk's rows (replaybuf_add_batch: row i goes to slot
 * (first + i) % capacity, evicting the oldest row once full). Row i gets
 * priority replaystore_priority(td_abs[i]), or max_priority when td_abs is
 * NULL; an evicted slot's old priority is replaced, so the total is always
 * the sum over the stored rows. td_abs: (chunk->n), each finite and >= 0
 * (asserted; the caller checks). A priority above max_priority raises it.
 * Returns the first slot, like replaybuf_add_batch. Uniform: exactly
 * replaybuf_add_batch (td_abs is not read, may be NULL). */
size_t replaystore_add_batch(ReplayStore *pr, const Batch *chunk, const float *td_abs);

/* The same for rows already in the buffer's stored form (replaybuf_add_rows:
 * a replay shard's actor chunks, never unpacked). */
size_t replaystore_add_rows(ReplayStore *pr, const ReplayRows *rows, const float *td_abs);

/* Sample B >= 1 rows at positions frac[b] in [0, 1) of this buffer's total
 * mass (mass = frac[b] * total; the buffer must not be empty): out rows
 * 0 .. B-1 get the transitions (replaybuf_gather; out->n = B, out->weight
 * untouched), slots[b] and ids[b] the sampled slot and its transition's id,
 * prio[b] the slot's priority p (so the caller can compute P = p / total).
 * A frac at or past 1 through rounding gets the last non-empty slot (never
 * an empty one). frac, slots, ids, prio: (B); slots, ids and prio may be
 * NULL. Prioritized only (asserted): a uniform shard needs no positions. */
void replaystore_sample_at(const ReplayStore *pr, const double *frac, int B, Batch *out, size_t *slots, uint64_t *ids,
                          double *prio);

/* Sample B >= 1 rows of a non-empty store into out rows 0 .. B-1 (out->n
 * = B), slots[b], ids[b] and prio[b] as in replaystore_sample_at (each may
 * be NULL). Prioritized: stratified, frac[b] = (b + U[0,1)) / B, the
 * uniforms drawn from rng in row order, then replaystore_sample_at (weight
 * untouched). Uniform: replaybuf_sample (weight 1 where out->weight is
 * set), and prio must be NULL. B <= PRIO_MAX_BATCH for the on-stack
 * fractions (asserted). */
enum { PRIO_MAX_BATCH = 65536 };
void replaystore_sample(const ReplayStore *pr, Rng *rng, int B, Batch *out, size_t *slots, uint64_t *ids,
                       double *prio);

/* What a replay shard serves a learner's request with: prioritized, the
 * rows at the learner's positions frac (replaystore_sample_at; the
 * learner stratified over every shard and computes the weights itself);
 * uniform, B rows drawn from rng (replaystore_sample; frac is not read and
 * prio must be NULL). B >= 1; the other arguments as in
 * replaystore_sample_at. */
void replaystore_sample_request(const ReplayStore *pr, Rng *rng, const double *frac, int B, Batch *out,
                                size_t *slots, uint64_t *ids, double *prio);

/* What a single learner that owns the whole store samples (the local
 * trainer): replaystore_sample into out, with out->weight (B) set to the
 * importance weights of the draws: prioritized P_i = p_i / total, weights
 * prio_weights with exponent beta; uniform all 1 (beta not used).
 * scratch: (B) doubles, caller-owned. slots, ids: as in
 * replaystore_sample for a prioritized store, for the priority updates;
 * a uniform store takes none and leaves them unwritten. */
void replaystore_sample_weighted(const ReplayStore *pr, Rng *rng, int B, double beta, Batch *out, size_t *slots,
                                 uint64_t *ids, double *scratch);

/* A new |td| for a sampled (slot, id). Returns false, and counts it in
 * pr->stale, when the slot no longer holds transition id (replaybuf_holds:
 * it was overwritten since the sample); otherwise sets the slot's priority
 * to replaystore_priority(td_abs), raises max_priority if it is larger, and
 * returns true. td_abs must be finite and >= 0 (asserted: a non-finite TD
 * error is a divergence, which the caller reports before getting here).
 * Prioritized only (asserted). */
bool replaystore_update(ReplayStore *pr, size_t slot, uint64_t id, double td_abs);

/* replaystore_update for rows 0 .. n-1 in order (the same result as n
 * calls), with the sum-tree lines of a group of rows requested together
 * (sumtree_set_many): what a learner's batch of new priorities should use.
 * slots, ids, td_abs: (n). Returns how many were set; the others are
 * counted in pr->stale. Uniform: nothing to set, returns 0. */
size_t replaystore_update_many(ReplayStore *pr, const size_t *slots, const uint64_t *ids, const float *td_abs, int n);

/* The total sampling mass: the sum of the priorities, or for a uniform
 * store the row count (every row has mass 1). */
static inline double replaystore_total(const ReplayStore *pr) {
    return pr->prioritized ? sumtree_total(&pr->tree) : (double)replaybuf_size(&pr->buf);
}
static inline size_t replaystore_size(const ReplayStore *pr) { return replaybuf_size(&pr->buf); }

/* The learner's side of sampling S >= 1 buffers as one (exact across
 * shards, see the top of this file): B >= 1 stratified draws over the
 * combined mass T = sum(totals[0 .. S)), draw b at (b + U[0,1)) / B * T (the
 * uniforms from rng in order). Draw b lands in shard shard_of[b] at
 * relative position frac[b] in [0, 1) of that shard's total. Shards with
 * total 0 get no draw. totals: (S), each finite and >= 0, sum > 0;
 * shard_of, frac: (B). The draws come out in shard order (shard_of is
 * non-decreasing), so a learner can send each shard one contiguous run. */
void prio_stratify(const double *totals, int S, int B, Rng *rng, int *shard_of, double *frac);

/* Importance weights for B >= 1 rows drawn with probabilities prob[0 .. B)
 * (each in (0, 1]) from n_total >= 1 stored rows over all shards:
 *   w_i = (N P_i)^-beta / max_j (N P_j)^-beta = (P_min / P_i)^beta,
 * computed in double and written as float into w[0 .. B). The row with
 * the smallest probability gets exactly 1, beta = 0 gives all 1. Batch-max
 * normalization: see the top of this file for why. */
void prio_weights(const double *prob, int B, double n_total, double beta, float *w);

/* The importance exponent after `updates` updates: linear from beta (at 0
 * updates) to beta_final (at beta_steps updates and after); beta_steps = 0
 * gives beta_final at once. */
double prio_beta(double beta, double beta_final, uint64_t beta_steps, uint64_t updates);

/* Serialization for replay checkpoints: the replay section of
 * docs/CHECKPOINT.md. Uniform: version 1 (3 with packed rows),
 * replaybuf_serialize's bytes. Prioritized: version 2 (4 with packed
 * rows), that is the uniform layout followed by a priority block (f64
 * max_priority, then f64 p of each stored row, oldest first).
 * replaystore_serial_bytes: the exact size replaystore_serialize writes.
 * replaystore_restore: replace the state with buf[0 .. bytes), any of
 *   versions 1 .. 4 into either row form (replaybuf_restore's rules:
 *   smaller capacity keeps the newest rows, *dropped counts the rest). A
 *   section without priorities (1 or 3: a uniform run or an older build)
 *   gives every row this buffer's max_priority (1 unless a priority was set
 *   before); a uniform store skips a priority block (a prioritized run
 *   resumed as uniform). Returns 0, or -1 with a message in err and the
 *   buffer unchanged. */
size_t replaystore_serial_bytes(const ReplayStore *pr);
void replaystore_serialize(const ReplayStore *pr, void *buf);
int replaystore_restore(ReplayStore *pr, const void *buf, size_t bytes, size_t *dropped, char *err);

/* replaybuf_append_serial (a resume that deals saved shards out to
 * another number of shards): rows first, first + step, ..., count of
 * them, inserted in order with new ids. Prioritized: each keeping the
 * priority p saved with it as it is (not recomputed from a |td|), and
 * max_priority raised to the data's max_priority. Data without
 * priorities (versions 1 and 3: a uniform run) gives every row this buffer's max_priority.
 * Every priority used is checked (finite, > 0) before anything changes.
 * Returns 0, or -1 with err and the buffer unchanged. */
int replaystore_append_serial(ReplayStore *pr, const void *buf, size_t bytes, uint64_t first, uint64_t step,
                             uint64_t count, char *err);

#endif
