/* SPDX-License-Identifier: MIT */
/* replaybuf.h: transition storage of one replay shard (no MPI).
 *
 * A struct-of-arrays ring of `capacity` transitions (obs, action, reward,
 * next_obs, discount; see agents/batch.h for what reward and discount mean),
 * preallocated in replaybuf_init as one block with named views. Inserts
 * overwrite the oldest transition once the ring is full (FIFO). Sampling is
 * uniform with replacement from a caller-owned Rng into a caller-owned
 * Batch. Nothing allocates after init. Observation rows are stored in
 * the form obsrow.h describes: floats, or bits for a planes environment
 * (packed on insert from a Batch, copied as they are from ReplayRows,
 * unpacked into the float Batch on sample).
 *
 * Slots and ids. A slot is a row of the ring (0 .. capacity-1); the same
 * slot holds a new transition after every `capacity` inserts. Every
 * transition also has an id, its insertion number (the first transition
 * ever inserted has id 0, ids never repeat). Samplers hand out (slot, id)
 * pairs; replaybuf_holds(rb, slot, id) later says whether the slot still
 * holds that transition, so that a priority update arriving after the slot
 * was overwritten can be ignored (and counted) instead of landing on the
 * wrong transition. A sum-tree for prioritized replay indexes the same
 * slots and sits beside this storage.
 *
 * Invariant: while size < capacity the occupied slots are exactly
 * 0 .. size-1 and head == size (a buffer only fills from empty or is
 * restored compacted); once full, every slot is occupied and head is the
 * slot of the oldest transition, the next one to be overwritten.
 *
 * Who talks to it: the replay role (inserts actor chunks, samples batches
 * for learners), the single-process trainer, and checkpoints through
 * replaybuf_serialize / replaybuf_restore.
 */
#ifndef GORILA_REPLAYBUF_H
#define GORILA_REPLAYBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "batch.h"
#include "obsrow.h"
#include "rng.h"

typedef struct {
    size_t capacity;  /* rows in the ring */
    int obs_dim;      /* O */
    ObsRow row;       /* how obs and next_obs rows are stored: floats, or bits for planes (obsrow.h) */
    size_t size;      /* rows holding a transition, <= capacity */
    size_t head;      /* slot the next insert writes */
    uint64_t total;   /* transitions ever inserted; the next insert gets this id */
    unsigned char *obs;       /* (capacity, row.bytes)  views into block */
    int32_t *action;          /* (capacity) */
    float *reward;            /* (capacity) */
    unsigned char *next_obs;  /* (capacity, row.bytes) */
    float *discount;          /* (capacity) */
    void *block;      /* the one allocation behind the views */
} ReplayBuf;

/* n transitions whose observations are already in a buffer's stored form
 * (obsrow.h): what an actor's EXPERIENCE message carries (proto.h), so a
 * replay shard stores them without unpacking. Views, caller-owned, any
 * alignment of obs and next_obs. */
typedef struct {
    int n;
    const void *obs;       /* (n, row.bytes) */
    const void *next_obs;  /* (n, row.bytes) */
    const int32_t *action; /* (n) */
    const float *reward;   /* (n) */
    const float *discount; /* (n) */
} ReplayRows;

/* Allocate an empty buffer of capacity >= 1 transitions of obs_dim >= 1
 * floats, stored as floats. Dies (xmalloc) if the memory is not there. */
void replaybuf_init(ReplayBuf *rb, size_t capacity, int obs_dim);

/* The same with rows stored as `row` says: obsrow_make(O, true) for a
 * planes environment (ceil(O / 8) bytes a row instead of 4 O). */
void replaybuf_init_rows(ReplayBuf *rb, size_t capacity, ObsRow row);

/* Release the memory; safe on a zeroed struct and twice. */
void replaybuf_free(ReplayBuf *rb);

/* Insert one transition (copied; obs, next_obs: (O) floats, packed on the
 * way in when the rows are). Returns the slot it went to. O(O). A packed
 * buffer given a cell that is not exactly 0 or 1 dies naming it (an
 * environment that declares planes and writes anything else is a bug). */
size_t replaybuf_add(ReplayBuf *rb, const float *obs, int32_t action, float reward, const float *next_obs,
                     float discount);

/* Insert the chunk's rows 0 .. chunk->n-1 in order (chunk->obs_dim must equal
 * the buffer's; chunk->weight is ignored; packed as replaybuf_add). Row i
 * goes to slot (first + i) % capacity where `first` is the return value
 * (the head before the insert) and gets id total_before + i. When
 * chunk->n > capacity only the last `capacity` rows survive, exactly as if
 * they had been inserted one by one. At most two copies per array. */
size_t replaybuf_add_batch(ReplayBuf *rb, const Batch *chunk);

/* replaybuf_add_batch for rows already in the buffer's stored form (a
 * replay shard's actor chunks): copied as they are, never unpacked. */
size_t replaybuf_add_rows(ReplayBuf *rb, const ReplayRows *rows);

/* Draw B >= 1 slots uniformly with replacement (rng_below(rng, size) each,
 * in row order) from a non-empty buffer and copy those transitions into
 * out rows 0 .. B-1 (packed rows unpacked to 0.0f / 1.0f floats): out->n =
 * B, out->obs_dim must equal the buffer's, the arrays of out have room for
 * B rows, out->weight (if not NULL) gets 1.
 * slots and ids: (B) each, filled with the sampled slot and the id of the
 * transition in it; either may be NULL. An empty buffer or B <= 0 is the
 * caller's bug (assert). */
void replaybuf_sample(const ReplayBuf *rb, Rng *rng, int B, Batch *out, size_t *slots, uint64_t *ids);

/* Copy the transitions in slots[0 .. B-1] (each < size) into out rows
 * 0 .. B-1 (out->n = B; weight untouched; unpacked as above). The building
 * block of every sampler: the uniform one above and a prioritized one that
 * picks slots from a sum-tree. */
void replaybuf_gather(const ReplayBuf *rb, const size_t *slots, int B, Batch *out);

/* Id of the transition in an occupied slot (slot < size). */
uint64_t replaybuf_slot_id(const ReplayBuf *rb, size_t slot);

/* True when slot is occupied and still holds transition `id`, false when
 * it has been overwritten since (or never held it). */
bool replaybuf_holds(const ReplayBuf *rb, size_t slot, uint64_t id);

static inline size_t replaybuf_size(const ReplayBuf *rb) { return rb->size; }
static inline size_t replaybuf_capacity(const ReplayBuf *rb) { return rb->capacity; }
static inline uint64_t replaybuf_total(const ReplayBuf *rb) { return rb->total; }

/* Serialization (for optional replay checkpoints). The byte layout is
 * documented in docs/CHECKPOINT.md ("Replay section"): a 40-byte header
 * (magic, version, obs_dim, capacity, size, total) and then the contents in
 * logical order, oldest first, in the machine's byte order, the
 * observation rows in the buffer's stored form (obsrow.h). Versions:
 *   1 float rows            2 float rows + priority block
 *   3 packed rows (planes)  4 packed rows + priority block
 *
 * replaybuf_serial_bytes: the exact size replaybuf_serialize writes.
 * replaybuf_serialize: write the whole state into buf (serial_bytes bytes,
 *   caller-owned, any alignment): version 1, or 3 for packed rows.
 * replaybuf_restore: replace the state of an initialised buffer with the one
 *   in buf[0 .. bytes) (any of the four versions; rows are converted to the
 *   buffer's form: float data into a packed buffer is packed, and refused
 *   if a cell is not 0 or 1). The obs_dim must match; the capacity need not:
 *   into a smaller buffer only the newest `capacity` transitions are kept
 *   (*dropped, if not NULL, gets how many were left out, so the caller can
 *   log it); into a larger one all are kept and there is room to grow. The
 *   total (and so every kept transition's id) is restored as written.
 *   Returns 0, or -1 with a message in err (not replay data, version, obs_dim
 *   mismatch, a size that does not match the byte count, float cells a
 *   packed buffer cannot hold) and the buffer left unchanged. */
size_t replaybuf_serial_bytes(const ReplayBuf *rb);
void replaybuf_serialize(const ReplayBuf *rb, void *buf);

/* The same bytes in the version that announces a priority block (2, or 4
 * for packed rows), for replaystore_serialize, which appends its block
 * right after these serial_bytes. replaybuf_restore reads such data and
 * skips the block (a prioritized run resumed as uniform). */
void replaybuf_serialize_prioritized(const ReplayBuf *rb, void *buf);

int replaybuf_restore(ReplayBuf *rb, const void *buf, size_t bytes, size_t *dropped, char *err);

/* ---- dealing saved shards to another number of shards -------------------
 * A distributed job saves one replay file per shard; a resume with another
 * shard count deals the saved rows out again (runckpt_read_replay). These
 * are its MPI-free parts: what a saved section holds, which of its rows go
 * to which new shard, and inserting them. */

/* What a serialized section holds, from its 40-byte header, checked as
 * replaybuf_restore checks it (magic, version 1 .. 4, obs_dim, the exact
 * length for its row count, total >= size), and where each array starts:
 * the one description of the layout that every reader uses. */
typedef struct {
    uint32_t version;   /* 1 .. 4 (above) */
    bool packed;        /* observation rows are bits (versions 3 and 4) */
    bool priorities;    /* a priority block follows the rows (versions 2 and 4) */
    uint64_t size;      /* transitions stored, oldest first */
    uint64_t total;     /* transitions its writer ever inserted */
    ObsRow row;         /* the stored form of one observation row in this data */
    /* byte offsets from the start of the section; prio: f64 max_priority,
     * then one f64 per row (only with priorities) */
    size_t obs, action, reward, next_obs, discount, prio;
} ReplaySerInfo;

/* Fill info from buf[0 .. bytes) for a buffer of obs_dim floats per
 * observation. Reads only the 40-byte header. Returns 0, or -1 with err
 * (replaybuf_restore's messages). */
int replaybuf_serial_info(const void *buf, size_t bytes, int obs_dim, ReplaySerInfo *info, char *err);

/* Insert rows first, first + step, ..., first + (count - 1) * step of the
 * serialized data buf[0 .. bytes) (row 0 is its oldest) into rb in that
 * order, exactly as replaybuf_add would insert them (converted to rb's
 * row form as in replaybuf_restore): they get new ids (rb->total onward,
 * the saved ids are not kept) and, once rb is full, overwrite its oldest
 * rows. step >= 1. Returns the slot the first of them
 * went to (rb->head before the call), or (size_t)-1 with err when the data
 * is not valid for rb (replaybuf_serial_info), the rows run past its
 * size or hold float cells a packed rb cannot; rb is then unchanged. */
size_t replaybuf_append_serial(ReplayBuf *rb, const void *buf, size_t bytes, uint64_t first, uint64_t step,
                               uint64_t count, char *err);

/* The deal: n_old saved shards of sizes[0 .. n_old) rows are put end to
 * end in index order, each oldest first, and row k of that combined order
 * goes to new shard k mod n_new, so every new shard gets within one row of
 * an equal share, and a part of every old shard's history. New shard s
 * (0 <= s < n_new) takes from old shard j the rows first[j],
 * first[j] + n_new, ..., count[j] of them (count[j] = 0: none, first[j] 0).
 * When it is dealt more than cap rows in all it keeps exactly cap: the
 * newest of each old shard's part, the cut shared over the parts in
 * proportion to their sizes (part j keeps floor(cap C_j / D) -
 * floor(cap C_(j-1) / D) of its rows, C_j the rows dealt from shards 0 .. j,
 * D = C_(n_old - 1)). Returns the rows dealt to s and not kept. first,
 * count: (n_old), caller-owned. */
uint64_t replaybuf_deal(const uint64_t *sizes, int n_old, int n_new, int s, uint64_t cap, uint64_t *first,
                        uint64_t *count);

#endif
