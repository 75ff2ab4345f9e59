/* SPDX-License-Identifier: MIT */
/* cliload.c: see cliload.h. The target is a run directory or one
 * checkpoint directory (runs/x/checkpoints/ckpt-000003,
 * runs/x/checkpoints/best). In a run directory --checkpoint picks which:
 * latest (default: the newest complete one, which is the final one of a
 * finished run), final (the same, but refused when the run did not
 * finish), best (checkpoints/best, the best evaluation's parameters), or a
 * path. The network and environment come from the run's config.yaml and
 * are checked against the checkpoint files; the parameters are assembled
 * from every shard file. */
#include "cliload.h"
#include "agentcfg.h"
#include "exitcode.h"
#include "usage.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
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

void cliload_describe(const RunCkptManifest *m, char *out, size_t size) {
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

int cliload_env(Config *cfg, PyEnvHost *h, char *err) {
    memset(h, 0, sizeof *h);
    cfg->env_spec = NULL;
    if (!env_extern_kind(cfg->env.name)) return 0;
    if (pyenv_open(h, cfg->env.name, cfg->env.kwargs, err) != 0) return -1;
    cfg->env_spec = &h->spec;
    return 0;
}

int cliload_open(CliLoad *c, const char *cmd, const char *target, const char *which) {
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
        cliload_free(c);
        return usage_error("%s: %s is a checkpoint without its run: its network is described by the run's "
                           "config.yaml, two levels up (%s), which does not exist (copy the whole run directory)",
                           cmd, target, cfg_path);
    }
    c->cfg = xmalloc(sizeof *c->cfg);
    if (config_load(c->cfg, cfg_path, NULL, 0, err) || cliload_env(c->cfg, &c->py, err) ||
        agentcfg_qnet(c->cfg, &c->net, err)) {
        cliload_free(c);
        return usage_error("%s: %s", cmd, err);
    }
    c->params = xmalloc_aligned(c->net.n_params * sizeof(float));
    c->target = xmalloc_aligned(c->net.n_params * sizeof(float));
    RunCkptShard sh = {.off = 0, .len = c->net.n_params, .params = c->params, .target = c->target};
    if (chosen < 0 ? runckpt_read_slice(c->cfg, &c->net, c->man.dir, &sh, err)
                   : runckpt_read_chosen(c->cfg, &c->net, c->run_dir, (RunCkptWhich)chosen, &c->man, &sh, NULL, err)) {
        fprintf(stderr, "gorila: error: %s: %s\n", cmd, err);
        cliload_free(c);
        return GORILA_EXIT_CKPT_READ;
    }
    return 0;
}

void cliload_free(CliLoad *c) {
    free(c->params);
    free(c->target);
    free(c->cfg);
    pyenv_close(&c->py);
    memset(c, 0, sizeof *c);
}
