/* SPDX-License-Identifier: MIT */
/* ctx.c: see ctx.h. Uses clock.h only: util.c uses ctx (DIE prints the
 * rank and role), so ctx does not use util. */
#include "ctx.h"
#include "clock.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const char *const role_names[ROLE_COUNT] = {
    [ROLE_COORD] = "coordinator", [ROLE_ACTOR] = "actor", [ROLE_REPLAY] = "replay",
    [ROLE_LEARNER] = "learner",   [ROLE_PS] = "ps",       [ROLE_LOCAL] = "local",
    [ROLE_TOOL] = "tool",
};

const char *role_name(Role r) { return (r >= 0 && r < ROLE_COUNT) ? role_names[r] : "?"; }

void ctx_init_tool(Ctx *ctx) {
    memset(ctx, 0, sizeof *ctx);
    ctx->rank = 0;
    ctx->size = 1;
    ctx->role = ROLE_TOOL;
    ctx->count = 1;
    ctx->t0 = now_seconds();
    ctx->abort_job = NULL;
}

void log_info(const Ctx *ctx, const char *fmt, ...) {
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    double t = ctx ? now_seconds() - ctx->t0 : 0.0;
    if (ctx && ctx->role != ROLE_TOOL && ctx->role != ROLE_LOCAL)
        fprintf(stderr, "[%7.1fs rank %d %s %d/%d] %s\n", t, ctx->rank, role_name(ctx->role), ctx->index,
                ctx->count, msg);
    else
        fprintf(stderr, "[%7.1fs] %s\n", t, msg);
}
