/* SPDX-License-Identifier: MIT */
/* signals.h: SIGINT/SIGTERM/SIGUSR2 (stop cleanly) and SIGUSR1
 * (checkpoint now).
 *
 * Why SIGUSR2: mpirun forwards SIGUSR1 and SIGUSR2 to every rank at once,
 * but on SIGINT/SIGTERM it starts its own abort, which waits
 * odls_base_sigkill_timeout seconds before it sends SIGTERM to the ranks
 * and as long again before SIGKILL. scripts/launch therefore turns the
 * first SIGINT/SIGTERM it gets into SIGUSR2 for mpirun, and the job stops
 * itself in milliseconds with a final checkpoint.
 *
 * The one exception to "no file-scope mutable state": a signal handler can
 * only talk to the program through a volatile sig_atomic_t. The handlers
 * only set flags; the coordinator (or the local trainer) polls them in its
 * loop and in every evaluation (evaluator.h's abandon check). Every other
 * rank of a job forwards its stop signal to the coordinator (comm.c: a
 * STOP_REQ message) and keeps serving until the coordinator's STOP reaches
 * it, so that a signal to any one rank (kill, a batch system's SIGTERM to
 * every rank) stops the whole job cleanly.
 *
 * A second stop signal: the local trainer (SIGNALS_SECOND_ABORTS) dies of
 * it at once, with the signal's default action. The ranks of a job keep
 * the first: a batch system's SIGTERM and the launcher's SIGUSR2 may both
 * reach a rank for one request, and the job's abort is mpirun's (the
 * launcher passes a second SIGINT/SIGTERM on to it).
 */
#ifndef GORILA_SIGNALS_H
#define GORILA_SIGNALS_H

#include <stdbool.h>

typedef enum {
    SIGNALS_SECOND_IGNORED, /* a rank of a job */
    SIGNALS_SECOND_ABORTS   /* the local trainer: the second stop signal kills the process */
} SignalsMode;

void signals_install(SignalsMode mode);
/* True once SIGINT, SIGTERM or SIGUSR2 arrived (stays true). */
bool signals_stop_requested(void);
/* The signal that asked to stop (0 if none). */
int signals_stop_signal(void);
/* "SIGINT", "SIGTERM", "SIGUSR2", or "signal N". Returns a static string
 * or buf (16 bytes). */
const char *signals_name(int sig, char *buf);
/* True if SIGUSR1 arrived since the last call (clears it). */
bool signals_take_checkpoint(void);

#endif
