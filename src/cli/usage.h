/* SPDX-License-Identifier: MIT */
/* usage.h: the one error line of bad usage or bad input, shared by main.c
 * and every subcommand (cmd.h). Its own file so that the subcommands call
 * down into it rather than up into main.c, which calls them. */
#ifndef GORILA_USAGE_H
#define GORILA_USAGE_H

#include "exitcode.h"

/* GORILA_EXIT_USAGE, under the name the subcommands use. */
#define EXIT_USAGE GORILA_EXIT_USAGE

/* Print "gorila: error: <msg>" to stderr and return EXIT_USAGE. */
int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
