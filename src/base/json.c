/* SPDX-License-Identifier: MIT */
/* json.c: see json.h. */
#include "json.h"

#include <inttypes.h>
#include <math.h>

void json_init(JsonW *j, FILE *f, bool pretty) {
    j->f = f;
    j->depth = 0;
    j->need_comma[0] = false;
    j->pretty = pretty;
}

static void put_string(FILE *f, const char *s) {
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"': fputs("\\\"", f); break;
        case '\\': fputs("\\\\", f); break;
        case '\n': fputs("\\n", f); break;
        case '\r': fputs("\\r", f); break;
        case '\t': fputs("\\t", f); break;
        default:
            if (*p < 0x20) fprintf(f, "\\u%04x", *p);
            else fputc(*p, f);
        }
    }
    fputc('"', f);
}

/* Comma, newline/indent and "key": as due before a value. */
static void member(JsonW *j, const char *key) {
    if (j->need_comma[j->depth]) fputc(',', j->f);
    if (j->pretty && j->depth > 0) {
        fputc('\n', j->f);
        for (int i = 0; i < j->depth; i++) fputs("  ", j->f);
    } else if (j->need_comma[j->depth]) {
        fputc(' ', j->f);
    }
    j->need_comma[j->depth] = true;
    if (key) {
        put_string(j->f, key);
        fputs(": ", j->f);
    }
}

static void begin(JsonW *j, const char *key, char c) {
    member(j, key);
    fputc(c, j->f);
    if (j->depth + 1 < JSON_MAX_DEPTH) j->depth++;
    j->need_comma[j->depth] = false;
}

static void end(JsonW *j, char c) {
    bool had = j->need_comma[j->depth];
    if (j->depth > 0) j->depth--;
    if (j->pretty && had) {
        fputc('\n', j->f);
        for (int i = 0; i < j->depth; i++) fputs("  ", j->f);
    }
    fputc(c, j->f);
    if (j->depth == 0 && j->pretty) fputc('\n', j->f);
}

void json_begin_object(JsonW *j, const char *key) { begin(j, key, '{'); }
void json_end_object(JsonW *j) { end(j, '}'); }
void json_begin_array(JsonW *j, const char *key) { begin(j, key, '['); }
void json_end_array(JsonW *j) { end(j, ']'); }

void json_str(JsonW *j, const char *key, const char *value) {
    member(j, key);
    put_string(j->f, value);
}

void json_num(JsonW *j, const char *key, double value) {
    member(j, key);
    if (!isfinite(value)) {
        fputs("null", j->f);
        return;
    }
    /* Shortest of %.15g/%.17g that round-trips keeps files readable. */
    char buf[40];
    snprintf(buf, sizeof buf, "%.15g", value);
    double back = 0;
    if (sscanf(buf, "%lf", &back) != 1 || back != value) snprintf(buf, sizeof buf, "%.17g", value);
    fputs(buf, j->f);
}

void json_u64(JsonW *j, const char *key, uint64_t value) {
    member(j, key);
    fprintf(j->f, "%" PRIu64, value);
}

void json_bool(JsonW *j, const char *key, bool value) {
    member(j, key);
    fputs(value ? "true" : "false", j->f);
}

void json_null(JsonW *j, const char *key) {
    member(j, key);
    fputs("null", j->f);
}
