/* SPDX-License-Identifier: MIT */
/* trainerckpt.c: the local trainer's checkpoints: the whole network with
 * its optimizer state, the counters, the generators, every environment
 * slot (section ENVS: each slot's running episode return and length, then
 * its env_snapshot: step count, generator, whole state) and (with
 * checkpoint.save_replay) the replay, in one shard file (runckpt.h); and
 * reading them back for a resume, which continues every slot's episode
 * where it was (a format-1 checkpoint, without ENVS, resets them). */
#include "trainerint.h"

#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "runckpt.h"
#include "util.h"

/* The next checkpoint of the live state, as a shard and a manifest of
 * `kind`: the whole network with its optimizer state, the counters, the
 * evaluation when the last one was of exactly these parameters, and the
 * evaluation history. The caller adds the resume extras (generators,
 * replay) to the shard where it wants them. */
static void describe_ckpt(Local *L, const char *kind, RunCkptShard *sh, RunCkptManifest *man) {
    Run *r = &L->run;
    uint64_t seq = run_next_seq(r);
    double t = run_wall(r);
    *sh = (RunCkptShard){
        .index = 0, .off = 0, .len = L->net.n_params, .params = L->params, .target = L->target, .opt = &L->opt,
        .version = r->updates, .env_steps = r->env_steps, .updates = r->updates, .episodes = r->episodes,
        .wall_seconds = t, .run_id = r->log.run_id, .seq = seq, .n_shards = 1,
    };
    RunPoint at = {.seq = seq, .env_steps = r->env_steps, .params_version = r->updates, .episodes = r->episodes,
                   .wall_seconds = t, .n_shards = 1};
    run_manifest(r, kind, &at, r->rc.evaluated && r->rc.last_eval_updates == r->updates, man);
}

void trainer_save_best(Local *L) {
    char err[ERR_LEN], dir[PATH_LEN];
    RunCkptShard sh;
    RunCkptManifest man;
    double t0 = now_seconds();
    describe_ckpt(L, "best", &sh, &man);
    int rc = runckpt_begin_best(L->run.log.dir, sh.seq, dir, err);
    if (rc == 0 && (runckpt_write_shard(L->cfg, &L->net, dir, &sh, err) != 0 ||
                    runckpt_commit_best(L->run.log.dir, dir, &man, err) != 0)) {
        runckpt_discard(dir); /* what the failed attempt wrote */
        rc = -1;
    }
    if (rc != 0) run_warn(&L->run, "best checkpoint not saved: %s", err);
    else L->run.best_saved = true;
    trace_span(&L->trace, TR_CKPT, t0, now_seconds(), (uint32_t)sh.seq);
}

static int gather_rngs(Local *L) {
    L->rngs[0] = L->ac.rng;
    L->rngs[1] = L->sample_rng;
    for (int e = 0; e < L->ac.E; e++) L->rngs[2 + e] = L->ac.envs[e].rng;
    return 2 + L->ac.E;
}

/* The ENVS payload, the acting state: u64 env steps not yet trained on
 * (pending_train: a run stopped between two training rounds resumes in
 * step), u64 slots, u64 bytes per slot, then per slot a double episode
 * return, an i64 episode length and the env_snapshot. */
enum { SLOT_HEAD = 16, ENVS_HEAD = 24 };
static size_t slot_bytes(const Local *L) { return SLOT_HEAD + env_snapshot_size(L->ac.spec); }
static size_t envs_bytes(const Local *L) { return ENVS_HEAD + (size_t)L->ac.E * slot_bytes(L); }

static void *gather_envs(const Local *L) {
    uint64_t head[3] = {L->pending_train, (uint64_t)L->ac.E, slot_bytes(L)};
    unsigned char *buf = xmalloc(envs_bytes(L)), *p = buf + sizeof head;
    memcpy(buf, head, sizeof head);
    for (int e = 0; e < L->ac.E; e++, p += head[2]) {
        int64_t len = L->ac.ep_len[e];
        memcpy(p, &L->ac.ep_return[e], 8);
        memcpy(p + 8, &len, 8);
        env_snapshot(&L->ac.envs[e], p + SLOT_HEAD);
    }
    return buf;
}

/* Each slot from buf (envs_bytes long): its episode continues. */
static int scatter_envs(Local *L, const unsigned char *buf, char *err) {
    uint64_t head[3];
    memcpy(head, buf, sizeof head);
    if (head[1] != (uint64_t)L->ac.E || head[2] != slot_bytes(L))
        return errf(err, "environment slots: %" PRIu64 " of %" PRIu64 " bytes, this run has %d of %zu", head[1],
                    head[2], L->ac.E, slot_bytes(L));
    if (head[0] > CKPT_MAX_COUNT) return errf(err, "pending env steps %" PRIu64 " (damaged)", head[0]);
    L->pending_train = head[0];
    const unsigned char *p = buf + sizeof head;
    for (int e = 0; e < L->ac.E; e++, p += head[2]) {
        int64_t len;
        memcpy(&L->ac.ep_return[e], p, 8);
        memcpy(&len, p + 8, 8);
        if (len < 0 || len > INT_MAX || !isfinite(L->ac.ep_return[e]))
            return errf(err, "environment slot %d: episode length %" PRId64 " or return not valid (damaged)", e, len);
        L->ac.ep_len[e] = (int)len;
        if (L->ac.spec->ext_hooks) { /* a Python env's episode starts afresh (env_restore) */
            L->ac.ep_return[e] = 0;
            L->ac.ep_len[e] = 0;
        }
        if (env_restore(&L->ac.envs[e], p + SLOT_HEAD, L->ac.obs + (size_t)e * (size_t)L->ac.O, err) != 0)
            return err_prefix(err, "environment slot %d", e);
    }
    return 0;
}

int trainer_checkpoint(Local *L, bool final) {
    double t0 = now_seconds();
    char err[ERR_LEN], dir[PATH_LEN];
    const Config *cfg = L->cfg;
    RunCkptShard sh;
    RunCkptManifest man;
    describe_ckpt(L, final ? "final" : "periodic", &sh, &man);
    sh.rngs = L->rngs;
    sh.n_rngs = gather_rngs(L);
    sh.envs = gather_envs(L);
    sh.envs_bytes = envs_bytes(L);
    if (cfg->checkpoint.save_replay) sh.replay = &L->replay;
    const char *run_dir = L->run.log.dir;
    int rc = runckpt_begin(run_dir, sh.seq, dir, err);
    if (rc == 0 && (runckpt_write_shard(cfg, &L->net, dir, &sh, err) != 0 ||
                    runckpt_commit(run_dir, dir, &man, cfg->checkpoint.keep, err) != 0)) {
        runckpt_discard(dir); /* latest never named it: what it holds is of no use */
        rc = -1;
    }
    free(sh.envs);
    if (rc != 0) {
        run_warn(&L->run, "checkpoint failed: %s", err);
        snprintf(L->ckpt_err, sizeof L->ckpt_err, "%s", err);
        return -1;
    }
    snprintf(L->ckpt_dir, sizeof L->ckpt_dir, "%s", dir);
    trace_span(&L->trace, TR_CKPT, t0, now_seconds(), (uint32_t)sh.seq);
    return 0;
}

int trainer_restore(Local *L, const char *run_dir, RunStart *start, char *err) {
    RunCkptManifest man;
    if (runckpt_latest(run_dir, &man, err) != 0) return -1;
    int n_rngs = 2 + L->ac.E;
    RunCkptShard sh = {.index = 0, .off = 0, .len = L->net.n_params, .params = L->params, .target = L->target,
                       .opt = &L->opt, .rngs = L->rngs, .n_rngs = n_rngs,
                       .replay = L->cfg->checkpoint.save_replay ? &L->replay : NULL,
                       .envs = xmalloc(envs_bytes(L)), .envs_bytes = envs_bytes(L)};
    if (runckpt_read_slice(L->cfg, &L->net, man.dir, &sh, err) != 0) {
        free(sh.envs);
        return -1;
    }
    L->ac.rng = L->rngs[0];
    L->sample_rng = L->rngs[1];
    int rc = 0;
    if (sh.envs_found) { /* every slot's episode continues */
        rc = scatter_envs(L, sh.envs, err);
        if (rc != 0) err_prefix(err, "%s", man.dir);
    } else { /* a format-1 checkpoint: new episodes from the saved generators */
        for (int e = 0; e < L->ac.E; e++) {
            L->ac.envs[e].rng = L->rngs[2 + e];
            env_reset(&L->ac.envs[e], L->ac.obs + (size_t)e * (size_t)L->ac.O);
        }
    }
    free(sh.envs);
    if (rc != 0) return -1;
    *start = (RunStart){.t0 = start->t0, .resumed = true, .run_dir = run_dir, .env_steps = sh.env_steps, .updates = sh.updates,
                        .episodes = sh.episodes, .wall_seconds = sh.wall_seconds, .ckpt_seq = man.seq,
                        .has_history = man.has_history != 0, .history = man.history};
    L->ac.steps = sh.env_steps;
    snprintf(L->resumed_from, sizeof L->resumed_from, "%s", man.dir);
    L->replay_dropped = sh.replay_dropped;
    return 0;
}

void trainer_restore_report(const Local *L) {
    log_info(NULL, "resumed from %s: %" PRIu64 " env steps, %" PRIu64 " updates, replay %zu transitions",
             L->resumed_from, L->run.env_steps, L->run.updates, replaystore_size(&L->replay));
    /* A Python environment's state lives in its own objects, which no
     * checkpoint holds: every slot began a new episode (env_restore). */
    if (L->ac.spec->ext_hooks)
        log_info(NULL, "python environment: resumed with a fresh reset of each slot (its state is not saved)");
    /* A smaller replay.capacity than the checkpoint's contents: say what
     * was lost, as a distributed replay shard does. */
    if (L->replay_dropped)
        log_info(NULL, "dropped %" PRIu64 " saved transitions, the oldest, beyond replay.capacity %zu (kept the "
                 "newest %zu)", L->replay_dropped, replaybuf_capacity(&L->replay.buf), replaystore_size(&L->replay));
}
