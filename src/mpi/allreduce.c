/* allreduce.c: see allreduce.h for the algorithm, its trace and how it
 * waits. */
#include "allreduce.h"
#include "clock.h"
#include "comm.h"
#include "params.h"
#include "proto.h"
#include "util.h"

#include <cblas.h>
#include <limits.h>
#include <stdlib.h>
#include <sched.h>
#include <string.h>

static int mod(int a, int p) { return ((a % p) + p) % p; }

void ring_init(Ring *R, const Ctx *ctx, MPI_Comm world, MPI_Comm comm, Doorbells *bells, RingWait wait) {
    memset(R, 0, sizeof *R);
    R->ctx = ctx;
    R->comm = comm;
    R->p = 1;
    if (comm == MPI_COMM_NULL) return;
    MPI_CHECK(ctx, MPI_Comm_size(comm, &R->p));
    MPI_CHECK(ctx, MPI_Comm_rank(comm, &R->r));
    R->left = mod(R->r - 1, R->p);
    R->right = mod(R->r + 1, R->p);
    MPI_Group g, wg;
    MPI_CHECK(ctx, MPI_Comm_group(comm, &g));
    MPI_CHECK(ctx, MPI_Comm_group(world, &wg));
    int in[3] = {R->left, R->right, R->r}, out[3];
    MPI_CHECK(ctx, MPI_Group_translate_ranks(g, 3, in, wg, out));
    MPI_CHECK(ctx, MPI_Group_free(&g));
    MPI_CHECK(ctx, MPI_Group_free(&wg));
    R->left_world = out[0];
    R->right_world = out[1];
    R->me_world = out[2];
    R->bells = bells && doorbell_enabled(bells) ? bells : NULL;
    R->remote = R->bells && (R->bells->slot_of[R->left_world] < 0 || R->bells->slot_of[R->right_world] < 0);
    if (wait == RING_WAIT_AUTO) {
        const char *env = getenv("GORILA_RING_WAIT");
        if (env && !strcmp(env, "poll")) wait = RING_WAIT_POLL;
        else if (env && !strcmp(env, "sleep")) wait = RING_WAIT_SLEEP;
        else wait = bells && doorbell_oversubscribed(bells) ? RING_WAIT_SLEEP : RING_WAIT_POLL;
    }
    R->poll = wait == RING_WAIT_POLL;
    size_t scratch = RING_WHOLE > RING_DEPTH * RING_SEGMENT ? RING_WHOLE : RING_DEPTH * RING_SEGMENT;
    R->tmp = xmalloc_aligned(scratch * sizeof(float));
}

void ring_free(Ring *R) {
    free(R->tmp);
    free(R->req);
    free(R->done_idx);
    R->tmp = NULL;
    R->req = NULL;
    R->done_idx = NULL;
    R->req_cap = 0;
}

static void ensure_requests(Ring *R, size_t n) {
    if (n <= R->req_cap) return;
    free(R->req);
    free(R->done_idx);
    R->req = xmalloc(n * sizeof *R->req);
    R->done_idx = xmalloc(n * sizeof *R->done_idx);
    R->req_cap = n;
}

static size_t n_segments(size_t len, size_t seg) { return (len + seg - 1) / seg; }

static int seg_len(size_t len, size_t k, size_t seg) {
    size_t off = k * seg;
    return (int)(len - off < seg ? len - off : seg);
}

/* One step: send [so, so+sl) of buf to the right, receive [ro, ro+rl) from
 * the left, in segments, adding (reduce) or copying into buf. Returns when
 * both directions completed; the time with nothing to do goes to
 * R->wait_seconds. */
static void ring_step(Ring *R, float *buf, size_t so, size_t sl, size_t ro, size_t rl, size_t seg, bool reduce) {
    const Ctx *ctx = R->ctx;
    size_t ns = n_segments(sl, seg), nr = n_segments(rl, seg);
    /* Receives: reduce into RING_DEPTH scratch slots, or copy straight into
     * buf (all posted at once). Slots [0, depth) are receives, the sends
     * follow. */
    size_t depth = reduce ? (nr < RING_DEPTH ? nr : RING_DEPTH) : nr;
    ensure_requests(R, depth + ns);
    int seg_of[RING_DEPTH];
    size_t next_r = 0;
    for (size_t d = 0; d < depth; d++, next_r++) {
        float *dst = reduce ? R->tmp + d * seg : buf + ro + next_r * seg;
        if (reduce) seg_of[d] = (int)next_r;
        MPI_CHECK(ctx, MPI_Irecv(dst, seg_len(rl, next_r, seg), MPI_FLOAT, R->left, TAG_RING, R->comm, &R->req[d]));
    }
    for (size_t k = 0; k < ns; k++)
        MPI_CHECK(ctx, MPI_Isend(buf + so + k * seg, seg_len(sl, k, seg), MPI_FLOAT, R->right, TAG_RING, R->comm,
                                 &R->req[depth + k]));
    if (ns && R->bells) doorbell_ring(R->bells, R->right_world);
    R->msgs_sent += ns;
    R->bytes_sent += sl * sizeof(float);
    R->msgs_recv += nr;
    R->bytes_recv += rl * sizeof(float);

    size_t recv_left = nr, send_left = ns;
    double t_last = now_seconds(), t_idle = 0;
    bool armed = false, kick = false;
    while (recv_left + send_left > 0) {
        int outcount = 0;
        MPI_CHECK(ctx, MPI_Testsome((int)(depth + ns), R->req, &outcount, R->done_idx, MPI_STATUSES_IGNORE));
        bool got = false;
        if (outcount != MPI_UNDEFINED && outcount > 0) {
            got = true;
            bool received = false;
            for (int i = 0; i < outcount; i++) {
                int q = R->done_idx[i];
                if ((size_t)q >= depth) {
                    send_left--;
                    continue;
                }
                recv_left--;
                received = true;
                if (!reduce) continue;
                int k = seg_of[q];
                float *slot = R->tmp + (size_t)q * seg;
                cblas_saxpy(seg_len(rl, (size_t)k, seg), 1.0f, slot, 1, buf + ro + (size_t)k * seg, 1);
                if (next_r < nr) {
                    seg_of[q] = (int)next_r;
                    MPI_CHECK(ctx, MPI_Irecv(slot, seg_len(rl, next_r, seg), MPI_FLOAT, R->left, TAG_RING, R->comm,
                                             &R->req[q]));
                    next_r++;
                }
            }
            /* The left neighbour's large send completes when we have pulled
             * it: wake it if it sleeps. */
            if (received && R->bells) doorbell_ring(R->bells, R->left_world);
        } else if (R->service && R->service(R->service_arg)) {
            got = true;
        }
        double now = now_seconds();
        if (got) {
            if (armed) doorbell_disarm(R->bells, R->me_world);
            armed = false;
            kick = true;
            t_last = now;
            continue;
        }
        if (R->poll) continue;
        double t0 = now;
        if (now - t_last < RING_SPIN) {
            /* Spin: Open MPI yields the core inside its progress engine
             * when the node is oversubscribed (mpi_yield_when_idle). Across
             * nodes it may not know the machine is (simulated nodes on one
             * machine; each has its own slots): yield here. */
            if (R->remote) sched_yield();
        } else if (!R->bells) {
            sleep_seconds(COMM_IDLE_MIN);
        } else if (!armed) {
            /* Our progress since the last sleep may have moved what MPI had
             * queued (the next fragments of a large send, the
             * acknowledgement of a receive) without a bell: wake the
             * neighbours we still exchange with. Only after progress of our
             * own, so two sleepers never wake each other in turn. */
            if (kick) {
                if (send_left) doorbell_ring(R->bells, R->right_world);
                if (recv_left) doorbell_ring(R->bells, R->left_world);
                kick = false;
            }
            /* Raise the flag, then one more look (the loop's next pass)
             * before sleeping: see doorbell.h. */
            doorbell_arm(R->bells, R->me_world);
            armed = true;
            continue;
        } else {
            /* A neighbour on another node rings no bell: wake soon. */
            doorbell_wait(R->bells, R->me_world, R->remote ? COMM_IDLE_REMOTE : COMM_IDLE_BELL);
            armed = false;
        }
        t_idle += now_seconds() - t0;
    }
    if (armed) doorbell_disarm(R->bells, R->me_world);
    R->wait_seconds += t_idle;
}

void ring_allreduce(Ring *R, float *buf, size_t n) {
    int p = R->p, r = R->r;
    if (p == 1 || n == 0) return;
    if (n / (size_t)p + 1 > (size_t)INT_MAX) DIE(R->ctx, "allreduce of %zu floats is too large", n);
    /* Blocks up to RING_WHOLE go as one message each; larger ones in
     * segments (allreduce.h). Every rank derives the same from n and p. */
    size_t block = (n + (size_t)p - 1) / (size_t)p;
    size_t seg = block <= RING_WHOLE ? (block ? block : 1) : RING_SEGMENT;
    double t0 = now_seconds();
    for (int s = 0; s < p - 1; s++) {
        size_t so, sl, ro, rl;
        shard_range(n, p, mod(r - s, p), &so, &sl);
        shard_range(n, p, mod(r - s - 1, p), &ro, &rl);
        ring_step(R, buf, so, sl, ro, rl, seg, true);
    }
    double t1 = now_seconds();
    if (R->trace) trace_span(R->trace, TR_RING_RS, t0, t1, (uint32_t)p);
    for (int s = 0; s < p - 1; s++) {
        size_t so, sl, ro, rl;
        shard_range(n, p, mod(r + 1 - s, p), &so, &sl);
        shard_range(n, p, mod(r - s, p), &ro, &rl);
        ring_step(R, buf, so, sl, ro, rl, seg, false);
    }
    double t2 = now_seconds();
    if (R->trace) trace_span(R->trace, TR_RING_AG, t1, t2, (uint32_t)p);
    R->rounds++;
    R->seconds += t2 - t0;
}

void ring_allreduce_sum(const Ctx *ctx, float *buf, size_t n, MPI_Comm comm) {
    Ring R;
    ring_init(&R, ctx, comm, comm, NULL, RING_WAIT_POLL);
    ring_allreduce(&R, buf, n);
    ring_free(&R);
}
