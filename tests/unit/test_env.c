/* SPDX-License-Identifier: MIT */
/* test_env.c: the bundled environments (envs/) against Gymnasium and their
 * own contract (envs/env.h).
 *
 *  - fixtures: every transition in tests/fixtures/data/NAME.replay (computed by
 *    Gymnasium's step(), see scripts/gym_reference.py) is replayed through
 *    env_set_state/env_step: flags and rewards must be exact, every obs and
 *    state value within 1e-9, and on glibc (the fixtures' libm) bit-exact;
 *  - the time limit (TimeLimit semantics), thresholds and sizes;
 *  - reset ranges over many seeds, seeded determinism, state round trips;
 *  - Pendulum's torque sets and option checks;
 *  - numerics the fixtures might miss: pow(v, 2) kept as pow, huge angles;
 *  - spec limits (env_spec_check, env_init) and envcheck_run on the bundled
 *    environments, test-only ones (12 observation floats, one broken in
 *    each way envcheck names) and the docs' template (tests/fixtures).
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "env.h"
#include "envcheck.h"
#include "rng.h"
#include "util.h"

static const EnvSpec *spec_named(const char *name) {
    const EnvSpec *s = env_find(name);
    cr_assert_not_null(s, "no environment %s", name);
    return s;
}

static void init_env(Env *e, const char *name, const EnvOptions *opt, uint64_t seed) {
    char err[ERR_LEN];
    int rc = env_init(e, spec_named(name), opt, seed, RNG_STREAM_ENV, err);
    cr_assert_eq(rc, 0, "env_init %s: %s", name, err);
}

/* ------------------------------------------------------------ fixtures */

typedef struct {
    long transitions;
    long values;      /* obs + state values compared */
    long exact;       /* of which bit-identical */
    double max_error; /* largest |ours - gym| / max(1, |gym|) */
} FixtureStats;

static bool same_bits(double a, double b) { return memcmp(&a, &b, sizeof a) == 0; }

static void compare_value(FixtureStats *st, double ours, double want, const char *what, int idx, long line) {
    double err = fabs(ours - want) / fmax(1.0, fabs(want));
    st->values++;
    st->exact += same_bits(ours, want);
    if (err > st->max_error) st->max_error = err;
    cr_assert(err <= 1e-9, "line %ld: %s[%d] = %.17g, Gymnasium %.17g", line, what, idx, ours, want);
}

/* Replay one fixture file; see scripts/gym_reference.py for the format. */
static FixtureStats run_fixture(const char *name) {
    char path[512];
    const char *root = getenv("TEST_ROOT");
    snprintf(path, sizeof path, "%s%stests/fixtures/data/%s.replay", root ? root : "", root ? "/" : "", name);
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "cannot open %s", path);

    FixtureStats st = {0};
    Env e;
    EnvOptions opt;
    memset(&opt, 0, sizeof opt);
    bool have_env = false, pending = false;
    float obs[ENV_MAX_OBS];
    EnvStep r = {0};
    char *line = NULL;
    size_t cap = 0;
    long lineno = 0;
    char err[ERR_LEN];
    while (getline(&line, &cap, f) >= 0) {
        lineno++;
        line[strcspn(line, "\n")] = '\0';
        if (!strncmp(line, "# args:", 7)) {
            const char *a = line + 7;
            while (*a == ' ') a++;
            if (!strncmp(a, "--torques ", 10)) {
                char *p = (char *)a + 10;
                for (char *t = strtok(p, ","); t; t = strtok(NULL, ",")) {
                    cr_assert(opt.n_torques < ENV_MAX_ACTIONS);
                    cr_assert_eq(parse_double(t, &opt.torques[opt.n_torques++], err), 0, "%s", err);
                }
            } else {
                cr_assert_eq(*a, '\0', "%s:%ld: unknown args \"%s\"", path, lineno, a);
            }
            continue;
        }
        if (!have_env && (!strncmp(line, "state", 5) || !strncmp(line, "step", 4))) {
            cr_assert_eq(env_init(&e, spec_named(name), &opt, 0, RNG_STREAM_ENV, err), 0, "%s", err);
            have_env = true;
        }
        if (!strncmp(line, "state ", 6)) {
            double s[ENV_MAX_STATE];
            char *p = line + 6, *end;
            for (int i = 0; i < e.spec->state_dim; i++) {
                s[i] = strtod(p, &end);
                cr_assert(end != p, "%s:%ld: bad state", path, lineno);
                p = end;
            }
            env_set_state(&e, s, obs);
        } else if (!strncmp(line, "step ", 5)) {
            cr_assert(!pending, "%s:%ld: step without an answer line", path, lineno);
            r = env_step(&e, atoi(line + 5), obs);
            pending = true;
        } else if (!strncmp(line, "#> ", 3)) {
            cr_assert(pending, "%s:%ld: answer without a step", path, lineno);
            pending = false;
            const EnvSpec *s = e.spec;
            double v[ENV_MAX_OBS + 3 + ENV_MAX_STATE];
            int n = 0;
            for (char *t = strtok(line + 3, ","); t && n < (int)(sizeof v / sizeof v[0]); t = strtok(NULL, ","))
                v[n++] = strtod(t, NULL);
            cr_assert_eq(n, s->obs_dim + 3 + s->state_dim, "%s:%ld: %d values", path, lineno, n);
            for (int i = 0; i < s->obs_dim; i++) compare_value(&st, (double)obs[i], v[i], "obs", i, lineno);
            cr_assert(same_bits(r.reward, v[s->obs_dim]), "%s:%ld: reward %.17g, Gymnasium %.17g", path, lineno,
                      r.reward, v[s->obs_dim]);
            cr_assert_eq(r.terminated, v[s->obs_dim + 1] != 0, "%s:%ld: terminated", path, lineno);
            cr_assert_eq(r.truncated, v[s->obs_dim + 2] != 0, "%s:%ld: truncated", path, lineno);
            for (int i = 0; i < s->state_dim; i++)
                compare_value(&st, e.state[i], v[s->obs_dim + 3 + i], "state", i, lineno);
            st.transitions++;
        }
    }
    free(line);
    fclose(f);
    cr_assert(!pending, "%s: last step has no answer", path);
    cr_assert_geq(st.transitions, 300, "%s: only %ld transitions", path, st.transitions);
    fprintf(stderr, "# fixture %s: %ld transitions, %ld of %ld obs/state values bit-exact, max rel. error %.3g\n", name,
            st.transitions, st.exact, st.values, st.max_error);
#ifdef __GLIBC__
    /* The fixtures were computed with glibc's libm: same functions, same
     * operations, so anything short of identical bits is a change in the
     * order of operations (or a compiler rewrite) to investigate. */
    cr_assert_eq(st.exact, st.values, "%s: %ld of %ld values not bit-exact (max rel. error %.3g)", name,
                 st.values - st.exact, st.values, st.max_error);
#endif
    return st;
}

Test(env_fixture, cartpole_matches_gymnasium) { run_fixture("CartPole-v1"); }
Test(env_fixture, mountaincar_matches_gymnasium) { run_fixture("MountainCar-v0"); }
Test(env_fixture, acrobot_matches_gymnasium) { run_fixture("Acrobot-v1"); }
Test(env_fixture, pendulum_matches_gymnasium) { run_fixture("Pendulum-v1"); }

/* ------------------------------------------------------------ registry */

Test(env_registry, names_sizes_limits_thresholds) {
    static const struct {
        const char *name;
        int obs, actions, state, limit;
        double threshold;
    } want[] = {
        {"CartPole-v1", 4, 2, 4, 500, 475.0},
        {"MountainCar-v0", 2, 3, 2, 200, -110.0},
        {"Acrobot-v1", 6, 3, 4, 500, -100.0},
        {"Pendulum-v1", 3, 3, 2, 200, -200.0},
    };
    /* The bundled four come first, in this order; an environment added
     * after them (docs/ENVIRONMENTS.md) is checked by the loops over the
     * registry (spec check, env check) and by its own tests. */
    cr_assert_geq(env_registry_count, 4);
    for (int i = 0; i < 4; i++) {
        const EnvSpec *s = env_registry[i];
        cr_assert_str_eq(s->name, want[i].name);
        cr_assert_eq(env_find(want[i].name), s);
        cr_assert_eq(s->obs_dim, want[i].obs, "%s", s->name);
        cr_assert_eq(s->num_actions, want[i].actions, "%s", s->name);
        cr_assert_eq(s->state_dim, want[i].state, "%s", s->name);
        cr_assert_eq(s->max_episode_steps, want[i].limit, "%s", s->name);
        cr_assert_eq(s->reward_threshold, want[i].threshold, "%s", s->name);
        cr_assert(s->obs_dim <= ENV_MAX_OBS && s->state_dim <= ENV_MAX_STATE);
        cr_assert_eq(s->obs_type, ENV_OBS_VECTOR, "%s", s->name);
        cr_assert_eq(s->state_bytes, 0, "%s: a classic env keeps its state in doubles", s->name);
    }
    cr_assert_null(env_find("CartPole-v0"));
    cr_assert_null(env_find("cartpole-v1"));
    cr_assert_null(env_find(""));
}

/* ---------------------------------------------------------- time limit */

/* A CartPole feedback policy that balances for well over 500 steps from
 * the state used below (the fixture's long episode uses it too). */
static int balance(const Env *e) {
    const double *s = e->state;
    return s[2] + 0.25 * s[3] + 0.02 * s[0] + 0.05 * s[1] > 0 ? 1 : 0;
}

/* Step until the limit with a policy that never terminates: truncated
 * exactly at step max_episode_steps, never before. */
static void check_truncates_at_limit(const char *name, const double *start, int fixed_action) {
    Env e;
    init_env(&e, name, NULL, 3);
    float obs[ENV_MAX_OBS];
    env_set_state(&e, start, obs);
    int limit = e.spec->max_episode_steps;
    for (int t = 1; t <= limit; t++) {
        int a = fixed_action >= 0 ? fixed_action : balance(&e);
        EnvStep r = env_step(&e, a, obs);
        cr_assert(!r.terminated, "%s terminated at step %d", name, t);
        cr_assert_eq(r.truncated, t == limit, "%s: truncated=%d at step %d of %d", name, r.truncated, t, limit);
        cr_assert_eq(e.t, t);
    }
}

Test(env_time_limit, truncates_exactly_at_registered_limits) {
    const double cart[4] = {0.01, -0.02, 0.03, 0.01};
    const double car[2] = {-0.5, 0.0};
    const double acro[4] = {0.0, 0.0, 0.0, 0.0};
    const double pend[2] = {1.0, 0.0};
    check_truncates_at_limit("CartPole-v1", cart, -1);  /* 500 */
    check_truncates_at_limit("MountainCar-v0", car, 1); /* 200: coasting in the valley */
    check_truncates_at_limit("Acrobot-v1", acro, 1);    /* 500: hanging still */
    check_truncates_at_limit("Pendulum-v1", pend, 1);   /* 200: never terminates */
}

Test(env_time_limit, terminated_step_at_the_limit_is_not_truncated) {
    EnvOptions opt = {.max_episode_steps = 3};
    Env e;
    float obs[ENV_MAX_OBS];
    /* CartPole pushed right at 2 m/s from x = 2.30: steps 1-2 stay inside,
     * step 3 (the last one allowed) crosses 2.4 and terminates. */
    init_env(&e, "CartPole-v1", &opt, 1);
    env_set_state(&e, (const double[]){2.30, 2.0, 0.0, 0.0}, obs);
    EnvStep r1 = env_step(&e, 1, obs), r2 = env_step(&e, 1, obs), r3 = env_step(&e, 1, obs);
    cr_assert(!r1.terminated && !r1.truncated && !r2.terminated && !r2.truncated);
    cr_assert(r3.terminated, "x = %g", e.state[0]);
    cr_assert(!r3.truncated, "a terminated step is never also truncated");
    /* MountainCar reaching the goal on its first and only step. */
    opt.max_episode_steps = 1;
    init_env(&e, "MountainCar-v0", &opt, 1);
    env_set_state(&e, (const double[]){0.49, 0.02}, obs);
    r1 = env_step(&e, 2, obs);
    cr_assert(r1.terminated && !r1.truncated);
    /* The same limit without termination truncates. */
    env_set_state(&e, (const double[]){-0.5, 0.0}, obs);
    r1 = env_step(&e, 1, obs);
    cr_assert(!r1.terminated && r1.truncated);
}

Test(env_time_limit, option_overrides_and_state_restarts_the_count) {
    EnvOptions opt = {.max_episode_steps = 7};
    Env e;
    float obs[ENV_MAX_OBS];
    init_env(&e, "Pendulum-v1", &opt, 1);
    cr_assert_eq(e.max_steps, 7);
    env_reset(&e, obs);
    for (int t = 1; t <= 5; t++) cr_assert(!env_step(&e, 0, obs).truncated);
    double s[2];
    env_get_state(&e, s);
    env_set_state(&e, s, obs); /* new episode: the count starts again */
    for (int t = 1; t <= 6; t++) cr_assert(!env_step(&e, 0, obs).truncated, "step %d", t);
    cr_assert(env_step(&e, 0, obs).truncated);
    env_reset(&e, obs);
    cr_assert_eq(e.t, 0);
}

Test(env_cartpole, steps_beyond_termination_earn_zero_until_a_new_episode) {
    Env e;
    float obs[ENV_MAX_OBS];
    init_env(&e, "CartPole-v1", NULL, 1);
    const double fallen[4] = {0.0, 0.0, 0.5, 0.0};
    env_set_state(&e, fallen, obs);
    EnvStep r = env_step(&e, 0, obs);
    cr_assert(r.terminated && r.reward == 1.0, "the terminating step earns 1");
    r = env_step(&e, 0, obs);
    cr_assert(r.terminated && r.reward == 0.0, "a step beyond termination earns 0");
    env_set_state(&e, fallen, obs);
    r = env_step(&e, 0, obs);
    cr_assert(r.terminated && r.reward == 1.0, "set_state starts a new episode");
    env_reset(&e, obs);
    r = env_step(&e, 0, obs);
    cr_assert(!r.terminated && r.reward == 1.0);
}

/* --------------------------------------------------------------- reset */

typedef struct {
    const char *name;
    double lo[ENV_MAX_STATE], hi[ENV_MAX_STATE];
} ResetRange;

Test(env_reset, draws_gymnasium_ranges_over_many_seeds) {
    static const ResetRange ranges[] = {
        {"CartPole-v1", {-0.05, -0.05, -0.05, -0.05}, {0.05, 0.05, 0.05, 0.05}},
        {"MountainCar-v0", {-0.6, 0.0}, {-0.4, 0.0}},
        {"Acrobot-v1", {-0.1, -0.1, -0.1, -0.1}, {0.1, 0.1, 0.1, 0.1}},
        {"Pendulum-v1", {-M_PI, -1.0}, {M_PI, 1.0}},
    };
    enum { SEEDS = 2000 };
    for (int k = 0; k < 4; k++) {
        const ResetRange *rr = &ranges[k];
        int dim = spec_named(rr->name)->state_dim;
        double mn[ENV_MAX_STATE], mx[ENV_MAX_STATE], sum[ENV_MAX_STATE] = {0};
        for (int i = 0; i < dim; i++) mn[i] = INFINITY, mx[i] = -INFINITY;
        for (uint64_t seed = 0; seed < SEEDS; seed++) {
            Env e;
            float obs[ENV_MAX_OBS], obs2[ENV_MAX_OBS];
            init_env(&e, rr->name, NULL, seed);
            env_reset(&e, obs);
            cr_assert_eq(e.t, 0);
            for (int i = 0; i < dim; i++) {
                double v = e.state[i];
                cr_assert(v >= rr->lo[i] && v <= rr->hi[i], "%s seed %llu: state[%d] = %.17g", rr->name,
                          (unsigned long long)seed, i, v);
                if (!strcmp(rr->name, "Acrobot-v1"))
                    cr_assert_eq((double)(float)v, v, "Acrobot's reset state is float32 (.astype)");
                mn[i] = fmin(mn[i], v);
                mx[i] = fmax(mx[i], v);
                sum[i] += v;
            }
            /* the observation is that of the state */
            env_set_state(&e, e.state, obs2);
            cr_assert_eq(memcmp(obs, obs2, (size_t)e.spec->obs_dim * sizeof(float)), 0);
        }
        for (int i = 0; i < dim; i++) {
            double w = rr->hi[i] - rr->lo[i];
            if (w == 0) continue;
            cr_assert(mn[i] < rr->lo[i] + 0.01 * w && mx[i] > rr->hi[i] - 0.01 * w, "%s state[%d] spans [%g, %g]",
                      rr->name, i, mn[i], mx[i]);
            double mean = sum[i] / SEEDS, mid = 0.5 * (rr->lo[i] + rr->hi[i]);
            cr_assert(fabs(mean - mid) < 0.05 * w, "%s state[%d] mean %g", rr->name, i, mean);
        }
    }
}

/* Random-policy trajectory with resets: n steps, hashing every bit. */
static uint64_t trajectory_hash(const char *name, uint64_t seed, int n) {
    Env e;
    init_env(&e, name, NULL, seed);
    Rng pol;
    rng_seed(&pol, seed, RNG_STREAM_TOOL);
    float obs[ENV_MAX_OBS];
    uint64_t h = 1469598103934665603ULL;
    env_reset(&e, obs);
    for (int i = 0; i < n; i++) {
        EnvStep r = env_step(&e, (int)rng_below(&pol, (uint64_t)e.num_actions), obs);
        uint64_t bits[ENV_MAX_STATE + 1];
        memcpy(bits, e.state, sizeof e.state);
        memcpy(&bits[ENV_MAX_STATE], &r.reward, sizeof r.reward);
        for (size_t k = 0; k < ENV_MAX_STATE + 1; k++) h = (h ^ bits[k]) * 1099511628211ULL;
        for (int k = 0; k < e.spec->obs_dim; k++) { /* a byte-state env's state shows in its observation */
            uint32_t u;
            memcpy(&u, &obs[k], sizeof u);
            h = (h ^ u) * 1099511628211ULL;
        }
        h = (h ^ (uint64_t)(r.terminated * 2 + r.truncated)) * 1099511628211ULL;
        if (r.terminated || r.truncated) env_reset(&e, obs);
    }
    env_free(&e);
    return h;
}

Test(env_reset, same_seed_same_trajectory_different_seed_different) {
    for (int k = 0; k < env_registry_count; k++) {
        const char *name = env_registry[k]->name;
        uint64_t a = trajectory_hash(name, 42, 3000), b = trajectory_hash(name, 42, 3000);
        cr_assert_eq(a, b, "%s: same seed, different trajectory", name);
        cr_assert_neq(a, trajectory_hash(name, 43, 3000), "%s: seeds 42 and 43 gave one trajectory", name);
        Env e1, e2;
        float obs[ENV_MAX_OBS];
        init_env(&e1, name, NULL, 7);
        init_env(&e2, name, NULL, 8);
        env_reset(&e1, obs);
        env_reset(&e2, obs);
        if (e1.ext) cr_assert_neq(memcmp(e1.ext, e2.ext, e1.spec->state_bytes), 0, "%s", name);
        else cr_assert_neq(memcmp(e1.state, e2.state, sizeof e1.state), 0, "%s", name);
        env_free(&e1);
        env_free(&e2);
    }
}

/* --------------------------------------------------------------- state */

Test(env_state, set_get_round_trip_and_observation) {
    const double cart[4] = {-1.5, 0.25, 0.125, -3.0};
    const double car[2] = {-0.9, 0.015};
    const double acro[4] = {2.5, -1.0, 7.0, -20.0};
    const double pend[2] = {4.0, -7.5};
    const double *states[4] = {cart, car, acro, pend};
    for (int k = 0; k < 4; k++) {
        Env e;
        const EnvOptions *none = NULL;
        init_env(&e, env_registry[k]->name, none, 1);
        float obs[ENV_MAX_OBS];
        double back[ENV_MAX_STATE];
        env_set_state(&e, states[k], obs);
        env_get_state(&e, back);
        cr_assert_eq(memcmp(back, states[k], (size_t)e.spec->state_dim * sizeof(double)), 0);
        cr_assert_eq(e.t, 0);
        /* stepping from a copy gives the same next state */
        Env copy = e;
        float o1[ENV_MAX_OBS], o2[ENV_MAX_OBS];
        env_step(&e, 1, o1);
        env_step(&copy, 1, o2);
        cr_assert_eq(memcmp(e.state, copy.state, sizeof e.state), 0);
        cr_assert_eq(memcmp(o1, o2, sizeof(float) * (size_t)e.spec->obs_dim), 0);
    }
    /* observation layouts */
    Env e;
    float obs[ENV_MAX_OBS];
    init_env(&e, "Acrobot-v1", NULL, 1);
    env_set_state(&e, acro, obs);
    cr_assert_eq(obs[0], (float)cos(2.5));
    cr_assert_eq(obs[1], (float)sin(2.5));
    cr_assert_eq(obs[2], (float)cos(-1.0));
    cr_assert_eq(obs[3], (float)sin(-1.0));
    cr_assert_eq(obs[4], 7.0f);
    cr_assert_eq(obs[5], -20.0f);
    init_env(&e, "Pendulum-v1", NULL, 1);
    env_set_state(&e, pend, obs);
    cr_assert_eq(obs[0], (float)cos(4.0));
    cr_assert_eq(obs[1], (float)sin(4.0));
    cr_assert_eq(obs[2], -7.5f);
    init_env(&e, "CartPole-v1", NULL, 1);
    env_set_state(&e, cart, obs);
    for (int i = 0; i < 4; i++) cr_assert_eq(obs[i], (float)cart[i]);
}

/* ------------------------------------------------------------ Pendulum */

Test(env_pendulum, default_torques_are_minus2_0_2) {
    Env e;
    init_env(&e, "Pendulum-v1", NULL, 1);
    cr_assert_eq(e.num_actions, 3);
    cr_assert(e.torques[0] == -2.0 && e.torques[1] == 0.0 && e.torques[2] == 2.0);
}

Test(env_pendulum, custom_torque_set_and_clipping) {
    EnvOptions opt = {.n_torques = 6, .torques = {-7.0, -2.0, 0.5, 2.0, 5.0, 2.0000001}};
    Env e;
    float obs[ENV_MAX_OBS], o2[ENV_MAX_OBS];
    init_env(&e, "Pendulum-v1", &opt, 1);
    cr_assert_eq(e.num_actions, 6);
    const double start[2] = {0.7, -1.5};
    /* out-of-range torques behave exactly like the bound they clip to:
     * same next state and same reward (the cost uses the clipped u) */
    const int pairs[3][2] = {{0, 1}, {4, 3}, {5, 3}};
    for (int p = 0; p < 3; p++) {
        env_set_state(&e, start, obs);
        EnvStep ra = env_step(&e, pairs[p][0], obs);
        double sa[2] = {e.state[0], e.state[1]};
        env_set_state(&e, start, o2);
        EnvStep rb = env_step(&e, pairs[p][1], o2);
        cr_assert(same_bits(ra.reward, rb.reward), "pair %d: %.17g vs %.17g", p, ra.reward, rb.reward);
        cr_assert(same_bits(sa[0], e.state[0]) && same_bits(sa[1], e.state[1]), "pair %d", p);
    }
    /* an in-range torque is used as given: 0.5 differs from 0 and from 2 */
    env_set_state(&e, start, obs);
    EnvStep r = env_step(&e, 2, obs);
    cr_assert(r.reward < 0 && !r.terminated);
    cr_assert_float_eq(r.reward, -(pow(0.7, 2) + 0.1 * pow(-1.5, 2) + 0.001 * pow(0.5, 2)), 1e-15);
}

Test(env_init, rejects_bad_options) {
    char err[ERR_LEN];
    Env e;
    EnvOptions opt = {.n_torques = 1, .torques = {1.0}};
    cr_assert_eq(env_init(&e, spec_named("CartPole-v1"), &opt, 0, 0, err), -1);
    cr_assert(strstr(err, "Pendulum-v1 only"), "%s", err);
    opt.n_torques = ENV_MAX_ACTIONS + 1;
    cr_assert_eq(env_init(&e, spec_named("Pendulum-v1"), &opt, 0, 0, err), -1);
    cr_assert(strstr(err, "torques"), "%s", err);
    opt.n_torques = 2;
    opt.torques[1] = NAN;
    cr_assert_eq(env_init(&e, spec_named("Pendulum-v1"), &opt, 0, 0, err), -1);
    cr_assert(strstr(err, "torque 2"), "%s", err);
    EnvOptions neg = {.max_episode_steps = -1};
    cr_assert_eq(env_init(&e, spec_named("Acrobot-v1"), &neg, 0, 0, err), -1);
    cr_assert(strstr(err, "max_episode_steps"), "%s", err);
    opt.n_torques = ENV_MAX_ACTIONS;
    for (int i = 0; i < ENV_MAX_ACTIONS; i++) opt.torques[i] = i - 16;
    cr_assert_eq(env_init(&e, spec_named("Pendulum-v1"), &opt, 0, 0, err), 0, "%s", err);
    cr_assert_eq(e.num_actions, ENV_MAX_ACTIONS);
}

/* ------------------------------------------------------------ numerics */

/* Python's `v**2` is the C library's pow(v, 2), which differs from v * v in
 * the last bit for some v. If the compiler rewrote pow(v, 2) as v * v
 * (builtin pow folding), Pendulum's cost and Acrobot's dynamics would drift
 * from Gymnasium's; the fixtures hold a few such v, and this test searches
 * its own. The volatile pointer keeps the reference call a real libm call. */
Test(env_numerics, pow_squares_are_not_rewritten_as_products) {
    double (*volatile libm_pow)(double, double) = pow;
    Rng r;
    rng_seed(&r, 5, 0);
    int found = 0;
    for (int i = 0; i < 200000 && found < 20; i++) {
        double v = rng_uniform_range(&r, -8.0, 8.0);
        if (libm_pow(v, 2.0) == v * v) continue;
        found++;
        Env e;
        float obs[ENV_MAX_OBS];
        init_env(&e, "Pendulum-v1", NULL, 1);
        env_set_state(&e, (const double[]){0.0, v}, obs); /* angle 0, torque 0: cost = 0.1 * v**2 */
        EnvStep st = env_step(&e, 1, obs);
        double want = -(libm_pow(0.0, 2.0) + 0.1 * libm_pow(v, 2.0) + 0.001 * libm_pow(0.0, 2.0));
        cr_assert(same_bits(st.reward, want), "v = %.17g: reward %.17g, pow gives %.17g", v, st.reward, want);
    }
    cr_assert_geq(found, 20, "found only %d values where pow(v, 2) != v * v", found);
}

/* gcc merges sin(x) and cos(x) of one argument into one sincos() call; the
 * fixtures only stay bit-exact if the C library's sincos agrees with its
 * sin and cos, as glibc's does. */
Test(env_numerics, sincos_agrees_with_sin_and_cos) {
    double (*volatile libm_sin)(double) = sin;
    double (*volatile libm_cos)(double) = cos;
    Rng r;
    rng_seed(&r, 6, 0);
    for (int i = 0; i < 100000; i++) {
        double x = rng_uniform_range(&r, -50.0, 50.0), s, c;
        sincos(x, &s, &c);
        cr_assert(same_bits(s, libm_sin(x)) && same_bits(c, libm_cos(x)), "x = %.17g", x);
    }
}

Test(env_numerics, acrobot_huge_angles_and_speeds_stay_finite_and_wrapped) {
    Env e;
    float obs[ENV_MAX_OBS];
    init_env(&e, "Acrobot-v1", NULL, 1);
    const double states[3][4] = {{1e12, -3e9, 0.0, 0.0}, {0.5, 0.5, 1e7, -1e7}, {-7.0, 9.5, 40.0, -90.0}};
    for (int k = 0; k < 3; k++) {
        env_set_state(&e, states[k], obs);
        env_step(&e, 2, obs);
        cr_assert(e.state[0] >= -M_PI && e.state[0] <= M_PI, "theta1 = %g", e.state[0]);
        cr_assert(e.state[1] >= -M_PI && e.state[1] <= M_PI, "theta2 = %g", e.state[1]);
        cr_assert(fabs(e.state[2]) <= 4 * M_PI && fabs(e.state[3]) <= 9 * M_PI);
    }
}

Test(env_numerics, pendulum_angle_normalize_is_floored_modulo) {
    /* Angles th and th + 2*pi*k cost the same only up to rounding, but the
     * sign convention must be Python's: cost(-pi/2 - tiny) uses an angle
     * near -pi/2, not near 3pi/2 as a C fmod without the fix-up would. */
    Env e;
    float obs[ENV_MAX_OBS];
    init_env(&e, "Pendulum-v1", NULL, 1);
    const double th[] = {-M_PI / 2, -3 * M_PI, -5.0, -100.25, 7.5};
    for (size_t k = 0; k < sizeof th / sizeof th[0]; k++) {
        env_set_state(&e, (const double[]){th[k], 0.0}, obs);
        EnvStep r = env_step(&e, 1, obs);
        double an = remainder(th[k], 2 * M_PI); /* nearest representative in [-pi, pi] */
        cr_assert(fabs(-r.reward - an * an) < 1e-9, "th = %g: cost %.17g, want %.17g", th[k], -r.reward, an * an);
    }
}

/* ------------------------------------------------ spec limits and checks */

/* Test-only environments, compiled into this binary only (the registry
 * cannot hold them). Toy12-v0 is a well-behaved environment with 12
 * observation floats, more than the old ENV_MAX_OBS of 8: a mass on a line
 * with a slow third variable, observed through 12 features. The Broken*
 * specs below each break one rule of env.h, and envcheck_run must say which. */
static void toy_reset(Env *e) {
    e->state[0] = rng_uniform_range(&e->rng, -0.1, 0.1);
    e->state[1] = rng_uniform_range(&e->rng, -0.1, 0.1);
    e->state[2] = rng_uniform_range(&e->rng, -1.0, 1.0);
}

static EnvStep toy_dynamics(Env *e, int action) {
    double *s = e->state;
    s[1] += 0.01 * (action - 1);
    s[0] += s[1];
    s[2] = 0.9 * s[2] + 0.1 * s[0];
    EnvStep r = {.reward = -s[0] * s[0], .terminated = fabs(s[0]) > 1.0};
    return r;
}

static void toy_observe(const Env *e, float *obs) {
    const double *s = e->state;
    obs[0] = (float)s[0];
    obs[1] = (float)s[1];
    obs[2] = (float)s[2];
    for (int i = 3; i < 12; i++) obs[i] = (float)sin((i - 2) * s[0] + s[2]);
}

/* |x| <= 1 + |v| at the terminating step, |v| <= 0.1 + 0.01 * steps. */
static const float toy_low[12] = {-4, -4, -4, -1, -1, -1, -1, -1, -1, -1, -1, -1};
static const float toy_high[12] = {4, 4, 4, 1, 1, 1, 1, 1, 1, 1, 1, 1};

static const EnvSpec toy12 = {
    .name = "Toy12-v0",
    .obs_dim = 12,
    .num_actions = 3,
    .state_dim = 3,
    .max_episode_steps = 60,
    .reward_threshold = -1.0,
    .reset_state = toy_reset,
    .dynamics = toy_dynamics,
    .observe = toy_observe,
    .obs_low = toy_low,
    .obs_high = toy_high,
};

static void toy_observe_sqrt(const Env *e, float *obs) { /* NaN whenever x < 0, else 0 */
    toy_observe(e, obs);
    obs[5] = (float)(sqrt(e->state[0]) * 0.0);
}
static EnvStep toy_dynamics_inf_reward(Env *e, int action) { /* +inf whenever x > 0 */
    EnvStep r = toy_dynamics(e, action);
    r.reward = 1.0 / (e->state[0] > 0 ? 0.0 : 1.0);
    return r;
}
static EnvStep toy_dynamics_nan_past_end(Env *e, int action) { /* NaN only from a state past the end */
    bool over = fabs(e->state[0]) > 1.0;
    EnvStep r = toy_dynamics(e, action);
    if (over) r.reward = NAN;
    return r;
}
/* Deliberately broken: hidden state outside e->state (STYLE.md forbids it;
 * this is what envcheck must catch). */
static int hidden_calls;
static EnvStep toy_dynamics_hidden_state(Env *e, int action) {
    e->state[0] += 1e-9 * hidden_calls++;
    return toy_dynamics(e, action);
}
/* Its own time limit in the state (state[3]) and reported as truncated. */
static void toy_reset_counter(Env *e) {
    toy_reset(e);
    e->state[3] = 0;
}
static EnvStep toy_dynamics_truncating(Env *e, int action) {
    EnvStep r = toy_dynamics(e, action);
    e->state[3] += 1;
    r.truncated = e->state[3] >= 5;
    return r;
}
static void toy_observe_11(const Env *e, float *obs) { /* one float short of 12 */
    float full[12];
    toy_observe(e, full);
    memcpy(obs, full, 11 * sizeof *obs);
}
static void toy_reset_fixed(Env *e) { /* ignores e->rng */
    e->state[0] = 0.05;
    e->state[1] = 0.0;
    e->state[2] = 0.0;
}

static const float toy_high_narrow[12] = {4, 4, 4, 1, 1, 1, 1, 1, 1, 0.5f, 1, 1};

typedef struct {
    const char *what;
    EnvSpec spec;
    int item;           /* the check that must fail */
    const char *needle; /* in its detail */
    unsigned also;      /* bits (1 << item) of other checks that may fail with it */
} BrokenEnv;

static BrokenEnv broken_env(int k) {
    BrokenEnv b = {.spec = toy12};
    EnvSpec *s = &b.spec;
    switch (k) {
    case 0:
        s->observe = toy_observe_sqrt;
        b = (BrokenEnv){"NaN observation", *s, ENVCHECK_OBS_FINITE, "obs[5] = ", 0};
        break;
    case 1:
        s->dynamics = toy_dynamics_inf_reward;
        b = (BrokenEnv){"infinite reward", *s, ENVCHECK_REWARD, "reward = inf", 1u << ENVCHECK_PAST_END};
        break;
    case 2:
        s->dynamics = toy_dynamics_hidden_state;
        b = (BrokenEnv){"hidden state", *s, ENVCHECK_DETERMINISM, "a static or global?", 0};
        break;
    case 3:
        s->state_dim = 4;
        s->reset_state = toy_reset_counter;
        s->dynamics = toy_dynamics_truncating;
        b = (BrokenEnv){"dynamics truncates", *s, ENVCHECK_FLAGS, "dynamics returned truncated", 0};
        break;
    case 4:
        s->obs_dim = 11;
        b = (BrokenEnv){"writes past obs_dim", *s, ENVCHECK_OBS_DIM, "obs[11] was written, past obs_dim 11", 0};
        break;
    case 5:
        s->observe = toy_observe_11;
        b = (BrokenEnv){"writes short of obs_dim", *s, ENVCHECK_OBS_DIM, "obs[11] was not written", 0};
        break;
    case 6:
        s->state_dim = 2;
        b = (BrokenEnv){"state past state_dim", *s, ENVCHECK_STATE_DIM, "state[2] was written, past state_dim 2", 0};
        break;
    case 7:
        s->reset_state = toy_reset_fixed;
        b = (BrokenEnv){"ignores its seed", *s, ENVCHECK_SEED, "reset_state must draw from e->rng", 0};
        break;
    case 8:
        s->obs_high = toy_high_narrow;
        b = (BrokenEnv){"leaves its bounds", *s, ENVCHECK_OBS_BOUNDS, "obs[9] = ", 0};
        break;
    case 9:
        s->dynamics = toy_dynamics_nan_past_end;
        b = (BrokenEnv){"NaN past the end", *s, ENVCHECK_PAST_END, "past its end: reward = nan", 0};
        break;
    default: cr_assert_fail("no broken env %d", k);
    }
    return b;
}
enum { N_BROKEN = 10 };

static void expect_all_pass(const EnvSpec *spec, const EnvOptions *opt, int episodes, uint64_t seed) {
    EnvCheckOptions co = {.episodes = episodes, .seed = seed};
    EnvCheckReport rep;
    int failed = envcheck_run(spec, opt, &co, &rep);
    for (int k = 0; k < ENVCHECK_COUNT; k++)
        cr_expect_neq(rep.item[k].status, ENVCHECK_FAIL, "%s seed %llu: %s: %s", spec->name, (unsigned long long)seed,
                      rep.item[k].name, rep.item[k].detail);
    cr_assert_eq(failed, 0);
    cr_assert_eq(rep.failed, 0);
    cr_assert_eq(rep.episodes, episodes);
    cr_assert_gt(rep.steps, 0);
}

Test(env_spec, registry_passes_the_spec_check) {
    char err[ERR_LEN] = "";
    cr_assert_eq(env_registry_check(err), 0, "%s", err);
    for (int i = 0; i < env_registry_count; i++) cr_assert_eq(env_spec_check(env_registry[i], err), 0, "%s", err);
    cr_assert_geq(ENV_MAX_OBS, 12, "room for a 12-float observation");
}

Test(env_spec, bad_specs_are_refused_by_name_and_limit) {
    static const struct {
        const char *field;
        const char *want;
    } cases[] = {
        {"obs_dim 0", "env \"Toy12-v0\": obs_dim 0 is below 1"},
        {"obs_dim max+1", "env \"Toy12-v0\": obs_dim 1025 exceeds ENV_MAX_OBS (1024)"},
        {"num_actions 1", "env \"Toy12-v0\": num_actions 1 is below 2"},
        {"num_actions max+1", "env \"Toy12-v0\": num_actions 33 exceeds ENV_MAX_ACTIONS (32)"},
        {"state_dim 0", "env \"Toy12-v0\": expected exactly one of state_dim (0) and state_bytes (0) above 0"},
        {"state_dim max+1", "env \"Toy12-v0\": state_dim 65 exceeds ENV_MAX_STATE (64)"},
        {"max_episode_steps -1", "env \"Toy12-v0\": max_episode_steps -1 is below 0 (0 = no time limit)"},
        {"threshold +inf", "env \"Toy12-v0\": reward_threshold inf is not finite (ENV_NO_THRESHOLD for none)"},
        {"threshold inf", "env \"Toy12-v0\": reward_threshold -inf is not finite (ENV_NO_THRESHOLD for none)"},
        {"name NULL", "env (unnamed): name is NULL"},
        {"name empty", "env \"\": name is empty"},
        {"name blank", "env \"Toy 12\": name has a blank or control character"},
        {"reset NULL", "env \"Toy12-v0\": reset_state is NULL"},
        {"dynamics NULL", "env \"Toy12-v0\": dynamics is NULL"},
        {"observe NULL", "env \"Toy12-v0\": observe is NULL"},
        {"one bound", "env \"Toy12-v0\": obs_low and obs_high must be both set or both NULL"},
        {"bounds reversed", "env \"Toy12-v0\": obs bounds [5, 4] of component 0 are not ordered numbers"},
        {"both states", "env \"Toy12-v0\": expected exactly one of state_dim (3) and state_bytes (8) above 0"},
        {"state_bytes max+1", "env \"Toy12-v0\": state_bytes 1048577 exceeds ENV_MAX_STATE_BYTES (1048576)"},
        {"planes 3x2x3", "env \"Toy12-v0\": planes obs_shape 3x2x3 does not multiply to obs_dim 12"},
        {"vector shape", "env \"Toy12-v0\": obs_shape 1x1x12 given for a vector observation (planes only)"},
        {"obs_type 2", "env \"Toy12-v0\": obs_type 2 is neither vector (0) nor planes (1)"},
        {"planes bounds", "env \"Toy12-v0\": planes take no obs_low/obs_high (their cells are 0 or 1)"},
        {"options", "env \"Toy12-v0\": options 0x8 has unknown bits"},
    };
    static const float reversed_low[12] = {5, -4, -4, -1, -1, -1, -1, -1, -1, -1, -1, -1};
    enum { N = sizeof cases / sizeof cases[0] };
    for (int k = 0; k < N; k++) {
        EnvSpec s = toy12;
        switch (k) {
        case 0: s.obs_dim = 0; break;
        case 1: s.obs_dim = ENV_MAX_OBS + 1; break;
        case 2: s.num_actions = 1; break;
        case 3: s.num_actions = ENV_MAX_ACTIONS + 1; break;
        case 4: s.state_dim = 0; break;
        case 5: s.state_dim = ENV_MAX_STATE + 1; break;
        case 6: s.max_episode_steps = -1; break;
        case 7: s.reward_threshold = INFINITY; break;
        case 8: s.reward_threshold = -INFINITY; break;
        case 9: s.name = NULL; break;
        case 10: s.name = ""; break;
        case 11: s.name = "Toy 12"; break;
        case 12: s.reset_state = NULL; break;
        case 13: s.dynamics = NULL; break;
        case 14: s.observe = NULL; break;
        case 15: s.obs_high = NULL; break;
        case 16: s.obs_low = reversed_low; break;
        case 17: s.state_bytes = 8; break;
        case 18: s.state_dim = 0, s.state_bytes = ENV_MAX_STATE_BYTES + 1; break;
        case 19: s.obs_type = ENV_OBS_PLANES, s.obs_shape[0] = 3, s.obs_shape[1] = 2, s.obs_shape[2] = 3; break;
        case 20: s.obs_shape[0] = 1, s.obs_shape[1] = 1, s.obs_shape[2] = 12; break;
        case 21: s.obs_type = (EnvObsType)2; break;
        case 22: s.obs_type = ENV_OBS_PLANES, s.obs_shape[0] = 2, s.obs_shape[1] = 2, s.obs_shape[2] = 3; break;
        case 23: s.options = 8; break;
        }
        char err[ERR_LEN] = "";
        cr_assert_eq(env_spec_check(&s, err), -1, "%s: accepted", cases[k].field);
        cr_expect_str_eq(err, cases[k].want, "%s", cases[k].field);
        /* creating an instance refuses it with the same message, before
         * reset/observe could write past Env.state or an obs buffer */
        Env e;
        char err2[ERR_LEN] = "";
        cr_assert_eq(env_init(&e, &s, NULL, 1, RNG_STREAM_ENV, err2), -1, "%s: env_init accepted it", cases[k].field);
        cr_expect_str_eq(err2, cases[k].want, "%s", cases[k].field);
        /* and the checker reports it as its spec check, skipping the rest */
        EnvCheckReport rep;
        cr_assert_eq(envcheck_run(&s, NULL, NULL, &rep), 1, "%s", cases[k].field);
        cr_expect_eq(rep.item[ENVCHECK_SPEC].status, ENVCHECK_FAIL);
        cr_expect_str_eq(rep.item[ENVCHECK_SPEC].detail, cases[k].want);
        for (int i = 1; i < ENVCHECK_COUNT; i++) cr_expect_eq(rep.item[i].status, ENVCHECK_SKIP);
    }
    char err[ERR_LEN] = "";
    cr_assert_eq(env_spec_check(NULL, err), -1);
    cr_expect_str_eq(err, "env: no spec (NULL)");
}

/* The case that used to crash `gorila env rollout` and write past buffers
 * in training: 12 observation floats. Now within the limit, it works. */
Test(env_spec, twelve_float_observation_works) {
    char err[ERR_LEN] = "";
    cr_assert_eq(env_spec_check(&toy12, err), 0, "%s", err);
    Env e;
    cr_assert_eq(env_init(&e, &toy12, NULL, 5, RNG_STREAM_ENV, err), 0, "%s", err);
    float obs[ENV_MAX_OBS];
    Rng pol;
    rng_seed(&pol, 5, RNG_STREAM_TOOL);
    int ends = 0;
    env_reset(&e, obs);
    for (int i = 0; i < 2000; i++) {
        EnvStep r = env_step(&e, (int)rng_below(&pol, 3), obs);
        for (int k = 0; k < 12; k++) cr_assert(isfinite(obs[k]));
        if (r.terminated || r.truncated) {
            ends++;
            env_reset(&e, obs);
        }
    }
    cr_assert_gt(ends, 10);
    expect_all_pass(&toy12, NULL, 20, 5);
}

Test(envcheck, bundled_environments_pass) {
    for (int i = 0; i < env_registry_count; i++)
        for (uint64_t seed = 0; seed < 3; seed++) expect_all_pass(env_registry[i], NULL, 20, seed);
    EnvOptions opt = {.n_torques = 5, .torques = {-7.0, -1.0, 0.0, 1.0, 7.0}, .max_episode_steps = 50};
    expect_all_pass(spec_named("Pendulum-v1"), &opt, 5, 1);
}

Test(envcheck, each_broken_env_fails_its_check) {
    for (int k = 0; k < N_BROKEN; k++) {
        BrokenEnv b = broken_env(k);
        EnvCheckReport rep;
        EnvCheckOptions co = {.episodes = 10, .seed = 3};
        int failed = envcheck_run(&b.spec, NULL, &co, &rep);
        const EnvCheckItem *it = &rep.item[b.item];
        cr_expect_eq(it->status, ENVCHECK_FAIL, "%s: %s passed", b.what, it->name);
        cr_expect(strstr(it->detail, b.needle), "%s: %s detail \"%s\" lacks \"%s\"", b.what, it->name, it->detail,
                  b.needle);
        for (int i = 0; i < ENVCHECK_COUNT; i++)
            if (i != b.item && !(b.also & (1u << i)))
                cr_expect_neq(rep.item[i].status, ENVCHECK_FAIL, "%s: %s failed too: %s", b.what, rep.item[i].name,
                              rep.item[i].detail);
        cr_expect_geq(failed, 1, "%s", b.what);
        cr_expect_eq(failed, rep.failed);
        cr_expect_eq(rep.item[ENVCHECK_SPEC].status, ENVCHECK_PASS, "%s: %s", b.what, rep.item[ENVCHECK_SPEC].detail);
    }
}

/* The checker reports where: the first violation with episode and step. */
Test(envcheck, failure_says_where) {
    BrokenEnv b = broken_env(0);
    EnvCheckReport rep;
    envcheck_run(&b.spec, NULL, NULL, &rep);
    const char *d = rep.item[ENVCHECK_OBS_FINITE].detail;
    cr_assert(!strncmp(d, "episode ", 8), "%s", d);
    cr_assert(strstr(d, "reset: obs[5] = ") || strstr(d, " step "), "%s", d);
    cr_assert_eq(rep.item[ENVCHECK_OBS_BOUNDS].status, ENVCHECK_PASS, "NaN is charged to obs_finite only: %s",
                 rep.item[ENVCHECK_OBS_BOUNDS].detail);
    EnvSpec nobounds = toy12;
    nobounds.obs_low = nobounds.obs_high = NULL;
    envcheck_run(&nobounds, NULL, NULL, &rep);
    cr_assert_eq(rep.failed, 0);
    cr_assert_eq(rep.item[ENVCHECK_OBS_BOUNDS].status, ENVCHECK_SKIP);
}

/* The template of docs/ENVIRONMENTS.md ("Adding an environment") compiles
 * here and passes every check; tests/cli/env.sh checks that the docs show
 * this file verbatim. */
#include "../fixtures/env_template.c"

Test(envcheck, docs_template_passes) {
    char err[ERR_LEN] = "";
    cr_assert_eq(env_spec_check(&env_pointmass, err), 0, "%s", err);
    for (uint64_t seed = 0; seed < 3; seed++) expect_all_pass(&env_pointmass, NULL, 20, seed);
}
