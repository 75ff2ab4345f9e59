/* SPDX-License-Identifier: MIT */
/* configint.h: what the files of the config loader share; private to them.
 *
 * config.h is the public contract. The loader is split by concern:
 *   config.c       the entry points (config_load, config_load_string,
 *                  config_set): reading the file, walking the tree onto the
 *                  key table, --set overrides;
 *   configyaml.c   text -> tree: the prescan, libyaml's events into a flat
 *                  array of YamlNodes (the only file that includes libyaml);
 *                  errors at a position of the text (configyaml_fail_at);
 *   configkeys.c   the schema: the key table with each key's default
 *                  (config_defaults walks it), the names of choices, the
 *                  rules of string keys, and typed values from nodes
 *                  (configkeys_assign);
 *   configcheck.c  config_validate: every key's range again, then the rules
 *                  that tie keys together;
 *   configprint.c  values as text: config_write (YAML), config_write_json,
 *                  config_same;
 *   configtext.c   text helpers that call no other file of the loader: the
 *                  quoting of values in messages, numbers that read back
 *                  exactly, UTF-8 decoding.
 * A file calls only files later in this order, never back (make
 * check-cycles): config.c, configcheck.c, configprint.c, configkeys.c,
 * configyaml.c, configtext.c.
 *
 * Names: the functions of config.h are config_*, whichever file defines
 * them (config is the room's public name). What this header declares is
 * named after the file that defines it: configtext_*, configyaml_*,
 * configkeys_*, configprint_*, configcheck_*; its types are Cfg* (the
 * schema, one load) or Yaml* (the tree) and its constants and macros CFG_*.
 * The static inline accessors (at, get_int, sval, show, ...) are short and
 * unprefixed, as a file's own static helpers are.
 *
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

#define CFG_SHOW_CHARS 48     /* characters of a value quoted in a message */
#define CFG_SHOW_LEN 256      /* buffer for a quoted value (escapes take 6 bytes) */
#define CFG_KEY_PATH_LEN 400  /* buffer for a key path (a shown key fits) */
#define CFG_N_SECTIONS 14     /* run, env, ..., logging (checked against the table) */

/* ---- text (configtext.c, which calls no other file of the loader) ------- */

/* Write s[0..len) into out (CFG_SHOW_LEN bytes) for a one-line message:
 * control characters (and, when quoted, quotes and backslashes) escaped, long
 * values cut at CFG_SHOW_CHARS characters with "...". Returns out. */
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

typedef enum {
    CFG_T_INT, CFG_T_U64, CFG_T_F64, CFG_T_BOOL, CFG_T_STR, CFG_T_ENUM, CFG_T_INTS, CFG_T_F64S,
    CFG_T_CONV /* network.conv: 0 to cap CfgConv layers, a list of {filters, kernel, stride} */
} CfgType;

typedef struct {
    const char *section, *name;
    CfgType type;
    size_t off;                /* offsetof(Config, member) */
    size_t n_off;              /* lists: offsetof the element count */
    size_t cap;                /* strings: buffer bytes; lists: most elements */
    uint64_t ilo, ihi;         /* integers and integer elements: [ilo, ihi] */
    double flo, fhi;           /* numbers and number elements */
    bool lo_open, hi_open;     /* (flo and fhi) excluded */
    const char *const *names;  /* enums: the values, NULL-terminated */
    int (*rule)(const char *s, size_t len, char *msg); /* strings: validity */
    bool json_map;             /* strings: a YAML mapping is taken too, stored as its JSON text */
    const char *what;          /* lists: what the elements are */
    const char *hint;          /* appended to range errors */
    /* The default (config_defaults): */
    uint64_t idef;             /* integers; booleans 0 or 1; enums the index */
    double fdef;               /* numbers */
    const char *sdef;          /* strings */
    const void *ldef;          /* lists: n_ldef ints (CFG_T_INTS) or doubles (CFG_T_F64S) */
    int n_ldef;
} CfgKey;

#define CFG_OFF(m) offsetof(Config, m)

/* Every key, grouped by section in the order of configkeys_sections; a key's
 * id is its index here, and Config.origin[id] tells where its value came
 * from. */
extern const CfgKey configkeys_table[];
extern const int configkeys_count;
/* The CFG_N_SECTIONS section names in the order of the table (and of
 * config_write), then NULL. */
extern const char *const configkeys_sections[];

/* Id of section.name; aborts on a name not in the table (callers name keys
 * the table has). */
int configkeys_id(const char *section, const char *name);

/* names[v], or "?" when v is not an index of the NULL-terminated names. */
const char *configkeys_enum_name(const char *const *names, int v);

/* run.name's rule (also for the stem of a file name): 0, or -1 with msg. */
int configkeys_rule_run_name(const char *s, size_t len, char *msg);

/* The range of numbers of key k: "[0, 1]", "(0, 10]", ... Returns buf. */
const char *configkeys_range_text(const CfgKey *k, char *buf, size_t cap);

/* The stored value of key k in c. Enums are stored as int. */
static inline void *at(Config *c, const CfgKey *k) { return (char *)c + k->off; }
static inline const void *cat(const Config *c, const CfgKey *k) { return (const char *)c + k->off; }
static inline int get_int(const Config *c, const CfgKey *k) {
    int v;
    memcpy(&v, cat(c, k), sizeof v);
    return v;
}
static inline uint64_t get_u64(const Config *c, const CfgKey *k) {
    uint64_t v;
    memcpy(&v, cat(c, k), sizeof v);
    return v;
}
static inline double get_f64(const Config *c, const CfgKey *k) {
    double v;
    memcpy(&v, cat(c, k), sizeof v);
    return v;
}
static inline bool get_bool(const Config *c, const CfgKey *k) {
    bool v;
    memcpy(&v, cat(c, k), sizeof v);
    return v;
}
/* The fields of a CfgConv in the order they print, with their ranges. */
typedef struct {
    const char *name;
    size_t off;
    int lo, hi;
} CfgConvField;
extern const CfgConvField configkeys_conv_fields[3];

/* Lists: the element count. */
static inline int get_count(const Config *c, const CfgKey *k) {
    int n;
    memcpy(&n, (const char *)c + k->n_off, sizeof n);
    return n;
}

/* ---- the YAML tree (configyaml.c) --------------------------------------- */

typedef enum { CFG_NODE_SCALAR, CFG_NODE_SEQ, CFG_NODE_MAP } YamlNodeKind;
/* How a scalar was written: plain, quoted ('...' or "..."), or a block (| or >). */
typedef enum { CFG_STYLE_PLAIN = 0, CFG_STYLE_QUOTED, CFG_STYLE_BLOCK } YamlStyle;

/* Nodes in document (pre-order) order: a collection's children follow it
 * and its subtree ends at `end`; a mapping's children alternate key, value. */
typedef struct {
    YamlNodeKind kind;
    int line, col;           /* 1-based start of the node */
    YamlStyle style;         /* scalars only */
    size_t str, len;         /* scalar: offset into YamlTree.chars, bytes */
    size_t end;              /* one past the last node of the subtree */
} YamlNode;

typedef struct {
    YamlNode *v;
    size_t n, cap;
    char *chars;
    size_t n_chars, cap_chars;
} YamlTree;

/* One load: the config being filled, where the text came from, the tree. */
typedef struct {
    Config *cfg;
    char *err;
    const char *file;     /* file name for positions (file mode) */
    const char *assign;   /* --set mode: the assignment, already shown() */
    const char *set_path; /* --set mode: its key path */
    YamlTree t;
} CfgLoad;

/* Refuse what libyaml would report only as a byte offset, or not at all:
 * UTF-16/32 text, NUL bytes, invalid UTF-8, control characters. Returns 0,
 * or -1 with *off at the offending byte and a message in msg. */
int configyaml_prescan(const char *text, size_t len, size_t *off, char *msg);

/* A file's text into L->t: prescan, then one YAML document (an empty one
 * is an error). Returns 0, or -1 with L->err; configyaml_tree_free L->t
 * after either. */
int configyaml_parse_text(CfgLoad *L, const char *text, size_t len);

/* The value of one --set (already prescanned) into L->t, its root at
 * L->t.v[0]: an empty value, or only a comment, is an empty plain scalar.
 * Returns 0 (configyaml_tree_free L->t after use), or -1 with L->err and
 * L->t freed. */
int configyaml_parse_value(CfgLoad *L, const char *value, size_t len);

void configyaml_tree_free(YamlTree *t);

/* Report at (line, col) of the text, with an optional key path. An override
 * has no file: its assignment takes the place of FILE:LINE:COL. Returns -1. */
int configyaml_fail_at(const CfgLoad *L, int line, int col, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* ---- values from nodes (configkeys.c) ----------------------------------- */

static inline const char *sval(const CfgLoad *L, const YamlNode *n) { return L->t.chars + n->str; }
static inline bool plain(const YamlNode *n) { return n->kind == CFG_NODE_SCALAR && n->style == CFG_STYLE_PLAIN; }

/* ~, null, Null, NULL or an empty plain scalar. */
bool configkeys_is_null(const CfgLoad *L, const YamlNode *n);

/* What a node is, for "got ..." in messages; buf holds CFG_SHOW_LEN + 32 bytes. */
const char *configkeys_describe(const CfgLoad *L, const YamlNode *n, char *buf);

/* Store node n into key id of L->cfg, type and range checked; path names
 * the key in messages. Returns 0, or -1 with L->err. */
int configkeys_assign(CfgLoad *L, int id, const YamlNode *n, const char *path);

/* ---- validation (configcheck.c) ----------------------------------------- */

/* config_validate, quoting the n_sets --set texts that built cfg (NULL: none
 * at hand) as typed. Returns 0 or -1 with err. */
int configcheck_validate(const Config *cfg, const char *const *sets, int n_sets, char *err);

/* ---- values as text (configprint.c) -------------------------------------- */

/* The value of key id as YAML text (what config_write prints). */
void configprint_value_text(const Config *cfg, int id, char *buf, size_t cap);

/* Whether key id holds the same value in a and b (numbers bit for bit). */
bool configprint_same_value(const Config *a, const Config *b, int id);

#endif
