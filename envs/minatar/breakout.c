/* SPDX-License-Identifier: GPL-3.0-or-later */
/* breakout.c: MinAtar's Breakout. The paddle (row 9) bounces a ball that
 * moves along diagonals and breaks three rows of bricks (+1 each, refilled
 * when the ball reaches the bottom with none left); the episode ends when
 * the ball passes the paddle. Channels: paddle, ball, trail, brick.
 *
 * Part of gorila's port of MinAtar (Young & Tian 2019; github
 * kenjyoung/MinAtar, GPL-3.0-or-later), a C rewriting of
 * minatar/environments/breakout.py: see envs/minatar/README.md. */
#include "games.h"

#include <string.h>

enum { CH_PADDLE, CH_BALL, CH_TRAIL, CH_BRICK, N_CH };

static void fill_bricks(MinatarBreakout *g) {
    for (int y = 1; y < 4; y++)
        for (int x = 0; x < MINATAR_COLS; x++) g->brick[y][x] = 1;
}

void breakout_reset(MinatarBreakout *g, MtRand *rng) {
    g->ball_y = 3;
    int start = (int)mtrand_randint(rng, 0, 2);
    g->ball_x = start ? 9 : 0;
    g->ball_dir = start ? 3 : 2;
    g->pos = 4;
    memset(g->brick, 0, sizeof g->brick);
    fill_bricks(g);
    g->strike = false;
    g->last_x = g->ball_x;
    g->last_y = g->ball_y;
    g->terminal = false;
}

static bool no_bricks(const MinatarBreakout *g) {
    for (int y = 0; y < MINATAR_ROWS; y++)
        for (int x = 0; x < MINATAR_COLS; x++)
            if (g->brick[y][x]) return false;
    return true;
}

int breakout_act(MinatarBreakout *g, int a, bool *terminal) {
    static const int dx[4] = {-1, 1, 1, -1}, dy[4] = {-1, -1, 1, 1};
    static const int flip_x[4] = {1, 0, 3, 2}, flip_y[4] = {3, 2, 1, 0}, paddle_edge[4] = {2, 3, 0, 1};
    int r = 0;
    if (g->terminal) {
        *terminal = true;
        return r;
    }
    if (a == MINATAR_LEFT) g->pos = g->pos - 1 > 0 ? g->pos - 1 : 0;
    else if (a == MINATAR_RIGHT) g->pos = g->pos + 1 < 9 ? g->pos + 1 : 9;

    g->last_x = g->ball_x;
    g->last_y = g->ball_y;
    int new_x = g->ball_x + dx[g->ball_dir], new_y = g->ball_y + dy[g->ball_dir];
    bool strike_toggle = false;
    if (new_x < 0 || new_x > 9) {
        new_x = new_x < 0 ? 0 : 9;
        g->ball_dir = flip_x[g->ball_dir];
    }
    if (new_y < 0) {
        new_y = 0;
        g->ball_dir = flip_y[g->ball_dir];
    } else if (g->brick[new_y][new_x] == 1) {
        strike_toggle = true;
        if (!g->strike) {
            r += 1;
            g->strike = true;
            g->brick[new_y][new_x] = 0;
            new_y = g->last_y;
            g->ball_dir = flip_y[g->ball_dir];
        }
    } else if (new_y == 9) {
        if (no_bricks(g)) fill_bricks(g);
        if (g->ball_x == g->pos) {
            g->ball_dir = flip_y[g->ball_dir];
            new_y = g->last_y;
        } else if (new_x == g->pos) {
            g->ball_dir = paddle_edge[g->ball_dir];
            new_y = g->last_y;
        } else {
            g->terminal = true;
        }
    }
    if (!strike_toggle) g->strike = false;
    g->ball_x = new_x;
    g->ball_y = new_y;
    *terminal = g->terminal;
    return r;
}

void breakout_state(const MinatarBreakout *g, float *obs) {
    minatar_set(obs, N_CH, g->ball_y, g->ball_x, CH_BALL);
    minatar_set(obs, N_CH, 9, g->pos, CH_PADDLE);
    minatar_set(obs, N_CH, g->last_y, g->last_x, CH_TRAIL);
    for (int y = 0; y < MINATAR_ROWS; y++) minatar_put_row(obs, N_CH, y, minatar_row_mask(g->brick[y]), CH_BRICK);
}
