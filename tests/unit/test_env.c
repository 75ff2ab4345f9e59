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
 *  - numerics the fixtures might miss: pow(v, 2) kept as pow, huge angles.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "env.h"
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
    cr_assert_eq(env_registry_count, 4);
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
        h = (h ^ (uint64_t)(r.terminated * 2 + r.truncated)) * 1099511628211ULL;
        if (r.terminated || r.truncated) env_reset(&e, obs);
    }
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
        cr_assert_neq(memcmp(e1.state, e2.state, sizeof e1.state), 0, "%s", name);
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
