/* SPDX-License-Identifier: GPL-3.0-or-later */
/* minatar.h: MinAtar's five games (Asterix, Breakout, Freeway, Seaquest,
 * Space Invaders) and the reference's Environment wrapper (sticky actions,
 * difficulty ramping, one shared RandomState), bit-exact with the
 * reference: seeded with S and given the same actions, every reward,
 * terminal flag and state() cell equals minatar.Environment's.
 *
 * Part of gorila's port of MinAtar (Young & Tian 2019; github
 * kenjyoung/MinAtar, release 1.0.15, GPL-3.0-or-later): the game rules are
 * a C rewriting of minatar/environment.py and minatar/environments/ (one file per game);
 * see envs/minatar/README.md.
 *
 * Use: minatar_init (no seed yet: the reference's constructor draws from an
 * unseeded generator, so callers seed before reset), minatar_seed,
 * minatar_reset, then minatar_act / minatar_state. No allocation, no
 * printing, no global state: a Minatar is plain data (copyable). */
#ifndef GORILA_MINATAR_H
#define GORILA_MINATAR_H

#include "mtrand.h"

#include <stdbool.h>
#include <stdint.h>

typedef enum {
    MINATAR_ASTERIX,
    MINATAR_BREAKOUT,
    MINATAR_FREEWAY,
    MINATAR_SEAQUEST,
    MINATAR_SPACE_INVADERS,
    MINATAR_GAME_COUNT
} MinatarGame;

enum {
    MINATAR_ROWS = 10,
    MINATAR_COLS = 10,
    MINATAR_MAX_CHANNELS = 10,
    MINATAR_NUM_ACTIONS = 6, /* n l u r d f, the reference's action_map */
    MINATAR_MAX_CELLS = MINATAR_ROWS * MINATAR_COLS * MINATAR_MAX_CHANNELS,
    /* Seaquest's lists: an enemy lives at most 11 moves of at most 6 steps
     * and at most one spawns a step, so at most 67 are alive; an enemy
     * bullet lives at most 12 steps and a sub fires at most twice in 12:
     * 256 slots per list are never reached. */
    MINATAR_LIST_CAP = 256,
};

/* Python's `if a == 'l'` etc. index the action_map n l u r d f. */
enum { MINATAR_NOOP, MINATAR_LEFT, MINATAR_UP, MINATAR_RIGHT, MINATAR_DOWN, MINATAR_FIRE };

typedef struct {
    int ball_x, ball_y, ball_dir, pos, last_x, last_y;
    bool strike, terminal;
    uint8_t brick[MINATAR_ROWS][MINATAR_COLS];
} MinatarBreakout;

typedef struct {
    int cars[8][4]; /* x, row, timer, signed speed */
    int pos, move_timer, terminate_timer;
    bool terminal;
} MinatarFreeway;

typedef struct {
    bool present, lr, gold;
    int x, y;
} MinatarAsterixEntity;

typedef struct {
    MinatarAsterixEntity ent[8];
    int player_x, player_y, spawn_speed, spawn_timer, move_speed, move_timer, ramp_timer, ramp_index;
    bool terminal;
} MinatarAsterix;

/* One Python list of small int lists (Seaquest's bullets, fish, subs and
 * divers). Elements live in pool slots that stay put while the list's
 * order (idx) shifts, so an element the loop holds keeps its identity
 * across list.remove, which removes the first element equal in value
 * (nfields compared), as Python's does. */
typedef struct {
    int v[5];
} MinatarRec;

typedef struct {
    MinatarRec pool[MINATAR_LIST_CAP];
    uint8_t used[MINATAR_LIST_CAP];
    uint16_t idx[MINATAR_LIST_CAP];
    int len, nfields;
} MinatarList;

typedef struct {
    MinatarList f_bullets, e_bullets, e_fish, e_subs, divers;
    int oxygen, diver_count, sub_x, sub_y;
    int e_spawn_speed, e_spawn_timer, d_spawn_timer, move_speed, ramp_index, shot_timer;
    bool sub_or, surface, terminal;
} MinatarSeaquest;

typedef struct {
    uint8_t f_bullets[MINATAR_ROWS][MINATAR_COLS], e_bullets[MINATAR_ROWS][MINATAR_COLS];
    uint8_t aliens[MINATAR_ROWS][MINATAR_COLS];
    int pos, alien_dir, enemy_move_interval, alien_move_timer, alien_shot_timer, ramp_index, shot_timer;
    bool terminal;
} MinatarSpaceInvaders;

typedef struct {
    MinatarGame game;
    MtRand rng;      /* the one RandomState of wrapper and game */
    int last_action; /* sticky: starts at 0, survives reset */
    double sticky;   /* sticky_action_prob */
    bool ramping;    /* difficulty_ramping */
    union {
        MinatarAsterix asterix;
        MinatarBreakout breakout;
        MinatarFreeway freeway;
        MinatarSeaquest seaquest;
        MinatarSpaceInvaders space_invaders;
    } g;
} Minatar;

/* The reference's module name ("asterix", ..., "space_invaders") and the
 * gym id stem ("Asterix", ..., "SpaceInvaders"). */
const char *minatar_module_name(MinatarGame game);
const char *minatar_title(MinatarGame game);

/* Channels of state(): 4 7 4 10 6 in MinatarGame order. */
int minatar_channels(MinatarGame game);

/* minimal_action_set(): writes the action indices to out (6 at most),
 * returns their count. */
int minatar_minimal_actions(MinatarGame game, int out[MINATAR_NUM_ACTIONS]);

/* Environment(game, sticky_action_prob, difficulty_ramping), unseeded: the
 * game's state is undefined until minatar_seed and minatar_reset. */
void minatar_init(Minatar *m, MinatarGame game, double sticky, bool ramping);

/* Environment.seed(S): a new RandomState(S) for wrapper and game; resets
 * nothing. */
void minatar_seed(Minatar *m, uint32_t seed);

/* Environment.reset(): a new episode (last_action is kept). */
void minatar_reset(Minatar *m);

/* Environment.act(a) for 0 <= a < 6: the sticky draw, then the game's
 * step; returns the reward, sets *terminal. After the end the game returns
 * 0 and terminal, and the sticky draw and last_action still happen. */
int minatar_act(Minatar *m, int action, bool *terminal);

/* Environment.state(): rows x cols x channels cells, 0 or 1, in C order
 * (row, column, channel), written to cells (minatar_channels * 100). */
void minatar_state(const Minatar *m, uint8_t *cells);

/* minatar_state as floats: each of the minatar_channels * 100 values of
 * obs is 1.0f where state() holds 1, else 0.0f (an Env's observation). */
void minatar_observe(const Minatar *m, float *obs);

#endif
