/* SPDX-License-Identifier: MIT */
/* util.c: see util.h. Uses ctx.h (DIE's rank and role) one way: ctx.c
 * does not use util. */
#include "util.h"
#include "ctx.h"
#include "exitcode.h"

#include <ctype.h>
#include <inttypes.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

char *fmt_bytes(char *buf, uint64_t bytes) {
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    double v = (double)bytes;
    int u = 0;
    while (v >= 1024.0 && u < 6) {
        v /= 1024.0;
        u++;
    }
    if (u == 0) snprintf(buf, BYTES_STR_LEN, "%" PRIu64 " B", bytes);
    else snprintf(buf, BYTES_STR_LEN, "%.1f %s", v, unit[u]);
    return buf;
}

/* Exit status 2 (exitcode.h, GORILA_EXIT_USAGE): every buffer is sized from
 * the config at start-up (STYLE.md), so the same config fails the same way
 * again and scripts/launch must not restart it. No Ctx here: under mpirun, a
 * rank that exits non-zero without MPI_Finalize makes mpirun end the whole
 * job, and mpirun exits with the first such status. */
static _Noreturn void oom_named(size_t bytes, const char *what, const char *key, const char *file, int line) {
    char size[BYTES_STR_LEN];
    fmt_bytes(size, bytes);
    if (key)
        fprintf(stderr, "error: %s:%d: out of memory allocating %s (%s): lower %s (gorila config check prints the "
                        "memory plan)\n", file, line, what, size, key);
    else
        fprintf(stderr, "error: %s:%d: out of memory allocating %s (%s) (gorila config check prints the memory "
                        "plan)\n", file, line, what, size);
    fflush(stderr);
    exit(GORILA_EXIT_USAGE);
}

static _Noreturn void oom(size_t bytes, const char *file, int line) {
    char what[64];
    snprintf(what, sizeof what, "%zu bytes", bytes);
    oom_named(bytes, what, NULL, file, line);
}

void *xmalloc_at(size_t bytes, const char *file, int line) {
    void *p = malloc(bytes ? bytes : 1);
    if (!p) oom(bytes, file, line);
    return p;
}

void *xcalloc_at(size_t n, size_t size, const char *file, int line) {
    if (size && n > SIZE_MAX / size) oom(SIZE_MAX, file, line);
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p) oom(n * size, file, line);
    return p;
}

void *xmalloc_aligned_at(size_t bytes, const char *file, int line) {
    if (bytes > SIZE_MAX - 64) oom(bytes, file, line);
    void *p = aligned_alloc(64, round_up(bytes ? bytes : 1, 64));
    if (!p) oom(bytes, file, line);
    return p;
}

void *xmalloc_for_at(size_t bytes, const char *what, const char *key, const char *file, int line) {
    if (bytes > SIZE_MAX - 64) oom_named(bytes, what, key, file, line);
    void *p = aligned_alloc(64, round_up(bytes ? bytes : 1, 64));
    if (!p) oom_named(bytes, what, key, file, line);
    return p;
}

static _Noreturn void die_v(const Ctx *ctx, int code, const char *file, int line, const char *fmt, va_list ap) {
    char msg[1024];
    vsnprintf(msg, sizeof msg, fmt, ap);
    if (ctx && ctx->role != ROLE_TOOL)
        fprintf(stderr, "error: [rank %d %s %d/%d] %s:%d: %s\n", ctx->rank, role_name(ctx->role),
                ctx->index, ctx->count, file, line, msg);
    else
        fprintf(stderr, "error: %s:%d: %s\n", file, line, msg);
    fflush(stderr);
    if (ctx && ctx->abort_job) ctx->abort_job(code);
    exit(code);
}

void die_at(const Ctx *ctx, const char *file, int line, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    die_v(ctx, 1, file, line, fmt, ap);
}

void die_code_at(const Ctx *ctx, int code, const char *file, int line, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    die_v(ctx, code, file, line, fmt, ap);
}

/* A float is NaN or Inf exactly when its 8 exponent bits are all ones.
 * OR-ing flags over integers (no early exit, no float compare) in eight
 * fixed lanes lets -O2 vectorize the loop without -ffast-math (a loop of
 * unknown length with one flag stayed scalar: 7% of a MinAtar local run,
 * which checks its 133k parameters after every step). */
bool floats_finite(const float *x, size_t n) {
    uint32_t bad[8] = {0};
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int k = 0; k < 8; k++) {
            uint32_t u;
            memcpy(&u, &x[i + k], sizeof u);
            bad[k] |= (u & 0x7f800000u) == 0x7f800000u;
        }
    for (; i < n; i++) {
        uint32_t u;
        memcpy(&u, &x[i], sizeof u);
        bad[0] |= (u & 0x7f800000u) == 0x7f800000u;
    }
    return (bad[0] | bad[1] | bad[2] | bad[3] | bad[4] | bad[5] | bad[6] | bad[7]) == 0;
}

int errf(char *err, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, ERR_LEN, fmt, ap);
    va_end(ap);
    return -1;
}

int err_prefix(char *err, const char *fmt, ...) {
    char old[ERR_LEN], pre[ERR_LEN];
    memcpy(old, err, ERR_LEN);
    old[ERR_LEN - 1] = '\0';
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(pre, sizeof pre, fmt, ap);
    va_end(ap);
    /* Truncating a long message is intended; testing the result keeps gcc's
     * -Wformat-truncation (seen at -O1, the ASan build) quiet. */
    if (snprintf(err, ERR_LEN, "%.*s: %s", ERR_LEN / 2, pre, old) >= ERR_LEN) err[ERR_LEN - 1] = '\0';
    return -1;
}

void host_name(char *buf, size_t n, const char *fallback) {
    char name[256]; /* HOST_NAME_MAX + 1 */
    if (gethostname(name, sizeof name - 1) != 0) snprintf(name, sizeof name, "%s", fallback);
    name[sizeof name - 1] = '\0';
    size_t len = strnlen(name, n - 1);
    memcpy(buf, name, len);
    buf[len] = '\0';
}

int parse_u64(const char *s, uint64_t *out, char *err) {
    const char *p = s;
    if (!*p || *p == '-' || *p == '+' || *p == ' ')
        return errf(err, "expected a non-negative integer, got \"%s\"", s);
    errno = 0;
    char *end;
    unsigned long long v = strtoull(p, &end, 10);
    if (end == p || *end != '\0') return errf(err, "expected a non-negative integer, got \"%s\"", s);
    if (errno == ERANGE) return errf(err, "integer \"%s\" is too large", s);
    *out = (uint64_t)v;
    return 0;
}

int parse_int_range(const char *s, long lo, long hi, long *out, char *err) {
    errno = 0;
    char *end;
    long v = strtol(s, &end, 10);
    if (!*s || end == s || *end != '\0' || *s == ' ')
        return errf(err, "expected an integer, got \"%s\"", s);
    if (errno == ERANGE || v < lo || v > hi)
        return errf(err, "expected an integer in [%ld, %ld], got %s", lo, hi, s);
    *out = v;
    return 0;
}

int parse_double(const char *s, double *out, char *err) {
    errno = 0;
    char *end;
    double v = strtod(s, &end);
    if (!*s || end == s || *end != '\0' || *s == ' ') return errf(err, "expected a number, got \"%s\"", s);
    if (errno == ERANGE || !isfinite(v)) return errf(err, "expected a finite number, got \"%s\"", s);
    *out = v;
    return 0;
}

/* Optimal string alignment distance (Damerau-Levenshtein with adjacent
 * transpositions), on strings of at most 63 characters, ignoring ASCII case
 * (so "RUN.SEED" is 0 from "run.seed", and is suggested). */
static int edit_distance(const char *a, const char *b) {
    size_t n = strlen(a), m = strlen(b);
    if (n > 63 || m > 63) return INT_MAX;
    int d[64][64];
    for (size_t i = 0; i <= n; i++) d[i][0] = (int)i;
    for (size_t j = 0; j <= m; j++) d[0][j] = (int)j;
    for (size_t i = 1; i <= n; i++) {
        for (size_t j = 1; j <= m; j++) {
            int cost = tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]);
            int best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best) best = d[i][j - 1] + 1;
            if (d[i - 1][j - 1] + cost < best) best = d[i - 1][j - 1] + cost;
            if (i > 1 && j > 1 && tolower((unsigned char)a[i - 1]) == tolower((unsigned char)b[j - 2]) &&
                tolower((unsigned char)a[i - 2]) == tolower((unsigned char)b[j - 1]) && d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    }
    return d[n][m];
}

const char *did_you_mean(const char *word, const char *const *candidates) {
    const char *best = NULL;
    int best_d = INT_MAX;
    for (size_t i = 0; candidates[i]; i++) {
        /* Never the word itself: "did you mean" what was typed helps no one
         * (a caller whose word matches exactly must say something else). */
        if (!strcmp(word, candidates[i])) continue;
        int dist = edit_distance(word, candidates[i]);
        if (dist < best_d) {
            best_d = dist;
            best = candidates[i];
        }
    }
    /* A plausible typo: at most a third of the word's length, at least 1,
     * at most 3 edits. */
    int limit = (int)strlen(word) / 3;
    if (limit < 1) limit = 1;
    if (limit > 3) limit = 3;
    return best_d <= limit ? best : NULL;
}

int open_tmp_exclusive(const char *tmp_path) {
    if (unlink(tmp_path) != 0 && errno != ENOENT) return -1;
    return open(tmp_path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
}

int err_is_link(char *err, const char *path) {
    return errf(err,
                "cannot open %s: it is a symbolic link (a run writes its files only inside its directory, never "
                "through a link; a link at the run directory or above it is fine)",
                path);
}

int open_nofollow(const char *path, int flags, mode_t mode, char *err) {
    int fd = open(path, flags | O_NOFOLLOW | O_CLOEXEC, mode);
    if (fd >= 0) return fd;
    int e = errno;
    struct stat st;
    /* ELOOP is also a loop of links above the last component: say "link"
     * only when the last component is one. */
    if (e == ELOOP && lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) err_is_link(err, path);
    else errf(err, "cannot open %s: %s", path, strerror(e));
    errno = e;
    return -1;
}

int open_regular(const char *path, const char *what, char *err) {
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) return errf(err, "cannot open %s%s%s: %s", what, *what ? " " : "", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return errf(err, "cannot stat %s: %s", path, strerror(e));
    }
    if (!S_ISREG(st.st_mode)) {
        const char *kind = S_ISDIR(st.st_mode)                            ? "a directory"
                           : S_ISFIFO(st.st_mode)                         ? "a FIFO"
                           : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device"
                           : S_ISSOCK(st.st_mode)                         ? "a socket"
                                                                          : "of another kind";
        close(fd);
        return errf(err, "%s: not a regular file (%s)", path, kind);
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0) {
        int e = errno;
        close(fd);
        return errf(err, "cannot read %s: %s", path, strerror(e));
    }
    return fd;
}

int make_dirs(const char *path, char *err) {
    char tmp[PATH_LEN];
    if (snprintf(tmp, sizeof tmp, "%s", path) >= (int)sizeof tmp) return errf(err, "path too long: %s", path);
    for (char *p = tmp + 1; *p; p++) {
        if (*p != '/') continue;
        *p = '\0';
        if (mkdir(tmp, 0777) != 0 && errno != EEXIST)
            return errf(err, "cannot create directory %s: %s", tmp, strerror(errno));
        *p = '/';
    }
    if (mkdir(tmp, 0777) != 0 && errno != EEXIST)
        return errf(err, "cannot create directory %s: %s", tmp, strerror(errno));
    struct stat st;
    if (stat(tmp, &st) != 0 || !S_ISDIR(st.st_mode)) return errf(err, "%s exists and is not a directory", tmp);
    return 0;
}

uint64_t random_id(void) {
    uint64_t id = 0;
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        if (read(fd, &id, sizeof id) != (ssize_t)sizeof id) id = 0;
        close(fd);
    }
    if (id == 0) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        id = ((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec) ^ ((uint64_t)getpid() << 32);
    }
    return id ? id : 1;
}

int read_small_file(const char *path, const char *what, char *text, size_t cap, char *err) {
    text[0] = '\0';
    int fd = open_regular(path, what, err);
    if (fd < 0) return -1;
    size_t n = 0;
    while (n < cap - 1) {
        ssize_t got = read(fd, text + n, cap - 1 - n);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) {
            int e = errno;
            close(fd);
            text[0] = '\0';
            return errf(err, "cannot read %s: %s", path, strerror(e));
        }
        if (got == 0) break;
        n += (size_t)got;
    }
    close(fd);
    text[n] = '\0';
    return 0;
}

void fsync_parent_dir(const char *path) {
    char dir[PATH_LEN + 16];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash) *slash = '\0';
    int dfd = open(slash ? dir : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        fsync(dfd);
        close(dfd);
    }
}
