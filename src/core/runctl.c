/* runctl.c: see runctl.h. */
#include "runctl.h"

const char *runctl_stop_name(StopReason reason) {
    switch (reason) {
    case STOP_NONE: return "none";
    case STOP_BUDGET: return "budget";
    case STOP_SOLVED: return "solved";
    case STOP_TIME: return "time";
    case STOP_SIGNAL: return "signal";
    default: return "error";
    }
}
