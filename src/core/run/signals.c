/* SPDX-License-Identifier: MIT */
/* signals.c: see signals.h. */
#include "signals.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>

static volatile sig_atomic_t stop_signal;
static volatile sig_atomic_t checkpoint_asked;
static volatile sig_atomic_t second_aborts;

/* Only async-signal-safe calls here (sigaction, raise). */
static void on_stop(int sig) {
    if (stop_signal && second_aborts) {
        struct sigaction dfl;
        memset(&dfl, 0, sizeof dfl);
        dfl.sa_handler = SIG_DFL;
        sigemptyset(&dfl.sa_mask);
        sigaction(sig, &dfl, NULL);
        raise(sig); /* delivered when this handler returns */
        return;
    }
    if (!stop_signal) stop_signal = sig;
}

static void on_usr1(int sig) {
    (void)sig;
    checkpoint_asked = 1;
}

void signals_install(SignalsMode mode) {
    second_aborts = mode == SIGNALS_SECOND_ABORTS;
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

const char *signals_name(int sig, char *buf) {
    switch (sig) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    case SIGUSR2: return "SIGUSR2";
    default: snprintf(buf, 16, "signal %d", sig); return buf;
    }
}

bool signals_take_checkpoint(void) {
    if (!checkpoint_asked) return false;
    checkpoint_asked = 0;
    return true;
}
