/* SPDX-License-Identifier: MIT */
/* configkeys.c: the schema of a config, and typed values from YAML nodes.
 * See configint.h for how the loader is split, config.h for the contract
 * and docs/CONFIG.md for every key, its default and its range.
 *
 * One table (configkeys_table) gives each key its section, type, bounds,
 * default and place in Config; config_defaults, parsing, --set,
 * config_validate, config_write, config_write_json and config_same all walk
 * that same table.
 *
 * Typing follows YAML 1.2's core schema, strictly: an integer is a plain
 * (unquoted) [-+]?[0-9]+ without leading zeros; a number is a plain decimal
 * or exponent form; booleans are exactly true and false; a quoted "5" is a
 * string; ~, null and an empty value are null, which no key accepts.
 * env.kwargs takes a mapping too (json_map), typed the same way into JSON
 * text: null is JSON's null there.
 */
#include "config.h"
#include "configint.h"
#include "env.h"
#include "platform.h"
#include "util.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the schema ------------------------------------------------------- */

static const char *const run_modes[] = {"distributed", "local", NULL};
static const char *const sync_modes[] = {"ps_sync", "ps_async",  "ps_bounded", "allreduce",
                                         "gossip",  "easgd",     "local_sgd",  NULL};
static const char *const gossip_topologies[] = {"random", "ring", "hypercube", NULL};
static const char *const replay_kinds[] = {"uniform", "prioritized", NULL};
static const char *const initial_priorities[] = {"actor", "max", NULL};
static const char *const optim_kinds[] = {"adam", "rmsprop", "sgd", NULL};
static const char *const rmsprop_eps_forms[] = {"inside", "outside", NULL};
static const char *const target_kinds[] = {"hard", "soft", NULL};
static const char *const explore_kinds[] = {"linear", "apex", NULL};
static const char *const progress_modes[] = {"auto", "always", "never", NULL};
static const char *const allreduce_impls[] = {"ring", "naive", "mpi", "hierarchical", NULL};
static const char *const wait_modes[] = {"auto", "poll", "sleep", NULL};
static const char *const pin_modes[] = {"false", "true", "auto", NULL};
static const char *const lr_scalings[] = {"none", "linear", "sqrt", NULL};
static const char *const learner_batches[] = {"per_learner", "global", NULL};

/* Enums are stored through an int-sized copy. */
_Static_assert(sizeof(RunMode) == sizeof(int) && sizeof(SyncMode) == sizeof(int) &&
                   sizeof(ReplayKind) == sizeof(int) && sizeof(CfgOptim) == sizeof(int) &&
                   sizeof(TargetKind) == sizeof(int) && sizeof(ExploreKind) == sizeof(int) &&
                   sizeof(ProgressMode) == sizeof(int) && sizeof(AllreduceImpl) == sizeof(int) && sizeof(InitialPriority) == sizeof(int) &&
                   sizeof(WaitMode) == sizeof(int) && sizeof(GossipTopology) == sizeof(int) &&
                   sizeof(RmspropEps) == sizeof(int),
               "enums are copied as int");

static int rule_out_dir(const char *s, size_t len, char *msg);
static int rule_env_name(const char *s, size_t len, char *msg);
static int rule_reward_threshold(const char *s, size_t len, char *msg);
static int rule_kwargs(const char *s, size_t len, char *msg);
static int rule_blas_kernel(const char *s, size_t len, char *msg);

/* Each row ends with the key's default (config_defaults). */
#define INT(s, k, m, lo, hi, d) \
    {.section = s, .name = k, .type = CFG_T_INT, .off = CFG_OFF(m), .ilo = lo, .ihi = hi, .idef = d}
#define U64(s, k, m, lo, hi, d) \
    {.section = s, .name = k, .type = CFG_T_U64, .off = CFG_OFF(m), .ilo = lo, .ihi = hi, .idef = d}
#define F64(s, k, m, lo, hi, lo_x, hi_x, d)                                                                 \
    {.section = s, .name = k, .type = CFG_T_F64, .off = CFG_OFF(m), .flo = lo, .fhi = hi, .lo_open = lo_x, \
     .hi_open = hi_x, .fdef = d}
#define F_CC(s, k, m, lo, hi, d) F64(s, k, m, lo, hi, false, false, d) /* [lo, hi] */
#define F_OC(s, k, m, lo, hi, d) F64(s, k, m, lo, hi, true, false, d)  /* (lo, hi] */
#define F_CO(s, k, m, lo, hi, d) F64(s, k, m, lo, hi, false, true, d)  /* [lo, hi) */
#define BOOL(s, k, m, d) {.section = s, .name = k, .type = CFG_T_BOOL, .off = CFG_OFF(m), .idef = d}
#define STR(s, k, m, r, d)                                                                                      \
    {.section = s, .name = k, .type = CFG_T_STR, .off = CFG_OFF(m), .cap = sizeof(((Config *)0)->m), .rule = r, \
     .sdef = d}
#define ENUM(s, k, m, t, d) {.section = s, .name = k, .type = CFG_T_ENUM, .off = CFG_OFF(m), .names = t, .idef = d}
#define COUNT(a) (int)(sizeof a / sizeof a[0])

#define E12 UINT64_C(1000000000000)

static const double default_torques[] = {-2, 0, 2};
static const int default_hidden[] = {64, 64};
_Static_assert(COUNT(default_torques) <= CFG_MAX_TORQUES && COUNT(default_hidden) <= CFG_MAX_LAYERS,
               "list defaults fit their keys");

const CfgKey configkeys_table[] = {
    STR("run", "name", run.name, configkeys_rule_run_name, "run"),
    STR("run", "out_dir", run.out_dir, rule_out_dir, "runs"),
    U64("run", "seed", run.seed, 0, UINT64_MAX, 1),
    ENUM("run", "mode", run.mode, run_modes, RUN_DISTRIBUTED),
    U64("run", "max_env_steps", run.max_env_steps, 0, E12, 100000),
    U64("run", "max_updates", run.max_updates, 0, E12, 0),
    F_CC("run", "max_seconds", run.max_seconds, 0, 1e7, 0),
    F_OC("run", "stop_deadline_seconds", run.stop_deadline_seconds, 0, 1e7, 10),
    BOOL("run", "stop_when_solved", run.stop_when_solved, true),
    INT("run", "blas_threads", run.blas_threads, 1, 64, 1),
    STR("run", "blas_kernel", run.blas_kernel, rule_blas_kernel, "auto"),
    ENUM("run", "wait", run.wait, wait_modes, WAIT_AUTO),
    ENUM("run", "pin_cores", run.pin_cores, pin_modes, PIN_AUTO),

    STR("env", "name", env.name, rule_env_name, "CartPole-v1"),
    {.section = "env", .name = "kwargs", .type = CFG_T_STR, .off = CFG_OFF(env.kwargs),
     .cap = sizeof(((Config *)0)->env.kwargs), .rule = rule_kwargs, .json_map = true, .sdef = "{}"},
    INT("env", "max_episode_steps", env.max_episode_steps, 0, 1000000, 0),
    STR("env", "reward_threshold", env.reward_threshold, rule_reward_threshold, "auto"),
    {.section = "env", .name = "torques", .type = CFG_T_F64S, .off = CFG_OFF(env.torques),
     .n_off = CFG_OFF(env.n_torques), .cap = CFG_MAX_TORQUES, .flo = -2, .fhi = 2, .what = "torques",
     .hint = " (Pendulum-v1's max_torque is 2; it would clip larger values)", .ldef = default_torques,
     .n_ldef = COUNT(default_torques)},
    F_CC("env", "sticky_actions", env.sticky_actions, 0, 1, 0.1),
    BOOL("env", "difficulty_ramping", env.difficulty_ramping, true),

    INT("roles", "actors", roles.actors, 1, 1024, 1),
    INT("roles", "replay_shards", roles.replay_shards, 1, 256, 1),
    INT("roles", "learners", roles.learners, 1, 256, 1),
    INT("roles", "param_servers", roles.param_servers, 0, 256, 1),

    ENUM("sync", "mode", sync.mode, sync_modes, SYNC_PS_SYNC),
    INT("sync", "staleness", sync.staleness, 0, 10000, 4),
    INT("sync", "learner_pull_every", sync.learner_pull_every, 1, 1000000, 1),
    ENUM("sync", "allreduce_impl", sync.allreduce_impl, allreduce_impls, ALLREDUCE_RING),
    ENUM("sync", "lr_scaling", sync.lr_scaling, lr_scalings, LR_SCALING_NONE),
    INT("sync", "lr_warmup_updates", sync.lr_warmup_updates, 0, 100000000, 0),
    INT("sync", "gossip_every", sync.gossip_every, 1, 1000000, 4),
    ENUM("sync", "gossip_topology", sync.gossip_topology, gossip_topologies, GOSSIP_RANDOM),
    INT("sync", "easgd_every", sync.easgd_every, 1, 1000000, 4),
    F64("sync", "easgd_alpha", sync.easgd_alpha, 0, 1, true, true, 0.5),
    INT("sync", "average_every", sync.average_every, 1, 1000000, 8),

    ENUM("learner", "batch", learner.batch, learner_batches, LEARNER_BATCH_PER_LEARNER),
    F_CC("learner", "loss_outlier_sigma", learner.loss_outlier_sigma, 0, 1000, 0),
    INT("learner", "prefetch", learner.prefetch, 1, LEARNER_MAX_PREFETCH, 1),
    INT("learner", "accumulate", learner.accumulate, 1, LEARNER_MAX_ACCUMULATE, 1),

    INT("actor", "envs", actor.envs, 1, 4096, 1),
    INT("actor", "pull_every", actor.pull_every, 1, 1000000, 100),
    INT("actor", "chunk", actor.chunk, 1, 65536, 32),

    ENUM("replay", "kind", replay.kind, replay_kinds, REPLAY_UNIFORM),
    U64("replay", "capacity", replay.capacity, 1, 1000000000, 100000),
    INT("replay", "batch_size", replay.batch_size, 1, 65536, 64),
    U64("replay", "min_size", replay.min_size, 1, 1000000000, 1000),
    F_CC("replay", "samples_per_insert", replay.samples_per_insert, 0, 10000, 0),
    F_OC("replay", "spi_tolerance", replay.spi_tolerance, 0, 100, 0.01),
    F_CC("replay", "alpha", replay.alpha, 0, 1, 0.6), /* Schaul et al. 2016, proportional variant; Ape-X */
    F_CC("replay", "beta", replay.beta, 0, 1, 0.4), /* Schaul et al. 2016; Ape-X keeps 0.4 */
    F_CC("replay", "beta_final", replay.beta_final, 0, 1, 1.0), /* Schaul et al. 2016 anneal to 1 */
    U64("replay", "beta_steps", replay.beta_steps, 0, 1000000000000ULL, 100000),
    F_OC("replay", "priority_eps", replay.priority_eps, 0, 1e6, 1e-6),
    ENUM("replay", "initial_priority", replay.initial_priority, initial_priorities, PRIORITY_ACTOR),

    {.section = "network", .name = "conv", .type = CFG_T_CONV, .off = CFG_OFF(network.conv),
     .n_off = CFG_OFF(network.n_conv), .cap = CFG_MAX_CONV, .what = "conv layers", .n_ldef = 0},
    {.section = "network", .name = "hidden", .type = CFG_T_INTS, .off = CFG_OFF(network.hidden),
     .n_off = CFG_OFF(network.n_hidden), .cap = CFG_MAX_LAYERS, .ilo = 1, .ihi = CFG_MAX_HIDDEN,
     .what = "layer widths", .ldef = default_hidden, .n_ldef = COUNT(default_hidden)},
    BOOL("network", "dueling", network.dueling, false),

    F_CC("agent", "gamma", agent.gamma, 0, 1, 0.99),
    INT("agent", "n_step", agent.n_step, 1, 100, 1),
    BOOL("agent", "double_dqn", agent.double_dqn, true),
    F_OC("agent", "huber_delta", agent.huber_delta, 0, 1e6, 1.0),
    INT("agent", "train_every", agent.train_every, 1, 1000000, 1),
    INT("agent", "gradient_steps", agent.gradient_steps, 1, 10000, 1),
    ENUM("agent", "target_update", agent.target_update, target_kinds, TARGET_HARD),
    INT("agent", "target_every", agent.target_every, 1, 100000000, 500),
    F_OC("agent", "tau", agent.tau, 0, 1, 0.005),

    ENUM("optimizer", "kind", optimizer.kind, optim_kinds, OPT_ADAM),
    F_OC("optimizer", "lr", optimizer.lr, 0, 10, 1e-3),
    F_CO("optimizer", "beta1", optimizer.beta1, 0, 1, 0.9),
    F_CO("optimizer", "beta2", optimizer.beta2, 0, 1, 0.999),
    F_OC("optimizer", "eps", optimizer.eps, 0, 1, 1e-8),
    F_CO("optimizer", "decay", optimizer.decay, 0, 1, 0.95),
    BOOL("optimizer", "centered", optimizer.centered, true),
    ENUM("optimizer", "rmsprop_eps", optimizer.rmsprop_eps, rmsprop_eps_forms, RMSPROP_EPS_INSIDE),
    F_CO("optimizer", "momentum", optimizer.momentum, 0, 1, 0),
    F_CC("optimizer", "grad_clip", optimizer.grad_clip, 0, 1e6, 10),

    ENUM("explore", "kind", explore.kind, explore_kinds, EXPLORE_LINEAR),
    F_CC("explore", "start", explore.start, 0, 1, 1.0),
    F_CC("explore", "end", explore.end, 0, 1, 0.05),
    U64("explore", "decay_steps", explore.decay_steps, 1, E12, 10000),
    U64("explore", "start_step", explore.start_step, 0, E12, 0),
    F_CC("explore", "apex_eps", explore.apex_eps, 0, 1, 0.4),
    F_CC("explore", "apex_alpha", explore.apex_alpha, 0, 100, 7),

    U64("eval", "every_updates", eval.every_updates, 0, E12, 1000),
    INT("eval", "episodes", eval.episodes, 1, 10000, 100),
    U64("eval", "seed", eval.seed, 0, UINT64_MAX, 12345),
    INT("eval", "test_episodes", eval.test_episodes, 0, 10000, 100),
    U64("eval", "test_seed", eval.test_seed, 0, UINT64_MAX, 54321),

    F_CC("checkpoint", "every_seconds", checkpoint.every_seconds, 0, 1e7, 60),
    U64("checkpoint", "every_updates", checkpoint.every_updates, 0, E12, 0),
    INT("checkpoint", "keep", checkpoint.keep, 1, 100, 2),
    INT("checkpoint", "keep_abandoned", checkpoint.keep_abandoned, 0, 100, 2),
    BOOL("checkpoint", "save_replay", checkpoint.save_replay, false),

    F_CC("logging", "interval_seconds", logging.interval_seconds, 0.1, 86400, 2),
    U64("logging", "metrics_every_env_steps", logging.metrics_every_env_steps, 0, E12, 100),
    U64("logging", "metrics_every_updates", logging.metrics_every_updates, 0, E12, 0),
    ENUM("logging", "progress", logging.progress, progress_modes, PROGRESS_AUTO),
    BOOL("logging", "trace", logging.trace, false),
    INT("logging", "trace_events", logging.trace_events, 16, 10000000, 200000),
    BOOL("logging", "tensorboard", logging.tensorboard, false),
};

const int configkeys_count = (int)(sizeof configkeys_table / sizeof configkeys_table[0]);
_Static_assert(sizeof configkeys_table / sizeof configkeys_table[0] <= CFG_MAX_KEYS, "raise CFG_MAX_KEYS in config.h");

/* Sections in the order of the table (and of config_write). */
const char *const configkeys_sections[] = {"run",     "env",    "roles",      "sync",    "learner",
                                           "actor",   "replay", "network",    "agent",   "optimizer",
                                           "explore", "eval",   "checkpoint", "logging", NULL};
_Static_assert(sizeof configkeys_sections / sizeof configkeys_sections[0] == CFG_N_SECTIONS + 1,
               "CFG_N_SECTIONS in configint.h counts the sections");

/* See configint.h. */
int configkeys_id(const char *section, const char *name) {
    for (int i = 0; i < configkeys_count; i++)
        if (!strcmp(configkeys_table[i].section, section) && !strcmp(configkeys_table[i].name, name)) return i;
    abort();
}

/* See configint.h. */
const char *configkeys_range_text(const CfgKey *k, char *buf, size_t cap) {
    char lo[32], hi[32];
    configtext_fmt_f64(k->flo, lo, sizeof lo);
    configtext_fmt_f64(k->fhi, hi, sizeof hi);
    snprintf(buf, cap, "%c%s, %s%c", k->lo_open ? '(' : '[', lo, hi, k->hi_open ? ')' : ']');
    return buf;
}

/* ---- defaults --------------------------------------------------------- */

/* The default of key k (the last column of its row) into c. */
static void set_default(Config *c, const CfgKey *k) {
    switch (k->type) {
    case CFG_T_INT:
    case CFG_T_ENUM: {
        int v = (int)k->idef;
        memcpy(at(c, k), &v, sizeof v);
        break;
    }
    case CFG_T_U64:
        memcpy(at(c, k), &k->idef, sizeof k->idef);
        break;
    case CFG_T_F64:
        memcpy(at(c, k), &k->fdef, sizeof k->fdef);
        break;
    case CFG_T_BOOL: {
        bool v = k->idef != 0;
        memcpy(at(c, k), &v, sizeof v);
        break;
    }
    case CFG_T_STR:
        snprintf(at(c, k), k->cap, "%s", k->sdef);
        break;
    case CFG_T_CONV: /* the default is no conv layer */
        memset(at(c, k), 0, k->cap * sizeof(CfgConv));
        memcpy((char *)c + k->n_off, &k->n_ldef, sizeof k->n_ldef);
        break;
    case CFG_T_INTS:
    case CFG_T_F64S:
        memcpy(at(c, k), k->ldef, (size_t)k->n_ldef * (k->type == CFG_T_INTS ? sizeof(int) : sizeof(double)));
        memcpy((char *)c + k->n_off, &k->n_ldef, sizeof k->n_ldef);
        break;
    }
}

/* Every key's default; what no key holds (source, origin) zeroed. */
const EnvSpec *config_env(const Config *cfg) { return cfg->env_spec ? cfg->env_spec : env_find(cfg->env.name); }

void config_defaults(Config *cfg) {
    memset(cfg, 0, sizeof *cfg);
    for (int id = 0; id < configkeys_count; id++) set_default(cfg, &configkeys_table[id]);
}

/* ---- the names of choices ------------------------------------------- */

const char *configkeys_enum_name(const char *const *names, int v) {
    for (int i = 0; names[i]; i++)
        if (i == v) return names[i];
    return "?";
}
const char *config_sync_name(SyncMode m) { return configkeys_enum_name(sync_modes, (int)m); }
const char *config_allreduce_impl_name(AllreduceImpl m) { return configkeys_enum_name(allreduce_impls, (int)m); }
const char *config_gossip_topology_name(GossipTopology t) { return configkeys_enum_name(gossip_topologies, (int)t); }
const char *config_lr_scaling_name(LrScaling s) { return configkeys_enum_name(lr_scalings, (int)s); }
const char *config_learner_batch_name(LearnerBatch b) { return configkeys_enum_name(learner_batches, (int)b); }
const char *config_wait_name(WaitMode m) { return configkeys_enum_name(wait_modes, (int)m); }
const char *config_optim_name(CfgOptim k) { return configkeys_enum_name(optim_kinds, (int)k); }
const char *config_rmsprop_eps_name(RmspropEps e) { return configkeys_enum_name(rmsprop_eps_forms, (int)e); }
const char *config_replay_name(ReplayKind k) { return configkeys_enum_name(replay_kinds, (int)k); }
const char *config_initial_priority_name(InitialPriority k) { return configkeys_enum_name(initial_priorities, (int)k); }

/* ---- values ------------------------------------------------------------- */

bool configkeys_is_null(const CfgLoad *L, const YamlNode *n) {
    if (!plain(n)) return false;
    const char *s = sval(L, n);
    return n->len == 0 || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") || !strcmp(s, "NULL");
}

const char *configkeys_describe(const CfgLoad *L, const YamlNode *n, char *buf) {
    char sh[CFG_SHOW_LEN];
    if (n->kind == CFG_NODE_MAP) return "a mapping";
    if (n->kind == CFG_NODE_SEQ) return "a list";
    const char *s = sval(L, n);
    if (n->style == CFG_STYLE_PLAIN) {
        if (n->len == 0) return "an empty value";
        if (configkeys_is_null(L, n)) return !strcmp(s, "~") ? "~ (null)" : "null";
        snprintf(buf, CFG_SHOW_LEN + 32, "\"%s\"", show(s, n->len, sh));
    } else if (n->style == CFG_STYLE_QUOTED) {
        snprintf(buf, CFG_SHOW_LEN + 32, "the quoted string \"%s\"", show(s, n->len, sh));
    } else {
        snprintf(buf, CFG_SHOW_LEN + 32, "the block string \"%s\"", show(s, n->len, sh));
    }
    return buf;
}

/* Plain [-+]?[0-9]+ without leading zeros. Returns 0 when the syntax is an
 * integer; *v saturates and *over is set past UINT64_MAX. */
static int scan_int(const char *s, size_t len, bool *neg, uint64_t *v, bool *over) {
    size_t i = 0;
    *neg = false, *over = false, *v = 0;
    if (i < len && (s[i] == '-' || s[i] == '+')) *neg = s[i++] == '-';
    if (i == len) return -1;
    if (s[i] == '0' && i + 1 < len) return -1;
    for (; i < len; i++) {
        if (s[i] < '0' || s[i] > '9') return -1;
        unsigned d = (unsigned)(s[i] - '0');
        if (*v > (UINT64_MAX - d) / 10) *over = true;
        else *v = *v * 10 + d;
    }
    return 0;
}

/* Plain YAML 1.2 core float syntax (decimal or exponent form only). */
static bool float_syntax(const char *s, size_t len) {
    size_t i = 0, digits = 0;
    if (i < len && (s[i] == '-' || s[i] == '+')) i++;
    while (i < len && s[i] >= '0' && s[i] <= '9') i++, digits++;
    if (i < len && s[i] == '.') {
        i++;
        while (i < len && s[i] >= '0' && s[i] <= '9') i++, digits++;
    }
    if (!digits) return false;
    if (i < len && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < len && (s[i] == '-' || s[i] == '+')) i++;
        size_t e = 0;
        while (i < len && s[i] >= '0' && s[i] <= '9') i++, e++;
        if (!e) return false;
    }
    return i == len;
}

static bool special_float(const char *s) {
    static const char *const words[] = {".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf",
                                        "-.INF", ".nan", ".NaN", ".NAN", NULL};
    for (int i = 0; words[i]; i++)
        if (!strcmp(s, words[i])) return true;
    return false;
}

static const char *int_kind(uint64_t lo) { return lo >= 1 ? "a positive integer" : "a non-negative integer"; }

/* An integer in [k->ilo, k->ihi] from a plain scalar. */
static int parse_uint(const CfgLoad *L, const CfgKey *k, const YamlNode *n, const char *path, uint64_t *out) {
    char d[CFG_SHOW_LEN + 32], sh[CFG_SHOW_LEN];
    bool neg, over;
    uint64_t v;
    if (!plain(n) || configkeys_is_null(L, n) || scan_int(sval(L, n), n->len, &neg, &v, &over) != 0)
        return configyaml_fail_at(L, n->line, n->col, path, "expected %s, got %s", int_kind(k->ilo),
                                  configkeys_describe(L, n, d));
    if ((neg && v != 0) || over || v < k->ilo || v > k->ihi)
        return configyaml_fail_at(L, n->line, n->col, path, "expected an integer in [%" PRIu64 ", %" PRIu64 "], got %s",
                                  k->ilo, k->ihi, show(sval(L, n), n->len, sh));
    *out = v;
    return 0;
}

/* A finite number within k's bounds from a plain scalar. */
static int parse_f64(const CfgLoad *L, const CfgKey *k, const YamlNode *n, const char *path, double *out) {
    char d[CFG_SHOW_LEN + 32], sh[CFG_SHOW_LEN], r[80];
    configkeys_range_text(k, r, sizeof r);
    const char *s = sval(L, n);
    if (plain(n) && special_float(s))
        return configyaml_fail_at(L, n->line, n->col, path, "expected a finite number in %s, got %s", r, s);
    if (!plain(n) || configkeys_is_null(L, n) || !float_syntax(s, n->len))
        return configyaml_fail_at(L, n->line, n->col, path, "expected a number in %s, got %s", r,
                                  configkeys_describe(L, n, d));
    errno = 0;
    double v = strtod(s, NULL);
    if (errno == ERANGE && isinf(v))
        return configyaml_fail_at(L, n->line, n->col, path,
                                  "expected a finite number in %s, got %s (too large for a double)", r,
                                  show(s, n->len, sh));
    if (errno == ERANGE && v == 0)
        return configyaml_fail_at(L, n->line, n->col, path, "expected a number in %s, got %s (too small for a double)",
                                  r, show(s, n->len, sh));
    if ((k->lo_open ? !(v > k->flo) : !(v >= k->flo)) || (k->hi_open ? !(v < k->fhi) : !(v <= k->fhi)))
        return configyaml_fail_at(L, n->line, n->col, path, "expected a number in %s, got %s%s", r, show(s, n->len, sh),
                                  k->hint ? k->hint : "");
    *out = v;
    return 0;
}

/* An enum key: one of k->names, stored as its index. */
static int assign_enum(CfgLoad *L, const CfgKey *k, const YamlNode *n, const char *path) {
    char d[CFG_SHOW_LEN + 32], list[256] = "";
    if (n->kind == CFG_NODE_SCALAR && !configkeys_is_null(L, n)) {
        for (int i = 0; k->names[i]; i++) {
            if (strlen(k->names[i]) == n->len && !strcmp(sval(L, n), k->names[i])) {
                memcpy(at(L->cfg, k), &i, sizeof i);
                return 0;
            }
        }
    }
    for (int i = 0; k->names[i]; i++)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "", k->names[i]);
    const char *guess = n->kind == CFG_NODE_SCALAR ? did_you_mean(sval(L, n), k->names) : NULL;
    if (guess)
        return configyaml_fail_at(L, n->line, n->col, path, "expected one of %s, got %s (did you mean \"%s\"?)", list,
                                  configkeys_describe(L, n, d), guess);
    return configyaml_fail_at(L, n->line, n->col, path, "expected one of %s, got %s", list,
                              configkeys_describe(L, n, d));
}

/* A list key: 1 to k->cap elements, each in k's range (numbers distinct),
 * stored with their count. */
static int assign_list(CfgLoad *L, const CfgKey *k, const YamlNode *n, const char *path) {
    Config *cfg = L->cfg;
    char d[CFG_SHOW_LEN + 32], sh[CFG_SHOW_LEN];
    int count = 0;
    if (n->kind == CFG_NODE_SEQ)
        for (size_t c = (size_t)(n - L->t.v) + 1; c < n->end; c = L->t.v[c].end) count++;
    if (n->kind != CFG_NODE_SEQ || count == 0 || count > (int)k->cap)
        return configyaml_fail_at(L, n->line, n->col, path, "expected a list of 1 to %zu %s, got %s", k->cap, k->what,
                                  n->kind != CFG_NODE_SEQ ? configkeys_describe(L, n, d)
                                  : count == 0            ? "an empty list"
                                                          : (snprintf(d, sizeof d, "%d of them", count), d));
    int ints[CFG_MAX_TORQUES > CFG_MAX_LAYERS ? CFG_MAX_TORQUES : CFG_MAX_LAYERS];
    double nums[CFG_MAX_TORQUES > CFG_MAX_LAYERS ? CFG_MAX_TORQUES : CFG_MAX_LAYERS];
    int i = 0;
    for (size_t c = (size_t)(n - L->t.v) + 1; c < n->end; c = L->t.v[c].end, i++) {
        const YamlNode *e = &L->t.v[c];
        char sub[CFG_KEY_PATH_LEN + 16];
        snprintf(sub, sizeof sub, "%s[%d]", path, i);
        if (k->type == CFG_T_INTS) {
            uint64_t v;
            if (parse_uint(L, k, e, sub, &v)) return -1;
            ints[i] = (int)v;
        } else {
            if (parse_f64(L, k, e, sub, &nums[i])) return -1;
            for (int j = 0; j < i; j++) {
                if (nums[j] == nums[i]) {
                    char prev[CFG_KEY_PATH_LEN + 16];
                    snprintf(prev, sizeof prev, "%s[%d]", path, j);
                    return configyaml_fail_at(L, e->line, e->col, sub, "expected distinct %s, got %s again (as %s)",
                                              k->what, show(sval(L, e), e->len, sh), prev);
                }
            }
        }
    }
    memset(at(cfg, k), 0, k->cap * (k->type == CFG_T_INTS ? sizeof(int) : sizeof(double)));
    memcpy(at(cfg, k), k->type == CFG_T_INTS ? (void *)ints : (void *)nums,
           (size_t)count * (k->type == CFG_T_INTS ? sizeof(int) : sizeof(double)));
    memcpy((char *)cfg + k->n_off, &count, sizeof count);
    return 0;
}

const CfgConvField configkeys_conv_fields[3] = {
    {"filters", offsetof(CfgConv, filters), 1, CFG_MAX_FILTERS},
    {"kernel", offsetof(CfgConv, kernel), 1, CFG_MAX_KERNEL},
    {"stride", offsetof(CfgConv, stride), 1, CFG_MAX_KERNEL},
};

/* One layer of network.conv: a mapping with exactly the keys filters,
 * kernel and stride, each an integer in its range. */
static int parse_conv_layer(CfgLoad *L, const YamlNode *n, const char *path, CfgConv *out) {
    char d[CFG_SHOW_LEN + 32], sh[CFG_SHOW_LEN];
    if (n->kind != CFG_NODE_MAP)
        return configyaml_fail_at(L, n->line, n->col, path, "expected a mapping {filters: F, kernel: K, stride: S}, got %s",
                                  configkeys_describe(L, n, d));
    bool seen[3] = {false, false, false};
    for (size_t c = (size_t)(n - L->t.v) + 1; c < n->end;) {
        const YamlNode *key = &L->t.v[c], *val = &L->t.v[key->end];
        int f = 0;
        while (f < 3 && !(key->kind == CFG_NODE_SCALAR && key->len == strlen(configkeys_conv_fields[f].name) &&
                          !strcmp(sval(L, key), configkeys_conv_fields[f].name)))
            f++;
        if (f == 3 || seen[f])
            return configyaml_fail_at(L, key->line, key->col, path, "%s key \"%s\" in a conv layer (expected filters, kernel "
                                      "and stride, once each)", f == 3 ? "unknown" : "repeated",
                                      key->kind == CFG_NODE_SCALAR ? show(sval(L, key), key->len, sh) : "?");
        char sub[CFG_KEY_PATH_LEN + 32];
        snprintf(sub, sizeof sub, "%s.%s", path, configkeys_conv_fields[f].name);
        CfgKey k = {.ilo = (uint64_t)configkeys_conv_fields[f].lo, .ihi = (uint64_t)configkeys_conv_fields[f].hi};
        uint64_t v;
        if (parse_uint(L, &k, val, sub, &v)) return -1;
        int iv = (int)v;
        memcpy((char *)out + configkeys_conv_fields[f].off, &iv, sizeof iv);
        seen[f] = true;
        c = val->end;
    }
    for (int f = 0; f < 3; f++)
        if (!seen[f])
            return configyaml_fail_at(L, n->line, n->col, path, "missing %s in a conv layer (expected {filters: F, "
                                      "kernel: K, stride: S})", configkeys_conv_fields[f].name);
    return 0;
}

/* network.conv: a list of 0 to k->cap layers ([] is none). */
static int assign_conv(CfgLoad *L, const CfgKey *k, const YamlNode *n, const char *path) {
    char d[CFG_SHOW_LEN + 32];
    int count = 0;
    if (n->kind == CFG_NODE_SEQ)
        for (size_t c = (size_t)(n - L->t.v) + 1; c < n->end; c = L->t.v[c].end) count++;
    if (n->kind != CFG_NODE_SEQ || count > (int)k->cap)
        return configyaml_fail_at(L, n->line, n->col, path,
                                  "expected a list of 0 to %zu conv layers {filters: F, kernel: K, stride: S}, got %s",
                                  k->cap, n->kind != CFG_NODE_SEQ ? configkeys_describe(L, n, d)
                                                                  : (snprintf(d, sizeof d, "%d of them", count), d));
    CfgConv layers[CFG_MAX_CONV];
    memset(layers, 0, sizeof layers);
    int i = 0;
    for (size_t c = (size_t)(n - L->t.v) + 1; c < n->end; c = L->t.v[c].end, i++) {
        char sub[CFG_KEY_PATH_LEN + 16];
        snprintf(sub, sizeof sub, "%s[%d]", path, i);
        if (parse_conv_layer(L, &L->t.v[c], sub, &layers[i])) return -1;
    }
    memcpy(at(L->cfg, k), layers, sizeof layers);
    memcpy((char *)L->cfg + k->n_off, &count, sizeof count);
    return 0;
}

/* ---- a mapping as JSON text (env.kwargs) ---------------------------------- */

/* JSON text built into buf (cap bytes); len counts on past cap, so that a
 * message can say how long the whole text would have been. */
typedef struct {
    char *buf;
    size_t cap, len;
} JsonOut;

static void put(JsonOut *o, const char *s, size_t n) {
    if (o->len < o->cap) memcpy(o->buf + o->len, s, n < o->cap - o->len ? n : o->cap - o->len);
    o->len += n;
}

/* s[0..len) as a JSON string. Quotes, backslashes and control characters
 * are escaped (a double-quoted YAML scalar may hold any of them, NUL
 * included, through its escapes); other text is UTF-8 already (the prescan
 * and libyaml's escapes allow nothing else) and goes as it is. */
static void put_string(JsonOut *o, const char *s, size_t len) {
    put(o, "\"", 1);
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        char e[8];
        if (c == '"' || c == '\\') put(o, c == '"' ? "\\\"" : "\\\\", 2);
        else if (c == '\n') put(o, "\\n", 2);
        else if (c == '\t') put(o, "\\t", 2);
        else if (c == '\r') put(o, "\\r", 2);
        else if (c < 0x20) put(o, e, (size_t)snprintf(e, sizeof e, "\\u%04x", c));
        else put(o, s + i, 1);
    }
    put(o, "\"", 1);
}

/* A plain scalar that the loader reads as a number, as a JSON number: an
 * integer's digits without a '+' (of any size: Python's json keeps them
 * exact); a decimal or exponent form as the shortest text that reads back
 * as the same double, with ".0" where it would read as an integer (1.0
 * stays a float in Python). Returns 1 when n is not a number (nothing put),
 * 0 when put, -1 with L->err when it is out of a double's range. */
static int put_number(const CfgLoad *L, JsonOut *o, const YamlNode *n, const char *path) {
    const char *s = sval(L, n);
    bool neg, over;
    uint64_t v;
    char sh[CFG_SHOW_LEN], num[48];
    if (scan_int(s, n->len, &neg, &v, &over) == 0) {
        put(o, s + (s[0] == '+'), n->len - (s[0] == '+'));
        return 0;
    }
    if (!float_syntax(s, n->len)) return 1;
    errno = 0;
    double d = strtod(s, NULL);
    if (errno == ERANGE && (isinf(d) || d == 0))
        return configyaml_fail_at(L, n->line, n->col, path, "expected a %snumber, got %s (too %s for a double)",
                                  isinf(d) ? "finite " : "", show(s, n->len, sh), isinf(d) ? "large" : "small");
    configtext_fmt_f64(d, num, sizeof num - 2);
    if (!strpbrk(num, ".e")) strcat(num, ".0");
    put(o, num, strlen(num));
    return 0;
}

/* A scalar: quoted and block scalars are strings; plain ones are null (~,
 * null, an empty value), true, false, a number, or else a string. YAML's
 * .inf and .nan have no JSON form: refused. */
static int put_scalar(const CfgLoad *L, JsonOut *o, const YamlNode *n, const char *path) {
    const char *s = sval(L, n);
    if (!plain(n)) {
        put_string(o, s, n->len);
        return 0;
    }
    if (configkeys_is_null(L, n)) {
        put(o, "null", 4);
        return 0;
    }
    if (!strcmp(s, "true") || !strcmp(s, "false")) {
        put(o, s, n->len);
        return 0;
    }
    if (special_float(s))
        return configyaml_fail_at(L, n->line, n->col, path,
                                  "expected a finite number (JSON has no infinity or NaN), got %s; quote it for "
                                  "the string", s);
    int rc = put_number(L, o, n, path);
    if (rc == 1) put_string(o, s, n->len);
    return rc < 0 ? -1 : 0;
}

static int put_node(const CfgLoad *L, JsonOut *o, size_t i, const char *path);

/* The mapping at node i as a JSON object, its keys in the order written:
 * each key a scalar, not null, and written once (JSON would keep the last
 * of two silently). */
static int put_map(const CfgLoad *L, JsonOut *o, size_t i, const char *path) {
    const YamlNode *v = L->t.v;
    char d[CFG_SHOW_LEN + 32], sh[CFG_SHOW_LEN], sub[CFG_KEY_PATH_LEN];
    put(o, "{", 1);
    for (size_t c = i + 1; c < v[i].end; c = v[v[c].end].end) {
        const YamlNode *key = &v[c];
        if (key->kind != CFG_NODE_SCALAR || configkeys_is_null(L, key))
            return configyaml_fail_at(L, key->line, key->col, path, "expected a string key, got %s",
                                      configkeys_describe(L, key, d));
        snprintf(sub, sizeof sub, "%.200s.%s", path, show(sval(L, key), key->len, sh));
        for (size_t p = i + 1; p < c; p = v[v[p].end].end)
            if (v[p].len == key->len && !memcmp(sval(L, &v[p]), sval(L, key), key->len))
                return configyaml_fail_at(L, key->line, key->col, sub, "duplicate key (first defined at line %d)",
                                          v[p].line);
        if (c > i + 1) put(o, ",", 1);
        put_string(o, sval(L, key), key->len);
        put(o, ":", 1);
        if (put_node(L, o, key->end, sub)) return -1;
    }
    put(o, "}", 1);
    return 0;
}

/* Node i as JSON. The recursion is as deep as the tree, which the parser
 * bounds at CFG_MAX_DEPTH. */
static int put_node(const CfgLoad *L, JsonOut *o, size_t i, const char *path) {
    const YamlNode *n = &L->t.v[i];
    if (n->kind == CFG_NODE_SCALAR) return put_scalar(L, o, n, path);
    if (n->kind == CFG_NODE_MAP) return put_map(L, o, i, path);
    char sub[CFG_KEY_PATH_LEN];
    int k = 0;
    put(o, "[", 1);
    for (size_t c = i + 1; c < n->end; c = L->t.v[c].end, k++) {
        snprintf(sub, sizeof sub, "%.200s[%d]", path, k);
        if (k) put(o, ",", 1);
        if (put_node(L, o, c, sub)) return -1;
    }
    put(o, "]", 1);
    return 0;
}

/* A string key that takes a mapping too (env.kwargs): the mapping stored as
 * compact JSON text, {"a":1,"b":[true,null,"x"]}, the same text for the
 * same mapping however it is written (block or flow, any spacing), so that
 * a resume compares it equal. Like the string form, it must fit the key. */
static int assign_json_map(CfgLoad *L, const CfgKey *k, const YamlNode *n, const char *path) {
    char text[CFG_KWARGS_LEN], msg[ERR_LEN], sh[CFG_SHOW_LEN];
    JsonOut o = {.buf = text, .cap = k->cap < sizeof text ? k->cap : sizeof text};
    if (put_node(L, &o, (size_t)(n - L->t.v), path)) return -1;
    if (o.len >= o.cap)
        return configyaml_fail_at(L, n->line, n->col, path,
                                  "expected a mapping of at most %zu bytes as JSON text, got %zu bytes (\"%s\")",
                                  o.cap - 1, o.len, show(text, o.cap, sh));
    text[o.len] = '\0';
    if (k->rule(text, o.len, msg)) return configyaml_fail_at(L, n->line, n->col, path, "%s", msg);
    memset(at(L->cfg, k), 0, k->cap);
    memcpy(at(L->cfg, k), text, o.len);
    return 0;
}

/* Store one node into key id of L->cfg (type and range checked). */
int configkeys_assign(CfgLoad *L, int id, const YamlNode *n, const char *path) {
    const CfgKey *k = &configkeys_table[id];
    Config *cfg = L->cfg;
    char d[CFG_SHOW_LEN + 32], sh[CFG_SHOW_LEN], msg[ERR_LEN];
    switch (k->type) {
    case CFG_T_INT:
    case CFG_T_U64: {
        uint64_t v;
        if (parse_uint(L, k, n, path, &v)) return -1;
        if (k->type == CFG_T_U64) {
            memcpy(at(cfg, k), &v, sizeof v);
        } else {
            int iv = (int)v; /* ihi <= INT_MAX for every CFG_T_INT key */
            memcpy(at(cfg, k), &iv, sizeof iv);
        }
        return 0;
    }
    case CFG_T_F64: {
        double v;
        if (parse_f64(L, k, n, path, &v)) return -1;
        memcpy(at(cfg, k), &v, sizeof v);
        return 0;
    }
    case CFG_T_BOOL: {
        bool v;
        if (plain(n) && !strcmp(sval(L, n), "true")) v = true;
        else if (plain(n) && !strcmp(sval(L, n), "false")) v = false;
        else
            return configyaml_fail_at(L, n->line, n->col, path, "expected true or false, got %s",
                                      configkeys_describe(L, n, d));
        memcpy(at(cfg, k), &v, sizeof v);
        return 0;
    }
    case CFG_T_STR: {
        if (k->json_map && n->kind == CFG_NODE_MAP) return assign_json_map(L, k, n, path);
        if (n->kind != CFG_NODE_SCALAR || configkeys_is_null(L, n))
            return configyaml_fail_at(L, n->line, n->col, path, "expected %s, got %s",
                                      k->json_map ? "a mapping or its JSON text" : "a string",
                                      configkeys_describe(L, n, d));
        const char *s = sval(L, n);
        if (strlen(s) != n->len)
            return configyaml_fail_at(L, n->line, n->col, path, "expected a string without NUL characters, got \"%s\"",
                                      show(s, n->len, sh));
        if (k->rule(s, n->len, msg)) return configyaml_fail_at(L, n->line, n->col, path, "%s", msg);
        /* Not every rule bounds the length (env.kwargs's does not). */
        if (n->len >= k->cap)
            return configyaml_fail_at(L, n->line, n->col, path, "expected a string of at most %zu bytes, got %zu bytes",
                                      k->cap - 1, n->len);
        memset(at(cfg, k), 0, k->cap);
        memcpy(at(cfg, k), s, n->len);
        return 0;
    }
    case CFG_T_ENUM:
        return assign_enum(L, k, n, path);
    case CFG_T_INTS:
    case CFG_T_F64S:
        return assign_list(L, k, n, path);
    case CFG_T_CONV:
        return assign_conv(L, k, n, path);
    }
    return -1;
}

/* ---- string rules --------------------------------------------------------- */

int configkeys_rule_run_name(const char *s, size_t len, char *msg) {
    char sh[CFG_SHOW_LEN];
    bool ok = len >= 1 && len < CFG_NAME_LEN;
    for (size_t i = 0; ok && i < len; i++) {
        char c = s[i];
        ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
             c == '-';
    }
    if (!ok)
        return errf(msg, "expected 1 to %d characters from A-Z a-z 0-9 . _ -, got \"%s\"", CFG_NAME_LEN - 1,
                    show(s, len, sh));
    if ((len == 1 && s[0] == '.') || (len == 2 && s[0] == '.' && s[1] == '.'))
        return errf(msg, "expected a name other than \".\" and \"..\", got \"%.*s\"", (int)len, s);
    return 0;
}

static int rule_out_dir(const char *s, size_t len, char *msg) {
    char sh[CFG_SHOW_LEN];
    bool ok = len >= 1 && len <= CFG_OUT_DIR_MAX;
    for (size_t i = 0; ok && i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        ok = c >= 0x20 && c != 0x7F && !(c == 0xC2 && i + 1 < len && (unsigned char)s[i + 1] < 0xA0);
    }
    if (!ok)
        return errf(msg, "expected a directory path of 1 to %d bytes without control characters, got \"%s\"",
                    CFG_OUT_DIR_MAX, show(s, len, sh));
    return 0;
}

/* env.kwargs: a JSON object's text (the bridge parses it, at start). */
static int rule_kwargs(const char *s, size_t len, char *msg) {
    char sh[CFG_SHOW_LEN];
    size_t i = 0, j = len;
    while (i < len && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n')) i++;
    while (j > i && (s[j - 1] == ' ' || s[j - 1] == '\t' || s[j - 1] == '\n')) j--;
    if (strlen(s) == len && j - i >= 2 && s[i] == '{' && s[j - 1] == '}') return 0;
    return errf(msg, "expected a JSON object of keyword arguments, e.g. '{\"length\": 200}', got \"%s\"",
                show(s, len, sh));
}

static int rule_env_name(const char *s, size_t len, char *msg) {
    char sh[CFG_SHOW_LEN], list[256] = "";
    if (strlen(s) == len && env_extern_kind(s)) return env_extern_check(s, msg);
    const EnvSpec *spec = len < CFG_NAME_LEN ? env_find(s) : NULL;
    /* A registered spec outside the limits (a new environment's mistake)
     * is refused here, before any process is started, not at its first
     * env_init. */
    if (spec) return env_spec_check(spec, msg) == 0 ? 0 : -1;
    const char *names[64];
    int n = env_registry_count < 63 ? env_registry_count : 63;
    bool minatar = false; /* ten ids: summed up as one pattern */
    for (int i = 0; i < n; i++) {
        names[i] = env_registry[i]->name;
        if (!strncmp(names[i], "MinAtar/", 8)) minatar = true;
        else snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "", names[i]);
    }
    if (minatar)
        snprintf(list + strlen(list), sizeof list - strlen(list),
                 ", MinAtar/{Asterix,Breakout,Freeway,Seaquest,SpaceInvaders}-v0|-v1");
    names[n] = NULL;
    const char *guess = did_you_mean(s, names);
    if (guess)
        return errf(msg, "expected one of %s, python:MODULE:CALLABLE or gymnasium:ID, got \"%s\" (did you mean \"%s\"?)",
                    list, show(s, len, sh), guess);
    return errf(msg, "expected one of %s, python:MODULE:CALLABLE or gymnasium:ID, got \"%s\"", list, show(s, len, sh));
}

/* env.reward_threshold: "auto", "none" or a finite number (*v; NaN for
 * the words). Returns 0, or -1 when it is none of them. */
static int threshold_value(const char *s, double *v) {
    *v = ENV_NO_THRESHOLD;
    if (!strcmp(s, "auto") || !strcmp(s, "none")) return 0;
    char *end;
    errno = 0;
    double d = strtod(s, &end);
    if (end == s || *end || errno == ERANGE || !isfinite(d) || !float_syntax(s, strlen(s))) return -1;
    *v = d;
    return 0;
}

static int rule_reward_threshold(const char *s, size_t len, char *msg) {
    char sh[CFG_SHOW_LEN];
    double v;
    if (len < CFG_NAME_LEN && strlen(s) == len && threshold_value(s, &v) == 0) return 0;
    return errf(msg, "expected auto (the environment's registered threshold, or none), none, or a finite number, "
                "got \"%s\"", show(s, len, sh));
}

double config_reward_threshold(const Config *cfg) {
    double v;
    if (!strcmp(cfg->env.reward_threshold, "auto")) {
        const EnvSpec *spec = config_env(cfg);
        return spec ? spec->reward_threshold : ENV_NO_THRESHOLD;
    }
    if (threshold_value(cfg->env.reward_threshold, &v) < 0) return ENV_NO_THRESHOLD;
    return v;
}

/* "auto", or an OpenBLAS kernel name in any case (platform.h's table). */
static int rule_blas_kernel(const char *s, size_t len, char *msg) {
    char sh[CFG_SHOW_LEN], list[256] = "", hint[64] = "";
    if (len < CFG_NAME_LEN && (!strcmp(s, "auto") || platform_kernel_find(s))) return 0;
    const char *names[64] = {"auto"};
    int n = 1;
    for (int i = 0; i < platform_kernel_count() && n < 63; i++) {
        names[n++] = platform_kernel_name(i);
        snprintf(list + strlen(list), sizeof list - strlen(list), ", %s", platform_kernel_name(i));
    }
    names[n] = NULL;
    const char *guess = strlen(s) == len ? did_you_mean(s, names) : NULL;
    if (guess) snprintf(hint, sizeof hint, " (did you mean \"%s\"?)", guess);
    return errf(msg, "expected auto or an OpenBLAS kernel (%s), got \"%s\"%s", list + 2, show(s, len, sh), hint);
}
