/* runlog.c: see runlog.h. */
#include "runlog.h"
#include "util.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* mkdir -p for one path; 0 or -1 with err. */
static int make_dirs(const char *path, char *err) {
    char tmp[PATH_LEN];
    if (snprintf(tmp, sizeof tmp, "%s", path) >= (int)sizeof tmp) return errf(err, "path too long: %s", path);
    for (char *p = tmp + 1; *p; p++) {
        if (*p != '/') continue;
        *p = '\0';
        if (mkdir(tmp, 0777) != 0 && errno != EEXIST)
            return errf(err, "cannot create directory %s: %s", tmp, strerror(errno));
        *p = '/';
    }
    if (mkdir(tmp, 0777) != 0 && errno != EEXIST)
        return errf(err, "cannot create directory %s: %s", tmp, strerror(errno));
    struct stat st;
    if (stat(tmp, &st) != 0 || !S_ISDIR(st.st_mode)) return errf(err, "%s exists and is not a directory", tmp);
    return 0;
}

void runlog_path(const RunLog *rl, const char *name, char *out) {
    /* runlog_init keeps dir 64 bytes short of the limit, so names up to 63
     * characters always fit; a longer one is cut, never overflows. */
    if (snprintf(out, PATH_LEN, "%s/%s", rl->dir, name) >= PATH_LEN) out[PATH_LEN - 1] = '\0';
}

static FILE *open_csv(RunLog *rl, const char *name, bool append, const char *header, char *err) {
    char path[PATH_LEN];
    runlog_path(rl, name, path);
    struct stat st;
    bool has_rows = append && stat(path, &st) == 0 && st.st_size > 0;
    FILE *f = fopen(path, append ? "a" : "w");
    if (!f) {
        errf(err, "cannot open %s: %s", path, strerror(errno));
        return NULL;
    }
    if (!has_rows) fputs(header, f);
    fflush(f);
    return f;
}

int runlog_init(RunLog *rl, const Config *cfg, const char *resume_dir, const char *const *extra_names,
                int n_extra, char *err) {
    memset(rl, 0, sizeof *rl);
    if (n_extra > RUNLOG_MAX_EXTRA) return errf(err, "too many metrics columns (%d)", n_extra);
    rl->n_extra = n_extra;
    for (int i = 0; i < n_extra; i++) snprintf(rl->extra[i], sizeof rl->extra[i], "%s", extra_names[i]);
    bool resume = resume_dir != NULL;
    if (resume) {
        if (snprintf(rl->dir, sizeof rl->dir, "%s", resume_dir) >= (int)sizeof rl->dir - 64)
            return errf(err, "run directory path too long");
    } else {
        if (make_dirs(cfg->run.out_dir, err) != 0) return -1;
        for (int k = 1;; k++) {
            int n = k == 1 ? snprintf(rl->dir, sizeof rl->dir, "%s/%s", cfg->run.out_dir, cfg->run.name)
                           : snprintf(rl->dir, sizeof rl->dir, "%s/%s-%d", cfg->run.out_dir, cfg->run.name, k);
            if (n >= (int)sizeof rl->dir - 64) return errf(err, "run directory path too long");
            if (mkdir(rl->dir, 0777) == 0) break;
            if (errno != EEXIST) return errf(err, "cannot create run directory %s: %s", rl->dir, strerror(errno));
            if (k > 9999) return errf(err, "too many runs named %s in %s", cfg->run.name, cfg->run.out_dir);
        }
    }
    char path[PATH_LEN];
    runlog_path(rl, "config.yaml", path);
    if (!resume) {
        FILE *f = fopen(path, "w");
        if (!f) return errf(err, "cannot write %s: %s", path, strerror(errno));
        config_write(cfg, f);
        if (fclose(f) != 0) return errf(err, "cannot write %s: %s", path, strerror(errno));
    }
    char header[4096];
    int n = snprintf(header, sizeof header,
                     "wall_seconds,env_steps,updates,env_steps_per_second,updates_per_second,"
                     "mean_train_return,last_eval_return,epsilon,loss");
    for (int i = 0; i < n_extra && n < (int)sizeof header - 64; i++)
        n += snprintf(header + n, sizeof header - (size_t)n, ",%s", rl->extra[i]);
    snprintf(header + n, sizeof header - (size_t)n, "\n");
    rl->metrics = open_csv(rl, "metrics.csv", resume, header, err);
    if (!rl->metrics) return -1;
    rl->episodes = open_csv(rl, "episodes.csv", resume, "wall_seconds,env_steps,actor,episode,return,length\n", err);
    if (!rl->episodes) return -1;
    rl->eval = open_csv(rl, "eval.csv", resume,
                        "wall_seconds,env_steps,updates,episodes,mean_return,std_return,min_return,max_return,"
                        "solved\n",
                        err);
    if (!rl->eval) return -1;
    rl->progress_tty = isatty(STDERR_FILENO);
    rl->progress_on = cfg->logging.progress == PROGRESS_ALWAYS ||
                      (cfg->logging.progress == PROGRESS_AUTO);
    rl->progress_every = rl->progress_tty ? 0.5 : (cfg->logging.interval_seconds > 5 ? cfg->logging.interval_seconds : 5);
    rl->progress_last = -1e30;
    return 0;
}

void runlog_free(RunLog *rl) {
    runlog_progress_done(rl);
    if (rl->metrics) fclose(rl->metrics);
    if (rl->episodes) fclose(rl->episodes);
    if (rl->eval) fclose(rl->eval);
    rl->metrics = rl->episodes = rl->eval = NULL;
}

static void cell(FILE *f, double v) {
    if (isfinite(v)) fprintf(f, ",%.6g", v);
    else fputc(',', f);
}

void runlog_metrics(RunLog *rl, const MetricsRow *r, const double *extra) {
    FILE *f = rl->metrics;
    fprintf(f, "%.3f,%llu,%llu", r->wall_seconds, (unsigned long long)r->env_steps, (unsigned long long)r->updates);
    cell(f, r->env_steps_per_second);
    cell(f, r->updates_per_second);
    cell(f, r->mean_train_return);
    cell(f, r->last_eval_return);
    cell(f, r->epsilon);
    cell(f, r->loss);
    for (int i = 0; i < rl->n_extra; i++) cell(f, extra[i]);
    fputc('\n', f);
    fflush(f);
}

void runlog_episode(RunLog *rl, double wall_seconds, uint64_t env_steps, int actor, double ret, int length) {
    fprintf(rl->episodes, "%.3f,%llu,%d,%llu,%.10g,%d\n", wall_seconds, (unsigned long long)env_steps, actor,
            (unsigned long long)rl->n_episodes, ret, length);
    rl->n_episodes++;
}

void runlog_eval(RunLog *rl, const EvalRow *r) {
    fprintf(rl->eval, "%.3f,%llu,%llu,%d,%.10g,%.10g,%.10g,%.10g,%d\n", r->wall_seconds,
            (unsigned long long)r->env_steps, (unsigned long long)r->updates, r->episodes, r->mean, r->std, r->min,
            r->max, r->solved ? 1 : 0);
    fflush(rl->eval);
    fflush(rl->episodes);
}

FILE *runlog_summary_begin(RunLog *rl, char *err) {
    char path[PATH_LEN];
    runlog_path(rl, "summary.json.tmp", path);
    int fd = open_tmp_exclusive(path);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
        errf(err, "cannot write %s: %s", path, strerror(errno));
        if (fd >= 0) close(fd);
    }
    return f;
}

int runlog_summary_commit(RunLog *rl, FILE *f, char *err) {
    char tmp[PATH_LEN], path[PATH_LEN];
    runlog_path(rl, "summary.json.tmp", tmp);
    runlog_path(rl, "summary.json", path);
    bool bad = ferror(f) != 0;
    if (fflush(f) != 0 || fsync(fileno(f)) != 0) bad = true;
    if (fclose(f) != 0) bad = true;
    if (bad) {
        unlink(tmp);
        return errf(err, "cannot write %s: %s", tmp, strerror(errno));
    }
    if (rename(tmp, path) != 0) return errf(err, "cannot rename %s to %s: %s", tmp, path, strerror(errno));
    return 0;
}

void runlog_progress(RunLog *rl, double wall, bool force, const char *fmt, ...) {
    if (!rl->progress_on && !force) return;
    if (!force && wall - rl->progress_last < rl->progress_every) return;
    rl->progress_last = wall;
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if (n >= (int)sizeof line) n = (int)sizeof line - 1;
    if (rl->progress_tty) {
        /* Rewrite in place; pad to erase a longer previous line. */
        int pad = rl->progress_len > n ? rl->progress_len - n : 0;
        fprintf(stderr, "\r%s%*s", line, pad, "");
        rl->progress_len = n;
        if (force) runlog_progress_done(rl);
    } else {
        fprintf(stderr, "%s\n", line);
    }
    fflush(stderr);
}

void runlog_progress_done(RunLog *rl) {
    if (rl->progress_tty && rl->progress_len > 0) {
        fputc('\n', stderr);
        fflush(stderr);
    }
    rl->progress_len = 0;
}

void recent_add(RecentReturns *r, double ret) {
    r->ret[r->next] = ret;
    r->next = (r->next + 1) % RUNLOG_RECENT;
    if (r->n < RUNLOG_RECENT) r->n++;
}

double recent_mean(const RecentReturns *r) {
    if (r->n == 0) return NAN;
    double s = 0;
    for (int i = 0; i < r->n; i++) s += r->ret[i];
    return s / r->n;
}

void evaltrack_init(EvalTrack *t, double threshold) {
    memset(t, 0, sizeof *t);
    t->threshold = threshold;
    t->last = t->best = NAN;
}

bool evaltrack_record(EvalTrack *t, double mean, uint64_t env_steps, uint64_t version, double wall_seconds) {
    t->evaluations++;
    t->last = mean;
    t->last_was_best = t->evaluations == 1 || isnan(t->best) || mean > t->best;
    if (t->last_was_best) {
        t->best = mean;
        t->best_env_steps = env_steps;
        t->best_version = version;
        t->best_seconds = wall_seconds;
    }
    bool solved_now = mean >= t->threshold;
    if (solved_now && !t->solved) {
        t->solved = true;
        t->solved_at_env_steps = env_steps;
        t->solved_at_version = version;
        t->solved_at_seconds = wall_seconds;
    }
    return solved_now;
}

static void str_or_null(JsonW *j, const char *key, const char *v) {
    if (v) json_str(j, key, v);
    else json_null(j, key);
}

void runlog_summary_fields(JsonW *j, const RunSummary *s) {
    const EvalTrack *e = s->eval;
    json_str(j, "mode", s->mode);
    json_str(j, "env", s->env);
    json_u64(j, "seed", s->seed);
    json_bool(j, "solved", e->solved);
    if (e->solved) {
        json_u64(j, "solved_at_env_steps", e->solved_at_env_steps);
        json_u64(j, "solved_at_updates", e->solved_at_version);
        json_num(j, "solved_at_seconds", e->solved_at_seconds);
    } else {
        json_null(j, "solved_at_env_steps");
        json_null(j, "solved_at_updates");
        json_null(j, "solved_at_seconds");
    }
    json_u64(j, "env_steps", s->env_steps);
    json_u64(j, "updates", s->updates);
    json_u64(j, "episodes", s->episodes);
    json_num(j, "wall_seconds", s->wall_seconds);
    str_or_null(j, "final_checkpoint", s->final_checkpoint);
    /* of final_checkpoint; null when it was not evaluated (a signal stop) */
    json_num(j, "last_eval_mean_return", s->final_evaluated ? e->last : NAN);
    str_or_null(j, "best_checkpoint", s->best_checkpoint);
    json_num(j, "best_eval_mean_return", e->best); /* of best_checkpoint when there is one */
    if (e->evaluations > 0) {
        json_u64(j, "best_at_env_steps", e->best_env_steps);
        json_u64(j, "best_at_updates", e->best_version);
    } else {
        json_null(j, "best_at_env_steps");
        json_null(j, "best_at_updates");
    }
    json_num(j, "reward_threshold", e->threshold);
    json_u64(j, "evaluations", (uint64_t)e->evaluations);
    double t = s->run_seconds;
    json_num(j, "env_steps_per_second", t > 0 ? (double)s->run_env_steps / t : 0);
    json_num(j, "updates_per_second", t > 0 ? (double)s->run_updates / t : 0);
    json_str(j, "stop_reason", s->stop_reason);
    json_bool(j, "resumed", s->resumed);
}
