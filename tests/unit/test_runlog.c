/* SPDX-License-Identifier: MIT */
/* test_runlog.c: the run directory (src/core/run/runlog.c): one job at a time
 * (the lock, held by this process or by another, released however the
 * holder ends), the run id (fresh, and kept across a resume), write
 * errors of the CSVs and summary.json that are reported and stay reported,
 * and a resume that cuts rows torn by a failed write before appending. */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agentcfg.h"
#include "config.h"
#include "exitcode.h"
#include "runckpt.h"
#include "runlog.h"
#include "util.h"

/* A config whose runs go to build/test-tmp/runlog-<name>-<pid>/. */
static void setup(Config *cfg, const char *name) {
    config_defaults(cfg);
    mkdir("build", 0777);
    mkdir("build/test-tmp", 0777);
    snprintf(cfg->run.out_dir, sizeof cfg->run.out_dir, "build/test-tmp/runlog-%s-%d", name, (int)getpid());
    snprintf(cfg->run.name, sizeof cfg->run.name, "run");
    cfg->logging.progress = PROGRESS_NEVER;
}

/* A one-shard checkpoint of the run in rl, bound to its run id, taken at
 * env_steps with parameters of version updates; eval_episodes > 0: an
 * evaluation of exactly them is recorded (a distributed job's snapshot). */
static void checkpoint_of(const Config *cfg, const RunLog *rl, uint64_t seq, uint64_t env_steps, uint64_t updates,
                          int eval_episodes) {
    char err[ERR_LEN], dir[PATH_LEN];
    QNet net;
    cr_assert_eq(agentcfg_qnet(cfg, &net, err), 0, "%s", err);
    float *p = calloc(net.n_params, sizeof(float)), *t = calloc(net.n_params, sizeof(float));
    cr_assert_eq(runckpt_begin(rl->dir, seq, dir, err), 0, "%s", err);
    RunCkptShard sh = {.index = 0, .off = 0, .len = net.n_params, .params = p, .target = t, .run_id = rl->run_id,
                       .seq = seq, .n_shards = 1};
    cr_assert_eq(runckpt_write_shard(cfg, &net, dir, &sh, err), 0, "%s", err);
    RunCkptManifest m = {.seq = seq, .n_shards = 1, .run_id = rl->run_id, .env_steps = env_steps,
                         .updates = updates, .params_version = updates, .eval_episodes = eval_episodes,
                         .eval_mean = eval_episodes ? 9 : NAN};
    snprintf(m.mode, sizeof m.mode, "local");
    cr_assert_eq(runckpt_commit(rl->dir, dir, &m, 2, err), 0, "%s", err);
    free(p);
    free(t);
}

/* Of the live parameters (no evaluation of exactly them recorded). */
static void checkpoint_at(const Config *cfg, const RunLog *rl, uint64_t seq, uint64_t env_steps, uint64_t updates) {
    checkpoint_of(cfg, rl, seq, env_steps, updates, 0);
}

/* One at env step 0: a run that logged nothing after it. */
static void checkpoint(const Config *cfg, const RunLog *rl, uint64_t seq) { checkpoint_at(cfg, rl, seq, 0, 0); }

Test(runlog, second_open_of_a_run_directory_is_refused_while_the_first_holds_it) {
    Config cfg;
    setup(&cfg, "lock");
    RunLog a, b;
    char err[ERR_LEN];
    cr_assert_eq(runlog_init(&a, &cfg, NULL, NULL, 0, err), 0, "%s", err);
    /* flock locks belong to the open file description: a second open in
     * this very process conflicts as another process's would. */
    cr_assert_eq(runlog_init(&b, &cfg, a.dir, NULL, 0, err), GORILA_EXIT_LOCKED, "%s", err);
    char host[256] = "";
    gethostname(host, sizeof host);
    char want[PATH_LEN + 512];
    snprintf(want, sizeof want,
             "run directory %s is in use by process %d on %s (another job or resume is running)", a.dir,
             (int)getpid(), host);
    cr_expect_str_eq(err, want);
    runlog_free(&b);
    /* The lock file says who holds it. */
    char path[PATH_LEN], text[300] = "";
    runlog_path(&a, "lock", path);
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f);
    cr_assert_not_null(fgets(text, sizeof text, f));
    fclose(f);
    snprintf(want, sizeof want, "%d %s\n", (int)getpid(), host);
    cr_expect_str_eq(text, want);
    /* Released by runlog_free: a resume goes past the lock (and then needs
     * a checkpoint for the run id). */
    checkpoint(&cfg, &a, 1);
    uint64_t id = a.run_id;
    char dir[PATH_LEN];
    snprintf(dir, sizeof dir, "%s", a.dir);
    runlog_free(&a);
    cr_assert_eq(runlog_init(&b, &cfg, dir, NULL, 0, err), 0, "%s", err);
    cr_expect_eq(b.run_id, id, "a resumed run keeps its run id");
    runlog_free(&b);
    runlog_free(&b); /* twice is fine */
}

/* Another process holds the run; it is killed with SIGKILL, and the lock
 * goes with it (no stale lock to clean up by hand). */
Test(runlog, lock_held_by_another_process_names_it_and_dies_with_it) {
    Config cfg;
    setup(&cfg, "lockfork");
    RunLog a;
    char err[ERR_LEN];
    cr_assert_eq(runlog_init(&a, &cfg, NULL, NULL, 0, err), 0, "%s", err);
    checkpoint(&cfg, &a, 1);
    char dir[PATH_LEN];
    snprintf(dir, sizeof dir, "%s", a.dir);
    runlog_free(&a);
    int ready[2];
    cr_assert_eq(pipe(ready), 0);
    pid_t child = fork();
    cr_assert(child >= 0);
    if (child == 0) {
        RunLog c;
        char cerr[ERR_LEN];
        int rc = runlog_init(&c, &cfg, dir, NULL, 0, cerr);
        char byte = rc == 0 ? 'y' : 'n';
        if (write(ready[1], &byte, 1) != 1) _exit(2);
        pause();
        _exit(0);
    }
    close(ready[1]);
    char byte = 0;
    cr_assert_eq(read(ready[0], &byte, 1), 1);
    close(ready[0]);
    cr_assert_eq(byte, 'y', "the child took the lock");
    RunLog b;
    int rc = runlog_init(&b, &cfg, dir, NULL, 0, err);
    char want[64];
    snprintf(want, sizeof want, "in use by process %d on ", (int)child);
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    cr_assert_eq(rc, GORILA_EXIT_LOCKED, "%s", err);
    cr_expect(strstr(err, want) != NULL, "%s", err);
    cr_assert_eq(runlog_init(&b, &cfg, dir, NULL, 0, err), 0, "after the holder died: %s", err);
    runlog_free(&b);
}

Test(runlog, fresh_runs_get_distinct_run_ids_and_a_resume_needs_a_checkpoint) {
    Config cfg;
    setup(&cfg, "runid");
    RunLog a, b;
    char err[ERR_LEN];
    cr_assert_eq(runlog_init(&a, &cfg, NULL, NULL, 0, err), 0, "%s", err);
    cr_assert_eq(runlog_init(&b, &cfg, NULL, NULL, 0, err), 0, "%s", err);
    cr_expect_neq(a.run_id, 0);
    cr_expect_neq(b.run_id, 0);
    cr_expect_neq(a.run_id, b.run_id);
    cr_expect_neq(strcmp(a.dir, b.dir), 0, "a second fresh run gets its own directory");
    char dir[PATH_LEN];
    snprintf(dir, sizeof dir, "%s", a.dir);
    runlog_free(&a);
    runlog_free(&b);
    cr_assert_eq(runlog_init(&a, &cfg, dir, NULL, 0, err), GORILA_EXIT_CKPT_READ);
    cr_expect(strstr(err, "cannot resume") != NULL && strstr(err, "no checkpoint in") != NULL, "%s", err);
    cr_expect(!a.locked, "nothing held after a failed init");
}

Test(runlog, csv_write_failures_are_reported_and_stay_reported) {
    Config cfg;
    setup(&cfg, "csvfail");
    RunLog rl;
    char err[ERR_LEN];
    cr_assert_eq(runlog_init(&rl, &cfg, NULL, NULL, 0, err), 0, "%s", err);
    MetricsRow row = {.wall_seconds = 1, .env_steps = 10, .updates = 2};
    EvalRow ev = {.wall_seconds = 1, .env_steps = 10, .updates = 2, .episodes = 5, .mean = 9};
    cr_assert_eq(runlog_metrics(&rl, &row, NULL), 0);
    cr_assert_eq(runlog_episode(&rl, 1, 10, 0, 9.5, 10), 0);
    cr_assert_eq(runlog_eval(&rl, &ev), 0);
    cr_expect(!runlog_failed(&rl));
    /* A full disk: /dev/full takes the bytes into stdio's buffer and fails
     * the flush with ENOSPC. */
    FILE *full = fopen("/dev/full", "w");
    cr_assert_not_null(full);
    fclose(rl.metrics);
    rl.metrics = full;
    cr_assert_eq(runlog_metrics(&rl, &row, NULL), -1);
    cr_assert(runlog_failed(&rl));
    char path[PATH_LEN], want[PATH_LEN + 64];
    runlog_path(&rl, "metrics.csv", path);
    snprintf(want, sizeof want, "cannot write %s: %s", path, strerror(ENOSPC));
    cr_expect_str_eq(rl.fail_err, want);
    /* Sticky: later rows, even good ones, report it; the first message stays. */
    FILE *full2 = fopen("/dev/full", "w");
    fclose(rl.eval);
    rl.eval = full2;
    cr_expect_eq(runlog_eval(&rl, &ev), -1);
    cr_expect_eq(runlog_episode(&rl, 1, 10, 0, 9.5, 10), -1);
    cr_expect_str_eq(rl.fail_err, want);
    runlog_free(&rl);
}

Test(runlog, episode_rows_that_fail_at_the_flush_are_reported) {
    Config cfg;
    setup(&cfg, "epfail");
    RunLog rl;
    char err[ERR_LEN];
    cr_assert_eq(runlog_init(&rl, &cfg, NULL, NULL, 0, err), 0, "%s", err);
    fclose(rl.episodes);
    rl.episodes = fopen("/dev/full", "w");
    cr_assert_not_null(rl.episodes);
    cr_assert_eq(runlog_episode(&rl, 1, 10, 0, 9.5, 10), 0, "buffered, not yet written");
    EvalRow ev = {.episodes = 1};
    cr_assert_eq(runlog_eval(&rl, &ev), -1, "the eval row flushes the episode rows");
    cr_expect(strstr(rl.fail_err, "episodes.csv") != NULL, "%s", rl.fail_err);
    runlog_free(&rl);
}

Test(runlog, summary_write_failure_is_an_error_and_leaves_no_summary) {
    Config cfg;
    setup(&cfg, "sumfail");
    RunLog rl;
    char err[ERR_LEN];
    cr_assert_eq(runlog_init(&rl, &cfg, NULL, NULL, 0, err), 0, "%s", err);
    /* Good one first. */
    FILE *f = runlog_summary_begin(&rl, err);
    cr_assert_not_null(f, "%s", err);
    fputs("{}\n", f);
    cr_assert_eq(runlog_summary_commit(&rl, f, err), 0, "%s", err);
    cr_expect(!runlog_failed(&rl));
    /* Then a full disk. */
    f = runlog_summary_begin(&rl, err);
    cr_assert_not_null(f, "%s", err);
    fclose(f);
    f = fopen("/dev/full", "w");
    cr_assert_not_null(f);
    fputs("{\"x\": 1}\n", f);
    cr_assert_eq(runlog_summary_commit(&rl, f, err), -1);
    cr_expect(strstr(err, "summary.json.tmp: writing it: No space left on device") != NULL, "%s", err);
    cr_expect(runlog_failed(&rl));
    char tmp[PATH_LEN];
    runlog_path(&rl, "summary.json.tmp", tmp);
    struct stat st;
    cr_expect_neq(stat(tmp, &st), 0, "the temporary is removed");
    runlog_free(&rl);
}

/* The whole of a file (NUL-terminated; the caller frees it). */
static char *slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "%s", path);
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    int c;
    while ((c = getc(f)) != EOF) putc(c, m);
    fclose(f);
    fclose(m);
    return text;
}

static void append_text(const RunLog *rl, const char *name, const char *text) {
    char path[PATH_LEN];
    runlog_path(rl, name, path);
    FILE *f = fopen(path, "a");
    cr_assert_not_null(f);
    fputs(text, f);
    cr_assert_eq(fclose(f), 0);
}

/* Every line ends in a newline and has the header's field count (the
 * awk check: NR == 1 { n = NF } NR > 1 && NF != n). */
static void expect_whole_rows(const char *text, const char *name) {
    cr_expect(text[0] && text[strlen(text) - 1] == '\n', "%s does not end in a newline", name);
    int fields = -1, line = 0;
    for (const char *p = text; *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        int n = 1;
        for (size_t i = 0; i < len; i++) n += p[i] == ',';
        line++;
        if (fields < 0) fields = n;
        cr_expect_eq(n, fields, "%s line %d has %d fields, the header %d: %.*s", name, line, n, fields, (int)len, p);
        p += len + (nl ? 1 : 0);
    }
}

/* A full disk tore the last row of each CSV in a different way; the resume
 * cuts each back to its last complete row (saying so), and the rows it
 * appends are whole rows of their own, not glued onto the torn ones. */
Test(runlog, resume_cuts_rows_torn_by_a_failed_write, .init = cr_redirect_stderr) {
    Config cfg;
    setup(&cfg, "torn");
    RunLog rl;
    char err[ERR_LEN];
    cr_assert_eq(runlog_init(&rl, &cfg, NULL, NULL, 0, err), 0, "%s", err);
    MetricsRow row = {.wall_seconds = 1, .env_steps = 10, .updates = 2};
    EvalRow ev = {.wall_seconds = 1, .env_steps = 10, .updates = 2, .episodes = 5, .mean = 9};
    cr_assert_eq(runlog_metrics(&rl, &row, NULL), 0);
    cr_assert_eq(runlog_episode(&rl, 1, 10, 0, 9.5, 10), 0);
    cr_assert_eq(runlog_episode(&rl, 2, 20, 0, 8.5, 10), 0);
    cr_assert_eq(runlog_eval(&rl, &ev), 0);
    checkpoint_at(&cfg, &rl, 1, 20, 4); /* after every row above: none is cut for being later */
    char dir[PATH_LEN], path[PATH_LEN];
    snprintf(dir, sizeof dir, "%s", rl.dir);
    runlog_free(&rl);
    /* episodes.csv: a row cut inside a number; metrics.csv: a row torn and
     * then glued to a whole one by an older resume (a complete line with
     * too many fields); eval.csv: intact. */
    const char *ep_tear = "3.000,30,0,2,7.";
    const char *me_tear = "2.000,20,4,1,1,,,0.5,0.1,1.500,20,4,,,,,0.5\n";
    append_text(&rl, "episodes.csv", ep_tear);
    append_text(&rl, "metrics.csv", me_tear);
    runlog_path(&rl, "episodes.csv", path);
    char *ep_before = slurp(path);
    runlog_path(&rl, "eval.csv", path);
    char *ev_before = slurp(path);

    cr_assert_eq(runlog_init(&rl, &cfg, dir, NULL, 0, err), 0, "%s", err);
    row.wall_seconds = 5;
    cr_assert_eq(runlog_metrics(&rl, &row, NULL), 0);
    cr_assert_eq(runlog_episode(&rl, 5, 50, 1, 6.5, 10), 0);
    cr_assert_eq(runlog_eval(&rl, &ev), 0);
    runlog_free(&rl);

    char *text[3];
    const char *names[3] = {"metrics.csv", "episodes.csv", "eval.csv"};
    for (int i = 0; i < 3; i++) {
        runlog_path(&rl, names[i], path);
        text[i] = slurp(path);
        expect_whole_rows(text[i], names[i]);
    }
    cr_expect_null(strstr(text[0], me_tear), "the merged metrics row is gone");
    cr_expect_eq(strncmp(text[1], ep_before, strlen(ep_before) - strlen(ep_tear)), 0,
                 "the episode rows before the torn one are kept");
    cr_expect_null(strstr(text[1], "7.5"), "nothing of the torn episode row is left");
    cr_expect(strstr(text[1], ",6.5,10\n") != NULL, "the new episode row is whole: %s", text[1]);
    /* eval.csv: intact, so not cut: the header, the old row and the new
     * one (the same figures, so the same text). */
    char ev_want[1024];
    snprintf(ev_want, sizeof ev_want, "%s%s", ev_before, strchr(ev_before, '\n') + 1);
    cr_expect_str_eq(text[2], ev_want);

    fflush(stderr);
    char *warn = NULL;
    size_t wlen = 0;
    FILE *w = open_memstream(&warn, &wlen);
    FILE *r = cr_get_redirected_stderr();
    int c;
    while ((c = getc(r)) != EOF) putc(c, w);
    fclose(w);
    char want[PATH_LEN + 128];
    runlog_path(&rl, "episodes.csv", path);
    snprintf(want, sizeof want, "gorila: warning: %s: cut %zu bytes after its last complete row", path,
             strlen(ep_tear));
    cr_expect(strstr(warn, want) != NULL, "stderr: %s", warn);
    runlog_path(&rl, "metrics.csv", path);
    snprintf(want, sizeof want, "gorila: warning: %s: cut %zu bytes after its last complete row", path,
             strlen(me_tear));
    cr_expect(strstr(warn, want) != NULL, "stderr: %s", warn);
    cr_expect_null(strstr(warn, "eval.csv"), "nothing said of the intact eval.csv: %s", warn);
    for (int i = 0; i < 3; i++) free(text[i]);
    free(ep_before);
    free(ev_before);
    free(warn);
}

/* A torn header (the disk filled while the first bytes were written) is
 * cut away and written again whole; a file under another header (another
 * build's columns) keeps its complete lines, and only the unterminated
 * tail goes. */
Test(runlog, resume_rewrites_a_torn_header_and_keeps_foreign_complete_lines, .init = cr_redirect_stderr) {
    Config cfg;
    setup(&cfg, "tornhdr");
    RunLog rl;
    char err[ERR_LEN], dir[PATH_LEN], path[PATH_LEN];
    cr_assert_eq(runlog_init(&rl, &cfg, NULL, NULL, 0, err), 0, "%s", err);
    checkpoint(&cfg, &rl, 1);
    snprintf(dir, sizeof dir, "%s", rl.dir);
    runlog_free(&rl);
    runlog_path(&rl, "eval.csv", path);
    FILE *f = fopen(path, "w");
    fputs("wall_seconds,env_st", f);
    fclose(f);
    runlog_path(&rl, "episodes.csv", path);
    f = fopen(path, "w");
    fputs("a,b\n1,2,3\n4,5", f);
    fclose(f);
    cr_assert_eq(runlog_init(&rl, &cfg, dir, NULL, 0, err), 0, "%s", err);
    runlog_free(&rl);
    runlog_path(&rl, "eval.csv", path);
    char *t = slurp(path);
    cr_expect_str_eq(t, "wall_seconds,env_steps,updates,episodes,mean_return,std_return,min_return,max_return,"
                        "solved\n");
    free(t);
    runlog_path(&rl, "episodes.csv", path);
    t = slurp(path);
    cr_expect_str_eq(t, "a,b\n1,2,3\n");
    free(t);
}

/* text into path (replacing it). */
static void put_text(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "%s", path);
    fputs(text, f);
    cr_assert_eq(fclose(f), 0);
}

/* runlog_cut_after on a file holding text, cut at upto: the file after it
 * must hold want and dropped rows be reported; in_place: the file is the
 * same inode afterwards (cut with ftruncate, not rewritten). */
static void expect_cut_at(const char *text, RunlogCutPoint at, const char *want, uint64_t dropped, uint64_t by_updates,
                          bool in_place) {
    char path[PATH_LEN], tmp[PATH_LEN + 16], err[ERR_LEN] = "";
    snprintf(path, sizeof path, "build/test-tmp/runlog-cut-%d.csv", (int)getpid());
    snprintf(tmp, sizeof tmp, "%s.cut.tmp", path);
    put_text(path, text);
    struct stat before, after;
    cr_assert_eq(stat(path, &before), 0);
    uint64_t n = 99, nu = 99;
    cr_assert_eq(runlog_cut_after(path, &at, &n, &nu, err), 0, "%s", err);
    char *got = slurp(path);
    cr_expect_str_eq(got, want, "cut at %llu env steps, %llu updates, of:\n%s", (unsigned long long)at.env_steps,
                     (unsigned long long)at.updates, text);
    cr_expect_eq(n, dropped, "rows dropped: %llu, want %llu", (unsigned long long)n, (unsigned long long)dropped);
    cr_expect_eq(nu, by_updates, "rows dropped for their updates: %llu, want %llu", (unsigned long long)nu,
                 (unsigned long long)by_updates);
    cr_assert_eq(stat(path, &after), 0);
    if (in_place) cr_expect_eq(after.st_ino, before.st_ino, "cut in place");
    cr_expect_neq(access(tmp, F_OK), 0, "no temporary left behind");
    free(got);
    unlink(path);
}

/* The same, cut by env steps alone (a point that does not bound updates). */
static void expect_cut(const char *text, uint64_t upto, const char *want, uint64_t dropped, bool in_place) {
    expect_cut_at(text, (RunlogCutPoint){upto, UINT64_MAX}, want, dropped, 0, in_place);
}

/* The cut keeps every row logged at or before the point, whatever the
 * order of the rows, and only those; the rows it keeps keep their bytes. */
Test(runlog, cut_after_keeps_the_rows_up_to_the_point_in_their_order) {
    mkdir("build", 0777);
    mkdir("build/test-tmp", 0777);
    const char *h = "wall_seconds,env_steps,updates\n";
    char text[1024], want[1024];
    /* The rows after the point at the end (a killed run): cut in place;
     * a row exactly at the point stays. */
    snprintf(text, sizeof text, "%s1.0,10,1\n2.0,20,2\n3.0,30,3\n4.0,40,4\n", h);
    snprintf(want, sizeof want, "%s1.0,10,1\n2.0,20,2\n", h);
    expect_cut(text, 20, want, 2, true);
    expect_cut(text, 19, (snprintf(want, sizeof want, "%s1.0,10,1\n", h), want), 3, true);
    expect_cut(text, 0, h, 4, true);
    expect_cut(text, 40, text, 0, true);
    /* Out of order (episodes several actors reported late, or a file an
     * older resume left with two overlapping stretches): by content, the
     * order kept; rewritten whole. */
    snprintf(text, sizeof text, "%s1,10,0\n2,50,0\n3,30,0\n4,20,0\n5,60,0\n6,5,0\n", h);
    snprintf(want, sizeof want, "%s1,10,0\n3,30,0\n4,20,0\n6,5,0\n", h);
    expect_cut(text, 30, want, 2, false);
    /* env_steps where the header puts it; a cell that is no count (empty,
     * not a number, missing, negative) is no row of a point: kept; one
     * beyond 2^64 is above any point. */
    expect_cut("env_steps,x\n5,a\n6,b\n", 5, "env_steps,x\n5,a\n", 1, true);
    expect_cut("a,b,env_steps\n1,2,3\n1,2\n1,2,\n1,2,x7\n1,2,-9\n1,2,99999999999999999999999\n1,2,4\n", 3,
               "a,b,env_steps\n1,2,3\n1,2\n1,2,\n1,2,x7\n1,2,-9\n", 2, true);
    /* No env_steps column (another file, another build): left alone. */
    expect_cut("a,b\n1,99\n", 3, "a,b\n1,99\n", 0, true);
    /* An unterminated last row (no trim before): judged like any other. */
    expect_cut("x,env_steps\n1,2\n1,9", 5, "x,env_steps\n1,2\n", 1, true);
    expect_cut("x,env_steps\n1,9\n1,2", 5, "x,env_steps\n1,2", 1, false);
    /* A header only, an empty file, a missing file: nothing to cut. */
    expect_cut(h, 0, h, 0, true);
    expect_cut("", 0, "", 0, true);
    char err[ERR_LEN];
    uint64_t n = 7, nu = 7;
    RunlogCutPoint one = {1, UINT64_MAX};
    cr_expect_eq(runlog_cut_after("build/test-tmp/runlog-no-such.csv", &one, &n, &nu, err), 0);
    cr_expect_eq(n, 0);
    cr_expect_eq(nu, 0);
}

/* A point that bounds the updates: a row above it in either counter goes
 * (a distributed job logs rows at the checkpoint's env steps after its
 * request, of newer parameters); a file without an updates column is cut
 * by env steps alone; cells that are no count are judged by the other. */
Test(runlog, cut_after_drops_the_rows_past_the_checkpoints_updates) {
    mkdir("build", 0777);
    mkdir("build/test-tmp", 0777);
    const char *h = "wall_seconds,env_steps,updates\n";
    char text[1024], want[1024];
    RunlogCutPoint at = {200, 25};
    /* At the point's env steps: updates 25 stays, 26 and 40 go. */
    snprintf(text, sizeof text, "%s1,100,10\n2,200,20\n3,200,25\n4,200,26\n5,200,40\n", h);
    snprintf(want, sizeof want, "%s1,100,10\n2,200,20\n3,200,25\n", h);
    expect_cut_at(text, at, want, 2, 2, true);
    /* Both kinds, out of order: rewritten, by_updates counts only the rows
     * at or below the env steps. */
    snprintf(text, sizeof text, "%s1,100,30\n2,150,20\n3,300,20\n4,200,25\n5,300,50\n", h);
    snprintf(want, sizeof want, "%s2,150,20\n4,200,25\n", h);
    expect_cut_at(text, at, want, 3, 1, false);
    /* updates where the header puts it; no updates column: env steps alone. */
    expect_cut_at("updates,env_steps\n30,100\n20,200\n", at, "updates,env_steps\n20,200\n", 1, 1, false);
    expect_cut_at("x,env_steps\n30,100\n20,300\n", at, "x,env_steps\n30,100\n", 1, 0, true);
    /* An updates cell that is no count: the env steps judge the row. */
    expect_cut_at("env_steps,updates\n100,\n100,x\n300,\n", at, "env_steps,updates\n100,\n100,x\n", 1, 0, true);
    /* UINT64_MAX: the updates do not bound the cut, however large a cell. */
    RunlogCutPoint steps_only = {200, UINT64_MAX};
    expect_cut_at("env_steps,updates\n100,99999999999999999999999\n", steps_only,
                  "env_steps,updates\n100,99999999999999999999999\n", 0, 0, true);
}

/* A CSV that is a link is refused, and the file it points to left alone. */
Test(runlog, cut_after_refuses_a_link) {
    mkdir("build", 0777);
    mkdir("build/test-tmp", 0777);
    char target[PATH_LEN], link[PATH_LEN], err[ERR_LEN] = "";
    snprintf(target, sizeof target, "build/test-tmp/runlog-cut-target-%d.csv", (int)getpid());
    snprintf(link, sizeof link, "build/test-tmp/runlog-cut-link-%d.csv", (int)getpid());
    put_text(target, "env_steps\n1\n9\n");
    unlink(link);
    cr_assert_eq(symlink(target + strlen("build/test-tmp/"), link), 0);
    uint64_t n = 0, nu = 0;
    RunlogCutPoint five = {5, 5};
    cr_expect_eq(runlog_cut_after(link, &five, &n, &nu, err), -1);
    cr_expect(strstr(err, "symbolic link") != NULL, "%s", err);
    char *t = slurp(target);
    cr_expect_str_eq(t, "env_steps\n1\n9\n");
    free(t);
    unlink(link);
    unlink(target);
}

/* What the run's stderr said (cr_redirect_stderr); the caller frees it. */
static char *stderr_text(void) {
    fflush(stderr);
    char *text = NULL;
    size_t len = 0;
    FILE *w = open_memstream(&text, &len);
    FILE *r = cr_get_redirected_stderr();
    int c;
    while ((c = getc(r)) != EOF) putc(c, w);
    fclose(w);
    return text;
}

/* A resume continues from its checkpoint: the rows its earlier segment
 * logged after it are cut from every CSV (one line each on stderr), and
 * the rows up to it keep their bytes. A resume that falls back past a
 * damaged checkpoint cuts back to the one it resumes from. */
Test(runlog, resume_cuts_the_rows_logged_after_its_checkpoint, .init = cr_redirect_stderr) {
    Config cfg;
    setup(&cfg, "cut");
    RunLog rl;
    char err[ERR_LEN], dir[PATH_LEN], path[PATH_LEN];
    cr_assert_eq(runlog_init(&rl, &cfg, NULL, NULL, 0, err), 0, "%s", err);
    char *upto[3][4];
    const char *names[3] = {"metrics.csv", "episodes.csv", "eval.csv"};
    for (uint64_t s = 1; s <= 4; s++) {
        MetricsRow row = {.wall_seconds = (double)s, .env_steps = 100 * s, .updates = 10 * s};
        EvalRow ev = {.wall_seconds = (double)s, .env_steps = 100 * s, .updates = 10 * s, .episodes = 5, .mean = 9};
        cr_assert_eq(runlog_metrics(&rl, &row, NULL), 0);
        cr_assert_eq(runlog_episode(&rl, (double)s, 100 * s, 0, 9.5, 10), 0);
        cr_assert_eq(runlog_eval(&rl, &ev), 0);
        if (s <= 2) checkpoint_at(&cfg, &rl, s, 100 * s, 10 * s); /* checkpoints at 100 and 200 env steps */
        for (int i = 0; i < 3; i++) {
            runlog_path(&rl, names[i], path);
            upto[i][s - 1] = slurp(path);
        }
    }
    snprintf(dir, sizeof dir, "%s", rl.dir);
    runlog_free(&rl);
    /* Resumed from ckpt-000002 (200 env steps): the rows at 300 and 400 go. */
    cr_assert_eq(runlog_init(&rl, &cfg, dir, NULL, 0, err), 0, "%s", err);
    runlog_free(&rl);
    char *warn = stderr_text();
    for (int i = 0; i < 3; i++) {
        runlog_path(&rl, names[i], path);
        char *t = slurp(path), want[PATH_LEN + 128];
        cr_expect_str_eq(t, upto[i][1], "%s: the rows up to the checkpoint, as they were", names[i]);
        snprintf(want, sizeof want, "gorila: resume: %s: dropped 2 rows logged after checkpoint ckpt-000002 (env "
                 "steps > 200)\n", path);
        cr_expect(strstr(warn, want) != NULL, "stderr says %s; it is:\n%s", want, warn);
        free(t);
    }
    free(warn);
    /* ckpt-000002 damaged: the resume falls back to ckpt-000001 (100). */
    runlog_path(&rl, "checkpoints/ckpt-000002/ps-0.ckpt", path);
    FILE *f = fopen(path, "r+b");
    cr_assert_not_null(f, "%s", path);
    fseek(f, 300, SEEK_SET);
    fputs("GARBAGE!", f);
    cr_assert_eq(fclose(f), 0);
    cr_assert_eq(runlog_init(&rl, &cfg, dir, NULL, 0, err), 0, "%s", err);
    runlog_free(&rl);
    for (int i = 0; i < 3; i++) {
        runlog_path(&rl, names[i], path);
        char *t = slurp(path);
        cr_expect_str_eq(t, upto[i][0], "%s: back to the checkpoint it fell back to", names[i]);
        free(t);
    }
    for (int i = 0; i < 3; i++)
        for (int s = 0; s < 4; s++) free(upto[i][s]);
}

/* A distributed job logs rows at a checkpoint's env steps after its
 * request (the actors report every 20 ms, and not at all once one has
 * died), of parameters newer than those saved: a resume from it cuts them
 * from metrics.csv and eval.csv by their updates, so neither column goes
 * back when the resumed segment counts on from the checkpoint's version;
 * episodes.csv (no updates) keeps its rows at the step. A checkpoint of
 * evaluated parameters (older than rows logged before it) is cut by env
 * steps alone. */
Test(runlog, resume_cuts_the_rows_of_parameters_newer_than_its_checkpoint, .init = cr_redirect_stderr) {
    Config cfg;
    setup(&cfg, "cutv");
    RunLog rl;
    char err[ERR_LEN], dir[PATH_LEN], path[PATH_LEN];
    const char *names[3] = {"metrics.csv", "episodes.csv", "eval.csv"};
    char *before[3], *after[3];
    cr_assert_eq(runlog_init(&rl, &cfg, NULL, NULL, 0, err), 0, "%s", err);
    /* (env steps, updates): two rows before the request, then the
     * checkpoint saves version 25 at 200 env steps, then two rows at 200
     * of versions 25 (reported late) and 30 (newer), and one at 300. */
    const uint64_t rows[5][2] = {{100, 10}, {200, 20}, {200, 25}, {200, 30}, {300, 40}};
    for (int k = 0; k < 5; k++) {
        MetricsRow row = {.wall_seconds = k, .env_steps = rows[k][0], .updates = rows[k][1]};
        EvalRow ev = {.wall_seconds = k, .env_steps = rows[k][0], .updates = rows[k][1], .episodes = 5, .mean = 9};
        cr_assert_eq(runlog_metrics(&rl, &row, NULL), 0);
        cr_assert_eq(runlog_episode(&rl, k, rows[k][0], 0, 9.5, 10), 0);
        cr_assert_eq(runlog_eval(&rl, &ev), 0);
        for (int i = 0; k >= 2 && k <= 3 && i < 3; i++) {
            runlog_path(&rl, names[i], path);
            (k == 2 ? before : after)[i] = slurp(path);
        }
    }
    checkpoint_at(&cfg, &rl, 1, 200, 25);
    snprintf(dir, sizeof dir, "%s", rl.dir);
    runlog_free(&rl);
    cr_assert_eq(runlog_init(&rl, &cfg, dir, NULL, 0, err), 0, "%s", err);
    runlog_free(&rl);
    char *warn = stderr_text(), want[PATH_LEN + 160];
    for (int i = 0; i < 3; i++) {
        runlog_path(&rl, names[i], path);
        char *t = slurp(path);
        bool episodes = i == 1;
        cr_expect_str_eq(t, episodes ? after[i] : before[i], "%s: the rows of the checkpoint's parameters or older",
                         names[i]);
        snprintf(want, sizeof want, "gorila: resume: %s: dropped %s logged after checkpoint ckpt-000001 (env "
                 "steps > 200%s)\n", path, episodes ? "1 row" : "2 rows", episodes ? "" : ", or updates > 25");
        cr_expect(strstr(warn, want) != NULL, "stderr says %s; it is:\n%s", want, warn);
        free(t);
    }
    free(warn);
    /* The snapshot of an evaluation at version 20, committed at 200 env
     * steps (a final checkpoint of a solved run): rows at 200 of newer
     * versions were logged before it, and stay. */
    checkpoint_of(&cfg, &rl, 2, 200, 20, 5);
    cr_assert_eq(runlog_init(&rl, &cfg, dir, NULL, 0, err), 0, "%s", err);
    runlog_free(&rl);
    for (int i = 0; i < 3; i++) {
        runlog_path(&rl, names[i], path);
        char *t = slurp(path);
        cr_expect_str_eq(t, i == 1 ? after[i] : before[i], "%s: nothing more cut", names[i]);
        free(t);
        free(before[i]);
        free(after[i]);
    }
}
