/* runctl.h: run control shared by the distributed coordinator and the
 * single-process trainer: why a run stops. */
#ifndef GORILA_RUNCTL_H
#define GORILA_RUNCTL_H

typedef enum {
    STOP_NONE = 0,
    STOP_BUDGET,       /* env-step or update budget reached */
    STOP_SOLVED,       /* greedy evaluation reached the threshold */
    STOP_TIME,         /* run.max_seconds */
    STOP_SIGNAL,       /* SIGINT or SIGTERM */
    STOP_ERROR         /* a rank reported a failure */
} StopReason;

/* The name summary.json gives a StopReason ("budget", ...). */
const char *runctl_stop_name(StopReason reason);

#endif
