/* SPDX-License-Identifier: MIT */
/* configtext.c: text helpers of the config loader, below every other file of
 * it (it calls none of them): values quoted in one-line messages, numbers
 * written so that they read back exactly, and UTF-8 decoding. See
 * configint.h for how the loader is split.
 */
#include "configint.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Write s[0..len) into out (CFG_SHOW_LEN bytes) for a one-line message: control
 * characters (and, when quoted, quotes and backslashes) escaped, long values
 * cut at CFG_SHOW_CHARS characters with "...". */
const char *configtext_show(const char *s, size_t len, bool quoted, char *out) {
    size_t o = 0, chars = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        bool lead = (c & 0xC0) != 0x80;
        if (lead && (chars == CFG_SHOW_CHARS || o + 10 > CFG_SHOW_LEN)) {
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
            o += (size_t)snprintf(out + o, CFG_SHOW_LEN - o, "\\u%04x", c1);
            i += 1;
        } else if (c == 0xE2 && c1 == 0x80 && (c2 == 0xA8 || c2 == 0xA9)) {
            o += (size_t)snprintf(out + o, CFG_SHOW_LEN - o, "\\u%04x", 0x2000 | c2);
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
            o += (size_t)snprintf(out + o, CFG_SHOW_LEN - o, "\\x%02x", c);
        } else {
            out[o++] = (char)c;
        }
    }
    out[o] = '\0';
    return out;
}

/* Shortest text that reads back as exactly v (integral values without
 * exponent, so 100000 stays 100000). */
void configtext_fmt_f64(double v, char *buf, size_t cap) {
    if (isfinite(v) && v == floor(v) && fabs(v) < 1e15) {
        snprintf(buf, cap, "%.0f", v);
        return;
    }
    for (int p = 1; p <= 17; p++) {
        snprintf(buf, cap, "%.*g", p, v);
        if (strtod(buf, NULL) == v) return;
    }
}

/* Length of the valid UTF-8 sequence at s (RFC 3629: no overlongs, no
 * surrogates, nothing above U+10FFFF) and its code point, or 0 if invalid. */
size_t configtext_utf8_decode(const unsigned char *s, size_t n, uint32_t *cp) {
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
