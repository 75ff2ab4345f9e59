/* SPDX-License-Identifier: MIT */
/* bench_nn.c: `gorila bench nn [--json] [--seconds S] [--threads N] [--no-double] [--minatar]`
 *             `gorila bench nn --config FILE [--set key=value]... [--json] [--seconds S] [--threads N]`
 *
 * Times one full DQN update as the learner does it: target forward on s',
 * online forward on s and s' (one pass over 2B rows; s only with
 * --no-double), Huber loss, backward, Adam step over all parameters, for
 * 4-64-64-2 and 4-256-256-2 at batch 32, 64 and 256; with --minatar
 * instead for MinAtar's DQN net (dqn.py: 10x10xC planes, conv 16 3x3
 * stride 1, 1024 -> 128 -> 6 actions) with C = 4 and 10, at batch 32;
 * with --config instead for one row: that config's update as its trainer
 * does it (agentcfg.h: network.conv, network.hidden, network.dueling and
 * the env's observation shape and action count; agent.double_dqn and
 * huber_delta; the optimizer of optimizer.*; replay.batch_size rows), its
 * network printed layer by layer as `gorila config check` prints it
 * (netprint.h), and ms/update beside updates/s. OpenBLAS threads: --threads,
 * or the config's run.blas_threads. A config that does not load: one line,
 * status 2.
 *
 * Each configuration runs for S seconds (default 1) split into 5 windows
 * after a warm-up; updates/s is the best window (the machines are shared;
 * the best window is the least disturbed one). GFLOP/s counts the matmul
 * FLOPs of an update, 2 * in * out per layer per row (qnet_forward_flops,
 * qnet_backward_flops):
 *   forward rows: B (target) + 2B (online; B with --no-double)
 *   backward:     weight gradients of every layer and input gradients of
 *                 all but the first, over B rows
 * so for 4-H-H-2 with double DQN: 2 * (4H + H^2 + 2H) * 3B
 *                                + 2 * (4H + 2 (H^2 + 2H)) * B.
 * Bias, ReLU, loss and Adam work is not counted (it is small and not
 * matmul). The sgemm peak is measured in the same run: single-precision
 * square products of size 128, 256, 512 and 1024 with the same thread
 * count, best of 3 windows each, best size wins, once before and once after
 * the rows, the higher reading kept (results print at the end).
 *
 * OpenBLAS runs single-threaded by default (one rank per core). Nothing
 * here passes or fails on time.
 */
#include "clock.h"
#include "cmd.h"
#include "platform.h"

#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agentcfg.h"
#include "batch.h"
#include "config.h"
#include "dqn.h"
#include "json.h"
#include "netprint.h"
#include "optim.h"
#include "qnet.h"
#include "rng.h"
#include "util.h"

#define WINDOWS 5

typedef struct {
    int hidden;          /* both hidden layers; MinAtar: the one hidden layer */
    int batch;
    double pytorch_ups;  /* a constant, not measured here: PyTorch 1.13 on one core
                          * of the project's development machines, as stated
                          * when the benchmark was set up (2026-11; its DQN
                          * variant is not recorded; docs/PERFORMANCE.md);
                          * 0: no reference */
    int planes;          /* 0: the 4-H-H-2 net; C: MinAtar's conv net on 10x10xC */
} NnCase;
#define PYTORCH_REFERENCE_SOURCE "constant, not measured: PyTorch 1.13, one core, the project's machines (2026-11, docs/PERFORMANCE.md)"

static const NnCase cases[] = {
    {64, 32, 0, 0},   {64, 64, 3400, 0},   {64, 256, 0, 0},
    {256, 32, 0, 0},  {256, 64, 0, 0},     {256, 256, 670, 0},
};
static const NnCase minatar_cases[] = {{128, 32, 0, 4}, {128, 32, 0, 10}};

static QNetSpec case_spec(const NnCase *c) {
    if (!c->planes) return (QNetSpec){.obs_dim = 4, .n_actions = 2, .n_hidden = 2, .hidden = {c->hidden, c->hidden}};
    return (QNetSpec){.obs_dim = 100 * c->planes, .n_actions = 6, .n_hidden = 1, .hidden = {c->hidden},
                      .in_h = 10, .in_w = 10, .in_c = c->planes, .n_conv = 1, .conv = {{16, 3, 1}}};
}

static double sgemm_gflops(int n, double seconds) {
    size_t nn = (size_t)n * (size_t)n;
    float *a = xmalloc_aligned(3 * nn * sizeof(float)), *b = a + nn, *c = b + nn;
    Rng r;
    rng_seed(&r, 1, RNG_STREAM_TOOL);
    for (size_t i = 0; i < 2 * nn; i++) a[i] = rng_uniform_f(&r) - 0.5f;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
    double best = 0;
    for (int w = 0; w < 3; w++) {
        long it = 0;
        double t0 = now_seconds(), t;
        do {
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
            it++;
            t = now_seconds() - t0;
        } while (t < seconds);
        double g = 2.0 * n * (double)nn * (double)it / t / 1e9;
        if (g > best) best = g;
    }
    free(a);
    return best;
}

/* Best sgemm GFLOP/s over the square sizes; *n_best gets the size. */
static double sgemm_peak(double seconds, int *n_best) {
    static const int sizes[] = {128, 256, 512, 1024};
    double best = 0;
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        double g = sgemm_gflops(sizes[k], seconds / 10 < 0.05 ? 0.05 : seconds / 10);
        if (g > best) best = g, *n_best = sizes[k];
    }
    return best;
}

typedef struct {
    double ups, flops;
} NnResult;

/* Time net's DQN update (dqn_loss_grad with dp, the gradient clipped to
 * clip by its global norm when clip > 0, optim_step with op) at batch B on
 * random data for `seconds`, after a warm-up of a tenth of it. */
static NnResult time_update(const QNet *net, int B, const DqnParams *dp, const OptimParams *op, double clip,
                            double seconds) {
    int O = net->spec.obs_dim;
    float *online = xmalloc_aligned(net->n_params * sizeof(float));
    float *target = xmalloc_aligned(net->n_params * sizeof(float));
    float *grad = xmalloc_aligned(net->n_params * sizeof(float));
    Rng r;
    rng_seed(&r, 1, RNG_STREAM_TOOL);
    qnet_init_params(net, online, &r);
    memcpy(target, online, net->n_params * sizeof(float));

    float *fb = xmalloc((size_t)B * (2 * (size_t)O + 4) * sizeof(float));
    Batch b = {.n = B, .obs_dim = O, .obs = fb, .next_obs = fb + (size_t)B * O,
               .reward = fb + 2 * (size_t)B * O, .discount = fb + 2 * (size_t)B * O + B,
               .weight = fb + 2 * (size_t)B * O + 2 * (size_t)B, .action = xmalloc((size_t)B * sizeof(int32_t))};
    float *td = fb + 2 * (size_t)B * O + 3 * (size_t)B;
    for (size_t i = 0; i < 2 * (size_t)B * O; i++) b.obs[i] = (float)rng_uniform_range(&r, -1, 1);
    for (int i = 0; i < B; i++) {
        b.action[i] = (int32_t)rng_below(&r, (uint64_t)net->spec.n_actions);
        b.reward[i] = 1.0f;
        b.discount[i] = rng_below(&r, 10) ? 0.99f : 0.0f;
        b.weight[i] = 1.0f;
    }
    Dqn d;
    dqn_init(&d, net, B);
    Optim opt;
    optim_init(&opt, op, net->n_params);

    double warm_until = now_seconds() + seconds / 10;
    while (now_seconds() < warm_until) {
        dqn_loss_grad(&d, net, dp, online, target, &b, grad, td);
        if (clip > 0) optim_clip_norm(grad, net->n_params, clip);
        optim_step(&opt, online, grad);
    }
    double best = 0;
    for (int w = 0; w < WINDOWS; w++) {
        long it = 0;
        double t0 = now_seconds(), t;
        do {
            dqn_loss_grad(&d, net, dp, online, target, &b, grad, td);
            if (clip > 0) optim_clip_norm(grad, net->n_params, clip);
            optim_step(&opt, online, grad);
            it++;
            t = now_seconds() - t0;
        } while (t < seconds / WINDOWS);
        if (it / t > best) best = it / t;
    }
    NnResult res = {best, qnet_forward_flops(net, B) + qnet_forward_flops(net, dp->double_dqn ? 2 * B : B) +
                              qnet_backward_flops(net, B)};
    optim_free(&opt);
    dqn_free(&d);
    free(b.action);
    free(fb);
    free(grad);
    free(target);
    free(online);
    return res;
}

/* One row of the fixed tables: Adam at lr 1e-4, Huber delta 1. */
static NnResult run_case(const NnCase *c, bool double_dqn, double seconds) {
    char err[ERR_LEN];
    QNetSpec spec = case_spec(c);
    QNet net;
    if (qnet_init(&net, &spec, err)) DIE(NULL, "%s", err);
    DqnParams dp = {.double_dqn = double_dqn, .huber_delta = 1.0f};
    OptimParams op = optim_defaults(OPTIM_ADAM);
    op.lr = 1e-4f;
    return time_update(&net, c->batch, &dp, &op, 0, seconds);
}

typedef struct {
    bool json, double_dqn, minatar, threads_given;
    double seconds;
    long threads;
    const char *config;              /* --config FILE, or NULL */
    const char *sets[CFG_MAX_SETS];  /* --set key=value, with --config */
    int n_sets;
} NnArgs;

static const char nn_usage[] =
    "usage: gorila bench nn [--json] [--seconds S] [--threads N] [--no-double] [--minatar]\n"
    "       gorila bench nn --config FILE [--set key.path=value]... [--json] [--seconds S] [--threads N]\n"
    "updates/s of the DQN update at two network sizes and three batch sizes (--minatar: MinAtar's\n"
    "conv net on 4 and 10 planes at batch 32), and the sgemm peak they are compared with; --config:\n"
    "the update of FILE's network at its replay.batch_size with its optimizer and agent.double_dqn,\n"
    "its layers as `gorila config check` prints them, updates/s and ms/update (OpenBLAS threads:\n"
    "--threads, else FILE's run.blas_threads). See docs/PERFORMANCE.md\n";

/* argv into a; -1 when done (help printed: status 0), 0 to go on, or a
 * usage error's status. */
static int parse_args(int argc, char **argv, NnArgs *a, int *status) {
    char err[ERR_LEN];
    *a = (NnArgs){.double_dqn = true, .seconds = 1.0, .threads = 1};
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            fputs(nn_usage, stdout);
            return *status = 0, -1;
        } else if (!strcmp(argv[i], "--json")) {
            a->json = true;
        } else if (!strcmp(argv[i], "--no-double")) {
            a->double_dqn = false;
        } else if (!strcmp(argv[i], "--minatar")) {
            a->minatar = true;
        } else if (!strcmp(argv[i], "--config") && i + 1 < argc) {
            a->config = argv[++i];
        } else if (!strcmp(argv[i], "--set") && i + 1 < argc) {
            if (a->n_sets == CFG_MAX_SETS)
                return *status = usage_error("bench nn: expected at most %d --set", CFG_MAX_SETS), -1;
            a->sets[a->n_sets++] = argv[++i];
        } else if (!strcmp(argv[i], "--seconds") && i + 1 < argc) {
            if (parse_double(argv[++i], &a->seconds, err) || a->seconds <= 0 || a->seconds > 3600)
                return *status = usage_error("bench nn: --seconds: expected a number in (0, 3600], got \"%s\"",
                                             argv[i]), -1;
        } else if (!strcmp(argv[i], "--threads") && i + 1 < argc) {
            if (parse_int_range(argv[++i], 1, 256, &a->threads, err))
                return *status = usage_error("bench nn: --threads: %s", err), -1;
            a->threads_given = true;
        } else {
            return *status = usage_error("bench nn: unknown argument \"%s\" (expected --json, --seconds S, "
                                         "--threads N, --no-double, --minatar, --config FILE, --set key=value)",
                                         argv[i]), -1;
        }
    }
    if (a->config && (a->minatar || !a->double_dqn))
        return *status = usage_error("bench nn: --config times FILE's own network and agent.double_dqn; it takes "
                                     "neither --minatar nor --no-double"), -1;
    if (!a->config && a->n_sets > 0) return *status = usage_error("bench nn: --set needs --config FILE"), -1;
    return 0;
}

/* The --config row as one JSON line: the config, its network (name,
 * parameter count, shape), the update's settings and the timing. */
static void json_row(const char *config, const QNet *net, int B, const DqnParams *dp, const char *opt, double lr,
                     NnResult r, double peak) {
    const QNetSpec *s = &net->spec;
    char name[256];
    netprint_name(s, name, sizeof name);
    double gflops = r.flops * r.ups / 1e9;
    JsonW j;
    json_init(&j, stdout, false);
    json_begin_object(&j, NULL);
    json_str(&j, "bench", "nn");
    json_str(&j, "config", config);
    json_str(&j, "network", name);
    json_u64(&j, "n_params", (uint64_t)net->n_params);
    json_num(&j, "obs_dim", s->obs_dim);
    if (s->in_c > 0) {
        json_begin_array(&j, "planes");
        json_num(&j, NULL, s->in_h), json_num(&j, NULL, s->in_w), json_num(&j, NULL, s->in_c);
        json_end_array(&j);
    }
    json_begin_array(&j, "conv");
    for (int i = 0; i < s->n_conv; i++) {
        json_begin_array(&j, NULL);
        json_num(&j, NULL, s->conv[i].filters), json_num(&j, NULL, s->conv[i].kernel);
        json_num(&j, NULL, s->conv[i].stride);
        json_end_array(&j);
    }
    json_end_array(&j);
    json_begin_array(&j, "hidden");
    for (int i = 0; i < s->n_hidden; i++) json_num(&j, NULL, s->hidden[i]);
    json_end_array(&j);
    json_bool(&j, "dueling", s->dueling);
    json_num(&j, "actions", s->n_actions);
    json_num(&j, "batch", B);
    json_bool(&j, "double_dqn", dp->double_dqn);
    json_num(&j, "huber_delta", dp->huber_delta);
    json_str(&j, "optimizer", opt);
    json_num(&j, "lr", lr);
    json_num(&j, "updates_per_second", r.ups);
    json_num(&j, "ms_per_update", 1e3 / r.ups);
    json_num(&j, "flops_per_update", r.flops);
    json_num(&j, "gflops", gflops);
    json_num(&j, "pct_of_sgemm_peak", 100 * gflops / peak);
    json_end_object(&j);
    fputc('\n', stdout);
}

/* `bench nn --config FILE`: one row for the config's own update. */
static int bench_config(const NnArgs *a) {
    char err[ERR_LEN];
    Config *cfg = xmalloc(sizeof *cfg);
    QNet net;
    OptimParams op;
    if (config_load(cfg, a->config, a->sets, a->n_sets, err) || agentcfg_qnet(cfg, &net, err)) {
        free(cfg);
        return usage_error("bench nn: %s", err);
    }
    agentcfg_optim_params(cfg, &op);
    if (optim_check(&op, err)) {
        free(cfg);
        return usage_error("bench nn: %s: %s", a->config, err);
    }
    DqnParams dp;
    agentcfg_dqn_params(cfg, &dp);
    int B = cfg->replay.batch_size;
    long threads = a->threads_given ? a->threads : cfg->run.blas_threads;
    const char *opt = config_optim_name(cfg->optimizer.kind);
    double lr = cfg->optimizer.lr * agentcfg_lr_scale(cfg);
    openblas_set_num_threads((int)threads);

    int peak_n = 0, n_after = 0;
    double peak = sgemm_peak(a->seconds, &peak_n);
    NnResult r = time_update(&net, B, &dp, &op, cfg->optimizer.grad_clip, a->seconds);
    double peak_after = sgemm_peak(a->seconds, &n_after), before = peak;
    if (peak_after > peak) peak = peak_after, peak_n = n_after;
    double gflops = r.flops * r.ups / 1e9;
    if (a->json) {
        platform_bench_header(true, threads, NULL);
        printf("{\"bench\":\"sgemm_peak\",\"gflops\":%.2f,\"n\":%d,\"threads\":%ld,\"before\":%.2f,\"after\":%.2f}\n",
               peak, peak_n, threads, before, peak_after);
        json_row(a->config, &net, B, &dp, opt, lr, r, peak);
    } else {
        char name[256];
        netprint_name(&net.spec, name, sizeof name);
        platform_bench_header(false, threads, threads == 1 ? "; using 1 thread" : "; using several threads");
        printf("sgemm peak: %.1f GFLOP/s (square n=%d; best of n=128..1024, measured before and after: %.1f, %.1f)\n",
               peak, peak_n, before, peak_after);
        printf("DQN update of %s (%s DQN, Huber %g, backward, grad clip %g, %s lr %g), %g s, best of %d windows\n",
               a->config, dp.double_dqn ? "double" : "vanilla", (double)dp.huber_delta, cfg->optimizer.grad_clip, opt,
               lr, a->seconds, WINDOWS);
        netprint_layers(&net, stdout);
        printf("%-28s %5s %10s %12s %10s %9s %8s\n", "network", "batch", "MFLOP/upd", "updates/s", "ms/update",
               "GFLOP/s", "%peak");
        printf("%-28s %5d %10.2f %12.0f %10.3f %9.1f %7.1f%%\n", name, B, r.flops / 1e6, r.ups, 1e3 / r.ups, gflops,
               100 * gflops / peak);
    }
    free(cfg);
    return 0;
}

int bench_nn(int argc, char **argv) {
    NnArgs a;
    int status;
    if (parse_args(argc, argv, &a, &status)) return status;
    if (a.config) return bench_config(&a);
    bool json = a.json, double_dqn = a.double_dqn, minatar = a.minatar;
    double seconds = a.seconds;
    long threads = a.threads;
    openblas_set_num_threads((int)threads);

    /* The peak is measured before and after the rows and the higher one
     * kept: on a shared machine a disturbance only ever lowers a reading, and
     * a low peak would inflate every "% peak". So the table prints at the
     * end. */
    int peak_n = 0;
    double peak_before = sgemm_peak(seconds, &peak_n);
    enum { N_MLP = sizeof cases / sizeof cases[0], N_MINATAR = sizeof minatar_cases / sizeof minatar_cases[0] };
    const NnCase *table = minatar ? minatar_cases : cases;
    size_t n_cases = minatar ? N_MINATAR : N_MLP;
    NnResult res[N_MLP > N_MINATAR ? N_MLP : N_MINATAR];
    for (size_t k = 0; k < n_cases; k++) res[k] = run_case(&table[k], double_dqn, seconds);
    int n_after = 0;
    double peak_after = sgemm_peak(seconds, &n_after), peak = peak_before;
    if (peak_after > peak) peak = peak_after, peak_n = n_after;

    if (json) {
        platform_bench_header(true, threads, NULL);
        printf("{\"bench\":\"sgemm_peak\",\"gflops\":%.2f,\"n\":%d,\"threads\":%ld,\"before\":%.2f,\"after\":%.2f}\n",
               peak, peak_n, threads, peak_before, peak_after);
    } else {
        platform_bench_header(false, threads, threads == 1 ? "; using 1 thread" : "; using several threads");
        printf("sgemm peak: %.1f GFLOP/s (square n=%d; best of n=128..1024, measured before and after: %.1f, %.1f)\n",
               peak, peak_n, peak_before, peak_after);
        printf("DQN update (%s DQN, Huber, backward, Adam), %g s per row, best of %d windows\n",
               double_dqn ? "double" : "vanilla", seconds, WINDOWS);
        if (minatar) printf("minatar-CN: 10x10xN planes, conv 16 3x3 stride 1, 1024 -> 128 -> 6 (dqn.py)\n");
        printf("%-12s %5s %10s %12s %9s %8s %9s %8s\n", "network", "batch", "MFLOP/upd", "updates/s", "GFLOP/s", "%peak",
               "PyTorch*", "ratio");
    }
    for (size_t k = 0; k < n_cases; k++) {
        const NnCase *c = &table[k];
        NnResult r = res[k];
        double gflops = r.flops * r.ups / 1e9;
        double pyt = c->pytorch_ups;
        if (json) {
            if (c->planes)
                printf("{\"bench\":\"nn\",\"obs_dim\":%d,\"planes\":[10,10,%d],\"conv\":[[16,3,1]],"
                       "\"hidden\":[%d],\"actions\":6,",
                       100 * c->planes, c->planes, c->hidden);
            else
                printf("{\"bench\":\"nn\",\"obs_dim\":4,\"hidden\":[%d,%d],\"actions\":2,", c->hidden, c->hidden);
            printf("\"batch\":%d,\"double_dqn\":%s,\"updates_per_second\":%.1f,\"flops_per_update\":%.0f,"
                   "\"gflops\":%.2f,\"pct_of_sgemm_peak\":%.1f",
                   c->batch, double_dqn ? "true" : "false", r.ups, r.flops, gflops, 100 * gflops / peak);
            if (pyt > 0)
                printf(",\"pytorch_updates_per_second_constant\":%.0f,\"vs_pytorch\":%.2f,\"reference_measured\":false,"
                       "\"reference_source\":\"%s\"",
                       pyt, r.ups / pyt, PYTORCH_REFERENCE_SOURCE);
            printf("}\n");
        } else {
            char name[32], pt[16] = "-", ratio[16] = "-";
            if (c->planes)
                snprintf(name, sizeof name, "minatar-C%d", c->planes);
            else
                snprintf(name, sizeof name, "4-%d-%d-2", c->hidden, c->hidden);
            if (pyt > 0) {
                snprintf(pt, sizeof pt, "%.0f", pyt);
                snprintf(ratio, sizeof ratio, "%.2fx", r.ups / pyt);
            }
            printf("%-12s %5d %10.2f %12.0f %9.1f %7.1f%% %9s %8s\n", name, c->batch, r.flops / 1e6, r.ups, gflops,
                   100 * gflops / peak, pt, ratio);
        }
    }
    if (!json) printf("* PyTorch: %s\n", PYTORCH_REFERENCE_SOURCE);
    return 0;
}
