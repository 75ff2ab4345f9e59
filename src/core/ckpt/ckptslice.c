/* SPDX-License-Identifier: MIT */
/* ckptslice.c: the parameter shard files of a checkpoint (ps-<p>.ckpt):
 * writing one (runckpt_write_shard), checking a set of them, and reading
 * any slice of the parameters back from however many there are
 * (runckpt_read_slice); and the learner copies (learner-<k>.ckpt), one
 * learner's whole network in the same format. Part of runckpt
 * (runckptint.h).
 *
 * Tiling. Shard q's slice must start exactly where shard q-1's ends (shard
 * 0 at 0) and the last must end at n_params. Checked in index order, file
 * by file, over the whole set before any data is copied (runckpt_read_slice
 * pass 1), and again as each file is reopened to be read (pass 2): every
 * parameter of the caller's slice is written exactly once, so an
 * overlapping or short set can never leave part of it uninitialised.
 */
#include "runckpt.h"
#include "runckptint.h"
#include "util.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void shard_name(char *name, size_t cap, int q) { snprintf(name, cap, "ps-%d.ckpt", q); }

static CkptOptim file_optim(OptimKind k) {
    switch (k) {
    case OPTIM_SGD: return CKPT_OPT_SGD;
    case OPTIM_ADAM: return CKPT_OPT_ADAM;
    case OPTIM_RMSPROP: return CKPT_OPT_RMSPROP;
    }
    return CKPT_OPT_NONE;
}

/* ---- writing ------------------------------------------------------------------ */

/* The first non-finite value of x[0 .. n), or n when all are finite. */
static size_t first_non_finite(const float *x, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (!isfinite(x[i])) return i;
    return n;
}

/* The header of shard sh of network net: its slice, counters, versions and
 * binding (optimizer and sections come with the sections). */
static void shard_meta(const Config *cfg, const QNet *net, const RunCkptShard *sh, CkptMeta *m) {
    ckptio_fill_net(cfg, net, m);
    m->slice_offset = sh->off;
    m->slice_count = sh->len;
    m->env_steps = sh->env_steps;
    m->updates = sh->updates;
    m->episodes = sh->episodes;
    m->wall_seconds = sh->wall_seconds;
    m->param_version = sh->version;
    m->target_version = sh->target_version;
    m->run_id = sh->run_id;
    m->seq = sh->seq;
    m->n_shards = (uint64_t)sh->n_shards;
    m->shard_index = (uint64_t)sh->index;
}

/* The parameters, target and optimizer state of sh are all finite: a
 * reader refuses a file with a non-finite one as damaged (check_finite), so
 * no writer makes one. 0 or -1 with err. */
static int shard_finite(const char *path, const RunCkptShard *sh, char *err) {
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
    if (!sh->opt || !sh->len) return 0;
    bad = first_non_finite(sh->opt->state, sh->opt->n_state);
    if (bad < sh->opt->n_state)
        return errf(err, "cannot write checkpoint %s: non-finite optimizer state (array %zu of %zu, parameter %zu, is "
                    "%g) not checkpointed", path, bad / sh->len + 1, sh->opt->n_state / sh->len,
                    sh->off + bad % sh->len, (double)sh->opt->state[bad]);
    return 0;
}

/* Write the parameter file path for sh with header kind `kind`
 * (RUNCKPT_KIND_PARAMS or RUNCKPT_KIND_COPY). */
static int write_params(const Config *cfg, const QNet *net, const char *path, const RunCkptShard *sh, int kind,
                        char *err) {
    if (shard_finite(path, sh, err)) return -1;
    CkptMeta m;
    shard_meta(cfg, net, sh, &m);
    m.kind = (uint32_t)kind;
    CkptSection sec[6];
    size_t n = 0;
    sec[n++] = (CkptSection){CKPT_SEC_PARAMS, sh->params, sh->len * sizeof(float)};
    sec[n++] = (CkptSection){CKPT_SEC_TARGET, sh->target, sh->len * sizeof(float)};
    uint8_t *opt_bytes = NULL;
    if (sh->opt) {
        m.optimizer = file_optim(sh->opt->p.kind);
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
    if (sh->envs && sh->envs_bytes) sec[n++] = (CkptSection){CKPT_SEC_ENVS, sh->envs, sh->envs_bytes};
    int rc = ckptfile_write(path, &m, sec, n, err);
    free(opt_bytes);
    free(rep);
    return rc;
}

int runckpt_write_shard(const Config *cfg, const QNet *net, const char *dir, const RunCkptShard *sh, char *err) {
    char path[PATH_LEN], name[32];
    shard_name(name, sizeof name, sh->index);
    if (ckptio_join(path, dir, name, err)) return -1;
    if (sh->n_shards < 1 || sh->index < 0 || sh->index >= sh->n_shards)
        return errf(err, "cannot write checkpoint %s: shard index %d outside the %d shards of the checkpoint", path,
                    sh->index, sh->n_shards);
    return write_params(cfg, net, path, sh, RUNCKPT_KIND_PARAMS, err);
}

/* ---- checking a set ------------------------------------------------------------- */

/* The optimizer's step count (the first 8 bytes of the optim section, if
 * any) is a counter like the header's: at most 2^53. */
static int check_optim_step(const CkptReader *r, char *err) {
    const CkptEntry *e = ckptfile_find(r, CKPT_SEC_OPTIM);
    if (!e || e->bytes < 8) return 0;
    uint64_t step;
    if (ckptio_pread(r, e->offset, &step, 8, err)) return -1;
    if (step > CKPT_MAX_COUNT)
        return errf(err, "%s: optimizer step count %" PRIu64 " is above 2^53, more than any run can count: the "
                    "optimizer state is damaged", r->path, step);
    return 0;
}

/* The first non-finite float of the n at file offset off of r into *at
 * (and its value into *val), or n when all are finite. 0 or -1 with err. */
static int scan_finite(const CkptReader *r, uint64_t off, uint64_t n, uint64_t *at, float *val, char *err) {
    enum { CHUNK = 4096 };
    float buf[CHUNK];
    for (uint64_t i0 = 0; i0 < n; i0 += CHUNK) {
        size_t k = n - i0 < CHUNK ? (size_t)(n - i0) : CHUNK;
        if (ckptio_pread(r, off + i0 * sizeof(float), buf, k * sizeof(float), err)) return -1;
        size_t j = first_non_finite(buf, k);
        if (j < k) {
            *at = i0 + j;
            *val = buf[j];
            return 0;
        }
    }
    *at = n;
    return 0;
}

/* Every parameter, target value and optimizer state value of the
 * parameter file r (a shard or a learner copy) is finite. No writer saves
 * a non-finite one (shard_finite), so one in a file whose sums all agree
 * was put there after it was written (or by a writer with a bug): damage,
 * like a replay row out of range. Restored, it would make the first update
 * "diverge" on every resume, and eval and export would use it. err names
 * the file, the array and the parameter. */
static int check_finite(const CkptReader *r, char *err) {
    const CkptMeta *h = &r->meta;
    uint64_t n = h->slice_count, at;
    float v;
    const struct {
        uint32_t id;
        const char *what;
    } arrays[] = {{CKPT_SEC_PARAMS, "the network"}, {CKPT_SEC_TARGET, "the target network"}};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++) {
        const CkptEntry *e = ckptfile_find(r, arrays[i].id);
        if (!e) continue;
        if (scan_finite(r, e->offset, n, &at, &v, err)) return -1;
        if (at < n)
            return errf(err, "%s: parameter %" PRIu64 " of %s is %g, and no checkpoint is written with a non-finite "
                        "one: the parameters are damaged", r->path, h->slice_offset + at, arrays[i].what, (double)v);
    }
    const CkptEntry *e = ckptfile_find(r, CKPT_SEC_OPTIM);
    uint64_t total = (uint64_t)h->optim_slots * n;
    if (!e || total == 0) return 0;
    if (scan_finite(r, e->offset + 8, total, &at, &v, err)) return -1;
    if (at < total)
        return errf(err, "%s: %s state array %" PRIu64 " of %u at parameter %" PRIu64 " is %g, and no checkpoint is "
                    "written with a non-finite one: the optimizer state is damaged", r->path,
                    ckptfile_optim_name(h->optimizer), at / n + 1, h->optim_slots, h->slice_offset + at % n,
                    (double)v);
    return 0;
}

/* Where the tiling check stands: the next parameter a shard must start at,
 * and the parameter count every shard must agree on (set by shard 0). */
typedef struct {
    uint64_t next, n_params;
} Tiling;

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

static int tiling_done(const char *dir, const Tiling *t, char *err) {
    if (t->next != t->n_params)
        return errf(err, "%s: the shard files hold parameters [0, %" PRIu64 ") of %" PRIu64 ", leaving the rest in none",
                    dir, t->next, t->n_params);
    return 0;
}

/* Open shard q of the checkpoint in dir (m its manifest) into r and check
 * its binding (ckptmanifest_check_binding), its CRC and its sections' CRCs against
 * want (want NULL: compute size and CRC into got instead; check_crc false:
 * size only; with want and check_crc, the optimizer step and the rows of a
 * replay section too) and its place in the tiling (t). On success r is
 * open; on error r is closed. */
static int open_shard(const char *dir, int q, const RunCkptManifest *m, const ShardSum *want, bool check_crc,
                      ShardSum *got, Tiling *t, CkptReader *r, char *err) {
    char path[PATH_LEN], name[32];
    shard_name(name, sizeof name, q);
    if (ckptio_join(path, dir, name, err)) return -1;
    if (ckptfile_open(r, path, err) != 0) return -1;
    if (ckptmanifest_check_binding(r, q, m, false, want, err)) goto fail;
    if (!want || check_crc) {
        uint32_t crc;
        if (ckptmanifest_file_crc(r, want, &crc, err)) goto fail;
        if (got) *got = (ShardSum){r->file_bytes, crc, 0};
        if (want && (check_optim_step(r, err) || check_finite(r, err) || ckptreplay_check_file_rows(r, err))) goto fail;
    }
    if (check_tiling(r, q, t, err)) goto fail;
    return 0;
fail:
    ckptfile_close(r);
    return -1;
}

int ckptslice_sum_shards(const char *dir, const RunCkptManifest *m, ShardSum *sums, char *err) {
    Tiling t = {0, 0};
    for (int q = 0; q < m->n_shards; q++) {
        CkptReader r;
        if (open_shard(dir, q, m, NULL, true, &sums[q], &t, &r, err)) return -1;
        ckptfile_close(&r);
    }
    return tiling_done(dir, &t, err);
}

int ckptslice_verify_shards(const char *dir, const RunCkptManifest *m, const ShardSum *sums, char *err) {
    Tiling t = {0, 0};
    for (int q = 0; q < m->n_shards; q++) {
        CkptReader r;
        if (open_shard(dir, q, m, &sums[q], true, NULL, &t, &r, err)) return -1;
        ckptfile_close(&r);
    }
    return tiling_done(dir, &t, err);
}

/* ---- reading a slice ------------------------------------------------------------- */

/* runckpt_read_slice's state across the shard files. */
typedef struct {
    RunCkptShard *sh;     /* the caller's shard, filled */
    size_t lo, hi;        /* its slice [lo, hi) */
    size_t covered;       /* parameters of it filled so far */
    bool have_version;    /* counters taken from the file holding lo */
    CkptMeta want;        /* the network and env the config describes */
    float *buf;           /* one file's params or target */
    uint8_t *obuf;        /* one file's optim section */
} SliceRead;

/* The n values x (arrays of ql, one per parameter of the slice starting
 * at qo) read from a file are finite: check_finite found them so when the
 * checkpoint was verified; checked again in case the file changed since.
 * 0 or -1 with err. */
static int read_finite(const float *x, size_t n, size_t ql, size_t qo, const char *what, char *err) {
    size_t bad = first_non_finite(x, n);
    if (bad == n) return 0;
    return errf(err, "%s at parameter %zu is %g, and no checkpoint is written with a non-finite one: the file is "
                "damaged", what, qo + bad % ql, (double)x[bad]);
}

/* The overlap [a, b) of the caller's slice with file r's: the optimizer
 * state of each slot, and the step count from the file holding lo. */
static int copy_optim(CkptReader *r, SliceRead *sr, size_t a, size_t b, bool holds_start, char *err) {
    const CkptMeta *m = &r->meta;
    RunCkptShard *sh = sr->sh;
    size_t lo = sr->lo, qo = m->slice_offset, ql = m->slice_count;
    size_t slots = m->optim_slots, bytes = 8 + slots * ql * sizeof(float);
    if (sh->len && slots * sh->len != sh->opt->n_state)
        return errf(err, "optimizer state has %zu arrays per parameter, expected %zu", slots,
                    sh->opt->n_state / sh->len);
    free(sr->obuf);
    sr->obuf = xmalloc(bytes);
    if (ckptfile_read_section(r, CKPT_SEC_OPTIM, sr->obuf, bytes, err)) return -1;
    uint64_t step;
    memcpy(&step, sr->obuf, 8);
    if (step > CKPT_MAX_COUNT)
        return errf(err, "optimizer step count %" PRIu64 " is above 2^53, more than any run can count: the "
                    "optimizer state is damaged", step);
    if (holds_start) sh->opt->step = step;
    const float *st = (const float *)(sr->obuf + 8);
    if (read_finite(st, slots * ql, ql, qo, "the optimizer state", err)) return -1;
    for (size_t k = 0; k < slots; k++)
        memcpy(sh->opt->state + k * sh->len + (a - lo), st + k * ql + (a - qo), (b - a) * sizeof(float));
    return 0;
}

/* Copy the part of file r's slice that overlaps the caller's: parameters,
 * target (the parameters when the file has none) and optimizer state. */
static int copy_overlap(CkptReader *r, SliceRead *sr, bool holds_start, char *err) {
    const CkptMeta *m = &r->meta;
    RunCkptShard *sh = sr->sh;
    size_t lo = sr->lo, qo = m->slice_offset, ql = m->slice_count;
    size_t a = qo > lo ? qo : lo, b = qo + ql < sr->hi ? qo + ql : sr->hi;
    if (a >= b) return 0;
    free(sr->buf);
    sr->buf = xmalloc(ql * sizeof(float));
    if (ckptfile_read_section(r, CKPT_SEC_PARAMS, sr->buf, ql * sizeof(float), err) ||
        read_finite(sr->buf, ql, ql, qo, "the network", err))
        return -1;
    memcpy(sh->params + (a - lo), sr->buf + (a - qo), (b - a) * sizeof(float));
    if (ckptfile_find(r, CKPT_SEC_TARGET)) {
        if (ckptfile_read_section(r, CKPT_SEC_TARGET, sr->buf, ql * sizeof(float), err) ||
            read_finite(sr->buf, ql, ql, qo, "the target network", err))
            return -1;
        memcpy(sh->target + (a - lo), sr->buf + (a - qo), (b - a) * sizeof(float));
    } else {
        memcpy(sh->target + (a - lo), sh->params + (a - lo), (b - a) * sizeof(float));
    }
    if (sh->opt && copy_optim(r, sr, a, b, holds_start, err)) return -1;
    sr->covered += b - a;
    return 0;
}

/* The local trainer's extras, from the file holding the slice's start:
 * its random generators and its replay contents, when asked for. */
static int read_extras(CkptReader *r, RunCkptShard *sh, char *err) {
    if (sh->rngs && sh->n_rngs > 0) {
        const CkptEntry *e = ckptfile_find(r, CKPT_SEC_RNG);
        if (!e || e->bytes != (uint64_t)sh->n_rngs * sizeof(Rng))
            return errf(err, "random generator states missing or of another count");
        if (ckptfile_read_section(r, CKPT_SEC_RNG, sh->rngs, e->bytes, err)) return -1;
    }
    sh->envs_found = false;
    const CkptEntry *ev = sh->envs ? ckptfile_find(r, CKPT_SEC_ENVS) : NULL;
    if (ev) {
        if (ev->bytes != sh->envs_bytes)
            return errf(err, "environment slots are %" PRIu64 " bytes, this run's are %zu (another environment or "
                        "actor.envs)", ev->bytes, sh->envs_bytes);
        if (ckptfile_read_section(r, CKPT_SEC_ENVS, sh->envs, ev->bytes, err)) return -1;
        sh->envs_found = true;
    }
    if (sh->replay && ckptfile_find(r, CKPT_SEC_REPLAY)) {
        const CkptEntry *e = ckptfile_find(r, CKPT_SEC_REPLAY);
        uint8_t *rep = xmalloc(e->bytes);
        size_t dropped = 0;
        int rr = ckptfile_read_section(r, CKPT_SEC_REPLAY, rep, e->bytes, err);
        if (rr == 0) rr = ckptreplay_check_mem_rows(r, rep, e->bytes, err);
        if (rr == 0) rr = replaystore_restore(sh->replay, rep, e->bytes, &dropped, err);
        free(rep);
        if (rr) return -1;
        sh->replay_dropped = dropped;
    }
    return 0;
}

/* What shard file q (open in r) gives the caller's slice: the network must
 * match, the counters and versions come from the file holding its start
 * (from the first file until that one is seen), then the overlap. */
static int read_open_shard(CkptReader *r, int q, SliceRead *sr, char *err) {
    const CkptMeta *m = &r->meta;
    RunCkptShard *sh = sr->sh;
    sr->want.slice_offset = m->slice_offset;
    sr->want.slice_count = m->slice_count;
    if (ckptfile_check_compatible(m, &sr->want, err) != 0) return -1;
    if (sh->opt && m->optimizer != file_optim(sh->opt->p.kind))
        return errf(err, "optimizer differs: checkpoint has %s state, config uses %s",
                    ckptfile_optim_name(m->optimizer), ckptfile_optim_name(file_optim(sh->opt->p.kind)));
    size_t qo = m->slice_offset, ql = m->slice_count;
    bool holds_start = (sr->lo >= qo && sr->lo < qo + ql) || (sh->len == 0 && q == 0);
    if (holds_start || !sr->have_version) {
        sh->version = m->param_version;
        sh->target_version = m->target_version;
        sh->env_steps = m->env_steps;
        sh->updates = m->updates;
        sh->episodes = m->episodes;
        sh->wall_seconds = m->wall_seconds;
        sr->have_version = holds_start;
    }
    if (copy_overlap(r, sr, holds_start, err)) return -1;
    if (holds_start && read_extras(r, sh, err)) return -1;
    return 0;
}

/* Reopen shard file q (checked again: binding, size, tiling; its data by
 * the section CRCs as it is read) and take its part of the slice. */
static int read_shard_file(const char *dir, int q, const RunCkptManifest *man, const ShardSum *want, Tiling *t,
                           SliceRead *sr, char *err) {
    CkptReader r;
    if (open_shard(dir, q, man, want, false, NULL, t, &r, err)) return -1;
    int rc = read_open_shard(&r, q, sr, err);
    /* Messages of ckptfile already start with the path. */
    if (rc != 0 && strncmp(err, r.path, strlen(r.path)) != 0) err_prefix(err, "%s", r.path);
    ckptfile_close(&r);
    return rc;
}

int runckpt_read_slice(const Config *cfg, const QNet *net, const char *dir, RunCkptShard *sh, char *err) {
    RunCkptManifest man;
    ShardSum *sums;
    if (ckptmanifest_read(dir, &man, &sums, NULL, NULL, err)) return -1;
    /* Pass 1: the whole set is bound, intact and tiles the parameters. */
    if (ckptslice_verify_shards(dir, &man, sums, err)) {
        free(sums);
        return -1;
    }
    SliceRead sr = {.sh = sh, .lo = sh->off, .hi = sh->off + sh->len};
    ckptio_fill_net(cfg, net, &sr.want);
    Tiling t = {0, 0};
    int rc = 0;
    /* Pass 2: read the overlapping parts. */
    for (int q = 0; q < man.n_shards && rc == 0; q++) rc = read_shard_file(dir, q, &man, &sums[q], &t, &sr, err);
    if (rc == 0 && sr.covered != sh->len)
        rc = errf(err, "%s: the shard files cover %zu of the %zu parameters in [%zu, %zu)", dir, sr.covered, sh->len,
                  sr.lo, sr.hi);
    free(sums);
    free(sr.buf);
    free(sr.obuf);
    return rc;
}

/* ---- learner copies (learner-<k>.ckpt) ------------------------------------------ */

static void copy_name(char *name, size_t cap, int k) { snprintf(name, cap, "learner-%d.ckpt", k); }

int runckpt_write_copy(const Config *cfg, const QNet *net, const char *dir, const RunCkptShard *sh, char *err) {
    char path[PATH_LEN], name[40];
    copy_name(name, sizeof name, sh->index);
    if (ckptio_join(path, dir, name, err)) return -1;
    if (sh->n_shards < 1 || sh->index < 0 || sh->index >= sh->n_shards || sh->off != 0 || sh->len != net->n_params)
        return errf(err, "cannot write checkpoint %s: learner %d of %d, slice [%zu, %zu) of %zu parameters", path,
                    sh->index, sh->n_shards, sh->off, sh->off + sh->len, net->n_params);
    return write_params(cfg, net, path, sh, RUNCKPT_KIND_COPY, err);
}

/* Open learner k's copy in dir into r: a learner copy of this run and
 * checkpoint, one of m->n_copies, index k, the whole network, of the size
 * and CRC the manifest records (want; NULL: computed into got). On error r
 * is closed. */
static int open_copy(const char *dir, int k, const RunCkptManifest *m, const ShardSum *want, ShardSum *got,
                     CkptReader *r, char *err) {
    char path[PATH_LEN], name[40];
    copy_name(name, sizeof name, k);
    if (ckptio_join(path, dir, name, err)) return -1;
    if (ckptfile_open(r, path, err) != 0) return -1;
    const CkptMeta *h = &r->meta;
    uint32_t crc;
    if (h->kind != RUNCKPT_KIND_COPY)
        errf(err, "%s is not a learner copy (kind %" PRIu64 ")", path, (uint64_t)h->kind);
    else if (h->run_id != m->run_id || h->seq != m->seq)
        errf(err, "%s belongs to run %016" PRIx64 " checkpoint %" PRIu64 ", but the manifest is of run %016" PRIx64
             " checkpoint %" PRIu64, path, h->run_id, h->seq, m->run_id, m->seq);
    else if (h->n_shards != (uint64_t)m->n_copies || h->shard_index != (uint64_t)k)
        errf(err, "%s was written as learner %" PRIu64 " of %" PRIu64 ", not learner %d of %d", path, h->shard_index,
             h->n_shards, k, m->n_copies);
    else if (h->slice_offset != 0 || h->slice_count != h->net.n_params)
        errf(err, "%s holds parameters [%" PRIu64 ", %" PRIu64 ") of %" PRIu64 ", not the whole network", path,
             h->slice_offset, h->slice_offset + h->slice_count, h->net.n_params);
    else if (want && r->file_bytes != want->bytes)
        errf(err, "%s is %" PRIu64 " bytes, but the manifest records %" PRIu64 " (the file is damaged or replaced)",
             path, r->file_bytes, want->bytes);
    else if (ckptmanifest_file_crc(r, want, &crc, err) == 0 &&
             (!want || (check_optim_step(r, err) == 0 && check_finite(r, err) == 0))) {
        if (got) *got = (ShardSum){r->file_bytes, crc, 0};
        return 0;
    }
    ckptfile_close(r);
    return -1;
}

int ckptslice_sum_copies(const char *dir, const RunCkptManifest *m, ShardSum *csums, char *err) {
    for (int k = m->first_copy; k < m->n_copies; k++) {
        CkptReader r;
        if (open_copy(dir, k, m, NULL, &csums[k], &r, err)) return -1;
        ckptfile_close(&r);
    }
    return 0;
}

int ckptslice_verify_copies(const char *dir, const RunCkptManifest *m, const ShardSum *csums, char *err) {
    for (int k = m->first_copy; k < m->n_copies; k++) {
        CkptReader r;
        if (open_copy(dir, k, m, &csums[k], NULL, &r, err)) return -1;
        ckptfile_close(&r);
    }
    return 0;
}

int runckpt_read_copy(const Config *cfg, const QNet *net, const char *dir, int learner, int n_learners,
                      RunCkptShard *sh, bool *found, char *err) {
    *found = false;
    RunCkptManifest man;
    ShardSum *csums;
    if (ckptmanifest_read(dir, &man, NULL, NULL, &csums, err)) return -1;
    int rc = 0;
    if (man.n_copies == n_learners && learner >= man.first_copy && learner < man.n_copies) {
        CkptReader r;
        rc = open_copy(dir, learner, &man, &csums[learner], NULL, &r, err);
        if (rc == 0) {
            SliceRead sr = {.sh = sh, .lo = 0, .hi = sh->len};
            ckptio_fill_net(cfg, net, &sr.want);
            rc = read_open_shard(&r, 0, &sr, err);
            if (rc != 0 && strncmp(err, r.path, strlen(r.path)) != 0) err_prefix(err, "%s", r.path);
            if (rc == 0 && sr.covered != sh->len)
                rc = errf(err, "%s covers %zu of the %zu parameters", r.path, sr.covered, sh->len);
            ckptfile_close(&r);
            free(sr.buf);
            free(sr.obuf);
            *found = rc == 0;
        }
    }
    free(csums);
    return rc;
}
