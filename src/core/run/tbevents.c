/* SPDX-License-Identifier: MIT */
/* tbevents.c: see tbevents.h.
 *
 * Protobuf wire format, the part used here: a field is a key varint
 * (field_number << 3 | wire_type) and a payload; wire type 0 is a varint
 * (7 bits a byte, least significant group first, high bit set on every byte
 * but the last), 1 is 8 bytes little-endian (double), 2 is a varint length
 * and that many bytes (strings, nested messages), 5 is 4 bytes
 * little-endian (float). A nested message's length must be known before
 * its bytes, so each encoder sizes the Values, then the Summary, then
 * writes from the outside in.
 *
 * The writer encodes the Event at buf + 12 and frames it in place: the 12
 * bytes of length and length CRC go in front, the data CRC after.
 */
#include "tbevents.h"

#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "crc32c.h"

enum { WIRE_VARINT = 0, WIRE_FIXED64 = 1, WIRE_LEN = 2, WIRE_FIXED32 = 5 };
enum { EVENT_WALL_TIME = 1, EVENT_STEP = 2, EVENT_FILE_VERSION = 3, EVENT_SUMMARY = 5, EVENT_SESSION_LOG = 7 };
enum { SUMMARY_VALUE = 1, VALUE_TAG = 1, VALUE_SIMPLE_VALUE = 2, SESSION_LOG_STATUS = 1, SESSION_START = 1 };

#define KEY(field, wire) ((uint64_t)(field) << 3 | (wire))

size_t tbevents_varint(uint8_t *out, uint64_t v) {
    size_t n = 0;
    while (v >= 0x80) {
        out[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    out[n++] = (uint8_t)v;
    return n;
}

static size_t varint_len(uint64_t v) {
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

uint32_t tbevents_masked_crc(const void *data, size_t n) {
    uint32_t crc = crc32c(data, n);
    return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}

static void put_le(uint8_t *out, uint64_t v, int bytes) {
    for (int i = 0; i < bytes; i++) out[i] = (uint8_t)(v >> (8 * i));
}

/* A bounded writer over out[0 .. cap): every put checks the room first,
 * and a Put that ran out stays out (ok false), so an encoder checks once. */
typedef struct {
    uint8_t *out;
    size_t cap, n;
    bool ok;
} Put;

static bool room(Put *p, size_t k) {
    if (p->ok && p->cap - p->n >= k) return true;
    p->ok = false;
    return false;
}
static void put_varint(Put *p, uint64_t v) {
    if (room(p, varint_len(v))) p->n += tbevents_varint(p->out + p->n, v);
}
/* A fixed-width field: its key, then bytes (4 or 8) little-endian. */
static void put_fixed(Put *p, int field, int wire, uint64_t bits, int bytes) {
    put_varint(p, KEY(field, wire));
    if (room(p, (size_t)bytes)) {
        put_le(p->out + p->n, bits, bytes);
        p->n += (size_t)bytes;
    }
}
static void put_double(Put *p, int field, double v) {
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    put_fixed(p, field, WIRE_FIXED64, bits, 8);
}
static void put_float(Put *p, int field, float v) {
    uint32_t bits;
    memcpy(&bits, &v, sizeof bits);
    put_fixed(p, field, WIRE_FIXED32, bits, 4);
}
static void put_bytes(Put *p, int field, const void *s, size_t len) {
    put_varint(p, KEY(field, WIRE_LEN));
    put_varint(p, len);
    if (room(p, len)) {
        memcpy(p->out + p->n, s, len);
        p->n += len;
    }
}
/* wall_time, then step unless 0 (proto3 leaves a default out). */
static void put_head(Put *p, double wall_time, int64_t step) {
    put_double(p, EVENT_WALL_TIME, wall_time);
    if (step != 0) {
        put_varint(p, KEY(EVENT_STEP, WIRE_VARINT));
        put_varint(p, (uint64_t)step); /* int64: two's complement, 10 bytes when negative */
    }
}

size_t tbevents_encode_version(uint8_t *out, size_t cap, double wall_time) {
    Put p = {out, cap, 0, true};
    put_head(&p, wall_time, 0);
    put_bytes(&p, EVENT_FILE_VERSION, TBEVENTS_FILE_VERSION, strlen(TBEVENTS_FILE_VERSION));
    return p.ok ? p.n : 0;
}

/* Bytes of one Value message: tag (key, length, bytes), simple_value
 * (key, 4 bytes). */
static size_t value_len(size_t tag_len) { return 1 + varint_len(tag_len) + tag_len + 1 + 4; }

size_t tbevents_encode_scalars(uint8_t *out, size_t cap, double wall_time, int64_t step, const TbScalar *v, int n) {
    if (n < 1 || n > TBEVENTS_MAX_SCALARS) return 0;
    size_t summary = 0;
    for (int i = 0; i < n; i++) {
        size_t len = strlen(v[i].tag);
        if (len < 1 || len > TBEVENTS_MAX_TAG) return 0;
        summary += 1 + varint_len(value_len(len)) + value_len(len);
    }
    Put p = {out, cap, 0, true};
    put_head(&p, wall_time, step);
    put_varint(&p, KEY(EVENT_SUMMARY, WIRE_LEN));
    put_varint(&p, summary);
    for (int i = 0; i < n; i++) {
        size_t len = strlen(v[i].tag);
        put_varint(&p, KEY(SUMMARY_VALUE, WIRE_LEN));
        put_varint(&p, value_len(len));
        put_bytes(&p, VALUE_TAG, v[i].tag, len);
        put_float(&p, VALUE_SIMPLE_VALUE, (float)v[i].value);
    }
    return p.ok ? p.n : 0;
}

size_t tbevents_encode_start(uint8_t *out, size_t cap, double wall_time, int64_t step) {
    Put p = {out, cap, 0, true};
    put_head(&p, wall_time, step);
    put_varint(&p, KEY(EVENT_SESSION_LOG, WIRE_LEN));
    put_varint(&p, 2); /* the SessionLog: its status field, key and value */
    put_varint(&p, KEY(SESSION_LOG_STATUS, WIRE_VARINT));
    put_varint(&p, SESSION_START);
    return p.ok ? p.n : 0;
}

size_t tbevents_frame(uint8_t *out, size_t cap, const uint8_t *data, size_t n) {
    if (cap < 16 || cap - 16 < n) return 0;
    memmove(out + 12, data, n);
    put_le(out, n, 8);
    put_le(out + 8, tbevents_masked_crc(out, 8), 4);
    put_le(out + 12 + n, tbevents_masked_crc(out + 12, n), 4);
    return n + 16;
}

/* ---- the writer ---- */

static double wall_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Frame the n bytes encoded at buf + 12 and write them. 0, or -1 (errno). */
static int write_record(TbEvents *t, size_t n, bool flush) {
    size_t bytes = tbevents_frame(t->buf, sizeof t->buf, t->buf + 12, n);
    errno = 0;
    if (fwrite(t->buf, 1, bytes, t->f) != bytes || (flush && fflush(t->f) != 0) || ferror(t->f)) {
        if (errno == 0) errno = EIO;
        return -1;
    }
    return 0;
}

int tbevents_check(const char *run_dir, char *err) {
    char dir[PATH_LEN];
    if (snprintf(dir, sizeof dir, "%s/tb", run_dir) >= (int)sizeof dir) return errf(err, "path too long: %s/tb", run_dir);
    struct stat st;
    if (lstat(dir, &st) != 0) {
        if (errno != ENOENT) return errf(err, "cannot use %s: %s", dir, strerror(errno));
        if (access(run_dir, W_OK | X_OK) != 0) return errf(err, "cannot create %s: %s", dir, strerror(errno));
        return 0;
    }
    if (S_ISLNK(st.st_mode)) return err_is_link(err, dir);
    if (!S_ISDIR(st.st_mode)) return errf(err, "cannot use %s: it exists and is not a directory", dir);
    if (access(dir, W_OK | X_OK) != 0) return errf(err, "cannot create a file in %s: %s", dir, strerror(errno));
    return 0;
}

/* The largest timestamp in the names of the event files already in the
 * directory dfd (0 if none). TensorBoard and scripts/tb-dump read a
 * directory's files in name order; a resumed run within the same second
 * as the file before it would otherwise sort by host and then pid as text
 * (pid 10234 before 9876), its rows before the older ones. */
static long long latest_stamp(int dfd) {
    int fd = dup(dfd);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0) close(fd);
        return 0;
    }
    static const char prefix[] = "events.out.tfevents.";
    long long best = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (strncmp(e->d_name, prefix, sizeof prefix - 1) != 0) continue;
        long long ts = strtoll(e->d_name + sizeof prefix - 1, NULL, 10);
        if (ts > best) best = ts;
    }
    closedir(d);
    return best;
}

int tbevents_init(TbEvents *t, const char *run_dir, bool resumed, uint64_t step, char *err) {
    memset(t, 0, sizeof *t);
    char dir[PATH_LEN], host[256];
    if (snprintf(dir, sizeof dir, "%s/tb", run_dir) >= (int)sizeof dir) return errf(err, "path too long: %s/tb", run_dir);
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) return errf(err, "cannot create %s: %s", dir, strerror(errno));
    /* tb/ itself is opened without following a link, and the file created
     * in that descriptor: neither can land outside the run directory. */
    int dfd = open_nofollow(dir, O_RDONLY | O_DIRECTORY, 0, err);
    if (dfd < 0) {
        if (errno == ENOTDIR) errf(err, "cannot use %s: it exists and is not a directory", dir);
        return -1;
    }
    host_name(host, sizeof host, "localhost");
    for (char *c = host; *c; c++)
        if (*c == '/') *c = '_';
    double now = wall_now();
    long long stamp = (long long)now, before = latest_stamp(dfd);
    if (stamp <= before) stamp = before + 1; /* sorts after every file before it */
    int n_path = snprintf(t->path, sizeof t->path, "%s/events.out.tfevents.%lld.%s.%ld", dir, stamp, host,
                          (long)getpid());
    if (n_path >= (int)sizeof t->path) {
        close(dfd);
        return errf(err, "path too long: %s/events.out.tfevents...", dir);
    }
    /* O_EXCL: a file of the same name (same second, host and pid: a second
     * run in this process) is never appended to, nor a link followed. */
    const char *name = t->path + strlen(dir) + 1;
    int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    int open_errno = errno;
    close(dfd);
    t->f = fd >= 0 ? fdopen(fd, "wb") : NULL;
    if (!t->f) {
        if (fd >= 0) {
            open_errno = errno;
            close(fd);
            unlink(t->path);
        }
        return errf(err, "cannot create %s: %s", t->path, strerror(open_errno));
    }
    size_t n = tbevents_encode_version(t->buf + 12, sizeof t->buf - 16, now);
    int rc = write_record(t, n, !resumed);
    if (rc == 0 && resumed) rc = write_record(t, tbevents_encode_start(t->buf + 12, sizeof t->buf - 16, now,
                                                                        (int64_t)step), true);
    if (rc != 0) {
        int e = errno;
        errf(err, "cannot write %s: %s", t->path, strerror(e));
        fclose(t->f);
        t->f = NULL;
        unlink(t->path);
        return -1;
    }
    return 0;
}

int tbevents_scalars(TbEvents *t, uint64_t step, const TbScalar *v, int n, bool flush) {
    TbScalar keep[TBEVENTS_MAX_SCALARS];
    if (n > TBEVENTS_MAX_SCALARS) {
        errno = EOVERFLOW; /* a caller's bug: more values than an event holds */
        return -1;
    }
    int k = 0;
    for (int i = 0; i < n; i++)
        if (!isnan(v[i].value)) keep[k++] = v[i];
    if (k == 0) return flush ? tbevents_flush(t) : 0;
    size_t bytes = tbevents_encode_scalars(t->buf + 12, sizeof t->buf - 16, wall_now(), (int64_t)step, keep, k);
    if (bytes == 0) {
        errno = EOVERFLOW; /* a caller's bug: a tag out of bounds */
        return -1;
    }
    return write_record(t, bytes, flush);
}

int tbevents_flush(TbEvents *t) {
    errno = 0;
    if (fflush(t->f) != 0 || ferror(t->f)) {
        if (errno == 0) errno = EIO;
        return -1;
    }
    return 0;
}

int tbevents_free(TbEvents *t) {
    if (!t->f) return 0;
    int rc = tbevents_flush(t);
    int e = errno;
    if (fclose(t->f) != 0 && rc == 0) {
        rc = -1;
        e = errno;
    }
    t->f = NULL;
    errno = e;
    return rc;
}
