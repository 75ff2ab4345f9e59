/* SPDX-License-Identifier: MIT */
/* cmd_env.c: `gorila env list|rollout|replay|check`, the command-line face
 * of the bundled environments (envs/env.h, envs/envcheck.h).
 *
 *   env list                       table of name, observation (size, or HxWxC planes),
 *                                  actions, time limit, threshold ("-": none)
 *   env rollout NAME [--episodes N] [--seed S] [--torques a,b,...]
 *                                  random-policy episodes: return and length of
 *                                  each, then total steps and steps/s
 *   env replay NAME [--torques a,b,...]
 *                                  step the environment from commands on stdin
 *                                  (protocol below and in docs/ENVIRONMENTS.md)
 *   env check NAME [--episodes N] [--seed S] [--torques a,b,...] [--kwargs JSON]
 *                                  envcheck_run's checks, one line each
 *
 * NAME may be a Python id (python:MODULE:CALLABLE, gymnasium:ID; rollout,
 * replay and check, with --kwargs JSON as env.kwargs), opened through the
 * bridge (src/pyenv); replay's `state v1 ... vk` is then the instance's
 * reset(options={"state": [...]}), and a failure of its code exits 9 (for
 * check, a failed check: 1). env check runs the checks that need no copy
 * of the state (envcheck.h) and prints the others as skipped, saying why.
 *
 * Replay protocol, one command per line (blank lines and # lines ignored):
 *   state v1 ... vk   set the internal state (k = state_dim float64 values)
 *                     and start a new episode (time-limit counter at zero)
 *   step A            apply action index A; print one line
 *                     obs_1,...,obs_m,reward,terminated,truncated,state_1,...,state_k
 *                     (floats in %.17g, the float32 obs widened to double; flags 0/1)
 *
 * Flags are reported as Gymnasium reports them (reported_flags below):
 * truncated whenever the episode's step count has reached the time limit,
 * also on a step that terminated, so both can be 1. env_step's own
 * EnvStep.truncated, which the actors and the learner use, stays false on a
 * terminating step (terminated wins there: no bootstrap past a true end);
 * only what these commands print follows Gymnasium.
 * Any malformed line stops the replay with one line on stderr,
 * "gorila env replay: line N: ...", and exit status 2; the lines before it
 * have been answered on stdout. So does a line longer than 64 KiB or one
 * with a NUL byte; control bytes of the input are quoted as \xHH.
 *
 * Exit status: 0 success, 1 failure at run time (reading stdin; for check:
 * a check failed), 2 bad usage or bad input.
 */
#include "clock.h"
#include "cmd.h"
#include "linein.h"
#include "cmd_env_minatar.h"
#include "env.h"
#include "envcheck.h"
#include "exitcode.h"
#include "pyenv.h"
#include "rng.h"
#include "util.h"

#include <inttypes.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { EPISODES_DEFAULT = 5, EPISODES_MAX = 100000000 };

/* Print the bad name, a did-you-mean if one is close, and the valid names. */
static int unknown_env(const char *what, const char *name) {
    const char *names[32];
    char list[512] = "";
    int n = env_registry_count < 31 ? env_registry_count : 31;
    for (int i = 0; i < n; i++) {
        names[i] = env_registry[i]->name;
        if (i) strncat(list, ", ", sizeof list - strlen(list) - 1);
        strncat(list, names[i], sizeof list - strlen(list) - 1);
    }
    names[n] = NULL;
    const char *close = did_you_mean(name, names);
    if (close)
        return usage_error("%s: unknown environment \"%s\" (did you mean %s?); valid names: %s", what, name, close,
                           list);
    return usage_error("%s: unknown environment \"%s\"; valid names: %s", what, name, list);
}

/* Parse "a,b,c" into opt->torques. Returns 0, or -1 with a message in err. */
static int parse_torques(const char *s, EnvOptions *opt, char *err) {
    char buf[1024];
    if (strlen(s) >= sizeof buf) return errf(err, "torque list is too long");
    strcpy(buf, s);
    int n = 0;
    char *p = buf;
    for (;;) {
        char *comma = strchr(p, ',');
        if (comma) *comma = '\0';
        if (n == ENV_MAX_ACTIONS) return errf(err, "at most %d torques, got more", ENV_MAX_ACTIONS);
        if (parse_double(p, &opt->torques[n], err) < 0) return err_prefix(err, "torque %d", n + 1);
        n++;
        if (!comma) break;
        p = comma + 1;
    }
    opt->n_torques = n;
    return 0;
}

/* Options shared by rollout and replay. */
typedef struct {
    const char *name;
    uint64_t episodes;
    uint64_t seed;
    const char *torques;
    const char *kwargs;       /* --kwargs: a Python environment's env.kwargs (JSON) */
    PyEnvHost py;             /* its bridge, when NAME is a Python id (env_options) */
} EnvArgs;

/* Parse `NAME [--flag value | --flag=value]...` for subcommand `what`.
 * allowed: NULL-terminated flag names this subcommand accepts. */
static int parse_env_args(const char *what, int argc, char **argv, const char *const *allowed, EnvArgs *a) {
    char err[ERR_LEN];
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (strncmp(arg, "--", 2) != 0) {
            if (a->name) return usage_error("%s: unexpected argument \"%s\"", what, arg);
            a->name = arg;
            continue;
        }
        char flag[64];
        const char *value = NULL;
        const char *eq = strchr(arg, '=');
        size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
        if (len >= sizeof flag) len = sizeof flag - 1;
        memcpy(flag, arg, len);
        flag[len] = '\0';
        int known = 0;
        for (int k = 0; allowed[k]; k++) known |= !strcmp(allowed[k], flag);
        if (!known) {
            const char *close = did_you_mean(flag, allowed);
            char list[256] = "";
            for (int k = 0; allowed[k]; k++) {
                if (k) strncat(list, ", ", sizeof list - strlen(list) - 1);
                strncat(list, allowed[k], sizeof list - strlen(list) - 1);
            }
            if (close) return usage_error("%s: unknown option \"%s\" (did you mean %s?)", what, flag, close);
            return usage_error("%s: unknown option \"%s\" (expected %s)", what, flag, list);
        }
        if (eq) {
            value = eq + 1;
        } else {
            if (i + 1 >= argc) return usage_error("%s: %s needs a value", what, flag);
            value = argv[++i];
        }
        if (!strcmp(flag, "--episodes")) {
            long v;
            if (parse_int_range(value, 1, EPISODES_MAX, &v, err) < 0)
                return usage_error("%s: --episodes: %s", what, err);
            a->episodes = (uint64_t)v;
        } else if (!strcmp(flag, "--seed")) {
            if (parse_u64(value, &a->seed, err) < 0) return usage_error("%s: --seed: %s", what, err);
        } else if (!strcmp(flag, "--torques")) {
            a->torques = value;
        } else if (!strcmp(flag, "--kwargs")) {
            a->kwargs = value;
        }
    }
    if (!a->name) return usage_error("%s: expected an environment name (see `gorila env list`)", what);
    return 0;
}

/* Look up a->name and fill opt with a's torques. Returns 0 or EXIT_USAGE
 * (message printed). */
static int env_options(const char *what, EnvArgs *a, const EnvSpec **spec, EnvOptions *opt) {
    char err[ERR_LEN];
    memset(opt, 0, sizeof *opt);
    if (env_extern_kind(a->name)) { /* a Python environment, through the bridge */
        if (a->torques) return usage_error("%s: --torques applies to Pendulum-v1 only, not %s", what, a->name);
        if (pyenv_open(&a->py, a->name, a->kwargs, err) != 0) return usage_error("%s: %s", what, err);
        *spec = &a->py.spec;
        return 0;
    }
    if (a->kwargs) return usage_error("%s: --kwargs applies to Python environments only, not %s", what, a->name);
    *spec = env_find(a->name);
    if (!*spec) return unknown_env(what, a->name);
    if (a->torques) {
        if (strcmp((*spec)->name, "Pendulum-v1") != 0)
            return usage_error("%s: --torques applies to Pendulum-v1 only, not %s", what, (*spec)->name);
        if (parse_torques(a->torques, opt, err) < 0) return usage_error("%s: --torques: %s", what, err);
    }
    return 0;
}

/* Look up a->name and initialise e with a's torques. Returns 0 or EXIT_USAGE
 * (message printed). env_init checks the spec first (env_spec_check), so the
 * obs[ENV_MAX_OBS] and state[ENV_MAX_STATE] buffers below are large enough. */
static int make_env(const char *what, EnvArgs *a, uint64_t seed, Env *e) {
    const EnvSpec *spec;
    EnvOptions opt;
    int rc = env_options(what, a, &spec, &opt);
    if (rc) return rc;
    char err[ERR_LEN];
    if (env_init(e, spec, &opt, seed, RNG_STREAM_ENV, err) < 0) {
        pyenv_close(&a->py);
        return usage_error("%s: %s", what, err);
    }
    return 0;
}

/* The end of a command that stepped e: e and a's bridge released; rc, or
 * GORILA_EXIT_ENV when a Python environment failed (the bridge said why). */
static int done_env(const char *what, EnvArgs *a, Env *e, int rc) {
    bool failed = e->failed;
    env_free(e);
    pyenv_close(&a->py);
    if (!failed) return rc;
    fprintf(stderr, "gorila: error: %s: env %s failed (above); stopped\n", what, a->name);
    return GORILA_EXIT_ENV;
}

/* The flags of the step just taken, as Gymnasium's TimeLimit wrapper reports
 * them: `truncated = elapsed_steps >= max_episode_steps`, whatever the
 * environment said about termination. r is env_step's answer for e. */
static EnvStep reported_flags(const Env *e, EnvStep r) {
    /* max_steps 0: no time limit; a Python environment's own truncation
     * (env_step's truncated with no limit here) stands */
    r.truncated = (e->max_steps > 0 && e->t >= e->max_steps) || (e->spec->ext_hooks && r.truncated);
    return r;
}

/* Rollout's "end" column for the last step of an episode. */
static const char *end_name(EnvStep r) {
    if (r.terminated && r.truncated) return "terminated+truncated";
    return r.terminated ? "terminated" : "truncated";
}

static int env_list(int argc, char **argv) {
    if (argc > 1) return usage_error("env list: takes no arguments, got \"%s\"", argv[1]);
    printf("%-26s %8s %8s %11s %17s\n", "name", "obs", "actions", "time_limit", "reward_threshold");
    for (int i = 0; i < env_registry_count; i++) {
        const EnvSpec *s = env_registry[i];
        char obs[32], limit[16] = "-", thr[32] = "-";
        env_obs_text(s, obs, sizeof obs);
        if (s->max_episode_steps) snprintf(limit, sizeof limit, "%d", s->max_episode_steps);
        if (env_has_threshold(s->reward_threshold)) snprintf(thr, sizeof thr, "%g", s->reward_threshold);
        printf("%-26s %8s %8d %11s %17s\n", s->name, obs, s->num_actions, limit, thr);
    }
    printf("\nPendulum-v1: actions are the discrete torques {-2, 0, 2} (--torques to change);\n"
           "Gymnasium registers no reward threshold for it, -200 is gorila's \"solved\" bar.\n");
    minatar_cli_list();
    char err[ERR_LEN];
    if (env_registry_check(err) < 0) {
        fprintf(stderr, "gorila: error: env list: %s\n", err);
        return 1;
    }
    return 0;
}

static int env_check(int argc, char **argv) {
    static const char *const allowed[] = {"--episodes", "--seed", "--torques", "--kwargs", NULL};
    static const char *const status_word[] = {[ENVCHECK_PASS] = "pass", [ENVCHECK_FAIL] = "FAIL",
                                              [ENVCHECK_SKIP] = "skip"};
    const char *what = "env check";
    EnvArgs a = {.episodes = ENVCHECK_EPISODES_DEFAULT};
    int rc = parse_env_args(what, argc, argv, allowed, &a);
    if (rc) return rc;
    const EnvSpec *spec;
    EnvOptions opt;
    rc = env_options(what, &a, &spec, &opt);
    if (rc) return rc;
    EnvCheckOptions co = {.episodes = (int)a.episodes, .seed = a.seed};
    EnvCheckReport rep;
    envcheck_run(spec, &opt, &co, &rep); /* a Python environment: the checks without state copies */
    fflush(stderr);                       /* its failures' tracebacks before the report */

    printf("%s: %d episodes, seed %" PRIu64 ", uniform random actions\n", spec->name, (int)a.episodes,
           a.seed);
    int n[3] = {0};
    for (int k = 0; k < ENVCHECK_COUNT; k++) {
        const EnvCheckItem *it = &rep.item[k];
        n[it->status]++;
        if (!it->detail[0]) printf("  %s  %-11s  %s\n", status_word[it->status], it->name, it->what);
        else if (it->status == ENVCHECK_FAIL) printf("  FAIL  %-11s  %s: %s\n", it->name, it->what, it->detail);
        else printf("  %s  %-11s  %s (%s)\n", status_word[it->status], it->name, it->what, it->detail);
    }
    printf("%s: %d passed, %d failed, %d skipped (%" PRIu64 " steps)\n", spec->name, n[ENVCHECK_PASS], n[ENVCHECK_FAIL],
           n[ENVCHECK_SKIP], rep.steps);
    pyenv_close(&a.py);
    if (fflush(stdout) != 0) {
        fprintf(stderr, "gorila: error: %s: writing stdout: %s\n", what, strerror(errno));
        return 1;
    }
    return rep.failed ? 1 : 0;
}

static int env_rollout(int argc, char **argv) {
    static const char *const allowed[] = {"--episodes", "--seed", "--torques", "--kwargs", NULL};
    EnvArgs a = {.episodes = EPISODES_DEFAULT};
    int rc = parse_env_args("env rollout", argc, argv, allowed, &a);
    if (rc) return rc;
    Env e;
    rc = make_env("env rollout", &a, a.seed, &e);
    if (rc) return rc;
    Rng policy;
    rng_seed(&policy, a.seed, RNG_STREAM_TOOL);

    printf("%s: %" PRIu64 " episodes, seed %" PRIu64 ", uniform random policy over %d actions\n", e.spec->name,
           a.episodes, a.seed, e.num_actions);
    printf("%8s %14s %8s %s\n", "episode", "return", "length", "end");
    float obs[ENV_MAX_OBS];
    uint64_t total = 0;
    double t0 = now_seconds();
    for (uint64_t ep = 1; ep <= a.episodes && !e.failed; ep++) {
        env_reset(&e, obs);
        double ret = 0;
        long len = 0;
        EnvStep r;
        do {
            int act = (int)rng_below(&policy, (uint64_t)e.num_actions);
            r = reported_flags(&e, env_step(&e, act, obs));
            ret += r.reward;
            len++;
        } while (!r.terminated && !r.truncated && !e.failed);
        if (e.failed) break;
        total += (uint64_t)len;
        printf("%8" PRIu64 " %14.6f %8ld %s\n", ep, ret, len, end_name(r));
    }
    double secs = now_seconds() - t0;
    if (!e.failed) {
        printf("total steps: %" PRIu64 "\n", total);
        printf("steps/s: %.4g\n", secs > 0 ? (double)total / secs : 0.0);
    }
    return done_env("env rollout", &a, &e, 0);
}

/* Who a bad line of replay input names (linein_error). */
static const char replay_who[] = "gorila env replay";

static void print_transition(const Env *e, const float *obs, EnvStep r) {
    const EnvSpec *s = e->spec;
    for (int i = 0; i < s->obs_dim; i++) printf("%.17g,", (double)obs[i]);
    printf("%.17g,%d,%d", r.reward, r.terminated ? 1 : 0, r.truncated ? 1 : 0);
    for (int i = 0; i < s->state_dim; i++) printf(",%.17g", e->state[i]);
    putchar('\n');
}

/* The replay's environment and where it is. */
typedef struct {
    Env e;
    bool have_state;
    float obs[ENV_MAX_OBS];
} Replay;

enum { MAX_TOKENS = ENV_MAX_STATE + 2 };

/* state v1 ... vk (nvals values in tok[1..], -1: more than MAX_TOKENS - 1). */
static int replay_state(Replay *r, long lineno, char **tok, int nvals) {
    const EnvSpec *s = r->e.spec;
    double st[ENV_MAX_STATE];
    char err[ERR_LEN];
    if (nvals < 0)
        return linein_error(replay_who, lineno, "state: expected %d values for %s, got more than %d", s->state_dim, s->name,
                          MAX_TOKENS - 1);
    if (s->ext_hooks) { /* a Python environment: reset(options={"state": [...]}) */
        for (int i = 0; i < nvals; i++)
            if (parse_double(tok[i + 1], &st[i], err) < 0)
                return linein_error(replay_who, lineno, "state: value %d: %s", i + 1, err);
        if (pyenv_reset_to(&r->e, st, nvals, r->obs) != 0) return GORILA_EXIT_ENV;
        r->have_state = true;
        return 0;
    }
    if (nvals != s->state_dim)
        return linein_error(replay_who, lineno, "state: expected %d values for %s, got %d", s->state_dim, s->name, nvals);
    for (int i = 0; i < nvals; i++)
        if (parse_double(tok[i + 1], &st[i], err) < 0) return linein_error(replay_who, lineno, "state: value %d: %s", i + 1, err);
    env_set_state(&r->e, st, r->obs);
    r->have_state = true;
    return 0;
}

/* step A: one transition printed. */
static int replay_step(Replay *r, long lineno, char **tok, int nvals) {
    long act;
    char err[ERR_LEN];
    if (nvals < 0)
        return linein_error(replay_who, lineno, "step: expected 1 action index, got more than %d values", MAX_TOKENS - 1);
    if (nvals != 1) return linein_error(replay_who, lineno, "step: expected 1 action index, got %d values", nvals);
    if (parse_int_range(tok[1], 0, r->e.num_actions - 1, &act, err) < 0)
        return linein_error(replay_who, lineno, "step: action for %s: %s", r->e.spec->name, err);
    if (!r->have_state) return linein_error(replay_who, lineno, "step before any state command (set the state first)");
    EnvStep res = reported_flags(&r->e, env_step(&r->e, (int)act, r->obs));
    if (r->e.failed) return GORILA_EXIT_ENV;
    print_transition(&r->e, r->obs, res);
    return 0;
}

/* One line of input: a command, a comment or a blank line. */
static int replay_line(Replay *r, long lineno, char *line) {
    char *p = line + strspn(line, " \t");
    if (*p == '#' || *p == '\n' || *p == '\r' || *p == '\0') return 0;
    char *tok[MAX_TOKENS + 1];
    int n = linein_words(p, tok, MAX_TOKENS);
    if (n == 0) return 0;                    /* a line of blanks and a stray \r */
    int nvals = n > MAX_TOKENS ? -1 : n - 1; /* -1: more than we count */
    if (!strcmp(tok[0], "state")) return replay_state(r, lineno, tok, nvals);
    if (!strcmp(tok[0], "step")) return replay_step(r, lineno, tok, nvals);
    return linein_error(replay_who, lineno, "unknown command \"%s\" (expected state or step)", tok[0]);
}

static int env_replay(int argc, char **argv) {
    static const char *const allowed[] = {"--torques", "--kwargs", NULL};
    const char *what = "env replay";
    if (minatar_cli_wants(argc, argv)) return minatar_cli_replay(argc, argv); /* cmd_env_minatar.c */
    EnvArgs a = {0};
    int rc = parse_env_args(what, argc, argv, allowed, &a);
    if (rc) return rc;
    Replay r = {.have_state = false};
    rc = make_env(what, &a, 0, &r.e);
    if (rc) return rc;
    if (r.e.spec->state_bytes) { /* the protocol's state is float64 values */
        env_free(&r.e);
        pyenv_close(&a.py);
        return usage_error("%s: %s has a byte state, which the state/step protocol cannot set", what, a.name);
    }

    char *line = xmalloc(LINEIN_MAX + 1);
    long lineno = 0;
    size_t col = 0;
    LineinRead got;
    while (rc == 0 && (got = linein_read(stdin, line, &col)) != LINEIN_EOF) {
        lineno++;
        rc = got == LINEIN_OK ? replay_line(&r, lineno, line) : linein_read_error(replay_who, lineno, got, col);
    }
    if (!rc && ferror(stdin)) {
        fprintf(stderr, "gorila: error: %s: reading stdin: %s\n", what, strerror(errno));
        rc = 1;
    }
    free(line);
    if (fflush(stdout) != 0 && !rc) {
        fprintf(stderr, "gorila: error: %s: writing stdout: %s\n", what, strerror(errno));
        rc = 1;
    }
    return done_env(what, &a, &r.e, rc);
}

static const char env_usage[] =
    "usage: gorila env list\n"
    "       gorila env rollout NAME [--episodes N] [--seed S] [--torques a,b,...] [--kwargs JSON]\n"
    "       gorila env replay NAME [--torques a,b,...] [--kwargs JSON] < commands\n"
    "       gorila env replay MinAtar/<Game>-v0|-v1 [--sticky P] [--no-ramping] < commands\n"
    "       gorila env check NAME [--episodes N] [--seed S] [--torques a,b,...] [--kwargs JSON]\n"
    "\n"
    "replay reads one command per line (blank and # lines ignored):\n"
    "  state v1 ... vk   set the float64 internal state, start a new episode\n"
    "  step A            apply action A, print obs...,reward,terminated,truncated,state...\n"
    "Flags follow Gymnasium: truncated is 1 once the step count reaches the time\n"
    "limit, also on a step that terminated (both 1); rollout's end column then\n"
    "reads terminated+truncated.\n"
    "MinAtar replay reads seed S, reset, step A; prints R T CELLS (docs/ENVIRONMENTS.md).\n"
    "--torques sets Pendulum-v1's discrete torque set (default -2,0,2).\n"
    "NAME may be python:MODULE:CALLABLE or gymnasium:ID, with --kwargs its keyword\n"
    "arguments as a JSON object (env.kwargs); replay's state v1 ... vk then calls\n"
    "reset(options={\"state\": [v1, ..., vk]}) and prints no state columns.\n"
    "check steps the environment with random actions for N episodes (default 10)\n"
    "and checks its contract (sizes, finite values, bounds, flags, determinism,\n"
    "seeding), one line per check; exit status 1 if any check fails. For a\n"
    "Python NAME the checks that copy its state (state_dim, past_end) are skipped,\n"
    "each saying why; two instances seeded alike must step alike.\n"
    "See docs/ENVIRONMENTS.md.\n";

static bool wants_help(int argc, char **argv) {
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help") || !strcmp(argv[i], "help")) return true;
    return false;
}

int cmd_env(int argc, char **argv) {
    static const char *const subs[] = {"list", "rollout", "replay", "check", NULL};
    if (wants_help(argc, argv)) {
        fputs(env_usage, stdout);
        return 0;
    }
    if (argc < 2) {
        fputs(env_usage, stderr);
        return usage_error("env: expected one of: list, rollout, replay, check");
    }
    const char *sub = argv[1];
    if (!strcmp(sub, "list")) return env_list(argc - 1, argv + 1);
    if (!strcmp(sub, "rollout")) return env_rollout(argc - 1, argv + 1);
    if (!strcmp(sub, "replay")) return env_replay(argc - 1, argv + 1);
    if (!strcmp(sub, "check")) return env_check(argc - 1, argv + 1);
    const char *close = did_you_mean(sub, subs);
    if (close) return usage_error("env: unknown subcommand \"%s\" (did you mean %s?)", sub, close);
    return usage_error("env: unknown subcommand \"%s\" (expected list, rollout, replay or check)", sub);
}
