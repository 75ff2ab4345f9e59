/* SPDX-License-Identifier: MIT */
/* npz.h: export of a Q-network as a NumPy .npz file, and gorila's own
 * greedy actions that an exported file must reproduce (src/cli; no MPI).
 *
 * An .npz is a zip archive whose members are .npy files, one array each;
 * np.load(path) returns them by member name without the ".npy". This
 * writer produces the plainest form numpy reads: every member stored
 * uncompressed (ZIP_STORED, method 0), .npy format version 1.0, no zip64
 * (the whole file stays below 4 GiB or the export fails), a fixed
 * modification time (1980-01-01 00:00), so the same parameters always give
 * the same bytes. Each member carries the CRC-32 (zlib's polynomial,
 * npz_crc32_update) of its bytes in both zip headers. Numbers are written
 * in this machine's byte order and the .npy descr says which ('<' or '>').
 *
 * What npz_export_qnet writes, and how to load it, is documented in
 * docs/CHECKPOINT.md, "Exporting a network"; scripts/npz_policy.py is the
 * reference reader.
 */
#ifndef GORILA_NPZ_H
#define GORILA_NPZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "config.h"
#include "qnet.h"
#include "util.h"

#define NPZ_MAX_MEMBERS 48  /* arrays per file: 2 per layer plus metadata */
#define NPZ_NAME_LEN 64     /* member name, ".npy" included */
#define NPZ_STR_MAX 256     /* characters of a string array */
#define NPZ_FORMAT_VERSION 1 /* the `format_version` npz_export_qnet writes for an MLP */
#define NPZ_FORMAT_VERSION_CONV 2 /* ... and for a network with conv layers (readers of 1 refuse it) */
#define NPZ_MAX_DIMS 4      /* dimensions of an array npz_add writes */

typedef enum {
    NPZ_F32,   /* float32, '<f4' */
    NPZ_F64,   /* float64, '<f8' */
    NPZ_I64,   /* int64, '<i8' */
    NPZ_BOOL,  /* one byte, 0 or 1, '|b1' */
    NPZ_STR,   /* ASCII text written as numpy unicode '<Un' (UTF-32), 0-d only */
} NpzDtype;

typedef struct {
    char name[NPZ_NAME_LEN];
    uint32_t crc, bytes, offset;  /* for the central directory */
} NpzMember;

/* An export file being written: a temporary beside the target, renamed
 * onto it when complete, so the target is either untouched or the whole
 * new file. Only a missing target or a regular file is written: symbolic
 * links (not followed, so an export never lands elsewhere), directories,
 * device nodes, FIFOs and sockets are refused before anything is created,
 * and checked again just before the rename. On any failure only the
 * temporary is removed, never the target. */
typedef struct {
    FILE *f;                           /* the temporary; NULL when none is open */
    char path[PATH_LEN];               /* the target */
    char tmp[PATH_LEN];                /* <dir>/.<name>.tmp-<pid>-<k> */
    bool replace;                      /* the target existed (a regular file) */
} NpzOut;

/* Check the target path and create its temporary (O_CREAT | O_EXCL |
 * O_NOFOLLOW, mode 0666 less the umask). Returns 0 with o->f open for
 * writing, or -1 with err: "P is a symbolic link ...", "P is a directory
 * ...", "cannot write P: ..." (nothing is then left behind). */
int npz_out_open(NpzOut *o, const char *path, char *err);

/* Flush, fsync and close the temporary and rename it onto the target.
 * Returns 0 (o->replace says whether a file was replaced), or -1 with err
 * (a write error such as "cannot write P: No space left on device", or
 * the target turned into something else meanwhile); the temporary is
 * then removed and the target left as it was. */
int npz_out_commit(NpzOut *o, char *err);

/* Close and remove the temporary, if any; the target is not touched. Safe
 * on a zeroed struct, after npz_out_commit and twice in a row. */
void npz_out_discard(NpzOut *o);

typedef struct {
    NpzOut out;                        /* out.f is NULL once finished or before init */
    uint64_t off;                      /* bytes written so far */
    int n;                             /* members written */
    NpzMember m[NPZ_MAX_MEMBERS];
} NpzWriter;

/* CRC-32 as zlib's crc32() and zip compute it (reflected polynomial
 * 0xEDB88320, initial value and final xor 0xFFFFFFFF): of data[0 .. bytes)
 * continuing from crc, the value returned for the bytes before (0 to start).
 * npz_crc32_update(0, "123456789", 9) == 0xCBF43926. */
uint32_t npz_crc32_update(uint32_t crc, const void *data, size_t bytes);

/* Start an .npz at path (npz_out_open: written to a temporary beside it).
 * Returns 0, or -1 with a message in err (ERR_LEN bytes). */
int npz_init(NpzWriter *w, const char *path, char *err);

/* Append the array `name` (without ".npy"; unique, at most NPZ_NAME_LEN - 5
 * bytes) of shape shape[0 .. ndim) (ndim 0 to NPZ_MAX_DIMS; 0 is a scalar). data
 * holds the elements in C order, in this machine's byte order; for NPZ_STR
 * it is a NUL-terminated ASCII string of at most NPZ_STR_MAX characters and
 * ndim must be 0. The caller keeps ownership of data. Returns 0, or -1 with
 * err (a write error, or arguments out of range). */
int npz_add(NpzWriter *w, const char *name, NpzDtype dtype, int ndim, const size_t *shape, const void *data,
            char *err);

/* Write the zip central directory, close the file and rename it onto the
 * target (npz_out_commit; w->out.replace tells whether a file was
 * replaced). Returns 0, or -1 with err; on error the temporary is removed
 * and the target left as it was. */
int npz_finish(NpzWriter *w, char *err);

/* Close and remove an unfinished file's temporary (after an error); the
 * target is not touched. Safe on a zeroed struct, after npz_finish and
 * twice in a row. */
void npz_free(NpzWriter *w);

/* True when path asks for the old raw export instead (it ends in ".bin":
 * n_params float32 in this machine's byte order, agents/qnet.h layout). */
bool npz_wants_raw(const char *path);

/* What an export wrote, for the line that says so. */
typedef struct {
    bool replaced;                     /* a regular file was replaced (else created) */
    uint64_t bytes;                    /* the file's size */
} NpzWritten;

/* Write the n floats of p to path as raw bytes, through npz_out_open and
 * npz_out_commit (*done: what was written). Returns 0, or -1 with err; the
 * target is then as it was. */
int npz_export_raw(const char *path, const float *p, size_t n, NpzWritten *done, char *err);

/* Write net with parameters params (net->n_params floats, qnet.h layout)
 * to path as an .npz: first each conv layer i as conv.i.weight (F, C, K, K)
 * and conv.i.bias (F,) float32, PyTorch's nn.Conv2d layout; then per dense
 * layer the weight in PyTorch nn.Linear orientation (out, in) float32 and
 * the bias (out,), named layers.0.weight, layers.0.bias, ... in forward
 * order (layers.0 reads the last conv output flattened (F, OH, OW), as
 * torch's nn.Flatten does); the head is the last layers.N, or with a
 * dueling network advantage.weight (A, H), advantage.bias (A,),
 * value.weight (1, H), value.bias (1,). Beside them: env, obs_dim,
 * num_actions, hidden, activation, dueling, format_version (1, or 2 with
 * conv layers), for a conv network input_shape (H, W, C) int64 and
 * conv_layers (n_conv, 3) int64 rows (filters, kernel, stride), and for
 * Pendulum-v1 torques (the float64 torque of each action index). The env
 * name and torques come from cfg. The file is written as npz_out_open
 * says (*done: what was written). Returns 0, or -1 with err (the target
 * is then as it was). */
int npz_export_qnet(const char *path, const Config *cfg, const QNet *net, const float *params, NpzWritten *done,
                    char *err);

/* What npz_print_actions reads at most. An observation is obs_dim numbers
 * (at most 6 in gorila's environments): even at full double precision
 * with separators a line is under 200 bytes, so 64 KiB leaves room for
 * long comments and larger observations while bounding the memory a line
 * takes. 64 MiB of input is over a million observations at full precision,
 * far more than checking an export needs (tests/cli/export.sh uses 400),
 * read in seconds; it stops an endless source (/dev/zero, a pipe that
 * never ends) instead of running or growing without bound. */
#define NPZ_ACTIONS_MAX_LINE 65536                 /* bytes of one line, newline excluded */
#define NPZ_ACTIONS_MAX_BYTES (64L * 1024 * 1024)  /* bytes of the whole input */

/* Greedy actions of net (params: n_params floats) on observations read
 * from in, one per line: obs_dim numbers separated by blanks or commas;
 * blank lines and lines starting with '#' are skipped. Prints one action
 * index per observation to out, as the evaluator picks it (qnet_forward,
 * then qnet_argmax: ties go to the lowest index). Memory is fixed: a line
 * longer than NPZ_ACTIONS_MAX_LINE, more than NPZ_ACTIONS_MAX_BYTES of
 * input, or a NUL byte is an error. Returns 0, or -1 with err ("line N:
 * ..." for bad input, the limit that was reached, or a read or write
 * error); the actions of the lines before a bad one have been printed. */
int npz_print_actions(const QNet *net, const float *params, FILE *in, FILE *out, char *err);

#endif
