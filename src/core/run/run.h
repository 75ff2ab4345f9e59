/* SPDX-License-Identifier: MIT */
/* run.h: one run's state and its end, for the local trainer and for the
 * coordinator of a distributed job alike (no MPI).
 *
 * A Run owns what both have: the run directory (runlog.h), the schedules
 * (runctl.h), the job-wide counters and wall clock across resumes, the
 * evaluation record and history, which checkpoints exist (best, final),
 * the stop reason, and the end-of-run sequence: the last metrics row, the
 * final checkpoint's evaluation and "a new best makes the final checkpoint
 * the best", summary.json, trace.json, the final line, and which exit
 * status wins. The two callers differ only in how they get there: the
 * local trainer steps its own environments and learner and writes its
 * checkpoints itself; the coordinator gathers counters from messages and
 * asks other ranks to write. They keep the counters in the Run up to date
 * (env_steps, updates, episodes through run_episode), and they do the
 * checkpoint I/O or send the messages; the Run decides and records.
 *
 * Lifecycle:
 *   run_init   counters, clock and history from where the run starts
 *   run_open   the run directory (fresh or reopened), "run directory:" line
 *   ... run_episode, run_eval_record, run_stop_due, run_metrics_row,
 *       run_manifest for each checkpoint, run_final_committed / _failed
 *   run_final_eval_due, run_final_evaluated
 *   run_end    the end-of-run sequence; returns the exit status
 *   run_free
 */
#ifndef GORILA_RUN_H
#define GORILA_RUN_H

#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "ctx.h"
#include "evaluator.h"
#include "json.h"
#include "runckpt.h"
#include "runctl.h"
#include "runlog.h"
#include "heldout.h"
#include "trace.h"
#include "util.h"

/* A reason from another rank (a CKPT_DONE's text, up to 4096 bytes) fits. */
enum { RUN_ERR_LEN = 4097 };

/* Where a run starts: from nothing, or from a checkpoint (resumed). */
typedef struct {
    double t0;                  /* now_seconds() when this process began (0: at run_init) */
    bool resumed;
    const char *run_dir;        /* resumed: the run directory to reopen */
    uint64_t env_steps, updates, episodes; /* job-wide counters of the checkpoint */
    double wall_seconds;        /* the run's time before this process */
    uint64_t ckpt_seq;          /* the number of the checkpoint resumed from */
    bool has_history;           /* history holds the run's evaluation history */
    EvalTrack history;
} RunStart;

typedef struct {
    const Config *cfg;
    const Ctx *ctx;             /* for messages; NULL in the local trainer */
    const char *mode;           /* "local", or the sync mode's name */
    Trace *trace;               /* this process's spans (evaluation, checkpoint) */
    RunLog log;
    RunCtl rc;                  /* eval, checkpoint and metrics-row schedules */
    EvalTrack eval;             /* the evaluation history, across resumes */
    RecentReturns recent;       /* training returns for the progress line */
    /* the progress line's rates: since the last line printed (rows come
     * every 100 env steps; a rate over one row's interval would jump) */
    double progress_t;
    uint64_t progress_env_steps, progress_updates;
    /* counters: job-wide, across resumes; the callers keep them current */
    uint64_t env_steps, updates, episodes;
    uint64_t start_env_steps, start_updates, start_episodes;
    bool resumed;
    const char *run_dir;        /* resumed: the directory to reopen */
    double t0, wall_offset;     /* wall_offset: seconds of earlier segments */
    uint64_t ckpt_seq;          /* the last checkpoint number used */
    /* the last evaluation: its result and the counters when it was taken */
    EvalResult eval_res;
    uint64_t eval_version, eval_env_steps, eval_episodes;
    double eval_wall;
    bool best_saved;            /* checkpoints/best exists (this or an earlier segment) */
    /* the end */
    StopReason stop;
    bool final_ok;              /* the final checkpoint is committed */
    bool final_evaluated;       /* eval.last is of the final checkpoint */
    char final_dir[PATH_LEN];   /* its directory */
    char final_name[PATH_LEN + 16]; /* "checkpoints/ckpt-000012" */
    char final_err[RUN_ERR_LEN]; /* why it was not written */
    HeldOut test;               /* the held-out test evaluation (run_end) */
    /* stop signals */
    bool stop_asked;            /* the coordinator: another rank got a stop signal (STOP_REQ) */
    EvalAbandonFn abandon;      /* asked during the held-out test (run_set_abandon; NULL: never) */
    void *abandon_arg;
} Run;

/* The run directory's file that says the held-out test of the final
 * checkpoint is owed: made when the final checkpoint is committed (with
 * eval.test_episodes > 0), removed once summary.json holds that test's
 * result. A resume of a run whose training is complete runs only the test
 * when it is there (run_test_only). */
#define RUN_TEST_PENDING "test-pending"

/* Counters, clock and evaluation history from s; nothing is written. mode
 * and trace must outlive the Run; ctx may be NULL. */
void run_init(Run *r, const Config *cfg, const Ctx *ctx, const char *mode, Trace *trace, const RunStart *s);

/* Create the run directory (or reopen s->run_dir when resumed: runlog_init,
 * with extra metrics columns), open a TensorBoard events file in its tb/
 * with logging.tensorboard (runlog_tensorboard), print "run directory:
 * DIR", note whether a best checkpoint exists already, and start the
 * schedules. Returns 0, or runlog_init's or runlog_tensorboard's exit
 * status with err (nothing is then held open). */
int run_open(Run *r, const char *const *extra_names, int n_extra, char *err);

/* What the held-out test asks while it runs: abandon(arg) true gives it up
 * (evaluator.h). The caller's pointers are kept. */
void run_set_abandon(Run *r, EvalAbandonFn abandon, void *arg);

/* A stop signal came: to this process, or (the coordinator) to another
 * rank of the job. Evaluations not yet begun are then skipped. */
bool run_signalled(const Run *r);

/* Whether run_dir holds RUN_TEST_PENDING. */
bool run_test_pending(const char *run_dir);

/* Seconds since the run began, across resumes. */
double run_wall(const Run *r);

/* An episode an actor finished (the local trainer is actor 0). */
void run_episode(Run *r, int actor, double ret, int length);

/* Record the evaluation of the parameters at `version` (the counters as
 * they stand now): the schedule, the history, eval.csv. Returns true when
 * it is a new best that the caller should save as checkpoints/best, which
 * is never for the final checkpoint's own evaluation (of_final: the final
 * checkpoint becomes the best in run_final_evaluated instead). */
bool run_eval_record(Run *r, const EvalResult *res, uint64_t version, bool of_final);

/* Why the run should stop now (runctl_stop on the counters; by_actors and
 * actors_done as in RunState), or STOP_ERROR when the run's CSVs can no
 * longer be written (its record would be lost). */
StopReason run_stop_due(Run *r, bool by_actors, bool actors_done);

/* The caller's figures of a metrics row. NaN: not defined yet, or not
 * measured by this kind of run (an empty CSV cell; no TensorBoard value). */
typedef struct {
    double epsilon;               /* actor 0's exploration rate */
    double loss;                  /* mean loss over the row's interval */
    double mean_q;                /* TensorBoard only: mean Q(s, a) of the rows trained on over the
                                     interval (the local trainer; the learners do not report it) */
    double staleness_mean;        /* TensorBoard: metrics.csv's staleness_mean (distributed) */
    double bytes_per_update;      /* TensorBoard: bytes sent by all ranks / updates, this segment */
    const double *extra;          /* the values of the extra columns run_open named (NULL: none) */
} RunRowFigures;

/* Append a metrics row (the counters now, rates, training return, the
 * last evaluation, and the caller's figures f), the same figures as one
 * TensorBoard event at the row's env steps (logging.tensorboard), and
 * update the progress line, its rates over the time since the last line
 * printed (force: print it even if one was printed less than a second
 * ago). */
void run_metrics_row(Run *r, const RunRowFigures *f, bool force);

/* Where a checkpoint of this run stands: its number, the counters and time
 * it holds, its parameter shards and replay files. */
typedef struct {
    uint64_t seq, env_steps, params_version, episodes;
    double wall_seconds;
    int n_shards, n_replay;
    int n_copies, first_copy; /* learner copy files (RunCkptManifest) */
} RunPoint;

/* The manifest of a checkpoint of `kind` ("periodic", "final", "best"):
 * the point, the run's id, mode and evaluation history, and, when
 * `evaluated` (the checkpoint holds exactly the last evaluated
 * parameters), that evaluation's result. */
void run_manifest(const Run *r, const char *kind, const RunPoint *at, bool evaluated, RunCkptManifest *man);

/* The next checkpoint number. */
uint64_t run_next_seq(Run *r);

/* The final checkpoint in dir is committed / could not be written (why). */
void run_final_committed(Run *r, const char *dir);
void run_final_failed(Run *r, const char *why);

/* Whether the final checkpoint still needs its evaluation. snapshot: the
 * final checkpoint holds exactly the parameters the last evaluation saw
 * (that evaluation is then its evaluation, and none is due). None after a
 * signal (run_signalled: the user wants out now) or without a final
 * checkpoint. */
bool run_final_eval_due(Run *r, bool snapshot);

/* The final checkpoint's evaluation, of its parameters at version: recorded,
 * and when it is a new best the final checkpoint becomes checkpoints/best
 * (a warning if that fails; the run goes on). */
void run_final_evaluated(Run *r, const EvalResult *res, uint64_t version);

/* A warning that does not stop the run (a checkpoint that failed, a best
 * not saved): on stderr, after the progress line. */
void run_warn(Run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The caller's part of the end of a run. */
typedef struct {
    void *self;
    /* the last metrics row (run_metrics_row with force) */
    void (*last_row)(void *self);
    /* summary.json: the caller's figures in sum (run_gradients,
     * run_samples_trained, prioritized, stale_priority_updates), and
     * members after the common ones (NULL: none) */
    void (*summary)(void *self, RunSummary *sum);
    void (*summary_extra)(void *self, JsonW *j);
    /* trace.json (with tracing off: nothing); 0, or -1 with err */
    int (*write_trace)(void *self, char *err);
    /* lines printed before the final line (NULL: none) */
    void (*lines)(void *self);
} RunEndHooks;

/* The end of the run, stop reason r->stop: the last row, the held-out
 * test (none after a signal; a signal during it abandons it: its keys null
 * with summary.json's test_skipped saying why, and RUN_TEST_PENDING stays),
 * summary.json, trace.json, the final line and the run directory on
 * stdout. Hooks left NULL are skipped (summary.json then has the common
 * keys only). Returns the exit status: GORILA_EXIT_LOG_WRITE when the run's
 * files (a CSV, summary.json, trace.json) could not be written, else
 * GORILA_EXIT_CKPT_WRITE when the final checkpoint is missing, else 0;
 * every reason on stderr, one line each. */
int run_end(Run *r, const RunEndHooks *h);

/* A resume of a run whose training is complete (stop reason done) but
 * whose held-out test is owed (run_test_pending): after run_open, run only
 * the test of the newest checkpoint (the final one) and of
 * checkpoints/best, and end as run_end does, without a metrics row (the
 * segment trained nothing; summary.json has the common keys only).
 * Returns run_end's exit status, or GORILA_EXIT_CKPT_READ when the newest
 * checkpoint cannot be read. */
int run_test_only(Run *r, StopReason done);

void run_free(Run *r);

#endif
