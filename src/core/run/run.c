/* SPDX-License-Identifier: MIT */
/* run.c: see run.h. */
#include "run.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "env.h"
#include "exitcode.h"
#include "signals.h"

void run_init(Run *r, const Config *cfg, const Ctx *ctx, const char *mode, Trace *trace, const RunStart *s) {
    memset(r, 0, sizeof *r);
    r->cfg = cfg;
    r->ctx = ctx;
    r->mode = mode;
    r->trace = trace;
    r->t0 = s->t0 > 0 ? s->t0 : now_seconds();
    r->resumed = s->resumed;
    r->run_dir = s->resumed ? s->run_dir : NULL;
    r->env_steps = r->start_env_steps = s->env_steps;
    r->updates = r->start_updates = s->updates;
    r->episodes = r->start_episodes = s->episodes;
    r->wall_offset = s->wall_seconds;
    r->ckpt_seq = s->ckpt_seq;
    r->stop = STOP_NONE;
    double threshold = config_reward_threshold(cfg); /* NaN: none, never solved */
    evaltrack_init(&r->eval, threshold);
    if (s->resumed && s->has_history) {
        /* Keep the run's history: its first solve and its best stay. */
        r->eval = s->history;
        r->eval.threshold = threshold;
        r->eval.last_was_best = false;
    }
}

int run_open(Run *r, const char *const *extra_names, int n_extra, char *err) {
    int rc = runlog_init(&r->log, r->cfg, r->run_dir, extra_names, n_extra, err);
    if (rc != 0) return rc;
    if (r->cfg->logging.tensorboard) {
        rc = runlog_tensorboard(&r->log, r->resumed, r->env_steps, err);
        if (rc != 0) {
            runlog_free(&r->log);
            return rc;
        }
    }
    printf("run directory: %s\n", r->log.dir);
    fflush(stdout);
    if (r->resumed) {
        RunCkptManifest best;
        char berr[ERR_LEN];
        r->best_saved = runckpt_best(r->log.dir, &best, berr) == 0;
    }
    runctl_init(&r->rc, r->cfg, run_wall(r), r->env_steps, r->updates);
    r->progress_t = r->rc.row_t;
    r->progress_env_steps = r->env_steps;
    r->progress_updates = r->updates;
    return 0;
}

void run_set_abandon(Run *r, EvalAbandonFn abandon, void *arg) {
    r->abandon = abandon;
    r->abandon_arg = arg;
}

bool run_signalled(const Run *r) { return signals_stop_requested() || r->stop_asked; }

/* run_dir/RUN_TEST_PENDING into out (PATH_LEN + 16 bytes). */
static void pending_path(const char *run_dir, char *out) {
    snprintf(out, PATH_LEN + 16, "%s/%s", run_dir, RUN_TEST_PENDING);
}

bool run_test_pending(const char *run_dir) {
    char path[PATH_LEN + 16];
    pending_path(run_dir, path);
    return access(path, F_OK) == 0;
}

double run_wall(const Run *r) { return r->wall_offset + now_seconds() - r->t0; }

void run_episode(Run *r, int actor, double ret, int length) {
    runlog_episode(&r->log, run_wall(r), r->env_steps, actor, ret, length);
    /* Flushed with the next row, like episodes.csv. */
    TbScalar v = {"train/episode_return", ret};
    runlog_scalars(&r->log, r->env_steps, &v, 1, false);
    recent_add(&r->recent, ret);
    r->episodes++;
}

bool run_eval_record(Run *r, const EvalResult *res, uint64_t version, bool of_final) {
    runctl_eval_done(&r->rc, version);
    double t = run_wall(r);
    bool solved_now = evaltrack_record(&r->eval, res->mean, r->env_steps, version, t);
    EvalRow row = {t, r->env_steps, version, res->episodes, res->mean, res->std, res->min, res->max, solved_now};
    runlog_eval(&r->log, &row);
    TbScalar v = {"eval/mean_return", res->mean};
    runlog_scalars(&r->log, r->env_steps, &v, 1, true);
    r->eval_res = *res;
    r->eval_version = version;
    r->eval_env_steps = r->env_steps;
    r->eval_episodes = r->episodes;
    r->eval_wall = t;
    return r->eval.last_was_best && !of_final;
}

StopReason run_stop_due(Run *r, bool by_actors, bool actors_done) {
    RunState st = {.env_steps = r->env_steps, .updates = r->updates, .wall_seconds = run_wall(r),
                   .solved = r->eval.solved, .signal = run_signalled(r), .by_actors = by_actors,
                   .actors_done = actors_done};
    StopReason why = runctl_stop(r->cfg, &st);
    if (why == STOP_NONE && runlog_failed(&r->log)) why = STOP_ERROR;
    return why;
}

void run_metrics_row(Run *r, const RunRowFigures *f, bool force) {
    double t = run_wall(r), steps_ps, updates_ps;
    runctl_rates(&r->rc, t, r->env_steps, r->updates, &steps_ps, &updates_ps);
    MetricsRow row = {
        .wall_seconds = t,
        .env_steps = r->env_steps,
        .updates = r->updates,
        .env_steps_per_second = steps_ps,
        .updates_per_second = updates_ps,
        .mean_train_return = recent_mean(&r->recent),
        .last_eval_return = r->eval.last,
        .epsilon = f->epsilon,
        .loss = f->loss,
    };
    runlog_metrics(&r->log, &row, f->extra);
    TbScalar v[] = {
        {"train/mean_return", row.mean_train_return},
        {"train/loss", f->loss},
        {"train/mean_q", f->mean_q},
        {"train/epsilon", f->epsilon},
        {"rate/env_steps_per_second", steps_ps},
        {"rate/updates_per_second", updates_ps},
        {"dist/staleness_mean", f->staleness_mean},
        {"dist/bytes_per_update", f->bytes_per_update},
    };
    runlog_scalars(&r->log, r->env_steps, v, (int)(sizeof v / sizeof v[0]), true);
    if (!runlog_progress_due(&r->log, t, force)) return;
    double dt = t - r->progress_t;
    row.env_steps_per_second = dt > 0 ? (double)(r->env_steps - r->progress_env_steps) / dt : NAN;
    row.updates_per_second = dt > 0 ? (double)(r->updates - r->progress_updates) / dt : NAN;
    r->progress_t = t;
    r->progress_env_steps = r->env_steps;
    r->progress_updates = r->updates;
    char line[RUNCTL_LINE_LEN];
    runctl_progress_line(line, sizeof line, &row, r->eval.best);
    runlog_progress(&r->log, t, force, "%s", line);
}

void run_manifest(const Run *r, const char *kind, const RunPoint *at, bool evaluated, RunCkptManifest *man) {
    *man = (RunCkptManifest){
        .seq = at->seq, .env_steps = at->env_steps, .updates = at->params_version, .episodes = at->episodes,
        .wall_seconds = at->wall_seconds, .n_shards = at->n_shards, .n_replay = at->n_replay,
        .n_copies = at->n_copies, .first_copy = at->first_copy,
        .run_id = r->log.run_id, .params_version = at->params_version, .eval_mean = NAN,
        .has_history = 1, .history = r->eval,
    };
    snprintf(man->mode, sizeof man->mode, "%s", r->mode);
    snprintf(man->kind, sizeof man->kind, "%s", kind);
    if (evaluated) {
        man->eval_mean = r->eval_res.mean;
        man->eval_episodes = r->eval_res.episodes;
        man->eval_seed = r->cfg->eval.seed;
    }
}

uint64_t run_next_seq(Run *r) { return ++r->ckpt_seq; }

void run_final_committed(Run *r, const char *dir) {
    r->final_ok = true;
    snprintf(r->final_dir, sizeof r->final_dir, "%s", dir);
    const char *base = strrchr(dir, '/');
    snprintf(r->final_name, sizeof r->final_name, "checkpoints/%s", base ? base + 1 : dir);
    if (r->cfg->eval.test_episodes <= 0) return;
    /* The test of this checkpoint is owed from now until summary.json has
     * it: a job aborted in between leaves the file for --resume. */
    char path[PATH_LEN + 16];
    pending_path(r->log.dir, path);
    FILE *f = fopen(path, "w");
    bool bad = !f || fprintf(f, "%s\n", r->final_name) < 0;
    if (f && fclose(f) != 0) bad = true;
    if (bad)
        run_warn(r, "cannot write %s: %s (a resume would not know that the held-out test is owed)", path,
                 strerror(errno));
}

void run_final_failed(Run *r, const char *why) { snprintf(r->final_err, sizeof r->final_err, "%s", why); }

bool run_final_eval_due(Run *r, bool snapshot) {
    if (!r->final_ok) return false;
    if (snapshot) {
        r->final_evaluated = true;
        return false;
    }
    return !run_signalled(r);
}

void run_final_evaluated(Run *r, const EvalResult *res, uint64_t version) {
    run_eval_record(r, res, version, true);
    r->final_evaluated = true;
    if (!r->eval.last_was_best) return;
    /* The final checkpoint is the best: its manifest, relabelled, with
     * this evaluation and the history that includes it. */
    char err[ERR_LEN];
    RunCkptManifest man;
    if (runckpt_read_manifest(r->final_dir, &man, err) != 0) {
        run_warn(r, "best checkpoint not saved: %s", err);
        return;
    }
    snprintf(man.kind, sizeof man.kind, "best");
    man.eval_mean = r->eval_res.mean;
    man.eval_episodes = r->eval_res.episodes;
    man.eval_seed = r->cfg->eval.seed;
    man.has_history = 1;
    man.history = r->eval;
    double t0 = now_seconds();
    if (runckpt_best_from(r->log.dir, r->final_dir, &man, err) == 0) r->best_saved = true;
    else run_warn(r, "best checkpoint not saved: %s", err);
    trace_span(r->trace, TR_CKPT, t0, now_seconds(), (uint32_t)man.seq);
}

void run_warn(Run *r, const char *fmt, ...) {
    char msg[RUN_ERR_LEN + 128];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    runlog_progress_done(&r->log);
    if (r->ctx) log_info(r->ctx, "warning: %s", msg);
    else fprintf(stderr, "gorila: warning: %s\n", msg);
}

static int write_summary(Run *r, const RunEndHooks *h) {
    char err[ERR_LEN];
    FILE *f = runlog_summary_begin(&r->log, err);
    if (!f) {
        fprintf(stderr, "gorila: error: %s\n", err);
        return -1;
    }
    double t = run_wall(r);
    RunSummary sum = {
        .mode = r->mode, .env = r->cfg->env.name, .stop_reason = runctl_stop_name(r->stop),
        .seed = r->cfg->run.seed, .env_steps = r->env_steps, .updates = r->updates, .episodes = r->episodes,
        .wall_seconds = t, .eval = &r->eval, .run_seconds = t - r->wall_offset,
        .run_env_steps = r->env_steps - r->start_env_steps, .run_updates = r->updates - r->start_updates,
        .resumed = r->resumed, .final_checkpoint = r->final_ok ? r->final_name : NULL,
        .final_evaluated = r->final_evaluated, .best_checkpoint = r->best_saved ? "checkpoints/best" : NULL,
        .test = &r->test,
    };
    if (h->summary) h->summary(h->self, &sum);
    JsonW j;
    json_init(&j, f, true);
    json_begin_object(&j, NULL);
    runlog_summary_fields(&j, &sum);
    if (h->summary_extra) h->summary_extra(h->self, &j);
    json_end_object(&j);
    if (runlog_summary_commit(&r->log, f, err) != 0) {
        fprintf(stderr, "gorila: error: %s\n", err);
        return -1;
    }
    return 0;
}

/* The held-out test evaluation of the saved networks (heldout.h), none
 * after a signal (the user wants out now), and a signal during it abandons
 * it (r->abandon). Its time is left out of the run's wall time, so the
 * rates are those of training. Returns whether the test is still owed (a
 * signal kept it from running: RUN_TEST_PENDING stays for --resume). */
static bool test_eval(Run *r) {
    HeldOut *t = &r->test;
    memset(t, 0, sizeof *t);
    t->seed = r->cfg->eval.test_seed;
    t->episodes = r->cfg->eval.test_episodes;
    if (t->episodes <= 0) {
        t->skipped = "eval.test_episodes is 0";
        return false;
    }
    if (!r->best_saved && !r->final_ok) {
        t->skipped = "no checkpoint saved";
        return false;
    }
    if (run_signalled(r)) {
        t->skipped = "stopped by a signal";
        return true;
    }
    char err[ERR_LEN];
    if (heldout_run(r->cfg, r->log.dir, r->best_saved, r->final_ok ? r->final_dir : NULL, r->abandon, r->abandon_arg,
                    t, err) != 0)
        run_warn(r, "test evaluation: %s", err);
    r->t0 += t->seconds;
    if (t->interrupted) {
        t->skipped = "interrupted by a signal";
        run_warn(r, "held-out test interrupted by a signal after %.1f s: not reported", t->seconds);
        return true;
    }
    if (!t->ran) t->skipped = "no checkpoint could be read";
    return false;
}

/* The final line: runctl's, the held-out test's scores, or that it is
 * owed. */
static void final_line(const Run *r, bool owed) {
    char line[RUNCTL_LINE_LEN];
    runctl_final_line(line, sizeof line, r->cfg->env.name, &r->eval, r->env_steps, r->updates, run_wall(r), r->stop,
                      r->final_ok ? r->final_name : NULL, r->final_evaluated,
                      r->best_saved ? "checkpoints/best" : NULL);
    size_t len = strlen(line);
    if (r->test.ran) {
        char best[32] = "none", fin[32] = "none";
        if (r->test.has_best) snprintf(best, sizeof best, "%.1f", r->test.best.mean);
        if (r->test.has_final) snprintf(fin, sizeof fin, "%.1f", r->test.final.mean);
        snprintf(line + len, sizeof line - len, "; held-out test (%d episodes, seed %" PRIu64 "): best %s, final %s, %s",
                 r->test.episodes, r->test.seed, best, fin,
                 isnan(r->eval.threshold) ? "no reward threshold" : r->test.solved ? "solved" : "not solved");
    } else if (owed && r->final_ok && r->stop != STOP_SIGNAL) {
        snprintf(line + len, sizeof line - len, "; held-out test %s: --resume runs it", r->test.skipped);
    }
    printf("%s\n", line);
    printf("run directory: %s\n", r->log.dir);
    fflush(stdout);
}

int run_end(Run *r, const RunEndHooks *h) {
    if (h->last_row) h->last_row(h->self);
    runlog_progress_done(&r->log);
    bool owed = test_eval(r);
    int rc = write_summary(r, h) == 0 ? GORILA_EXIT_OK : GORILA_EXIT_LOG_WRITE;
    if (rc == GORILA_EXIT_OK && !owed) {
        char path[PATH_LEN + 16];
        pending_path(r->log.dir, path);
        if (unlink(path) != 0 && errno != ENOENT) run_warn(r, "cannot remove %s: %s", path, strerror(errno));
    }
    char err[ERR_LEN];
    if (h->write_trace && h->write_trace(h->self, err) != 0) {
        fprintf(stderr, "gorila: error: %s\n", err);
        rc = GORILA_EXIT_LOG_WRITE;
    }
    if (h->lines) h->lines(h->self);
    final_line(r, owed);
    /* Both failures are said: on a full disk the CSV write that stopped
     * the run is usually followed by a final checkpoint that fails too, and
     * the CSV's is the cause (its status wins). */
    if (!r->final_ok) {
        fprintf(stderr, "gorila: error: the final checkpoint could not be written: %s\n",
                r->final_err[0] ? r->final_err : "(no reason given)");
        rc = GORILA_EXIT_CKPT_WRITE;
    }
    if (runlog_failed(&r->log)) {
        fprintf(stderr, "gorila: error: the run's files could not be written: %s\n", r->log.fail_err);
        rc = GORILA_EXIT_LOG_WRITE;
    }
    return rc;
}

int run_test_only(Run *r, StopReason done) {
    char err[ERR_LEN];
    RunCkptManifest man;
    if (runckpt_latest(r->log.dir, &man, err) != 0) {
        fprintf(stderr, "gorila: error: cannot resume: %s\n", err);
        return GORILA_EXIT_CKPT_READ;
    }
    printf("%s: training is complete (%s) but its held-out test was not written: running only the test\n",
           r->log.dir, runctl_stop_name(done));
    fflush(stdout);
    r->stop = done;
    run_final_committed(r, man.dir);
    /* Its manifest carries an evaluation only when it holds exactly the
     * evaluated parameters (run_manifest), the history's last one. The
     * final checkpoint's own evaluation comes after its manifest; when it
     * made a new best, checkpoints/best (the same checkpoint relabelled,
     * run_final_evaluated) has it and the history that includes it. */
    r->final_evaluated = !isnan(man.eval_mean);
    RunCkptManifest best;
    if (r->best_saved && runckpt_best(r->log.dir, &best, err) == 0 && best.seq == man.seq && best.has_history &&
        best.history.evaluations > r->eval.evaluations) {
        double threshold = r->eval.threshold;
        r->eval = best.history;
        r->eval.threshold = threshold;
        r->eval.last_was_best = false;
        r->final_evaluated = true;
    }
    RunEndHooks none = {0};
    return run_end(r, &none);
}

void run_free(Run *r) {
    runlog_free(&r->log);
    runctl_free(&r->rc);
}
