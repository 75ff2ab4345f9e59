/* SPDX-License-Identifier: MIT */
/* stopseq.c: see stopseq.h. */
#include "stopseq.h"

#include <stdio.h>

static const StopTransition table[] = {
    {STOP_ST_RUN, STOP_EV_DECIDED, STOP_ST_WORKERS,
     "finish the checkpoint and the evaluation in flight, save a best copy still to save; `CKPT_REQ` with "
     "`MSG_FINAL` to every parameter source (with `MSG_SNAPSHOT` when the run stops because the last evaluation "
     "solved: that copy is the final checkpoint) and, with `checkpoint.save_replay`, to every replay shard; "
     "`STOP` to the actors and learners"},
    {STOP_ST_WORKERS, STOP_EV_WORKERS_DONE, STOP_ST_FINAL, "the counters are final"},
    {STOP_ST_FINAL, STOP_EV_SETTLED, STOP_ST_SERVERS,
     "write the final `MANIFEST` (every `CKPT_DONE` is in); evaluate the final checkpoint, read back from its "
     "files (not needed for the solving copy, none after a signal; a new best makes it `best`); `STOP` to the "
     "replay shards and parameter servers"},
    {STOP_ST_SERVERS, STOP_EV_SERVERS_DONE, STOP_ST_DONE,
     "summary, trace, the final line; `EXIT` to everyone (exit status 3 if the final checkpoint is missing)"},
};
enum { N_TRANSITIONS = sizeof table / sizeof table[0] };

const StopTransition *stopseq_next(StopState from, StopEvent on) {
    for (int i = 0; i < N_TRANSITIONS; i++)
        if (table[i].from == from && table[i].on == on) return &table[i];
    return NULL;
}

StopEvent stopseq_awaits(StopState from) {
    for (int i = 0; i < N_TRANSITIONS; i++)
        if (table[i].from == from) return table[i].on;
    return STOP_EV_COUNT;
}

const char *stopseq_state_name(StopState s) {
    static const char *const names[STOP_ST_COUNT] = {"run", "stopping workers", "final checkpoint",
                                                      "stopping servers", "done"};
    return s >= 0 && s < STOP_ST_COUNT ? names[s] : "?";
}

const char *stopseq_event_name(StopEvent e) {
    static const char *const names[STOP_EV_COUNT] = {"a stop reason", "every actor and learner STOPPED",
                                                      "no checkpoint or evaluation in flight",
                                                      "every replay shard and PS STOPPED"};
    return e >= 0 && e < STOP_EV_COUNT ? names[e] : "?";
}

size_t stopseq_markdown(char *out, size_t cap) {
    size_t n = 0;
    int w = snprintf(out, cap, "| state | waits for | next | the coordinator does |\n|---|---|---|---|\n");
    n += (size_t)(w > 0 ? w : 0);
    for (int i = 0; i < N_TRANSITIONS; i++) {
        const StopTransition *t = &table[i];
        w = snprintf(n < cap ? out + n : NULL, n < cap ? cap - n : 0, "| %s | %s | %s | %s |\n",
                     stopseq_state_name(t->from), stopseq_event_name(t->on), stopseq_state_name(t->to), t->does);
        n += (size_t)(w > 0 ? w : 0);
    }
    return n;
}
