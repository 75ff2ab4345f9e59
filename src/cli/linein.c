/* SPDX-License-Identifier: MIT */
/* linein.c: see linein.h. */
#include "linein.h"

#include "exitcode.h"

#include <stdarg.h>
#include <string.h>

LineinRead linein_read(FILE *f, char *buf, size_t *col) {
    size_t n = 0;
    int c;
    while ((c = getc(f)) != EOF) {
        if (c == '\0') {
            *col = n + 1;
            return LINEIN_NUL;
        }
        if (n == LINEIN_MAX) return LINEIN_LONG;
        buf[n++] = (char)c;
        if (c == '\n') break;
    }
    buf[n] = '\0';
    return n == 0 ? LINEIN_EOF : LINEIN_OK;
}

int linein_words(char *line, char **tok, int max) {
    int n = 0;
    char *save = NULL;
    for (char *t = strtok_r(line, " \t\r\n", &save); t; t = strtok_r(NULL, " \t\r\n", &save)) {
        if (n == max) return max + 1;
        tok[n++] = t;
    }
    return n;
}

int linein_error(const char *who, long lineno, const char *fmt, ...) {
    char msg[LINEIN_MSG_MAX];
    va_list ap;
    fflush(stdout);
    va_start(ap, fmt);
    int n = vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "%s: line %ld: ", who, lineno);
    for (const unsigned char *c = (const unsigned char *)msg; *c; c++) {
        if (*c < 0x20 || *c == 0x7f)
            fprintf(stderr, "\\x%02x", *c);
        else
            fputc(*c, stderr);
    }
    fputs(n >= (int)sizeof msg ? "...\n" : "\n", stderr);
    return GORILA_EXIT_USAGE;
}

int linein_read_error(const char *who, long lineno, LineinRead got, size_t col) {
    if (got == LINEIN_LONG)
        return linein_error(who, lineno, "longer than %d bytes (a command is one short line)", LINEIN_MAX);
    return linein_error(who, lineno, "a NUL byte at byte %zu (the input must be text)", col);
}
