/* SPDX-License-Identifier: MIT */
/* ckptselect.c: choosing a checkpoint of a run: verifying one whole
 * (runckpt_verify), the newest intact one (runckpt_latest and its
 * fallback), the best one (runckpt_best), re-choosing when a running job
 * moves on meanwhile (runckpt_read_chosen), and the numbered directories
 * that no longer count: an abandoned line set aside (runckpt_drop_above),
 * old ones pruned after a commit (ckptselect_prune). Part of runckpt
 * (runckptint.h).
 *
 * Fallback. runckpt_find_latest trusts `latest` only after verifying the
 * checkpoint it names; otherwise it walks the ckpt-* directories newest
 * first. A commit then prunes any directory numbered above the one it
 * commits (the damaged line it fell back past), so `keep` counts only the
 * checkpoints a resume could use.
 */
#include "runckpt.h"
#include "runckptint.h"
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

/* ---- verifying one ----------------------------------------------------------------- */

int runckpt_verify(const char *dir, RunCkptManifest *m, char *err) {
    ShardSum *sums, *rsums, *csums;
    if (ckptmanifest_read(dir, m, &sums, &rsums, &csums, err)) return -1;
    int rc = ckptslice_verify_shards(dir, m, sums, err);
    if (rc == 0) rc = ckptreplay_verify_files(dir, m, rsums, err);
    if (rc == 0) rc = ckptslice_verify_copies(dir, m, csums, err);
    free(sums);
    free(rsums);
    free(csums);
    return rc;
}

/* ---- the numbered directories ------------------------------------------------------ */

/* Sequence numbers of the ckpt-<seq> directories in base, newest first
 * (*seqs: caller frees). Anything else (latest, best, best.new-*) is not a
 * numbered checkpoint and never listed. */
static int list_ckpts(const char *base, uint64_t **seqs) {
    *seqs = NULL;
    DIR *d = opendir(base);
    if (!d) return 0;
    int n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        uint64_t s;
        char extra;
        if (strncmp(e->d_name, "ckpt-", 5) != 0 || sscanf(e->d_name, "ckpt-%" SCNu64 "%c", &s, &extra) != 1) continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 16;
            uint64_t *grown = xmalloc((size_t)cap * sizeof *grown);
            if (n) memcpy(grown, *seqs, (size_t)n * sizeof *grown);
            free(*seqs);
            *seqs = grown;
        }
        (*seqs)[n++] = s;
    }
    closedir(d);
    for (int i = 1; i < n; i++) /* insertion sort, descending */
        for (int j = i; j > 0 && (*seqs)[j] > (*seqs)[j - 1]; j--) {
            uint64_t x = (*seqs)[j];
            (*seqs)[j] = (*seqs)[j - 1];
            (*seqs)[j - 1] = x;
        }
    return n;
}

void ckptselect_prune(const char *base, uint64_t committed, int keep) {
    uint64_t *seqs;
    int n = list_ckpts(base, &seqs), kept = 0;
    for (int i = 0; i < n; i++) {
        uint64_t s = seqs[i];
        if (s <= committed && (s == committed || ++kept < keep)) continue;
        char dir[PATH_LEN], name[64], err[ERR_LEN];
        snprintf(name, sizeof name, "ckpt-%06" PRIu64, s);
        if (ckptio_join(dir, base, name, err) == 0) ckptio_remove_tree(dir, err);
    }
    free(seqs);
}

/* Whether dir holds a MANIFEST (a regular file, not a link): a checkpoint
 * that was complete once. Without one it is an attempt that never
 * finished (a killed job's temporary files, a failed write's leftovers),
 * which nothing can read. */
static bool has_manifest(const char *dir) {
    char path[PATH_LEN], err[ERR_LEN];
    struct stat st;
    return ckptio_join(path, dir, "MANIFEST", err) == 0 && lstat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* Set checkpoint directory base/name aside as abandoned-<name>[-k]; the
 * new path into to. 0, or -1 (errno). */
static int set_aside(const char *base, const char *name, char *to) {
    char dir[PATH_LEN], moved[96], err[ERR_LEN];
    if (ckptio_join(dir, base, name, err) != 0) return -1;
    for (int k = 1; k <= 99; k++) {
        snprintf(moved, sizeof moved, k == 1 ? "abandoned-%s" : "abandoned-%s-%d", name, k);
        if (ckptio_join(to, base, moved, err) != 0) return -1;
        struct stat st;
        if (lstat(to, &st) == 0) continue; /* an earlier resume's */
        return rename(dir, to);
    }
    errno = EEXIST;
    return -1;
}

typedef struct {
    char name[256];
    struct timespec when; /* ctime: when it was renamed, i.e. abandoned */
} Aside;

/* Newest first: later ctime, then the later name. */
static int newer_first(const void *pa, const void *pb) {
    const Aside *a = pa, *b = pb;
    if (a->when.tv_sec != b->when.tv_sec) return a->when.tv_sec < b->when.tv_sec ? 1 : -1;
    if (a->when.tv_nsec != b->when.tv_nsec) return a->when.tv_nsec < b->when.tv_nsec ? 1 : -1;
    return -strcmp(a->name, b->name);
}

/* The abandoned-* entries of base: those without a complete checkpoint
 * are removed, and of the rest all but the `keep` most recently abandoned
 * (oldest removed first). One note line on stderr per removal. */
static void sweep_abandoned(const char *base, int keep) {
    DIR *d = opendir(base);
    if (!d) return;
    Aside *list = NULL;
    int n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        char path[PATH_LEN], err[ERR_LEN];
        struct stat st;
        if (strncmp(e->d_name, "abandoned-", 10) != 0 || strlen(e->d_name) >= sizeof list->name ||
            ckptio_join(path, base, e->d_name, err) != 0 || lstat(path, &st) != 0)
            continue;
        if (!S_ISDIR(st.st_mode) || !has_manifest(path)) {
            if (ckptio_remove_tree(path, err) == 0)
                fprintf(stderr, "gorila: note: removed %s: it holds no complete checkpoint (no MANIFEST)\n", path);
            continue;
        }
        if (n == cap) {
            cap = cap ? 2 * cap : 16;
            Aside *grown = xmalloc((size_t)cap * sizeof *grown);
            if (n) memcpy(grown, list, (size_t)n * sizeof *grown);
            free(list);
            list = grown;
        }
        snprintf(list[n].name, sizeof list[n].name, "%s", e->d_name);
        list[n++].when = st.st_ctim;
    }
    closedir(d);
    if (n > keep) qsort(list, (size_t)n, sizeof *list, newer_first);
    for (int i = keep; i < n; i++) {
        char path[PATH_LEN], err[ERR_LEN];
        if (ckptio_join(path, base, list[i].name, err) == 0 && ckptio_remove_tree(path, err) == 0)
            fprintf(stderr, "gorila: note: removed %s: checkpoint.keep_abandoned is %d\n", path, keep);
    }
    free(list);
}

void runckpt_drop_above(const char *run_dir, uint64_t seq, int keep_abandoned) {
    char base[PATH_LEN], err[ERR_LEN];
    if (ckptio_join(base, run_dir, "checkpoints", err)) return;
    uint64_t *seqs;
    int n = list_ckpts(base, &seqs);
    /* Renamed, not deleted: a checkpoint skipped by the fallback may have
     * failed for a passing reason (an I/O error on a shared filesystem), so
     * its bytes stay for the user; the new name does not start with ckpt-,
     * so neither the fallback, keep, pruning nor a user's ckpt-* glob sees
     * it again. A directory without MANIFEST never held a checkpoint (a
     * job killed while writing it): it is removed. */
    for (int i = 0; i < n && seqs[i] > seq; i++) {
        char dir[PATH_LEN], to[PATH_LEN], name[64];
        snprintf(name, sizeof name, "ckpt-%06" PRIu64, seqs[i]);
        if (ckptio_join(dir, base, name, err) != 0) continue;
        if (!has_manifest(dir)) {
            if (ckptio_remove_tree(dir, err) == 0)
                fprintf(stderr, "gorila: note: removed %s: an unfinished checkpoint (no MANIFEST) numbered above the "
                        "one this run resumes from\n", dir);
            else
                fprintf(stderr, "gorila: warning: %s\n", err);
        } else if (set_aside(base, name, to) == 0) {
            fprintf(stderr, "gorila: note: %s is numbered above the checkpoint this run resumes from: kept as %s\n",
                    dir, to);
        } else {
            fprintf(stderr, "gorila: warning: could not set %s aside: %s\n", dir, strerror(errno));
        }
    }
    free(seqs);
    sweep_abandoned(base, keep_abandoned);
    fflush(stderr);
}

/* ---- choosing the latest ------------------------------------------------------ */

/* How often a reader starts over when a running job moved `latest` (and
 * pruned what it had named) while it was reading: each time means the job
 * committed another checkpoint meanwhile, so this bounds the wait, not the
 * chance of success on an ordinary disk. */
#define CHOOSE_RETRIES 64

/* Verify checkpoint base/name; it must also be of the checkpoint its name
 * says. */
static int try_ckpt(const char *base, const char *name, RunCkptManifest *m, char *err) {
    char dir[PATH_LEN];
    if (ckptio_join(dir, base, name, err) || runckpt_verify(dir, m, err)) return -1;
    uint64_t s;
    char extra;
    if (sscanf(name, "ckpt-%" SCNu64 "%c", &s, &extra) != 1 || s != m->seq)
        return errf(err, "%s holds checkpoint %" PRIu64 ", not the one its name says", dir, m->seq);
    return 0;
}

/* One pass of runckpt_find_latest: `latest`'s raw text goes into seen
 * (seen_cap bytes; "" when it cannot be read), a fallback note into note. */
static int find_once(const char *run_dir, const char *base, const char *latest, RunCkptManifest *m, char *note,
                     char *seen, size_t seen_cap, const RunCkptHook *hook, char *err) {
    note[0] = '\0';
    char name[128] = "", reason[ERR_LEN];
    const char *damaged = latest; /* what the warning names: latest, or the checkpoint it names */
    char named[PATH_LEN];
    if (read_small_file(latest, "", seen, seen_cap, reason) == 0) {
        char extra[2];
        int got = sscanf(seen, "%127s %1s", name, extra);
        uint64_t s;
        char c;
        if (got != 1 || sscanf(name, "ckpt-%" SCNu64 "%c", &s, &c) != 1) {
            errf(reason, "%s does not name a checkpoint directory", latest);
            name[0] = '\0';
        } else if (ckptio_join(named, base, name, err) == 0) {
            if (hook) hook->fn(hook->arg, named);
            if (try_ckpt(base, name, m, reason) == 0) return 0;
            damaged = named;
        }
    }
    uint64_t *seqs;
    int n = list_ckpts(base, &seqs), tried = 0;
    for (int i = 0; i < n; i++) {
        char cand[64], cerr[ERR_LEN];
        snprintf(cand, sizeof cand, "ckpt-%06" PRIu64, seqs[i]);
        if (strcmp(cand, name) == 0) continue;
        tried++;
        if (try_ckpt(base, cand, m, cerr) != 0) continue;
        free(seqs);
        errf(note, "checkpoint %s is damaged (%s); using %s", damaged, reason, m->dir);
        return 0;
    }
    free(seqs);
    memset(m, 0, sizeof *m);
    if (!name[0] && tried == 0) return errf(err, "no checkpoint in %s (%s)", run_dir, reason);
    return errf(err, "no intact checkpoint in %s: %s is damaged (%s)%s", run_dir, damaged, reason,
                tried ? ", and so is every older ckpt-* directory" : "");
}

int runckpt_find_latest_hooked(const char *run_dir, RunCkptManifest *m, char *warn, const RunCkptHook *hook,
                               char *err) {
    if (warn) warn[0] = '\0';
    char base[PATH_LEN], latest[PATH_LEN];
    if (ckptio_join(base, run_dir, "checkpoints", err) || ckptio_join(latest, base, "latest", err)) return -1;
    char note[ERR_LEN], seen[128], now[128], ignored[ERR_LEN];
    int rc;
    for (int attempt = 0;; attempt++) {
        rc = find_once(run_dir, base, latest, m, note, seen, sizeof seen, hook, err);
        if (rc == 0 && !note[0]) break;
        /* A job running in this directory (an eval does not take the lock)
         * may have committed a newer checkpoint and pruned the one `latest`
         * named while it was verified: then `latest` has moved, and the
         * choice starts over instead of calling a healthy run damaged.
         * Pruning only ever follows the move of `latest` (runckpt_commit). */
        if (attempt >= CHOOSE_RETRIES) break;
        read_small_file(latest, "", now, sizeof now, ignored);
        if (strcmp(now, seen) == 0) break;
    }
    if (rc != 0) return -1;
    if (ckptmanifest_check_run(run_dir, m, err)) {
        memset(m, 0, sizeof *m);
        return -1;
    }
    if (warn) snprintf(warn, ERR_LEN, "%s", note);
    return 0;
}

int runckpt_find_latest(const char *run_dir, RunCkptManifest *m, char *warn, char *err) {
    return runckpt_find_latest_hooked(run_dir, m, warn, NULL, err);
}

int runckpt_latest(const char *run_dir, RunCkptManifest *m, char *err) {
    char warn[ERR_LEN];
    if (runckpt_find_latest(run_dir, m, warn, err)) return -1;
    if (warn[0]) {
        fprintf(stderr, "gorila: warning: %s\n", warn);
        fflush(stderr);
    }
    return 0;
}

/* ---- best, and reading what was chosen ------------------------------------------- */

int runckpt_best(const char *run_dir, RunCkptManifest *m, char *err) {
    char base[PATH_LEN], best[PATH_LEN];
    if (ckptio_join(base, run_dir, "checkpoints", err) || ckptio_join(best, base, "best", err)) return -1;
    struct stat st;
    if (lstat(best, &st) != 0 && errno == ENOENT) {
        memset(m, 0, sizeof *m);
        return errf(err, "no best checkpoint in %s (%s does not exist)", run_dir, best);
    }
    if (runckpt_verify(best, m, err)) return -1;
    if (strcmp(m->kind, "best") != 0) return errf(err, "%s is a checkpoint of kind %s, not best", best, m->kind);
    return ckptmanifest_check_run(run_dir, m, err);
}

/* The same checkpoint, as far as a reader can tell. */
static bool same_ckpt(const RunCkptManifest *a, const RunCkptManifest *b) {
    return strcmp(a->dir, b->dir) == 0 && a->seq == b->seq && a->run_id == b->run_id &&
           a->params_version == b->params_version && a->env_steps == b->env_steps && a->updates == b->updates;
}

int runckpt_read_chosen(const Config *cfg, const QNet *net, const char *run_dir, RunCkptWhich which,
                        RunCkptManifest *m, RunCkptShard *sh, const RunCkptHook *hook, char *err) {
    for (int attempt = 0;; attempt++) {
        if (hook) hook->fn(hook->arg, m->dir);
        if (runckpt_read_slice(cfg, net, m->dir, sh, err) == 0) return 0;
        if (attempt >= CHOOSE_RETRIES) return -1;
        /* Pruned (or best replaced) between the choice and the read? Then
         * choosing again gives another checkpoint; otherwise the failure
         * stands. */
        RunCkptManifest again;
        char e2[ERR_LEN];
        int rc = which == RUNCKPT_BEST ? runckpt_best(run_dir, &again, e2) : runckpt_latest(run_dir, &again, e2);
        if (rc != 0 || same_ckpt(&again, m)) return -1;
        *m = again;
    }
}
