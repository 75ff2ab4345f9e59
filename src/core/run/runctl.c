/* SPDX-License-Identifier: MIT */
/* runctl.c: see runctl.h. */
#include "runctl.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

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

StopReason runctl_stop(const Config *cfg, const RunState *s) {
    uint64_t max_steps = cfg->run.max_env_steps;
    if (s->solved && cfg->run.stop_when_solved) return STOP_SOLVED;
    if (max_steps && (s->by_actors ? s->actors_done : s->env_steps >= max_steps)) return STOP_BUDGET;
    if (cfg->run.max_updates && s->updates >= cfg->run.max_updates) return STOP_BUDGET;
    if (cfg->run.max_seconds > 0 && s->wall_seconds >= cfg->run.max_seconds) return STOP_TIME;
    if (s->signal) return STOP_SIGNAL;
    return STOP_NONE;
}

/* The first multiple of every above n; UINT64_MAX (never) when every is 0. */
static uint64_t next_multiple(uint64_t n, uint64_t every) {
    return every ? (n / every + 1) * every : UINT64_MAX;
}

void runctl_init(RunCtl *rc, const Config *cfg, double wall, uint64_t env_steps, uint64_t updates) {
    memset(rc, 0, sizeof *rc);
    rc->eval_every = cfg->eval.every_updates;
    rc->next_eval_updates = next_multiple(updates, rc->eval_every);
    rc->ckpt_every_seconds = cfg->checkpoint.every_seconds;
    rc->next_ckpt_seconds = rc->ckpt_every_seconds > 0 ? rc->ckpt_every_seconds : INFINITY;
    rc->ckpt_every_updates = cfg->checkpoint.every_updates;
    rc->next_ckpt_updates = next_multiple(updates, rc->ckpt_every_updates);
    rc->row_every = cfg->logging.interval_seconds;
    rc->next_row = wall + rc->row_every;
    rc->row_every_env_steps = cfg->logging.metrics_every_env_steps;
    rc->next_row_env_steps = next_multiple(env_steps, rc->row_every_env_steps);
    rc->row_every_updates = cfg->logging.metrics_every_updates;
    rc->next_row_updates = next_multiple(updates, rc->row_every_updates);
    rc->row_t = wall;
    rc->row_env_steps = env_steps;
    rc->row_updates = updates;
}

void runctl_free(RunCtl *rc) { memset(rc, 0, sizeof *rc); }

bool runctl_eval_due(RunCtl *rc, uint64_t updates) {
    if (updates < rc->next_eval_updates) return false;
    rc->next_eval_updates = next_multiple(updates, rc->eval_every);
    return true;
}

void runctl_eval_done(RunCtl *rc, uint64_t updates) {
    rc->evaluated = true;
    rc->last_eval_updates = updates;
}

bool runctl_final_eval_due(const RunCtl *rc, StopReason stop, uint64_t updates) {
    if (stop == STOP_SIGNAL) return false;
    return !(rc->evaluated && rc->last_eval_updates == updates);
}

bool runctl_ckpt_due(RunCtl *rc, double run_seconds, uint64_t updates, bool requested) {
    bool by_time = run_seconds >= rc->next_ckpt_seconds;
    bool by_updates = updates >= rc->next_ckpt_updates;
    /* Both schedules move when both fired, so one checkpoint serves both. */
    if (by_time) rc->next_ckpt_seconds = run_seconds + rc->ckpt_every_seconds;
    if (by_updates) rc->next_ckpt_updates = next_multiple(updates, rc->ckpt_every_updates);
    return requested || by_time || by_updates;
}

bool runctl_row_due(RunCtl *rc, double wall, uint64_t env_steps, uint64_t updates) {
    bool by_steps = env_steps >= rc->next_row_env_steps;
    bool by_updates = updates >= rc->next_row_updates;
    if (!by_steps && !by_updates && wall < rc->next_row) return false;
    if (by_steps) rc->next_row_env_steps = next_multiple(env_steps, rc->row_every_env_steps);
    if (by_updates) rc->next_row_updates = next_multiple(updates, rc->row_every_updates);
    rc->next_row = wall + rc->row_every;
    return true;
}

void runctl_rates(RunCtl *rc, double wall, uint64_t env_steps, uint64_t updates, double *env_steps_per_second,
                  double *updates_per_second) {
    double dt = wall - rc->row_t;
    *env_steps_per_second = dt > 0 ? (double)(env_steps - rc->row_env_steps) / dt : NAN;
    *updates_per_second = dt > 0 ? (double)(updates - rc->row_updates) / dt : NAN;
    rc->row_t = wall;
    rc->row_env_steps = env_steps;
    rc->row_updates = updates;
}

/* v with fmt into buf, or "-" where there is no value yet (NaN: no
 * evaluation, no finished episode, no interval for a rate). */
static const char *num_or_dash(char *buf, size_t size, const char *fmt, double v) {
    if (isnan(v)) return "-";
    snprintf(buf, size, fmt, v);
    return buf;
}

void runctl_progress_line(char *out, size_t size, const MetricsRow *row, double best_eval) {
    if (size == 0) return;
    char sps[32], ups[32], ret[32], ev[32], best[32];
    snprintf(out, size,
             "[%7.1fs] steps %" PRIu64 " (%s/s)  updates %" PRIu64 " (%s/s)  eps %.3f  return %s  eval %s (best %s)",
             row->wall_seconds, row->env_steps, num_or_dash(sps, sizeof sps, "%.0f", row->env_steps_per_second),
             row->updates, num_or_dash(ups, sizeof ups, "%.0f", row->updates_per_second), row->epsilon,
             num_or_dash(ret, sizeof ret, "%.1f", row->mean_train_return),
             num_or_dash(ev, sizeof ev, "%.1f", row->last_eval_return), num_or_dash(best, sizeof best, "%.1f", best_eval));
}

void runctl_final_line(char *out, size_t size, const char *env, const EvalTrack *e, uint64_t env_steps,
                       uint64_t updates, double wall_seconds, StopReason stop, const char *final_ckpt,
                       bool final_evaluated, const char *best_ckpt) {
    size_t n = 0;
#define ADD(...)                                                               \
    do {                                                                       \
        if (n < size) {                                                        \
            int k_ = snprintf(out + n, size - n, __VA_ARGS__);                 \
            n += k_ > 0 ? (size_t)k_ : 0;                                      \
        }                                                                      \
    } while (0)
    if (size == 0) return;
    out[0] = '\0';
    if (e->solved)
        ADD("%s: solved at %" PRIu64 " env steps, %" PRIu64 " updates, %.1f s", env, e->solved_at_env_steps,
            e->solved_at_version, e->solved_at_seconds);
    else if (isnan(e->threshold) && e->evaluations > 0) /* never solved: say why, not "not solved" */
        ADD("%s: no reward threshold (best eval %.1f at %" PRIu64 " env steps)", env, e->best, e->best_env_steps);
    else if (isnan(e->threshold))
        ADD("%s: no reward threshold (no evaluation)", env);
    else if (e->evaluations > 0)
        ADD("%s: not solved (best eval %.1f at %" PRIu64 " env steps)", env, e->best, e->best_env_steps);
    else
        ADD("%s: not solved (no evaluation)", env);
    ADD("; stopped (%s) after %" PRIu64 " env steps, %" PRIu64 " updates, %.1f s", runctl_stop_name(stop),
        env_steps, updates, wall_seconds);
    if (!final_ckpt) ADD("; no final checkpoint");
    else if (final_evaluated) ADD("; final checkpoint %s: eval %.1f", final_ckpt, e->last);
    else ADD("; final checkpoint %s (not evaluated)", final_ckpt);
    if (best_ckpt) ADD("; best %.1f (%s)", e->best, best_ckpt);
#undef ADD
}

StopReason runctl_resume_done(const Config *cfg, uint64_t env_steps, uint64_t updates, double wall_seconds, bool solved) {
    RunState st = {.env_steps = env_steps, .updates = updates, .wall_seconds = wall_seconds, .solved = solved};
    return runctl_stop(cfg, &st);
}

void runctl_done_line(char *out, size_t size, const char *run_dir, StopReason why, uint64_t env_steps,
                      uint64_t updates, const EvalTrack *history) {
    const char *hint = "";
    switch (why) {
    case STOP_SOLVED: hint = "set run.stop_when_solved=false"; break;
    case STOP_BUDGET: hint = "raise run.max_env_steps or run.max_updates"; break;
    case STOP_TIME: hint = "raise run.max_seconds"; break;
    default: hint = "change the limits"; break;
    }
    char solved[128] = "";
    if (why == STOP_SOLVED && history && history->solved)
        snprintf(solved, sizeof solved, " at %" PRIu64 " env steps", history->solved_at_env_steps);
    snprintf(out, size,
             "%s is already complete (%s%s; its checkpoint is at %" PRIu64 " env steps, %" PRIu64 " updates): nothing to do; "
             "%s with --set to continue it",
             run_dir, why == STOP_SOLVED ? "solved" : runctl_stop_name(why), solved, env_steps,
             updates, hint);
}
