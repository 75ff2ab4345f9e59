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

/* state() helper: set cell (row, col, channel) of a 10x10xnch array. */
static inline void minatar_set(uint8_t *cells, int nch, int row, int col, int ch) {
    cells[(row * MINATAR_COLS + col) * nch + ch] = 1;
}

void asterix_reset(MinatarAsterix *g);
int asterix_act(MinatarAsterix *g, MtRand *rng, bool ramping, int a, bool *terminal);
void asterix_state(const MinatarAsterix *g, uint8_t *cells);

void breakout_reset(MinatarBreakout *g, MtRand *rng);
int breakout_act(MinatarBreakout *g, int a, bool *terminal);
void breakout_state(const MinatarBreakout *g, uint8_t *cells);

void freeway_reset(MinatarFreeway *g, MtRand *rng);
int freeway_act(MinatarFreeway *g, MtRand *rng, int a, bool *terminal);
void freeway_state(const MinatarFreeway *g, uint8_t *cells);

void seaquest_reset(MinatarSeaquest *g);
int seaquest_act(MinatarSeaquest *g, MtRand *rng, bool ramping, int a, bool *terminal);
void seaquest_state(const MinatarSeaquest *g, uint8_t *cells);

void space_invaders_reset(MinatarSpaceInvaders *g);
int space_invaders_act(MinatarSpaceInvaders *g, bool ramping, int a, bool *terminal);
void space_invaders_state(const MinatarSpaceInvaders *g, uint8_t *cells);

#endif
