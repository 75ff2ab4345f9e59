/* trainer.c: see trainer.h. */
#include "trainer.h"
#include "actorcore.h"
#include "evaluator.h"
#include "exitcode.h"
#include "json.h"
#include "agentcfg.h"
#include "runctl.h"
#include "replaystore.h"
#include "replaybuf.h"
#include "runlog.h"
#include "signals.h"
#include "runckpt.h"
#include "trace.h"
#include "clock.h"
#include "ctx.h"
#include "exitcode.h"
#include "util.h"

#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const Config *cfg;
    QNet net;
    float *params, *target, *grad, *td;
    Optim opt;
    Dqn dqn;
    DqnParams dp;
    ReplayStore replay;          /* uniform or prioritized (replay.kind) */
    /* per-update rows (B): sampled slots and ids, the sampling scratch */
    size_t *slots;
    uint64_t *ids;
    double *scratch;
    Rng sample_rng;
    ActorCore ac;
    Evaluator ev;
    RunLog log;
    Batch chunk, batch;
    EpisodeEnd *ended;
    /* counters */
    uint64_t env_steps, updates, episodes, pending_train;
    double t0, wall_offset;      /* wall_offset: seconds of earlier runs (resume) */
    RecentReturns recent;
    EvalTrack eval;
    uint64_t start_env_steps, start_updates;  /* at this process's start (resume) */
    RunCtl rc;                   /* eval, checkpoint and metrics-row schedules */
    /* loss over the metrics interval */
    double loss_sum;
    uint64_t loss_n;
    double epsilon;
    /* checkpoints */
    uint64_t ckpt_seq;
    Rng *rngs;                   /* (2 + E) scratch for saving generator states */
    EvalResult last_res;         /* the last evaluation */
    bool best_saved;             /* checkpoints/best exists */
    char ckpt_dir[PATH_LEN];     /* the last checkpoint committed */
    char ckpt_err[ERR_LEN];      /* why the last one failed */
    Trace trace;                 /* logging.trace: the one track of trace.json */
} Local;

static double wall(const Local *L) { return L->wall_offset + now_seconds() - L->t0; }

static void fill_eval(RunCkptManifest *man, const Local *L) {
    man->eval_mean = L->last_res.mean;
    man->eval_episodes = L->last_res.episodes;
    man->eval_seed = L->cfg->eval.seed;
}

/* The next checkpoint of the live state, as a shard and a manifest of
 * `kind`: the whole network with its optimizer state, the counters, the
 * evaluation when the last one was of exactly these parameters, and the
 * evaluation history. The caller adds the resume extras (generators,
 * replay) to the shard where it wants them. */
static void describe_ckpt(Local *L, const char *kind, RunCkptShard *sh, RunCkptManifest *man) {
    L->ckpt_seq++;
    *sh = (RunCkptShard){
        .index = 0, .off = 0, .len = L->net.n_params, .params = L->params, .target = L->target, .opt = &L->opt,
        .version = L->updates, .env_steps = L->env_steps, .updates = L->updates, .episodes = L->episodes,
        .wall_seconds = wall(L), .run_id = L->log.run_id, .seq = L->ckpt_seq, .n_shards = 1,
    };
    *man = (RunCkptManifest){.seq = L->ckpt_seq, .env_steps = L->env_steps, .updates = L->updates,
                             .episodes = L->episodes, .wall_seconds = wall(L), .n_shards = 1,
                             .run_id = L->log.run_id, .params_version = L->updates, .eval_mean = NAN,
                             .has_history = 1, .history = L->eval};
    snprintf(man->mode, sizeof man->mode, "local");
    snprintf(man->kind, sizeof man->kind, "%s", kind);
    if (L->rc.evaluated && L->rc.last_eval_updates == L->updates) fill_eval(man, L);
}

/* Save the parameters just evaluated as checkpoints/best (no generators or
 * replay: it is for evaluation and export, not for resuming). */
static void save_best(Local *L) {
    char err[ERR_LEN], dir[PATH_LEN];
    RunCkptShard sh;
    RunCkptManifest man;
    describe_ckpt(L, "best", &sh, &man);
    if (runckpt_begin_best(L->log.dir, L->ckpt_seq, dir, err) != 0 ||
        runckpt_write_shard(L->cfg, &L->net, dir, &sh, err) != 0 ||
        runckpt_commit_best(L->log.dir, dir, &man, err) != 0) {
        runlog_progress_done(&L->log);
        fprintf(stderr, "gorila: warning: best checkpoint not saved: %s\n", err);
        return;
    }
    L->best_saved = true;
}

/* Evaluate the current parameters; a new best is saved at once (final: the
 * caller saves it from the final checkpoint). */
static void evaluate(Local *L, bool final) {
    EvalResult r;
    double t0 = now_seconds();
    evaluator_run(&L->ev, L->params, &r);
    trace_span(&L->trace, TR_EVAL, t0, now_seconds(), (uint32_t)L->updates);
    runctl_eval_done(&L->rc, L->updates);
    bool solved_now = evaltrack_record(&L->eval, r.mean, L->env_steps, L->updates, wall(L));
    EvalRow row = {wall(L), L->env_steps, L->updates, r.episodes, r.mean, r.std, r.min, r.max, solved_now};
    runlog_eval(&L->log, &row);
    L->last_res = r;
    if (L->eval.last_was_best && !final) {
        double tb = now_seconds();
        save_best(L);
        trace_span(&L->trace, TR_CKPT, tb, now_seconds(), (uint32_t)L->ckpt_seq);
    }
}

static void metrics_row(Local *L, bool force_progress) {
    double t = wall(L), steps_ps, updates_ps;
    runctl_rates(&L->rc, t, L->env_steps, L->updates, &steps_ps, &updates_ps);
    MetricsRow row = {
        .wall_seconds = t,
        .env_steps = L->env_steps,
        .updates = L->updates,
        .env_steps_per_second = steps_ps,
        .updates_per_second = updates_ps,
        .mean_train_return = recent_mean(&L->recent),
        .last_eval_return = L->eval.last,
        .epsilon = L->epsilon,
        .loss = L->loss_n ? L->loss_sum / (double)L->loss_n : NAN,
    };
    runlog_metrics(&L->log, &row, NULL);
    char line[RUNCTL_LINE_LEN];
    runctl_progress_line(line, sizeof line, &row, L->eval.best);
    runlog_progress(&L->log, t, force_progress, "%s", line);
    L->loss_sum = 0;
    L->loss_n = 0;
}

/* The first non-finite value of x[0 .. n), for the message (NAN if none). */
static double first_nonfinite(const float *x, int n) {
    for (int i = 0; i < n; i++)
        if (!isfinite(x[i])) return x[i];
    return NAN;
}

/* Put the chunk the environments just produced into replay. Prioritized:
 * with initial_priority actor each row's priority comes from the acting
 * network's |td| on the current parameters, with max the buffer's largest
 * priority so far. Returns -1 with err when such a |td| is not finite (the
 * parameters diverged: the run ends like any divergence). */
static int insert_chunk(Local *L, char *err) {
    if (!L->chunk.n) return 0;
    const float *td = NULL;
    if (replaystore_prioritized(&L->replay) && L->cfg->replay.initial_priority == PRIORITY_ACTOR) {
        /* The acting forward scored each row (actorcore.h): |td| in weight. */
        td = L->chunk.weight;
        if (!floats_finite(td, (size_t)L->chunk.n))
            return errf(err, "training diverged: the acting network's TD error of a new transition is %g after "
                        "update %llu (local trainer); lower optimizer.lr (now %g) or optimizer.grad_clip (now %g, "
                        "0 = off)", first_nonfinite(td, L->chunk.n), (unsigned long long)L->updates,
                        L->cfg->optimizer.lr, L->cfg->optimizer.grad_clip);
    }
    replaystore_add_batch(&L->replay, &L->chunk, td);
    return 0;
}

/* One gradient step. Returns -1 with a message in err when training has
 * diverged: the loss or the gradient is not finite (checked before the
 * step, so the parameters stay as they were), or a finite step overflowed
 * the parameters. Either way no checkpoint follows (trainer_run stops at
 * once), so no non-finite parameters are ever saved. The gradient norm is
 * computed in double over floats, so it is finite exactly when every
 * element is. */
static int update(Local *L, char *err) {
    const Config *cfg = L->cfg;
    int B = cfg->replay.batch_size;
    double t0 = now_seconds();
    /* Prioritized: weights (N P_i)^-beta over the batch maximum
     * (replaystore.h), beta annealed over the updates done so far. */
    double beta = prio_beta(cfg->replay.beta, cfg->replay.beta_final, cfg->replay.beta_steps, L->updates);
    replaystore_sample_weighted(&L->replay, &L->sample_rng, B, beta, &L->batch, L->slots, L->ids, L->scratch);
    double t1 = now_seconds();
    double loss = dqn_loss_grad(&L->dqn, &L->net, &L->dp, L->params, L->target, &L->batch, L->grad, L->td);
    double norm = optim_clip_norm(L->grad, L->net.n_params, cfg->optimizer.grad_clip);
    double t2 = now_seconds();
    trace_span(&L->trace, TR_SAMPLE, t0, t1, 0);
    trace_span(&L->trace, TR_GRAD, t1, t2, 0);
    /* A non-finite |td| nearly always shows in the loss too, but a
     * priority must never be set from one: check it on its own. */
    const char *what = !isfinite(loss) ? "loss" : !isfinite(norm) ? "gradient norm"
                       : !floats_finite(L->td, (size_t)B) ? "a TD error" : NULL;
    if (what)
        return errf(err, "training diverged: %s is %g at update %llu (local trainer); lower optimizer.lr (now %g) "
                    "or optimizer.grad_clip (now %g, 0 = off)", what,
                    !isfinite(loss) ? loss : !isfinite(norm) ? norm : first_nonfinite(L->td, B),
                    (unsigned long long)L->updates + 1, cfg->optimizer.lr, cfg->optimizer.grad_clip);
    /* New priorities for every sampled row (a row sampled twice gets its
     * later |td|). No insert comes between sample and update here, so none
     * is stale; replaystore_update_many would count one like anywhere else
     * (and sets nothing in a uniform store). */
    replaystore_update_many(&L->replay, L->slots, L->ids, L->td, B);
    optim_step(&L->opt, L->params, L->grad);
    if (!floats_finite(L->params, L->net.n_params))
        return errf(err, "training diverged: the parameters are not finite after update %llu (local trainer); "
                    "lower optimizer.lr (now %g) or optimizer.grad_clip (now %g, 0 = off)",
                    (unsigned long long)L->updates + 1, cfg->optimizer.lr, cfg->optimizer.grad_clip);
    L->updates++;
    agentcfg_target_update(cfg, L->updates, L->target, L->params, L->net.n_params);
    trace_span(&L->trace, TR_APPLY, t2, now_seconds(), (uint32_t)L->updates);
    L->loss_sum += loss;
    L->loss_n++;
    return 0;
}

/* Generators in checkpoint order: exploration, replay sampling, then one
 * per environment. */
static int gather_rngs(Local *L) {
    L->rngs[0] = L->ac.rng;
    L->rngs[1] = L->sample_rng;
    for (int e = 0; e < L->ac.E; e++) L->rngs[2 + e] = L->ac.envs[e].rng;
    return 2 + L->ac.E;
}

/* Write a checkpoint of the whole state; 0, or -1 with L->ckpt_err. */
static int checkpoint(Local *L, bool final) {
    double t0 = now_seconds();
    char err[ERR_LEN], dir[PATH_LEN];
    const Config *cfg = L->cfg;
    RunCkptShard sh;
    RunCkptManifest man;
    describe_ckpt(L, final ? "final" : "periodic", &sh, &man);
    sh.rngs = L->rngs;
    sh.n_rngs = gather_rngs(L);
    if (cfg->checkpoint.save_replay) sh.replay = &L->replay;
    if (runckpt_begin(L->log.dir, L->ckpt_seq, dir, err) != 0 || runckpt_write_shard(cfg, &L->net, dir, &sh, err) != 0 ||
        runckpt_commit(L->log.dir, dir, &man, cfg->checkpoint.keep, err) != 0) {
        runlog_progress_done(&L->log);
        fprintf(stderr, "gorila: warning: checkpoint failed: %s\n", err);
        snprintf(L->ckpt_err, sizeof L->ckpt_err, "%s", err);
        return -1;
    }
    snprintf(L->ckpt_dir, sizeof L->ckpt_dir, "%s", dir);
    trace_span(&L->trace, TR_CKPT, t0, now_seconds(), (uint32_t)L->ckpt_seq);
    return 0;
}

/* logging.trace: <run dir>/trace.json with the one track of this process.
 * The writer sorts the ring's array in place (it is not recorded into
 * again). Returns 0 (also with tracing off), or -1 after saying why. */
static int write_trace(Local *L) {
    if (!trace_on(&L->trace)) return 0;
    char err[ERR_LEN], path[PATH_LEN];
    runlog_path(&L->log, "trace.json", path);
    TraceTrack tr = {.tid = 0, .name = "local trainer", .ev = L->trace.ev, .n = L->trace.n,
                     .dropped = L->trace.dropped};
    trace_clock(&tr.clock);
    if (trace_write_file(path, &tr, 1, L->trace.cap, err) == 0) return 0;
    fprintf(stderr, "gorila: error: %s\n", err);
    return -1;
}

/* Continue from the newest checkpoint of run_dir: parameters, target,
 * optimizer, counters, generators (and replay if it was saved). The
 * environments start fresh episodes from their restored generators. */
static int restore(Local *L, const char *run_dir, char *err) {
    RunCkptManifest man;
    if (runckpt_latest(run_dir, &man, err) != 0) return -1;
    int n_rngs = 2 + L->ac.E;
    RunCkptShard sh = {.index = 0, .off = 0, .len = L->net.n_params, .params = L->params, .target = L->target,
                    .opt = &L->opt, .rngs = L->rngs, .n_rngs = n_rngs,
                    .replay = L->cfg->checkpoint.save_replay ? &L->replay : NULL};
    if (runckpt_read_slice(L->cfg, &L->net, man.dir, &sh, err) != 0) return -1;
    L->ac.rng = L->rngs[0];
    L->sample_rng = L->rngs[1];
    for (int e = 0; e < L->ac.E; e++) {
        L->ac.envs[e].rng = L->rngs[2 + e];
        env_reset(&L->ac.envs[e], L->ac.obs + (size_t)e * (size_t)L->ac.O);
    }
    L->env_steps = sh.env_steps;
    L->updates = sh.updates;
    L->episodes = sh.episodes;
    L->wall_offset = sh.wall_seconds;
    L->ckpt_seq = man.seq;
    if (man.has_history) { /* keep the run's first solve and best */
        double thr = L->eval.threshold;
        L->eval = man.history;
        L->eval.threshold = thr;
        L->eval.last_was_best = false;
    }
    L->ac.steps = L->env_steps;
    L->start_env_steps = L->env_steps;
    L->start_updates = L->updates;
    log_info(NULL, "resumed from %s: %llu env steps, %llu updates, replay %zu transitions", man.dir,
             (unsigned long long)L->env_steps, (unsigned long long)L->updates, replaystore_size(&L->replay));
    return 0;
}

static int write_summary(Local *L, const char *stop, const char *final_ckpt, bool final_evaluated) {
    char err[ERR_LEN];
    FILE *f = runlog_summary_begin(&L->log, err);
    if (!f) {
        fprintf(stderr, "gorila: error: %s\n", err);
        return -1;
    }
    double t = wall(L);
    RunSummary sum = {
        .mode = "local", .env = L->cfg->env.name, .stop_reason = stop, .seed = L->cfg->run.seed,
        .env_steps = L->env_steps, .updates = L->updates, .episodes = L->episodes, .wall_seconds = t,
        .eval = &L->eval, .run_seconds = t - L->wall_offset, .run_env_steps = L->env_steps - L->start_env_steps,
        .run_updates = L->updates - L->start_updates,
        .run_gradients = L->updates - L->start_updates,
        .run_samples_trained = (L->updates - L->start_updates) * (uint64_t)L->cfg->replay.batch_size,
        .resumed = L->wall_offset > 0 || L->start_env_steps > 0,
        .final_checkpoint = final_ckpt, .final_evaluated = final_evaluated,
        .best_checkpoint = L->best_saved ? "checkpoints/best" : NULL,
        .prioritized = replaystore_prioritized(&L->replay), .stale_priority_updates = L->replay.stale,
    };
    JsonW j;
    json_init(&j, f, true);
    json_begin_object(&j, NULL);
    runlog_summary_fields(&j, &sum);
    json_end_object(&j);
    if (runlog_summary_commit(&L->log, f, err) != 0) {
        fprintf(stderr, "gorila: error: %s\n", err);
        return -1;
    }
    return 0;
}

static void local_free(Local *L) {
    free(L->params);
    free(L->target);
    free(L->grad);
    free(L->td);
    free(L->ended);
    free(L->rngs);
    optim_free(&L->opt);
    dqn_free(&L->dqn);
    replaystore_free(&L->replay);
    free(L->slots);
    free(L->ids);
    free(L->scratch);
    actorcore_free(&L->ac);
    evaluator_free(&L->ev);
    runctl_free(&L->rc);
    agentcfg_batch_free(&L->chunk);
    agentcfg_batch_free(&L->batch);
    runlog_free(&L->log);
    trace_free(&L->trace);
}

int trainer_run(const Config *cfg, const char *resume_dir) {
    char err[ERR_LEN];
    Local *L = xcalloc(1, sizeof *L);
    L->cfg = cfg;
    L->t0 = now_seconds();
    openblas_set_num_threads(cfg->run.blas_threads);
    if (agentcfg_qnet(cfg, &L->net, err) != 0) goto fail;
    size_t n = L->net.n_params;
    const EnvSpec *spec = env_find(cfg->env.name);
    evaltrack_init(&L->eval, spec->reward_threshold);
    L->params = xmalloc_aligned(n * sizeof(float));
    L->target = xmalloc_aligned(n * sizeof(float));
    L->grad = xmalloc_aligned(n * sizeof(float));
    L->td = xmalloc((size_t)cfg->replay.batch_size * sizeof(float));
    Rng init_rng;
    rng_seed(&init_rng, cfg->run.seed, RNG_STREAM_INIT);
    qnet_init_params(&L->net, L->params, &init_rng);
    memcpy(L->target, L->params, n * sizeof(float));
    OptimParams op;
    agentcfg_optim_params(cfg, &op);
    if (optim_check(&op, err) != 0) goto fail;
    optim_init(&L->opt, &op, n);
    agentcfg_dqn_params(cfg, &L->dp);
    dqn_init(&L->dqn, &L->net, cfg->replay.batch_size);
    replaystore_init_for(&L->replay, cfg->replay.capacity, L->net.spec.obs_dim, cfg);
    rng_seed(&L->sample_rng, cfg->run.seed, RNG_STREAM_REPLAY);
    if (actorcore_init(&L->ac, cfg, &L->net, 0, err) != 0) goto fail;
    size_t B = (size_t)cfg->replay.batch_size;
    L->slots = xmalloc(B * sizeof(size_t));
    L->ids = xmalloc(B * sizeof(uint64_t));
    L->scratch = xmalloc(B * sizeof(double));
    if (evaluator_init(&L->ev, cfg, &L->net, 0, err) != 0) goto fail;
    agentcfg_batch_init(&L->chunk, actorcore_max_emit(&L->ac), L->net.spec.obs_dim);
    agentcfg_batch_init(&L->batch, cfg->replay.batch_size, L->net.spec.obs_dim);
    L->ended = xcalloc((size_t)L->ac.E, sizeof(EpisodeEnd));
    L->rngs = xcalloc((size_t)L->ac.E + 2, sizeof(Rng));
    trace_init(&L->trace, cfg->logging.trace ? (size_t)cfg->logging.trace_events : 0);
    if (resume_dir && restore(L, resume_dir, err) != 0) {
        fprintf(stderr, "gorila: error: cannot resume: %s\n", err);
        local_free(L);
        free(L);
        return GORILA_EXIT_CKPT_READ; /* deterministic: a restart would fail the same way */
    }
    if (resume_dir) {
        StopReason done = runctl_resume_done(cfg, L->env_steps, L->updates, L->wall_offset, L->eval.solved);
        if (done != STOP_NONE) { /* nothing to do, nothing written */
            char line[RUNCTL_LINE_LEN];
            runctl_done_line(line, sizeof line, resume_dir, done, L->env_steps, L->updates, &L->eval);
            printf("%s\n", line);
            local_free(L);
            free(L);
            return 0;
        }
    }
    int log_rc = runlog_init(&L->log, cfg, resume_dir, NULL, 0, err);
    if (log_rc != 0) {
        fprintf(stderr, "gorila: error: %s\n", err);
        local_free(L);
        free(L);
        return log_rc;
    }
    printf("run directory: %s\n", L->log.dir);
    fflush(stdout);
    if (resume_dir) {
        RunCkptManifest bm;
        char berr[ERR_LEN];
        L->best_saved = runckpt_best(L->log.dir, &bm, berr) == 0;
    }
    log_info(NULL, "local training: %s, network %zu parameters, replay %llu, batch %d, budget %llu env steps",
             cfg->env.name, n, (unsigned long long)cfg->replay.capacity, cfg->replay.batch_size,
             (unsigned long long)cfg->run.max_env_steps);
    signals_install();

    StopReason stop = STOP_NONE;
    runctl_init(&L->rc, cfg, wall(L), L->env_steps, L->updates);
    double run_t0 = now_seconds();
    while (!stop) {
        L->epsilon = agentcfg_epsilon(cfg, L->env_steps, 0, 1);
        L->chunk.n = 0;
        int n_ended = 0;
        double t0 = now_seconds();
        actorcore_step(&L->ac, L->params, L->epsilon, &L->chunk, L->ended, &n_ended);
        if (insert_chunk(L, err) != 0) goto diverged;
        trace_span(&L->trace, TR_ENV_BATCH, t0, now_seconds(), (uint32_t)L->ac.E);
        L->env_steps += (uint64_t)L->ac.E;
        for (int i = 0; i < n_ended; i++) {
            runlog_episode(&L->log, wall(L), L->env_steps, 0, L->ended[i].ret, L->ended[i].length);
            recent_add(&L->recent, L->ended[i].ret);
            L->episodes++;
        }
        if (replaystore_size(&L->replay) >= cfg->replay.min_size) {
            L->pending_train += (uint64_t)L->ac.E;
            while (L->pending_train >= (uint64_t)cfg->agent.train_every) {
                L->pending_train -= (uint64_t)cfg->agent.train_every;
                for (int g = 0; g < cfg->agent.gradient_steps; g++) {
                    if (update(L, err) != 0) goto diverged;
                    if (runctl_eval_due(&L->rc, L->updates)) {
                        evaluate(L, false);
                        if (L->eval.solved && cfg->run.stop_when_solved) break;
                    }
                }
                if (L->eval.solved && cfg->run.stop_when_solved) break;
            }
        }
        RunState st = {.env_steps = L->env_steps, .updates = L->updates, .wall_seconds = wall(L),
                       .solved = L->eval.solved, .signal = signals_stop_requested()};
        stop = runctl_stop(cfg, &st);
        /* A run whose CSVs cannot be written stops: its record is lost. */
        if (!stop && runlog_failed(&L->log)) stop = STOP_ERROR;
        if (runctl_row_due(&L->rc, wall(L))) metrics_row(L, false);
        if (!stop && runctl_ckpt_due(&L->rc, now_seconds() - run_t0, L->updates, signals_take_checkpoint()))
            checkpoint(L, false);
    }
    /* The final checkpoint, then its evaluation unless the last one was of
     * these very parameters (a stop because an evaluation solved: nothing
     * changed since). With no update at all there is nothing trained to
     * evaluate. A new best found by it makes the final checkpoint the best. */
    bool final_ok = checkpoint(L, true) == 0;
    if (final_ok && L->updates > 0 && runctl_final_eval_due(&L->rc, stop, L->updates)) {
        evaluate(L, true);
        if (L->eval.last_was_best) {
            RunCkptManifest man;
            if (runckpt_read_manifest(L->ckpt_dir, &man, err) == 0) {
                snprintf(man.kind, sizeof man.kind, "best");
                fill_eval(&man, L);
                man.has_history = 1;
                man.history = L->eval;
                if (runckpt_best_from(L->log.dir, L->ckpt_dir, &man, err) == 0) L->best_saved = true;
                else fprintf(stderr, "gorila: warning: best checkpoint not saved: %s\n", err);
            }
        }
    }
    bool final_evaluated = final_ok && L->rc.evaluated && L->rc.last_eval_updates == L->updates;
    char final_name[PATH_LEN + 16] = "";
    if (final_ok) {
        const char *b = strrchr(L->ckpt_dir, '/');
        snprintf(final_name, sizeof final_name, "checkpoints/%s", b ? b + 1 : L->ckpt_dir);
    }
    metrics_row(L, true);
    runlog_progress_done(&L->log);
    int rc = write_summary(L, runctl_stop_name(stop), final_ok ? final_name : NULL, final_evaluated) == 0
                 ? GORILA_EXIT_OK : GORILA_EXIT_LOG_WRITE;
    if (write_trace(L) != 0) rc = GORILA_EXIT_LOG_WRITE;
    char line[RUNCTL_LINE_LEN];
    runctl_final_line(line, sizeof line, cfg->env.name, &L->eval, L->env_steps, L->updates, wall(L), stop,
                      final_ok ? final_name : NULL, final_evaluated, L->best_saved ? "checkpoints/best" : NULL);
    printf("%s\n", line);
    printf("run directory: %s\n", L->log.dir);
    if (!final_ok) {
        fprintf(stderr, "gorila: error: the final checkpoint could not be written: %s\n", L->ckpt_err);
        rc = GORILA_EXIT_CKPT_WRITE;
    } else if (runlog_failed(&L->log)) {
        fprintf(stderr, "gorila: error: the run's files could not be written: %s\n", L->log.fail_err);
        rc = GORILA_EXIT_LOG_WRITE;
    }
    local_free(L);
    free(L);
    return rc;
fail:
    fprintf(stderr, "gorila: error: %s\n", err);
    local_free(L);
    free(L);
    return 1;
diverged:
    runlog_progress_done(&L->log);
    fprintf(stderr, "gorila: error: %s\n", err);
    printf("run directory: %s\n", L->log.dir);
    local_free(L);
    free(L);
    return GORILA_EXIT_DIVERGED;
}
