/* SPDX-License-Identifier: MIT */
/* cmd_eval.c: `gorila eval RUN|CHECKPOINT [--checkpoint latest|final|best|PATH]
 * [--episodes N] [--seed S] [--json] [--export FILE] [--actions OBSFILE]`,
 * and the loading of a checkpoint's network it shares with `gorila export`
 * (clickpt_load, cmd.h).
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
 * --export FILE writes the network as `gorila export` does (cli_export in
 * cmd_export.c: an .npz, or raw float32 for FILE.bin, through a temporary
 * renamed onto FILE) and says so on stderr, stdout being the evaluation's.
 * With --export, eval evaluates only when asked: when --episodes, --seed or
 * --json is given (an option that only an evaluation uses); otherwise it
 * exports and stops, like `gorila export`. A failed export stops before
 * any evaluation. --actions prints the greedy action for each observation
 * in OBSFILE instead of evaluating (the check of an export), reading at
 * most NPZ_ACTIONS_MAX_LINE bytes a line and NPZ_ACTIONS_MAX_BYTES in all. */
#include "cmd.h"
#include "config.h"
#include "evaluator.h"
#include "exitcode.h"
#include "agentcfg.h"
#include "npz.h"
#include "runckpt.h"
#include "util.h"

#include <inttypes.h>
#include <cblas.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static bool is_file(const char *dir, const char *name) {
    char p[PATH_LEN + 64];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* Whether dir/name exists at all (whatever it is: a MANIFEST that is not a
 * regular file marks a damaged checkpoint, which the reader refuses). */
static bool exists_in(const char *dir, const char *name) {
    char p[PATH_LEN + 64];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    struct stat st;
    return lstat(p, &st) == 0;
}

/* A checkpoint directory's run directory: <run>/checkpoints/<name>. */
static void run_of(const char *ckpt_dir, char *run_dir) {
    snprintf(run_dir, PATH_LEN, "%s/../..", ckpt_dir);
}

/* Find the checkpoint to load: target a checkpoint directory (which must be
 * NULL or a path), or a run directory and which (NULL = latest). Fills man
 * and run_dir, and chosen: RUNCKPT_LATEST or RUNCKPT_BEST when the run's
 * own choice was taken (the run's id must then be the checkpoint's, and a
 * job still writing the run may prune it before it is read:
 * runckpt_read_chosen), -1 for a checkpoint named by its path (evaluated
 * whatever run it came from). 0, or an exit status with err. */
static int resolve(const char *target, const char *which, RunCkptManifest *man, char *run_dir, int *chosen,
                   char *err) {
    struct stat st;
    *chosen = -1;
    if (stat(target, &st) != 0 || !S_ISDIR(st.st_mode))
        return errf(err, "%s is not a directory (give a run directory or a checkpoint directory)", target),
               GORILA_EXIT_USAGE;
    if (exists_in(target, "MANIFEST")) {
        if (which) return errf(err, "--checkpoint applies to a run directory; %s is a checkpoint", target), GORILA_EXIT_USAGE;
        if (runckpt_read_manifest(target, man, err)) return GORILA_EXIT_CKPT_READ;
        run_of(target, run_dir);
        return 0;
    }
    if (!is_file(target, "config.yaml"))
        return errf(err, "%s is neither a run directory (no config.yaml) nor a checkpoint (no MANIFEST)", target),
               GORILA_EXIT_USAGE;
    snprintf(run_dir, PATH_LEN, "%s", target);
    if (!which || !strcmp(which, "latest") || !strcmp(which, "final")) {
        *chosen = RUNCKPT_LATEST;
        if (runckpt_latest(target, man, err)) return GORILA_EXIT_CKPT_READ;
        if (which && !strcmp(which, "final") && strcmp(man->kind, "final") != 0)
            return errf(err, "%s has no final checkpoint (the run did not finish; its newest is %s, kind %s): "
                        "use --checkpoint latest", target, man->dir, man->kind[0] ? man->kind : "periodic"),
                   GORILA_EXIT_CKPT_READ;
        return 0;
    }
    if (!strcmp(which, "best")) {
        *chosen = RUNCKPT_BEST;
        if (runckpt_best(target, man, err)) return GORILA_EXIT_CKPT_READ;
        return 0;
    }
    if (stat(which, &st) != 0 || !S_ISDIR(st.st_mode) || !exists_in(which, "MANIFEST"))
        return errf(err, "--checkpoint %s: not latest, final, best, or a checkpoint directory", which), GORILA_EXIT_USAGE;
    if (runckpt_read_manifest(which, man, err)) return GORILA_EXIT_CKPT_READ;
    return 0;
}

void clickpt_describe(const RunCkptManifest *m, char *out, size_t size) {
    int n = snprintf(out, size, "%s checkpoint, parameters after %" PRIu64 " updates, %" PRIu64 " env steps",
                     m->kind[0] ? m->kind : "periodic", m->params_version,
                     m->env_steps);
    /* The decentralized modes: whose parameters the shard files hold. */
    const char *whose = !strcmp(m->mode, "easgd")                                    ? "the EASGD center"
                        : !strcmp(m->mode, "gossip") || !strcmp(m->mode, "local_sgd") ? "learner 0's copy"
                                                                                      : NULL;
    if (n > 0 && (size_t)n < size && whose) n += snprintf(out + n, size - (size_t)n, "; %s (%s)", whose, m->mode);
    if (n > 0 && (size_t)n < size && m->eval_episodes > 0)
        snprintf(out + n, size - (size_t)n, "; logged eval %.2f over %d episodes, seed %" PRIu64, m->eval_mean,
                 m->eval_episodes, m->eval_seed);
}

int clickpt_load(CliCkpt *c, const char *cmd, const char *target, const char *which) {
    char err[ERR_LEN];
    int chosen;
    memset(c, 0, sizeof *c);
    int rc = resolve(target, which, &c->man, c->run_dir, &chosen, err);
    if (rc) {
        fprintf(stderr, "gorila: error: %s: %s\n", cmd, err);
        return rc;
    }
    char cfg_path[PATH_LEN + 16];
    snprintf(cfg_path, sizeof cfg_path, "%s/config.yaml", c->run_dir);
    struct stat st;
    if (strcmp(c->run_dir, target) != 0 && stat(cfg_path, &st) != 0 && errno == ENOENT) {
        clickpt_free(c);
        return usage_error("%s: %s is a checkpoint without its run: its network is described by the run's "
                           "config.yaml, two levels up (%s), which does not exist (copy the whole run directory)",
                           cmd, target, cfg_path);
    }
    c->cfg = xmalloc(sizeof *c->cfg);
    if (config_load(c->cfg, cfg_path, NULL, 0, err) || agentcfg_qnet(c->cfg, &c->net, err)) {
        clickpt_free(c);
        return usage_error("%s: %s", cmd, err);
    }
    c->params = xmalloc_aligned(c->net.n_params * sizeof(float));
    c->target = xmalloc_aligned(c->net.n_params * sizeof(float));
    RunCkptShard sh = {.off = 0, .len = c->net.n_params, .params = c->params, .target = c->target};
    if (chosen < 0 ? runckpt_read_slice(c->cfg, &c->net, c->man.dir, &sh, err)
                   : runckpt_read_chosen(c->cfg, &c->net, c->run_dir, (RunCkptWhich)chosen, &c->man, &sh, NULL, err)) {
        fprintf(stderr, "gorila: error: %s: %s\n", cmd, err);
        clickpt_free(c);
        return GORILA_EXIT_CKPT_READ;
    }
    return 0;
}

void clickpt_free(CliCkpt *c) {
    free(c->params);
    free(c->target);
    free(c->cfg);
    memset(c, 0, sizeof *c);
}

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
    CliCkpt c;
    int rc = clickpt_load(&c, "eval", target, which);
    if (rc) return rc;
    Config *cfg = c.cfg;
    if (have_seed) cfg->eval.seed = seed;
    openblas_set_num_threads(1);
    Evaluator ev;
    memset(&ev, 0, sizeof ev);
    if (export_path && cli_export(&c, export_path, stderr, false, err) != 0) {
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
        const RunCkptManifest *man = &c.man;
        EvalResult r;
        evaluator_run(&ev, c.params, &r);
        double thr = env_find(cfg->env.name)->reward_threshold;
        char what[256];
        clickpt_describe(man, what, sizeof what);
        if (json) {
            printf("{\"checkpoint\": \"%s\", \"kind\": \"%s\", \"env\": \"%s\", \"episodes\": %d, \"seed\": %" PRIu64 ", "
                   "\"mean\": %.17g, \"std\": %.17g, \"min\": %.10g, \"max\": %.10g, \"updates\": %" PRIu64 ", "
                   "\"params_version\": %" PRIu64 ", \"env_steps\": %" PRIu64 ", \"solved\": %s",
                   man->dir, man->kind[0] ? man->kind : "periodic", cfg->env.name, r.episodes,
                   cfg->eval.seed, r.mean, r.std, r.min, r.max, man->updates,
                   man->params_version, man->env_steps,
                   r.mean >= thr ? "true" : "false");
            if (man->eval_episodes > 0)
                printf(", \"logged_eval_mean\": %.10g, \"logged_eval_episodes\": %d, \"logged_eval_seed\": %" PRIu64,
                       man->eval_mean, man->eval_episodes, man->eval_seed);
            printf("}\n");
        } else {
            printf("loaded %s (%s)\n", man->dir, what);
            printf("%s: %s, %d greedy episodes (eval seed %" PRIu64 "): mean %.2f, std %.2f, min %.1f, max %.1f "
                   "(threshold %.0f: %s)\n",
                   man->dir, cfg->env.name, r.episodes, cfg->eval.seed, r.mean, r.std, r.min, r.max,
                   thr, r.mean >= thr ? "solved" : "not solved");
        }
    }
    evaluator_free(&ev);
    clickpt_free(&c);
    return rc;
}
