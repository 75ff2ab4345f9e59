/* SPDX-License-Identifier: MIT */
/* signals.c: see signals.h. */
#include "signals.h"

#include <signal.h>
#include <string.h>

static volatile sig_atomic_t stop_signal;
static volatile sig_atomic_t checkpoint_asked;

static void on_stop(int sig) { stop_signal = sig; }
static void on_usr1(int sig) {
    (void)sig;
    checkpoint_asked = 1;
}

void signals_install(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sa.sa_handler = on_stop;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGUSR2, &sa, NULL);
    sa.sa_handler = on_usr1;
    sigaction(SIGUSR1, &sa, NULL);
}

bool signals_stop_requested(void) { return stop_signal != 0; }
int signals_stop_signal(void) { return stop_signal; }

bool signals_take_checkpoint(void) {
    if (!checkpoint_asked) return false;
    checkpoint_asked = 0;
    return true;
}
