/* SPDX-License-Identifier: MIT */
/* job.h: a distributed training job: MPI set-up, the start-up checks every
 * rank agrees on, and dispatch to the role of this rank. */
#ifndef GORILA_JOB_H
#define GORILA_JOB_H

#include <mpi.h>
#include <stdint.h>

#include "config.h"
#include "ctx.h"
#include "layout.h"
#include "runlog.h"

/* Where the job starts: zeros for a fresh run, the counters of the
 * checkpoint for --resume. The coordinator reads the manifest and every
 * rank receives this in one broadcast before the roles start. */
typedef struct {
    int32_t ok;               /* 0: the coordinator could not load the checkpoint */
    int32_t resumed;
    uint64_t env_steps, updates, episodes;
    double wall_seconds;      /* run time before this start */
    char ckpt_dir[PATH_LEN];  /* checkpoint directory to load (resumed) */
    char run_dir[PATH_LEN];   /* run directory (the coordinator's) */
    int32_t has_history;
    EvalTrack history;        /* the evaluations before this start (runckpt.h) */
    int32_t replay_files;     /* replay files in the checkpoint (0: none; each replay shard reads them) */
    uint64_t replay_transitions; /* transitions in them */
} JobStart;

/* Everything a role needs from the command line and the start-up. */
typedef struct {
    const Config *cfg;
    const Layout *lay;
    const char *resume_dir;   /* NULL for a fresh run */
    JobStart start;           /* filled by job_run before the role starts */
    MPI_Comm world;           /* every message of the job (comm_world_init) */
    MPI_Comm learners;        /* the learners among themselves (ring allreduce);
                                 MPI_COMM_NULL on other ranks */
} JobArgs;

/* A rank's config: load fills cfg and lay for a job of `size` ranks and
 * returns 0, or -1 with err (a config that does not load, or a layout of
 * another size). */
typedef struct {
    int (*load)(void *arg, int size, Config *cfg, Layout *lay, char *err);
    void *arg;
    const char *resume_dir;   /* NULL for a fresh run */
    /* Optional: called once, after the rank's work and before MPI_Finalize
     * (whether load succeeded or not): the Python bridge is finalised
     * there, before MPI. */
    void (*unload)(void *arg);
} JobLoad;

/* Every rank of a job under mpirun: MPI_Init, every rank loads the config
 * (jl), the ranks agree (one collective) on whether it loaded and fits the
 * job's size before any role starts, so a bad config or a wrong -np ends
 * every rank with one message and EXIT_USAGE_JOB instead of a hang; then
 * the role of this rank (or the local trainer for a one-rank config), then
 * MPI_Finalize. cfg is the caller's storage. Returns the exit status. */
/* The MPI settings every gorila MPI program starts with (environment
 * variables read by MPI_Init; a user's own setting wins). */
void job_mpi_env(void);

int job_main(int *argc, char ***argv, const JobLoad *jl, Config *cfg);

/* Run this rank's role (args->start and args->learners are filled here;
 * args->world must be set). Collective over args->world. Before any role
 * starts, every rank that writes into the run directory (parameter
 * sources, replay shards with checkpoint.save_replay) checks that its host
 * sees rank 0's directory at the same path; if one does not, rank 0 names
 * the hosts, ranks and directory and every rank returns EXIT_USAGE_JOB
 * with nothing trained or written. Returns the rank's exit status. */
int job_run(Ctx *ctx, JobArgs *args);

#define EXIT_USAGE_JOB 2 /* bad config or size, ranks of different builds, a run directory not
                            shared: every rank exits with it (a bad checkpoint: 4) */

/* The role entry points, one per module. Each returns the exit status. */
int coordinator_run(const Ctx *ctx, const JobArgs *args);
int actor_run(const Ctx *ctx, const JobArgs *args);
int replay_run(const Ctx *ctx, const JobArgs *args);
int learner_run(const Ctx *ctx, const JobArgs *args);
int ps_run(const Ctx *ctx, const JobArgs *args);

#endif
