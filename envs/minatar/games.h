/* SPDX-License-Identifier: GPL-3.0-or-later */
/* games.h: the five games' rules, internal to envs/minatar (minatar.c
 * dispatches to them). Each game keeps the reference's own names and
 * order of operations; see the file of each game.
 *
 * Part of gorila's port of MinAtar (Young & Tian 2019; github
 * kenjyoung/MinAtar, GPL-3.0-or-later): see envs/minatar/README.md. */
#ifndef GORILA_MINATAR_GAMES_H
#define GORILA_MINATAR_GAMES_H

#include "minatar.h"

#include <string.h>

/* state() as floats: the games set the cells that hold 1 (minatar_set)
 * in an observation minatar.c has cleared, so a step's observation costs a
 * memset and a few dozen stores, not a pass over up to 1,000 cells. */

/* state() helper: set cell (row, col, channel) of a 10x10xnch array. */
static inline void minatar_set(float *obs, int nch, int row, int col, int ch) {
    obs[(row * MINATAR_COLS + col) * nch + ch] = 1.0f;
}

/* A row of a 10x10 map of bytes as a bit per cell: bit x is row[x] != 0. */
static inline unsigned minatar_row_mask(const uint8_t row[MINATAR_COLS]) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    uint64_t v; /* bytes 0..7, byte x in bits 8x..8x+7 */
    memcpy(&v, row, sizeof v);
    v |= v >> 4; /* bit 8x: any bit of byte x (the shifts stay in the byte) */
    v |= v >> 2;
    v |= v >> 1;
    v &= 0x0101010101010101u;
    unsigned m = (unsigned)((v * 0x0102040810204080u) >> 56); /* bit 8x to bit x */
    return m | (unsigned)(row[8] != 0) << 8 | (unsigned)(row[9] != 0) << 9;
#else
    unsigned m = 0;
    for (int x = 0; x < MINATAR_COLS; x++) m |= (unsigned)(row[x] != 0) << x;
    return m;
#endif
}

/* Set channel ch of every cell of row y whose bit is set in mask: one
 * store per set bit (for sparse rows: bullets). */
static inline void minatar_set_row(float *obs, int nch, int y, unsigned mask, int ch) {
    for (; mask; mask &= mask - 1) minatar_set(obs, nch, y, __builtin_ctz(mask), ch);
}

/* The same for dense rows (bricks, aliens): channel ch of all ten cells of
 * a nonempty row written, 1.0f or 0.0f, without a branch per cell. */
static inline void minatar_put_row(float *obs, int nch, int y, unsigned mask, int ch) {
    static const float value[2] = {0.0f, 1.0f}; /* a load: cvtsi2ss would chain the stores */
    if (!mask) return;
    float *cell = obs + y * MINATAR_COLS * nch + ch;
    for (int x = 0; x < MINATAR_COLS; x++) cell[x * nch] = value[(mask >> x) & 1u];
}

void asterix_reset(MinatarAsterix *g);
int asterix_act(MinatarAsterix *g, MtRand *rng, bool ramping, int a, bool *terminal);
void asterix_state(const MinatarAsterix *g, float *obs);

void breakout_reset(MinatarBreakout *g, MtRand *rng);
int breakout_act(MinatarBreakout *g, int a, bool *terminal);
void breakout_state(const MinatarBreakout *g, float *obs);

void freeway_reset(MinatarFreeway *g, MtRand *rng);
int freeway_act(MinatarFreeway *g, MtRand *rng, int a, bool *terminal);
void freeway_state(const MinatarFreeway *g, float *obs);

void seaquest_reset(MinatarSeaquest *g);
int seaquest_act(MinatarSeaquest *g, MtRand *rng, bool ramping, int a, bool *terminal);
void seaquest_state(const MinatarSeaquest *g, float *obs);

void space_invaders_reset(MinatarSpaceInvaders *g);
int space_invaders_act(MinatarSpaceInvaders *g, bool ramping, int a, bool *terminal);
void space_invaders_state(const MinatarSpaceInvaders *g, float *obs);

#endif
