/* SPDX-License-Identifier: MIT */
/* test_replaybuf.c: FIFO ring storage, chunk inserts, uniform sampling,
 * slot ids for stale priority updates, serialization.
 *
 * Transition number k (its id, when inserted in order into a fresh buffer)
 * is made recognisable in every field: obs[j] = 10k + j,
 * next_obs[j] = -(10k + j), action = k, reward = k + 0.25,
 * discount = 1 / (k + 2); so any row can be traced back to its id.
 * Also the deal of saved shards to another shard count (replaybuf_deal,
 * replaybuf_append_serial).
 */
#include <criterion/criterion.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "replaybuf.h"
#include "util.h"

enum { O = 3, MAXB = 256 };

static void make(uint64_t k, float *obs, float *next_obs) {
    for (int j = 0; j < O; j++) {
        obs[j] = (float)(10 * k + (uint64_t)j);
        next_obs[j] = -obs[j];
    }
}

static void add_k(ReplayBuf *rb, uint64_t k) {
    float o[O], no[O];
    make(k, o, no);
    replaybuf_add(rb, o, (int32_t)k, (float)k + 0.25f, no, 1.0f / (float)(k + 2));
}

#include "rows.h"

/* Fill rows with transitions k0, k0+1, ... (a chunk an actor would send). */
static void rows_fill(Rows *r, int n, uint64_t k0) {
    rows_init(r, n);
    for (int i = 0; i < n; i++) {
        uint64_t k = k0 + (uint64_t)i;
        make(k, &r->obs[i * O], &r->next_obs[i * O]);
        r->action[i] = (int32_t)k;
        r->reward[i] = (float)k + 0.25f;
        r->discount[i] = 1.0f / (float)(k + 2);
        r->weight[i] = 123.0f; /* ignored on insert */
    }
}

/* Row i of b is transition k, field by field. */
static void check_row(const Batch *b, int i, uint64_t k) {
    float o[O], no[O];
    make(k, o, no);
    cr_assert(memcmp(&b->obs[i * O], o, sizeof o) == 0, "row %d: obs is not transition %llu's", i,
              (unsigned long long)k);
    cr_assert(memcmp(&b->next_obs[i * O], no, sizeof no) == 0, "row %d: next_obs", i);
    cr_assert_eq(b->action[i], (int32_t)k, "row %d: action %d, expected %llu", i, b->action[i],
                 (unsigned long long)k);
    cr_assert_eq(b->reward[i], (float)k + 0.25f, "row %d: reward", i);
    cr_assert_eq(b->discount[i], 1.0f / (float)(k + 2), "row %d: discount", i);
}

/* The transition in `slot` is transition k. */
static void check_slot(const ReplayBuf *rb, size_t slot, uint64_t k) {
    Rows r;
    rows_init(&r, 1);
    replaybuf_gather(rb, &slot, 1, &r.b);
    check_row(&r.b, 0, k);
}

Test(replaybuf, free_is_safe_on_zeroed_struct_and_twice) {
    ReplayBuf rb;
    memset(&rb, 0, sizeof rb);
    replaybuf_free(&rb);
    replaybuf_init(&rb, 10, O);
    replaybuf_free(&rb);
    replaybuf_free(&rb);
}

Test(replaybuf, fifo_eviction_and_counters) {
    ReplayBuf rb;
    replaybuf_init(&rb, 4, O);
    cr_assert_eq(replaybuf_size(&rb), 0);
    cr_assert_eq(replaybuf_capacity(&rb), 4);
    for (uint64_t k = 0; k < 3; k++) add_k(&rb, k);
    cr_assert_eq(replaybuf_size(&rb), 3);
    cr_assert_eq(replaybuf_total(&rb), 3);
    for (uint64_t k = 3; k < 6; k++) add_k(&rb, k);
    /* Slots 0 and 1 were overwritten by 4 and 5; 2 and 3 keep 2 and 3. */
    cr_assert_eq(replaybuf_size(&rb), 4);
    cr_assert_eq(replaybuf_total(&rb), 6);
    const uint64_t want[4] = {4, 5, 2, 3};
    for (size_t s = 0; s < 4; s++) {
        cr_assert_eq(replaybuf_slot_id(&rb, s), want[s], "slot %zu", s);
        check_slot(&rb, s, want[s]);
    }
    replaybuf_free(&rb);
}

Test(replaybuf, add_returns_the_slot) {
    ReplayBuf rb;
    replaybuf_init(&rb, 3, O);
    float o[O] = {0}, no[O] = {0};
    for (size_t i = 0; i < 7; i++) cr_assert_eq(replaybuf_add(&rb, o, 0, 0, no, 0), i % 3);
    replaybuf_free(&rb);
}

/* A chunk insert leaves exactly the state of inserting its rows one by
 * one, from every head position, for chunk sizes around the capacity. */
Test(replaybuf, chunk_insert_equals_one_by_one) {
    const size_t cap = 7;
    const int sizes[] = {0, 1, 2, 6, 7, 8, 13, 14, 17};
    for (size_t pre = 0; pre < 2 * cap; pre++) {
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
            int n = sizes[si];
            ReplayBuf a, b;
            replaybuf_init(&a, cap, O);
            replaybuf_init(&b, cap, O);
            for (uint64_t k = 0; k < pre; k++) {
                add_k(&a, k);
                add_k(&b, k);
            }
            Rows chunk;
            rows_fill(&chunk, n, pre);
            size_t first = replaybuf_add_batch(&a, &chunk.b);
            cr_assert_eq(first, pre % cap, "pre %zu n %d: first slot %zu", pre, n, first);
            for (int i = 0; i < n; i++) add_k(&b, pre + (uint64_t)i);
            cr_assert_eq(a.size, b.size);
            cr_assert_eq(a.head, b.head);
            cr_assert_eq(a.total, b.total);
            for (size_t s = 0; s < a.size; s++) {
                cr_assert_eq(replaybuf_slot_id(&a, s), replaybuf_slot_id(&b, s));
                check_slot(&a, s, replaybuf_slot_id(&b, s));
            }
            replaybuf_free(&a);
            replaybuf_free(&b);
        }
    }
}

Test(replaybuf, sample_rows_match_slots_and_ids) {
    ReplayBuf rb;
    replaybuf_init(&rb, 50, O);
    for (uint64_t k = 0; k < 73; k++) add_k(&rb, k); /* wrapped */
    Rng rng;
    rng_seed(&rng, 1, RNG_STREAM_REPLAY);
    Rows r;
    rows_init(&r, 0);
    size_t slots[MAXB];
    uint64_t ids[MAXB];
    replaybuf_sample(&rb, &rng, MAXB, &r.b, slots, ids);
    cr_assert_eq(r.b.n, MAXB);
    for (int i = 0; i < MAXB; i++) {
        cr_assert(slots[i] < 50);
        cr_assert_eq(ids[i], replaybuf_slot_id(&rb, slots[i]));
        cr_assert(ids[i] >= 23 && ids[i] < 73, "id %llu is not among the newest 50", (unsigned long long)ids[i]);
        check_row(&r.b, i, ids[i]);
        cr_assert_eq(r.weight[i], 1.0f);
        cr_assert(replaybuf_holds(&rb, slots[i], ids[i]));
    }
    replaybuf_free(&rb);
}

Test(replaybuf, sample_is_reproducible_and_optional_outputs_may_be_null) {
    ReplayBuf rb;
    replaybuf_init(&rb, 20, O);
    for (uint64_t k = 0; k < 20; k++) add_k(&rb, k);
    Rng r1, r2;
    rng_seed(&r1, 9, RNG_STREAM_REPLAY);
    rng_seed(&r2, 9, RNG_STREAM_REPLAY);
    Rows a, b;
    rows_init(&a, 0);
    rows_init(&b, 0);
    size_t slots[32];
    replaybuf_sample(&rb, &r1, 32, &a.b, slots, NULL);
    b.b.weight = NULL;
    replaybuf_sample(&rb, &r2, 32, &b.b, NULL, NULL);
    cr_assert(memcmp(a.obs, b.obs, sizeof a.obs) == 0);
    cr_assert(memcmp(a.action, b.action, sizeof a.action) == 0);
    for (int i = 0; i < 32; i++) cr_assert_eq((size_t)a.action[i], slots[i]);
    replaybuf_free(&rb);
}

/* Only occupied slots are drawn, each about equally often: 60000 draws
 * over 6 slots of a half-full buffer, each count within 5% of 10000
 * (about 5 standard deviations). */
Test(replaybuf, sample_is_uniform_over_occupied_slots) {
    ReplayBuf rb;
    replaybuf_init(&rb, 12, O);
    for (uint64_t k = 0; k < 6; k++) add_k(&rb, k);
    Rng rng;
    rng_seed(&rng, 3, RNG_STREAM_REPLAY);
    Rows r;
    rows_init(&r, 0);
    size_t slots[MAXB];
    int count[12] = {0};
    for (int it = 0; it < 60000 / 200; it++) {
        replaybuf_sample(&rb, &rng, 200, &r.b, slots, NULL);
        for (int i = 0; i < 200; i++) count[slots[i]]++;
    }
    for (int s = 0; s < 6; s++) cr_assert(count[s] > 9500 && count[s] < 10500, "slot %d drawn %d times", s, count[s]);
    for (int s = 6; s < 12; s++) cr_assert_eq(count[s], 0, "empty slot %d drawn", s);
    replaybuf_free(&rb);
}

/* A priority update for a sampled slot must be recognisable as stale once
 * the slot has been overwritten, even by a chunk. */
Test(replaybuf, holds_detects_overwritten_slots) {
    ReplayBuf rb;
    replaybuf_init(&rb, 5, O);
    for (uint64_t k = 0; k < 5; k++) add_k(&rb, k);
    uint64_t id2 = replaybuf_slot_id(&rb, 2);
    cr_assert_eq(id2, 2);
    cr_assert(replaybuf_holds(&rb, 2, 2));
    cr_assert_not(replaybuf_holds(&rb, 2, 7), "an id not yet inserted");
    add_k(&rb, 5);
    add_k(&rb, 6);
    cr_assert(replaybuf_holds(&rb, 2, 2), "slot 2 not yet reached");
    Rows chunk;
    rows_fill(&chunk, 1, 7);
    replaybuf_add_batch(&rb, &chunk.b);
    cr_assert_not(replaybuf_holds(&rb, 2, 2), "slot 2 now holds transition 7");
    cr_assert(replaybuf_holds(&rb, 2, 7));
    /* Ids keep growing past the capacity many times over. */
    for (uint64_t k = 8; k < 1000; k++) add_k(&rb, k);
    cr_assert(replaybuf_holds(&rb, 999 % 5, 999));
    cr_assert_not(replaybuf_holds(&rb, 999 % 5, 994));
    replaybuf_free(&rb);
}

Test(replaybuf, holds_is_false_for_empty_slots) {
    ReplayBuf rb;
    replaybuf_init(&rb, 5, O);
    add_k(&rb, 0);
    cr_assert(replaybuf_holds(&rb, 0, 0));
    cr_assert_not(replaybuf_holds(&rb, 1, 1));
    cr_assert_not(replaybuf_holds(&rb, 7, 0));
    replaybuf_free(&rb);
}

Test(replaybuf, sampling_an_empty_buffer_is_a_bug, .signal = SIGABRT) {
    ReplayBuf rb;
    replaybuf_init(&rb, 5, O);
    Rng rng;
    rng_seed(&rng, 1, 1);
    Rows r;
    rows_init(&r, 0);
    replaybuf_sample(&rb, &rng, 1, &r.b, NULL, NULL);
}

Test(replaybuf, sampling_no_rows_is_a_bug, .signal = SIGABRT) {
    ReplayBuf rb;
    replaybuf_init(&rb, 5, O);
    add_k(&rb, 0);
    Rng rng;
    rng_seed(&rng, 1, 1);
    Rows r;
    rows_init(&r, 0);
    replaybuf_sample(&rb, &rng, 0, &r.b, NULL, NULL);
}

/* ---- serialization ----------------------------------------------------- */

static void *serialize(const ReplayBuf *rb, size_t *bytes) {
    *bytes = replaybuf_serial_bytes(rb);
    void *buf = xmalloc(*bytes);
    replaybuf_serialize(rb, buf);
    return buf;
}

/* rb holds exactly transitions first .. total-1, ids matching. */
static void check_holds_range(const ReplayBuf *rb, uint64_t first) {
    cr_assert_eq(replaybuf_size(rb), replaybuf_total(rb) - first);
    for (size_t s = 0; s < rb->size; s++) {
        uint64_t id = replaybuf_slot_id(rb, s);
        cr_assert(id >= first && id < rb->total, "slot %zu: id %llu", s, (unsigned long long)id);
        check_slot(rb, s, id);
    }
}

Test(replaybuf, serialize_round_trip_is_exact) {
    const size_t fills[] = {0, 1, 9, 10, 23};
    for (size_t f = 0; f < sizeof fills / sizeof fills[0]; f++) {
        ReplayBuf a, b;
        replaybuf_init(&a, 10, O);
        replaybuf_init(&b, 10, O);
        for (uint64_t k = 0; k < fills[f]; k++) add_k(&a, k);
        size_t bytes;
        void *buf = serialize(&a, &bytes);
        cr_assert_eq(bytes, 40 + a.size * (2 * O * 4 + 12));
        char err[ERR_LEN] = "";
        size_t dropped = 99;
        cr_assert_eq(replaybuf_restore(&b, buf, bytes, &dropped, err), 0, "%s", err);
        cr_assert_eq(dropped, 0);
        cr_assert_eq(b.size, a.size);
        cr_assert_eq(b.total, a.total);
        check_holds_range(&b, a.total - a.size);
        /* The restored state serializes to the same bytes. */
        size_t bytes2;
        void *buf2 = serialize(&b, &bytes2);
        cr_assert_eq(bytes2, bytes);
        cr_assert(memcmp(buf, buf2, bytes) == 0, "fill %zu: re-serialized bytes differ", fills[f]);
        /* And it goes on like the original: same next slot ids. */
        add_k(&a, 1000);
        add_k(&b, 1000);
        cr_assert_eq(a.total, b.total);
        free(buf);
        free(buf2);
        replaybuf_free(&a);
        replaybuf_free(&b);
    }
}

Test(replaybuf, restore_into_smaller_keeps_newest) {
    ReplayBuf a, b;
    replaybuf_init(&a, 10, O);
    replaybuf_init(&b, 4, O);
    for (uint64_t k = 0; k < 17; k++) add_k(&a, k); /* holds 7 .. 16 */
    size_t bytes;
    void *buf = serialize(&a, &bytes);
    char err[ERR_LEN] = "";
    size_t dropped = 0;
    cr_assert_eq(replaybuf_restore(&b, buf, bytes, &dropped, err), 0, "%s", err);
    cr_assert_eq(dropped, 6);
    cr_assert_eq(b.size, 4);
    cr_assert_eq(b.total, 17);
    check_holds_range(&b, 13);
    add_k(&b, 17); /* evicts 13, the oldest */
    check_holds_range(&b, 14);
    free(buf);
    replaybuf_free(&a);
    replaybuf_free(&b);
}

Test(replaybuf, restore_into_larger_keeps_all_and_grows) {
    ReplayBuf a, b;
    replaybuf_init(&a, 4, O);
    replaybuf_init(&b, 10, O);
    for (uint64_t k = 0; k < 6; k++) add_k(&a, k); /* holds 2 .. 5 */
    size_t bytes;
    void *buf = serialize(&a, &bytes);
    char err[ERR_LEN] = "";
    cr_assert_eq(replaybuf_restore(&b, buf, bytes, NULL, err), 0, "%s", err);
    check_holds_range(&b, 2);
    for (uint64_t k = 6; k < 12; k++) add_k(&b, k);
    check_holds_range(&b, 2); /* 2 .. 11: exactly full, nothing evicted */
    cr_assert_eq(b.size, 10);
    add_k(&b, 12);
    check_holds_range(&b, 3);
    free(buf);
    replaybuf_free(&a);
    replaybuf_free(&b);
}

Test(replaybuf, restore_rejects_bad_data_and_leaves_buffer_alone) {
    ReplayBuf a, b;
    replaybuf_init(&a, 8, O);
    replaybuf_init(&b, 8, O);
    for (uint64_t k = 0; k < 5; k++) add_k(&a, k);
    for (uint64_t k = 100; k < 103; k++) add_k(&b, k);
    size_t bytes;
    unsigned char *buf = serialize(&a, &bytes);
    char err[ERR_LEN];

    cr_assert_eq(replaybuf_restore(&b, buf, 20, NULL, err), -1);
    cr_assert_str_eq(err, "replay data is 20 bytes, shorter than its 40-byte header");
    cr_assert_eq(replaybuf_restore(&b, buf, bytes - 1, NULL, err), -1);
    cr_assert_str_eq(err, "replay data is 219 bytes, but its version-1 header says 5 transitions of 36 bytes (+40)");

    buf[0] ^= 1;
    cr_assert_eq(replaybuf_restore(&b, buf, bytes, NULL, err), -1);
    cr_assert_str_eq(err, "not replay buffer data (bad magic)");
    buf[0] ^= 1;

    uint32_t v = 5;
    memcpy(buf + 8, &v, 4);
    cr_assert_eq(replaybuf_restore(&b, buf, bytes, NULL, err), -1);
    cr_assert_str_eq(err, "replay data has format version 5, this build reads versions 1 to 4");
    /* Version 3 (packed rows) is 1 byte a row of 3 cells, not 12. */
    v = 3;
    memcpy(buf + 8, &v, 4);
    cr_assert_eq(replaybuf_restore(&b, buf, bytes, NULL, err), -1);
    cr_assert_str_eq(err, "replay data is 220 bytes, but its version-3 header says 5 transitions of 14 bytes (+40)");
    /* Version 2 (prioritized) needs its priority block: 8 + 8 per row more. */
    v = 2;
    memcpy(buf + 8, &v, 4);
    cr_assert_eq(replaybuf_restore(&b, buf, bytes, NULL, err), -1);
    cr_assert_str_eq(err, "replay data is 220 bytes, but its version-2 header says 5 transitions of 44 bytes (+48)");
    v = 1;
    memcpy(buf + 8, &v, 4);

    ReplayBuf c;
    replaybuf_init(&c, 8, O + 1);
    cr_assert_eq(replaybuf_restore(&c, buf, bytes, NULL, err), -1);
    cr_assert_str_eq(err, "replay data holds observations of 3 floats, the buffer expects 4");
    replaybuf_free(&c);

    uint64_t total = 4;
    memcpy(buf + 32, &total, 8);
    cr_assert_eq(replaybuf_restore(&b, buf, bytes, NULL, err), -1);
    cr_assert_str_eq(err, "replay data holds 5 transitions but counts only 4 inserted");

    /* b still holds its own 100 .. 102. */
    cr_assert_eq(b.size, 3);
    cr_assert_eq(b.total, 3);
    check_slot(&b, 0, 100);
    check_slot(&b, 2, 102);
    free(buf);
    replaybuf_free(&a);
    replaybuf_free(&b);
}

/* ---- dealing saved shards to another shard count ------------------------ */

/* Every row of every old shard goes to exactly one new shard, the one its
 * place k in the combined order (old shards end to end) names, k mod
 * n_new; each new shard's rows of one old shard are first, first + n_new,
 * ...; the new shards' totals differ by at most one. */
Test(replaybuf, deal_gives_every_row_to_exactly_one_shard_evenly) {
    Rng r;
    rng_seed(&r, 11, 0);
    for (int trial = 0; trial < 200; trial++) {
        int n_old = 1 + (int)rng_below(&r, 5), n_new = 1 + (int)rng_below(&r, 6);
        uint64_t sizes[5], first[5], count[5], total = 0;
        for (int j = 0; j < n_old; j++) total += sizes[j] = rng_below(&r, 23);
        int *owner = malloc((total ? total : 1) * sizeof(int));
        for (uint64_t k = 0; k < total; k++) owner[k] = -1;
        uint64_t lo = UINT64_MAX, hi = 0;
        for (int s = 0; s < n_new; s++) {
            cr_assert_eq(replaybuf_deal(sizes, n_old, n_new, s, UINT64_MAX, first, count), 0);
            uint64_t got = 0, off = 0;
            for (int j = 0; j < n_old; j++) {
                for (uint64_t i = 0; i < count[j]; i++) {
                    uint64_t row = first[j] + i * (uint64_t)n_new;
                    cr_assert_lt(row, sizes[j], "trial %d: shard %d takes row %llu of old shard %d of %llu", trial,
                                 s, (unsigned long long)row, j, (unsigned long long)sizes[j]);
                    uint64_t k = off + row;
                    cr_assert_eq(owner[k], -1, "trial %d: combined row %llu dealt twice", trial, (unsigned long long)k);
                    cr_assert_eq(k % (uint64_t)n_new, (uint64_t)s);
                    owner[k] = s;
                }
                got += count[j];
                off += sizes[j];
            }
            lo = got < lo ? got : lo;
            hi = got > hi ? got : hi;
        }
        for (uint64_t k = 0; k < total; k++) cr_assert_neq(owner[k], -1, "trial %d: row %llu dealt to nobody", trial,
                                                           (unsigned long long)k);
        cr_assert_leq(hi - lo, 1, "trial %d: shares %llu .. %llu", trial, (unsigned long long)lo,
                      (unsigned long long)hi);
        free(owner);
    }
}

/* Dealt more than its capacity, a new shard keeps exactly `cap` rows: the
 * newest of each old shard's part (its oldest go), the cut shared in
 * proportion to the parts (each keeps floor or ceil of cap x part / dealt). */
Test(replaybuf, deal_over_capacity_keeps_the_newest_of_each_part) {
    Rng r;
    rng_seed(&r, 12, 0);
    for (int trial = 0; trial < 300; trial++) {
        int n_old = 1 + (int)rng_below(&r, 4), n_new = 1 + (int)rng_below(&r, 3);
        uint64_t sizes[4], f0[4], c0[4], first[4], count[4];
        for (int j = 0; j < n_old; j++) sizes[j] = rng_below(&r, 40);
        int s = (int)rng_below(&r, (uint64_t)n_new);
        replaybuf_deal(sizes, n_old, n_new, s, UINT64_MAX, f0, c0);
        uint64_t dealt = 0;
        for (int j = 0; j < n_old; j++) dealt += c0[j];
        uint64_t cap = 1 + rng_below(&r, dealt + 3);
        uint64_t dropped = replaybuf_deal(sizes, n_old, n_new, s, cap, first, count);
        uint64_t kept = 0;
        for (int j = 0; j < n_old; j++) {
            kept += count[j];
            cr_assert_leq(count[j], c0[j]);
            if (count[j] == 0) continue;
            /* the kept rows are the last count[j] of the part */
            cr_assert_eq(first[j], f0[j] + (c0[j] - count[j]) * (uint64_t)n_new, "trial %d part %d", trial, j);
            if (cap < dealt) {
                double share = (double)cap * (double)c0[j] / (double)dealt;
                cr_assert(fabs((double)count[j] - share) < 1.0 + 1e-9, "trial %d part %d keeps %llu, share %g", trial,
                          j, (unsigned long long)count[j], share);
            }
        }
        cr_assert_eq(kept, dealt < cap ? dealt : cap, "trial %d", trial);
        cr_assert_eq(dropped, dealt - kept);
    }
}

/* append_serial inserts the chosen rows, in order, as new inserts (fresh
 * ids), evicting the oldest once full; bad requests change nothing. */
Test(replaybuf, append_serial_inserts_the_chosen_rows_with_new_ids) {
    ReplayBuf a, b;
    replaybuf_init(&a, 10, O);
    for (uint64_t k = 0; k < 13; k++) add_k(&a, k); /* holds 3 .. 12: logical row i is transition 3 + i */
    size_t bytes;
    void *buf = serialize(&a, &bytes);
    char err[ERR_LEN] = "";
    ReplaySerInfo info;
    cr_assert_eq(replaybuf_serial_info(buf, bytes, O, &info, err), 0, "%s", err);
    cr_assert_eq(info.version, 1);
    cr_assert_eq(info.size, 10);
    cr_assert_eq(info.total, 13);

    replaybuf_init(&b, 8, O);
    add_k(&b, 100);
    /* rows 1, 4, 7 (transitions 4, 7, 10) after b's own transition */
    cr_assert_eq(replaybuf_append_serial(&b, buf, bytes, 1, 3, 3, err), 1, "%s", err);
    cr_assert_eq(b.size, 4);
    cr_assert_eq(b.total, 4);
    check_slot(&b, 0, 100);
    check_slot(&b, 1, 4);
    check_slot(&b, 2, 7);
    check_slot(&b, 3, 10);
    cr_assert_eq(replaybuf_slot_id(&b, 3), 3, "new ids, continuing b's");
    /* every row, more than fit: the last 8 survive, as 10 inserts would leave */
    cr_assert_eq(replaybuf_append_serial(&b, buf, bytes, 0, 1, 10, err), 4, "%s", err);
    cr_assert_eq(b.size, 8);
    cr_assert_eq(b.total, 14);
    for (size_t s = 0; s < 8; s++) {
        uint64_t id = replaybuf_slot_id(&b, s);
        check_slot(&b, s, 3 + (id - 4)); /* id 4 + i holds logical row i, transition 3 + i */
    }
    /* rows past the data: refused, nothing changes */
    cr_assert_eq(replaybuf_append_serial(&b, buf, bytes, 2, 4, 3, err), (size_t)-1);
    cr_assert_str_eq(err, "replay data holds 10 transitions, not rows 2 + 2 x 4");
    cr_assert_eq(replaybuf_append_serial(&b, buf, bytes, 10, 1, 1, err), (size_t)-1);
    cr_assert_eq(replaybuf_append_serial(&b, buf, bytes - 1, 0, 1, 1, err), (size_t)-1);
    cr_assert_eq(b.total, 14);
    /* no rows is fine */
    cr_assert_eq(replaybuf_append_serial(&b, buf, bytes, 0, 1, 0, err), b.head);
    cr_assert_eq(b.total, 14);
    free(buf);
    replaybuf_free(&a);
    replaybuf_free(&b);
}
