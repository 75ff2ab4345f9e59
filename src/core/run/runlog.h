/* SPDX-License-Identifier: MIT */
/* runlog.h: the run directory, <run.out_dir>/<run.name>/, and everything a
 * run leaves in it:
 *   config.yaml   the effective config (loads back with gorila train)
 *   metrics.csv   one row per logging interval
 *   episodes.csv  one row per finished training episode
 *   eval.csv      one row per greedy evaluation
 *   summary.json  the final figures (written at the end, atomically)
 *   tb/           TensorBoard event files, with logging.tensorboard
 *                 (tbevents.h; runlog_tensorboard, runlog_scalars)
 *   checkpoints/  see src/core/ckpt/runckpt.h, src/core/ckpt/ckptfile.h and docs/CHECKPOINT.md
 *   lock          "PID HOST" of the process that holds the run (below)
 * plus the progress line on stderr. Used by the local trainer and by the
 * coordinator of a distributed job; no MPI in here.
 *
 * One job at a time: runlog_init takes an exclusive flock on <run>/lock
 * and one on the run directory itself (fresh and resumed runs alike; the
 * second holds when the lock file is removed) and keeps them until
 * runlog_free, so a second job or resume on the same directory stops at
 * once with GORILA_EXIT_LOCKED instead of writing the same checkpoints.
 *
 * Links: the run directory and the directories above it may be symbolic
 * links, but nothing the run writes inside it is written through one: a
 * CSV, config.yaml, tb/ or checkpoints/ that is a link is refused
 * (open_nofollow; GORILA_EXIT_LOG_WRITE for the CSVs and checkpoints/),
 * the atomic files (summary.json, run_id, checkpoint files) replace one.
 *
 * The run id: a random 64-bit number drawn when the run is created and
 * written into every checkpoint (shard headers and MANIFEST), so a shard
 * file of another run is never mistaken for this run's. A resumed run
 * keeps the id of its newest checkpoint.
 *
 * Write errors are errors: every CSV row is checked (fprintf, fflush), and
 * the first failure is kept (failed, fail_err) so the caller can stop the
 * run with GORILA_EXIT_LOG_WRITE and say what failed.
 */
#ifndef GORILA_RUNLOG_H
#define GORILA_RUNLOG_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "config.h"
#include "json.h"
#include "tbevents.h"
#include "heldout.h"

#define RUNLOG_MAX_EXTRA 48

/* The columns every metrics row has. NaN prints as an empty cell. */
typedef struct {
    double wall_seconds;
    uint64_t env_steps;
    uint64_t updates;
    double env_steps_per_second;  /* over the last interval */
    double updates_per_second;    /* over the last interval */
    double mean_train_return;     /* mean of the last 100 training episodes */
    double last_eval_return;      /* NaN before the first evaluation */
    double epsilon;
    double loss;                  /* mean loss over the interval */
} MetricsRow;

typedef struct {
    double wall_seconds;
    uint64_t env_steps, updates;
    int episodes;
    double mean, std, min, max;
    bool solved;
} EvalRow;

typedef struct {
    char dir[PATH_LEN];
    uint64_t run_id;              /* random for a fresh run; the newest checkpoint's when resumed */
    int lock_fd;                  /* <dir>/lock, flocked while locked */
    int dir_fd;                   /* <dir> itself, flocked while locked */
    bool locked;
    bool failed;                  /* a CSV or summary write failed (sticky) */
    char fail_err[ERR_LEN];       /* the first such failure */
    FILE *metrics, *episodes, *eval;
    bool tb_on;                   /* logging.tensorboard: tb is open */
    TbEvents tb;
    int n_extra;
    char extra[RUNLOG_MAX_EXTRA][48];
    uint64_t n_episodes;          /* episodes logged so far (ids; resumed: from the checkpoint's count) */
    /* progress line */
    bool progress_tty, progress_on;
    double progress_every, progress_last;
    int progress_len;             /* length of the last in-place line */
} RunLog;

/* The mean training return over the last RUNLOG_RECENT episodes. */
#define RUNLOG_RECENT 100
typedef struct {
    double ret[RUNLOG_RECENT];
    int n, next;
} RecentReturns;
void recent_add(RecentReturns *r, double ret);
double recent_mean(const RecentReturns *r); /* NaN before the first episode */

/* Greedy evaluations of a run: last, best, and when it was first solved.
 * Each evaluation is of one known set of parameters: `version` is the
 * optimizer steps they had (shard 0's version in a distributed job). */
typedef struct {
    double threshold;          /* the env's reward threshold */
    int evaluations;
    double last, best;         /* NaN before the first evaluation */
    bool last_was_best;        /* the last recorded evaluation set a new best */
    uint64_t best_env_steps, best_version;
    double best_seconds;
    bool solved;
    uint64_t solved_at_env_steps, solved_at_version;
    double solved_at_seconds;
} EvalTrack;
void evaltrack_init(EvalTrack *t, double threshold);
/* Record one evaluation's mean, of parameters at `version`, taken at
 * env_steps and wall_seconds; returns whether it reached the threshold.
 * A new best needs a strictly higher mean (the first evaluation is one). */
bool evaltrack_record(EvalTrack *t, double mean, uint64_t env_steps, uint64_t version, double wall_seconds);

/* The keys every summary.json has (local and distributed alike). */
typedef struct {
    const char *mode, *env, *stop_reason;
    uint64_t seed, env_steps, updates, episodes;
    double wall_seconds;          /* the whole run, across resumes */
    const EvalTrack *eval;
    /* this process's share, for the rates (a resumed run counts only
     * what it did itself) */
    double run_seconds;
    uint64_t run_env_steps, run_updates;
    /* this process's learning work: gradients computed (a ps_sync update
     * averages one per learner) and the batch rows they were computed on */
    uint64_t run_gradients, run_samples_trained;
    bool resumed;
    /* the checkpoints the figures belong to, relative to the run directory
     * ("checkpoints/best", "checkpoints/ckpt-000007"); NULL: none */
    const char *best_checkpoint, *final_checkpoint;
    /* eval->last is of final_checkpoint (else last_eval_mean_return is null) */
    bool final_evaluated;
    /* replay.kind prioritized: priority updates ignored because the slot
     * was overwritten since it was sampled (this process's segment);
     * written as null with uniform replay */
    bool prioritized;
    uint64_t stale_priority_updates;
    /* the held-out test evaluation (heldout.h); NULL: not configured */
    const HeldOut *test;
} RunSummary;
/* Write the keys of s as members of the JSON object open in j. */
void runlog_summary_fields(JsonW *j, const RunSummary *s);

/* Create (or, with resume, reopen) the run directory. A fresh run takes
 * <out_dir>/<name>; if that exists, <name>-2, <name>-3, ... so runs are
 * never overwritten; resume_dir, when not NULL, is used as is and its CSVs
 * are appended to, after each is cut back to its last complete row (a row
 * torn by a failed write: the bytes after the last newline, and, under
 * this run's own header, last lines of another field count), with a
 * "gorila: warning: FILE: cut N bytes ..." line on stderr per file cut,
 * and then back to the rows logged at or before the checkpoint the resume
 * continues from (the newest intact one, as runckpt_latest chooses; rows
 * at its env steps stay unless their updates are above a live
 * checkpoint's): runlog_cut_after, with a "gorila: resume: FILE: dropped N
 * rows logged after checkpoint ckpt-NNNNNN (env steps > S)" line per file
 * cut, ", or updates > U)" when rows at or below S went
 * (docs/OUTPUTS.md). extra_names: additional metrics columns (copied).
 * Takes the run directory's lock, sets rl->run_id, writes config.yaml.
 * Returns 0, or an exit status of exitcode.h with a message in err:
 *   GORILA_EXIT_LOCKED     another process holds the lock: "run directory X
 *                          is in use by process PID on HOST (another job or
 *                          resume is running)"
 *   GORILA_EXIT_CKPT_READ  resumed, but no intact checkpoint gives the run id
 *   GORILA_EXIT_LOG_WRITE  config.yaml, a CSV, run_id or the lock file's
 *                          text cannot be written
 *   GORILA_EXIT_USAGE      a set-up fault: run.out_dir cannot be created or
 *                          is not a directory ("run.out_dir: X exists and is
 *                          not a directory"), the run directory cannot be
 *                          created in it, or no lock file can be made in
 *                          it; a path too long, too many runs of that name,
 *                          too many metrics columns
 * On failure nothing is held (rl is as after runlog_free). */
int runlog_init(RunLog *rl, const Config *cfg, const char *resume_dir, const char *const *extra_names,
                int n_extra, char *err);
/* The point a CSV is cut back to (runlog_cut_after): a checkpoint's env
 * steps and updates (UINT64_MAX: the updates do not bound the cut). */
typedef struct {
    uint64_t env_steps, updates;
} RunlogCutPoint;

/* Cut the CSV at path back to the rows logged at or before the point at:
 * the columns named env_steps and updates in its header (its first line)
 * say when a row was logged, and every row whose env_steps cell is a whole
 * number above at->env_steps, or whose updates cell is one above
 * at->updates, goes, wherever it stands (rows need not be in order: a file
 * an older build's resume left with two overlapping stretches); the header
 * and every other row keep their bytes and order, a row without such
 * cells included. A file without an env_steps column, a missing file and
 * anything but a regular file are left alone; one without an updates
 * column (episodes.csv) is cut by env steps alone. Rows only at the end
 * are cut in place (ftruncate); otherwise the file is rewritten through a
 * temporary (<path>.cut.tmp) renamed over it. A link at path is refused
 * (open_nofollow). *dropped: the rows cut; *by_updates: of those, the ones
 * at or below at->env_steps (cut for their updates). 0, or -1 with err. */
int runlog_cut_after(const char *path, const RunlogCutPoint *at, uint64_t *dropped, uint64_t *by_updates,
                     char *err);

/* Close the CSVs and the events file (a failing close is recorded as a
 * write failure: check runlog_failed afterwards when it matters) and
 * release the lock. Safe on a zeroed or already freed RunLog. */
void runlog_free(RunLog *rl);

/* Append rows. metrics and eval rows are flushed at once, episode rows at
 * the next eval row (so a killed run keeps its rows). Each returns 0, or -1
 * when this write or an earlier one failed; the first failure's message
 * ("cannot write runs/x/metrics.csv: No space left on device") stays in
 * rl->fail_err. */
int runlog_metrics(RunLog *rl, const MetricsRow *row, const double *extra);
int runlog_episode(RunLog *rl, double wall_seconds, uint64_t env_steps, int actor, double ret, int length);
int runlog_eval(RunLog *rl, const EvalRow *row);

/* logging.tensorboard: open a new events file in <dir>/tb/ (tbevents_init;
 * resumed: it starts with a SessionLog START at env step `step`). Returns
 * 0, or GORILA_EXIT_USAGE with err ("logging.tensorboard: cannot use
 * runs/x/tb: it exists and is not a directory") when
 * the directory or file cannot be made or written: a set-up fault found
 * before training starts. */
int runlog_tensorboard(RunLog *rl, bool resumed, uint64_t step, char *err);
/* One TensorBoard event at env step `step` with the values of v[0 .. n)
 * that are not NaN (tbevents_scalars); flush as there. Nothing without
 * logging.tensorboard. Returns 0, or -1 when this write or an earlier one
 * of the run's files failed (the first failure kept as for the CSVs). */
int runlog_scalars(RunLog *rl, uint64_t step, const TbScalar *v, int n, bool flush);

/* Whether any CSV or summary write has failed (message in rl->fail_err). */
bool runlog_failed(const RunLog *rl);

/* Path helper: <dir>/<name> into out (PATH_LEN). */
void runlog_path(const RunLog *rl, const char *name, char *out);

/* Open <dir>/summary.json.tmp for writing; runlog_summary_commit flushes,
 * fsyncs and closes it, renames it over summary.json (so a summary is never
 * half-written) and fsyncs the directory. Each returns NULL / -1 with err
 * naming the file and the step that failed (also kept as the sticky
 * failure); the temporary is removed. */
FILE *runlog_summary_begin(RunLog *rl, char *err);
int runlog_summary_commit(RunLog *rl, FILE *f, char *err);

/* Progress line on stderr: in place on a terminal (every 0.5 s), else one
 * line every max(interval, 5) seconds; logging.progress overrides. `force`
 * prints regardless of timing (final line). */
void runlog_progress(RunLog *rl, double wall, bool force, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Whether runlog_progress at `wall` (and force) would print. */
bool runlog_progress_due(const RunLog *rl, double wall, bool force);
/* End an in-place progress line (newline) before other output. */
void runlog_progress_done(RunLog *rl);

#endif
