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
#define NPZ_FORMAT_VERSION 1 /* the `format_version` array npz_export_qnet writes */

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

typedef struct {
    FILE *f;                           /* NULL once finished or before init */
    char path[PATH_LEN];
    uint64_t off;                      /* bytes written so far */
    int n;                             /* members written */
    NpzMember m[NPZ_MAX_MEMBERS];
} NpzWriter;

/* CRC-32 as zlib's crc32() and zip compute it (reflected polynomial
 * 0xEDB88320, initial value and final xor 0xFFFFFFFF): of data[0 .. bytes)
 * continuing from crc, the value returned for the bytes before (0 to start).
 * npz_crc32_update(0, "123456789", 9) == 0xCBF43926. */
uint32_t npz_crc32_update(uint32_t crc, const void *data, size_t bytes);

/* Create (truncate) the file at path for writing. Returns 0, or -1 with a
 * message in err (ERR_LEN bytes). */
int npz_init(NpzWriter *w, const char *path, char *err);

/* Append the array `name` (without ".npy"; unique, at most NPZ_NAME_LEN - 5
 * bytes) of shape shape[0 .. ndim) (ndim 0 to 2; 0 is a scalar). data
 * holds the elements in C order, in this machine's byte order; for NPZ_STR
 * it is a NUL-terminated ASCII string of at most NPZ_STR_MAX characters and
 * ndim must be 0. The caller keeps ownership of data. Returns 0, or -1 with
 * err (a write error, or arguments out of range). */
int npz_add(NpzWriter *w, const char *name, NpzDtype dtype, int ndim, const size_t *shape, const void *data,
            char *err);

/* Write the zip central directory and close the file. Returns 0, or -1
 * with err; on error the partial file is removed. */
int npz_finish(NpzWriter *w, char *err);

/* Close and remove an unfinished file (after an error). Safe on a zeroed
 * struct, after npz_finish and twice in a row. */
void npz_free(NpzWriter *w);

/* True when path asks for the old raw export instead (it ends in ".bin":
 * n_params float32 in this machine's byte order, agents/qnet.h layout). */
bool npz_wants_raw(const char *path);

/* Write net with parameters params (net->n_params floats, qnet.h layout)
 * to path as an .npz: per layer the weight in PyTorch nn.Linear orientation
 * (out, in) float32 and the bias (out,), named layers.0.weight,
 * layers.0.bias, ... in forward order; the head is the last layers.N, or
 * with a dueling network advantage.weight (A, H), advantage.bias (A,),
 * value.weight (1, H), value.bias (1,). Beside them: env, obs_dim,
 * num_actions, hidden, activation, dueling, format_version, and for
 * Pendulum-v1 torques (the float64 torque of each action index). The env
 * name and torques come from cfg. Returns 0, or -1 with err (the file is
 * then removed). */
int npz_export_qnet(const char *path, const Config *cfg, const QNet *net, const float *params, char *err);

/* Greedy actions of net (params: n_params floats) on observations read
 * from in, one per line: obs_dim numbers separated by blanks or commas;
 * blank lines and lines starting with '#' are skipped. Prints one action
 * index per observation to out, as the evaluator picks it (qnet_forward,
 * then qnet_argmax: ties go to the lowest index). Returns 0, or -1 with err
 * ("line N: ..." for bad input, or a read or write error); the actions of
 * the lines before a bad one have been printed. */
int npz_print_actions(const QNet *net, const float *params, FILE *in, FILE *out, char *err);

#endif
