/* SPDX-License-Identifier: MIT */
/* ckptmanifest.c: a checkpoint's binding: its MANIFEST (written at commit,
 * read by every reader), each file's header and whole-file CRC against it,
 * and the run id of a run directory. Part of runckpt (runckptint.h);
 * docs/CHECKPOINT.md ("Checkpoints of a run") gives the MANIFEST format
 * line by line.
 *
 * Binding. A checkpoint is a set of shard files and a MANIFEST, tied by two
 * independent links:
 *  - each shard's header (protected by the header CRC, ckptfile.c) carries
 *    the run id, the sequence number, the shard count and its own index
 *    (CkptMeta.run_id, seq, n_shards, shard_index);
 *  - the MANIFEST (protected by its last line's CRC) records every shard
 *    file's size and whole-file CRC-32C.
 * runckpt_commit checks the first before it writes the second, so a shard
 * left over from another checkpoint is never bound; every reader checks
 * both, so a file swapped in later is refused, not loaded.
 *
 * Replay files are bound the same two ways (their header also says that
 * they hold replay, CkptMeta.kind, and how many transitions, rows); the
 * MANIFEST's optional "replay_shards" block records each file's size, CRC
 * and transitions. A manifest without that block (save_replay off, or
 * written before replay files existed) is the same format 2 and reads as
 * before.
 */
#include "runckpt.h"
#include "runckptint.h"
#include "crc32c.h"
#include "util.h"

#include <ctype.h>
#include <errno.h>
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

/* ---- a file against its manifest ------------------------------------------- */

/* Sections lie back to back after the table (ckptfile.h), so each chunk
 * read feeds the file's CRC and the CRCs of the sections it overlaps. A
 * whole-file CRC that matches the manifest proves only that the file is the
 * one the manifest was written (or rewritten) for; the section CRCs prove
 * that its data is what its writer meant, so a damaged file is refused
 * here, when a checkpoint is chosen, and never first when its data is
 * read. */
int ckptmanifest_file_crc(const CkptReader *r, const ShardSum *want, uint32_t *crc, char *err) {
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
                        ckptfile_section_name(r->entry[i].id), r->entry[i].crc, sc[i]);
    *crc = c;
    return 0;
}

int ckptmanifest_check_binding(const CkptReader *r, int q, const RunCkptManifest *m, bool replay,
                               const ShardSum *want, char *err) {
    const CkptMeta *h = &r->meta;
    const char *path = r->path;
    int n = replay ? m->n_replay : m->n_shards;
    if (h->kind != (replay ? RUNCKPT_KIND_REPLAY : RUNCKPT_KIND_PARAMS))
        return errf(err, "%s holds %s, not %s", path, h->kind == RUNCKPT_KIND_REPLAY ? "replay contents" : "parameters",
                    replay ? "replay contents" : "parameters");
    if (h->run_id != m->run_id)
        return errf(err, "%s belongs to run %016" PRIx64 ", but the manifest is of run %016" PRIx64, path, h->run_id,
                    m->run_id);
    if (h->seq != m->seq)
        return errf(err, "%s belongs to checkpoint %" PRIu64 ", but the manifest is of checkpoint %" PRIu64, path,
                    h->seq, m->seq);
    if (h->n_shards != (uint64_t)n)
        return errf(err, "%s was written as one of %" PRIu64 " %sshards, but the manifest lists %d", path,
                    h->n_shards, replay ? "replay " : "", n);
    if (h->shard_index != (uint64_t)q)
        return errf(err, "%s holds %sshard %" PRIu64 "'s data, not shard %d's", path, replay ? "replay " : "",
                    h->shard_index, q);
    if (h->target_version > CKPT_MAX_COUNT)
        return errf(err, "%s: target version %" PRIu64 " is above 2^53, more than any run can count: the header is damaged",
                    path, h->target_version);
    if (want && r->file_bytes != want->bytes)
        return errf(err, "%s is %" PRIu64 " bytes, but the manifest records %" PRIu64 " (the file is damaged or replaced)",
                    path, r->file_bytes, want->bytes);
    if (replay && (h->slice_count != 0 || !ckptfile_find(r, CKPT_SEC_REPLAY)))
        return errf(err, "%s is marked as a replay file but holds %s", path,
                    h->slice_count ? "parameters" : "no replay section");
    if (replay && want && h->rows != want->rows)
        return errf(err, "%s holds %" PRIu64 " transitions, but the manifest records %" PRIu64
                    " (the file is damaged or replaced)", path, h->rows, want->rows);
    return 0;
}

/* ---- writing the MANIFEST ------------------------------------------------------ */

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

/* The MANIFEST text for m and its shards' sums (caller frees). */
static char *manifest_text(const RunCkptManifest *m, const ShardSum *sums, const ShardSum *rsums,
                           const ShardSum *csums) {
    size_t cap = 2048 + 64 * (size_t)m->n_shards + 96 * (size_t)m->n_replay + 64 * (size_t)m->n_copies, n = 0;
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
    /* Likewise only with learner copies (the decentralized sync modes). */
    if (m->n_copies > 0)
        n += (size_t)snprintf(out + n, cap - n, "learner_copies %d first %d\n", m->n_copies, m->first_copy);
    for (int k = m->first_copy; k < m->n_copies; k++)
        n += (size_t)snprintf(out + n, cap - n, "learner %d bytes %" PRIu64 " crc32c %08x\n", k, csums[k].bytes,
                              csums[k].crc);
    uint32_t crc = crc32c(out, n);
    snprintf(out + n, cap - n, "crc32c %08x\n", crc);
    return out;
}

int ckptmanifest_check(const char *dir, const RunCkptManifest *m, char *err) {
    if (m->n_shards < 1 || m->n_shards > MANIFEST_MAX_SHARDS)
        return errf(err, "cannot commit checkpoint %s: %d shards (1 .. %d)", dir, m->n_shards, MANIFEST_MAX_SHARDS);
    if (m->n_replay < 0 || m->n_replay > MANIFEST_MAX_SHARDS)
        return errf(err, "cannot commit checkpoint %s: %d replay files (0 .. %d)", dir, m->n_replay,
                    MANIFEST_MAX_SHARDS);
    if (m->n_copies < 0 || m->n_copies > MANIFEST_MAX_SHARDS || m->first_copy < 0 ||
        (m->n_copies > 0 && m->first_copy >= m->n_copies))
        return errf(err, "cannot commit checkpoint %s: learner copies %d .. %d", dir, m->first_copy, m->n_copies - 1);
    if (!kind_known(kind_of(m)))
        return errf(err, "cannot commit checkpoint %s: kind \"%s\" (periodic, final or best)", dir, m->kind);
    if (!memchr(m->mode, '\0', sizeof m->mode) || !is_word(m->mode))
        return errf(err, "cannot commit checkpoint %s: mode must be one word", dir);
    if (m->eval_episodes < 0 || (m->eval_episodes > 0 && !isfinite(m->eval_mean)))
        return errf(err, "cannot commit checkpoint %s: evaluation of %d episodes with mean %g", dir,
                    m->eval_episodes, m->eval_mean);
    return 0;
}

int ckptmanifest_write(const char *dir, const RunCkptManifest *m, const ShardSum *sums, const ShardSum *rsums,
                       const ShardSum *csums, char *err) {
    char *text = manifest_text(m, sums, rsums, csums);
    int rc = ckptio_write_atomic(dir, "MANIFEST", text, err);
    free(text);
    return rc;
}

/* ---- reading the MANIFEST: lines ------------------------------------------------ */

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

/* ---- reading the MANIFEST: steps ------------------------------------------------ */

/* Read the manifest at path whole into a new NUL-terminated allocation
 * (*text, caller frees; *len bytes were read). */
static int load_manifest(const char *path, char **text, size_t *len, char *err) {
    *text = NULL;
    int fd = open_regular(path, "manifest", err); /* a FIFO must not hang the reader */
    if (fd < 0) return -1;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > (off_t)MANIFEST_MAX_BYTES) {
        close(fd);
        return errf(err, "%s: not a checkpoint manifest (not a regular file of at most %u bytes)", path,
                    MANIFEST_MAX_BYTES);
    }
    size_t size = (size_t)st.st_size, done = 0;
    char *t = xmalloc(size + 1);
    while (done < size) {
        ssize_t r = read(fd, t + done, size - done);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        done += (size_t)r;
    }
    close(fd);
    t[done] = '\0';
    *text = t;
    *len = done;
    return 0;
}

/* Check what the manifest text (len bytes) is before believing any of it:
 * the first line's format (format 1 had no run id and no shard checksums),
 * then the last line, the CRC of everything before it. On success the CRC
 * line is cut off and *body is the line after the first. */
static int check_manifest_text(const char *path, char *text, size_t len, char **body, char *err) {
    unsigned version = 0;
    int head_len = 0;
    if (sscanf(text, MANIFEST_HEAD " %u%n", &version, &head_len) != 1 || text[head_len] != '\n')
        return errf(err, "%s: not a checkpoint manifest (no \"" MANIFEST_HEAD "\" line)", path);
    if (version < MANIFEST_VERSION)
        return errf(err,
                    "%s: written by an older gorila (manifest format %u; this build reads format %d, which binds "
                    "each shard file to its checkpoint): this checkpoint cannot be used",
                    path, version, MANIFEST_VERSION);
    if (version > MANIFEST_VERSION)
        return errf(err, "%s: written by a newer gorila (manifest format %u; this build reads format %d)", path,
                    version, MANIFEST_VERSION);
    if (len == 0 || text[len - 1] != '\n')
        return errf(err, "%s: truncated (no final newline): the file is damaged", path);
    text[len - 1] = '\0';
    char *last = strrchr(text, '\n');
    unsigned crc_file = 0;
    int crc_len = 0;
    if (!last || sscanf(last + 1, "crc32c %8x%n", &crc_file, &crc_len) != 1 || last[1 + crc_len] != '\0')
        return errf(err, "%s: no crc32c line at the end: the file is damaged or truncated", path);
    uint32_t crc = crc32c(text, (size_t)(last + 1 - text));
    if (crc != crc_file)
        return errf(err, "%s: checksum mismatch (stored %08x, computed %08x): the file is damaged", path, crc_file, crc);
    last[1] = '\0';
    *body = text + head_len + 1;
    return 0;
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

/* The "history" line into m, its steps and versions counters like the
 * others (at most 2^53). */
static int parse_history_line(Lines *L, RunCkptManifest *m, char *err) {
    char *hv;
    if (field(L, "history", &hv, err)) return -1;
    if (parse_history(hv, m) != 0) return errf(err, "%s: line %d: malformed history \"%.60s\"", L->path, L->line, hv);
    const struct {
        const char *name;
        uint64_t value;
    } hcounts[] = {{"best_env_steps", m->history.best_env_steps},
                   {"best_version", m->history.best_version},
                   {"solved_env_steps", m->history.solved_at_env_steps},
                   {"solved_version", m->history.solved_at_version}};
    for (size_t i = 0; i < sizeof hcounts / sizeof hcounts[0]; i++)
        if (hcounts[i].value > CKPT_MAX_COUNT)
            return errf(err, "%s: line %d: history %s is %" PRIu64 ", above 2^53, more than any run can count: the "
                        "manifest is damaged", L->path, L->line, hcounts[i].name, hcounts[i].value);
    return 0;
}

/* The lines from run_id to shards into m, then the checks across them. */
static int parse_head(Lines *L, RunCkptManifest *m, char *err) {
    char kind[sizeof m->kind];
    if (field_u64(L, "run_id", 16, &m->run_id, err) || field_count(L, "seq", &m->seq, err) ||
        field_word(L, "kind", kind, sizeof kind, err) || field_word(L, "mode", m->mode, sizeof m->mode, err) ||
        field_count(L, "env_steps", &m->env_steps, err) || field_count(L, "updates", &m->updates, err) ||
        field_count(L, "episodes", &m->episodes, err) || field_double(L, "wall_seconds", &m->wall_seconds, err) ||
        field_count(L, "params_version", &m->params_version, err) ||
        field_double(L, "eval_mean", &m->eval_mean, err) ||
        field_int(L, "eval_episodes", 0, 1L << 30, &m->eval_episodes, err) ||
        field_u64(L, "eval_seed", 10, &m->eval_seed, err))
        return -1;
    if (parse_history_line(L, m, err)) return -1;
    if (field_int(L, "shards", 1, MANIFEST_MAX_SHARDS, &m->n_shards, err)) return -1;
    if (!kind_known(kind)) return errf(err, "%s: kind \"%s\" (periodic, final or best)", L->path, kind);
    snprintf(m->kind, sizeof m->kind, "%s", kind);
    if (!(m->wall_seconds >= 0 && m->wall_seconds <= 1e12) || (m->eval_episodes > 0) == isnan(m->eval_mean))
        return errf(err, "%s: wall_seconds or the evaluation is malformed", L->path);
    return 0;
}

/* The m->n_shards "shard q ..." lines into s[0 .. n_shards). */
static int parse_shards(Lines *L, const RunCkptManifest *m, ShardSum *s, char *err) {
    for (int q = 0; q < m->n_shards; q++) {
        char *v;
        int idx = -1, used = 0;
        unsigned long long bytes = 0;
        unsigned c = 0;
        if (field(L, "shard", &v, err)) return -1;
        if (sscanf(v, "%d bytes %llu crc32c %8x%n", &idx, &bytes, &c, &used) != 3 || v[used] != '\0' || idx != q)
            return errf(err, "%s: line %d: expected \"shard %d bytes N crc32c X\", found \"shard %.60s\"", L->path,
                        L->line, q, v);
        s[q] = (ShardSum){bytes, c, 0};
    }
    return 0;
}

/* The m->n_replay "replay s ..." lines into rs[0 .. n_replay), their
 * transitions summed into m->replay_transitions. */
static int parse_replays(Lines *L, RunCkptManifest *m, ShardSum *rs, char *err) {
    for (int q = 0; q < m->n_replay; q++) {
        char *v;
        int idx = -1, used = 0;
        unsigned long long bytes = 0, rows = 0;
        unsigned c = 0;
        if (field(L, "replay", &v, err)) return -1;
        if (sscanf(v, "%d bytes %llu crc32c %8x transitions %llu%n", &idx, &bytes, &c, &rows, &used) != 4 ||
            v[used] != '\0' || idx != q)
            return errf(err, "%s: line %d: expected \"replay %d bytes N crc32c X transitions T\", found \"replay %.60s\"",
                        L->path, L->line, q, v);
        if (rows > CKPT_MAX_COUNT)
            return errf(err, "%s: line %d: replay %d transitions is %llu, above 2^53, more than any run can count: "
                        "the manifest is damaged", L->path, L->line, q, rows);
        rs[q] = (ShardSum){bytes, c, rows};
        m->replay_transitions += rows;
    }
    return 0;
}

/* The optional learner copy lines into cs (allocated: n_copies entries, at
 * least one). */
static int parse_copies(Lines *L, RunCkptManifest *m, ShardSum **cs, char *err) {
    if (strncmp(L->p, "learner_copies ", 15) == 0) {
        char *v;
        int used = 0;
        if (field(L, "learner_copies", &v, err)) return -1;
        if (sscanf(v, "%d first %d%n", &m->n_copies, &m->first_copy, &used) != 2 || v[used] != '\0' ||
            m->n_copies < 1 || m->n_copies > MANIFEST_MAX_SHARDS || m->first_copy < 0 ||
            m->first_copy >= m->n_copies)
            return errf(err, "%s: line %d: expected \"learner_copies L first F\" (0 <= F < L <= %d), found "
                        "\"learner_copies %.40s\"", L->path, L->line, MANIFEST_MAX_SHARDS, v);
    }
    *cs = xcalloc((size_t)m->n_copies + 1, sizeof **cs);
    for (int k = m->first_copy; k < m->n_copies; k++) {
        char *v;
        int idx = -1, used = 0;
        unsigned long long bytes = 0;
        unsigned c = 0;
        if (field(L, "learner", &v, err)) return -1;
        if (sscanf(v, "%d bytes %llu crc32c %8x%n", &idx, &bytes, &c, &used) != 3 || v[used] != '\0' || idx != k)
            return errf(err, "%s: line %d: expected \"learner %d bytes N crc32c X\", found \"learner %.60s\"",
                        L->path, L->line, k, v);
        (*cs)[k] = (ShardSum){bytes, c, 0};
    }
    return 0;
}

int ckptmanifest_read(const char *dir, RunCkptManifest *m, ShardSum **sums, ShardSum **rsums, ShardSum **csums,
                      char *err) {
    memset(m, 0, sizeof *m);
    if (sums) *sums = NULL;
    if (rsums) *rsums = NULL;
    if (csums) *csums = NULL;
    char path[PATH_LEN];
    if (ckptio_join(path, dir, "MANIFEST", err)) return -1;
    char *text, *body = NULL;
    size_t len = 0;
    if (load_manifest(path, &text, &len, err)) return -1;
    int rc = -1;
    ShardSum *s = NULL, *rs = NULL, *cs = NULL;
    Lines L = {NULL, path, 1};
    if (check_manifest_text(path, text, len, &body, err)) goto out;
    L.p = body;
    if (parse_head(&L, m, err)) goto out;
    s = xcalloc((size_t)m->n_shards, sizeof *s);
    if (parse_shards(&L, m, s, err)) goto out;
    /* Optional: the replay files (absent in a checkpoint without replay). */
    if (strncmp(L.p, "replay_shards ", 14) == 0 &&
        field_int(&L, "replay_shards", 1, MANIFEST_MAX_SHARDS, &m->n_replay, err))
        goto out;
    rs = xcalloc((size_t)m->n_replay + 1, sizeof *rs);
    if (parse_replays(&L, m, rs, err)) goto out;
    if (parse_copies(&L, m, &cs, err)) goto out;
    if (*L.p != '\0') {
        errf(err, "%s: line %d: unexpected \"%.40s\" after the %s list", path, L.line + 1, L.p,
             m->n_copies ? "learner copy" : m->n_replay ? "replay file" : "shard");
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
    if (rc == 0 && csums) *csums = cs;
    else free(cs);
    return rc;
}

int runckpt_read_manifest(const char *dir, RunCkptManifest *m, char *err) {
    return ckptmanifest_read(dir, m, NULL, NULL, NULL, err);
}

/* ---- the run id of a run directory ------------------------------------------ */

#define RUN_ID_FILE "run_id"

int runckpt_run_id(const char *run_dir, uint64_t *id, char *err) {
    char path[PATH_LEN], text[64];
    *id = 0;
    if (ckptio_join(path, run_dir, RUN_ID_FILE, err)) return -1;
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
    return ckptio_write_atomic(run_dir, RUN_ID_FILE, text, err);
}

int ckptmanifest_check_run(const char *run_dir, const RunCkptManifest *m, char *err) {
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
