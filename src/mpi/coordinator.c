/* coordinator.c: rank 0 of a distributed job. It does no learning itself;
 * it watches, evaluates, records and decides:
 *
 *  - gathers METRICS from every rank (cumulative counters, 4 per second)
 *    and EPISODES from the actors, and writes the run directory (runlog.h:
 *    the same files and summary.json keys as the local trainer, plus
 *    per-role counters and each actor's returns, actorstats.h);
 *  - evaluates greedily every eval.every_updates optimizer steps (parameter
 *    server 0, or learner 0 in allreduce mode, reports at once when a
 *    multiple is reached): it pulls the parameters from every source with
 *    PARAM_REQ(MSG_SNAPSHOT), and each source keeps a copy of exactly what it
 *    sent (parameters, target, optimizer state, versions) while the learners
 *    go on. The evaluation is therefore of one known set of parameters, and
 *    when it is the best so far that copy is written as checkpoints/best
 *    (CKPT_REQ(MSG_SNAPSHOT)); when it solves the env and the run stops for
 *    it, the final checkpoint is that copy too, so what the run reports is
 *    what it saved. The next evaluation waits until the copy is saved;
 *  - triggers checkpoints (every checkpoint.every_seconds or every_updates,
 *    and on SIGUSR1): CKPT_REQ to every parameter source, which write their
 *    shard files, and with checkpoint.save_replay to every replay shard,
 *    which writes its contents at once (replay.c); when all answered, the
 *    MANIFEST is written (listing the replay files too) and `latest` moved
 *    (runckpt.h). The best checkpoint holds parameters only;
 *  - decides when to stop: solved (run.stop_when_solved), every actor used
 *    its env-step share, the update budget, run.max_seconds, or SIGINT /
 *    SIGTERM, in that order; and shuts the job down in this order:
 *
 *      1. CKPT_REQ(MSG_FINAL) to the parameter sources (and the replay
 *         shards, which write what they hold when it arrives), then STOP to
 *         the actors and learners; wait for their STOPPED. (A PS writes the
 *         final shard only after every learner's last-gradient marker;
 *         learner 0 in allreduce mode writes it when the learners leave the
 *         ring.)
 *         (Before that, an evaluation in flight finishes, and a best
 *         snapshot still to save is saved.)
 *      2. wait for every CKPT_DONE, write the MANIFEST; evaluate the final
 *         parameters, read back from that checkpoint (not needed when the
 *         final checkpoint is the snapshot of the solving evaluation). If the
 *         final checkpoint could not be written the job ends with
 *         GORILA_EXIT_CKPT_WRITE.
 *      3. STOP to the replay shards and parameter servers; wait for STOPPED.
 *      4. EXIT to everyone; finish our own sends; return.
 *
 *    No rank blocks in MPI at any point, so a slow or busy rank only
 *    delays the sequence, and every message sent before EXIT is matched.
 *    A hung rank would delay it forever: each wait of the stop lasts at
 *    most run.stop_deadline_seconds, then the job ends with
 *    GORILA_EXIT_HUNG, naming the ranks that did not answer
 *    (check_stop_deadline).
 *
 * The schedules (evaluation, checkpoint, metrics row), the stop decision,
 * the rates and the progress line are runctl.h's, the same code the local
 * trainer runs; what is left here is gathering the counters and the messages.
 */
#include "actorstats.h"
#include "clock.h"
#include "evaluator.h"
#include "exitcode.h"
#include "json.h"
#include "agentcfg.h"
#include "jobtrace.h"
#include "role.h"
#include "runlog.h"
#include "signals.h"
#include "runckpt.h"
#include "runctl.h"
#include "util.h"

#include <stddef.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum { PH_RUN, PH_STOP_WORKERS, PH_FINAL, PH_STOP_SERVERS, PH_DONE } Phase;
typedef enum { CK_PERIODIC, CK_FINAL, CK_BEST } CkptKind;

typedef struct {
    RoleBase rb;
    const JobArgs *args;
    const Layout *lay;
    RunLog log;
    Evaluator ev;
    float *eval_params;       /* (n_params) the parameters of evaluation eval_id */
    float *eval_target;       /* (n_params) the final eval reads it from the checkpoint, unused */
    int eval_got;
    bool eval_pulling;
    uint64_t eval_id;         /* the evaluation the sources hold a snapshot of; 0: none */
    uint64_t eval_version;    /* source 0's version of those parameters */
    uint64_t eval_env_steps;
    uint64_t eval_episodes;
    double eval_wall;
    EvalResult eval_res;
    uint64_t solved_eval_id;  /* the evaluation that first solved, in this process */
    bool best_pending;        /* eval_id set a new best: save its snapshot as checkpoints/best */
    bool best_saved;          /* checkpoints/best exists (this or an earlier segment) */
    RoleMetrics *last;        /* (size) latest report of each rank */
    bool *stopped;            /* (size) STOPPED received */
    double t0, wall_offset;
    uint64_t env_steps, updates, episodes;
    RecentReturns recent;
    ActorStats actors;        /* each actor's episodes and returns (this segment), for summary.json */
    RunCtl rc;                /* eval, checkpoint and metrics-row schedules */
    EvalTrack eval;
    /* checkpoints */
    bool ckpt_busy;
    CkptKind ckpt_kind;
    uint64_t ckpt_snapshot;   /* evaluation id written by the one in progress; 0: live state */
    uint64_t ckpt_seq;
    int ckpt_done, ckpt_failed;
    int ckpt_expect;          /* CKPT_DONE to wait for: every source, + every replay shard when ckpt_replay */
    bool ckpt_replay;         /* checkpoint.save_replay, and not the best one: replay files too */
    uint64_t ckpt_replay_rows; /* transitions the replay shards wrote */
    char ckpt_dir[PATH_LEN], ckpt_err[PROTO_MAX_TEXT + 1];
    uint64_t ckpt_env_steps, ckpt_episodes, ckpt_version;
    bool final_shards_written, final_ckpt_ok, final_evaluated;
    char final_err[PROTO_MAX_TEXT + 1];
    char final_name[PATH_LEN + 16]; /* "checkpoints/ckpt-000012" */
    /* loss over the metrics interval, from the learners' cumulative sums */
    double last_loss_sum;
    uint64_t last_loss_n;
    /* shutdown */
    Phase phase;
    StopReason stop_reason;
    int n_waiting;            /* STOPPED still expected in this phase */
    double stop_step_t0;      /* now_seconds() when the current step of the stop began */
    struct {
        double heard;         /* now_seconds() of its last message (0: none yet) */
        uint64_t ckpt_done;   /* checkpoint number of its last CKPT_DONE */
    } *answer;                /* (size) for check_stop_deadline's report */
    JobTrace traces;          /* logging.trace: the other ranks' traces, for trace.json */
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
        actorstats_add(&c->actors, r[i].actor, r[i].ret);
        c->episodes++;
    }
}

/* Record the evaluation of parameters at `version`; a new best is saved
 * (from the sources' snapshot) unless it is of the final checkpoint. */
static void record_eval(Coord *c, const EvalResult *r, uint64_t version, bool of_final) {
    runctl_eval_done(&c->rc, version);
    bool was_solved = c->eval.solved;
    bool solved_now = evaltrack_record(&c->eval, r->mean, c->env_steps, version, wall(c));
    if (solved_now && !was_solved) c->solved_eval_id = c->eval_id;
    EvalRow row = {wall(c), c->env_steps, version, r->episodes, r->mean, r->std, r->min, r->max, solved_now};
    runlog_eval(&c->log, &row);
    c->eval_res = *r;
    c->eval_version = version;
    c->eval_env_steps = c->env_steps;
    c->eval_episodes = c->args->start.episodes + c->episodes;
    c->eval_wall = wall(c);
    if (c->eval.last_was_best && !of_final) c->best_pending = true;
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
    evaluator_run(&c->ev, c->eval_params, &r);
    trace_span(&c->rb.trace, TR_EVAL, t0, now_seconds(), (uint32_t)c->eval_version);
    record_eval(c, &r, c->eval_version, false);
}

static void commit_ckpt(Coord *c, uint64_t env_steps, uint64_t episodes);

/* Ask every source to write checkpoint kind (snapshot: of that evaluation id,
 * 0: the live state). */
static void start_ckpt(Coord *c, CkptKind kind, uint64_t snapshot) {
    char err[ERR_LEN];
    c->ckpt_seq++;
    int rc = kind == CK_BEST ? runckpt_begin_best(c->log.dir, c->ckpt_seq, c->ckpt_dir, err)
                             : runckpt_begin(c->log.dir, c->ckpt_seq, c->ckpt_dir, err);
    if (rc != 0) {
        log_info(c->rb.ctx, "checkpoint skipped: %s", err);
        if (kind == CK_FINAL) snprintf(c->final_err, sizeof c->final_err, "%s", err);
        if (kind == CK_BEST) c->best_pending = false;
        return;
    }
    c->ckpt_busy = true;
    c->ckpt_kind = kind;
    c->ckpt_snapshot = snapshot;
    c->ckpt_done = c->ckpt_failed = 0;
    c->ckpt_env_steps = c->env_steps;
    c->ckpt_episodes = c->args->start.episodes + c->episodes;
    c->ckpt_version = 0;
    MsgHeader h = {0};
    h.version = c->ckpt_seq;
    h.ckpt_req.run_id = c->log.run_id;
    h.ckpt_req.snapshot = snapshot;
    h.flags = (kind == CK_FINAL ? MSG_FINAL : 0) | (snapshot ? MSG_SNAPSHOT : 0);
    size_t len = strlen(c->ckpt_dir);
    h.count = len;
    for (int p = 0; p < c->rb.n_sources; p++)
        comm_send_ctl(&c->rb.comm, c->rb.source_rank[p], TAG_CKPT_REQ, h, c->ckpt_dir, len);
    /* The replay shards write at once (the live contents: a snapshot is of
     * parameters only), after the sources were asked. */
    int S = c->lay->count[ROLE_REPLAY];
    c->ckpt_replay = kind != CK_BEST && c->rb.cfg->checkpoint.save_replay;
    c->ckpt_expect = c->rb.n_sources + (c->ckpt_replay ? S : 0);
    c->ckpt_replay_rows = 0;
    h.flags &= ~(uint32_t)MSG_SNAPSHOT;
    h.ckpt_req.snapshot = 0;
    for (int s = 0; c->ckpt_replay && s < S; s++)
        comm_send_ctl(&c->rb.comm, layout_rank_of(c->lay, ROLE_REPLAY, s), TAG_CKPT_REQ, h, c->ckpt_dir, len);
}

static void fill_eval(RunCkptManifest *man, const Coord *c) {
    man->eval_mean = c->eval_res.mean;
    man->eval_episodes = c->eval_res.episodes;
    man->eval_seed = c->rb.cfg->eval.seed;
}

static void commit_best(Coord *c) {
    RunCkptManifest man = {
        .seq = c->ckpt_seq, .env_steps = c->eval_env_steps, .updates = c->ckpt_version,
        .episodes = c->eval_episodes, .wall_seconds = c->eval_wall, .n_shards = c->rb.n_sources,
        .run_id = c->log.run_id, .params_version = c->ckpt_version,
    };
    snprintf(man.kind, sizeof man.kind, "best");
    snprintf(man.mode, sizeof man.mode, "%s", config_sync_name(c->rb.cfg->sync.mode));
    fill_eval(&man, c);
    man.has_history = 1;
    man.history = c->eval;
    char err[ERR_LEN];
    double t0 = now_seconds();
    int rc = runckpt_commit_best(c->log.dir, c->ckpt_dir, &man, err);
    trace_span(&c->rb.trace, TR_CKPT, t0, now_seconds(), (uint32_t)c->ckpt_seq);
    if (rc != 0) {
        log_info(c->rb.ctx, "best checkpoint not saved: %s", err);
        return;
    }
    c->best_saved = true;
    log_info(c->rb.ctx, "best checkpoint: eval %.2f of the parameters after %llu updates", man.eval_mean,
             (unsigned long long)man.params_version);
}

static void on_ckpt_done(Coord *c, const Msg *m) {
    if (!c->ckpt_busy || m->h.version != c->ckpt_seq) DIE(c->rb.ctx, "unexpected CKPT_DONE from rank %d", m->source);
    Role role;
    int idx;
    layout_role_of(c->lay, m->source, &role, &idx);
    bool replay = role == ROLE_REPLAY;
    if (replay ? !c->ckpt_replay : role_source_index(&c->rb, m->source) < 0)
        DIE(c->rb.ctx, "CKPT_DONE from rank %d (%s %d), which was not asked for a checkpoint", m->source,
            role_name(role), idx);
    if (replay) c->ckpt_replay_rows += m->h.ckpt_done.saved;
    if (m->h.flags & MSG_FAILED) {
        c->ckpt_failed++;
        size_t n = m->bytes < sizeof c->ckpt_err - 1 ? m->bytes : sizeof c->ckpt_err - 1;
        memcpy(c->ckpt_err, m->payload, n);
        c->ckpt_err[n] = '\0';
    }
    if (m->source == c->rb.source_rank[0]) c->ckpt_version = m->h.ckpt_done.saved;
    if (++c->ckpt_done < c->ckpt_expect) return;
    c->ckpt_busy = false;
    if (c->ckpt_kind == CK_BEST) c->best_pending = false;
    if (c->ckpt_failed) {
        log_info(c->rb.ctx, "checkpoint %llu failed: %s", (unsigned long long)c->ckpt_seq, c->ckpt_err);
        if (c->ckpt_kind == CK_FINAL) snprintf(c->final_err, sizeof c->final_err, "%s", c->ckpt_err);
        return;
    }
    /* The final checkpoint is committed once every worker has stopped, with
     * the final counters (PH_FINAL); a periodic one now, with the counters
     * as they stood when it was requested (actors report every 20 ms, so
     * they are at most that stale). */
    switch (c->ckpt_kind) {
    case CK_FINAL: c->final_shards_written = true; break;
    case CK_BEST: commit_best(c); break;
    case CK_PERIODIC: commit_ckpt(c, c->ckpt_env_steps, c->ckpt_episodes); break;
    }
}

/* Write the MANIFEST of the checkpoint whose shards are all written. Its
 * updates are source 0's version in the files (what a resume continues from). */
static void commit_ckpt(Coord *c, uint64_t env_steps, uint64_t episodes) {
    bool final = c->ckpt_kind == CK_FINAL;
    RunCkptManifest man = {
        .seq = c->ckpt_seq,
        .env_steps = env_steps,
        .updates = c->ckpt_version,
        .episodes = episodes,
        .wall_seconds = wall(c),
        .n_shards = c->rb.n_sources,
        .run_id = c->log.run_id,
        .params_version = c->ckpt_version,
        .eval_mean = NAN,
        .n_replay = c->ckpt_replay ? c->lay->count[ROLE_REPLAY] : 0,
    };
    snprintf(man.kind, sizeof man.kind, "%s", final ? "final" : "periodic");
    snprintf(man.mode, sizeof man.mode, "%s", config_sync_name(c->rb.cfg->sync.mode));
    if (c->ckpt_snapshot) fill_eval(&man, c);
    man.has_history = 1;
    man.history = c->eval;
    char err[ERR_LEN];
    double t0 = now_seconds();
    int rc = runckpt_commit(c->log.dir, c->ckpt_dir, &man, c->rb.cfg->checkpoint.keep, err);
    trace_span(&c->rb.trace, TR_CKPT, t0, now_seconds(), (uint32_t)c->ckpt_seq);
    if (rc != 0) {
        log_info(c->rb.ctx, "checkpoint %llu not committed: %s", (unsigned long long)c->ckpt_seq, err);
        if (final) snprintf(c->final_err, sizeof c->final_err, "%s", err);
        return;
    }
    if (final) {
        c->final_ckpt_ok = true;
        const char *base = strrchr(c->ckpt_dir, '/');
        snprintf(c->final_name, sizeof c->final_name, "checkpoints/%s", base ? base + 1 : c->ckpt_dir);
    }
    char replay[96] = "";
    if (c->ckpt_replay)
        snprintf(replay, sizeof replay, ", %llu replay transitions in %d file%s",
                 (unsigned long long)c->ckpt_replay_rows, man.n_replay, man.n_replay == 1 ? "" : "s");
    log_info(c->rb.ctx, "checkpoint %s: %llu env steps, %llu updates%s%s", c->ckpt_dir,
             (unsigned long long)man.env_steps, (unsigned long long)man.updates, replay,
             c->ckpt_snapshot ? " (the evaluated parameters)" : "");
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

/* Sum of one uint64_t counter of RoleMetrics over the ranks of a role. */
static uint64_t role_sum(const Coord *c, Role role, size_t offset) {
    uint64_t sum = 0;
    for (int i = 0; i < c->lay->count[role]; i++) {
        const RoleMetrics *m = &c->last[layout_rank_of(c->lay, role, i)];
        uint64_t v;
        memcpy(&v, (const char *)m + offset, sizeof v);
        sum += v;
    }
    return sum;
}
static uint64_t learner_sum(const Coord *c, size_t offset) { return role_sum(c, ROLE_LEARNER, offset); }
static uint64_t replay_sum(const Coord *c, size_t offset) { return role_sum(c, ROLE_REPLAY, offset); }

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
        json_u64(j, "priority_updates", m->priority_updates);
        json_u64(j, "stale_priority_updates", m->stale_priority_updates);
        break;
    case ROLE_LEARNER:
        json_u64(j, "gradients", m->updates);
        json_u64(j, "samples_trained", m->samples_trained);
        json_num(j, "mean_loss", m->updates ? m->loss_sum / (double)m->updates : NAN);
        json_u64(j, "params_version", m->params_version);
        if (m->ring_rounds) {
            json_begin_object(j, "ring");
            json_u64(j, "rounds", m->ring_rounds);
            json_u64(j, "msgs_sent", m->ring_msgs_sent);
            json_u64(j, "bytes_sent", m->ring_bytes_sent);
            json_u64(j, "msgs_recv", m->ring_msgs_recv);
            json_u64(j, "bytes_recv", m->ring_bytes_recv);
            json_num(j, "seconds", m->ring_seconds);
            json_end_object(j);
        }
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

/* Each actor's exploration rate as it last reported it (its STOPPED, at
 * the end), for summary.json's `actors` and the end-of-run line. */
static void actors_epsilon(Coord *c) {
    for (int i = 0; i < c->actors.n; i++)
        actorstats_set_epsilon(&c->actors, i, c->last[layout_rank_of(c->lay, ROLE_ACTOR, i)].epsilon);
}

/* summary.json's `actors`: per actor, its epsilon, the episodes it finished
 * in this segment, the mean of its last up to 100 returns and its best
 * (actorstats.h). With Ape-X exploration each actor has its own epsilon,
 * and this is where the greedy ones' returns show. */
static void actors_json(const Coord *c, JsonW *j) { actorstats_json(j, "actors", &c->actors); }

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
        .run_gradients = learner_sum(c, offsetof(RoleMetrics, updates)),
        .run_samples_trained = learner_sum(c, offsetof(RoleMetrics, samples_trained)),
        .prioritized = cfg->replay.kind == REPLAY_PRIORITIZED,
        .stale_priority_updates = replay_sum(c, offsetof(RoleMetrics, stale_priority_updates)),
        .final_checkpoint = c->final_ckpt_ok ? c->final_name : NULL, .final_evaluated = c->final_evaluated,
        .best_checkpoint = c->best_saved ? "checkpoints/best" : NULL,
    };
    JsonW j;
    json_init(&j, f, true);
    json_begin_object(&j, NULL);
    runlog_summary_fields(&j, &sum);
    if (cfg->sync.mode == SYNC_ALLREDUCE) json_str(&j, "allreduce_impl", config_allreduce_impl_name(cfg->sync.allreduce_impl));
    /* Traffic: total bytes sent by every rank, by message type (the ring's
     * own messages as "ring"), per update, and per update by role. */
    const char *names[] = {"coordinator", "actor", "replay", "learner", "ps"};
    const Role roles[] = {ROLE_COORD, ROLE_ACTOR, ROLE_REPLAY, ROLE_LEARNER, ROLE_PS};
    uint64_t total = 0, by[TAG_COUNT] = {0}, ring = 0, drops = 0, by_role[5] = {0};
    for (int r = 0; r < c->lay->size; r++) {
        const RoleMetrics *m = &c->last[r];
        uint64_t mine = m->ring_bytes_sent;
        for (int k = 0; k < TAG_COUNT; k++) by[k] += m->bytes_sent[k], mine += m->bytes_sent[k];
        ring += m->ring_bytes_sent;
        if (m->role == ROLE_PS) drops += m->drops;
        for (int k = 0; k < 5; k++)
            if (m->role == (int32_t)roles[k]) by_role[k] += mine;
    }
    json_begin_object(&j, "bytes_sent");
    for (int k = 0; k < TAG_COUNT; k++) {
        json_u64(&j, proto_tag_name(TAG_FIRST + k), by[k]);
        total += by[k];
    }
    json_u64(&j, "ring", ring);
    total += ring;
    json_end_object(&j);
    uint64_t run_updates = c->updates - c->args->start.updates;
    double per = run_updates ? 1.0 / (double)run_updates : NAN;
    json_num(&j, "bytes_per_update", (double)total * per);
    json_begin_object(&j, "bytes_per_update_by_role");
    for (int k = 0; k < 5; k++)
        if (c->lay->count[roles[k]] > 0) json_num(&j, names[k], (double)by_role[k] * per);
    json_end_object(&j);
    json_u64(&j, "stale_gradients_dropped", drops);
    json_begin_object(&j, "roles");
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
    actors_json(c, &j);
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
    case TAG_TRACE: jobtrace_on_msg(&c->traces, m); break;
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

/* logging.trace: <run dir>/trace.json from our ring and the traces that
 * have arrived. Returns 0 (also with tracing off), or -1 after saying why. */
static int write_trace(Coord *c) {
    char err[ERR_LEN];
    if (jobtrace_write(&c->traces, &c->rb.trace, c->log.dir, err) == 0) return 0;
    fprintf(stderr, "gorila: error: %s\n", err);
    return -1;
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

/* A stop proceeds in steps, each waiting for answers: the checkpoint in
 * progress when it began (begin_stop), the actors' and learners' STOPPED
 * and the final checkpoint's CKPT_DONE (and the PARAMS of an evaluation in
 * flight), then the servers' STOPPED. A rank that is hung (stopped by
 * SIGSTOP, stuck in a system call, livelocked) never answers, and without
 * a limit the job would outlive run.max_seconds forever. So when a step
 * has waited run.stop_deadline_seconds, name every rank it still waits for
 * and end the job with GORILA_EXIT_HUNG. Call only when no message is
 * waiting, so that answers queued while this rank was busy (an evaluation)
 * have been counted. */
static void check_stop_deadline(Coord *c) {
    double now = now_seconds(), limit = c->rb.cfg->run.stop_deadline_seconds;
    if (c->stop_reason == STOP_NONE || c->phase == PH_DONE || now - c->stop_step_t0 <= limit) return;
    char list[700] = ""; /* die_at's line holds 1024 bytes */
    int n = 0, listed = 0;
    for (int r = 1; r < c->lay->size; r++) {
        Role role;
        int idx;
        layout_role_of(c->lay, r, &role, &idx);
        bool workers = role == ROLE_ACTOR || role == ROLE_LEARNER;
        bool sent_stop = workers ? c->phase >= PH_STOP_WORKERS : c->phase >= PH_STOP_SERVERS;
        bool source = false;
        for (int p = 0; p < c->rb.n_sources; p++) source |= c->rb.source_rank[p] == r;
        bool writes = source || (role == ROLE_REPLAY && c->ckpt_replay); /* asked for a checkpoint file */
        const char *what = NULL;
        if (sent_stop && !c->stopped[r]) what = "STOPPED";
        else if (c->ckpt_busy && writes && c->answer[r].ckpt_done != c->ckpt_seq) what = "CKPT_DONE";
        else if (c->eval_pulling && source) what = "PARAMS (evaluation)"; /* this or another source */
        if (!what) continue;
        n++;
        if (report_rank(c, r, what, now, list, sizeof list)) listed++;
    }
    if (n == 0) return; /* the answers are all in: the next loop moves on */
    write_trace(c); /* what has arrived: the hung ranks' tracks are empty */
    DIE_CODE(c->rb.ctx, GORILA_EXIT_HUNG,
             "stop deadline passed: %d rank%s did not answer within run.stop_deadline_seconds (%g s) while the job "
             "stopped (%s): %s%s; raise run.stop_deadline_seconds if they are only slow",
             n, n == 1 ? "" : "s", limit, runctl_stop_name(c->stop_reason), list, listed < n ? "; and more" : "");
}

static void send_stop(Coord *c, Role role) {
    MsgHeader h = {0};
    h.stop.reason = (uint64_t)c->stop_reason;
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

static void begin_stop(Coord *c, StopReason reason) {
    c->stop_reason = reason;
    c->stop_step_t0 = now_seconds();
    log_info(c->rb.ctx, "stopping: %s", runctl_stop_name(reason));
    settle(c); /* a checkpoint or an evaluation in progress finishes first */
    if (c->best_pending) {
        start_ckpt(c, CK_BEST, c->eval_id);
        settle(c);
    }
    /* Stopped because an evaluation solved the env: the final checkpoint is
     * exactly the parameters that evaluation saw (the sources' snapshot;
     * nothing was evaluated since, as the stop is decided before the next
     * evaluation starts). */
    bool snap = reason == STOP_SOLVED && c->solved_eval_id != 0 && c->solved_eval_id == c->eval_id;
    start_ckpt(c, CK_FINAL, snap ? c->eval_id : 0);
    send_stop(c, ROLE_ACTOR);
    send_stop(c, ROLE_LEARNER);
    c->phase = PH_STOP_WORKERS;
}

/* The final checkpoint's evaluation: none needed when it is the solving
 * snapshot (its evaluation is the last one recorded); after a signal none
 * (the user wants out now); otherwise its parameters are read back from
 * the files and evaluated. A new best found here makes the final
 * checkpoint the best one too. */
static void final_eval(Coord *c) {
    if (!c->final_ckpt_ok) return;
    if (c->ckpt_snapshot) {
        c->final_evaluated = true;
        return;
    }
    if (c->stop_reason == STOP_SIGNAL) return;
    char err[ERR_LEN];
    RunCkptShard sh = {.off = 0, .len = c->rb.net.n_params, .params = c->eval_params, .target = c->eval_target};
    if (runckpt_read_slice(c->rb.cfg, &c->rb.net, c->ckpt_dir, &sh, err) != 0) {
        log_info(c->rb.ctx, "final evaluation skipped: %s", err);
        return;
    }
    EvalResult r;
    double t0 = now_seconds();
    evaluator_run(&c->ev, c->eval_params, &r);
    trace_span(&c->rb.trace, TR_EVAL, t0, now_seconds(), (uint32_t)sh.version);
    record_eval(c, &r, sh.version, true);
    c->final_evaluated = true;
    if (c->eval.last_was_best) {
        RunCkptManifest man;
        if (runckpt_read_manifest(c->ckpt_dir, &man, err) == 0) {
            snprintf(man.kind, sizeof man.kind, "best");
            fill_eval(&man, c);
            man.has_history = 1;
            man.history = c->eval;
            double tb = now_seconds();
            if (runckpt_best_from(c->log.dir, c->ckpt_dir, &man, err) == 0) c->best_saved = true;
            else log_info(c->rb.ctx, "best checkpoint not saved: %s", err);
            trace_span(&c->rb.trace, TR_CKPT, tb, now_seconds(), (uint32_t)man.seq);
        }
    }
}

int coordinator_run(const Ctx *ctx, const JobArgs *args) {
    Coord *c = xcalloc(1, sizeof *c);
    role_init(&c->rb, ctx, args);
    comm_expect(&c->rb.comm, NULL, 0); /* nothing it waits for is urgent */
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
    c->eval_params = xmalloc_for(c->rb.net.n_params * sizeof(float), "network parameters", "network.hidden");
    c->eval_target = xmalloc_for(c->rb.net.n_params * sizeof(float), "network parameters", "network.hidden");
    evaltrack_init(&c->eval, env_find(cfg->env.name)->reward_threshold);
    if (args->start.resumed && args->start.has_history) {
        /* Keep the run's history: its first solve and its best stay. */
        c->eval = args->start.history;
        c->eval.threshold = env_find(cfg->env.name)->reward_threshold;
        c->eval.last_was_best = false;
    }
    if (args->start.resumed) {
        RunCkptManifest best;
        char berr[ERR_LEN];
        c->best_saved = runckpt_best(c->log.dir, &best, berr) == 0;
    }
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
    runctl_init(&c->rc, cfg, wall(c), c->env_steps, c->updates);
    log_info(ctx, "%s: %s, %zu parameters, %d parameter source%s", cfg->env.name, config_sync_name(cfg->sync.mode),
             c->rb.net.n_params, c->rb.n_sources, c->rb.n_sources == 1 ? "" : "s");

    while (c->phase != PH_DONE) {
        bool worked = false;
        while (receive(c)) worked = true;
        double t = wall(c);
        double run_t = now_seconds() - c->t0;
        if (c->phase == PH_RUN) {
            /* The stop decision comes first, so that a solving evaluation is
             * the last one and its snapshot can be the final checkpoint. */
            RunState st = {.env_steps = c->env_steps, .updates = c->updates, .wall_seconds = t,
                           .solved = c->eval.solved, .signal = signals_stop_requested(),
                           .by_actors = true, .actors_done = all_actors_done(c)};
            StopReason why = runctl_stop(cfg, &st);
            /* A run whose CSVs cannot be written stops: its record is lost. */
            if (why == STOP_NONE && runlog_failed(&c->log)) why = STOP_ERROR;
            if (why != STOP_NONE) {
                begin_stop(c, why);
                continue;
            }
            /* A new best is saved from the sources' snapshot before the next
             * evaluation replaces it. */
            if (c->best_pending && !c->ckpt_busy) start_ckpt(c, CK_BEST, c->eval_id);
            /* One evaluation at a time: a multiple passed while one runs
             * is taken when it has finished. */
            if (!c->eval_pulling && !c->best_pending && runctl_eval_due(&c->rc, c->updates)) start_eval(c);
            /* A SIGUSR1 during a checkpoint waits for the next loop rather
             * than being taken and lost. */
            if (!c->ckpt_busy && runctl_ckpt_due(&c->rc, run_t, c->updates, signals_take_checkpoint()))
                start_ckpt(c, CK_PERIODIC, 0);
        } else if (c->phase == PH_STOP_WORKERS && c->n_waiting == 0) {
            c->phase = PH_FINAL;
        } else if (c->phase == PH_FINAL && !c->ckpt_busy && !c->eval_pulling) {
            /* Every actor and learner has stopped: the counters are final. */
            if (c->final_shards_written) commit_ckpt(c, c->env_steps, c->args->start.episodes + c->episodes);
            final_eval(c);
            send_stop(c, ROLE_REPLAY);
            send_stop(c, ROLE_PS);
            c->phase = PH_STOP_SERVERS;
        } else if (c->phase == PH_STOP_SERVERS && c->n_waiting == 0) {
            c->phase = PH_DONE;
        }
        check_stop_deadline(c);
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
    actors_epsilon(c);
    int rc = write_summary(c) == 0 ? GORILA_EXIT_OK : GORILA_EXIT_LOG_WRITE;
    if (write_trace(c) != 0) rc = GORILA_EXIT_LOG_WRITE;
    char line[RUNCTL_LINE_LEN];
    if (c->actors.n >= 2) {
        actorstats_line(line, sizeof line, &c->actors);
        printf("%s\n", line);
    }
    runctl_final_line(line, sizeof line, cfg->env.name, &c->eval, c->env_steps, c->updates, wall(c), c->stop_reason,
                      c->final_ckpt_ok ? c->final_name : NULL, c->final_evaluated,
                      c->best_saved ? "checkpoints/best" : NULL);
    printf("%s\n", line);
    printf("run directory: %s\n", c->log.dir);
    fflush(stdout);
    if (!c->final_ckpt_ok) {
        fprintf(stderr, "gorila: error: the final checkpoint could not be written: %s\n",
                c->final_err[0] ? c->final_err : "(no reason given)");
        rc = GORILA_EXIT_CKPT_WRITE;
    } else if (runlog_failed(&c->log)) {
        fprintf(stderr, "gorila: error: the run's files could not be written: %s\n", c->log.fail_err);
        rc = GORILA_EXIT_LOG_WRITE;
    }
    MsgHeader h = {0};
    for (int r = 1; r < c->lay->size; r++) comm_send_ctl(&c->rb.comm, r, TAG_EXIT, h, NULL, 0);
    Msg m;
    comm_drain(&c->rb.comm, NULL, 0, NULL, 0, &m);
    runlog_free(&c->log);
    evaluator_free(&c->ev);
    runctl_free(&c->rc);
    actorstats_free(&c->actors);
    free(c->eval_params);
    free(c->eval_target);
    free(c->last);
    free(c->stopped);
    free(c->answer);
    jobtrace_free(&c->traces);
    role_free(&c->rb);
    free(c);
    return rc;
}
