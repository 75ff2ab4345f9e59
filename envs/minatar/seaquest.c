/* SPDX-License-Identifier: GPL-3.0-or-later */
/* seaquest.c: MinAtar's Seaquest. A two-cell submarine fires bullets at
 * fish and enemy subs (+1 each; subs fire back), picks up divers (up to 6)
 * and must surface with at least one before its oxygen (200 steps) runs
 * out; surfacing with 6 pays oxygen*10//200. A fish, a sub or an enemy
 * bullet on the submarine, no oxygen, or surfacing with no diver ends the
 * episode. With ramping, each surfacing speeds up the spawns and, every
 * other time, the enemies. Channels: sub_front, sub_back, friendly_bullet,
 * trail, enemy_bullet, enemy_fish, enemy_sub, oxygen_guage, diver_guage,
 * diver.
 *
 * Quirks kept: the lists are Python lists walked with reversed() while
 * elements are removed from them, and list.remove removes the FIRST
 * element EQUAL in value (which may be another bullet or enemy than the
 * one in hand, which then stays and is visited again); a sub removed in its
 * own turn still fires; surfacing with 6 divers leaves diver_count at -1.
 *
 * Part of gorila's port of MinAtar (Young & Tian 2019; github
 * kenjyoung/MinAtar, GPL-3.0-or-later), a C rewriting of
 * minatar/environments/seaquest.py: see envs/minatar/README.md. */
#include "games.h"

#include <string.h>

enum {
    CH_SUB_FRONT,
    CH_SUB_BACK,
    CH_FRIENDLY_BULLET,
    CH_TRAIL,
    CH_ENEMY_BULLET,
    CH_ENEMY_FISH,
    CH_ENEMY_SUB,
    CH_OXYGEN_GUAGE,
    CH_DIVER_GUAGE,
    CH_DIVER,
    N_CH
};
enum {
    MAX_OXYGEN = 200,
    INIT_SPAWN_SPEED = 20,
    DIVER_SPAWN_SPEED = 30,
    INIT_MOVE_INTERVAL = 5,
    SHOT_COOL_DOWN = 5,
    ENEMY_SHOT_INTERVAL = 10,
    DIVER_MOVE_INTERVAL = 5
};
/* Fields of the records: [x, y, lr, move timer, shot timer] */
enum { X, Y, LR, MOVE, SHOT };

/* ---- Python lists of int lists ---- */

static void list_clear(MinatarList *l, int nfields) {
    memset(l->used, 0, sizeof l->used);
    l->len = 0;
    l->nfields = nfields;
}

static MinatarRec *list_at(MinatarList *l, int i) { return &l->pool[l->idx[i]]; }

/* list += [[v...]]: the element goes to a free pool slot (never the slot of
 * an element a loop still holds: nothing appends to a list while a loop
 * walks it). */
static void list_append(MinatarList *l, int v0, int v1, int v2, int v3, int v4) {
    if (l->len == MINATAR_LIST_CAP) return; /* unreachable: see MINATAR_LIST_CAP */
    int s = 0;
    while (l->used[s]) s++;
    l->used[s] = 1;
    l->pool[s] = (MinatarRec){{v0, v1, v2, v3, v4}};
    l->idx[l->len++] = (uint16_t)s;
}

static bool rec_equal(const MinatarRec *a, const MinatarRec *b, int n) {
    for (int k = 0; k < n; k++)
        if (a->v[k] != b->v[k]) return false;
    return true;
}

/* list.remove(val): the first element equal to val in value. */
static void list_remove(MinatarList *l, const MinatarRec *val) {
    MinatarRec copy = *val;
    for (int i = 0; i < l->len; i++) {
        if (!rec_equal(list_at(l, i), &copy, l->nfields)) continue;
        l->used[l->idx[i]] = 0;
        memmove(&l->idx[i], &l->idx[i + 1], (size_t)(l->len - i - 1) * sizeof l->idx[0]);
        l->len--;
        return;
    }
}

/* rec[0:2] == [x, y] */
static bool at(const MinatarRec *r, int x, int y) { return r->v[X] == x && r->v[Y] == y; }

static bool out_of_screen(const MinatarRec *r) { return r->v[X] < 0 || r->v[X] > 9; }

static void step_x(MinatarRec *r) { r->v[X] += r->v[LR] ? 1 : -1; }

/* Reversed iteration as CPython's list_reverseiterator: an index that
 * starts at the last element and stops once it leaves [0, len). */
#define FOR_REVERSED(l, it) for (int it = (l)->len - 1; it >= 0 && it < (l)->len; it--)

/* ---- the rules ---- */

void seaquest_reset(MinatarSeaquest *g) {
    g->oxygen = MAX_OXYGEN;
    g->diver_count = 0;
    g->sub_x = 5;
    g->sub_y = 0;
    g->sub_or = false;
    list_clear(&g->f_bullets, 3);
    list_clear(&g->e_bullets, 3);
    list_clear(&g->e_fish, 4);
    list_clear(&g->e_subs, 5);
    list_clear(&g->divers, 4);
    g->e_spawn_speed = INIT_SPAWN_SPEED;
    g->e_spawn_timer = g->e_spawn_speed;
    g->d_spawn_timer = DIVER_SPAWN_SPEED;
    g->move_speed = INIT_MOVE_INTERVAL;
    g->ramp_index = 0;
    g->shot_timer = 0;
    g->surface = true;
    g->terminal = false;
}

/* _spawn_enemy: nothing if an enemy in that row heads the other way. */
static void spawn_enemy(MinatarSeaquest *g, MtRand *rng) {
    bool lr = mtrand_rand(rng) < 1.0 / 2;
    bool is_sub = mtrand_rand(rng) < 1.0 / 3;
    int x = lr ? 0 : 9;
    int y = (int)mtrand_randint(rng, 1, 9);
    MinatarList *lists[2] = {&g->e_subs, &g->e_fish};
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < lists[k]->len; i++) {
            const MinatarRec *z = list_at(lists[k], i);
            if (z->v[Y] == y && z->v[LR] != (int)lr) return;
        }
    if (is_sub) list_append(&g->e_subs, x, y, lr, g->move_speed, ENEMY_SHOT_INTERVAL);
    else list_append(&g->e_fish, x, y, lr, g->move_speed, 0);
}

static void spawn_diver(MinatarSeaquest *g, MtRand *rng) {
    bool lr = mtrand_rand(rng) < 1.0 / 2;
    int x = lr ? 0 : 9;
    int y = (int)mtrand_randint(rng, 1, 9);
    list_append(&g->divers, x, y, lr, DIVER_MOVE_INTERVAL, 0);
}

static void player_action(MinatarSeaquest *g, int a) {
    if (a == MINATAR_FIRE && g->shot_timer == 0) {
        list_append(&g->f_bullets, g->sub_x, g->sub_y, g->sub_or, 0, 0);
        g->shot_timer = SHOT_COOL_DOWN;
    } else if (a == MINATAR_LEFT) {
        g->sub_x = g->sub_x - 1 > 0 ? g->sub_x - 1 : 0;
        g->sub_or = false;
    } else if (a == MINATAR_RIGHT) {
        g->sub_x = g->sub_x + 1 < 9 ? g->sub_x + 1 : 9;
        g->sub_or = true;
    } else if (a == MINATAR_UP) {
        g->sub_y = g->sub_y - 1 > 0 ? g->sub_y - 1 : 0;
    } else if (a == MINATAR_DOWN) {
        g->sub_y = g->sub_y + 1 < 8 ? g->sub_y + 1 : 8;
    }
}

/* `for x in targets: if bullet[0:2] == x[0:2]: targets.remove(x);
 * f_bullets.remove(bullet); r += 1; break`: returns whether one was hit. */
static bool bullet_hits(MinatarSeaquest *g, MinatarList *targets, MinatarRec *bullet) {
    for (int i = 0; i < targets->len; i++) {
        MinatarRec *x = list_at(targets, i);
        if (!at(x, bullet->v[X], bullet->v[Y])) continue;
        list_remove(targets, x);
        list_remove(&g->f_bullets, bullet);
        return true;
    }
    return false;
}

static int update_friendly_bullets(MinatarSeaquest *g) {
    int r = 0;
    FOR_REVERSED(&g->f_bullets, it) {
        MinatarRec *bullet = list_at(&g->f_bullets, it);
        step_x(bullet);
        if (out_of_screen(bullet)) {
            list_remove(&g->f_bullets, bullet);
        } else if (bullet_hits(g, &g->e_fish, bullet)) {
            r += 1;
        } else if (bullet_hits(g, &g->e_subs, bullet)) {
            r += 1;
        }
    }
    return r;
}

/* A diver on the submarine is picked up while fewer than 6 are aboard. */
static bool pick_up(MinatarSeaquest *g, MinatarRec *diver) {
    if (!at(diver, g->sub_x, g->sub_y) || g->diver_count >= 6) return false;
    list_remove(&g->divers, diver);
    g->diver_count += 1;
    return true;
}

static void update_divers(MinatarSeaquest *g) {
    FOR_REVERSED(&g->divers, it) {
        MinatarRec *diver = list_at(&g->divers, it);
        if (pick_up(g, diver)) continue;
        if (diver->v[MOVE] == 0) {
            diver->v[MOVE] = DIVER_MOVE_INTERVAL;
            step_x(diver);
            if (out_of_screen(diver)) list_remove(&g->divers, diver);
            else pick_up(g, diver);
        } else {
            diver->v[MOVE] -= 1;
        }
    }
}

/* The shared part of the subs' and the fish's turn: touch, move, leave
 * the screen, touch again, or meet a friendly bullet (+1, both removed).
 * Returns the reward. */
static int enemy_turn(MinatarSeaquest *g, MinatarList *list, MinatarRec *e) {
    if (at(e, g->sub_x, g->sub_y)) g->terminal = true;
    if (e->v[MOVE] != 0) {
        e->v[MOVE] -= 1;
        return 0;
    }
    e->v[MOVE] = g->move_speed;
    step_x(e);
    if (out_of_screen(e)) {
        list_remove(list, e);
    } else if (at(e, g->sub_x, g->sub_y)) {
        g->terminal = true;
    } else {
        for (int i = 0; i < g->f_bullets.len; i++) {
            MinatarRec *x = list_at(&g->f_bullets, i);
            if (!at(e, x->v[X], x->v[Y])) continue;
            list_remove(list, e);
            list_remove(&g->f_bullets, x);
            return 1;
        }
    }
    return 0;
}

static int update_enemy_subs(MinatarSeaquest *g) {
    int r = 0;
    FOR_REVERSED(&g->e_subs, it) {
        /* The pool slot stays valid after the sub's removal: it still
         * fires (the reference reads the removed list). */
        MinatarRec *sub = list_at(&g->e_subs, it);
        r += enemy_turn(g, &g->e_subs, sub);
        if (sub->v[SHOT] == 0) {
            sub->v[SHOT] = ENEMY_SHOT_INTERVAL;
            list_append(&g->e_bullets, sub->v[X], sub->v[Y], sub->v[LR], 0, 0);
        } else {
            sub->v[SHOT] -= 1;
        }
    }
    return r;
}

static void update_enemy_bullets(MinatarSeaquest *g) {
    FOR_REVERSED(&g->e_bullets, it) {
        MinatarRec *bullet = list_at(&g->e_bullets, it);
        if (at(bullet, g->sub_x, g->sub_y)) g->terminal = true;
        step_x(bullet);
        if (out_of_screen(bullet)) list_remove(&g->e_bullets, bullet);
        else if (at(bullet, g->sub_x, g->sub_y)) g->terminal = true;
    }
}

static int update_enemy_fish(MinatarSeaquest *g) {
    int r = 0;
    FOR_REVERSED(&g->e_fish, it) r += enemy_turn(g, &g->e_fish, list_at(&g->e_fish, it));
    return r;
}

/* _surface */
static int surface(MinatarSeaquest *g, bool ramping) {
    int r = 0;
    g->surface = true;
    if (g->diver_count == 6) {
        g->diver_count = 0;
        r = g->oxygen * 10 / MAX_OXYGEN; /* oxygen >= 0 here: // is / */
    }
    g->oxygen = MAX_OXYGEN;
    g->diver_count -= 1;
    if (ramping && (g->e_spawn_speed > 1 || g->move_speed > 2)) {
        if (g->move_speed > 2 && g->ramp_index % 2) g->move_speed -= 1;
        if (g->e_spawn_speed > 1) g->e_spawn_speed -= 1;
        g->ramp_index += 1;
    }
    return r;
}

static int timers_and_oxygen(MinatarSeaquest *g, bool ramping) {
    g->e_spawn_timer -= g->e_spawn_timer > 0;
    g->d_spawn_timer -= g->d_spawn_timer > 0;
    g->shot_timer -= g->shot_timer > 0;
    if (g->oxygen <= 0) g->terminal = true;
    if (g->sub_y > 0) {
        g->oxygen -= 1;
        g->surface = false;
    } else if (!g->surface) {
        if (g->diver_count == 0) g->terminal = true;
        else return surface(g, ramping);
    }
    return 0;
}

int seaquest_act(MinatarSeaquest *g, MtRand *rng, bool ramping, int a, bool *terminal) {
    int r = 0;
    if (g->terminal) {
        *terminal = true;
        return r;
    }
    if (g->e_spawn_timer == 0) {
        spawn_enemy(g, rng);
        g->e_spawn_timer = g->e_spawn_speed;
    }
    if (g->d_spawn_timer == 0) {
        spawn_diver(g, rng);
        g->d_spawn_timer = DIVER_SPAWN_SPEED;
    }
    player_action(g, a);
    r += update_friendly_bullets(g);
    update_divers(g);
    r += update_enemy_subs(g);
    update_enemy_bullets(g);
    r += update_enemy_fish(g);
    r += timers_and_oxygen(g, ramping);
    *terminal = g->terminal;
    return r;
}

/* An enemy's or a diver's cell and its trail behind it. */
static void draw_mover(float *obs, const MinatarList *l, int ch) {
    for (int i = 0; i < l->len; i++) {
        const MinatarRec *e = &l->pool[l->idx[i]];
        minatar_set(obs, N_CH, e->v[Y], e->v[X], ch);
        int back_x = e->v[LR] ? e->v[X] - 1 : e->v[X] + 1;
        if (back_x >= 0 && back_x <= 9) minatar_set(obs, N_CH, e->v[Y], back_x, CH_TRAIL);
    }
}

void seaquest_state(const MinatarSeaquest *g, float *obs) {
    minatar_set(obs, N_CH, g->sub_y, g->sub_x, CH_SUB_FRONT);
    /* The back is never off the screen: facing left (from moving left)
     * at x 9, or right at x 0, cannot happen. numpy would wrap -1 to 9. */
    int back_x = g->sub_or ? g->sub_x - 1 : g->sub_x + 1;
    if (back_x < 0) back_x += MINATAR_COLS;
    if (back_x <= 9) minatar_set(obs, N_CH, g->sub_y, back_x, CH_SUB_BACK);
    int oxy = (g->oxygen > 0 ? g->oxygen : 0) * 10 / MAX_OXYGEN;
    for (int x = 0; x < oxy; x++) minatar_set(obs, N_CH, 9, x, CH_OXYGEN_GUAGE);
    for (int x = 9 - g->diver_count; x < 9; x++) /* a slice: empty if diver_count <= 0 */
        if (x >= 0) minatar_set(obs, N_CH, 9, x, CH_DIVER_GUAGE);
    const MinatarList *bl[2] = {&g->f_bullets, &g->e_bullets};
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < bl[k]->len; i++) {
            const MinatarRec *b = &bl[k]->pool[bl[k]->idx[i]];
            minatar_set(obs, N_CH, b->v[Y], b->v[X], k ? CH_ENEMY_BULLET : CH_FRIENDLY_BULLET);
        }
    draw_mover(obs, &g->e_fish, CH_ENEMY_FISH);
    draw_mover(obs, &g->e_subs, CH_ENEMY_SUB);
    draw_mover(obs, &g->divers, CH_DIVER);
}
