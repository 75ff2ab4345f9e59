/* SPDX-License-Identifier: MIT */
/* trainer.c: see trainer.h. */
#include "trainer.h"

#include <cblas.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "exitcode.h"
#include "signals.h"
#include "trainerint.h"
#include "util.h"

/* What every evaluation asks while it runs: a stop signal gives it up. */
static bool signalled(void *arg) {
    (void)arg;
    return signals_stop_requested();
}

/* Evaluate the current parameters. Returns false when a stop signal
 * abandoned it (res then says nothing; record nothing). */
static bool evaluate(Local *L, EvalResult *res) {
    double t0 = now_seconds();
    bool done = evaluator_run(&L->ev, L->params, res);
    double t1 = now_seconds();
    L->eval_seconds += t1 - t0;
    trace_span(&L->trace, TR_EVAL, t0, t1, (uint32_t)L->run.updates);
    if (!done) run_warn(&L->run, "evaluation abandoned after %.1f s: a stop signal came", t1 - t0);
    return done;
}

static void metrics_row(Local *L, bool force_progress) {
    double n = (double)L->loss_n;
    RunRowFigures f = {.epsilon = L->epsilon, .loss = n > 0 ? L->loss_sum / n : NAN,
                       .mean_q = n > 0 ? L->q_sum / n : NAN, .staleness_mean = NAN, .bytes_per_update = NAN};
    run_metrics_row(&L->run, &f, force_progress);
    L->loss_sum = 0;
    L->q_sum = 0;
    L->loss_n = 0;
}

/* The mean online Q(s, a) of the batch just trained on: the rows of
 * dqn->q2 (the online forward dqn_loss_grad ran on the batch's obs) at the
 * actions taken. For TensorBoard's train/mean_q. */
static double batch_mean_q(const Local *L) {
    const Batch *b = &L->batch;
    size_t A = (size_t)L->net.spec.n_actions;
    double s = 0;
    for (int i = 0; i < b->n; i++) s += L->dqn.q2[(size_t)i * A + (size_t)b->action[i]];
    return b->n > 0 ? s / b->n : NAN;
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
        if (!floats_finite(td, (size_t)L->chunk.n)) {
            char hint[AGENTCFG_HINT_LEN];
            agentcfg_diverge_hint(L->cfg, hint);
            return errf(err, "training diverged: the acting network's TD error of a new transition is %g after "
                        "update %" PRIu64 " (local trainer); %s", first_nonfinite(td, L->chunk.n),
                        L->run.updates, hint);
        }
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
    uint64_t *updates = &L->run.updates;
    int B = cfg->replay.batch_size;
    double t0 = now_seconds();
    /* Prioritized: weights (N P_i)^-beta over the batch maximum
     * (replaystore.h), beta annealed over the updates done so far. */
    double beta = prio_beta(cfg->replay.beta, cfg->replay.beta_final, cfg->replay.beta_steps, *updates);
    replaystore_sample_weighted(&L->replay, &L->sample_rng, B, beta, &L->batch, L->slots, L->ids, L->scratch);
    double t1 = now_seconds();
    char what[AGENTCFG_WHAT_LEN], hint[AGENTCFG_HINT_LEN];
    double loss = agentcfg_loss_grad(cfg, &L->dqn, &L->net, &L->dp, L->params, L->target, &L->batch, L->grad, L->td,
                                     what);
    double t2 = now_seconds();
    trace_span(&L->trace, TR_SAMPLE, t0, t1, 0);
    trace_span(&L->trace, TR_GRAD, t1, t2, 0);
    if (what[0]) {
        agentcfg_diverge_hint(cfg, hint);
        return errf(err, "training diverged: %s at update %" PRIu64 " (local trainer); %s", what, *updates + 1, hint);
    }
    /* New priorities for every sampled row (a row sampled twice gets its
     * later |td|). No insert comes between sample and update here, so none
     * is stale; replaystore_update_many would count one like anywhere else
     * (and sets nothing in a uniform store). */
    replaystore_update_many(&L->replay, L->slots, L->ids, L->td, B);
    optim_step(&L->opt, L->params, L->grad);
    if (!floats_finite(L->params, L->net.n_params)) {
        agentcfg_diverge_hint(cfg, hint);
        return errf(err, "training diverged: the parameters are not finite after update %" PRIu64 " (local trainer); %s",
                    *updates + 1, hint);
    }
    (*updates)++;
    agentcfg_target_update(cfg, *updates, L->target, L->params, L->net.n_params);
    trace_span(&L->trace, TR_APPLY, t2, now_seconds(), (uint32_t)*updates);
    L->loss_sum += loss;
    L->q_sum += batch_mean_q(L);
    L->loss_n++;
    return 0;
}

/* ---- the end of the run (run_end's hooks) ---- */

static void end_row(void *self) { metrics_row(self, true); }

static void end_summary(void *self, RunSummary *sum) {
    const Local *L = self;
    uint64_t done = L->run.updates - L->run.start_updates;
    sum->run_gradients = done;
    sum->run_samples_trained = done * (uint64_t)L->cfg->replay.batch_size;
    sum->prioritized = replaystore_prioritized(&L->replay);
    sum->stale_priority_updates = L->replay.stale;
}

/* summary.json local_time_split: where this process's time went per env
 * step, and the bound of an actor/learner split on 2 cores: one core acting
 * (A per env step) beside one learning (U) takes max(A, U) per env step
 * against A + U here, at most (A + U) / max(A, U) times this rate
 * (docs/PERFORMANCE.md, "One machine"). */
static void end_summary_extra(void *self, JsonW *j) {
    const Local *L = self;
    double n = (double)L->act_env_steps, a = n > 0 ? L->act_seconds / n : NAN, u = n > 0 ? L->learn_seconds / n : NAN;
    double hi = a > u ? a : u;
    json_begin_object(j, "local_time_split");
    json_num(j, "act_seconds", L->act_seconds);
    json_num(j, "learn_seconds", L->learn_seconds);
    json_num(j, "eval_seconds", L->eval_seconds);
    json_u64(j, "env_steps", L->act_env_steps);
    json_num(j, "act_us_per_env_step", 1e6 * a);
    json_num(j, "learn_us_per_env_step", 1e6 * u);
    json_num(j, "actor_learner_bound", hi > 0 ? (a + u) / hi : NAN);
    json_end_object(j);
}

/* logging.trace: <run dir>/trace.json with the one track of this process.
 * The writer sorts the ring's array in place (it is not recorded into
 * again). Returns 0 (also with tracing off), or -1 with err. */
static int end_trace(void *self, char *err) {
    Local *L = self;
    if (!trace_on(&L->trace)) return 0;
    char path[PATH_LEN];
    runlog_path(&L->run.log, "trace.json", path);
    TraceTrack tr = {.tid = 0, .name = "local trainer", .ev = L->trace.ev, .n = L->trace.n,
                     .dropped = L->trace.dropped};
    trace_clock(&tr.clock);
    return trace_write_file(path, &tr, 1, L->trace.cap, err);
}

static void local_free(Local *L) {
    void *arrays[] = {L->params, L->target, L->grad, L->td, L->ended, L->rngs, L->slots, L->ids, L->scratch};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++) free(arrays[i]);
    optim_free(&L->opt);
    dqn_free(&L->dqn);
    replaystore_free(&L->replay);
    actorcore_free(&L->ac);
    evaluator_free(&L->ev);
    agentcfg_batch_free(&L->chunk);
    agentcfg_batch_free(&L->batch);
    run_free(&L->run);
    trace_free(&L->trace);
}

/* Everything but the run: network, optimizer, replay, actor, evaluator,
 * scratch. 0, or -1 with err. */
static int local_init(Local *L, const Config *cfg, char *err) {
    L->cfg = cfg;
    openblas_set_num_threads(cfg->run.blas_threads);
    if (agentcfg_qnet(cfg, &L->net, err) != 0) return -1;
    size_t n = L->net.n_params, B = (size_t)cfg->replay.batch_size;
    L->params = xmalloc_aligned(n * sizeof(float));
    L->target = xmalloc_aligned(n * sizeof(float));
    L->grad = xmalloc_aligned(n * sizeof(float));
    L->td = xmalloc(B * sizeof(float));
    Rng init_rng;
    rng_seed(&init_rng, cfg->run.seed, RNG_STREAM_INIT);
    qnet_init_params(&L->net, L->params, &init_rng);
    memcpy(L->target, L->params, n * sizeof(float));
    OptimParams op;
    agentcfg_optim_params(cfg, &op);
    if (optim_check(&op, err) != 0) return -1;
    optim_init(&L->opt, &op, n);
    agentcfg_dqn_params(cfg, &L->dp);
    dqn_init(&L->dqn, &L->net, cfg->replay.batch_size);
    replaystore_init_for(&L->replay, cfg->replay.capacity, obsrow_for_net(&L->net.spec), cfg); /* planes: bits */
    rng_seed(&L->sample_rng, cfg->run.seed, RNG_STREAM_REPLAY);
    if (actorcore_init(&L->ac, cfg, &L->net, 0, err) != 0) return -1;
    L->slots = xmalloc(B * sizeof(size_t));
    L->ids = xmalloc(B * sizeof(uint64_t));
    L->scratch = xmalloc(B * sizeof(double));
    if (evaluator_init(&L->ev, cfg, &L->net, 0, err) != 0) return -1;
    evaluator_set_abandon(&L->ev, signalled, NULL);
    agentcfg_batch_init(&L->chunk, actorcore_max_emit(&L->ac), L->net.spec.obs_dim);
    agentcfg_batch_init(&L->batch, cfg->replay.batch_size, L->net.spec.obs_dim);
    L->ended = xcalloc((size_t)L->ac.E, sizeof(EpisodeEnd));
    L->rngs = xcalloc((size_t)L->ac.E + 2, sizeof(Rng));
    trace_init(&L->trace, cfg->logging.trace ? (size_t)cfg->logging.trace_events : 0);
    return 0;
}

/* The gradient steps the env steps so far call for (agent.train_every,
 * agent.gradient_steps), each followed by an evaluation when one is due.
 * Stops early once solved with run.stop_when_solved, and at run.max_updates
 * (the env steps of one batch of environments call for several). 0, or -1
 * with err (diverged). */
static int train(Local *L, char *err) {
    const Config *cfg = L->cfg;
    Run *r = &L->run;
    bool stop_solved = cfg->run.stop_when_solved;
    uint64_t max_updates = cfg->run.max_updates ? cfg->run.max_updates : UINT64_MAX;
    L->pending_train += (uint64_t)L->ac.E;
    while (L->pending_train >= (uint64_t)cfg->agent.train_every) {
        L->pending_train -= (uint64_t)cfg->agent.train_every;
        for (int g = 0; g < cfg->agent.gradient_steps; g++) {
            if (r->updates >= max_updates) return 0;
            if (update(L, err) != 0) return -1;
            if (runctl_eval_due(&r->rc, r->updates)) {
                EvalResult res;
                if (!evaluate(L, &res)) return 0; /* a stop signal: loop stops at once */
                if (run_eval_record(r, &res, r->updates, false)) trainer_save_best(L);
                if (r->eval.solved && stop_solved) break;
            }
        }
        if (r->eval.solved && stop_solved) break;
    }
    return 0;
}

/* Step the environments and train until a stop reason comes up. 0, -1
 * with err (diverged), or -2 with err (an environment failed). */
static int loop(Local *L, char *err) {
    const Config *cfg = L->cfg;
    Run *r = &L->run;
    double run_t0 = now_seconds();
    while (!r->stop) {
        L->epsilon = agentcfg_epsilon(cfg, r->env_steps, 0, 1);
        L->chunk.n = 0;
        int n_ended = 0;
        double t0 = now_seconds();
        actorcore_step(&L->ac, L->params, L->epsilon, &L->chunk, L->ended, &n_ended);
        if (L->ac.env_failed)
            return errf(err, "environment %s failed (above); training stops without a new checkpoint, the last "
                        "one is kept", cfg->env.name) - 1;
        if (insert_chunk(L, err) != 0) return -1;
        double t1 = now_seconds();
        L->act_seconds += t1 - t0;
        L->act_env_steps += (uint64_t)L->ac.E;
        trace_span(&L->trace, TR_ENV_BATCH, t0, t1, (uint32_t)L->ac.E);
        r->env_steps += (uint64_t)L->ac.E;
        for (int i = 0; i < n_ended; i++) run_episode(r, 0, L->ended[i].ret, L->ended[i].length);
        if (replaystore_size(&L->replay) >= cfg->replay.min_size) {
            double evals = L->eval_seconds, t2 = now_seconds();
            if (train(L, err) != 0) return -1;
            L->learn_seconds += now_seconds() - t2 - (L->eval_seconds - evals); /* evaluations apart */
        }
        r->stop = run_stop_due(r, false, false);
        if (runctl_row_due(&r->rc, run_wall(r), r->env_steps, r->updates)) metrics_row(L, false);
        if (!r->stop && runctl_ckpt_due(&r->rc, now_seconds() - run_t0, r->updates, signals_take_checkpoint()))
            trainer_checkpoint(L, false);
    }
    return 0;
}

/* The final checkpoint, then its evaluation unless the last one was of
 * these very parameters (a stop because an evaluation solved: nothing
 * changed since). With no update at all there is nothing trained to
 * evaluate. */
static void finish(Local *L) {
    Run *r = &L->run;
    if (trainer_checkpoint(L, true) == 0) run_final_committed(r, L->ckpt_dir);
    else run_final_failed(r, L->ckpt_err);
    bool snapshot = r->rc.evaluated && r->rc.last_eval_updates == r->updates;
    if (run_final_eval_due(r, snapshot) && r->updates > 0) {
        EvalResult res;
        if (evaluate(L, &res)) run_final_evaluated(r, &res, r->updates);
    }
}

/* A resume of a run whose training is complete: STOP_NONE when it is not,
 * else its stop reason. Its held-out test may still be owed. */
static StopReason trained(Local *L) {
    Run *r = &L->run;
    return runctl_resume_done(L->cfg, r->env_steps, r->updates, r->wall_offset, r->eval.solved);
}

/* A resume of a run that has nothing left to do (complete, and no
 * held-out test owed): say so, write nothing. Returns true when that is
 * the case. */
static bool nothing_to_do(Local *L, const char *resume_dir) {
    Run *r = &L->run;
    StopReason done = trained(L);
    if (done == STOP_NONE || (L->cfg->eval.test_episodes > 0 && run_test_pending(resume_dir))) return false;
    char line[RUNCTL_LINE_LEN];
    runctl_done_line(line, sizeof line, resume_dir, done, r->env_steps, r->updates, &r->eval);
    printf("%s\n", line);
    return true;
}

int trainer_run(const Config *cfg, const char *resume_dir) {
    char err[ERR_LEN];
    Local *L = xcalloc(1, sizeof *L);
    int rc = 1;
    RunStart start = {.t0 = now_seconds()}; /* the run's clock starts here, before set-up and resume */
    if (local_init(L, cfg, err) != 0) {
        fprintf(stderr, "gorila: error: %s\n", err);
        goto out;
    }
    if (resume_dir && trainer_restore(L, resume_dir, &start, err) != 0) {
        fprintf(stderr, "gorila: error: cannot resume: %s\n", err);
        rc = GORILA_EXIT_CKPT_READ; /* deterministic: a restart would fail the same way */
        goto out;
    }
    run_init(&L->run, cfg, NULL, "local", &L->trace, &start);
    if (resume_dir && nothing_to_do(L, resume_dir)) {
        rc = 0;
        goto out;
    }
    if (resume_dir) trainer_restore_report(L);
    rc = run_open(&L->run, NULL, 0, err);
    if (rc != 0) {
        fprintf(stderr, "gorila: error: %s\n", err);
        goto out;
    }
    signals_install(SIGNALS_SECOND_ABORTS);
    run_set_abandon(&L->run, signalled, NULL);
    if (resume_dir && trained(L) != STOP_NONE) { /* only its held-out test is owed */
        rc = run_test_only(&L->run, trained(L));
        goto out;
    }
    log_info(NULL, "local training: %s, network %zu parameters, replay %" PRIu64 ", batch %d, budget %" PRIu64 " env steps",
             cfg->env.name, L->net.n_params, cfg->replay.capacity, cfg->replay.batch_size,
             cfg->run.max_env_steps);
    int lrc = loop(L, err);
    if (lrc != 0) {
        runlog_progress_done(&L->run.log);
        fprintf(stderr, "gorila: error: %s\n", err);
        printf("run directory: %s\n", L->run.log.dir);
        rc = lrc == -2 ? GORILA_EXIT_ENV : GORILA_EXIT_DIVERGED;
        goto out;
    }
    finish(L);
    RunEndHooks hooks = {.self = L, .last_row = end_row, .summary = end_summary, .summary_extra = end_summary_extra,
                         .write_trace = end_trace};
    rc = run_end(&L->run, &hooks);
out:
    local_free(L);
    free(L);
    return rc;
}
