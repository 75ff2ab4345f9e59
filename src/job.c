/* job.c: see job.h. */
#include "job.h"
#include "placement.h"
#include "signals.h"
#include "snapshot.h"
#include "util.h"

#include <cblas.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

/* Rank 0: where a resumed job starts. Fills s; s->ok = 0 with err on failure. */
static void load_start(const JobArgs *args, JobStart *s, char *err) {
    memset(s, 0, sizeof *s);
    s->ok = 1;
    if (!args->resume_dir) return;
    SnapManifest m;
    if (snapshot_latest(args->resume_dir, &m, err) != 0) {
        s->ok = 0;
        return;
    }
    s->resumed = 1;
    s->env_steps = m.env_steps;
    s->updates = m.updates;
    s->episodes = m.episodes;
    s->wall_seconds = m.wall_seconds;
    if (snprintf(s->ckpt_dir, sizeof s->ckpt_dir, "%s", m.dir) >= (int)sizeof s->ckpt_dir ||
        snprintf(s->run_dir, sizeof s->run_dir, "%s", args->resume_dir) >= (int)sizeof s->run_dir) {
        s->ok = 0;
        errf(err, "run directory path too long: %s", args->resume_dir);
    }
}

/* Pin this rank per placement.h when its node has more ranks than cores
 * and nobody bound the ranks already. Collective over ctx->comm. Rank 0
 * of each node logs the placement. */
static void pin(const Ctx *ctx, const JobArgs *args) {
    MPI_Comm node;
    MPI_Comm_split_type(ctx->comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int n_node = 0, me = 0;
    MPI_Comm_size(node, &n_node);
    MPI_Comm_rank(node, &me);
    int *ranks = malloc((size_t)n_node * sizeof(int));
    MPI_Allgather(&ctx->rank, 1, MPI_INT, ranks, 1, MPI_INT, node);
    MPI_Comm_free(&node);
    cpu_set_t mask;
    CPU_ZERO(&mask);
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    bool free_to_move = sched_getaffinity(0, sizeof mask, &mask) == 0 && CPU_COUNT(&mask) == online;
    int n_cpus = CPU_COUNT(&mask);
    if (!args->cfg->run.pin_cores || !free_to_move || n_node <= n_cpus) {
        free(ranks);
        return;
    }
    int cpus[CPU_SETSIZE], k = 0;
    for (int c = 0; c < CPU_SETSIZE && k < n_cpus; c++)
        if (CPU_ISSET(c, &mask)) cpus[k++] = c;
    int *core = malloc((size_t)n_node * sizeof(int));
    placement_assign(args->lay, ranks, n_node, cpus, n_cpus, core);
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(core[me], &one);
    if (sched_setaffinity(0, sizeof one, &one) != 0) log_info(ctx, "could not pin to core %d", core[me]);
    if (me == 0) {
        char line[1024];
        int n = snprintf(line, sizeof line, "%d ranks on %d cores, pinned (run.pin_cores):", n_node, n_cpus);
        for (int c = 0; c < n_cpus && n < (int)sizeof line - 32; c++) {
            n += snprintf(line + n, sizeof line - (size_t)n, "  core %d: ranks", cpus[c]);
            for (int i = 0; i < n_node && n < (int)sizeof line - 16; i++)
                if (core[i] == cpus[c]) n += snprintf(line + n, sizeof line - (size_t)n, " %d", ranks[i]);
        }
        log_info(ctx, "%s", line);
    }
    free(core);
    free(ranks);
}

int job_run(Ctx *ctx, JobArgs *args) {
    const Layout *lay = args->lay;
    layout_role_of(lay, ctx->rank, &ctx->role, &ctx->index);
    ctx->count = lay->count[ctx->role];
    ctx->t0 = now_seconds();
    /* Waits sleep 20 us .. 1 ms (comm.h); the default 50 us timer slack
     * would stretch the short ones several times over. */
    prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
    openblas_set_num_threads(args->cfg->run.blas_threads);
    signals_install();
    /* Start-up collectives (short, before any role loop): where to start,
     * and the learners' own communicator for the ring allreduce. */
    char err[ERR_LEN] = "";
    if (ctx->rank == 0) load_start(args, &args->start, err);
    MPI_Bcast(&args->start, sizeof args->start, MPI_BYTE, 0, ctx->comm);
    if (!args->start.ok) {
        if (ctx->rank == 0) fprintf(stderr, "gorila: error: cannot resume: %s\n", err);
        return EXIT_USAGE_JOB;
    }
    MPI_Comm_split(ctx->comm, ctx->role == ROLE_LEARNER ? 1 : MPI_UNDEFINED, ctx->rank, &args->learners);
    pin(ctx, args);
    if (ctx->rank == 0) {
        printf("job: %d ranks in fixed order: coordinator, actors, replay shards, learners, parameter servers\n",
               lay->size);
        layout_print(lay, stdout);
        if (args->start.resumed)
            printf("resuming from %s: %llu env steps, %llu updates\n", args->start.ckpt_dir,
                   (unsigned long long)args->start.env_steps, (unsigned long long)args->start.updates);
        fflush(stdout);
    }
    int rc;
    switch (ctx->role) {
    case ROLE_COORD: rc = coordinator_run(ctx, args); break;
    case ROLE_ACTOR: rc = actor_run(ctx, args); break;
    case ROLE_REPLAY: rc = replay_run(ctx, args); break;
    case ROLE_LEARNER: rc = learner_run(ctx, args); break;
    case ROLE_PS: rc = ps_run(ctx, args); break;
    default: DIE(ctx, "rank %d has no distributed role", ctx->rank);
    }
    if (args->learners != MPI_COMM_NULL) MPI_Comm_free(&args->learners);
    return rc;
}
