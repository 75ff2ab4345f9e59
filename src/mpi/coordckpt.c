/* SPDX-License-Identifier: MIT */
/* coordckpt.c: the coordinator's checkpoints (coordint.h): CKPT_REQ to
 * every writer, their CKPT_DONE counted, and the MANIFEST that commits the
 * directory (runckpt.h) once all are in (docs/CHECKPOINT.md). */
#include "coordint.h"
#include "clock.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* Ask every source to write checkpoint kind (snapshot: of that evaluation id,
 * 0: the live state). */
void coordckpt_start(Coord *c, CkptKind kind, uint64_t snapshot) {
    char err[ERR_LEN];
    Run *run = &c->run;
    c->ckpt_seq = run_next_seq(run);
    int rc = kind == CK_BEST ? runckpt_begin_best(run->log.dir, c->ckpt_seq, c->ckpt_dir, err)
                             : runckpt_begin(run->log.dir, c->ckpt_seq, c->ckpt_dir, err);
    if (rc != 0) {
        run_warn(run, "checkpoint skipped: %s", err);
        if (kind == CK_FINAL) run_final_failed(run, err);
        if (kind == CK_BEST) c->best_pending = false;
        return;
    }
    c->ckpt_busy = true;
    c->ckpt_kind = kind;
    c->ckpt_snapshot = snapshot;
    c->ckpt_done = c->ckpt_failed = 0;
    c->ckpt_env_steps = run->env_steps;
    c->ckpt_episodes = run->episodes;
    c->ckpt_version = 0;
    MsgHeader h = {0};
    h.version = c->ckpt_seq;
    h.ckpt_req.run_id = run->log.run_id;
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
    /* The decentralized modes: the learners whose state no source holds
     * write their own copies, into live checkpoints only (a snapshot is of
     * the evaluated parameters; their copies then would be of another
     * moment). */
    int L = c->lay->count[ROLE_LEARNER];
    c->ckpt_copy_first = kind != CK_BEST && !snapshot ? layout_first_copy(c->rb.cfg) : -1;
    for (int k = c->ckpt_copy_first; k >= 0 && k < L; k++) {
        comm_send_ctl(&c->rb.comm, layout_rank_of(c->lay, ROLE_LEARNER, k), TAG_CKPT_REQ, h, c->ckpt_dir, len);
        c->ckpt_expect++;
    }
}

/* Rank r was asked for a learner copy in the checkpoint in flight. */
bool coordckpt_writes_copy(const Coord *c, Role role, int idx) {
    return c->ckpt_copy_first >= 0 && role == ROLE_LEARNER && idx >= c->ckpt_copy_first;
}

static void commit_best(Coord *c) {
    Run *run = &c->run;
    RunPoint at = {.seq = c->ckpt_seq, .env_steps = run->eval_env_steps, .params_version = c->ckpt_version,
                   .episodes = run->eval_episodes, .wall_seconds = run->eval_wall, .n_shards = c->rb.n_sources};
    RunCkptManifest man;
    run_manifest(run, "best", &at, true, &man);
    char err[ERR_LEN];
    double t0 = now_seconds();
    int rc = runckpt_commit_best(run->log.dir, c->ckpt_dir, &man, err);
    trace_span(&c->rb.trace, TR_CKPT, t0, now_seconds(), (uint32_t)c->ckpt_seq);
    if (rc != 0) {
        run_warn(run, "best checkpoint not saved: %s", err);
        runckpt_discard(c->ckpt_dir);
        return;
    }
    run->best_saved = true;
    log_info(c->rb.ctx, "best checkpoint: eval %.2f of the parameters after %" PRIu64 " updates", man.eval_mean,
             man.params_version);
}

/* Write the MANIFEST of the checkpoint whose shards are all written. Its
 * updates are source 0's version in the files (what a resume continues from). */
void coordckpt_commit(Coord *c, uint64_t env_steps, uint64_t episodes) {
    Run *run = &c->run;
    bool final = c->ckpt_kind == CK_FINAL;
    RunPoint at = {.seq = c->ckpt_seq, .env_steps = env_steps, .params_version = c->ckpt_version,
                   .episodes = episodes, .wall_seconds = run_wall(run), .n_shards = c->rb.n_sources,
                   .n_replay = c->ckpt_replay ? c->lay->count[ROLE_REPLAY] : 0,
                   .n_copies = c->ckpt_copy_first >= 0 ? c->lay->count[ROLE_LEARNER] : 0,
                   .first_copy = c->ckpt_copy_first >= 0 ? c->ckpt_copy_first : 0};
    RunCkptManifest man;
    run_manifest(run, final ? "final" : "periodic", &at, c->ckpt_snapshot != 0, &man);
    char err[ERR_LEN];
    double t0 = now_seconds();
    int rc = runckpt_commit(run->log.dir, c->ckpt_dir, &man, c->rb.cfg->checkpoint.keep, err);
    trace_span(&c->rb.trace, TR_CKPT, t0, now_seconds(), (uint32_t)c->ckpt_seq);
    if (rc != 0) {
        run_warn(run, "checkpoint %" PRIu64 " not committed: %s", c->ckpt_seq, err);
        if (final) run_final_failed(run, err);
        runckpt_discard(c->ckpt_dir); /* latest never named it */
        return;
    }
    if (final) run_final_committed(run, c->ckpt_dir);
    char replay[96] = "";
    if (c->ckpt_replay)
        snprintf(replay, sizeof replay, ", %" PRIu64 " replay transitions in %d file%s",
                 c->ckpt_replay_rows, man.n_replay, man.n_replay == 1 ? "" : "s");
    log_info(c->rb.ctx, "checkpoint %s: %" PRIu64 " env steps, %" PRIu64 " updates%s%s", c->ckpt_dir,
             man.env_steps, man.updates, replay,
             c->ckpt_snapshot ? " (the evaluated parameters)" : "");
}

void coordckpt_on_done(Coord *c, const Msg *m) {
    if (!c->ckpt_busy || m->h.version != c->ckpt_seq) DIE(c->rb.ctx, "unexpected CKPT_DONE from rank %d", m->source);
    Role role;
    int idx;
    layout_role_of(c->lay, m->source, &role, &idx);
    bool replay = role == ROLE_REPLAY;
    if (replay ? !c->ckpt_replay : role_source_index(&c->rb, m->source) < 0 && !coordckpt_writes_copy(c, role, idx))
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
        run_warn(&c->run, "checkpoint %" PRIu64 " failed: %s", c->ckpt_seq, c->ckpt_err);
        if (c->ckpt_kind == CK_FINAL) run_final_failed(&c->run, c->ckpt_err);
        /* Every writer has answered: the files the others finished would
         * only take the space the next attempt needs. */
        runckpt_discard(c->ckpt_dir);
        return;
    }
    /* The final checkpoint is committed once every worker has stopped, with
     * the final counters (STOP_ST_FINAL); a periodic one now, with the
     * counters as they stood when it was requested (actors report every
     * 20 ms, so they are at most that stale). */
    switch (c->ckpt_kind) {
    case CK_FINAL: c->final_shards_written = true; break;
    case CK_BEST: commit_best(c); break;
    case CK_PERIODIC: coordckpt_commit(c, c->ckpt_env_steps, c->ckpt_episodes); break;
    }
}
