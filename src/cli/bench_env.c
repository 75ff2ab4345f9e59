/* SPDX-License-Identifier: MIT */
/* bench_env.c: `gorila bench env [--steps N] [--env NAME] [--json]`.
 *
 * Steps per second of each bundled environment: one instance, uniformly
 * random actions from a xoshiro stream, env_reset on every episode end
 * (terminated or truncated) inside the timed loop, so resets are counted.
 * The loop calls the public env_step, exactly what an actor calls.
 *
 * Prints the OpenBLAS configuration first (every gorila benchmark says what
 * it ran with), then a table, or with --json one object per line:
 *   {"bench":"env","env":"CartPole-v1","steps":..,"episodes":..,"seconds":..,
 *    "steps_per_second":..,"openblas_config":..,"openblas_corename":..,
 *    "openblas_coretype":..,"openblas_num_threads":..,"cpu":..[,"gym_steps_per_second":..,
 *    "speedup_vs_gym":..]}
 * The Gymnasium reference is a built-in constant, not measured by this
 * program: Python CartPole-v1 at about 190k steps/s on the project's
 * machines, as stated when the benchmark was set up (2026-11;
 * docs/PERFORMANCE.md). Output
 * labels it as such; only CartPole has a reference figure. Never passes or
 * fails on time.
 */
#include "clock.h"
#include "cmd.h"
#include "platform.h"
#include "env.h"
#include "rng.h"
#include "util.h"

#include <inttypes.h>
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { BENCH_STEPS_DEFAULT = 5000000 };
static const double GYM_CARTPOLE_STEPS_PER_SECOND = 190e3; /* constant: see above */
#define GYM_REFERENCE_SOURCE "constant, not measured: Gymnasium Python CartPole-v1, the project's machines (2026-11, docs/PERFORMANCE.md)"

typedef struct {
    uint64_t steps, episodes;
    double seconds;
    double checksum; /* sum of observations: keeps the work observable */
} BenchResult;

static BenchResult run_one(const EnvSpec *spec, uint64_t steps) {
    Env e;
    char err[ERR_LEN];
    if (env_init(&e, spec, NULL, 1, RNG_STREAM_ENV, err) < 0) DIE(NULL, "%s", err);
    Rng policy;
    rng_seed(&policy, 1, RNG_STREAM_TOOL);
    float obs[ENV_MAX_OBS];
    const uint64_t na = (uint64_t)e.num_actions;
    BenchResult r = {.steps = steps};
    double sum = 0;
    env_reset(&e, obs);
    double t0 = now_seconds();
    for (uint64_t i = 0; i < steps; i++) {
        EnvStep st = env_step(&e, (int)rng_below(&policy, na), obs);
        if (st.terminated || st.truncated) {
            sum += obs[0];
            env_reset(&e, obs);
            r.episodes++;
        }
    }
    r.seconds = now_seconds() - t0;
    r.checksum = sum;
    env_free(&e);
    return r;
}

/* Write s as a JSON string (quotes included). */
static void json_string(const char *s) {
    putchar('"');
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            printf("\\%c", c);
        else if (c < 0x20)
            printf("\\u%04x", c);
        else
            putchar(c);
    }
    putchar('"');
}

int bench_env(int argc, char **argv) {
    uint64_t steps = BENCH_STEPS_DEFAULT;
    bool json = false;
    const char *only = NULL;
    char err[ERR_LEN];
    for (int i = 1; i < argc; i++) {
        /* --flag VALUE or --flag=VALUE */
        char flag[32];
        const char *eq = strchr(argv[i], '=');
        size_t len = eq ? (size_t)(eq - argv[i]) : strlen(argv[i]);
        snprintf(flag, sizeof flag, "%.*s", (int)len, argv[i]);
        const char *value = eq ? eq + 1 : NULL;
        if (!strcmp(flag, "-h") || !strcmp(flag, "--help")) {
            puts("usage: gorila bench env [--steps N] [--env NAME] [--json]\n"
                 "steps/s of each environment (default N = 5000000 steps each); see docs/PERFORMANCE.md");
            return 0;
        }
        if (!strcmp(flag, "--json")) {
            if (value) return usage_error("bench env: --json takes no value");
            json = true;
            continue;
        }
        if (strcmp(flag, "--steps") != 0 && strcmp(flag, "--env") != 0) {
            static const char *const flags[] = {"--steps", "--env", "--json", NULL};
            const char *close = did_you_mean(flag, flags);
            if (close) return usage_error("bench env: unknown option \"%s\" (did you mean %s?)", flag, close);
            return usage_error("bench env: unknown option \"%s\" (expected --steps N, --env NAME, --json)", flag);
        }
        if (!value) {
            if (i + 1 >= argc) return usage_error("bench env: %s needs a value", flag);
            value = argv[++i];
        }
        if (!strcmp(flag, "--steps")) {
            long v;
            if (parse_int_range(value, 1, 2000000000L, &v, err) < 0) return usage_error("bench env: --steps: %s", err);
            steps = (uint64_t)v;
        } else {
            if (!env_find(value)) {
                char names[256] = "";
                for (int k = 0; k < env_registry_count; k++) {
                    if (k) strncat(names, ", ", sizeof names - strlen(names) - 1);
                    strncat(names, env_registry[k]->name, sizeof names - strlen(names) - 1);
                }
                return usage_error("bench env: --env: unknown environment \"%s\"; valid names: %s", value, names);
            }
            only = value;
        }
    }

    Platform plat;
    platform_read(&plat);
    const char *config = plat.blas_config, *core = plat.blas_kernel;
    const char *coretype = getenv("OPENBLAS_CORETYPE");
    const char *nthreads = getenv("OPENBLAS_NUM_THREADS");
    if (!json) {
        printf("OpenBLAS: %s; core %s; OPENBLAS_CORETYPE=%s; OPENBLAS_NUM_THREADS=%s; CPU %s\n", config, core,
               coretype ? coretype : "(unset)", nthreads ? nthreads : "(unset)", plat.cpu);
        printf("one instance, uniform random actions, resets counted\n"
               "vs_gym*: ratio to %.0fk steps/s (*%s)\n",
               GYM_CARTPOLE_STEPS_PER_SECOND / 1e3, GYM_REFERENCE_SOURCE);
        printf("%-16s %12s %10s %9s %14s %10s\n", "env", "steps", "episodes", "seconds", "steps/s", "vs_gym*");
    }
    for (int k = 0; k < env_registry_count; k++) {
        const EnvSpec *spec = env_registry[k];
        if (only && strcmp(only, spec->name) != 0) continue;
        BenchResult r = run_one(spec, steps);
        double sps = r.seconds > 0 ? (double)r.steps / r.seconds : 0.0;
        bool has_ref = !strcmp(spec->name, "CartPole-v1");
        double ratio = sps / GYM_CARTPOLE_STEPS_PER_SECOND;
        if (json) {
            printf("{\"bench\":\"env\",\"env\":");
            json_string(spec->name);
            printf(",\"steps\":%" PRIu64 ",\"episodes\":%" PRIu64 ",\"seconds\":%.6f,\"steps_per_second\":%.1f",
                   r.steps, r.episodes, r.seconds, sps);
            if (has_ref)
                printf(",\"gym_steps_per_second_constant\":%.0f,\"speedup_vs_gym\":%.1f,\"reference_measured\":false,"
                       "\"reference_source\":\"%s\"",
                       GYM_CARTPOLE_STEPS_PER_SECOND, ratio, GYM_REFERENCE_SOURCE);
            printf(",\"openblas_config\":");
            json_string(config);
            printf(",\"openblas_corename\":");
            json_string(core);
            printf(",\"openblas_coretype\":");
            json_string(coretype ? coretype : "");
            printf(",\"openblas_num_threads\":");
            json_string(nthreads ? nthreads : "");
            printf(",\"cpu\":");
            json_string(plat.cpu);
            printf(",\"checksum\":%.9g}\n", r.checksum);
        } else {
            char vs[32] = "-";
            if (has_ref) snprintf(vs, sizeof vs, "%.0fx", ratio);
            printf("%-16s %12" PRIu64 " %10" PRIu64 " %9.3f %14.0f %10s\n", spec->name, r.steps,
                   r.episodes, r.seconds, sps, vs);
        }
        fflush(stdout);
    }
    return 0;
}
