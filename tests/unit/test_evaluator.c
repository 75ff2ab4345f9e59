/* SPDX-License-Identifier: MIT */
/* test_evaluator.c: the greedy evaluator (evaluator.h). */
#include <criterion/criterion.h>

#include "agentcfg.h"
#include "config.h"
#include "evaluator.h"
#include "rng.h"
#include "util.h"

/* The evaluator against an independent run of the same episodes: a
 * network whose head bias prefers action 1 acts like "always push right";
 * the returns of that fixed policy from the evaluator's seeded starts,
 * computed here with the environment alone, must match. */
Test(evaluator, matches_a_hand_run_of_the_same_policy) {
    Config cfg;
    config_defaults(&cfg);
    cfg.network.n_hidden = 1;
    cfg.network.hidden[0] = 4;
    cfg.eval.seed = 99;
    char err[ERR_LEN];
    QNet net;
    cr_assert_eq(agentcfg_qnet(&cfg, &net, err), 0);
    float params[4 * 4 + 4 + 4 * 2 + 2] = {0};
    const QNetView *hb = qnet_view(&net, "head.bias");
    cr_assert_not_null(hb);
    params[hb->offset + 1] = 1.0f; /* Q(s, 1) = 1 > Q(s, 0) = 0 everywhere */
    Evaluator ev;
    cr_assert_eq(evaluator_init(&ev, &cfg, &net, 300, err), 0, "%s", err);
    EvalResult r1, r2;
    evaluator_run(&ev, params, &r1);
    evaluator_run(&ev, params, &r2);
    cr_assert_eq(r1.episodes, 300);
    double sum = 0;
    for (int k = 0; k < 300; k++) {
        Env e;
        EnvOptions opt = {0};
        cr_assert_eq(env_init(&e, env_find("CartPole-v1"), &opt, 99, RNG_STREAM_EVAL_ENV + (uint64_t)k, err), 0);
        float obs[4];
        env_reset(&e, obs);
        for (;;) {
            EnvStep st = env_step(&e, 1, obs);
            sum += st.reward;
            if (st.terminated || st.truncated) break;
        }
    }
    cr_assert_float_eq(r1.mean, sum / 300, 1e-9);
    cr_assert_eq(r1.mean, r2.mean, "evaluations are repeatable");
    cr_assert(r1.max < 100, "pushing right always falls fast (%g)", r1.max);
    evaluator_free(&ev);
}
