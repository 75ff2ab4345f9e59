/* env.c: the generic layer over the bundled environments and their registry.
 *
 * Owns what Gymnasium's wrappers add around an environment's own step():
 * the TimeLimit counter (t, max_steps) and the per-instance options
 * (Pendulum's discrete torque set). The dynamics live in one file per
 * environment (cartpole.c, mountaincar.c, acrobot.c, pendulum.c).
 *
 * Time limit: Gymnasium's TimeLimit reports truncated once the step count
 * reaches max_episode_steps, even on a step that also terminated. gorila
 * reports such a step as terminated only (terminated wins: the two flags
 * never both hold), so a learner never bootstraps past a true end.
 */
#include "env.h"
#include "env_specs.h"
#include "util.h"

#include <assert.h>
#include <math.h>
#include <string.h>

const EnvSpec *const env_registry[] = {&env_cartpole, &env_mountaincar, &env_acrobot, &env_pendulum};
const int env_registry_count = (int)(sizeof env_registry / sizeof env_registry[0]);

const EnvSpec *env_find(const char *name) {
    for (int i = 0; i < env_registry_count; i++)
        if (!strcmp(env_registry[i]->name, name)) return env_registry[i];
    return NULL;
}

int env_init(Env *e, const EnvSpec *spec, const EnvOptions *opt, uint64_t seed, uint64_t stream, char *err) {
    static const EnvOptions defaults;
    memset(e, 0, sizeof *e);
    if (!opt) opt = &defaults;
    if (opt->max_episode_steps < 0)
        return errf(err, "%s: max_episode_steps must be >= 0 (0 = default %d), got %d", spec->name,
                    spec->max_episode_steps, opt->max_episode_steps);
    e->spec = spec;
    e->max_steps = opt->max_episode_steps ? opt->max_episode_steps : spec->max_episode_steps;
    e->num_actions = spec->num_actions;
    if (spec == &env_pendulum) {
        if (opt->n_torques < 0 || opt->n_torques > ENV_MAX_ACTIONS)
            return errf(err, "%s: expected 1 to %d torques, got %d", spec->name, ENV_MAX_ACTIONS, opt->n_torques);
        if (opt->n_torques == 0) {
            static const double def[ENV_PENDULUM_DEFAULT_TORQUES] = {-2.0, 0.0, 2.0};
            memcpy(e->torques, def, sizeof def);
            e->num_actions = ENV_PENDULUM_DEFAULT_TORQUES;
        } else {
            for (int i = 0; i < opt->n_torques; i++) {
                if (!isfinite(opt->torques[i]))
                    return errf(err, "%s: torque %d is not a finite number", spec->name, i + 1);
                e->torques[i] = opt->torques[i];
            }
            e->num_actions = opt->n_torques;
        }
    } else if (opt->n_torques != 0) {
        return errf(err, "%s: a torque set applies to Pendulum-v1 only", spec->name);
    }
    rng_seed(&e->rng, seed, stream);
    return 0;
}

void env_reset(Env *e, float *obs) {
    e->spec->reset_state(e);
    e->t = 0;
    e->terminated = false;
    e->spec->observe(e, obs);
}

EnvStep env_step(Env *e, int action, float *obs) {
    assert(action >= 0 && action < e->num_actions);
    EnvStep r = e->spec->dynamics(e, action);
    e->t++;
    e->terminated = e->terminated || r.terminated;
    r.truncated = !r.terminated && e->t >= e->max_steps;
    e->spec->observe(e, obs);
    return r;
}

void env_get_state(const Env *e, double *state) { memcpy(state, e->state, (size_t)e->spec->state_dim * sizeof *state); }

void env_set_state(Env *e, const double *state, float *obs) {
    memcpy(e->state, state, (size_t)e->spec->state_dim * sizeof *state);
    e->t = 0;
    e->terminated = false;
    e->spec->observe(e, obs);
}
