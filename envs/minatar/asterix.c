/* SPDX-License-Identifier: GPL-3.0-or-later */
/* asterix.c: MinAtar's Asterix. The player moves in four directions
 * (rows 1..8); enemies and gold enter from the sides in eight slots (one
 * per row); gold is +1, an enemy ends the episode. With ramping, every
 * 100 steps the spawn interval shrinks and, every other time, the move
 * interval. Channels: player, enemy, trail, gold.
 *
 * Part of gorila's port of MinAtar (Young & Tian 2019; github
 * kenjyoung/MinAtar, GPL-3.0-or-later), a C rewriting of
 * minatar/environments/asterix.py: see envs/minatar/README.md. */
#include "games.h"

enum { CH_PLAYER, CH_ENEMY, CH_TRAIL, CH_GOLD, N_CH };
enum { RAMP_INTERVAL = 100, INIT_SPAWN_SPEED = 10, INIT_MOVE_INTERVAL = 5 };

void asterix_reset(MinatarAsterix *g) {
    g->player_x = 5;
    g->player_y = 5;
    for (int i = 0; i < 8; i++) g->ent[i].present = false;
    g->spawn_speed = INIT_SPAWN_SPEED;
    g->spawn_timer = g->spawn_speed;
    g->move_speed = INIT_MOVE_INTERVAL;
    g->move_timer = g->move_speed;
    g->ramp_timer = RAMP_INTERVAL;
    g->ramp_index = 0;
    g->terminal = false;
}

/* _spawn_entity: two draws always, a third (randint over the free slots)
 * when more than one slot is free. */
static void spawn_entity(MinatarAsterix *g, MtRand *rng) {
    bool lr = mtrand_rand(rng) < 1.0 / 2;
    bool gold = mtrand_rand(rng) < 1.0 / 3;
    int slots[8], n = 0;
    for (int i = 0; i < 8; i++)
        if (!g->ent[i].present) slots[n++] = i;
    if (n == 0) return;
    int slot = slots[mtrand_randint(rng, 0, n)];
    g->ent[slot] = (MinatarAsterixEntity){.present = true, .lr = lr, .gold = gold, .x = lr ? 0 : 9, .y = slot + 1};
}

/* An entity on the player: gold is taken (+1), an enemy ends the game. */
static int touch(MinatarAsterix *g, int i) {
    if (g->ent[i].gold) {
        g->ent[i].present = false;
        return 1;
    }
    g->terminal = true;
    return 0;
}

static void ramp(MinatarAsterix *g) {
    if (g->ramp_timer >= 0) {
        g->ramp_timer -= 1;
        return;
    }
    if (g->move_speed > 1 && g->ramp_index % 2) g->move_speed -= 1;
    if (g->spawn_speed > 1) g->spawn_speed -= 1;
    g->ramp_index += 1;
    g->ramp_timer = RAMP_INTERVAL;
}

int asterix_act(MinatarAsterix *g, MtRand *rng, bool ramping, int a, bool *terminal) {
    int r = 0;
    if (g->terminal) {
        *terminal = true;
        return r;
    }
    if (g->spawn_timer == 0) {
        spawn_entity(g, rng);
        g->spawn_timer = g->spawn_speed;
    }
    if (a == MINATAR_LEFT) g->player_x = g->player_x - 1 > 0 ? g->player_x - 1 : 0;
    else if (a == MINATAR_RIGHT) g->player_x = g->player_x + 1 < 9 ? g->player_x + 1 : 9;
    else if (a == MINATAR_UP) g->player_y = g->player_y - 1 > 1 ? g->player_y - 1 : 1;
    else if (a == MINATAR_DOWN) g->player_y = g->player_y + 1 < 8 ? g->player_y + 1 : 8;

    for (int i = 0; i < 8; i++) {
        MinatarAsterixEntity *e = &g->ent[i];
        if (e->present && e->x == g->player_x && e->y == g->player_y) r += touch(g, i);
    }
    if (g->move_timer == 0) {
        g->move_timer = g->move_speed;
        for (int i = 0; i < 8; i++) {
            MinatarAsterixEntity *e = &g->ent[i];
            if (!e->present) continue;
            e->x += e->lr ? 1 : -1;
            /* Out of the screen: the slot empties (its x, -1 or 10, can
             * no longer meet the player). */
            if (e->x < 0 || e->x > 9) e->present = false;
            else if (e->x == g->player_x && e->y == g->player_y) r += touch(g, i);
        }
    }
    g->spawn_timer -= 1;
    g->move_timer -= 1;
    if (ramping && (g->spawn_speed > 1 || g->move_speed > 1)) ramp(g);
    *terminal = g->terminal;
    return r;
}

void asterix_state(const MinatarAsterix *g, float *obs) {
    minatar_set(obs, N_CH, g->player_y, g->player_x, CH_PLAYER);
    for (int i = 0; i < 8; i++) {
        const MinatarAsterixEntity *e = &g->ent[i];
        if (!e->present) continue;
        minatar_set(obs, N_CH, e->y, e->x, e->gold ? CH_GOLD : CH_ENEMY);
        int back_x = e->lr ? e->x - 1 : e->x + 1;
        if (back_x >= 0 && back_x <= 9) minatar_set(obs, N_CH, e->y, back_x, CH_TRAIL);
    }
}
