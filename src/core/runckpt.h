/* runckpt.h: the checkpoints of a run directory, built on the checkpoint
 * file format (checkpoint.h, docs/CHECKPOINT.md).
 *
 *   <run>/checkpoints/ckpt-<seq>/ps-<p>.ckpt   one file per parameter shard
 *   <run>/checkpoints/ckpt-<seq>/MANIFEST      written last, atomically
 *   <run>/checkpoints/latest                   name of the newest complete one
 *
 * A checkpoint counts only once its MANIFEST exists and `latest` names it,
 * so a job killed halfway through writing one resumes from the previous.
 * The single-process trainer writes one shard covering the whole network,
 * plus its random generators and, with checkpoint.save_replay, the replay
 * contents. Shard files record their slice, so a job may resume with a
 * different number of parameter servers: each new shard reads the parts of
 * every old shard file that overlap its slice (runckpt_read_slice).
 */
#ifndef GORILA_RUNCKPT_H
#define GORILA_RUNCKPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ckptfile.h"
#include "config.h"
#include "optim.h"
#include "qnet.h"
#include "replaybuf.h"
#include "runlog.h"
#include "rng.h"


/* One shard's state, to write or to fill when reading. */
typedef struct {
    int index;                 /* shard number p (file ps-<p>.ckpt) */
    size_t off, len;           /* slice of the flat parameters */
    float *params, *target;    /* (len) each */
    Optim *opt;                /* state for len parameters; NULL: none */
    uint64_t version, target_version;
    /* local trainer extras (NULL / 0 when absent) */
    Rng *rngs;                 /* n_rngs generators, written and restored */
    int n_rngs;
    ReplayBuf *replay;
    /* counters stored in the shard's header (local trainer) */
    uint64_t env_steps, updates, episodes;
    double wall_seconds;
    /* binding to the manifest: written into the shard's header by
     * runckpt_write_shard and checked by runckpt_read_slice */
    uint64_t run_id;           /* the run's id (RunLog.run_id) */
    uint64_t seq;              /* the checkpoint's sequence number */
    int n_shards;              /* shard files in the checkpoint */
} RunCkptShard;

typedef struct {
    uint64_t seq;              /* checkpoint sequence number */
    uint64_t env_steps, updates, episodes;
    double wall_seconds;
    int n_shards;
    char mode[32];             /* "local", "ps_sync", ... */
    uint64_t run_id;           /* the run's id; every shard file carries it */
    char kind[16];             /* "periodic", "final" or "best" */
    /* the greedy evaluation of exactly these parameters, when there was one
     * (eval_episodes 0 and eval_mean NaN otherwise) */
    double eval_mean;
    int eval_episodes;
    uint64_t eval_seed;
    uint64_t params_version;   /* optimizer steps the parameters had (shard 0's version) */
    /* the run's evaluation record up to this checkpoint (first solve, best,
     * last), so that a resume keeps its history; has_history 0: none kept */
    int has_history;
    EvalTrack history;
    char dir[PATH_LEN];   /* the checkpoint's directory (filled on read) */
} RunCkptManifest;

/* Create <run>/checkpoints/ckpt-<seq> and put its path in dir
 * (PATH_LEN). Returns 0 or -1 with err. */
int runckpt_begin(const char *run_dir, uint64_t seq, char *dir, char *err);

/* Write dir/ps-<index>.ckpt for shard sh of network net (config gives the
 * env and optimizer kind). Atomic; 0 or -1 with err. */
int runckpt_write_shard(const Config *cfg, const QNet *net, const char *dir, const RunCkptShard *sh, char *err);

/* Write dir/MANIFEST, point <run>/checkpoints/latest at it, then delete all
 * but the newest `keep` checkpoint directories. 0 or -1 with err. */
int runckpt_commit(const char *run_dir, const char *dir, const RunCkptManifest *m, int keep, char *err);

/* checkpoints/best: stage a checkpoint in checkpoints/best.new-<seq>
 * (runckpt_begin_best), write its shards there, then runckpt_commit_best
 * writes its MANIFEST (kind "best") and atomically puts it in place of
 * checkpoints/best. runckpt_best reads checkpoints/best/MANIFEST. */
int runckpt_begin_best(const char *run_dir, uint64_t seq, char *dir, char *err);
int runckpt_commit_best(const char *run_dir, const char *dir, const RunCkptManifest *m, char *err);
int runckpt_best(const char *run_dir, RunCkptManifest *m, char *err);
/* Make the complete checkpoint ckpt_dir the best one too: its shard files
 * are hard-linked into a staging directory and committed with m (whose
 * seq and shard count must be ckpt_dir's). 0 or -1 with err. */
int runckpt_best_from(const char *run_dir, const char *ckpt_dir, const RunCkptManifest *m, char *err);

/* Find the newest complete checkpoint of run_dir and read its manifest.
 * 0, or -1 with err ("no checkpoint in runs/x (checkpoints/latest missing)"). */
int runckpt_latest(const char *run_dir, RunCkptManifest *m, char *err);

/* Read a checkpoint directory's MANIFEST. 0 or -1 with err. */
int runckpt_read_manifest(const char *dir, RunCkptManifest *m, char *err);

/* Fill sh->params, sh->target and (if sh->opt) the optimizer state for the
 * slice [sh->off, sh->off + sh->len) from the shard files of the
 * checkpoint in dir, whatever their number; also sh->version and
 * target_version (from the file holding sh->off), and, if present and
 * asked for (sh->rngs, sh->replay), the local trainer's extras and counters.
 * Checks that the network, env and optimizer match. 0 or -1 with err. */
int runckpt_read_slice(const Config *cfg, const QNet *net, const char *dir, RunCkptShard *sh, char *err);

#endif
