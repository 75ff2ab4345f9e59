/* SPDX-License-Identifier: MIT */
/* test_obsrow.c: packed observation rows of planes environments
 * (src/core/replay/obsrow.h) through everything that carries them: the bit
 * layout itself, the replay ring (insert packs, sample unpacks exactly the
 * inserted planes, rows already packed go in as they are), checkpoints of
 * packed rows (versions 3 and 4, and old float versions loaded into a
 * packed ring), n-step transitions stored packed, and the memory plan of
 * configs/minatar/seaquest.yaml.
 *
 * Planes here are random 0/1 cells from a seeded Rng; O = 1000 is
 * Seaquest's 10x10x10 and O = 13 has a partly used last byte. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "layout.h"
#include "memplan.h"
#include "nstep.h"
#include "obsrow.h"
#include "replaybuf.h"
#include "replaystore.h"
#include "rng.h"
#include "util.h"

/* n rows of O random cells, each 0.0f or 1.0f. */
static float *planes(Rng *rng, size_t n, size_t O) {
    float *x = xmalloc(n * O * sizeof(float));
    for (size_t j = 0; j < n * O; j++) x[j] = (float)rng_below(rng, 2);
    return x;
}

Test(obsrow, bit_order_is_lsb_first_with_zero_padding) {
    /* Cells 0, 9 and 12 of a 13-cell row: bit 0 of byte 0, bits 1 and 4 of byte 1. */
    float x[13] = {0};
    x[0] = x[9] = x[12] = 1.0f;
    ObsRow r = obsrow_make(13, true);
    cr_assert_eq(r.bytes, 2);
    unsigned char b[2] = {0xff, 0xff};
    cr_assert_eq(obsrow_encode(&r, x, 1, b), OBSROW_OK);
    cr_assert_eq(b[0], 0x01);
    cr_assert_eq(b[1], 0x12, "byte 1 is 0x%02x: cells 9 and 12, padding bits 0", b[1]);
    cr_assert_eq(obsrow_make(1000, true).bytes, 125);
    cr_assert_eq(obsrow_make(1000, false).bytes, 4000);
}

Test(obsrow, pack_unpack_round_trip) {
    Rng rng;
    rng_seed(&rng, 7, 0);
    const size_t dims[] = {1, 7, 8, 9, 13, 64, 100, 1000};
    for (size_t d = 0; d < sizeof dims / sizeof dims[0]; d++) {
        size_t O = dims[d], n = 5;
        ObsRow r = obsrow_make((int)O, true);
        float *x = planes(&rng, n, O), *y = xmalloc(n * O * sizeof(float));
        x[0] = -0.0f; /* a zero all the same */
        unsigned char *b = xmalloc(n * r.bytes);
        cr_assert_eq(obsrow_encode(&r, x, n, b), OBSROW_OK);
        obsrow_decode(&r, b, n, y);
        for (size_t j = 0; j < n * O; j++) cr_assert_eq(y[j], x[j] == 1.0f ? 1.0f : 0.0f, "O %zu cell %zu", O, j);
        free(x);
        free(y);
        free(b);
    }
}

Test(obsrow, a_cell_that_is_not_0_or_1_is_reported) {
    float x[3 * 20] = {0};
    x[2 * 20 + 13] = 0.5f;
    ObsRow r = obsrow_make(20, true);
    unsigned char b[3 * 3];
    cr_assert_eq(obsrow_encode(&r, x, 3, b), 2 * 20 + 13);
    x[2 * 20 + 13] = 0.0f;
    x[17] = 2.0f;
    cr_assert_eq(obsrow_encode(&r, x, 3, b), 17);
    cr_assert_eq(obsrow_find_nonbinary(x, 60), 17);
}

/* A packed ring dies on a non-binary cell: the environment's bug. */
Test(obsrow, packed_ring_refuses_a_non_binary_cell, .exit_code = 1) {
    ReplayBuf rb;
    replaybuf_init_rows(&rb, 4, obsrow_make(8, true));
    float o[8] = {0, 1, 0, 0.25f, 0, 0, 0, 0}, no[8] = {0};
    replaybuf_add(&rb, o, 0, 0, no, 1);
}

enum { CAP = 37, O = 1000, N = 100 };

/* A packed ring that has wrapped (N rows into CAP slots) holds the last
 * CAP rows; every sampled row is exactly the inserted planes of its id. */
Test(obsrow, sample_returns_exactly_the_inserted_planes) {
    Rng rng;
    rng_seed(&rng, 11, 0);
    float *obs = planes(&rng, N, O), *next = planes(&rng, N, O);
    int32_t act[N];
    float rew[N], disc[N];
    for (int i = 0; i < N; i++) act[i] = i % 6, rew[i] = (float)i, disc[i] = 0.99f;
    ReplayBuf rb;
    replaybuf_init_rows(&rb, CAP, obsrow_make(O, true));
    Batch in = {.n = 30, .obs_dim = O, .obs = obs, .action = act, .reward = rew, .next_obs = next, .discount = disc};
    replaybuf_add_batch(&rb, &in); /* rows 0 .. 29 */
    in = (Batch){.n = N - 30, .obs_dim = O, .obs = obs + 30 * O, .action = act + 30, .reward = rew + 30,
                 .next_obs = next + 30 * O, .discount = disc + 30};
    replaybuf_add_batch(&rb, &in); /* 30 .. 99, wrapping */
    cr_assert_eq(replaybuf_size(&rb), CAP);
    enum { B = 64 };
    float *bo = xmalloc(B * O * sizeof(float)), *bn = xmalloc(B * O * sizeof(float)), br[B], bd[B], bw[B];
    int32_t ba[B];
    uint64_t ids[B];
    Batch out = {.n = 0, .obs_dim = O, .obs = bo, .action = ba, .reward = br, .next_obs = bn, .discount = bd,
                 .weight = bw};
    replaybuf_sample(&rb, &rng, B, &out, NULL, ids);
    for (int b = 0; b < B; b++) {
        uint64_t k = ids[b];
        cr_assert(k >= N - CAP && k < N);
        cr_assert(memcmp(bo + (size_t)b * O, obs + k * O, O * sizeof(float)) == 0, "row %d: obs of id %llu", b,
                  (unsigned long long)k);
        cr_assert(memcmp(bn + (size_t)b * O, next + k * O, O * sizeof(float)) == 0, "row %d: next_obs", b);
        cr_assert_eq(ba[b], act[k]);
        cr_assert_eq(br[b], rew[k]);
    }
    /* Rows already packed (an actor's EXPERIENCE) go in as they are: the
     * same ring state, byte for byte. */
    ReplayBuf rb2;
    replaybuf_init_rows(&rb2, CAP, rb.row);
    unsigned char *po = xmalloc(N * rb.row.bytes), *pn = xmalloc(N * rb.row.bytes);
    cr_assert_eq(obsrow_encode(&rb.row, obs, N, po), OBSROW_OK);
    cr_assert_eq(obsrow_encode(&rb.row, next, N, pn), OBSROW_OK);
    ReplayRows rows = {.n = N, .obs = po, .next_obs = pn, .action = act, .reward = rew, .discount = disc};
    replaybuf_add_rows(&rb2, &rows);
    size_t bytes = replaybuf_serial_bytes(&rb);
    cr_assert_eq(bytes, replaybuf_serial_bytes(&rb2));
    unsigned char *s1 = xmalloc(bytes), *s2 = xmalloc(bytes);
    replaybuf_serialize(&rb, s1);
    replaybuf_serialize(&rb2, s2);
    cr_assert(memcmp(s1, s2, bytes) == 0);
    free(s1), free(s2), free(po), free(pn), free(bo), free(bn), free(obs), free(next);
    replaybuf_free(&rb);
    replaybuf_free(&rb2);
}

/* A store of n random transitions of planes (prioritized: priorities
 * i + 1); rows n_float, ..., same data, in float form (the old layout). */
static void fill(ReplayStore *pr, Rng *rng, int n, float **obs_out) {
    float *obs = planes(rng, (size_t)n, O), *next = planes(rng, (size_t)n, O);
    int32_t *act = xmalloc((size_t)n * sizeof(int32_t));
    float *rew = xmalloc((size_t)n * sizeof(float)), *disc = xmalloc((size_t)n * sizeof(float)),
          *td = xmalloc((size_t)n * sizeof(float));
    for (int i = 0; i < n; i++) act[i] = i % 6, rew[i] = (float)i * 0.5f, disc[i] = 0.99f, td[i] = (float)i;
    Batch in = {.n = n, .obs_dim = O, .obs = obs, .action = act, .reward = rew, .next_obs = next, .discount = disc};
    replaystore_add_batch(pr, &in, td);
    free(next), free(act), free(rew), free(disc), free(td);
    *obs_out = obs;
}

static unsigned char *ser(const ReplayStore *pr, size_t *bytes) {
    *bytes = replaystore_serial_bytes(pr);
    unsigned char *b = xmalloc(*bytes);
    replaystore_serialize(pr, b);
    return b;
}

/* Serialize and restore packed rows: versions 3 (uniform) and 4
 * (prioritized), 125 bytes a row, bit-exact round trip with priorities. */
Test(obsrow, serialize_restore_packed_rows) {
    for (int prio = 0; prio < 2; prio++) {
        Rng rng;
        rng_seed(&rng, 5, (uint64_t)prio);
        ReplayStore a, b;
        replaystore_init_rows(&a, CAP, obsrow_make(O, true), prio, 0.5, 0.01);
        replaystore_init_rows(&b, CAP, obsrow_make(O, true), prio, 0.5, 0.01);
        float *obs;
        fill(&a, &rng, 50, &obs);
        size_t bytes, bytes2;
        unsigned char *s = ser(&a, &bytes);
        uint32_t version;
        memcpy(&version, s + 8, 4);
        cr_assert_eq(version, prio ? 4u : 3u);
        cr_assert_eq(bytes, 40 + CAP * (2 * 125 + 12) + (prio ? 8 + 8 * CAP : 0), "%zu bytes", bytes);
        char err[ERR_LEN];
        cr_assert_eq(replaystore_restore(&b, s, bytes, NULL, err), 0, "%s", err);
        unsigned char *t = ser(&b, &bytes2);
        cr_assert_eq(bytes, bytes2);
        cr_assert(memcmp(s, t, bytes) == 0, "prio %d: re-serialized bytes differ", prio);
        free(s), free(t), free(obs);
        replaystore_free(&a);
        replaystore_free(&b);
    }
}

/* Old float sections (versions 1 and 2) load into a packed ring, and a
 * packed section into a float ring: the same rows either way. A float
 * cell the packed ring cannot hold is refused and nothing changes. */
Test(obsrow, float_sections_load_into_packed_rings_and_back) {
    Rng rng;
    rng_seed(&rng, 9, 0);
    ReplayStore flt, pk, back;
    replaystore_init_rows(&flt, CAP, obsrow_make(O, false), true, 0.5, 0.01);
    replaystore_init_rows(&pk, CAP, obsrow_make(O, true), true, 0.5, 0.01);
    replaystore_init_rows(&back, CAP, obsrow_make(O, false), true, 0.5, 0.01);
    float *obs;
    fill(&flt, &rng, 30, &obs);
    size_t bytes, b2, b3;
    unsigned char *s = ser(&flt, &bytes);
    char err[ERR_LEN];
    cr_assert_eq(replaystore_restore(&pk, s, bytes, NULL, err), 0, "%s", err);
    unsigned char *p = ser(&pk, &b2);
    cr_assert_eq(p[8], 4, "a packed ring writes version 4");
    cr_assert_eq(replaystore_restore(&back, p, b2, NULL, err), 0, "%s", err);
    unsigned char *f = ser(&back, &b3);
    cr_assert_eq(b3, bytes);
    cr_assert(memcmp(f, s, bytes) == 0, "float -> packed -> float is the identity on planes");
    /* A cell of 0.5 in row 7's next_obs (float data, version 2). */
    ReplaySerInfo si;
    cr_assert_eq(replaybuf_serial_info(s, bytes, O, &si, err), 0, "%s", err);
    float half = 0.5f;
    memcpy(s + si.next_obs + (7 * O + 3) * sizeof(float), &half, 4);
    uint64_t total = replaybuf_total(&pk.buf);
    ReplayStore fresh;
    replaystore_init_rows(&fresh, CAP, obsrow_make(O, true), false, 0, 0);
    cr_assert_eq(replaystore_restore(&fresh, s, bytes, NULL, err), -1);
    cr_assert_str_eq(err, "replay row 7 of 30 (0 = oldest): next_obs[3] is 0.5, but this environment's observations are "
                     "binary planes, stored as bits (0 or 1 only)");
    cr_assert_eq(replaybuf_size(&fresh.buf), 0);
    cr_assert_eq(replaystore_append_serial(&fresh, s, bytes, 0, 1, 30, err), -1);
    cr_assert_eq(replaybuf_size(&fresh.buf), 0, "append refused before anything changed");
    cr_assert_eq(replaybuf_total(&pk.buf), total);
    /* Dealing packed rows (append_serial) into a packed ring: every 3rd row. */
    cr_assert_eq(replaystore_append_serial(&fresh, p, b2, 1, 3, 10, err), 0, "%s", err);
    cr_assert_eq(replaybuf_size(&fresh.buf), 10);
    float row[O];
    for (size_t k = 0; k < 10; k++) {
        obsrow_decode(&fresh.buf.row, fresh.buf.obs + k * fresh.buf.row.bytes, 1, row);
        cr_assert(memcmp(row, obs + (1 + 3 * k) * O, sizeof row) == 0, "dealt row %zu", k);
    }
    free(s), free(p), free(f), free(obs);
    replaystore_free(&flt), replaystore_free(&pk), replaystore_free(&back), replaystore_free(&fresh);
}

/* n-step transitions of a planes stream (3-step returns over episodes of
 * 5 and 9 steps, one terminated, one truncated) stored packed come back
 * exactly as the builder emitted them, through a prioritized store. */
Test(obsrow, nstep_transitions_survive_packed_storage) {
    Rng rng;
    rng_seed(&rng, 3, 0);
    enum { S = 14, MAXR = 32 };
    float *states = planes(&rng, S + 2, O);
    NStep ns;
    nstep_init(&ns, 3, 0.9, O);
    float *eo = xmalloc(MAXR * O * sizeof(float)), *en = xmalloc(MAXR * O * sizeof(float)), er[MAXR], ed[MAXR];
    int32_t ea[MAXR];
    Batch em = {.n = 0, .obs_dim = O, .obs = eo, .action = ea, .reward = er, .next_obs = en, .discount = ed};
    for (int t = 0; t < S; t++) {
        bool term = t == 4, trunc = t == S - 1;
        nstep_push(&ns, states + (size_t)t * O, t % 6, (float)t, states + (size_t)(t + 1) * O, term, trunc, &em);
    }
    cr_assert_eq(em.n, S, "every step emitted once its episode ended");
    ReplayStore pr;
    replaystore_init_rows(&pr, MAXR, obsrow_make(O, true), true, 0.6, 1e-6);
    replaystore_add_batch(&pr, &em, NULL);
    size_t slots[S];
    for (int i = 0; i < S; i++) slots[i] = (size_t)i;
    float *go = xmalloc(S * O * sizeof(float)), *gn = xmalloc(S * O * sizeof(float)), gr[S], gd[S];
    int32_t ga[S];
    Batch got = {.n = 0, .obs_dim = O, .obs = go, .action = ga, .reward = gr, .next_obs = gn, .discount = gd};
    replaybuf_gather(&pr.buf, slots, S, &got);
    cr_assert(memcmp(go, eo, (size_t)S * O * sizeof(float)) == 0);
    cr_assert(memcmp(gn, en, (size_t)S * O * sizeof(float)) == 0);
    cr_assert(memcmp(gr, er, sizeof gr) == 0 && memcmp(gd, ed, sizeof gd) == 0 && memcmp(ga, ea, sizeof ga) == 0);
    cr_assert_eq(gd[4], 0.0f, "the terminated step");
    free(states), free(eo), free(en), free(go), free(gn);
    nstep_free(&ns);
    replaystore_free(&pr);
}

/* configs/minatar/seaquest.yaml: 100000 transitions in its one replay
 * shard, each 2 x 125 bytes of packed 10x10x10 planes (obs, next_obs) plus
 * 12 bytes of action, reward and discount: 26,200,000 bytes, about 25 MiB
 * (float rows would be 2 x 4000 + 12: 802 MB). Each of the 5 arrays is
 * rounded up to 64 bytes (replaybuf_init_rows), so the plan may exceed the
 * formula by < 5 x 64 bytes. */
Test(obsrow, seaquest_replay_shard_plans_25_mib) {
    Config cfg;
    char err[ERR_LEN];
    cr_assert_eq(config_load(&cfg, "configs/minatar/seaquest.yaml", NULL, 0, err), 0, "%s", err);
    cr_assert_eq(cfg.replay.capacity, 100000);
    Layout lay;
    layout_init(&lay, &cfg);
    MemRank r;
    cr_assert_eq(memplan_rank(&cfg, &lay, ROLE_REPLAY, 0, &r, err), 0, "%s", err);
    uint64_t want = 100000ull * (2 * 125 + 4 + 4 + 4), got = 0;
    for (int i = 0; i < r.n; i++)
        if (!strcmp(r.item[i].what, "replay storage")) got = r.item[i].bytes;
    cr_assert(got >= want && got < want + 5 * 64, "replay storage %llu bytes, expected %llu",
              (unsigned long long)got, (unsigned long long)want);
    cr_assert(got < 25ull * 1024 * 1024, "about 25 MiB: %.2f MiB", (double)got / 1048576.0);
}
