/* SPDX-License-Identifier: MIT */
/* config.c: the strict YAML config loader's entry points. See config.h for
 * the contract, configint.h for how the loader is split into files, and
 * docs/CONFIG.md for every key, its default and its range.
 *
 * Loading runs in stages, each one bounded before the next, more expensive
 * one starts:
 *
 *   1. read     fstat first: a file over CFG_MAX_FILE_BYTES is refused unread
 *               (here);
 *   2. prescan  NUL bytes, invalid UTF-8 and control characters, reported as
 *               line:col (libyaml would give a bare byte offset; configyaml.c);
 *   3. tree     libyaml's event API into a flat pre-order node array, bounded
 *               in depth and size as it arrives (configyaml.c);
 *   4. schema   one table (cfg_keys, configkeys.c) gives each key its section,
 *               type, bounds and place in Config; the tree is walked onto it
 *               here, each value typed and range-checked by cfg_assign;
 *               --set, config_validate, config_write, config_write_json and
 *               config_same all walk that same table;
 *   5. --set    overrides, parsed as YAML and checked like the file (here);
 *   6. validate every range again plus the rules that tie keys together
 *               (configcheck.c).
 */
#include "config.h"
#include "configint.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_SET_BYTES 4096  /* value of one --set */

static const double default_torques[] = {-2, 0, 2};

/* ---- defaults ------------------------------------------------------------ */

void config_defaults(Config *cfg) {
    memset(cfg, 0, sizeof *cfg);
    snprintf(cfg->run.name, sizeof cfg->run.name, "run");
    snprintf(cfg->run.out_dir, sizeof cfg->run.out_dir, "runs");
    cfg->run.seed = 1;
    cfg->run.mode = RUN_DISTRIBUTED;
    cfg->run.max_env_steps = 100000;
    cfg->run.max_updates = 0;
    cfg->run.max_seconds = 0;
    cfg->run.stop_deadline_seconds = 10;
    cfg->run.stop_when_solved = true;
    cfg->run.blas_threads = 1;
    snprintf(cfg->run.blas_kernel, sizeof cfg->run.blas_kernel, "auto");
    cfg->run.wait = WAIT_AUTO;
    cfg->run.pin_cores = true;

    snprintf(cfg->env.name, sizeof cfg->env.name, "CartPole-v1");
    cfg->env.max_episode_steps = 0;
    cfg->env.n_torques = 3;
    memcpy(cfg->env.torques, default_torques, sizeof default_torques);

    cfg->roles.actors = 1;
    cfg->roles.replay_shards = 1;
    cfg->roles.learners = 1;
    cfg->roles.param_servers = 1;

    cfg->sync.mode = SYNC_PS_SYNC;
    cfg->sync.staleness = 4;
    cfg->sync.learner_pull_every = 1;

    cfg->actor.envs = 1;
    cfg->actor.pull_every = 100;
    cfg->actor.chunk = 32;

    cfg->replay.kind = REPLAY_UNIFORM;
    cfg->replay.alpha = 0.6;         /* Schaul et al. 2016, proportional variant; Ape-X */
    cfg->replay.beta = 0.4;          /* Schaul et al. 2016; Ape-X keeps 0.4 */
    cfg->replay.beta_final = 1.0;    /* Schaul et al. 2016 anneal to 1 */
    cfg->replay.beta_steps = 100000;
    cfg->replay.priority_eps = 1e-6;
    cfg->replay.initial_priority = PRIORITY_ACTOR;
    cfg->replay.capacity = 100000;
    cfg->replay.batch_size = 64;
    cfg->replay.min_size = 1000;
    cfg->replay.samples_per_insert = 0;
    cfg->replay.spi_tolerance = 0.01;

    cfg->network.n_hidden = 2;
    cfg->network.hidden[0] = 64;
    cfg->network.hidden[1] = 64;
    cfg->network.dueling = false;

    cfg->agent.gamma = 0.99;
    cfg->agent.n_step = 1;
    cfg->agent.double_dqn = true;
    cfg->agent.huber_delta = 1.0;
    cfg->agent.train_every = 1;
    cfg->agent.gradient_steps = 1;
    cfg->agent.target_update = TARGET_HARD;
    cfg->agent.target_every = 500;
    cfg->agent.tau = 0.005;

    cfg->optimizer.kind = OPT_ADAM;
    cfg->optimizer.lr = 1e-3;
    cfg->optimizer.beta1 = 0.9;
    cfg->optimizer.beta2 = 0.999;
    cfg->optimizer.eps = 1e-8;
    cfg->optimizer.decay = 0.95;
    cfg->optimizer.centered = true;
    cfg->optimizer.momentum = 0;
    cfg->optimizer.grad_clip = 10;

    cfg->explore.kind = EXPLORE_LINEAR;
    cfg->explore.start = 1.0;
    cfg->explore.end = 0.05;
    cfg->explore.decay_steps = 10000;
    cfg->explore.apex_eps = 0.4;
    cfg->explore.apex_alpha = 7;

    cfg->eval.every_updates = 1000;
    cfg->eval.episodes = 100;
    cfg->eval.seed = 12345;
    cfg->eval.test_episodes = 100;
    cfg->eval.test_seed = 54321;

    cfg->checkpoint.every_seconds = 60;
    cfg->checkpoint.every_updates = 0;
    cfg->checkpoint.keep = 2;
    cfg->checkpoint.keep_abandoned = 2;
    cfg->checkpoint.save_replay = false;

    cfg->logging.interval_seconds = 2;
    cfg->logging.metrics_every_env_steps = 100;
    cfg->logging.metrics_every_updates = 0;
    cfg->logging.progress = PROGRESS_AUTO;
    cfg->logging.trace = false;
    cfg->logging.trace_events = 200000;
    cfg->logging.tensorboard = false;
    cfg->sync.allreduce_impl = ALLREDUCE_RING;
    cfg->sync.lr_scaling = LR_SCALING_NONE;
    cfg->sync.lr_warmup_updates = 0;
    cfg->sync.gossip_every = 4;
    cfg->sync.gossip_topology = GOSSIP_RANDOM;
    cfg->sync.easgd_every = 4;
    cfg->sync.easgd_alpha = 0.5;
    cfg->sync.average_every = 8;
    cfg->learner.batch = LEARNER_BATCH_PER_LEARNER;
    cfg->learner.loss_outlier_sigma = 0;
    cfg->learner.prefetch = 1;
    cfg->learner.accumulate = 1;
}

/* ---- the file's structure ------------------------------------------------- */

/* "valid keys: a, b, c" for a section (or the sections when section is NULL). */
static const char *valid_keys(const char *section, char *buf, size_t cap) {
    size_t o = (size_t)snprintf(buf, cap, section ? "valid keys: " : "valid sections: ");
    bool first = true;
    for (int i = 0; section ? i < cfg_n_keys : cfg_sections[i] != NULL; i++) {
        if (section && strcmp(cfg_keys[i].section, section)) continue;
        if (o < cap) o += (size_t)snprintf(buf + o, cap - o, "%s%s", first ? "" : ", ",
                                           section ? cfg_keys[i].name : cfg_sections[i]);
        first = false;
    }
    return buf;
}

/* The right key in the wrong place ("gamma" under roles, or a bare "seed"
 * given to --set): " (did you mean "agent.gamma"?)", every section that has
 * a key named word but section, into buf. Whether there was one. */
static bool key_elsewhere(const char *section, const char *word, char *buf, size_t cap) {
    size_t o = 0;
    int found = 0;
    for (int i = 0; i < cfg_n_keys; i++) {
        if (strcmp(cfg_keys[i].name, word) || (section && !strcmp(cfg_keys[i].section, section))) continue;
        o += (size_t)snprintf(buf + o, cap - o, "%s\"%s.%s\"", found ? " or " : " (did you mean ", cfg_keys[i].section,
                              cfg_keys[i].name);
        found++;
        if (o >= cap) break;
    }
    if (found && o < cap) snprintf(buf + o, cap - o, "?)");
    return found && o < cap;
}

/* The " (did you mean ...?)" or " (valid keys: ...)" tail for an unknown
 * key named word in section (NULL: the top level). A close key of the same
 * section is suggested by its bare name (section.key when full is set, as
 * --set needs), the same name in other sections as section.key. */
static void unknown_tail(const char *section, const char *word, bool full, char *buf, size_t cap) {
    const char *cand[CFG_MAX_KEYS + 1];
    int n = 0;
    for (int i = 0; section ? i < cfg_n_keys : cfg_sections[i] != NULL; i++)
        if (!section || !strcmp(cfg_keys[i].section, section)) cand[n++] = section ? cfg_keys[i].name : cfg_sections[i];
    cand[n] = NULL;
    const char *guess = did_you_mean(word, cand);
    if (guess) {
        if (full && section) snprintf(buf, cap, " (did you mean \"%s.%s\"?)", section, guess);
        else snprintf(buf, cap, " (did you mean \"%s\"?)", guess);
        return;
    }
    if (key_elsewhere(section, word, buf, cap)) return;
    char list[400];
    snprintf(buf, cap, " (%.400s)", valid_keys(section, list, sizeof list));
}

/* The text of a mapping key, for lookup (raw) and messages (shown). */
static int key_text(const Load *L, const Node *k, const char *parent, const char **raw, char *shown) {
    char d[SHOW_LEN + 32];
    if (k->kind != N_SCALAR || cfg_is_null(L, k))
        return cfg_fail_at(L, k->line, k->col, parent, "expected a %s name, got %s", parent ? "key" : "section",
                           cfg_describe(L, k, d));
    *raw = sval(L, k);
    show(*raw, k->len, shown);
    return 0;
}

static int section_id(const char *s, size_t len) {
    for (int i = 0; i < CFG_N_SECTIONS; i++)
        if (strlen(cfg_sections[i]) == len && !memcmp(cfg_sections[i], s, len)) return i;
    return -1;
}

static int key_in(const char *section, const char *s, size_t len) {
    for (int i = 0; i < cfg_n_keys; i++)
        if (!strcmp(cfg_keys[i].section, section) && strlen(cfg_keys[i].name) == len &&
            !memcmp(cfg_keys[i].name, s, len))
            return i;
    return -1;
}

static int walk_section(Load *L, int sec, size_t vi) {
    const Tree *t = &L->t;
    const Node *v = &t->v[vi];
    const char *section = cfg_sections[sec];
    char d[SHOW_LEN + 32], tail[ERR_LEN];
    if (v->kind != N_MAP) {
        char what[64];
        snprintf(what, sizeof what, "a mapping of %s keys", section);
        return cfg_fail_at(L, v->line, v->col, section, "expected %s, got %s", what, cfg_describe(L, v, d));
    }
    for (size_t ki = vi + 1; ki < v->end;) {
        const Node *k = &t->v[ki];
        size_t val = k->end;
        const char *raw = NULL;
        char shown[SHOW_LEN], path[KEY_PATH_LEN];
        if (key_text(L, k, section, &raw, shown)) return -1;
        snprintf(path, sizeof path, "%s.%s", section, shown);
        int id = key_in(section, raw, k->len);
        if (id < 0) {
            unknown_tail(section, shown, false, tail, sizeof tail);
            return cfg_fail_at(L, k->line, k->col, path, "unknown key%s", tail);
        }
        ConfigOrigin *o = &L->cfg->origin[id];
        if (o->from == CFG_FROM_FILE)
            return cfg_fail_at(L, k->line, k->col, path, "duplicate key (first defined at line %d)", o->line);
        if (cfg_assign(L, id, &t->v[val], path)) return -1;
        o->from = CFG_FROM_FILE;
        o->line = k->line;
        o->col = k->col;
        ki = t->v[val].end;
    }
    return 0;
}

static int walk_root(Load *L) {
    const Tree *t = &L->t;
    const Node *r = &t->v[0];
    char d[SHOW_LEN + 32], tail[ERR_LEN];
    if (r->kind != N_MAP)
        return cfg_fail_at(L, r->line, r->col, NULL,
                           "expected a mapping of sections (run:, env:, ...) at the top level, got %s",
                           cfg_describe(L, r, d));
    int first_line[CFG_N_SECTIONS] = {0};
    for (size_t ki = 1; ki < r->end;) {
        const Node *k = &t->v[ki];
        size_t val = k->end;
        const char *raw = NULL;
        char shown[SHOW_LEN];
        if (key_text(L, k, NULL, &raw, shown)) return -1;
        int sec = section_id(raw, k->len);
        if (sec < 0) {
            unknown_tail(NULL, shown, false, tail, sizeof tail);
            return cfg_fail_at(L, k->line, k->col, shown, "unknown key%s", tail);
        }
        if (first_line[sec])
            return cfg_fail_at(L, k->line, k->col, shown, "duplicate key (first defined at line %d)", first_line[sec]);
        first_line[sec] = k->line;
        if (walk_section(L, sec, val)) return -1;
        ki = t->v[val].end;
    }
    return 0;
}

/* Prescan, build the tree, walk it into L->cfg. */
static int load_text(Load *L, const char *text, size_t len) {
    int rc = cfg_parse_text(L, text, len);
    if (rc == 0) rc = walk_root(L);
    cfg_tree_free(&L->t);
    return rc;
}

/* ---- overrides -------------------------------------------------------------- */

/* The message tail for a --set path without a dot. A section's name is not
 * a key ("run"), nor is a word close to one ("runn"): the hint names the
 * section and lists its keys, never proposing the word typed. A key's name
 * without its section ("seed") gets the section.key paths (unknown_tail). */
static void bare_word_tail(const char *word, char *tail, size_t cap) {
    char list[400];
    if (section_id(word, strlen(word)) >= 0) {
        snprintf(tail, cap, " (\"%s\" is a section, not a key: --set %s.KEY=VALUE; %.400s)", word, word,
                 valid_keys(word, list, sizeof list));
        return;
    }
    if (key_elsewhere(NULL, word, tail, cap)) return;
    const char *sec = did_you_mean(word, cfg_sections);
    if (sec)
        snprintf(tail, cap, " (did you mean a key of section \"%s\"? --set %s.KEY=VALUE; %.400s)", sec, sec,
                 valid_keys(sec, list, sizeof list));
    else
        unknown_tail(NULL, word, true, tail, cap);
}

/* Key id of a --set path "section.key", or -1 with the message tail. */
static int path_id(const char *path, char *tail, size_t cap) {
    char full[CFG_MAX_KEYS][48];
    const char *cand[CFG_MAX_KEYS + 1];
    for (int i = 0; i < cfg_n_keys; i++) {
        snprintf(full[i], sizeof full[i], "%s.%s", cfg_keys[i].section, cfg_keys[i].name);
        if (!strcmp(full[i], path)) return i;
        cand[i] = full[i];
    }
    cand[cfg_n_keys] = NULL;
    const char *guess = did_you_mean(path, cand);
    if (guess) {
        snprintf(tail, cap, " (did you mean \"%s\"?)", guess);
        return -1;
    }
    const char *dot = strchr(path, '.');
    if (!dot) {
        bare_word_tail(path, tail, cap);
        return -1;
    }
    char section[KEY_PATH_LEN];
    snprintf(section, sizeof section, "%.*s", (int)(dot - path), path);
    if (section_id(section, strlen(section)) >= 0)
        unknown_tail(section, dot + 1, true, tail, cap);
    else
        unknown_tail(NULL, section, true, tail, cap);
    return -1;
}

/* Apply one "key.path=value" to cfg without the final validation; index
 * (from 1) says which of the caller's overrides it is. */
static int apply_set(Config *cfg, const char *assignment, int index, char *err) {
    char shown[SHOW_LEN], path[KEY_PATH_LEN], sh[SHOW_LEN], tail[ERR_LEN], msg[ERR_LEN];
    Load L = {.cfg = cfg, .err = err, .assign = cfg_show_text(assignment, strlen(assignment), false, shown)};
    const char *eq = strchr(assignment, '=');
    if (!eq || eq == assignment)
        return errf(err, "--set %s: expected KEY.PATH=VALUE, e.g. --set roles.actors=4", shown);
    size_t plen = (size_t)(eq - assignment);
    snprintf(path, sizeof path, "%s", cfg_show_text(assignment, plen, false, sh));
    L.set_path = path;
    int id = plen < KEY_PATH_LEN ? path_id(path, tail, sizeof tail) : -1;
    if (id < 0) {
        if (plen >= KEY_PATH_LEN) snprintf(tail, sizeof tail, " (a key path is section.key)");
        return errf(err, "--set %s: %s: unknown key%s", shown, path, tail);
    }
    const char *value = eq + 1;
    size_t vlen = strlen(value), off;
    if (vlen > MAX_SET_BYTES)
        return errf(err, "--set %s: %s: expected a value of at most %d bytes, got %zu", shown, path, MAX_SET_BYTES,
                    vlen);
    if (cfg_prescan(value, vlen, &off, msg)) return errf(err, "--set %s: %s: %s", shown, path, msg);
    if (cfg_parse_value(&L, value, vlen)) return -1;
    int rc = cfg_assign(&L, id, &L.t.v[0], path);
    cfg_tree_free(&L.t);
    if (rc) return -1;
    cfg->origin[id].from = CFG_FROM_SET;
    cfg->origin[id].line = index;
    cfg->origin[id].col = 0;
    return 0;
}

int config_set(Config *cfg, const char *assignment, char *err) {
    if (apply_set(cfg, assignment, 1, err)) return -1;
    return cfg_validate(cfg, &assignment, 1, err);
}

/* ---- loading ------------------------------------------------------------------ */

/* Read a whole regular file of at most CFG_MAX_FILE_BYTES. The file is
 * opened without blocking and checked with fstat before anything is read:
 * a FIFO, a device or a socket is refused (reading one could block forever
 * or never end), and so is a file over the limit. */
static int read_file(const char *path, char **text, size_t *len, char *err) {
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) return errf(err, "%s: cannot open config: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return errf(err, "%s: cannot read config: %s", path, strerror(e));
    }
    if (S_ISDIR(st.st_mode)) {
        close(fd);
        return errf(err, "%s: expected a YAML file, got a directory", path);
    }
    if (!S_ISREG(st.st_mode)) {
        const char *what = S_ISFIFO(st.st_mode)                           ? "a FIFO"
                           : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device"
                           : S_ISSOCK(st.st_mode)                         ? "a socket"
                                                                          : "not a regular file";
        close(fd);
        return errf(err, "%s: expected a regular YAML file, got %s", path, what);
    }
    if (st.st_size > CFG_MAX_FILE_BYTES) {
        close(fd);
        return errf(err, "%s: expected a config of at most %d bytes, got %lld bytes", path, CFG_MAX_FILE_BYTES,
                    (long long)st.st_size);
    }
    size_t cap = CFG_MAX_FILE_BYTES + 1, n = 0;
    char *buf = xmalloc(cap + 1);
    for (;;) {
        ssize_t r = read(fd, buf + n, cap - n);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            int e = errno;
            free(buf);
            close(fd);
            return errf(err, "%s: cannot read config: %s", path, strerror(e));
        }
        if (r == 0) break;
        n += (size_t)r;
        if (n == cap) break;
    }
    close(fd);
    if (n > CFG_MAX_FILE_BYTES) {
        free(buf);
        return errf(err, "%s: expected a config of at most %d bytes, got more", path, CFG_MAX_FILE_BYTES);
    }
    buf[n] = '\0';
    *text = buf;
    *len = n;
    return 0;
}

/* run.name defaults to the file's stem: configs/cartpole.yaml -> cartpole. */
static int name_from_stem(Config *cfg, const char *path, char *err) {
    int id = cfg_key_id("run", "name");
    if (cfg->origin[id].from != CFG_FROM_DEFAULT) return 0;
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    const char *dot = strrchr(base, '.');
    size_t len = dot && dot != base ? (size_t)(dot - base) : strlen(base);
    char msg[ERR_LEN];
    if (base[0] == '.') /* .yaml, .x.yaml: no stem, or a hidden run directory nobody asked for */
        return errf(err, "%s: run.name: the file name \"%s\" has no stem to name the run after; set run.name", path,
                    base);
    if (cfg_rule_run_name(base, len, msg))
        return errf(err, "%s: run.name: %s (the file name's stem; set run.name)", path, msg);
    memset(cfg->run.name, 0, sizeof cfg->run.name);
    memcpy(cfg->run.name, base, len);
    return 0;
}

void config_run_dir_name(const Config *cfg, char *out, size_t cap) {
    if (cfg->origin[cfg_key_id("run", "name")].from != CFG_FROM_DEFAULT) {
        snprintf(out, cap, "%s", cfg->run.name);
        return;
    }
    bool local = cfg->run.mode == RUN_LOCAL;
    snprintf(out, cap, "%s-%s-l%d-s%" PRIu64, cfg->run.name, local ? "local" : config_sync_name(cfg->sync.mode),
             local ? 1 : cfg->roles.learners, cfg->run.seed);
}

int config_load(Config *cfg, const char *path, const char *const *sets, int n_sets, char *err) {
    config_defaults(cfg);
    snprintf(cfg->source, sizeof cfg->source, "%s", path);
    if (n_sets < 0 || n_sets > CFG_MAX_SETS)
        return errf(err, "expected at most %d --set overrides, got %d", CFG_MAX_SETS, n_sets);
    char *text = NULL;
    size_t len = 0;
    if (read_file(path, &text, &len, err)) return -1;
    Load L = {.cfg = cfg, .err = err, .file = path};
    int rc = load_text(&L, text, len);
    free(text);
    if (rc) return -1;
    for (int i = 0; i < n_sets; i++)
        if (apply_set(cfg, sets[i], i + 1, err)) return -1;
    if (name_from_stem(cfg, path, err)) return -1;
    return cfg_validate(cfg, sets, n_sets, err);
}

int config_load_string(Config *cfg, const char *name, const char *text, size_t len, char *err) {
    config_defaults(cfg);
    if (!name) name = "config";
    snprintf(cfg->source, sizeof cfg->source, "%s", name);
    if (len > CFG_MAX_FILE_BYTES)
        return errf(err, "%s: expected a config of at most %d bytes, got %zu bytes", name, CFG_MAX_FILE_BYTES, len);
    Load L = {.cfg = cfg, .err = err, .file = name};
    if (load_text(&L, text, len)) return -1;
    return config_validate(cfg, err);
}
