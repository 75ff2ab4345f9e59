/* SPDX-License-Identifier: MIT */
/* test_minatar_env.c: MinAtar's games as gorila environments
 * (envs/minatar/minatar_env.c through env.h): the ten registered ids and
 * their specs, every step bit-exact with the port's own API (minatar.h,
 * itself bit-exact with the reference: tests/cli/minatar.sh), the seed
 * derivation, the byte state through env_get_state/env_set_state and
 * env_snapshot/env_restore, the options, and the classic Env's size.
 * Built only with MINATAR=1 (the Makefile leaves test_minatar* out). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ckptfile.h"
#include "env.h"
#include "envcheck.h"
#include "minatar.h"
#include "rng.h"
#include "util.h"

static const EnvSpec *spec_named(const char *name) {
    const EnvSpec *s = env_find(name);
    cr_assert_not_null(s, "no environment %s", name);
    return s;
}

static void init_env(Env *e, const char *name, const EnvOptions *opt, uint64_t seed, uint64_t stream) {
    char err[ERR_LEN];
    cr_assert_eq(env_init(e, spec_named(name), opt, seed, stream, err), 0, "env_init %s: %s", name, err);
}

Test(minatar_env, ten_ids_with_planes_no_limit_no_threshold) {
    int found = 0;
    for (int g = 0; g < MINATAR_GAME_COUNT; g++) {
        for (int v = 0; v < 2; v++) {
            char name[64];
            snprintf(name, sizeof name, "MinAtar/%s-v%d", minatar_title((MinatarGame)g), v);
            const EnvSpec *s = spec_named(name);
            int acts[MINATAR_NUM_ACTIONS], nmin = minatar_minimal_actions((MinatarGame)g, acts);
            int ch = minatar_channels((MinatarGame)g);
            cr_expect_eq(s->obs_type, ENV_OBS_PLANES, "%s", name);
            cr_expect(s->obs_shape[0] == 10 && s->obs_shape[1] == 10 && s->obs_shape[2] == ch, "%s", name);
            cr_expect_eq(s->obs_dim, 100 * ch, "%s", name);
            cr_expect_eq(s->num_actions, v ? nmin : MINATAR_NUM_ACTIONS, "%s", name);
            cr_expect_eq(s->max_episode_steps, 0, "%s: no time limit of its own", name);
            cr_expect(!env_has_threshold(s->reward_threshold), "%s: no threshold of its own", name);
            cr_expect_eq(s->state_dim, 0, "%s", name);
            cr_expect_eq(s->state_bytes, sizeof(Minatar), "%s", name);
            cr_expect_eq(s->options, ENV_TAKES_MINATAR, "%s", name);
            cr_expect_lt(strlen(name), CKPT_ENV_LEN, "%s fits a checkpoint header's env field", name);
            char obs[32];
            snprintf(name, sizeof name, "10x10x%d", ch);
            cr_expect_str_eq(env_obs_text(s, obs, sizeof obs), name);
            found++;
        }
    }
    cr_assert_eq(found, 10);
    for (int i = 0; i < env_registry_count; i++)
        cr_expect_lt(strlen(env_registry[i]->name), CKPT_ENV_LEN, "%s", env_registry[i]->name);
}

/* Every step of each id against minatar.h driven by hand: the seed S is
 * the high word of rng(seed, stream)'s first draw, the -v1 ids map action
 * i to the minimal set's i-th, rewards, terminal flags and every cell
 * agree, and one generator runs across the episodes. */
Test(minatar_env, bit_exact_with_the_port_across_episodes) {
    for (int k = 0; k < env_registry_count; k++) {
        const EnvSpec *s = env_registry[k];
        if (strncmp(s->name, "MinAtar/", 8)) continue;
        int g = -1, v = s->name[strlen(s->name) - 1] - '0';
        for (int i = 0; i < MINATAR_GAME_COUNT; i++)
            if (!strncmp(s->name + 8, minatar_title((MinatarGame)i), strlen(minatar_title((MinatarGame)i)))) g = i;
        cr_assert_geq(g, 0);
        Env e;
        init_env(&e, s->name, NULL, 17, RNG_STREAM_ENV + 3);
        Rng r;
        rng_seed(&r, 17, RNG_STREAM_ENV + 3);
        Minatar *m = malloc(sizeof *m);
        minatar_init(m, (MinatarGame)g, 0.1, true);
        minatar_seed(m, (uint32_t)(rng_next(&r) >> 32));
        int set[MINATAR_NUM_ACTIONS];
        minatar_minimal_actions((MinatarGame)g, set);
        float obs[ENV_MAX_OBS];
        uint8_t cells[MINATAR_MAX_CELLS];
        Rng pol;
        rng_seed(&pol, 5, RNG_STREAM_TOOL);
        env_reset(&e, obs);
        minatar_reset(m);
        int episodes = 0;
        for (int t = 0; t < 3000 && episodes < 4; t++) {
            int a = (int)rng_below(&pol, (uint64_t)e.num_actions);
            EnvStep st = env_step(&e, a, obs);
            bool term;
            int rew = minatar_act(m, v ? set[a] : a, &term);
            cr_assert_eq(st.reward, (double)rew, "%s step %d", s->name, t);
            cr_assert_eq(st.terminated, term, "%s step %d", s->name, t);
            cr_assert(!st.truncated, "%s: no time limit", s->name);
            minatar_state(m, cells);
            for (int i = 0; i < s->obs_dim; i++)
                cr_assert_eq(obs[i], cells[i] ? 1.0f : 0.0f, "%s step %d cell %d", s->name, t, i);
            if (term) {
                env_reset(&e, obs);
                minatar_reset(m);
                episodes++;
            }
        }
        cr_expect_geq(episodes, 1, "%s: no episode ended in 3000 random steps", s->name);
        free(m);
        env_free(&e);
    }
}

/* The games write only the cells that hold 1 into planes they clear
 * first: stepping into a buffer full of other values (another game's
 * planes, garbage) gives exactly the observation a zeroed buffer gets, and
 * cells beyond obs_dim are left alone. */
Test(minatar_env, observation_overwrites_the_buffer) {
    for (int k = 0; k < env_registry_count; k++) {
        const EnvSpec *s = env_registry[k];
        if (strncmp(s->name, "MinAtar/", 8)) continue;
        Env a, b;
        init_env(&a, s->name, NULL, 3, RNG_STREAM_ENV);
        init_env(&b, s->name, NULL, 3, RNG_STREAM_ENV);
        float oa[ENV_MAX_OBS], ob[ENV_MAX_OBS];
        Rng pol;
        rng_seed(&pol, 4, RNG_STREAM_TOOL);
        env_reset(&a, oa);
        env_reset(&b, ob);
        for (int t = 0; t < 200; t++) {
            int act = (int)rng_below(&pol, (uint64_t)a.num_actions);
            memset(oa, 0, sizeof oa);
            for (int i = 0; i < ENV_MAX_OBS; i++) ob[i] = (i % 3) ? 0.5f : 1.0f;
            EnvStep sa = env_step(&a, act, oa), sb = env_step(&b, act, ob);
            cr_assert_eq(sa.reward, sb.reward, "%s step %d", s->name, t);
            for (int i = 0; i < s->obs_dim; i++)
                cr_assert_eq(ob[i], oa[i], "%s step %d cell %d: %g over a filled buffer, %g over zeros", s->name, t, i,
                             (double)ob[i], (double)oa[i]);
            cr_assert_eq(ob[s->obs_dim], (s->obs_dim % 3) ? 0.5f : 1.0f, "%s: a float past obs_dim written", s->name);
            if (sa.terminated) {
                env_reset(&a, oa);
                env_reset(&b, ob);
            }
        }
        env_free(&a);
        env_free(&b);
    }
}

/* Two instances: run a, copy its whole state into b (another seed), and
 * both continue alike; env_snapshot/env_restore also keeps the step count,
 * the terminated flag and e->rng. */
Test(minatar_env, byte_state_round_trips) {
    const char *names[] = {"MinAtar/Seaquest-v1", "MinAtar/Breakout-v0", "MinAtar/Asterix-v1"};
    for (int k = 0; k < 3; k++) {
        Env a, b, c;
        EnvOptions time5 = {.max_episode_steps = 40};
        init_env(&a, names[k], &time5, 1, RNG_STREAM_ENV);
        init_env(&b, names[k], &time5, 2, RNG_STREAM_ENV);
        init_env(&c, names[k], &time5, 3, RNG_STREAM_ENV);
        float oa[ENV_MAX_OBS], ob[ENV_MAX_OBS];
        Rng pol;
        rng_seed(&pol, 9, RNG_STREAM_TOOL);
        env_reset(&a, oa);
        for (int t = 0; t < 7; t++) {
            EnvStep st = env_step(&a, (int)rng_below(&pol, (uint64_t)a.num_actions), oa);
            if (st.terminated) env_reset(&a, oa);
        }
        size_t n = env_state_size(a.spec);
        cr_assert_eq(n, sizeof(Minatar));
        unsigned char *buf = malloc(n), *snap = malloc(env_snapshot_size(a.spec));
        env_get_state(&a, buf);
        env_set_state(&b, buf, ob);
        cr_assert_eq(memcmp(oa, ob, sizeof(float) * (size_t)a.spec->obs_dim), 0, "%s", names[k]);
        env_snapshot(&a, snap);
        char err[ERR_LEN];
        env_reset(&c, ob);
        cr_assert_eq(env_restore(&c, snap, ob, err), 0, "%s", err);
        cr_assert_eq(c.t, a.t);
        cr_assert_eq(memcmp(oa, ob, sizeof(float) * (size_t)a.spec->obs_dim), 0);
        for (int t = 0; t < 60; t++) {
            int act = (int)rng_below(&pol, (uint64_t)a.num_actions);
            float o1[ENV_MAX_OBS], o2[ENV_MAX_OBS], o3[ENV_MAX_OBS];
            EnvStep s1 = env_step(&a, act, o1), s2 = env_step(&b, act, o2), s3 = env_step(&c, act, o3);
            cr_assert_eq(memcmp(o1, o2, sizeof(float) * (size_t)a.spec->obs_dim), 0, "%s step %d", names[k], t);
            cr_assert_eq(memcmp(o1, o3, sizeof(float) * (size_t)a.spec->obs_dim), 0, "%s step %d", names[k], t);
            cr_assert(s1.reward == s2.reward && s1.terminated == s2.terminated);
            /* the restored copy keeps a's step count, so it truncates with a */
            cr_assert(s1.reward == s3.reward && s1.terminated == s3.terminated && s1.truncated == s3.truncated);
            if (s1.terminated || s1.truncated) break;
        }
        /* a damaged snapshot is refused */
        int64_t bad = -1;
        memcpy(snap, &bad, sizeof bad);
        cr_assert_eq(env_restore(&c, snap, ob, err), -1);
        cr_expect(strstr(err, "damaged"), "%s", err);
        free(buf);
        free(snap);
        env_free(&a);
        env_free(&b);
        env_free(&c);
    }
}

/* Options: sticky actions and ramping reach the game, env.max_episode_steps
 * still truncates, and the options are the instance's (a state set from
 * an instance with other options does not carry them). */
Test(minatar_env, options) {
    char err[ERR_LEN];
    Env e;
    EnvOptions bad = {.sticky_given = true, .sticky_actions = 1.5};
    cr_assert_eq(env_init(&e, spec_named("MinAtar/Breakout-v1"), &bad, 1, 0, err), -1);
    cr_expect(strstr(err, "sticky_actions must be a probability in [0, 1], got 1.5"), "%s", err);
    EnvOptions sticky = {.sticky_given = true, .sticky_actions = 0.5};
    cr_assert_eq(env_init(&e, spec_named("CartPole-v1"), &sticky, 1, 0, err), -1);
    cr_expect(strstr(err, "apply to the MinAtar environments only"), "%s", err);
    EnvOptions noramp = {.no_difficulty_ramping = true};
    cr_assert_eq(env_init(&e, spec_named("Acrobot-v1"), &noramp, 1, 0, err), -1);
    EnvOptions torques = {.n_torques = 2, .torques = {-1, 1}};
    cr_assert_eq(env_init(&e, spec_named("MinAtar/Freeway-v0"), &torques, 1, 0, err), -1);
    cr_expect(strstr(err, "Pendulum-v1 only"), "%s", err);

    /* defaults: 0.1 and on, as the reference */
    init_env(&e, "MinAtar/SpaceInvaders-v0", NULL, 1, 0);
    const Minatar *m = e.ext;
    cr_expect_eq(m->sticky, 0.1);
    cr_expect(m->ramping);
    cr_expect(e.ramping && e.sticky == 0.1);
    Env f;
    EnvOptions none = {.sticky_given = true, .sticky_actions = 0.0, .no_difficulty_ramping = true, .max_episode_steps = 5};
    init_env(&f, "MinAtar/SpaceInvaders-v0", &none, 1, 0);
    cr_expect_eq(((const Minatar *)f.ext)->sticky, 0.0);
    cr_expect(!((const Minatar *)f.ext)->ramping);
    float obs[ENV_MAX_OBS];
    env_reset(&f, obs);
    /* e's state (sticky 0.1, ramping) into f: f keeps its own options */
    env_reset(&e, obs);
    unsigned char *buf = malloc(env_state_size(e.spec));
    env_get_state(&e, buf);
    env_set_state(&f, buf, obs);
    EnvStep st = {0};
    for (int t = 1; t <= 5; t++) {
        st = env_step(&f, 0, obs);
        cr_assert(!st.terminated);
        cr_assert_eq(st.truncated, t == 5, "env.max_episode_steps truncates MinAtar at step 5 (step %d)", t);
    }
    cr_expect_eq(((const Minatar *)f.ext)->sticky, 0.0, "the instance's option, not the state's");
    cr_expect(!((const Minatar *)f.ext)->ramping);
    free(buf);
    env_free(&e);
    env_free(&f);
}

/* One seed and stream give one S; another stream (another actor's slot)
 * another S: the first observation differs somewhere across slots. */
Test(minatar_env, slots_get_their_own_generators) {
    float o[4][ENV_MAX_OBS];
    for (int k = 0; k < 4; k++) {
        Env e;
        init_env(&e, "MinAtar/Freeway-v1", NULL, 1, RNG_STREAM_ENV + (uint64_t)k);
        env_reset(&e, o[k]);
        float x[ENV_MAX_OBS];
        for (int t = 0; t < 30; t++) env_step(&e, 0, x); /* cars move at random speeds */
        memcpy(o[k], x, sizeof x);
        env_free(&e);
    }
    int distinct = 0;
    for (int k = 1; k < 4; k++) distinct += memcmp(o[0], o[k], 700 * sizeof(float)) != 0;
    cr_expect_geq(distinct, 2, "slots 1..3 look like slot 0");
}

/* envcheck on every id: planes in {0, 1}, the byte state's round trip,
 * determinism under a seed. */
Test(minatar_env, envcheck_passes) {
    for (int k = 0; k < env_registry_count; k++) {
        const EnvSpec *s = env_registry[k];
        if (strncmp(s->name, "MinAtar/", 8) || strstr(s->name, "Freeway")) continue; /* Freeway: 2500-step episodes */
        EnvCheckOptions co = {.episodes = 3, .seed = 11};
        EnvCheckReport rep;
        envcheck_run(s, NULL, &co, &rep);
        for (int i = 0; i < ENVCHECK_COUNT; i++)
            cr_expect_eq(rep.item[i].status, ENVCHECK_PASS, "%s: %s: %s", s->name, rep.item[i].name,
                         rep.item[i].detail);
    }
}

/* A classic Env stays small: actors and evaluators hold many. The byte
 * state is a pointer, not a member. */
Test(minatar_env, classic_env_stays_small) {
    cr_expect_leq(sizeof(Env), 900, "sizeof(Env) = %zu", sizeof(Env));
    Env e;
    init_env(&e, "CartPole-v1", NULL, 1, 0);
    cr_expect_null(e.ext);
    env_free(&e);
}
