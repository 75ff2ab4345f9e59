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

static int count(Map m) {
    int n = 0;
    for (int y = 0; y < MINATAR_ROWS; y++)
        for (int x = 0; x < MINATAR_COLS; x++) n += m[y][x] != 0;
    return n;
}

static bool any_in_col(Map m, int x) {
    for (int y = 0; y < MINATAR_ROWS; y++)
        if (m[y][x]) return true;
    return false;
}

/* np.roll(m, shift, axis=0) (rows) or axis=1 (columns), shift = +-1. */
static void roll(Map m, int shift, int axis) {
    Map old;
    memcpy(old, m, sizeof old);
    for (int y = 0; y < MINATAR_ROWS; y++)
        for (int x = 0; x < MINATAR_COLS; x++) {
            if (axis == 0) m[(y + shift + MINATAR_ROWS) % MINATAR_ROWS][x] = old[y][x];
            else m[y][(x + shift + MINATAR_COLS) % MINATAR_COLS] = old[y][x];
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
        roll(g->aliens, 1, 0);
    } else {
        roll(g->aliens, g->alien_dir, 1);
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
    roll(g->f_bullets, -1, 0);
    memset(g->f_bullets[9], 0, MINATAR_COLS);
    roll(g->e_bullets, 1, 0);
    memset(g->e_bullets[0], 0, MINATAR_COLS);
    if (g->e_bullets[9][g->pos]) g->terminal = true;
    if (g->aliens[9][g->pos]) g->terminal = true;
    if (g->alien_move_timer == 0) move_aliens(g);
    if (g->alien_shot_timer == 0) {
        g->alien_shot_timer = ENEMY_SHOT_INTERVAL;
        alien_shoot(g);
    }
    for (int y = 0; y < MINATAR_ROWS; y++)
        for (int x = 0; x < MINATAR_COLS; x++)
            if (g->aliens[y][x] && g->f_bullets[y][x]) {
                r += 1;
                g->aliens[y][x] = g->f_bullets[y][x] = 0;
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

void space_invaders_state(const MinatarSpaceInvaders *g, uint8_t *cells) {
    minatar_set(cells, N_CH, 9, g->pos, CH_CANNON);
    int dir_ch = g->alien_dir < 0 ? CH_ALIEN_LEFT : CH_ALIEN_RIGHT;
    for (int y = 0; y < MINATAR_ROWS; y++)
        for (int x = 0; x < MINATAR_COLS; x++) {
            if (g->aliens[y][x]) {
                minatar_set(cells, N_CH, y, x, CH_ALIEN);
                minatar_set(cells, N_CH, y, x, dir_ch);
            }
            if (g->f_bullets[y][x]) minatar_set(cells, N_CH, y, x, CH_FRIENDLY_BULLET);
            if (g->e_bullets[y][x]) minatar_set(cells, N_CH, y, x, CH_ENEMY_BULLET);
        }
}

