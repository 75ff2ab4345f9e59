/* env.h: the whole contract between gorila and a simulator.
 *
 * Each environment file (cartpole.c, ...) exports one `const EnvSpec` and
 * keeps everything else static. Environments never allocate, never print and
 * never use a hidden RNG: the generator lives in the Env instance and is
 * seeded by env_init. The internal state is float64, as in Gymnasium; the
 * observation is handed out as float32.
 *
 * The generic part (env.c / registry.c) adds what Gymnasium's TimeLimit
 * wrapper does: a step counter and truncation at max_steps.
 */
#ifndef GORILA_ENV_H
#define GORILA_ENV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rng.h"

#define ENV_MAX_STATE 8     /* float64 values in any env's internal state */
#define ENV_MAX_OBS 8       /* floats in any env's observation */
#define ENV_MAX_ACTIONS 32  /* discrete actions (Pendulum torque set included) */

typedef struct {
    double reward;
    bool terminated;  /* true end of the task: no bootstrapping */
    bool truncated;   /* time limit reached: bootstrap from the next state */
} EnvStep;

typedef struct Env Env;

typedef struct EnvSpec {
    const char *name;          /* Gymnasium id, e.g. "CartPole-v1" */
    int obs_dim;               /* floats written by reset and step */
    int num_actions;           /* default action count (Pendulum: default torque set) */
    int state_dim;             /* float64 values of the internal state */
    int max_episode_steps;     /* Gymnasium's registered time limit */
    double reward_threshold;   /* Gymnasium's registered threshold ("solved") */
    /* Draw a fresh internal state from e->rng, as Gymnasium's reset does. */
    void (*reset_state)(Env *e);
    /* Advance e->state by one action; fill reward and terminated (never
     * truncated: the time limit is the generic layer's). */
    EnvStep (*dynamics)(Env *e, int action);
    /* Observation of e->state, obs_dim floats. */
    void (*observe)(const Env *e, float *obs);
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

/* Prepare an instance (no allocation). seed and stream seed e->rng with
 * rng_seed(&e->rng, seed, stream). Returns 0, or -1 with a message in err
 * (ERR_LEN bytes) for bad options (torques for a non-Pendulum env, too many
 * actions, non-finite torque). */
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
