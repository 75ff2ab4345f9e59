/* SPDX-License-Identifier: MIT */
/* envcheck.c: see envcheck.h.
 *
 * Three instances run side by side on one action sequence:
 *
 *   a  the checked instance (seed S): every reset and step is checked
 *   b  seed S again: must match a bit for bit (determinism)
 *   c  seed S + 1: must differ from a somewhere (seed)
 *
 * and before each of a's steps two copies of a are made (env_copy, into
 * two more instances of the same spec): one stepped through spec->dynamics
 * directly (its raw flags; a step must be a function of the Env value), one
 * restored with env_set_state(env_get_state(a)) onto a state poisoned past
 * state_dim, or a byte state poisoned whole (the state holds everything).
 * The five instances (byte-state ones own their e->ext) and the state
 * buffer are the only allocations, released before envcheck_run returns.
 *
 * Writes past the end are caught with sentinels: the observation buffer has
 * GUARD floats beyond ENV_MAX_OBS and is filled with a NaN payload no
 * computation produces before every call, and a's state past state_dim
 * holds another; an entry that changes was written. Comparisons are on
 * bits, so NaN equals itself and -0 differs from +0.
 */
#include "envcheck.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { GUARD = 16, OBS_CAP = ENV_MAX_OBS + GUARD, PAST_END_STEPS = 3, SHORT_LIMIT = 2 };
enum { MAX_EPISODE_STEPS = ENVCHECK_MAX_EPISODE_STEPS };
static const uint32_t OBS_SENTINEL = 0x7fc5a5a5u;               /* a quiet NaN with a payload */
static const uint64_t STATE_SENTINEL = 0x7ff8a5a5a5a5a5a5ull;   /* likewise, float64 */
static const int EXT_POISON = 0xa5;                              /* every byte of a poisoned byte state */

static const struct {
    const char *name, *what;
} ITEMS[ENVCHECK_COUNT] = {
    [ENVCHECK_SPEC] = {"spec", "spec fields within limits, env_init accepts the options"},
    [ENVCHECK_OBS_DIM] = {"obs_dim", "reset and step write exactly obs_dim floats"},
    [ENVCHECK_STATE_DIM] = {"state_dim", "the state holds everything: get/set_state reproduce a step"},
    [ENVCHECK_OBS_FINITE] = {"obs_finite", "every observation is finite"},
    [ENVCHECK_OBS_BOUNDS] = {"obs_bounds", "every observation within obs_low/obs_high (planes: 0 or 1)"},
    [ENVCHECK_REWARD] = {"reward", "every reward is finite"},
    [ENVCHECK_FLAGS] = {"flags", "truncated exactly at the time limit, never with terminated"},
    [ENVCHECK_PAST_END] = {"past_end", "steps past the end without reset stay finite"},
    [ENVCHECK_DETERMINISM] = {"determinism", "same seed and actions give identical trajectories"},
    [ENVCHECK_SEED] = {"seed", "another seed gives another trajectory"},
};

/* What an external environment's items check instead (NULL: the same). */
static const char *const EXT_WHAT[ENVCHECK_COUNT] = {
    [ENVCHECK_SPEC] = "the Gymnasium API: Discrete actions, a Box observation, reset and step return their "
                      "tuples without raising",
    [ENVCHECK_OBS_DIM] = "every observation an array of the observation_space's dtype and size",
    [ENVCHECK_OBS_BOUNDS] = "every observation within the observation_space's low/high (planes: 0 or 1)",
    [ENVCHECK_FLAGS] = "every episode ends; truncated never with terminated, and at env.max_episode_steps",
    [ENVCHECK_DETERMINISM] = "two instances seeded alike and stepped alike give identical trajectories",
};

/* Why an external environment's items are not run. */
static const char *const EXT_SKIP[ENVCHECK_COUNT] = {
    [ENVCHECK_STATE_DIM] = "not run: a Python environment's state lives in Python, out of env_get_state/env_set_state's reach",
    [ENVCHECK_PAST_END] = "not run: gorila resets a Python environment at an episode's end, never steps past it",
};

/* Where the run is, for failure messages. */
typedef enum { AT_EPISODE, AT_PAST_END, AT_SHORT } Phase;

typedef struct {
    EnvCheckReport *rep;
    const EnvSpec *spec;
    Phase phase;
    int ep;    /* 1-based episode */
    long step; /* step within the episode; 0 = the reset */
    bool ext;  /* an external environment (spec->ext_hooks): no copies of its state */
    bool stopped; /* an external instance failed (or an episode did not end): no further steps */
} Run;

static void fail(Run *r, int id, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void fail(Run *r, int id, const char *fmt, ...) {
    EnvCheckItem *it = &r->rep->item[id];
    if (it->status == ENVCHECK_FAIL) return; /* keep the first */
    it->status = ENVCHECK_FAIL;
    r->rep->failed++;
    char where[96];
    switch (r->phase) {
    case AT_EPISODE:
        if (r->step == 0) snprintf(where, sizeof where, "episode %d reset", r->ep);
        else snprintf(where, sizeof where, "episode %d step %ld", r->ep, r->step);
        break;
    case AT_PAST_END: snprintf(where, sizeof where, "episode %d, step %ld past its end", r->ep, r->step); break;
    case AT_SHORT: snprintf(where, sizeof where, "time limit %d, step %ld", SHORT_LIMIT, r->step); break;
    }
    char msg[ERR_LEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(it->detail, sizeof it->detail, "%.95s: %.400s", where, msg);
}

static void note(EnvCheckItem *it, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(EnvCheckItem *it, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(it->detail, sizeof it->detail, fmt, ap);
    va_end(ap);
}

/* Whether external instance e failed in its last reset or step (its bridge
 * said why on stderr): then the check its failure broke fails, `who`
 * ("", or which other instance) first, and the run stops. */
static bool ext_failed(Run *r, const Env *e, const char *who) {
    if (!r->ext || !e->failed) return false;
    char why[ERR_LEN] = "failed (above)";
    EnvExtFailure k = e->spec->ext_hooks->failure ? e->spec->ext_hooks->failure(e, why) : ENV_EXT_FAIL_CALL;
    int id = k == ENV_EXT_FAIL_OBS          ? ENVCHECK_OBS_DIM
           : k == ENV_EXT_FAIL_OBS_FINITE ? ENVCHECK_OBS_FINITE
           : k == ENV_EXT_FAIL_REWARD     ? ENVCHECK_REWARD
                                          : ENVCHECK_SPEC;
    fail(r, id, "%s%s", who, why);
    r->stopped = true;
    return true;
}

static uint32_t fbits(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static uint64_t dbits(double d) {
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return u;
}

static void poison_obs(float *obs) {
    for (int i = 0; i < OBS_CAP; i++) memcpy(&obs[i], &OBS_SENTINEL, sizeof OBS_SENTINEL);
}

/* Poison e->state from index `from` on. */
static void poison_state(Env *e, int from) {
    for (int i = from; i < ENV_MAX_STATE; i++) memcpy(&e->state[i], &STATE_SENTINEL, sizeof STATE_SENTINEL);
}

/* Index of the first of n floats whose bits differ, or -1. */
static int first_obs_diff(const float *x, const float *y, int n) {
    for (int i = 0; i < n; i++)
        if (fbits(x[i]) != fbits(y[i])) return i;
    return -1;
}

/* Index of the first of state_dim doubles whose bits differ, then (for a
 * byte state) ENV_MAX_STATE + the first differing byte; -1 if none. */
static long first_state_diff(const Env *x, const Env *y, int n) {
    for (int i = 0; i < n; i++)
        if (dbits(x->state[i]) != dbits(y->state[i])) return i;
    if (x->ext && y->ext) {
        const unsigned char *a = x->ext, *b = y->ext;
        for (size_t i = 0; i < x->spec->state_bytes; i++)
            if (a[i] != b[i]) return ENV_MAX_STATE + (long)i;
    }
    return -1;
}

/* "state[3] 0.1 vs 0.2" or "state byte 17: 0x01 vs 0x00" for a diff at i. */
static const char *state_diff_text(const Env *a, const Env *b, long i, char *buf, size_t cap) {
    if (i < ENV_MAX_STATE) {
        snprintf(buf, cap, "state[%ld] %.17g vs %.17g", i, a->state[i], b->state[i]);
    } else {
        size_t k = (size_t)(i - ENV_MAX_STATE);
        snprintf(buf, cap, "state byte %zu: 0x%02x vs 0x%02x", k, ((const unsigned char *)a->ext)[k],
                 ((const unsigned char *)b->ext)[k]);
    }
    return buf;
}

/* An observation just written to a poisoned buffer: every entry below
 * obs_dim written, none past it; non-finite values are charged to
 * finite_item; bounds checked when asked and declared. */
static void check_obs(Run *r, const float *obs, int finite_item, bool bounds) {
    const EnvSpec *s = r->spec;
    const int O = s->obs_dim;
    for (int i = 0; i < O; i++) {
        if (fbits(obs[i]) == OBS_SENTINEL) {
            fail(r, ENVCHECK_OBS_DIM, "obs[%d] was not written (obs_dim %d)", i, O);
            break;
        }
    }
    for (int i = O; i < OBS_CAP; i++) {
        if (fbits(obs[i]) != OBS_SENTINEL) {
            fail(r, ENVCHECK_OBS_DIM, "obs[%d] was written, past obs_dim %d", i, O);
            break;
        }
    }
    for (int i = 0; i < O; i++) {
        if (!isfinite(obs[i]) && fbits(obs[i]) != OBS_SENTINEL) {
            fail(r, finite_item, "obs[%d] = %g", i, (double)obs[i]);
            break;
        }
    }
    if (bounds && s->obs_type == ENV_OBS_PLANES) {
        for (int i = 0; i < O; i++) {
            if (fbits(obs[i]) != fbits(0.0f) && fbits(obs[i]) != fbits(1.0f)) {
                fail(r, ENVCHECK_OBS_BOUNDS, "obs[%d] = %.9g is not 0 or 1 (planes)", i, (double)obs[i]);
                break;
            }
        }
    }
    if (bounds && s->obs_low) {
        for (int i = 0; i < O; i++) {
            if (obs[i] < s->obs_low[i] || obs[i] > s->obs_high[i]) {
                fail(r, ENVCHECK_OBS_BOUNDS, "obs[%d] = %.9g outside [%.9g, %.9g]", i, (double)obs[i],
                     (double)s->obs_low[i], (double)s->obs_high[i]);
                break;
            }
        }
    }
}

static void check_state_tail(Run *r, const Env *e) {
    for (int i = r->spec->state_dim; i < ENV_MAX_STATE; i++) {
        if (dbits(e->state[i]) != STATE_SENTINEL) {
            fail(r, ENVCHECK_STATE_DIM, "state[%d] was written, past state_dim %d (env_get_state would lose it)", i,
                 r->spec->state_dim);
            return;
        }
    }
}

/* Both instances stepped (or reset) alike: compare everything they report. */
static void compare_twins(Run *r, const Env *a, const float *oa, EnvStep ra, const Env *b, const float *ob,
                          EnvStep rb) {
    int i = first_obs_diff(oa, ob, r->spec->obs_dim);
    if (i >= 0) {
        fail(r, ENVCHECK_DETERMINISM, "two instances with one seed and one action sequence differ: obs[%d] %.9g vs %.9g",
             i, (double)oa[i], (double)ob[i]);
    } else if (dbits(ra.reward) != dbits(rb.reward)) {
        fail(r, ENVCHECK_DETERMINISM, "two instances with one seed and one action sequence differ: reward %.17g vs %.17g",
             ra.reward, rb.reward);
    } else if (ra.terminated != rb.terminated || ra.truncated != rb.truncated) {
        fail(r, ENVCHECK_DETERMINISM, "two instances with one seed and one action sequence differ in their flags");
    } else {
        long k = first_state_diff(a, b, r->spec->state_dim);
        char what[128];
        if (k >= 0)
            fail(r, ENVCHECK_DETERMINISM, "two instances with one seed and one action sequence differ: %s",
                 state_diff_text(a, b, k, what, sizeof what));
    }
}

/* Before a's step with `action`: restore a copy from env_get_state(a) onto
 * a poisoned state and check that it observes what a observes (cur). The
 * copy is stepped after a (check_restored). */
static void restore_copy(Run *r, const Env *a, const float *cur, Env *rt, void *s) {
    float o[OBS_CAP];
    env_copy(rt, a);
    poison_state(rt, 0);
    if (rt->ext) memset(rt->ext, EXT_POISON, rt->spec->state_bytes);
    env_get_state(a, s);
    poison_obs(o);
    env_set_state(rt, s, o);
    int i = first_obs_diff(o, cur, r->spec->obs_dim);
    if (i >= 0)
        fail(r, ENVCHECK_STATE_DIM,
             "observe is not a function of the state (%d doubles, %zu bytes): restored with env_set_state it gives "
             "obs[%d] = %.9g, the instance %.9g",
             r->spec->state_dim, r->spec->state_bytes, i, (double)o[i], (double)cur[i]);
}

static void check_restored(Run *r, Env *rt, int action, const float *oa, EnvStep ra) {
    float o[OBS_CAP];
    poison_obs(o);
    EnvStep rr = env_step(rt, action, o);
    int i = first_obs_diff(o, oa, r->spec->obs_dim);
    if (i >= 0 || dbits(rr.reward) != dbits(ra.reward) || rr.terminated != ra.terminated)
        fail(r, ENVCHECK_STATE_DIM,
             "a copy restored with env_set_state(env_get_state()) took another step (%s): state_dim %d / state_bytes "
             "%zu do not hold the whole state",
             i >= 0 ? "observation" : dbits(rr.reward) != dbits(ra.reward) ? "reward" : "terminated",
             r->spec->state_dim, r->spec->state_bytes);
}

/* The flags of a's step number t (1-based) of an episode. raw: what
 * spec->dynamics itself returned for that step. */
static void check_flags(Run *r, const Env *a, long t, EnvStep raw, EnvStep st) {
    if (!r->ext && raw.truncated)
        fail(r, ENVCHECK_FLAGS, "dynamics returned truncated (the time limit is env_step's: set terminated only)");
    if (st.terminated && st.truncated) fail(r, ENVCHECK_FLAGS, "terminated and truncated both set");
    if (a->t != t) fail(r, ENVCHECK_FLAGS, "step count e->t = %d after %ld steps", a->t, t);
    if (st.truncated && t != a->max_steps && !r->ext) /* an external one may truncate itself */
        fail(r, ENVCHECK_FLAGS, "truncated at step %ld, the time limit is %d", t, a->max_steps);
    if (!st.terminated && !st.truncated && a->max_steps > 0 && t >= a->max_steps)
        fail(r, ENVCHECK_FLAGS, "no flag at step %ld, the time limit is %d", t, a->max_steps);
}

/* Steps past the end of an episode without reset (p: a copy of a). */
static void check_past_end(Run *r, const Env *a, Env *p) {
    env_copy(p, a);
    Phase saved = r->phase;
    long saved_step = r->step;
    r->phase = AT_PAST_END;
    for (int k = 1; k <= PAST_END_STEPS; k++) {
        float o[OBS_CAP];
        poison_obs(o);
        r->step = k;
        EnvStep st = env_step(p, k % p->num_actions, o);
        check_obs(r, o, ENVCHECK_PAST_END, false);
        if (!isfinite(st.reward)) fail(r, ENVCHECK_PAST_END, "reward = %g", st.reward);
    }
    r->phase = saved;
    r->step = saved_step;
}

/* One episode with the time limit cut to SHORT_LIMIT steps: truncated on
 * step SHORT_LIMIT unless it terminated first. */
static void check_short_limit(Run *r, const EnvOptions *opt, uint64_t seed, Rng *pol) {
    EnvOptions o2 = *opt;
    o2.max_episode_steps = SHORT_LIMIT;
    Env d;
    char err[ERR_LEN];
    r->phase = AT_SHORT;
    r->step = 0;
    if (env_init(&d, r->spec, &o2, seed, RNG_STREAM_ENV, err) < 0) {
        fail(r, ENVCHECK_FLAGS, "env_init: %s", err);
        return;
    }
    float o[OBS_CAP];
    env_reset(&d, o);
    for (long t = 1; t <= SHORT_LIMIT && !ext_failed(r, &d, ""); t++) {
        r->step = t;
        EnvStep st = env_step(&d, (int)rng_below(pol, (uint64_t)d.num_actions), o);
        if (ext_failed(r, &d, "")) break;
        if (st.terminated || (r->ext && st.truncated && t < SHORT_LIMIT)) break; /* an end of its own */
        if (st.truncated != (t == SHORT_LIMIT)) {
            fail(r, ENVCHECK_FLAGS, "truncated = %d", st.truncated ? 1 : 0);
            break;
        }
    }
    env_free(&d);
}

/* The three instances a check runs side by side: a (checked), b (the
 * same seed: must match a bit for bit) and c (the next seed: must differ
 * somewhere), with their observations and a's current one; rt and cp
 * take a's copies (restored, stepped raw), st a's state. */
typedef struct {
    Env a, b, c, rt, cp;
    void *st; /* env_state_size bytes */
    float oa[OBS_CAP], ob[OBS_CAP], oc[OBS_CAP], cur[OBS_CAP];
    bool c_live, seed_differs;
} Trio;

static void free_trio(Trio *t) {
    env_free(&t->a);
    env_free(&t->b);
    env_free(&t->c);
    env_free(&t->rt);
    env_free(&t->cp);
    free(t->st);
    t->st = NULL;
}

/* Reset all three for episode run->ep and check the first observation. */
static void reset_trio(Run *r, Trio *t) {
    const int O = r->spec->obs_dim, sd = r->spec->state_dim;
    r->step = 0;
    poison_obs(t->oa);
    env_reset(&t->a, t->oa);
    if (ext_failed(r, &t->a, "")) return;
    check_obs(r, t->oa, ENVCHECK_OBS_FINITE, true);
    check_state_tail(r, &t->a);
    if (t->a.t != 0) fail(r, ENVCHECK_FLAGS, "step count e->t = %d after reset", t->a.t);
    poison_obs(t->ob);
    env_reset(&t->b, t->ob);
    if (ext_failed(r, &t->b, "the second instance (the same seed): ")) return;
    compare_twins(r, &t->a, t->oa, (EnvStep){0}, &t->b, t->ob, (EnvStep){0});
    env_reset(&t->c, t->oc);
    if (ext_failed(r, &t->c, "the instance of the next seed: ")) return;
    t->seed_differs |= first_obs_diff(t->oa, t->oc, O) >= 0 || first_state_diff(&t->a, &t->c, sd) >= 0;
    t->c_live = true;
    memcpy(t->cur, t->oa, sizeof t->cur);
}

/* One random action on all three, and every per-step check. */
static EnvStep step_trio(Run *r, Trio *t, Rng *pol) {
    const EnvSpec *spec = r->spec;
    const int O = spec->obs_dim, sd = spec->state_dim;
    Env *a = &t->a, *copy = &t->cp;
    int action = (int)rng_below(pol, (uint64_t)a->num_actions);
    bool restore = !a->terminated; /* set_state clears it: compare only episodes still running */
    if (restore) restore_copy(r, a, t->cur, &t->rt, t->st);
    env_copy(copy, a);
    EnvStep raw = spec->dynamics(copy, action);

    poison_obs(t->oa);
    EnvStep st = env_step(a, action, t->oa);
    r->step++;
    r->rep->steps++;
    check_obs(r, t->oa, ENVCHECK_OBS_FINITE, true);
    check_state_tail(r, a);
    if (!isfinite(st.reward)) fail(r, ENVCHECK_REWARD, "reward = %g", st.reward);
    check_flags(r, a, r->step, raw, st);
    bool pure = first_state_diff(copy, a, sd) < 0 && dbits(raw.reward) == dbits(st.reward) &&
                raw.terminated == st.terminated;
    if (!pure)
        fail(r, ENVCHECK_DETERMINISM,
             "stepping a copy of the Env gave another result: state outside e->state or e->rng "
             "(a static or global?)");
    if (restore && pure) check_restored(r, &t->rt, action, t->oa, st); /* else hidden state would blame state_dim */

    poison_obs(t->ob);
    EnvStep sb = env_step(&t->b, action, t->ob);
    compare_twins(r, a, t->oa, st, &t->b, t->ob, sb);
    if (t->c_live) {
        EnvStep sc = env_step(&t->c, action, t->oc);
        t->seed_differs |= first_obs_diff(t->oa, t->oc, O) >= 0 || dbits(sc.reward) != dbits(st.reward);
        t->c_live = !sc.terminated && !sc.truncated;
    }
    memcpy(t->cur, t->oa, sizeof t->cur);
    return st;
}

/* step_trio for an external environment: no copies of a (its state is
 * its own code's), every call's failure checked. */
static EnvStep step_trio_ext(Run *r, Trio *t, Rng *pol) {
    Env *a = &t->a;
    int action = (int)rng_below(pol, (uint64_t)a->num_actions);
    poison_obs(t->oa);
    EnvStep st = env_step(a, action, t->oa);
    r->step++;
    r->rep->steps++;
    if (ext_failed(r, a, "")) return st;
    check_obs(r, t->oa, ENVCHECK_OBS_FINITE, true);
    if (!isfinite(st.reward)) fail(r, ENVCHECK_REWARD, "reward = %g", st.reward);
    check_flags(r, a, r->step, st, st);
    poison_obs(t->ob);
    EnvStep sb = env_step(&t->b, action, t->ob);
    if (ext_failed(r, &t->b, "the second instance (the same seed): ")) return st;
    compare_twins(r, a, t->oa, st, &t->b, t->ob, sb);
    if (t->c_live) {
        EnvStep sc = env_step(&t->c, action, t->oc);
        if (ext_failed(r, &t->c, "the instance of the next seed: ")) return st;
        t->seed_differs |= first_obs_diff(t->oa, t->oc, r->spec->obs_dim) >= 0 || dbits(sc.reward) != dbits(st.reward);
        t->c_live = !sc.terminated && !sc.truncated;
    }
    return st;
}

/* The spec item: the three instances start (0), or the report says why
 * not and every other item is skipped (-1). */
static int init_trio(Run *r, Trio *t, const EnvOptions *opt, uint64_t seed) {
    EnvCheckReport *rep = r->rep;
    const EnvSpec *spec = r->spec;
    char err[ERR_LEN];
    if (env_init(&t->a, spec, opt, seed, RNG_STREAM_ENV, err) < 0) {
        rep->item[ENVCHECK_SPEC].status = ENVCHECK_FAIL;
        rep->failed = 1;
        note(&rep->item[ENVCHECK_SPEC], "%s", err);
        for (int k = 1; k < ENVCHECK_COUNT; k++) {
            rep->item[k].status = ENVCHECK_SKIP;
            note(&rep->item[k], "not run: the spec check failed");
        }
        return -1;
    }
    if (env_init(&t->b, spec, opt, seed, RNG_STREAM_ENV, err) < 0 ||
        env_init(&t->c, spec, opt, seed + 1, RNG_STREAM_ENV, err) < 0 ||
        (!r->ext && env_init(&t->rt, spec, opt, seed, RNG_STREAM_ENV, err) < 0) ||
        (!r->ext && env_init(&t->cp, spec, opt, seed, RNG_STREAM_ENV, err) < 0)) {
        fail(r, ENVCHECK_SPEC, "env_init succeeds once, then fails: %s", err);
        return -1;
    }
    if (!r->ext) t->st = xmalloc(env_state_size(spec));
    char obs[32], state[48], limit[16], thr[32];
    env_obs_text(spec, obs, sizeof obs);
    if (spec->state_bytes) snprintf(state, sizeof state, "%zu bytes", spec->state_bytes);
    else snprintf(state, sizeof state, "%d", spec->state_dim);
    if (r->ext) snprintf(state, sizeof state, "in Python");
    if (t->a.max_steps) snprintf(limit, sizeof limit, "%d", t->a.max_steps);
    else snprintf(limit, sizeof limit, "none");
    if (env_has_threshold(spec->reward_threshold)) snprintf(thr, sizeof thr, "%g", spec->reward_threshold);
    else snprintf(thr, sizeof thr, "none");
    note(&rep->item[ENVCHECK_SPEC], "obs %s%s, actions %d, state %s, time limit %s, threshold %s", obs,
         spec->obs_type == ENV_OBS_PLANES ? " planes" : "", t->a.num_actions, state, limit, thr);
    rep->num_actions = t->a.num_actions;
    if (!spec->obs_low && spec->obs_type != ENV_OBS_PLANES) {
        rep->item[ENVCHECK_OBS_BOUNDS].status = ENVCHECK_SKIP;
        note(&rep->item[ENVCHECK_OBS_BOUNDS], "%s", r->ext ? "not run: the observation_space has no low/high arrays"
                                                          : "the spec declares no obs_low/obs_high");
    }
    for (int k = 0; k < ENVCHECK_COUNT && r->ext; k++) {
        if (EXT_WHAT[k]) rep->item[k].what = EXT_WHAT[k];
        if (!EXT_SKIP[k]) continue;
        rep->item[k].status = ENVCHECK_SKIP;
        note(&rep->item[k], "%s", EXT_SKIP[k]);
    }
    if (r->ext)
        note(&rep->item[ENVCHECK_DETERMINISM], "each first reset seeded alike; a step's purity is not checked: "
                                               "the state lives in Python");
    poison_state(&t->a, spec->state_dim);
    poison_state(&t->b, spec->state_dim);
    return 0;
}

/* Episode lengths and ends over a run (the flags item's note). */
typedef struct {
    int n_term, n_trunc;
    long min_len, max_len;
} Lengths;

/* The random-action episodes: every reset and step checked. An episode
 * that has not ended after MAX_EPISODE_STEPS fails flags and stops the run,
 * as an external instance's failure does (r->stopped). */
static void run_episodes(Run *r, Trio *t, Rng *pol, int episodes, Lengths *len) {
    *len = (Lengths){.min_len = -1};
    for (int ep = 1; ep <= episodes && !r->stopped; ep++) {
        r->ep = ep;
        reset_trio(r, t);
        EnvStep st = {0};
        while (!r->stopped && !st.terminated && !st.truncated) {
            if (r->step >= MAX_EPISODE_STEPS) {
                fail(r, ENVCHECK_FLAGS, "no terminated or truncated after %d steps", MAX_EPISODE_STEPS);
                r->stopped = true;
                break;
            }
            st = r->ext ? step_trio_ext(r, t, pol) : step_trio(r, t, pol);
        }
        if (r->stopped) break;
        len->n_term += st.terminated;
        len->n_trunc += st.truncated;
        if (len->min_len < 0 || r->step < len->min_len) len->min_len = r->step;
        if (r->step > len->max_len) len->max_len = r->step;
        if (ep == 1 && !r->ext) check_past_end(r, &t->a, &t->cp);
        r->rep->episodes = ep;
    }
}

/* The items a run that stopped early did not finish: skipped, saying so. */
static void skip_unfinished(Run *r) {
    for (int k = 0; k < ENVCHECK_COUNT; k++) {
        EnvCheckItem *it = &r->rep->item[k];
        if (it->status != ENVCHECK_PASS) continue;
        it->status = ENVCHECK_SKIP;
        note(it, "not run to the end: the run stopped at the failure above (episode %d)", r->ep);
    }
}

int envcheck_run(const EnvSpec *spec, const EnvOptions *opt, const EnvCheckOptions *co, EnvCheckReport *rep) {
    static const EnvOptions no_options;
    static const EnvCheckOptions defaults = {.episodes = ENVCHECK_EPISODES_DEFAULT};
    if (!opt) opt = &no_options;
    if (!co) co = &defaults;
    memset(rep, 0, sizeof *rep);
    for (int k = 0; k < ENVCHECK_COUNT; k++) {
        rep->item[k].name = ITEMS[k].name;
        rep->item[k].what = ITEMS[k].what;
        rep->item[k].status = ENVCHECK_PASS;
    }
    Run run = {.rep = rep, .spec = spec, .phase = AT_EPISODE, .ext = spec && spec->ext_hooks};
    Run *r = &run;
    const uint64_t seed = co->seed;
    Trio trio = {0};
    Trio *t = &trio;
    /* spec: everything else needs a valid spec and an instance. */
    if (init_trio(r, t, opt, seed) != 0) {
        free_trio(t);
        return rep->failed;
    }

    Rng pol;
    rng_seed(&pol, seed, RNG_STREAM_TOOL);
    const int episodes = co->episodes > 0 ? co->episodes : ENVCHECK_EPISODES_DEFAULT;
    Lengths len;
    run_episodes(r, t, &pol, episodes, &len);
    if (!r->stopped) check_short_limit(r, opt, seed, &pol);
    if (r->stopped) {
        skip_unfinished(r);
        free_trio(t);
        return rep->failed;
    }

    if (!t->seed_differs) { /* over the whole run, not at one step: no location */
        rep->item[ENVCHECK_SEED].status = ENVCHECK_FAIL;
        rep->failed++;
        note(&rep->item[ENVCHECK_SEED], "seeds %" PRIu64 " and %" PRIu64 " gave identical trajectories over %d episodes: %s",
             seed, seed + 1, episodes,
             r->ext ? "reset must honour its seed= (Gymnasium: super().reset(seed=seed), then draw from self.np_random)"
                    : "reset_state must draw from e->rng");
    }
    if (rep->item[ENVCHECK_FLAGS].status == ENVCHECK_PASS) {
        char limit[16] = "none";
        if (t->a.max_steps) snprintf(limit, sizeof limit, "%d", t->a.max_steps);
        note(&rep->item[ENVCHECK_FLAGS], "%s %s: %d terminated, %d truncated, lengths %ld to %ld",
             r->ext ? "gorila's time limit" : "time limit", limit, len.n_term, len.n_trunc, len.min_len, len.max_len);
    }
    free_trio(t);
    return rep->failed;
}
