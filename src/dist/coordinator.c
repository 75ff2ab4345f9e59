/* coordinator.c: rank 0 of a distributed job. It does no learning itself;
 * it watches, evaluates, records and decides:
 *
 *  - gathers METRICS from every rank (cumulative counters, 4 per second)
 *    and EPISODES from the actors, and writes the run directory (runlog.h:
 *    the same files and summary.json keys as the local trainer, plus
 *    per-role counters);
 *  - evaluates greedily on the latest parameters every eval.every_updates
 *    optimizer steps (parameter server 0, or learner 0 in allreduce mode,
 *    reports at once when a multiple is reached; the coordinator then pulls
 *    the parameters from every source and runs the Evaluator);
 *  - triggers checkpoints (every checkpoint.every_seconds or every_updates,
 *    and on SIGUSR1): CKPT_REQ to every parameter source, which write their
 *    shard files; when all answered, the MANIFEST is written and `latest`
 *    moved (runckpt.h);
 *  - decides when to stop: solved (run.stop_when_solved), every actor used
 *    its env-step share, the update budget, run.max_seconds, or SIGINT /
 *    SIGTERM, in that order; and shuts the job down in this order:
 *
 *      1. CKPT_REQ(MSG_FINAL) to the parameter sources, then STOP to the
 *         actors and learners; wait for their STOPPED. (A PS writes the final
 *         shard only after every learner's last-gradient marker; learner 0
 *         in allreduce mode writes it when the learners leave the ring.)
 *      2. wait for every CKPT_DONE, write the MANIFEST; evaluate the final
 *         parameters, read back from that checkpoint.
 *      3. STOP to the replay shards and parameter servers; wait for STOPPED.
 *      4. EXIT to everyone; finish our own sends; return.
 *
 *    No rank blocks in MPI at any point, so a slow or busy rank only
 *    delays the sequence, and every message sent before EXIT is matched.
 *
 * The schedules (evaluation, checkpoint, metrics row), the stop decision,
 * the rates and the progress line are runctl.h's, the same code the local
 * trainer runs; what is left here is gathering the counters and the messages.
 */
#include "evaluator.h"
#include "json.h"
#include "agentcfg.h"
#include "role.h"
#include "runlog.h"
#include "signals.h"
#include "runckpt.h"
#include "runctl.h"
#include "util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum { PH_RUN, PH_STOP_WORKERS, PH_FINAL, PH_STOP_SERVERS, PH_DONE } Phase;

typedef struct {
    RoleBase rb;
    const JobArgs *args;
    const Layout *lay;
    RunLog log;
    Evaluator ev;
    float *eval_params;
    float *eval_target;       /* (n_params) the final eval reads it from the checkpoint, unused */
    int eval_got;
    bool eval_pulling;
    uint64_t eval_version;
    RoleMetrics *last;        /* (size) latest report of each rank */
    bool *stopped;            /* (size) STOPPED received */
    double t0, wall_offset;
    uint64_t env_steps, updates, episodes;
    RecentReturns recent;
    RunCtl rc;                /* eval, checkpoint and metrics-row schedules */
    EvalTrack eval;
    /* checkpoints */
    bool ckpt_busy, ckpt_final;
    uint64_t ckpt_seq;
    int ckpt_done, ckpt_failed;
    char ckpt_dir[PATH_LEN], ckpt_err[ERR_LEN];
    uint64_t ckpt_env_steps, ckpt_updates, ckpt_episodes;
    bool final_ckpt_ok, final_shards_written;
    /* loss over the metrics interval, from the learners' cumulative sums */
    double last_loss_sum;
    uint64_t last_loss_n;
    /* shutdown */
    Phase phase;
    StopReason stop_reason;
    int n_waiting;            /* STOPPED still expected in this phase */
} Coord;

static double wall(const Coord *c) { return c->wall_offset + now_seconds() - c->t0; }

static void aggregate(Coord *c) {
    const Layout *lay = c->lay;
    uint64_t steps = 0;
    for (int i = 0; i < lay->count[ROLE_ACTOR]; i++) steps += c->last[layout_rank_of(lay, ROLE_ACTOR, i)].env_steps;
    c->env_steps = c->args->start.env_steps + steps;
    int src = c->rb.source_rank[0];
    uint64_t v = c->last[src].params_version;
    if (v > c->updates) c->updates = v;
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
        runlog_episode(&c->log, wall(c), c->env_steps, r[i].actor, r[i].ret, r[i].length);
        recent_add(&c->recent, r[i].ret);
        c->episodes++;
    }
}

static void record_eval(Coord *c, const EvalResult *r) {
    runctl_eval_done(&c->rc, c->eval_version);
    bool solved_now = evaltrack_record(&c->eval, r->mean, c->env_steps, wall(c));
    EvalRow row = {wall(c), c->env_steps, c->eval_version, r->episodes, r->mean, r->std, r->min, r->max, solved_now};
    runlog_eval(&c->log, &row);
}

static void start_eval(Coord *c) {
    MsgHeader h = {0};
    h.flags = MSG_NO_TARGET;
    for (int p = 0; p < c->rb.n_sources; p++) comm_send_ctl(&c->rb.comm, c->rb.source_rank[p], TAG_PARAM_REQ, h, NULL, 0);
    c->eval_pulling = true;
    c->eval_got = 0;
}

static void on_params(Coord *c, const Msg *m) {
    role_params_source(&c->rb, m, c->eval_pulling);
    memcpy(c->eval_params + m->h.aux, m->payload, m->h.count * sizeof(float));
    if (c->eval_got == 0 || m->h.version < c->eval_version) c->eval_version = m->h.version;
    if (++c->eval_got < c->rb.n_sources) return;
    c->eval_pulling = false;
    EvalResult r;
    evaluator_run(&c->ev, c->eval_params, &r);
    record_eval(c, &r);
}

static void commit_ckpt(Coord *c, uint64_t env_steps, uint64_t episodes);

static void start_ckpt(Coord *c, bool final) {
    char err[ERR_LEN];
    c->ckpt_seq++;
    if (runckpt_begin(c->log.dir, c->ckpt_seq, c->ckpt_dir, err) != 0) {
        log_info(c->rb.ctx, "checkpoint skipped: %s", err);
        return;
    }
    c->ckpt_busy = true;
    c->ckpt_final = final;
    c->ckpt_done = c->ckpt_failed = 0;
    c->ckpt_env_steps = c->env_steps;
    c->ckpt_updates = c->updates;
    c->ckpt_episodes = c->args->start.episodes + c->episodes;
    MsgHeader h = {0};
    h.version = c->ckpt_seq;
    h.flags = final ? MSG_FINAL : 0;
    size_t len = strlen(c->ckpt_dir);
    h.count = len;
    for (int p = 0; p < c->rb.n_sources; p++)
        comm_send_ctl(&c->rb.comm, c->rb.source_rank[p], TAG_CKPT_REQ, h, c->ckpt_dir, len);
}

static void on_ckpt_done(Coord *c, const Msg *m) {
    if (!c->ckpt_busy || m->h.version != c->ckpt_seq) DIE(c->rb.ctx, "unexpected CKPT_DONE from rank %d", m->source);
    if (m->h.flags & MSG_FAILED) {
        c->ckpt_failed++;
        size_t n = m->bytes < ERR_LEN - 1 ? m->bytes : ERR_LEN - 1;
        memcpy(c->ckpt_err, m->payload, n);
        c->ckpt_err[n] = '\0';
    }
    if (m->h.aux > c->ckpt_updates && m->source == c->rb.source_rank[0]) c->ckpt_updates = m->h.aux;
    if (++c->ckpt_done < c->rb.n_sources) return;
    c->ckpt_busy = false;
    if (c->ckpt_failed) {
        log_info(c->rb.ctx, "checkpoint %llu failed: %s", (unsigned long long)c->ckpt_seq, c->ckpt_err);
        return;
    }
    /* The final checkpoint is committed once every worker has stopped, with
     * the final counters (commit_final); a periodic one now, with the
     * counters as they stood when it was requested (actors report every
     * 20 ms, so they are at most that stale). */
    if (c->ckpt_final) c->final_shards_written = true;
    else commit_ckpt(c, c->ckpt_env_steps, c->ckpt_episodes);
}

/* Write the MANIFEST of the checkpoint whose shards are all written. */
static void commit_ckpt(Coord *c, uint64_t env_steps, uint64_t episodes) {
    RunCkptManifest man = {
        .seq = c->ckpt_seq,
        .env_steps = env_steps,
        .updates = c->ckpt_updates,
        .episodes = episodes,
        .wall_seconds = wall(c),
        .n_shards = c->rb.n_sources,
    };
    snprintf(man.mode, sizeof man.mode, "%s", config_sync_name(c->rb.cfg->sync.mode));
    char err[ERR_LEN];
    if (runckpt_commit(c->log.dir, c->ckpt_dir, &man, c->rb.cfg->checkpoint.keep, err) != 0) {
        log_info(c->rb.ctx, "checkpoint %llu not committed: %s", (unsigned long long)c->ckpt_seq, err);
        return;
    }
    if (c->ckpt_final) c->final_ckpt_ok = true;
    log_info(c->rb.ctx, "checkpoint %s: %llu env steps, %llu updates", c->ckpt_dir,
             (unsigned long long)man.env_steps, (unsigned long long)man.updates);
}

static void metrics_row(Coord *c, bool force_progress) {
    double t = wall(c), steps_ps, updates_ps;
    runctl_rates(&c->rc, t, c->env_steps, c->updates, &steps_ps, &updates_ps);
    double loss_sum = 0;
    uint64_t loss_n = 0, bytes[TAG_COUNT] = {0}, stale[PROTO_STALENESS_BINS] = {0}, drops = 0, rsize = 0;
    uint64_t inserted = 0, sampled = 0;
    double eps = NAN;
    for (int r = 1; r < c->lay->size; r++) {
        const RoleMetrics *m = &c->last[r];
        for (int k = 0; k < TAG_COUNT; k++) bytes[k] += m->bytes_sent[k];
        if (m->role == ROLE_LEARNER) {
            loss_sum += m->loss_sum;
            loss_n += m->updates;
        }
        if (m->role == ROLE_PS) {
            for (int k = 0; k < PROTO_STALENESS_BINS; k++) stale[k] += m->staleness[k];
            drops += m->drops;
        }
        if (m->role == ROLE_REPLAY) {
            rsize += m->replay_size;
            inserted += m->inserted;
            sampled += m->sampled;
        }
        if (m->role == ROLE_ACTOR && m->index == 0) eps = m->epsilon;
    }
    double sn = 0, ss = 0;
    for (int k = 0; k < PROTO_STALENESS_BINS; k++) {
        sn += (double)stale[k];
        ss += (double)stale[k] * k;
    }
    MetricsRow row = {
        .wall_seconds = t,
        .env_steps = c->env_steps,
        .updates = c->updates,
        .env_steps_per_second = steps_ps,
        .updates_per_second = updates_ps,
        .mean_train_return = recent_mean(&c->recent),
        .last_eval_return = c->eval.last,
        .epsilon = eps,
        .loss = loss_n > c->last_loss_n ? (loss_sum - c->last_loss_sum) / (double)(loss_n - c->last_loss_n) : NAN,
    };
    double extra[TAG_COUNT + 5];
    for (int k = 0; k < TAG_COUNT; k++) extra[k] = (double)bytes[k];
    extra[TAG_COUNT] = sn > 0 ? ss / sn : NAN;
    extra[TAG_COUNT + 1] = (double)drops;
    extra[TAG_COUNT + 2] = (double)rsize;
    extra[TAG_COUNT + 3] = (double)inserted;
    extra[TAG_COUNT + 4] = (double)sampled;
    runlog_metrics(&c->log, &row, extra);
    char line[RUNCTL_LINE_LEN];
    runctl_progress_line(line, sizeof line, &row, c->eval.best);
    runlog_progress(&c->log, t, force_progress, "%s", line);
    c->last_loss_sum = loss_sum;
    c->last_loss_n = loss_n;
}

static void role_json(JsonW *j, const RoleMetrics *m, int rank) {
    json_begin_object(j, NULL);
    json_u64(j, "rank", (uint64_t)rank);
    json_u64(j, "index", (uint64_t)m->index);
    switch ((Role)m->role) {
    case ROLE_ACTOR:
        json_u64(j, "env_steps", m->env_steps);
        json_u64(j, "episodes", m->episodes);
        json_num(j, "epsilon", m->epsilon);
        break;
    case ROLE_REPLAY:
        json_u64(j, "inserted", m->inserted);
        json_u64(j, "sampled", m->sampled);
        json_u64(j, "size", m->replay_size);
        break;
    case ROLE_LEARNER:
        json_u64(j, "gradients", m->updates);
        json_num(j, "mean_loss", m->updates ? m->loss_sum / (double)m->updates : NAN);
        json_u64(j, "params_version", m->params_version);
        break;
    case ROLE_PS:
        json_u64(j, "updates", m->updates);
        json_u64(j, "params_version", m->params_version);
        json_u64(j, "drops", m->drops);
        json_num(j, "apply_seconds", m->apply_seconds);
        json_num(j, "apply_latency_us", m->updates ? 1e6 * m->apply_seconds / (double)m->updates : NAN);
        json_begin_array(j, "staleness_histogram");
        for (int k = 0; k < PROTO_STALENESS_BINS; k++) json_u64(j, NULL, m->staleness[k]);
        json_end_array(j);
        break;
    default: break;
    }
    json_num(j, "busy_seconds", m->busy_seconds);
    json_num(j, "wait_seconds", m->wait_seconds);
    json_num(j, "cpu_seconds", m->cpu_seconds);
    const char *dir[4] = {"msgs_sent", "bytes_sent", "msgs_recv", "bytes_recv"};
    const uint64_t *arr[4] = {m->msgs_sent, m->bytes_sent, m->msgs_recv, m->bytes_recv};
    for (int d = 0; d < 4; d++) {
        json_begin_object(j, dir[d]);
        for (int k = 0; k < TAG_COUNT; k++)
            if (arr[d][k]) json_u64(j, proto_tag_name(TAG_FIRST + k), arr[d][k]);
        json_end_object(j);
    }
    json_end_object(j);
}

static int write_summary(Coord *c) {
    char err[ERR_LEN];
    FILE *f = runlog_summary_begin(&c->log, err);
    if (!f) {
        fprintf(stderr, "gorila: error: %s\n", err);
        return -1;
    }
    double t = wall(c);
    const Config *cfg = c->rb.cfg;
    double run_t = t - c->wall_offset;
    RunSummary sum = {
        .mode = config_sync_name(cfg->sync.mode), .env = cfg->env.name,
        .stop_reason = runctl_stop_name(c->stop_reason),
        .seed = cfg->run.seed, .env_steps = c->env_steps, .updates = c->updates,
        .episodes = c->args->start.episodes + c->episodes, .wall_seconds = t, .eval = &c->eval,
        .run_seconds = run_t, .run_env_steps = c->env_steps - c->args->start.env_steps,
        .run_updates = c->updates - c->args->start.updates, .resumed = c->args->start.resumed,
    };
    JsonW j;
    json_init(&j, f, true);
    json_begin_object(&j, NULL);
    runlog_summary_fields(&j, &sum);
    /* Traffic: total bytes sent by every rank, by message type, and per update. */
    uint64_t total = 0, by[TAG_COUNT] = {0}, drops = 0;
    for (int r = 0; r < c->lay->size; r++) {
        for (int k = 0; k < TAG_COUNT; k++) by[k] += c->last[r].bytes_sent[k];
        if (c->last[r].role == ROLE_PS) drops += c->last[r].drops;
    }
    json_begin_object(&j, "bytes_sent");
    for (int k = 0; k < TAG_COUNT; k++) {
        json_u64(&j, proto_tag_name(TAG_FIRST + k), by[k]);
        total += by[k];
    }
    json_end_object(&j);
    uint64_t run_updates = c->updates - c->args->start.updates;
    json_num(&j, "bytes_per_update", run_updates ? (double)total / (double)run_updates : NAN);
    json_u64(&j, "stale_gradients_dropped", drops);
    json_begin_object(&j, "roles");
    const char *names[] = {"coordinator", "actor", "replay", "learner", "ps"};
    const Role roles[] = {ROLE_COORD, ROLE_ACTOR, ROLE_REPLAY, ROLE_LEARNER, ROLE_PS};
    for (int k = 0; k < 5; k++) {
        if (c->lay->count[roles[k]] == 0) continue;
        json_begin_array(&j, names[k]);
        for (int i = 0; i < c->lay->count[roles[k]]; i++) {
            int rank = layout_rank_of(c->lay, roles[k], i);
            role_json(&j, &c->last[rank], rank);
        }
        json_end_array(&j);
    }
    json_end_object(&j);
    json_end_object(&j);
    if (runlog_summary_commit(&c->log, f, err) != 0) {
        fprintf(stderr, "gorila: error: %s\n", err);
        return -1;
    }
    return 0;
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
    case TAG_CKPT_DONE: on_ckpt_done(c, m); break;
    default: DIE(c->rb.ctx, "unexpected %s message from rank %d", proto_tag_name(m->tag), m->source);
    }
}

static void send_stop(Coord *c, Role role) {
    MsgHeader h = {0};
    h.aux = (uint64_t)c->stop_reason;
    for (int i = 0; i < c->lay->count[role]; i++) {
        comm_send_ctl(&c->rb.comm, layout_rank_of(c->lay, role, i), TAG_STOP, h, NULL, 0);
        c->n_waiting++;
    }
}

static void begin_stop(Coord *c, StopReason reason) {
    c->stop_reason = reason;
    log_info(c->rb.ctx, "stopping: %s", runctl_stop_name(reason));
    while (c->ckpt_busy) { /* let a checkpoint in progress finish first */
        Msg m;
        if (comm_poll(&c->rb.comm, &m)) handle(c, &m);
        else comm_idle(&c->rb.comm);
    }
    start_ckpt(c, true);
    send_stop(c, ROLE_ACTOR);
    send_stop(c, ROLE_LEARNER);
    c->phase = PH_STOP_WORKERS;
}

/* Final evaluation from the final checkpoint (all sources have written it). */
static void final_eval(Coord *c) {
    if (!c->final_ckpt_ok || !runctl_final_eval_due(&c->rc, c->stop_reason, c->updates)) return;
    char err[ERR_LEN];
    RunCkptShard sh = {.off = 0, .len = c->rb.net.n_params, .params = c->eval_params, .target = c->eval_target};
    if (runckpt_read_slice(c->rb.cfg, &c->rb.net, c->ckpt_dir, &sh, err) == 0) {
        EvalResult r;
        c->eval_version = c->updates;
        evaluator_run(&c->ev, c->eval_params, &r);
        record_eval(c, &r);
    } else {
        log_info(c->rb.ctx, "final evaluation skipped: %s", err);
    }
}

int coordinator_run(const Ctx *ctx, const JobArgs *args) {
    Coord *c = xcalloc(1, sizeof *c);
    role_init(&c->rb, ctx, args);
    c->args = args;
    c->lay = args->lay;
    const Config *cfg = args->cfg;
    char err[ERR_LEN];
    c->t0 = now_seconds();
    c->wall_offset = args->start.wall_seconds;
    c->updates = args->start.updates;
    c->env_steps = args->start.env_steps;
    c->ckpt_seq = 0;
    const char *extra[TAG_COUNT + 5];
    char names[TAG_COUNT][48];
    for (int k = 0; k < TAG_COUNT; k++) {
        snprintf(names[k], sizeof names[k], "bytes_%s", proto_tag_name(TAG_FIRST + k));
        extra[k] = names[k];
    }
    extra[TAG_COUNT] = "staleness_mean";
    extra[TAG_COUNT + 1] = "stale_drops";
    extra[TAG_COUNT + 2] = "replay_size";
    extra[TAG_COUNT + 3] = "replay_inserted";
    extra[TAG_COUNT + 4] = "replay_sampled";
    int log_rc = runlog_init(&c->log, cfg, args->start.resumed ? args->start.run_dir : NULL, extra, TAG_COUNT + 5, err);
    if (log_rc != 0) DIE_CODE(ctx, log_rc, "%s", err);
    if (args->start.resumed) {
        RunCkptManifest man;
        if (runckpt_read_manifest(args->start.ckpt_dir, &man, err) == 0) c->ckpt_seq = man.seq;
    }
    printf("run directory: %s\n", c->log.dir);
    fflush(stdout);
    if (evaluator_init(&c->ev, cfg, &c->rb.net, 0, err) != 0) DIE(ctx, "%s", err);
    c->eval_params = xmalloc_aligned(c->rb.net.n_params * sizeof(float));
    c->eval_target = xmalloc(c->rb.net.n_params * sizeof(float));
    evaltrack_init(&c->eval, env_find(cfg->env.name)->reward_threshold);
    c->last = xcalloc((size_t)c->lay->size, sizeof *c->last);
    c->stopped = xcalloc((size_t)c->lay->size, sizeof(bool));
    for (int r = 0; r < c->lay->size; r++) {
        Role role;
        int idx;
        layout_role_of(c->lay, r, &role, &idx);
        c->last[r].role = (int32_t)role;
        c->last[r].index = idx;
    }
    runctl_init(&c->rc, cfg, wall(c), c->env_steps, c->updates);
    log_info(ctx, "%s: %s, %zu parameters, %d parameter source%s", cfg->env.name, config_sync_name(cfg->sync.mode),
             c->rb.net.n_params, c->rb.n_sources, c->rb.n_sources == 1 ? "" : "s");

    while (c->phase != PH_DONE) {
        bool worked = false;
        Msg m;
        while (comm_poll(&c->rb.comm, &m)) {
            handle(c, &m);
            worked = true;
        }
        double t = wall(c);
        double run_t = now_seconds() - c->t0;
        if (c->phase == PH_RUN) {
            /* One evaluation at a time: a multiple passed while one runs
             * is taken when it has finished. */
            if (!c->eval_pulling && runctl_eval_due(&c->rc, c->updates)) start_eval(c);
            /* A SIGUSR1 during a checkpoint waits for the next loop rather
             * than being taken and lost. */
            if (!c->ckpt_busy && runctl_ckpt_due(&c->rc, run_t, c->updates, signals_take_checkpoint()))
                start_ckpt(c, false);
            RunState st = {.env_steps = c->env_steps, .updates = c->updates, .wall_seconds = t,
                           .solved = c->eval.solved, .signal = signals_stop_requested(),
                           .by_actors = true, .actors_done = all_actors_done(c)};
            StopReason why = runctl_stop(cfg, &st);
            if (why != STOP_NONE) begin_stop(c, why);
        } else if (c->phase == PH_STOP_WORKERS && c->n_waiting == 0) {
            c->phase = PH_FINAL;
        } else if (c->phase == PH_FINAL && !c->ckpt_busy && !c->eval_pulling) {
            /* Every actor and learner has stopped: the counters are final. */
            if (c->final_shards_written) {
                if (c->updates > c->ckpt_updates) c->ckpt_updates = c->updates;
                commit_ckpt(c, c->env_steps, c->args->start.episodes + c->episodes);
            }
            final_eval(c);
            send_stop(c, ROLE_REPLAY);
            send_stop(c, ROLE_PS);
            c->phase = PH_STOP_SERVERS;
        } else if (c->phase == PH_STOP_SERVERS && c->n_waiting == 0) {
            c->phase = PH_DONE;
        }
        if (runctl_row_due(&c->rc, t)) metrics_row(c, false);
        if (worked) comm_busy(&c->rb.comm);
        else comm_idle(&c->rb.comm);
    }
    metrics_row(c, true);
    runlog_progress_done(&c->log);
    c->last[0].cpu_seconds = cpu_seconds();
    c->last[0].wait_seconds = c->rb.comm.wait_seconds;
    c->last[0].busy_seconds = now_seconds() - c->t0 - c->rb.comm.wait_seconds;
    comm_fill_metrics(&c->rb.comm, &c->last[0]);
    int rc = write_summary(c) == 0 ? 0 : 1;
    printf("%s: %s after %llu env steps, %llu updates, %.1f s; last eval %.1f, best %.1f (%s)\n", cfg->env.name,
           c->eval.solved ? "solved" : "not solved", (unsigned long long)c->env_steps, (unsigned long long)c->updates,
           wall(c), c->eval.last, c->eval.best, runctl_stop_name(c->stop_reason));
    printf("run directory: %s\n", c->log.dir);
    fflush(stdout);
    MsgHeader h = {0};
    for (int r = 1; r < c->lay->size; r++) comm_send_ctl(&c->rb.comm, r, TAG_EXIT, h, NULL, 0);
    Msg m;
    comm_drain(&c->rb.comm, NULL, 0, NULL, 0, &m);
    runlog_free(&c->log);
    evaluator_free(&c->ev);
    runctl_free(&c->rc);
    free(c->eval_params);
    free(c->eval_target);
    free(c->last);
    free(c->stopped);
    role_free(&c->rb);
    free(c);
    return rc;
}
