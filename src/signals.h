/* signals.h: SIGINT/SIGTERM (stop cleanly) and SIGUSR1 (checkpoint now).
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
/* True once SIGINT or SIGTERM arrived (stays true). */
bool signals_stop_requested(void);
/* The signal that asked to stop (0 if none). */
int signals_stop_signal(void);
/* True if SIGUSR1 arrived since the last call (clears it). */
bool signals_take_checkpoint(void);

#endif
