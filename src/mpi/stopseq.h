/* SPDX-License-Identifier: MIT */
/* stopseq.h: the coordinator's stop sequence as a table: the states a
 * distributed job goes through from the stop decision to EXIT, the event
 * that moves each on, and what the coordinator does on the way. The
 * coordinator (coordinator.c) runs it: in each loop it asks which event
 * holds for its state, takes the transition the table names and does its
 * part. docs/ARCHITECTURE.md ("Shutdown") shows the table as
 * stopseq_markdown prints it, and a unit test keeps the two the same.
 *
 * Every wait (a state other than RUN and DONE, and the in-flight
 * checkpoint or evaluation the stop begins with) lasts at most
 * run.stop_deadline_seconds; then the job ends with GORILA_EXIT_HUNG,
 * naming the ranks that did not answer. No MPI here. */
#ifndef GORILA_STOPSEQ_H
#define GORILA_STOPSEQ_H

#include <stddef.h>

typedef enum {
    STOP_ST_RUN,           /* training; no stop decided */
    STOP_ST_WORKERS,       /* STOP sent to actors and learners, waiting for their STOPPED */
    STOP_ST_FINAL,         /* workers stopped: waiting for the final checkpoint (and an evaluation) */
    STOP_ST_SERVERS,       /* STOP sent to replay shards and parameter servers */
    STOP_ST_DONE,          /* everyone stopped: EXIT goes out */
    STOP_ST_COUNT
} StopState;

typedef enum {
    STOP_EV_DECIDED,       /* runctl_stop (or a log failure) gave a reason */
    STOP_EV_WORKERS_DONE,  /* every actor and learner sent STOPPED */
    STOP_EV_SETTLED,       /* no checkpoint and no evaluation in flight */
    STOP_EV_SERVERS_DONE,  /* every replay shard and parameter server sent STOPPED */
    STOP_EV_COUNT
} StopEvent;

typedef struct {
    StopState from;
    StopEvent on;
    StopState to;
    const char *does;      /* what the coordinator does on the way (markdown) */
} StopTransition;

/* The transition from `from` on `on`, or NULL when the table has none. */
const StopTransition *stopseq_next(StopState from, StopEvent on);

/* The event that moves `from` on (STOP_EV_COUNT for DONE). */
StopEvent stopseq_awaits(StopState from);

const char *stopseq_state_name(StopState s);
const char *stopseq_event_name(StopEvent e);

/* The table as a markdown table (header and one row per transition, each
 * line ending in '\n') into out (cap bytes, always terminated). Returns
 * the length it needs, like snprintf. */
size_t stopseq_markdown(char *out, size_t cap);

#endif
