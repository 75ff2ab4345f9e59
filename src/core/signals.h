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
 * loop. Other roles install the handlers too, so that the SIGTERM mpirun
 * sends every rank does not kill them before the coordinator has run the
 * orderly shutdown; they ignore the flags and wait for TAG_STOP.
 */
#ifndef GORILA_SIGNALS_H
#define GORILA_SIGNALS_H

#include <stdbool.h>

void signals_install(void);
/* True once SIGINT, SIGTERM or SIGUSR2 arrived (stays true). */
bool signals_stop_requested(void);
/* The signal that asked to stop (0 if none). */
int signals_stop_signal(void);
/* True if SIGUSR1 arrived since the last call (clears it). */
bool signals_take_checkpoint(void);

#endif
