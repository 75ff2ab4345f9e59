/* SPDX-License-Identifier: MIT */
/* cmd_eval.c: `gorila eval RUN|CHECKPOINT [--checkpoint latest|final|best|PATH]
 * [--episodes N] [--seed S] [--json] [--export FILE] [--actions OBSFILE]`.
 * The checkpoint's network is loaded as `gorila export` loads it
 * (cliload_open, cliload.h).
 *
 * The target is a run directory or one checkpoint directory
 * (runs/x/checkpoints/ckpt-000003, runs/x/checkpoints/best). In a run
 * directory --checkpoint picks which: latest (default: the newest complete
 * one, which is the final one of a finished run), final (the same, but
 * refused when the run did not finish), best (checkpoints/best, the best
 * evaluation's parameters), or a path. The line printed first says which
 * checkpoint was loaded and what its manifest records. The network and
 * environment come from the run's config.yaml and are checked against the
 * checkpoint files; the parameters are assembled from every shard file.
 * Prints the mean and standard deviation of the greedy return.
 *
 * --export FILE writes the network as `gorila export` does (cliexport_write,
 * cliexport.h: an .npz, or raw float32 for FILE.bin, through a temporary
 * renamed onto FILE) and says so on stderr, stdout being the evaluation's.
 * With --export, eval evaluates only when asked: when --episodes, --seed or
 * --json is given (an option that only an evaluation uses); otherwise it
 * exports and stops, like `gorila export`. A failed export stops before
 * any evaluation. --actions prints the greedy action for each observation
 * in OBSFILE instead of evaluating (the check of an export), reading at
 * most NPZ_ACTIONS_MAX_LINE bytes a line and NPZ_ACTIONS_MAX_BYTES in all. */
#include "cmd.h"
#include "cliexport.h"
#include "cliload.h"
#include "config.h"
#include "env.h"
#include "evaluator.h"
#include "npz.h"
#include "runckpt.h"
#include "util.h"

#include <inttypes.h>
#include <cblas.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

static const char eval_usage[] =
    "usage: gorila eval RUN|CHECKPOINT [--checkpoint WHICH] [--episodes N] [--seed S] [--json] [--export FILE]\n"
    "                   [--actions OBSFILE]\n"
    "  RUN|CHECKPOINT  a run directory or a checkpoint directory\n"
    "  --checkpoint    in a run directory: latest (default), final, best, or a checkpoint path\n"
    "  --episodes  greedy episodes (default: the run's eval.episodes)\n"
    "  --seed      evaluation seed (default: the run's eval.seed)\n"
    "  --json      one JSON object instead of the text line\n"
    "  --export    write the network to FILE first, as `gorila export` does: a\n"
    "              NumPy .npz, or raw float32 parameters when FILE ends in .bin;\n"
    "              says what it wrote on stderr. With --export, eval evaluates\n"
    "              only when --episodes, --seed or --json is given\n"
    "  --actions   print the greedy action for each observation in OBSFILE (one per\n"
    "              line, numbers separated by blanks or commas; - for stdin) instead\n"
    "              of evaluating; lines up to 64 KiB, input up to 64 MiB\n";

/* The evaluation's result: one JSON object (--json) or two lines. */
static void print_result(const CliLoad *c, const EvalResult *r, bool json) {
    const RunCkptManifest *man = &c->man;
    const Config *cfg = c->cfg;
    double thr = config_reward_threshold(cfg); /* NaN: none, never solved */
    char thr_text[48] = "no reward threshold";
    if (env_has_threshold(thr))
        snprintf(thr_text, sizeof thr_text, "threshold %.0f: %s", thr, r->mean >= thr ? "solved" : "not solved");
    char what[256];
    cliload_describe(man, what, sizeof what);
    if (!json) {
        printf("loaded %s (%s)\n", man->dir, what);
        printf("%s: %s, %d greedy episodes (eval seed %" PRIu64 "): mean %.2f, std %.2f, min %.1f, max %.1f "
               "(%s)\n",
               man->dir, cfg->env.name, r->episodes, cfg->eval.seed, r->mean, r->std, r->min, r->max, thr_text);
        return;
    }
    printf("{\"checkpoint\": \"%s\", \"kind\": \"%s\", \"env\": \"%s\", \"episodes\": %d, \"seed\": %" PRIu64 ", "
           "\"mean\": %.17g, \"std\": %.17g, \"min\": %.10g, \"max\": %.10g, \"updates\": %" PRIu64 ", "
           "\"params_version\": %" PRIu64 ", \"env_steps\": %" PRIu64 ", \"solved\": %s",
           man->dir, man->kind[0] ? man->kind : "periodic", cfg->env.name, r->episodes, cfg->eval.seed, r->mean,
           r->std, r->min, r->max, man->updates, man->params_version, man->env_steps,
           r->mean >= thr ? "true" : "false"); /* false without a threshold (NaN) */
    if (env_has_threshold(thr)) printf(", \"reward_threshold\": %.17g", thr);
    else printf(", \"reward_threshold\": null");
    if (man->eval_episodes > 0)
        printf(", \"logged_eval_mean\": %.10g, \"logged_eval_episodes\": %d, \"logged_eval_seed\": %" PRIu64,
               man->eval_mean, man->eval_episodes, man->eval_seed);
    printf("}\n");
}

int cmd_eval(int argc, char **argv) {
    const char *target = NULL;
    long episodes = 0;
    uint64_t seed = 0;
    bool have_seed = false, json = false;
    const char *export_path = NULL, *which = NULL, *actions_path = NULL;
    char err[ERR_LEN];
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        if (!strcmp(s, "--episodes") || !strcmp(s, "--seed")) {
            if (i + 1 >= argc) return usage_error("eval: %s needs a value", s);
            const char *v = argv[++i];
            if (!strcmp(s, "--episodes")) {
                if (parse_int_range(v, 1, 100000, &episodes, err)) return usage_error("eval: --episodes: %s", err);
            } else {
                if (parse_u64(v, &seed, err)) return usage_error("eval: --seed: %s", err);
                have_seed = true;
            }
        } else if (!strcmp(s, "--checkpoint")) {
            if (i + 1 >= argc) return usage_error("eval: --checkpoint needs latest, final, best or a path");
            which = argv[++i];
        } else if (!strcmp(s, "--export")) {
            if (i + 1 >= argc) return usage_error("eval: --export needs a file name");
            export_path = argv[++i];
        } else if (!strcmp(s, "--actions")) {
            if (i + 1 >= argc) return usage_error("eval: --actions needs a file name");
            actions_path = argv[++i];
        } else if (!strcmp(s, "--json")) {
            json = true;
        } else if (!strcmp(s, "-h") || !strcmp(s, "--help")) {
            fputs(eval_usage, stdout);
            return 0;
        } else if (s[0] == '-') {
            fputs(eval_usage, stderr);
            return usage_error("eval: unknown option %s", s);
        } else if (!target) {
            target = s;
        } else {
            return usage_error("eval: more than one checkpoint given");
        }
    }
    if (!target) return usage_error("eval: missing RUN or CHECKPOINT (a run directory or a checkpoint directory)");
    /* Whether to evaluate: always without --export (that is what eval is
     * for); with it, only when an option only an evaluation uses asks. */
    bool evaluate = !actions_path && (!export_path || episodes > 0 || have_seed || json);
    CliLoad c;
    int rc = cliload_open(&c, "eval", target, which);
    if (rc) return rc;
    Config *cfg = c.cfg;
    if (have_seed) cfg->eval.seed = seed;
    openblas_set_num_threads(1);
    Evaluator ev;
    memset(&ev, 0, sizeof ev);
    if (export_path && cliexport_write(&c, export_path, stderr, false, err) != 0) {
        rc = usage_error("eval: --export: %s", err);
    } else if (actions_path) {
        FILE *in = strcmp(actions_path, "-") ? fopen(actions_path, "r") : stdin;
        if (!in)
            rc = usage_error("eval: --actions: cannot read %s: %s", actions_path, strerror(errno));
        else if (npz_print_actions(&c.net, c.params, in, stdout, err))
            rc = usage_error("eval: --actions %s: %s", actions_path, err);
        if (in && in != stdin) fclose(in);
    } else if (!evaluate) {
        /* exported, nothing asked of the evaluator */
    } else if (evaluator_init(&ev, cfg, &c.net, (int)episodes, err)) {
        rc = usage_error("eval: %s", err);
    } else {
        EvalResult r;
        evaluator_run(&ev, c.params, &r);
        print_result(&c, &r, json);
    }
    evaluator_free(&ev);
    cliload_free(&c);
    return rc;
}
