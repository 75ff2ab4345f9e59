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
 *   4. schema   one table (configkeys_table, configkeys.c) gives each key its
 *               section, type, bounds, default and place in Config; the tree
 *               is walked onto it here, each value typed and range-checked
 *               by configkeys_assign; config_defaults, --set,
 *               config_validate, config_write, config_write_json and
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

/* ---- the file's structure ------------------------------------------------- */

/* "valid keys: a, b, c" for a section (or the sections when section is NULL). */
static const char *valid_keys(const char *section, char *buf, size_t cap) {
    size_t o = (size_t)snprintf(buf, cap, section ? "valid keys: " : "valid sections: ");
    bool first = true;
    for (int i = 0; section ? i < configkeys_count : configkeys_sections[i] != NULL; i++) {
        if (section && strcmp(configkeys_table[i].section, section)) continue;
        if (o < cap)
            o += (size_t)snprintf(buf + o, cap - o, "%s%s", first ? "" : ", ",
                                  section ? configkeys_table[i].name : configkeys_sections[i]);
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
    for (int i = 0; i < configkeys_count; i++) {
        if (strcmp(configkeys_table[i].name, word) || (section && !strcmp(configkeys_table[i].section, section)))
            continue;
        o += (size_t)snprintf(buf + o, cap - o, "%s\"%s.%s\"", found ? " or " : " (did you mean ",
                              configkeys_table[i].section, configkeys_table[i].name);
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
    for (int i = 0; section ? i < configkeys_count : configkeys_sections[i] != NULL; i++)
        if (!section || !strcmp(configkeys_table[i].section, section))
            cand[n++] = section ? configkeys_table[i].name : configkeys_sections[i];
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
static int key_text(const CfgLoad *L, const YamlNode *k, const char *parent, const char **raw, char *shown) {
    char d[CFG_SHOW_LEN + 32];
    if (k->kind != CFG_NODE_SCALAR || configkeys_is_null(L, k))
        return configyaml_fail_at(L, k->line, k->col, parent, "expected a %s name, got %s", parent ? "key" : "section",
                                  configkeys_describe(L, k, d));
    *raw = sval(L, k);
    show(*raw, k->len, shown);
    return 0;
}

static int section_id(const char *s, size_t len) {
    for (int i = 0; i < CFG_N_SECTIONS; i++)
        if (strlen(configkeys_sections[i]) == len && !memcmp(configkeys_sections[i], s, len)) return i;
    return -1;
}

static int key_in(const char *section, const char *s, size_t len) {
    for (int i = 0; i < configkeys_count; i++)
        if (!strcmp(configkeys_table[i].section, section) && strlen(configkeys_table[i].name) == len &&
            !memcmp(configkeys_table[i].name, s, len))
            return i;
    return -1;
}

static int walk_section(CfgLoad *L, int sec, size_t vi) {
    const YamlTree *t = &L->t;
    const YamlNode *v = &t->v[vi];
    const char *section = configkeys_sections[sec];
    char d[CFG_SHOW_LEN + 32], tail[ERR_LEN];
    if (v->kind != CFG_NODE_MAP) {
        char what[64];
        snprintf(what, sizeof what, "a mapping of %s keys", section);
        return configyaml_fail_at(L, v->line, v->col, section, "expected %s, got %s", what,
                                  configkeys_describe(L, v, d));
    }
    for (size_t ki = vi + 1; ki < v->end;) {
        const YamlNode *k = &t->v[ki];
        size_t val = k->end;
        const char *raw = NULL;
        char shown[CFG_SHOW_LEN], path[CFG_KEY_PATH_LEN];
        if (key_text(L, k, section, &raw, shown)) return -1;
        snprintf(path, sizeof path, "%s.%s", section, shown);
        int id = key_in(section, raw, k->len);
        if (id < 0) {
            unknown_tail(section, shown, false, tail, sizeof tail);
            return configyaml_fail_at(L, k->line, k->col, path, "unknown key%s", tail);
        }
        ConfigOrigin *o = &L->cfg->origin[id];
        if (o->from == CFG_FROM_FILE)
            return configyaml_fail_at(L, k->line, k->col, path, "duplicate key (first defined at line %d)", o->line);
        if (configkeys_assign(L, id, &t->v[val], path)) return -1;
        o->from = CFG_FROM_FILE;
        o->line = k->line;
        o->col = k->col;
        ki = t->v[val].end;
    }
    return 0;
}

static int walk_root(CfgLoad *L) {
    const YamlTree *t = &L->t;
    const YamlNode *r = &t->v[0];
    char d[CFG_SHOW_LEN + 32], tail[ERR_LEN];
    if (r->kind != CFG_NODE_MAP)
        return configyaml_fail_at(L, r->line, r->col, NULL,
                                  "expected a mapping of sections (run:, env:, ...) at the top level, got %s",
                                  configkeys_describe(L, r, d));
    int first_line[CFG_N_SECTIONS] = {0};
    for (size_t ki = 1; ki < r->end;) {
        const YamlNode *k = &t->v[ki];
        size_t val = k->end;
        const char *raw = NULL;
        char shown[CFG_SHOW_LEN];
        if (key_text(L, k, NULL, &raw, shown)) return -1;
        int sec = section_id(raw, k->len);
        if (sec < 0) {
            unknown_tail(NULL, shown, false, tail, sizeof tail);
            return configyaml_fail_at(L, k->line, k->col, shown, "unknown key%s", tail);
        }
        if (first_line[sec])
            return configyaml_fail_at(L, k->line, k->col, shown, "duplicate key (first defined at line %d)",
                                      first_line[sec]);
        first_line[sec] = k->line;
        if (walk_section(L, sec, val)) return -1;
        ki = t->v[val].end;
    }
    return 0;
}

/* Prescan, build the tree, walk it into L->cfg. */
static int load_text(CfgLoad *L, const char *text, size_t len) {
    int rc = configyaml_parse_text(L, text, len);
    if (rc == 0) rc = walk_root(L);
    configyaml_tree_free(&L->t);
    return rc;
}

/* ---- overrides -------------------------------------------------------------- */

/* The message tail for a --set path without a dot. A section's name is not
 * a key ("run"), nor is a word close to one ("runn"): the hint names the
 * section and lists its keys, never proposing the word typed. A key's name
 * without its section ("seed") gets the section.key paths (unknown_tail). */
static void bare_word_tail(const char *word, char *tail, size_t cap) {
    char list[320];
    if (section_id(word, strlen(word)) >= 0) {
        /* word is a section's name (short); a long key list is cut */
        snprintf(tail, cap, " (\"%.31s\" is a section, not a key: --set %.31s.KEY=VALUE; %s)", word, word,
                 valid_keys(word, list, sizeof list));
        return;
    }
    if (key_elsewhere(NULL, word, tail, cap)) return;
    const char *sec = did_you_mean(word, configkeys_sections);
    if (sec)
        snprintf(tail, cap, " (did you mean a key of section \"%s\"? --set %s.KEY=VALUE; %.400s)", sec, sec,
                 valid_keys(sec, list, sizeof list));
    else
        unknown_tail(NULL, word, true, tail, cap);
}

/* The key id of a --set path "section.key", or -1 with the message tail. */
static int path_id(const char *path, char *tail, size_t cap) {
    char full[CFG_MAX_KEYS][48];
    const char *cand[CFG_MAX_KEYS + 1];
    for (int i = 0; i < configkeys_count; i++) {
        snprintf(full[i], sizeof full[i], "%s.%s", configkeys_table[i].section, configkeys_table[i].name);
        if (!strcmp(full[i], path)) return i;
        cand[i] = full[i];
    }
    cand[configkeys_count] = NULL;
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
    char section[CFG_KEY_PATH_LEN];
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
    char shown[CFG_SHOW_LEN], path[CFG_KEY_PATH_LEN], sh[CFG_SHOW_LEN], tail[ERR_LEN], msg[ERR_LEN];
    CfgLoad L = {.cfg = cfg, .err = err, .assign = configtext_show(assignment, strlen(assignment), false, shown)};
    const char *eq = strchr(assignment, '=');
    if (!eq || eq == assignment)
        return errf(err, "--set %s: expected KEY.PATH=VALUE, e.g. --set roles.actors=4", shown);
    size_t plen = (size_t)(eq - assignment);
    snprintf(path, sizeof path, "%s", configtext_show(assignment, plen, false, sh));
    L.set_path = path;
    int id = plen < CFG_KEY_PATH_LEN ? path_id(path, tail, sizeof tail) : -1;
    if (id < 0) {
        if (plen >= CFG_KEY_PATH_LEN) snprintf(tail, sizeof tail, " (a key path is section.key)");
        return errf(err, "--set %s: %s: unknown key%s", shown, path, tail);
    }
    const char *value = eq + 1;
    size_t vlen = strlen(value), off;
    if (vlen > MAX_SET_BYTES)
        return errf(err, "--set %s: %s: expected a value of at most %d bytes, got %zu", shown, path, MAX_SET_BYTES,
                    vlen);
    if (configyaml_prescan(value, vlen, &off, msg)) return errf(err, "--set %s: %s: %s", shown, path, msg);
    if (configyaml_parse_value(&L, value, vlen)) return -1;
    int rc = configkeys_assign(&L, id, &L.t.v[0], path);
    configyaml_tree_free(&L.t);
    if (rc) return -1;
    cfg->origin[id].from = CFG_FROM_SET;
    cfg->origin[id].line = index;
    cfg->origin[id].col = 0;
    return 0;
}

int config_set(Config *cfg, const char *assignment, char *err) {
    if (apply_set(cfg, assignment, 1, err)) return -1;
    return configcheck_validate(cfg, &assignment, 1, err);
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
    int id = configkeys_id("run", "name");
    if (cfg->origin[id].from != CFG_FROM_DEFAULT) return 0;
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    const char *dot = strrchr(base, '.');
    size_t len = dot && dot != base ? (size_t)(dot - base) : strlen(base);
    char msg[ERR_LEN];
    if (base[0] == '.') /* .yaml, .x.yaml: no stem, or a hidden run directory nobody asked for */
        return errf(err, "%s: run.name: the file name \"%s\" has no stem to name the run after; set run.name", path,
                    base);
    if (configkeys_rule_run_name(base, len, msg))
        return errf(err, "%s: run.name: %s (the file name's stem; set run.name)", path, msg);
    memset(cfg->run.name, 0, sizeof cfg->run.name);
    memcpy(cfg->run.name, base, len);
    return 0;
}

void config_run_dir_name(const Config *cfg, char *out, size_t cap) {
    if (cfg->origin[configkeys_id("run", "name")].from != CFG_FROM_DEFAULT) {
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
    CfgLoad L = {.cfg = cfg, .err = err, .file = path};
    int rc = load_text(&L, text, len);
    free(text);
    if (rc) return -1;
    for (int i = 0; i < n_sets; i++)
        if (apply_set(cfg, sets[i], i + 1, err)) return -1;
    if (name_from_stem(cfg, path, err)) return -1;
    return configcheck_validate(cfg, sets, n_sets, err);
}

int config_load_string(Config *cfg, const char *name, const char *text, size_t len, char *err) {
    config_defaults(cfg);
    if (!name) name = "config";
    snprintf(cfg->source, sizeof cfg->source, "%s", name);
    if (len > CFG_MAX_FILE_BYTES)
        return errf(err, "%s: expected a config of at most %d bytes, got %zu bytes", name, CFG_MAX_FILE_BYTES, len);
    CfgLoad L = {.cfg = cfg, .err = err, .file = name};
    if (load_text(&L, text, len)) return -1;
    return config_validate(cfg, err);
}
