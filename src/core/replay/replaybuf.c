/* SPDX-License-Identifier: MIT */
/* replaybuf.c: see replaybuf.h.
 *
 * Slot arithmetic. The oldest transition sits in slot
 *   oldest = (head + capacity - size) % capacity
 * (0 while filling, head once full) and the transition in slot s has
 * logical position (s - oldest) mod capacity, 0 = oldest, so its id is
 *   total - size + ((s + capacity - oldest) % capacity).
 * Nothing per slot is stored for ids: they follow from (head, size, total),
 * which is what serialization saves.
 */
#include "replaybuf.h"

#include <inttypes.h>
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* Serialized header: see docs/CHECKPOINT.md, "Replay section". */
static const char SER_MAGIC[8] = {'G', 'R', 'L', 'R', 'E', 'P', 'L', 'Y'};
enum { SER_VERSION = 1, SER_VERSION_PRIO = REPLAYBUF_SER_VERSION_PRIO, SER_HEADER_BYTES = 40 };
_Static_assert(REPLAYBUF_SER_VERSION_PRIO == 2, "docs/CHECKPOINT.md documents version 2 as the prioritized one");

void replaybuf_init(ReplayBuf *rb, size_t capacity, int obs_dim) {
    assert(capacity >= 1 && obs_dim >= 1);
    memset(rb, 0, sizeof *rb);
    size_t O = (size_t)obs_dim;
    if (O > SIZE_MAX / 16 / capacity)
        DIE(NULL, "replay capacity %zu x obs_dim %d overflows the address space", capacity, obs_dim);
    /* One block, every view starting on a 64-byte boundary. */
    size_t obs_bytes = round_up(capacity * O * sizeof(float), 64);
    size_t col_bytes = round_up(capacity * sizeof(float), 64);
    char *p = xmalloc_for(2 * obs_bytes + 3 * col_bytes, "replay storage", "replay.capacity");
    rb->block = p;
    rb->obs = (float *)p;
    p += obs_bytes;
    rb->next_obs = (float *)p;
    p += obs_bytes;
    rb->action = (int32_t *)p;
    p += col_bytes;
    rb->reward = (float *)p;
    p += col_bytes;
    rb->discount = (float *)p;
    rb->capacity = capacity;
    rb->obs_dim = obs_dim;
}

void replaybuf_free(ReplayBuf *rb) {
    free(rb->block);
    memset(rb, 0, sizeof *rb);
}

size_t replaybuf_add(ReplayBuf *rb, const float *obs, int32_t action, float reward, const float *next_obs,
                     float discount) {
    size_t O = (size_t)rb->obs_dim, s = rb->head;
    memcpy(rb->obs + s * O, obs, O * sizeof(float));
    memcpy(rb->next_obs + s * O, next_obs, O * sizeof(float));
    rb->action[s] = action;
    rb->reward[s] = reward;
    rb->discount[s] = discount;
    rb->head = s + 1 == rb->capacity ? 0 : s + 1;
    if (rb->size < rb->capacity) rb->size++;
    rb->total++;
    return s;
}

/* One row of O floats. A memcpy of a run-time length is a library call,
 * which for CartPole's 16 bytes costs more than the copy; fixed 16-byte
 * pieces compile to plain moves. */
static inline void copy_row(float *dst, const float *src, size_t O) {
    size_t j = 0;
    for (; j + 4 <= O; j += 4) memcpy(dst + j, src + j, 4 * sizeof(float));
    for (; j < O; j++) dst[j] = src[j];
}

/* Copy n rows of every array from src rows [from, from + n) into slots
 * [dst, dst + n) of the ring; the caller guarantees dst + n <= capacity. */
static void put_rows(ReplayBuf *rb, size_t dst, const Batch *src, size_t from, size_t n) {
    size_t O = (size_t)rb->obs_dim;
    memcpy(rb->obs + dst * O, src->obs + from * O, n * O * sizeof(float));
    memcpy(rb->next_obs + dst * O, src->next_obs + from * O, n * O * sizeof(float));
    memcpy(rb->action + dst, src->action + from, n * sizeof(int32_t));
    memcpy(rb->reward + dst, src->reward + from, n * sizeof(float));
    memcpy(rb->discount + dst, src->discount + from, n * sizeof(float));
}

size_t replaybuf_add_batch(ReplayBuf *rb, const Batch *chunk) {
    assert(chunk->n >= 0 && chunk->obs_dim == rb->obs_dim);
    size_t n = (size_t)chunk->n, cap = rb->capacity, first = rb->head;
    if (n == 0) return first;
    /* Rows that a later row of the same chunk would overwrite are skipped. */
    size_t skip = n > cap ? n - cap : 0, keep = n - skip;
    size_t dst = (first + skip) % cap;
    size_t run = keep < cap - dst ? keep : cap - dst;
    put_rows(rb, dst, chunk, skip, run);
    if (keep > run) put_rows(rb, 0, chunk, skip + run, keep - run);
    rb->head = (first + n) % cap;
    rb->size = rb->size + keep < cap ? rb->size + keep : cap;
    rb->total += n;
    return first;
}

void replaybuf_gather(const ReplayBuf *rb, const size_t *slots, int B, Batch *out) {
    assert(B >= 0 && out->obs_dim == rb->obs_dim);
    size_t O = (size_t)rb->obs_dim;
    /* Prefetch a group's rows before copying them (see replaybuf_sample). */
    enum { GROUP = 16 };
    for (int g = 0; g < B; g += GROUP) {
        int m = B - g < GROUP ? B - g : GROUP;
        for (int j = 0; j < m; j++) {
            size_t s = slots[g + j];
            assert(s < rb->size);
            __builtin_prefetch(rb->obs + s * O);
            __builtin_prefetch(rb->next_obs + s * O);
            __builtin_prefetch(rb->action + s);
            __builtin_prefetch(rb->reward + s);
            __builtin_prefetch(rb->discount + s);
        }
        for (int j = 0; j < m; j++) {
            size_t s = slots[g + j], r = (size_t)(g + j);
            copy_row(out->obs + r * O, rb->obs + s * O, O);
            copy_row(out->next_obs + r * O, rb->next_obs + s * O, O);
            out->action[r] = rb->action[s];
            out->reward[r] = rb->reward[s];
            out->discount[r] = rb->discount[s];
        }
    }
    out->n = B;
}

void replaybuf_sample(const ReplayBuf *rb, Rng *rng, int B, Batch *out, size_t *slots, uint64_t *ids) {
    assert(rb->size > 0 && "sampling from an empty replay buffer");
    assert(B > 0 && "sampling a batch of no rows");
    assert(out->obs_dim == rb->obs_dim);
    size_t O = (size_t)rb->obs_dim;
    /* A large buffer does not fit in cache, so each row costs several cache
     * misses. Draw a group of slots first and prefetch all their lines,
     * then copy: the misses of a group overlap instead of queueing. */
    enum { GROUP = 16 };
    size_t s[GROUP];
    for (int g = 0; g < B; g += GROUP) {
        int m = B - g < GROUP ? B - g : GROUP;
        for (int j = 0; j < m; j++) {
            s[j] = (size_t)rng_below(rng, rb->size);
            __builtin_prefetch(rb->obs + s[j] * O);
            __builtin_prefetch(rb->next_obs + s[j] * O);
            __builtin_prefetch(rb->action + s[j]);
            __builtin_prefetch(rb->reward + s[j]);
            __builtin_prefetch(rb->discount + s[j]);
        }
        for (int j = 0; j < m; j++) {
            size_t r = (size_t)(g + j), k = s[j];
            copy_row(out->obs + r * O, rb->obs + k * O, O);
            copy_row(out->next_obs + r * O, rb->next_obs + k * O, O);
            out->action[r] = rb->action[k];
            out->reward[r] = rb->reward[k];
            out->discount[r] = rb->discount[k];
            if (out->weight) out->weight[r] = 1.0f;
            if (slots) slots[r] = k;
            if (ids) ids[r] = replaybuf_slot_id(rb, k);
        }
    }
    out->n = B;
}

uint64_t replaybuf_slot_id(const ReplayBuf *rb, size_t slot) {
    assert(slot < rb->size);
    /* The slot arithmetic at the top, with the two `mod capacity` done as a
     * conditional subtraction (both operands lie in [0, 2 capacity)): a
     * 64-bit division costs tens of cycles, and every sampled row and every
     * priority update asks for an id. */
    size_t cap = rb->capacity, oldest = rb->head + cap - rb->size;
    if (oldest >= cap) oldest -= cap;
    size_t pos = slot + cap - oldest;
    if (pos >= cap) pos -= cap;
    return rb->total - rb->size + pos;
}

bool replaybuf_holds(const ReplayBuf *rb, size_t slot, uint64_t id) {
    return slot < rb->size && replaybuf_slot_id(rb, slot) == id;
}

/* ---- serialization ----------------------------------------------------- */

/* Bytes of one serialized transition: obs and next_obs, then the three
 * scalars. */
static size_t row_bytes(size_t O) { return 2 * O * sizeof(float) + sizeof(int32_t) + 2 * sizeof(float); }

size_t replaybuf_serial_bytes(const ReplayBuf *rb) {
    return SER_HEADER_BYTES + rb->size * row_bytes((size_t)rb->obs_dim);
}


/* Append the logical range [0, size) of one ring array (elem bytes per
 * slot) at *p: oldest first, so two runs once the ring has wrapped. */
static void put_logical(const ReplayBuf *rb, unsigned char **p, const void *arr, size_t elem) {
    const unsigned char *a = arr;
    size_t cap = rb->capacity, oldest = (rb->head + cap - rb->size) % cap;
    size_t run = rb->size < cap - oldest ? rb->size : cap - oldest;
    memcpy(*p, a + oldest * elem, run * elem);
    memcpy(*p + run * elem, a, (rb->size - run) * elem);
    *p += rb->size * elem;
}

void replaybuf_serialize(const ReplayBuf *rb, void *buf) { replaybuf_serialize_version(rb, buf, SER_VERSION); }

void replaybuf_serialize_version(const ReplayBuf *rb, void *buf, uint32_t version) {
    assert(version == SER_VERSION || version == SER_VERSION_PRIO);
    unsigned char *p = buf;
    size_t O = (size_t)rb->obs_dim;
    memcpy(p, SER_MAGIC, 8);
    store_u32(p + 8, version);
    store_u32(p + 12, (uint32_t)rb->obs_dim);
    store_u64(p + 16, rb->capacity);
    store_u64(p + 24, rb->size);
    store_u64(p + 32, rb->total);
    p += SER_HEADER_BYTES;
    put_logical(rb, &p, rb->obs, O * sizeof(float));
    put_logical(rb, &p, rb->action, sizeof(int32_t));
    put_logical(rb, &p, rb->reward, sizeof(float));
    put_logical(rb, &p, rb->next_obs, O * sizeof(float));
    put_logical(rb, &p, rb->discount, sizeof(float));
}

int replaybuf_serial_info(const void *buf, size_t bytes, int obs_dim, ReplaySerInfo *info, char *err) {
    const unsigned char *p = buf;
    if (bytes < SER_HEADER_BYTES)
        return errf(err, "replay data is %zu bytes, shorter than its %d-byte header", bytes, SER_HEADER_BYTES);
    if (memcmp(p, SER_MAGIC, 8) != 0) return errf(err, "not replay buffer data (bad magic)");
    uint32_t version = load_u32(p + 8), od = load_u32(p + 12);
    uint64_t size = load_u64(p + 24), total = load_u64(p + 32);
    if (version != SER_VERSION && version != SER_VERSION_PRIO)
        return errf(err, "replay data has format version %u, this build reads versions %d and %d", version,
                    SER_VERSION, SER_VERSION_PRIO);
    if (od != (uint32_t)obs_dim)
        return errf(err, "replay data holds observations of %u floats, the buffer expects %d", od, obs_dim);
    /* Version 2 carries a priority block after the rows: 8 bytes of
     * max_priority and 8 per row (replaystore.h). */
    size_t per_row = row_bytes((size_t)obs_dim) + (version == SER_VERSION_PRIO ? 8 : 0);
    size_t extra = SER_HEADER_BYTES + (version == SER_VERSION_PRIO ? 8 : 0);
    if (size > (SIZE_MAX - extra) / per_row || extra + size * per_row != bytes)
        return errf(err, "replay data is %zu bytes, but its version-%u header says %" PRIu64 " transitions of %zu bytes (+%zu)",
                    bytes, version, size, per_row, extra);
    if (total < size)
        return errf(err, "replay data holds %" PRIu64 " transitions but counts only %" PRIu64 " inserted",
                    size, total);
    *info = (ReplaySerInfo){.version = version, .size = size, .total = total};
    return 0;
}

/* The five arrays of serialized data of n rows (logical order): where
 * each starts. */
typedef struct {
    const unsigned char *obs, *action, *reward, *next_obs, *discount;
} SerArrays;

static SerArrays ser_arrays(const void *buf, size_t n, size_t O) {
    SerArrays a;
    a.obs = (const unsigned char *)buf + SER_HEADER_BYTES;
    a.action = a.obs + n * O * sizeof(float);
    a.reward = a.action + n * sizeof(int32_t);
    a.next_obs = a.reward + n * sizeof(float);
    a.discount = a.next_obs + n * O * sizeof(float);
    return a;
}

int replaybuf_restore(ReplayBuf *rb, const void *buf, size_t bytes, size_t *dropped, char *err) {
    ReplaySerInfo info;
    if (replaybuf_serial_info(buf, bytes, rb->obs_dim, &info, err) != 0) return -1;
    size_t O = (size_t)rb->obs_dim;
    uint64_t size = info.size, total = info.total;

    /* Keep the newest `keep` of the `size` transitions, compacted into
     * slots 0 .. keep-1 (the invariant of replaybuf.h). */
    size_t n = (size_t)size, keep = n < rb->capacity ? n : rb->capacity, skip = n - keep;
    SerArrays a = ser_arrays(buf, n, O);
    memcpy(rb->obs, a.obs + skip * O * sizeof(float), keep * O * sizeof(float));
    memcpy(rb->action, a.action + skip * sizeof(int32_t), keep * sizeof(int32_t));
    memcpy(rb->reward, a.reward + skip * sizeof(float), keep * sizeof(float));
    memcpy(rb->next_obs, a.next_obs + skip * O * sizeof(float), keep * O * sizeof(float));
    memcpy(rb->discount, a.discount + skip * sizeof(float), keep * sizeof(float));
    rb->size = keep;
    rb->head = keep % rb->capacity;
    rb->total = total;
    if (dropped) *dropped = skip;
    return 0;
}

/* ---- dealing saved shards ------------------------------------------------ */

size_t replaybuf_append_serial(ReplayBuf *rb, const void *buf, size_t bytes, uint64_t first, uint64_t step,
                               uint64_t count, char *err) {
    assert(step >= 1);
    ReplaySerInfo info;
    if (replaybuf_serial_info(buf, bytes, rb->obs_dim, &info, err) != 0) return (size_t)-1;
    if (count > 0 && (first >= info.size || (count - 1) > (info.size - 1 - first) / step)) {
        errf(err, "replay data holds %" PRIu64 " transitions, not rows %" PRIu64 " + %" PRIu64 " x %" PRIu64, info.size,
             first, (count - 1), step);
        return (size_t)-1;
    }
    size_t O = (size_t)rb->obs_dim, head = rb->head;
    SerArrays a = ser_arrays(buf, (size_t)info.size, O);
    for (uint64_t i = 0; i < count; i++) {
        /* replaybuf_add, with the row copied straight from buf (unaligned
         * there, so memcpy only). */
        size_t k = (size_t)(first + i * step), d = rb->head;
        memcpy(rb->obs + d * O, a.obs + k * O * sizeof(float), O * sizeof(float));
        memcpy(rb->next_obs + d * O, a.next_obs + k * O * sizeof(float), O * sizeof(float));
        memcpy(rb->action + d, a.action + k * sizeof(int32_t), sizeof(int32_t));
        memcpy(rb->reward + d, a.reward + k * sizeof(float), sizeof(float));
        memcpy(rb->discount + d, a.discount + k * sizeof(float), sizeof(float));
        rb->head = d + 1 == rb->capacity ? 0 : d + 1;
        if (rb->size < rb->capacity) rb->size++;
        rb->total++;
    }
    return head;
}

uint64_t replaybuf_deal(const uint64_t *sizes, int n_old, int n_new, int s, uint64_t cap, uint64_t *first,
                        uint64_t *count) {
    assert(n_old >= 1 && n_new >= 1 && s >= 0 && s < n_new);
    uint64_t N = (uint64_t)n_new, S = (uint64_t)s, off = 0, dealt = 0;
    /* Old shard j's row i is row off_j + i of the combined order (off_j: the
     * rows of shards 0 .. j-1), so it goes to s when i = s - off_j mod N. */
    for (int j = 0; j < n_old; j++) {
        uint64_t i0 = (S + N - off % N) % N;
        first[j] = i0;
        count[j] = i0 < sizes[j] ? (sizes[j] - 1 - i0) / N + 1 : 0;
        if (count[j] == 0) first[j] = 0;
        dealt += count[j];
        off += sizes[j];
    }
    if (dealt <= cap) return 0;
    /* Keep cap: part j keeps floor(cap C_j / D) - floor(cap C_(j-1) / D),
     * which sums to cap and never exceeds count[j] (cap < D); its oldest
     * rows go. */
    uint64_t before = 0, kept_before = 0;
    for (int j = 0; j < n_old; j++) {
        before += count[j];
        uint64_t kept_upto = (uint64_t)((__uint128_t)cap * before / dealt);
        uint64_t keep = kept_upto - kept_before;
        first[j] += (count[j] - keep) * N;
        count[j] = keep;
        kept_before = kept_upto;
    }
    return dealt - cap;
}
