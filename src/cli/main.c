/* SPDX-License-Identifier: MIT */
/* main.c: the gorila binary. Parses the subcommand and dispatches; every
 * subcommand lives in its own cmd_*.c file, and calls nothing here (the
 * helpers they share are files of their own: usage.c, cliload.c,
 * cliexport.c). */
#include "cmd.h"
#include "exitcode.h"
#include "usage.h"
#include "version.h"

#include <stdbool.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage[] =
    "usage: gorila <command> [args]\n"
    "\n"
    "commands:\n"
    "  train CONFIG [--set key.path=value]... [--local]\n"
    "  train --resume RUN_DIR [--set key.path=value]...\n"
    "                        train: one process, or the distributed roles under mpirun\n"
    "                        (scripts/launch CONFIG computes -np and starts mpirun)\n"
    "  eval RUN|CHECKPOINT [--checkpoint WHICH] [--episodes N] [--seed S] [--json]\n"
    "       [--export FILE] [--actions OBSFILE]\n"
    "                        greedy evaluation of a run or checkpoint directory\n"
    "  export RUN|CHECKPOINT FILE.npz|FILE.bin [--checkpoint WHICH] [--json]\n"
    "                        write the network (NumPy .npz, or raw float32) without\n"
    "                        evaluating it; says what it wrote\n"
    "  env list              the bundled environments\n"
    "  env rollout NAME [--episodes N] [--seed S] [--torques a,b,...]\n"
    "                        random-policy episodes\n"
    "  env replay NAME [--torques a,b,...]\n"
    "                        step an environment from commands on stdin\n"
    "  env check NAME [--episodes N] [--seed S]\n"
    "                        check an environment against the interface's rules\n"
    "  config check FILE [--set key.path=value]...\n"
    "                        validate a config, print it and its rank layout\n"
    "  config place FILE [--set key.path=value]... --hosts HOST:SLOTS,...\n"
    "                        the host of each rank across hosts (scripts/launch --hostfile)\n"
    "  bench env [--steps N] [--env NAME] [--json]\n"
    "  bench nn [--seconds S] [--no-double] [--threads N] [--json]\n"
    "  bench replay [--seconds S] [--obs-dim N] [--capacity C] [--json]\n"
    "  bench allreduce [--config FILE] [--max-floats N] [--wait auto|poll|sleep] [--json]\n"
    "                        (under mpirun: the ring and the naive allreduce against\n"
    "                        MPI_Allreduce)\n"
    "                        benchmarks (never pass or fail on time)\n"
    "  version [--kernels | --json]\n"
    "                        the release and source id of this build (a job refuses\n"
    "                        ranks of different builds), the CPU and OpenBLAS kernel;\n"
    "                        --json adds the sync modes, roles and bins scripts read\n"
    "  help                  this text\n"
    "\n"
    "Documentation: README.md and docs/ in the source tree.\n";

/* A process started with stdin, stdout or stderr closed would hand that
 * number to the first file it opens (a CSV, the lock), and its messages
 * would land in it. Each closed one is opened on /dev/null the wrong way
 * round, so it stays unusable as before (a read from stdin, a write to
 * stdout fails with EBADF) but no run file can take it. */
static void hold_std_fds(void) {
    for (int fd = 0; fd <= 2; fd++) {
        if (fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
        int got = open("/dev/null", fd == 0 ? O_WRONLY : O_RDONLY);
        if (got != fd && got >= 0) close(got);
    }
}

/* The status of a command that returned rc, after its standard output is
 * flushed: a command whose output could not be written (a full disk, a
 * closed pipe) failed, even if all else went well: one line and
 * GORILA_EXIT_FAILED. Not for train, whose product is its run directory:
 * its status is the run's (README "Exit statuses"). */
static int finish_stdout(const char *cmd, int rc) {
    bool bad = ferror(stdout) != 0;
    errno = 0;
    if (fflush(stdout) != 0) bad = true;
    int e = errno;
    if (!bad || rc != 0 || !strcmp(cmd, "train")) return rc;
    fprintf(stderr, "gorila: error: %s: writing to standard output failed: %s\n", cmd,
            e ? strerror(e) : "write error");
    return GORILA_EXIT_FAILED;
}

static int dispatch(const char *cmd, int argc, char **argv) {
    if (!strcmp(cmd, "help") || !strcmp(cmd, "--help") || !strcmp(cmd, "-h")) {
        fputs(usage, stdout);
        return 0;
    }
    if (!strcmp(cmd, "version") || !strcmp(cmd, "--version")) return cmd_version(argc - 1, argv + 1);
    /* OpenBLAS starts its worker threads when the library loads, sized from
     * OPENBLAS_NUM_THREADS (default: every core), and they spin for a while
     * after each call. gorila runs one rank per core and asks for
     * run.blas_threads explicitly, so start the commands that use BLAS
     * again with a single thread unless the user chose a number. */
    bool blas = !strcmp(cmd, "train") || !strcmp(cmd, "eval") || !strcmp(cmd, "bench");
    if (blas && !getenv("OPENBLAS_NUM_THREADS")) {
        setenv("OPENBLAS_NUM_THREADS", "1", 1);
        execv("/proc/self/exe", argv);
        /* exec failed: carry on with OpenBLAS's own threads */
    }
    if (!strcmp(cmd, "train")) {
        /* A reader that goes away (`| head`) must not kill a run half-way
         * through writing its files: its lines are lost, the run goes on. */
        signal(SIGPIPE, SIG_IGN);
        return cmd_train(argc - 1, argv + 1);
    }
    if (!strcmp(cmd, "eval")) return cmd_eval(argc - 1, argv + 1);
    if (!strcmp(cmd, "export")) return cmd_export(argc - 1, argv + 1);
    if (!strcmp(cmd, "env")) return cmd_env(argc - 1, argv + 1);
    if (!strcmp(cmd, "config")) return cmd_config(argc - 1, argv + 1);
    if (!strcmp(cmd, "bench")) return cmd_bench(argc - 1, argv + 1);
    fputs(usage, stderr);
    return usage_error("unknown command \"%s\"", cmd);
}

int main(int argc, char **argv) {
    hold_std_fds();
    if (argc < 2) {
        fputs(usage, stderr);
        return EXIT_USAGE;
    }
    return finish_stdout(argv[1], dispatch(argv[1], argc, argv));
}
