/* SPDX-License-Identifier: MIT */
/* heldout.c: see heldout.h. */
#include "heldout.h"

#include "agentcfg.h"
#include "clock.h"
#include "env.h"
#include "runckpt.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Score the checkpoint in dir with ev; 0, 1 when abandoned, or -1 with err. */
static int score(const Config *cfg, const QNet *net, Evaluator *ev, const char *dir, float *params, float *target,
                 EvalResult *res, char *err) {
    RunCkptShard sh = {.off = 0, .len = net->n_params, .params = params, .target = target};
    if (runckpt_read_slice(cfg, net, dir, &sh, err) != 0) return -1;
    return evaluator_run(ev, params, res) ? 0 : 1;
}

int heldout_run(const Config *cfg, const char *run_dir, bool best_saved, const char *final_dir,
                EvalAbandonFn abandon, void *arg, HeldOut *t, char *err) {
    memset(t, 0, sizeof *t);
    t->seed = cfg->eval.test_seed;
    t->episodes = cfg->eval.test_episodes;
    err[0] = '\0';
    if (t->episodes <= 0 || (!best_saved && !final_dir)) return 0;
    double t0 = now_seconds();
    /* The evaluator seeds its episodes from eval.seed: a copy with the test
     * seed in its place. */
    Config *tc = xmalloc(sizeof *tc);
    *tc = *cfg;
    tc->eval.seed = cfg->eval.test_seed;
    QNet net;
    Evaluator ev;
    int rc = -1;
    if (agentcfg_qnet(tc, &net, err) != 0) goto out;
    if (evaluator_init(&ev, tc, &net, t->episodes, err) != 0) goto out;
    evaluator_set_abandon(&ev, abandon, arg);
    float *params = xmalloc_aligned(net.n_params * sizeof(float));
    float *target = xmalloc_aligned(net.n_params * sizeof(float));
    rc = 0;
    char why[ERR_LEN];
    int got = 0;
    if (best_saved) {
        char dir[PATH_LEN + 32];
        snprintf(dir, sizeof dir, "%s/checkpoints/best", run_dir);
        got = score(tc, &net, &ev, dir, params, target, &t->best, why);
        if (got == 0) t->has_best = true;
        else if (got < 0) rc = -1, snprintf(err, ERR_LEN, "best checkpoint not scored: %.440s", why);
    }
    if (final_dir && got <= 0) {
        got = score(tc, &net, &ev, final_dir, params, target, &t->final, why);
        if (got == 0) t->has_final = true;
        else if (got < 0 && rc == 0) rc = -1, snprintf(err, ERR_LEN, "final checkpoint not scored: %.440s", why);
    }
    if (got > 0) { /* abandoned: a half-done test reports nothing */
        t->interrupted = true;
        t->has_best = t->has_final = false;
        rc = 0;
        err[0] = '\0';
    }
    free(params);
    free(target);
    evaluator_free(&ev);
    t->ran = t->has_best || t->has_final;
    const EvalResult *judged = t->has_best ? &t->best : t->has_final ? &t->final : NULL;
    t->solved = judged && judged->mean >= config_reward_threshold(cfg); /* false for none (NaN) */
out:
    free(tc);
    t->seconds = now_seconds() - t0;
    return rc;
}
