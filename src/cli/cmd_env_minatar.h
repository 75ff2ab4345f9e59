/* SPDX-License-Identifier: MIT */
/* cmd_env_minatar.h: the MinAtar part of `gorila env` (cmd_env_minatar.c),
 * which cmd_env.c calls for a MinAtar/ name and for `env list`. */
#ifndef GORILA_CMD_ENV_MINATAR_H
#define GORILA_CMD_ENV_MINATAR_H

#include <stdbool.h>

/* Whether argv[1..argc) names a MinAtar environment ("MinAtar/..."). */
bool minatar_cli_wants(int argc, char **argv);

/* `gorila env replay MinAtar/<Game>-v0|-v1 [--sticky P] [--no-ramping]`:
 * argv[0] is "replay". Returns the exit status. */
int minatar_cli_replay(int argc, char **argv);

/* `gorila env list`'s note on the MinAtar rows of its table (options,
 * licence), or a line saying the build has none. */
void minatar_cli_list(void);

#endif
