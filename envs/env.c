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
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const EnvSpec *const env_registry[] = {
    &env_cartpole, &env_mountaincar, &env_acrobot, &env_pendulum,
#ifdef GORILA_MINATAR
    &env_minatar[0], &env_minatar[1], &env_minatar[2], &env_minatar[3], &env_minatar[4],
    &env_minatar[5], &env_minatar[6], &env_minatar[7], &env_minatar[8], &env_minatar[9],
#endif
};
const int env_registry_count = (int)(sizeof env_registry / sizeof env_registry[0]);

const EnvSpec *env_find(const char *name) {
    for (int i = 0; i < env_registry_count; i++)
        if (!strcmp(env_registry[i]->name, name)) return env_registry[i];
    return NULL;
}

int env_extern_kind(const char *name) {
    if (!strncmp(name, "python:", 7)) return ENV_EXT_PYTHON;
    if (!strncmp(name, "gymnasium:", 10)) return ENV_EXT_GYMNASIUM;
    return 0;
}

/* A dotted path of Python identifiers (ASCII) in s[0..len). */
static bool dotted_path(const char *s, size_t len) {
    bool start = true;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        bool alpha = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
        if (c == '.' && !start) start = true;
        else if (alpha || (!start && c >= '0' && c <= '9')) start = false;
        else return false;
    }
    return len > 0 && !start;
}

int env_extern_check(const char *name, char *err) {
    int kind = env_extern_kind(name);
    if (kind == ENV_EXT_GYMNASIUM) {
        const char *id = name + 10;
        bool ok = *id != '\0';
        for (const char *p = id; *p; p++) ok = ok && *p > ' ' && *p != 0x7f;
        return ok ? 0 : errf(err, "expected gymnasium:ID with a non-empty ID without blanks, got \"%s\"", name);
    }
    if (kind != ENV_EXT_PYTHON) return errf(err, "\"%s\" is not python:MODULE:CALLABLE or gymnasium:ID", name);
    const char *mod = name + 7, *colon = strchr(mod, ':');
    if (!colon || !dotted_path(mod, (size_t)(colon - mod)) || !dotted_path(colon + 1, strlen(colon + 1)))
        return errf(err, "expected python:MODULE:CALLABLE (dotted Python names, e.g. python:mypkg.envs:make), got \"%s\"",
                    name);
    return 0;
}

/* The observation fields: obs_dim within limits, type and shape agree. */
static int check_obs_fields(const EnvSpec *spec, char *err) {
    const char *n = spec->name;
    if (spec->obs_dim < 1) return errf(err, "env \"%s\": obs_dim %d is below 1", n, spec->obs_dim);
    if (spec->obs_dim > ENV_MAX_OBS)
        return errf(err, "env \"%s\": obs_dim %d exceeds ENV_MAX_OBS (%d)", n, spec->obs_dim, ENV_MAX_OBS);
    const int *sh = spec->obs_shape;
    if (spec->obs_type == ENV_OBS_VECTOR) {
        if (sh[0] || sh[1] || sh[2])
            return errf(err, "env \"%s\": obs_shape %dx%dx%d given for a vector observation (planes only)", n,
                        sh[0], sh[1], sh[2]);
        return 0;
    }
    if (spec->obs_type != ENV_OBS_PLANES)
        return errf(err, "env \"%s\": obs_type %d is neither vector (0) nor planes (1)", n, (int)spec->obs_type);
    if (sh[0] < 1 || sh[1] < 1 || sh[2] < 1 || (long)sh[0] * sh[1] * sh[2] != spec->obs_dim)
        return errf(err, "env \"%s\": planes obs_shape %dx%dx%d does not multiply to obs_dim %d", n, sh[0], sh[1],
                    sh[2], spec->obs_dim);
    if (spec->obs_low) return errf(err, "env \"%s\": planes take no obs_low/obs_high (their cells are 0 or 1)", n);
    return 0;
}

/* state_dim or state_bytes, not both, within limits; init_ext only with bytes. */
static int check_state_fields(const EnvSpec *spec, char *err) {
    const char *n = spec->name;
    if (spec->state_dim < 0) return errf(err, "env \"%s\": state_dim %d is below 0", n, spec->state_dim);
    if (spec->state_dim > ENV_MAX_STATE)
        return errf(err, "env \"%s\": state_dim %d exceeds ENV_MAX_STATE (%d)", n, spec->state_dim, ENV_MAX_STATE);
    if (spec->state_bytes > ENV_MAX_STATE_BYTES)
        return errf(err, "env \"%s\": state_bytes %zu exceeds ENV_MAX_STATE_BYTES (%u)", n, spec->state_bytes,
                    ENV_MAX_STATE_BYTES);
    if ((spec->state_dim == 0) == (spec->state_bytes == 0))
        return errf(err, "env \"%s\": expected exactly one of state_dim (%d) and state_bytes (%zu) above 0", n,
                    spec->state_dim, spec->state_bytes);
    if (spec->init_ext && !spec->state_bytes) return errf(err, "env \"%s\": init_ext without state_bytes", n);
    return 0;
}

/* An external spec's hooks, or a registered spec's state fields. */
static int check_extern_fields(const EnvSpec *spec, char *err) {
    const char *n = spec->name;
    if (!spec->ext_hooks) return check_state_fields(spec, err);
    if (!spec->ext_hooks->open || !spec->ext_hooks->close || !spec->ext_hooks->reseed)
        return errf(err, "env \"%s\": external hooks without open, close or reseed", n);
    if (spec->state_dim || spec->state_bytes || spec->init_ext || spec->options)
        return errf(err, "env \"%s\": an external environment has no state_dim, state_bytes, init_ext or options", n);
    return 0;
}

int env_spec_check(const EnvSpec *spec, char *err) {
    if (!spec) return errf(err, "env: no spec (NULL)");
    if (!spec->name) return errf(err, "env (unnamed): name is NULL");
    const char *n = spec->name;
    if (!n[0]) return errf(err, "env \"\": name is empty");
    for (const char *p = n; *p; p++)
        if (*p <= ' ' || *p == 0x7f) return errf(err, "env \"%s\": name has a blank or control character", n);
    if (check_obs_fields(spec, err) < 0) return -1;
    if (spec->num_actions < 2) return errf(err, "env \"%s\": num_actions %d is below 2", n, spec->num_actions);
    if (spec->num_actions > ENV_MAX_ACTIONS)
        return errf(err, "env \"%s\": num_actions %d exceeds ENV_MAX_ACTIONS (%d)", n, spec->num_actions,
                    ENV_MAX_ACTIONS);
    if (check_extern_fields(spec, err) < 0) return -1;
    if (spec->max_episode_steps < 0)
        return errf(err, "env \"%s\": max_episode_steps %d is below 0 (0 = no time limit)", n,
                    spec->max_episode_steps);
    if (isinf(spec->reward_threshold))
        return errf(err, "env \"%s\": reward_threshold %g is not finite (ENV_NO_THRESHOLD for none)", n,
                    spec->reward_threshold);
    if (spec->options & ~(unsigned)(ENV_TAKES_TORQUES | ENV_TAKES_MINATAR))
        return errf(err, "env \"%s\": options 0x%x has unknown bits", n, spec->options);
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

size_t env_state_size(const EnvSpec *spec) {
    return spec->state_bytes ? spec->state_bytes : (size_t)spec->state_dim * sizeof(double);
}

const char *env_obs_text(const EnvSpec *spec, char *buf, size_t cap) {
    if (spec->obs_type == ENV_OBS_PLANES)
        snprintf(buf, cap, "%dx%dx%d", spec->obs_shape[0], spec->obs_shape[1], spec->obs_shape[2]);
    else
        snprintf(buf, cap, "%d", spec->obs_dim);
    return buf;
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

/* Pendulum's torque set from opt into e. */
static int set_torques(Env *e, const EnvOptions *opt, char *err) {
    const EnvSpec *spec = e->spec;
    if (!(spec->options & ENV_TAKES_TORQUES)) {
        if (opt->n_torques != 0) return errf(err, "%s: a torque set applies to Pendulum-v1 only", spec->name);
        return 0;
    }
    if (opt->n_torques < 0 || opt->n_torques > ENV_MAX_ACTIONS)
        return errf(err, "%s: expected 1 to %d torques, got %d", spec->name, ENV_MAX_ACTIONS, opt->n_torques);
    if (opt->n_torques == 0) {
        static const double def[ENV_PENDULUM_DEFAULT_TORQUES] = {-2.0, 0.0, 2.0};
        memcpy(e->torques, def, sizeof def);
        e->num_actions = ENV_PENDULUM_DEFAULT_TORQUES;
        return 0;
    }
    for (int i = 0; i < opt->n_torques; i++) {
        if (!isfinite(opt->torques[i])) return errf(err, "%s: torque %d is not a finite number", spec->name, i + 1);
        e->torques[i] = opt->torques[i];
    }
    e->num_actions = opt->n_torques;
    return 0;
}

/* MinAtar's sticky actions and difficulty ramping from opt into e. */
static int set_minatar_options(Env *e, const EnvOptions *opt, char *err) {
    const EnvSpec *spec = e->spec;
    if (!(spec->options & ENV_TAKES_MINATAR)) {
        if (opt->sticky_given || opt->no_difficulty_ramping)
            return errf(err, "%s: sticky actions and difficulty ramping apply to the MinAtar environments only",
                        spec->name);
        return 0;
    }
    e->sticky = opt->sticky_given ? opt->sticky_actions : ENV_MINATAR_STICKY_DEFAULT;
    if (!(e->sticky >= 0.0 && e->sticky <= 1.0))
        return errf(err, "%s: sticky_actions must be a probability in [0, 1], got %g", spec->name, e->sticky);
    e->ramping = !opt->no_difficulty_ramping;
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
    if (set_torques(e, opt, err) < 0 || set_minatar_options(e, opt, err) < 0) {
        memset(e, 0, sizeof *e);
        return -1;
    }
    rng_seed(&e->rng, seed, stream);
    if (spec->ext_hooks) {
        if (spec->ext_hooks->open(e, err) == 0) return 0;
        memset(e, 0, sizeof *e);
        return -1;
    }
    if (spec->state_bytes) {
        e->ext = xcalloc(1, spec->state_bytes);
        if (spec->init_ext) spec->init_ext(e);
    }
    return 0;
}

void env_reseed(Env *e, uint64_t seed, uint64_t stream) {
    assert(e->spec && e->spec->ext_hooks);
    rng_seed(&e->rng, seed, stream);
    e->t = 0;
    e->terminated = false;
    e->spec->ext_hooks->reseed(e);
}

void env_free(Env *e) {
    if (e->spec && e->spec->ext_hooks) e->spec->ext_hooks->close(e);
    else free(e->ext);
    e->ext = NULL;
}

void env_copy(Env *dst, const Env *src) {
    void *ext = dst->ext;
    assert(dst->spec == src->spec && (ext != NULL) == (src->ext != NULL));
    *dst = *src;
    dst->ext = ext;
    if (ext) memcpy(ext, src->ext, src->spec->state_bytes);
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
    r.truncated = !r.terminated && (r.truncated || (e->max_steps > 0 && e->t >= e->max_steps));
    e->spec->observe(e, obs);
    return r;
}

static void *state_block(const Env *e) { return e->ext ? e->ext : (void *)e->state; }

void env_get_state(const Env *e, void *state) { memcpy(state, state_block(e), env_state_size(e->spec)); }

void env_set_state(Env *e, const void *state, float *obs) {
    memcpy(state_block(e), state, env_state_size(e->spec));
    e->t = 0;
    e->terminated = false;
    e->spec->observe(e, obs);
}

/* A snapshot: this header, then the generator, then the state block. */
typedef struct {
    int64_t t;
    uint64_t terminated;
} SnapHead;

size_t env_snapshot_size(const EnvSpec *spec) { return sizeof(SnapHead) + sizeof(Rng) + env_state_size(spec); }

void env_snapshot(const Env *e, void *buf) {
    SnapHead h = {.t = e->t, .terminated = e->terminated};
    unsigned char *p = buf;
    memcpy(p, &h, sizeof h);
    memcpy(p + sizeof h, &e->rng, sizeof e->rng);
    env_get_state(e, p + sizeof h + sizeof e->rng);
}

int env_restore(Env *e, const void *buf, float *obs, char *err) {
    SnapHead h;
    const unsigned char *p = buf;
    memcpy(&h, p, sizeof h);
    if (h.t < 0 || h.t > INT_MAX || h.terminated > 1)
        return errf(err, "%s: snapshot with step count %" PRId64 " and terminated %" PRIu64 " (damaged)",
                    e->spec->name, h.t, h.terminated);
    if (e->spec->ext_hooks) { /* its state lives in its own code: a fresh episode */
        memcpy(&e->rng, p + sizeof h, sizeof e->rng);
        e->spec->ext_hooks->reseed(e);
        env_reset(e, obs);
        return 0;
    }
    env_set_state(e, p + sizeof h + sizeof e->rng, obs);
    memcpy(&e->rng, p + sizeof h, sizeof e->rng);
    e->t = (int)h.t;
    e->terminated = h.terminated != 0;
    return 0;
}
