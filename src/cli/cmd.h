/* SPDX-License-Identifier: MIT */
/* cmd.h: the subcommands of the gorila binary. main.c parses only the
 * subcommand word and hands the rest of argv (argv[0] = the subcommand's
 * last word, e.g. "rollout") to one of these. Each returns the process exit
 * status: 0 success, 1 failure at run time, 2 bad usage or bad input
 * (usage_error, usage.h). */
#ifndef GORILA_CMD_H
#define GORILA_CMD_H

#include "usage.h"

int cmd_env(int argc, char **argv);     /* gorila env list|rollout|replay ... */
int cmd_config(int argc, char **argv);  /* gorila config check FILE ... */
int cmd_train(int argc, char **argv);   /* gorila train CONFIG ... */
int cmd_eval(int argc, char **argv);    /* gorila eval CHECKPOINT ... */
int cmd_export(int argc, char **argv);  /* gorila export CHECKPOINT FILE ... */
int cmd_bench(int argc, char **argv);   /* gorila bench env|nn|... */
int cmd_version(int argc, char **argv); /* gorila version [--kernels | --json] */

/* gorila bench subcommands, each in its own file. */
int bench_env(int argc, char **argv);
int bench_nn(int argc, char **argv);
int bench_replay(int argc, char **argv);
int bench_allreduce(int argc, char **argv); /* under mpirun */
int bench_pingpong(int argc, char **argv);  /* under mpirun -np 2 */

#endif
