/* SPDX-License-Identifier: MIT */
/* ckptfile.c: see ckptfile.h; the byte layout is docs/CHECKPOINT.md.
 *
 * Integrity chain: the header carries its own CRC and the CRC of the
 * section table; each table entry carries its section's CRC. So a reader
 * trusts nothing it has not checked: header fields only after the header
 * CRC, section lengths only after the table CRC, data only after its CRC.
 *
 * The order of the first checks matters for the message: magic (is this a
 * checkpoint at all), endianness marker (before any multi-byte number is
 * believed), version (a future version may lay out the rest differently),
 * header size, then the header CRC. Those first 20 bytes keep their place
 * in every format version.
 *
 * Numbers are stored in the writer's byte order, which the marker records;
 * every machine we run on is little-endian, so files are little-endian.
 *
 * Atomic write, step by step:
 *   mkstemp("<path>.tmp.XXXXXX")   same directory, so rename is atomic
 *   write header, table, sections  every write checked (short writes retried)
 *   fsync, close                   both checked: a full disk may only show here
 *   rename over <path>             readers see the old file or the new one
 *   fsync the directory            the rename itself is durable
 * Any failure before the rename unlinks the temporary file; the old
 * checkpoint was never touched.
 */
#include "ckptfile.h"

#include <inttypes.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "crc32c.h"
#include "util.h"

static const char MAGIC[8] = {'G', 'O', 'R', 'I', 'L', 'A', 'C', 'K'};
#define ENDIAN_MARK 0x01020304u
#define ENDIAN_SWAPPED 0x04030201u

/* Header field offsets (format version 1). */
enum {
    OFF_MAGIC = 0,
    OFF_VERSION = 8,
    OFF_ENDIAN = 12,
    OFF_HEADER_BYTES = 16,
    OFF_N_SECTIONS = 20,
    OFF_TABLE_CRC = 24,
    OFF_OBS_DIM = 28,
    OFF_NUM_ACTIONS = 32,
    OFF_N_HIDDEN = 36,
    OFF_HIDDEN = 40, /* u32[8] */
    OFF_DUELING = 72,
    OFF_OPTIMIZER = 76,
    OFF_OPTIM_SLOTS = 80,
    OFF_PAD0 = 84,
    OFF_N_PARAMS = 88,
    OFF_SLICE_OFFSET = 96,
    OFF_SLICE_COUNT = 104,
    OFF_ENV = 112, /* char[32] */
    OFF_ENV_STEPS = 144,
    OFF_UPDATES = 152,
    OFF_EPISODES = 160,
    OFF_PARAM_VERSION = 168,
    OFF_WALL_SECONDS = 176,
    OFF_TARGET_VERSION = 184, /* u64 each, the run layer's (ckptfile.h) */
    OFF_RUN_ID = 192,
    OFF_SEQ = 200,
    OFF_N_SHARDS = 208,
    OFF_SHARD_INDEX = 216,
    OFF_KIND = 224,
    OFF_ROWS = 232,
    OFF_RESERVED = 240, /* u64[CKPT_N_RESERVED] */
    OFF_PAD1 = 248,
    OFF_HEADER_CRC = 252,
    STABLE_PREFIX = 20, /* magic, version, marker, header size */
    ENTRY_BYTES = 16,   /* id u32, crc u32, bytes u64 */
};
_Static_assert(OFF_HEADER_CRC + 4 == CKPT_HEADER_BYTES, "header layout");
_Static_assert(OFF_TARGET_VERSION == OFF_WALL_SECONDS + 8 && OFF_RESERVED == OFF_ROWS + 8, "header layout");
_Static_assert(OFF_RESERVED + 8 * CKPT_N_RESERVED == OFF_PAD1, "header layout");


const char *ckptfile_section_name(uint32_t id) {
    switch (id) {
    case CKPT_SEC_PARAMS: return "params";
    case CKPT_SEC_TARGET: return "target_params";
    case CKPT_SEC_OPTIM: return "optim_state";
    case CKPT_SEC_RNG: return "rng_states";
    case CKPT_SEC_REPLAY: return "replay";
    case CKPT_SEC_ENVS: return "envs";
    case CKPT_SEC_NET: return "net";
    case CKPT_SEC_ENVID: return "envid";
    default: return "unknown";
    }
}

const char *ckptfile_optim_name(uint32_t kind) {
    switch (kind) {
    case CKPT_OPT_NONE: return "none";
    case CKPT_OPT_SGD: return "sgd";
    case CKPT_OPT_ADAM: return "adam";
    case CKPT_OPT_RMSPROP: return "rmsprop";
    default: return "unknown";
    }
}

/* ---- validation shared by writer and reader ---------------------------- */

/* Section NET's fields: planes that make obs_dim, and 0 .. CKPT_MAX_CONV
 * layers of positive sizes (all zero without planes). */
static int check_planes(const CkptNet *n, char *err) {
    if (n->in_c == 0) {
        if (n->in_h || n->in_w || n->n_conv)
            return errf(err, "network input has no planes but %ux%u and %u conv layers", n->in_h, n->in_w, n->n_conv);
        return 0;
    }
    if ((uint64_t)n->in_h * n->in_w * n->in_c != n->obs_dim)
        return errf(err, "network input planes %ux%ux%u do not make obs_dim %u", n->in_h, n->in_w, n->in_c, n->obs_dim);
    if (n->n_conv > CKPT_MAX_CONV) return errf(err, "network has %u conv layers, at most %d fit", n->n_conv, CKPT_MAX_CONV);
    for (uint32_t i = 0; i < CKPT_MAX_CONV; i++)
        for (int j = 0; j < 3; j++) {
            if (i < n->n_conv && n->conv[i][j] == 0) return errf(err, "conv layer %u has a size of 0", i);
            if (i >= n->n_conv && n->conv[i][j] != 0)
                return errf(err, "conv layer %u given beyond the %u conv layers", i, n->n_conv);
        }
    return 0;
}

static int check_meta(const CkptMeta *m, char *err) {
    const CkptNet *n = &m->net;
    if (n->obs_dim == 0 || n->num_actions == 0)
        return errf(err, "network has obs_dim %u and num_actions %u, both must be at least 1", n->obs_dim,
                    n->num_actions);
    if (n->n_hidden > CKPT_MAX_HIDDEN)
        return errf(err, "network has %u hidden layers, at most %d fit", n->n_hidden, CKPT_MAX_HIDDEN);
    for (uint32_t i = 0; i < CKPT_MAX_HIDDEN; i++) {
        if (i < n->n_hidden && n->hidden[i] == 0) return errf(err, "hidden layer %u has width 0", i);
        if (i >= n->n_hidden && n->hidden[i] != 0)
            return errf(err, "hidden width %u given beyond the %u hidden layers", i, n->n_hidden);
    }
    if (n->dueling > 1) return errf(err, "dueling flag is %u, must be 0 or 1", n->dueling);
    if (check_planes(n, err) < 0) return -1;
    if (m->slice_offset > n->n_params || m->slice_count > n->n_params - m->slice_offset)
        return errf(err, "slice [%" PRIu64 ", %" PRIu64 " + %" PRIu64 ") lies outside the %" PRIu64 " parameters",
                    m->slice_offset, m->slice_offset,
                    m->slice_count, n->n_params);
    if (!memchr(m->env, '\0', CKPT_ENV_LEN))
        return errf(err, "env name is not NUL-terminated within %d bytes", CKPT_ENV_LEN);
    if (!memchr(m->env_id, '\0', CKPT_ENVID_LEN) || !memchr(m->env_kwargs, '\0', CKPT_KWARGS_LEN))
        return errf(err, "env id or kwargs not NUL-terminated within %d and %d bytes", CKPT_ENVID_LEN, CKPT_KWARGS_LEN);
    if (m->env_id[0] && strncmp(m->env, m->env_id, CKPT_ENV_LEN - 1) != 0)
        return errf(err, "env name \"%s\" is not the start of the env id \"%s\"", m->env, m->env_id);
    if (m->optimizer >= CKPT_OPT_END_) return errf(err, "unknown optimizer kind %u", m->optimizer);
    if (m->optim_slots > CKPT_OPTIM_MAX_SLOTS)
        return errf(err, "optimizer keeps %u arrays per parameter, at most %d", m->optim_slots,
                    CKPT_OPTIM_MAX_SLOTS);
    if (m->optimizer == CKPT_OPT_NONE && m->optim_slots != 0)
        return errf(err, "no optimizer, but %u optimizer arrays per parameter", m->optim_slots);
    const struct {
        const char *name;
        uint64_t value;
    } counts[] = {{"env_steps", m->env_steps}, {"updates", m->updates}, {"episodes", m->episodes},
                  {"param_version", m->param_version}};
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++)
        if (counts[i].value > CKPT_MAX_COUNT)
            return errf(err, "%s is %" PRIu64 ", above 2^53, more than any run can count", counts[i].name,
                        counts[i].value);
    if (!(m->wall_seconds >= 0 && m->wall_seconds <= 1e12))
        return errf(err, "wall_seconds is %g, expected 0 .. 1e12", m->wall_seconds);
    return 0;
}

/* The length section id must have under meta m, or check the RNG/REPLAY
 * rules. Returns 0 or -1 with a message. */
static int check_section(const CkptMeta *m, uint32_t version, uint32_t id, uint64_t bytes, char *err) {
    /* slice_count <= n_params was checked; a corrupt-but-CRC-valid value
     * cannot reach here, but keep the products from wrapping anyway. */
    uint64_t floats = m->slice_count;
    if (floats > UINT64_MAX / 4 / (CKPT_OPTIM_MAX_SLOTS + 1))
        return errf(err, "slice of %" PRIu64 " parameters is too large", floats);
    const char *name = ckptfile_section_name(id);
    switch (id) {
    case CKPT_SEC_PARAMS:
    case CKPT_SEC_TARGET:
        if (bytes != 4 * floats)
            return errf(err, "section %s is %" PRIu64 " bytes, the layout needs %" PRIu64 " (%" PRIu64 " floats)", name,
                        bytes, (4 * floats), floats);
        return 0;
    case CKPT_SEC_OPTIM: {
        if (m->optimizer == CKPT_OPT_NONE) return errf(err, "section %s present, but the optimizer is none", name);
        uint64_t want = 8 + 4 * floats * m->optim_slots;
        if (bytes != want)
            return errf(err, "section %s is %" PRIu64 " bytes, the layout needs %" PRIu64 " (8 + %u x %" PRIu64 " floats for %s)", name,
                        bytes, want, m->optim_slots,
                        floats, ckptfile_optim_name(m->optimizer));
        return 0;
    }
    case CKPT_SEC_RNG:
        if (bytes == 0 || bytes % 32 != 0)
            return errf(err, "section %s is %" PRIu64 " bytes, not a whole number of 32-byte Rng states", name,
                        bytes);
        return 0;
    case CKPT_SEC_REPLAY: return 0;
    case CKPT_SEC_ENVS:
        if (version < 2) break; /* unknown to format 1 */
        if (bytes < 24) return errf(err, "section %s is %" PRIu64 " bytes, shorter than its 3 counts", name, bytes);
        return 0;
    case CKPT_SEC_NET:
        if (version < 3) break; /* unknown to formats 1 and 2 */
        if (bytes < 16 || (bytes - 16) % 12 != 0 || (bytes - 16) / 12 > CKPT_MAX_CONV)
            return errf(err, "section %s is %" PRIu64 " bytes, expected 16 + 12 per conv layer (0 .. %d layers)", name,
                        bytes, CKPT_MAX_CONV);
        return 0;
    case CKPT_SEC_ENVID:
        if (version < 4) break; /* unknown to formats 1 .. 3 */
        if (bytes < 9 || bytes > 8 + (CKPT_ENVID_LEN - 1) + (CKPT_KWARGS_LEN - 1))
            return errf(err, "section %s is %" PRIu64 " bytes, expected 9 .. %d", name, bytes,
                        8 + (CKPT_ENVID_LEN - 1) + (CKPT_KWARGS_LEN - 1));
        return 0;
    default: break;
    }
    static const int last_id[] = {0, CKPT_SEC_REPLAY, CKPT_SEC_ENVS, CKPT_SEC_NET, CKPT_SEC_ENVID};
    return errf(err, "unknown section id %u (format %u knows 1 .. %d)", id, version,
                version < 5 ? last_id[version] : CKPT_SEC_END_ - 1);
}

/* ids[0 .. n), bytes[0 .. n): known, unique, PARAMS present, sizes fit. */
static int check_table(const CkptMeta *m, uint32_t version, const uint32_t *ids, const uint64_t *bytes, size_t n,
                       char *err) {
    if (n < 1 || n > CKPT_MAX_SECTIONS)
        return errf(err, "%zu sections, a checkpoint has 1 .. %d", n, CKPT_MAX_SECTIONS);
    bool seen[CKPT_SEC_END_] = {false};
    for (size_t i = 0; i < n; i++) {
        if (check_section(m, version, ids[i], bytes[i], err) < 0) return -1;
        if (seen[ids[i]]) return errf(err, "section %s appears twice", ckptfile_section_name(ids[i]));
        seen[ids[i]] = true;
    }
    if (!seen[CKPT_SEC_PARAMS]) return errf(err, "required section params is missing");
    return 0;
}

/* ---- header encoding ---------------------------------------------------- */

static void encode_header(unsigned char *h, const CkptMeta *m, uint32_t version, uint32_t n_sections,
                          uint32_t table_crc) {
    memset(h, 0, CKPT_HEADER_BYTES);
    memcpy(h + OFF_MAGIC, MAGIC, 8);
    store_u32(h + OFF_VERSION, version);
    store_u32(h + OFF_ENDIAN, ENDIAN_MARK);
    store_u32(h + OFF_HEADER_BYTES, CKPT_HEADER_BYTES);
    store_u32(h + OFF_N_SECTIONS, n_sections);
    store_u32(h + OFF_TABLE_CRC, table_crc);
    store_u32(h + OFF_OBS_DIM, m->net.obs_dim);
    store_u32(h + OFF_NUM_ACTIONS, m->net.num_actions);
    store_u32(h + OFF_N_HIDDEN, m->net.n_hidden);
    for (int i = 0; i < CKPT_MAX_HIDDEN; i++) store_u32(h + OFF_HIDDEN + 4 * i, m->net.hidden[i]);
    store_u32(h + OFF_DUELING, m->net.dueling);
    store_u32(h + OFF_OPTIMIZER, m->optimizer);
    store_u32(h + OFF_OPTIM_SLOTS, m->optim_slots);
    store_u64(h + OFF_N_PARAMS, m->net.n_params);
    store_u64(h + OFF_SLICE_OFFSET, m->slice_offset);
    store_u64(h + OFF_SLICE_COUNT, m->slice_count);
    /* The name and zeros after it: no stray bytes from the caller's struct. */
    memcpy(h + OFF_ENV, m->env, strnlen(m->env, CKPT_ENV_LEN - 1));
    store_u64(h + OFF_ENV_STEPS, m->env_steps);
    store_u64(h + OFF_UPDATES, m->updates);
    store_u64(h + OFF_EPISODES, m->episodes);
    store_u64(h + OFF_PARAM_VERSION, m->param_version);
    memcpy(h + OFF_WALL_SECONDS, &m->wall_seconds, 8);
    store_u64(h + OFF_TARGET_VERSION, m->target_version);
    store_u64(h + OFF_RUN_ID, m->run_id);
    store_u64(h + OFF_SEQ, m->seq);
    store_u64(h + OFF_N_SHARDS, m->n_shards);
    store_u64(h + OFF_SHARD_INDEX, m->shard_index);
    store_u64(h + OFF_KIND, m->kind);
    store_u64(h + OFF_ROWS, m->rows);
    for (int i = 0; i < CKPT_N_RESERVED; i++) store_u64(h + OFF_RESERVED + 8 * i, m->reserved[i]);
    store_u32(h + OFF_HEADER_CRC, crc32c(h, OFF_HEADER_CRC));
}

static void decode_header(const unsigned char *h, CkptMeta *m) {
    memset(m, 0, sizeof *m);
    m->net.obs_dim = load_u32(h + OFF_OBS_DIM);
    m->net.num_actions = load_u32(h + OFF_NUM_ACTIONS);
    m->net.n_hidden = load_u32(h + OFF_N_HIDDEN);
    for (int i = 0; i < CKPT_MAX_HIDDEN; i++) m->net.hidden[i] = load_u32(h + OFF_HIDDEN + 4 * i);
    m->net.dueling = load_u32(h + OFF_DUELING);
    m->optimizer = load_u32(h + OFF_OPTIMIZER);
    m->optim_slots = load_u32(h + OFF_OPTIM_SLOTS);
    m->net.n_params = load_u64(h + OFF_N_PARAMS);
    m->slice_offset = load_u64(h + OFF_SLICE_OFFSET);
    m->slice_count = load_u64(h + OFF_SLICE_COUNT);
    memcpy(m->env, h + OFF_ENV, CKPT_ENV_LEN);
    m->env_steps = load_u64(h + OFF_ENV_STEPS);
    m->updates = load_u64(h + OFF_UPDATES);
    m->episodes = load_u64(h + OFF_EPISODES);
    m->param_version = load_u64(h + OFF_PARAM_VERSION);
    m->format_version = load_u32(h + OFF_VERSION);
    memcpy(&m->wall_seconds, h + OFF_WALL_SECONDS, 8);
    m->target_version = load_u64(h + OFF_TARGET_VERSION);
    m->run_id = load_u64(h + OFF_RUN_ID);
    m->seq = load_u64(h + OFF_SEQ);
    m->n_shards = load_u64(h + OFF_N_SHARDS);
    m->shard_index = load_u64(h + OFF_SHARD_INDEX);
    m->kind = load_u64(h + OFF_KIND);
    m->rows = load_u64(h + OFF_ROWS);
    for (int i = 0; i < CKPT_N_RESERVED; i++) m->reserved[i] = load_u64(h + OFF_RESERVED + 8 * i);
}

/* ---- writing ----------------------------------------------------------- */

/* Write all bytes or fail with errno set (a zero-byte write counts as a
 * full device). */
static int write_all(int fd, const void *buf, size_t bytes) {
    const unsigned char *p = buf;
    while (bytes > 0) {
        size_t chunk = bytes < (1u << 30) ? bytes : (1u << 30);
        ssize_t w = write(fd, p, chunk);
        if (w < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        if (w == 0) {
            errno = ENOSPC;
            return -1;
        }
        p += w;
        bytes -= (size_t)w;
    }
    return 0;
}

/* The directory part of path ("." when there is none). */
static void dir_of(const char *path, char *dir, size_t cap) {
    const char *slash = strrchr(path, '/');
    if (!slash) {
        snprintf(dir, cap, ".");
    } else if (slash == path) {
        snprintf(dir, cap, "/");
    } else {
        snprintf(dir, cap, "%.*s", (int)(slash - path), path);
    }
}

/* Section ENVID's bytes for m's env_id and env_kwargs into out (8 +
 * CKPT_ENVID_LEN + CKPT_KWARGS_LEN bytes); returns the count. */
static size_t encode_envid(const CkptMeta *m, unsigned char *out) {
    size_t i = strnlen(m->env_id, CKPT_ENVID_LEN - 1), k = strnlen(m->env_kwargs, CKPT_KWARGS_LEN - 1);
    store_u32(out, (uint32_t)i);
    store_u32(out + 4, (uint32_t)k);
    memcpy(out + 8, m->env_id, i);
    memcpy(out + 8 + i, m->env_kwargs, k);
    return 8 + i + k;
}

/* Section NET's bytes for n (16 + 12 n_conv of them) into out; returns
 * the count. */
static size_t encode_net(const CkptNet *n, unsigned char *out) {
    store_u32(out, n->in_h);
    store_u32(out + 4, n->in_w);
    store_u32(out + 8, n->in_c);
    store_u32(out + 12, n->n_conv);
    for (uint32_t i = 0; i < n->n_conv && i < CKPT_MAX_CONV; i++)
        for (int j = 0; j < 3; j++) store_u32(out + 16 + 12 * i + 4 * (uint32_t)j, n->conv[i][j]);
    return 16 + 12 * (size_t)(n->n_conv < CKPT_MAX_CONV ? n->n_conv : CKPT_MAX_CONV);
}

int ckptfile_write(const char *path, const CkptMeta *meta, const CkptSection *caller, size_t n_caller, char *err) {
    if (check_meta(meta, err) < 0) return err_prefix(err, "cannot write checkpoint %s", path);
    /* The caller's sections, then NET for a network on planes and ENVID
     * for a Python environment. */
    if (n_caller > CKPT_MAX_SECTIONS)
        return errf(err, "cannot write checkpoint %s: %zu sections, a checkpoint has 1 .. %d", path, n_caller,
                    CKPT_MAX_SECTIONS);
    CkptSection sections[CKPT_MAX_SECTIONS + 2];
    unsigned char net_bytes[16 + 12 * CKPT_MAX_CONV], envid_bytes[8 + CKPT_ENVID_LEN + CKPT_KWARGS_LEN];
    size_t n_sections = n_caller;
    if (n_caller > 0) memcpy(sections, caller, n_caller * sizeof *caller);
    if (meta->net.in_c > 0)
        sections[n_sections++] = (CkptSection){CKPT_SEC_NET, net_bytes, encode_net(&meta->net, net_bytes)};
    if (meta->env_id[0])
        sections[n_sections++] = (CkptSection){CKPT_SEC_ENVID, envid_bytes, encode_envid(meta, envid_bytes)};
    uint32_t ids[CKPT_MAX_SECTIONS + 2] = {0};
    uint64_t lens[CKPT_MAX_SECTIONS + 2] = {0};
    for (size_t i = 0; i < n_sections; i++) {
        ids[i] = sections[i].id;
        lens[i] = sections[i].bytes;
    }
    /* The oldest format that holds these sections: 2 for ENVS, 3 for NET,
     * 4 for ENVID. */
    uint32_t version = CKPT_VERSION_MIN;
    for (size_t i = 0; i < n_sections; i++) {
        uint32_t need = ids[i] == CKPT_SEC_ENVS ? 2 : ids[i] == CKPT_SEC_NET ? 3 : ids[i] == CKPT_SEC_ENVID ? 4 : 1;
        if (version < need) version = need;
    }
    if (check_table(meta, version, ids, lens, n_sections, err) < 0)
        return err_prefix(err, "cannot write checkpoint %s", path);

    /* Header and table in one buffer, CRCs computed before anything is
     * written: the header holds the table's CRC. */
    unsigned char head[CKPT_HEADER_BYTES + ENTRY_BYTES * CKPT_MAX_SECTIONS];
    unsigned char *table = head + CKPT_HEADER_BYTES;
    for (size_t i = 0; i < n_sections; i++) {
        unsigned char *e = table + ENTRY_BYTES * i;
        store_u32(e, sections[i].id);
        store_u32(e + 4, crc32c(sections[i].data, sections[i].bytes));
        store_u64(e + 8, sections[i].bytes);
    }
    size_t table_bytes = ENTRY_BYTES * n_sections;
    encode_header(head, meta, version, (uint32_t)n_sections, crc32c(table, table_bytes));

    char tmp[PATH_MAX];
    if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp.XXXXXX", path) >= sizeof tmp)
        return errf(err, "cannot write checkpoint %s: path too long", path);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        int e = errno;
        return errf(err, "cannot write checkpoint %s: cannot create temporary file %s: %s", path, tmp, strerror(e));
    }
    const char *what = "setting permissions of";
    if (fchmod(fd, 0644) < 0) goto fail;
    what = "writing the header to";
    if (write_all(fd, head, CKPT_HEADER_BYTES + table_bytes) < 0) goto fail;
    char what_buf[64];
    for (size_t i = 0; i < n_sections; i++) {
        snprintf(what_buf, sizeof what_buf, "writing section %s to", ckptfile_section_name(sections[i].id));
        what = what_buf;
        if (sections[i].bytes > 0 && write_all(fd, sections[i].data, sections[i].bytes) < 0) goto fail;
    }
    what = "syncing";
    if (fsync(fd) < 0) goto fail;
    what = "closing";
    int rc = close(fd);
    fd = -1;
    if (rc < 0) goto fail;
    what = "renaming";
    if (rename(tmp, path) < 0) goto fail;

    char dir[PATH_MAX];
    dir_of(path, dir, sizeof dir);
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0 || fsync(dfd) < 0) {
        int e = errno;
        if (dfd >= 0) close(dfd);
        return errf(err, "checkpoint %s was written, but syncing its directory %s failed: %s", path, dir,
                    strerror(e));
    }
    close(dfd);
    return 0;

fail: {
    int e = errno;
    if (fd >= 0) close(fd);
    unlink(tmp);
    return errf(err, "cannot write checkpoint %s: %s %s: %s", path, what, tmp, strerror(e));
}
}

/* ---- reading ----------------------------------------------------------- */

/* Read exactly bytes at offset or fail: -1 with errno, or 0 bytes short
 * (returned through *got) when the file ends early. */
static int pread_all(int fd, void *buf, size_t bytes, uint64_t offset, size_t *got) {
    unsigned char *p = buf;
    size_t done = 0;
    while (done < bytes) {
        ssize_t r = pread(fd, p + done, bytes - done, (off_t)(offset + done));
        if (r < 0) {
            if (errno == EINTR) continue;
            *got = done;
            return -1;
        }
        if (r == 0) break;
        done += (size_t)r;
    }
    *got = done;
    return 0;
}

/* Leave r closed after a failed open; err is already filled. */
static int open_fail(CkptReader *r) {
    ckptfile_close(r);
    return -1;
}

static int truncated_header(const char *path, uint64_t size, char *err) {
    return errf(err, "%s: truncated file: the header needs %d bytes at offset 0, but the file is %" PRIu64 " bytes long",
                path, CKPT_HEADER_BYTES, size);
}

/* The first checks on the got bytes of header h read from a file of size
 * bytes, in the order the top of this file gives: anything there, magic,
 * endianness marker, version, header size, then the whole header present. */
static int check_prefix(const char *path, const unsigned char *h, size_t got, uint64_t size, char *err) {
    if (size == 0) return errf(err, "%s: not a gorila checkpoint (the file is empty)", path);
    if (memcmp(h, MAGIC, got < 8 ? got : 8) != 0)
        return errf(err, "%s: not a gorila checkpoint (magic %02x %02x %02x %02x ..., expected \"GORILACK\")", path,
                    h[0], got > 1 ? h[1] : 0, got > 2 ? h[2] : 0, got > 3 ? h[3] : 0);
    if (got < STABLE_PREFIX) return truncated_header(path, size, err);
    uint32_t mark = load_u32(h + OFF_ENDIAN);
    if (mark == ENDIAN_SWAPPED)
        return errf(err,
                    "%s: written on a machine of the other byte order (endianness marker reads 0x%08x, expected "
                    "0x%08x)",
                    path, mark, ENDIAN_MARK);
    if (mark != ENDIAN_MARK)
        return errf(err, "%s: corrupt header: endianness marker is 0x%08x, expected 0x%08x", path, mark,
                    ENDIAN_MARK);
    uint32_t version = load_u32(h + OFF_VERSION);
    if (version < CKPT_VERSION_MIN || version > CKPT_VERSION)
        return errf(err, "%s: unsupported checkpoint format version %u (this build supports versions %d to %d)", path,
                    version, CKPT_VERSION_MIN, CKPT_VERSION);
    uint32_t header_bytes = load_u32(h + OFF_HEADER_BYTES);
    if (header_bytes != CKPT_HEADER_BYTES)
        return errf(err, "%s: corrupt header: header size is %u bytes, format version %u has %d", path,
                    header_bytes, version, CKPT_HEADER_BYTES);
    if (got < CKPT_HEADER_BYTES) return truncated_header(path, size, err);
    return 0;
}

/* Read the header of r's file (size bytes) into h, check it (prefix, CRC,
 * then every field) and decode it into r->meta. */
static int read_header(CkptReader *r, const char *path, uint64_t size, unsigned char *h, char *err) {
    size_t got;
    size_t want = size < CKPT_HEADER_BYTES ? (size_t)size : CKPT_HEADER_BYTES;
    if (pread_all(r->fd, h, want, 0, &got) < 0 || got != want) {
        int e = got != want ? EIO : errno;
        return errf(err, "%s: cannot read the header: %s", path, strerror(e));
    }
    if (check_prefix(path, h, got, size, err) < 0) return -1;
    uint32_t stored = load_u32(h + OFF_HEADER_CRC), computed = crc32c(h, OFF_HEADER_CRC);
    if (stored != computed)
        return errf(err, "%s: header CRC mismatch (stored 0x%08x, computed 0x%08x): the header is corrupt", path,
                    stored, computed);
    decode_header(h, &r->meta);
    if (check_meta(&r->meta, err) < 0) return err_prefix(err, "%s: invalid header", path);
    return 0;
}

/* Read the section table that the checked header h announces, check its
 * CRC and entries, and fill r->entry and r->n_sections; *end is where the
 * last section ends (UINT64_MAX when the lengths overflow). */
static int read_table(CkptReader *r, const char *path, const unsigned char *h, uint64_t size, uint64_t *end,
                      char *err) {
    uint32_t n = load_u32(h + OFF_N_SECTIONS);
    if (n < 1 || n > CKPT_MAX_SECTIONS)
        return errf(err, "%s: invalid header: %u sections, a checkpoint has 1 .. %d", path, n, CKPT_MAX_SECTIONS);
    size_t table_bytes = ENTRY_BYTES * n;
    unsigned char table[ENTRY_BYTES * CKPT_MAX_SECTIONS];
    if (size < CKPT_HEADER_BYTES + table_bytes)
        return errf(err,
                    "%s: truncated file: the section table needs %zu bytes at offset %d, but the file is %" PRIu64 " bytes "
                    "long (%" PRIu64 " of them present)",
                    path, table_bytes, CKPT_HEADER_BYTES, size,
                    (size - CKPT_HEADER_BYTES));
    size_t got;
    if (pread_all(r->fd, table, table_bytes, CKPT_HEADER_BYTES, &got) < 0 || got != table_bytes) {
        int e = got != table_bytes ? EIO : errno;
        return errf(err, "%s: cannot read the section table: %s", path, strerror(e));
    }
    uint32_t stored = load_u32(h + OFF_TABLE_CRC), computed = crc32c(table, table_bytes);
    if (stored != computed)
        return errf(err, "%s: section table CRC mismatch (stored 0x%08x, computed 0x%08x): the table is corrupt",
                    path, stored, computed);
    uint32_t ids[CKPT_MAX_SECTIONS];
    uint64_t lens[CKPT_MAX_SECTIONS];
    uint64_t offset = CKPT_HEADER_BYTES + table_bytes;
    for (uint32_t i = 0; i < n; i++) {
        const unsigned char *e = table + ENTRY_BYTES * i;
        CkptEntry *en = &r->entry[i];
        en->id = ids[i] = load_u32(e);
        en->crc = load_u32(e + 4);
        en->bytes = lens[i] = load_u64(e + 8);
        en->offset = offset;
        offset = offset + en->bytes < offset ? UINT64_MAX : offset + en->bytes;
    }
    r->n_sections = n;
    *end = offset;
    if (check_table(&r->meta, r->meta.format_version, ids, lens, n, err) < 0)
        return err_prefix(err, "%s: invalid section table", path);
    return 0;
}

/* The data: every section of r within the file of size bytes, nothing
 * after the last (which ends at end). */
static int check_extent(const CkptReader *r, const char *path, uint64_t size, uint64_t end, char *err) {
    for (uint32_t i = 0; i < r->n_sections; i++) {
        const CkptEntry *en = &r->entry[i];
        if (en->offset + en->bytes > size)
            return errf(err,
                        "%s: truncated file: section %s needs %" PRIu64 " bytes at offset %" PRIu64 ", but the file is %" PRIu64 " bytes "
                        "long (%" PRIu64 " of them present)",
                        path, ckptfile_section_name(en->id), en->bytes,
                        en->offset, size,
                        (size > en->offset ? size - en->offset : 0));
    }
    if (end != size)
        return errf(err,
                    "%s: %" PRIu64 " unexpected bytes after the last section (sections end at %" PRIu64 ", the file is %" PRIu64 " bytes)",
                    path, (size - end), end, size);
    return 0;
}

/* Section NET, when the file has one, into r->meta.net (its CRC checked,
 * then its fields as a writer's). */
static int read_net(CkptReader *r, char *err) {
    const CkptEntry *en = ckptfile_find(r, CKPT_SEC_NET);
    if (!en) return 0;
    unsigned char b[16 + 12 * CKPT_MAX_CONV];
    if (ckptfile_read_section(r, CKPT_SEC_NET, b, (size_t)en->bytes, err) < 0) return -1;
    CkptNet *n = &r->meta.net;
    n->in_h = load_u32(b);
    n->in_w = load_u32(b + 4);
    n->in_c = load_u32(b + 8);
    n->n_conv = load_u32(b + 12);
    if (16 + 12 * (uint64_t)n->n_conv != en->bytes)
        return errf(err, "%s: invalid section net: %u conv layers in %" PRIu64 " bytes", r->path, n->n_conv, en->bytes);
    for (uint32_t i = 0; i < n->n_conv; i++)
        for (int j = 0; j < 3; j++) n->conv[i][j] = load_u32(b + 16 + 12 * i + 4 * (uint32_t)j);
    if (n->in_c == 0 || check_planes(n, err) < 0) {
        if (n->in_c == 0) errf(err, "no input planes");
        return err_prefix(err, "%s: invalid section net", r->path);
    }
    n->planes_known = 1;
    return 0;
}

/* Section ENVID, when the file has one, into r->meta's env_id and
 * env_kwargs (its CRC checked, its lengths against its size, no NULs, the
 * header's env the id's start). */
static int read_envid(CkptReader *r, char *err) {
    const CkptEntry *en = ckptfile_find(r, CKPT_SEC_ENVID);
    if (!en) return 0;
    unsigned char b[8 + CKPT_ENVID_LEN + CKPT_KWARGS_LEN];
    if (ckptfile_read_section(r, CKPT_SEC_ENVID, b, (size_t)en->bytes, err) < 0) return -1;
    uint32_t i = load_u32(b), k = load_u32(b + 4);
    CkptMeta *m = &r->meta;
    if (i < 1 || i >= CKPT_ENVID_LEN || k >= CKPT_KWARGS_LEN || 8 + (uint64_t)i + k != en->bytes ||
        memchr(b + 8, '\0', i + k))
        return errf(err, "%s: invalid section envid: an id of %u and kwargs of %u bytes in %" PRIu64 " bytes", r->path,
                    i, k, en->bytes);
    memcpy(m->env_id, b + 8, i);
    memcpy(m->env_kwargs, b + 8 + i, k);
    if (strncmp(m->env, m->env_id, CKPT_ENV_LEN - 1) != 0)
        return errf(err, "%s: invalid section envid: id \"%s\" does not start with the header's env \"%s\"", r->path,
                    m->env_id, m->env);
    m->env_id_known = 1;
    return 0;
}

int ckptfile_open(CkptReader *r, const char *path, char *err) {
    memset(r, 0, sizeof *r);
    snprintf(r->path, sizeof r->path, "%s", path);
    /* Only a regular file, opened without blocking: a FIFO in a shard's
     * place must not hang a resume or an eval (util.h). */
    r->fd = open_regular(path, "checkpoint", err);
    if (r->fd < 0) return -1;
    r->is_open = true;
    struct stat st;
    if (fstat(r->fd, &st) < 0) {
        int e = errno;
        errf(err, "cannot stat checkpoint %s: %s", path, strerror(e));
        return open_fail(r);
    }
    uint64_t size = (uint64_t)st.st_size, end = 0;
    r->file_bytes = size;
    /* Header, section table, data extent: each trusted only once checked. */
    unsigned char h[CKPT_HEADER_BYTES];
    if (read_header(r, path, size, h, err) < 0 || read_table(r, path, h, size, &end, err) < 0 ||
        check_extent(r, path, size, end, err) < 0 || read_net(r, err) < 0 ||
        read_envid(r, err) < 0)
        return open_fail(r);
    return 0;
}

void ckptfile_close(CkptReader *r) {
    if (r->is_open) close(r->fd);
    r->is_open = false;
    r->fd = -1;
}

const CkptEntry *ckptfile_find(const CkptReader *r, uint32_t id) {
    for (uint32_t i = 0; i < r->n_sections; i++)
        if (r->entry[i].id == id) return &r->entry[i];
    return NULL;
}

static int section_crc_error(const CkptReader *r, const CkptEntry *en, uint32_t computed, char *err) {
    return errf(err, "%s: section %s CRC mismatch (stored 0x%08x, computed 0x%08x): the data is corrupt", r->path,
                ckptfile_section_name(en->id), en->crc, computed);
}

static int section_read_error(const CkptReader *r, const CkptEntry *en, int e, size_t got, size_t want, char *err) {
    if (got < want && e == 0)
        return errf(err, "%s: section %s: the file ended after %zu of %zu bytes (changed since it was opened?)",
                    r->path, ckptfile_section_name(en->id), got, want);
    return errf(err, "%s: cannot read section %s: %s", r->path, ckptfile_section_name(en->id), strerror(e));
}

int ckptfile_read_section(CkptReader *r, uint32_t id, void *dst, size_t bytes, char *err) {
    if (!r->is_open) return errf(err, "checkpoint %s is not open", r->path);
    const CkptEntry *en = ckptfile_find(r, id);
    if (!en) return errf(err, "%s: no section %s in this checkpoint", r->path, ckptfile_section_name(id));
    if (en->bytes != bytes)
        return errf(err, "%s: section %s is %" PRIu64 " bytes, the caller expects %zu", r->path,
                    ckptfile_section_name(id), en->bytes, bytes);
    size_t got;
    if (pread_all(r->fd, dst, bytes, en->offset, &got) < 0) return section_read_error(r, en, errno, got, bytes, err);
    if (got != bytes) return section_read_error(r, en, 0, got, bytes, err);
    uint32_t computed = crc32c(dst, bytes);
    if (computed != en->crc) return section_crc_error(r, en, computed, err);
    return 0;
}

int ckptfile_verify(CkptReader *r, char *err) {
    if (!r->is_open) return errf(err, "checkpoint %s is not open", r->path);
    unsigned char buf[16384];
    for (uint32_t i = 0; i < r->n_sections; i++) {
        const CkptEntry *en = &r->entry[i];
        uint32_t crc = 0;
        for (uint64_t done = 0; done < en->bytes;) {
            size_t want = en->bytes - done < sizeof buf ? (size_t)(en->bytes - done) : sizeof buf, got;
            if (pread_all(r->fd, buf, want, en->offset + done, &got) < 0)
                return section_read_error(r, en, errno, got, want, err);
            if (got != want) return section_read_error(r, en, 0, (size_t)done + got, (size_t)en->bytes, err);
            crc = crc32c_update(crc, buf, want);
            done += want;
        }
        if (crc != en->crc) return section_crc_error(r, en, crc, err);
    }
    return 0;
}

/* ---- compatibility ------------------------------------------------------ */

/* Append formatted text to the message being built in out (ERR_LEN). */
static void append(char *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void append(char *out, const char *fmt, ...) {
    size_t len = strlen(out);
    if (len + 1 >= ERR_LEN) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out + len, ERR_LEN - len, fmt, ap);
    va_end(ap);
}

/* The network n whole, on one line: "10x10x4 planes -> conv [16 3x3 stride 1]
 * -> hidden [128] -> 6 actions (132566 parameters)", or for a vector input
 * "4 inputs -> hidden [64, 64] -> 2 actions dueling (...)"; a plane
 * network of a file without section NET says "400 inputs (planes and conv
 * layers not recorded: written before format 3)". */
static void format_net(const CkptNet *n, bool planes_unknown, char *buf, size_t cap) {
    size_t len = 0;
#define PUT(...) (len += len < cap ? (size_t)snprintf(buf + len, cap - len, __VA_ARGS__) : 0)
    if (n->in_c > 0) {
        PUT("%ux%ux%u planes -> conv [", n->in_h, n->in_w, n->in_c);
        for (uint32_t i = 0; i < n->n_conv && i < CKPT_MAX_CONV; i++)
            PUT("%s%u %ux%u stride %u", i ? ", " : "", n->conv[i][0], n->conv[i][1], n->conv[i][1], n->conv[i][2]);
        PUT("]");
    } else {
        PUT("%u inputs%s", n->obs_dim,
            planes_unknown ? " (planes and conv layers not recorded: written before format 3)" : "");
    }
    PUT(" -> hidden [");
    for (uint32_t i = 0; i < n->n_hidden && i < CKPT_MAX_HIDDEN; i++) PUT("%s%u", i ? ", " : "", n->hidden[i]);
    PUT("] -> %u actions%s (%" PRIu64 " parameters)", n->num_actions, n->dueling ? " dueling" : "", n->n_params);
#undef PUT
}

/* Whether two networks differ: every header field, and the planes and conv
 * layers when found recorded them or want has none. */
static bool net_differs(const CkptNet *f, const CkptNet *w) {
    if (f->obs_dim != w->obs_dim || f->num_actions != w->num_actions || f->n_hidden != w->n_hidden ||
        f->dueling != w->dueling || f->n_params != w->n_params)
        return true;
    for (uint32_t i = 0; i < f->n_hidden && i < CKPT_MAX_HIDDEN; i++)
        if (f->hidden[i] != w->hidden[i]) return true;
    if (!f->planes_known && w->in_c > 0) return false; /* an older plane network: the header is all there is */
    if (f->in_h != w->in_h || f->in_w != w->in_w || f->in_c != w->in_c || f->n_conv != w->n_conv) return true;
    for (uint32_t i = 0; i < f->n_conv && i < CKPT_MAX_CONV; i++)
        for (int j = 0; j < 3; j++)
            if (f->conv[i][j] != w->conv[i][j]) return true;
    return false;
}

/* The env of m: its whole id when it has one (ENVID), else the header's. */
static const char *env_of(const CkptMeta *m) { return m->env_id[0] ? m->env_id : m->env; }

/* Whether two envs differ: by their whole ids and kwargs when both have
 * them (ENVID); a file without ENVID (a registered env, or one written
 * before format 4) by its header's env, all it has. */
static bool env_differs(const CkptMeta *f, const CkptMeta *w) {
    if (f->env_id[0] && w->env_id[0]) return strcmp(f->env_id, w->env_id) != 0 || strcmp(f->env_kwargs, w->env_kwargs) != 0;
    if (!f->env_id[0]) return strncmp(f->env, w->env, CKPT_ENV_LEN) != 0;
    return strcmp(env_of(f), env_of(w)) != 0;
}

/* "\"ID\"", or for a Python env "\"ID\" with env.kwargs KWARGS", into buf
 * (the kwargs cut to fit one line). */
static void format_env(const CkptMeta *m, char *buf, size_t cap) {
    if (m->env_id[0]) snprintf(buf, cap, "\"%s\" with env.kwargs %.40s%s", m->env_id, m->env_kwargs,
                               strlen(m->env_kwargs) > 40 ? "..." : "");
    else snprintf(buf, cap, "\"%s\"", m->env);
}

int ckptfile_check_compatible(const CkptMeta *found, const CkptMeta *want, char *err) {
    char msg[ERR_LEN] = "";
    const CkptNet *f = &found->net, *w = &want->net;
    int parts = 0;
    if (net_differs(f, w)) {
        char a[ERR_LEN / 2 - 64], b[ERR_LEN / 2 - 64];
        format_net(f, !f->planes_known && w->in_c > 0, a, sizeof a);
        format_net(w, false, b, sizeof b);
        append(msg, "network differs: checkpoint has %s, expected %s", a, b);
        parts++;
    }
    if (env_differs(found, want)) {
        char a[CKPT_ENVID_LEN + 80], b[CKPT_ENVID_LEN + 80];
        format_env(found, a, sizeof a);
        format_env(want, b, sizeof b);
        append(msg, "%senv differs: checkpoint has %s, expected %s", parts ? "; " : "", a, b);
        parts++;
    }
    if (found->slice_offset != want->slice_offset || found->slice_count != want->slice_count) {
        append(msg, "%sslice differs: checkpoint holds parameters [%" PRIu64 ", %" PRIu64 "), expected [%" PRIu64
               ", %" PRIu64 ")", parts ? "; " : "", found->slice_offset, found->slice_offset + found->slice_count,
               want->slice_offset, want->slice_offset + want->slice_count);
        parts++;
    }
    if (parts == 0) return 0;
    return errf(err, "%s", msg);
}
