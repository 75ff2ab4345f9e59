/* SPDX-License-Identifier: MIT */
/* test_runctl.c: run control (runctl.h), the rules the local trainer and
 * the coordinator share: the stop decision and its precedence, the
 * evaluation, checkpoint and metrics-row schedules at their boundaries,
 * the rates and the progress line. Every expected value is worked out by
 * hand in the comment beside it. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "config.h"
#include "runctl.h"

/* Budgets for the stop tests: 1000 env steps, 500 updates, 60 s, stop when
 * solved. Schedules off unless a test sets them. */
static Config limits(void) {
    Config cfg;
    config_defaults(&cfg);
    cfg.run.max_env_steps = 1000;
    cfg.run.max_updates = 500;
    cfg.run.max_seconds = 60;
    cfg.run.stop_when_solved = true;
    cfg.eval.every_updates = 0;
    cfg.checkpoint.every_seconds = 0;
    cfg.checkpoint.every_updates = 0;
    cfg.logging.interval_seconds = 2;
    cfg.logging.metrics_every_env_steps = 0;
    cfg.logging.metrics_every_updates = 0;
    return cfg;
}

/* Just under every limit. */
static RunState under(void) {
    return (RunState){.env_steps = 999, .updates = 499, .wall_seconds = 59.5};
}

Test(runctl, stop_names_are_the_summary_values) {
    cr_assert_str_eq(runctl_stop_name(STOP_NONE), "none");
    cr_assert_str_eq(runctl_stop_name(STOP_BUDGET), "budget");
    cr_assert_str_eq(runctl_stop_name(STOP_SOLVED), "solved");
    cr_assert_str_eq(runctl_stop_name(STOP_TIME), "time");
    cr_assert_str_eq(runctl_stop_name(STOP_SIGNAL), "signal");
    cr_assert_str_eq(runctl_stop_name(STOP_ERROR), "error");
}

Test(runctl, stop_none_just_under_every_limit) {
    Config cfg = limits();
    RunState s = under();
    cr_assert_eq(runctl_stop(&cfg, &s), STOP_NONE);
}

Test(runctl, stop_each_reason_alone_at_its_boundary) {
    Config cfg = limits();
    RunState s = under();
    s.env_steps = 1000;  /* = max_env_steps */
    cr_assert_eq(runctl_stop(&cfg, &s), STOP_BUDGET, "env-step budget");
    s = under();
    s.updates = 500;     /* = max_updates */
    cr_assert_eq(runctl_stop(&cfg, &s), STOP_BUDGET, "update budget");
    s = under();
    s.wall_seconds = 60; /* = max_seconds */
    cr_assert_eq(runctl_stop(&cfg, &s), STOP_TIME);
    s = under();
    s.solved = true;
    cr_assert_eq(runctl_stop(&cfg, &s), STOP_SOLVED);
    s = under();
    s.signal = true;
    cr_assert_eq(runctl_stop(&cfg, &s), STOP_SIGNAL);
}

Test(runctl, stop_zero_limits_and_solved_without_stop_when_solved) {
    Config cfg = limits();
    cfg.run.max_env_steps = 0;
    cfg.run.max_updates = 0;
    cfg.run.max_seconds = 0;
    cfg.run.stop_when_solved = false;
    RunState s = {.env_steps = 1000000000, .updates = 1000000000, .wall_seconds = 1e9, .solved = true};
    cr_assert_eq(runctl_stop(&cfg, &s), STOP_NONE, "0 means no limit; solved alone does not stop");
    s.signal = true;
    cr_assert_eq(runctl_stop(&cfg, &s), STOP_SIGNAL);
}

Test(runctl, stop_distributed_env_budget_is_the_actors_word) {
    Config cfg = limits();
    RunState s = under();
    s.by_actors = true;
    s.env_steps = 5000;  /* past 1000, but the actors are still at it */
    cr_assert_eq(runctl_stop(&cfg, &s), STOP_NONE);
    s.env_steps = 10;    /* reports lag: the actors' word counts */
    s.actors_done = true;
    cr_assert_eq(runctl_stop(&cfg, &s), STOP_BUDGET);
    cfg.run.max_env_steps = 0; /* no env-step budget: actors done means nothing */
    cr_assert_eq(runctl_stop(&cfg, &s), STOP_NONE);
}

/* Precedence: solved, then budget (env steps, updates), then time, then
 * signal; the first that holds wins. */
Test(runctl, stop_precedence) {
    static const struct {
        bool solved, steps, updates, time, signal;
        StopReason want;
    } cases[] = {
        {true, true, true, true, true, STOP_SOLVED},
        {true, false, false, false, true, STOP_SOLVED},
        {false, true, true, true, true, STOP_BUDGET},
        {false, true, false, false, true, STOP_BUDGET},
        {false, false, true, true, true, STOP_BUDGET},
        {false, false, true, false, true, STOP_BUDGET},
        {false, false, false, true, true, STOP_TIME},
        {false, false, false, false, true, STOP_SIGNAL},
    };
    Config cfg = limits();
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        RunState s = under();
        s.solved = cases[i].solved;
        if (cases[i].steps) s.env_steps = 1000;
        if (cases[i].updates) s.updates = 500;
        if (cases[i].time) s.wall_seconds = 60;
        s.signal = cases[i].signal;
        StopReason got = runctl_stop(&cfg, &s);
        cr_assert_eq(got, cases[i].want, "case %zu: got %s, want %s", i, runctl_stop_name(got),
                     runctl_stop_name(cases[i].want));
    }
}

Test(runctl, eval_due_at_each_multiple_once) {
    Config cfg = limits();
    cfg.eval.every_updates = 100;
    RunCtl rc;
    runctl_init(&rc, &cfg, 0, 0, 0);
    cr_assert(!runctl_eval_due(&rc, 0));
    cr_assert(!runctl_eval_due(&rc, 99));
    cr_assert(runctl_eval_due(&rc, 100));
    cr_assert(!runctl_eval_due(&rc, 100), "no second evaluation at 100");
    cr_assert(!runctl_eval_due(&rc, 199));
    cr_assert(runctl_eval_due(&rc, 200));
    /* a jump from 200 to 730 passes 300..700: one evaluation, the next at 800 */
    cr_assert(runctl_eval_due(&rc, 730));
    cr_assert(!runctl_eval_due(&rc, 730));
    cr_assert(!runctl_eval_due(&rc, 799));
    cr_assert(runctl_eval_due(&rc, 800));
    runctl_free(&rc);
}

Test(runctl, eval_one_update_at_a_time_fires_at_every_multiple) {
    /* the trainer asks after every update: 1..1000 with every 100 gives
     * 100, 200, ..., 1000, ten evaluations */
    Config cfg = limits();
    cfg.eval.every_updates = 100;
    RunCtl rc;
    runctl_init(&rc, &cfg, 0, 0, 0);
    int n = 0;
    for (uint64_t u = 1; u <= 1000; u++) {
        if (runctl_eval_due(&rc, u)) {
            cr_assert_eq(u % 100, 0, "evaluated at %llu", (unsigned long long)u);
            n++;
        }
    }
    cr_assert_eq(n, 10);
}

Test(runctl, eval_after_resume_and_off) {
    Config cfg = limits();
    cfg.eval.every_updates = 100;
    RunCtl rc;
    runctl_init(&rc, &cfg, 0, 0, 250); /* resumed at 250: next is 300 */
    cr_assert(!runctl_eval_due(&rc, 250));
    cr_assert(!runctl_eval_due(&rc, 299));
    cr_assert(runctl_eval_due(&rc, 300));
    runctl_init(&rc, &cfg, 0, 0, 300); /* resumed right at a multiple: it was evaluated, next is 400 */
    cr_assert(!runctl_eval_due(&rc, 300));
    cr_assert(runctl_eval_due(&rc, 400));
    cfg.eval.every_updates = 0;
    runctl_init(&rc, &cfg, 0, 0, 0);
    cr_assert(!runctl_eval_due(&rc, 0));
    cr_assert(!runctl_eval_due(&rc, UINT64_MAX - 1), "every_updates 0: never during the run");
}

Test(runctl, final_eval_unless_signal_or_just_evaluated) {
    Config cfg = limits();
    RunCtl rc;
    runctl_init(&rc, &cfg, 0, 0, 0);
    cr_assert(runctl_final_eval_due(&rc, STOP_BUDGET, 0), "never evaluated");
    cr_assert(runctl_final_eval_due(&rc, STOP_TIME, 50));
    cr_assert(!runctl_final_eval_due(&rc, STOP_SIGNAL, 50), "a signal skips it");
    runctl_eval_done(&rc, 500);
    cr_assert(!runctl_final_eval_due(&rc, STOP_BUDGET, 500), "500 was just evaluated");
    cr_assert(!runctl_final_eval_due(&rc, STOP_SOLVED, 500));
    cr_assert(runctl_final_eval_due(&rc, STOP_BUDGET, 501));
    cr_assert(!runctl_final_eval_due(&rc, STOP_SIGNAL, 501));
}

Test(runctl, ckpt_by_time_restarts_from_when_it_fired) {
    Config cfg = limits();
    cfg.checkpoint.every_seconds = 10;
    RunCtl rc;
    runctl_init(&rc, &cfg, 100, 0, 0); /* wall 100 (a resume): the run clock still starts at 0 */
    cr_assert(!runctl_ckpt_due(&rc, 9.5, 0, false));
    cr_assert(runctl_ckpt_due(&rc, 10, 0, false));
    cr_assert(!runctl_ckpt_due(&rc, 10, 0, false), "no second checkpoint at 10 (next 20)");
    cr_assert(!runctl_ckpt_due(&rc, 19.5, 0, false));
    cr_assert(runctl_ckpt_due(&rc, 25, 0, false)); /* late: next is 25 + 10 = 35, not 30 */
    cr_assert(!runctl_ckpt_due(&rc, 34.5, 0, false));
    cr_assert(runctl_ckpt_due(&rc, 35, 0, false));
}

Test(runctl, ckpt_by_updates_at_multiples_once) {
    Config cfg = limits();
    cfg.checkpoint.every_updates = 1000;
    RunCtl rc;
    runctl_init(&rc, &cfg, 0, 0, 0);
    cr_assert(!runctl_ckpt_due(&rc, 1e6, 999, false), "time off: any run time");
    cr_assert(runctl_ckpt_due(&rc, 0, 1000, false));
    cr_assert(!runctl_ckpt_due(&rc, 0, 1000, false));
    cr_assert(runctl_ckpt_due(&rc, 0, 2500, false)); /* next is 3000 */
    cr_assert(!runctl_ckpt_due(&rc, 0, 2999, false));
    cr_assert(runctl_ckpt_due(&rc, 0, 3000, false));
    runctl_init(&rc, &cfg, 0, 0, 2500); /* resumed at 2500: next 3000 */
    cr_assert(!runctl_ckpt_due(&rc, 0, 2500, false));
    cr_assert(runctl_ckpt_due(&rc, 0, 3000, false));
}

Test(runctl, ckpt_request_and_both_schedules) {
    Config cfg = limits();
    RunCtl rc;
    runctl_init(&rc, &cfg, 0, 0, 0); /* both schedules off */
    cr_assert(!runctl_ckpt_due(&rc, 1e9, 1000000000000ULL, false));
    cr_assert(runctl_ckpt_due(&rc, 0, 0, true), "SIGUSR1");
    cfg.checkpoint.every_seconds = 10;
    cfg.checkpoint.every_updates = 100;
    runctl_init(&rc, &cfg, 0, 0, 0);
    /* a request at 5 s does not move the time schedule: 10 s is still due */
    cr_assert(runctl_ckpt_due(&rc, 5, 50, true));
    cr_assert(!runctl_ckpt_due(&rc, 9.5, 99, false));
    /* both fire at once: one checkpoint, both move (to 20 s and 200) */
    cr_assert(runctl_ckpt_due(&rc, 10, 100, false));
    cr_assert(!runctl_ckpt_due(&rc, 10, 100, false));
    cr_assert(!runctl_ckpt_due(&rc, 15, 150, false));
    cr_assert(runctl_ckpt_due(&rc, 15, 200, false)); /* updates only: 20 s stays */
    cr_assert(runctl_ckpt_due(&rc, 20, 210, false));
}

Test(runctl, rows_every_interval_from_the_last_row) {
    Config cfg = limits(); /* interval 2 s */
    RunCtl rc;
    runctl_init(&rc, &cfg, 10, 0, 0);
    cr_assert(!runctl_row_due(&rc, 11.5, 0, 0));
    cr_assert(runctl_row_due(&rc, 12, 0, 0));
    cr_assert(!runctl_row_due(&rc, 12, 0, 0), "no second row at 12 (next 14)");
    cr_assert(!runctl_row_due(&rc, 13.5, 0, 0));
    cr_assert(runctl_row_due(&rc, 14.5, 0, 0)); /* late: next is 16.5 */
    cr_assert(!runctl_row_due(&rc, 16.25, 0, 0));
    cr_assert(runctl_row_due(&rc, 16.5, 0, 0));
}

Test(runctl, rows_at_multiples_of_env_steps_and_updates) {
    Config cfg = limits(); /* interval 2 s */
    cfg.logging.metrics_every_env_steps = 100;
    cfg.logging.metrics_every_updates = 30;
    RunCtl rc;
    /* a resume at 250 env steps, 40 updates: next rows at 300 and 60 */
    runctl_init(&rc, &cfg, 10, 250, 40);
    cr_assert(!runctl_row_due(&rc, 10.1, 299, 59));
    cr_assert(runctl_row_due(&rc, 10.2, 300, 59), "300 env steps");
    cr_assert(!runctl_row_due(&rc, 10.3, 300, 59), "the step schedule moved to 400");
    cr_assert(runctl_row_due(&rc, 10.4, 310, 60), "60 updates");
    cr_assert(!runctl_row_due(&rc, 10.5, 399, 89));
    /* a jump over 400, 500 and 600 (distributed counters): one row, next 700 */
    cr_assert(runctl_row_due(&rc, 10.6, 650, 89));
    cr_assert(!runctl_row_due(&rc, 10.7, 699, 89));
    cr_assert(runctl_row_due(&rc, 10.8, 700, 90), "both at once: one row");
    cr_assert(!runctl_row_due(&rc, 10.9, 799, 119));
    /* no counter row for 2 s: the time schedule, 2 s after the last row
     * (10.8 -> 12.8), not after the start */
    cr_assert(!runctl_row_due(&rc, 12.7, 799, 119));
    cr_assert(runctl_row_due(&rc, 12.8, 799, 119));
    /* ... and the counters stay on their multiples: 800 is still due */
    cr_assert(runctl_row_due(&rc, 12.9, 800, 119));
}

Test(runctl, counter_rows_off_at_zero) {
    Config cfg = limits(); /* both 0: seconds only */
    RunCtl rc;
    runctl_init(&rc, &cfg, 0, 0, 0);
    cr_assert(!runctl_row_due(&rc, 1.9, UINT64_MAX - 1, UINT64_MAX - 1));
    cr_assert(runctl_row_due(&rc, 2, 0, 0));
}

Test(runctl, rates_over_the_window_since_the_last_row) {
    Config cfg = limits();
    RunCtl rc;
    runctl_init(&rc, &cfg, 10, 1000, 200);
    double sps, ups;
    /* 2.5 s later: 5000 steps and 500 updates -> 2000/s and 200/s */
    runctl_rates(&rc, 12.5, 6000, 700, &sps, &ups);
    cr_assert_eq(sps, 2000.0);
    cr_assert_eq(ups, 200.0);
    /* the window restarted at 12.5: 2 s, no steps, 200 updates */
    runctl_rates(&rc, 14.5, 6000, 900, &sps, &ups);
    cr_assert_eq(sps, 0.0);
    cr_assert_eq(ups, 100.0);
    /* no time since the last row: no rate */
    runctl_rates(&rc, 14.5, 6100, 950, &sps, &ups);
    cr_assert(isnan(sps) && isnan(ups));
    /* that call still restarted the window, at (14.5, 6100, 950): 4 s later
     * 6100 -> 8100 and 950 -> 1050 give 500/s and 25/s */
    runctl_rates(&rc, 18.5, 8100, 1050, &sps, &ups);
    cr_assert_eq(sps, 500.0);
    cr_assert_eq(ups, 25.0);
}

Test(runctl, progress_line_text) {
    MetricsRow row = {.wall_seconds = 12.5, .env_steps = 30000, .updates = 7000, .env_steps_per_second = 2399.7,
                      .updates_per_second = 560.2, .epsilon = 0.05, .mean_train_return = 180.34,
                      .last_eval_return = 487.0, .loss = 0.5};
    char line[RUNCTL_LINE_LEN];
    runctl_progress_line(line, sizeof line, &row, 500);
    /* %7.1f of 12.5 is "   12.5"; %.0f of 2399.7 is 2400 and of 560.2 is 560 */
    cr_assert_str_eq(line, "[   12.5s] steps 30000 (2400/s)  updates 7000 (560/s)  eps 0.050  return 180.3  "
                           "eval 487.0 (best 500.0)");
}

Test(runctl, progress_line_before_anything_happened) {
    MetricsRow row = {.wall_seconds = 0, .env_steps = 0, .updates = 0, .env_steps_per_second = NAN,
                      .updates_per_second = NAN, .epsilon = 1, .mean_train_return = NAN, .last_eval_return = NAN};
    char line[RUNCTL_LINE_LEN];
    runctl_progress_line(line, sizeof line, &row, NAN);
    /* no value yet is "-", never "nan" */
    cr_assert_str_eq(line, "[    0.0s] steps 0 (-/s)  updates 0 (-/s)  eps 1.000  return -  eval - (best -)");
}

Test(runctl, progress_line_before_the_first_evaluation) {
    MetricsRow row = {.wall_seconds = 0.04, .env_steps = 100, .updates = 0, .env_steps_per_second = 1103047.4,
                      .updates_per_second = 0, .epsilon = 0.988, .mean_train_return = 23.0,
                      .last_eval_return = NAN};
    char line[RUNCTL_LINE_LEN];
    runctl_progress_line(line, sizeof line, &row, NAN);
    cr_assert_str_eq(line, "[    0.0s] steps 100 (1103047/s)  updates 0 (0/s)  eps 0.988  return 23.0  eval - (best -)");
}

Test(runctl, progress_line_long_run_and_small_buffer) {
    MetricsRow row = {.wall_seconds = 123456.78, .env_steps = 12345678901ULL, .updates = 3, .env_steps_per_second = 0,
                      .updates_per_second = 0, .epsilon = 0.01, .mean_train_return = -200,
                      .last_eval_return = -150.5, .loss = 0};
    char line[RUNCTL_LINE_LEN];
    runctl_progress_line(line, sizeof line, &row, -99.26);
    /* wider than 7, the field grows: 123456.78 -> "123456.8"; -99.26 -> "-99.3" */
    cr_assert_str_eq(line, "[123456.8s] steps 12345678901 (0/s)  updates 3 (0/s)  eps 0.010  return -200.0  "
                           "eval -150.5 (best -99.3)");
    char small[10];
    runctl_progress_line(small, sizeof small, &row, -99.26);
    cr_assert_str_eq(small, "[123456.8", "cut to 9 characters and terminated");
}

/* ---- evaluation history and the final line ---------------------------- */

Test(runctl, evaltrack_best_needs_a_strictly_higher_mean_and_keeps_the_first_solve) {
    EvalTrack t;
    evaltrack_init(&t, 475.0);
    cr_assert(isnan(t.best) && isnan(t.last));
    cr_assert_not(evaltrack_record(&t, 100.0, 1000, 250, 1.0));
    cr_assert(t.last_was_best, "the first evaluation is the best so far");
    cr_assert(evaltrack_record(&t, 480.0, 2000, 500, 2.0));
    cr_assert(t.last_was_best);
    cr_assert(t.solved);
    cr_assert_eq(t.solved_at_env_steps, 2000);
    cr_assert_eq(t.solved_at_version, 500);
    /* equal to the best: not a new best (the saved best stays the first) */
    cr_assert(evaltrack_record(&t, 480.0, 3000, 750, 3.0));
    cr_assert_not(t.last_was_best);
    cr_assert_eq(t.best_env_steps, 2000);
    cr_assert_eq(t.best_version, 500);
    /* a higher one moves best but not the first solve */
    cr_assert(evaltrack_record(&t, 500.0, 4000, 1000, 4.0));
    cr_assert(t.last_was_best);
    cr_assert_eq(t.best_version, 1000);
    cr_assert_eq(t.solved_at_env_steps, 2000);
    cr_assert_float_eq(t.solved_at_seconds, 2.0, 0);
    /* a worse one after: last drops, best stays */
    cr_assert_not(evaltrack_record(&t, 50.0, 5000, 1250, 5.0));
    cr_assert_not(t.last_was_best);
    cr_assert_float_eq(t.last, 50.0, 0);
    cr_assert_float_eq(t.best, 500.0, 0);
    cr_assert_eq(t.evaluations, 5);
}

Test(runctl, final_line_solved_says_when) {
    EvalTrack t;
    evaltrack_init(&t, 475.0);
    evaltrack_record(&t, 500.0, 7511, 1750, 1.94);
    char line[RUNCTL_LINE_LEN];
    runctl_final_line(line, sizeof line, "CartPole-v1", &t, 8000, 2000, 2.26, STOP_SOLVED, "checkpoints/ckpt-000004",
                      true, "checkpoints/best");
    cr_assert_str_eq(line, "CartPole-v1: solved at 7511 env steps, 1750 updates, 1.9 s; stopped (solved) after 8000 "
                           "env steps, 2000 updates, 2.3 s; final checkpoint checkpoints/ckpt-000004: eval 500.0; "
                           "best 500.0 (checkpoints/best)");
}

Test(runctl, final_line_not_solved_unevaluated_and_no_checkpoint) {
    EvalTrack t;
    evaltrack_init(&t, -100.0);
    char line[RUNCTL_LINE_LEN];
    runctl_final_line(line, sizeof line, "Acrobot-v1", &t, 10, 0, 0.04, STOP_SIGNAL, NULL, false, NULL);
    cr_assert_str_eq(line, "Acrobot-v1: not solved (no evaluation); stopped (signal) after 10 env steps, 0 updates, "
                           "0.0 s; no final checkpoint");
    evaltrack_record(&t, -300.0, 5000, 900, 3.0);
    evaltrack_record(&t, -400.0, 9000, 1800, 6.0);
    runctl_final_line(line, sizeof line, "Acrobot-v1", &t, 9500, 1900, 6.5, STOP_SIGNAL, "checkpoints/ckpt-000002",
                      false, "checkpoints/best");
    cr_assert_str_eq(line, "Acrobot-v1: not solved (best eval -300.0 at 5000 env steps); stopped (signal) after 9500 "
                           "env steps, 1900 updates, 6.5 s; final checkpoint checkpoints/ckpt-000002 (not evaluated); "
                           "best -300.0 (checkpoints/best)");
    char small[24];
    runctl_final_line(small, sizeof small, "Acrobot-v1", &t, 9500, 1900, 6.5, STOP_SIGNAL, NULL, false, NULL);
    cr_assert_eq(strlen(small), sizeof small - 1, "cut to fit, terminated");
}
