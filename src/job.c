/* job.c: see job.h. */
#include "job.h"
#include "signals.h"
#include "util.h"

#include <cblas.h>
#include <stdio.h>
#include <sys/prctl.h>

int job_run(Ctx *ctx, const JobArgs *args) {
    const Layout *lay = args->lay;
    layout_role_of(lay, ctx->rank, &ctx->role, &ctx->index);
    ctx->count = lay->count[ctx->role];
    ctx->t0 = now_seconds();
    /* Waits sleep 20 us .. 1 ms (comm.h); the default 50 us timer slack
     * would stretch the short ones several times over. */
    prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
    openblas_set_num_threads(args->cfg->run.blas_threads);
    signals_install();
    if (ctx->rank == 0) {
        printf("job: %d ranks, rank order fixed: coordinator, actors, replay shards, learners, parameter servers\n",
               lay->size);
        layout_print(lay, stdout);
        fflush(stdout);
    }
    switch (ctx->role) {
    case ROLE_COORD: return coordinator_run(ctx, args);
    case ROLE_ACTOR: return actor_run(ctx, args);
    case ROLE_REPLAY: return replay_run(ctx, args);
    case ROLE_LEARNER: return learner_run(ctx, args);
    case ROLE_PS: return ps_run(ctx, args);
    default: DIE(ctx, "rank %d has no distributed role", ctx->rank);
    }
}
