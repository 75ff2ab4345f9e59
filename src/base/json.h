/* SPDX-License-Identifier: MIT */
/* json.h: a tiny streaming JSON writer for summary.json and the --json
 * lines of benchmarks. It tracks only whether a comma is due; the caller
 * nests begin/end calls correctly. Non-finite numbers are written as null
 * (JSON has no NaN). */
#ifndef GORILA_JSON_H
#define GORILA_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define JSON_MAX_DEPTH 16

typedef struct {
    FILE *f;
    int depth;
    bool need_comma[JSON_MAX_DEPTH];
    bool pretty;   /* newline + indent between members (files); off for JSON lines */
} JsonW;

void json_init(JsonW *j, FILE *f, bool pretty);
void json_begin_object(JsonW *j, const char *key);  /* key NULL at top level / in arrays */
void json_end_object(JsonW *j);
void json_begin_array(JsonW *j, const char *key);
void json_end_array(JsonW *j);
void json_str(JsonW *j, const char *key, const char *value);
void json_num(JsonW *j, const char *key, double value);   /* %.17g, trimmed */
void json_u64(JsonW *j, const char *key, uint64_t value);
void json_bool(JsonW *j, const char *key, bool value);
void json_null(JsonW *j, const char *key);

#endif
