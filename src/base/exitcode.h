/* SPDX-License-Identifier: MIT */
/* exitcode.h: the exit statuses of gorila (every command, and mpirun's
 * status for a distributed job). scripts/launch --max-restarts restarts a
 * job only after GORILA_EXIT_FAILED or a rank that died (an exit status it
 * does not know): the others (GORILA_EXIT_ENV included) say that running
 * again would fail the same way.
 * README.md lists them; keep the two in step.
 */
#ifndef GORILA_EXITCODE_H
#define GORILA_EXITCODE_H

enum {
    GORILA_EXIT_OK = 0,
    GORILA_EXIT_FAILED = 1,      /* runtime failure a restart may cure (rank died, I/O error mid-run) */
    GORILA_EXIT_USAGE = 2,       /* bad command line, config, layout or -np, or a set-up fault found
                                    at start (memory, run directory, hosts, BLAS kernel): fix the input */
    GORILA_EXIT_CKPT_WRITE = 3,  /* the run could not write its final checkpoint (disk full, unwritable) */
    GORILA_EXIT_CKPT_READ = 4,   /* the checkpoint to resume or evaluate is damaged or not this run's */
    GORILA_EXIT_DIVERGED = 5,    /* training produced NaN or Inf (loss, gradient or parameters) */
    GORILA_EXIT_HUNG = 6,        /* ranks did not answer the stop within run.stop_deadline_seconds */
    GORILA_EXIT_LOCKED = 7,      /* the run directory is in use by another job */
    GORILA_EXIT_LOG_WRITE = 8,   /* a CSV or summary.json could not be written, or a run file is a link */
    /* Its own code would do the same again, so no restart; the last checkpoint is kept: */
    GORILA_EXIT_ENV = 9          /* a Python environment raised in reset or step, or broke its contract */
};

#endif
