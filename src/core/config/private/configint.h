/* SPDX-License-Identifier: MIT */
/* configint.h: what the files of the config loader share; private to them.
 *
 * config.h is the public contract. The loader is split by concern:
 *   config.c       the entry points (config_load, config_load_string,
 *                  config_set): reading the file, walking the tree onto the
 *                  key table, --set overrides;
 *   configyaml.c   text -> tree: the prescan, libyaml's events into a flat
 *                  array of Nodes (the only file that includes libyaml);
 *                  errors at a position of the text (cfg_fail_at);
 *   configkeys.c   the schema: the key table with each key's default
 *                  (config_defaults walks it), the names of choices, the
 *                  rules of string keys, and typed values from nodes
 *                  (cfg_assign);
 *   configcheck.c  config_validate: every key's range again, then the rules
 *                  that tie keys together;
 *   configprint.c  values as text: config_write (YAML), config_write_json,
 *                  config_same;
 *   configtext.c   text helpers that call no other file of the loader: the
 *                  quoting of values in messages, numbers that read back
 *                  exactly, UTF-8 decoding.
 * Nothing here is a setting or part of the file format: names and layout may
 * change with the loader.
 */
#ifndef GORILA_CONFIGINT_H
#define GORILA_CONFIGINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "config.h"
#include "util.h"

#define SHOW_CHARS 48       /* characters of a value quoted in a message */
#define SHOW_LEN 256        /* buffer for a quoted value (escapes take 6 bytes) */
#define KEY_PATH_LEN 400    /* buffer for a key path (a shown key fits) */
#define CFG_N_SECTIONS 14   /* run, env, ..., logging (checked against the table) */

/* ---- text (configtext.c, which calls no other file of the loader) ------- */

/* Write s[0..len) into out (SHOW_LEN bytes) for a one-line message: control
 * characters (and, when quoted, quotes and backslashes) escaped, long values
 * cut at SHOW_CHARS characters with "...". Returns out. */
const char *configtext_show(const char *s, size_t len, bool quoted, char *out);
static inline const char *show(const char *s, size_t len, char *out) { return configtext_show(s, len, true, out); }
static inline const char *show_str(const char *s, char *out) { return show(s, strlen(s), out); }

/* Shortest text that reads back as exactly v (integral values without
 * exponent, so 100000 stays 100000). */
void configtext_fmt_f64(double v, char *buf, size_t cap);

/* Length of the valid UTF-8 sequence at s (RFC 3629: no overlongs, no
 * surrogates, nothing above U+10FFFF) and its code point, or 0 if invalid. */
size_t configtext_utf8_decode(const unsigned char *s, size_t n, uint32_t *cp);

/* ---- the schema (configkeys.c) ------------------------------------------ */

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
    /* The default (config_defaults): */
    uint64_t idef;             /* integers; booleans 0 or 1; enums the index */
    double fdef;               /* numbers */
    const char *sdef;          /* strings */
    const void *ldef;          /* lists: n_ldef ints (T_INTS) or doubles (T_F64S) */
    int n_ldef;
} Key;

#define OFF(m) offsetof(Config, m)

/* Every key, grouped by section in the order of cfg_sections; a key's id is
 * its index here, and Config.origin[id] tells where its value came from. */
extern const Key cfg_keys[];
extern const int cfg_n_keys;
/* The CFG_N_SECTIONS section names in the order of the table (and of
 * config_write), then NULL. */
extern const char *const cfg_sections[];

/* Id of section.name; aborts on a name not in the table (callers name keys
 * the table has). */
int cfg_key_id(const char *section, const char *name);

/* names[v], or "?" when v is not an index of the NULL-terminated names. */
const char *cfg_enum_name(const char *const *names, int v);

/* run.name's rule (also for the stem of a file name): 0, or -1 with msg. */
int cfg_rule_run_name(const char *s, size_t len, char *msg);

/* Key k's range of numbers: "[0, 1]", "(0, 10]", ... Returns buf. */
const char *cfg_fmt_range(const Key *k, char *buf, size_t cap);

/* The stored value of key k in c. Enums are stored as int. */
static inline void *at(Config *c, const Key *k) { return (char *)c + k->off; }
static inline const void *cat(const Config *c, const Key *k) { return (const char *)c + k->off; }
static inline int get_int(const Config *c, const Key *k) {
    int v;
    memcpy(&v, cat(c, k), sizeof v);
    return v;
}
static inline uint64_t get_u64(const Config *c, const Key *k) {
    uint64_t v;
    memcpy(&v, cat(c, k), sizeof v);
    return v;
}
static inline double get_f64(const Config *c, const Key *k) {
    double v;
    memcpy(&v, cat(c, k), sizeof v);
    return v;
}
static inline bool get_bool(const Config *c, const Key *k) {
    bool v;
    memcpy(&v, cat(c, k), sizeof v);
    return v;
}
/* Lists: the element count. */
static inline int get_count(const Config *c, const Key *k) {
    int n;
    memcpy(&n, (const char *)c + k->n_off, sizeof n);
    return n;
}

/* ---- the YAML tree (configyaml.c) --------------------------------------- */

typedef enum { N_SCALAR, N_SEQ, N_MAP } NodeKind;
/* How a scalar was written: plain, quoted ('...' or "..."), or a block (| or >). */
typedef enum { STYLE_PLAIN = 0, STYLE_QUOTED, STYLE_BLOCK } ScalarStyle;

/* Nodes in document (pre-order) order: a collection's children follow it
 * and its subtree ends at `end`; a mapping's children alternate key, value. */
typedef struct {
    NodeKind kind;
    int line, col;           /* 1-based start of the node */
    ScalarStyle style;       /* scalars only */
    size_t str, len;         /* scalar: offset into Tree.chars, bytes */
    size_t end;              /* one past the last node of the subtree */
} Node;

typedef struct {
    Node *v;
    size_t n, cap;
    char *chars;
    size_t n_chars, cap_chars;
} Tree;

/* One load: the config being filled, where the text came from, the tree. */
typedef struct {
    Config *cfg;
    char *err;
    const char *file;     /* file name for positions (file mode) */
    const char *assign;   /* --set mode: the assignment, already shown() */
    const char *set_path; /* --set mode: its key path */
    Tree t;
} Load;

/* Refuse what libyaml would report only as a byte offset, or not at all:
 * UTF-16/32 text, NUL bytes, invalid UTF-8, control characters. Returns 0,
 * or -1 with *off at the offending byte and a message in msg. */
int cfg_prescan(const char *text, size_t len, size_t *off, char *msg);

/* A file's text into L->t: prescan, then one YAML document (an empty one
 * is an error). Returns 0, or -1 with L->err; cfg_tree_free L->t after
 * either. */
int cfg_parse_text(Load *L, const char *text, size_t len);

/* The value of one --set (already prescanned) into L->t, its root at
 * L->t.v[0]: an empty value, or only a comment, is an empty plain scalar.
 * Returns 0 (cfg_tree_free L->t after use), or -1 with L->err and L->t
 * freed. */
int cfg_parse_value(Load *L, const char *value, size_t len);

void cfg_tree_free(Tree *t);

/* Report at (line, col) of the text, with an optional key path. An override
 * has no file: its assignment takes the place of FILE:LINE:COL. Returns -1. */
int cfg_fail_at(const Load *L, int line, int col, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* ---- values from nodes (configkeys.c) ----------------------------------- */

static inline const char *sval(const Load *L, const Node *n) { return L->t.chars + n->str; }
static inline bool plain(const Node *n) { return n->kind == N_SCALAR && n->style == STYLE_PLAIN; }

/* ~, null, Null, NULL or an empty plain scalar. */
bool cfg_is_null(const Load *L, const Node *n);

/* What a node is, for "got ..." in messages; buf holds SHOW_LEN + 32 bytes. */
const char *cfg_describe(const Load *L, const Node *n, char *buf);

/* Store node n into key id of L->cfg, type and range checked; path names
 * the key in messages. Returns 0, or -1 with L->err. */
int cfg_assign(Load *L, int id, const Node *n, const char *path);

/* ---- validation (configcheck.c) ----------------------------------------- */

/* config_validate, quoting the n_sets --set texts that built cfg (NULL: none
 * at hand) as typed. Returns 0 or -1 with err. */
int cfg_validate(const Config *cfg, const char *const *sets, int n_sets, char *err);

/* ---- values as text (configprint.c) -------------------------------------- */

/* The value of key id as YAML text (what config_write prints). */
void cfg_key_value_text(const Config *cfg, int id, char *buf, size_t cap);

/* Key id holds the same value in a and b (numbers bit for bit). */
bool cfg_same_value(const Config *a, const Config *b, int id);

#endif
