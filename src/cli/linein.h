/* SPDX-License-Identifier: MIT */
/* linein.h: the line input of the `gorila env replay` commands (the classic
 * environments' state/step protocol and MinAtar's seed/reset/step): one
 * short text line at a time, split into words, and the one error line a bad
 * line gets. Shared so that both protocols hold the same limits: a line of
 * at most LINEIN_MAX bytes (its newline included) read without ever holding
 * more, no NUL byte, and control bytes of the input quoted as \xHH in
 * messages (an escape sequence of the input never reaches the terminal). */
#ifndef GORILA_LINEIN_H
#define GORILA_LINEIN_H

#include <stddef.h>
#include <stdio.h>

enum { LINEIN_MAX = 65536, LINEIN_MSG_MAX = 1024 };

typedef enum { LINEIN_OK, LINEIN_EOF, LINEIN_LONG, LINEIN_NUL } LineinRead;

/* Reads the next line of f into buf (LINEIN_MAX + 1 bytes) as a string.
 * LINEIN_LONG and LINEIN_NUL (at byte *col, from 1) stop reading there;
 * LINEIN_EOF: nothing was left (or reading failed: ferror). */
LineinRead linein_read(FILE *f, char *buf, size_t *col);

/* Split line into whitespace-separated words (in place). Returns the count,
 * or max + 1 when there are more than max. */
int linein_words(char *line, char **tok, int max);

/* A bad line: flush the answers so far, then one line on stderr in the form
 * compilers use, "WHO: line N: ...", control bytes as \xHH and a message
 * past LINEIN_MSG_MAX bytes cut with "...". Returns GORILA_EXIT_USAGE. */
int linein_error(const char *who, long lineno, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* linein_error for what linein_read returned when it was not LINEIN_OK. */
int linein_read_error(const char *who, long lineno, LineinRead got, size_t col);

#endif
