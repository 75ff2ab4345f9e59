/* config.c: the strict YAML config loader. See config.h for the contract and
 * docs/CONFIG.md for every key, its default and its range.
 *
 * The only file that includes libyaml. Loading runs in stages, each one
 * bounded before the next, more expensive one starts:
 *
 *   1. read     fstat first: a file over CFG_MAX_FILE_BYTES is refused unread;
 *   2. prescan  NUL bytes, invalid UTF-8 and control characters, reported as
 *               line:col (libyaml would give a bare byte offset);
 *   3. tree     libyaml's event API (never yaml_parser_load) into a flat
 *               pre-order node array; nesting depth and node count are
 *               checked on every event, and anchors, aliases, tags and a
 *               second document are refused as they arrive;
 *   4. schema   one table (`keys` below) gives each key its section, type,
 *               bounds and place in Config; parsing, --set, config_validate,
 *               config_write and config_same all walk that same table;
 *   5. --set    overrides, parsed as YAML and checked like the file;
 *   6. validate every range again plus the rules that tie keys together.
 *
 * Why the depth bound has to act on events: libyaml 0.2.5's scanner keeps one
 * "possible simple key" slot per open flow collection and walks that whole
 * stack for every token it fetches (yaml_parser_fetch_more_tokens and
 * yaml_parser_stale_simple_keys), so scanning text nested d levels deep costs
 * O(tokens * d): a 1 MiB file of "[" would take hours. The scanner only runs
 * ahead of the parser while the head token may still turn out to be a simple
 * key, which ends 1024 characters later or at a line break, so stopping at
 * the first event deeper than CFG_MAX_DEPTH leaves the stack at most ~1040
 * entries deep and the total work near a million steps. Block nesting does
 * not grow that stack, and deep block nesting needs indentation quadratic in
 * the depth, so it is cheap to refuse the same way.
 *
 * Typing follows YAML 1.2's core schema, strictly: an integer is a plain
 * (unquoted) [-+]?[0-9]+ without leading zeros; a number is a plain decimal
 * or exponent form; booleans are exactly true and false; a quoted "5" is a
 * string; ~, null and an empty value are null, which no key accepts.
 */
#include "config.h"
#include "platform.h"
#include "util.h"
/* Relative path: the fuzz build passes only -Isrc. */
#include "env.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

#define MAX_NODES 10000     /* YAML nodes in one file; a full config has ~250 */
#define MAX_SET_BYTES 4096  /* value of one --set */
#define SHOW_CHARS 48       /* characters of a value quoted in a message */
#define SHOW_LEN 256        /* buffer for a quoted value (escapes take 6 bytes) */
#define KEY_PATH_LEN 400       /* buffer for a key path (a shown key fits) */

/* ---- the schema ------------------------------------------------------- */

static const char *const run_modes[] = {"distributed", "local", NULL};
static const char *const sync_modes[] = {"ps_sync", "ps_async", "ps_bounded", "allreduce", NULL};
static const char *const replay_kinds[] = {"uniform", "prioritized", NULL};
static const char *const initial_priorities[] = {"actor", "max", NULL};
static const char *const optim_kinds[] = {"adam", "rmsprop", "sgd", NULL};
static const char *const target_kinds[] = {"hard", "soft", NULL};
static const char *const explore_kinds[] = {"linear", "apex", NULL};
static const char *const progress_modes[] = {"auto", "always", "never", NULL};
static const char *const allreduce_impls[] = {"ring", "mpi", NULL};
static const char *const wait_modes[] = {"auto", "poll", "sleep", NULL};

/* Enums are stored through an int-sized copy. */
_Static_assert(sizeof(RunMode) == sizeof(int) && sizeof(SyncMode) == sizeof(int) &&
                   sizeof(ReplayKind) == sizeof(int) && sizeof(CfgOptim) == sizeof(int) &&
                   sizeof(TargetKind) == sizeof(int) && sizeof(ExploreKind) == sizeof(int) &&
                   sizeof(ProgressMode) == sizeof(int) && sizeof(AllreduceImpl) == sizeof(int) && sizeof(InitialPriority) == sizeof(int) &&
                   sizeof(WaitMode) == sizeof(int),
               "enums are copied as int");

typedef enum { T_INT, T_U64, T_F64, T_BOOL, T_STR, T_ENUM, T_INTS, T_F64S } Type;

typedef struct {
    const char *section, *name;
    Type type;
    size_t off;                /* offsetof(Config, member) */
    size_t n_off;              /* lists: offsetof the element count */
    size_t cap;                /* strings: buffer bytes; lists: most elements */
    uint64_t ilo, ihi;         /* integers and integer elements: [ilo, ihi] */
    double flo, fhi;           /* numbers and number elements */
    bool lo_open, hi_open;     /* (flo and fhi) excluded */
    const char *const *names;  /* enums: the values, NULL-terminated */
    int (*rule)(const char *s, size_t len, char *msg); /* strings: validity */
    const char *what;          /* lists: what the elements are */
    const char *hint;          /* appended to range errors */
} Key;

static int rule_run_name(const char *s, size_t len, char *msg);
static int rule_out_dir(const char *s, size_t len, char *msg);
static int rule_env_name(const char *s, size_t len, char *msg);
static int rule_blas_kernel(const char *s, size_t len, char *msg);

#define OFF(m) offsetof(Config, m)
#define INT(s, k, m, lo, hi) {.section = s, .name = k, .type = T_INT, .off = OFF(m), .ilo = lo, .ihi = hi}
#define U64(s, k, m, lo, hi) {.section = s, .name = k, .type = T_U64, .off = OFF(m), .ilo = lo, .ihi = hi}
#define F64(s, k, m, lo, hi, lo_x, hi_x) \
    {.section = s, .name = k, .type = T_F64, .off = OFF(m), .flo = lo, .fhi = hi, .lo_open = lo_x, .hi_open = hi_x}
#define F_CC(s, k, m, lo, hi) F64(s, k, m, lo, hi, false, false) /* [lo, hi] */
#define F_OC(s, k, m, lo, hi) F64(s, k, m, lo, hi, true, false)  /* (lo, hi] */
#define F_CO(s, k, m, lo, hi) F64(s, k, m, lo, hi, false, true)  /* [lo, hi) */
#define BOOL(s, k, m) {.section = s, .name = k, .type = T_BOOL, .off = OFF(m)}
#define STR(s, k, m, r) \
    {.section = s, .name = k, .type = T_STR, .off = OFF(m), .cap = sizeof(((Config *)0)->m), .rule = r}
#define ENUM(s, k, m, t) {.section = s, .name = k, .type = T_ENUM, .off = OFF(m), .names = t}

#define E12 UINT64_C(1000000000000)

static const Key keys[] = {
    STR("run", "name", run.name, rule_run_name),
    STR("run", "out_dir", run.out_dir, rule_out_dir),
    U64("run", "seed", run.seed, 0, UINT64_MAX),
    ENUM("run", "mode", run.mode, run_modes),
    U64("run", "max_env_steps", run.max_env_steps, 0, E12),
    U64("run", "max_updates", run.max_updates, 0, E12),
    F_CC("run", "max_seconds", run.max_seconds, 0, 1e7),
    F_OC("run", "stop_deadline_seconds", run.stop_deadline_seconds, 0, 1e7),
    BOOL("run", "stop_when_solved", run.stop_when_solved),
    INT("run", "blas_threads", run.blas_threads, 1, 64),
    STR("run", "blas_kernel", run.blas_kernel, rule_blas_kernel),
    ENUM("run", "wait", run.wait, wait_modes),
    BOOL("run", "pin_cores", run.pin_cores),

    STR("env", "name", env.name, rule_env_name),
    INT("env", "max_episode_steps", env.max_episode_steps, 0, 1000000),
    {.section = "env", .name = "torques", .type = T_F64S, .off = OFF(env.torques), .n_off = OFF(env.n_torques),
     .cap = CFG_MAX_TORQUES, .flo = -2, .fhi = 2, .what = "torques",
     .hint = " (Pendulum-v1's max_torque is 2; it would clip larger values)"},

    INT("roles", "actors", roles.actors, 1, 1024),
    INT("roles", "replay_shards", roles.replay_shards, 1, 256),
    INT("roles", "learners", roles.learners, 1, 256),
    INT("roles", "param_servers", roles.param_servers, 0, 256),

    ENUM("sync", "mode", sync.mode, sync_modes),
    INT("sync", "staleness", sync.staleness, 0, 10000),
    INT("sync", "learner_pull_every", sync.learner_pull_every, 1, 1000000),
    ENUM("sync", "allreduce_impl", sync.allreduce_impl, allreduce_impls),

    INT("actor", "envs", actor.envs, 1, 4096),
    INT("actor", "pull_every", actor.pull_every, 1, 1000000),
    INT("actor", "chunk", actor.chunk, 1, 65536),

    ENUM("replay", "kind", replay.kind, replay_kinds),
    U64("replay", "capacity", replay.capacity, 1, 1000000000),
    INT("replay", "batch_size", replay.batch_size, 1, 65536),
    U64("replay", "min_size", replay.min_size, 1, 1000000000),
    F_CC("replay", "samples_per_insert", replay.samples_per_insert, 0, 10000),
    F_OC("replay", "spi_tolerance", replay.spi_tolerance, 0, 100),
    F_CC("replay", "alpha", replay.alpha, 0, 1),
    F_CC("replay", "beta", replay.beta, 0, 1),
    F_CC("replay", "beta_final", replay.beta_final, 0, 1),
    U64("replay", "beta_steps", replay.beta_steps, 0, 1000000000000ULL),
    F_OC("replay", "priority_eps", replay.priority_eps, 0, 1e6),
    ENUM("replay", "initial_priority", replay.initial_priority, initial_priorities),

    {.section = "network", .name = "hidden", .type = T_INTS, .off = OFF(network.hidden),
     .n_off = OFF(network.n_hidden), .cap = CFG_MAX_LAYERS, .ilo = 1, .ihi = CFG_MAX_HIDDEN,
     .what = "layer widths"},
    BOOL("network", "dueling", network.dueling),

    F_CC("agent", "gamma", agent.gamma, 0, 1),
    INT("agent", "n_step", agent.n_step, 1, 100),
    BOOL("agent", "double_dqn", agent.double_dqn),
    F_OC("agent", "huber_delta", agent.huber_delta, 0, 1e6),
    INT("agent", "train_every", agent.train_every, 1, 1000000),
    INT("agent", "gradient_steps", agent.gradient_steps, 1, 10000),
    ENUM("agent", "target_update", agent.target_update, target_kinds),
    INT("agent", "target_every", agent.target_every, 1, 100000000),
    F_OC("agent", "tau", agent.tau, 0, 1),

    ENUM("optimizer", "kind", optimizer.kind, optim_kinds),
    F_OC("optimizer", "lr", optimizer.lr, 0, 10),
    F_CO("optimizer", "beta1", optimizer.beta1, 0, 1),
    F_CO("optimizer", "beta2", optimizer.beta2, 0, 1),
    F_OC("optimizer", "eps", optimizer.eps, 0, 1),
    F_CO("optimizer", "decay", optimizer.decay, 0, 1),
    BOOL("optimizer", "centered", optimizer.centered),
    F_CO("optimizer", "momentum", optimizer.momentum, 0, 1),
    F_CC("optimizer", "grad_clip", optimizer.grad_clip, 0, 1e6),

    ENUM("explore", "kind", explore.kind, explore_kinds),
    F_CC("explore", "start", explore.start, 0, 1),
    F_CC("explore", "end", explore.end, 0, 1),
    U64("explore", "decay_steps", explore.decay_steps, 1, E12),
    F_CC("explore", "apex_eps", explore.apex_eps, 0, 1),
    F_CC("explore", "apex_alpha", explore.apex_alpha, 0, 100),

    U64("eval", "every_updates", eval.every_updates, 0, E12),
    INT("eval", "episodes", eval.episodes, 1, 10000),
    U64("eval", "seed", eval.seed, 0, UINT64_MAX),

    F_CC("checkpoint", "every_seconds", checkpoint.every_seconds, 0, 1e7),
    U64("checkpoint", "every_updates", checkpoint.every_updates, 0, E12),
    INT("checkpoint", "keep", checkpoint.keep, 1, 100),
    BOOL("checkpoint", "save_replay", checkpoint.save_replay),

    F_CC("logging", "interval_seconds", logging.interval_seconds, 0.1, 86400),
    ENUM("logging", "progress", logging.progress, progress_modes),
    BOOL("logging", "trace", logging.trace),
    INT("logging", "trace_events", logging.trace_events, 16, 10000000),
};

#define N_KEYS ((int)(sizeof keys / sizeof keys[0]))
_Static_assert(sizeof keys / sizeof keys[0] <= CFG_MAX_KEYS, "raise CFG_MAX_KEYS in config.h");

/* Sections in the order of the table (and of config_write). */
static const char *const sections[] = {"run",   "env",   "roles",     "sync",    "actor",
                                       "replay", "network", "agent", "optimizer", "explore",
                                       "eval",  "checkpoint", "logging", NULL};
#define N_SECTIONS ((int)(sizeof sections / sizeof sections[0]) - 1)

static const double default_torques[] = {-2, 0, 2};

/* Index of section.name in keys; the names used in this file always exist. */
static int key_id(const char *section, const char *name) {
    for (int i = 0; i < N_KEYS; i++)
        if (!strcmp(keys[i].section, section) && !strcmp(keys[i].name, name)) return i;
    abort();
}

static void *at(Config *c, const Key *k) { return (char *)c + k->off; }
static const void *cat(const Config *c, const Key *k) { return (const char *)c + k->off; }

static int get_int(const Config *c, const Key *k) {
    int v;
    memcpy(&v, cat(c, k), sizeof v);
    return v;
}
static uint64_t get_u64(const Config *c, const Key *k) {
    uint64_t v;
    memcpy(&v, cat(c, k), sizeof v);
    return v;
}
static double get_f64(const Config *c, const Key *k) {
    double v;
    memcpy(&v, cat(c, k), sizeof v);
    return v;
}
static bool get_bool(const Config *c, const Key *k) {
    bool v;
    memcpy(&v, cat(c, k), sizeof v);
    return v;
}
static int get_count(const Config *c, const Key *k) {
    int n;
    memcpy(&n, (const char *)c + k->n_off, sizeof n);
    return n;
}

/* ---- defaults and enum names ----------------------------------------- */

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

    cfg->checkpoint.every_seconds = 60;
    cfg->checkpoint.every_updates = 0;
    cfg->checkpoint.keep = 2;
    cfg->checkpoint.save_replay = false;

    cfg->logging.interval_seconds = 2;
    cfg->logging.progress = PROGRESS_AUTO;
    cfg->logging.trace = false;
    cfg->logging.trace_events = 200000;
    cfg->sync.allreduce_impl = ALLREDUCE_RING;
}

static const char *enum_name(const char *const *names, int v) {
    for (int i = 0; names[i]; i++)
        if (i == v) return names[i];
    return "?";
}
const char *config_sync_name(SyncMode m) { return enum_name(sync_modes, (int)m); }
const char *config_allreduce_impl_name(AllreduceImpl m) { return enum_name(allreduce_impls, (int)m); }
const char *config_wait_name(WaitMode m) { return enum_name(wait_modes, (int)m); }
const char *config_optim_name(CfgOptim k) { return enum_name(optim_kinds, (int)k); }
const char *config_replay_name(ReplayKind k) { return enum_name(replay_kinds, (int)k); }
const char *config_initial_priority_name(InitialPriority k) { return enum_name(initial_priorities, (int)k); }

/* ---- text helpers ------------------------------------------------------ */

/* Write s[0..len) into out (SHOW_LEN bytes) for a one-line message: control
 * characters (and, when quoted, quotes and backslashes) escaped, long values
 * cut at SHOW_CHARS characters with "...". */
static const char *show_text(const char *s, size_t len, bool quoted, char *out) {
    size_t o = 0, chars = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        bool lead = (c & 0xC0) != 0x80;
        if (lead && (chars == SHOW_CHARS || o + 10 > SHOW_LEN)) {
            memcpy(out + o, "...", 3);
            o += 3;
            break;
        }
        chars += lead;
        /* C1 controls and the Unicode line separators, which libyaml and
         * some terminals treat as line breaks. */
        unsigned char c1 = i + 1 < len ? (unsigned char)s[i + 1] : 0;
        unsigned char c2 = i + 2 < len ? (unsigned char)s[i + 2] : 0;
        if (c == 0xC2 && c1 >= 0x80 && c1 <= 0x9F) {
            o += (size_t)snprintf(out + o, SHOW_LEN - o, "\\u%04x", c1);
            i += 1;
        } else if (c == 0xE2 && c1 == 0x80 && (c2 == 0xA8 || c2 == 0xA9)) {
            o += (size_t)snprintf(out + o, SHOW_LEN - o, "\\u%04x", 0x2000 | c2);
            i += 2;
        } else if (quoted && (c == '"' || c == '\\')) {
            out[o++] = '\\';
            out[o++] = (char)c;
        } else if (c == '\n') {
            memcpy(out + o, "\\n", 2);
            o += 2;
        } else if (c == '\t') {
            memcpy(out + o, "\\t", 2);
            o += 2;
        } else if (c < 0x20 || c == 0x7F) {
            o += (size_t)snprintf(out + o, SHOW_LEN - o, "\\x%02x", c);
        } else {
            out[o++] = (char)c;
        }
    }
    out[o] = '\0';
    return out;
}

static const char *show(const char *s, size_t len, char *out) { return show_text(s, len, true, out); }
static const char *show_str(const char *s, char *out) { return show(s, strlen(s), out); }

/* Shortest text that reads back as exactly v (integral values without
 * exponent, so 100000 stays 100000). */
static void fmt_f64(double v, char *buf, size_t cap) {
    if (isfinite(v) && v == floor(v) && fabs(v) < 1e15) {
        snprintf(buf, cap, "%.0f", v);
        return;
    }
    for (int p = 1; p <= 17; p++) {
        snprintf(buf, cap, "%.*g", p, v);
        if (strtod(buf, NULL) == v) return;
    }
}

/* "[0, 1]", "(0, 10]", ... */
static const char *fmt_range(const Key *k, char *buf, size_t cap) {
    char lo[32], hi[32];
    fmt_f64(k->flo, lo, sizeof lo);
    fmt_f64(k->fhi, hi, sizeof hi);
    snprintf(buf, cap, "%c%s, %s%c", k->lo_open ? '(' : '[', lo, hi, k->hi_open ? ')' : ']');
    return buf;
}

/* Advance over one character of s[i..end), counting lines and 1-based
 * columns (in characters, as libyaml counts them) in *l and *c. Line breaks
 * are libyaml's: CR LF, CR, LF, NEL, LS, PS. Returns the next offset. */
static size_t step(const unsigned char *s, size_t i, size_t end, int *l, int *c) {
    if (s[i] == '\r' || s[i] == '\n') {
        (*l)++, *c = 1;
        return i + ((s[i] == '\r' && i + 1 < end && s[i + 1] == '\n') ? 2 : 1);
    }
    if (s[i] == 0xC2 && i + 1 < end && s[i + 1] == 0x85) {
        (*l)++, *c = 1;
        return i + 2;
    }
    if (s[i] == 0xE2 && i + 2 < end && s[i + 1] == 0x80 && (s[i + 2] == 0xA8 || s[i + 2] == 0xA9)) {
        (*l)++, *c = 1;
        return i + 3;
    }
    i++;
    while (i < end && (s[i] & 0xC0) == 0x80) i++; /* rest of a UTF-8 sequence */
    (*c)++;
    return i;
}

static size_t bom_len(const char *text, size_t len) {
    return len >= 3 && !memcmp(text, "\xEF\xBB\xBF", 3) ? 3 : 0;
}

/* Line and column of byte offset off (libyaml reports reader errors as a
 * bare offset). */
static void offset_pos(const char *text, size_t len, size_t off, int *line, int *col) {
    const unsigned char *s = (const unsigned char *)text;
    *line = 1, *col = 1;
    if (off > len) off = len;
    for (size_t i = bom_len(text, len); i < off;) i = step(s, i, off, line, col);
}

/* Byte offset of (line, col), the inverse of offset_pos; len if past the end. */
static size_t pos_offset(const char *text, size_t len, int line, int col) {
    const unsigned char *s = (const unsigned char *)text;
    int l = 1, c = 1;
    size_t i = bom_len(text, len);
    while (i < len && (l < line || (l == line && c < col))) i = step(s, i, len, &l, &c);
    return i;
}

/* Length of the valid UTF-8 sequence at s (RFC 3629: no overlongs, no
 * surrogates, nothing above U+10FFFF) and its code point, or 0 if invalid. */
static size_t utf8_decode(const unsigned char *s, size_t n, uint32_t *cp) {
    unsigned char c = s[0];
    size_t need;
    uint32_t v, lo2 = 0x80, hi2 = 0xBF;
    if (c < 0x80) {
        *cp = c;
        return 1;
    }
    if (c >= 0xC2 && c <= 0xDF) need = 1, v = c & 0x1F;
    else if (c >= 0xE0 && c <= 0xEF) need = 2, v = c & 0x0F;
    else if (c >= 0xF0 && c <= 0xF4) need = 3, v = c & 0x07;
    else return 0;
    if (c == 0xE0) lo2 = 0xA0;
    if (c == 0xED) hi2 = 0x9F;
    if (c == 0xF0) lo2 = 0x90;
    if (c == 0xF4) hi2 = 0x8F;
    if (n < need + 1) return 0;
    for (size_t i = 1; i <= need; i++) {
        unsigned char b = s[i];
        if (i == 1 ? (b < lo2 || b > hi2) : (b < 0x80 || b > 0xBF)) return 0;
        v = v << 6 | (b & 0x3F);
    }
    *cp = v;
    return need + 1;
}

/* The characters libyaml's reader accepts (YAML 1.1 "printable"). */
static bool printable(uint32_t c) {
    return c == 0x09 || c == 0x0A || c == 0x0D || (c >= 0x20 && c <= 0x7E) || c == 0x85 ||
           (c >= 0xA0 && c <= 0xD7FF) || (c >= 0xE000 && c <= 0xFFFD) || (c >= 0x10000 && c <= 0x10FFFF);
}

/* Refuse what libyaml would report only as a byte offset, or not at all:
 * UTF-16/32 text, NUL bytes, invalid UTF-8, control characters. Returns 0,
 * or -1 with *off at the offending byte and a message in msg. */
static int prescan(const char *text, size_t len, size_t *off, char *msg) {
    const unsigned char *s = (const unsigned char *)text;
    if (len >= 2 && ((s[0] == 0xFF && s[1] == 0xFE) || (s[0] == 0xFE && s[1] == 0xFF))) {
        *off = 0;
        return errf(msg, "expected UTF-8 text, found a UTF-16 byte order mark");
    }
    const unsigned char *nul = memchr(s, 0, len);
    if (nul) {
        *off = (size_t)(nul - s);
        return errf(msg, "expected UTF-8 text, found a NUL byte (is this a binary file?)");
    }
    for (size_t i = 0; i < len;) {
        uint32_t cp;
        size_t n = utf8_decode(s + i, len - i, &cp);
        if (!n) {
            *off = i;
            return errf(msg, "expected UTF-8 text, found the byte 0x%02x, which is not valid UTF-8", s[i]);
        }
        if (!printable(cp)) {
            *off = i;
            return errf(msg, "expected printable text, found the control character U+%04" PRIX32, cp);
        }
        i += n;
    }
    return 0;
}

/* ---- the YAML tree ------------------------------------------------------ */

typedef enum { N_SCALAR, N_SEQ, N_MAP } NodeKind;

/* Nodes in document (pre-order) order: a collection's children follow it
 * and its subtree ends at `end`; a mapping's children alternate key, value. */
typedef struct {
    NodeKind kind;
    int line, col;           /* 1-based start of the node */
    yaml_scalar_style_t style;
    size_t str, len;         /* scalar: offset into Tree.chars, bytes */
    size_t end;              /* one past the last node of the subtree */
} Node;

typedef struct {
    Node *v;
    size_t n, cap;
    char *chars;
    size_t n_chars, cap_chars;
} Tree;

static void tree_free(Tree *t) {
    free(t->v);
    free(t->chars);
    memset(t, 0, sizeof *t);
}

/* Grow a buffer of elem-byte elements to hold at least need. */
static void *grow(void *p, size_t *cap, size_t need, size_t elem) {
    if (need <= *cap) return p;
    size_t c = *cap ? *cap : 64;
    while (c < need) c *= 2;
    void *q = xmalloc(c * elem);
    if (p) memcpy(q, p, *cap * elem);
    free(p);
    *cap = c;
    return q;
}

/* One load: the config being filled, where the text came from, the tree. */
typedef struct {
    Config *cfg;
    char *err;
    const char *file;     /* file name for positions (file mode) */
    const char *assign;   /* --set mode: the assignment, already shown() */
    const char *set_path; /* --set mode: its key path */
    Tree t;
} Load;

/* Report at (line, col) of the text, with an optional key path. An override
 * has no file: its assignment takes the place of FILE:LINE:COL. */
__attribute__((format(printf, 5, 6))) static int fail_at(const Load *L, int line, int col, const char *path,
                                                         const char *fmt, ...) {
    char msg[ERR_LEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (L->assign) return errf(L->err, "--set %s: %s: %s", L->assign, path ? path : L->set_path, msg);
    if (path) return errf(L->err, "%s:%d:%d: %s: %s", L->file, line, col, path, msg);
    return errf(L->err, "%s:%d:%d: %s", L->file, line, col, msg);
}

static int yaml_fail(const Load *L, const yaml_parser_t *p, const char *text, size_t len) {
    int line, col;
    switch (p->error) {
    case YAML_MEMORY_ERROR:
        return fail_at(L, 1, 1, NULL, "out of memory while parsing YAML");
    case YAML_READER_ERROR:
        offset_pos(text, len, p->problem_offset, &line, &col);
        return fail_at(L, line, col, NULL, "invalid text: %s", p->problem ? p->problem : "unreadable");
    case YAML_SCANNER_ERROR:
    case YAML_PARSER_ERROR:
        line = (int)p->problem_mark.line + 1;
        col = (int)p->problem_mark.column + 1;
        size_t at_off = pos_offset(text, len, line, col);
        if (at_off < len && text[at_off] == '\t')
            return fail_at(L, line, col, NULL, "invalid YAML: found a tab; indent with spaces");
        /* An override is one short value: positions inside it (libyaml ends
         * every stream with a line break) would only confuse. */
        if (p->context && L->assign)
            return fail_at(L, line, col, NULL, "invalid YAML: %s (%s)", p->problem, p->context);
        if (p->context)
            return fail_at(L, line, col, NULL, "invalid YAML: %s (%s at line %d, column %d)", p->problem,
                           p->context, (int)p->context_mark.line + 1, (int)p->context_mark.column + 1);
        return fail_at(L, line, col, NULL, "invalid YAML: %s", p->problem ? p->problem : "syntax error");
    default:
        return fail_at(L, 1, 1, NULL, "invalid YAML");
    }
}

static int add_node(Load *L, NodeKind kind, const yaml_event_t *ev) {
    Tree *t = &L->t;
    if (t->n == MAX_NODES)
        return fail_at(L, (int)ev->start_mark.line + 1, (int)ev->start_mark.column + 1, NULL,
                       "expected at most %d YAML nodes, found more (a full config has a few hundred)", MAX_NODES);
    t->v = grow(t->v, &t->cap, t->n + 1, sizeof *t->v);
    Node *n = &t->v[t->n];
    memset(n, 0, sizeof *n);
    n->kind = kind;
    n->line = (int)ev->start_mark.line + 1;
    n->col = (int)ev->start_mark.column + 1;
    n->end = t->n + 1;
    if (kind == N_SCALAR) {
        size_t len = ev->data.scalar.length;
        t->chars = grow(t->chars, &t->cap_chars, t->n_chars + len + 1, 1);
        memcpy(t->chars + t->n_chars, ev->data.scalar.value, len);
        t->chars[t->n_chars + len] = '\0';
        n->style = ev->data.scalar.style;
        n->str = t->n_chars;
        n->len = len;
        t->n_chars += len + 1;
    }
    t->n++;
    return 0;
}

/* Anchors, aliases and tags: a config needs none of them, and refusing them
 * keeps one value in one place (no billion-laughs expansion either). */
static int check_props(const Load *L, const yaml_event_t *ev, const yaml_char_t *anchor, const yaml_char_t *tag) {
    int line = (int)ev->start_mark.line + 1, col = (int)ev->start_mark.column + 1;
    char sh[SHOW_LEN];
    if (anchor) return fail_at(L, line, col, NULL, "anchors and aliases are not supported");
    if (tag)
        return fail_at(L, line, col, NULL, "tags are not supported, found \"%s\"",
                       show_str((const char *)tag, sh));
    return 0;
}

/* Parse text into L->t. *docs gets the number of documents (0 or 1). */
static int build_tree(Load *L, const char *text, size_t len, int *docs) {
    yaml_parser_t p;
    *docs = 0;
    if (!yaml_parser_initialize(&p)) return fail_at(L, 1, 1, NULL, "out of memory while parsing YAML");
    yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
    size_t open[CFG_MAX_DEPTH];
    int depth = 0, rc = 0;
    bool done = false;
    while (!done && rc == 0) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&p, &ev)) {
            rc = yaml_fail(L, &p, text, len);
            break;
        }
        int line = (int)ev.start_mark.line + 1, col = (int)ev.start_mark.column + 1;
        switch (ev.type) {
        case YAML_STREAM_START_EVENT:
        case YAML_DOCUMENT_END_EVENT:
            break;
        case YAML_DOCUMENT_START_EVENT:
            if (++*docs > 1)
                rc = fail_at(L, line, col, NULL, "expected one YAML document, found a second one");
            else if (ev.data.document_start.tag_directives.start != ev.data.document_start.tag_directives.end)
                rc = fail_at(L, line, col, NULL, "tags are not supported, found a %%TAG directive");
            break;
        case YAML_ALIAS_EVENT:
            rc = fail_at(L, line, col, NULL, "anchors and aliases are not supported");
            break;
        case YAML_SCALAR_EVENT:
            rc = check_props(L, &ev, ev.data.scalar.anchor, ev.data.scalar.tag);
            if (!rc) rc = add_node(L, N_SCALAR, &ev);
            break;
        case YAML_SEQUENCE_START_EVENT:
        case YAML_MAPPING_START_EVENT:
            if (ev.type == YAML_SEQUENCE_START_EVENT)
                rc = check_props(L, &ev, ev.data.sequence_start.anchor, ev.data.sequence_start.tag);
            else
                rc = check_props(L, &ev, ev.data.mapping_start.anchor, ev.data.mapping_start.tag);
            if (!rc && depth == CFG_MAX_DEPTH)
                rc = fail_at(L, line, col, NULL, "expected at most %d levels of nesting, found more",
                             CFG_MAX_DEPTH);
            if (!rc) {
                open[depth++] = L->t.n;
                rc = add_node(L, ev.type == YAML_SEQUENCE_START_EVENT ? N_SEQ : N_MAP, &ev);
            }
            break;
        case YAML_SEQUENCE_END_EVENT:
        case YAML_MAPPING_END_EVENT:
            depth--;
            L->t.v[open[depth]].end = L->t.n;
            break;
        case YAML_STREAM_END_EVENT:
        case YAML_NO_EVENT:
            done = true;
            break;
        }
        yaml_event_delete(&ev);
    }
    yaml_parser_delete(&p);
    return rc;
}

/* ---- values ------------------------------------------------------------- */

static const char *sval(const Load *L, const Node *n) { return L->t.chars + n->str; }

static bool plain(const Node *n) { return n->kind == N_SCALAR && n->style == YAML_PLAIN_SCALAR_STYLE; }

static bool is_null(const Load *L, const Node *n) {
    if (!plain(n)) return false;
    const char *s = sval(L, n);
    return n->len == 0 || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") || !strcmp(s, "NULL");
}

/* What a node is, for "got ..." in messages. */
static const char *describe(const Load *L, const Node *n, char *buf) {
    char sh[SHOW_LEN];
    if (n->kind == N_MAP) return "a mapping";
    if (n->kind == N_SEQ) return "a list";
    const char *s = sval(L, n);
    if (n->style == YAML_PLAIN_SCALAR_STYLE) {
        if (n->len == 0) return "an empty value";
        if (is_null(L, n)) return !strcmp(s, "~") ? "~ (null)" : "null";
        snprintf(buf, SHOW_LEN + 32, "\"%s\"", show(s, n->len, sh));
    } else if (n->style == YAML_SINGLE_QUOTED_SCALAR_STYLE || n->style == YAML_DOUBLE_QUOTED_SCALAR_STYLE) {
        snprintf(buf, SHOW_LEN + 32, "the quoted string \"%s\"", show(s, n->len, sh));
    } else {
        snprintf(buf, SHOW_LEN + 32, "the block string \"%s\"", show(s, n->len, sh));
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
static int parse_uint(const Load *L, const Key *k, const Node *n, const char *path, uint64_t *out) {
    char d[SHOW_LEN + 32], sh[SHOW_LEN];
    bool neg, over;
    uint64_t v;
    if (!plain(n) || is_null(L, n) || scan_int(sval(L, n), n->len, &neg, &v, &over) != 0)
        return fail_at(L, n->line, n->col, path, "expected %s, got %s", int_kind(k->ilo), describe(L, n, d));
    if ((neg && v != 0) || over || v < k->ilo || v > k->ihi)
        return fail_at(L, n->line, n->col, path, "expected an integer in [%" PRIu64 ", %" PRIu64 "], got %s", k->ilo,
                       k->ihi, show(sval(L, n), n->len, sh));
    *out = v;
    return 0;
}

/* A finite number within k's bounds from a plain scalar. */
static int parse_f64(const Load *L, const Key *k, const Node *n, const char *path, double *out) {
    char d[SHOW_LEN + 32], sh[SHOW_LEN], r[80];
    fmt_range(k, r, sizeof r);
    const char *s = sval(L, n);
    if (plain(n) && special_float(s))
        return fail_at(L, n->line, n->col, path, "expected a finite number in %s, got %s", r, s);
    if (!plain(n) || is_null(L, n) || !float_syntax(s, n->len))
        return fail_at(L, n->line, n->col, path, "expected a number in %s, got %s", r, describe(L, n, d));
    errno = 0;
    double v = strtod(s, NULL);
    if (errno == ERANGE && isinf(v))
        return fail_at(L, n->line, n->col, path, "expected a finite number in %s, got %s (too large for a double)",
                       r, show(s, n->len, sh));
    if (errno == ERANGE && v == 0)
        return fail_at(L, n->line, n->col, path, "expected a number in %s, got %s (too small for a double)", r,
                       show(s, n->len, sh));
    if ((k->lo_open ? !(v > k->flo) : !(v >= k->flo)) || (k->hi_open ? !(v < k->fhi) : !(v <= k->fhi)))
        return fail_at(L, n->line, n->col, path, "expected a number in %s, got %s%s", r, show(s, n->len, sh),
                       k->hint ? k->hint : "");
    *out = v;
    return 0;
}

/* Store one node into key id of L->cfg (type and range checked). */
static int assign(Load *L, int id, const Node *n, const char *path) {
    const Key *k = &keys[id];
    Config *cfg = L->cfg;
    char d[SHOW_LEN + 32], sh[SHOW_LEN], msg[ERR_LEN];
    switch (k->type) {
    case T_INT:
    case T_U64: {
        uint64_t v;
        if (parse_uint(L, k, n, path, &v)) return -1;
        if (k->type == T_U64) {
            memcpy(at(cfg, k), &v, sizeof v);
        } else {
            int iv = (int)v; /* ihi <= INT_MAX for every T_INT key */
            memcpy(at(cfg, k), &iv, sizeof iv);
        }
        return 0;
    }
    case T_F64: {
        double v;
        if (parse_f64(L, k, n, path, &v)) return -1;
        memcpy(at(cfg, k), &v, sizeof v);
        return 0;
    }
    case T_BOOL: {
        bool v;
        if (plain(n) && !strcmp(sval(L, n), "true")) v = true;
        else if (plain(n) && !strcmp(sval(L, n), "false")) v = false;
        else return fail_at(L, n->line, n->col, path, "expected true or false, got %s", describe(L, n, d));
        memcpy(at(cfg, k), &v, sizeof v);
        return 0;
    }
    case T_STR: {
        if (n->kind != N_SCALAR || is_null(L, n))
            return fail_at(L, n->line, n->col, path, "expected a string, got %s", describe(L, n, d));
        const char *s = sval(L, n);
        if (strlen(s) != n->len)
            return fail_at(L, n->line, n->col, path, "expected a string without NUL characters, got \"%s\"",
                           show(s, n->len, sh));
        if (k->rule(s, n->len, msg)) return fail_at(L, n->line, n->col, path, "%s", msg);
        memset(at(cfg, k), 0, k->cap);
        memcpy(at(cfg, k), s, n->len); /* the rule bounds len below k->cap */
        return 0;
    }
    case T_ENUM: {
        char list[256] = "";
        if (n->kind == N_SCALAR && !is_null(L, n)) {
            for (int i = 0; k->names[i]; i++) {
                if (strlen(k->names[i]) == n->len && !strcmp(sval(L, n), k->names[i])) {
                    memcpy(at(cfg, k), &i, sizeof i);
                    return 0;
                }
            }
        }
        for (int i = 0; k->names[i]; i++)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "", k->names[i]);
        const char *guess = n->kind == N_SCALAR ? did_you_mean(sval(L, n), k->names) : NULL;
        if (guess)
            return fail_at(L, n->line, n->col, path, "expected one of %s, got %s (did you mean \"%s\"?)", list,
                           describe(L, n, d), guess);
        return fail_at(L, n->line, n->col, path, "expected one of %s, got %s", list, describe(L, n, d));
    }
    case T_INTS:
    case T_F64S: {
        int count = 0;
        if (n->kind == N_SEQ)
            for (size_t c = (size_t)(n - L->t.v) + 1; c < n->end; c = L->t.v[c].end) count++;
        if (n->kind != N_SEQ || count == 0 || count > (int)k->cap)
            return fail_at(L, n->line, n->col, path, "expected a list of 1 to %zu %s, got %s", k->cap, k->what,
                           n->kind != N_SEQ ? describe(L, n, d)
                           : count == 0     ? "an empty list"
                                            : (snprintf(d, sizeof d, "%d of them", count), d));
        int ints[CFG_MAX_TORQUES > CFG_MAX_LAYERS ? CFG_MAX_TORQUES : CFG_MAX_LAYERS];
        double nums[CFG_MAX_TORQUES > CFG_MAX_LAYERS ? CFG_MAX_TORQUES : CFG_MAX_LAYERS];
        int i = 0;
        for (size_t c = (size_t)(n - L->t.v) + 1; c < n->end; c = L->t.v[c].end, i++) {
            const Node *e = &L->t.v[c];
            char sub[KEY_PATH_LEN + 16];
            snprintf(sub, sizeof sub, "%s[%d]", path, i);
            if (k->type == T_INTS) {
                uint64_t v;
                if (parse_uint(L, k, e, sub, &v)) return -1;
                ints[i] = (int)v;
            } else {
                if (parse_f64(L, k, e, sub, &nums[i])) return -1;
                for (int j = 0; j < i; j++) {
                    if (nums[j] == nums[i]) {
                        char prev[KEY_PATH_LEN + 16];
                        snprintf(prev, sizeof prev, "%s[%d]", path, j);
                        return fail_at(L, e->line, e->col, sub, "expected distinct %s, got %s again (as %s)",
                                       k->what, show(sval(L, e), e->len, sh), prev);
                    }
                }
            }
        }
        memset(at(cfg, k), 0, k->cap * (k->type == T_INTS ? sizeof(int) : sizeof(double)));
        memcpy(at(cfg, k), k->type == T_INTS ? (void *)ints : (void *)nums,
               (size_t)count * (k->type == T_INTS ? sizeof(int) : sizeof(double)));
        memcpy((char *)cfg + k->n_off, &count, sizeof count);
        return 0;
    }
    }
    return -1;
}

/* ---- string rules --------------------------------------------------------- */

static int rule_run_name(const char *s, size_t len, char *msg) {
    char sh[SHOW_LEN];
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
    char sh[SHOW_LEN];
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

static int rule_env_name(const char *s, size_t len, char *msg) {
    char sh[SHOW_LEN], list[256] = "";
    const EnvSpec *spec = len < CFG_NAME_LEN ? env_find(s) : NULL;
    /* A registered spec outside the limits (a new environment's mistake)
     * is refused here, before any process is started, not at its first
     * env_init. */
    if (spec) return env_spec_check(spec, msg) == 0 ? 0 : -1;
    const char *names[64];
    int n = env_registry_count < 63 ? env_registry_count : 63;
    for (int i = 0; i < n; i++) {
        names[i] = env_registry[i]->name;
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "", names[i]);
    }
    names[n] = NULL;
    const char *guess = did_you_mean(s, names);
    if (guess)
        return errf(msg, "expected one of %s, got \"%s\" (did you mean \"%s\"?)", list, show(s, len, sh), guess);
    return errf(msg, "expected one of %s, got \"%s\"", list, show(s, len, sh));
}

/* "auto", or an OpenBLAS kernel name in any case (platform.h's table). */
static int rule_blas_kernel(const char *s, size_t len, char *msg) {
    char sh[SHOW_LEN], list[256] = "";
    if (len < CFG_NAME_LEN && (!strcmp(s, "auto") || platform_kernel_find(s))) return 0;
    for (int i = 0; i < platform_kernel_count(); i++)
        snprintf(list + strlen(list), sizeof list - strlen(list), ", %s", platform_kernel_name(i));
    return errf(msg, "expected auto or an OpenBLAS kernel (%s), got \"%s\"", list + 2, show(s, len, sh));
}

/* ---- the file's structure ------------------------------------------------- */

/* "valid keys: a, b, c" for a section (or the sections when section is NULL). */
static const char *valid_keys(const char *section, char *buf, size_t cap) {
    size_t o = (size_t)snprintf(buf, cap, section ? "valid keys: " : "valid sections: ");
    bool first = true;
    for (int i = 0; section ? i < N_KEYS : sections[i] != NULL; i++) {
        if (section && strcmp(keys[i].section, section)) continue;
        if (o < cap) o += (size_t)snprintf(buf + o, cap - o, "%s%s", first ? "" : ", ",
                                           section ? keys[i].name : sections[i]);
        first = false;
    }
    return buf;
}

/* The " (did you mean ...?)" or " (valid keys: ...)" tail for an unknown
 * key named word in section (NULL: the top level). A close key of the same
 * section is suggested by its bare name (section.key when full is set, as
 * --set needs), the same name in other sections as section.key. */
static void unknown_tail(const char *section, const char *word, bool full, char *buf, size_t cap) {
    const char *cand[CFG_MAX_KEYS + 1];
    int n = 0;
    for (int i = 0; section ? i < N_KEYS : sections[i] != NULL; i++)
        if (!section || !strcmp(keys[i].section, section)) cand[n++] = section ? keys[i].name : sections[i];
    cand[n] = NULL;
    const char *guess = did_you_mean(word, cand);
    if (guess) {
        if (full && section) snprintf(buf, cap, " (did you mean \"%s.%s\"?)", section, guess);
        else snprintf(buf, cap, " (did you mean \"%s\"?)", guess);
        return;
    }
    /* The right key in the wrong place: "gamma" under roles. */
    size_t o = 0;
    int found = 0;
    for (int i = 0; i < N_KEYS; i++) {
        if (strcmp(keys[i].name, word) || (section && !strcmp(keys[i].section, section))) continue;
        o += (size_t)snprintf(buf + o, cap - o, "%s\"%s.%s\"", found ? " or " : " (did you mean ", keys[i].section,
                              keys[i].name);
        found++;
        if (o >= cap) break;
    }
    if (found && o < cap) {
        snprintf(buf + o, cap - o, "?)");
        return;
    }
    char list[400];
    snprintf(buf, cap, " (%.400s)", valid_keys(section, list, sizeof list));
}

/* The text of a mapping key, for lookup (raw) and messages (shown). */
static int key_text(const Load *L, const Node *k, const char *parent, const char **raw, char *shown) {
    char d[SHOW_LEN + 32];
    if (k->kind != N_SCALAR || is_null(L, k))
        return fail_at(L, k->line, k->col, parent, "expected a %s name, got %s", parent ? "key" : "section",
                       describe(L, k, d));
    *raw = sval(L, k);
    show(*raw, k->len, shown);
    return 0;
}

static int section_id(const char *s, size_t len) {
    for (int i = 0; i < N_SECTIONS; i++)
        if (strlen(sections[i]) == len && !memcmp(sections[i], s, len)) return i;
    return -1;
}

static int key_in(const char *section, const char *s, size_t len) {
    for (int i = 0; i < N_KEYS; i++)
        if (!strcmp(keys[i].section, section) && strlen(keys[i].name) == len && !memcmp(keys[i].name, s, len))
            return i;
    return -1;
}

static int walk_section(Load *L, int sec, size_t vi) {
    const Tree *t = &L->t;
    const Node *v = &t->v[vi];
    const char *section = sections[sec];
    char d[SHOW_LEN + 32], tail[ERR_LEN];
    if (v->kind != N_MAP) {
        char what[64];
        snprintf(what, sizeof what, "a mapping of %s keys", section);
        return fail_at(L, v->line, v->col, section, "expected %s, got %s", what, describe(L, v, d));
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
            return fail_at(L, k->line, k->col, path, "unknown key%s", tail);
        }
        ConfigOrigin *o = &L->cfg->origin[id];
        if (o->from == CFG_FROM_FILE)
            return fail_at(L, k->line, k->col, path, "duplicate key (first defined at line %d)", o->line);
        if (assign(L, id, &t->v[val], path)) return -1;
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
        return fail_at(L, r->line, r->col, NULL,
                       "expected a mapping of sections (run:, env:, ...) at the top level, got %s", describe(L, r, d));
    int first_line[N_SECTIONS] = {0};
    for (size_t ki = 1; ki < r->end;) {
        const Node *k = &t->v[ki];
        size_t val = k->end;
        const char *raw = NULL;
        char shown[SHOW_LEN];
        if (key_text(L, k, NULL, &raw, shown)) return -1;
        int sec = section_id(raw, k->len);
        if (sec < 0) {
            unknown_tail(NULL, shown, false, tail, sizeof tail);
            return fail_at(L, k->line, k->col, shown, "unknown key%s", tail);
        }
        if (first_line[sec])
            return fail_at(L, k->line, k->col, shown, "duplicate key (first defined at line %d)", first_line[sec]);
        first_line[sec] = k->line;
        if (walk_section(L, sec, val)) return -1;
        ki = t->v[val].end;
    }
    return 0;
}

/* Prescan, build the tree, walk it into L->cfg. */
static int load_text(Load *L, const char *text, size_t len) {
    size_t off;
    char msg[ERR_LEN];
    int line, col, docs;
    if (prescan(text, len, &off, msg)) {
        offset_pos(text, len, off, &line, &col);
        return fail_at(L, line, col, NULL, "%s", msg);
    }
    int rc = build_tree(L, text, len, &docs);
    if (rc == 0 && docs == 0) {
        bool blank = true;
        for (size_t i = bom_len(text, len); i < len && blank; i++)
            blank = text[i] == ' ' || text[i] == '\t' || text[i] == '\r' || text[i] == '\n';
        rc = fail_at(L, 1, 1, NULL, "expected a mapping of sections (run:, env:, ...), got %s",
                     blank ? "an empty file" : "only comments");
    }
    if (rc == 0) rc = walk_root(L);
    tree_free(&L->t);
    return rc;
}

/* ---- validation ------------------------------------------------------------- */

static void key_value_text(const Config *cfg, int id, char *buf, size_t cap);

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
    char path[64], val[SHOW_LEN];
    snprintf(path, sizeof path, "%s.%s=", keys[id].section, keys[id].name);
    if (C->sets && o->line >= 1 && o->line <= C->n_sets && !strncmp(C->sets[o->line - 1], path, strlen(path))) {
        const char *a = C->sets[o->line - 1];
        show_text(a, strlen(a), false, buf);
        return;
    }
    key_value_text(C->cfg, id, val, sizeof val);
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

/* Check the stored value of one key (config_validate re-checks what the
 * parser checked, for configs built or changed in code). */
static int check_key(const Check *C, int id) {
    const Config *cfg = C->cfg;
    const Key *k = &keys[id];
    char path[KEY_PATH_LEN], r[80], num[40], msg[ERR_LEN];
    snprintf(path, sizeof path, "%s.%s", k->section, k->name);
    switch (k->type) {
    case T_INT: {
        int v = get_int(cfg, k);
        if (v < 0 || (uint64_t)v < k->ilo || (uint64_t)v > k->ihi)
            return fail_key(C, id, path, "expected an integer in [%" PRIu64 ", %" PRIu64 "], got %d", k->ilo, k->ihi,
                            v);
        return 0;
    }
    case T_U64: {
        uint64_t v = get_u64(cfg, k);
        if (v < k->ilo || v > k->ihi)
            return fail_key(C, id, path, "expected an integer in [%" PRIu64 ", %" PRIu64 "], got %" PRIu64, k->ilo,
                            k->ihi, v);
        return 0;
    }
    case T_F64: {
        double v = get_f64(cfg, k);
        fmt_range(k, r, sizeof r);
        fmt_f64(v, num, sizeof num);
        if (!isfinite(v)) return fail_key(C, id, path, "expected a finite number in %s, got %s", r, num);
        if ((k->lo_open ? !(v > k->flo) : !(v >= k->flo)) || (k->hi_open ? !(v < k->fhi) : !(v <= k->fhi)))
            return fail_key(C, id, path, "expected a number in %s, got %s%s", r, num, k->hint ? k->hint : "");
        return 0;
    }
    case T_BOOL:
        return 0;
    case T_STR: {
        const char *s = cat(cfg, k);
        size_t len = strnlen(s, k->cap);
        if (len == k->cap) return fail_key(C, id, path, "expected a string of at most %zu bytes", k->cap - 1);
        if (k->rule(s, len, msg)) return fail_key(C, id, path, "%s", msg);
        return 0;
    }
    case T_ENUM: {
        int v = get_int(cfg, k), n = 0;
        while (k->names[n]) n++;
        if (v < 0 || v >= n) return fail_key(C, id, path, "expected a %s value, got the number %d", path, v);
        return 0;
    }
    case T_INTS:
    case T_F64S: {
        int count = get_count(cfg, k);
        if (count < 1 || count > (int)k->cap)
            return fail_key(C, id, path, "expected a list of 1 to %zu %s, got %d of them", k->cap, k->what, count);
        for (int i = 0; i < count; i++) {
            char sub[KEY_PATH_LEN + 16];
            snprintf(sub, sizeof sub, "%s[%d]", path, i);
            if (k->type == T_INTS) {
                int v;
                memcpy(&v, (const char *)cat(cfg, k) + (size_t)i * sizeof v, sizeof v);
                if (v < 0 || (uint64_t)v < k->ilo || (uint64_t)v > k->ihi)
                    return fail_key(C, id, sub, "expected an integer in [%" PRIu64 ", %" PRIu64 "], got %d", k->ilo,
                                    k->ihi, v);
            } else {
                const double *a = cat(cfg, k);
                fmt_range(k, r, sizeof r);
                fmt_f64(a[i], num, sizeof num);
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

static bool same_value(const Config *a, const Config *b, int id);

/* ", the default" or ", from --set" after a value in parentheses; with
 * alone, " (the default)" or " (from --set)". Empty for a value the file
 * set, or one changed in code. */
static const char *origin_note(const Check *C, int id, bool alone) {
    switch (C->cfg->origin[id].from) {
    case CFG_FROM_DEFAULT:
        if (!same_value(C->cfg, &C->defaults, id)) return "";
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
    char msg[ERR_LEN], path[KEY_PATH_LEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    int id = pick(C->cfg, ids, n);
    snprintf(path, sizeof path, "%s.%s", keys[id].section, keys[id].name);
    return fail_key(C, id, path, "%s", msg);
}

/* Every key's range, then the rules that tie keys together. */
static int validate(const Config *cfg, const char *const *sets, int n_sets, char *err) {
    Check C = {.cfg = cfg, .sets = sets, .n_sets = n_sets, .err = err};
    config_defaults(&C.defaults);
    for (int id = 0; id < N_KEYS; id++)
        if (check_key(&C, id)) return -1;

    char a[40], b[40];
    int k_torques = key_id("env", "torques"), k_env = key_id("env", "name");
    int k_ps = key_id("roles", "param_servers"), k_mode = key_id("sync", "mode");
    int k_shards = key_id("roles", "replay_shards"), k_cap = key_id("replay", "capacity");
    int k_batch = key_id("replay", "batch_size"), k_min = key_id("replay", "min_size");
    int k_start = key_id("explore", "start"), k_end = key_id("explore", "end");

    /* A torque set for CartPole would be silently ignored: refuse it, even
     * when it equals the default set. */
    if (strcmp(cfg->env.name, "Pendulum-v1") &&
        (cfg->origin[k_torques].from != CFG_FROM_DEFAULT || !same_value(cfg, &C.defaults, k_torques))) {
        const int ids[] = {k_torques, k_env};
        return fail_rule(&C, ids, 2, "only Pendulum-v1 takes env.torques, but env.name is %s%s", cfg->env.name,
                         origin_note(&C, k_env, true));
    }
    if (cfg->sync.mode == SYNC_ALLREDUCE && cfg->roles.param_servers > 0) {
        const int ids[] = {k_ps, k_mode};
        return fail_rule(&C, ids, 2,
                         "sync.mode allreduce%s uses no parameter servers, but roles.param_servers is %d%s; "
                         "set roles.param_servers: 0",
                         origin_note(&C, k_mode, true), cfg->roles.param_servers, origin_note(&C, k_ps, true));
    }
    if (cfg->sync.mode != SYNC_ALLREDUCE && cfg->roles.param_servers == 0) {
        const int ids[] = {k_ps, k_mode};
        return fail_rule(&C, ids, 2,
                         "sync.mode %s%s needs parameter servers, but roles.param_servers is 0%s; "
                         "add one or use sync.mode: allreduce",
                         config_sync_name(cfg->sync.mode), origin_note(&C, k_mode, true), origin_note(&C, k_ps, true));
    }
    if (cfg->replay.min_size < (uint64_t)cfg->replay.batch_size) {
        const int ids[] = {k_min, k_batch};
        return fail_rule(&C, ids, 2,
                         "replay.min_size (%" PRIu64 "%s) must be at least replay.batch_size (%d%s): "
                         "learning cannot start before a batch can be sampled",
                         cfg->replay.min_size, origin_note(&C, k_min, false), cfg->replay.batch_size,
                         origin_note(&C, k_batch, false));
    }
    if (cfg->replay.min_size > cfg->replay.capacity) {
        const int ids[] = {k_min, k_cap};
        return fail_rule(&C, ids, 2,
                         "replay.min_size (%" PRIu64 "%s) must be at most replay.capacity (%" PRIu64 "%s): "
                         "the buffer could never hold enough transitions to start learning",
                         cfg->replay.min_size, origin_note(&C, k_min, false), cfg->replay.capacity,
                         origin_note(&C, k_cap, false));
    }
    uint64_t need = (uint64_t)cfg->roles.replay_shards * (uint64_t)cfg->replay.batch_size;
    if (cfg->replay.capacity < need) {
        const int ids[] = {k_cap, k_shards, k_batch};
        return fail_rule(&C, ids, 3,
                         "replay.capacity (%" PRIu64 "%s) must be at least roles.replay_shards * replay.batch_size "
                         "(%d * %d = %" PRIu64 "): every shard must hold a full batch",
                         cfg->replay.capacity, origin_note(&C, k_cap, false), cfg->roles.replay_shards,
                         cfg->replay.batch_size, need);
    }
    int k_actors = key_id("roles", "actors");
    if (cfg->run.mode == RUN_DISTRIBUTED && cfg->roles.replay_shards > cfg->roles.actors) {
        const int ids[] = {k_shards, k_actors};
        return fail_rule(&C, ids, 2,
                         "roles.replay_shards (%d%s) must be at most roles.actors (%d%s): actor a feeds shard "
                         "a mod replay_shards, so a shard without an actor would never fill",
                         cfg->roles.replay_shards, origin_note(&C, k_shards, false), cfg->roles.actors,
                         origin_note(&C, k_actors, false));
    }
    /* Ape-X settings with uniform replay would be silently ignored. */
    if (cfg->replay.kind == REPLAY_UNIFORM) {
        static const char *const apex_keys[] = {"alpha", "beta", "beta_final", "beta_steps", "priority_eps",
                                                "initial_priority"};
        int k_kind = key_id("replay", "kind");
        for (size_t i = 0; i < sizeof apex_keys / sizeof apex_keys[0]; i++) {
            int k = key_id("replay", apex_keys[i]);
            /* A value equal to the default changes nothing (and every
             * effective config.yaml lists them all). */
            if (cfg->origin[k].from == CFG_FROM_DEFAULT || same_value(cfg, &C.defaults, k)) continue;
            const int ids[] = {k, k_kind};
            return fail_rule(&C, ids, 2,
                             "replay.%s applies to prioritized replay only, but replay.kind is uniform%s; "
                             "set replay.kind: prioritized, or remove replay.%s",
                             apex_keys[i], origin_note(&C, k_kind, true), apex_keys[i]);
        }
    }
    if (cfg->explore.end > cfg->explore.start) {
        const int ids[] = {k_end, k_start};
        fmt_f64(cfg->explore.end, a, sizeof a);
        fmt_f64(cfg->explore.start, b, sizeof b);
        return fail_rule(&C, ids, 2, "explore.end (%s%s) must be at most explore.start (%s%s)", a,
                         origin_note(&C, k_end, false), b, origin_note(&C, k_start, false));
    }
    return 0;
}

int config_validate(const Config *cfg, char *err) { return validate(cfg, NULL, 0, err); }

/* ---- overrides -------------------------------------------------------------- */

/* Key id of a --set path "section.key", or -1 with the message tail. */
static int path_id(const char *path, char *tail, size_t cap) {
    char full[CFG_MAX_KEYS][48];
    const char *cand[CFG_MAX_KEYS + 1];
    for (int i = 0; i < N_KEYS; i++) {
        snprintf(full[i], sizeof full[i], "%s.%s", keys[i].section, keys[i].name);
        if (!strcmp(full[i], path)) return i;
        cand[i] = full[i];
    }
    cand[N_KEYS] = NULL;
    const char *guess = did_you_mean(path, cand);
    if (guess) {
        snprintf(tail, cap, " (did you mean \"%s\"?)", guess);
        return -1;
    }
    const char *dot = strchr(path, '.');
    char section[KEY_PATH_LEN];
    snprintf(section, sizeof section, "%.*s", dot ? (int)(dot - path) : 0, path);
    if (dot && section_id(section, strlen(section)) >= 0)
        unknown_tail(section, dot + 1, true, tail, cap);
    else
        unknown_tail(NULL, dot ? section : path, true, tail, cap);
    return -1;
}

/* Apply one "key.path=value" to cfg without the final validation; index
 * (from 1) says which of the caller's overrides it is. */
static int apply_set(Config *cfg, const char *assignment, int index, char *err) {
    char shown[SHOW_LEN], path[KEY_PATH_LEN], sh[SHOW_LEN], tail[ERR_LEN], msg[ERR_LEN];
    Load L = {.cfg = cfg, .err = err, .assign = show_text(assignment, strlen(assignment), false, shown)};
    const char *eq = strchr(assignment, '=');
    if (!eq || eq == assignment)
        return errf(err, "--set %s: expected KEY.PATH=VALUE, e.g. --set roles.actors=4", shown);
    size_t plen = (size_t)(eq - assignment);
    snprintf(path, sizeof path, "%s", show_text(assignment, plen, false, sh));
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
    if (prescan(value, vlen, &off, msg)) return errf(err, "--set %s: %s: %s", shown, path, msg);
    int docs;
    if (build_tree(&L, value, vlen, &docs)) {
        tree_free(&L.t);
        return -1;
    }
    if (docs == 0) {
        /* "--set k=" or only a comment: an empty scalar. */
        yaml_event_t ev;
        memset(&ev, 0, sizeof ev);
        ev.data.scalar.value = (yaml_char_t *)"";
        ev.data.scalar.style = YAML_PLAIN_SCALAR_STYLE;
        if (add_node(&L, N_SCALAR, &ev)) return -1;
    }
    int rc = assign(&L, id, &L.t.v[0], path);
    tree_free(&L.t);
    if (rc) return -1;
    cfg->origin[id].from = CFG_FROM_SET;
    cfg->origin[id].line = index;
    cfg->origin[id].col = 0;
    return 0;
}

int config_set(Config *cfg, const char *assignment, char *err) {
    if (apply_set(cfg, assignment, 1, err)) return -1;
    return validate(cfg, &assignment, 1, err);
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
    int id = key_id("run", "name");
    if (cfg->origin[id].from != CFG_FROM_DEFAULT) return 0;
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    const char *dot = strrchr(base, '.');
    size_t len = dot && dot != base ? (size_t)(dot - base) : strlen(base);
    char msg[ERR_LEN];
    if (rule_run_name(base, len, msg))
        return errf(err, "%s: run.name: %s (the file name's stem; set run.name)", path, msg);
    memset(cfg->run.name, 0, sizeof cfg->run.name);
    memcpy(cfg->run.name, base, len);
    return 0;
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
    return validate(cfg, sets, n_sets, err);
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

/* ---- writing ------------------------------------------------------------------ */

/* A double-quoted YAML string that reads back byte for byte: non-ASCII as
 * \u escapes, because libyaml folds NEL, LS and PS inside quoted scalars. */
static void quote(const char *s, char *buf, size_t cap) {
    const unsigned char *u = (const unsigned char *)s;
    size_t o = 0, n = strlen(s);
    buf[o++] = '"';
    for (size_t i = 0; i < n && o + 12 < cap;) {
        uint32_t cp;
        size_t w = utf8_decode(u + i, n - i, &cp);
        if (!w) w = 1, cp = u[i]; /* not UTF-8 (a Config built in code) */
        if (cp == '"' || cp == '\\') buf[o++] = '\\', buf[o++] = (char)cp;
        else if (cp >= 0x20 && cp < 0x7F) buf[o++] = (char)cp;
        else if (cp <= 0xFF) o += (size_t)snprintf(buf + o, cap - o, "\\x%02" PRIx32, cp);
        else if (cp <= 0xFFFF) o += (size_t)snprintf(buf + o, cap - o, "\\u%04" PRIx32, cp);
        else o += (size_t)snprintf(buf + o, cap - o, "\\U%08" PRIx32, cp);
        i += w;
    }
    buf[o++] = '"';
    buf[o] = '\0';
}

/* The value of key id as YAML text. */
static void key_value_text(const Config *cfg, int id, char *buf, size_t cap) {
    const Key *k = &keys[id];
    switch (k->type) {
    case T_INT:
        snprintf(buf, cap, "%d", get_int(cfg, k));
        break;
    case T_U64:
        snprintf(buf, cap, "%" PRIu64, get_u64(cfg, k));
        break;
    case T_F64:
        fmt_f64(get_f64(cfg, k), buf, cap);
        break;
    case T_BOOL:
        snprintf(buf, cap, "%s", get_bool(cfg, k) ? "true" : "false");
        break;
    case T_STR: {
        char s[PATH_LEN];
        memcpy(s, cat(cfg, k), k->cap);
        s[k->cap - 1] = '\0';
        quote(s, buf, cap);
        break;
    }
    case T_ENUM:
        snprintf(buf, cap, "%s", enum_name(k->names, get_int(cfg, k)));
        break;
    case T_INTS:
    case T_F64S: {
        int count = get_count(cfg, k);
        if (count < 0) count = 0;
        if (count > (int)k->cap) count = (int)k->cap;
        size_t o = (size_t)snprintf(buf, cap, "[");
        for (int i = 0; i < count && o < cap; i++) {
            char num[40];
            if (k->type == T_INTS) {
                int v;
                memcpy(&v, (const char *)cat(cfg, k) + (size_t)i * sizeof v, sizeof v);
                snprintf(num, sizeof num, "%d", v);
            } else {
                double v;
                memcpy(&v, (const char *)cat(cfg, k) + (size_t)i * sizeof v, sizeof v);
                fmt_f64(v, num, sizeof num);
            }
            o += (size_t)snprintf(buf + o, cap - o, "%s%s", i ? ", " : "", num);
        }
        if (o < cap) snprintf(buf + o, cap - o, "]");
        break;
    }
    }
}

void config_write(const Config *cfg, FILE *f) {
    char val[2048];
    fprintf(f, "# Effective gorila config: every key, defaults included.\n");
    for (int s = 0; sections[s]; s++) {
        fprintf(f, "%s:\n", sections[s]);
        for (int id = 0; id < N_KEYS; id++) {
            const Key *k = &keys[id];
            if (strcmp(k->section, sections[s])) continue;
            /* env.torques is refused for any other env, even with its default. */
            if (k->off == OFF(env.torques) && strcmp(cfg->env.name, "Pendulum-v1")) continue;
            key_value_text(cfg, id, val, sizeof val);
            fprintf(f, "  %s: %s\n", k->name, val);
        }
    }
}

/* Key id holds the same value in a and b (numbers bit for bit). */
static bool same_value(const Config *a, const Config *b, int id) {
    const Key *k = &keys[id];
    size_t bytes = 0;
    switch (k->type) {
    case T_INT:
    case T_ENUM:
        bytes = sizeof(int);
        break;
    case T_U64:
        bytes = sizeof(uint64_t);
        break;
    case T_F64:
        bytes = sizeof(double);
        break;
    case T_BOOL:
        bytes = sizeof(bool);
        break;
    case T_STR:
        return !strncmp(cat(a, k), cat(b, k), k->cap);
    case T_INTS:
    case T_F64S: {
        int n = get_count(a, k);
        if (n != get_count(b, k)) return false;
        if (n < 0 || n > (int)k->cap) n = (int)k->cap;
        bytes = (size_t)n * (k->type == T_INTS ? sizeof(int) : sizeof(double));
        break;
    }
    }
    return !memcmp(cat(a, k), cat(b, k), bytes);
}

bool config_same(const Config *a, const Config *b) {
    for (int id = 0; id < N_KEYS; id++)
        if (!same_value(a, b, id)) return false;
    return true;
}
