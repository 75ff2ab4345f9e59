/* SPDX-License-Identifier: MIT */
/* bench_pingpong.c: `mpirun -np 2 gorila bench pingpong [--bytes LIST]
 * [--seconds S] [--json]`
 *
 * The per-message latency and the bandwidth of the path between two ranks,
 * for the communication cost model t(K) = a + K / B of one message of K
 * bytes (tools/compare/costmodel.py; across simulated nodes behind
 * rate-limited NICs: scripts/simcluster shaped-run).
 *
 * Per size (default 8 B to 16 MiB): one round trip sets the path up, then
 * warm-up round trips (at most WARMUP_MAX, about a tenth of --seconds), then
 * one timed round trip; the median of these chooses `iters` so that the
 * size takes about --seconds (default 1) over WINDOWS windows. A window is a barrier, then
 * `iters` round trips timed on rank 0:
 *
 *   rank 0: Send(K) ----------> Recv(K)        one round trip = two
 *   rank 1:         Recv(K) -> Send(K)         one-way messages of K bytes
 *
 * and the best (shortest) window per round trip is kept: the machines are
 * shared, and the best window is the least disturbed one. One-way time =
 * round trip / 2; rate = K / one-way time (payload only: headers and the
 * link's framing are part of the measured time, not of the bytes).
 *
 * The fit: a = the one-way time of the smallest size, B = (largest size) /
 * (its one-way time - a), or its plain rate when that difference is not
 * positive (a single size, or noise). Nothing here passes or fails on time.
 *
 * Waiting. Unlike the roles of a job (comm.h), both ranks block inside
 * MPI_Send and MPI_Recv: a rank that sleeps would add its wake-up time to
 * the latency measured. But Open MPI's blocking calls spin, and a spinning
 * rank keeps the core from the kernel's network work and from the other
 * rank where cores are few. So, unless the user chose (`mpirun --mca
 * mpi_yield_when_idle 0`, or OMPI_MCA_mpi_yield_when_idle in the
 * environment), the ranks yield the core while they wait (sched_yield:
 * they stay runnable, no sleep). Measured on a 2-core machine: across two
 * simulated nodes (scripts/simcluster shaped-run, 1 Gbit/s) 8 bytes took
 * 52 us one-way with yielding and 4-9 ms spinning (the scheduler's time
 * slice); over shared memory, on the loaded machine, 3.4 us against
 * 1.1-1.3 us, with one spinning run of 12 ms for 64 KiB.
 */
#include "clock.h"
#include "cmd.h"
#include "json.h"
#include "platform.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "comm.h"
#include "job.h"
#include "proto.h"
#include "util.h"

#define WINDOWS 5
#define WARMUP_MAX 10
#define ITERS_MAX 1000000L
#define SIZES_MAX 32
#define BYTES_MAX (256L << 20)
_Static_assert(BYTES_MAX <= INT_MAX, "a message size is MPI's int count");
#define SECONDS_MIN 0.05
#define SECONDS_MAX 60.0

typedef struct {
    bool json;
    double seconds;
    size_t n_sizes;
    long bytes[SIZES_MAX]; /* in the order given */
} PpOpts;

typedef struct {
    double one_way; /* seconds, best window */
    long iters;     /* round trips per window */
} PpResult;

static const long default_bytes[] = {8, 1024, 65536, 1048576, 4194304, 16777216};

/* Whether Open MPI's waits yield the core, as MPI_Init reads the setting
 * from the environment (an MCA boolean: 1, t, true, y, yes, enabled). */
static bool yields(void) {
    const char *v = getenv("OMPI_MCA_mpi_yield_when_idle");
    return v && (!strcmp(v, "1") || !strcasecmp(v, "t") || !strcasecmp(v, "true") || !strcasecmp(v, "y") ||
                 !strcasecmp(v, "yes") || !strcasecmp(v, "enabled"));
}

/* "8,1024,65536" into o->bytes; 0, or -1 with err. */
static int parse_bytes(const char *list, PpOpts *o, char *err) {
    char item[64];
    o->n_sizes = 0;
    for (const char *s = list;;) {
        size_t len = strcspn(s, ",");
        if (len == 0) return errf(err, "empty entry in \"%s\"", list);
        if (len >= sizeof item) return errf(err, "entry \"%.*s\" is too long", (int)len, s);
        if (o->n_sizes == SIZES_MAX) return errf(err, "more than %d sizes", SIZES_MAX);
        memcpy(item, s, len);
        item[len] = '\0';
        char why[ERR_LEN];
        if (parse_int_range(item, 1, BYTES_MAX, &o->bytes[o->n_sizes], why) < 0)
            return errf(err, "expected byte counts from 1 to %ld (256 MiB), got \"%s\"", BYTES_MAX, item);
        o->n_sizes++;
        if (s[len] == '\0') return 0;
        s += len + 1;
    }
}

/* The options; returns -1 when the run is done (help printed: *rc 0) or
 * refused (*rc the usage status), 0 to go on. */
static int parse_opts(int argc, char **argv, PpOpts *o, int *rc) {
    char err[ERR_LEN];
    *o = (PpOpts){.seconds = 1, .n_sizes = sizeof default_bytes / sizeof default_bytes[0]};
    memcpy(o->bytes, default_bytes, sizeof default_bytes);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            puts("usage: mpirun -np 2 gorila bench pingpong [--bytes LIST] [--seconds S] [--json]\n"
                 "MPI ping-pong between rank 0 and rank 1: one-way time and rate per message size\n"
                 "(LIST: comma-separated byte counts, 1 to 256 MiB; default 8,1024,65536,1048576,\n"
                 "4194304,16777216), best of 5 windows taking about S seconds (0.05 to 60,\n"
                 "default 1) per size, and the fit t(K) = latency + K / bandwidth. Waiting ranks\n"
                 "yield the core unless `mpirun --mca mpi_yield_when_idle 0` (then they spin).");
            return *rc = 0, -1;
        }
        if (!strcmp(a, "--json")) {
            o->json = true;
            continue;
        }
        if (strcmp(a, "--bytes") && strcmp(a, "--seconds"))
            return *rc = usage_error("bench pingpong: unknown option \"%s\" (expected --bytes LIST, --seconds S, "
                                     "--json)", a), -1;
        if (i + 1 >= argc) return *rc = usage_error("bench pingpong: %s needs a value", a), -1;
        const char *v = argv[++i];
        if (!strcmp(a, "--bytes")) {
            if (parse_bytes(v, o, err) < 0) return *rc = usage_error("bench pingpong: --bytes: %s", err), -1;
        } else if (parse_double(v, &o->seconds, err) < 0 || !(o->seconds >= SECONDS_MIN) ||
                   o->seconds > SECONDS_MAX) {
            return *rc = usage_error("bench pingpong: --seconds: expected a number from %g to %g, got \"%s\"",
                                     SECONDS_MIN, SECONDS_MAX, v), -1;
        }
    }
    return 0;
}

/* n round trips of `bytes` bytes of buf; seconds per round trip as rank 0
 * saw it (rank 1's figure is not used). */
static double round_trips(const Ctx *ctx, MPI_Comm world, char *buf, int bytes, long n) {
    double t0 = now_seconds();
    for (long i = 0; i < n; i++) {
        if (ctx->rank == 0) {
            MPI_CHECK(ctx, MPI_Send(buf, bytes, MPI_BYTE, 1, TAG_PINGPONG, world));
            MPI_CHECK(ctx, MPI_Recv(buf, bytes, MPI_BYTE, 1, TAG_PINGPONG, world, MPI_STATUS_IGNORE));
        } else {
            MPI_CHECK(ctx, MPI_Recv(buf, bytes, MPI_BYTE, 0, TAG_PINGPONG, world, MPI_STATUS_IGNORE));
            MPI_CHECK(ctx, MPI_Send(buf, bytes, MPI_BYTE, 0, TAG_PINGPONG, world));
        }
    }
    return n > 0 ? (now_seconds() - t0) / (double)n : 0;
}

/* Rank 0's count, on both ranks: they must run the same number of round
 * trips. */
static long agree(const Ctx *ctx, MPI_Comm world, long n) {
    MPI_CHECK(ctx, MPI_Bcast(&n, 1, MPI_LONG, 0, world));
    return n;
}

static long clamp_count(double n, long lo, long hi) {
    if (!(n >= (double)lo)) return lo; /* also NaN */
    if (n >= (double)hi) return hi;
    return (long)n;
}

static PpResult measure(const Ctx *ctx, MPI_Comm world, char *buf, int bytes, double seconds) {
    double first = round_trips(ctx, world, buf, bytes, 1);
    long warm = agree(ctx, world, clamp_count(0.1 * seconds / (first > 1e-7 ? first : 1e-7), 0, WARMUP_MAX));
    /* Each warm-up round trip is timed too, and their median sizes the
     * windows: a single small message can take tens of times its steady
     * time (a page fault, a descheduled peer), which would leave the
     * windows far shorter than asked if it sized them; and on a loaded
     * machine the fastest one is far faster than the typical one, which
     * would make them many times longer (a CPU hog beside the ranks
     * took one run past its 60 s). */
    double tw[WARMUP_MAX + 1];
    int nw = 0;
    for (long i = 0; i <= warm; i++) {
        double t = round_trips(ctx, world, buf, bytes, 1);
        int k = nw++;
        while (k > 0 && tw[k - 1] > t) { /* insertion: tw stays sorted */
            tw[k] = tw[k - 1];
            k--;
        }
        tw[k] = t;
    }
    double t1 = tw[nw / 2];
    PpResult r = {INFINITY, 1};
    r.iters = agree(ctx, world, clamp_count(seconds / WINDOWS / (t1 > 1e-7 ? t1 : 1e-7), 1, ITERS_MAX));
    for (int w = 0; w < WINDOWS; w++) {
        MPI_CHECK(ctx, MPI_Barrier(world));
        double t = round_trips(ctx, world, buf, bytes, r.iters);
        if (t / 2 < r.one_way) r.one_way = t / 2;
    }
    return r;
}

/* a and B from the results of the smallest and the largest size. */
static void fit(const PpOpts *o, const PpResult *res, double *latency, double *bandwidth) {
    size_t lo = 0, hi = 0;
    for (size_t k = 1; k < o->n_sizes; k++) {
        if (o->bytes[k] < o->bytes[lo]) lo = k;
        if (o->bytes[k] > o->bytes[hi]) hi = k;
    }
    *latency = res[lo].one_way;
    double d = res[hi].one_way - *latency;
    *bandwidth = (double)o->bytes[hi] / (d > 0 ? d : res[hi].one_way);
}

static void print_header(const PpOpts *o, char hosts[2][MPI_MAX_PROCESSOR_NAME], bool same_host) {
    platform_bench_header(o->json, -1, NULL);
    if (!o->json) {
        printf("ping-pong: rank 0 on %s, rank 1 on %s; best of %d windows per size, one-way = round trip / 2\n",
               hosts[0], hosts[1], WINDOWS);
        printf("waiting ranks %s\n", yields() ? "yield the core (mpi_yield_when_idle)" : "spin (mpi_yield_when_idle 0)");
        if (same_host)
            printf("note: both ranks run on %s: this measures shared memory, not a network\n", hosts[0]);
        printf("%12s %12s %12s %12s %10s\n", "bytes", "one-way us", "MB/s", "Mbit/s", "iters");
    }
    fflush(stdout);
}

static void print_row(const PpOpts *o, long bytes, const PpResult *r) {
    double rate = (double)bytes / r->one_way;
    if (o->json) {
        JsonW j;
        json_init(&j, stdout, false);
        json_begin_object(&j, NULL);
        json_str(&j, "bench", "pingpong");
        json_u64(&j, "bytes", (uint64_t)bytes);
        json_num(&j, "one_way_s", r->one_way);
        json_num(&j, "bytes_per_s", rate);
        json_u64(&j, "iters", (uint64_t)r->iters);
        json_end_object(&j);
        putchar('\n');
    } else {
        printf("%12ld %12.2f %12.2f %12.2f %10ld\n", bytes, r->one_way * 1e6, rate / 1e6, rate * 8 / 1e6, r->iters);
    }
    fflush(stdout);
}

static void print_fit(const PpOpts *o, double latency, double bandwidth, char hosts[2][MPI_MAX_PROCESSOR_NAME],
                      bool same_host) {
    if (o->json) {
        Platform p;
        platform_read(&p);
        JsonW j;
        json_init(&j, stdout, false);
        json_begin_object(&j, NULL);
        json_str(&j, "bench", "pingpong");
        json_begin_object(&j, "fit");
        json_num(&j, "latency_s", latency);
        json_num(&j, "bandwidth_bytes_per_s", bandwidth);
        json_end_object(&j);
        json_begin_array(&j, "hosts");
        json_str(&j, NULL, hosts[0]);
        json_str(&j, NULL, hosts[1]);
        json_end_array(&j);
        json_bool(&j, "same_host", same_host);
        json_bool(&j, "yield_when_idle", yields());
        /* Named as in the {"bench":"openblas"} line (platform_bench_header). */
        json_str(&j, "corename", p.blas_kernel);
        json_str(&j, "cpu", p.cpu);
        json_end_object(&j);
        putchar('\n');
    } else {
        printf("fit: latency %.2f us, bandwidth %.2f Mbit/s (payload)\n", latency * 1e6, bandwidth * 8 / 1e6);
    }
    fflush(stdout);
}

int bench_pingpong(int argc, char **argv) {
    PpOpts o;
    int rc;
    if (parse_opts(argc, argv, &o, &rc) != 0) return rc;

    job_mpi_env(); /* the same MPI settings as a training job */
    setenv("OMPI_MCA_mpi_yield_when_idle", "1", 0); /* waiting, above; the user's own setting wins */
    MPI_Init(&argc, &argv);
    Ctx ctx;
    MPI_Comm world;
    comm_world_init(&ctx, &world);
    if (ctx.size != 2) {
        if (ctx.rank == 0)
            fprintf(stderr, "gorila: error: bench pingpong needs exactly 2 ranks, got %d: "
                            "mpirun --oversubscribe -np 2 gorila bench pingpong\n", ctx.size);
        comm_world_free(&ctx, &world);
        MPI_Finalize();
        return EXIT_USAGE;
    }

    char hosts[2][MPI_MAX_PROCESSOR_NAME];
    char me[MPI_MAX_PROCESSOR_NAME];
    int len = 0;
    memset(hosts, 0, sizeof hosts);
    memset(me, 0, sizeof me);
    MPI_CHECK(&ctx, MPI_Get_processor_name(me, &len));
    me[MPI_MAX_PROCESSOR_NAME - 1] = '\0';
    MPI_CHECK(&ctx, MPI_Gather(me, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, hosts, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 0,
                               world));
    bool same_host = ctx.rank == 0 && !strcmp(hosts[0], hosts[1]);

    long max_bytes = 0;
    for (size_t k = 0; k < o.n_sizes; k++)
        if (o.bytes[k] > max_bytes) max_bytes = o.bytes[k];
    char *buf = xmalloc_aligned((size_t)max_bytes);
    memset(buf, 0, (size_t)max_bytes); /* every page touched before any timing */
    PpResult res[SIZES_MAX];

    if (ctx.rank == 0) print_header(&o, hosts, same_host);
    for (size_t k = 0; k < o.n_sizes; k++) {
        res[k] = measure(&ctx, world, buf, (int)o.bytes[k], o.seconds);
        if (ctx.rank == 0) print_row(&o, o.bytes[k], &res[k]);
    }
    if (ctx.rank == 0) {
        double latency, bandwidth;
        fit(&o, res, &latency, &bandwidth);
        print_fit(&o, latency, bandwidth, hosts, same_host);
    }
    free(buf);
    comm_world_free(&ctx, &world);
    MPI_Finalize();
    return 0;
}
