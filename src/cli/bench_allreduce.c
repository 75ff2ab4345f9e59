/* SPDX-License-Identifier: MIT */
/* bench_allreduce.c: `mpirun -np P gorila bench allreduce [--config FILE]
 * [--max-floats N] [--seconds S] [--wait auto|poll|sleep] [--json]`
 *
 * gorila's ring and naive (driver) allreduce (allreduce.h) against
 * MPI_Allreduce on the same ranks, in one run: per size from 1K floats up
 * by 4x to --max-floats (default 16M), plus the Q-network size of the
 * config (default: configs/cartpole.yaml if it exists, else the built-in
 * defaults), each marked "net".
 *
 * Timing: the three implementations alternate in WINDOWS windows per size;
 * a window is a barrier, then `iters` back-to-back allreduces of a zero
 * buffer (sums of zeros stay zeros: no growth to infinities), the slowest
 * rank's mean time per call kept; each implementation's best window is
 * reported (the machines are shared; the best window is the least
 * disturbed one). iters is chosen from a first call so that a size takes
 * about --seconds (default 2) in all. Before timing, one call of each on
 * small integers checks that the ring and the naive algorithm equal
 * MPI_Allreduce exactly.
 *
 * Beside them, gossip's pair exchange (pair_exchange, sync.mode gossip):
 * ranks 2i and 2i+1 swap n floats (a last rank of an odd P sits out), the
 * cost of one gossip round per learner; pair/ring is its time over the
 * ring allreduce's at the same n.
 *
 * Bandwidths are nccl-tests': algbw = bytes / time, busbw = algbw *
 * 2 (P-1) / P (what each rank's link must carry with an optimal algorithm;
 * comparable across P). The same factor for all three, so busbw compares
 * them at equal data: the naive algorithm's driver carries P/2 times that
 * (allreduce.h), which is what its lower busbw shows.
 * Beside them, the hierarchical allreduce (hier_allreduce,
 * sync.allreduce_impl hierarchical): the ranks of a node sum in shared
 * memory and only the nodes' leaders run the ring; hier/mpi and hier/ring
 * are its time over MPI_Allreduce's and the ring's. Its window is set up
 * once for the largest size. It too must equal MPI_Allreduce exactly on
 * small integers.
 *
 * Nothing here passes or fails on time.
 */
#include "clock.h"
#include "cmd.h"
#include "platform.h"

#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agentcfg.h"
#include "allreduce.h"
#include "comm.h"
#include "config.h"
#include "job.h"
#include "util.h"

#define WINDOWS 5

typedef enum { IMPL_RING = 0, IMPL_NAIVE, IMPL_MPI, IMPL_PAIR, IMPL_HIER, IMPLS } ArImpl;

typedef struct {
    double t[IMPLS];  /* seconds per call, best window */
    bool exact;       /* the ring equalled MPI_Allreduce on integers */
    bool naive_exact; /* the naive algorithm did */
    bool hier_exact;  /* the hierarchical one did */
} ArResult;

static double window(Ring *R, MPI_Comm world, ArImpl impl, float *buf, float *other, size_t n, long iters) {
    MPI_Barrier(world);
    int peer = R->r ^ 1;
    double t0 = now_seconds();
    for (long i = 0; i < iters; i++) {
        if (impl == IMPL_RING) ring_allreduce(R, buf, n);
        else if (impl == IMPL_NAIVE) naive_allreduce(R, buf, n);
        else if (impl == IMPL_HIER) hier_allreduce(R, buf, n);
        else if (impl == IMPL_PAIR) {
            if (peer < R->p) pair_exchange(R, buf, other, n, peer);
        } else MPI_Allreduce(MPI_IN_PLACE, buf, (int)n, MPI_FLOAT, MPI_SUM, world);
    }
    double t = (now_seconds() - t0) / (double)iters;
    MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, world);
    return t;
}

/* impl's sum of small integers equals MPI_Allreduce's bit for bit (on every
 * rank). */
static bool exact(Ring *R, MPI_Comm world, int rank, ArImpl impl, float *buf, float *ref, size_t n) {
    for (size_t i = 0; i < n; i++) buf[i] = ref[i] = (float)((int)((i * 7 + (size_t)rank * 13) % 201) - 100);
    if (impl == IMPL_RING) ring_allreduce(R, buf, n);
    else if (impl == IMPL_HIER) hier_allreduce(R, buf, n);
    else naive_allreduce(R, buf, n);
    MPI_Allreduce(MPI_IN_PLACE, ref, (int)n, MPI_FLOAT, MPI_SUM, world);
    int same = memcmp(buf, ref, n * sizeof(float)) == 0;
    MPI_Allreduce(MPI_IN_PLACE, &same, 1, MPI_INT, MPI_LAND, world);
    return same != 0;
}

static ArResult measure(Ring *R, MPI_Comm world, int rank, size_t n, double seconds) {
    ArResult res = {{INFINITY, INFINITY, INFINITY, INFINITY, INFINITY}, true, true, true};
    float *buf = xmalloc_aligned(n * sizeof(float)), *ref = xmalloc_aligned(n * sizeof(float));
    res.exact = exact(R, world, rank, IMPL_RING, buf, ref, n);
    res.naive_exact = exact(R, world, rank, IMPL_NAIVE, buf, ref, n);
    res.hier_exact = exact(R, world, rank, IMPL_HIER, buf, ref, n);
    memset(buf, 0, n * sizeof(float));
    /* One call of each sizes the windows. */
    double t1 = 0;
    for (int k = 0; k < IMPLS; k++) t1 += window(R, world, (ArImpl)k, buf, ref, n, 1);
    t1 /= IMPLS;
    long iters = (long)(seconds / ((double)IMPLS * WINDOWS) / (t1 > 1e-7 ? t1 : 1e-7));
    if (iters < 1) iters = 1;
    if (iters > 100000) iters = 100000;
    MPI_Bcast(&iters, 1, MPI_LONG, 0, world);
    for (int w = 0; w < WINDOWS; w++)
        for (int k = 0; k < IMPLS; k++) {
            double t = window(R, world, (ArImpl)k, buf, ref, n, iters);
            if (t < res.t[k]) res.t[k] = t;
        }
    free(buf);
    free(ref);
    return res;
}

static int cmp_size(const void *a, const void *b) {
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return x < y ? -1 : x > y;
}

typedef struct {
    bool json;
    const char *config;
    long max_floats;
    double seconds;
    RingWait wait;
} ArOpts;

/* The options; returns -1 when the run is done (help printed: *rc 0) or
 * refused (*rc the usage status), 0 to go on. */
static int parse_opts(int argc, char **argv, ArOpts *o, int *rc) {
    char err[ERR_LEN];
    *o = (ArOpts){.max_floats = 16L << 20, .seconds = 2, .wait = RING_WAIT_AUTO};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            puts("usage: mpirun -np P gorila bench allreduce [--config FILE] [--max-floats N] [--seconds S]\n"
                 "                                          [--wait auto|poll|sleep] [--json]\n"
                 "gorila's ring and naive (driver) allreduce against MPI_Allreduce, 1K floats to N\n"
                 "(default 16M) and the config's network size; time, algbw and busbw (nccl-tests\n"
                 "definitions); and gossip's pair exchange (ranks 2i, 2i+1 swap N floats) against the\n"
                 "ring; and the hierarchical allreduce (shared memory within a node, the ring\n"
                 "between nodes). See docs/PERFORMANCE.md.");
            return *rc = 0, -1;
        }
        if (!strcmp(a, "--json")) {
            o->json = true;
            continue;
        }
        if (strcmp(a, "--config") && strcmp(a, "--max-floats") && strcmp(a, "--seconds") && strcmp(a, "--wait"))
            return *rc = usage_error("bench allreduce: unknown option \"%s\" (expected --config FILE, --max-floats N, "
                                     "--seconds S, --wait auto|poll|sleep, --json)", a), -1;
        if (i + 1 >= argc) return *rc = usage_error("bench allreduce: %s needs a value", a), -1;
        const char *v = argv[++i];
        if (!strcmp(a, "--config")) {
            o->config = v;
        } else if (!strcmp(a, "--max-floats")) {
            if (parse_int_range(v, 1024, 1L << 28, &o->max_floats, err) < 0)
                return *rc = usage_error("bench allreduce: --max-floats: %s", err), -1;
        } else if (!strcmp(a, "--seconds")) {
            if (parse_double(v, &o->seconds, err) < 0 || !(o->seconds > 0) || o->seconds > 3600)
                return *rc = usage_error("bench allreduce: --seconds: expected a number in (0, 3600], got \"%s\"", v),
                       -1;
        } else if (!strcmp(v, "auto") || !strcmp(v, "poll") || !strcmp(v, "sleep")) {
            o->wait = !strcmp(v, "poll") ? RING_WAIT_POLL : !strcmp(v, "sleep") ? RING_WAIT_SLEEP : RING_WAIT_AUTO;
        } else {
            return *rc = usage_error("bench allreduce: --wait: expected auto, poll or sleep, got \"%s\"", v), -1;
        }
    }
    return 0;
}

/* The network size of the config (configs/cartpole.yaml when there is
 * one and none was given, else the defaults), before MPI starts: a bad
 * config is a usage error on every rank alike. 0, or -1 with *rc. */
static int net_size(ArOpts *o, size_t *n_net, int *rc) {
    char err[ERR_LEN];
    Config *cfg = xcalloc(1, sizeof *cfg);
    if (!o->config && access("configs/cartpole.yaml", R_OK) == 0) o->config = "configs/cartpole.yaml";
    int bad = 0;
    if (o->config) bad = config_load(cfg, o->config, NULL, 0, err) != 0;
    else config_defaults(cfg);
    QNet net;
    if (!bad) bad = agentcfg_qnet(cfg, &net, err) != 0;
    free(cfg);
    if (bad) return *rc = usage_error("bench allreduce: %s", err), -1;
    *n_net = net.n_params;
    return 0;
}

static void print_header(const ArOpts *o, const Ring *R, int p, int nodes, size_t n_net) {
    platform_bench_header(o->json, -1, NULL);
    if (!o->json) {
        printf("%d ranks, %s, %ld cores here; ring and naive wait by %s; net = %s's Q-network (%zu floats)\n", p,
               nodes ? "one node" : "several nodes", sysconf(_SC_NPROCESSORS_ONLN), R->poll ? "polling" : "sleeping",
               o->config ? o->config : "the default config", n_net);
        printf("best of %d windows per size; busbw = algbw * 2(P-1)/P (nccl-tests)\n", WINDOWS);
        printf("%10s %10s | %10s %9s %9s | %10s %9s %9s | %10s %9s %9s | %8s %8s %9s | %10s %9s | %10s %9s %9s\n",
               "floats", "bytes", "ring_us", "algbw", "busbw", "naive_us", "algbw", "busbw", "mpi_us", "algbw",
               "busbw", "busbw", "time", "time", "pair_us", "time", "hier_us", "time", "time");
        printf("%10s %10s | %10s %9s %9s | %10s %9s %9s | %10s %9s %9s | %8s %8s %9s | %10s %9s | %10s %9s %9s\n",
               "", "", "", "GB/s", "GB/s", "", "GB/s", "GB/s", "", "GB/s", "GB/s", "ring/mpi", "ring/mpi",
               "naive/mpi", "", "pair/ring", "", "hier/mpi", "hier/ring");
    }
    fflush(stdout);
}

static void print_row(const ArOpts *o, const Ring *R, int p, size_t n, bool is_net, const ArResult *r) {
    double bytes = (double)n * sizeof(float), bus = 2.0 * (p - 1) / p;
    double tr = r->t[IMPL_RING], tn = r->t[IMPL_NAIVE], tm = r->t[IMPL_MPI], tp = r->t[IMPL_PAIR];
    double th = r->t[IMPL_HIER];
    double ra = bytes / tr / 1e9, na = bytes / tn / 1e9, ma = bytes / tm / 1e9;
    if (o->json) {
        printf("{\"bench\":\"allreduce\",\"floats\":%zu,\"bytes\":%.0f,\"ranks\":%d,\"network_size\":%s,"
               "\"wait\":\"%s\",\"ring_us\":%.3f,\"ring_algbw_gbs\":%.4f,\"ring_busbw_gbs\":%.4f,"
               "\"mpi_us\":%.3f,\"mpi_algbw_gbs\":%.4f,\"mpi_busbw_gbs\":%.4f,\"busbw_ratio\":%.4f,"
               "\"time_ratio\":%.4f,\"ring_equals_mpi\":%s,\"naive_us\":%.3f,\"naive_algbw_gbs\":%.4f,"
               "\"naive_busbw_gbs\":%.4f,\"naive_time_ratio\":%.4f,\"naive_equals_mpi\":%s,\"pair_us\":%.3f,"
               "\"pair_time_ratio_ring\":%.4f,\"hier_us\":%.3f,\"hier_time_ratio\":%.4f,"
               "\"hier_time_ratio_ring\":%.4f,\"hier_equals_mpi\":%s}\n",
               n, bytes, p, is_net ? "true" : "false", R->poll ? "poll" : "sleep", tr * 1e6, ra, ra * bus, tm * 1e6,
               ma, ma * bus, ra / ma, tr / tm, r->exact ? "true" : "false", tn * 1e6, na, na * bus, tn / tm,
               r->naive_exact ? "true" : "false", tp * 1e6, tp / tr, th * 1e6, th / tm, th / tr,
               r->hier_exact ? "true" : "false");
    } else {
        printf("%10zu %10.0f | %10.1f %9.3f %9.3f | %10.1f %9.3f %9.3f | %10.1f %9.3f %9.3f | %7.2fx %7.2fx %8.2fx"
               " | %10.1f %8.2fx | %10.1f %8.2fx %8.2fx%s%s%s%s\n",
               n, bytes, tr * 1e6, ra, ra * bus, tn * 1e6, na, na * bus, tm * 1e6, ma, ma * bus, ra / ma, tr / tm,
               tn / tm, tp * 1e6, tp / tr, th * 1e6, th / tm, th / tr, is_net ? "  net" : "",
               r->exact ? "" : "  RING DIFFERS FROM MPI", r->naive_exact ? "" : "  NAIVE DIFFERS FROM MPI",
               r->hier_exact ? "" : "  HIER DIFFERS FROM MPI");
    }
    fflush(stdout);
}

int bench_allreduce(int argc, char **argv) {
    ArOpts o;
    int rc;
    size_t n_net;
    if (parse_opts(argc, argv, &o, &rc) != 0 || net_size(&o, &n_net, &rc) != 0) return rc;

    job_mpi_env(); /* the same MPI settings as a training job */
    MPI_Init(&argc, &argv);
    Ctx ctx;
    MPI_Comm world;
    comm_world_init(&ctx, &world);
    ctx.role = ROLE_LEARNER;
    if (ctx.size < 2) {
        if (ctx.rank == 0)
            fprintf(stderr, "gorila: error: bench allreduce needs 2 or more ranks: "
                            "mpirun --oversubscribe -np 2 gorila bench allreduce\n");
        comm_world_free(&ctx, &world);
        MPI_Finalize();
        return EXIT_USAGE;
    }
    Doorbells bells;
    doorbell_init(&bells, &ctx, world);
    Ring R;
    ring_init(&R, &ctx, world, world, &bells, o.wait);
    int nodes = bells.n_node == ctx.size ? 1 : 0;
    int p = ctx.size;

    size_t sizes[32];
    int ns = 0;
    for (size_t n = 1024; n <= (size_t)o.max_floats && ns < 30; n *= 4) sizes[ns++] = n;
    sizes[ns++] = n_net;
    qsort(sizes, (size_t)ns, sizeof sizes[0], cmp_size);
    ring_hier_init(&R, world, sizes[ns - 1], 0);
    if (ctx.rank == 0) print_header(&o, &R, p, nodes, n_net);
    for (int k = 0; k < ns; k++) {
        size_t n = sizes[k];
        if (k > 0 && sizes[k - 1] == n) continue;
        ArResult r = measure(&R, world, ctx.rank, n, o.seconds);
        if (ctx.rank == 0) print_row(&o, &R, p, n, n == n_net, &r);
    }
    ring_free(&R);
    doorbell_free(&bells, &ctx);
    comm_world_free(&ctx, &world);
    MPI_Finalize();
    return 0;
}
