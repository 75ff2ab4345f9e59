/* SPDX-License-Identifier: MIT */
/* ckptreplay.c: replay contents in checkpoints: the replay files of a
 * distributed job (replay-<s>.ckpt, checkpoint.save_replay: writing one,
 * checking them, restoring a replay shard from them, with the same shard
 * count or another) and the row checks that every replay section gets,
 * the local trainer's in its shard file included. Part of runckpt
 * (runckptint.h).
 *
 * A replay file is the checkpoint file format with an empty parameter
 * slice and one replay section, bound like a shard file (ckptmanifest.c):
 * its header carries the run id, seq, the replay shard count and its
 * index, plus a mark that it holds replay (CkptMeta.kind) and how many
 * transitions (CkptMeta.rows).
 */
#include "runckpt.h"
#include "runckptint.h"
#include "util.h"

#include <assert.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void replay_name(char *name, size_t cap, int s) { snprintf(name, cap, "replay-%d.ckpt", s); }

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
    return ckptio_pread(s->r, s->base + off, dst, n, err);
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
 * next observation finite (packed rows, versions 3 and 4, are bits: any
 * pattern is valid), every action in [0, n_actions), every discount in
 * [0, 1], and with priorities (versions 2 and 4) max_priority and every
 * priority finite and > 0. The section CRC cannot catch a row a writer never wrote, or a file
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
        return errf(err, "replay counts %" PRIu64 " transitions ever inserted, above 2^53, more than any run can count: "
                    "the replay contents are damaged", si.total);
    uint64_t S = si.size, O = obs_dim;
    /* In layout order, at the offsets replaybuf_serial_info gives;
     * max_priority is one value, not a column of rows. Packed observation
     * rows (versions 3 and 4) are bits: every pattern is a valid row. */
    struct {
        const char *name;
        size_t off;
        uint64_t n, width;
        ColKind kind;
        bool scalar;
    } cols[] = {{"obs", si.obs, S * O, O, COL_FINITE, false},
                {"action", si.action, S, 1, COL_ACTION, false},
                {"reward", si.reward, S, 1, COL_FINITE, false},
                {"next_obs", si.next_obs, S * O, O, COL_FINITE, false},
                {"discount", si.discount, S, 1, COL_DISCOUNT, false},
                {"max_priority", si.prio, 1, 1, COL_PRIORITY, true},
                {"priority", si.prio + 8, S, 1, COL_PRIORITY, false}};
    size_t n_cols = si.priorities ? 7 : 5;
    for (size_t c = 0; c < n_cols; c++) {
        if (si.packed && cols[c].width > 1) continue;
        if (check_column(src, cols[c].off, cols[c].n, cols[c].width, cols[c].kind, cols[c].name,
                         cols[c].scalar ? 0 : S, n_actions, err))
            return -1;
    }
    return 0;
}

int ckptreplay_check_file_rows(const CkptReader *r, char *err) {
    const CkptEntry *e = ckptfile_find(r, CKPT_SEC_REPLAY);
    if (!e) return 0;
    SecSrc src = {r, e->offset, NULL};
    if (check_replay_rows(&src, e->bytes, r->meta.net.obs_dim, r->meta.net.num_actions, err) == 0) return 0;
    if (strncmp(err, r->path, strlen(r->path)) != 0) err_prefix(err, "%s", r->path);
    return -1;
}

int ckptreplay_check_mem_rows(const CkptReader *r, const void *data, size_t bytes, char *err) {
    SecSrc src = {r, 0, data};
    if (check_replay_rows(&src, bytes, r->meta.net.obs_dim, r->meta.net.num_actions, err) == 0) return 0;
    return err_prefix(err, "%s", r->path);
}

/* ---- replay files: writing and checking ---------------------------------------- */

int runckpt_write_replay(const Config *cfg, const QNet *net, const char *dir, const RunCkptReplay *rp, char *err) {
    char path[PATH_LEN], name[32];
    replay_name(name, sizeof name, rp->index);
    if (ckptio_join(path, dir, name, err)) return -1;
    if (rp->n_shards < 1 || rp->index < 0 || rp->index >= rp->n_shards)
        return errf(err, "cannot write checkpoint %s: replay shard %d outside the %d replay shards", path, rp->index,
                    rp->n_shards);
    assert(rp->replay != NULL);
    CkptMeta m;
    ckptio_fill_net(cfg, net, &m); /* slice [0, 0): no parameters, optimizer none */
    m.run_id = rp->run_id;
    m.seq = rp->seq;
    m.n_shards = (uint64_t)rp->n_shards;
    m.shard_index = (uint64_t)rp->index;
    m.kind = RUNCKPT_KIND_REPLAY;
    m.rows = replaystore_size(rp->replay);
    size_t bytes = replaystore_serial_bytes(rp->replay);
    /* Plain malloc: a buffer this large may not be there, and that should
     * cost this checkpoint, not the run. */
    uint8_t *rep = malloc(bytes);
    if (!rep)
        return errf(err, "cannot write checkpoint %s: no memory for the %zu bytes of its replay section", path, bytes);
    replaystore_serialize(rp->replay, rep);
    float none = 0.0f; /* the params section of an empty slice: 0 bytes */
    CkptSection sec[2] = {{CKPT_SEC_PARAMS, &none, 0}, {CKPT_SEC_REPLAY, rep, bytes}};
    int rc = ckptfile_write(path, &m, sec, 2, err);
    free(rep);
    return rc;
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
    if (ckptio_join(path, dir, name, err)) return -1;
    if (ckptfile_open(r, path, err) != 0) return -1;
    uint32_t crc;
    if (ckptmanifest_check_binding(r, s, m, true, want, err) || ckptmanifest_file_crc(r, want, &crc, err))
        goto fail;
    if (got) *got = (ShardSum){r->file_bytes, crc, r->meta.rows};
    if (rows && ckptreplay_check_file_rows(r, err)) goto fail;
    return 0;
fail:
    ckptfile_close(r);
    return -1;
}

int ckptreplay_sum_files(const char *dir, const RunCkptManifest *m, ShardSum *rsums, char *err) {
    for (int s = 0; s < m->n_replay; s++) {
        CkptReader r;
        if (open_replay(dir, s, m, NULL, &rsums[s], false, &r, err)) return -1;
        ckptfile_close(&r);
    }
    return 0;
}

int ckptreplay_verify_files(const char *dir, const RunCkptManifest *m, const ShardSum *rsums, char *err) {
    for (int s = 0; s < m->n_replay; s++) {
        CkptReader r;
        if (open_replay(dir, s, m, &rsums[s], NULL, true, &r, err)) return -1;
        ckptfile_close(&r);
    }
    return 0;
}

/* ---- replay files: restoring ----------------------------------------------------- */

/* Read the replay section of the open replay file r into a new allocation
 * (*data, *bytes; caller frees), its data checked by the section CRC. */
static int read_replay_section(CkptReader *r, uint8_t **data, size_t *bytes, char *err) {
    const CkptEntry *e = ckptfile_find(r, CKPT_SEC_REPLAY);
    *data = NULL;
    if (!e) return errf(err, "%s has no replay section", r->path);
    if (e->bytes > SIZE_MAX) return errf(err, "%s: replay section too large for this machine", r->path);
    *bytes = (size_t)e->bytes;
    /* The section lies within the file (ckptfile_open), so a failed allocation
     * is this machine's memory, not damage: exit 2 naming the key. */
    *data = xmalloc_for(*bytes ? *bytes : 1, "a replay checkpoint's section", "replay.capacity");
    if (ckptfile_read_section(r, CKPT_SEC_REPLAY, *data, *bytes, err) != 0) {
        free(*data);
        *data = NULL;
        return -1;
    }
    return 0;
}

/* One replay shard's restore: the checkpoint's replay files, and which of
 * their rows go to this shard. */
typedef struct {
    const char *dir;
    const RunCkptManifest *man;
    const ShardSum *rsums;    /* the manifest's sums, one per old file */
    CkptMeta want;            /* the network and env the config describes */
    uint64_t *sizes;          /* per old file: its transitions (the manifest's) */
    uint64_t *first, *count;  /* per old file: the rows this shard takes (replaybuf_deal) */
    int n_shards;             /* replay shards in the job now */
    ReplayStore *replay;
    RunCkptReplayInfo *info;
} ReplayRestore;

/* The rows of old file j (its checked replay section data, bytes) into
 * the store: all of them as saved when the shard count is the same, else
 * this shard's deal. */
static int add_rows(const ReplayRestore *rr, int j, const uint8_t *data, size_t bytes, char *err) {
    ReplaySerInfo si;
    if (replaybuf_serial_info(data, bytes, rr->replay->buf.obs_dim, &si, err) != 0) return -1;
    if (si.size != rr->sizes[j])
        return errf(err, "its replay section holds %" PRIu64 " transitions, its header %" PRIu64, si.size,
                    rr->sizes[j]);
    if (rr->info->exact) {
        size_t dropped = 0;
        if (replaystore_restore(rr->replay, data, bytes, &dropped, err) != 0) return -1;
        rr->info->dropped = dropped;
        return 0;
    }
    if (replaystore_append_serial(rr->replay, data, bytes, rr->first[j], (uint64_t)rr->n_shards, rr->count[j], err))
        return -1;
    return 0;
}

/* Open old file j (checked as it is opened: binding, size, transitions,
 * CRC), read its replay section, check its rows in memory and add them. */
static int restore_file(const ReplayRestore *rr, int j, char *err) {
    CkptReader r = {0};
    uint8_t *data = NULL;
    size_t bytes = 0;
    int rc = -1;
    if (open_replay(rr->dir, j, rr->man, &rr->rsums[j], NULL, false, &r, err)) return -1;
    if (ckptfile_check_compatible(&r.meta, &rr->want, err) != 0) {
        err_prefix(err, "%s", r.path);
        goto out;
    }
    if (read_replay_section(&r, &data, &bytes, err)) goto out;
    /* Rank 0 checked the rows when it chose the checkpoint; checked again
     * here in memory, as they are about to be served. */
    if (ckptreplay_check_mem_rows(&r, data, bytes, err)) goto out;
    if (add_rows(rr, j, data, bytes, err) != 0) {
        err_prefix(err, "%s", r.path);
        goto out;
    }
    rc = 0;
out:
    free(data);
    ckptfile_close(&r);
    return rc;
}

/* runckpt_read_replay once the manifest (m, with replay files) is read.
 * Only the files this shard reads are checked (binding, size, transitions,
 * CRC, as each is opened): rank 0 verified the whole checkpoint when it
 * chose it, and S shards each reading every file again would read the
 * whole replay S times. The deal needs every file's size; the manifest's
 * (CRC-protected) are checked against each file that is read. */
static int restore_replay(const Config *cfg, const QNet *net, const char *dir, const RunCkptManifest *m,
                          const ShardSum *rsums, int index, int n_shards, ReplayStore *replay,
                          RunCkptReplayInfo *info, char *err) {
    int n_old = m->n_replay;
    ReplayRestore rr = {.dir = dir, .man = m, .rsums = rsums, .n_shards = n_shards, .replay = replay, .info = info};
    ckptio_fill_net(cfg, net, &rr.want);
    rr.sizes = xcalloc((size_t)n_old, sizeof *rr.sizes);
    rr.first = xcalloc((size_t)n_old, sizeof *rr.first);
    rr.count = xcalloc((size_t)n_old, sizeof *rr.count);
    for (int j = 0; j < n_old; j++) rr.sizes[j] = rsums[j].rows;
    if (n_old == n_shards) {
        info->exact = true;
        rr.first[index] = 0;
        rr.count[index] = rr.sizes[index];
    } else {
        info->dropped = replaybuf_deal(rr.sizes, n_old, n_shards, index, replaybuf_capacity(&replay->buf), rr.first,
                                       rr.count);
    }
    int rc = 0;
    for (int j = 0; j < n_old && rc == 0; j++) {
        /* Exact: our own file. Dealt: every file we take rows from, and with
         * prioritized replay every file (its max_priority is the job's as
         * much as any other's). */
        bool needed = info->exact ? j == index : rr.count[j] > 0 || replaystore_prioritized(replay);
        if (needed) rc = restore_file(&rr, j, err);
    }
    if (rc == 0) info->restored = replaybuf_size(&replay->buf);
    free(rr.sizes);
    free(rr.first);
    free(rr.count);
    return rc;
}

int runckpt_read_replay(const Config *cfg, const QNet *net, const char *dir, int index, int n_shards,
                        ReplayStore *replay, RunCkptReplayInfo *info, char *err) {
    assert(replay != NULL && index >= 0 && index < n_shards);
    assert(replaybuf_size(&replay->buf) == 0 && replaybuf_total(&replay->buf) == 0 &&
           "restoring into a buffer in use");
    memset(info, 0, sizeof *info);
    RunCkptManifest man;
    ShardSum *rsums;
    if (ckptmanifest_read(dir, &man, NULL, &rsums, NULL, err)) return -1;
    info->files = man.n_replay;
    int rc = 0;
    if (man.n_replay > 0) rc = restore_replay(cfg, net, dir, &man, rsums, index, n_shards, replay, info, err);
    free(rsums);
    return rc;
}
