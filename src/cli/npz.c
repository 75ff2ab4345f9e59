/* SPDX-License-Identifier: MIT */
/* npz.c: see npz.h.
 *
 * File layout (all zip integers little-endian, whatever the host):
 *
 *   local header 1 | member 1 | local header 2 | member 2 | ... |
 *   central directory (one entry per member) | end of central directory
 *
 * A member is one .npy v1.0 file:
 *
 *   "\x93NUMPY" 0x01 0x00 | u16 LE header length | header | array bytes
 *
 * where the header is the Python dict literal
 * "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }" padded
 * with blanks and a final '\n' so that the array bytes start at a multiple
 * of 64 (numpy's own alignment). A member's size and CRC are known before
 * it is written (header and data are both in memory), so local headers
 * carry them and no data descriptor is needed.
 *
 * Why the export transposes: gorila stores a layer's weight (in, out) for
 * its y = x W + b (agents/qnet.h); PyTorch's nn.Linear.weight is (out, in)
 * for y = x W^T + b, so the file holds W^T and loads into nn.Linear as it is.
 */
#include "npz.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>


static const uint32_t crc_table[256] = {
    0x00000000u, 0x77073096u, 0xee0e612cu, 0x990951bau, 0x076dc419u, 0x706af48fu,
    0xe963a535u, 0x9e6495a3u, 0x0edb8832u, 0x79dcb8a4u, 0xe0d5e91eu, 0x97d2d988u,
    0x09b64c2bu, 0x7eb17cbdu, 0xe7b82d07u, 0x90bf1d91u, 0x1db71064u, 0x6ab020f2u,
    0xf3b97148u, 0x84be41deu, 0x1adad47du, 0x6ddde4ebu, 0xf4d4b551u, 0x83d385c7u,
    0x136c9856u, 0x646ba8c0u, 0xfd62f97au, 0x8a65c9ecu, 0x14015c4fu, 0x63066cd9u,
    0xfa0f3d63u, 0x8d080df5u, 0x3b6e20c8u, 0x4c69105eu, 0xd56041e4u, 0xa2677172u,
    0x3c03e4d1u, 0x4b04d447u, 0xd20d85fdu, 0xa50ab56bu, 0x35b5a8fau, 0x42b2986cu,
    0xdbbbc9d6u, 0xacbcf940u, 0x32d86ce3u, 0x45df5c75u, 0xdcd60dcfu, 0xabd13d59u,
    0x26d930acu, 0x51de003au, 0xc8d75180u, 0xbfd06116u, 0x21b4f4b5u, 0x56b3c423u,
    0xcfba9599u, 0xb8bda50fu, 0x2802b89eu, 0x5f058808u, 0xc60cd9b2u, 0xb10be924u,
    0x2f6f7c87u, 0x58684c11u, 0xc1611dabu, 0xb6662d3du, 0x76dc4190u, 0x01db7106u,
    0x98d220bcu, 0xefd5102au, 0x71b18589u, 0x06b6b51fu, 0x9fbfe4a5u, 0xe8b8d433u,
    0x7807c9a2u, 0x0f00f934u, 0x9609a88eu, 0xe10e9818u, 0x7f6a0dbbu, 0x086d3d2du,
    0x91646c97u, 0xe6635c01u, 0x6b6b51f4u, 0x1c6c6162u, 0x856530d8u, 0xf262004eu,
    0x6c0695edu, 0x1b01a57bu, 0x8208f4c1u, 0xf50fc457u, 0x65b0d9c6u, 0x12b7e950u,
    0x8bbeb8eau, 0xfcb9887cu, 0x62dd1ddfu, 0x15da2d49u, 0x8cd37cf3u, 0xfbd44c65u,
    0x4db26158u, 0x3ab551ceu, 0xa3bc0074u, 0xd4bb30e2u, 0x4adfa541u, 0x3dd895d7u,
    0xa4d1c46du, 0xd3d6f4fbu, 0x4369e96au, 0x346ed9fcu, 0xad678846u, 0xda60b8d0u,
    0x44042d73u, 0x33031de5u, 0xaa0a4c5fu, 0xdd0d7cc9u, 0x5005713cu, 0x270241aau,
    0xbe0b1010u, 0xc90c2086u, 0x5768b525u, 0x206f85b3u, 0xb966d409u, 0xce61e49fu,
    0x5edef90eu, 0x29d9c998u, 0xb0d09822u, 0xc7d7a8b4u, 0x59b33d17u, 0x2eb40d81u,
    0xb7bd5c3bu, 0xc0ba6cadu, 0xedb88320u, 0x9abfb3b6u, 0x03b6e20cu, 0x74b1d29au,
    0xead54739u, 0x9dd277afu, 0x04db2615u, 0x73dc1683u, 0xe3630b12u, 0x94643b84u,
    0x0d6d6a3eu, 0x7a6a5aa8u, 0xe40ecf0bu, 0x9309ff9du, 0x0a00ae27u, 0x7d079eb1u,
    0xf00f9344u, 0x8708a3d2u, 0x1e01f268u, 0x6906c2feu, 0xf762575du, 0x806567cbu,
    0x196c3671u, 0x6e6b06e7u, 0xfed41b76u, 0x89d32be0u, 0x10da7a5au, 0x67dd4accu,
    0xf9b9df6fu, 0x8ebeeff9u, 0x17b7be43u, 0x60b08ed5u, 0xd6d6a3e8u, 0xa1d1937eu,
    0x38d8c2c4u, 0x4fdff252u, 0xd1bb67f1u, 0xa6bc5767u, 0x3fb506ddu, 0x48b2364bu,
    0xd80d2bdau, 0xaf0a1b4cu, 0x36034af6u, 0x41047a60u, 0xdf60efc3u, 0xa867df55u,
    0x316e8eefu, 0x4669be79u, 0xcb61b38cu, 0xbc66831au, 0x256fd2a0u, 0x5268e236u,
    0xcc0c7795u, 0xbb0b4703u, 0x220216b9u, 0x5505262fu, 0xc5ba3bbeu, 0xb2bd0b28u,
    0x2bb45a92u, 0x5cb36a04u, 0xc2d7ffa7u, 0xb5d0cf31u, 0x2cd99e8bu, 0x5bdeae1du,
    0x9b64c2b0u, 0xec63f226u, 0x756aa39cu, 0x026d930au, 0x9c0906a9u, 0xeb0e363fu,
    0x72076785u, 0x05005713u, 0x95bf4a82u, 0xe2b87a14u, 0x7bb12baeu, 0x0cb61b38u,
    0x92d28e9bu, 0xe5d5be0du, 0x7cdcefb7u, 0x0bdbdf21u, 0x86d3d2d4u, 0xf1d4e242u,
    0x68ddb3f8u, 0x1fda836eu, 0x81be16cdu, 0xf6b9265bu, 0x6fb077e1u, 0x18b74777u,
    0x88085ae6u, 0xff0f6a70u, 0x66063bcau, 0x11010b5cu, 0x8f659effu, 0xf862ae69u,
    0x616bffd3u, 0x166ccf45u, 0xa00ae278u, 0xd70dd2eeu, 0x4e048354u, 0x3903b3c2u,
    0xa7672661u, 0xd06016f7u, 0x4969474du, 0x3e6e77dbu, 0xaed16a4au, 0xd9d65adcu,
    0x40df0b66u, 0x37d83bf0u, 0xa9bcae53u, 0xdebb9ec5u, 0x47b2cf7fu, 0x30b5ffe9u,
    0xbdbdf21cu, 0xcabac28au, 0x53b39330u, 0x24b4a3a6u, 0xbad03605u, 0xcdd70693u,
    0x54de5729u, 0x23d967bfu, 0xb3667a2eu, 0xc4614ab8u, 0x5d681b02u, 0x2a6f2b94u,
    0xb40bbe37u, 0xc30c8ea1u, 0x5a05df1bu, 0x2d02ef8du,
};

uint32_t npz_crc32_update(uint32_t crc, const void *data, size_t bytes) {
    const unsigned char *p = data;
    crc = ~crc;
    for (size_t i = 0; i < bytes; i++) crc = crc_table[(crc ^ p[i]) & 0xffu] ^ (crc >> 8);
    return ~crc;
}

/* ------------------------------------------------------------ export file */

/* What a non-regular file is, for the refusal. */
static const char *file_kind(mode_t mode) {
    if (S_ISDIR(mode)) return "a directory";
    if (S_ISCHR(mode)) return "a character device";
    if (S_ISBLK(mode)) return "a block device";
    if (S_ISFIFO(mode)) return "a FIFO";
    if (S_ISSOCK(mode)) return "a socket";
    if (S_ISLNK(mode)) return "a symbolic link";
    return "not a regular file";
}

/* Whether the target may be written: missing (*exists false) or a regular
 * file. lstat, so a symbolic link is seen as one and never followed. */
static int check_target(const char *path, bool *exists, char *err) {
    struct stat st;
    *exists = false;
    if (lstat(path, &st) != 0) {
        if (errno == ENOENT) return 0;
        return errf(err, "cannot write %s: %s", path, strerror(errno));
    }
    if (S_ISLNK(st.st_mode))
        return errf(err, "%s is a symbolic link: refused, not followed (give the path of the file itself)", path);
    if (!S_ISREG(st.st_mode))
        return errf(err, "%s is %s, not a regular file: refused (an export creates a file or replaces a regular one)",
                    path, file_kind(st.st_mode));
    *exists = true;
    return 0;
}

int npz_out_open(NpzOut *o, const char *path, char *err) {
    memset(o, 0, sizeof *o);
    size_t len = strlen(path);
    if (len == 0) return errf(err, "the export path is empty");
    if (len >= sizeof o->path) return errf(err, "export path is longer than %d bytes", PATH_LEN - 1);
    if (path[len - 1] == '/') return errf(err, "%s names a directory: give a file name", path);
    if (check_target(path, &o->replace, err)) return -1;
    snprintf(o->path, sizeof o->path, "%s", path);
    /* The temporary goes beside the target (same file system, so the
     * rename is atomic), hidden, and named after the pid; O_EXCL with a
     * counter steps over a leftover of an earlier process of the same pid. */
    const char *slash = strrchr(path, '/');
    int dir_len = slash ? (int)(slash - path + 1) : 0;
    const char *base = slash ? slash + 1 : path;
    for (int k = 0; k < 100; k++) {
        int n = snprintf(o->tmp, sizeof o->tmp, "%.*s.%s.tmp-%ld-%d", dir_len, path, base, (long)getpid(), k);
        if (n < 0 || (size_t)n >= sizeof o->tmp) return errf(err, "export path %s is too long for its temporary", path);
        int fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
        if (fd < 0 && errno == EEXIST) continue;
        if (fd < 0) return errf(err, "cannot write %s: creating %s: %s", path, o->tmp, strerror(errno));
        o->f = fdopen(fd, "wb");
        if (!o->f) {
            int e = errno;
            close(fd);
            unlink(o->tmp);
            return errf(err, "cannot write %s: %s", path, strerror(e));
        }
        return 0;
    }
    return errf(err, "cannot write %s: 100 temporaries %.*s.%s.tmp-%ld-* exist already", path, dir_len, path, base,
                (long)getpid());
}

void npz_out_discard(NpzOut *o) {
    if (o->f) {
        fclose(o->f);
        unlink(o->tmp);
    }
    o->f = NULL;
}

int npz_out_commit(NpzOut *o, char *err) {
    if (!o->f) return errf(err, "export %s: the file is not open", o->path);
    FILE *f = o->f;
    o->f = NULL;
    errno = 0;
    bool bad = fflush(f) != 0 || ferror(f) || fsync(fileno(f)) != 0;
    int e = errno;
    if (fclose(f) != 0 && !bad) {
        bad = true;
        e = errno;
    }
    if (bad) {
        unlink(o->tmp);
        return errf(err, "cannot write %s: %s", o->path, strerror(e ? e : EIO));
    }
    /* Again just before the rename: the target may have been replaced by
     * something that is not a regular file since npz_out_open. */
    bool exists;
    if (check_target(o->path, &exists, err)) {
        unlink(o->tmp);
        return -1;
    }
    if (rename(o->tmp, o->path) != 0) {
        e = errno;
        unlink(o->tmp);
        return errf(err, "cannot rename %s to %s: %s", o->tmp, o->path, strerror(e));
    }
    o->replace = exists;
    return 0;
}

/* ------------------------------------------------------------ zip writer */

enum {
    ZIP_LOCAL_SIG = 0x04034b50,
    ZIP_CENTRAL_SIG = 0x02014b50,
    ZIP_END_SIG = 0x06054b50,
    ZIP_VERSION = 20,       /* 2.0: what numpy's zipfile writes for stored members */
    ZIP_DOS_DATE = 0x0021,  /* 1980-01-01: (year - 1980) << 9 | month << 5 | day */
    ZIP_DOS_TIME = 0,       /* 00:00:00 */
    NPY_ALIGN = 64,
};

static unsigned char *put16(unsigned char *p, unsigned v) {
    p[0] = (unsigned char)(v & 0xff);
    p[1] = (unsigned char)((v >> 8) & 0xff);
    return p + 2;
}

static unsigned char *put32(unsigned char *p, uint32_t v) {
    for (int i = 0; i < 4; i++) p[i] = (unsigned char)((v >> (8 * i)) & 0xff);
    return p + 4;
}

static bool host_little_endian(void) {
    const uint16_t one = 1;
    unsigned char b;
    memcpy(&b, &one, 1);
    return b == 1;
}

/* Write bytes; on failure fill err. */
static int put(NpzWriter *w, const void *p, size_t n, char *err) {
    errno = 0;
    if (n && fwrite(p, 1, n, w->out.f) != n)
        return errf(err, "cannot write %s: %s", w->out.path, strerror(errno ? errno : EIO));
    w->off += n;
    return 0;
}

int npz_init(NpzWriter *w, const char *path, char *err) {
    memset(w, 0, sizeof *w);
    return npz_out_open(&w->out, path, err);
}

void npz_free(NpzWriter *w) {
    npz_out_discard(&w->out);
    w->n = 0;
    w->off = 0;
}

/* The .npy header for dtype and shape: magic, version, length, dict,
 * padding. Writes into hdr (room for cap bytes); returns its length, or 0
 * when it does not fit. */
static size_t npy_header(unsigned char *hdr, size_t cap, NpzDtype dtype, size_t str_len, int ndim,
                         const size_t *shape) {
    char order = host_little_endian() ? '<' : '>';
    char descr[32];
    switch (dtype) {
    case NPZ_F32: snprintf(descr, sizeof descr, "%cf4", order); break;
    case NPZ_F64: snprintf(descr, sizeof descr, "%cf8", order); break;
    case NPZ_I64: snprintf(descr, sizeof descr, "%ci8", order); break;
    case NPZ_BOOL: snprintf(descr, sizeof descr, "|b1"); break;
    case NPZ_STR: snprintf(descr, sizeof descr, "%cU%zu", order, str_len); break;
    }
    char shp[96];
    if (ndim == 0)
        snprintf(shp, sizeof shp, "()");
    else if (ndim == 1)
        snprintf(shp, sizeof shp, "(%zu,)", shape[0]);
    else {
        size_t n = (size_t)snprintf(shp, sizeof shp, "(%zu", shape[0]);
        for (int d = 1; d < ndim && n < sizeof shp; d++) n += (size_t)snprintf(shp + n, sizeof shp - n, ", %zu", shape[d]);
        if (n + 2 > sizeof shp) return 0;
        snprintf(shp + n, sizeof shp - n, ")");
    }
    char dict[192];
    int len = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr, shp);
    if (len < 0 || (size_t)len >= sizeof dict) return 0;
    size_t total = round_up(10 + (size_t)len + 1, NPY_ALIGN); /* magic 6, version 2, length 2, dict, '\n' */
    if (total > cap) return 0;
    memcpy(hdr, "\x93NUMPY\x01\x00", 8);
    put16(hdr + 8, (unsigned)(total - 10));
    memcpy(hdr + 10, dict, (size_t)len);
    memset(hdr + 10 + len, ' ', total - 10 - (size_t)len - 1);
    hdr[total - 1] = '\n';
    return total;
}

int npz_add(NpzWriter *w, const char *name, NpzDtype dtype, int ndim, const size_t *shape, const void *data,
            char *err) {
    if (!w->out.f) return errf(err, "npz: %s: the file is not open", name);
    if (w->n == NPZ_MAX_MEMBERS) return errf(err, "npz: more than %d arrays", NPZ_MAX_MEMBERS);
    if (ndim < 0 || ndim > NPZ_MAX_DIMS || (dtype == NPZ_STR && ndim != 0))
        return errf(err, "npz: %s: %d dimensions not supported for this type", name, ndim);
    NpzMember *m = &w->m[w->n];
    int nl = snprintf(m->name, sizeof m->name, "%s.npy", name);
    if (nl < 0 || (size_t)nl >= sizeof m->name) return errf(err, "npz: array name \"%s\" is too long", name);
    for (int i = 0; i < w->n; i++)
        if (!strcmp(w->m[i].name, m->name)) return errf(err, "npz: two arrays named \"%s\"", name);

    /* The array bytes: data itself, or for a string its UTF-32 code units. */
    uint32_t text[NPZ_STR_MAX];
    size_t str_len = 0, data_bytes;
    const void *bytes = data;
    if (dtype == NPZ_STR) {
        const unsigned char *s = data;
        str_len = strlen(data);
        if (str_len > NPZ_STR_MAX) return errf(err, "npz: %s: string longer than %d characters", name, NPZ_STR_MAX);
        for (size_t i = 0; i < str_len; i++) {
            if (s[i] > 0x7f) return errf(err, "npz: %s: only ASCII text is supported", name);
            text[i] = s[i];
        }
        if (str_len == 0) text[str_len++] = 0; /* numpy's empty string is '<U1' holding one NUL */
        data_bytes = str_len * sizeof text[0];
        bytes = text;
    } else {
        size_t count = 1, elem = dtype == NPZ_F32 ? 4 : dtype == NPZ_BOOL ? 1 : 8;
        for (int d = 0; d < ndim; d++) count *= shape[d];
        data_bytes = count * elem;
    }
    unsigned char hdr[256];
    size_t hdr_bytes = npy_header(hdr, sizeof hdr, dtype, str_len, ndim, shape);
    if (!hdr_bytes) return errf(err, "npz: %s: .npy header does not fit", name);
    uint64_t member = (uint64_t)hdr_bytes + data_bytes;
    uint64_t end = w->off + 30 + (uint64_t)nl + member;
    if (end > 0xffffffffu - 1024u * 1024u) return errf(err, "npz: %s: the file would exceed 4 GiB (no zip64)", name);

    uint32_t crc = npz_crc32_update(npz_crc32_update(0, hdr, hdr_bytes), bytes, data_bytes);
    m->crc = crc;
    m->bytes = (uint32_t)member;
    m->offset = (uint32_t)w->off;
    unsigned char lh[30], *p = lh;
    p = put32(p, ZIP_LOCAL_SIG);
    p = put16(p, ZIP_VERSION);
    p = put16(p, 0); /* flags */
    p = put16(p, 0); /* method: stored */
    p = put16(p, ZIP_DOS_TIME);
    p = put16(p, ZIP_DOS_DATE);
    p = put32(p, crc);
    p = put32(p, m->bytes); /* compressed size */
    p = put32(p, m->bytes); /* uncompressed size */
    p = put16(p, (unsigned)nl);
    put16(p, 0); /* extra field length */
    if (put(w, lh, sizeof lh, err) || put(w, m->name, (size_t)nl, err) || put(w, hdr, hdr_bytes, err) ||
        put(w, bytes, data_bytes, err))
        return -1;
    w->n++;
    return 0;
}

int npz_finish(NpzWriter *w, char *err) {
    if (!w->out.f) return errf(err, "npz: the file is not open");
    uint64_t cd_start = w->off;
    for (int i = 0; i < w->n; i++) {
        const NpzMember *m = &w->m[i];
        size_t nl = strlen(m->name);
        unsigned char ch[46], *p = ch;
        p = put32(p, ZIP_CENTRAL_SIG);
        p = put16(p, ZIP_VERSION); /* made by: MS-DOS attributes, version 2.0 */
        p = put16(p, ZIP_VERSION); /* needed to extract */
        p = put16(p, 0);
        p = put16(p, 0);
        p = put16(p, ZIP_DOS_TIME);
        p = put16(p, ZIP_DOS_DATE);
        p = put32(p, m->crc);
        p = put32(p, m->bytes);
        p = put32(p, m->bytes);
        p = put16(p, (unsigned)nl);
        p = put16(p, 0); /* extra */
        p = put16(p, 0); /* comment */
        p = put16(p, 0); /* disk number */
        p = put16(p, 0); /* internal attributes */
        p = put32(p, 0); /* external attributes */
        put32(p, m->offset);
        if (put(w, ch, sizeof ch, err) || put(w, m->name, nl, err)) goto fail;
    }
    uint64_t cd_bytes = w->off - cd_start;
    if (w->off > 0xffffffffu) {
        errf(err, "npz: %s would exceed 4 GiB (no zip64)", w->out.path);
        goto fail;
    }
    unsigned char eocd[22], *p = eocd;
    p = put32(p, ZIP_END_SIG);
    p = put16(p, 0); /* this disk */
    p = put16(p, 0); /* disk of the central directory */
    p = put16(p, (unsigned)w->n);
    p = put16(p, (unsigned)w->n);
    p = put32(p, (uint32_t)cd_bytes);
    p = put32(p, (uint32_t)cd_start);
    put16(p, 0); /* comment length */
    if (put(w, eocd, sizeof eocd, err)) goto fail;
    return npz_out_commit(&w->out, err);
fail:
    npz_free(w);
    return -1;
}

/* ------------------------------------------------------- network export */

bool npz_wants_raw(const char *path) {
    size_t n = strlen(path);
    return n >= 4 && !strcmp(path + n - 4, ".bin");
}

/* Append W^T (out, in) of the (in, out) matrix W, columns first..first+out
 * of a row of width cols (the dueling head splits one matrix in two). */
static int add_weight(NpzWriter *w, const char *name, const float *W, size_t in, size_t cols, size_t first,
                      size_t out, float *tmp, char *err) {
    for (size_t o = 0; o < out; o++)
        for (size_t i = 0; i < in; i++) tmp[o * in + i] = W[i * cols + first + o];
    size_t shape[2] = {out, in};
    return npz_add(w, name, NPZ_F32, 2, shape, tmp, err);
}

static int add_vector(NpzWriter *w, const char *name, NpzDtype dtype, size_t n, const void *data, char *err) {
    size_t shape[1] = {n};
    return npz_add(w, name, dtype, 1, shape, data, err);
}

/* A conv network's metadata: input_shape (H, W, C) and conv_layers, one
 * row (filters, kernel, stride) per layer. */
static int add_conv_meta(NpzWriter *w, const QNetSpec *s, char *err) {
    int64_t planes[3] = {s->in_h, s->in_w, s->in_c}, layers[QNET_MAX_CONV][3];
    for (int i = 0; i < s->n_conv; i++) {
        layers[i][0] = s->conv[i].filters;
        layers[i][1] = s->conv[i].kernel;
        layers[i][2] = s->conv[i].stride;
    }
    size_t shape[2] = {(size_t)s->n_conv, 3};
    return add_vector(w, "input_shape", NPZ_I64, 3, planes, err) ||
                   npz_add(w, "conv_layers", NPZ_I64, 2, shape, layers, err)
               ? -1
               : 0;
}

/* The metadata arrays. */
static int add_meta(NpzWriter *w, const Config *cfg, const QNet *net, char *err) {
    const QNetSpec *s = &net->spec;
    int64_t version = net->n_conv ? NPZ_FORMAT_VERSION_CONV : NPZ_FORMAT_VERSION, obs = s->obs_dim, actions = s->n_actions, hidden[QNET_MAX_HIDDEN];
    for (int l = 0; l < s->n_hidden; l++) hidden[l] = s->hidden[l];
    unsigned char dueling = s->dueling ? 1 : 0;
    if (npz_add(w, "format_version", NPZ_I64, 0, NULL, &version, err) ||
        npz_add(w, "env", NPZ_STR, 0, NULL, cfg->env.name, err) ||
        npz_add(w, "obs_dim", NPZ_I64, 0, NULL, &obs, err) ||
        npz_add(w, "num_actions", NPZ_I64, 0, NULL, &actions, err) ||
        add_vector(w, "hidden", NPZ_I64, (size_t)s->n_hidden, hidden, err) ||
        npz_add(w, "activation", NPZ_STR, 0, NULL, "relu", err) ||
        npz_add(w, "dueling", NPZ_BOOL, 0, NULL, &dueling, err))
        return -1;
    if (net->n_conv && add_conv_meta(w, s, err)) return -1;
    if (!strcmp(cfg->env.name, "Pendulum-v1")) {
        if (cfg->env.n_torques != s->n_actions)
            return errf(err, "npz: %d torques for %d actions", cfg->env.n_torques, s->n_actions);
        if (add_vector(w, "torques", NPZ_F64, (size_t)cfg->env.n_torques, cfg->env.torques, err)) return -1;
    }
    return 0;
}

/* The conv layers: weights (F, C, K, K) and biases (F) as they are in the
 * parameters, PyTorch's nn.Conv2d layout already. */
static int add_convs(NpzWriter *w, const QNet *net, const float *params, char *err) {
    char name[NPZ_NAME_LEN];
    for (int i = 0; i < net->n_conv; i++) {
        const ConvLayer *L = &net->conv[i];
        size_t shape[4] = {(size_t)L->out_c, (size_t)L->in_c, (size_t)L->k, (size_t)L->k};
        snprintf(name, sizeof name, "conv.%d.weight", i);
        if (npz_add(w, name, NPZ_F32, 4, shape, params + L->w_off, err)) return -1;
        snprintf(name, sizeof name, "conv.%d.bias", i);
        if (add_vector(w, name, NPZ_F32, (size_t)L->out_c, params + L->b_off, err)) return -1;
    }
    return 0;
}

/* The layers, in forward order. */
static int add_layers(NpzWriter *w, const QNet *net, const float *params, float *tmp, char *err) {
    const QNetSpec *s = &net->spec;
    char name[NPZ_NAME_LEN];
    if (add_convs(w, net, params, err)) return -1;
    for (int l = 0; l < net->n_linear; l++) {
        const QNetLinear *L = &net->lin[l];
        size_t in = (size_t)L->in, out = (size_t)L->out;
        const float *W = params + L->w_off, *b = params + L->b_off;
        if (l < s->n_hidden || !s->dueling) {
            snprintf(name, sizeof name, "layers.%d.weight", l);
            if (add_weight(w, name, W, in, out, 0, out, tmp, err)) return -1;
            snprintf(name, sizeof name, "layers.%d.bias", l);
            if (add_vector(w, name, NPZ_F32, out, b, err)) return -1;
            continue;
        }
        /* Dueling head (in, A + 1): columns 0 .. A-1 advantage, column A value. */
        size_t A = (size_t)s->n_actions;
        if (add_weight(w, "advantage.weight", W, in, out, 0, A, tmp, err) ||
            add_vector(w, "advantage.bias", NPZ_F32, A, b, err) ||
            add_weight(w, "value.weight", W, in, out, A, 1, tmp, err) ||
            add_vector(w, "value.bias", NPZ_F32, 1, b + A, err))
            return -1;
    }
    return 0;
}

int npz_export_raw(const char *path, const float *p, size_t n, NpzWritten *done, char *err) {
    NpzOut o;
    if (npz_out_open(&o, path, err)) return -1;
    errno = 0;
    if (fwrite(p, sizeof *p, n, o.f) != n) {
        errf(err, "cannot write %s: %s", path, strerror(errno ? errno : EIO));
        npz_out_discard(&o);
        return -1;
    }
    if (npz_out_commit(&o, err)) return -1;
    done->replaced = o.replace;
    done->bytes = (uint64_t)n * sizeof *p;
    return 0;
}

int npz_export_qnet(const char *path, const Config *cfg, const QNet *net, const float *params, NpzWritten *done,
                    char *err) {
    size_t widest = 1;
    for (int l = 0; l < net->n_linear; l++) {
        size_t n = (size_t)net->lin[l].in * (size_t)net->lin[l].out;
        if (n > widest) widest = n;
    }
    NpzWriter w;
    if (npz_init(&w, path, err)) return -1;
    float *tmp = xmalloc(widest * sizeof *tmp);
    int rc = add_meta(&w, cfg, net, err) || add_layers(&w, net, params, tmp, err) || npz_finish(&w, err) ? -1 : 0;
    free(tmp);
    done->replaced = w.out.replace;
    done->bytes = w.off; /* after npz_finish: the end of the central directory, the file's size */
    npz_free(&w); /* removes the temporary after an error; nothing after npz_finish */
    return rc;
}

/* ------------------------------------------------------- greedy actions */

/* Read one line of in into buf (cap = NPZ_ACTIONS_MAX_LINE + 1 bytes),
 * without its newline, NUL-terminated, its length in *len. Returns 1 for a
 * line (the last may lack its newline), 0 at the end of the input, -1 when
 * the line goes on past NPZ_ACTIONS_MAX_LINE bytes, -2 on a read error.
 * Never more than cap bytes in memory, whatever the input. */
static int read_line(FILE *in, char *buf, size_t *len) {
    size_t n = 0;
    int c;
    while ((c = getc(in)) != EOF && c != '\n') {
        if (n == NPZ_ACTIONS_MAX_LINE) return -1;
        buf[n++] = (char)c;
    }
    buf[n] = '\0';
    *len = n;
    if (c == EOF && ferror(in)) return -2;
    return c == EOF && n == 0 ? 0 : 1;
}

int npz_print_actions(const QNet *net, const float *params, FILE *in, FILE *out, char *err) {
    const int O = net->spec.obs_dim, A = net->spec.n_actions;
    float *obs = xmalloc((size_t)O * sizeof *obs), *q = xmalloc((size_t)A * sizeof *q);
    char *line = xmalloc(NPZ_ACTIONS_MAX_LINE + 1);
    QNetWork work;
    qnet_work_init(&work, net, 1);
    long lineno = 0, total = 0;
    int rc = 0;
    for (;;) {
        size_t len;
        errno = 0;
        int got = read_line(in, line, &len);
        if (got == 0) break;
        lineno++;
        if (got == -2) {
            rc = errf(err, "reading observations (line %ld): %s", lineno, strerror(errno ? errno : EIO));
            break;
        }
        if (got == -1) {
            rc = errf(err, "line %ld is longer than %d bytes, the limit of a line (an observation of %d values "
                      "needs far less)", lineno, NPZ_ACTIONS_MAX_LINE, O);
            break;
        }
        total += (long)len + 1;
        if (total > NPZ_ACTIONS_MAX_BYTES) {
            rc = errf(err, "line %ld: more than %ld MiB of input, the limit (split the observations into several "
                      "files)", lineno, NPZ_ACTIONS_MAX_BYTES / (1024 * 1024));
            break;
        }
        if (memchr(line, '\0', len)) {
            rc = errf(err, "line %ld: a NUL byte (not a text file of numbers)", lineno);
            break;
        }
        char *p = line + strspn(line, " \t,\r");
        if (*p == '#' || *p == '\0') continue;
        int n = 0;
        char *save = NULL;
        for (char *t = strtok_r(p, " \t,\r", &save); t; t = strtok_r(NULL, " \t,\r", &save)) {
            double v;
            if (n == O) {
                rc = errf(err, "line %ld: expected %d values, got more", lineno, O);
                break;
            }
            if (parse_double(t, &v, err)) {
                rc = err_prefix(err, "line %ld: value %d", lineno, n + 1);
                break;
            }
            obs[n++] = (float)v;
        }
        if (rc) break;
        if (n != O) {
            rc = errf(err, "line %ld: expected %d values, got %d", lineno, O, n);
            break;
        }
        int32_t act;
        qnet_forward(net, params, obs, 1, q, &work);
        qnet_argmax(q, 1, A, &act);
        if (fprintf(out, "%d\n", (int)act) < 0) {
            rc = errf(err, "writing actions: %s", strerror(errno ? errno : EIO));
            break;
        }
    }
    errno = 0;
    if ((fflush(out) != 0 || ferror(out)) && !rc) rc = errf(err, "writing actions: %s", strerror(errno ? errno : EIO));
    free(line);
    qnet_work_free(&work);
    free(obs);
    free(q);
    return rc;
}
