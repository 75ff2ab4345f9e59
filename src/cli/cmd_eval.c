/* cmd_eval.c: `gorila eval CHECKPOINT [--episodes N] [--seed S] [--json]
 * [--export FILE] [--actions OBSFILE]`.
 *
 * CHECKPOINT is a run directory (its newest checkpoint is used) or one
 * checkpoint directory (runs/x/checkpoints/ckpt-000003). The network and
 * environment come from the run's config.yaml and are checked against the
 * checkpoint files; the parameters are assembled from every shard file.
 * Prints the mean and standard deviation of the greedy return. --export
 * also writes the network to FILE as a NumPy .npz (src/cli/npz.h), or, when
 * FILE ends in .bin, the assembled flat parameters (n_params float32 in
 * this machine's byte order, agents/qnet.h layout) for bit-for-bit
 * comparisons of checkpoints. --actions prints the greedy action for each
 * observation in OBSFILE instead of evaluating (the check of an export). */
#include "cmd.h"
#include "config.h"
#include "evaluator.h"
#include "agentcfg.h"
#include "npz.h"
#include "runckpt.h"
#include "util.h"

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

static bool write_params(const char *path, const float *p, size_t n, char *err) {
    FILE *f = fopen(path, "wb");
    if (!f) return errf(err, "cannot write %s: %s", path, strerror(errno)), false;
    bool ok = fwrite(p, sizeof(float), n, f) == n;
    ok &= fclose(f) == 0;
    if (!ok) errf(err, "cannot write %s: %s", path, strerror(errno));
    return ok;
}

static const char eval_usage[] =
    "usage: gorila eval CHECKPOINT [--episodes N] [--seed S] [--json] [--export FILE]\n"
    "                   [--actions OBSFILE]\n"
    "  CHECKPOINT  a run directory (its latest checkpoint) or a checkpoint directory\n"
    "  --episodes  greedy episodes (default: the run's eval.episodes)\n"
    "  --seed      evaluation seed (default: the run's eval.seed)\n"
    "  --json      one JSON object instead of the text line\n"
    "  --export    write the network to FILE as a NumPy .npz (PyTorch (out, in) weights,\n"
    "              env and sizes; docs/CHECKPOINT.md), or its raw float32 parameters\n"
    "              when FILE ends in .bin\n"
    "  --actions   print the greedy action for each observation in OBSFILE (one per\n"
    "              line, numbers separated by blanks or commas; - for stdin) instead\n"
    "              of evaluating\n";

int cmd_eval(int argc, char **argv) {
    const char *target = NULL;
    long episodes = 0;
    uint64_t seed = 0;
    bool have_seed = false, json = false;
    const char *export_path = NULL, *actions_path = NULL;
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
    if (!target) return usage_error("eval: missing CHECKPOINT (a run directory or a checkpoint directory)");
    struct stat st;
    if (stat(target, &st) != 0 || !S_ISDIR(st.st_mode))
        return usage_error("eval: %s is not a directory (give a run directory or a checkpoint directory)", target);
    RunCkptManifest man;
    char run_dir[PATH_LEN];
    if (is_file(target, "MANIFEST")) {
        if (runckpt_read_manifest(target, &man, err)) return usage_error("eval: %s", err);
        char tmp[PATH_LEN];
        snprintf(tmp, sizeof tmp, "%s/../..", target);
        snprintf(run_dir, sizeof run_dir, "%s", tmp);
    } else {
        if (runckpt_latest(target, &man, err)) return usage_error("eval: %s", err);
        snprintf(run_dir, sizeof run_dir, "%s", target);
    }
    char cfg_path[PATH_LEN + 16];
    snprintf(cfg_path, sizeof cfg_path, "%s/config.yaml", run_dir);
    Config *cfg = xmalloc(sizeof *cfg);
    if (config_load(cfg, cfg_path, NULL, 0, err)) {
        free(cfg);
        return usage_error("eval: %s", err);
    }
    if (have_seed) cfg->eval.seed = seed;
    openblas_set_num_threads(1);
    QNet net;
    if (agentcfg_qnet(cfg, &net, err)) {
        free(cfg);
        return usage_error("eval: %s", err);
    }
    float *params = xmalloc_aligned(net.n_params * sizeof(float));
    float *target_p = xmalloc_aligned(net.n_params * sizeof(float));
    RunCkptShard sh = {.off = 0, .len = net.n_params, .params = params, .target = target_p};
    int rc = 0;
    Evaluator ev;
    memset(&ev, 0, sizeof ev);
    if (runckpt_read_slice(cfg, &net, man.dir, &sh, err) || evaluator_init(&ev, cfg, &net, (int)episodes, err)) {
        rc = usage_error("eval: %s", err);
    } else if (export_path &&
               (npz_wants_raw(export_path) ? !write_params(export_path, params, net.n_params, err)
                                           : npz_export_qnet(export_path, cfg, &net, params, err) != 0)) {
        rc = usage_error("eval: %s", err);
    } else if (actions_path) {
        FILE *in = strcmp(actions_path, "-") ? fopen(actions_path, "r") : stdin;
        if (!in)
            rc = usage_error("eval: --actions: cannot read %s: %s", actions_path, strerror(errno));
        else if (npz_print_actions(&net, params, in, stdout, err))
            rc = usage_error("eval: --actions %s: %s", actions_path, err);
        if (in && in != stdin) fclose(in);
    } else {
        EvalResult r;
        evaluator_run(&ev, params, &r);
        double thr = env_find(cfg->env.name)->reward_threshold;
        if (json)
            printf("{\"checkpoint\": \"%s\", \"env\": \"%s\", \"episodes\": %d, \"mean\": %.10g, \"std\": %.10g, "
                   "\"min\": %.10g, \"max\": %.10g, \"updates\": %llu, \"env_steps\": %llu, \"solved\": %s}\n",
                   man.dir, cfg->env.name, r.episodes, r.mean, r.std, r.min, r.max, (unsigned long long)man.updates,
                   (unsigned long long)man.env_steps, r.mean >= thr ? "true" : "false");
        else
            printf("%s: %s, %d greedy episodes (eval seed %llu): mean %.2f, std %.2f, min %.1f, max %.1f "
                   "(threshold %.0f: %s)\n",
                   man.dir, cfg->env.name, r.episodes, (unsigned long long)cfg->eval.seed, r.mean, r.std, r.min, r.max,
                   thr, r.mean >= thr ? "solved" : "not solved");
    }
    evaluator_free(&ev);
    free(params);
    free(target_p);
    free(cfg);
    return rc;
}
