/* SPDX-License-Identifier: MIT */
/* bench_replay.c: `gorila bench replay [--json] [--seconds S] [--obs-dim N] [--capacity C] [--packed]`
 *
 * What one replay shard can do per second, uniform (replaybuf) against
 * proportional prioritized (replaystore), at capacities 2^10, 2^12, ...,
 * 2^22 (every 4x, which includes 2^20), with transitions of N floats per
 * observation (default 4, CartPole):
 *
 *   insert          chunks of 32 rows (actor.chunk's default) into a full
 *                   buffer, so every row evicts one; prioritized rows come
 *                   with their |td| (initial_priority: actor), so each pays
 *                   one pow and one sum-tree update;
 *   sample          batches of 64 and 512 rows copied out: uniform
 *                   replaybuf_sample, prioritized replaystore_sample
 *                   (stratified: one sum-tree descent per row);
 *   sampled+updated prioritized only: a batch sampled, then each of its rows
 *                   given a new priority through replaystore_update (the id
 *                   check, one pow, one sum-tree update): what a shard does
 *                   for a learner per batch.
 *
 * --packed: observations are binary planes (random 0/1 cells) stored as
 * bits (obsrow.h), as for a MinAtar run (--obs-dim 1000 is Seaquest's
 * 10x10x10): inserts pack from floats, samples unpack.
 *
 * Rates are transitions per second. Each measurement runs S seconds
 * (default 0.25) split into 3 windows after a short warm-up, and reports
 * the best window (the machines are shared; the best window is the least
 * disturbed). Buffers are filled completely before anything is timed; the
 * fill is not timed. One thread. Nothing here passes or fails on time;
 * the project's target for prioritized replay (2M sampled+updated
 * transitions/s per shard at 2^20, batch 512; docs/PERFORMANCE.md) is
 * printed beside the measurement.
 */
#include "clock.h"
#include "cmd.h"
#include "platform.h"

#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agentcfg.h"
#include "replaystore.h"
#include "replaybuf.h"
#include "rng.h"
#include "sumtree.h"
#include "util.h"

#define WINDOWS 3
#define CHUNK 32
#define TD_POOL 4096 /* precomputed |td| values, cycled: the RNG is not what is measured */
#define TARGET_PER_SECOND 2e6

static const int log2_caps[] = {10, 12, 14, 16, 18, 20, 22};
static const int batches[] = {64, 512};
enum { N_CAPS = sizeof log2_caps / sizeof log2_caps[0], N_BATCH = sizeof batches / sizeof batches[0] };

typedef struct {
    double insert;                /* transitions/s */
    double sample[N_BATCH];       /* transitions/s */
    double sample_upd[N_BATCH];   /* transitions/s; prioritized only */
} Rates;

typedef struct {
    ReplayStore store;
    Batch chunk, out;
    size_t *slots;     /* prioritized only (NULL: a uniform sample hands out none) */
    uint64_t *ids;
    float td[TD_POOL];
    size_t td_next;
    Rng rng;
} Bench;

enum { OP_INSERT, OP_SAMPLE, OP_SAMPLE_UPDATE };

/* One operation on b; returns the transitions it handled. */
static size_t op(Bench *b, int kind, int B) {
    if (kind == OP_INSERT) {
        /* A uniform store does not read the |td|. */
        if (b->td_next + CHUNK > TD_POOL) b->td_next = 0;
        replaystore_add_batch(&b->store, &b->chunk, b->td + b->td_next);
        b->td_next += CHUNK;
        return CHUNK;
    }
    replaystore_sample(&b->store, &b->rng, B, &b->out, b->slots, b->ids, NULL);
    if (kind == OP_SAMPLE_UPDATE) {
        if (b->td_next + (size_t)B > TD_POOL) b->td_next = 0;
        replaystore_update_many(&b->store, b->slots, b->ids, b->td + b->td_next, B);
        b->td_next += (size_t)B;
    }
    return (size_t)B;
}

/* Best-window rate of an operation, in transitions per second. */
static double measure(Bench *b, int kind, int B, double seconds) {
    double warm_until = now_seconds() + seconds / 20;
    while (now_seconds() < warm_until) op(b, kind, B);
    double best = 0;
    for (int w = 0; w < WINDOWS; w++) {
        size_t n = 0;
        double t0 = now_seconds(), t;
        do {
            for (int k = 0; k < 8; k++) n += op(b, kind, B);
            t = now_seconds() - t0;
        } while (t < seconds / WINDOWS);
        if ((double)n / t > best) best = (double)n / t;
    }
    return best;
}

static Rates run_case(size_t capacity, bool prio, int O, bool packed, double seconds) {
    Bench *b = xcalloc(1, sizeof *b);
    rng_seed(&b->rng, 1, RNG_STREAM_TOOL);
    replaystore_init_rows(&b->store, capacity, obsrow_make(O, packed), prio, 0.6, 1e-6);
    agentcfg_batch_init(&b->chunk, CHUNK, O);
    agentcfg_batch_init(&b->out, batches[N_BATCH - 1], O);
    if (prio) {
        b->slots = xmalloc((size_t)batches[N_BATCH - 1] * sizeof(size_t));
        b->ids = xmalloc((size_t)batches[N_BATCH - 1] * sizeof(uint64_t));
    }
    b->chunk.n = CHUNK;
    for (size_t i = 0; i < (size_t)CHUNK * (size_t)O; i++) {
        b->chunk.obs[i] = packed ? (float)rng_below(&b->rng, 2) : (float)rng_normal(&b->rng);
        b->chunk.next_obs[i] = packed ? (float)rng_below(&b->rng, 2) : (float)rng_normal(&b->rng);
    }
    for (int i = 0; i < CHUNK; i++) {
        b->chunk.action[i] = (int32_t)(i % 2);
        b->chunk.reward[i] = 1.0f;
        b->chunk.discount[i] = 0.99f;
    }
    /* |td| ~ exponential with mean 1: priorities spread over a few orders
     * of magnitude, as in training. */
    for (int i = 0; i < TD_POOL; i++) b->td[i] = (float)-log(1.0 - rng_uniform(&b->rng));
    /* Fill (untimed), then every insert evicts. */
    size_t filled = 0;
    while (filled < capacity) filled += op(b, OP_INSERT, 0);
    Rates r = {0};
    r.insert = measure(b, OP_INSERT, 0, seconds);
    for (int k = 0; k < N_BATCH; k++) {
        r.sample[k] = measure(b, OP_SAMPLE, batches[k], seconds);
        r.sample_upd[k] = prio ? measure(b, OP_SAMPLE_UPDATE, batches[k], seconds) : NAN;
    }
    free(b->slots);
    free(b->ids);
    agentcfg_batch_free(&b->chunk);
    agentcfg_batch_free(&b->out);
    replaystore_free(&b->store);
    free(b);
    return r;
}

static void json_rate(const char *key, double v) {
    if (isnan(v)) printf(",\"%s\":null", key);
    else printf(",\"%s\":%.0f", key, v);
}

int bench_replay(int argc, char **argv) {
    char err[ERR_LEN];
    bool json = false, packed = false;
    double seconds = 0.25;
    long O = 4;
    uint64_t only_cap = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            puts("usage: gorila bench replay [--json] [--seconds S] [--obs-dim N] [--capacity C] [--packed]\n"
                 "insert, sample and sample+priority-update rates of one replay shard, uniform and\n"
                 "prioritized, at capacities 2^10 .. 2^22 (or only C) and batches of 64 and 512; S seconds\n"
                 "per measurement (default 0.25), N floats per observation (default 4); --packed: binary\n"
                 "planes stored as bits (MinAtar); see docs/PERFORMANCE.md");
            return 0;
        } else if (!strcmp(argv[i], "--json")) {
            json = true;
        } else if (!strcmp(argv[i], "--packed")) {
            packed = true;
        } else if (!strcmp(argv[i], "--seconds") && i + 1 < argc) {
            if (parse_double(argv[++i], &seconds, err) || seconds <= 0 || seconds > 3600)
                return usage_error("bench replay: --seconds: expected a number in (0, 3600], got \"%s\"", argv[i]);
        } else if (!strcmp(argv[i], "--capacity") && i + 1 < argc) {
            if (parse_u64(argv[++i], &only_cap, err) || only_cap < 1 || only_cap > (1ull << 30))
                return usage_error("bench replay: --capacity: expected an integer in [1, 2^30], got \"%s\"", argv[i]);
        } else if (!strcmp(argv[i], "--obs-dim") && i + 1 < argc) {
            if (parse_int_range(argv[++i], 1, 1024, &O, err)) return usage_error("bench replay: --obs-dim: %s", err);
        } else {
            return usage_error("bench replay: unknown argument \"%s\" (expected --json, --seconds S, --obs-dim N, "
                               "--capacity C, --packed)",
                               argv[i]);
        }
    }
    platform_bench_header(json, 1, "; using 1 thread (replay does no BLAS)");
    if (!json) {
        printf("replay shard, obs_dim %ld%s, sum-tree fan-out %d; millions of transitions/s, best of %d windows of "
               "%g s; inserts in chunks of %d into a full buffer\n",
               O, packed ? " packed to bits" : "", SUMTREE_FANOUT, WINDOWS, seconds / WINDOWS, CHUNK);
        printf("%-9s %-12s %8s %10s %12s %10s %12s\n", "capacity", "kind", "insert", "B=64 smp", "B=64 smp+upd",
               "B=512 smp", "B=512 smp+upd");
    }
    Rates pr_rates[N_CAPS];
    int n_caps = only_cap ? 1 : N_CAPS;
    for (int c = 0; c < n_caps; c++) {
        size_t cap = only_cap ? (size_t)only_cap : (size_t)1 << log2_caps[c];
        for (int prio = 0; prio < 2; prio++) {
            Rates r = run_case(cap, prio, (int)O, packed, seconds);
            if (prio) pr_rates[c] = r;
            const char *kind = prio ? "prioritized" : "uniform";
            if (json) {
                for (int k = 0; k < N_BATCH; k++) {
                    printf("{\"bench\":\"replay\",\"kind\":\"%s\",\"capacity\":%zu,\"batch\":%d,\"obs_dim\":%ld,"
                           "\"packed\":%s,\"fanout\":%d,\"seconds\":%g",
                           kind, cap, batches[k], O, packed ? "true" : "false", SUMTREE_FANOUT, seconds);
                    json_rate("insert_per_second", r.insert);
                    json_rate("sampled_per_second", r.sample[k]);
                    json_rate("sampled_updated_per_second", r.sample_upd[k]);
                    printf("}\n");
                }
            } else {
                char cap_s[24], su[N_BATCH][16];
                if (only_cap) snprintf(cap_s, sizeof cap_s, "%zu", cap);
                else snprintf(cap_s, sizeof cap_s, "2^%d", log2_caps[c]);
                for (int k = 0; k < N_BATCH; k++) {
                    if (isnan(r.sample_upd[k])) snprintf(su[k], sizeof su[k], "-");
                    else snprintf(su[k], sizeof su[k], "%.2f", r.sample_upd[k] / 1e6);
                }
                printf("%-9s %-12s %8.2f %10.2f %12s %10.2f %12s\n", cap_s, kind, r.insert / 1e6, r.sample[0] / 1e6,
                       su[0], r.sample[1] / 1e6, su[1]);
            }
            fflush(stdout);
        }
    }
    if (!json && !only_cap) {
        /* How prioritized cost grows with capacity, per sampled+updated row. */
        const Rates *lo = &pr_rates[0], *hi = &pr_rates[N_CAPS - 1];
        printf("prioritized, batch 512, per sampled+updated transition: %.0f ns at 2^%d, %.0f ns at 2^%d "
               "(%.1fx for %dx the rows)\n",
               1e9 / lo->sample_upd[1], log2_caps[0], 1e9 / hi->sample_upd[1], log2_caps[N_CAPS - 1],
               lo->sample_upd[1] / hi->sample_upd[1], 1 << (log2_caps[N_CAPS - 1] - log2_caps[0]));
        for (int c = 0; c < N_CAPS; c++)
            if (log2_caps[c] == 20)
                printf("target: %.1fM sampled+updated transitions/s per shard at 2^20, batch 512; "
                       "measured %.2fM (reported, not a pass or fail)\n",
                       TARGET_PER_SECOND / 1e6, pr_rates[c].sample_upd[1] / 1e6);
    }
    return 0;
}
