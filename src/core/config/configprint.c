/* SPDX-License-Identifier: MIT */
/* configprint.c: config values as text. config_write (YAML that
 * config_load reads back) and config_write_json walk the key table the same
 * way (printed()), so both print the same keys in the same order;
 * config_same compares two configs key by key; and the quoting of values
 * in one-line error messages. See configint.h for how the loader is split.
 */
#include "config.h"
#include "configint.h"
#include "json.h"
#include "util.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- values in messages ------------------------------------------------ */

/* Write s[0..len) into out (SHOW_LEN bytes) for a one-line message: control
 * characters (and, when quoted, quotes and backslashes) escaped, long values
 * cut at SHOW_CHARS characters with "...". */
const char *cfg_show_text(const char *s, size_t len, bool quoted, char *out) {
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

/* Shortest text that reads back as exactly v (integral values without
 * exponent, so 100000 stays 100000). */
void cfg_fmt_f64(double v, char *buf, size_t cap) {
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
const char *cfg_fmt_range(const Key *k, char *buf, size_t cap) {
    char lo[32], hi[32];
    cfg_fmt_f64(k->flo, lo, sizeof lo);
    cfg_fmt_f64(k->fhi, hi, sizeof hi);
    snprintf(buf, cap, "%c%s, %s%c", k->lo_open ? '(' : '[', lo, hi, k->hi_open ? ')' : ']');
    return buf;
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
        size_t w = cfg_utf8_decode(u + i, n - i, &cp);
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

/* Elements of list key k to print: its count, clamped to [0, k->cap] (a
 * Config built in code may hold anything). */
static int list_count(const Config *cfg, const Key *k) {
    int count = get_count(cfg, k);
    if (count < 0) count = 0;
    if (count > (int)k->cap) count = (int)k->cap;
    return count;
}

/* The value of key id as YAML text. */
void cfg_key_value_text(const Config *cfg, int id, char *buf, size_t cap) {
    const Key *k = &cfg_keys[id];
    switch (k->type) {
    case T_INT:
        snprintf(buf, cap, "%d", get_int(cfg, k));
        break;
    case T_U64:
        snprintf(buf, cap, "%" PRIu64, get_u64(cfg, k));
        break;
    case T_F64:
        cfg_fmt_f64(get_f64(cfg, k), buf, cap);
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
        snprintf(buf, cap, "%s", cfg_enum_name(k->names, get_int(cfg, k)));
        break;
    case T_INTS:
    case T_F64S: {
        int count = list_count(cfg, k);
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
                cfg_fmt_f64(v, num, sizeof num);
            }
            o += (size_t)snprintf(buf + o, cap - o, "%s%s", i ? ", " : "", num);
        }
        if (o < cap) snprintf(buf + o, cap - o, "]");
        break;
    }
    }
}

/* Whether key id is printed under section s: the one walk of the table
 * that config_write and config_write_json share, so that both print the
 * same keys in the same order. */
static bool printed(const Config *cfg, int s, int id) {
    const Key *k = &cfg_keys[id];
    if (strcmp(k->section, cfg_sections[s])) return false;
    /* env.torques is refused for any other env, even with its default. */
    return !(k->off == OFF(env.torques) && strcmp(cfg->env.name, "Pendulum-v1"));
}

void config_write(const Config *cfg, FILE *f) {
    char val[2048];
    fprintf(f, "# Effective gorila config: every key, defaults included.\n");
    for (int s = 0; cfg_sections[s]; s++) {
        fprintf(f, "%s:\n", cfg_sections[s]);
        for (int id = 0; id < cfg_n_keys; id++) {
            if (!printed(cfg, s, id)) continue;
            cfg_key_value_text(cfg, id, val, sizeof val);
            fprintf(f, "  %s: %s\n", cfg_keys[id].name, val);
        }
    }
}

/* The value of key id as a JSON member of j named by the key. */
static void key_value_json(const Config *cfg, int id, JsonW *j) {
    const Key *k = &cfg_keys[id];
    switch (k->type) {
    case T_INT:
        json_num(j, k->name, get_int(cfg, k));
        break;
    case T_U64:
        json_u64(j, k->name, get_u64(cfg, k));
        break;
    case T_F64:
        json_num(j, k->name, get_f64(cfg, k));
        break;
    case T_BOOL:
        json_bool(j, k->name, get_bool(cfg, k));
        break;
    case T_STR: {
        char s[PATH_LEN];
        memcpy(s, cat(cfg, k), k->cap);
        s[k->cap - 1] = '\0';
        json_str(j, k->name, s);
        break;
    }
    case T_ENUM:
        json_str(j, k->name, cfg_enum_name(k->names, get_int(cfg, k)));
        break;
    case T_INTS:
    case T_F64S: {
        int count = list_count(cfg, k);
        json_begin_array(j, k->name);
        for (int i = 0; i < count; i++) {
            if (k->type == T_INTS) {
                int v;
                memcpy(&v, (const char *)cat(cfg, k) + (size_t)i * sizeof v, sizeof v);
                json_num(j, NULL, v);
            } else {
                double v;
                memcpy(&v, (const char *)cat(cfg, k) + (size_t)i * sizeof v, sizeof v);
                json_num(j, NULL, v);
            }
        }
        json_end_array(j);
        break;
    }
    }
}

void config_write_json(const Config *cfg, JsonW *j, const char *key) {
    json_begin_object(j, key);
    for (int s = 0; cfg_sections[s]; s++) {
        json_begin_object(j, cfg_sections[s]);
        for (int id = 0; id < cfg_n_keys; id++)
            if (printed(cfg, s, id)) key_value_json(cfg, id, j);
        json_end_object(j);
    }
    json_end_object(j);
}

/* Key id holds the same value in a and b (numbers bit for bit). */
bool cfg_same_value(const Config *a, const Config *b, int id) {
    const Key *k = &cfg_keys[id];
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
    for (int id = 0; id < cfg_n_keys; id++)
        if (!cfg_same_value(a, b, id)) return false;
    return true;
}
