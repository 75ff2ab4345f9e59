/* SPDX-License-Identifier: MIT */
/* env.h: the whole contract between gorila and a simulator.
 *
 * Each environment file (cartpole.c, ...) exports one `const EnvSpec` and
 * keeps everything else static. Environments never allocate, never print and
 * never use a hidden RNG: the generator lives in the Env instance and is
 * seeded by env_init. The internal state is float64, as in Gymnasium; the
 * observation is handed out as float32.
 *
 * The generic part (env.c, which also holds the registry) adds what
 * Gymnasium's TimeLimit wrapper does: a step counter and truncation at
 * max_steps. env_init checks the spec (env_spec_check) before it touches
 * anything, so a spec past the limits below is an error, never a write past
 * a buffer. envcheck.h steps an environment and checks its behaviour
 * (`gorila env check`). Adding an environment: docs/ENVIRONMENTS.md.
 */
#ifndef GORILA_ENV_H
#define GORILA_ENV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rng.h"

/* Limits of any spec, checked by env_spec_check. Only per-instance arrays
 * (Env.state, Env.torques) and the command-line tools' one-observation
 * stack buffers are sized by them; batched observation arrays (actors,
 * evaluator, replay, learner) are sized from spec->obs_dim. Raising one
 * costs 8 bytes per Env per unit (state, torques) or 4 bytes of stack. */
#define ENV_MAX_STATE 64    /* float64 values in any env's internal state */
#define ENV_MAX_OBS 64      /* floats in any env's observation */
#define ENV_MAX_ACTIONS 32  /* discrete actions (Pendulum torque set included) */

typedef struct {
    double reward;
    bool terminated;  /* true end of the task: no bootstrapping */
    bool truncated;   /* time limit reached: bootstrap from the next state */
} EnvStep;

typedef struct Env Env;

/* One environment. Every field is required (env_spec_check) except the
 * observation bounds. The whole episode state lives in e->state[0 ..
 * state_dim): reset_state, dynamics and observe read and write nothing
 * else (no statics, no globals), and all randomness comes from e->rng, so
 * that env_get_state/env_set_state and seeding reproduce an episode. */
typedef struct EnvSpec {
    const char *name;          /* Gymnasium id, e.g. "CartPole-v1": non-empty, no blanks */
    int obs_dim;               /* floats written by observe: 1 .. ENV_MAX_OBS */
    int num_actions;           /* default action count, 2 .. ENV_MAX_ACTIONS (Pendulum: default torque set) */
    int state_dim;             /* float64 values of the internal state: 1 .. ENV_MAX_STATE */
    int max_episode_steps;     /* Gymnasium's registered time limit, >= 1 */
    double reward_threshold;   /* Gymnasium's registered threshold ("solved"), finite */
    /* Draw a fresh internal state from e->rng, as Gymnasium's reset does. */
    void (*reset_state)(Env *e);
    /* Advance e->state by one action (0 .. e->num_actions-1); fill reward
     * (finite) and terminated (never truncated: the time limit is the
     * generic layer's). */
    EnvStep (*dynamics)(Env *e, int action);
    /* Observation of e->state: exactly obs_dim finite floats. */
    void (*observe)(const Env *e, float *obs);
    /* Optional: bounds of every observation, obs_dim floats each, as
     * Gymnasium's observation_space.low/high (+-INFINITY for an unbounded
     * component). Both NULL (no bounds) or both set with low[i] <= high[i].
     * Only `gorila env check` reads them. */
    const float *obs_low, *obs_high;
} EnvSpec;

/* Per-instance options. Zero-initialised means "all defaults". */
typedef struct {
    int max_episode_steps;             /* 0 = spec default */
    int n_torques;                     /* Pendulum: 0 = default {-2, 0, 2} */
    double torques[ENV_MAX_ACTIONS];
} EnvOptions;

struct Env {
    const EnvSpec *spec;
    double state[ENV_MAX_STATE];
    int t;                             /* steps since reset / set_state */
    bool terminated;                   /* a step of this episode has terminated: Gymnasium's
                                        * CartPole pays 0 for steps beyond termination */
    int max_steps;
    int num_actions;
    double torques[ENV_MAX_ACTIONS];   /* Pendulum discrete torques */
    Rng rng;
};

/* All environments, in a fixed order, and their number. */
extern const EnvSpec *const env_registry[];
extern const int env_registry_count;

/* Look an environment up by its exact name; NULL if unknown. */
const EnvSpec *env_find(const char *name);

/* Check spec's fields against the rules beside them in EnvSpec and the
 * limits above. Returns 0, or -1 with one line in err (ERR_LEN bytes) that
 * names the environment, the field and the limit, e.g.
 * `env "Foo-v0": obs_dim 80 exceeds ENV_MAX_OBS (64)`. spec may be NULL
 * (an error). */
int env_spec_check(const EnvSpec *spec, char *err);

/* env_spec_check on every registered spec, and no two with one name.
 * Returns 0, or -1 with the first problem in err. */
int env_registry_check(char *err);

/* Prepare an instance (no allocation). seed and stream seed e->rng with
 * rng_seed(&e->rng, seed, stream). Returns 0, or -1 with a message in err
 * (ERR_LEN bytes) for a spec that fails env_spec_check or bad options
 * (torques for a non-Pendulum env, too many actions, non-finite torque). */
int env_init(Env *e, const EnvSpec *spec, const EnvOptions *opt, uint64_t seed, uint64_t stream, char *err);

/* Start an episode: new internal state from e->rng, t = 0, write obs. */
void env_reset(Env *e, float *obs);

/* Apply action (0 .. num_actions-1), advance t, write obs; truncated is set
 * when t reaches max_steps and the episode did not terminate. */
EnvStep env_step(Env *e, int action, float *obs);

/* Copy the internal state out (state_dim doubles). */
void env_get_state(const Env *e, double *state);

/* Set the internal state (state_dim doubles) and start a new episode
 * (t = 0), writing the observation of that state. */
void env_set_state(Env *e, const double *state, float *obs);

#endif
