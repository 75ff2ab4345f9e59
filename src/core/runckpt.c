/* runckpt.c: see runckpt.h; docs/CHECKPOINT.md ("Checkpoints of a run")
 * gives the MANIFEST format line by line.
 *
 * Binding. A checkpoint is a set of shard files and a MANIFEST, tied by two
 * independent links:
 *  - each shard's header (protected by the header CRC, ckptfile.c) carries
 *    the run id, the sequence number, the shard count and its own index
 *    (header reserved[1..4], RES_* below);
 *  - the MANIFEST (protected by its last line's CRC) records every shard
 *    file's size and whole-file CRC-32C.
 * runckpt_commit checks the first before it writes the second, so a shard
 * left over from another checkpoint is never bound; every reader checks
 * both, so a file swapped in later is refused, not loaded.
 *
 * Tiling. Shard q's slice must start exactly where shard q-1's ends (shard
 * 0 at 0) and the last must end at n_params. Checked in index order, file
 * by file, over the whole set before any data is copied (runckpt_read_slice
 * pass 1), and again as each file is reopened to be read (pass 2): every
 * parameter of the caller's slice is written exactly once, so an
 * overlapping or short set can never leave part of it uninitialised.
 *
 * Replay files (replay-<s>.ckpt, checkpoint.save_replay in a distributed
 * job) are bound the same two ways: their header carries the run id, seq,
 * the replay shard count and their index, plus a mark that they hold
 * replay (RES_KIND) and how many transitions (RES_ROWS); the MANIFEST's
 * optional "replay_shards" block records each file's size, CRC and
 * transitions. A manifest without that block (save_replay off, or written
 * before replay files existed) is the same format 2 and reads as before.
 *
 * Fallback. runckpt_find_latest trusts `latest` only after verifying the
 * checkpoint it names; otherwise it walks the ckpt-* directories newest
 * first. A commit then prunes any directory numbered above the one it
 * commits (the damaged line it fell back past), so `keep` counts only the
 * checkpoints a resume could use.
 */
#include "runckpt.h"
#include "crc32c.h"
#include "util.h"

#include <assert.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MANIFEST_HEAD "gorila-checkpoint-manifest"
#define MANIFEST_VERSION 2
#define MANIFEST_MAX_SHARDS 4096          /* far above roles.param_servers' limit */
#define MANIFEST_MAX_BYTES (1u << 20)

/* Header counters this module defines (CkptMeta.reserved). RES_KIND tells
 * a parameter shard file (0, as every file before replay files had) from a
 * replay file (KIND_REPLAY), whose RES_ROWS is its transition count. */
enum { RES_TARGET_VERSION = 0, RES_RUN_ID = 1, RES_SEQ = 2, RES_N_SHARDS = 3, RES_INDEX = 4, RES_KIND = 5,
       RES_ROWS = 6 };
enum { KIND_PARAMS = 0, KIND_REPLAY = 1 };

/* One shard or replay file as the MANIFEST records it. */
typedef struct {
    uint64_t bytes;
    uint32_t crc;
    uint64_t rows;        /* replay files: transitions held */
} ShardSum;

static int join(char *out, const char *a, const char *b, char *err) {
    if (snprintf(out, PATH_LEN, "%s/%s", a, b) >= PATH_LEN) return errf(err, "path too long: %s/%s", a, b);
    return 0;
}

static int mkdir_ok(const char *path, char *err) {
    if (mkdir(path, 0777) != 0 && errno != EEXIST) return errf(err, "cannot create %s: %s", path, strerror(errno));
    return 0;
}

static void shard_name(char *name, size_t cap, int q) { snprintf(name, cap, "ps-%d.ckpt", q); }
static void replay_name(char *name, size_t cap, int s) { snprintf(name, cap, "replay-%d.ckpt", s); }

/* Remove path: a directory of plain files (a checkpoint) with its files, or
 * anything else (a file, a planted link) by itself. Missing is fine. */
static int remove_tree(const char *path, char *err) {
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

static void fsync_dir(const char *dir) {
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        fsync(dfd);
        close(dfd);
    }
}

/* A fresh, empty directory at path (whatever was there is removed). */
static int fresh_dir(const char *path, char *err) {
    if (remove_tree(path, err)) return -1;
    if (mkdir(path, 0777) != 0) return errf(err, "cannot create %s: %s", path, strerror(errno));
    return 0;
}

int runckpt_begin(const char *run_dir, uint64_t seq, char *dir, char *err) {
    char base[PATH_LEN], name[64];
    if (join(base, run_dir, "checkpoints", err) || mkdir_ok(base, err)) return -1;
    snprintf(name, sizeof name, "ckpt-%06" PRIu64, seq);
    if (join(dir, base, name, err)) return -1;
    return fresh_dir(dir, err);
}

static CkptOptim ckpt_kind(OptimKind k) {
    switch (k) {
    case OPTIM_SGD: return CKPT_OPT_SGD;
    case OPTIM_ADAM: return CKPT_OPT_ADAM;
    case OPTIM_RMSPROP: return CKPT_OPT_RMSPROP;
    }
    return CKPT_OPT_NONE;
}

static void fill_net(const Config *cfg, const QNet *net, CkptMeta *m) {
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

/* The first non-finite value of x[0 .. n), or n when all are finite. */
static size_t first_non_finite(const float *x, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (!isfinite(x[i])) return i;
    return n;
}

int runckpt_write_shard(const Config *cfg, const QNet *net, const char *dir, const RunCkptShard *sh, char *err) {
    char path[PATH_LEN], name[32];
    shard_name(name, sizeof name, sh->index);
    if (join(path, dir, name, err)) return -1;
    if (sh->n_shards < 1 || sh->index < 0 || sh->index >= sh->n_shards)
        return errf(err, "cannot write checkpoint %s: shard index %d outside the %d shards of the checkpoint", path,
                    sh->index, sh->n_shards);
    const float *vals = sh->params;
    const char *what = "the network";
    size_t bad = first_non_finite(vals, sh->len);
    if (bad == sh->len) {
        vals = sh->target;
        what = "the target network";
        bad = first_non_finite(vals, sh->len);
    }
    if (bad < sh->len)
        return errf(err, "cannot write checkpoint %s: non-finite parameters (parameter %zu of %s is %g) not checkpointed",
                    path, sh->off + bad, what, (double)vals[bad]);
    CkptMeta m;
    fill_net(cfg, net, &m);
    m.slice_offset = sh->off;
    m.slice_count = sh->len;
    m.env_steps = sh->env_steps;
    m.updates = sh->updates;
    m.episodes = sh->episodes;
    m.wall_seconds = sh->wall_seconds;
    m.param_version = sh->version;
    m.reserved[RES_TARGET_VERSION] = sh->target_version;
    m.reserved[RES_RUN_ID] = sh->run_id;
    m.reserved[RES_SEQ] = sh->seq;
    m.reserved[RES_N_SHARDS] = (uint64_t)sh->n_shards;
    m.reserved[RES_INDEX] = (uint64_t)sh->index;
    CkptSection sec[5];
    size_t n = 0;
    sec[n++] = (CkptSection){CKPT_SEC_PARAMS, sh->params, sh->len * sizeof(float)};
    sec[n++] = (CkptSection){CKPT_SEC_TARGET, sh->target, sh->len * sizeof(float)};
    uint8_t *opt_bytes = NULL;
    if (sh->opt) {
        m.optimizer = ckpt_kind(sh->opt->p.kind);
        m.optim_slots = sh->len ? (uint32_t)(sh->opt->n_state / sh->len) : 0;
        size_t bytes = 8 + sh->opt->n_state * sizeof(float);
        opt_bytes = xmalloc(bytes);
        memcpy(opt_bytes, &sh->opt->step, 8);
        if (sh->opt->n_state) memcpy(opt_bytes + 8, sh->opt->state, sh->opt->n_state * sizeof(float));
        sec[n++] = (CkptSection){CKPT_SEC_OPTIM, opt_bytes, bytes};
    }
    if (sh->n_rngs > 0) sec[n++] = (CkptSection){CKPT_SEC_RNG, sh->rngs, (size_t)sh->n_rngs * sizeof(Rng)};
    uint8_t *rep = NULL;
    if (sh->replay) {
        size_t bytes = replaystore_serial_bytes(sh->replay);
        rep = xmalloc(bytes);
        replaystore_serialize(sh->replay, rep);
        sec[n++] = (CkptSection){CKPT_SEC_REPLAY, rep, bytes};
    }
    int rc = ckpt_write(path, &m, sec, n, err);
    free(opt_bytes);
    free(rep);
    return rc;
}

/* Write a small text file atomically (tmp, fsync, rename, fsync dir). */
static int write_atomic(const char *dir, const char *name, const char *text, char *err) {
    char path[PATH_LEN], tmp[PATH_LEN + 8];
    if (join(path, dir, name, err)) return -1;
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
    fsync_dir(dir);
    return 0;
}

/* ---- shard files -------------------------------------------------------- */

/* CRC-32C of the whole open file, and in the same pass each section's
 * against its table entry (streaming). A whole-file CRC that matches the
 * manifest proves only that the file is the one the manifest was written
 * (or rewritten) for; the section CRCs prove that its data is what its
 * writer meant, so a damaged file is refused here, when a checkpoint is
 * chosen, and never first when its data is read. Sections lie back to back
 * after the table (ckptfile.h), so each chunk read feeds the file's CRC and
 * the CRCs of the sections it overlaps. */
static int file_crc(const CkptReader *r, const ShardSum *want, uint32_t *crc, char *err) {
    unsigned char buf[65536];
    uint32_t c = 0, sc[CKPT_MAX_SECTIONS] = {0};
    for (uint64_t done = 0; done < r->file_bytes;) {
        size_t ask = r->file_bytes - done < sizeof buf ? (size_t)(r->file_bytes - done) : sizeof buf;
        ssize_t got = pread(r->fd, buf, ask, (off_t)done);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) return errf(err, "%s: cannot read: %s", r->path, strerror(errno));
        if (got == 0) return errf(err, "%s: the file ended after %" PRIu64 " bytes (changed while read?)", r->path, done);
        c = crc32c_update(c, buf, (size_t)got);
        uint64_t end = done + (uint64_t)got;
        for (uint32_t i = 0; i < r->n_sections; i++) {
            const CkptEntry *e = &r->entry[i];
            uint64_t lo = e->offset > done ? e->offset : done, hi = e->offset + e->bytes < end ? e->offset + e->bytes : end;
            if (lo < hi) sc[i] = crc32c_update(sc[i], buf + (lo - done), (size_t)(hi - lo));
        }
        done = end;
    }
    /* A file other than the manifest's is reported as such first. */
    if (want && c != want->crc)
        return errf(err, "%s: file CRC %08x does not match the manifest's %08x (the file is damaged or replaced)",
                    r->path, c, want->crc);
    for (uint32_t i = 0; i < r->n_sections; i++)
        if (sc[i] != r->entry[i].crc)
            return errf(err, "%s: section %s CRC mismatch (stored 0x%08x, computed 0x%08x): the data is corrupt", r->path,
                        ckpt_section_name(r->entry[i].id), r->entry[i].crc, sc[i]);
    *crc = c;
    return 0;
}

/* ---- replay rows ---------------------------------------------------------- */

/* Where a replay section's bytes come from: the open file r (its section
 * at file offset base) or, when mem is set, memory. */
typedef struct {
    const CkptReader *r;
    uint64_t base;
    const unsigned char *mem;
} SecSrc;

static int src_read(const SecSrc *s, uint64_t off, void *dst, size_t n, char *err) {
    if (s->mem) {
        memcpy(dst, s->mem + off, n);
        return 0;
    }
    unsigned char *p = dst;
    for (size_t done = 0; done < n;) {
        ssize_t got = pread(s->r->fd, p + done, n - done, (off_t)(s->base + off + done));
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) return errf(err, "%s: cannot read: %s", s->r->path, strerror(errno));
        if (got == 0) return errf(err, "%s: the file ended early (changed while read?)", s->r->path);
        done += (size_t)got;
    }
    return 0;
}

/* What one column of the replay section must hold. */
typedef enum {
    COL_FINITE,    /* f32, finite: obs, reward, next_obs */
    COL_ACTION,    /* i32 in [0, num_actions) */
    COL_DISCOUNT,  /* f32 in [0, 1] (NaN fails the comparison) */
    COL_PRIORITY,  /* f64, finite and > 0: max_priority, priorities */
} ColKind;

/* Check the n elements of one column starting at off (width elements per
 * row: obs_dim for observations, else 1). err names the row, 0 = the
 * oldest transition, as docs/CHECKPOINT.md numbers them. */
static int check_column(const SecSrc *src, uint64_t off, uint64_t n, uint64_t width, ColKind kind, const char *name,
                        uint64_t rows, uint32_t n_actions, char *err) {
    enum { CHUNK = 2048 };
    unsigned char buf[CHUNK * 8];
    size_t elem = kind == COL_PRIORITY ? 8 : 4;
    for (uint64_t i0 = 0; i0 < n; i0 += CHUNK) {
        size_t k = n - i0 < CHUNK ? (size_t)(n - i0) : CHUNK;
        if (src_read(src, off + i0 * elem, buf, k * elem, err)) return -1;
        for (size_t j = 0; j < k; j++) {
            const unsigned char *p = buf + j * elem;
            bool ok;
            double v;
            if (kind == COL_PRIORITY) {
                memcpy(&v, p, 8);
                ok = isfinite(v) && v > 0;
            } else if (kind == COL_ACTION) {
                int32_t a;
                memcpy(&a, p, 4);
                v = a;
                ok = a >= 0 && (uint32_t)a < n_actions;
            } else {
                float f;
                memcpy(&f, p, 4);
                v = f;
                ok = kind == COL_FINITE ? isfinite(f) : f >= 0.0f && f <= 1.0f;
            }
            if (ok) continue;
            uint64_t row = (i0 + j) / width;
            const char *want = kind == COL_ACTION     ? "an action in 0 .. num_actions - 1"
                               : kind == COL_DISCOUNT ? "a discount in [0, 1]"
                               : kind == COL_PRIORITY ? "a finite priority > 0"
                                                      : "finite";
            if (width > 1)
                return errf(err, "replay row %" PRIu64 " of %" PRIu64 " (0 = oldest): %s[%" PRIu64 "] is %g, expected %s"
                            ": the replay contents are damaged", row, rows, name, (i0 + j) % width, v, want);
            if (kind == COL_ACTION)
                return errf(err, "replay row %" PRIu64 " of %" PRIu64 " (0 = oldest): action is %.0f, expected 0 .. %u"
                            ": the replay contents are damaged", row, rows, v, n_actions - 1);
            if (rows == 0)
                return errf(err, "replay %s is %g, expected %s: the replay contents are damaged", name, v, want);
            return errf(err, "replay row %" PRIu64 " of %" PRIu64 " (0 = oldest): %s is %g, expected %s"
                        ": the replay contents are damaged", row, rows, name, v, want);
        }
    }
    return 0;
}

/* Check every row of a replay section of `bytes` bytes (docs/CHECKPOINT.md
 * "Replay section") for a network of obs_dim inputs and n_actions actions:
 * the format (replaybuf_serial_info, on the 40-byte header: it reads no
 * further), the id counter (at most 2^53), every observation, reward and
 * next observation finite, every action in [0, n_actions), every discount
 * in [0, 1], and in version 2 max_priority and every priority finite and
 * > 0. The section CRC cannot catch a row a writer never wrote, or a file
 * whose sums were recomputed after it was changed; a restored row out of
 * range would kill a learner (exit 1: a restart loop on the same rows) or
 * look like divergence. 0, or -1 with err naming the row and the field. */
static int check_replay_rows(const SecSrc *src, uint64_t bytes, uint32_t obs_dim, uint32_t n_actions, char *err) {
    unsigned char head[40] = {0};
    if (src_read(src, 0, head, bytes < sizeof head ? (size_t)bytes : sizeof head, err)) return -1;
    ReplaySerInfo si;
    if (bytes > SIZE_MAX) return errf(err, "replay section too large for this machine");
    if (replaybuf_serial_info(head, (size_t)bytes, (int)obs_dim, &si, err)) return -1;
    if (si.total > CKPT_MAX_COUNT)
        return errf(err, "replay counts %llu transitions ever inserted, above 2^53, more than any run can count: "
                    "the replay contents are damaged", (unsigned long long)si.total);
    uint64_t S = si.size, O = obs_dim, off = 40;
    /* In layout order; max_priority is one value, not a column of rows. */
    struct {
        const char *name;
        uint64_t n, width;
        ColKind kind;
        bool scalar;
    } cols[] = {{"obs", S * O, O, COL_FINITE, false},     {"action", S, 1, COL_ACTION, false},
                {"reward", S, 1, COL_FINITE, false},      {"next_obs", S * O, O, COL_FINITE, false},
                {"discount", S, 1, COL_DISCOUNT, false},  {"max_priority", 1, 1, COL_PRIORITY, true},
                {"priority", S, 1, COL_PRIORITY, false}};
    size_t n_cols = si.version == 2 ? 7 : 5;
    for (size_t c = 0; c < n_cols; c++) {
        if (check_column(src, off, cols[c].n, cols[c].width, cols[c].kind, cols[c].name, cols[c].scalar ? 0 : S,
                         n_actions, err))
            return -1;
        off += cols[c].n * (cols[c].kind == COL_PRIORITY ? 8 : 4);
    }
    return 0;
}

/* check_replay_rows on the replay section of the open file r, if it has
 * one; err starts with the path. */
static int check_file_rows(const CkptReader *r, char *err) {
    const CkptEntry *e = ckpt_find(r, CKPT_SEC_REPLAY);
    if (!e) return 0;
    SecSrc src = {r, e->offset, NULL};
    if (check_replay_rows(&src, e->bytes, r->meta.net.obs_dim, r->meta.net.num_actions, err) == 0) return 0;
    if (strncmp(err, r->path, strlen(r->path)) != 0) err_prefix(err, "%s", r->path);
    return -1;
}

/* The optimizer's step count (the first 8 bytes of the optim section, if
 * any) is a counter like the header's: at most 2^53. */
static int check_optim_step(const CkptReader *r, char *err) {
    const CkptEntry *e = ckpt_find(r, CKPT_SEC_OPTIM);
    if (!e || e->bytes < 8) return 0;
    uint64_t step;
    SecSrc src = {r, e->offset, NULL};
    if (src_read(&src, 0, &step, 8, err)) return -1;
    if (step > CKPT_MAX_COUNT)
        return errf(err, "%s: optimizer step count %" PRIu64 " is above 2^53, more than any run can count: the "
                    "optimizer state is damaged", r->path, step);
    return 0;
}

/* check_replay_rows on a replay section read into memory from r. */
static int check_mem_rows(const CkptReader *r, const void *data, size_t bytes, char *err) {
    SecSrc src = {r, 0, data};
    if (check_replay_rows(&src, bytes, r->meta.net.obs_dim, r->meta.net.num_actions, err) == 0) return 0;
    return err_prefix(err, "%s", r->path);
}

/* Where the tiling check stands: the next parameter a shard must start at,
 * and the parameter count every shard must agree on (set by shard 0). */
typedef struct {
    uint64_t next, n_params;
} Tiling;

/* The header of shard q (open in r; a replay file when replay) names the
 * manifest m's run, checkpoint and shard count (m->n_replay for a replay
 * file) and its own index, is of the kind its name says, and the file has
 * the size the manifest records (want; NULL at commit, before there is a
 * manifest). */
static int check_binding(const CkptReader *r, int q, const RunCkptManifest *m, bool replay, const ShardSum *want,
                         char *err) {
    const uint64_t *res = r->meta.reserved;
    const char *path = r->path;
    int n = replay ? m->n_replay : m->n_shards;
    if (res[RES_KIND] != (replay ? KIND_REPLAY : KIND_PARAMS))
        return errf(err, "%s holds %s, not %s", path, res[RES_KIND] == KIND_REPLAY ? "replay contents" : "parameters",
                    replay ? "replay contents" : "parameters");
    if (res[RES_RUN_ID] != m->run_id)
        return errf(err, "%s belongs to run %016" PRIx64 ", but the manifest is of run %016" PRIx64, path,
                    res[RES_RUN_ID], m->run_id);
    if (res[RES_SEQ] != m->seq)
        return errf(err, "%s belongs to checkpoint %" PRIu64 ", but the manifest is of checkpoint %" PRIu64, path,
                    res[RES_SEQ], m->seq);
    if (res[RES_N_SHARDS] != (uint64_t)n)
        return errf(err, "%s was written as one of %" PRIu64 " %sshards, but the manifest lists %d", path,
                    res[RES_N_SHARDS], replay ? "replay " : "", n);
    if (res[RES_INDEX] != (uint64_t)q)
        return errf(err, "%s holds %sshard %" PRIu64 "'s data, not shard %d's", path, replay ? "replay " : "",
                    res[RES_INDEX], q);
    if (res[RES_TARGET_VERSION] > CKPT_MAX_COUNT)
        return errf(err, "%s: target version %" PRIu64 " is above 2^53, more than any run can count: the header is damaged",
                    path, res[RES_TARGET_VERSION]);
    if (want && r->file_bytes != want->bytes)
        return errf(err, "%s is %" PRIu64 " bytes, but the manifest records %" PRIu64 " (the file is damaged or replaced)",
                    path, r->file_bytes, want->bytes);
    if (replay && (r->meta.slice_count != 0 || !ckpt_find(r, CKPT_SEC_REPLAY)))
        return errf(err, "%s is marked as a replay file but holds %s", path,
                    r->meta.slice_count ? "parameters" : "no replay section");
    if (replay && want && res[RES_ROWS] != want->rows)
        return errf(err, "%s holds %" PRIu64 " transitions, but the manifest records %" PRIu64
                    " (the file is damaged or replaced)", path, res[RES_ROWS], want->rows);
    return 0;
}

/* Shard q's slice starts where the previous shard's ended, on a network of
 * the same size; t moves past it. */
static int check_tiling(const CkptReader *r, int q, Tiling *t, char *err) {
    const CkptMeta *h = &r->meta;
    if (q == 0) t->n_params = h->net.n_params;
    if (h->net.n_params != t->n_params)
        return errf(err, "%s describes a network of %" PRIu64 " parameters, shard 0 one of %" PRIu64, r->path,
                    h->net.n_params, t->n_params);
    if (h->slice_offset < t->next)
        return errf(err,
                    "%s holds parameters [%" PRIu64 ", %" PRIu64 "), which overlap the earlier shards' [0, %" PRIu64
                    "): the shard files do not tile the parameters",
                    r->path, h->slice_offset, h->slice_offset + h->slice_count, t->next);
    if (h->slice_offset > t->next)
        return errf(err, "%s starts at parameter %" PRIu64 ", leaving [%" PRIu64 ", %" PRIu64 ") in no shard file",
                    r->path, h->slice_offset, t->next, h->slice_offset);
    t->next = h->slice_offset + h->slice_count;
    return 0;
}

/* Open shard q of the checkpoint in dir (m its manifest) into r and check
 * its binding (check_binding), its CRC and its sections' CRCs against want
 * (want NULL: compute size and CRC into got instead; check_crc false: size
 * only; with want and check_crc, the rows of a replay section too) and its
 * place in the tiling (t). On success r is open; on error r is closed. */
static int open_shard(const char *dir, int q, const RunCkptManifest *m, const ShardSum *want, bool check_crc,
                      ShardSum *got, Tiling *t, CkptReader *r, char *err) {
    char path[PATH_LEN], name[32];
    shard_name(name, sizeof name, q);
    if (join(path, dir, name, err)) return -1;
    if (ckpt_open(r, path, err) != 0) return -1;
    if (check_binding(r, q, m, false, want, err)) goto fail;
    if (!want || check_crc) {
        uint32_t crc;
        if (file_crc(r, want, &crc, err)) goto fail;
        if (got) *got = (ShardSum){r->file_bytes, crc, 0};
        if (want && (check_optim_step(r, err) || check_file_rows(r, err))) goto fail;
    }
    if (check_tiling(r, q, t, err)) goto fail;
    return 0;
fail:
    ckpt_close(r);
    return -1;
}

/* Open replay file s of the checkpoint in dir (m its manifest) into r and
 * check its binding and, against want, its size, transitions, CRC and
 * section CRCs (want NULL: compute them into got instead), and with rows
 * every row of its contents (check_replay_rows). On success r is open; on
 * error r is closed. */
static int open_replay(const char *dir, int s, const RunCkptManifest *m, const ShardSum *want, ShardSum *got,
                       bool rows, CkptReader *r, char *err) {
    char path[PATH_LEN], name[32];
    replay_name(name, sizeof name, s);
    if (join(path, dir, name, err)) return -1;
    if (ckpt_open(r, path, err) != 0) return -1;
    uint32_t crc;
    if (check_binding(r, s, m, true, want, err) || file_crc(r, want, &crc, err)) goto fail;
    if (got) *got = (ShardSum){r->file_bytes, crc, r->meta.reserved[RES_ROWS]};
    if (rows && check_file_rows(r, err)) goto fail;
    return 0;
fail:
    ckpt_close(r);
    return -1;
}

static int tiling_done(const char *dir, const Tiling *t, char *err) {
    if (t->next != t->n_params)
        return errf(err, "%s: the shard files hold parameters [0, %" PRIu64 ") of %" PRIu64 ", leaving the rest in none",
                    dir, t->next, t->n_params);
    return 0;
}

/* ---- MANIFEST ----------------------------------------------------------- */

static const char *kind_of(const RunCkptManifest *m) { return m->kind[0] ? m->kind : "periodic"; }

static bool kind_known(const char *k) {
    return strcmp(k, "periodic") == 0 || strcmp(k, "final") == 0 || strcmp(k, "best") == 0;
}

static bool is_word(const char *s) {
    if (!*s) return false;
    for (; *s; s++)
        if (*s <= ' ' || *s > '~') return false;
    return true;
}

/* The MANIFEST text for m and its shards' sums (caller frees). */
/* The "history" line: the run's evaluation record (EvalTrack) up to this
 * checkpoint, "history none" when the writer kept none. NaN prints as nan. */
static void history_text(const RunCkptManifest *m, char *out, size_t cap) {
    const EvalTrack *h = &m->history;
    if (!m->has_history) {
        snprintf(out, cap, "history none\n");
        return;
    }
    snprintf(out, cap,
             "history evaluations %d last %.17g best %.17g best_env_steps %" PRIu64 " best_version %" PRIu64
             " best_seconds %.17g solved %d solved_env_steps %" PRIu64 " solved_version %" PRIu64
             " solved_seconds %.17g\n",
             h->evaluations, h->last, h->best, h->best_env_steps, h->best_version, h->best_seconds, h->solved ? 1 : 0,
             h->solved_at_env_steps, h->solved_at_version, h->solved_at_seconds);
}

/* Parse the value of a "history" line into m. */
static int parse_history(const char *v, RunCkptManifest *m) {
    if (strcmp(v, "none") == 0) return 0;
    EvalTrack *h = &m->history;
    char last[40], best[40], bsec[40], ssec[40];
    int solved = 0, used = 0;
    unsigned long long be, bv, se, sv;
    if (sscanf(v,
               "evaluations %d last %39s best %39s best_env_steps %llu best_version %llu best_seconds %39s solved %d "
               "solved_env_steps %llu solved_version %llu solved_seconds %39s%n",
               &h->evaluations, last, best, &be, &bv, bsec, &solved, &se, &sv, ssec, &used) != 10 ||
        v[used] != '\0' || h->evaluations < 0 || (solved != 0 && solved != 1))
        return -1;
    char *end;
    h->last = strtod(last, &end);
    if (*end) return -1;
    h->best = strtod(best, &end);
    if (*end) return -1;
    h->best_seconds = strtod(bsec, &end);
    if (*end) return -1;
    h->solved_at_seconds = strtod(ssec, &end);
    if (*end) return -1;
    h->best_env_steps = be;
    h->best_version = bv;
    h->solved = solved == 1;
    h->solved_at_env_steps = se;
    h->solved_at_version = sv;
    m->has_history = 1;
    return 0;
}

static char *manifest_text(const RunCkptManifest *m, const ShardSum *sums, const ShardSum *rsums) {
    size_t cap = 2048 + 64 * (size_t)m->n_shards + 96 * (size_t)m->n_replay, n = 0;
    char *out = xmalloc(cap);
    char eval[128];
    if (m->eval_episodes > 0)
        snprintf(eval, sizeof eval, "eval_mean %.17g\neval_episodes %d\neval_seed %" PRIu64 "\n", m->eval_mean,
                 m->eval_episodes, m->eval_seed);
    else
        snprintf(eval, sizeof eval, "eval_mean none\neval_episodes 0\neval_seed 0\n");
    char hist[512];
    history_text(m, hist, sizeof hist);
    n += (size_t)snprintf(out + n, cap - n,
                          MANIFEST_HEAD " %d\nrun_id %016" PRIx64 "\nseq %" PRIu64 "\nkind %s\nmode %s\n"
                                        "env_steps %" PRIu64 "\nupdates %" PRIu64 "\nepisodes %" PRIu64
                                        "\nwall_seconds %.17g\nparams_version %" PRIu64 "\n%s%sshards %d\n",
                          MANIFEST_VERSION, m->run_id, m->seq, kind_of(m), m->mode, m->env_steps, m->updates,
                          m->episodes, m->wall_seconds, m->params_version, eval, hist, m->n_shards);
    for (int q = 0; q < m->n_shards; q++)
        n += (size_t)snprintf(out + n, cap - n, "shard %d bytes %" PRIu64 " crc32c %08x\n", q, sums[q].bytes,
                              sums[q].crc);
    /* Only with replay files, so a checkpoint without them reads in every
     * build that reads format 2. */
    if (m->n_replay > 0) n += (size_t)snprintf(out + n, cap - n, "replay_shards %d\n", m->n_replay);
    for (int s = 0; s < m->n_replay; s++)
        n += (size_t)snprintf(out + n, cap - n, "replay %d bytes %" PRIu64 " crc32c %08x transitions %" PRIu64 "\n", s,
                              rsums[s].bytes, rsums[s].crc, rsums[s].rows);
    uint32_t crc = crc32c(out, n);
    snprintf(out + n, cap - n, "crc32c %08x\n", crc);
    return out;
}

/* Check m's fields, open every shard file it lists (binding and tiling, as
 * a reader will), and write dir/MANIFEST with their sizes and CRCs. */
static int write_manifest(const char *dir, const RunCkptManifest *m, char *err) {
    if (m->n_shards < 1 || m->n_shards > MANIFEST_MAX_SHARDS)
        return errf(err, "cannot commit checkpoint %s: %d shards (1 .. %d)", dir, m->n_shards, MANIFEST_MAX_SHARDS);
    if (m->n_replay < 0 || m->n_replay > MANIFEST_MAX_SHARDS)
        return errf(err, "cannot commit checkpoint %s: %d replay files (0 .. %d)", dir, m->n_replay,
                    MANIFEST_MAX_SHARDS);
    if (!kind_known(kind_of(m)))
        return errf(err, "cannot commit checkpoint %s: kind \"%s\" (periodic, final or best)", dir, m->kind);
    if (!memchr(m->mode, '\0', sizeof m->mode) || !is_word(m->mode))
        return errf(err, "cannot commit checkpoint %s: mode must be one word", dir);
    if (m->eval_episodes < 0 || (m->eval_episodes > 0 && !isfinite(m->eval_mean)))
        return errf(err, "cannot commit checkpoint %s: evaluation of %d episodes with mean %g", dir,
                    m->eval_episodes, m->eval_mean);
    ShardSum *sums = xcalloc((size_t)m->n_shards, sizeof *sums);
    Tiling t = {0, 0};
    int rc = 0;
    for (int q = 0; q < m->n_shards && rc == 0; q++) {
        CkptReader r;
        rc = open_shard(dir, q, m, NULL, true, &sums[q], &t, &r, err);
        if (rc == 0) ckpt_close(&r);
    }
    if (rc == 0) rc = tiling_done(dir, &t, err);
    ShardSum *rsums = xcalloc((size_t)m->n_replay + 1, sizeof *rsums);
    for (int s = 0; s < m->n_replay && rc == 0; s++) {
        CkptReader r;
        rc = open_replay(dir, s, m, NULL, &rsums[s], false, &r, err);
        if (rc == 0) ckpt_close(&r);
    }
    if (rc != 0) {
        free(sums);
        free(rsums);
        return err_prefix(err, "cannot commit checkpoint %s", dir);
    }
    char *text = manifest_text(m, sums, rsums);
    rc = write_atomic(dir, "MANIFEST", text, err);
    free(text);
    free(sums);
    free(rsums);
    return rc;
}

/* Cursor over the manifest's lines, for the parser below. */
typedef struct {
    char *p;              /* start of the next line */
    const char *path;
    int line;
} Lines;

/* Take the next line, which must read "key value"; value points into the
 * text (NUL-terminated in place). */
static int field(Lines *L, const char *key, char **value, char *err) {
    L->line++;
    char *nl = strchr(L->p, '\n');
    if (!nl) return errf(err, "%s: line %d: expected \"%s ...\", found the end of the file", L->path, L->line, key);
    *nl = '\0';
    size_t k = strlen(key);
    if (strncmp(L->p, key, k) != 0 || L->p[k] != ' ' || L->p[k + 1] == '\0')
        return errf(err, "%s: line %d: expected \"%s ...\", found \"%.60s\"", L->path, L->line, key, L->p);
    *value = L->p + k + 1;
    L->p = nl + 1;
    return 0;
}

static int field_u64(Lines *L, const char *key, int base, uint64_t *out, char *err) {
    char *v, *end;
    if (field(L, key, &v, err)) return -1;
    errno = 0;
    unsigned long long x = strtoull(v, &end, base);
    if (!isxdigit((unsigned char)*v) || *end || errno)
        return errf(err, "%s: line %d: %s is \"%.40s\", not a number", L->path, L->line, key, v);
    *out = x;
    return 0;
}

/* A counter (env_steps, updates, ...): at most CKPT_MAX_COUNT (2^53), so
 * that a damaged or crafted manifest cannot make a resumed run's counters
 * wrap (2^64 - 1 plus one step is 0) or lose exactness as doubles. */
static int field_count(Lines *L, const char *key, uint64_t *out, char *err) {
    if (field_u64(L, key, 10, out, err)) return -1;
    if (*out > CKPT_MAX_COUNT)
        return errf(err, "%s: line %d: %s is %" PRIu64 ", above 2^53, more than any run can count: the manifest is damaged",
                    L->path, L->line, key, *out);
    return 0;
}

static int field_int(Lines *L, const char *key, long lo, long hi, int *out, char *err) {
    uint64_t x;
    if (field_u64(L, key, 10, &x, err)) return -1;
    if (x < (uint64_t)lo || x > (uint64_t)hi)
        return errf(err, "%s: line %d: %s is %" PRIu64 ", outside %ld .. %ld", L->path, L->line, key, x, lo, hi);
    *out = (int)x;
    return 0;
}

static int field_double(Lines *L, const char *key, double *out, char *err) {
    char *v, *end;
    if (field(L, key, &v, err)) return -1;
    if (strcmp(v, "none") == 0) {
        *out = NAN;
        return 0;
    }
    *out = strtod(v, &end);
    if (*end || end == v || !isfinite(*out))
        return errf(err, "%s: line %d: %s is \"%.40s\", not a finite number", L->path, L->line, key, v);
    return 0;
}

static int field_word(Lines *L, const char *key, char *out, size_t cap, char *err) {
    char *v;
    if (field(L, key, &v, err)) return -1;
    if (!is_word(v) || strlen(v) >= cap)
        return errf(err, "%s: line %d: %s \"%.40s\" is not one word of at most %zu characters", L->path, L->line, key,
                    v, cap - 1);
    snprintf(out, cap, "%s", v);
    return 0;
}

/* Read dir/MANIFEST into m and, if sums is not NULL, the shard sums
 * (*sums: n_shards entries, caller frees), if rsums is not NULL, the replay
 * files' (*rsums: n_replay entries, at least one allocated; caller frees). */
static int read_manifest(const char *dir, RunCkptManifest *m, ShardSum **sums, ShardSum **rsums, char *err) {
    memset(m, 0, sizeof *m);
    if (sums) *sums = NULL;
    if (rsums) *rsums = NULL;
    char path[PATH_LEN];
    if (join(path, dir, "MANIFEST", err)) return -1;
    int fd = open_regular(path, "manifest", err); /* a FIFO must not hang the reader */
    if (fd < 0) return -1;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > (off_t)MANIFEST_MAX_BYTES) {
        close(fd);
        return errf(err, "%s: not a checkpoint manifest (not a regular file of at most %u bytes)", path,
                    MANIFEST_MAX_BYTES);
    }
    size_t len = (size_t)st.st_size, done = 0;
    char *text = xmalloc(len + 1);
    while (done < len) {
        ssize_t r = read(fd, text + done, len - done);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        done += (size_t)r;
    }
    close(fd);
    text[done] = '\0';
    int rc = -1;
    ShardSum *s = NULL, *rs = NULL;
    /* The first line says which format this is, before anything else is
     * believed: format 1 had no run id and no shard checksums. */
    unsigned version = 0;
    int head_len = 0;
    if (sscanf(text, MANIFEST_HEAD " %u%n", &version, &head_len) != 1 || text[head_len] != '\n') {
        errf(err, "%s: not a checkpoint manifest (no \"" MANIFEST_HEAD "\" line)", path);
        goto out;
    }
    if (version < MANIFEST_VERSION) {
        errf(err,
             "%s: written by an older gorila (manifest format %u; this build reads format %d, which binds each "
             "shard file to its checkpoint): this checkpoint cannot be used",
             path, version, MANIFEST_VERSION);
        goto out;
    }
    if (version > MANIFEST_VERSION) {
        errf(err, "%s: written by a newer gorila (manifest format %u; this build reads format %d)", path, version,
             MANIFEST_VERSION);
        goto out;
    }
    /* The last line is the CRC of everything before it. */
    if (done == 0 || text[done - 1] != '\n') {
        errf(err, "%s: truncated (no final newline): the file is damaged", path);
        goto out;
    }
    text[done - 1] = '\0';
    char *last = strrchr(text, '\n');
    unsigned crc_file = 0;
    int crc_len = 0;
    if (!last || sscanf(last + 1, "crc32c %8x%n", &crc_file, &crc_len) != 1 || last[1 + crc_len] != '\0') {
        errf(err, "%s: no crc32c line at the end: the file is damaged or truncated", path);
        goto out;
    }
    uint32_t crc = crc32c(text, (size_t)(last + 1 - text));
    if (crc != crc_file) {
        errf(err, "%s: checksum mismatch (stored %08x, computed %08x): the file is damaged", path, crc_file, crc);
        goto out;
    }
    last[1] = '\0';
    Lines L = {text + head_len + 1, path, 1};
    char kind[sizeof m->kind];
    if (field_u64(&L, "run_id", 16, &m->run_id, err) || field_count(&L, "seq", &m->seq, err) ||
        field_word(&L, "kind", kind, sizeof kind, err) || field_word(&L, "mode", m->mode, sizeof m->mode, err) ||
        field_count(&L, "env_steps", &m->env_steps, err) || field_count(&L, "updates", &m->updates, err) ||
        field_count(&L, "episodes", &m->episodes, err) || field_double(&L, "wall_seconds", &m->wall_seconds, err) ||
        field_count(&L, "params_version", &m->params_version, err) ||
        field_double(&L, "eval_mean", &m->eval_mean, err) ||
        field_int(&L, "eval_episodes", 0, 1L << 30, &m->eval_episodes, err) ||
        field_u64(&L, "eval_seed", 10, &m->eval_seed, err))
        goto out;
    char *hv;
    if (field(&L, "history", &hv, err)) goto out;
    if (parse_history(hv, m) != 0) {
        errf(err, "%s: line %d: malformed history \"%.60s\"", path, L.line, hv);
        goto out;
    }
    const struct {
        const char *name;
        uint64_t value;
    } hcounts[] = {{"best_env_steps", m->history.best_env_steps},
                   {"best_version", m->history.best_version},
                   {"solved_env_steps", m->history.solved_at_env_steps},
                   {"solved_version", m->history.solved_at_version}};
    for (size_t i = 0; i < sizeof hcounts / sizeof hcounts[0]; i++)
        if (hcounts[i].value > CKPT_MAX_COUNT) {
            errf(err, "%s: line %d: history %s is %" PRIu64 ", above 2^53, more than any run can count: the manifest "
                 "is damaged", path, L.line, hcounts[i].name, hcounts[i].value);
            goto out;
        }
    if (field_int(&L, "shards", 1, MANIFEST_MAX_SHARDS, &m->n_shards, err)) goto out;
    if (!kind_known(kind)) {
        errf(err, "%s: kind \"%s\" (periodic, final or best)", path, kind);
        goto out;
    }
    snprintf(m->kind, sizeof m->kind, "%s", kind);
    if (!(m->wall_seconds >= 0 && m->wall_seconds <= 1e12) || (m->eval_episodes > 0) == isnan(m->eval_mean)) {
        errf(err, "%s: wall_seconds or the evaluation is malformed", path);
        goto out;
    }
    s = xcalloc((size_t)m->n_shards, sizeof *s);
    for (int q = 0; q < m->n_shards; q++) {
        char *v;
        int idx = -1, used = 0;
        unsigned long long bytes = 0;
        unsigned c = 0;
        if (field(&L, "shard", &v, err)) goto out;
        if (sscanf(v, "%d bytes %llu crc32c %8x%n", &idx, &bytes, &c, &used) != 3 || v[used] != '\0' || idx != q) {
            errf(err, "%s: line %d: expected \"shard %d bytes N crc32c X\", found \"shard %.60s\"", path, L.line, q, v);
            goto out;
        }
        s[q] = (ShardSum){bytes, c, 0};
    }
    /* Optional: the replay files (absent in a checkpoint without replay). */
    if (strncmp(L.p, "replay_shards ", 14) == 0 &&
        field_int(&L, "replay_shards", 1, MANIFEST_MAX_SHARDS, &m->n_replay, err))
        goto out;
    rs = xcalloc((size_t)m->n_replay + 1, sizeof *rs);
    for (int q = 0; q < m->n_replay; q++) {
        char *v;
        int idx = -1, used = 0;
        unsigned long long bytes = 0, rows = 0;
        unsigned c = 0;
        if (field(&L, "replay", &v, err)) goto out;
        if (sscanf(v, "%d bytes %llu crc32c %8x transitions %llu%n", &idx, &bytes, &c, &rows, &used) != 4 ||
            v[used] != '\0' || idx != q) {
            errf(err, "%s: line %d: expected \"replay %d bytes N crc32c X transitions T\", found \"replay %.60s\"", path,
                 L.line, q, v);
            goto out;
        }
        if (rows > CKPT_MAX_COUNT) {
            errf(err, "%s: line %d: replay %d transitions is %llu, above 2^53, more than any run can count: the "
                 "manifest is damaged", path, L.line, q, rows);
            goto out;
        }
        rs[q] = (ShardSum){bytes, c, rows};
        m->replay_transitions += rows;
    }
    if (*L.p != '\0') {
        errf(err, "%s: line %d: unexpected \"%.40s\" after the %s list", path, L.line + 1, L.p,
             m->n_replay ? "replay file" : "shard");
        goto out;
    }
    snprintf(m->dir, sizeof m->dir, "%s", dir);
    rc = 0;
out:
    free(text);
    if (rc == 0 && sums) *sums = s;
    else free(s);
    if (rc == 0 && rsums) *rsums = rs;
    else free(rs);
    return rc;
}

int runckpt_read_manifest(const char *dir, RunCkptManifest *m, char *err) {
    return read_manifest(dir, m, NULL, NULL, err);
}

/* Every shard of the checkpoint whose manifest m and sums were read. */
static int verify_shards(const char *dir, const RunCkptManifest *m, const ShardSum *sums, char *err) {
    Tiling t = {0, 0};
    for (int q = 0; q < m->n_shards; q++) {
        CkptReader r;
        if (open_shard(dir, q, m, &sums[q], true, NULL, &t, &r, err)) return -1;
        ckpt_close(&r);
    }
    return tiling_done(dir, &t, err);
}

/* Every replay file of the checkpoint whose manifest m and replay sums
 * were read. */
static int verify_replays(const char *dir, const RunCkptManifest *m, const ShardSum *rsums, char *err) {
    for (int s = 0; s < m->n_replay; s++) {
        CkptReader r;
        if (open_replay(dir, s, m, &rsums[s], NULL, true, &r, err)) return -1;
        ckpt_close(&r);
    }
    return 0;
}

int runckpt_verify(const char *dir, RunCkptManifest *m, char *err) {
    ShardSum *sums, *rsums;
    if (read_manifest(dir, m, &sums, &rsums, err)) return -1;
    int rc = verify_shards(dir, m, sums, err);
    if (rc == 0) rc = verify_replays(dir, m, rsums, err);
    free(sums);
    free(rsums);
    return rc;
}

/* ---- commit, latest, prune ------------------------------------------------ */

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

/* Delete the ckpt-* directories of base beyond the newest `keep` up to
 * committed, and every one numbered above committed (a line abandoned by
 * a fallback). The committed one always stays. Best effort. */
static void prune(const char *base, uint64_t committed, int keep) {
    uint64_t *seqs;
    int n = list_ckpts(base, &seqs), kept = 0;
    for (int i = 0; i < n; i++) {
        uint64_t s = seqs[i];
        if (s <= committed && (s == committed || ++kept < keep)) continue;
        char dir[PATH_LEN], name[64], err[ERR_LEN];
        snprintf(name, sizeof name, "ckpt-%06" PRIu64, s);
        if (join(dir, base, name, err) == 0) remove_tree(dir, err);
    }
    free(seqs);
}

void runckpt_drop_above(const char *run_dir, uint64_t seq) {
    char base[PATH_LEN], err[ERR_LEN];
    if (join(base, run_dir, "checkpoints", err)) return;
    uint64_t *seqs;
    int n = list_ckpts(base, &seqs);
    /* Renamed, not deleted: a checkpoint skipped by the fallback may have
     * failed for a passing reason (an I/O error on a shared filesystem), so
     * its bytes stay for the user; the new name does not start with ckpt-,
     * so neither the fallback, keep, pruning nor a user's ckpt-* glob sees
     * it again. */
    for (int i = 0; i < n && seqs[i] > seq; i++) {
        char dir[PATH_LEN], to[PATH_LEN], name[64], moved[96];
        snprintf(name, sizeof name, "ckpt-%06" PRIu64, seqs[i]);
        if (join(dir, base, name, err) != 0) continue;
        int done = -1;
        for (int k = 1; k <= 99 && done != 0; k++) {
            snprintf(moved, sizeof moved, k == 1 ? "abandoned-%s" : "abandoned-%s-%d", name, k);
            if (join(to, base, moved, err) != 0) break;
            struct stat st;
            if (lstat(to, &st) == 0) continue; /* an earlier resume's */
            done = rename(dir, to);
        }
        if (done == 0)
            fprintf(stderr, "gorila: note: %s is numbered above the checkpoint this run resumes from: kept as %s\n",
                    dir, to);
        else
            fprintf(stderr, "gorila: warning: could not set %s aside: %s\n", dir, strerror(errno));
    }
    fflush(stderr);
    free(seqs);
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
    if (join(base, run_dir, "checkpoints", err)) return -1;
    char latest[128];
    if (snprintf(latest, sizeof latest, "%s\n", name) >= (int)sizeof latest)
        return errf(err, "checkpoint directory name too long: %s", name);
    if (write_atomic(base, "latest", latest, err)) return -1;
    prune(base, m->seq, keep);
    return 0;
}

/* Verify checkpoint base/name; it must also be of the checkpoint its name
 * says. */
static int try_ckpt(const char *base, const char *name, RunCkptManifest *m, char *err) {
    char dir[PATH_LEN];
    if (join(dir, base, name, err) || runckpt_verify(dir, m, err)) return -1;
    uint64_t s;
    char extra;
    if (sscanf(name, "ckpt-%" SCNu64 "%c", &s, &extra) != 1 || s != m->seq)
        return errf(err, "%s holds checkpoint %" PRIu64 ", not the one its name says", dir, m->seq);
    return 0;
}

/* ---- the run id of a run directory ------------------------------------------ */

#define RUN_ID_FILE "run_id"

int runckpt_run_id(const char *run_dir, uint64_t *id, char *err) {
    char path[PATH_LEN], text[64];
    *id = 0;
    if (join(path, run_dir, RUN_ID_FILE, err)) return -1;
    struct stat st;
    if (lstat(path, &st) != 0 && errno == ENOENT) return 1;
    if (read_small_file(path, "", text, sizeof text, err)) return -1;
    uint64_t x = 0;
    int used = 0;
    if (sscanf(text, "%16" SCNx64 "%n", &x, &used) != 1 || used != 16 || strcmp(text + used, "\n") != 0 || x == 0 ||
        !isxdigit((unsigned char)text[0]))
        return errf(err, "%s: not a run id (expected 16 hex digits and a newline): the run directory is damaged", path);
    *id = x;
    return 0;
}

int runckpt_save_run_id(const char *run_dir, uint64_t id, char *err) {
    char text[32];
    snprintf(text, sizeof text, "%016" PRIx64 "\n", id);
    return write_atomic(run_dir, RUN_ID_FILE, text, err);
}

/* The checkpoint m belongs to run_dir's run: the run directory records no
 * id (made by a build before run_id files) or the same as m's. */
static int check_run(const char *run_dir, const RunCkptManifest *m, char *err) {
    uint64_t own;
    int rc = runckpt_run_id(run_dir, &own, err);
    if (rc < 0) return -1;
    if (rc == 1 || own == m->run_id) return 0;
    return errf(err,
                "checkpoint %s belongs to run %016" PRIx64 ", but run directory %s is run %016" PRIx64
                " (its " RUN_ID_FILE " file): a checkpoint copied in from another run is never resumed or taken as "
                "this run's; remove it, or evaluate it by its path",
                m->dir, m->run_id, run_dir, own);
}

/* ---- choosing the latest ------------------------------------------------------ */

/* How often a reader starts over when a running job moved `latest` (and
 * pruned what it had named) while it was reading: each time means the job
 * committed another checkpoint meanwhile, so this bounds the wait, not the
 * chance of success on an ordinary disk. */
#define CHOOSE_RETRIES 64

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
        } else if (join(named, base, name, err) == 0) {
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
    if (join(base, run_dir, "checkpoints", err) || join(latest, base, "latest", err)) return -1;
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
    if (check_run(run_dir, m, err)) {
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

/* ---- best ----------------------------------------------------------------- */

#define BEST_STAGING "best.new-"
#define BEST_ASIDE "best.old-"

int runckpt_begin_best(const char *run_dir, uint64_t seq, char *dir, char *err) {
    char base[PATH_LEN], name[64];
    if (join(base, run_dir, "checkpoints", err) || mkdir_ok(base, err)) return -1;
    snprintf(name, sizeof name, BEST_STAGING "%06" PRIu64, seq);
    if (join(dir, base, name, err)) return -1;
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
        if (join(path, base, names[i], err) == 0) remove_tree(path, err);
    }
}

int runckpt_commit_best(const char *run_dir, const char *dir, const RunCkptManifest *m, char *err) {
    char base[PATH_LEN], best[PATH_LEN];
    if (join(base, run_dir, "checkpoints", err) || join(best, base, "best", err)) return -1;
    const char *name = strrchr(dir, '/');
    name = name ? name + 1 : dir;
    if (strncmp(name, BEST_STAGING, strlen(BEST_STAGING)) != 0)
        return errf(err, "cannot commit %s as the best checkpoint: not a directory from runckpt_begin_best", dir);
    RunCkptManifest b = *m;
    snprintf(b.kind, sizeof b.kind, "best");
    b.n_replay = 0; /* best holds parameters only: its replay files are never linked in */
    if (write_manifest(dir, &b, err)) return -1;
    struct stat st;
    if (lstat(best, &st) == 0) {
        /* One rename swaps the two names: readers of best see the old
         * checkpoint or the new one, never neither. The old one is then at
         * dir. */
        if (renameat2(AT_FDCWD, dir, AT_FDCWD, best, RENAME_EXCHANGE) != 0) {
            if (errno != EINVAL && errno != ENOSYS)
                return errf(err, "cannot replace %s with %s: %s", best, dir, strerror(errno));
            /* A file system without RENAME_EXCHANGE: two renames, with a
             * moment in which best is missing. */
            char old[PATH_LEN], oname[64];
            snprintf(oname, sizeof oname, BEST_ASIDE "%06" PRIu64, b.seq);
            if (join(old, base, oname, err) || remove_tree(old, err)) return -1;
            if (rename(best, old) != 0) return errf(err, "cannot move %s aside: %s", best, strerror(errno));
            if (rename(dir, best) != 0) {
                int e = errno;
                rename(old, best);
                return errf(err, "cannot rename %s to %s: %s", dir, best, strerror(e));
            }
            fsync_dir(base);
            remove_tree(old, err);
        } else {
            fsync_dir(base);
            remove_tree(dir, err);
        }
    } else if (errno == ENOENT) {
        if (rename(dir, best) != 0) return errf(err, "cannot rename %s to %s: %s", dir, best, strerror(errno));
        fsync_dir(base);
    } else {
        return errf(err, "cannot check %s: %s", best, strerror(errno));
    }
    clean_best_leftovers(base, b.seq);
    return 0;
}

int runckpt_best(const char *run_dir, RunCkptManifest *m, char *err) {
    char base[PATH_LEN], best[PATH_LEN];
    if (join(base, run_dir, "checkpoints", err) || join(best, base, "best", err)) return -1;
    struct stat st;
    if (lstat(best, &st) != 0 && errno == ENOENT) {
        memset(m, 0, sizeof *m);
        return errf(err, "no best checkpoint in %s (%s does not exist)", run_dir, best);
    }
    if (runckpt_verify(best, m, err)) return -1;
    if (strcmp(m->kind, "best") != 0) return errf(err, "%s is a checkpoint of kind %s, not best", best, m->kind);
    return check_run(run_dir, m, err);
}

/* ---- reading a slice -------------------------------------------------------- */

int runckpt_read_slice(const Config *cfg, const QNet *net, const char *dir, RunCkptShard *sh, char *err) {
    RunCkptManifest man;
    ShardSum *sums;
    if (read_manifest(dir, &man, &sums, NULL, err)) return -1;
    /* Pass 1: the whole set is bound, intact and tiles the parameters. */
    if (verify_shards(dir, &man, sums, err)) {
        free(sums);
        return -1;
    }
    CkptMeta want;
    fill_net(cfg, net, &want);
    size_t lo = sh->off, hi = sh->off + sh->len;
    size_t covered = 0;
    bool have_version = false;
    int rc = -1;
    float *buf = NULL;
    uint8_t *obuf = NULL;
    Tiling t = {0, 0};
    /* Pass 2: read the overlapping parts, each file checked again as it is
     * reopened (binding, size, tiling; the data by its section CRCs). */
    for (int q = 0; q < man.n_shards; q++) {
        CkptReader r;
        if (open_shard(dir, q, &man, &sums[q], false, NULL, &t, &r, err)) goto out;
        const char *path = r.path;
        const CkptMeta *m = &r.meta;
        want.slice_offset = m->slice_offset;
        want.slice_count = m->slice_count;
        if (ckpt_check_compatible(m, &want, err) != 0) goto bad;
        size_t qo = m->slice_offset, ql = m->slice_count;
        size_t a = qo > lo ? qo : lo, b = qo + ql < hi ? qo + ql : hi;
        if (sh->opt && m->optimizer != ckpt_kind(sh->opt->p.kind)) {
            errf(err, "optimizer differs: checkpoint has %s state, config uses %s", ckpt_optim_name(m->optimizer),
                 ckpt_optim_name(ckpt_kind(sh->opt->p.kind)));
            goto bad;
        }
        bool holds_start = (lo >= qo && lo < qo + ql) || (sh->len == 0 && q == 0);
        if (holds_start || !have_version) {
            sh->version = m->param_version;
            sh->target_version = m->reserved[RES_TARGET_VERSION];
            sh->env_steps = m->env_steps;
            sh->updates = m->updates;
            sh->episodes = m->episodes;
            sh->wall_seconds = m->wall_seconds;
            have_version = holds_start;
        }
        if (a < b) {
            free(buf);
            buf = xmalloc(ql * sizeof(float));
            if (ckpt_read_section(&r, CKPT_SEC_PARAMS, buf, ql * sizeof(float), err)) goto bad;
            memcpy(sh->params + (a - lo), buf + (a - qo), (b - a) * sizeof(float));
            if (ckpt_find(&r, CKPT_SEC_TARGET)) {
                if (ckpt_read_section(&r, CKPT_SEC_TARGET, buf, ql * sizeof(float), err)) goto bad;
                memcpy(sh->target + (a - lo), buf + (a - qo), (b - a) * sizeof(float));
            } else {
                memcpy(sh->target + (a - lo), sh->params + (a - lo), (b - a) * sizeof(float));
            }
            if (sh->opt) {
                size_t slots = m->optim_slots, bytes = 8 + slots * ql * sizeof(float);
                if (sh->len && slots * sh->len != sh->opt->n_state) {
                    errf(err, "optimizer state has %zu arrays per parameter, expected %zu", slots,
                         sh->opt->n_state / sh->len);
                    goto bad;
                }
                free(obuf);
                obuf = xmalloc(bytes);
                if (ckpt_read_section(&r, CKPT_SEC_OPTIM, obuf, bytes, err)) goto bad;
                uint64_t step;
                memcpy(&step, obuf, 8);
                if (step > CKPT_MAX_COUNT) {
                    errf(err, "optimizer step count %" PRIu64 " is above 2^53, more than any run can count: the "
                         "optimizer state is damaged", step);
                    goto bad;
                }
                if (holds_start) sh->opt->step = step;
                const float *st = (const float *)(obuf + 8);
                for (size_t k = 0; k < slots; k++)
                    memcpy(sh->opt->state + k * sh->len + (a - lo), st + k * ql + (a - qo), (b - a) * sizeof(float));
            }
            covered += b - a;
        }
        if (holds_start && sh->rngs && sh->n_rngs > 0) {
            const CkptEntry *e = ckpt_find(&r, CKPT_SEC_RNG);
            if (!e || e->bytes != (uint64_t)sh->n_rngs * sizeof(Rng)) {
                errf(err, "random generator states missing or of another count");
                goto bad;
            }
            if (ckpt_read_section(&r, CKPT_SEC_RNG, sh->rngs, e->bytes, err)) goto bad;
        }
        if (holds_start && sh->replay && ckpt_find(&r, CKPT_SEC_REPLAY)) {
            const CkptEntry *e = ckpt_find(&r, CKPT_SEC_REPLAY);
            uint8_t *rep = xmalloc(e->bytes);
            size_t dropped = 0;
            int rr = ckpt_read_section(&r, CKPT_SEC_REPLAY, rep, e->bytes, err);
            if (rr == 0) rr = check_mem_rows(&r, rep, e->bytes, err);
            if (rr == 0)
                rr = replaystore_restore(sh->replay, rep, e->bytes, &dropped, err);
            free(rep);
            if (rr) goto bad;
        }
        ckpt_close(&r);
        continue;
    bad:
        /* Messages of ckptfile already start with the path. */
        if (strncmp(err, path, strlen(path)) != 0) err_prefix(err, "%s", path);
        ckpt_close(&r);
        goto out;
    }
    if (covered != sh->len) {
        errf(err, "%s: the shard files cover %zu of the %zu parameters in [%zu, %zu)", dir, covered, sh->len, lo, hi);
        goto out;
    }
    rc = 0;
out:
    free(sums);
    free(buf);
    free(obuf);
    return rc;
}

int runckpt_best_from(const char *run_dir, const char *ckpt_dir, const RunCkptManifest *m, char *err) {
    char dir[PATH_LEN];
    if (runckpt_begin_best(run_dir, m->seq, dir, err)) return -1;
    for (int q = 0; q < m->n_shards; q++) {
        char name[32], from[PATH_LEN], to[PATH_LEN];
        snprintf(name, sizeof name, "ps-%d.ckpt", q);
        if (join(from, ckpt_dir, name, err) || join(to, dir, name, err)) return -1;
        /* The same bytes under a second name: no copy, and the shard's
         * binding (run id, checkpoint number) stays true. */
        if (link(from, to) != 0) return errf(err, "cannot link %s to %s: %s", from, to, strerror(errno));
    }
    return runckpt_commit_best(run_dir, dir, m, err);
}

/* ---- replay files ------------------------------------------------------------ */

int runckpt_write_replay(const Config *cfg, const QNet *net, const char *dir, const RunCkptReplay *rp, char *err) {
    char path[PATH_LEN], name[32];
    replay_name(name, sizeof name, rp->index);
    if (join(path, dir, name, err)) return -1;
    if (rp->n_shards < 1 || rp->index < 0 || rp->index >= rp->n_shards)
        return errf(err, "cannot write checkpoint %s: replay shard %d outside the %d replay shards", path, rp->index,
                    rp->n_shards);
    assert(rp->replay != NULL);
    CkptMeta m;
    fill_net(cfg, net, &m); /* slice [0, 0): no parameters, optimizer none */
    m.reserved[RES_RUN_ID] = rp->run_id;
    m.reserved[RES_SEQ] = rp->seq;
    m.reserved[RES_N_SHARDS] = (uint64_t)rp->n_shards;
    m.reserved[RES_INDEX] = (uint64_t)rp->index;
    m.reserved[RES_KIND] = KIND_REPLAY;
    m.reserved[RES_ROWS] = replaystore_size(rp->replay);
    size_t bytes = replaystore_serial_bytes(rp->replay);
    /* Plain malloc: a buffer this large may not be there, and that should
     * cost this checkpoint, not the run. */
    uint8_t *rep = malloc(bytes);
    if (!rep)
        return errf(err, "cannot write checkpoint %s: no memory for the %zu bytes of its replay section", path, bytes);
    replaystore_serialize(rp->replay, rep);
    float none = 0.0f; /* the params section of an empty slice: 0 bytes */
    CkptSection sec[2] = {{CKPT_SEC_PARAMS, &none, 0}, {CKPT_SEC_REPLAY, rep, bytes}};
    int rc = ckpt_write(path, &m, sec, 2, err);
    free(rep);
    return rc;
}

/* Read the replay section of the open replay file r into a new allocation
 * (*data, *bytes; caller frees), its data checked by the section CRC and
 * its transition count against the header's. */
static int read_replay_section(CkptReader *r, uint8_t **data, size_t *bytes, char *err) {
    const CkptEntry *e = ckpt_find(r, CKPT_SEC_REPLAY);
    *data = NULL;
    if (!e) return errf(err, "%s has no replay section", r->path);
    if (e->bytes > SIZE_MAX) return errf(err, "%s: replay section too large for this machine", r->path);
    *bytes = (size_t)e->bytes;
    /* The section lies within the file (ckpt_open), so a failed allocation
     * is this machine's memory, not damage: exit 2 naming the key. */
    *data = xmalloc_for(*bytes ? *bytes : 1, "a replay checkpoint's section", "replay.capacity");
    if (ckpt_read_section(r, CKPT_SEC_REPLAY, *data, *bytes, err) != 0) {
        free(*data);
        *data = NULL;
        return -1;
    }
    return 0;
}

int runckpt_read_replay(const Config *cfg, const QNet *net, const char *dir, int index, int n_shards,
                        ReplayStore *replay, RunCkptReplayInfo *info, char *err) {
    assert(replay != NULL && index >= 0 && index < n_shards);
    const ReplayBuf *rb = &replay->buf;
    assert(replaybuf_size(rb) == 0 && replaybuf_total(rb) == 0 && "restoring into a buffer in use");
    memset(info, 0, sizeof *info);
    RunCkptManifest man;
    ShardSum *rsums;
    if (read_manifest(dir, &man, NULL, &rsums, err)) return -1;
    int rc = -1;
    uint64_t *sizes = NULL, *first = NULL, *count = NULL;
    uint8_t *data = NULL;
    CkptReader r = {0};
    info->files = man.n_replay;
    if (man.n_replay == 0) {
        rc = 0;
        goto out;
    }
    /* Only the files this shard reads are checked (binding, size,
     * transitions, CRC, as each is opened): rank 0 verified the whole
     * checkpoint when it chose it, and S shards each reading every file
     * again would read the whole replay S times. The deal needs every
     * file's size; the manifest's (CRC-protected) are checked against each
     * file that is read. */
    CkptMeta want;
    fill_net(cfg, net, &want);
    int n_old = man.n_replay;
    sizes = xcalloc((size_t)n_old, sizeof *sizes);
    first = xcalloc((size_t)n_old, sizeof *first);
    count = xcalloc((size_t)n_old, sizeof *count);
    for (int j = 0; j < n_old; j++) sizes[j] = rsums[j].rows;
    if (n_old == n_shards) {
        info->exact = true;
        first[index] = 0;
        count[index] = sizes[index];
    } else {
        info->dropped = replaybuf_deal(sizes, n_old, n_shards, index, replaybuf_capacity(rb), first, count);
    }
    for (int j = 0; j < n_old; j++) {
        /* Exact: our own file. Dealt: every file we take rows from, and with
         * prioritized replay every file (its max_priority is the job's as
         * much as any other's). */
        bool needed = info->exact ? j == index : count[j] > 0 || replaystore_prioritized(replay);
        if (!needed) continue;
        size_t bytes = 0;
        if (open_replay(dir, j, &man, &rsums[j], NULL, false, &r, err)) goto out;
        if (ckpt_check_compatible(&r.meta, &want, err) != 0) {
            err_prefix(err, "%s", r.path);
            goto out;
        }
        if (read_replay_section(&r, &data, &bytes, err)) goto out;
        /* Rank 0 checked the rows when it chose the checkpoint; checked
         * again here in memory, as they are about to be served. */
        if (check_mem_rows(&r, data, bytes, err)) goto out;
        ReplaySerInfo si;
        if (replaybuf_serial_info(data, bytes, rb->obs_dim, &si, err) != 0) goto bad;
        if (si.size != sizes[j]) {
            errf(err, "its replay section holds %llu transitions, its header %llu", (unsigned long long)si.size,
                 (unsigned long long)sizes[j]);
            goto bad;
        }
        if (info->exact) {
            size_t dropped = 0;
            if (replaystore_restore(replay, data, bytes, &dropped, err) != 0) goto bad;
            info->dropped = dropped;
        } else if (replaystore_append_serial(replay, data, bytes, first[j], (uint64_t)n_shards, count[j], err)) {
            goto bad;
        }
        free(data);
        data = NULL;
        ckpt_close(&r);
    }
    info->restored = replaybuf_size(rb);
    rc = 0;
    goto out;
bad:
    err_prefix(err, "%s", r.path);
out:
    ckpt_close(&r);
    free(data);
    free(sizes);
    free(first);
    free(count);
    free(rsums);
    return rc;
}
