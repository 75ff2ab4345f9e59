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

/* Serialized header: see docs/CHECKPOINT.md, "Replay section". Versions:
 * 1 float rows, 2 float rows + priorities, 3 packed rows, 4 packed rows +
 * priorities (replaybuf.h). */
static const char SER_MAGIC[8] = {'G', 'R', 'L', 'R', 'E', 'P', 'L', 'Y'};
enum { SER_VERSION_FIRST = 1, SER_VERSION_LAST = 4, SER_HEADER_BYTES = 40 };

void replaybuf_init(ReplayBuf *rb, size_t capacity, int obs_dim) {
    replaybuf_init_rows(rb, capacity, obsrow_make(obs_dim, false));
}

void replaybuf_init_rows(ReplayBuf *rb, size_t capacity, ObsRow row) {
    assert(capacity >= 1 && row.obs_dim >= 1);
    memset(rb, 0, sizeof *rb);
    if (row.bytes > SIZE_MAX / 16 / capacity)
        DIE(NULL, "replay capacity %zu x obs_dim %d overflows the address space", capacity, row.obs_dim);
    /* One block, every view starting on a 64-byte boundary. */
    size_t obs_bytes = round_up(capacity * row.bytes, 64);
    size_t col_bytes = round_up(capacity * sizeof(float), 64);
    char *p = xmalloc_for(2 * obs_bytes + 3 * col_bytes, "replay storage", "replay.capacity");
    rb->block = p;
    rb->obs = (unsigned char *)p;
    p += obs_bytes;
    rb->next_obs = (unsigned char *)p;
    p += obs_bytes;
    rb->action = (int32_t *)p;
    p += col_bytes;
    rb->reward = (float *)p;
    p += col_bytes;
    rb->discount = (float *)p;
    rb->capacity = capacity;
    rb->obs_dim = row.obs_dim;
    rb->row = row;
}

void replaybuf_free(ReplayBuf *rb) {
    free(rb->block);
    memset(rb, 0, sizeof *rb);
}

/* Where the rows of an insert come from: floats (a Batch: encoded on the
 * way in) or rows already in the stored form (ReplayRows: copied). */
typedef struct {
    const float *obs_f, *next_obs_f;
    const unsigned char *obs_s, *next_obs_s;
    const int32_t *action;
    const float *reward, *discount;
} RowSrc;

/* Encode n float rows into ring rows; a packed ring refuses a cell that is
 * not 0 or 1 (the environment's bug: nothing sensible can be stored). */
static void encode_rows(const ReplayBuf *rb, unsigned char *dst, const float *src, size_t n, const char *what) {
    size_t bad = obsrow_encode(&rb->row, src, n, dst);
    if (bad != OBSROW_OK)
        DIE(NULL, "replay: %s cell %zu of an inserted transition is %g, not 0 or 1: rows of a planes environment "
            "(ENV_OBS_PLANES) are stored as bits, so every cell must be exactly 0.0f or 1.0f",
            what, bad % (size_t)rb->obs_dim, (double)src[bad]);
}

/* Copy n rows of every array from src rows [from, from + n) into slots
 * [dst, dst + n) of the ring; the caller guarantees dst + n <= capacity. */
static void put_rows(ReplayBuf *rb, size_t dst, const RowSrc *src, size_t from, size_t n) {
    size_t O = (size_t)rb->obs_dim, R = rb->row.bytes;
    if (src->obs_s) {
        memcpy(rb->obs + dst * R, src->obs_s + from * R, n * R);
        memcpy(rb->next_obs + dst * R, src->next_obs_s + from * R, n * R);
    } else if (!rb->row.packed) {
        memcpy(rb->obs + dst * R, src->obs_f + from * O, n * R);
        memcpy(rb->next_obs + dst * R, src->next_obs_f + from * O, n * R);
    } else {
        encode_rows(rb, rb->obs + dst * R, src->obs_f + from * O, n, "obs");
        encode_rows(rb, rb->next_obs + dst * R, src->next_obs_f + from * O, n, "next_obs");
    }
    memcpy(rb->action + dst, src->action + from, n * sizeof(int32_t));
    memcpy(rb->reward + dst, src->reward + from, n * sizeof(float));
    memcpy(rb->discount + dst, src->discount + from, n * sizeof(float));
}

/* Insert n rows of src at the head (replaybuf_add_batch's contract). */
static size_t insert(ReplayBuf *rb, const RowSrc *src, size_t n) {
    size_t cap = rb->capacity, first = rb->head;
    if (n == 0) return first;
    /* Rows that a later row of the same chunk would overwrite are skipped. */
    size_t skip = n > cap ? n - cap : 0, keep = n - skip;
    size_t dst = (first + skip) % cap;
    size_t run = keep < cap - dst ? keep : cap - dst;
    put_rows(rb, dst, src, skip, run);
    if (keep > run) put_rows(rb, 0, src, skip + run, keep - run);
    rb->head = (first + n) % cap;
    rb->size = rb->size + keep < cap ? rb->size + keep : cap;
    rb->total += n;
    return first;
}

size_t replaybuf_add(ReplayBuf *rb, const float *obs, int32_t action, float reward, const float *next_obs,
                     float discount) {
    RowSrc src = {.obs_f = obs, .next_obs_f = next_obs, .action = &action, .reward = &reward, .discount = &discount};
    return insert(rb, &src, 1);
}

size_t replaybuf_add_batch(ReplayBuf *rb, const Batch *chunk) {
    assert(chunk->n >= 0 && chunk->obs_dim == rb->obs_dim);
    RowSrc src = {.obs_f = chunk->obs, .next_obs_f = chunk->next_obs, .action = chunk->action,
                  .reward = chunk->reward, .discount = chunk->discount};
    return insert(rb, &src, (size_t)chunk->n);
}

size_t replaybuf_add_rows(ReplayBuf *rb, const ReplayRows *rows) {
    assert(rows->n >= 0);
    RowSrc src = {.obs_s = rows->obs, .next_obs_s = rows->next_obs, .action = rows->action,
                  .reward = rows->reward, .discount = rows->discount};
    return insert(rb, &src, (size_t)rows->n);
}

/* One row of O floats. A memcpy of a run-time length is a library call,
 * which for CartPole's 16 bytes costs more than the copy; fixed 16-byte
 * pieces compile to plain moves. */
static inline void copy_row(float *dst, const unsigned char *src, size_t O) {
    size_t j = 0;
    for (; j + 4 <= O; j += 4) memcpy(dst + j, src + j * sizeof(float), 4 * sizeof(float));
    for (; j < O; j++) memcpy(dst + j, src + j * sizeof(float), sizeof(float));
}

/* What a sampler reads of the ring, in locals: the copies below store
 * through char (memcpy), which may alias anything, so fields read through
 * rb would be reloaded after every row. */
typedef struct {
    const unsigned char *obs, *next_obs;
    const int32_t *action;
    const float *reward, *discount;
    ObsRow row;
} Ring;

static inline Ring ring_of(const ReplayBuf *rb) {
    return (Ring){rb->obs, rb->next_obs, rb->action, rb->reward, rb->discount, rb->row};
}

/* Request the cache lines of slot s (a packed row of 125 bytes spans up to
 * three lines: its first and last are asked for). `packed` is a constant at
 * each call (see get_row). */
static inline __attribute__((always_inline)) void prefetch_slot(const Ring *g, size_t s, bool packed) {
    size_t R = g->row.bytes;
    __builtin_prefetch(g->obs + s * R);
    __builtin_prefetch(g->next_obs + s * R);
    if (packed) {
        __builtin_prefetch(g->obs + s * R + R - 1);
        __builtin_prefetch(g->next_obs + s * R + R - 1);
    }
    __builtin_prefetch(g->action + s);
    __builtin_prefetch(g->reward + s);
    __builtin_prefetch(g->discount + s);
}

/* Slot s into out row r: floats copied, packed rows unpacked. `packed` is
 * a constant at each call, so every sampler compiles to one loop per row
 * form and the float path is the plain copy it was before packing. */
static inline __attribute__((always_inline)) void get_row(const Ring *g, size_t s, Batch *out, size_t r,
                                                          bool packed) {
    size_t O = (size_t)g->row.obs_dim, R = g->row.bytes;
    if (packed) {
        obsrow_decode(&g->row, g->obs + s * R, 1, out->obs + r * O);
        obsrow_decode(&g->row, g->next_obs + s * R, 1, out->next_obs + r * O);
    } else {
        copy_row(out->obs + r * O, g->obs + s * R, O);
        copy_row(out->next_obs + r * O, g->next_obs + s * R, O);
    }
    out->action[r] = g->action[s];
    out->reward[r] = g->reward[s];
    out->discount[r] = g->discount[s];
}

static inline __attribute__((always_inline)) void gather(const ReplayBuf *rb, const size_t *slots, int B,
                                                         Batch *out, bool packed) {
    /* Prefetch a group's rows before copying them (see replaybuf_sample). */
    enum { GROUP = 16 };
    const Ring ring = ring_of(rb);
    for (int g = 0; g < B; g += GROUP) {
        int m = B - g < GROUP ? B - g : GROUP;
        for (int j = 0; j < m; j++) {
            assert(slots[g + j] < rb->size);
            prefetch_slot(&ring, slots[g + j], packed);
        }
        for (int j = 0; j < m; j++) get_row(&ring, slots[g + j], out, (size_t)(g + j), packed);
    }
    out->n = B;
}

void replaybuf_gather(const ReplayBuf *rb, const size_t *slots, int B, Batch *out) {
    assert(B >= 0 && out->obs_dim == rb->obs_dim);
    if (rb->row.packed) gather(rb, slots, B, out, true);
    else gather(rb, slots, B, out, false);
}

/* A large buffer does not fit in cache, so each row costs several cache
 * misses. Draw a group of slots first and prefetch all their lines, then
 * copy: the misses of a group overlap instead of queueing. */
static inline __attribute__((always_inline)) void sample(const ReplayBuf *rb, Rng *rng, int B, Batch *out,
                                                         size_t *slots, uint64_t *ids, bool packed) {
    enum { GROUP = 16 };
    size_t s[GROUP];
    const Ring ring = ring_of(rb);
    for (int g = 0; g < B; g += GROUP) {
        int m = B - g < GROUP ? B - g : GROUP;
        for (int j = 0; j < m; j++) {
            s[j] = (size_t)rng_below(rng, rb->size);
            prefetch_slot(&ring, s[j], packed);
        }
        for (int j = 0; j < m; j++) {
            size_t r = (size_t)(g + j), k = s[j];
            get_row(&ring, k, out, r, packed);
            if (out->weight) out->weight[r] = 1.0f;
            if (slots) slots[r] = k;
            if (ids) ids[r] = replaybuf_slot_id(rb, k);
        }
    }
    out->n = B;
}

void replaybuf_sample(const ReplayBuf *rb, Rng *rng, int B, Batch *out, size_t *slots, uint64_t *ids) {
    assert(rb->size > 0 && "sampling from an empty replay buffer");
    assert(B > 0 && "sampling a batch of no rows");
    assert(out->obs_dim == rb->obs_dim);
    if (rb->row.packed) sample(rb, rng, B, out, slots, ids, true);
    else sample(rb, rng, B, out, slots, ids, false);
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

/* Bytes of one serialized transition with observation rows of R bytes:
 * obs and next_obs, then the three scalars. */
static size_t ser_row_bytes(size_t R) { return 2 * R + sizeof(int32_t) + 2 * sizeof(float); }

size_t replaybuf_serial_bytes(const ReplayBuf *rb) {
    return SER_HEADER_BYTES + rb->size * ser_row_bytes(rb->row.bytes);
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

static void serialize(const ReplayBuf *rb, void *buf, bool priorities) {
    unsigned char *p = buf;
    uint32_t version = (rb->row.packed ? 3 : 1) + (priorities ? 1 : 0);
    memcpy(p, SER_MAGIC, 8);
    store_u32(p + 8, version);
    store_u32(p + 12, (uint32_t)rb->obs_dim);
    store_u64(p + 16, rb->capacity);
    store_u64(p + 24, rb->size);
    store_u64(p + 32, rb->total);
    p += SER_HEADER_BYTES;
    put_logical(rb, &p, rb->obs, rb->row.bytes);
    put_logical(rb, &p, rb->action, sizeof(int32_t));
    put_logical(rb, &p, rb->reward, sizeof(float));
    put_logical(rb, &p, rb->next_obs, rb->row.bytes);
    put_logical(rb, &p, rb->discount, sizeof(float));
}

void replaybuf_serialize(const ReplayBuf *rb, void *buf) { serialize(rb, buf, false); }

void replaybuf_serialize_prioritized(const ReplayBuf *rb, void *buf) { serialize(rb, buf, true); }

int replaybuf_serial_info(const void *buf, size_t bytes, int obs_dim, ReplaySerInfo *info, char *err) {
    const unsigned char *p = buf;
    if (bytes < SER_HEADER_BYTES)
        return errf(err, "replay data is %zu bytes, shorter than its %d-byte header", bytes, SER_HEADER_BYTES);
    if (memcmp(p, SER_MAGIC, 8) != 0) return errf(err, "not replay buffer data (bad magic)");
    uint32_t version = load_u32(p + 8), od = load_u32(p + 12);
    uint64_t size = load_u64(p + 24), total = load_u64(p + 32);
    if (version < SER_VERSION_FIRST || version > SER_VERSION_LAST)
        return errf(err, "replay data has format version %u, this build reads versions %d to %d", version,
                    SER_VERSION_FIRST, SER_VERSION_LAST);
    if (od != (uint32_t)obs_dim)
        return errf(err, "replay data holds observations of %u floats, the buffer expects %d", od, obs_dim);
    bool packed = version >= 3, prio = version % 2 == 0;
    ObsRow row = obsrow_make(obs_dim, packed);
    /* With priorities: 8 bytes of max_priority and 8 per row
     * (replaystore.h). */
    size_t per_row = ser_row_bytes(row.bytes) + (prio ? 8 : 0);
    size_t extra = SER_HEADER_BYTES + (prio ? 8 : 0);
    if (size > (SIZE_MAX - extra) / per_row || extra + size * per_row != bytes)
        return errf(err, "replay data is %zu bytes, but its version-%u header says %" PRIu64 " transitions of %zu bytes (+%zu)",
                    bytes, version, size, per_row, extra);
    if (total < size)
        return errf(err, "replay data holds %" PRIu64 " transitions but counts only %" PRIu64 " inserted",
                    size, total);
    size_t n = (size_t)size;
    *info = (ReplaySerInfo){.version = version, .packed = packed, .priorities = prio, .size = size, .total = total,
                            .row = row};
    info->obs = SER_HEADER_BYTES;
    info->action = info->obs + n * row.bytes;
    info->reward = info->action + n * sizeof(int32_t);
    info->next_obs = info->reward + n * sizeof(float);
    info->discount = info->next_obs + n * row.bytes;
    info->prio = info->discount + n * sizeof(float);
    return 0;
}

/* Data rows first, first + step, ..., count of them, as floats a packed rb
 * could not hold: -1 with err naming the first bad cell (checked before
 * anything changes), else 0. Packed data and float buffers always fit. */
static int check_fits(const ReplayBuf *rb, const ReplaySerInfo *info, const unsigned char *buf, uint64_t first,
                      uint64_t step, uint64_t count, char *err) {
    if (!rb->row.packed || info->packed) return 0;
    size_t O = (size_t)rb->obs_dim;
    const char *name[2] = {"obs", "next_obs"};
    size_t off[2] = {info->obs, info->next_obs};
    for (uint64_t i = 0; i < count; i++) {
        size_t k = (size_t)(first + i * step);
        for (int a = 0; a < 2; a++) {
            const unsigned char *r = buf + off[a] + k * info->row.bytes;
            size_t bad = obsrow_find_nonbinary(r, O);
            if (bad != OBSROW_OK)
                return errf(err, "replay row %zu of %" PRIu64 " (0 = oldest): %s[%zu] is %g, but this environment's "
                            "observations are binary planes, stored as bits (0 or 1 only)",
                            k, info->size, name[a], bad, (double)obsrow_float_at(r, bad));
        }
    }
    return 0;
}

/* n observation rows of data in form `from` into ring rows at dst, in rb's
 * form (check_fits has vouched for float data going into bits). */
static void convert_obs(const ReplayBuf *rb, unsigned char *dst, const unsigned char *src, const ObsRow *from,
                        size_t n) {
    if (from->packed == rb->row.packed) {
        memcpy(dst, src, n * rb->row.bytes);
    } else if (from->packed) {
        obsrow_decode(from, src, n, dst);
    } else {
        size_t bad = obsrow_encode(&rb->row, src, n, dst);
        assert(bad == OBSROW_OK);
        (void)bad;
    }
}

int replaybuf_restore(ReplayBuf *rb, const void *buf, size_t bytes, size_t *dropped, char *err) {
    ReplaySerInfo info;
    if (replaybuf_serial_info(buf, bytes, rb->obs_dim, &info, err) != 0) return -1;
    /* Keep the newest `keep` of the `size` transitions, compacted into
     * slots 0 .. keep-1 (the invariant of replaybuf.h). */
    size_t n = (size_t)info.size, keep = n < rb->capacity ? n : rb->capacity, skip = n - keep;
    const unsigned char *a = buf;
    if (check_fits(rb, &info, a, skip, 1, keep, err) != 0) return -1;
    size_t R = info.row.bytes;
    convert_obs(rb, rb->obs, a + info.obs + skip * R, &info.row, keep);
    memcpy(rb->action, a + info.action + skip * sizeof(int32_t), keep * sizeof(int32_t));
    memcpy(rb->reward, a + info.reward + skip * sizeof(float), keep * sizeof(float));
    convert_obs(rb, rb->next_obs, a + info.next_obs + skip * R, &info.row, keep);
    memcpy(rb->discount, a + info.discount + skip * sizeof(float), keep * sizeof(float));
    rb->size = keep;
    rb->head = keep % rb->capacity;
    rb->total = info.total;
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
    const unsigned char *a = buf;
    if (check_fits(rb, &info, a, first, step, count, err) != 0) return (size_t)-1;
    size_t head = rb->head, R = info.row.bytes, RR = rb->row.bytes;
    for (uint64_t i = 0; i < count; i++) {
        /* replaybuf_add, with the row copied straight from buf (unaligned
         * there, so memcpy only). */
        size_t k = (size_t)(first + i * step), d = rb->head;
        convert_obs(rb, rb->obs + d * RR, a + info.obs + k * R, &info.row, 1);
        convert_obs(rb, rb->next_obs + d * RR, a + info.next_obs + k * R, &info.row, 1);
        memcpy(rb->action + d, a + info.action + k * sizeof(int32_t), sizeof(int32_t));
        memcpy(rb->reward + d, a + info.reward + k * sizeof(float), sizeof(float));
        memcpy(rb->discount + d, a + info.discount + k * sizeof(float), sizeof(float));
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
