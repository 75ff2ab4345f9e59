/* SPDX-License-Identifier: GPL-3.0-or-later */
/* minatar.c: see minatar.h. The wrapper is the reference's
 * minatar/environment.py Environment: one RandomState shared by wrapper and
 * game, the sticky test drawn before every game step (even a step after the
 * end), last_action kept across episodes.
 *
 * Part of gorila's port of MinAtar (Young & Tian 2019; github
 * kenjyoung/MinAtar, GPL-3.0-or-later): see envs/minatar/README.md. */
#include "minatar.h"

#include "games.h"

#include <string.h>

static const char *const module_names[MINATAR_GAME_COUNT] = {"asterix", "breakout", "freeway", "seaquest",
                                                             "space_invaders"};
static const char *const titles[MINATAR_GAME_COUNT] = {"Asterix", "Breakout", "Freeway", "Seaquest",
                                                       "SpaceInvaders"};
static const int channel_counts[MINATAR_GAME_COUNT] = {4, 4, 7, 10, 6};

const char *minatar_module_name(MinatarGame game) { return module_names[game]; }

const char *minatar_title(MinatarGame game) { return titles[game]; }

int minatar_channels(MinatarGame game) { return channel_counts[game]; }

int minatar_minimal_actions(MinatarGame game, int out[MINATAR_NUM_ACTIONS]) {
    /* Each game's minimal_actions, as indices of n l u r d f. */
    static const int sets[MINATAR_GAME_COUNT][MINATAR_NUM_ACTIONS + 1] = {
        [MINATAR_ASTERIX] = {5, MINATAR_NOOP, MINATAR_LEFT, MINATAR_UP, MINATAR_RIGHT, MINATAR_DOWN},
        [MINATAR_BREAKOUT] = {3, MINATAR_NOOP, MINATAR_LEFT, MINATAR_RIGHT},
        [MINATAR_FREEWAY] = {3, MINATAR_NOOP, MINATAR_UP, MINATAR_DOWN},
        [MINATAR_SEAQUEST] = {6, MINATAR_NOOP, MINATAR_LEFT, MINATAR_UP, MINATAR_RIGHT, MINATAR_DOWN, MINATAR_FIRE},
        [MINATAR_SPACE_INVADERS] = {4, MINATAR_NOOP, MINATAR_LEFT, MINATAR_RIGHT, MINATAR_FIRE},
    };
    int n = sets[game][0];
    for (int i = 0; i < n; i++) out[i] = sets[game][i + 1];
    return n;
}

void minatar_init(Minatar *m, MinatarGame game, double sticky, bool ramping) {
    memset(m, 0, sizeof *m);
    m->game = game;
    m->sticky = sticky;
    m->ramping = ramping;
    m->last_action = 0;
    mtrand_seed(&m->rng, 0); /* a placeholder: callers seed before reset */
}

void minatar_seed(Minatar *m, uint32_t seed) { mtrand_seed(&m->rng, seed); }

void minatar_reset(Minatar *m) {
    switch (m->game) {
    case MINATAR_ASTERIX: asterix_reset(&m->g.asterix); break;
    case MINATAR_BREAKOUT: breakout_reset(&m->g.breakout, &m->rng); break;
    case MINATAR_FREEWAY: freeway_reset(&m->g.freeway, &m->rng); break;
    case MINATAR_SEAQUEST: seaquest_reset(&m->g.seaquest); break;
    case MINATAR_SPACE_INVADERS: space_invaders_reset(&m->g.space_invaders); break;
    case MINATAR_GAME_COUNT: break;
    }
}

int minatar_act(Minatar *m, int action, bool *terminal) {
    if (mtrand_rand(&m->rng) < m->sticky) action = m->last_action;
    m->last_action = action;
    *terminal = true;
    switch (m->game) {
    case MINATAR_ASTERIX: return asterix_act(&m->g.asterix, &m->rng, m->ramping, action, terminal);
    case MINATAR_BREAKOUT: return breakout_act(&m->g.breakout, action, terminal);
    case MINATAR_FREEWAY: return freeway_act(&m->g.freeway, &m->rng, action, terminal);
    case MINATAR_SEAQUEST: return seaquest_act(&m->g.seaquest, &m->rng, m->ramping, action, terminal);
    case MINATAR_SPACE_INVADERS: return space_invaders_act(&m->g.space_invaders, m->ramping, action, terminal);
    case MINATAR_GAME_COUNT: break;
    }
    return 0;
}

void minatar_observe(const Minatar *m, float *obs) {
    memset(obs, 0, sizeof(float) * MINATAR_ROWS * MINATAR_COLS * (size_t)minatar_channels(m->game));
    switch (m->game) {
    case MINATAR_ASTERIX: asterix_state(&m->g.asterix, obs); break;
    case MINATAR_BREAKOUT: breakout_state(&m->g.breakout, obs); break;
    case MINATAR_FREEWAY: freeway_state(&m->g.freeway, obs); break;
    case MINATAR_SEAQUEST: seaquest_state(&m->g.seaquest, obs); break;
    case MINATAR_SPACE_INVADERS: space_invaders_state(&m->g.space_invaders, obs); break;
    case MINATAR_GAME_COUNT: break;
    }
}

void minatar_state(const Minatar *m, uint8_t *cells) {
    float obs[MINATAR_MAX_CELLS];
    minatar_observe(m, obs);
    int n = MINATAR_ROWS * MINATAR_COLS * minatar_channels(m->game);
    for (int i = 0; i < n; i++) cells[i] = obs[i] != 0.0f;
}
