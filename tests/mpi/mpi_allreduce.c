/* SPDX-License-Identifier: MIT */
/* mpi_allreduce.c: ring_allreduce and naive_allreduce against
 * MPI_Allreduce, run by tests/mpi/allreduce.sh under mpirun -np P for
 * P = 1..5. Rank 0 prints TAP.
 *
 * Sizes cover the edges of the block split: 0, 1, P-1, P, P+1, 2P+1, and
 * two large sizes whose blocks travel as one message each (100003) and as
 * more segments than receives in flight at every P up to 5 (2700001;
 * blocks over RING_WHOLE are segmented, allreduce.h; the naive algorithm
 * cuts both into RING_SEGMENT segments, more than its RING_DEPTH receives
 * in flight). Every size runs with both algorithms, each twice: polling,
 * and sleeping on doorbells (the oversubscribed path).
 * Two kinds of input:
 *  - small integers (exactly representable, sums exact in float), where the
 *    result must equal MPI_Allreduce bit for bit;
 *  - random floats, where summation order may differ: within 1e-5 relative,
 *    and every rank must end with bit-identical buffers. P <= 5 terms in
 *    [-1, 1]: any order of the sum is within (P - 1) u 5 = 20 u (u = 2^-24,
 *    1.2e-6) of the exact sum, two orders within 2.4e-6, under the 1e-5
 *    (1 + |sum|) allowed; a lost or doubled block is off by up to 1.
 *    The naive algorithm promises its order, rank 0's buffer then 1, 2,
 *    ...: its result must equal that sum, computed here from the gathered
 *    inputs, bit for bit.
 * The integer sums are exact whatever the order (every partial sum is an
 * integer below 2^24), and so is the algorithms' own adding (saxpy with
 * alpha 1 is one rounded addition per element), so those compare bit for
 * bit. The naive algorithm's traffic counters are exact too: per call, rank
 * 0 sends and receives (P-1) 4n bytes in (P-1) ceil(n / RING_SEGMENT)
 * messages, every other rank 4n bytes in ceil(n / RING_SEGMENT), one round;
 * nothing at all with P = 1 or n = 0.
 *
 * The hierarchical allreduce (hier_checks) runs the same sizes and inputs
 * on three shapes of node: all ranks on one node (the shared-memory sum
 * alone), nodes of 2 ranks (consecutive ranks; the leaders' ring between
 * them: with P = 3 a node of 2 and a node of 1) and nodes of 1 (the ring
 * alone), sleeping on doorbells, and the one-node shape polling too. Its
 * integer sums must equal MPI_Allreduce bit for bit, every rank must hold
 * the same bits, and on one node (nodes of 2 under scripts/simcluster are
 * not) its float sums must equal the rank-order
 * sum bit for bit (each slice is summed by one rank, S_0 + S_1 + ... in
 * node rank order). Its counters: one round a call on every rank; MPI
 * traffic only on the leaders and only with more than one node. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "allreduce.h"
#include "comm.h"
#include "gossip.h"
#include "rng.h"
#include "util.h"

static int n_test, n_fail;

static void report(int rank, int ok, const char *fmt, size_t n, int p) {
    if (rank != 0) return;
    n_test++;
    if (!ok) n_fail++;
    printf("%s %d - ", ok ? "ok" : "not ok", n_test);
    printf(fmt, n, p);
    printf("\n");
}

/* The naive algorithm's counters moved by exactly one call's traffic. */
static int naive_counted(const Ring *R, const Ring *before, size_t n) {
    uint64_t want_bytes = 0, want_msgs = 0, want_rounds = 0;
    if (R->p > 1 && n > 0) {
        uint64_t peers = R->r == 0 ? (uint64_t)R->p - 1 : 1;
        want_bytes = peers * n * sizeof(float);
        want_msgs = peers * ((n + RING_SEGMENT - 1) / RING_SEGMENT);
        want_rounds = 1;
    }
    return R->bytes_sent - before->bytes_sent == want_bytes && R->bytes_recv - before->bytes_recv == want_bytes &&
           R->msgs_sent - before->msgs_sent == want_msgs && R->msgs_recv - before->msgs_recv == want_msgs &&
           R->rounds - before->rounds == want_rounds;
}

/* Rank q's buffer for the pair exchange check: exact small integers. */
static void pair_fill(float *buf, size_t n, int q, uint64_t t) {
    for (size_t i = 0; i < n; i++) buf[i] = (float)((i * 7 + (size_t)q * 1000 + t) % 4093);
}

/* gossip's pair_exchange: in 3 rounds of each topology every rank gets
 * exactly its partner's buffer (gossip_peer), and its ring counters moved
 * by n floats each way (nothing when it sits out), polling and sleeping. */
static void pair_checks(const Ctx *ctx, Ring *sleeper, Ring *poller) {
    int p = ctx->size, r = ctx->rank;
    size_t sizes[] = {1, 100003, 2700001};
    for (int w = 0; w < 2; w++)
        for (int topo = 0; topo < 2; topo++)
            for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
                size_t n = sizes[k];
                Ring *R = w ? sleeper : poller;
                float *mine = xmalloc(n * sizeof(float)), *got = xmalloc(n * sizeof(float));
                float *want = xmalloc(n * sizeof(float));
                int ok = 1;
                for (uint64_t t = 0; t < 3; t++) {
                    GossipTopology g = topo ? GOSSIP_RING : GOSSIP_RANDOM;
                    int peer = gossip_peer(g, p, r, t, 11);
                    pair_fill(mine, n, r, t);
                    Ring before = *R;
                    if (peer >= 0) {
                        pair_exchange(R, mine, got, n, peer);
                        pair_fill(want, n, peer, t);
                        ok &= memcmp(got, want, n * sizeof(float)) == 0;
                    }
                    uint64_t b = peer >= 0 ? n * sizeof(float) : 0;
                    ok &= R->bytes_sent - before.bytes_sent == b && R->bytes_recv - before.bytes_recv == b &&
                          R->rounds - before.rounds == (peer >= 0);
                }
                int all_ok = 0;
                MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
                char what[160];
                snprintf(what, sizeof what, "pair %s %s: each rank got its partner's buffer, counters exact, "
                         "n=%%zu p=%%d", w ? "sleeping" : "polling", topo ? "ring" : "random");
                report(r, all_ok, what, n, p);
                free(mine);
                free(got);
                free(want);
            }
}

/* Above this many floats only the integer input runs: the large size is
 * there for segmenting (more segments than receives in flight), which the
 * exact integer sums check; the float sums' tolerance and order are
 * checked on every smaller size, and the float pass at 2.7M floats cost a
 * third of the script's time at 4 and 5 ranks. */
#define BIG_FLOATS_ONLY_INT 1000000

typedef struct {
    const char *name;
    int node_max;
    bool sleeping;
} HierShape;

/* One hierarchical call on integers or floats (kind), checked as the
 * header says. */
static void hier_case(const Ctx *ctx, Ring *R, const HierShape *h, size_t n, int kind, float *buf, float *ref,
                      float *all) {
    int p = ctx->size, r = ctx->rank;
    Rng rng;
    rng_seed(&rng, 777 + n, (uint64_t)r);
    for (size_t i = 0; i < n; i++)
        buf[i] = kind == 0 ? (float)((int)rng_below(&rng, 2001) - 1000) : (float)rng_uniform_range(&rng, -1.0, 1.0);
    memcpy(ref, buf, n * sizeof(float));
    if (n) MPI_Gather(buf, (int)n, MPI_FLOAT, all, (int)n, MPI_FLOAT, 0, MPI_COMM_WORLD);
    if (n) MPI_Allreduce(MPI_IN_PLACE, ref, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    /* on one node the float sum is rank 0's, then 1's, ... (rank 0 checks) */
    int ordered = 1, m, j, nodes;
    hier_shape(R, &m, &j, &nodes);
    Ring before = *R;
    hier_allreduce(R, buf, n);
    int ok = 1;
    for (size_t i = 0; i < n; i++) {
        if (kind == 0) ok &= buf[i] == ref[i];
        else ok &= fabsf(buf[i] - ref[i]) <= 1e-5f * (1.0f + fabsf(ref[i]));
    }
    if (r == 0 && kind == 1 && nodes == 1)
        for (size_t i = 0; i < n; i++) {
            float sum = all[i];
            for (int q = 1; q < p; q++) sum += all[(size_t)q * n + i];
            ordered &= memcmp(&sum, &buf[i], sizeof sum) == 0;
        }
    bool moved = p > 1 && n > 0, leader = nodes > 1 && j == 0;
    int counted = R->rounds - before.rounds == (uint64_t)moved &&
                  (R->bytes_sent - before.bytes_sent > 0) == (moved && leader) &&
                  (R->bytes_recv - before.bytes_recv > 0) == (moved && leader);
    int agg[2] = {ok, counted};
    MPI_Allreduce(MPI_IN_PLACE, agg, 2, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    char what[200];
    const char *wait = h->sleeping ? "sleeping" : "polling";
    snprintf(what, sizeof what, "hier %s %s: %s, n=%%zu p=%%d", h->name, wait,
             kind == 0 ? "integer sums equal MPI_Allreduce exactly" : "float sums equal MPI_Allreduce within 1e-5");
    report(r, agg[0], what, n, p);
    snprintf(what, sizeof what, "hier %s %s: one round, MPI traffic only on the leaders of 2+ nodes, n=%%zu p=%%d",
             h->name, wait);
    report(r, agg[1], what, n, p);
    if (n) MPI_Gather(buf, (int)n, MPI_FLOAT, all, (int)n, MPI_FLOAT, 0, MPI_COMM_WORLD);
    if (r == 0) {
        int same = 1;
        for (int q = 1; q < p; q++) same &= memcmp(all, all + (size_t)q * n, n * sizeof(float)) == 0;
        snprintf(what, sizeof what, "hier %s %s: all ranks bit-identical, n=%%zu p=%%d", h->name, wait);
        report(r, same, what, n, p);
        if (kind == 1 && nodes == 1) {
            snprintf(what, sizeof what, "hier %s %s: float sums equal the rank-order sum bit for bit, n=%%zu p=%%d",
                     h->name, wait);
            report(r, ordered, what, n, p);
        }
    }
}

/* hier_allreduce on every shape (header), every size, both inputs. */
static void hier_checks(const Ctx *ctx, MPI_Comm world, Doorbells *bells, const size_t *sizes, int ns) {
    static const HierShape shapes[] = {
        {"one node", 0, true}, {"one node", 0, false}, {"nodes of 2", 2, true}, {"nodes of 1", 1, true}};
    size_t most = 0;
    for (int k = 0; k < ns; k++) most = sizes[k] > most ? sizes[k] : most;
    size_t p = (size_t)ctx->size;
    float *buf = xmalloc((most + 1) * sizeof(float)), *ref = xmalloc((most + 1) * sizeof(float));
    float *all = xmalloc((most + 1) * p * sizeof(float));
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        Ring R;
        ring_init(&R, ctx, world, world, shapes[s].sleeping ? bells : NULL,
                  shapes[s].sleeping ? RING_WAIT_SLEEP : RING_WAIT_POLL);
        ring_hier_init(&R, world, most, shapes[s].node_max);
        for (int k = 0; k < ns; k++)
            for (int kind = 0; kind < (sizes[k] > BIG_FLOATS_ONLY_INT ? 1 : 2); kind++)
                hier_case(ctx, &R, &shapes[s], sizes[k], kind, buf, ref, all);
        ring_free(&R);
    }
    free(buf);
    free(ref);
    free(all);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    Ctx ctx;
    MPI_Comm world;
    comm_world_init(&ctx, &world);
    ctx.role = ROLE_LEARNER;
    int p = ctx.size, r = ctx.rank;
    size_t sizes[] = {0, 1, (size_t)(p - 1), (size_t)p, (size_t)p + 1, 2 * (size_t)p + 1, 100003, 2700001};
    int ns = (int)(sizeof sizes / sizeof sizes[0]);
    Doorbells bells;
    doorbell_init(&bells, &ctx, world);
    Ring sleeper, poller;
    ring_init(&sleeper, &ctx, world, world, &bells, RING_WAIT_SLEEP);
    ring_init(&poller, &ctx, world, world, NULL, RING_WAIT_POLL);
    if (r == 0) printf("TAP version 13\n");
    for (int k = 0; k < 2 * ns; k++) {
        size_t n = sizes[k % ns];
        bool sleeping = k >= ns;
        const char *wait = sleeping ? "sleeping" : "polling";
        float *buf = xmalloc((n + 1) * sizeof(float));
        float *ref = xmalloc((n + 1) * sizeof(float));
        float *all = xmalloc(((n + 1) * (size_t)p) * sizeof(float));
        float *in = xmalloc(((n + 1) * (size_t)p) * sizeof(float));
        for (int naive = 0; naive < 2; naive++) {
            const char *alg = naive ? "naive" : "ring";
            int counted = 1;
            for (int kind = 0; kind < (n > BIG_FLOATS_ONLY_INT ? 1 : 2); kind++) {
                Rng rng;
                rng_seed(&rng, 1234 + (uint64_t)(k % ns), (uint64_t)r);
                for (size_t i = 0; i < n; i++)
                    buf[i] = kind == 0 ? (float)((int)rng_below(&rng, 2001) - 1000)
                                       : (float)rng_uniform_range(&rng, -1.0, 1.0);
                memcpy(ref, buf, n * sizeof(float));
                if (n) MPI_Allreduce(MPI_IN_PLACE, ref, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
                if (naive && n) MPI_Gather(buf, (int)n, MPI_FLOAT, in, (int)n, MPI_FLOAT, 0, MPI_COMM_WORLD);
                Ring *R = sleeping ? &sleeper : &poller;
                Ring before = *R;
                if (naive) naive_allreduce(R, buf, n);
                else if (sleeping) ring_allreduce(&sleeper, buf, n);
                else ring_allreduce_sum(&ctx, buf, n, world);
                if (naive) counted &= naive_counted(R, &before, n);
                int ok = 1;
                for (size_t i = 0; i < n; i++) {
                    if (kind == 0) ok &= buf[i] == ref[i];
                    else ok &= fabsf(buf[i] - ref[i]) <= 1e-5f * (1.0f + fabsf(ref[i]));
                }
                int all_ok = 0;
                MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
                char what[160];
                snprintf(what, sizeof what, "%s %s: %s, n=%%zu p=%%d", alg, wait,
                         kind == 0 ? "integer sums equal MPI_Allreduce exactly" : "float sums equal MPI_Allreduce within 1e-5");
                report(r, all_ok, what, n, p);
                /* Every rank holds the same bits. */
                if (n) MPI_Gather(buf, (int)n, MPI_FLOAT, all, (int)n, MPI_FLOAT, 0, MPI_COMM_WORLD);
                if (r == 0) {
                    int same = 1;
                    for (int q = 1; q < p; q++) same &= memcmp(all, all + (size_t)q * n, n * sizeof(float)) == 0;
                    snprintf(what, sizeof what, "%s %s: all ranks bit-identical, n=%%zu p=%%d", alg, wait);
                    report(r, same, what, n, p);
                }
                /* The naive sum is rank 0's buffer, then rank 1's, ...: in
                 * float, one rounding per addition, in that order. */
                if (naive && kind == 1 && r == 0) {
                    int ordered = 1;
                    for (size_t i = 0; i < n; i++) {
                        float sum = in[i];
                        for (int q = 1; q < p; q++) sum += in[(size_t)q * n + i];
                        ordered &= memcmp(&sum, &buf[i], sizeof sum) == 0;
                    }
                    snprintf(what, sizeof what, "naive %s: float sums equal the rank-order sum bit for bit, n=%%zu p=%%d",
                             wait);
                    report(r, ordered, what, n, p);
                }
            }
            if (naive) {
                int all_counted = 0;
                MPI_Allreduce(&counted, &all_counted, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
                char what[160];
                snprintf(what, sizeof what, "naive %s: traffic counters exact (rank 0: (p-1) 4n bytes, others 4n), "
                                            "n=%%zu p=%%d", wait);
                report(r, all_counted, what, n, p);
            }
        }
        free(buf);
        free(ref);
        free(all);
        free(in);
    }
    pair_checks(&ctx, &sleeper, &poller);
    hier_checks(&ctx, world, &bells, sizes, ns);
    ring_free(&sleeper);
    ring_free(&poller);
    doorbell_free(&bells, &ctx);
    if (r == 0) printf("1..%d\n", n_test);
    comm_world_free(&ctx, &world);
    MPI_Finalize();
    return n_fail ? 1 : 0;
}
