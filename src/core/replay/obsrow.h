/* SPDX-License-Identifier: MIT */
/* obsrow.h: the one place that knows how an observation row is stored in
 * replay and sent from actors to replay (no MPI, no allocation).
 *
 * A vector environment's row (ENV_OBS_VECTOR) is stored as it is: O floats,
 * 4 O bytes. A planes environment's row (ENV_OBS_PLANES: H x W x C cells in
 * C order, every cell exactly 0.0f or 1.0f, e.g. MinAtar) is stored packed,
 * one bit per cell, ceil(O / 8) bytes:
 *
 *   cell j (0 .. O-1, the index into the H x W x C row) is bit j % 8 of
 *   byte j / 8, least significant bit first; the unused high bits of the
 *   last byte are 0.
 *
 * So a 10x10x10 Seaquest row is 125 bytes instead of 4000. Packing a cell
 * that is not exactly 0 or 1 (-0.0f counts as 0) would lose it: the encoders
 * report the first such cell and the caller stops with an error that names
 * it (an environment that declares planes and writes anything else is a
 * bug). Unpacking reads 8 floats per byte from a static table.
 *
 * Users: replaybuf.c (the ring, its checkpoint rows), the actor role
 * (EXPERIENCE payloads), proto.h (their size), memplan.c (the plan).
 */
#ifndef GORILA_OBSROW_H
#define GORILA_OBSROW_H

#include <stdbool.h>
#include <stddef.h>

#include "qnet.h"

typedef struct {
    int obs_dim;    /* O, cells (floats) of the observation */
    bool packed;    /* bits (planes) or floats (vector) */
    size_t bytes;   /* stored bytes of one row: ceil(O / 8) packed, 4 O otherwise */
} ObsRow;

/* The stored form of rows of obs_dim >= 1 cells, packed or not. */
static inline ObsRow obsrow_make(int obs_dim, bool packed) {
    size_t O = (size_t)obs_dim;
    return (ObsRow){.obs_dim = obs_dim, .packed = packed, .bytes = packed ? (O + 7) / 8 : O * sizeof(float)};
}

/* The stored form for a network's input: packed exactly when it reads
 * planes (agentcfg_qnet sets in_h, in_w, in_c for ENV_OBS_PLANES
 * environments only). */
static inline ObsRow obsrow_for_net(const QNetSpec *s) { return obsrow_make(s->obs_dim, s->in_h > 0); }

/* Sentinel of the encoders: every cell could be stored. */
#define OBSROW_OK ((size_t)-1)

/* Store n rows src (n, O) floats into dst (n * row->bytes bytes): a copy,
 * or packed bits. src and dst may have any alignment (checkpoint data).
 * Returns OBSROW_OK, or for a packed row the flat index (row * O + cell) of
 * the first cell that is not 0 or 1; dst is then partly written. */
size_t obsrow_encode(const ObsRow *row, const void *src, size_t n, void *dst);

/* The inverse: n stored rows src (n * row->bytes bytes) into dst (n, O)
 * floats, any alignment. Every stored bit pattern decodes (padding bits
 * are not read). */
void obsrow_decode(const ObsRow *row, const void *src, size_t n, void *dst);

/* Index of the first of n_floats floats at src (any alignment) that is not
 * exactly 0 or 1, or OBSROW_OK: what packed rows can hold, checked before
 * anything changes. */
size_t obsrow_find_nonbinary(const void *src, size_t n_floats);

/* The float at src[j] of an array at any alignment (for error messages). */
static inline float obsrow_float_at(const void *src, size_t j) {
    float v;
    __builtin_memcpy(&v, (const unsigned char *)src + j * sizeof(float), sizeof v);
    return v;
}

#endif
