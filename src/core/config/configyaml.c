/* SPDX-License-Identifier: MIT */
/* configyaml.c: a config's text -> a tree of YAML nodes (configint.h's
 * YamlTree), stages 2 and 3 of config.c's load; the only file that includes
 * libyaml. It knows YAML, not keys: configkeys.c reads the nodes.
 *
 *   prescan  NUL bytes, invalid UTF-8 and control characters, reported as
 *            line:col (libyaml would give a bare byte offset);
 *   tree     libyaml's event API (never yaml_parser_load) into a flat
 *            pre-order node array; nesting depth and node count are checked
 *            on every event, and anchors, aliases, tags and a second
 *            document are refused as they arrive.
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
 */
#include "config.h"
#include "configint.h"
#include "util.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#define MAX_NODES 10000     /* YAML nodes in one file; a full config has ~250 */

/* ---- positions and the prescan ------------------------------------------ */

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

/* The characters libyaml's reader accepts (YAML 1.1 "printable"). */
static bool printable(uint32_t c) {
    return c == 0x09 || c == 0x0A || c == 0x0D || (c >= 0x20 && c <= 0x7E) || c == 0x85 ||
           (c >= 0xA0 && c <= 0xD7FF) || (c >= 0xE000 && c <= 0xFFFD) || (c >= 0x10000 && c <= 0x10FFFF);
}

/* Refuse what libyaml would report only as a byte offset, or not at all:
 * UTF-16/32 text, NUL bytes, invalid UTF-8, control characters. Returns 0,
 * or -1 with *off at the offending byte and a message in msg. */
int configyaml_prescan(const char *text, size_t len, size_t *off, char *msg) {
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
        size_t n = configtext_utf8_decode(s + i, len - i, &cp);
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

void configyaml_tree_free(YamlTree *t) {
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

/* Report at (line, col) of the text, with an optional key path. An override
 * has no file: its assignment takes the place of FILE:LINE:COL. */
int configyaml_fail_at(const CfgLoad *L, int line, int col, const char *path, const char *fmt, ...) {
    char msg[ERR_LEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (L->assign) return errf(L->err, "--set %s: %s: %s", L->assign, path ? path : L->set_path, msg);
    if (path) return errf(L->err, "%s:%d:%d: %s: %s", L->file, line, col, path, msg);
    return errf(L->err, "%s:%d:%d: %s", L->file, line, col, msg);
}

static int yaml_fail(const CfgLoad *L, const yaml_parser_t *p, const char *text, size_t len) {
    int line, col;
    switch (p->error) {
    case YAML_MEMORY_ERROR:
        return configyaml_fail_at(L, 1, 1, NULL, "out of memory while parsing YAML");
    case YAML_READER_ERROR:
        offset_pos(text, len, p->problem_offset, &line, &col);
        return configyaml_fail_at(L, line, col, NULL, "invalid text: %s", p->problem ? p->problem : "unreadable");
    case YAML_SCANNER_ERROR:
    case YAML_PARSER_ERROR:
        line = (int)p->problem_mark.line + 1;
        col = (int)p->problem_mark.column + 1;
        size_t at_off = pos_offset(text, len, line, col);
        if (at_off < len && text[at_off] == '\t')
            return configyaml_fail_at(L, line, col, NULL, "invalid YAML: found a tab; indent with spaces");
        /* An override is one short value: positions inside it (libyaml ends
         * every stream with a line break) would only confuse. */
        if (p->context && L->assign)
            return configyaml_fail_at(L, line, col, NULL, "invalid YAML: %s (%s)", p->problem, p->context);
        if (p->context)
            return configyaml_fail_at(L, line, col, NULL, "invalid YAML: %s (%s at line %d, column %d)", p->problem,
                                      p->context, (int)p->context_mark.line + 1, (int)p->context_mark.column + 1);
        return configyaml_fail_at(L, line, col, NULL, "invalid YAML: %s", p->problem ? p->problem : "syntax error");
    default:
        return configyaml_fail_at(L, 1, 1, NULL, "invalid YAML");
    }
}

/* Scalars: plain, quoted, or anything else (literal, folded) as a block. */
static YamlStyle style_of(yaml_scalar_style_t s) {
    if (s == YAML_PLAIN_SCALAR_STYLE) return CFG_STYLE_PLAIN;
    if (s == YAML_SINGLE_QUOTED_SCALAR_STYLE || s == YAML_DOUBLE_QUOTED_SCALAR_STYLE) return CFG_STYLE_QUOTED;
    return CFG_STYLE_BLOCK;
}

static int add_node(CfgLoad *L, YamlNodeKind kind, const yaml_event_t *ev) {
    YamlTree *t = &L->t;
    if (t->n == MAX_NODES)
        return configyaml_fail_at(L, (int)ev->start_mark.line + 1, (int)ev->start_mark.column + 1, NULL,
                                  "expected at most %d YAML nodes, found more (a full config has a few hundred)",
                                  MAX_NODES);
    t->v = grow(t->v, &t->cap, t->n + 1, sizeof *t->v);
    YamlNode *n = &t->v[t->n];
    memset(n, 0, sizeof *n);
    n->kind = kind;
    n->line = (int)ev->start_mark.line + 1;
    n->col = (int)ev->start_mark.column + 1;
    n->end = t->n + 1;
    if (kind == CFG_NODE_SCALAR) {
        size_t len = ev->data.scalar.length;
        t->chars = grow(t->chars, &t->cap_chars, t->n_chars + len + 1, 1);
        memcpy(t->chars + t->n_chars, ev->data.scalar.value, len);
        t->chars[t->n_chars + len] = '\0';
        n->style = style_of(ev->data.scalar.style);
        n->str = t->n_chars;
        n->len = len;
        t->n_chars += len + 1;
    }
    t->n++;
    return 0;
}

/* Anchors, aliases and tags: a config needs none of them, and refusing them
 * keeps one value in one place (no billion-laughs expansion either). */
static int check_props(const CfgLoad *L, const yaml_event_t *ev, const yaml_char_t *anchor, const yaml_char_t *tag) {
    int line = (int)ev->start_mark.line + 1, col = (int)ev->start_mark.column + 1;
    char sh[CFG_SHOW_LEN];
    if (anchor) return configyaml_fail_at(L, line, col, NULL, "anchors and aliases are not supported");
    if (tag)
        return configyaml_fail_at(L, line, col, NULL, "tags are not supported, found \"%s\"",
                                  show_str((const char *)tag, sh));
    return 0;
}

/* Parse text into L->t. *docs gets the number of documents (0 or 1). */
static int build_tree(CfgLoad *L, const char *text, size_t len, int *docs) {
    yaml_parser_t p;
    *docs = 0;
    if (!yaml_parser_initialize(&p)) return configyaml_fail_at(L, 1, 1, NULL, "out of memory while parsing YAML");
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
                rc = configyaml_fail_at(L, line, col, NULL, "expected one YAML document, found a second one");
            else if (ev.data.document_start.tag_directives.start != ev.data.document_start.tag_directives.end)
                rc = configyaml_fail_at(L, line, col, NULL, "tags are not supported, found a %%TAG directive");
            break;
        case YAML_ALIAS_EVENT:
            rc = configyaml_fail_at(L, line, col, NULL, "anchors and aliases are not supported");
            break;
        case YAML_SCALAR_EVENT:
            rc = check_props(L, &ev, ev.data.scalar.anchor, ev.data.scalar.tag);
            if (!rc) rc = add_node(L, CFG_NODE_SCALAR, &ev);
            break;
        case YAML_SEQUENCE_START_EVENT:
        case YAML_MAPPING_START_EVENT:
            if (ev.type == YAML_SEQUENCE_START_EVENT)
                rc = check_props(L, &ev, ev.data.sequence_start.anchor, ev.data.sequence_start.tag);
            else
                rc = check_props(L, &ev, ev.data.mapping_start.anchor, ev.data.mapping_start.tag);
            if (!rc && depth == CFG_MAX_DEPTH)
                rc = configyaml_fail_at(L, line, col, NULL, "expected at most %d levels of nesting, found more",
                                        CFG_MAX_DEPTH);
            if (!rc) {
                open[depth++] = L->t.n;
                rc = add_node(L, ev.type == YAML_SEQUENCE_START_EVENT ? CFG_NODE_SEQ : CFG_NODE_MAP, &ev);
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

/* ---- the two kinds of text ------------------------------------------------ */

int configyaml_parse_text(CfgLoad *L, const char *text, size_t len) {
    size_t off;
    char msg[ERR_LEN];
    int line, col, docs;
    if (configyaml_prescan(text, len, &off, msg)) {
        offset_pos(text, len, off, &line, &col);
        return configyaml_fail_at(L, line, col, NULL, "%s", msg);
    }
    if (build_tree(L, text, len, &docs)) return -1;
    if (docs == 0) {
        bool blank = true;
        for (size_t i = bom_len(text, len); i < len && blank; i++)
            blank = text[i] == ' ' || text[i] == '\t' || text[i] == '\r' || text[i] == '\n';
        return configyaml_fail_at(L, 1, 1, NULL, "expected a mapping of sections (run:, env:, ...), got %s",
                                  blank ? "an empty file" : "only comments");
    }
    return 0;
}

int configyaml_parse_value(CfgLoad *L, const char *value, size_t len) {
    int docs;
    if (build_tree(L, value, len, &docs)) {
        configyaml_tree_free(&L->t);
        return -1;
    }
    if (docs == 0) {
        /* "--set k=" or only a comment: an empty scalar. */
        yaml_event_t ev;
        memset(&ev, 0, sizeof ev);
        ev.data.scalar.value = (yaml_char_t *)"";
        ev.data.scalar.style = YAML_PLAIN_SCALAR_STYLE;
        if (add_node(L, CFG_NODE_SCALAR, &ev)) {
            configyaml_tree_free(&L->t);
            return -1;
        }
    }
    return 0;
}
