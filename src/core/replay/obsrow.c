/* SPDX-License-Identifier: MIT */
/* obsrow.c: see obsrow.h.
 *
 * Unpacking is a table lookup: BITS[b] holds the 8 floats of byte b (bit
 * k -> element k), so a byte costs one 32-byte copy instead of 8 shifts,
 * masks and conversions. The table is built by the preprocessor (no
 * initialisation step, no mutable state).
 */
#include "obsrow.h"

#include <stdint.h>
#include <string.h>

#define OBSROW_B8(b)                                                                                   \
    {(float)((b) & 1), (float)((b) >> 1 & 1), (float)((b) >> 2 & 1), (float)((b) >> 3 & 1),          \
     (float)((b) >> 4 & 1), (float)((b) >> 5 & 1), (float)((b) >> 6 & 1), (float)((b) >> 7 & 1)}
#define OBSROW_R2(b) OBSROW_B8(b), OBSROW_B8((b) + 1)
#define OBSROW_R4(b) OBSROW_R2(b), OBSROW_R2((b) + 2)
#define OBSROW_R8(b) OBSROW_R4(b), OBSROW_R4((b) + 4)
#define OBSROW_R16(b) OBSROW_R8(b), OBSROW_R8((b) + 8)
#define OBSROW_R32(b) OBSROW_R16(b), OBSROW_R16((b) + 16)
#define OBSROW_R64(b) OBSROW_R32(b), OBSROW_R32((b) + 32)
#define OBSROW_R128(b) OBSROW_R64(b), OBSROW_R64((b) + 64)

static const float BITS[256][8] = {OBSROW_R128(0), OBSROW_R128(128)};

size_t obsrow_find_nonbinary(const void *src, size_t n_floats) {
    for (size_t j = 0; j < n_floats; j++) {
        float v = obsrow_float_at(src, j);
        if (!(v == 0.0f || v == 1.0f)) return j;
    }
    return OBSROW_OK;
}

/* One packed row: cells src[0 .. O) into ceil(O / 8) bytes. Returns the
 * first cell that is not 0 or 1, or OBSROW_OK. */
static size_t pack_row(const unsigned char *src, size_t O, unsigned char *dst) {
    unsigned bad = 0;
    for (size_t j0 = 0; j0 < O; j0 += 8) {
        size_t m = O - j0 < 8 ? O - j0 : 8;
        unsigned b = 0;
        for (size_t k = 0; k < m; k++) {
            float v = obsrow_float_at(src, j0 + k);
            b |= (unsigned)(v == 1.0f) << k;
            bad |= !(v == 0.0f || v == 1.0f);
        }
        dst[j0 / 8] = (unsigned char)b;
    }
    return bad ? obsrow_find_nonbinary(src, O) : OBSROW_OK;
}

size_t obsrow_encode(const ObsRow *row, const void *src, size_t n, void *dst) {
    size_t O = (size_t)row->obs_dim;
    if (!row->packed) {
        memcpy(dst, src, n * O * sizeof(float));
        return OBSROW_OK;
    }
    const unsigned char *s = src;
    unsigned char *d = dst;
    for (size_t i = 0; i < n; i++) {
        size_t bad = pack_row(s + i * O * sizeof(float), O, d + i * row->bytes);
        if (bad != OBSROW_OK) return i * O + bad;
    }
    return OBSROW_OK;
}

void obsrow_decode(const ObsRow *row, const void *src, size_t n, void *dst) {
    size_t O = (size_t)row->obs_dim;
    if (!row->packed) {
        memcpy(dst, src, n * O * sizeof(float));
        return;
    }
    const unsigned char *s = src;
    size_t full = O / 8, rest = O % 8;
    for (size_t i = 0; i < n; i++) {
        const unsigned char *r = s + i * row->bytes;
        unsigned char *d = (unsigned char *)dst + i * O * sizeof(float);
        for (size_t k = 0; k < full; k++) memcpy(d + k * sizeof BITS[0], BITS[r[k]], sizeof BITS[0]);
        if (rest) memcpy(d + full * sizeof BITS[0], BITS[r[full]], rest * sizeof(float));
    }
}
