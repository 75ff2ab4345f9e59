/* SPDX-License-Identifier: MIT */
/* runckpt.h: the checkpoints of a run directory, built on the checkpoint
 * file format (ckptfile.h, docs/CHECKPOINT.md).
 *
 *   <run>/checkpoints/ckpt-<seq>/ps-<p>.ckpt   one file per parameter shard
 *   <run>/checkpoints/ckpt-<seq>/replay-<s>.ckpt  one per replay shard, with
 *                                              checkpoint.save_replay (distributed)
 *   <run>/checkpoints/ckpt-<seq>/learner-<k>.ckpt  one per learner that holds a
 *                                              copy of its own (gossip, easgd, local_sgd)
 *   <run>/checkpoints/ckpt-<seq>/MANIFEST      written last, atomically
 *   <run>/checkpoints/latest                   name of the newest complete one
 *
 * A checkpoint counts only once its MANIFEST exists and `latest` names it,
 * so a job killed halfway through writing one resumes from the previous.
 * Each shard file carries the run id, the checkpoint's sequence number, the
 * shard count and its index in its header, and the MANIFEST records every
 * shard file's size and CRC-32C: a shard from another checkpoint or another
 * run, a damaged one or a set that overlaps or leaves a gap is refused.
 * Damage also covers every part that is not a regular file (a FIFO is
 * refused, never waited on), a section whose CRC fails, a replay row out of
 * range, a non-finite parameter, target or optimizer state value and a
 * counter above CKPT_MAX_COUNT. A damaged newest checkpoint
 * falls back to the newest intact one (runckpt_latest). The run directory
 * records its run id (<run>/run_id): a checkpoint of another run is refused. <run>/checkpoints/best holds the best evaluation's
 * parameters (runckpt_begin_best).
 * The single-process trainer writes one shard covering the whole network,
 * plus its random generators and, with checkpoint.save_replay, the replay
 * contents. Shard files record their slice, so a job may resume with a
 * different number of parameter servers: each new shard reads the parts of
 * every old shard file that overlap its slice (runckpt_read_slice).
 * Replay files are bound like shard files (run id, sequence number, replay
 * shard count, index, size and CRC in the MANIFEST); a resume with the
 * same replay shard count restores each as it was, with another count the
 * saved rows are dealt out again (runckpt_read_replay).
 *
 * The code behind this header is split by concern (runckptint.h lists the
 * files, their order and how they are named): begin and commit
 * (runckpt.c), choosing a checkpoint (ckptselect.c), shard files
 * (ckptslice.c), replay files (ckptreplay.c), MANIFEST and binding
 * (ckptmanifest.c), file helpers (ckptio.c).
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
#include "replaystore.h"
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
    ReplayStore *replay;       /* saved (with its priorities when prioritized); NULL: none */
    void *envs;                /* the environment slots (section ENVS, format 2), envs_bytes; NULL: none.
                                * Written as given; on read, filled when the file has the section
                                * (envs_found) and it is envs_bytes long, else an error */
    size_t envs_bytes;
    bool envs_found;           /* filled on read: the file held ENVS (a format-1 file does not) */
    uint64_t replay_dropped;   /* filled on read: saved transitions that did not fit replay's capacity
                                * (the oldest; the newest are kept) */
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
    /* replay files replay-0 .. replay-(n_replay - 1) (distributed jobs with
     * checkpoint.save_replay); 0: the checkpoint holds no replay */
    int n_replay;
    uint64_t replay_transitions;  /* filled on read: transitions in them, summed */
    /* learner copy files learner-first_copy .. learner-(n_copies - 1) (the
     * decentralized sync modes: every learner's own parameters, target and
     * optimizer state, beside the shards the actors and evaluations use);
     * n_copies is the job's learner count, 0: none */
    int n_copies, first_copy;
    char dir[PATH_LEN];   /* the checkpoint's directory (filled on read) */
} RunCkptManifest;

/* One replay shard's contents, to write as replay-<index>.ckpt. */
typedef struct {
    int index;                     /* the replay shard s */
    int n_shards;                  /* replay shards in the job (and in the checkpoint) */
    const ReplayStore *replay;     /* its rows (and priorities and max_priority when prioritized) */
    uint64_t run_id, seq;          /* binding, as RunCkptShard's */
} RunCkptReplay;

/* What runckpt_read_replay restored. */
typedef struct {
    int files;           /* replay files in the checkpoint; 0: none, nothing restored */
    bool exact;          /* same shard count: this shard's own file restored as saved */
    uint64_t restored;   /* transitions in the buffer now */
    uint64_t dropped;    /* saved transitions meant for it that did not fit its capacity (the oldest) */
} RunCkptReplayInfo;

/* Create <run>/checkpoints/ckpt-<seq> and put its path in dir (PATH_LEN).
 * A directory of that name left by an abandoned line of checkpoints (a
 * resume that fell back past a damaged one) is emptied first. Returns 0 or
 * -1 with err. */
int runckpt_begin(const char *run_dir, uint64_t seq, char *dir, char *err);

/* Write dir/ps-<index>.ckpt for shard sh of network net (config gives the
 * env and optimizer kind), with sh->run_id, sh->seq, sh->n_shards and
 * sh->index in its header (0 <= index < n_shards). Refuses parameters,
 * target or optimizer state values that are NaN or Inf ("non-finite
 * parameters ... not checkpointed"): a diverged network is never saved. Atomic; 0 or -1 with
 * err. */
int runckpt_write_shard(const Config *cfg, const QNet *net, const char *dir, const RunCkptShard *sh, char *err);

/* Write dir/replay-<index>.ckpt: the checkpoint file format with an empty
 * parameter slice (params section of 0 floats, slice [0, 0)) and a replay
 * section (replaystore_serialize: with priorities when prioritized),
 * its header bound like a shard's (run id, seq, shard count, index) and
 * marked as a replay file with its transition count. Serializes the buffer
 * into one temporary allocation of its serial size (an allocation failure
 * fails the write, not the job). Atomic; 0 or -1 with err. */
int runckpt_write_replay(const Config *cfg, const QNet *net, const char *dir, const RunCkptReplay *rp, char *err);

/* Write dir/learner-<index>.ckpt: learner sh->index's own copy of the
 * whole network (slice [0, n_params)), bound like a shard file (run id,
 * seq, sh->n_shards = the job's learner count, index) and marked as a
 * learner copy. Refuses non-finite values as runckpt_write_shard does.
 * Atomic; 0 or -1 with err. */
int runckpt_write_copy(const Config *cfg, const QNet *net, const char *dir, const RunCkptShard *sh, char *err);

/* Learner `learner`'s copy from the checkpoint in dir into sh (whole
 * network: off 0, len n_params; params, target, optimizer state and
 * versions), verified as it is read (binding, size, CRC-32C). *found false
 * (and sh untouched, return 0) when the checkpoint holds no copy for it:
 * no copy files, another learner count (n_learners), or a learner without
 * one (the parameter source, whose state is the shard files). 0 or -1
 * with err. */
int runckpt_read_copy(const Config *cfg, const QNet *net, const char *dir, int learner, int n_learners,
                      RunCkptShard *sh, bool *found, char *err);

/* Restore replay shard `index` of a job with n_shards replay shards from
 * the checkpoint in dir into an empty (just initialised) store, uniform or
 * prioritized. Every replay file it reads is
 * verified as it is opened (binding, size, transitions, CRC-32C, section
 * CRCs, as runckpt_verify does, and every row it is about to restore; the
 * files it does not need are left to the caller's runckpt_latest /
 * runckpt_verify).
 *  - no replay files: nothing changes (info->files = 0);
 *  - as many files as n_shards: replay-<index>.ckpt is restored as saved
 *    (replaystore_restore: rows, ids, priorities,
 *    max_priority; into a smaller capacity the newest are kept);
 *  - another count: the saved rows are dealt out again (replaybuf_deal:
 *    old row k of the files put end to end goes to shard k mod n_shards),
 *    each keeping its priority, with new ids; more than the capacity keeps
 *    the newest of each file's part. Reads one file at a time.
 * A prioritized buffer takes uniform files with max_priority; a uniform
 * one ignores saved priorities. 0, or -1 with err naming the file (the
 * buffer may then hold part of the rows: the caller gives up). */
int runckpt_read_replay(const Config *cfg, const QNet *net, const char *dir, int index, int n_shards,
                        ReplayStore *replay, RunCkptReplayInfo *info, char *err);

/* Bind and publish the checkpoint in dir: check that its shard files
 * ps-0 .. ps-(m->n_shards - 1) carry m->run_id and m->seq, know they are
 * one of m->n_shards and tile the parameters; write dir/MANIFEST with m
 * and every shard file's size and CRC-32C (and, when m->n_replay > 0, the
 * same for replay-0 .. replay-(n_replay - 1), each bound to this run, seq,
 * replay count and index); point <run>/checkpoints/latest
 * at dir; delete all but the newest `keep` checkpoint directories up to
 * m->seq (and any numbered above it: an abandoned line). m->kind "" means
 * "periodic"; eval_episodes 0 means no evaluation (eval_mean is then not
 * stored). `best` is never pruned. 0 or -1 with err. */
int runckpt_commit(const char *run_dir, const char *dir, const RunCkptManifest *m, int keep, char *err);

/* Set aside every ckpt-* directory of run_dir numbered above seq (renamed
 * to abandoned-ckpt-<n>, which no reader, keep or prune counts): the line a
 * job resuming from checkpoint seq abandons (a damaged checkpoint it fell
 * back past). One without a MANIFEST (a killed job's unfinished attempt:
 * temporary files, part of the shards) never was a checkpoint and is
 * removed instead. Then every abandoned-* entry without a complete
 * checkpoint (no MANIFEST) is removed, and of the rest all but the
 * keep_abandoned most recently set aside (checkpoint.keep_abandoned; the
 * oldest go first), so failures cannot fill the disk. Call it under the
 * run's lock (runlog_init does). Otherwise a damaged directory whose
 * number the resumed job gives to a best checkpoint (best and ckpt-* share
 * the numbers) would sit below its next commit, count towards
 * checkpoint.keep and have the good checkpoints below it pruned. Renamed,
 * not deleted: the fallback may have skipped it for a passing reason (an
 * I/O error). Best effort; prints one line on stderr for each directory
 * set aside or removed (or that could not be). */
void runckpt_drop_above(const char *run_dir, uint64_t seq, int keep_abandoned);

/* Remove dir, the directory of a checkpoint attempt that failed (from
 * runckpt_begin or runckpt_begin_best, not committed): the files it holds
 * (finished shards, temporaries) are of no use, and on a full disk they
 * would take the space the next attempt needs. Only a directory named
 * ckpt-* or best.new-* is touched. Best effort. */
void runckpt_discard(const char *dir);

/* Make the complete checkpoint ckpt_dir the best one too: its shard files
 * are hard-linked into a staging directory and committed with m (whose
 * seq and shard count must be ckpt_dir's); replay files are not (best
 * holds parameters only). 0 or -1 with err. */
int runckpt_best_from(const char *run_dir, const char *ckpt_dir, const RunCkptManifest *m, char *err);

/* Find the newest intact checkpoint of run_dir and read its manifest.
 * Starts from checkpoints/latest; when that is missing or malformed (or not
 * a regular file), or names a checkpoint that fails runckpt_verify, falls
 * back to the newest ckpt-* directory that passes and prints one line on
 * stderr:
 *   gorila: warning: checkpoint X is damaged (reason); using Y
 * A job running in the directory may commit and prune meanwhile: when the
 * answer would be a fallback or an error and `latest` has moved since it
 * was read, the choice starts over (a bounded number of times), so pruning
 * never makes a healthy run look damaged. The checkpoint chosen must be of
 * the run the directory records (runckpt_run_id): one copied in from
 * another run is refused, naming both ids. 0, or -1 with err ("no
 * checkpoint in runs/x (...)" when there is none, "no intact checkpoint in
 * runs/x: ..." when every one is damaged). */
int runckpt_latest(const char *run_dir, RunCkptManifest *m, char *err);

/* runckpt_latest without printing: the fallback note, if any, goes into
 * warn (ERR_LEN bytes; "" when latest was used; warn may be NULL). */
int runckpt_find_latest(const char *run_dir, RunCkptManifest *m, char *warn, char *err);

/* For tests: a function called with the path of the checkpoint just
 * chosen, before it is verified (runckpt_find_latest_hooked) or read
 * (runckpt_read_chosen), to play a job that commits and prunes meanwhile. */
typedef struct {
    void (*fn)(void *arg, const char *dir);
    void *arg;
} RunCkptHook;

/* runckpt_find_latest with hook (NULL: none) called on every attempt with
 * the checkpoint `latest` names. */
int runckpt_find_latest_hooked(const char *run_dir, RunCkptManifest *m, char *warn, const RunCkptHook *hook,
                               char *err);

typedef enum { RUNCKPT_LATEST, RUNCKPT_BEST } RunCkptWhich;

/* Read sh's slice (runckpt_read_slice) from the checkpoint m that
 * runckpt_latest (which RUNCKPT_LATEST) or runckpt_best (RUNCKPT_BEST)
 * chose in run_dir. A reader that holds no lock (gorila eval) races the
 * job writing the run: between the choice and the read, a commit may
 * prune the chosen checkpoint or replace best. So when the read fails and
 * choosing again gives another checkpoint, that one is read instead (m
 * becomes it), a bounded number of times; a failure that choosing again
 * does not explain is returned as it is. hook: NULL, or called with m->dir
 * before each read. 0 or -1 with err. */
int runckpt_read_chosen(const Config *cfg, const QNet *net, const char *run_dir, RunCkptWhich which,
                        RunCkptManifest *m, RunCkptShard *sh, const RunCkptHook *hook, char *err);

/* The run id run_dir records in <run>/run_id (16 hex digits and a newline,
 * written by runlog_init when it creates the run). 0 with *id; 1 when the
 * file does not exist (a run made by an older build, which recorded none:
 * any checkpoint's id is then taken); -1 with err when it is not a regular
 * file or not a run id. */
int runckpt_run_id(const char *run_dir, uint64_t *id, char *err);

/* Write <run>/run_id (atomic). 0 or -1 with err. */
int runckpt_save_run_id(const char *run_dir, uint64_t id, char *err);

/* Read a checkpoint directory's MANIFEST and check its own CRC (not the
 * shard files: runckpt_verify). A manifest of an older format is refused
 * ("written by an older gorila"). 0 or -1 with err. */
int runckpt_read_manifest(const char *dir, RunCkptManifest *m, char *err);

/* Read dir's manifest and check the whole checkpoint without a network at
 * hand: every shard file listed is there (a regular file), has the size
 * and CRC-32C the manifest records and intact sections (each section's
 * CRC), carries the manifest's run id, sequence number and shard count and
 * its own index in its header, and the slices tile [0, n_params) in index
 * order with no overlap and no gap; every replay file listed likewise
 * (size, CRC, section CRCs, run id, seq, replay count, index,
 * transitions). Every replay row (a replay file's, or the local trainer's
 * replay section) must be valid: finite observations and rewards, actions
 * in [0, num_actions), discounts in [0, 1], priorities finite and > 0.
 * Every parameter, target and optimizer state value of a shard file or a
 * learner copy must be finite.
 * Counters (manifest, headers, optimizer step, replay ids) are at most
 * CKPT_MAX_COUNT. 0 with m filled, or -1 with err naming the file and what
 * is wrong (for a row, its number: "replay row 17 of 120 (0 = oldest):
 * action is 7, expected 0 .. 1"). */
int runckpt_verify(const char *dir, RunCkptManifest *m, char *err);

/* Fill sh->params, sh->target and (if sh->opt) the optimizer state for the
 * slice [sh->off, sh->off + sh->len) from the shard files of the
 * checkpoint in dir, whatever their number; also sh->version and
 * target_version (from the file holding sh->off), and, if present and
 * asked for (sh->rngs, sh->replay), the local trainer's
 * extras and counters.
 * Checks everything runckpt_verify does, and that the network, env and
 * optimizer match; a shard set that does not tile the parameters exactly is
 * refused before any of its data is used. 0 or -1 with err (sh's arrays are
 * clobbered on error). */
int runckpt_read_slice(const Config *cfg, const QNet *net, const char *dir, RunCkptShard *sh, char *err);

/* The best checkpoint, <run>/checkpoints/best: the parameters of the best
 * evaluation so far, a complete checkpoint like any other (kind "best").
 * Written in a staging directory, then swapped in atomically:
 *   runckpt_begin_best     creates checkpoints/best.new-<seq> (emptying a
 *                          leftover of that name) and puts its path in dir
 *   runckpt_write_shard    each shard into dir, with seq as sh->seq
 *   runckpt_commit_best    binds and writes dir/MANIFEST (as
 *                          runckpt_commit, kind "best"), then replaces
 *                          checkpoints/best with dir in one rename
 *                          (RENAME_EXCHANGE when best exists), deletes the
 *                          old one and older best.new-* leftovers
 * A reader sees the old best or the new one, never a mix. `keep` never
 * prunes best; runckpt_latest never picks it. 0 or -1 with err. */
int runckpt_begin_best(const char *run_dir, uint64_t seq, char *dir, char *err);
int runckpt_commit_best(const char *run_dir, const char *dir, const RunCkptManifest *m, char *err);

/* Read and verify (runckpt_verify) checkpoints/best, which must be of the
 * run run_dir records (as runckpt_latest). 0, or -1 with err ("no best
 * checkpoint in runs/x" when there is none). */
int runckpt_best(const char *run_dir, RunCkptManifest *m, char *err);

#endif
