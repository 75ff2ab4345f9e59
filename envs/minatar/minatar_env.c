/* SPDX-License-Identifier: GPL-3.0-or-later */
/* minatar_env.c: MinAtar's five games as gorila environments (env.h), the
 * ten ids minatar/gym.py registers: MinAtar/<Game>-v0 (all 6 actions, as
 * the published results) and MinAtar/<Game>-v1 (the game's minimal action
 * set, action i meaning minimal_action_set()[i]).
 *
 * Each instance is one reference Environment(game, sticky_action_prob,
 * difficulty_ramping) held whole in the Env's byte state (e->ext: a
 * Minatar, plain data of about 32 KB): the game's objects, its MT19937
 * generator and the sticky last_action all go through env_get_state /
 * env_set_state. The options (EnvOptions: sticky actions, default 0.1;
 * difficulty ramping, default on) are the instance's (e->sticky,
 * e->ramping) and are applied before every step, so a state set from
 * another instance never changes them.
 *
 * Seeding: env_init(seed, stream) seeds e->rng, and init_ext draws the
 * reference's seed S = the high 32 bits of e->rng's next word, in [0,
 * 2^32), deterministic in (seed, stream); Environment.seed(S). That one
 * generator then runs across every episode of the instance, as the
 * reference's Environment does (reset does not reseed it; e->rng is not
 * used again). No time limit and no reward threshold of their own (the
 * reference registers none): env.max_episode_steps and env.reward_threshold
 * of a config supply them.
 *
 * Observation: state() as binary planes, 10 x 10 x C in C order (row,
 * column, channel), each cell 0.0f or 1.0f; C is 4, 4, 7, 10, 6.
 *
 * Part of gorila's port of MinAtar (Young & Tian 2019; github
 * kenjyoung/MinAtar, GPL-3.0-or-later): see envs/minatar/README.md. */
#include "env.h"
#include "env_specs.h"
#include "minatar.h"

#include <string.h>

/* spec index k: game k / 2, minimal action set when k is odd. */
static int spec_index(const EnvSpec *spec) { return (int)(spec - env_minatar); }

static void minatar_env_init(Env *e) {
    int k = spec_index(e->spec);
    Minatar *m = e->ext;
    minatar_init(m, (MinatarGame)(k / 2), e->sticky, e->ramping);
    minatar_seed(m, (uint32_t)(rng_next(&e->rng) >> 32));
}

static void minatar_env_reset(Env *e) { minatar_reset(e->ext); }

static EnvStep minatar_env_dynamics(Env *e, int action) {
    Minatar *m = e->ext;
    int a = action;
    if (spec_index(e->spec) % 2) {
        int set[MINATAR_NUM_ACTIONS];
        minatar_minimal_actions(m->game, set);
        a = set[action];
    }
    m->sticky = e->sticky;
    m->ramping = e->ramping;
    bool terminal;
    int reward = minatar_act(m, a, &terminal);
    return (EnvStep){.reward = reward, .terminated = terminal};
}

static void minatar_env_observe(const Env *e, float *obs) { minatar_observe(e->ext, obs); }

#define CELLS(c) (MINATAR_ROWS * MINATAR_COLS * (c))
#define MINATAR_SPEC(id, ch, acts)                                                                     \
    {                                                                                                  \
        .name = id, .obs_dim = CELLS(ch), .obs_type = ENV_OBS_PLANES,                                  \
        .obs_shape = {MINATAR_ROWS, MINATAR_COLS, ch}, .num_actions = acts, .state_bytes = sizeof(Minatar), \
        .max_episode_steps = 0, .reward_threshold = ENV_NO_THRESHOLD, .options = ENV_TAKES_MINATAR,    \
        .init_ext = minatar_env_init, .reset_state = minatar_env_reset, .dynamics = minatar_env_dynamics, \
        .observe = minatar_env_observe,                                                                \
    }

/* Channels 4 4 7 10 6 and minimal action sets of 5 3 3 6 4 (minatar.c);
 * tests/unit/test_env.c holds these against minatar_channels and
 * minatar_minimal_actions. */
const EnvSpec env_minatar[ENV_MINATAR_COUNT] = {
    MINATAR_SPEC("MinAtar/Asterix-v0", 4, 6),       MINATAR_SPEC("MinAtar/Asterix-v1", 4, 5),
    MINATAR_SPEC("MinAtar/Breakout-v0", 4, 6),      MINATAR_SPEC("MinAtar/Breakout-v1", 4, 3),
    MINATAR_SPEC("MinAtar/Freeway-v0", 7, 6),       MINATAR_SPEC("MinAtar/Freeway-v1", 7, 3),
    MINATAR_SPEC("MinAtar/Seaquest-v0", 10, 6),     MINATAR_SPEC("MinAtar/Seaquest-v1", 10, 6),
    MINATAR_SPEC("MinAtar/SpaceInvaders-v0", 6, 6), MINATAR_SPEC("MinAtar/SpaceInvaders-v1", 6, 4),
};
