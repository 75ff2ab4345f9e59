/* SPDX-License-Identifier: MIT */
/* envcheck.h: behavioural checks of one environment, in the spirit of
 * Stable-Baselines3's check_env: `gorila env check NAME` prints them, unit
 * tests run them on deliberately broken environments.
 *
 * envcheck_run steps the environment with uniformly random actions for a
 * number of episodes and checks what env.h promises about an EnvSpec and
 * what the actors and the learner rely on. It prints nothing and keeps no
 * state (the report is the caller's); it allocates only its instances'
 * byte states and one state buffer, released before it returns. Each item below is
 * one check; the first violation of each is kept, with where it happened
 * ("episode 3 step 17: ...").
 *
 *   spec         env_spec_check, and env_init accepts the options
 *   obs_dim      reset and step write all obs_dim floats and nothing past them
 *   state_dim    reset and step touch only state[0 .. state_dim) (or the
 *                byte state); the observation is a function of the state,
 *                and a copy made with env_get_state/env_set_state takes the
 *                same next step (so the replay protocol, state round trips
 *                and checkpoints of an env slot hold)
 *   obs_finite   every observation finite (reset, step)
 *   obs_bounds   every observation within spec->obs_low/obs_high (skipped
 *                when the spec declares none); planes: every cell exactly
 *                0.0f or 1.0f; steps past the end excluded
 *   reward       every reward finite
 *   flags        dynamics never reports truncated; the episode ends at the
 *                first flag; truncated exactly when the step count reaches
 *                the time limit, never without one (also checked with a
 *                2-step limit);
 *                terminated and truncated never both
 *   past_end     3 steps past the end of an episode without reset (allowed,
 *                as in Gymnasium) still give finite observations and rewards
 *   determinism  two instances with one seed and one action sequence give
 *                bit-identical observations, rewards, flags and states, and
 *                a step is a function of the Env value (no hidden state)
 *   seed         another seed gives another trajectory (reset draws from
 *                e->rng)
 *
 * An episode still running after ENVCHECK_MAX_EPISODE_STEPS fails flags.
 * An external environment (spec->ext_hooks: the Python bridge) has no
 * state to copy: state_dim and past_end are skipped, saying why, and so is
 * determinism's copy of the Env (two instances seeded alike must still
 * match); dynamics may truncate at any step (its own limit); a failure of
 * its code (Env.failed) fails the check EnvExtern.failure names and stops
 * the run, the checks not finished then skipped ("not run to the end").
 * The items' `what` then reads as the Python contract (spec: the Gymnasium
 * API).
 */
#ifndef GORILA_ENVCHECK_H
#define GORILA_ENVCHECK_H

#include "env.h"
#include "util.h"

typedef enum { ENVCHECK_PASS, ENVCHECK_FAIL, ENVCHECK_SKIP } EnvCheckStatus;

enum {
    ENVCHECK_SPEC,
    ENVCHECK_OBS_DIM,
    ENVCHECK_STATE_DIM,
    ENVCHECK_OBS_FINITE,
    ENVCHECK_OBS_BOUNDS,
    ENVCHECK_REWARD,
    ENVCHECK_FLAGS,
    ENVCHECK_PAST_END,
    ENVCHECK_DETERMINISM,
    ENVCHECK_SEED,
    ENVCHECK_COUNT
};

#define ENVCHECK_EPISODES_DEFAULT 10
/* An episode still running after this many steps fails flags (and ends the run). */
#define ENVCHECK_MAX_EPISODE_STEPS 100000

typedef struct {
    const char *name;      /* short id, as in the list above: "obs_dim" */
    const char *what;      /* the property checked, one line */
    EnvCheckStatus status;
    char detail[ERR_LEN];  /* FAIL: the first violation and where; PASS/SKIP: a note or "" */
} EnvCheckItem;

typedef struct {
    int episodes;   /* random-action episodes, >= 1 (0 = ENVCHECK_EPISODES_DEFAULT) */
    uint64_t seed;  /* envs (seed, RNG_STREAM_ENV), policy (seed, RNG_STREAM_TOOL);
                     * the seed check uses seed + 1 */
} EnvCheckOptions;

typedef struct {
    EnvCheckItem item[ENVCHECK_COUNT]; /* in the enum's order */
    int failed;                        /* items with ENVCHECK_FAIL */
    int episodes;                      /* episodes run */
    uint64_t steps;                    /* steps of the checked instance */
    int num_actions;                   /* actions drawn from (0 before env_init) */
} EnvCheckReport;

/* Run every check on spec with options opt (NULL: defaults) and co (NULL:
 * defaults) and fill rep. Returns rep->failed: 0 when every check passed
 * (or was skipped). A spec that fails the spec check skips the others.
 * Cost: about 4 env steps per step of episodes x episode length. */
int envcheck_run(const EnvSpec *spec, const EnvOptions *opt, const EnvCheckOptions *co, EnvCheckReport *rep);

#endif
