/* SPDX-License-Identifier: MIT */
/* trainerint.h: the local trainer's state, shared by trainer.c (the loop)
 * and trainerckpt.c (writing and reading its checkpoints). Private to the
 * two: the public contract is trainer.h. */
#ifndef GORILA_TRAINERINT_H
#define GORILA_TRAINERINT_H

#include "actorcore.h"
#include "agentcfg.h"
#include "evaluator.h"
#include "replaystore.h"
#include "run.h"
#include "trace.h"

typedef struct {
    const Config *cfg;
    Run run;                     /* the counters, evaluation record, run directory and end (run.h) */
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
    Batch chunk, batch;
    EpisodeEnd *ended;
    uint64_t pending_train;      /* env steps not yet trained on (agent.train_every) */
    /* loss and mean Q(s, a) of each batch, summed over the metrics interval */
    double loss_sum, q_sum;
    uint64_t loss_n;
    double epsilon;
    /* checkpoints */
    Rng *rngs;                   /* (2 + E) scratch for saving generator states */
    char ckpt_dir[PATH_LEN];     /* the last checkpoint committed */
    char ckpt_err[ERR_LEN];      /* why the last one failed */
    char resumed_from[PATH_LEN]; /* the checkpoint a resume read ("" if none) */
    uint64_t replay_dropped;     /* its saved transitions beyond replay.capacity */
    Trace trace;                 /* logging.trace: the one track of trace.json */
    /* this process's time per kind of work (summary.json local_time_split):
     * acting (env steps, action selection, replay insert), learning
     * (sampling, gradient, step, priority updates), evaluating */
    double act_seconds, learn_seconds, eval_seconds;
    uint64_t act_env_steps;      /* env steps this process took */
} Local;

/* Save the parameters just evaluated as checkpoints/best (no generators or
 * replay: it is for evaluation and export, not for resuming); a failure
 * is a warning. */
void trainer_save_best(Local *L);

/* Write a checkpoint of the whole state (final: the run's last); 0, or -1
 * with L->ckpt_err after a warning. */
int trainer_checkpoint(Local *L, bool final);

/* Continue from the newest checkpoint of run_dir: parameters, target,
 * optimizer, counters (into *start), generators (and replay if it was
 * saved). The environments start fresh episodes from their restored
 * generators. 0, or -1 with err. */
int trainer_restore(Local *L, const char *run_dir, RunStart *start, char *err);
/* Say what trainer_restore read: once the resume is known to train. */
void trainer_restore_report(const Local *L);

#endif
