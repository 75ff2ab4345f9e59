/* SPDX-License-Identifier: MIT */
/* runlog.c: see runlog.h.
 *
 * The lock is a flock on <run>/lock, not the file's existence: the kernel
 * drops it when the holder exits, however it exits (kill -9, a node
 * reboot), so a stale lock file never blocks a resume. flock locks belong
 * to the open file description, so even a second open in the same process
 * conflicts. The file's text (pid, host) is only for the message.
 *
 * Write errors: stdio reports a failed write only at the flush that makes
 * it (or in ferror afterwards), so every check looks at both; errno is
 * cleared first so that the message names the cause of this failure.
 */
#include "runlog.h"
#include "exitcode.h"
#include "platform.h"
#include "runckpt.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

void runlog_path(const RunLog *rl, const char *name, char *out) {
    /* runlog_init keeps dir 64 bytes short of the limit, so names up to 63
     * characters always fit; a longer one is cut, never overflows. */
    if (snprintf(out, PATH_LEN, "%s/%s", rl->dir, name) >= PATH_LEN) out[PATH_LEN - 1] = '\0';
}

/* Record a write failure of <dir>/name (the first one is kept). Returns -1. */
static int log_fail(RunLog *rl, const char *name, const char *step, int e) {
    if (!rl->failed) {
        char path[PATH_LEN];
        runlog_path(rl, name, path);
        errf(rl->fail_err, "cannot write %s: %s%s%s", path, step, *step ? ": " : "", strerror(e ? e : EIO));
        rl->failed = true;
    }
    return -1;
}

/* Flush f (<dir>/name) and check that nothing written to it has failed. */
static int check_stream(RunLog *rl, FILE *f, const char *name) {
    if (fflush(f) != 0 || ferror(f)) return log_fail(rl, name, "", errno);
    return 0;
}

/* The last '\n' in bytes [lo, hi) of fd, read backwards in chunks of buf
 * (cap bytes): its offset in *pos, or lo - 1 when there is none; *commas
 * (when not NULL) counts the commas after it, up to hi. 0, or -1 (errno). */
static int last_newline(int fd, off_t lo, off_t hi, char *buf, size_t cap, off_t *pos, long *commas) {
    long c = 0;
    for (off_t end = hi; end > lo;) {
        size_t n = (size_t)(end - lo) < cap ? (size_t)(end - lo) : cap;
        off_t at = end - (off_t)n;
        if (pread(fd, buf, n, at) != (ssize_t)n) {
            if (errno == 0) errno = EIO;
            return -1;
        }
        for (size_t i = n; i-- > 0;) {
            if (buf[i] == '\n') {
                *pos = at + (off_t)i;
                if (commas) *commas = c;
                return 0;
            }
            c += buf[i] == ',';
        }
        end = at;
    }
    *pos = lo - 1;
    if (commas) *commas = c;
    return 0;
}

/* A resumed run appends to its CSVs, so a row torn by a failed write (a
 * full disk, a kill in the middle of a flush) would have the next row
 * glued onto it. Every row is written with its newline and a torn write
 * keeps only a prefix of the bytes, so what follows the last newline is
 * torn; and when the file's header is the one this run writes, a last line
 * with another field count is damaged too (a row merged by an older
 * resume), so the file is cut back until its last line has the header's
 * field count. Under another header (columns of another build), only the
 * unterminated tail is cut, never complete lines. A torn header leaves the
 * file empty (the header is written again). Warns on stderr with the bytes
 * cut. 0, or -1 with err. */
static int trim_csv(const char *path, const char *header, char *err) {
    /* Only a regular file is cut; anything else (a FIFO, a device such as
     * a /dev/full that stands in for a full disk) is left to the append
     * that follows, which reports its own failure. */
    int fd = open_nofollow(path, O_RDWR | O_NONBLOCK | O_NOCTTY, 0, err);
    if (fd < 0) return errno == ENOENT ? 0 : -1;
    struct stat kind;
    if (fstat(fd, &kind) != 0 || !S_ISREG(kind.st_mode)) {
        close(fd);
        return 0;
    }
    size_t cap = 64 * 1024, hlen = strlen(header);
    char *buf = xmalloc(cap > hlen ? cap : hlen);
    struct stat st;
    off_t size = 0, end = 0, hdr_end = 0;
    int rc = -1;
    errno = 0;
    if (fstat(fd, &st) != 0) goto io;
    size = st.st_size;
    size_t got = (size_t)size < hlen ? (size_t)size : hlen;
    if (pread(fd, buf, got, 0) != (ssize_t)got) goto io;
    bool same_header = got == hlen && memcmp(buf, header, hlen) == 0;
    if (!same_header && got < hlen && memcmp(buf, header, got) == 0) {
        end = 0; /* the header itself was torn */
    } else {
        /* The unterminated tail (anything after the last newline). */
        if (last_newline(fd, 0, size, buf, cap, &end, NULL) != 0) goto io;
        end += 1;
        hdr_end = same_header ? (off_t)hlen : end;
        long fields = 1;
        for (const char *h = header; *h; h++) fields += *h == ',';
        /* Then whole lines with the wrong field count, from the back. */
        while (end > hdr_end) {
            off_t prev;
            long commas;
            if (last_newline(fd, hdr_end, end - 1, buf, cap, &prev, &commas) != 0) goto io;
            if (commas + 1 == fields) break;
            end = prev + 1;
        }
    }
    if (end < size) {
        if (ftruncate(fd, end) != 0) goto io;
        fprintf(stderr, "gorila: warning: %s: cut %lld bytes after its last complete row (torn by an earlier failed "
                "write)\n", path, (long long)(size - end));
    }
    rc = 0;
    goto done;
io:
    errf(err, "cannot repair %s (cutting a torn last row): %s", path, strerror(errno ? errno : EIO));
done:
    free(buf);
    close(fd);
    return rc;
}

/* Where the env_steps cell of line (len bytes, no newline) starts: its
 * field number col (0-based). NULL when the line has fewer fields. */
static const char *field_at(const char *line, size_t len, int col, size_t *flen) {
    const char *p = line, *end = line + len;
    for (int i = 0; i < col; i++) {
        const char *c = memchr(p, ',', (size_t)(end - p));
        if (!c) return NULL;
        p = c + 1;
    }
    const char *c = memchr(p, ',', (size_t)(end - p));
    *flen = (size_t)((c ? c : end) - p);
    return p;
}

/* The field number of the column called name in a header line, or -1. */
static int header_column(const char *line, size_t len, const char *name) {
    size_t want = strlen(name);
    for (int col = 0;; col++) {
        size_t n;
        const char *f = field_at(line, len, col, &n);
        if (!f) return -1;
        if (n > 0 && f[n - 1] == '\r') n--;
        if (n == want && memcmp(f, name, want) == 0) return col;
    }
}

/* Whether field col of a row (len bytes, no newline) is a whole number
 * above bound. A cell that is missing or not a number is no count: false. */
static bool cell_above(const char *line, size_t len, int col, uint64_t bound) {
    size_t n;
    const char *f = field_at(line, len, col, &n);
    if (!f || n == 0) return false;
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (f[i] < '0' || f[i] > '9') return false;
        uint64_t d = (uint64_t)(f[i] - '0');
        if (v > (UINT64_MAX - d) / 10) return true; /* above any count */
        v = v * 10 + d;
    }
    return v > bound;
}

/* The columns a cut reads (cut_scan): env_steps' and, when the point
 * bounds the updates and the file has the column, updates' (else -1). */
typedef struct {
    int steps, updates;
} CutCols;

/* Whether a row was logged after the point: its env_steps above
 * at->env_steps, or its updates above at->updates (parameters newer than
 * the checkpoint's). A row without a count in a cell is judged by the
 * other: a row of no count at all is no row of this build and is kept. */
static bool logged_after(const char *line, size_t len, CutCols c, const RunlogCutPoint *at) {
    return cell_above(line, len, c.steps, at->env_steps) ||
           (c.updates >= 0 && cell_above(line, len, c.updates, at->updates));
}

/* What one pass over a CSV found (cut_scan). */
typedef struct {
    CutCols col;             /* col.steps -1: no env_steps column */
    uint64_t dropped;        /* rows logged after the point */
    uint64_t by_updates;     /* of those, rows at or below its env steps (updates above its) */
    off_t keep_end;          /* the end of the last row kept (or of the header) */
    bool interleaved;        /* a row kept follows a row dropped */
} CutScan;

/* Read f from its start and fill s for the point at. 0, or -1 (errno). */
static int cut_scan(FILE *f, const RunlogCutPoint *at, CutScan *s) {
    *s = (CutScan){.col = {-1, -1}};
    char *line = NULL;
    size_t cap = 0;
    off_t pos = 0;
    errno = 0;
    ssize_t n = getline(&line, &cap, f);
    if (n > 0) {
        size_t len = (size_t)n - (line[n - 1] == '\n');
        s->col.steps = header_column(line, len, "env_steps");
        s->col.updates = at->updates == UINT64_MAX ? -1 : header_column(line, len, "updates");
        pos = s->keep_end = (off_t)n;
    }
    while (s->col.steps >= 0 && (n = getline(&line, &cap, f)) > 0) {
        size_t len = (size_t)n - (line[n - 1] == '\n');
        if (logged_after(line, len, s->col, at)) {
            s->dropped++;
            s->by_updates += !cell_above(line, len, s->col.steps, at->env_steps);
        } else {
            s->interleaved |= s->dropped > 0;
            s->keep_end = pos + (off_t)n;
        }
        pos += (off_t)n;
    }
    free(line);
    return ferror(f) ? -1 : 0;
}

/* Write the header and the rows kept of f (read from its start) into
 * path's temporary file, sync it, and rename it over path. The file is
 * replaced whole, never half-cut: a crash leaves the old one or the new
 * one. 0, or -1 (errno). */
static int cut_rewrite(FILE *f, const char *path, CutCols col, const RunlogCutPoint *at) {
    char tmp[PATH_LEN + 16];
    if (snprintf(tmp, sizeof tmp, "%s.cut.tmp", path) >= (int)sizeof tmp) {
        errno = ENAMETOOLONG;
        return -1;
    }
    int fd = open_tmp_exclusive(tmp);
    FILE *out = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!out) {
        if (fd >= 0) close(fd);
        return -1;
    }
    rewind(f);
    char *line = NULL;
    size_t cap = 0;
    bool header = true;
    ssize_t n;
    errno = 0;
    while ((n = getline(&line, &cap, f)) > 0) {
        if (header || !logged_after(line, (size_t)n - (line[n - 1] == '\n'), col, at))
            fwrite(line, 1, (size_t)n, out);
        header = false;
    }
    free(line);
    int e = 0;
    if (ferror(f) || fflush(out) != 0 || ferror(out) || fsync(fileno(out)) != 0) e = errno ? errno : EIO;
    if (fclose(out) != 0 && !e) e = errno;
    if (!e && rename(tmp, path) != 0) e = errno;
    if (e) {
        unlink(tmp);
        errno = e;
        return -1;
    }
    fsync_parent_dir(path); /* the rename itself made durable */
    return 0;
}

int runlog_cut_after(const char *path, const RunlogCutPoint *at, uint64_t *dropped, uint64_t *by_updates,
                     char *err) {
    *dropped = *by_updates = 0;
    int fd = open_nofollow(path, O_RDWR | O_NONBLOCK | O_NOCTTY, 0, err);
    if (fd < 0) return errno == ENOENT ? 0 : -1;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) { /* as trim_csv: only a regular file is cut */
        close(fd);
        return 0;
    }
    FILE *f = fdopen(fd, "r");
    if (!f) {
        close(fd);
        return errf(err, "cannot read %s: %s", path, strerror(errno));
    }
    CutScan s;
    int rc = cut_scan(f, at, &s);
    if (rc == 0 && s.dropped > 0) {
        /* The common case, every row after the point at the end: cut the
         * tail in place, as trim_csv does. Rows of several actors or of an
         * older overlapping resume can interleave: then rewrite the file. */
        errno = 0;
        rc = s.interleaved ? cut_rewrite(f, path, s.col, at) : ftruncate(fd, s.keep_end);
    }
    int e = errno;
    fclose(f);
    if (rc != 0)
        return errf(err, "cannot cut %s back to its checkpoint (rows logged after env step %" PRIu64 "): %s", path,
                    at->env_steps, strerror(e ? e : EIO));
    *dropped = s.dropped;
    *by_updates = s.by_updates;
    return 0;
}

/* The checkpoint a resume continues from (open_dir): its counters and its
 * directory's name, "ckpt-000004". */
typedef struct {
    RunlogCutPoint point;
    char name[64];
} ResumePoint;

/* A resume continues from its checkpoint, so the rows the earlier segment
 * logged after it are of a stretch of training that was thrown away, and
 * the resumed segment logs that range again: they are cut, with a line on
 * stderr. A row goes when either counter the resumed segment counts on
 * from is past the checkpoint's. Its env_steps: a row's and the
 * manifest's are the same counter (the local trainer's, or the
 * coordinator's job total read when the checkpoint was requested). Its
 * updates (metrics.csv, eval.csv), when the checkpoint holds the live
 * parameters: a row logged before the request carries a version at most
 * the one the checkpoint saved (source 0 writes after the request; metrics
 * rows carry its version as last reported), so one above it was logged
 * after the request, of parameters the resume throws away, however its
 * env steps stand (they stop between two actor reports, and for good when
 * an actor dies; an evaluation can follow the request within one). A
 * checkpoint of evaluated parameters (eval_episodes > 0: a distributed
 * snapshot, legitimately older than rows before it; or a local one, whose
 * version is the live one) is cut by env steps alone. Not wall_seconds:
 * the manifest's is taken at the commit, and the CSVs print it rounded.
 * Rows at or below both stay, so a resume that only runs the owed
 * held-out test (test-pending) cuts nothing. 0, or -1 with err. */
static int cut_to_checkpoint(const char *path, const ResumePoint *at, char *err) {
    uint64_t dropped, by_updates;
    if (runlog_cut_after(path, &at->point, &dropped, &by_updates, err) != 0) return -1;
    if (dropped == 0) return 0;
    char also[64] = "";
    if (by_updates > 0) snprintf(also, sizeof also, ", or updates > %" PRIu64, at->point.updates);
    fprintf(stderr, "gorila: resume: %s: dropped %" PRIu64 " row%s logged after checkpoint %s (env steps > %" PRIu64
            "%s)\n", path, dropped, dropped == 1 ? "" : "s", at->name, at->point.env_steps, also);
    return 0;
}

/* Open <dir>/name for writing, appending (a resume from the checkpoint at:
 * after trim_csv and cut_to_checkpoint) or new (at NULL), never through a
 * link (open_nofollow): a CSV replaced by a link to another file is
 * refused, not appended to, cut or replaced. */
static FILE *open_csv(RunLog *rl, const char *name, const ResumePoint *at, const char *header, char *err) {
    char path[PATH_LEN];
    runlog_path(rl, name, path);
    bool append = at != NULL;
    if (append && (trim_csv(path, header, err) != 0 || cut_to_checkpoint(path, at, err) != 0)) return NULL;
    int fd = open_nofollow(path, O_WRONLY | O_CREAT | (append ? O_APPEND : O_TRUNC), 0666, err);
    struct stat st;
    bool has_rows = fd >= 0 && append && fstat(fd, &st) == 0 && st.st_size > 0;
    FILE *f = fd >= 0 ? fdopen(fd, append ? "a" : "w") : NULL;
    if (!f) {
        if (fd >= 0) {
            errf(err, "cannot open %s: %s", path, strerror(errno));
            close(fd);
        }
        return NULL;
    }
    errno = 0;
    if (!has_rows) fputs(header, f);
    if (fflush(f) != 0 || ferror(f)) {
        errf(err, "cannot write %s: %s", path, strerror(errno ? errno : EIO));
        fclose(f);
        return NULL;
    }
    return f;
}

/* The message of a run directory held by another process: its holder
 * from the lock file's text when it has one. Returns GORILA_EXIT_LOCKED. */
static int in_use(const RunLog *rl, const char *text, char *err) {
    long pid = 0;
    char host[256] = "";
    if (sscanf(text, "%ld %255s", &pid, host) == 2)
        errf(err, "run directory %s is in use by process %ld on %s (another job or resume is running)", rl->dir, pid,
             host);
    else
        errf(err, "run directory %s is in use by another process (another job or resume is running)", rl->dir);
    return GORILA_EXIT_LOCKED;
}

/* Flock the run directory itself (exclusive, non-blocking), beside the
 * lock file: a lock file removed while its job runs lets a second job take
 * a new one, but not the directory, which is the same inode for both. The
 * lock file's holder message stays the first answer; this is the
 * fallback. 0, or an exit status with err. */
static int lock_dir(RunLog *rl, char *err) {
    int fd = open(rl->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        errf(err, "cannot open the run directory %s: %s", rl->dir, strerror(errno));
        return GORILA_EXIT_LOG_WRITE;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        int e = errno;
        close(fd);
        if (e == EWOULDBLOCK) return in_use(rl, "", err);
        errf(err, "cannot lock the run directory %s: %s", rl->dir, strerror(e));
        return GORILA_EXIT_LOG_WRITE;
    }
    rl->dir_fd = fd;
    return 0;
}

/* Take <dir>/lock (flock, exclusive, non-blocking) and the directory's own
 * flock (lock_dir), and write "PID HOST" into the lock file. 0, or an
 * exit status with err. */
static int take_lock(RunLog *rl, char *err) {
    char path[PATH_LEN];
    runlog_path(rl, "lock", path);
    int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) {
        /* The first file made in the run directory: a directory that
         * cannot take one is a set-up fault (README "Exit statuses"). */
        errf(err, "cannot open the lock file %s: %s", path, strerror(errno));
        return GORILA_EXIT_USAGE;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        int e = errno;
        if (e != EWOULDBLOCK) {
            close(fd);
            errf(err, "cannot lock %s: %s", path, strerror(e));
            return GORILA_EXIT_LOG_WRITE;
        }
        char text[320] = "";
        ssize_t got = pread(fd, text, sizeof text - 1, 0);
        close(fd);
        text[got > 0 ? got : 0] = '\0';
        return in_use(rl, text, err);
    }
    int rc = lock_dir(rl, err);
    if (rc) {
        close(fd);
        return rc;
    }
    char host[256];
    host_name(host, sizeof host, "unknown");
    char text[320];
    int n = snprintf(text, sizeof text, "%ld %s\n", (long)getpid(), host);
    if (ftruncate(fd, 0) != 0 || pwrite(fd, text, (size_t)n, 0) != n) {
        int e = errno;
        close(fd);
        close(rl->dir_fd);
        rl->dir_fd = -1;
        errf(err, "cannot write the lock file %s: %s", path, strerror(e));
        return GORILA_EXIT_LOG_WRITE;
    }
    rl->lock_fd = fd;
    rl->locked = true;
    return 0;
}

/* The run directory and its lock (the part of runlog_init before any file
 * is written); resumed, the checkpoint it continues from in at. 0 or an
 * exit status with err. */
static int open_dir(RunLog *rl, const Config *cfg, const char *resume_dir, ResumePoint *at, char *err) {
    if (resume_dir) {
        if (snprintf(rl->dir, sizeof rl->dir, "%s", resume_dir) >= (int)sizeof rl->dir - 64) {
            errf(err, "run directory path too long");
            return GORILA_EXIT_USAGE;
        }
        int rc = take_lock(rl, err);
        if (rc) return rc;
        /* Checkpoints are written under checkpoints/ by path (several
         * ranks, several files): a link there would take them outside the
         * run directory, so it is refused now, not at the first commit. */
        char ck[PATH_LEN];
        struct stat st;
        runlog_path(rl, "checkpoints", ck);
        if (lstat(ck, &st) == 0 && S_ISLNK(st.st_mode)) {
            err_is_link(err, ck);
            return GORILA_EXIT_LOG_WRITE;
        }
        /* Under the lock, so that no other job moves latest meanwhile. */
        RunCkptManifest m;
        if (runckpt_find_latest(rl->dir, &m, NULL, err) != 0) {
            err_prefix(err, "cannot resume %s", rl->dir);
            return GORILA_EXIT_CKPT_READ;
        }
        rl->run_id = m.run_id;
        /* The checkpoint the trainer or the job resumes from: the same
         * choice (runckpt_latest), past a damaged one as there. */
        at->point.env_steps = m.env_steps;
        at->point.updates = m.eval_episodes > 0 ? UINT64_MAX : m.updates; /* cut_to_checkpoint */
        /* episodes.csv numbers the run's episodes: on from the checkpoint's
         * count, as the rows cut back to it leave them. */
        rl->n_episodes = m.episodes;
        snprintf(at->name, sizeof at->name, "ckpt-%06" PRIu64, m.seq);
        runckpt_drop_above(rl->dir, m.seq, cfg->checkpoint.keep_abandoned); /* the line a fallback abandons */
        /* A run made before run_id files: it takes its checkpoint's id. */
        uint64_t own;
        int has = runckpt_run_id(rl->dir, &own, err);
        if (has < 0) return GORILA_EXIT_CKPT_READ;
        if (has == 1 && runckpt_save_run_id(rl->dir, rl->run_id, err) != 0) return GORILA_EXIT_LOG_WRITE;
        return 0;
    }
    /* An out_dir that cannot be made or is not a directory, like a run
     * directory that cannot be created in it, is a set-up fault: exit 2
     * (README "Exit statuses"), not a log write failing mid-run. */
    if (make_dirs(cfg->run.out_dir, err) != 0) {
        err_prefix(err, "run.out_dir");
        return GORILA_EXIT_USAGE;
    }
    char name[CFG_NAME_LEN + 64];
    config_run_dir_name(cfg, name, sizeof name);
    for (int k = 1;; k++) {
        int n = k == 1 ? snprintf(rl->dir, sizeof rl->dir, "%s/%s", cfg->run.out_dir, name)
                       : snprintf(rl->dir, sizeof rl->dir, "%s/%s-%d", cfg->run.out_dir, name, k);
        if (n >= (int)sizeof rl->dir - 64) {
            errf(err, "run directory path too long");
            return GORILA_EXIT_USAGE;
        }
        if (mkdir(rl->dir, 0777) == 0) break;
        if (errno != EEXIST) {
            errf(err, "run.out_dir: cannot create run directory %s: %s", rl->dir, strerror(errno));
            return GORILA_EXIT_USAGE;
        }
        if (k > 9999) {
            errf(err, "too many runs named %s in %s", name, cfg->run.out_dir);
            return GORILA_EXIT_USAGE;
        }
    }
    rl->run_id = random_id();
    int rc = take_lock(rl, err);
    if (rc) return rc;
    /* The directory records its run, so that a checkpoint copied in from
     * another run is refused (runckpt_latest). */
    if (runckpt_save_run_id(rl->dir, rl->run_id, err) != 0) return GORILA_EXIT_LOG_WRITE;
    return 0;
}

int runlog_init(RunLog *rl, const Config *cfg, const char *resume_dir, const char *const *extra_names,
                int n_extra, char *err) {
    memset(rl, 0, sizeof *rl);
    if (n_extra > RUNLOG_MAX_EXTRA) {
        errf(err, "too many metrics columns (%d)", n_extra);
        return GORILA_EXIT_USAGE;
    }
    rl->n_extra = n_extra;
    for (int i = 0; i < n_extra; i++) snprintf(rl->extra[i], sizeof rl->extra[i], "%s", extra_names[i]);
    bool resume = resume_dir != NULL;
    ResumePoint at = {0};
    int rc = open_dir(rl, cfg, resume_dir, &at, err);
    if (rc) goto fail;
    rc = GORILA_EXIT_LOG_WRITE;
    char path[PATH_LEN];
    runlog_path(rl, "config.yaml", path);
    if (!resume) {
        int fd = open_nofollow(path, O_WRONLY | O_CREAT | O_TRUNC, 0666, err);
        FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
        if (!f) {
            if (fd >= 0) {
                errf(err, "cannot write %s: %s", path, strerror(errno));
                close(fd);
            }
            goto fail;
        }
        errno = 0;
        config_write(cfg, f);
        bool bad = fflush(f) != 0 || ferror(f);
        int e = errno;
        if (fclose(f) != 0 && !bad) {
            bad = true;
            e = errno;
        }
        if (bad) {
            errf(err, "cannot write %s: %s", path, strerror(e ? e : EIO));
            goto fail;
        }
    }
    char header[4096];
    int n = snprintf(header, sizeof header,
                     "wall_seconds,env_steps,updates,env_steps_per_second,updates_per_second,"
                     "mean_train_return,last_eval_return,epsilon,loss");
    for (int i = 0; i < n_extra && n < (int)sizeof header - 64; i++)
        n += snprintf(header + n, sizeof header - (size_t)n, ",%s", rl->extra[i]);
    snprintf(header + n, sizeof header - (size_t)n, "\n");
    const ResumePoint *from = resume ? &at : NULL;
    rl->metrics = open_csv(rl, "metrics.csv", from, header, err);
    if (!rl->metrics) goto fail;
    rl->episodes = open_csv(rl, "episodes.csv", from, "wall_seconds,env_steps,actor,episode,return,length\n", err);
    if (!rl->episodes) goto fail;
    rl->eval = open_csv(rl, "eval.csv", from,
                        "wall_seconds,env_steps,updates,episodes,mean_return,std_return,min_return,max_return,"
                        "solved\n",
                        err);
    if (!rl->eval) goto fail;
    rl->progress_tty = isatty(STDERR_FILENO);
    rl->progress_on = cfg->logging.progress == PROGRESS_ALWAYS ||
                      (cfg->logging.progress == PROGRESS_AUTO);
    rl->progress_every = rl->progress_tty ? 0.5 : (cfg->logging.interval_seconds > 5 ? cfg->logging.interval_seconds : 5);
    rl->progress_last = -1e30;
    return 0;
fail:
    runlog_free(rl);
    return rc;
}

static void close_csv(RunLog *rl, FILE **f, const char *name) {
    if (!*f) return;
    errno = 0;
    if (fclose(*f) != 0) log_fail(rl, name, "closing", errno);
    *f = NULL;
}

/* Record a write failure of the events file (the first failure is kept).
 * Its name is long (host, pid), so the message gives its whole path. */
static int tb_fail(RunLog *rl, int e) {
    if (!rl->failed) {
        errf(rl->fail_err, "cannot write %s: %s", rl->tb.path, strerror(e ? e : EIO));
        rl->failed = true;
    }
    return -1;
}

void runlog_free(RunLog *rl) {
    runlog_progress_done(rl);
    close_csv(rl, &rl->metrics, "metrics.csv");
    close_csv(rl, &rl->episodes, "episodes.csv");
    close_csv(rl, &rl->eval, "eval.csv");
    if (rl->tb_on && tbevents_free(&rl->tb) != 0) tb_fail(rl, errno);
    rl->tb_on = false;
    if (rl->locked) {
        close(rl->lock_fd); /* releases the flocks */
        close(rl->dir_fd);
    }
    rl->locked = false;
    rl->lock_fd = rl->dir_fd = -1;
}

bool runlog_failed(const RunLog *rl) { return rl->failed; }

int runlog_tensorboard(RunLog *rl, bool resumed, uint64_t step, char *err) {
    if (tbevents_init(&rl->tb, rl->dir, resumed, step, err) != 0) {
        err_prefix(err, "logging.tensorboard");
        return GORILA_EXIT_USAGE;
    }
    rl->tb_on = true;
    return 0;
}

int runlog_scalars(RunLog *rl, uint64_t step, const TbScalar *v, int n, bool flush) {
    if (!rl->tb_on) return rl->failed ? -1 : 0;
    if (tbevents_scalars(&rl->tb, step, v, n, flush) != 0) tb_fail(rl, errno);
    return rl->failed ? -1 : 0;
}

/* A cell: empty for NaN; an integral value (a counter: bytes, transitions)
 * in full as an integer, never 5.22218e+06; anything else to 6 digits. */
static void cell(FILE *f, double v) {
    if (!isfinite(v)) fputc(',', f);
    else if (v == floor(v) && fabs(v) < 9007199254740992.0) fprintf(f, ",%.0f", v);
    else fprintf(f, ",%.6g", v);
}

int runlog_metrics(RunLog *rl, const MetricsRow *r, const double *extra) {
    FILE *f = rl->metrics;
    errno = 0;
    fprintf(f, "%.3f,%" PRIu64 ",%" PRIu64, r->wall_seconds, r->env_steps, r->updates);
    cell(f, r->env_steps_per_second);
    cell(f, r->updates_per_second);
    cell(f, r->mean_train_return);
    cell(f, r->last_eval_return);
    cell(f, r->epsilon);
    cell(f, r->loss);
    for (int i = 0; i < rl->n_extra; i++) cell(f, extra[i]);
    fputc('\n', f);
    check_stream(rl, f, "metrics.csv");
    return rl->failed ? -1 : 0;
}

int runlog_episode(RunLog *rl, double wall_seconds, uint64_t env_steps, int actor, double ret, int length) {
    errno = 0;
    if (fprintf(rl->episodes, "%.3f,%" PRIu64 ",%d,%" PRIu64 ",%.10g,%d\n", wall_seconds, env_steps, actor,
                rl->n_episodes, ret, length) < 0 ||
        ferror(rl->episodes))
        log_fail(rl, "episodes.csv", "", errno);
    rl->n_episodes++;
    return rl->failed ? -1 : 0;
}

int runlog_eval(RunLog *rl, const EvalRow *r) {
    errno = 0;
    fprintf(rl->eval, "%.3f,%" PRIu64 ",%" PRIu64 ",%d,%.10g,%.10g,%.10g,%.10g,%d\n", r->wall_seconds,
            r->env_steps, r->updates, r->episodes, r->mean, r->std, r->min,
            r->max, r->solved ? 1 : 0);
    check_stream(rl, rl->eval, "eval.csv");
    errno = 0;
    check_stream(rl, rl->episodes, "episodes.csv");
    return rl->failed ? -1 : 0;
}

FILE *runlog_summary_begin(RunLog *rl, char *err) {
    char path[PATH_LEN];
    runlog_path(rl, "summary.json.tmp", path);
    int fd = open_tmp_exclusive(path);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
        int e = errno;
        if (fd >= 0) {
            close(fd);
            unlink(path);
        }
        log_fail(rl, "summary.json.tmp", "creating it", e);
        errf(err, "cannot write %s: %s", path, strerror(e));
    }
    return f;
}

int runlog_summary_commit(RunLog *rl, FILE *f, char *err) {
    char tmp[PATH_LEN], path[PATH_LEN];
    runlog_path(rl, "summary.json.tmp", tmp);
    runlog_path(rl, "summary.json", path);
    const char *step = NULL;
    int e = 0;
    errno = 0;
    if (fflush(f) != 0 || ferror(f)) step = "writing";
    else if (fsync(fileno(f)) != 0) step = "syncing";
    e = errno;
    if (fclose(f) != 0 && !step) {
        step = "closing";
        e = errno;
    }
    if (step) {
        unlink(tmp);
        log_fail(rl, "summary.json.tmp", step, e);
        return errf(err, "cannot write %s: %s it: %s", tmp, step, strerror(e ? e : EIO));
    }
    if (rename(tmp, path) != 0) {
        e = errno;
        unlink(tmp);
        log_fail(rl, "summary.json", "renaming summary.json.tmp over it", e);
        return errf(err, "cannot rename %s to %s: %s", tmp, path, strerror(e));
    }
    int dfd = open(rl->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0 || fsync(dfd) != 0) {
        e = errno;
        if (dfd >= 0) close(dfd);
        log_fail(rl, "summary.json", "syncing its directory", e);
        return errf(err, "%s was written, but syncing its directory %s failed: %s", path, rl->dir, strerror(e));
    }
    close(dfd);
    return 0;
}

bool runlog_progress_due(const RunLog *rl, double wall, bool force) {
    return force || (rl->progress_on && wall - rl->progress_last >= rl->progress_every);
}

void runlog_progress(RunLog *rl, double wall, bool force, const char *fmt, ...) {
    if (!runlog_progress_due(rl, wall, force)) return;
    rl->progress_last = wall;
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if (n >= (int)sizeof line) n = (int)sizeof line - 1;
    if (rl->progress_tty) {
        /* Rewrite in place; pad to erase a longer previous line. */
        int pad = rl->progress_len > n ? rl->progress_len - n : 0;
        fprintf(stderr, "\r%s%*s", line, pad, "");
        rl->progress_len = n;
        if (force) runlog_progress_done(rl);
    } else {
        fprintf(stderr, "%s\n", line);
    }
    fflush(stderr);
}

void runlog_progress_done(RunLog *rl) {
    if (rl->progress_tty && rl->progress_len > 0) {
        fputc('\n', stderr);
        fflush(stderr);
    }
    rl->progress_len = 0;
}

void recent_add(RecentReturns *r, double ret) {
    r->ret[r->next] = ret;
    r->next = (r->next + 1) % RUNLOG_RECENT;
    if (r->n < RUNLOG_RECENT) r->n++;
}

double recent_mean(const RecentReturns *r) {
    if (r->n == 0) return NAN;
    double s = 0;
    for (int i = 0; i < r->n; i++) s += r->ret[i];
    return s / r->n;
}

void evaltrack_init(EvalTrack *t, double threshold) {
    memset(t, 0, sizeof *t);
    t->threshold = threshold;
    t->last = t->best = NAN;
}

bool evaltrack_record(EvalTrack *t, double mean, uint64_t env_steps, uint64_t version, double wall_seconds) {
    t->evaluations++;
    t->last = mean;
    t->last_was_best = t->evaluations == 1 || isnan(t->best) || mean > t->best;
    if (t->last_was_best) {
        t->best = mean;
        t->best_env_steps = env_steps;
        t->best_version = version;
        t->best_seconds = wall_seconds;
    }
    bool solved_now = mean >= t->threshold;
    if (solved_now && !t->solved) {
        t->solved = true;
        t->solved_at_env_steps = env_steps;
        t->solved_at_version = version;
        t->solved_at_seconds = wall_seconds;
    }
    return solved_now;
}

static void str_or_null(JsonW *j, const char *key, const char *v) {
    if (v) json_str(j, key, v);
    else json_null(j, key);
}

void runlog_summary_fields(JsonW *j, const RunSummary *s) {
    const EvalTrack *e = s->eval;
    json_str(j, "mode", s->mode);
    json_str(j, "env", s->env);
    json_u64(j, "seed", s->seed);
    json_bool(j, "solved", e->solved);
    if (e->solved) {
        json_u64(j, "solved_at_env_steps", e->solved_at_env_steps);
        json_u64(j, "solved_at_updates", e->solved_at_version);
        json_num(j, "solved_at_seconds", e->solved_at_seconds);
    } else {
        json_null(j, "solved_at_env_steps");
        json_null(j, "solved_at_updates");
        json_null(j, "solved_at_seconds");
    }
    json_u64(j, "env_steps", s->env_steps);
    json_u64(j, "updates", s->updates);
    json_u64(j, "gradients", s->run_gradients);             /* this segment (docs/OUTPUTS.md) */
    json_u64(j, "samples_trained", s->run_samples_trained); /* this segment */
    json_u64(j, "episodes", s->episodes);
    json_num(j, "wall_seconds", s->wall_seconds);
    str_or_null(j, "final_checkpoint", s->final_checkpoint);
    /* of final_checkpoint; null when it was not evaluated (a signal stop) */
    json_num(j, "last_eval_mean_return", s->final_evaluated ? e->last : NAN);
    str_or_null(j, "best_checkpoint", s->best_checkpoint);
    json_num(j, "best_eval_mean_return", e->best); /* of best_checkpoint when there is one */
    if (e->evaluations > 0) {
        json_u64(j, "best_at_env_steps", e->best_env_steps);
        json_u64(j, "best_at_updates", e->best_version);
    } else {
        json_null(j, "best_at_env_steps");
        json_null(j, "best_at_updates");
    }
    json_num(j, "reward_threshold", e->threshold);
    json_u64(j, "evaluations", (uint64_t)e->evaluations);
    /* The held-out test evaluation (heldout.h): the saved best and final
     * networks on eval.test_seed, which nothing selected on; null where a
     * network was not scored (none saved, a signal stop, test episodes 0). */
    const HeldOut *te = s->test;
    bool ran = te && te->ran;
    if (te && te->episodes > 0) {
        json_u64(j, "test_eval_seed", te->seed);
        json_u64(j, "test_eval_episodes", (uint64_t)te->episodes);
    } else {
        json_null(j, "test_eval_seed");
        json_null(j, "test_eval_episodes");
    }
    json_num(j, "test_best_return", ran && te->has_best ? te->best.mean : NAN);
    json_num(j, "test_final_return", ran && te->has_final ? te->final.mean : NAN);
    if (ran) json_bool(j, "solved_test", te->solved);
    else json_null(j, "solved_test");
    json_num(j, "test_eval_seconds", ran ? te->seconds : NAN);
    str_or_null(j, "test_skipped", te && !ran ? te->skipped : NULL); /* why the keys above are null */
    double t = s->run_seconds;
    json_num(j, "env_steps_per_second", t > 0 ? (double)s->run_env_steps / t : 0);
    json_num(j, "updates_per_second", t > 0 ? (double)s->run_updates / t : 0);
    json_str(j, "stop_reason", s->stop_reason);
    json_bool(j, "resumed", s->resumed);
    if (s->prioritized) json_u64(j, "stale_priority_updates", s->stale_priority_updates);
    else json_null(j, "stale_priority_updates");
    /* The CPU and OpenBLAS kernel of the process writing the summary (the
     * local trainer, or the coordinator): what decides the rounding of a
     * local run (docs/REPRODUCIBILITY.md). */
    Platform plat;
    platform_read(&plat);
    platform_json(j, "platform", &plat);
}
