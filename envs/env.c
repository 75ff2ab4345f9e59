/* SPDX-License-Identifier: MIT */
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

int env_spec_check(const EnvSpec *spec, char *err) {
    if (!spec) return errf(err, "env: no spec (NULL)");
    if (!spec->name) return errf(err, "env (unnamed): name is NULL");
    const char *n = spec->name;
    if (!n[0]) return errf(err, "env \"\": name is empty");
    for (const char *p = n; *p; p++)
        if (*p <= ' ' || *p == 0x7f) return errf(err, "env \"%s\": name has a blank or control character", n);
    if (spec->obs_dim < 1) return errf(err, "env \"%s\": obs_dim %d is below 1", n, spec->obs_dim);
    if (spec->obs_dim > ENV_MAX_OBS)
        return errf(err, "env \"%s\": obs_dim %d exceeds ENV_MAX_OBS (%d)", n, spec->obs_dim, ENV_MAX_OBS);
    if (spec->num_actions < 2) return errf(err, "env \"%s\": num_actions %d is below 2", n, spec->num_actions);
    if (spec->num_actions > ENV_MAX_ACTIONS)
        return errf(err, "env \"%s\": num_actions %d exceeds ENV_MAX_ACTIONS (%d)", n, spec->num_actions,
                    ENV_MAX_ACTIONS);
    if (spec->state_dim < 1) return errf(err, "env \"%s\": state_dim %d is below 1", n, spec->state_dim);
    if (spec->state_dim > ENV_MAX_STATE)
        return errf(err, "env \"%s\": state_dim %d exceeds ENV_MAX_STATE (%d)", n, spec->state_dim, ENV_MAX_STATE);
    if (spec->max_episode_steps < 1)
        return errf(err, "env \"%s\": max_episode_steps %d is below 1", n, spec->max_episode_steps);
    if (!isfinite(spec->reward_threshold))
        return errf(err, "env \"%s\": reward_threshold %g is not finite", n, spec->reward_threshold);
    if (!spec->reset_state) return errf(err, "env \"%s\": reset_state is NULL", n);
    if (!spec->dynamics) return errf(err, "env \"%s\": dynamics is NULL", n);
    if (!spec->observe) return errf(err, "env \"%s\": observe is NULL", n);
    if (!spec->obs_low != !spec->obs_high)
        return errf(err, "env \"%s\": obs_low and obs_high must be both set or both NULL", n);
    if (spec->obs_low) {
        for (int i = 0; i < spec->obs_dim; i++) {
            float lo = spec->obs_low[i], hi = spec->obs_high[i];
            if (isnan(lo) || isnan(hi) || !(lo <= hi))
                return errf(err, "env \"%s\": obs bounds [%g, %g] of component %d are not ordered numbers", n,
                            (double)lo, (double)hi, i);
        }
    }
    return 0;
}

int env_registry_check(char *err) {
    for (int i = 0; i < env_registry_count; i++) {
        if (env_spec_check(env_registry[i], err) < 0) return err_prefix(err, "registry entry %d", i);
        for (int j = 0; j < i; j++)
            if (!strcmp(env_registry[j]->name, env_registry[i]->name))
                return errf(err, "registry entries %d and %d are both named \"%s\"", j, i, env_registry[i]->name);
    }
    return 0;
}

int env_init(Env *e, const EnvSpec *spec, const EnvOptions *opt, uint64_t seed, uint64_t stream, char *err) {
    static const EnvOptions defaults;
    memset(e, 0, sizeof *e);
    if (env_spec_check(spec, err) < 0) return -1;
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
