/* SPDX-License-Identifier: MIT */
/* runckpt.c: see runckpt.h; docs/CHECKPOINT.md ("Checkpoints of a run")
 * gives the MANIFEST format line by line.
 *
 * This file starts and publishes checkpoints: runckpt_begin and
 * runckpt_commit for the numbered ones, runckpt_begin_best,
 * runckpt_commit_best and runckpt_best_from for checkpoints/best. It also
 * holds the file helpers every part shares (runckptint.h lists the parts:
 * binding and MANIFEST in ckptmanifest.c, shard files in ckptslice.c,
 * replay files in ckptreplay.c, choosing one in ckptselect.c).
 *
 * Publishing order. The shard (and replay) files are written first, each
 * atomically; runckpt_commit then binds them (rck_write_manifest checks
 * every file before it writes MANIFEST), points `latest` at the directory
 * and only then prunes, so a reader that finds `latest` moved knows
 * pruning may have followed (ckptselect.c relies on it).
 */
#include "runckpt.h"
#include "runckptint.h"
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- paths and files ---------------------------------------------------------- */

int rck_join(char *out, const char *a, const char *b, char *err) {
    if (snprintf(out, PATH_LEN, "%s/%s", a, b) >= PATH_LEN) return errf(err, "path too long: %s/%s", a, b);
    return 0;
}

/* <run>/checkpoints, made when missing. Checkpoint files are written into
 * it by path, so a link there (to a directory outside the run) is refused
 * rather than followed. */
static int ckpts_dir(const char *path, char *err) {
    if (mkdir(path, 0777) != 0 && errno != EEXIST) return errf(err, "cannot create %s: %s", path, strerror(errno));
    struct stat st;
    if (lstat(path, &st) != 0) return errf(err, "cannot use %s: %s", path, strerror(errno));
    if (S_ISLNK(st.st_mode)) return err_is_link(err, path);
    if (!S_ISDIR(st.st_mode)) return errf(err, "cannot use %s: it exists and is not a directory", path);
    return 0;
}

int rck_remove_tree(const char *path, char *err) {
    struct stat st;
    if (lstat(path, &st) != 0) {
        if (errno == ENOENT) return 0;
        return errf(err, "cannot remove %s: %s", path, strerror(errno));
    }
    if (!S_ISDIR(st.st_mode)) {
        if (unlink(path) != 0 && errno != ENOENT) return errf(err, "cannot remove %s: %s", path, strerror(errno));
        return 0;
    }
    DIR *d = opendir(path);
    if (!d) return errf(err, "cannot remove %s: %s", path, strerror(errno));
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        if (unlinkat(dirfd(d), e->d_name, 0) != 0 && errno != ENOENT) {
            int en = errno;
            closedir(d);
            return errf(err, "cannot remove %s/%s: %s", path, e->d_name, strerror(en));
        }
    }
    closedir(d);
    if (rmdir(path) != 0 && errno != ENOENT) return errf(err, "cannot remove %s: %s", path, strerror(errno));
    return 0;
}

void rck_fsync_dir(const char *dir) {
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        fsync(dfd);
        close(dfd);
    }
}

/* A fresh, empty directory at path (whatever was there is removed). */
static int fresh_dir(const char *path, char *err) {
    if (rck_remove_tree(path, err)) return -1;
    if (mkdir(path, 0777) != 0) return errf(err, "cannot create %s: %s", path, strerror(errno));
    return 0;
}

int rck_write_atomic(const char *dir, const char *name, const char *text, char *err) {
    char path[PATH_LEN], tmp[PATH_LEN + 8];
    if (rck_join(path, dir, name, err)) return -1;
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    int fd = open_tmp_exclusive(tmp);
    if (fd < 0) return errf(err, "cannot write %s: %s", tmp, strerror(errno));
    size_t len = strlen(text), done = 0;
    while (done < len) {
        ssize_t w = write(fd, text + done, len - done);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            int e = errno;
            close(fd);
            unlink(tmp);
            return errf(err, "cannot write %s: %s", tmp, strerror(w < 0 ? e : ENOSPC));
        }
        done += (size_t)w;
    }
    if (fsync(fd) != 0) {
        int e = errno;
        close(fd);
        unlink(tmp);
        return errf(err, "cannot write %s: %s", tmp, strerror(e));
    }
    if (close(fd) != 0) {
        int e = errno;
        unlink(tmp);
        return errf(err, "cannot write %s: %s", tmp, strerror(e));
    }
    if (rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        return errf(err, "cannot rename %s: %s", tmp, strerror(e));
    }
    rck_fsync_dir(dir);
    return 0;
}

void rck_fill_net(const Config *cfg, const QNet *net, CkptMeta *m) {
    memset(m, 0, sizeof *m);
    m->net.obs_dim = (uint32_t)net->spec.obs_dim;
    m->net.num_actions = (uint32_t)net->spec.n_actions;
    m->net.n_hidden = (uint32_t)net->spec.n_hidden;
    for (int i = 0; i < net->spec.n_hidden; i++) m->net.hidden[i] = (uint32_t)net->spec.hidden[i];
    m->net.dueling = net->spec.dueling;
    m->net.n_params = net->n_params;
    /* Registered env names are far shorter than CKPT_ENV_LEN. */
    if (snprintf(m->env, sizeof m->env, "%s", cfg->env.name) >= (int)sizeof m->env) m->env[sizeof m->env - 1] = '\0';
}

int rck_pread(const CkptReader *r, uint64_t off, void *dst, size_t n, char *err) {
    unsigned char *p = dst;
    for (size_t done = 0; done < n;) {
        ssize_t got = pread(r->fd, p + done, n - done, (off_t)(off + done));
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) return errf(err, "%s: cannot read: %s", r->path, strerror(errno));
        if (got == 0) return errf(err, "%s: the file ended early (changed while read?)", r->path);
        done += (size_t)got;
    }
    return 0;
}

/* ---- numbered checkpoints -------------------------------------------------------- */

int runckpt_begin(const char *run_dir, uint64_t seq, char *dir, char *err) {
    char base[PATH_LEN], name[64];
    if (rck_join(base, run_dir, "checkpoints", err) || ckpts_dir(base, err)) return -1;
    snprintf(name, sizeof name, "ckpt-%06" PRIu64, seq);
    if (rck_join(dir, base, name, err)) return -1;
    return fresh_dir(dir, err);
}

int runckpt_commit(const char *run_dir, const char *dir, const RunCkptManifest *m, int keep, char *err) {
    const char *name = strrchr(dir, '/');
    name = name ? name + 1 : dir;
    uint64_t s;
    char extra;
    if (sscanf(name, "ckpt-%" SCNu64 "%c", &s, &extra) != 1 || s != m->seq)
        return errf(err, "cannot commit %s as checkpoint %" PRIu64 ": not the directory runckpt_begin made for it",
                    dir, m->seq);
    if (rck_write_manifest(dir, m, err)) return -1;
    char base[PATH_LEN];
    if (rck_join(base, run_dir, "checkpoints", err)) return -1;
    char latest[128];
    if (snprintf(latest, sizeof latest, "%s\n", name) >= (int)sizeof latest)
        return errf(err, "checkpoint directory name too long: %s", name);
    if (rck_write_atomic(base, "latest", latest, err)) return -1;
    rck_prune(base, m->seq, keep);
    return 0;
}

void runckpt_discard(const char *dir) {
    const char *name = strrchr(dir, '/');
    name = name ? name + 1 : dir;
    if (strncmp(name, "ckpt-", 5) != 0 && strncmp(name, "best.new-", 9) != 0) return;
    char err[ERR_LEN];
    if (rck_remove_tree(dir, err) != 0) fprintf(stderr, "gorila: warning: %s\n", err);
}

/* ---- best ----------------------------------------------------------------- */

#define BEST_STAGING "best.new-"
#define BEST_ASIDE "best.old-"

int runckpt_begin_best(const char *run_dir, uint64_t seq, char *dir, char *err) {
    char base[PATH_LEN], name[64];
    if (rck_join(base, run_dir, "checkpoints", err) || ckpts_dir(base, err)) return -1;
    snprintf(name, sizeof name, BEST_STAGING "%06" PRIu64, seq);
    if (rck_join(dir, base, name, err)) return -1;
    return fresh_dir(dir, err);
}

/* Remove best.new-<s> for every s < seq (stagings that can no longer be
 * committed, or an old best left at its staging name by a crash after the
 * exchange) and best.old-* (the two-rename fallback's). */
static void clean_best_leftovers(const char *base, uint64_t seq) {
    DIR *d = opendir(base);
    if (!d) return;
    char names[64][256];
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < 64) {
        uint64_t s;
        char extra;
        bool stale = strncmp(e->d_name, BEST_ASIDE, strlen(BEST_ASIDE)) == 0 ||
                     (sscanf(e->d_name, BEST_STAGING "%" SCNu64 "%c", &s, &extra) == 1 && s < seq);
        size_t len = strlen(e->d_name);
        if (stale && len < sizeof names[0]) memcpy(names[n++], e->d_name, len + 1);
    }
    closedir(d);
    for (int i = 0; i < n; i++) {
        char path[PATH_LEN], err[ERR_LEN];
        if (rck_join(path, base, names[i], err) == 0) rck_remove_tree(path, err);
    }
}

/* Put the committed staging directory dir in place of base/best (path
 * best), which exists. One rename swaps the two names: readers of best see
 * the old checkpoint or the new one, never neither; the old one is then at
 * dir and removed. seq names the aside directory of the fallback. */
static int swap_best(const char *base, const char *dir, const char *best, uint64_t seq, char *err) {
    if (renameat2(AT_FDCWD, dir, AT_FDCWD, best, RENAME_EXCHANGE) == 0) {
        rck_fsync_dir(base);
        rck_remove_tree(dir, err);
        return 0;
    }
    if (errno != EINVAL && errno != ENOSYS) return errf(err, "cannot replace %s with %s: %s", best, dir, strerror(errno));
    /* A file system without RENAME_EXCHANGE: two renames, with a moment in
     * which best is missing. */
    char old[PATH_LEN], oname[64];
    snprintf(oname, sizeof oname, BEST_ASIDE "%06" PRIu64, seq);
    if (rck_join(old, base, oname, err) || rck_remove_tree(old, err)) return -1;
    if (rename(best, old) != 0) return errf(err, "cannot move %s aside: %s", best, strerror(errno));
    if (rename(dir, best) != 0) {
        int e = errno;
        rename(old, best);
        return errf(err, "cannot rename %s to %s: %s", dir, best, strerror(e));
    }
    rck_fsync_dir(base);
    rck_remove_tree(old, err);
    return 0;
}

int runckpt_commit_best(const char *run_dir, const char *dir, const RunCkptManifest *m, char *err) {
    char base[PATH_LEN], best[PATH_LEN];
    if (rck_join(base, run_dir, "checkpoints", err) || rck_join(best, base, "best", err)) return -1;
    const char *name = strrchr(dir, '/');
    name = name ? name + 1 : dir;
    if (strncmp(name, BEST_STAGING, strlen(BEST_STAGING)) != 0)
        return errf(err, "cannot commit %s as the best checkpoint: not a directory from runckpt_begin_best", dir);
    RunCkptManifest b = *m;
    snprintf(b.kind, sizeof b.kind, "best");
    b.n_replay = 0; /* best holds parameters only: its replay files are never linked in */
    b.n_copies = b.first_copy = 0; /* nor the learners' own copies */
    if (rck_write_manifest(dir, &b, err)) return -1;
    struct stat st;
    if (lstat(best, &st) == 0) {
        if (swap_best(base, dir, best, b.seq, err)) return -1;
    } else if (errno == ENOENT) {
        if (rename(dir, best) != 0) return errf(err, "cannot rename %s to %s: %s", dir, best, strerror(errno));
        rck_fsync_dir(base);
    } else {
        return errf(err, "cannot check %s: %s", best, strerror(errno));
    }
    clean_best_leftovers(base, b.seq);
    return 0;
}

int runckpt_best_from(const char *run_dir, const char *ckpt_dir, const RunCkptManifest *m, char *err) {
    char dir[PATH_LEN];
    if (runckpt_begin_best(run_dir, m->seq, dir, err)) return -1;
    for (int q = 0; q < m->n_shards; q++) {
        char name[32], from[PATH_LEN], to[PATH_LEN];
        snprintf(name, sizeof name, "ps-%d.ckpt", q);
        if (rck_join(from, ckpt_dir, name, err) || rck_join(to, dir, name, err)) return -1;
        /* The same bytes under a second name: no copy, and the shard's
         * binding (run id, checkpoint number) stays true. */
        if (link(from, to) != 0) return errf(err, "cannot link %s to %s: %s", from, to, strerror(errno));
    }
    return runckpt_commit_best(run_dir, dir, m, err);
}
