/* SPDX-License-Identifier: MIT */
/* coordint.h (private to the coordinator: coordinator.c and coordckpt.c):
 * the coordinator's state, and its checkpoints (coordckpt.c), which the
 * main loop and the stop sequence in coordinator.c start and wait for. */
#ifndef GORILA_COORDINT_H
#define GORILA_COORDINT_H

#include <stdbool.h>
#include <stdint.h>

#include "actorstats.h"
#include "evaluator.h"
#include "jobtrace.h"
#include "role.h"
#include "run.h"
#include "stopseq.h"
#include "util.h"

typedef enum { CK_PERIODIC, CK_FINAL, CK_BEST } CkptKind;

typedef struct {
    RoleBase rb;
    const JobArgs *args;
    const Layout *lay;
    Run run;                  /* counters, evaluation record, run directory and end (run.h) */
    StopState state;          /* where the stop sequence is (stopseq.h) */
    Evaluator ev;
    float *eval_params;       /* (n_params) the parameters of evaluation eval_id */
    float *eval_target;       /* (n_params) the final eval reads it from the checkpoint, unused */
    /* the evaluation in flight: its PARAMS still arriving */
    int eval_got;
    bool eval_pulling;
    uint64_t eval_version;    /* source 0's version of the parameters pulled */
    uint64_t eval_id;         /* the evaluation the sources hold a snapshot of; 0: none */
    uint64_t solved_eval_id;  /* the evaluation that first solved, in this process */
    bool best_pending;        /* eval_id set a new best: save its snapshot as checkpoints/best */
    RoleMetrics *last;        /* (size) latest report of each rank */
    bool *stopped;            /* (size) STOPPED received */
    ActorStats actors;        /* each actor's episodes and returns (this segment), for summary.json */
    /* the checkpoint in flight (ckpt_busy), or the last one */
    bool ckpt_busy;
    CkptKind ckpt_kind;
    uint64_t ckpt_snapshot;   /* evaluation id written by the one in progress; 0: live state */
    uint64_t ckpt_seq;
    int ckpt_done, ckpt_failed;
    int ckpt_expect;          /* CKPT_DONE to wait for: every source, + every replay shard when ckpt_replay,
                                 + every learner from ckpt_copy_first */
    int ckpt_copy_first;      /* learners from this one write their own copies into the one in flight; -1: none */
    bool ckpt_replay;         /* checkpoint.save_replay, and not the best one: replay files too */
    uint64_t ckpt_replay_rows; /* transitions the replay shards wrote */
    char ckpt_dir[PATH_LEN], ckpt_err[PROTO_MAX_TEXT + 1];
    uint64_t ckpt_env_steps, ckpt_episodes, ckpt_version;
    bool final_shards_written; /* every CKPT_DONE of the final checkpoint came in, none failed */
    /* loss over the metrics interval, from the learners' cumulative sums */
    double last_loss_sum;
    uint64_t last_loss_n;
    /* the stop */
    int n_waiting;            /* STOPPED still expected in this state */
    double stop_step_t0;      /* now_seconds() when the current step of the stop began */
    struct {
        double heard;         /* now_seconds() of its last message (0: none yet) */
        uint64_t ckpt_done;   /* checkpoint number of its last CKPT_DONE */
    } *answer;                /* (size) for check_stop_deadline's report */
    JobTrace traces;          /* logging.trace: the other ranks' traces, for trace.json */
    /* stop signals: the first, to this rank or another (STOP_REQ), for the log */
    bool own_signal_noted;
    char signal_who[96];      /* "SIGTERM to rank 2 (replay 0/1)"; "" before any */
} Coord;

/* Ask every parameter source to write a checkpoint of kind (snapshot: of
 * that evaluation id, 0: the live state), then, for a periodic or final
 * one, every replay shard (checkpoint.save_replay) and the learners that
 * hold their own copies. A directory that cannot be made skips it, with a
 * warning (a final one: the run's final checkpoint failed). */
void coordckpt_start(Coord *c, CkptKind kind, uint64_t snapshot);

/* Whether (role, idx) was asked for a learner copy in the checkpoint in flight. */
bool coordckpt_writes_copy(const Coord *c, Role role, int idx);

/* CKPT_DONE m of the checkpoint in flight (dies when none was asked of
 * its sender). When every writer has answered: a failure discards the
 * directory; the best is committed, a periodic one too, with the counters
 * as they stood at coordckpt_start; the final one waits for
 * coordckpt_commit (final_shards_written). */
void coordckpt_on_done(Coord *c, const Msg *m);

/* Write the MANIFEST of the checkpoint whose shards are all written, with
 * env_steps and episodes. */
void coordckpt_commit(Coord *c, uint64_t env_steps, uint64_t episodes);

#endif
