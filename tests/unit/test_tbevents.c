/* SPDX-License-Identifier: MIT */
/* test_tbevents.c: TensorBoard event files (src/core/run/tbevents.c) against
 * expectations that do not come from the code: the published CRC-32C check
 * value, varints from the protobuf encoding guide, an Event assembled by
 * hand from the wire format, and the first record of two event files other
 * programs wrote (tests/tb/data: TensorFlow 2's writer, and tfevents-js's
 * test asset), which the encoder must reproduce byte for byte. Then the
 * writer: the file it leaves, NaN values left out, and a tb/ that cannot
 * be used refused with a message. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "crc32c.h"
#include "tbevents.h"

/* Bytes as a hex string, for the failure messages. */
static const char *hex(const uint8_t *b, size_t n, char *out, size_t cap) {
    size_t k = 0;
    for (size_t i = 0; i < n && k + 3 < cap; i++) k += (size_t)snprintf(out + k, cap - k, "%02x", b[i]);
    out[k] = '\0';
    return out;
}

#define EXPECT_BYTES(got, n, want)                                                                 \
    do {                                                                                           \
        char h1_[512], h2_[512];                                                                   \
        cr_expect_eq((n), sizeof(want), "%zu bytes, expected %zu: %s", (size_t)(n), sizeof(want),   \
                     hex((got), (n), h1_, sizeof h1_));                                            \
        cr_expect(memcmp((got), (want), sizeof(want)) == 0, "got  %s\nwant %s", hex((got), (n), h1_, sizeof h1_), \
                  hex((want), sizeof(want), h2_, sizeof h2_));                                     \
    } while (0)

Test(tbevents, crc32c_check_value_and_its_mask) {
    /* CRC-32C("123456789") = 0xE3069283 (the published check value). The
     * mask by hand: rotate right by 15, 0xE3069283 -> 0x2507C60D; plus
     * 0xA282EAD8 -> 0xC78AB0E5 (mod 2^32). */
    cr_expect_eq(crc32c("123456789", 9), 0xE3069283u);
    cr_expect_eq(tbevents_masked_crc("123456789", 9), 0xC78AB0E5u);
}

Test(tbevents, varints_from_the_encoding_guide) {
    /* protobuf.dev, "Encoding": 1 is 01, 150 is 96 01; 300 is AC 02 (the
     * groups 0101100 and 0000010, least significant first, the first with
     * its continuation bit). */
    uint8_t b[10];
    size_t n = tbevents_varint(b, 0);
    EXPECT_BYTES(b, n, ((const uint8_t[]){0x00}));
    n = tbevents_varint(b, 1);
    EXPECT_BYTES(b, n, ((const uint8_t[]){0x01}));
    n = tbevents_varint(b, 127);
    EXPECT_BYTES(b, n, ((const uint8_t[]){0x7F}));
    n = tbevents_varint(b, 128);
    EXPECT_BYTES(b, n, ((const uint8_t[]){0x80, 0x01}));
    n = tbevents_varint(b, 150);
    EXPECT_BYTES(b, n, ((const uint8_t[]){0x96, 0x01}));
    n = tbevents_varint(b, 300);
    EXPECT_BYTES(b, n, ((const uint8_t[]){0xAC, 0x02}));
    /* 2^64 - 1: nine groups of seven ones, then the last bit: 10 bytes. */
    n = tbevents_varint(b, UINT64_MAX);
    EXPECT_BYTES(b, n, ((const uint8_t[]){0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01}));
}

Test(tbevents, one_scalar_event_assembled_by_hand) {
    /* Event{wall_time: 1.5, step: 300, summary: {value: [{tag: "loss",
     * simple_value: 0.25}]}} from the wire format:
     *   Value    0A 04 'l' 'o' 's' 's'          tag, field 1, length 4
     *            15 00 00 80 3E                 simple_value, field 2, wire
     *                                           type 5; 0.25f = 0x3E800000
     *            = 11 bytes
     *   Summary  0A 0B <Value>                  value, field 1, length 11
     *            = 13 bytes
     *   Event    09 00 00 00 00 00 00 F8 3F     wall_time, field 1, wire
     *                                           type 1; 1.5 = 0x3FF8000000000000
     *            10 AC 02                       step, field 2, varint 300
     *            2A 0D <Summary>                summary, field 5, length 13 */
    static const uint8_t want[] = {0x09, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xF8, 0x3F, 0x10, 0xAC, 0x02,
                                   0x2A, 0x0D, 0x0A, 0x0B, 0x0A, 0x04, 'l',  'o',  's',  's',  0x15, 0x00,
                                   0x00, 0x80, 0x3E};
    TbScalar v = {"loss", 0.25};
    uint8_t buf[128];
    size_t n = tbevents_encode_scalars(buf, sizeof buf, 1.5, 300, &v, 1);
    EXPECT_BYTES(buf, n, want);
    /* Exactly enough room works, one byte less does not. */
    cr_expect_eq(tbevents_encode_scalars(buf, sizeof want, 1.5, 300, &v, 1), sizeof want);
    cr_expect_eq(tbevents_encode_scalars(buf, sizeof want - 1, 1.5, 300, &v, 1), 0);
}

Test(tbevents, step_zero_left_out_and_two_values) {
    /* proto3 leaves a field at its default out: no 10 .. at step 0. Two
     * Values follow each other inside one Summary (0A 08 ... twice). */
    static const uint8_t want[] = {0x09, 0, 0, 0, 0, 0, 0, 0xF0, 0x3F, /* wall_time 1.0 */
                                   0x2A, 0x14,                         /* summary, 20 bytes */
                                   0x0A, 0x08, 0x0A, 0x01, 'a', 0x15, 0x00, 0x00, 0x80, 0xBF, /* a = -1 */
                                   0x0A, 0x08, 0x0A, 0x01, 'b', 0x15, 0x00, 0x00, 0x00, 0x00}; /* b = 0 */
    TbScalar v[2] = {{"a", -1.0}, {"b", 0.0}};
    uint8_t buf[128];
    size_t n = tbevents_encode_scalars(buf, sizeof buf, 1.0, 0, v, 2);
    EXPECT_BYTES(buf, n, want);
}

Test(tbevents, session_start_event) {
    /* Event{wall_time: 1.5, step: 2000, session_log: {status: START}}:
     * step 2000 = D0 0F; session_log is field 7 (3A), 2 bytes: 08 01. */
    static const uint8_t want[] = {0x09, 0, 0, 0, 0, 0, 0, 0xF8, 0x3F, 0x10, 0xD0, 0x0F, 0x3A, 0x02, 0x08, 0x01};
    uint8_t buf[64];
    size_t n = tbevents_encode_start(buf, sizeof buf, 1.5, 2000);
    EXPECT_BYTES(buf, n, want);
}

Test(tbevents, bounds_are_refused) {
    uint8_t buf[TBEVENTS_BUF_BYTES];
    char tag[TBEVENTS_MAX_TAG + 2];
    memset(tag, 'x', sizeof tag - 1);
    tag[sizeof tag - 1] = '\0';
    TbScalar v = {tag, 1};
    cr_expect_eq(tbevents_encode_scalars(buf, sizeof buf, 0, 1, &v, 1), 0, "a 65-byte tag");
    tag[TBEVENTS_MAX_TAG] = '\0';
    cr_expect_gt(tbevents_encode_scalars(buf, sizeof buf, 0, 1, &v, 1), 0, "a 64-byte tag");
    v.tag = "";
    cr_expect_eq(tbevents_encode_scalars(buf, sizeof buf, 0, 1, &v, 1), 0, "an empty tag");
    cr_expect_eq(tbevents_encode_scalars(buf, sizeof buf, 0, 1, &v, 0), 0, "no value");
    TbScalar many[TBEVENTS_MAX_SCALARS + 1];
    for (int i = 0; i <= TBEVENTS_MAX_SCALARS; i++) many[i] = (TbScalar){tag, i};
    cr_expect_gt(tbevents_encode_scalars(buf, sizeof buf, 0, 1, many, TBEVENTS_MAX_SCALARS), 0,
                 "the most values of the longest tags fit the writer's buffer");
    cr_expect_eq(tbevents_encode_scalars(buf, sizeof buf, 0, 1, many, TBEVENTS_MAX_SCALARS + 1), 0);
    cr_expect_eq(tbevents_frame(buf, 20, buf + 12, 5), 0, "5 bytes need a frame of 21");
}

/* The first 40 bytes of tests/tb/data/<name>: the framed version event. */
static void first_record(const char *name, uint8_t *out) {
    char path[512];
    snprintf(path, sizeof path, "tests/tb/data/%s", name);
    FILE *f = fopen(path, "rb");
    cr_assert(f, "cannot open %s (run from the repository root)", path);
    cr_assert_eq(fread(out, 1, 40, f), 40);
    fclose(f);
}

Test(tbevents, version_record_as_tensorflow_writes_it) {
    /* The first record of an events file TensorFlow 2 wrote at unix time
     * 1585499054 and of tfevents-js's asset (1687811641): length 24, its
     * masked CRC, Event{wall_time, file_version: "brain.Event:2"}, the data's
     * masked CRC. The same wall time must give the same 40 bytes. */
    const struct {
        const char *file;
        double wall;
    } cases[] = {{"events.out.tfevents.1585499054.Jaakkos-Mac-mini.local.11684.5.v2", 1585499054.0},
                 {"events.out.tfevents.1687811641.v2", 1687811641.0}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint8_t want[40], buf[64];
        first_record(cases[i].file, want);
        size_t n = tbevents_encode_version(buf + 12, sizeof buf - 12, cases[i].wall);
        cr_expect_eq(n, 24);
        size_t framed = tbevents_frame(buf, sizeof buf, buf + 12, n);
        EXPECT_BYTES(buf, framed, want);
    }
}

/* The file's bytes (at most cap) into buf; returns how many. */
static size_t slurp(const char *path, uint8_t *buf, size_t cap) {
    FILE *f = fopen(path, "rb");
    cr_assert(f, "cannot open %s", path);
    size_t n = fread(buf, 1, cap, f);
    fclose(f);
    return n;
}

/* Split buf into records, checking each frame; returns the count and puts
 * each record's data offset and length in off[], len[]. */
static int split(const uint8_t *buf, size_t n, size_t *off, size_t *len, int max) {
    int k = 0;
    size_t at = 0;
    while (at < n && k < max) {
        cr_assert_geq(n - at, 16);
        uint64_t m = 0;
        for (int i = 7; i >= 0; i--) m = m << 8 | buf[at + (size_t)i];
        uint32_t c1 = (uint32_t)buf[at + 8] | (uint32_t)buf[at + 9] << 8 | (uint32_t)buf[at + 10] << 16 |
                      (uint32_t)buf[at + 11] << 24;
        cr_assert_eq(c1, tbevents_masked_crc(buf + at, 8));
        cr_assert_geq(n - at - 16, m);
        const uint8_t *d = buf + at + 12 + m;
        uint32_t c2 = (uint32_t)d[0] | (uint32_t)d[1] << 8 | (uint32_t)d[2] << 16 | (uint32_t)d[3] << 24;
        cr_assert_eq(c2, tbevents_masked_crc(buf + at + 12, m));
        off[k] = at + 12;
        len[k] = m;
        k++;
        at += 16 + m;
    }
    cr_assert_eq(at, n, "no bytes after the last record");
    return k;
}

static char *scratch(void) {
    static const char tmpl[] = "/tmp/gorila-tbevents-XXXXXX";
    char *d = malloc(sizeof tmpl);
    memcpy(d, tmpl, sizeof tmpl);
    cr_assert(mkdtemp(d), "mkdtemp");
    return d;
}

static void remove_run(const char *dir) {
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_expect_eq(system(cmd), 0);
}

Test(tbevents, writer_leaves_framed_events_and_skips_nan) {
    char *dir = scratch(), err[ERR_LEN];
    TbEvents t;
    cr_assert_eq(tbevents_init(&t, dir, false, 0, err), 0, "%s", err);
    char prefix[PATH_LEN];
    snprintf(prefix, sizeof prefix, "%s/tb/events.out.tfevents.", dir);
    cr_expect(strncmp(t.path, prefix, strlen(prefix)) == 0, "%s", t.path);
    char pid[32];
    snprintf(pid, sizeof pid, ".%ld", (long)getpid());
    cr_expect(strcmp(t.path + strlen(t.path) - strlen(pid), pid) == 0, "ends with the pid: %s", t.path);
    TbScalar v[3] = {{"a", 2.0}, {"nan", NAN}, {"b", 3.0}};
    cr_expect_eq(tbevents_scalars(&t, 300, v, 3, false), 0);
    TbScalar none = {"nan", NAN};
    cr_expect_eq(tbevents_scalars(&t, 400, &none, 1, true), 0, "nothing to write is no error");
    TbScalar many[TBEVENTS_MAX_SCALARS + 1];
    for (int i = 0; i <= TBEVENTS_MAX_SCALARS; i++) many[i] = (TbScalar){"x", i};
    cr_expect_eq(tbevents_scalars(&t, 500, many, TBEVENTS_MAX_SCALARS + 1, true), -1, "17 values: refused, not cut");
    cr_expect_eq(tbevents_free(&t), 0);
    cr_expect_eq(tbevents_free(&t), 0, "twice is safe");

    uint8_t buf[1024];
    size_t off[4], len[4];
    size_t n = slurp(t.path, buf, sizeof buf);
    cr_assert_eq(split(buf, n, off, len, 4), 2, "the version event and one scalar event");
    cr_expect_eq(len[0], 24);
    cr_expect(memcmp(buf + off[0] + 9, "\x1a\x0d" "brain.Event:2", 15) == 0);
    /* the scalars: a and b only, at step 300 (10 AC 02 after wall_time) */
    const uint8_t *e = buf + off[1];
    cr_expect_eq(e[0], 0x09);
    cr_expect(memcmp(e + 9, "\x10\xac\x02\x2a\x14", 5) == 0);
    cr_expect(memcmp(e + 14, "\x0a\x08\x0a\x01" "a" "\x15\x00\x00\x00\x40", 10) == 0, "a = 2.0f");
    cr_expect(memcmp(e + 24, "\x0a\x08\x0a\x01" "b" "\x15\x00\x00\x40\x40", 10) == 0, "b = 3.0f");
    cr_expect_eq(len[1], 34);
    remove_run(dir);
    free(dir);
}

Test(tbevents, resumed_writer_starts_a_session) {
    char *dir = scratch(), err[ERR_LEN];
    TbEvents t;
    cr_assert_eq(tbevents_init(&t, dir, true, 2000, err), 0, "%s", err);
    cr_expect_eq(tbevents_free(&t), 0);
    uint8_t buf[256];
    size_t off[4], len[4];
    size_t n = slurp(t.path, buf, sizeof buf);
    cr_assert_eq(split(buf, n, off, len, 4), 2);
    cr_expect_eq(len[1], 16);
    cr_expect(memcmp(buf + off[1] + 9, "\x10\xd0\x0f\x3a\x02\x08\x01", 7) == 0, "step 2000, SessionLog START");
    remove_run(dir);
    free(dir);
}

Test(tbevents, a_tb_that_is_not_a_directory_is_refused) {
    char *dir = scratch(), err[ERR_LEN], path[PATH_LEN];
    snprintf(path, sizeof path, "%s/tb", dir);
    FILE *f = fopen(path, "w");
    cr_assert(f);
    fclose(f);
    TbEvents t;
    cr_expect_eq(tbevents_init(&t, dir, false, 0, err), -1);
    cr_expect(strstr(err, "/tb: it exists and is not a directory") != NULL, "%s", err);
    cr_expect_null(t.f);
    cr_expect_eq(tbevents_free(&t), 0, "freeing after a failed init is safe");
    snprintf(path, sizeof path, "%s/missing/deeper", dir);
    cr_expect_eq(tbevents_init(&t, path, false, 0, err), -1);
    cr_expect(strstr(err, "cannot create") != NULL && strstr(err, "No such file or directory") != NULL, "%s", err);
    remove_run(dir);
    free(dir);
}

/* A directory's event files are read in name order: a new file must sort
 * after every file already there, even one stamped later than now (a
 * resume in the same second, or a clock set back): its stamp goes one past
 * the largest. */
Test(tbevents, a_new_file_sorts_after_the_ones_before_it) {
    char *dir = scratch(), err[ERR_LEN], path[4096];
    snprintf(path, sizeof path, "%s/tb", dir);
    cr_assert_eq(mkdir(path, 0777), 0);
    long long ahead = (long long)time(NULL) + 1000;
    snprintf(path, sizeof path, "%s/tb/events.out.tfevents.%lld.zz.99999", dir, ahead);
    FILE *f = fopen(path, "wb");
    cr_assert(f);
    fclose(f);
    TbEvents t;
    cr_assert_eq(tbevents_init(&t, dir, true, 5, err), 0, "%s", err);
    cr_expect_eq(tbevents_free(&t), 0);
    char want[64];
    snprintf(want, sizeof want, "/events.out.tfevents.%lld.", ahead + 1);
    cr_expect(strstr(t.path, want) != NULL, "%s does not carry stamp %lld", t.path, ahead + 1);
    cr_expect(strcmp(strrchr(t.path, '/') + 1, strrchr(path, '/') + 1) > 0, "%s sorts before %s", t.path, path);
    unlink(path);
    remove_run(dir);
    free(dir);
}
