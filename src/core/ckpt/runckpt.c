/* SPDX-License-Identifier: MIT */
/* runckpt.c: see runckpt.h; docs/CHECKPOINT.md ("Checkpoints of a run")
 * gives the MANIFEST format line by line.
 *
 * This file starts and publishes checkpoints: runckpt_begin and
 * runckpt_commit for the numbered ones, runckpt_begin_best,
 * runckpt_commit_best and runckpt_best_from for checkpoints/best. It is the
 * top of the room (runckptint.h lists the parts): it calls the others,
 * none calls it.
 *
 * Publishing order. The shard (and replay) files are written first, each
 * atomically; runckpt_commit then binds them (write_manifest checks
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

/* ---- directories ------------------------------------------------------------- */

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

/* A fresh, empty directory at path (whatever was there is removed). */
static int fresh_dir(const char *path, char *err) {
    if (ckptio_remove_tree(path, err)) return -1;
    if (mkdir(path, 0777) != 0) return errf(err, "cannot create %s: %s", path, strerror(errno));
    return 0;
}

/* Bind the files of the checkpoint directory dir into its MANIFEST: m's
 * fields checked first, then every shard file, replay file and learner copy
 * m lists opened and checked as a reader will (binding, tiling), their
 * sizes and CRCs summed here and handed to the MANIFEST writer. 0 or -1
 * with err. */
static int write_manifest(const char *dir, const RunCkptManifest *m, char *err) {
    if (ckptmanifest_check(dir, m, err)) return -1;
    ShardSum *sums = xcalloc((size_t)m->n_shards, sizeof *sums);
    ShardSum *rsums = xcalloc((size_t)m->n_replay + 1, sizeof *rsums);
    ShardSum *csums = xcalloc((size_t)m->n_copies + 1, sizeof *csums);
    int rc = ckptslice_sum_shards(dir, m, sums, err);
    if (rc == 0) rc = ckptreplay_sum_files(dir, m, rsums, err);
    if (rc == 0) rc = ckptslice_sum_copies(dir, m, csums, err);
    if (rc != 0) err_prefix(err, "cannot commit checkpoint %s", dir);
    else rc = ckptmanifest_write(dir, m, sums, rsums, csums, err);
    free(sums);
    free(rsums);
    free(csums);
    return rc;
}

/* ---- numbered checkpoints -------------------------------------------------------- */

int runckpt_begin(const char *run_dir, uint64_t seq, char *dir, char *err) {
    char base[PATH_LEN], name[64];
    if (ckptio_join(base, run_dir, "checkpoints", err) || ckpts_dir(base, err)) return -1;
    snprintf(name, sizeof name, "ckpt-%06" PRIu64, seq);
    if (ckptio_join(dir, base, name, err)) return -1;
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
    if (write_manifest(dir, m, err)) return -1;
    char base[PATH_LEN];
    if (ckptio_join(base, run_dir, "checkpoints", err)) return -1;
    char latest[128];
    if (snprintf(latest, sizeof latest, "%s\n", name) >= (int)sizeof latest)
        return errf(err, "checkpoint directory name too long: %s", name);
    if (ckptio_write_atomic(base, "latest", latest, err)) return -1;
    ckptselect_prune(base, m->seq, keep);
    return 0;
}

void runckpt_discard(const char *dir) {
    const char *name = strrchr(dir, '/');
    name = name ? name + 1 : dir;
    if (strncmp(name, "ckpt-", 5) != 0 && strncmp(name, "best.new-", 9) != 0) return;
    char err[ERR_LEN];
    if (ckptio_remove_tree(dir, err) != 0) fprintf(stderr, "gorila: warning: %s\n", err);
}

/* ---- best ----------------------------------------------------------------- */

#define BEST_STAGING "best.new-"
#define BEST_ASIDE "best.old-"

int runckpt_begin_best(const char *run_dir, uint64_t seq, char *dir, char *err) {
    char base[PATH_LEN], name[64];
    if (ckptio_join(base, run_dir, "checkpoints", err) || ckpts_dir(base, err)) return -1;
    snprintf(name, sizeof name, BEST_STAGING "%06" PRIu64, seq);
    if (ckptio_join(dir, base, name, err)) return -1;
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
        if (ckptio_join(path, base, names[i], err) == 0) ckptio_remove_tree(path, err);
    }
}

/* Put the committed staging directory dir in place of base/best (path
 * best), which exists. One rename swaps the two names: readers of best see
 * the old checkpoint or the new one, never neither; the old one is then at
 * dir and removed. seq names the aside directory of the fallback. */
static int swap_best(const char *base, const char *dir, const char *best, uint64_t seq, char *err) {
    if (renameat2(AT_FDCWD, dir, AT_FDCWD, best, RENAME_EXCHANGE) == 0) {
        ckptio_fsync_dir(base);
        ckptio_remove_tree(dir, err);
        return 0;
    }
    if (errno != EINVAL && errno != ENOSYS) return errf(err, "cannot replace %s with %s: %s", best, dir, strerror(errno));
    /* A file system without RENAME_EXCHANGE: two renames, with a moment in
     * which best is missing. */
    char old[PATH_LEN], oname[64];
    snprintf(oname, sizeof oname, BEST_ASIDE "%06" PRIu64, seq);
    if (ckptio_join(old, base, oname, err) || ckptio_remove_tree(old, err)) return -1;
    if (rename(best, old) != 0) return errf(err, "cannot move %s aside: %s", best, strerror(errno));
    if (rename(dir, best) != 0) {
        int e = errno;
        rename(old, best);
        return errf(err, "cannot rename %s to %s: %s", dir, best, strerror(e));
    }
    ckptio_fsync_dir(base);
    ckptio_remove_tree(old, err);
    return 0;
}

int runckpt_commit_best(const char *run_dir, const char *dir, const RunCkptManifest *m, char *err) {
    char base[PATH_LEN], best[PATH_LEN];
    if (ckptio_join(base, run_dir, "checkpoints", err) || ckptio_join(best, base, "best", err)) return -1;
    const char *name = strrchr(dir, '/');
    name = name ? name + 1 : dir;
    if (strncmp(name, BEST_STAGING, strlen(BEST_STAGING)) != 0)
        return errf(err, "cannot commit %s as the best checkpoint: not a directory from runckpt_begin_best", dir);
    RunCkptManifest b = *m;
    snprintf(b.kind, sizeof b.kind, "best");
    b.n_replay = 0; /* best holds parameters only: its replay files are never linked in */
    b.n_copies = b.first_copy = 0; /* nor the learners' own copies */
    if (write_manifest(dir, &b, err)) return -1;
    struct stat st;
    if (lstat(best, &st) == 0) {
        if (swap_best(base, dir, best, b.seq, err)) return -1;
    } else if (errno == ENOENT) {
        if (rename(dir, best) != 0) return errf(err, "cannot rename %s to %s: %s", dir, best, strerror(errno));
        ckptio_fsync_dir(base);
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
        if (ckptio_join(from, ckpt_dir, name, err) || ckptio_join(to, dir, name, err)) return -1;
        /* The same bytes under a second name: no copy, and the shard's
         * binding (run id, checkpoint number) stays true. */
        if (link(from, to) != 0) return errf(err, "cannot link %s to %s: %s", from, to, strerror(errno));
    }
    return runckpt_commit_best(run_dir, dir, m, err);
}
