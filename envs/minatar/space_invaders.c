/* SPDX-License-Identifier: GPL-3.0-or-later */
/* space_invaders.c: MinAtar's Space Invaders. The cannon (row 9) shoots
 * upward at a 4x6 block of aliens that sweeps sideways, stepping down at an
 * edge, and shoots back from the alien nearest the cannon; +1 per alien
 * shot; an alien or a bullet on the cannon ends the episode. A cleared wave
 * is replaced, with ramping one step faster than the last. Channels:
 * cannon, alien, alien_left, alien_right, friendly_bullet, enemy_bullet.
 *
 * Part of gorila's port of MinAtar (Young & Tian 2019; github
 * kenjyoung/MinAtar, GPL-3.0-or-later), a C rewriting of
 * minatar/environments/space_invaders.py: see envs/minatar/README.md. */
#include "games.h"

#include <string.h>

enum { CH_CANNON, CH_ALIEN, CH_ALIEN_LEFT, CH_ALIEN_RIGHT, CH_FRIENDLY_BULLET, CH_ENEMY_BULLET, N_CH };
enum { SHOT_COOL_DOWN = 5, ENEMY_MOVE_INTERVAL = 12, ENEMY_SHOT_INTERVAL = 10 };

typedef uint8_t Map[MINATAR_ROWS][MINATAR_COLS];

static void new_wave(Map m) {
    for (int y = 0; y < 4; y++)
        for (int x = 2; x < 8; x++) m[y][x] = 1;
}

/* Cells of m that are not 0, eight at a time: each byte folded to its
 * bit 0, then the bytes of the word summed by one multiply. */
static int count(Map m) {
    const uint8_t *p = &m[0][0];
    int n = 0, i = 0;
    for (; i + 8 <= MINATAR_ROWS * MINATAR_COLS; i += 8) {
        uint64_t v;
        memcpy(&v, p + i, sizeof v);
        v |= v >> 4;
        v |= v >> 2;
        v |= v >> 1;
        v &= 0x0101010101010101u;
        n += (int)((v * 0x0101010101010101u) >> 56);
    }
    for (; i < MINATAR_ROWS * MINATAR_COLS; i++) n += p[i] != 0;
    return n;
}

static bool any_in_col(Map m, int x) {
    for (int y = 0; y < MINATAR_ROWS; y++)
        if (m[y][x]) return true;
    return false;
}

/* np.roll(m, 1, axis=0): every row one down, row 9 to row 0. */
static void roll_down(Map m) {
    uint8_t last[MINATAR_COLS];
    memcpy(last, m[MINATAR_ROWS - 1], sizeof last);
    memmove(m[1], m[0], (MINATAR_ROWS - 1) * sizeof m[0]);
    memcpy(m[0], last, sizeof last);
}

/* np.roll(m, -1, axis=0): every row one up, row 0 to row 9. */
static void roll_up(Map m) {
    uint8_t first[MINATAR_COLS];
    memcpy(first, m[0], sizeof first);
    memmove(m[0], m[1], (MINATAR_ROWS - 1) * sizeof m[0]);
    memcpy(m[MINATAR_ROWS - 1], first, sizeof first);
}

/* np.roll(m, shift, axis=1), shift = +-1: every column one right (+1) or
 * left (-1), wrapping around. */
static void roll_cols(Map m, int shift) {
    for (int y = 0; y < MINATAR_ROWS; y++) {
        uint8_t *r = m[y];
        if (shift > 0) {
            uint8_t last = r[MINATAR_COLS - 1];
            memmove(r + 1, r, MINATAR_COLS - 1);
            r[0] = last;
        } else {
            uint8_t first = r[0];
            memmove(r, r + 1, MINATAR_COLS - 1);
            r[MINATAR_COLS - 1] = first;
        }
    }
}

void space_invaders_reset(MinatarSpaceInvaders *g) {
    g->pos = 5;
    memset(g->f_bullets, 0, sizeof g->f_bullets);
    memset(g->e_bullets, 0, sizeof g->e_bullets);
    memset(g->aliens, 0, sizeof g->aliens);
    new_wave(g->aliens);
    g->alien_dir = -1;
    g->enemy_move_interval = ENEMY_MOVE_INTERVAL;
    g->alien_move_timer = g->enemy_move_interval;
    g->alien_shot_timer = ENEMY_SHOT_INTERVAL;
    g->ramp_index = 0;
    g->shot_timer = 0;
    g->terminal = false;
}

/* The aliens' move: sideways, or down a row (row 9 wrapping to row 0, as
 * np.roll does) with a turn when one is at the edge they head for. */
static void move_aliens(MinatarSpaceInvaders *g) {
    int n = count(g->aliens);
    g->alien_move_timer = n < g->enemy_move_interval ? n : g->enemy_move_interval;
    if ((any_in_col(g->aliens, 0) && g->alien_dir < 0) || (any_in_col(g->aliens, 9) && g->alien_dir > 0)) {
        g->alien_dir = -g->alien_dir;
        for (int x = 0; x < MINATAR_COLS; x++)
            if (g->aliens[9][x]) g->terminal = true;
        roll_down(g->aliens);
    } else {
        roll_cols(g->aliens, g->alien_dir);
    }
    if (g->aliens[9][g->pos]) g->terminal = true;
}

/* _nearest_alien: columns by distance to the cannon (ties: the left one
 * first, a stable sort of 0..9), the lowest alien of the first column with
 * one fires. The map is never empty here (a cleared wave is refilled at
 * the end of the previous step). */
static void alien_shoot(MinatarSpaceInvaders *g) {
    for (int d = 0; d < MINATAR_COLS; d++) {
        for (int s = -1; s <= 1; s += 2) {
            int x = g->pos + s * d;
            if (x < 0 || x > 9 || (d == 0 && s > 0) || !any_in_col(g->aliens, x)) continue;
            int y = MINATAR_ROWS - 1;
            while (!g->aliens[y][x]) y--;
            g->e_bullets[y][x] = 1;
            return;
        }
    }
}

int space_invaders_act(MinatarSpaceInvaders *g, bool ramping, int a, bool *terminal) {
    int r = 0;
    if (g->terminal) {
        *terminal = true;
        return r;
    }
    if (a == MINATAR_FIRE && g->shot_timer == 0) {
        g->f_bullets[9][g->pos] = 1;
        g->shot_timer = SHOT_COOL_DOWN;
    } else if (a == MINATAR_LEFT) {
        g->pos = g->pos - 1 > 0 ? g->pos - 1 : 0;
    } else if (a == MINATAR_RIGHT) {
        g->pos = g->pos + 1 < 9 ? g->pos + 1 : 9;
    }
    roll_up(g->f_bullets);
    memset(g->f_bullets[9], 0, MINATAR_COLS);
    roll_down(g->e_bullets);
    memset(g->e_bullets[0], 0, MINATAR_COLS);
    if (g->e_bullets[9][g->pos]) g->terminal = true;
    if (g->aliens[9][g->pos]) g->terminal = true;
    if (g->alien_move_timer == 0) move_aliens(g);
    if (g->alien_shot_timer == 0) {
        g->alien_shot_timer = ENEMY_SHOT_INTERVAL;
        alien_shoot(g);
    }
    for (int y = 0; y < MINATAR_ROWS; y++) {
        unsigned hit = minatar_row_mask(g->aliens[y]) & minatar_row_mask(g->f_bullets[y]);
        for (; hit; hit &= hit - 1) {
            int x = __builtin_ctz(hit);
            r += 1;
            g->aliens[y][x] = g->f_bullets[y][x] = 0;
        }
    }
    g->shot_timer -= g->shot_timer > 0;
    g->alien_move_timer -= 1;
    g->alien_shot_timer -= 1;
    if (count(g->aliens) == 0) {
        if (g->enemy_move_interval > 6 && ramping) {
            g->enemy_move_interval -= 1;
            g->ramp_index += 1;
        }
        new_wave(g->aliens);
    }
    *terminal = g->terminal;
    return r;
}

void space_invaders_state(const MinatarSpaceInvaders *g, float *obs) {
    minatar_set(obs, N_CH, 9, g->pos, CH_CANNON);
    int dir_ch = g->alien_dir < 0 ? CH_ALIEN_LEFT : CH_ALIEN_RIGHT;
    for (int y = 0; y < MINATAR_ROWS; y++) {
        unsigned aliens = minatar_row_mask(g->aliens[y]);
        minatar_put_row(obs, N_CH, y, aliens, CH_ALIEN);
        minatar_put_row(obs, N_CH, y, aliens, dir_ch);
        minatar_set_row(obs, N_CH, y, minatar_row_mask(g->f_bullets[y]), CH_FRIENDLY_BULLET);
        minatar_set_row(obs, N_CH, y, minatar_row_mask(g->e_bullets[y]), CH_ENEMY_BULLET);
    }
}
