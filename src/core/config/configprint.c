/* SPDX-License-Identifier: MIT */
/* configprint.c: config values as text. config_write (YAML that
 * config_load reads back) and config_write_json walk the key table the same
 * way (printed()), so both print the same keys in the same order;
 * config_same compares two configs key by key. See configint.h for how the
 * loader is split.
 */
#include "config.h"
#include "configint.h"
#include "env.h"
#include "json.h"
#include "util.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- writing ------------------------------------------------------------------ */

/* A double-quoted YAML string that reads back byte for byte: non-ASCII as
 * \u escapes, because libyaml folds NEL, LS and PS inside quoted scalars. */
static void quote(const char *s, char *buf, size_t cap) {
    const unsigned char *u = (const unsigned char *)s;
    size_t o = 0, n = strlen(s);
    buf[o++] = '"';
    for (size_t i = 0; i < n && o + 12 < cap;) {
        uint32_t cp;
        size_t w = configtext_utf8_decode(u + i, n - i, &cp);
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
static int list_count(const Config *cfg, const CfgKey *k) {
    int count = get_count(cfg, k);
    if (count < 0) count = 0;
    if (count > (int)k->cap) count = (int)k->cap;
    return count;
}

/* network.conv as a YAML flow list: [{filters: 16, kernel: 3, stride: 1}], or []. */
static void conv_text(const Config *cfg, const CfgKey *k, char *buf, size_t cap) {
    int count = list_count(cfg, k);
    const CfgConv *c = cat(cfg, k);
    size_t o = (size_t)snprintf(buf, cap, "[");
    for (int i = 0; i < count && o < cap; i++)
        o += (size_t)snprintf(buf + o, cap - o, "%s{filters: %d, kernel: %d, stride: %d}", i ? ", " : "", c[i].filters,
                              c[i].kernel, c[i].stride);
    if (o < cap) snprintf(buf + o, cap - o, "]");
}

/* The value of key id as YAML text. */
void configprint_value_text(const Config *cfg, int id, char *buf, size_t cap) {
    const CfgKey *k = &configkeys_table[id];
    switch (k->type) {
    case CFG_T_INT:
        snprintf(buf, cap, "%d", get_int(cfg, k));
        break;
    case CFG_T_U64:
        snprintf(buf, cap, "%" PRIu64, get_u64(cfg, k));
        break;
    case CFG_T_F64:
        configtext_fmt_f64(get_f64(cfg, k), buf, cap);
        break;
    case CFG_T_BOOL:
        snprintf(buf, cap, "%s", get_bool(cfg, k) ? "true" : "false");
        break;
    case CFG_T_STR: {
        char s[PATH_LEN];
        memcpy(s, cat(cfg, k), k->cap);
        s[k->cap - 1] = '\0';
        quote(s, buf, cap);
        break;
    }
    case CFG_T_ENUM:
        snprintf(buf, cap, "%s", configkeys_enum_name(k->names, get_int(cfg, k)));
        break;
    case CFG_T_INTS:
    case CFG_T_F64S: {
        int count = list_count(cfg, k);
        size_t o = (size_t)snprintf(buf, cap, "[");
        for (int i = 0; i < count && o < cap; i++) {
            char num[40];
            if (k->type == CFG_T_INTS) {
                int v;
                memcpy(&v, (const char *)cat(cfg, k) + (size_t)i * sizeof v, sizeof v);
                snprintf(num, sizeof num, "%d", v);
            } else {
                double v;
                memcpy(&v, (const char *)cat(cfg, k) + (size_t)i * sizeof v, sizeof v);
                configtext_fmt_f64(v, num, sizeof num);
            }
            o += (size_t)snprintf(buf + o, cap - o, "%s%s", i ? ", " : "", num);
        }
        if (o < cap) snprintf(buf + o, cap - o, "]");
        break;
    }
    case CFG_T_CONV:
        conv_text(cfg, k, buf, cap);
        break;
    }
}

/* Whether key id is printed under section s: the one walk of the table
 * that config_write and config_write_json share, so that both print the
 * same keys in the same order. */
static bool printed(const Config *cfg, int s, int id) {
    const CfgKey *k = &configkeys_table[id];
    if (strcmp(k->section, configkeys_sections[s])) return false;
    /* env.torques is refused for any other env, even with its default;
     * env.kwargs is printed for a Python environment only (a registered
     * one's config reads as before). */
    if (k->off == CFG_OFF(env.kwargs)) return env_extern_kind(cfg->env.name) != 0;
    return !(k->off == CFG_OFF(env.torques) && strcmp(cfg->env.name, "Pendulum-v1"));
}

void config_write(const Config *cfg, FILE *f) {
    /* quote() writes at most 4 bytes per byte of a string (\xHH), and no
     * string key holds more than PATH_LEN bytes (env.kwargs's 1024 among
     * them): a value is never cut, or it would not read back. */
    char val[4 * PATH_LEN + 16];
    _Static_assert(CFG_KWARGS_LEN <= PATH_LEN, "config_write's buffer fits env.kwargs quoted");
    fprintf(f, "# Effective gorila config: every key, defaults included.\n");
    for (int s = 0; configkeys_sections[s]; s++) {
        fprintf(f, "%s:\n", configkeys_sections[s]);
        for (int id = 0; id < configkeys_count; id++) {
            if (!printed(cfg, s, id)) continue;
            configprint_value_text(cfg, id, val, sizeof val);
            fprintf(f, "  %s: %s\n", configkeys_table[id].name, val);
        }
    }
}

/* The value of key id as a JSON member of j named by the key. */
static void key_value_json(const Config *cfg, int id, JsonW *j) {
    const CfgKey *k = &configkeys_table[id];
    switch (k->type) {
    case CFG_T_INT:
        json_num(j, k->name, get_int(cfg, k));
        break;
    case CFG_T_U64:
        json_u64(j, k->name, get_u64(cfg, k));
        break;
    case CFG_T_F64:
        json_num(j, k->name, get_f64(cfg, k));
        break;
    case CFG_T_BOOL:
        json_bool(j, k->name, get_bool(cfg, k));
        break;
    case CFG_T_STR: {
        char s[PATH_LEN];
        memcpy(s, cat(cfg, k), k->cap);
        s[k->cap - 1] = '\0';
        json_str(j, k->name, s);
        break;
    }
    case CFG_T_ENUM:
        json_str(j, k->name, configkeys_enum_name(k->names, get_int(cfg, k)));
        break;
    case CFG_T_INTS:
    case CFG_T_F64S: {
        int count = list_count(cfg, k);
        json_begin_array(j, k->name);
        for (int i = 0; i < count; i++) {
            if (k->type == CFG_T_INTS) {
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
    case CFG_T_CONV: {
        int count = list_count(cfg, k);
        const CfgConv *c = cat(cfg, k);
        json_begin_array(j, k->name);
        for (int i = 0; i < count; i++) {
            json_begin_object(j, NULL);
            json_num(j, "filters", c[i].filters);
            json_num(j, "kernel", c[i].kernel);
            json_num(j, "stride", c[i].stride);
            json_end_object(j);
        }
        json_end_array(j);
        break;
    }
    }
}

void config_write_json(const Config *cfg, JsonW *j, const char *key) {
    json_begin_object(j, key);
    for (int s = 0; configkeys_sections[s]; s++) {
        json_begin_object(j, configkeys_sections[s]);
        for (int id = 0; id < configkeys_count; id++)
            if (printed(cfg, s, id)) key_value_json(cfg, id, j);
        json_end_object(j);
    }
    json_end_object(j);
}

/* Whether key id holds the same value in a and b (numbers bit for bit). */
bool configprint_same_value(const Config *a, const Config *b, int id) {
    const CfgKey *k = &configkeys_table[id];
    size_t bytes = 0;
    switch (k->type) {
    case CFG_T_INT:
    case CFG_T_ENUM:
        bytes = sizeof(int);
        break;
    case CFG_T_U64:
        bytes = sizeof(uint64_t);
        break;
    case CFG_T_F64:
        bytes = sizeof(double);
        break;
    case CFG_T_BOOL:
        bytes = sizeof(bool);
        break;
    case CFG_T_STR:
        return !strncmp(cat(a, k), cat(b, k), k->cap);
    case CFG_T_INTS:
    case CFG_T_F64S: {
        int n = get_count(a, k);
        if (n != get_count(b, k)) return false;
        if (n < 0 || n > (int)k->cap) n = (int)k->cap;
        bytes = (size_t)n * (k->type == CFG_T_INTS ? sizeof(int) : sizeof(double));
        break;
    }
    case CFG_T_CONV: {
        int n = get_count(a, k);
        if (n != get_count(b, k)) return false;
        if (n < 0 || n > (int)k->cap) n = (int)k->cap;
        bytes = (size_t)n * sizeof(CfgConv);
        break;
    }
    }
    return !memcmp(cat(a, k), cat(b, k), bytes);
}

bool config_same(const Config *a, const Config *b) {
    for (int id = 0; id < configkeys_count; id++)
        if (!configprint_same_value(a, b, id)) return false;
    return true;
}
