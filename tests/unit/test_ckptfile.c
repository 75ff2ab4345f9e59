/* SPDX-License-Identifier: MIT */
/* test_ckptfile.c: CRC32C against published vectors, and the checkpoint
 * file: exact round trip, every kind of damage detected and named, layout
 * mismatches explained, atomic writes that fail cleanly (missing directory,
 * full disk simulated with RLIMIT_FSIZE).
 *
 * Byte offsets used below come from docs/CHECKPOINT.md (format version 1):
 * header 256 bytes (version at 8, endianness marker at 12, header size at
 * 16, table CRC at 24, optim_slots at 80, slice_count at 104, header CRC at
 * 252), then 16 bytes per section table entry (id, crc, bytes), then data.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ckptfile.h"
#include "crc32c.h"
#include "replaybuf.h"
#include "rng.h"
#include "util.h"

/* ---- CRC32C ------------------------------------------------------------ */

Test(crc32c, check_value) {
    cr_assert_eq(crc32c("123456789", 9), 0xE3069283u);
    cr_assert_eq(crc32c_update_sw(0, "123456789", 9), 0xE3069283u);
    cr_assert_eq(crc32c(NULL, 0), 0u);
}

/* RFC 3720 (iSCSI) appendix B.4, and two common strings. */
Test(crc32c, published_vectors) {
    unsigned char buf[48];
    memset(buf, 0, 32);
    cr_assert_eq(crc32c(buf, 32), 0x8A9136AAu, "32 zero bytes");
    memset(buf, 0xff, 32);
    cr_assert_eq(crc32c(buf, 32), 0x62A8AB43u, "32 0xff bytes");
    for (int i = 0; i < 32; i++) buf[i] = (unsigned char)i;
    cr_assert_eq(crc32c(buf, 32), 0x46DD794Eu, "bytes 0 .. 31");
    for (int i = 0; i < 32; i++) buf[i] = (unsigned char)(31 - i);
    cr_assert_eq(crc32c(buf, 32), 0x113FDB5Cu, "bytes 31 .. 0");
    const unsigned char pdu[48] = {0x01, 0xc0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
                                   0x00, 0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x00,
                                   0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x18, 0x28, 0x00, 0x00, 0x00,
                                   0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00};
    cr_assert_eq(crc32c(pdu, 48), 0xD9963A56u, "iSCSI read command PDU");
    cr_assert_eq(crc32c("a", 1), 0xC1D04330u);
    const char *fox = "The quick brown fox jumps over the lazy dog";
    cr_assert_eq(crc32c(fox, strlen(fox)), 0x22620404u);
}

Test(crc32c, incremental_equals_one_shot) {
    unsigned char buf[1000];
    Rng rng;
    rng_seed(&rng, 5, RNG_STREAM_TOOL);
    for (size_t i = 0; i < sizeof buf; i++) buf[i] = (unsigned char)rng_next(&rng);
    uint32_t whole = crc32c(buf, sizeof buf);
    for (size_t cut = 0; cut <= sizeof buf; cut++) {
        uint32_t c = crc32c_update(crc32c_update(0, buf, cut), buf + cut, sizeof buf - cut);
        cr_assert_eq(c, whole, "split at %zu", cut);
    }
    /* Three pieces, mixing the hardware and table paths. */
    uint32_t c = crc32c_update_sw(0, buf, 3);
    c = crc32c_update(c, buf + 3, 500);
    c = crc32c_update_sw(c, buf + 503, sizeof buf - 503);
    cr_assert_eq(c, whole);
}

/* Whatever path crc32c_update takes on this CPU, it equals the table code
 * at every length and misalignment. */
Test(crc32c, fast_path_equals_table) {
    unsigned char buf[4096 + 16];
    Rng rng;
    rng_seed(&rng, 6, RNG_STREAM_TOOL);
    for (size_t i = 0; i < sizeof buf; i++) buf[i] = (unsigned char)rng_next(&rng);
    for (size_t off = 0; off < 16; off++)
        for (size_t len = 0; len < 300; len++)
            cr_assert_eq(crc32c(buf + off, len), crc32c_update_sw(0, buf + off, len), "off %zu len %zu", off, len);
    cr_assert_eq(crc32c(buf + 1, 4096), crc32c_update_sw(0, buf + 1, 4096));
}

/* ---- helpers ------------------------------------------------------------ */

/* Test paths stay short (TEST_TMP is inside the build directory), so the
 * expected messages built from them always fit. */
/* Short fixture paths (below util.h's PATH_LEN), so messages quoting them fit WANT_LEN. */
enum { DIR_LEN = 256, FILE_LEN = 320, WANT_LEN = 1024 };

/* A fresh directory for one test (Criterion runs tests in parallel, each
 * in its own process). */
static void make_dir(char *dir, size_t cap) {
    const char *base = getenv("TEST_TMP");
    snprintf(dir, cap, "%s/ckpt-XXXXXX", base && *base ? base : "/tmp");
    cr_assert_not_null(mkdtemp(dir), "mkdtemp %s: %s", dir, strerror(errno));
}

static void remove_dir(const char *dir) {
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    char p[PATH_MAX];
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        unlink(p);
    }
    closedir(d);
    rmdir(dir);
}

/* Names in dir besides . and .., space-separated, sorted not needed: the
 * tests expect at most one. */
static int count_entries(const char *dir, char *names, size_t cap) {
    DIR *d = opendir(dir);
    cr_assert_not_null(d);
    int n = 0;
    names[0] = '\0';
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        size_t len = strlen(names);
        snprintf(names + len, cap - len, "%s%s", n ? " " : "", e->d_name);
        n++;
    }
    closedir(d);
    return n;
}

static unsigned char *slurp(const char *path, size_t *bytes) {
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "open %s: %s", path, strerror(errno));
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *buf = xmalloc((size_t)n);
    cr_assert_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *bytes = (size_t)n;
    return buf;
}

static void spit(const char *path, const void *buf, size_t bytes) {
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(buf, 1, bytes, f), bytes);
    cr_assert_eq(fclose(f), 0);
}

/* A complete trainer checkpoint: 4 -> [64, 64] -> 2 MLP (4610 parameters),
 * Adam (two moments), three Rng states, a small replay buffer. Every field
 * has a distinct value so a mixed-up field shows. */
enum { NP = 4 * 64 + 64 + 64 * 64 + 64 + 64 * 2 + 2, N_RNG = 3, N_SEC = 5 };

typedef struct {
    CkptMeta meta;
    float params[NP], target[NP];
    unsigned char optim[8 + 2 * NP * 4];
    Rng rng[N_RNG];
    void *replay;
    size_t replay_bytes;
    CkptSection sec[N_SEC];
} Fixture;

static void fixture_init(Fixture *fx) {
    memset(fx, 0, sizeof *fx);
    CkptMeta *m = &fx->meta;
    m->net.obs_dim = 4;
    m->net.num_actions = 2;
    m->net.n_hidden = 2;
    m->net.hidden[0] = 64;
    m->net.hidden[1] = 64;
    m->net.dueling = 0;
    m->net.n_params = NP;
    m->slice_offset = 0;
    m->slice_count = NP;
    snprintf(m->env, sizeof m->env, "CartPole-v1");
    m->optimizer = CKPT_OPT_ADAM;
    m->optim_slots = 2;
    m->env_steps = 123456789012ULL;
    m->updates = 987654321ULL;
    m->episodes = 4242;
    m->param_version = 77;
    m->wall_seconds = 3600.0625 + 1e-9;
    /* The run layer's fields and the spare counter, in header order
     * (bytes 184 .. 247: round_trip_is_bit_exact checks where they land). */
    m->target_version = 0x1111111111111111ULL;
    m->run_id = 0x2222222222222222ULL;
    m->seq = 0x3333333333333333ULL;
    m->n_shards = 0x4444444444444444ULL;
    m->shard_index = 0x5555555555555555ULL;
    m->kind = 0x6666666666666666ULL;
    m->rows = 0x7777777777777777ULL;
    m->reserved[0] = 0x8888888888888888ULL;

    Rng rng;
    rng_seed(&rng, 11, RNG_STREAM_TOOL);
    for (int i = 0; i < NP; i++) {
        fx->params[i] = (float)rng_normal(&rng);
        fx->target[i] = (float)rng_normal(&rng);
    }
    uint64_t step = 31337;
    memcpy(fx->optim, &step, 8);
    for (size_t i = 8; i < sizeof fx->optim; i++) fx->optim[i] = (unsigned char)rng_next(&rng);
    for (int i = 0; i < N_RNG; i++) rng_seed(&fx->rng[i], 100 + (uint64_t)i, RNG_STREAM_ENV + (uint64_t)i);

    ReplayBuf rb;
    replaybuf_init(&rb, 8, 4);
    for (int k = 0; k < 11; k++) {
        float o[4] = {(float)k, 1, 2, 3}, no[4] = {(float)-k, 1, 2, 3};
        replaybuf_add(&rb, o, k % 2, (float)k, no, 0.99f);
    }
    fx->replay_bytes = replaybuf_serial_bytes(&rb);
    fx->replay = xmalloc(fx->replay_bytes);
    replaybuf_serialize(&rb, fx->replay);
    replaybuf_free(&rb);

    fx->sec[0] = (CkptSection){CKPT_SEC_PARAMS, fx->params, sizeof fx->params};
    fx->sec[1] = (CkptSection){CKPT_SEC_TARGET, fx->target, sizeof fx->target};
    fx->sec[2] = (CkptSection){CKPT_SEC_OPTIM, fx->optim, sizeof fx->optim};
    fx->sec[3] = (CkptSection){CKPT_SEC_RNG, fx->rng, sizeof fx->rng};
    fx->sec[4] = (CkptSection){CKPT_SEC_REPLAY, fx->replay, fx->replay_bytes};
}

static void fixture_free(Fixture *fx) {
    free(fx->replay);
    fx->replay = NULL;
}

/* Where section i's data starts in the fixture's file. */
static size_t data_offset(const Fixture *fx, int i) {
    size_t off = 256 + 16 * N_SEC;
    for (int j = 0; j < i; j++) off += fx->sec[j].bytes;
    return off;
}

static void write_fixture(const Fixture *fx, const char *path) {
    char err[ERR_LEN] = "";
    cr_assert_eq(ckptfile_write(path, &fx->meta, fx->sec, N_SEC, err), 0, "%s", err);
}

/* ckptfile_open must fail on path with a message containing `want`. */
static void expect_open_error(const char *path, const char *want, const char *what) {
    CkptReader r;
    char err[ERR_LEN] = "";
    int rc = ckptfile_open(&r, path, err);
    cr_assert_eq(rc, -1, "%s: opened without complaint", what);
    cr_assert_not_null(strstr(err, want), "%s: message \"%s\" lacks \"%s\"", what, err, want);
    cr_assert_not(r.is_open);
    ckptfile_close(&r);
}

static void put32(unsigned char *p, uint32_t v) { memcpy(p, &v, 4); }

/* After editing header fields or the table of a file image, make both CRCs
 * valid again, so that the check behind them is the one exercised. */
static void refresh_crcs(unsigned char *img) {
    uint32_t n;
    memcpy(&n, img + 20, 4);
    put32(img + 24, crc32c(img + 256, 16 * n));
    put32(img + 252, crc32c(img, 252));
}

/* ---- round trip --------------------------------------------------------- */

Test(checkpoint, round_trip_is_bit_exact) {
    char dir[DIR_LEN], path[FILE_LEN];
    make_dir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/ckpt.bin", dir);
    Fixture fx;
    fixture_init(&fx);
    write_fixture(&fx, path);

    CkptReader r;
    char err[ERR_LEN] = "";
    cr_assert_eq(ckptfile_open(&r, path, err), 0, "%s", err);
    const CkptMeta *m = &r.meta, *w = &fx.meta;
    cr_assert_eq(m->net.obs_dim, 4);
    cr_assert_eq(m->net.num_actions, 2);
    cr_assert_eq(m->net.n_hidden, 2);
    cr_assert_eq(m->net.hidden[0], 64);
    cr_assert_eq(m->net.hidden[1], 64);
    cr_assert_eq(m->net.dueling, 0);
    cr_assert_eq(m->net.n_params, NP);
    cr_assert_eq(m->slice_offset, 0);
    cr_assert_eq(m->slice_count, NP);
    cr_assert_str_eq(m->env, "CartPole-v1");
    cr_assert_eq(m->optimizer, CKPT_OPT_ADAM);
    cr_assert_eq(m->optim_slots, 2);
    cr_assert_eq(m->env_steps, w->env_steps);
    cr_assert_eq(m->updates, w->updates);
    cr_assert_eq(m->episodes, w->episodes);
    cr_assert_eq(m->param_version, w->param_version);
    cr_assert(memcmp(&m->wall_seconds, &w->wall_seconds, 8) == 0, "wall_seconds not bit-exact");
    cr_assert_eq(m->target_version, w->target_version);
    cr_assert_eq(m->run_id, w->run_id);
    cr_assert_eq(m->seq, w->seq);
    cr_assert_eq(m->n_shards, w->n_shards);
    cr_assert_eq(m->shard_index, w->shard_index);
    cr_assert_eq(m->kind, w->kind);
    cr_assert_eq(m->rows, w->rows);
    for (int i = 0; i < CKPT_N_RESERVED; i++) cr_assert_eq(m->reserved[i], w->reserved[i], "reserved[%d]", i);
    /* The named fields sit where format 1's eight spare counters were
     * (bytes 184 .. 247, little-endian u64s, in that order), so files
     * written before they had names read the same. */
    size_t img_bytes;
    unsigned char *img = slurp(path, &img_bytes);
    for (int i = 0; i < 8; i++) {
        uint64_t v;
        memcpy(&v, img + 184 + 8 * i, 8);
        cr_assert_eq(v, 0x1111111111111111ULL * (uint64_t)(i + 1), "header u64 at byte %d", 184 + 8 * i);
    }
    free(img);
    cr_assert_eq(m->format_version, 1, "no ENVS section: written as format 1");
    CkptMeta m1 = *m;
    m1.format_version = w->format_version; /* read only: the writer ignores it */
    cr_assert(memcmp(&m1, w, sizeof m1) == 0, "meta differs somewhere");
    cr_assert_eq(ckptfile_check_compatible(m, w, err), 0, "%s", err);

    cr_assert_eq(r.n_sections, N_SEC);
    size_t total = 256 + 16 * N_SEC;
    for (int i = 0; i < N_SEC; i++) {
        const CkptEntry *e = ckptfile_find(&r, fx.sec[i].id);
        cr_assert_not_null(e);
        cr_assert_eq(e->bytes, fx.sec[i].bytes);
        cr_assert_eq(e->offset, data_offset(&fx, i));
        void *buf = xmalloc(fx.sec[i].bytes);
        cr_assert_eq(ckptfile_read_section(&r, fx.sec[i].id, buf, fx.sec[i].bytes, err), 0, "%s", err);
        cr_assert(memcmp(buf, fx.sec[i].data, fx.sec[i].bytes) == 0, "section %s differs",
                  ckptfile_section_name(fx.sec[i].id));
        free(buf);
        total += fx.sec[i].bytes;
    }
    cr_assert_eq(r.file_bytes, total);
    cr_assert_eq(ckptfile_verify(&r, err), 0, "%s", err);

    /* The replay section restores the buffer it came from. */
    void *rbytes = xmalloc(fx.replay_bytes);
    cr_assert_eq(ckptfile_read_section(&r, CKPT_SEC_REPLAY, rbytes, fx.replay_bytes, err), 0, "%s", err);
    ReplayBuf rb;
    replaybuf_init(&rb, 8, 4);
    cr_assert_eq(replaybuf_restore(&rb, rbytes, fx.replay_bytes, NULL, err), 0, "%s", err);
    cr_assert_eq(replaybuf_total(&rb), 11);
    cr_assert_eq(replaybuf_size(&rb), 8);
    replaybuf_free(&rb);
    free(rbytes);

    ckptfile_close(&r);
    ckptfile_close(&r);
    char names[256];
    cr_assert_eq(count_entries(dir, names, sizeof names), 1, "left behind: %s", names);
    fixture_free(&fx);
    remove_dir(dir);
}

/* A parameter-server shard: a slice, only some sections, and an empty
 * slice (more shards than parameters) round-trips too. */
Test(checkpoint, shard_slices_round_trip) {
    char dir[DIR_LEN], path[FILE_LEN];
    make_dir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/shard.bin", dir);
    Fixture fx;
    fixture_init(&fx);
    fx.meta.slice_offset = 1000;
    fx.meta.slice_count = 537;
    fx.meta.optimizer = CKPT_OPT_RMSPROP;
    fx.meta.optim_slots = 1;
    CkptSection sec[3] = {{CKPT_SEC_OPTIM, fx.optim, 8 + 537 * 4},
                          {CKPT_SEC_PARAMS, fx.params, 537 * 4},
                          {CKPT_SEC_TARGET, fx.target, 537 * 4}};
    char err[ERR_LEN] = "";
    cr_assert_eq(ckptfile_write(path, &fx.meta, sec, 3, err), 0, "%s", err);
    CkptReader r;
    cr_assert_eq(ckptfile_open(&r, path, err), 0, "%s", err);
    cr_assert_eq(r.meta.slice_offset, 1000);
    cr_assert_eq(r.meta.slice_count, 537);
    cr_assert_null(ckptfile_find(&r, CKPT_SEC_RNG));
    cr_assert_eq(ckptfile_find(&r, CKPT_SEC_OPTIM)->offset, 256 + 3 * 16);
    float got[537];
    cr_assert_eq(ckptfile_read_section(&r, CKPT_SEC_TARGET, got, sizeof got, err), 0, "%s", err);
    cr_assert(memcmp(got, fx.target, sizeof got) == 0);
    cr_assert_eq(ckptfile_read_section(&r, CKPT_SEC_RNG, got, 32, err), -1);
    cr_assert(strstr(err, ": no section rng_states in this checkpoint"), "%s", err);
    cr_assert_eq(ckptfile_read_section(&r, CKPT_SEC_PARAMS, got, 536 * 4, err), -1);
    cr_assert(strstr(err, ": section params is 2148 bytes, the caller expects 2144"), "%s", err);
    ckptfile_close(&r);

    fx.meta.slice_offset = NP;
    fx.meta.slice_count = 0;
    fx.meta.optimizer = CKPT_OPT_NONE;
    fx.meta.optim_slots = 0;
    CkptSection empty = {CKPT_SEC_PARAMS, NULL, 0};
    cr_assert_eq(ckptfile_write(path, &fx.meta, &empty, 1, err), 0, "%s", err);
    cr_assert_eq(ckptfile_open(&r, path, err), 0, "%s", err);
    cr_assert_eq(r.meta.slice_count, 0);
    cr_assert_eq(ckptfile_read_section(&r, CKPT_SEC_PARAMS, got, 0, err), 0, "%s", err);
    cr_assert_eq(ckptfile_verify(&r, err), 0, "%s", err);
    ckptfile_close(&r);
    fixture_free(&fx);
    remove_dir(dir);
}

/* A file with an ENVS section is written as format 2 (a format-1 reader
 * would refuse the section), and reads back; one without stays format 1. */
Test(checkpoint, envs_section_writes_format_2) {
    char dir[DIR_LEN], path[FILE_LEN], err[ERR_LEN] = "";
    make_dir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/envs.bin", dir);
    Fixture fx;
    fixture_init(&fx);
    CkptSection sec[N_SEC + 1];
    memcpy(sec, fx.sec, sizeof fx.sec);
    unsigned char envs[40];
    for (size_t i = 0; i < sizeof envs; i++) envs[i] = (unsigned char)(3 * i + 1);
    sec[N_SEC] = (CkptSection){CKPT_SEC_ENVS, envs, sizeof envs};
    cr_assert_eq(ckptfile_write(path, &fx.meta, sec, N_SEC + 1, err), 0, "%s", err);
    size_t bytes;
    unsigned char *img = slurp(path, &bytes);
    uint32_t v;
    memcpy(&v, img + 8, 4);
    cr_expect_eq(v, 2);
    free(img);
    CkptReader r;
    cr_assert_eq(ckptfile_open(&r, path, err), 0, "%s", err);
    cr_expect_eq(r.meta.format_version, 2);
    unsigned char back[40];
    cr_assert_eq(ckptfile_read_section(&r, CKPT_SEC_ENVS, back, sizeof back, err), 0, "%s", err);
    cr_expect_eq(memcmp(back, envs, sizeof envs), 0);
    ckptfile_close(&r);
    sec[N_SEC].bytes = 16; /* shorter than its three counts */
    cr_assert_eq(ckptfile_write(path, &fx.meta, sec, N_SEC + 1, err), -1);
    cr_expect(strstr(err, "section envs is 16 bytes, shorter than its 3 counts"), "%s", err);
    fixture_free(&fx);
    remove_dir(dir);
}

/* A network on planes: ckptfile_write adds section NET (format 3) with the
 * planes and conv layers, ckptfile_open reads them back into the meta, and
 * two conv stacks of one parameter count (10x10x4: 8 5x5 stride 2, or 32
 * 2x2 stride 2 then 8 1x1 stride 2, both 808 conv parameters and 72
 * features) are told apart, as the header alone could not. A plane
 * network's file without NET (written before format 3) is compared by its
 * header. */
Test(checkpoint, net_section_records_conv_layers) {
    char dir[DIR_LEN], path[FILE_LEN], err[ERR_LEN] = "";
    make_dir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/net.bin", dir);
    Fixture fx;
    fixture_init(&fx);
    CkptMeta a = fx.meta;
    a.net.obs_dim = 400;
    a.net.in_h = a.net.in_w = 10;
    a.net.in_c = 4;
    a.net.n_conv = 1;
    a.net.conv[0][0] = 8, a.net.conv[0][1] = 5, a.net.conv[0][2] = 2;
    cr_assert_eq(ckptfile_write(path, &a, fx.sec, N_SEC, err), 0, "%s", err);
    CkptReader r;
    cr_assert_eq(ckptfile_open(&r, path, err), 0, "%s", err);
    cr_expect_eq(r.meta.format_version, 3);
    cr_expect_eq(r.meta.net.planes_known, 1);
    cr_expect_eq(r.meta.net.in_c, 4);
    cr_expect_eq(r.meta.net.n_conv, 1);
    cr_expect_eq(r.meta.net.conv[0][1], 5);
    cr_expect_eq(ckptfile_check_compatible(&r.meta, &a, err), 0, "%s", err);
    CkptMeta b = a;
    b.net.n_conv = 2;
    b.net.conv[0][0] = 32, b.net.conv[0][1] = 2, b.net.conv[0][2] = 2;
    b.net.conv[1][0] = 8, b.net.conv[1][1] = 1, b.net.conv[1][2] = 2;
    cr_assert_eq(ckptfile_check_compatible(&r.meta, &b, err), -1);
    cr_assert_str_eq(err, "network differs: checkpoint has 10x10x4 planes -> conv [8 5x5 stride 2] -> hidden [64, 64] "
                          "-> 2 actions (4610 parameters), expected 10x10x4 planes -> conv [32 2x2 stride 2, 8 1x1 "
                          "stride 2] -> hidden [64, 64] -> 2 actions (4610 parameters)");
    ckptfile_close(&r);
    /* planes that do not make obs_dim are refused on write */
    b.net.in_c = 3;
    cr_assert_eq(ckptfile_write(path, &b, fx.sec, N_SEC, err), -1);
    cr_expect(strstr(err, "planes 10x10x3 do not make obs_dim 400"), "%s", err);
    /* a file of format 1 for a plane network: compared by its header only */
    CkptMeta old = a;
    memset(&old.net.in_h, 0, sizeof old.net - offsetof(CkptNet, in_h));
    cr_expect_eq(ckptfile_check_compatible(&old, &b, err), 0, "%s", err);
    old.net.n_params++;
    cr_assert_eq(ckptfile_check_compatible(&old, &a, err), -1);
    cr_expect(strstr(err, "checkpoint has 400 inputs (planes and conv layers not recorded: written before format 3)"),
              "%s", err);
    fixture_free(&fx);
    remove_dir(dir);
}

/* A Python environment: ckptfile_write adds section ENVID (format 4) with
 * the whole id and kwargs, ckptfile_open reads them back, and two ids that
 * agree in the header's 31 bytes, or other kwargs, are told apart. A file
 * without ENVID is compared by its header's env. */
Test(checkpoint, envid_section_records_the_whole_id_and_kwargs) {
    char dir[DIR_LEN], path[FILE_LEN], err[ERR_LEN] = "";
    make_dir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/envid.bin", dir);
    Fixture fx;
    fixture_init(&fx);
    CkptMeta a = fx.meta;
    const char *id = "python:some_package.environments:make_one";
    snprintf(a.env, sizeof a.env, "%.31s", id);
    snprintf(a.env_id, sizeof a.env_id, "%s", id);
    snprintf(a.env_kwargs, sizeof a.env_kwargs, "{\"size\": 5}");
    cr_assert_eq(ckptfile_write(path, &a, fx.sec, N_SEC, err), 0, "%s", err);
    CkptReader r;
    cr_assert_eq(ckptfile_open(&r, path, err), 0, "%s", err);
    cr_expect_eq(r.meta.format_version, 4);
    cr_expect_eq(r.meta.env_id_known, 1);
    cr_expect_str_eq(r.meta.env_id, id);
    cr_expect_str_eq(r.meta.env_kwargs, "{\"size\": 5}");
    cr_expect_eq(ckptfile_check_compatible(&r.meta, &a, err), 0, "%s", err);
    CkptMeta b = a;
    snprintf(b.env_id, sizeof b.env_id, "python:some_package.environments:make_two");
    cr_assert_eq(ckptfile_check_compatible(&r.meta, &b, err), -1);
    cr_expect_str_eq(err, "env differs: checkpoint has \"python:some_package.environments:make_one\" with env.kwargs "
                          "{\"size\": 5}, expected \"python:some_package.environments:make_two\" with env.kwargs "
                          "{\"size\": 5}");
    b = a;
    snprintf(b.env_kwargs, sizeof b.env_kwargs, "{}");
    cr_assert_eq(ckptfile_check_compatible(&r.meta, &b, err), -1);
    cr_expect(strstr(err, "expected \"python:some_package.environments:make_one\" with env.kwargs {}"), "%s", err);
    ckptfile_close(&r);
    /* a header env that is not the id's start is refused on write */
    snprintf(b.env, sizeof b.env, "CartPole-v1");
    cr_assert_eq(ckptfile_write(path, &b, fx.sec, N_SEC, err), -1);
    cr_expect(strstr(err, "is not the start of the env id"), "%s", err);
    /* a file without ENVID (format 3 or older): its header's env */
    CkptMeta old = a;
    old.env_id[0] = old.env_kwargs[0] = '\0';
    cr_expect_eq(ckptfile_check_compatible(&old, &a, err), 0, "%s", err);
    /* a registered env writes no ENVID: format 1 as before */
    cr_assert_eq(ckptfile_write(path, &fx.meta, fx.sec, N_SEC, err), 0, "%s", err);
    cr_assert_eq(ckptfile_open(&r, path, err), 0, "%s", err);
    cr_expect_eq(r.meta.format_version, 1);
    cr_expect_eq(r.meta.env_id_known, 0);
    cr_expect_eq(ckptfile_check_compatible(&r.meta, &a, err), -1);
    cr_expect(strstr(err, "env differs: checkpoint has \"CartPole-v1\", expected \"python:some_package"), "%s", err);
    ckptfile_close(&r);
    fixture_free(&fx);
    remove_dir(dir);
}

Test(checkpoint, overwrite_replaces_and_leaves_no_temporary) {
    char dir[DIR_LEN], path[FILE_LEN];
    make_dir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/ckpt.bin", dir);
    Fixture fx;
    fixture_init(&fx);
    write_fixture(&fx, path);
    fx.meta.updates = 5;
    fx.params[0] = 42.0f;
    write_fixture(&fx, path);
    CkptReader r;
    char err[ERR_LEN] = "";
    cr_assert_eq(ckptfile_open(&r, path, err), 0, "%s", err);
    cr_assert_eq(r.meta.updates, 5);
    float p0[NP];
    cr_assert_eq(ckptfile_read_section(&r, CKPT_SEC_PARAMS, p0, sizeof p0, err), 0, "%s", err);
    cr_assert_eq(p0[0], 42.0f);
    ckptfile_close(&r);
    char names[256];
    cr_assert_eq(count_entries(dir, names, sizeof names), 1, "left behind: %s", names);
    struct stat st;
    cr_assert_eq(stat(path, &st), 0);
    cr_assert_eq(st.st_mode & 0777, 0644);
    fixture_free(&fx);
    remove_dir(dir);
}

/* ---- damage ------------------------------------------------------------- */

/* Flip one byte at the start, middle and end of each section: the header
 * and table are intact, so the file opens, and reading that section (and
 * verifying the file) names it; the other sections still read. */
Test(checkpoint, flipped_byte_in_each_section_is_named) {
    char dir[DIR_LEN], path[FILE_LEN], bad[FILE_LEN];
    make_dir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/ckpt.bin", dir);
    snprintf(bad, sizeof bad, "%s/bad.bin", dir);
    Fixture fx;
    fixture_init(&fx);
    write_fixture(&fx, path);
    size_t bytes;
    unsigned char *img = slurp(path, &bytes);
    for (int s = 0; s < N_SEC; s++) {
        size_t where[3] = {0, fx.sec[s].bytes / 2, fx.sec[s].bytes - 1};
        for (int k = 0; k < 3; k++) {
            size_t at = data_offset(&fx, s) + where[k];
            img[at] ^= 0x10;
            spit(bad, img, bytes);
            img[at] ^= 0x10;
            const char *name = ckptfile_section_name(fx.sec[s].id);
            char want[128];
            snprintf(want, sizeof want, "section %s CRC mismatch", name);
            CkptReader r;
            char err[ERR_LEN] = "";
            cr_assert_eq(ckptfile_open(&r, bad, err), 0, "%s", err);
            cr_assert_eq(ckptfile_verify(&r, err), -1, "verify missed a flip in %s", name);
            cr_assert(strstr(err, want), "verify: \"%s\" lacks \"%s\"", err, want);
            for (int o = 0; o < N_SEC; o++) {
                void *buf = xmalloc(fx.sec[o].bytes);
                int rc = ckptfile_read_section(&r, fx.sec[o].id, buf, fx.sec[o].bytes, err);
                if (o == s) {
                    cr_assert_eq(rc, -1, "read missed a flip in %s", name);
                    cr_assert(strstr(err, want), "read: \"%s\" lacks \"%s\"", err, want);
                } else {
                    cr_assert_eq(rc, 0, "%s", err);
                }
                free(buf);
            }
            ckptfile_close(&r);
        }
    }
    free(img);
    fixture_free(&fx);
    remove_dir(dir);
}

/* Every header byte: the first 20 have their own messages, the rest are
 * caught by the header CRC (including a flip in the CRC itself). */
Test(checkpoint, flipped_byte_in_header_is_named) {
    char dir[DIR_LEN], path[FILE_LEN], bad[FILE_LEN];
    make_dir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/ckpt.bin", dir);
    snprintf(bad, sizeof bad, "%s/bad.bin", dir);
    Fixture fx;
    fixture_init(&fx);
    write_fixture(&fx, path);
    size_t bytes;
    unsigned char *img = slurp(path, &bytes);
    for (size_t at = 0; at < 256; at++) {
        img[at] ^= 0x01;
        spit(bad, img, bytes);
        img[at] ^= 0x01;
        const char *want = at < 8    ? "not a gorila checkpoint"
                           : at < 12 ? "unsupported checkpoint format version"
                           : at < 16 ? "endianness marker"
                           : at < 20 ? "header size is"
                                     : "header CRC mismatch";
        char what[32];
        snprintf(what, sizeof what, "header byte %zu", at);
        expect_open_error(bad, want, what);
    }
    free(img);
    fixture_free(&fx);
    remove_dir(dir);
}

Test(checkpoint, flipped_byte_in_section_table_is_named) {
    char dir[DIR_LEN], path[FILE_LEN], bad[FILE_LEN];
    make_dir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/ckpt.bin", dir);
    snprintf(bad, sizeof bad, "%s/bad.bin", dir);
    Fixture fx;
    fixture_init(&fx);
    write_fixture(&fx, path);
    size_t bytes;
    unsigned char *img = slurp(path, &bytes);
    for (size_t at = 256; at < 256 + 16 * N_SEC; at++) {
        img[at] ^= 0x80;
        spit(bad, img, bytes);
        img[at] ^= 0x80;
        char what[32];
        snprintf(what, sizeof what, "table byte %zu", at);
        expect_open_error(bad, "section table CRC mismatch", what);
    }
    free(img);
    fixture_free(&fx);
    remove_dir(dir);
}

/* Cut the file inside the header, the table and each section: the message
 * says what is cut, how many bytes were needed where, and the file size. */
Test(checkpoint, truncation_is_detected_and_located) {
    char dir[DIR_LEN], path[FILE_LEN], bad[FILE_LEN];
    make_dir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/ckpt.bin", dir);
    snprintf(bad, sizeof bad, "%s/bad.bin", dir);
    Fixture fx;
    fixture_init(&fx);
    write_fixture(&fx, path);
    size_t bytes;
    unsigned char *img = slurp(path, &bytes);
    char want[WANT_LEN];

    const size_t in_header[] = {3, 8, 19, 20, 100, 255};
    for (size_t i = 0; i < sizeof in_header / sizeof in_header[0]; i++) {
        spit(bad, img, in_header[i]);
        snprintf(want, sizeof want,
                 "truncated file: the header needs 256 bytes at offset 0, but the file is %zu bytes long",
                 in_header[i]);
        expect_open_error(bad, want, "cut in header");
    }
    spit(bad, img, 0);
    expect_open_error(bad, "not a gorila checkpoint (the file is empty)", "empty file");

    const size_t in_table[] = {256, 257, 256 + 16, 256 + 16 * N_SEC - 1};
    for (size_t i = 0; i < sizeof in_table / sizeof in_table[0]; i++) {
        spit(bad, img, in_table[i]);
        snprintf(want, sizeof want,
                 "truncated file: the section table needs %d bytes at offset 256, but the file is %zu bytes long "
                 "(%zu of them present)",
                 16 * N_SEC, in_table[i], in_table[i] - 256);
        expect_open_error(bad, want, "cut in table");
    }

    for (int s = 0; s < N_SEC; s++) {
        size_t start = data_offset(&fx, s), len = fx.sec[s].bytes;
        const size_t cuts[3] = {start, start + 1, start + len - 1};
        for (int k = 0; k < 3; k++) {
            spit(bad, img, cuts[k]);
            snprintf(want, sizeof want,
                     "truncated file: section %s needs %zu bytes at offset %zu, but the file is %zu bytes long "
                     "(%zu of them present)",
                     ckptfile_section_name(fx.sec[s].id), len, start, cuts[k], cuts[k] - start);
            expect_open_error(bad, want, "cut in a section");
        }
    }

    /* And the other way: bytes appended after the last section. */
    unsigned char *longer = xmalloc(bytes + 3);
    memcpy(longer, img, bytes);
    memset(longer + bytes, 0, 3);
    spit(bad, longer, bytes + 3);
    snprintf(want, sizeof want, "3 unexpected bytes after the last section (sections end at %zu, the file is %zu bytes)",
             bytes, bytes + 3);
    expect_open_error(bad, want, "trailing bytes");
    free(longer);
    free(img);
    fixture_free(&fx);
    remove_dir(dir);
}

Test(checkpoint, wrong_magic_future_version_other_endianness) {
    char dir[DIR_LEN], path[FILE_LEN], bad[FILE_LEN];
    make_dir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/ckpt.bin", dir);
    snprintf(bad, sizeof bad, "%s/bad.bin", dir);
    Fixture fx;
    fixture_init(&fx);
    write_fixture(&fx, path);
    size_t bytes;
    unsigned char *img = slurp(path, &bytes);
    char want[WANT_LEN];

    const char *png = "\x89PNG\r\n\x1a\n and then some more bytes to make it long enough";
    spit(bad, png, strlen(png));
    snprintf(want, sizeof want, "%s: not a gorila checkpoint (magic 89 50 4e 47 ..., expected \"GORILACK\")", bad);
    expect_open_error(bad, want, "png");

    unsigned char *copy = xmalloc(bytes);
    memcpy(copy, img, bytes);
    put32(copy + 8, 5);
    refresh_crcs(copy);
    spit(bad, copy, bytes);
    snprintf(want, sizeof want, "%s: unsupported checkpoint format version 5 (this build supports versions 1 to 4)",
             bad);
    expect_open_error(bad, want, "future version");
    put32(copy + 8, 0);
    refresh_crcs(copy);
    spit(bad, copy, bytes);
    snprintf(want, sizeof want, "%s: unsupported checkpoint format version 0 (this build supports versions 1 to 4)",
             bad);
    expect_open_error(bad, want, "version 0");

    memcpy(copy, img, bytes);
    unsigned char t = copy[12];
    copy[12] = copy[15];
    copy[15] = t;
    t = copy[13];
    copy[13] = copy[14];
    copy[14] = t;
    spit(bad, copy, bytes);
    snprintf(want, sizeof want,
             "%s: written on a machine of the other byte order (endianness marker reads 0x04030201, expected "
             "0x01020304)",
             bad);
    expect_open_error(bad, want, "swapped endianness marker");

    free(copy);
    free(img);
    fixture_free(&fx);
    remove_dir(dir);
}

/* Tables that pass both CRCs but break the format's rules (a writer bug,
 * or a file edited by hand): unknown id, duplicate, missing params, and
 * section sizes that do not fit the header's layout. */
Test(checkpoint, inconsistent_table_is_refused) {
    char dir[DIR_LEN], path[FILE_LEN], bad[FILE_LEN];
    make_dir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/ckpt.bin", dir);
    snprintf(bad, sizeof bad, "%s/bad.bin", dir);
    Fixture fx;
    fixture_init(&fx);
    write_fixture(&fx, path);
    size_t bytes;
    unsigned char *img = slurp(path, &bytes);
    unsigned char *copy = xmalloc(bytes);
    const size_t entry_rng = 256 + 16 * 3, entry_params = 256;

    memcpy(copy, img, bytes);
    put32(copy + entry_rng, 9);
    refresh_crcs(copy);
    spit(bad, copy, bytes);
    expect_open_error(bad, "invalid section table: unknown section id 9 (format 1 knows 1 .. 5)", "unknown id");

    /* ENVS (6) is format 2's: unknown in a format-1 file, known in a
     * format-2 one (the fixture's rng section, 64 bytes, read as it) */
    memcpy(copy, img, bytes);
    put32(copy + entry_rng, CKPT_SEC_ENVS);
    refresh_crcs(copy);
    spit(bad, copy, bytes);
    expect_open_error(bad, "invalid section table: unknown section id 6 (format 1 knows 1 .. 5)", "envs in format 1");
    put32(copy + 8, 2);
    put32(copy + entry_rng, 9);
    refresh_crcs(copy);
    spit(bad, copy, bytes);
    expect_open_error(bad, "invalid section table: unknown section id 9 (format 2 knows 1 .. 6)", "unknown id, format 2");
    put32(copy + entry_rng, CKPT_SEC_ENVS);
    refresh_crcs(copy);
    spit(bad, copy, bytes);
    {
        CkptReader r2;
        char e2[ERR_LEN] = "";
        cr_assert_eq(ckptfile_open(&r2, bad, e2), 0, "format 2 with envs: %s", e2);
        cr_expect_eq(r2.meta.format_version, 2);
        cr_expect_not_null(ckptfile_find(&r2, CKPT_SEC_ENVS));
        ckptfile_close(&r2);
    }

    memcpy(copy, img, bytes);
    put32(copy + entry_params, CKPT_SEC_REPLAY);
    refresh_crcs(copy);
    spit(bad, copy, bytes);
    expect_open_error(bad, "invalid section table: section replay appears twice", "duplicate");

    /* Params relabelled as an optional section of any size: params missing.
     * (Two sections share id 5 then, so use a table without replay.) */
    char path2[FILE_LEN];
    snprintf(path2, sizeof path2, "%s/four.bin", dir);
    char err[ERR_LEN] = "";
    cr_assert_eq(ckptfile_write(path2, &fx.meta, fx.sec, 4, err), 0, "%s", err);
    size_t bytes4;
    unsigned char *img4 = slurp(path2, &bytes4);
    put32(img4 + entry_params, CKPT_SEC_REPLAY);
    refresh_crcs(img4);
    spit(bad, img4, bytes4);
    expect_open_error(bad, "invalid section table: required section params is missing", "no params");
    free(img4);

    memcpy(copy, img, bytes);
    uint64_t count = NP - 1;
    memcpy(copy + 104, &count, 8);
    refresh_crcs(copy);
    spit(bad, copy, bytes);
    expect_open_error(bad, "invalid section table: section params is 18440 bytes, the layout needs 18436 (4609 floats)",
                      "slice count");

    memcpy(copy, img, bytes);
    put32(copy + 80, 1);
    refresh_crcs(copy);
    spit(bad, copy, bytes);
    expect_open_error(bad,
                      "invalid section table: section optim_state is 36888 bytes, the layout needs 18448 "
                      "(8 + 1 x 4610 floats for adam)",
                      "optimizer slots");

    memcpy(copy, img, bytes);
    put32(copy + 36, 9); /* n_hidden */
    refresh_crcs(copy);
    spit(bad, copy, bytes);
    expect_open_error(bad, "invalid header: network has 9 hidden layers, at most 8 fit", "n_hidden");

    free(copy);
    free(img);
    fixture_free(&fx);
    remove_dir(dir);
}

Test(checkpoint, open_errors_from_the_system) {
    char dir[DIR_LEN], path[FILE_LEN];
    make_dir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/absent.bin", dir);
    char want[WANT_LEN];
    snprintf(want, sizeof want, "cannot open checkpoint %s: No such file or directory", path);
    expect_open_error(path, want, "absent");
    snprintf(want, sizeof want, "%s: not a regular file (a directory)", dir);
    expect_open_error(dir, want, "directory");
    remove_dir(dir);
}

/* A FIFO in a checkpoint's place is refused at once: opening it for
 * reading must not wait for a writer that never comes (the timeout would
 * fail the test). */
Test(checkpoint, fifo_is_refused_without_blocking, .timeout = 10) {
    char dir[DIR_LEN], path[FILE_LEN], want[WANT_LEN];
    make_dir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/fifo.ckpt", dir);
    cr_assert_eq(mkfifo(path, 0644), 0);
    snprintf(want, sizeof want, "%s: not a regular file (a FIFO)", path);
    expect_open_error(path, want, "fifo");
    unlink(path);
    remove_dir(dir);
}

/* ---- the writer refuses what a reader would refuse ---------------------- */

Test(checkpoint, write_validates_meta_and_sections) {
    char dir[DIR_LEN], path[FILE_LEN];
    make_dir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/ckpt.bin", dir);
    Fixture fx;
    fixture_init(&fx);
    char err[ERR_LEN], want[WANT_LEN];

    CkptSection sec[N_SEC];
    memcpy(sec, fx.sec, sizeof sec);
    sec[0].bytes -= 4;
    cr_assert_eq(ckptfile_write(path, &fx.meta, sec, N_SEC, err), -1);
    snprintf(want, sizeof want,
             "cannot write checkpoint %s: section params is 18436 bytes, the layout needs 18440 (4610 floats)", path);
    cr_assert_str_eq(err, want);

    cr_assert_eq(ckptfile_write(path, &fx.meta, fx.sec + 1, N_SEC - 1, err), -1);
    cr_assert(strstr(err, "required section params is missing"), "%s", err);

    memcpy(sec, fx.sec, sizeof sec);
    sec[4] = sec[3];
    cr_assert_eq(ckptfile_write(path, &fx.meta, sec, N_SEC, err), -1);
    cr_assert(strstr(err, "section rng_states appears twice"), "%s", err);

    sec[4].id = 77;
    cr_assert_eq(ckptfile_write(path, &fx.meta, sec, N_SEC, err), -1);
    cr_assert(strstr(err, "unknown section id 77"), "%s", err);

    cr_assert_eq(ckptfile_write(path, &fx.meta, fx.sec, 0, err), -1);
    cr_assert(strstr(err, "0 sections, a checkpoint has 1 .. 16"), "%s", err);

    CkptMeta m = fx.meta;
    m.optimizer = CKPT_OPT_NONE;
    m.optim_slots = 0;
    cr_assert_eq(ckptfile_write(path, &m, fx.sec, N_SEC, err), -1);
    cr_assert(strstr(err, "section optim_state present, but the optimizer is none"), "%s", err);

    m = fx.meta;
    m.net.hidden[5] = 3;
    cr_assert_eq(ckptfile_write(path, &m, fx.sec, N_SEC, err), -1);
    cr_assert(strstr(err, "hidden width 5 given beyond the 2 hidden layers"), "%s", err);

    m = fx.meta;
    m.slice_offset = 10;
    cr_assert_eq(ckptfile_write(path, &m, fx.sec, N_SEC, err), -1);
    cr_assert(strstr(err, "slice [10, 10 + 4610) lies outside the 4610 parameters"), "%s", err);

    m = fx.meta;
    memset(m.env, 'x', sizeof m.env);
    cr_assert_eq(ckptfile_write(path, &m, fx.sec, N_SEC, err), -1);
    cr_assert(strstr(err, "env name is not NUL-terminated within 32 bytes"), "%s", err);

    m = fx.meta;
    memcpy(sec, fx.sec, sizeof sec);
    sec[3].bytes = 40;
    cr_assert_eq(ckptfile_write(path, &m, sec, N_SEC, err), -1);
    cr_assert(strstr(err, "section rng_states is 40 bytes, not a whole number of 32-byte Rng states"), "%s", err);

    char names[256];
    cr_assert_eq(count_entries(dir, names, sizeof names), 0, "created: %s", names);
    fixture_free(&fx);
    remove_dir(dir);
}

/* ---- layout compatibility ---------------------------------------------- */

/* The fixture's network, as the compatibility messages name it. */
#define MLP_64 "4 inputs -> hidden [64, 64] -> 2 actions (4610 parameters)"

Test(checkpoint, compatibility_messages_say_what_differs) {
    Fixture fx;
    fixture_init(&fx);
    const CkptMeta *have = &fx.meta;
    CkptMeta want;
    char err[ERR_LEN];

    want = *have;
    want.env_steps = 0; /* counters and optimizer are not compared */
    want.optimizer = CKPT_OPT_SGD;
    want.optim_slots = 0;
    cr_assert_eq(ckptfile_check_compatible(have, &want, err), 0, "%s", err);

    want = *have;
    want.net.hidden[0] = want.net.hidden[1] = 128;
    want.net.n_params = 17410;
    cr_assert_eq(ckptfile_check_compatible(have, &want, err), -1);
    cr_assert_str_eq(err, "network differs: checkpoint has " MLP_64 ", expected 4 inputs -> hidden [128, 128] -> 2 "
                          "actions (17410 parameters)");

    want = *have;
    want.net.n_hidden = 3;
    want.net.hidden[2] = 64;
    cr_assert_eq(ckptfile_check_compatible(have, &want, err), -1);
    cr_assert_str_eq(err, "network differs: checkpoint has " MLP_64 ", expected 4 inputs -> hidden [64, 64, 64] -> 2 "
                          "actions (4610 parameters)");

    want = *have;
    want.net.obs_dim = 6;
    want.net.num_actions = 3;
    want.net.dueling = 1;
    cr_assert_eq(ckptfile_check_compatible(have, &want, err), -1);
    cr_assert_str_eq(err, "network differs: checkpoint has " MLP_64 ", expected 6 inputs -> hidden [64, 64] -> 3 "
                          "actions dueling (4610 parameters)");

    want = *have;
    want.net.n_params = NP + 1;
    cr_assert_eq(ckptfile_check_compatible(have, &want, err), -1);
    cr_assert_str_eq(err, "network differs: checkpoint has " MLP_64 ", expected 4 inputs -> hidden [64, 64] -> 2 "
                          "actions (4611 parameters)");

    want = *have;
    snprintf(want.env, sizeof want.env, "Acrobot-v1");
    cr_assert_eq(ckptfile_check_compatible(have, &want, err), -1);
    cr_assert_str_eq(err, "env differs: checkpoint has \"CartPole-v1\", expected \"Acrobot-v1\"");

    want = *have;
    want.slice_offset = 2305;
    want.slice_count = 2305;
    cr_assert_eq(ckptfile_check_compatible(have, &want, err), -1);
    cr_assert_str_eq(err, "slice differs: checkpoint holds parameters [0, 4610), expected [2305, 4610)");

    want = *have;
    want.net.n_hidden = 1;
    want.net.hidden[1] = 0;
    snprintf(want.env, sizeof want.env, "MountainCar-v0");
    want.slice_count = 100;
    cr_assert_eq(ckptfile_check_compatible(have, &want, err), -1);
    cr_assert_str_eq(err, "network differs: checkpoint has " MLP_64 ", expected 4 inputs -> hidden [64] -> 2 actions "
                          "(4610 parameters); "
                          "env differs: checkpoint has \"CartPole-v1\", expected \"MountainCar-v0\"; "
                          "slice differs: checkpoint holds parameters [0, 4610), expected [0, 100)");
    fixture_free(&fx);
}

/* ---- failing writes ----------------------------------------------------- */

Test(checkpoint, missing_directory_fails_cleanly) {
    char dir[DIR_LEN], path[FILE_LEN];
    make_dir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/nope/ckpt.bin", dir);
    Fixture fx;
    fixture_init(&fx);
    char err[ERR_LEN] = "";
    cr_assert_eq(ckptfile_write(path, &fx.meta, fx.sec, N_SEC, err), -1);
    char want[WANT_LEN];
    snprintf(want, sizeof want, "cannot write checkpoint %s: cannot create temporary file", path);
    cr_assert(strstr(err, want), "%s", err);
    cr_assert(strstr(err, ": No such file or directory"), "%s", err);
    char names[256];
    cr_assert_eq(count_entries(dir, names, sizeof names), 0, "created: %s", names);
    fixture_free(&fx);
    remove_dir(dir);
}

/* A full disk, simulated: RLIMIT_FSIZE caps the size of any file this
 * process writes, and with SIGXFSZ ignored write() fails with EFBIG
 * instead of killing the process (Criterion runs each test in its own
 * process, so the limit stays here). The cap hits the header, the table,
 * the first section and a late one in turn; every time the write reports
 * the path and the reason, leaves no temporary file, and the older
 * checkpoint survives byte for byte. */
Test(checkpoint, full_disk_fails_cleanly_and_keeps_the_old_checkpoint) {
    char dir[DIR_LEN], path[FILE_LEN];
    make_dir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/ckpt.bin", dir);
    Fixture fx;
    fixture_init(&fx);
    /* The old checkpoint: params only, small. */
    char err[ERR_LEN] = "";
    cr_assert_eq(ckptfile_write(path, &fx.meta, fx.sec, 1, err), 0, "%s", err);
    size_t old_bytes;
    unsigned char *old = slurp(path, &old_bytes);
    fx.meta.updates++;

    cr_assert_neq(signal(SIGXFSZ, SIG_IGN), SIG_ERR);
    struct rlimit saved;
    cr_assert_eq(getrlimit(RLIMIT_FSIZE, &saved), 0);
    /* Header and table go out in one write (336 bytes); the data of
     * params, target_params and optim_state start at 336, 18776, 37216. */
    const rlim_t caps[] = {0, 100, 300, 20000, 60000};
    const char *during[] = {"the header", "the header", "the header", "section target_params",
                            "section optim_state"};
    for (size_t i = 0; i < sizeof caps / sizeof caps[0]; i++) {
        struct rlimit lim = {caps[i], saved.rlim_max};
        cr_assert_eq(setrlimit(RLIMIT_FSIZE, &lim), 0, "setrlimit: %s", strerror(errno));
        int rc = ckptfile_write(path, &fx.meta, fx.sec, N_SEC, err);
        cr_assert_eq(setrlimit(RLIMIT_FSIZE, &saved), 0);
        cr_assert_eq(rc, -1, "cap %llu: the write claimed success", (unsigned long long)caps[i]);
        char want[WANT_LEN];
        snprintf(want, sizeof want, "cannot write checkpoint %s: writing %s to %s.tmp.", path, during[i], path);
        cr_assert(strstr(err, want), "cap %llu: %s", (unsigned long long)caps[i], err);
        cr_assert(strstr(err, ": File too large"), "cap %llu: %s", (unsigned long long)caps[i], err);
        char names[256];
        cr_assert_eq(count_entries(dir, names, sizeof names), 1, "cap %llu left: %s", (unsigned long long)caps[i],
                     names);
        size_t now_bytes;
        unsigned char *now = slurp(path, &now_bytes);
        cr_assert(now_bytes == old_bytes && memcmp(now, old, old_bytes) == 0, "cap %llu: old checkpoint changed",
                  (unsigned long long)caps[i]);
        free(now);
    }
    /* With the limit lifted the same write goes through. */
    cr_assert_eq(ckptfile_write(path, &fx.meta, fx.sec, N_SEC, err), 0, "%s", err);
    free(old);
    fixture_free(&fx);
    remove_dir(dir);
}
