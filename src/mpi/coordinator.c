/* SPDX-License-Identifier: MIT */
/* coordinator.c: rank 0 of a distributed job. It does no learning itself;
 * it watches, evaluates, records and decides (docs/ARCHITECTURE.md,
 * "Coordinator", "What is evaluated is what is saved", "Shutdown"):
 *
 *  - gathers METRICS from every rank (cumulative counters) and EPISODES
 *    from the actors into the run (run.h: the run directory, the same files
 *    and summary.json keys as the local trainer; jobsummary.h: the roles'
 *    own figures; actorstats.h: each actor's returns);
 *  - evaluates greedily every eval.every_updates optimizer steps from a
 *    snapshot the parameter sources keep (PARAM_REQ with MSG_SNAPSHOT), so
 *    the evaluation is of one known set of parameters; a new best is
 *    written from that snapshot as checkpoints/best before the next
 *    evaluation, and when it solves and the run stops for it, the final
 *    checkpoint is that copy too: what the run reports is what it saved;
 *  - triggers checkpoints (checkpoint.every_seconds / every_updates,
 *    SIGUSR1): CKPT_REQ to every parameter source and, with
 *    checkpoint.save_replay, every replay shard; when all answered, the
 *    MANIFEST (runckpt.h; coordckpt.c);
 *  - decides when to stop (run_stop_due) and shuts the job down by the
 *    table of stopseq.h. No rank blocks in MPI at any point, and each wait
 *    of the stop lasts at most run.stop_deadline_seconds, then the job
 *    ends with GORILA_EXIT_HUNG naming the ranks that did not answer.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "actorstats.h"
#include "agentcfg.h"
#include "coordint.h"
#include "clock.h"
#include "exitcode.h"
#include "jobsummary.h"
#include "jobtrace.h"
#include "role.h"
#include "run.h"
#include "signals.h"
#include "stopseq.h"
#include "util.h"

static void aggregate(Coord *c) {
    const Layout *lay = c->lay;
    uint64_t steps = 0;
    for (int i = 0; i < lay->count[ROLE_ACTOR]; i++) steps += c->last[layout_rank_of(lay, ROLE_ACTOR, i)].env_steps;
    c->run.env_steps = c->args->start.env_steps + steps;
    uint64_t v = c->last[c->rb.source_rank[0]].params_version;
    if (v > c->run.updates) c->run.updates = v;
}

static bool all_actors_done(const Coord *c) {
    for (int i = 0; i < c->lay->count[ROLE_ACTOR]; i++)
        if (!c->last[layout_rank_of(c->lay, ROLE_ACTOR, i)].done) return false;
    return true;
}

static void on_episodes(Coord *c, const Msg *m) {
    const EpisodeRec *r = m->payload;
    int A = c->lay->count[ROLE_ACTOR];
    for (uint64_t i = 0; i < m->h.count; i++) {
        if (r[i].actor < 0 || r[i].actor >= A) DIE(c->rb.ctx, "episode from rank %d names actor %d", m->source, r[i].actor);
        /* Job-wide env steps at the end of the episode, estimated as the
         * job total at the time the report arrives. */
        run_episode(&c->run, r[i].actor, r[i].ret, r[i].length);
        actorstats_add(&c->actors, r[i].actor, r[i].ret);
    }
}

/* Record the evaluation of parameters at `version`; a new best is saved
 * from the sources' snapshot (best_pending). */
static void record_eval(Coord *c, const EvalResult *r, uint64_t version) {
    bool was_solved = c->run.eval.solved;
    if (run_eval_record(&c->run, r, version, false)) c->best_pending = true;
    if (c->run.eval.solved && !was_solved) c->solved_eval_id = c->eval_id;
}

static void start_eval(Coord *c) {
    MsgHeader h = {0};
    h.flags = MSG_NO_TARGET | MSG_SNAPSHOT;
    h.version = ++c->eval_id;
    for (int p = 0; p < c->rb.n_sources; p++) comm_send_ctl(&c->rb.comm, c->rb.source_rank[p], TAG_PARAM_REQ, h, NULL, 0);
    c->eval_pulling = true;
    c->eval_got = 0;
}

static void on_params(Coord *c, const Msg *m) {
    role_params_source(&c->rb, m, c->eval_pulling);
    memcpy(c->eval_params + m->h.params.offset, m->payload, m->h.count * sizeof(float));
    if (m->source == c->rb.source_rank[0]) c->eval_version = m->h.version;
    if (++c->eval_got < c->rb.n_sources) return;
    c->eval_pulling = false;
    EvalResult r;
    double t0 = now_seconds();
    bool done = evaluator_run(&c->ev, c->eval_params, &r);
    trace_span(&c->rb.trace, TR_EVAL, t0, now_seconds(), (uint32_t)c->eval_version);
    if (done) record_eval(c, &r, c->eval_version);
    else log_info(c->rb.ctx, "evaluation abandoned after %.1f s: %s", r.seconds, c->signal_who);
}

/* Bytes sent by every rank so far in this segment, all message types and
 * the allreduce's own traffic: the total summary.json's bytes_per_update
 * divides (jobsummary.c), as last reported. */
static uint64_t bytes_sent(const Coord *c) {
    uint64_t total = 0;
    for (int r = 0; r < c->lay->size; r++) {
        const RoleMetrics *m = &c->last[r];
        total += m->ring_bytes_sent;
        for (int k = 0; k < TAG_COUNT; k++) total += m->bytes_sent[k];
    }
    return total;
}

static void metrics_row(Coord *c, bool force_progress) {
    double extra[JOBSUM_EXTRA], loss_sum, eps;
    uint64_t loss_n;
    jobsummary_row(c->lay, c->last, extra, &loss_sum, &loss_n, &eps);
    double loss = loss_n > c->last_loss_n ? (loss_sum - c->last_loss_sum) / (double)(loss_n - c->last_loss_n) : NAN;
    uint64_t updates = c->run.updates - c->run.start_updates;
    RunRowFigures f = {.epsilon = eps, .loss = loss, .mean_q = NAN,
                       .staleness_mean = extra[TAG_COUNT], /* the staleness_mean column (jobsummary_columns) */
                       .bytes_per_update = updates ? (double)bytes_sent(c) / (double)updates : NAN,
                       .extra = extra};
    run_metrics_row(&c->run, &f, force_progress);
    c->last_loss_sum = loss_sum;
    c->last_loss_n = loss_n;
}

/* A stop signal to this rank, once: named for the log. */
static void note_own_signal(Coord *c) {
    if (c->own_signal_noted || !signals_stop_requested()) return;
    c->own_signal_noted = true;
    char buf[16];
    const char *name = signals_name(signals_stop_signal(), buf);
    if (c->signal_who[0]) return;
    snprintf(c->signal_who, sizeof c->signal_who, "%s to the coordinator (rank 0)", name);
    log_info(c->rb.ctx, "got %s: stopping the job", name);
}

/* STOP_REQ: rank m->source got a stop signal. The job stops as on the
 * coordinator's own (run_signalled), naming the rank. */
static void on_stop_req(Coord *c, const Msg *m) {
    Role role;
    int idx;
    layout_role_of(c->lay, m->source, &role, &idx);
    char buf[16];
    const char *name = signals_name((int)m->h.version, buf);
    c->run.stop_asked = true;
    if (c->signal_who[0]) return; /* one line for a signal to every rank (the launcher's, a batch system's) */
    snprintf(c->signal_who, sizeof c->signal_who, "%s to rank %d (%s %d/%d)", name, m->source, role_name(role), idx,
             c->lay->count[role]);
    log_info(c->rb.ctx, "rank %d (%s %d/%d) got %s: stopping the job", m->source, role_name(role), idx,
             c->lay->count[role], name);
}

/* Asked while an evaluation runs (every EVAL_CHECK_SECONDS): a stop signal
 * to this rank, or a STOP_REQ from another, gives it up. Only STOP_REQ is
 * taken off the wire here; everything else waits for the loop. */
static bool coord_abandon(void *self) {
    Coord *c = self;
    note_own_signal(c);
    Msg m;
    while (!run_signalled(&c->run) && comm_poll_tag(&c->rb.comm, TAG_STOP_REQ, &m)) on_stop_req(c, &m);
    return run_signalled(&c->run);
}

static void handle(Coord *c, const Msg *m) {
    switch (m->tag) {
    case TAG_METRICS:
    case TAG_STOPPED: {
        const RoleMetrics *rm = m->payload;
        Role want;
        int idx;
        layout_role_of(c->lay, m->source, &want, &idx);
        if (rm->role != (int32_t)want || rm->index != idx)
            DIE(c->rb.ctx, "metrics from rank %d claim role %d index %d", m->source, rm->role, rm->index);
        c->last[m->source] = *rm;
        if (m->tag == TAG_STOPPED) {
            if (c->stopped[m->source]) DIE(c->rb.ctx, "rank %d sent STOPPED twice", m->source);
            c->stopped[m->source] = true;
            c->n_waiting--;
        }
        aggregate(c);
        break;
    }
    case TAG_EPISODES: on_episodes(c, m); break;
    case TAG_PARAMS: on_params(c, m); break;
    case TAG_CKPT_DONE: coordckpt_on_done(c, m); break;
    case TAG_TRACE: jobtrace_on_msg(&c->traces, m); break;
    case TAG_STOP_REQ: on_stop_req(c, m); break;
    default: DIE(c->rb.ctx, "unexpected %s message from rank %d", proto_tag_name(m->tag), m->source);
    }
}

/* Take one message, if any, and handle it, noting who answered for
 * check_stop_deadline. Returns whether there was one. */
static bool receive(Coord *c) {
    Msg m;
    if (!comm_poll(&c->rb.comm, &m)) return false;
    c->answer[m.source].heard = now_seconds();
    if (m.tag == TAG_CKPT_DONE) c->answer[m.source].ckpt_done = m.h.version;
    handle(c, &m);
    return true;
}

/* Append one line of the report: "rank 1 (actor 0/2): no STOPPED, last
 * message 10.4 s ago". Returns false when buf is too full to take it. */
static bool report_rank(const Coord *c, int rank, const char *what, double now, char *buf, size_t cap) {
    Role role;
    int idx;
    layout_role_of(c->lay, rank, &role, &idx);
    size_t len = strlen(buf);
    char heard[48] = "no message yet";
    if (c->answer[rank].heard > 0)
        snprintf(heard, sizeof heard, "last message %.1f s ago", now - c->answer[rank].heard);
    int w = snprintf(buf + len, cap - len, "%srank %d (%s %d/%d): no %s, %s", len ? "; " : "", rank, role_name(role),
                     idx, c->lay->count[role], what, heard);
    if (w < 0 || (size_t)w >= cap - len) {
        buf[len] = '\0';
        return false;
    }
    return true;
}

/* What rank r still owes the stop (NULL: nothing): its STOPPED once it was
 * sent STOP, a CKPT_DONE of the checkpoint in flight, an evaluation's
 * PARAMS. */
static const char *owed(const Coord *c, int r) {
    Role role;
    int idx;
    layout_role_of(c->lay, r, &role, &idx);
    bool workers = role == ROLE_ACTOR || role == ROLE_LEARNER;
    bool sent_stop = workers ? c->state >= STOP_ST_WORKERS : c->state >= STOP_ST_SERVERS;
    bool source = role_source_index(&c->rb, r) >= 0;
    /* asked for a checkpoint file */
    bool writes = source || (role == ROLE_REPLAY && c->ckpt_replay) || coordckpt_writes_copy(c, role, idx);
    if (sent_stop && !c->stopped[r]) return "STOPPED";
    if (c->ckpt_busy && writes && c->answer[r].ckpt_done != c->ckpt_seq) return "CKPT_DONE";
    if (c->eval_pulling && source) return "PARAMS (evaluation)"; /* this or another source */
    return NULL;
}

/* trace.json from our ring and the traces that have arrived; 0 (also with
 * tracing off), or -1 with err. */
static int coord_trace(void *self, char *err) {
    Coord *c = self;
    return jobtrace_write(&c->traces, &c->rb.trace, c->run.log.dir, err);
}

/* A stop proceeds in steps, each waiting for answers: the checkpoint in
 * progress when it began (begin_stop), then each state of stopseq.h. A
 * rank that is hung (stopped by SIGSTOP, stuck in a system call,
 * livelocked) never answers, and without a limit the job would outlive
 * run.max_seconds forever. So when a step has waited
 * run.stop_deadline_seconds, name every rank it still waits for and end
 * the job with GORILA_EXIT_HUNG. Call only when no message is waiting, so
 * that answers queued while this rank was busy (an evaluation) have been
 * counted. */
static void check_stop_deadline(Coord *c) {
    double now = now_seconds(), limit = c->rb.cfg->run.stop_deadline_seconds;
    if (c->run.stop == STOP_NONE || c->state == STOP_ST_DONE || now - c->stop_step_t0 <= limit) return;
    char list[700] = ""; /* die_at's line holds 1024 bytes */
    int n = 0, listed = 0;
    for (int r = 1; r < c->lay->size; r++) {
        const char *what = owed(c, r);
        if (!what) continue;
        n++;
        if (report_rank(c, r, what, now, list, sizeof list)) listed++;
    }
    if (n == 0) return; /* the answers are all in: the next loop moves on */
    char err[ERR_LEN];
    if (coord_trace(c, err) != 0) fprintf(stderr, "gorila: error: %s\n", err); /* the hung ranks' tracks are empty */
    DIE_CODE(c->rb.ctx, GORILA_EXIT_HUNG,
             "stop deadline passed: %d rank%s did not answer within run.stop_deadline_seconds (%g s) while the job "
             "stopped (%s): %s%s; raise run.stop_deadline_seconds if they are only slow",
             n, n == 1 ? "" : "s", limit, runctl_stop_name(c->run.stop), list, listed < n ? "; and more" : "");
}

static void send_stop(Coord *c, Role role) {
    MsgHeader h = {0};
    h.stop.reason = (uint64_t)c->run.stop;
    for (int i = 0; i < c->lay->count[role]; i++) {
        comm_send_ctl(&c->rb.comm, layout_rank_of(c->lay, role, i), TAG_STOP, h, NULL, 0);
        c->n_waiting++;
    }
    c->stop_step_t0 = now_seconds(); /* a new step of the stop: its own deadline */
}

/* Handle messages until neither a checkpoint nor an evaluation is in
 * flight (within the stop deadline: this runs only while stopping). */
static void settle(Coord *c) {
    while (c->ckpt_busy || c->eval_pulling) {
        if (receive(c)) continue;
        check_stop_deadline(c);
        comm_idle(&c->rb.comm);
    }
}

/* RUN -> WORKERS (stopseq.h). */
static void begin_stop(Coord *c) {
    c->stop_step_t0 = now_seconds();
    note_own_signal(c); /* it may have come since the loop last looked */
    if (c->run.stop == STOP_SIGNAL) log_info(c->rb.ctx, "stopping: signal (%s)", c->signal_who);
    else log_info(c->rb.ctx, "stopping: %s", runctl_stop_name(c->run.stop));
    settle(c); /* a checkpoint or an evaluation in progress finishes first */
    if (c->best_pending) {
        coordckpt_start(c, CK_BEST, c->eval_id);
        settle(c);
    }
    /* Stopped because an evaluation solved the env: the final checkpoint is
     * exactly the parameters that evaluation saw (the sources' snapshot;
     * nothing was evaluated since, as the stop is decided before the next
     * evaluation starts). */
    bool snap = c->run.stop == STOP_SOLVED && c->solved_eval_id != 0 && c->solved_eval_id == c->eval_id;
    coordckpt_start(c, CK_FINAL, snap ? c->eval_id : 0);
    send_stop(c, ROLE_ACTOR);
    send_stop(c, ROLE_LEARNER);
}

/* The final checkpoint's evaluation (run_final_eval_due): its parameters
 * read back from the files and evaluated. */
static void final_eval(Coord *c) {
    if (!run_final_eval_due(&c->run, c->ckpt_snapshot != 0)) return;
    char err[ERR_LEN];
    RunCkptShard sh = {.off = 0, .len = c->rb.net.n_params, .params = c->eval_params, .target = c->eval_target};
    if (runckpt_read_slice(c->rb.cfg, &c->rb.net, c->run.final_dir, &sh, err) != 0) {
        run_warn(&c->run, "final evaluation skipped: %s", err);
        return;
    }
    EvalResult r;
    double t0 = now_seconds();
    bool done = evaluator_run(&c->ev, c->eval_params, &r);
    trace_span(&c->rb.trace, TR_EVAL, t0, now_seconds(), (uint32_t)sh.version);
    if (done) run_final_evaluated(&c->run, &r, sh.version);
    else run_warn(&c->run, "final evaluation abandoned after %.1f s: %s", r.seconds, c->signal_who);
}

/* FINAL -> SERVERS (stopseq.h): every actor and learner has stopped, so the
 * counters are final. */
static void finish_final(Coord *c) {
    if (c->final_shards_written) coordckpt_commit(c, c->run.env_steps, c->run.episodes);
    final_eval(c);
    send_stop(c, ROLE_REPLAY);
    send_stop(c, ROLE_PS);
}

/* Whether the event that moves the stop sequence on holds now. */
static bool event_holds(Coord *c, StopEvent ev) {
    switch (ev) {
    case STOP_EV_DECIDED:
        /* The stop decision comes first, so that a solving evaluation is
         * the last one and its snapshot can be the final checkpoint. */
        c->run.stop = run_stop_due(&c->run, true, all_actors_done(c));
        return c->run.stop != STOP_NONE;
    case STOP_EV_WORKERS_DONE:
    case STOP_EV_SERVERS_DONE: return c->n_waiting == 0;
    case STOP_EV_SETTLED: return !c->ckpt_busy && !c->eval_pulling;
    default: return false;
    }
}

/* Take the transition on ev and do the coordinator's part of it. */
static void transition(Coord *c, StopEvent ev) {
    const StopTransition *t = stopseq_next(c->state, ev);
    /* The coordinator's part first, then the new state: while begin_stop
     * settles what is in flight, STOP has not gone to the workers yet, and
     * check_stop_deadline must not count them as owing STOPPED. */
    if (t->to == STOP_ST_WORKERS) begin_stop(c);
    else if (t->to == STOP_ST_SERVERS) finish_final(c);
    c->state = t->to;
}

/* While running: a new best, an evaluation, a checkpoint when due. */
static void run_step(Coord *c) {
    Run *run = &c->run;
    /* A new best is saved from the sources' snapshot before the next
     * evaluation replaces it. */
    if (c->best_pending && !c->ckpt_busy) coordckpt_start(c, CK_BEST, c->eval_id);
    /* One evaluation at a time: a multiple passed while one runs is taken
     * when it has finished. */
    if (!c->eval_pulling && !c->best_pending && runctl_eval_due(&run->rc, run->updates)) start_eval(c);
    /* A SIGUSR1 during a checkpoint waits for the next loop rather than
     * being taken and lost. */
    if (!c->ckpt_busy && runctl_ckpt_due(&run->rc, now_seconds() - run->t0, run->updates, signals_take_checkpoint()))
        coordckpt_start(c, CK_PERIODIC, 0);
}

/* ---- the end of the run (run_end's hooks) ---- */

static void end_row(void *self) { metrics_row(self, true); }

static void end_summary(void *self, RunSummary *sum) {
    const Coord *c = self;
    jobsummary_summary(c->rb.cfg, c->lay, c->last, sum);
}

static void end_summary_extra(void *self, JsonW *j) {
    const Coord *c = self;
    jobsummary_json(j, c->rb.cfg, c->lay, c->last, c->run.updates - c->run.start_updates, c->rb.net.n_params,
                run_wall(&c->run) - c->run.wall_offset);
    /* With Ape-X exploration each actor has its own epsilon, and this is
     * where the greedy ones' returns show. */
    actorstats_json(j, "actors", &c->actors);
}

static void end_lines(void *self) {
    const Coord *c = self;
    if (c->actors.n < 2) return;
    char line[RUNCTL_LINE_LEN];
    actorstats_line(line, sizeof line, &c->actors);
    printf("%s\n", line);
}

/* The run starts where args->start says; the run directory is opened (or
 * reopened) and every rank's slot of `last` named. */
static void coord_init(Coord *c, const Ctx *ctx, const JobArgs *args) {
    role_init(&c->rb, ctx, args);
    comm_expect(&c->rb.comm, NULL, 0); /* nothing it waits for is urgent */
    c->args = args;
    c->lay = args->lay;
    const Config *cfg = args->cfg;
    const JobStart *js = &args->start;
    char err[ERR_LEN];
    RunStart start = {.resumed = js->resumed != 0, .run_dir = js->run_dir, .env_steps = js->env_steps,
                      .updates = js->updates, .episodes = js->episodes, .wall_seconds = js->wall_seconds,
                      .has_history = js->has_history != 0, .history = js->history};
    RunCkptManifest man;
    if (js->resumed && runckpt_read_manifest(js->ckpt_dir, &man, err) == 0) start.ckpt_seq = man.seq;
    run_init(&c->run, cfg, ctx, config_sync_name(cfg->sync.mode), &c->rb.trace, &start);
    JobSummaryColumns cols;
    jobsummary_columns(&cols);
    int log_rc = run_open(&c->run, cols.name, JOBSUM_EXTRA, err);
    if (log_rc != 0) DIE_CODE(ctx, log_rc, "%s", err);
    /* The actors' environments always start afresh in a job; a Python
     * one's user is told, as in a local run (trainerckpt.c). */
    if (js->resumed && env_extern_kind(cfg->env.name))
        log_info(ctx, "python environment: resumed with a fresh reset of each slot (its state is not saved)");
    if (evaluator_init(&c->ev, cfg, &c->rb.net, 0, err) != 0) DIE(ctx, "%s", err);
    evaluator_set_abandon(&c->ev, coord_abandon, c);
    run_set_abandon(&c->run, coord_abandon, c);
    c->eval_params = xmalloc_for(c->rb.net.n_params * sizeof(float), "network parameters", "network.hidden");
    c->eval_target = xmalloc_for(c->rb.net.n_params * sizeof(float), "network parameters", "network.hidden");
    c->last = xcalloc((size_t)c->lay->size, sizeof *c->last);
    actorstats_init(&c->actors, c->lay->count[ROLE_ACTOR]);
    c->stopped = xcalloc((size_t)c->lay->size, sizeof(bool));
    c->answer = xcalloc((size_t)c->lay->size, sizeof *c->answer);
    jobtrace_init(&c->traces, ctx, c->lay, cfg->logging.trace ? (size_t)cfg->logging.trace_events : 0);
    for (int r = 0; r < c->lay->size; r++) {
        Role role;
        int idx;
        layout_role_of(c->lay, r, &role, &idx);
        c->last[r].role = (int32_t)role;
        c->last[r].index = idx;
    }
    log_info(ctx, "%s: %s, %zu parameters, %d parameter source%s; evaluations and actors use %s", cfg->env.name,
             config_sync_name(cfg->sync.mode), c->rb.net.n_params, c->rb.n_sources, c->rb.n_sources == 1 ? "" : "s",
             jobsummary_evaluated(cfg));
    if (cfg->sync.lr_scaling != LR_SCALING_NONE) {
        char ramp[96] = "";
        if (cfg->sync.lr_warmup_updates > 0 && agentcfg_lr_scale(cfg) != 1.0)
            snprintf(ramp, sizeof ramp, ", reached over %d updates from %g", cfg->sync.lr_warmup_updates,
                     cfg->optimizer.lr);
        log_info(ctx, "learning rate %g x %.4g (sync.lr_scaling %s, %d learners) = %g%s", cfg->optimizer.lr,
                 agentcfg_lr_scale(cfg), config_lr_scaling_name(cfg->sync.lr_scaling), cfg->roles.learners,
                 cfg->optimizer.lr * agentcfg_lr_scale(cfg), ramp);
    }
}

static void coord_free(Coord *c) {
    run_free(&c->run);
    evaluator_free(&c->ev);
    actorstats_free(&c->actors);
    free(c->eval_params);
    free(c->eval_target);
    free(c->last);
    free(c->stopped);
    free(c->answer);
    jobtrace_free(&c->traces);
    role_free(&c->rb);
    free(c);
}

int coordinator_run(const Ctx *ctx, const JobArgs *args) {
    Coord *c = xcalloc(1, sizeof *c);
    c->ckpt_copy_first = -1;
    coord_init(c, ctx, args);
    while (c->state != STOP_ST_DONE) {
        note_own_signal(c);
        bool worked = false;
        while (receive(c)) worked = true;
        StopEvent ev = stopseq_awaits(c->state);
        if (event_holds(c, ev)) {
            transition(c, ev);
            if (c->state == STOP_ST_WORKERS) continue;
        } else if (c->state == STOP_ST_RUN) {
            run_step(c);
        }
        check_stop_deadline(c);
        if (runctl_row_due(&c->run.rc, run_wall(&c->run), c->run.env_steps, c->run.updates)) metrics_row(c, false);
        if (worked) comm_busy(&c->rb.comm);
        else comm_idle(&c->rb.comm);
    }
    c->last[0].cpu_seconds = cpu_seconds();
    c->last[0].wait_seconds = c->rb.comm.wait_seconds;
    c->last[0].busy_seconds = now_seconds() - c->run.t0 - c->rb.comm.wait_seconds;
    comm_fill_metrics(&c->rb.comm, &c->last[0]);
    /* Each actor's exploration rate as it last reported it (its STOPPED). */
    for (int i = 0; i < c->actors.n; i++)
        actorstats_set_epsilon(&c->actors, i, c->last[layout_rank_of(c->lay, ROLE_ACTOR, i)].epsilon);
    RunEndHooks hooks = {.self = c, .last_row = end_row, .summary = end_summary, .summary_extra = end_summary_extra,
                         .write_trace = coord_trace, .lines = end_lines};
    int rc = run_end(&c->run, &hooks);
    MsgHeader h = {0};
    for (int r = 1; r < c->lay->size; r++) comm_send_ctl(&c->rb.comm, r, TAG_EXIT, h, NULL, 0);
    Msg m;
    comm_drain(&c->rb.comm, NULL, 0, NULL, 0, &m);
    coord_free(c);
    return rc;
}
