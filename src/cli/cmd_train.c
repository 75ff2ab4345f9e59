/* SPDX-License-Identifier: MIT */
/* cmd_train.c: `gorila train CONFIG [--set key=value]... [--local]` and
 * `gorila train --resume RUN_DIR [--set ...]`.
 *
 * Run directly (not under mpirun) a local config trains in this process
 * without initialising MPI at all. Under mpirun every rank loads the config;
 * the ranks agree (one collective) on whether it loaded and whether the job
 * size matches the config before any role starts, so that a bad config or
 * a wrong -np ends every rank with one message and exit status 2 instead of
 * a hang or an abort banner.
 */
#include "cliload.h"
#include "cmd.h"
#include "config.h"
#include "job.h"
#include "layout.h"
#include "memplan.h"
#include "platform.h"
#include "tbevents.h"
#include "trainer.h"
#include "util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

static const char train_usage[] =
    "usage: gorila train CONFIG [--set key.path=value]... [--local]\n"
    "       gorila train --resume RUN_DIR [--set key.path=value]...\n";

typedef struct {
    const char *config, *resume;
    const char *sets[CFG_MAX_SETS];
    int n_sets;
    bool local;
    PyEnvHost *py;            /* a Python environment's bridge (cliload_env) */
} TrainArgs;

static int parse(int argc, char **argv, TrainArgs *a) {
    memset(a, 0, sizeof *a);
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        if (!strcmp(s, "--set") || !strncmp(s, "--set=", 6)) {
            const char *v = s[5] == '=' ? s + 6 : (i + 1 < argc ? argv[++i] : NULL);
            if (!v || !*v) return usage_error("train: --set needs key.path=value");
            if (a->n_sets == CFG_MAX_SETS) return usage_error("train: more than %d --set options", CFG_MAX_SETS);
            a->sets[a->n_sets++] = v;
        } else if (!strcmp(s, "--resume")) {
            if (i + 1 >= argc) return usage_error("train: --resume needs a run directory");
            a->resume = argv[++i];
        } else if (!strcmp(s, "--local")) {
            a->local = true;
        } else if (!strcmp(s, "-h") || !strcmp(s, "--help")) {
            fputs(train_usage, stdout);
            return -1;
        } else if (s[0] == '-') {
            fputs(train_usage, stderr);
            return usage_error("train: unknown option %s", s);
        } else if (!a->config) {
            a->config = s;
        } else {
            return usage_error("train: more than one config given (%s, %s)", a->config, s);
        }
    }
    if (a->resume && a->config)
        return usage_error("train: give either CONFIG or --resume RUN_DIR (the run's config.yaml is used)");
    if (!a->resume && !a->config) {
        fputs(train_usage, stderr);
        return usage_error("train: missing CONFIG");
    }
    return 0;
}

/* Load the config (the run's own for --resume) with overrides. */
static int load(const TrainArgs *a, Config *cfg, char *err) {
    char path[PATH_LEN + 16];
    const char *file = a->config;
    if (a->resume) {
        struct stat st;
        if (stat(a->resume, &st) != 0 || !S_ISDIR(st.st_mode))
            return errf(err, "--resume %s: not a run directory", a->resume);
        snprintf(path, sizeof path, "%s/config.yaml", a->resume);
        file = path;
    }
    if (config_load(cfg, file, a->sets, a->n_sets, err) != 0) return -1;
    if (cliload_env(cfg, a->py, err) != 0) return -1;
    if (a->local) {
        cfg->run.mode = RUN_LOCAL;
        if (cfg->learner.loss_outlier_sigma > 0)
            return errf(err, "--local: learner.loss_outlier_sigma (%g) guards the learners of a distributed job, but "
                             "run.mode is local (one process, no learner role); set learner.loss_outlier_sigma: 0",
                        cfg->learner.loss_outlier_sigma);
        if (cfg->learner.accumulate > 1)
            return errf(err, "--local: learner.accumulate (%d) sums the gradients of a distributed job's learners "
                             "between syncs, but run.mode is local (one process, no learner role); set "
                             "learner.accumulate: 1",
                        cfg->learner.accumulate);
    }
    /* A resume adds an events file to the run's tb/: refuse one that could
     * not be made now, before any rank starts its work (a fresh run makes
     * tb/ in the directory it creates). */
    if (a->resume && cfg->logging.tensorboard && tbevents_check(a->resume, err) != 0)
        return err_prefix(err, "logging.tensorboard");
    return 0;
}

static void describe_layout(const Layout *lay, char *buf, size_t cap) {
    snprintf(buf, cap, "1 coordinator, %d actor%s, %d replay shard%s, %d learner%s, %d parameter server%s",
             lay->count[ROLE_ACTOR], lay->count[ROLE_ACTOR] == 1 ? "" : "s", lay->count[ROLE_REPLAY],
             lay->count[ROLE_REPLAY] == 1 ? "" : "s", lay->count[ROLE_LEARNER],
             lay->count[ROLE_LEARNER] == 1 ? "" : "s", lay->count[ROLE_PS], lay->count[ROLE_PS] == 1 ? "" : "s");
}

static int size_error(const TrainArgs *a, const Layout *lay, int size, char *err) {
    const char *what = a->resume ? a->resume : a->config;
    if (lay->size == 1)
        return errf(err, "%s is a local (single-process) config, but this job has %d ranks: run it without mpirun, "
                    "or with -np 1", what, size);
    char roles[256];
    describe_layout(lay, roles, sizeof roles);
    return errf(err,
                "%s needs %d ranks (%s), but this job has %d: run `scripts/launch %s%s`, or `mpirun -np %d "
                "gorila train ...`%s",
                what, lay->size, roles, size, a->resume ? "--resume " : "", what, lay->size,
                size == 1 ? ", or train it in one process with --local" : "");
}

/* run.blas_kernel on a rank: OpenBLAS reads OPENBLAS_CORETYPE once, when
 * the library loads, so a rank can only check the kernel it got;
 * scripts/launch exports the config's kernel to every rank. */
static int rank_kernel_error(const Config *cfg, char *err) {
    const char *want = platform_kernel_find(cfg->run.blas_kernel);
    if (!want) return 0;
    char host[256] = "?", missing[256];
    gethostname(host, sizeof host - 1);
    /* Before the kernel's name: OpenBLAS loads a forced kernel without
     * checking the CPU and dies of SIGILL at the first product, which the
     * launcher would take for a crash worth a restart. */
    if (platform_kernel_missing(want, missing, sizeof missing))
        return errf(err, "run.blas_kernel: the CPU of %s cannot run OpenBLAS's %s kernel (it lacks %s)", host, want,
                    missing);
    if (platform_kernel_is(want)) return 0;
    Platform p;
    platform_read(&p);
    return errf(err,
                "run.blas_kernel is %s, but OpenBLAS runs %s on %s: start the job with scripts/launch (it exports "
                "OPENBLAS_CORETYPE=%s to every rank), or pass mpirun -x OPENBLAS_CORETYPE=%s",
                want, p.blas_kernel, host, want, want);
}

/* job_main's loader: this rank's config, and whether it fits a job of
 * `size` ranks. */
static int job_load(void *arg, int size, Config *cfg, Layout *lay, char *err) {
    const TrainArgs *a = arg;
    if (load(a, cfg, err) != 0) return -1;
    if (rank_kernel_error(cfg, err) != 0) return -1;
    layout_init(lay, cfg);
    return lay->size == size ? 0 : size_error(a, lay, size, err);
}

/* run.blas_kernel in one process: start this command again with
 * OPENBLAS_CORETYPE set (cmd_train's argv is main's argv + 1, so argv - 1
 * is the whole command line). Returns 0 when the kernel is already the one
 * asked for (or "auto"), else a usage status with the reason printed. */
static int pin_local_kernel(const Config *cfg, char **argv) {
    const char *want = platform_kernel_find(cfg->run.blas_kernel);
    if (!want || platform_kernel_is(want)) return 0;
    char missing[256];
    if (platform_kernel_missing(want, missing, sizeof missing))
        return usage_error("run.blas_kernel: this CPU cannot run OpenBLAS's %s kernel (it lacks %s)", want, missing);
    const char *env = getenv("OPENBLAS_CORETYPE");
    if (env && !strcasecmp(env, want)) {
        Platform p;
        platform_read(&p);
        return usage_error("run.blas_kernel: OPENBLAS_CORETYPE=%s is set, but OpenBLAS runs %s: this OpenBLAS "
                           "build (%s) has no %s kernel", env, p.blas_kernel, p.blas_config, want);
    }
    if (env) fprintf(stderr, "gorila: run.blas_kernel %s overrides OPENBLAS_CORETYPE=%s\n", want, env);
    setenv("OPENBLAS_CORETYPE", want, 1);
    execv("/proc/self/exe", argv - 1);
    return usage_error("run.blas_kernel: could not start gorila again with OPENBLAS_CORETYPE=%s: %s", want,
                       strerror(errno));
}

static void unload(void *arg) { pyenv_close(((TrainArgs *)arg)->py); }

static int train(TrainArgs *a_, int argc, char **argv);

int cmd_train(int argc, char **argv) {
    TrainArgs a;
    int prc = parse(argc, argv, &a);
    if (prc != 0) return prc < 0 ? 0 : prc;
    PyEnvHost py;
    memset(&py, 0, sizeof py);
    a.py = &py;
    int rc = train(&a, argc, argv);
    pyenv_close(&py);
    return rc;
}

/* cmd_train with its arguments parsed; a->py closed by the caller. */
static int train(TrainArgs *a_, int argc, char **argv) {
    TrainArgs a = *a_;
    Config *cfg = xmalloc(sizeof *cfg);
    char err[ERR_LEN];
    Layout lay;
    bool under_mpirun = getenv("OMPI_COMM_WORLD_SIZE") != NULL || getenv("PMIX_RANK") != NULL;
    if (!under_mpirun) {
        /* One process: no MPI unless the config is distributed (then it is
         * an error with the command to use). */
        if (load(&a, cfg, err) != 0) {
            free(cfg);
            return usage_error("%s", err);
        }
        layout_init(&lay, cfg);
        if (lay.size != 1) {
            size_error(&a, &lay, 1, err);
            free(cfg);
            return usage_error("%s", err);
        }
        /* The memory plan before anything is allocated (a job: job.c). */
        if (memplan_fits(cfg, &lay, NULL, 0, err) != 0) {
            free(cfg);
            return usage_error("%s", err);
        }
        int krc = pin_local_kernel(cfg, argv);
        if (krc != 0) {
            free(cfg);
            return krc;
        }
        int rc = trainer_run(cfg, a.resume);
        free(cfg);
        return rc;
    }

    JobLoad jl = {.load = job_load, .arg = &a, .resume_dir = a.resume, .unload = unload};
    int rc = job_main(&argc, &argv, &jl, cfg);
    free(cfg);
    return rc;
}
