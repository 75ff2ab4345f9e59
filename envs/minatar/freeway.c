/* SPDX-License-Identifier: GPL-3.0-or-later */
/* freeway.c: MinAtar's Freeway. The chicken (column 4) crosses eight lanes
 * of cars, moving up or down at most every 3 frames; +1 at the top, then
 * back to the bottom with new car speeds; a car sends it back down. The
 * episode ends after 2500 frames (the 2501st step is terminal). Channels:
 * chicken, car, and one trail channel per speed 1..5.
 *
 * Part of gorila's port of MinAtar (Young & Tian 2019; github
 * kenjyoung/MinAtar, GPL-3.0-or-later), a C rewriting of
 * minatar/environments/freeway.py: see envs/minatar/README.md. */
#include "games.h"

enum { CH_CHICKEN, CH_CAR, CH_SPEED1, N_CH = 7 };
enum { PLAYER_SPEED = 3, TIME_LIMIT = 2500 };

static int iabs(int v) { return v < 0 ? -v : v; }

/* _randomize_cars: speeds = randint(1, 6, 8), then 8 rand() for
 * np.sign(rand - 0.5) (0, a speed of 0, if rand() is exactly 0.5). */
static void randomize_cars(MinatarFreeway *g, MtRand *rng, bool initialize) {
    int speeds[8];
    for (int i = 0; i < 8; i++) speeds[i] = (int)mtrand_randint(rng, 1, 6);
    for (int i = 0; i < 8; i++) {
        double d = mtrand_rand(rng) - 0.5;
        speeds[i] *= d > 0 ? 1 : d < 0 ? -1 : 0;
    }
    for (int i = 0; i < 8; i++) {
        if (initialize) {
            g->cars[i][0] = 0;
            g->cars[i][1] = i + 1;
        }
        g->cars[i][2] = iabs(speeds[i]);
        g->cars[i][3] = speeds[i];
    }
}

void freeway_reset(MinatarFreeway *g, MtRand *rng) {
    randomize_cars(g, rng, true);
    g->pos = 9;
    g->move_timer = PLAYER_SPEED;
    g->terminate_timer = TIME_LIMIT;
    g->terminal = false;
}

int freeway_act(MinatarFreeway *g, MtRand *rng, int a, bool *terminal) {
    int r = 0;
    if (g->terminal) {
        *terminal = true;
        return r;
    }
    if (a == MINATAR_UP && g->move_timer == 0) {
        g->move_timer = PLAYER_SPEED;
        g->pos = g->pos - 1 > 0 ? g->pos - 1 : 0;
    } else if (a == MINATAR_DOWN && g->move_timer == 0) {
        g->move_timer = PLAYER_SPEED;
        g->pos = g->pos + 1 < 9 ? g->pos + 1 : 9;
    }
    if (g->pos == 0) {
        r += 1;
        randomize_cars(g, rng, false);
        g->pos = 9;
    }
    for (int i = 0; i < 8; i++) {
        int *car = g->cars[i];
        if (car[0] == 4 && car[1] == g->pos) g->pos = 9;
        if (car[2] == 0) {
            car[2] = iabs(car[3]);
            car[0] += car[3] > 0 ? 1 : -1;
            if (car[0] < 0) car[0] = 9;
            else if (car[0] > 9) car[0] = 0;
            if (car[0] == 4 && car[1] == g->pos) g->pos = 9;
        } else {
            car[2] -= 1;
        }
    }
    g->move_timer -= g->move_timer > 0;
    g->terminate_timer -= 1;
    if (g->terminate_timer < 0) g->terminal = true;
    *terminal = g->terminal;
    return r;
}

void freeway_state(const MinatarFreeway *g, float *obs) {
    minatar_set(obs, N_CH, g->pos, 4, CH_CHICKEN);
    /* Python's loop variable `trail` outlives its iteration: a car of speed
     * 0 (see randomize_cars) reuses the previous car's channel; the
     * reference raises NameError if the first car has speed 0, which
     * happens with probability 2^-53 and is not reproduced. */
    int trail = -1;
    for (int i = 0; i < 8; i++) {
        const int *car = g->cars[i];
        minatar_set(obs, N_CH, car[1], car[0], CH_CAR);
        int back_x = car[3] > 0 ? car[0] - 1 : car[0] + 1;
        if (back_x < 0) back_x = 9;
        else if (back_x > 9) back_x = 0;
        int speed = iabs(car[3]);
        if (speed >= 1 && speed <= 5) trail = CH_SPEED1 + speed - 1;
        if (trail >= 0) minatar_set(obs, N_CH, car[1], back_x, trail);
    }
}
