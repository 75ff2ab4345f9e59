/* SPDX-License-Identifier: MIT */
/* cmd_env_minatar.c: `gorila env replay MinAtar/<Game>-v0|-v1` and the
 * MinAtar note under `gorila env list`'s table (envs/minatar; see
 * docs/ENVIRONMENTS.md, "MinAtar").
 *
 * One process is one reference minatar.Environment(game,
 * sticky_action_prob=P (--sticky, default 0.1), difficulty_ramping=R
 * (--no-ramping: false)). The -v0 ids take all 6 actions, the -v1 ids map
 * action i to minimal_action_set()[i] (minatar/gym.py). Commands, one a
 * line (blank and # lines ignored; lines of at most 64 KiB, no NUL byte):
 *   seed S   Environment.seed(S), 0 <= S < 2^32; prints nothing, resets
 *            neither the game nor the sticky last_action
 *   reset    Environment.reset(); prints "0 0 CELLS"
 *   step A   Environment.act(action A); prints "R T CELLS": the reward as
 *            a decimal integer, T 0 or 1, CELLS state() in C order (row,
 *            column, channel) as 0/1 characters
 * reset or step before any seed, and step before the first reset, exit 2:
 * the reference's constructor resets the game from an unseeded generator.
 * Any bad line exits 2 with "gorila env replay: line N: ..." after the
 * answers to the lines before it.
 *
 * This file is MIT; it links envs/minatar (GPL-3.0-or-later) only in a
 * build with MINATAR=1 (GORILA_MINATAR defined). */
#include "cmd_env_minatar.h"

#include "cmd.h"
#include "util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MINATAR_PREFIX "MinAtar/"

bool minatar_cli_wants(int argc, char **argv) {
    for (int i = 1; i < argc; i++)
        if (!strncmp(argv[i], MINATAR_PREFIX, strlen(MINATAR_PREFIX))) return true;
    return false;
}

#ifndef GORILA_MINATAR

int minatar_cli_replay(int argc, char **argv) {
    (void)argc;
    (void)argv;
    return usage_error("env replay: this build has no MinAtar (built with make MINATAR=0)");
}

void minatar_cli_list(void) { printf("MinAtar: not in this build (built with make MINATAR=0).\n"); }

#else

#include "linein.h"
#include "minatar.h"


typedef struct {
    MinatarGame game;
    bool minimal; /* -v1 */
    double sticky;
    bool ramping;
} MinatarArgs;

/* "MinAtar/<Title>-v0|-v1" -> game and action set; -1 if not one. */
static int parse_id(const char *id, MinatarArgs *a) {
    const char *p = id + strlen(MINATAR_PREFIX);
    for (int g = 0; g < MINATAR_GAME_COUNT; g++) {
        size_t n = strlen(minatar_title((MinatarGame)g));
        if (strncmp(p, minatar_title((MinatarGame)g), n) != 0) continue;
        if (strcmp(p + n, "-v0") && strcmp(p + n, "-v1")) continue;
        a->game = (MinatarGame)g;
        a->minimal = p[n + 2] == '1';
        return 0;
    }
    return -1;
}

static int unknown_id(const char *id) {
    char list[512] = "";
    for (int g = 0; g < MINATAR_GAME_COUNT; g++) {
        char one[64];
        snprintf(one, sizeof one, "%sMinAtar/%s-v0, MinAtar/%s-v1", g ? ", " : "", minatar_title((MinatarGame)g),
                 minatar_title((MinatarGame)g));
        strncat(list, one, sizeof list - strlen(list) - 1);
    }
    return usage_error("env replay: unknown MinAtar environment \"%s\"; valid names: %s", id, list);
}

static int parse_args(int argc, char **argv, MinatarArgs *a) {
    const char *id = NULL;
    char err[ERR_LEN];
    a->sticky = 0.1;
    a->ramping = true;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--no-ramping")) {
            a->ramping = false;
        } else if (!strcmp(argv[i], "--sticky")) {
            if (i + 1 >= argc) return usage_error("env replay: --sticky needs a probability in [0, 1]");
            if (parse_double(argv[++i], &a->sticky, err) < 0 || a->sticky < 0 || a->sticky > 1)
                return usage_error("env replay: --sticky: expected a probability in [0, 1], got \"%s\"", argv[i]);
        } else if (argv[i][0] == '-') {
            return usage_error("env replay: unknown option \"%s\" for MinAtar (expected --sticky P, --no-ramping)",
                               argv[i]);
        } else if (id) {
            return usage_error("env replay: expected one environment name, got \"%s\" and \"%s\"", id, argv[i]);
        } else {
            id = argv[i];
        }
    }
    if (!id || strncmp(id, MINATAR_PREFIX, strlen(MINATAR_PREFIX)) != 0 || parse_id(id, a) < 0)
        return unknown_id(id ? id : "");
    return 0;
}

/* Who a bad line of replay input names (linein_error). */
static const char replay_who[] = "gorila env replay";

/* "R T CELLS\n" */
static void print_state(const Minatar *m, int reward, bool terminal) {
    uint8_t cells[MINATAR_MAX_CELLS];
    char line[MINATAR_MAX_CELLS + 32];
    minatar_state(m, cells);
    int n = snprintf(line, sizeof line, "%d %d ", reward, terminal ? 1 : 0);
    int ncells = MINATAR_ROWS * MINATAR_COLS * minatar_channels(m->game);
    for (int i = 0; i < ncells; i++) line[n++] = cells[i] ? '1' : '0';
    line[n++] = '\n';
    fwrite(line, 1, (size_t)n, stdout);
}

typedef struct {
    Minatar env;
    MinatarArgs args;
    int actions[MINATAR_NUM_ACTIONS];
    int num_actions;
    bool seeded, reset;
} Replay;

/* One command (tok[0..n)); 0 or the exit status of a bad line. */
static int run_command(Replay *r, long lineno, char **tok, int n) {
    char err[ERR_LEN];
    long v;
    const char *cmd = tok[0];
    bool is_seed = !strcmp(cmd, "seed"), is_reset = !strcmp(cmd, "reset"), is_step = !strcmp(cmd, "step");
    if (!is_seed && !is_reset && !is_step)
        return linein_error(replay_who, lineno, "unknown command \"%s\" (expected seed, reset or step)", cmd);
    if (n != (is_reset ? 1 : 2))
        return linein_error(replay_who, lineno, "%s: expected %s, got %d values", cmd,
                          is_reset ? "no value" : is_seed ? "1 seed" : "1 action index", n - 1);
    if (is_seed) {
        if (parse_int_range(tok[1], 0, 4294967295L, &v, err) < 0)
            return linein_error(replay_who, lineno, "seed: %s (a seed is 0 <= S < 2^32)", err);
        minatar_seed(&r->env, (uint32_t)v);
        r->seeded = true;
        return 0;
    }
    if (is_step && parse_int_range(tok[1], 0, r->num_actions - 1, &v, err) < 0)
        return linein_error(replay_who, lineno, "step: action for MinAtar/%s-v%d: %s", minatar_title(r->args.game),
                          r->args.minimal ? 1 : 0, err);
    if (!r->seeded)
        return linein_error(replay_who, lineno, "%s before any seed: the reference's constructor draws from an unseeded "
                          "generator (send \"seed S\" first)", cmd);
    if (is_reset) {
        minatar_reset(&r->env);
        r->reset = true;
        print_state(&r->env, 0, false);
        return 0;
    }
    if (!r->reset)
        return linein_error(replay_who, lineno, "step before the first reset: the game's state would be the one the reference's "
                          "constructor drew from an unseeded generator (send \"reset\" first)");
    bool terminal;
    int reward = minatar_act(&r->env, r->actions[v], &terminal);
    print_state(&r->env, reward, terminal);
    return 0;
}

static int replay_loop(Replay *r) {
    char *line = xmalloc(LINEIN_MAX + 1);
    long lineno = 0;
    size_t col = 0;
    int rc = 0;
    LineinRead got;
    while (rc == 0 && (got = linein_read(stdin, line, &col)) != LINEIN_EOF) {
        lineno++;
        if (got != LINEIN_OK) {
            rc = linein_read_error(replay_who, lineno, got, col);
            break;
        }
        char *tok[4];
        int n = linein_words(line, tok, 3);
        if (n == 0 || tok[0][0] == '#') continue;
        if (n > 3) rc = linein_error(replay_who, lineno, "%s: too many values", tok[0]);
        else rc = run_command(r, lineno, tok, n);
    }
    if (!rc && ferror(stdin)) {
        fprintf(stderr, "gorila: error: env replay: reading stdin: %s\n", strerror(errno));
        rc = 1;
    }
    free(line);
    return rc;
}

int minatar_cli_replay(int argc, char **argv) {
    Replay r;
    memset(&r, 0, sizeof r);
    int rc = parse_args(argc, argv, &r.args);
    if (rc) return rc;
    minatar_init(&r.env, r.args.game, r.args.sticky, r.args.ramping);
    if (r.args.minimal) {
        r.num_actions = minatar_minimal_actions(r.args.game, r.actions);
    } else {
        r.num_actions = MINATAR_NUM_ACTIONS;
        for (int i = 0; i < MINATAR_NUM_ACTIONS; i++) r.actions[i] = i;
    }
    rc = replay_loop(&r);
    if (fflush(stdout) != 0 && !rc) {
        fprintf(stderr, "gorila: error: env replay: writing stdout: %s\n", strerror(errno));
        rc = 1;
    }
    return rc;
}

void minatar_cli_list(void) {
    printf("MinAtar/*: binary planes (rows x columns x channels), no time limit or reward threshold of their own\n"
           "(env.max_episode_steps, env.reward_threshold); sticky actions (default 0.1, env.sticky_actions) and\n"
           "difficulty ramping (default on, env.difficulty_ramping) as the reference; -v0 takes all 6 actions,\n"
           "-v1 the game's minimal action set (envs/minatar, GPL-3.0-or-later).\n");
}

#endif
