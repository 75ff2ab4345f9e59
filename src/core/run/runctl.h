/* SPDX-License-Identifier: MIT */
/* runctl.h: run control, the one copy that the single-process trainer
 * (trainer.c) and the coordinator of a distributed job (coordinator.c)
 * both use, so a local run and a distributed run of a config stop, evaluate,
 * checkpoint and report on the same rules:
 *   - why a run stops, and in which order the reasons are checked;
 *   - when a greedy evaluation is due (every eval.every_updates updates) and
 *     whether the final parameters still need one;
 *   - when a checkpoint is due (checkpoint.every_seconds, every_updates, or
 *     a request from SIGUSR1);
 *   - when a metrics row is due (logging.metrics_every_env_steps,
 *     metrics_every_updates, interval_seconds), the env-step and update
 *     rates over the row's interval, and the text of the progress line.
 * Bookkeeping on numbers the caller passes in: no MPI, no clock (every time
 * is an argument), no signals, no I/O, no allocation. RunCtl keeps no
 * pointer to the config; it copies the periods it needs at init.
 */
#ifndef GORILA_RUNCTL_H
#define GORILA_RUNCTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "runlog.h"

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

/* Where a run stands, as the stop decision sees it. */
typedef struct {
    uint64_t env_steps;      /* job-wide, across resumes */
    uint64_t updates;        /* optimizer steps, across resumes */
    double wall_seconds;     /* the run's whole time, across resumes */
    bool solved;             /* a greedy evaluation reached the env's threshold */
    bool signal;             /* SIGINT, SIGTERM or SIGUSR2 asked to stop */
    /* Distributed: each actor stops by itself at its share of
     * run.max_env_steps, so the env-step budget is used up when every actor
     * says so (actors_done), not when the reported env_steps reach it. */
    bool by_actors;
    bool actors_done;
} RunState;

/* Why the run should stop now, or STOP_NONE. The reasons are checked in this
 * order and the first that holds wins:
 *   1. solved, if run.stop_when_solved;
 *   2. budget: run.max_env_steps (if > 0) used up, then run.max_updates
 *      (if > 0) reached;
 *   3. time: wall_seconds >= run.max_seconds (if > 0);
 *   4. signal.
 * A run that reached one of its own ends is complete even if a signal came
 * in the same moment: it says so in summary.json and still gets its final
 * evaluation, which a signal skips (runctl_final_eval_due). */
StopReason runctl_stop(const Config *cfg, const RunState *s);

/* Schedules and the metrics-row rate window. Two clocks, both in seconds and
 * both the caller's: `wall` runs across resumes (what metrics.csv and the
 * progress line show), `run` starts at 0 when this process starts its loop
 * (the checkpoint period counts from there, also after a resume). */
typedef struct {
    /* evaluations */
    uint64_t eval_every;          /* eval.every_updates; 0 = only the final one */
    uint64_t next_eval_updates;   /* UINT64_MAX when eval_every is 0 */
    bool evaluated;               /* an evaluation was recorded in this process */
    uint64_t last_eval_updates;   /* the updates it evaluated */
    /* checkpoints */
    double ckpt_every_seconds;    /* checkpoint.every_seconds; 0 = off */
    double next_ckpt_seconds;     /* run clock; INFINITY when off */
    uint64_t ckpt_every_updates;  /* checkpoint.every_updates; 0 = off */
    uint64_t next_ckpt_updates;   /* UINT64_MAX when off */
    /* metrics rows */
    double row_every;             /* logging.interval_seconds */
    double next_row;              /* wall clock */
    uint64_t row_every_env_steps; /* logging.metrics_every_env_steps; 0 = off */
    uint64_t next_row_env_steps;  /* UINT64_MAX when off */
    uint64_t row_every_updates;   /* logging.metrics_every_updates; 0 = off */
    uint64_t next_row_updates;    /* UINT64_MAX when off */
    double row_t;                 /* wall clock at the start of the rate window */
    uint64_t row_env_steps, row_updates;  /* counters at the start of the window */
} RunCtl;

/* Start the schedules from where the run stands (after a resume, from the
 * restored counters): the next evaluation and update-based checkpoint at the
 * first multiple of their period above `updates`, the first time-based
 * checkpoint at run time checkpoint.every_seconds, the first metrics row at
 * wall + logging.interval_seconds or at the first multiple of
 * metrics_every_env_steps above env_steps or of metrics_every_updates above
 * updates, the rate window at (wall, env_steps, updates). Allocates
 * nothing. */
void runctl_init(RunCtl *rc, const Config *cfg, double wall, uint64_t env_steps, uint64_t updates);
/* Nothing to release; here so RunCtl has the lifecycle of every module.
 * Safe on a zeroed struct. */
void runctl_free(RunCtl *rc);

/* True when `updates` has reached the next multiple of eval.every_updates;
 * the schedule then moves to the first multiple above `updates`, so a jump
 * over several multiples (distributed counters arrive in steps) fires once.
 * A caller that cannot start an evaluation now should not ask: the answer
 * is consumed. */
bool runctl_eval_due(RunCtl *rc, uint64_t updates);
/* Record that the parameters after `updates` updates were evaluated. */
void runctl_eval_done(RunCtl *rc, uint64_t updates);
/* Whether the final parameters (after `updates`) still need an evaluation:
 * not after a signal (the user wants out now), and not when the last
 * evaluation was of these very parameters. */
bool runctl_final_eval_due(const RunCtl *rc, StopReason stop, uint64_t updates);

/* True when a checkpoint is due: requested (SIGUSR1), run_seconds reached
 * the time schedule, or updates reached the update schedule. Each schedule
 * that fired moves on: the time one to run_seconds + every_seconds, the
 * update one to the first multiple of every_updates above `updates`. A
 * caller that cannot start a checkpoint now (one is in progress, the run is
 * stopping) should not ask, and should not consume the request either. */
bool runctl_ckpt_due(RunCtl *rc, double run_seconds, uint64_t updates, bool requested);

/* True when a metrics row is due at wall clock `wall` with the counters at
 * env_steps and updates: env_steps reached the next multiple of
 * logging.metrics_every_env_steps, updates the next multiple of
 * metrics_every_updates, or logging.interval_seconds passed since the last
 * row. Then each counter schedule that fired moves to the first multiple
 * above its counter (a jump over several multiples, as distributed counters
 * arrive, gives one row), and the time schedule to `wall` +
 * interval_seconds whatever fired: interval_seconds is the longest gap
 * between rows, and rows at training cadence stay on the multiples. */
bool runctl_row_due(RunCtl *rc, double wall, uint64_t env_steps, uint64_t updates);
/* Env steps and updates per second between the start of the rate window and
 * (wall, env_steps, updates); NaN both when no time passed. The window then
 * starts again at (wall, env_steps, updates). */
void runctl_rates(RunCtl *rc, double wall, uint64_t env_steps, uint64_t updates, double *env_steps_per_second,
                  double *updates_per_second);

/* Room for any progress line (runlog_progress prints at most 511 chars). */
#define RUNCTL_LINE_LEN 512

/* The progress line for a metrics row and the best evaluation so far
 * (NaN before the first), into out (size bytes, always terminated, cut to
 * fit), for example
 *   [   12.5s] steps 30000 (2400/s)  updates 7000 (560/s)  eps 0.050  return 180.3  eval 500.0 (best 500.0)
 * Uses wall_seconds, env_steps, updates, both rates, epsilon,
 * mean_train_return and last_eval_return of row. */
void runctl_progress_line(char *out, size_t size, const MetricsRow *row, double best_eval);

/* Whether a run resumed at these counters (and whether its evaluations
 * had solved it) already met a stop condition of cfg: STOP_SOLVED (with
 * run.stop_when_solved), STOP_BUDGET (run.max_env_steps or max_updates
 * reached), STOP_TIME (run.max_seconds), else STOP_NONE. */
StopReason runctl_resume_done(const Config *cfg, uint64_t env_steps, uint64_t updates, double wall_seconds, bool solved);
/* What a resume that has nothing to do prints: which condition the run in
 * run_dir met, and which --set would let it go on. history may be NULL. */
void runctl_done_line(char *out, size_t size, const char *run_dir, StopReason why, uint64_t env_steps,
                      uint64_t updates, const EvalTrack *history);

/* The line a run ends with, into out (size bytes, always terminated): when
 * it solved (env steps, updates and seconds of the solving evaluation), or
 * that it did not and its best; why and where it stopped; which checkpoint
 * it leaves and that checkpoint's evaluation (final_ckpt NULL: none written;
 * final_evaluated false: not evaluated); and the best checkpoint. */
void runctl_final_line(char *out, size_t size, const char *env, const EvalTrack *e, uint64_t env_steps,
                       uint64_t updates, double wall_seconds, StopReason stop, const char *final_ckpt,
                       bool final_evaluated, const char *best_ckpt);

#endif
