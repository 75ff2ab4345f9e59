/* SPDX-License-Identifier: MIT */
/* configcheck.c: config_validate. Every key's range is checked again (the
 * parser checked what it read, but a Config may be built or changed in
 * code), then the rules that tie keys together. An error points at the key
 * the user set: the file's line, else the --set that set it, else the
 * default. See configint.h for how the loader is split.
 */
#include "config.h"
#include "env.h"
#include "configint.h"
#include "qnet.h"
#include "util.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* One validation: the config, the --set texts that built it (to quote them
 * as typed), and the defaults (to say "the default" only when it is true). */
typedef struct {
    const Config *cfg;
    const char *const *sets;
    int n_sets;
    Config defaults;
    char *err;
} Check;

/* The --set text that assigned key id, shown, or its value written out when
 * that text is not at hand (config_set after config_load, code). buf holds
 * ERR_LEN bytes. */
static void set_text(const Check *C, int id, char *buf) {
    const ConfigOrigin *o = &C->cfg->origin[id];
    char path[64], val[CFG_SHOW_LEN];
    snprintf(path, sizeof path, "%s.%s=", configkeys_table[id].section, configkeys_table[id].name);
    if (C->sets && o->line >= 1 && o->line <= C->n_sets && !strncmp(C->sets[o->line - 1], path, strlen(path))) {
        const char *a = C->sets[o->line - 1];
        configtext_show(a, strlen(a), false, buf);
        return;
    }
    configprint_value_text(C->cfg, id, val, sizeof val);
    snprintf(buf, ERR_LEN, "%s%s", path, val);
}

/* Report at key id: "FILE:L:C: path: msg" when the file set it, "--set
 * k=v: path: msg" when an override did, "FILE: path: msg" for a default. */
__attribute__((format(printf, 4, 5))) static int fail_key(const Check *C, int id, const char *path,
                                                          const char *fmt, ...) {
    char msg[ERR_LEN], set[ERR_LEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    const ConfigOrigin *o = &C->cfg->origin[id];
    const char *src = C->cfg->source[0] ? C->cfg->source : "config";
    if (o->from == CFG_FROM_FILE) return errf(C->err, "%s:%d:%d: %s: %s", src, o->line, o->col, path, msg);
    if (o->from == CFG_FROM_SET) {
        set_text(C, id, set);
        return errf(C->err, "--set %s: %s: %s", set, path, msg);
    }
    return errf(C->err, "%s: %s: %s", src, path, msg);
}

/* network.conv's stored layers: 0 to cap of them, each field in range. */
static int check_conv_key(const Check *C, int id, const CfgKey *k, const char *path) {
    int count = get_count(C->cfg, k);
    if (count < 0 || count > (int)k->cap)
        return fail_key(C, id, path, "expected a list of 0 to %zu %s, got %d of them", k->cap, k->what, count);
    const CfgConv *c = cat(C->cfg, k);
    for (int i = 0; i < count; i++) {
        for (int f = 0; f < 3; f++) {
            const CfgConvField *fd = &configkeys_conv_fields[f];
            int v;
            memcpy(&v, (const char *)&c[i] + fd->off, sizeof v);
            char sub[CFG_KEY_PATH_LEN + 32];
            snprintf(sub, sizeof sub, "%s[%d].%s", path, i, fd->name);
            if (v < fd->lo || v > fd->hi)
                return fail_key(C, id, sub, "expected an integer in [%d, %d], got %d", fd->lo, fd->hi, v);
        }
    }
    return 0;
}

/* Check the stored value of one key (config_validate re-checks what the
 * parser checked, for configs built or changed in code). */
static int check_key(const Check *C, int id) {
    const Config *cfg = C->cfg;
    const CfgKey *k = &configkeys_table[id];
    char path[CFG_KEY_PATH_LEN], r[80], num[40], msg[ERR_LEN];
    snprintf(path, sizeof path, "%s.%s", k->section, k->name);
    switch (k->type) {
    case CFG_T_INT: {
        int v = get_int(cfg, k);
        if (v < 0 || (uint64_t)v < k->ilo || (uint64_t)v > k->ihi)
            return fail_key(C, id, path, "expected an integer in [%" PRIu64 ", %" PRIu64 "], got %d", k->ilo, k->ihi,
                            v);
        return 0;
    }
    case CFG_T_U64: {
        uint64_t v = get_u64(cfg, k);
        if (v < k->ilo || v > k->ihi)
            return fail_key(C, id, path, "expected an integer in [%" PRIu64 ", %" PRIu64 "], got %" PRIu64, k->ilo,
                            k->ihi, v);
        return 0;
    }
    case CFG_T_F64: {
        double v = get_f64(cfg, k);
        configkeys_range_text(k, r, sizeof r);
        configtext_fmt_f64(v, num, sizeof num);
        if (!isfinite(v)) return fail_key(C, id, path, "expected a finite number in %s, got %s", r, num);
        if ((k->lo_open ? !(v > k->flo) : !(v >= k->flo)) || (k->hi_open ? !(v < k->fhi) : !(v <= k->fhi)))
            return fail_key(C, id, path, "expected a number in %s, got %s%s", r, num, k->hint ? k->hint : "");
        return 0;
    }
    case CFG_T_BOOL:
        return 0;
    case CFG_T_STR: {
        const char *s = cat(cfg, k);
        size_t len = strnlen(s, k->cap);
        if (len == k->cap) return fail_key(C, id, path, "expected a string of at most %zu bytes", k->cap - 1);
        if (k->rule(s, len, msg)) return fail_key(C, id, path, "%s", msg);
        return 0;
    }
    case CFG_T_ENUM: {
        int v = get_int(cfg, k), n = 0;
        while (k->names[n]) n++;
        if (v < 0 || v >= n) return fail_key(C, id, path, "expected a %s value, got the number %d", path, v);
        return 0;
    }
    case CFG_T_INTS:
    case CFG_T_F64S: {
        int count = get_count(cfg, k);
        if (count < 1 || count > (int)k->cap)
            return fail_key(C, id, path, "expected a list of 1 to %zu %s, got %d of them", k->cap, k->what, count);
        for (int i = 0; i < count; i++) {
            char sub[CFG_KEY_PATH_LEN + 16];
            snprintf(sub, sizeof sub, "%s[%d]", path, i);
            if (k->type == CFG_T_INTS) {
                int v;
                memcpy(&v, (const char *)cat(cfg, k) + (size_t)i * sizeof v, sizeof v);
                if (v < 0 || (uint64_t)v < k->ilo || (uint64_t)v > k->ihi)
                    return fail_key(C, id, sub, "expected an integer in [%" PRIu64 ", %" PRIu64 "], got %d", k->ilo,
                                    k->ihi, v);
            } else {
                const double *a = cat(cfg, k);
                configkeys_range_text(k, r, sizeof r);
                configtext_fmt_f64(a[i], num, sizeof num);
                if (!isfinite(a[i]) || a[i] < k->flo || a[i] > k->fhi)
                    return fail_key(C, id, sub, "expected a finite number in %s, got %s%s", r, num,
                                    k->hint ? k->hint : "");
                for (int j = 0; j < i; j++)
                    if (a[j] == a[i])
                        return fail_key(C, id, sub, "expected distinct %s, got %s again (as %s[%d])", k->what, num,
                                        path, j);
            }
        }
        return 0;
    }
    case CFG_T_CONV:
        return check_conv_key(C, id, k, path);
    }
    return 0;
}

/* Of the keys of a rule that failed, the one to point at: the first the
 * file set, else the first an override set, else the first. */
static int pick(const Config *cfg, const int *ids, int n) {
    for (int from = CFG_FROM_FILE; from <= CFG_FROM_SET; from++)
        for (int i = 0; i < n; i++)
            if (cfg->origin[ids[i]].from == (ConfigFrom)from) return ids[i];
    return ids[0];
}

/* ", the default" or ", from --set" after a value in parentheses; with
 * alone, " (the default)" or " (from --set)". Empty for a value the file
 * set, or one changed in code. */
static const char *origin_note(const Check *C, int id, bool alone) {
    switch (C->cfg->origin[id].from) {
    case CFG_FROM_DEFAULT:
        if (!configprint_same_value(C->cfg, &C->defaults, id)) return "";
        return alone ? " (the default)" : ", the default";
    case CFG_FROM_SET:
        return alone ? " (from --set)" : ", from --set";
    default:
        return "";
    }
}

/* A rule over several keys failed: report it at the key pick() chooses. */
__attribute__((format(printf, 4, 5))) static int fail_rule(const Check *C, const int *ids, int n, const char *fmt,
                                                           ...) {
    char msg[ERR_LEN], path[CFG_KEY_PATH_LEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    int id = pick(C->cfg, ids, n);
    snprintf(path, sizeof path, "%s.%s", configkeys_table[id].section, configkeys_table[id].name);
    return fail_key(C, id, path, "%s", msg);
}

/* The decentralized modes' rules (gossip, easgd, local_sgd): EASGD's
 * center lives on the parameter servers; gossip and local SGD average
 * learners with each other, so they need two; a hypercube pairs learners
 * that differ in one bit of their index, so their count is a power of 2.
 * 0, or -1 with the error set. */
static int check_decentral(const Check *C, int k_ps, int k_mode) {
    const Config *cfg = C->cfg;
    SyncMode mode = cfg->sync.mode;
    int k_learners = configkeys_id("roles", "learners"), k_topo = configkeys_id("sync", "gossip_topology");
    if (mode == SYNC_EASGD && cfg->roles.param_servers == 0) {
        const int ids[] = {k_ps, k_mode};
        return fail_rule(C, ids, 2,
                         "sync.mode easgd%s keeps its center variable on the parameter servers, but "
                         "roles.param_servers is 0%s; set roles.param_servers: 1 or more",
                         origin_note(C, k_mode, true), origin_note(C, k_ps, true));
    }
    if (cfg->run.mode == RUN_DISTRIBUTED && cfg->roles.learners < config_sync_min_learners(mode)) {
        const int ids[] = {k_learners, k_mode};
        return fail_rule(C, ids, 2,
                         "sync.mode %s%s averages the parameters of several learners, but roles.learners is %d%s; "
                         "set roles.learners: %d or more",
                         config_sync_name(mode), origin_note(C, k_mode, true), cfg->roles.learners,
                         origin_note(C, k_learners, true), config_sync_min_learners(mode));
    }
    int L = cfg->roles.learners;
    if (mode == SYNC_GOSSIP && cfg->sync.gossip_topology == GOSSIP_HYPERCUBE && (L & (L - 1)) != 0) {
        const int ids[] = {k_topo, k_learners};
        return fail_rule(C, ids, 2,
                         "sync.gossip_topology hypercube%s pairs learners whose indices differ in one bit, which "
                         "needs a power-of-2 learner count, but roles.learners is %d%s; use 2, 4, 8, ... learners "
                         "or sync.gossip_topology: random or ring",
                         origin_note(C, k_topo, true), L, origin_note(C, k_learners, true));
    }
    return 0;
}

/* The sync keys that only some sync.mode values read, and which: under
 * another mode they would be ignored silently, so a value other than the
 * default is refused (as replay.alpha with uniform replay). Bit m of modes
 * is SyncMode m. */
static const struct {
    const char *key;
    unsigned modes;
} mode_keys[] = {
    {"staleness", 1u << SYNC_PS_BOUNDED},
    {"learner_pull_every", 1u << SYNC_PS_ASYNC | 1u << SYNC_PS_BOUNDED}, /* ps_sync pulls after every update */
    {"allreduce_impl", 1u << SYNC_ALLREDUCE | 1u << SYNC_LOCAL_SGD},
    {"gossip_every", 1u << SYNC_GOSSIP},
    {"gossip_topology", 1u << SYNC_GOSSIP},
    {"easgd_every", 1u << SYNC_EASGD},
    {"easgd_alpha", 1u << SYNC_EASGD},
    {"average_every", 1u << SYNC_LOCAL_SGD},
};

/* "ps_async or ps_bounded": the sync modes of bit set modes, into out. */
static void mode_names(unsigned modes, char *out, size_t cap) {
    size_t n = 0;
    out[0] = '\0';
    for (int m = 0; m <= SYNC_LOCAL_SGD && n < cap; m++) {
        if (!(modes & 1u << m)) continue;
        bool last = !(modes >> (m + 1));
        n += (size_t)snprintf(out + n, cap - n, "%s%s", n ? (last ? " or " : ", ") : "", config_sync_name((SyncMode)m));
    }
}

/* A mode's own sync key set under another sync.mode. 0, or -1 with the
 * error set. */
static int check_mode_keys(const Check *C, int k_mode) {
    const Config *cfg = C->cfg;
    for (size_t i = 0; i < sizeof mode_keys / sizeof mode_keys[0]; i++) {
        int k = configkeys_id("sync", mode_keys[i].key);
        if (mode_keys[i].modes & 1u << cfg->sync.mode) continue;
        /* A value equal to the default changes nothing (and every
         * effective config.yaml lists them all). */
        if (cfg->origin[k].from == CFG_FROM_DEFAULT || configprint_same_value(cfg, &C->defaults, k)) continue;
        char modes[96];
        mode_names(mode_keys[i].modes, modes, sizeof modes);
        /* Reported at the key (not at a sync.mode the file set). */
        return fail_rule(C, &k, 1,
                         "sync.%s applies to sync.mode %s only, but sync.mode is %s%s, which ignores it; set "
                         "sync.mode: %s, or remove sync.%s",
                         mode_keys[i].key, modes, config_sync_name(cfg->sync.mode), origin_note(C, k_mode, true),
                         modes, mode_keys[i].key);
    }
    return 0;
}

/* A key the environment does not take, set to something other than its
 * default: refused (it would be silently ignored). */
static bool set_off_default(const Check *C, int k) {
    return C->cfg->origin[k].from != CFG_FROM_DEFAULT && !configprint_same_value(C->cfg, &C->defaults, k);
}

/* env.torques (Pendulum-v1 only) and env.sticky_actions,
 * env.difficulty_ramping (MinAtar only): a torque set for CartPole would
 * be silently ignored, so it is refused, even when it equals the default
 * set; the MinAtar keys are refused elsewhere unless at their defaults. */
static int check_env(const Check *C) {
    const Config *cfg = C->cfg;
    int k_torques = configkeys_id("env", "torques"), k_env = configkeys_id("env", "name");
    const EnvSpec *spec = config_env(cfg);
    unsigned takes = spec ? spec->options : 0;
    int k_kwargs = configkeys_id("env", "kwargs");
    if (!env_extern_kind(cfg->env.name) && set_off_default(C, k_kwargs)) {
        const int ids[] = {k_kwargs, k_env};
        return fail_rule(C, ids, 2, "only a Python environment (python:MODULE:CALLABLE or gymnasium:ID) takes "
                         "env.kwargs, but env.name is %s%s", cfg->env.name, origin_note(C, k_env, true));
    }
    if (!(takes & ENV_TAKES_TORQUES) &&
        (cfg->origin[k_torques].from != CFG_FROM_DEFAULT || !configprint_same_value(cfg, &C->defaults, k_torques))) {
        const int ids[] = {k_torques, k_env};
        return fail_rule(C, ids, 2, "only Pendulum-v1 takes env.torques, but env.name is %s%s", cfg->env.name,
                         origin_note(C, k_env, true));
    }
    static const char *const minatar_keys[] = {"sticky_actions", "difficulty_ramping"};
    for (int i = 0; i < 2 && !(takes & ENV_TAKES_MINATAR); i++) {
        int k = configkeys_id("env", minatar_keys[i]);
        if (!set_off_default(C, k)) continue;
        const int ids[] = {k, k_env};
        return fail_rule(C, ids, 2, "only the MinAtar environments take env.%s, but env.name is %s%s", minatar_keys[i],
                         cfg->env.name, origin_note(C, k_env, true));
    }
    return 0;
}

/* A PS mode with roles.param_servers 0: the one learner holds the
 * parameters (layout_params_in_learner). With more learners someone else
 * would have to hold them; with a pull period above 1 the learner would
 * compute at parameters older than its own, which it no longer has. */
static int check_ps_in_learner(const Check *C, int k_ps, int k_mode) {
    const Config *cfg = C->cfg;
    int k_learners = configkeys_id("roles", "learners"), k_pull = configkeys_id("sync", "learner_pull_every");
    if (!config_sync_no_ps(cfg->sync.mode) && cfg->roles.param_servers == 0 && cfg->roles.learners != 1) {
        const int ids[] = {k_ps, k_learners};
        return fail_rule(C, ids, 2,
                         "sync.mode %s%s with roles.param_servers 0%s keeps the parameters inside the learner, which "
                         "needs exactly one learner, but roles.learners is %d%s; add a parameter server or use "
                         "roles.learners: 1",
                         config_sync_name(cfg->sync.mode), origin_note(C, k_mode, true), origin_note(C, k_ps, true),
                         cfg->roles.learners, origin_note(C, k_learners, true));
    }
    if (!config_sync_no_ps(cfg->sync.mode) && cfg->sync.mode != SYNC_PS_SYNC && cfg->roles.param_servers == 0 &&
        cfg->sync.learner_pull_every != 1) {
        const int ids[] = {k_ps, k_pull};
        return fail_rule(C, ids, 2,
                         "sync.mode %s%s with roles.param_servers 0%s keeps the parameters inside the learner, which "
                         "always computes at the current ones, but sync.learner_pull_every is %d%s; set it to 1 or "
                         "add a parameter server",
                         config_sync_name(cfg->sync.mode), origin_note(C, k_mode, true), origin_note(C, k_ps, true),
                         cfg->sync.learner_pull_every, origin_note(C, k_pull, true));
    }
    return 0;
}

/* sync.mode against the roles and the sync keys. */
static int check_sync(const Check *C) {
    const Config *cfg = C->cfg;
    int k_ps = configkeys_id("roles", "param_servers"), k_mode = configkeys_id("sync", "mode");
    if (config_sync_no_ps(cfg->sync.mode) && cfg->roles.param_servers > 0) {
        const int ids[] = {k_ps, k_mode};
        return fail_rule(C, ids, 2,
                         "sync.mode %s%s uses no parameter servers, but roles.param_servers is %d%s; "
                         "set roles.param_servers: 0",
                         config_sync_name(cfg->sync.mode), origin_note(C, k_mode, true), cfg->roles.param_servers,
                         origin_note(C, k_ps, true));
    }
    if (check_decentral(C, k_ps, k_mode) || check_mode_keys(C, k_mode)) return -1;
    return check_ps_in_learner(C, k_ps, k_mode);
}

/* The held-out test episodes must not be the evaluation episodes. */
static int check_eval(const Check *C) {
    const Config *cfg = C->cfg;
    int k_tseed = configkeys_id("eval", "test_seed"), k_eseed = configkeys_id("eval", "seed");
    if (cfg->eval.test_episodes > 0 && cfg->eval.test_seed == cfg->eval.seed) {
        const int ids[] = {k_tseed, k_eseed};
        return fail_rule(C, ids, 2,
                         "eval.test_seed %" PRIu64 "%s equals eval.seed%s: the test episodes would be the ones "
                         "checkpoints/best was selected on; pick another eval.test_seed or set "
                         "eval.test_episodes: 0",
                         cfg->eval.test_seed, origin_note(C, k_tseed, true), origin_note(C, k_eseed, true));
    }
    return 0;
}

/* learner.batch global in a distributed job: allreduce, uniform replay, no
 * rate scaling, and a batch the learners split evenly. */
static int check_global_batch(const Check *C) {
    const Config *cfg = C->cfg;
    int k_lbatch = configkeys_id("learner", "batch"), k_mode = configkeys_id("sync", "mode");
    int k_rkind = configkeys_id("replay", "kind"), k_scaling = configkeys_id("sync", "lr_scaling");
    int k_batch = configkeys_id("replay", "batch_size"), k_learners = configkeys_id("roles", "learners");
    if (cfg->learner.batch != LEARNER_BATCH_GLOBAL || cfg->run.mode != RUN_DISTRIBUTED) return 0;
    if (cfg->sync.mode != SYNC_ALLREDUCE) {
        const int ids[] = {k_lbatch, k_mode};
        return fail_rule(C, ids, 2,
                         "learner.batch global%s is built for sync.mode allreduce, where every learner averages "
                         "and clips the whole gradient; sync.mode is %s%s (the parameter servers would have to "
                         "clip the averaged gradient across their shards: not built); use sync.mode: allreduce "
                         "or learner.batch: per_learner",
                         origin_note(C, k_lbatch, true), config_sync_name(cfg->sync.mode),
                         origin_note(C, k_mode, true));
    }
    if (cfg->replay.kind == REPLAY_PRIORITIZED) {
        const int ids[] = {k_lbatch, k_rkind};
        return fail_rule(C, ids, 2,
                         "learner.batch global%s splits one batch among the learners, but prioritized replay%s "
                         "normalizes importance weights per batch, so the parts would not make the one-learner "
                         "update; use replay.kind: uniform or learner.batch: per_learner",
                         origin_note(C, k_lbatch, true), origin_note(C, k_rkind, true));
    }
    if (cfg->sync.lr_scaling != LR_SCALING_NONE) {
        const int ids[] = {k_lbatch, k_scaling};
        return fail_rule(C, ids, 2,
                         "learner.batch global%s makes each update the one-learner update of one batch, but "
                         "sync.lr_scaling %s%s scales the rate for a batch that grows with the learners; "
                         "use one of the two (sync.lr_scaling: none with the global batch)",
                         origin_note(C, k_lbatch, true), config_lr_scaling_name(cfg->sync.lr_scaling),
                         origin_note(C, k_scaling, true));
    }
    if (cfg->replay.batch_size % cfg->roles.learners != 0) {
        const int ids[] = {k_lbatch, k_batch, k_learners};
        return fail_rule(C, ids, 3,
                         "learner.batch global%s splits replay.batch_size (%d%s) among roles.learners (%d%s), "
                         "which does not divide it; use a batch size that is a multiple of the learner count",
                         origin_note(C, k_lbatch, true), cfg->replay.batch_size, origin_note(C, k_batch, false),
                         cfg->roles.learners, origin_note(C, k_learners, false));
    }
    return 0;
}

/* The learner keys against replay.kind and run.mode. */
static int check_learner(const Check *C) {
    const Config *cfg = C->cfg;
    int k_prefetch = configkeys_id("learner", "prefetch"), k_rkind = configkeys_id("replay", "kind");
    int k_sigma = configkeys_id("learner", "loss_outlier_sigma"), k_run_mode = configkeys_id("run", "mode");
    int k_accum = configkeys_id("learner", "accumulate");
    if (cfg->learner.prefetch > 1 && cfg->replay.kind == REPLAY_PRIORITIZED) {
        const int ids[] = {k_prefetch, k_rkind};
        return fail_rule(C, ids, 2,
                         "learner.prefetch %d%s keeps several batches in flight, but prioritized replay%s draws each "
                         "batch from the shards' latest total priorities and updates them after it; use "
                         "learner.prefetch: 1 or replay.kind: uniform",
                         cfg->learner.prefetch, origin_note(C, k_prefetch, true), origin_note(C, k_rkind, true));
    }
    if (check_global_batch(C)) return -1;
    if (cfg->learner.loss_outlier_sigma > 0 && cfg->run.mode == RUN_LOCAL) {
        const int ids[] = {k_sigma, k_run_mode};
        return fail_rule(C, ids, 2,
                         "learner.loss_outlier_sigma (%g%s) guards the learners of a distributed job, but run.mode is "
                         "local%s (one process, no learner role); set learner.loss_outlier_sigma: 0",
                         cfg->learner.loss_outlier_sigma, origin_note(C, k_sigma, false),
                         origin_note(C, k_run_mode, true));
    }
    if (cfg->learner.accumulate > 1 && cfg->run.mode == RUN_LOCAL) {
        const int ids[] = {k_accum, k_run_mode};
        return fail_rule(C, ids, 2,
                         "learner.accumulate %d%s sums the gradients of a distributed job's learners between syncs, "
                         "but run.mode is local%s (one process, no learner role); set learner.accumulate: 1",
                         cfg->learner.accumulate, origin_note(C, k_accum, true), origin_note(C, k_run_mode, true));
    }
    if (cfg->learner.accumulate > 1 && cfg->replay.kind == REPLAY_PRIORITIZED) {
        const int ids[] = {k_accum, k_rkind};
        return fail_rule(C, ids, 2,
                         "learner.accumulate %d%s averages several batches into one update, but prioritized "
                         "replay%s normalizes importance weights per batch, so the mean would not be the update of "
                         "the larger batch; use replay.kind: uniform or learner.accumulate: 1",
                         cfg->learner.accumulate, origin_note(C, k_accum, true), origin_note(C, k_rkind, true));
    }
    return 0;
}

/* sync.lr_scaling and its warm-up. */
static int check_lr(const Check *C) {
    const Config *cfg = C->cfg;
    int k_scaling = configkeys_id("sync", "lr_scaling"), k_warmup = configkeys_id("sync", "lr_warmup_updates");
    int k_mode = configkeys_id("sync", "mode");
    if (cfg->sync.lr_scaling != LR_SCALING_NONE &&
        (cfg->sync.mode == SYNC_PS_ASYNC || cfg->sync.mode == SYNC_PS_BOUNDED)) {
        const int ids[] = {k_scaling, k_mode};
        return fail_rule(C, ids, 2,
                         "sync.lr_scaling %s%s scales the rate where the learners' gradients or parameters are "
                         "averaged (ps_sync, allreduce, gossip, easgd, local_sgd), but sync.mode %s%s applies each "
                         "gradient alone; "
                         "use sync.lr_scaling: none",
                         config_lr_scaling_name(cfg->sync.lr_scaling), origin_note(C, k_scaling, true),
                         config_sync_name(cfg->sync.mode), origin_note(C, k_mode, true));
    }
    if (cfg->sync.lr_warmup_updates > 0 && cfg->sync.lr_scaling == LR_SCALING_NONE) {
        const int ids[] = {k_warmup, k_scaling};
        return fail_rule(C, ids, 2,
                         "sync.lr_warmup_updates (%d%s) ramps the rate up to the scaled one, but sync.lr_scaling is "
                         "none%s; set sync.lr_scaling: linear or sqrt, or sync.lr_warmup_updates: 0",
                         cfg->sync.lr_warmup_updates, origin_note(C, k_warmup, false),
                         origin_note(C, k_scaling, true));
    }
    return 0;
}

/* Ape-X settings with uniform replay would be silently ignored. */
static int check_apex_keys(const Check *C) {
    static const char *const apex_keys[] = {"alpha", "beta", "beta_final", "beta_steps", "priority_eps",
                                            "initial_priority"};
    const Config *cfg = C->cfg;
    if (cfg->replay.kind != REPLAY_UNIFORM) return 0;
    int k_kind = configkeys_id("replay", "kind");
    for (size_t i = 0; i < sizeof apex_keys / sizeof apex_keys[0]; i++) {
        int k = configkeys_id("replay", apex_keys[i]);
        /* A value equal to the default changes nothing (and every
         * effective config.yaml lists them all). */
        if (cfg->origin[k].from == CFG_FROM_DEFAULT || configprint_same_value(cfg, &C->defaults, k)) continue;
        const int ids[] = {k, k_kind};
        return fail_rule(C, ids, 2,
                         "replay.%s applies to prioritized replay only, but replay.kind is uniform%s; "
                         "set replay.kind: prioritized, or remove replay.%s",
                         apex_keys[i], origin_note(C, k_kind, true), apex_keys[i]);
    }
    return 0;
}

/* The replay buffer's sizes against each other, the shards and actors. */
static int check_replay(const Check *C) {
    const Config *cfg = C->cfg;
    int k_shards = configkeys_id("roles", "replay_shards"), k_cap = configkeys_id("replay", "capacity");
    int k_batch = configkeys_id("replay", "batch_size"), k_min = configkeys_id("replay", "min_size");
    int k_actors = configkeys_id("roles", "actors");
    if (cfg->replay.min_size < (uint64_t)cfg->replay.batch_size) {
        const int ids[] = {k_min, k_batch};
        return fail_rule(C, ids, 2,
                         "replay.min_size (%" PRIu64 "%s) must be at least replay.batch_size (%d%s): "
                         "learning cannot start before a batch can be sampled",
                         cfg->replay.min_size, origin_note(C, k_min, false), cfg->replay.batch_size,
                         origin_note(C, k_batch, false));
    }
    if (cfg->replay.min_size > cfg->replay.capacity) {
        const int ids[] = {k_min, k_cap};
        return fail_rule(C, ids, 2,
                         "replay.min_size (%" PRIu64 "%s) must be at most replay.capacity (%" PRIu64 "%s): "
                         "the buffer could never hold enough transitions to start learning",
                         cfg->replay.min_size, origin_note(C, k_min, false), cfg->replay.capacity,
                         origin_note(C, k_cap, false));
    }
    uint64_t need = (uint64_t)cfg->roles.replay_shards * (uint64_t)cfg->replay.batch_size;
    if (cfg->replay.capacity < need) {
        const int ids[] = {k_cap, k_shards, k_batch};
        return fail_rule(C, ids, 3,
                         "replay.capacity (%" PRIu64 "%s) must be at least roles.replay_shards * replay.batch_size "
                         "(%d * %d = %" PRIu64 "): every shard must hold a full batch",
                         cfg->replay.capacity, origin_note(C, k_cap, false), cfg->roles.replay_shards,
                         cfg->replay.batch_size, need);
    }
    if (cfg->run.mode == RUN_DISTRIBUTED && cfg->roles.replay_shards > cfg->roles.actors) {
        const int ids[] = {k_shards, k_actors};
        return fail_rule(C, ids, 2,
                         "roles.replay_shards (%d%s) must be at most roles.actors (%d%s): actor a feeds shard "
                         "a mod replay_shards, so a shard without an actor would never fill",
                         cfg->roles.replay_shards, origin_note(C, k_shards, false), cfg->roles.actors,
                         origin_note(C, k_actors, false));
    }
    return check_apex_keys(C);
}

/* The exploration rate only decays; Ape-X's constant rates have no start. */
static int check_explore(const Check *C) {
    const Config *cfg = C->cfg;
    int k_start = configkeys_id("explore", "start"), k_end = configkeys_id("explore", "end");
    int k_step = configkeys_id("explore", "start_step"), k_kind = configkeys_id("explore", "kind");
    if (cfg->explore.kind == EXPLORE_APEX && set_off_default(C, k_step)) {
        const int ids[] = {k_step};
        return fail_rule(C, ids, 1,
                         "explore.start_step delays the linear decay, but explore.kind is apex%s (constant per-actor "
                         "rates), which ignores it; set explore.kind: linear, or remove explore.start_step",
                         origin_note(C, k_kind, true));
    }
    if (cfg->explore.end > cfg->explore.start) {
        const int ids[] = {k_end, k_start};
        char a[40], b[40];
        configtext_fmt_f64(cfg->explore.end, a, sizeof a);
        configtext_fmt_f64(cfg->explore.start, b, sizeof b);
        return fail_rule(C, ids, 2, "explore.end (%s%s) must be at most explore.start (%s%s)", a,
                         origin_note(C, k_end, false), b, origin_note(C, k_start, false));
    }
    return 0;
}

/* network.conv against the environment: convolutions read planes, and each
 * layer must fit what the one before it gives (qnet_init's own check). */
static int check_network(const Check *C) {
    const Config *cfg = C->cfg;
    if (cfg->network.n_conv == 0) return 0;
    int k_conv = configkeys_id("network", "conv"), k_env = configkeys_id("env", "name");
    const EnvSpec *spec = config_env(cfg);
    if (!spec) return 0; /* env.name's own check reports it (a Python env: qnet_init, once resolved) */
    if (spec->obs_type != ENV_OBS_PLANES) {
        const int ids[] = {k_conv, k_env};
        return fail_rule(C, ids, 2,
                         "a conv network on a vector environment: env.name %s%s gives %d numbers, not planes; "
                         "remove network.conv or use a MinAtar environment",
                         cfg->env.name, origin_note(C, k_env, true), spec->obs_dim);
    }
    QNetSpec s;
    memset(&s, 0, sizeof s);
    s.obs_dim = spec->obs_dim;
    s.n_actions = spec->num_actions;
    s.n_hidden = cfg->network.n_hidden;
    memcpy(s.hidden, cfg->network.hidden, (size_t)s.n_hidden * sizeof(int));
    s.in_h = spec->obs_shape[0], s.in_w = spec->obs_shape[1], s.in_c = spec->obs_shape[2];
    s.n_conv = cfg->network.n_conv;
    for (int i = 0; i < s.n_conv; i++)
        s.conv[i] = (QNetConvSpec){cfg->network.conv[i].filters, cfg->network.conv[i].kernel,
                                   cfg->network.conv[i].stride};
    QNet net;
    char why[ERR_LEN];
    if (qnet_init(&net, &s, why) != 0) {
        return fail_rule(C, &k_conv, 1, "%s (env.name %s: %dx%dx%d planes)", strncmp(why, "qnet: ", 6) ? why : why + 6,
                         cfg->env.name, s.in_h, s.in_w, s.in_c);
    }
    return 0;
}

/* optimizer.rmsprop_eps is RMSprop's: under another optimizer it would be
 * ignored silently, so a value other than the default is refused. */
static int check_optimizer(const Check *C) {
    const Config *cfg = C->cfg;
    int k_eps = configkeys_id("optimizer", "rmsprop_eps"), k_kind = configkeys_id("optimizer", "kind");
    if (cfg->optimizer.kind != OPT_RMSPROP && set_off_default(C, k_eps)) {
        const int ids[] = {k_eps};
        return fail_rule(C, ids, 1,
                         "optimizer.rmsprop_eps applies to optimizer.kind rmsprop only, but optimizer.kind is %s%s, "
                         "which ignores it; set optimizer.kind: rmsprop, or remove optimizer.rmsprop_eps",
                         config_optim_name(cfg->optimizer.kind), origin_note(C, k_kind, true));
    }
    return 0;
}

/* The rules that tie keys together, in the order they are checked: the
 * first that fails is the one reported. */
static int (*const rules[])(const Check *C) = {check_env,    check_network, check_sync,   check_eval,   check_learner,
                                                check_lr,     check_replay,  check_explore, check_optimizer};

/* Every key's range, then the rules that tie keys together. */
int configcheck_validate(const Config *cfg, const char *const *sets, int n_sets, char *err) {
    Check C = {.cfg = cfg, .sets = sets, .n_sets = n_sets, .err = err};
    config_defaults(&C.defaults);
    for (int id = 0; id < configkeys_count; id++)
        if (check_key(&C, id)) return -1;
    for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++)
        if (rules[i](&C)) return -1;
    return 0;
}

int config_validate(const Config *cfg, char *err) { return configcheck_validate(cfg, NULL, 0, err); }
