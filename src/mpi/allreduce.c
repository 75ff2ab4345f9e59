/* SPDX-License-Identifier: MIT */
/* allreduce.c: see allreduce.h for the algorithm, its trace and how it
 * waits. */
#include "allreduce.h"
#include "clock.h"
#include "comm.h"
#include "memplan.h"
#include "shard.h"
#include "proto.h"
#include "util.h"

#include <cblas.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sched.h>
#include <string.h>

/* A Ring's scratch (ring_init): a whole block, or RING_DEPTH segments in
 * flight; the memory plan mirrors it (memplan.h). */
#define RING_SCRATCH (RING_WHOLE > RING_DEPTH * RING_SEGMENT ? RING_WHOLE : RING_DEPTH * RING_SEGMENT)
_Static_assert(RING_SCRATCH == MEMPLAN_RING_SCRATCH, "memplan.h mirrors a Ring's scratch");

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
    int *in = xmalloc((size_t)R->p * sizeof *in);
    R->world_of = xmalloc((size_t)R->p * sizeof *R->world_of);
    for (int q = 0; q < R->p; q++) in[q] = q;
    MPI_CHECK(ctx, MPI_Group_translate_ranks(g, R->p, in, wg, R->world_of));
    free(in);
    MPI_CHECK(ctx, MPI_Group_free(&g));
    MPI_CHECK(ctx, MPI_Group_free(&wg));
    R->left_world = R->world_of[R->left];
    R->right_world = R->world_of[R->right];
    R->me_world = R->world_of[R->r];
    R->bells = bells && doorbell_enabled(bells) ? bells : NULL;
    R->remote = R->bells && (R->bells->slot_of[R->left_world] < 0 || R->bells->slot_of[R->right_world] < 0);
    for (int q = 0; R->bells && q < R->p; q++)
        if ((R->r == 0 || q == 0) && q != R->r && R->bells->slot_of[R->world_of[q]] < 0) R->remote_naive = true;
    if (wait == RING_WAIT_AUTO) {
        const char *env = getenv("GORILA_RING_WAIT");
        if (env && !strcmp(env, "poll")) wait = RING_WAIT_POLL;
        else if (env && !strcmp(env, "sleep")) wait = RING_WAIT_SLEEP;
        else wait = bells && doorbell_oversubscribed(bells) ? RING_WAIT_SLEEP : RING_WAIT_POLL;
    }
    R->poll = wait == RING_WAIT_POLL;
    size_t scratch = RING_SCRATCH;
    R->tmp = xmalloc_aligned(scratch * sizeof(float));
}

static void hier_free(Hier *H, const Ctx *ctx);

void ring_free(Ring *R) {
    if (R->hier) hier_free(R->hier, R->ctx);
    free(R->hier);
    R->hier = NULL;
    free(R->tmp);
    free(R->req);
    free(R->done_idx);
    free(R->world_of);
    R->tmp = NULL;
    R->req = NULL;
    R->done_idx = NULL;
    R->world_of = NULL;
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

/* ---- waiting: what the ring and the naive algorithm share ----------------
 * A wait loop tests its requests, and when none completed calls the
 * service hook; then waiter_pass with whether either did something. In
 * sleep mode it spins for RING_SPIN after the last progress, then raises
 * its doorbell's flag, looks once more (the loop's next pass) and sleeps
 * (allreduce.h, "Waiting"). wake(R, sending, receiving) rings the peers it
 * still sends to / receives from. */
typedef struct {
    bool remote;          /* a peer is on another node: its messages ring no bell */
    bool armed;           /* our flag is raised */
    bool kick;            /* progress since the last sleep: wake the peers before the next */
    double t_last, t_idle; /* last progress; seconds with nothing to do */
} Waiter;

typedef void (*WakeFn)(Ring *R, bool sending, bool receiving);

static Waiter waiter_start(bool remote) { return (Waiter){.remote = remote, .t_last = now_seconds()}; }

static void waiter_pass(Ring *R, Waiter *w, bool got, WakeFn wake, bool sending, bool receiving) {
    double now = now_seconds();
    if (got) {
        if (w->armed) doorbell_disarm(R->bells, R->me_world);
        w->armed = false;
        w->kick = true;
        w->t_last = now;
        return;
    }
    if (R->poll) return;
    if (now - w->t_last < RING_SPIN) {
        /* Spin: Open MPI yields the core inside its progress engine when
         * the node is oversubscribed (mpi_yield_when_idle). Across nodes
         * it may not know the machine is (simulated nodes on one machine;
         * each has its own slots): yield here. */
        if (w->remote) sched_yield();
    } else if (!R->bells) {
        sleep_seconds(COMM_IDLE_MIN);
    } else if (!w->armed) {
        /* Our progress since the last sleep may have moved what MPI had
         * queued (the next fragments of a large send, the acknowledgement
         * of a receive) without a bell: wake the peers we still exchange
         * with. Only after progress of our own, so two sleepers never wake
         * each other in turn. */
        if (w->kick) {
            wake(R, sending, receiving);
            w->kick = false;
        }
        /* Raise the flag, then one more look (the loop's next pass) before
         * sleeping: see doorbell.h. */
        doorbell_arm(R->bells, R->me_world);
        w->armed = true;
        return;
    } else {
        /* A peer on another node rings no bell: wake soon. */
        doorbell_wait(R->bells, R->me_world, w->remote ? COMM_IDLE_REMOTE : COMM_IDLE_BELL);
        w->armed = false;
    }
    w->t_idle += now_seconds() - now;
}

static void waiter_end(Ring *R, Waiter *w) {
    if (w->armed) doorbell_disarm(R->bells, R->me_world);
    R->wait_seconds += w->t_idle;
}

/* The ring: the right neighbour is sent to, the left one received from. */
static void wake_neighbours(Ring *R, bool sending, bool receiving) {
    if (sending) doorbell_ring(R->bells, R->right_world);
    if (receiving) doorbell_ring(R->bells, R->left_world);
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
    Waiter w = waiter_start(R->remote);
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
        waiter_pass(R, &w, got, wake_neighbours, send_left > 0, recv_left > 0);
    }
    waiter_end(R, &w);
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

/* ---- naive (driver) allreduce (allreduce.h) ------------------------------ */

/* Rank 0 exchanges with every other rank, the others with rank 0 only. */
static void wake_driver_peers(Ring *R, bool sending, bool receiving) {
    if (!sending && !receiving) return;
    if (R->r != 0) {
        doorbell_ring(R->bells, R->world_of[0]);
        return;
    }
    for (int q = 1; q < R->p; q++) doorbell_ring(R->bells, R->world_of[q]);
}

/* Rank 0. The receives form one sequence j = 0 .. nc (p-1) - 1: segment
 * j / (p-1) from rank 1 + j % (p-1), so every segment comes from ranks 1,
 * 2, ... in turn. Receive j lands in scratch slot j % depth; a slot is
 * added in (and reposted with j + depth) only when every receive before it
 * has been, whatever order they complete in: that fixes the order of the
 * sum. Requests: [0, depth) the receive slots, then send (k, q) of
 * segment k to rank q at depth + k (p-1) + q - 1, posted when segment k
 * has been summed. */
static void naive_driver(Ring *R, float *buf, size_t n, size_t seg) {
    const Ctx *ctx = R->ctx;
    size_t peers = (size_t)R->p - 1, nc = n_segments(n, seg), total = nc * peers;
    size_t depth = total < RING_DEPTH ? total : RING_DEPTH;
    if (depth + total > (size_t)INT_MAX) DIE(ctx, "naive allreduce of %zu floats over %d ranks is too large", n, R->p);
    ensure_requests(R, depth + total);
    for (size_t i = 0; i < depth + total; i++) R->req[i] = MPI_REQUEST_NULL;
    bool arrived[RING_DEPTH] = {false};
    size_t posted = 0, head = 0, sends_left = total;
    for (; posted < depth; posted++)
        MPI_CHECK(ctx, MPI_Irecv(R->tmp + posted * seg, seg_len(n, posted / peers, seg), MPI_FLOAT,
                                 1 + (int)(posted % peers), TAG_NAIVE, R->comm, &R->req[posted]));
    R->msgs_recv += total;
    R->bytes_recv += peers * n * sizeof(float);
    R->msgs_sent += total;
    R->bytes_sent += peers * n * sizeof(float);

    Waiter w = waiter_start(R->remote_naive);
    while (head < total || sends_left > 0) {
        int outcount = 0;
        MPI_CHECK(ctx, MPI_Testsome((int)(depth + total), R->req, &outcount, R->done_idx, MPI_STATUSES_IGNORE));
        bool got = false;
        if (outcount != MPI_UNDEFINED && outcount > 0) {
            got = true;
            for (int i = 0; i < outcount; i++) {
                size_t q = (size_t)R->done_idx[i];
                if (q >= depth) {
                    sends_left--;
                    continue;
                }
                arrived[q] = true;
                /* Slot q holds receive head + ((q - head) mod depth); its
                 * sender's large send completes when we have pulled it. */
                size_t j = head + (q + depth - head % depth) % depth;
                if (R->bells) doorbell_ring(R->bells, R->world_of[1 + j % peers]);
            }
            for (; head < total && arrived[head % depth]; head++) {
                size_t slot = head % depth, k = head / peers;
                arrived[slot] = false;
                cblas_saxpy(seg_len(n, k, seg), 1.0f, R->tmp + slot * seg, 1, buf + k * seg, 1);
                if (head % peers == peers - 1) {
                    /* Segment k holds the sum over every rank: out to all. */
                    for (size_t d = 1; d <= peers; d++) {
                        MPI_CHECK(ctx, MPI_Isend(buf + k * seg, seg_len(n, k, seg), MPI_FLOAT, (int)d, TAG_NAIVE,
                                                 R->comm, &R->req[depth + k * peers + d - 1]));
                        if (R->bells) doorbell_ring(R->bells, R->world_of[d]);
                    }
                }
                if (posted < total) {
                    MPI_CHECK(ctx, MPI_Irecv(R->tmp + slot * seg, seg_len(n, posted / peers, seg), MPI_FLOAT,
                                             1 + (int)(posted % peers), TAG_NAIVE, R->comm, &R->req[slot]));
                    posted++;
                }
            }
        } else if (R->service && R->service(R->service_arg)) {
            got = true;
        }
        waiter_pass(R, &w, got, wake_driver_peers, sends_left > 0, head < total);
    }
    waiter_end(R, &w);
}

/* After MPI_Testsome over nc sends then nc receives (naive_other,
 * pair_exchange): the completed ones off the counts; whether any was a
 * receive. */
static bool count_done(const Ring *R, int outcount, size_t nc, size_t *send_left, size_t *recv_left) {
    bool received = false;
    for (int i = 0; i < outcount; i++) {
        if ((size_t)R->done_idx[i] >= nc) {
            (*recv_left)--;
            received = true;
        } else {
            (*send_left)--;
        }
    }
    return received;
}

/* Every other rank: all its segments out to rank 0 at once; the receive of
 * segment k of the sum goes into buf, so it is posted only when the send
 * of segment k has completed, and in segment order: the driver's sums come
 * in segment order and MPI matches them to receives in the order posted,
 * while sends may complete out of order (over TCP a short last segment
 * goes eagerly and completes before the long ones, whose rendezvous waits
 * for the driver: its receive posted first would take segment 0's sum,
 * 256 KiB into a shorter slot). Requests: [0, nc) the sends, [nc, 2 nc)
 * the receives. */
static void naive_other(Ring *R, float *buf, size_t n, size_t seg) {
    const Ctx *ctx = R->ctx;
    size_t nc = n_segments(n, seg);
    if (2 * nc > (size_t)INT_MAX) DIE(ctx, "naive allreduce of %zu floats is too large", n);
    ensure_requests(R, 2 * nc);
    for (size_t k = 0; k < nc; k++) {
        MPI_CHECK(ctx, MPI_Isend(buf + k * seg, seg_len(n, k, seg), MPI_FLOAT, 0, TAG_NAIVE, R->comm, &R->req[k]));
        R->req[nc + k] = MPI_REQUEST_NULL;
    }
    if (R->bells) doorbell_ring(R->bells, R->world_of[0]);
    R->msgs_sent += nc;
    R->bytes_sent += n * sizeof(float);
    R->msgs_recv += nc;
    R->bytes_recv += n * sizeof(float);

    size_t send_left = nc, recv_left = nc, next_recv = 0;
    Waiter w = waiter_start(R->remote_naive);
    while (send_left + recv_left > 0) {
        int outcount = 0;
        MPI_CHECK(ctx, MPI_Testsome((int)(2 * nc), R->req, &outcount, R->done_idx, MPI_STATUSES_IGNORE));
        bool got = false;
        if (outcount != MPI_UNDEFINED && outcount > 0) {
            got = true;
            /* Testsome set each completed request to MPI_REQUEST_NULL */
            bool received = count_done(R, outcount, nc, &send_left, &recv_left);
            for (; next_recv < nc && R->req[next_recv] == MPI_REQUEST_NULL; next_recv++)
                MPI_CHECK(ctx, MPI_Irecv(buf + next_recv * seg, seg_len(n, next_recv, seg), MPI_FLOAT, 0, TAG_NAIVE,
                                         R->comm, &R->req[nc + next_recv]));
            /* The driver's large send completes when we have pulled it. */
            if (received && R->bells) doorbell_ring(R->bells, R->world_of[0]);
        } else if (R->service && R->service(R->service_arg)) {
            got = true;
        }
        waiter_pass(R, &w, got, wake_driver_peers, send_left > 0, recv_left > 0);
    }
    waiter_end(R, &w);
}

void naive_allreduce(Ring *R, float *buf, size_t n) {
    if (R->p == 1 || n == 0) return;
    /* Segments of up to RING_SEGMENT floats, into the RING_DEPTH scratch
     * slots at the driver; every rank derives the same from n. */
    size_t seg = n < RING_SEGMENT ? n : RING_SEGMENT;
    double t0 = now_seconds();
    if (R->r == 0) naive_driver(R, buf, n, seg);
    else naive_other(R, buf, n, seg);
    R->rounds++;
    R->seconds += now_seconds() - t0;
}

/* ---- gossip's pair exchange (allreduce.h) -------------------------------- */

static void wake_peer(Ring *R, bool sending, bool receiving) {
    if (sending || receiving) doorbell_ring(R->bells, R->peer_world);
}

/* Requests: [0, nc) the sends, [nc, 2 nc) the receives. */
void pair_exchange(Ring *R, const float *send, float *recv, size_t n, int peer) {
    const Ctx *ctx = R->ctx;
    if (R->p == 1 || n == 0) return;
    if (peer < 0 || peer >= R->p || peer == R->r) DIE(ctx, "gossip: no partner %d among %d learners", peer, R->p);
    size_t seg = n < RING_SEGMENT ? n : RING_SEGMENT, nc = n_segments(n, seg);
    if (2 * nc > (size_t)INT_MAX) DIE(ctx, "gossip exchange of %zu floats is too large", n);
    ensure_requests(R, 2 * nc);
    double t0 = now_seconds();
    for (size_t k = 0; k < nc; k++) {
        MPI_CHECK(ctx, MPI_Irecv(recv + k * seg, seg_len(n, k, seg), MPI_FLOAT, peer, TAG_PAIR, R->comm,
                                 &R->req[nc + k]));
        MPI_CHECK(ctx, MPI_Isend(send + k * seg, seg_len(n, k, seg), MPI_FLOAT, peer, TAG_PAIR, R->comm, &R->req[k]));
    }
    R->peer_world = R->world_of[peer];
    bool remote = R->bells && R->bells->slot_of[R->peer_world] < 0;
    if (R->bells) doorbell_ring(R->bells, R->peer_world);
    R->msgs_sent += nc;
    R->bytes_sent += n * sizeof(float);
    R->msgs_recv += nc;
    R->bytes_recv += n * sizeof(float);

    size_t send_left = nc, recv_left = nc;
    Waiter w = waiter_start(remote);
    while (send_left + recv_left > 0) {
        int outcount = 0;
        MPI_CHECK(ctx, MPI_Testsome((int)(2 * nc), R->req, &outcount, R->done_idx, MPI_STATUSES_IGNORE));
        bool got = false;
        if (outcount != MPI_UNDEFINED && outcount > 0) {
            got = true;
            bool received = count_done(R, outcount, nc, &send_left, &recv_left);
            /* The partner's large send completes when we have pulled it. */
            if (received && R->bells) doorbell_ring(R->bells, R->peer_world);
        } else if (R->service && R->service(R->service_arg)) {
            got = true;
        }
        waiter_pass(R, &w, got, wake_peer, send_left > 0, recv_left > 0);
    }
    waiter_end(R, &w);
    R->rounds++;
    R->seconds += now_seconds() - t0;
}

/* ---- hierarchical allreduce (allreduce.h) ------------------------------- */

#define HIER_LINE 64 /* bytes: one barrier counter per cache line; segments aligned to it */
_Static_assert(ATOMIC_LLONG_LOCK_FREE == 2, "the barrier counters must be lock-free (address-free) atomics");

struct Hier {
    MPI_Comm node;        /* this node's ranks of the ring's communicator, in its order */
    MPI_Comm leaders;     /* the nodes' rank 0s; MPI_COMM_NULL on the others */
    MPI_Win win;          /* every rank's counter line and segment; node rank 0's also the result */
    int m, j, nodes;      /* ranks on the node, this one's node rank, nodes */
    size_t cap;           /* floats per segment */
    _Atomic unsigned long long **count; /* (m) each node rank's barrier counter */
    float **seg;          /* (m) each node rank's segment */
    float *result;        /* the node's sum, then everyone's */
    int *node_world;      /* (m) world rank of each node rank (doorbells) */
    unsigned long long arrivals; /* this rank's barriers so far */
    Ring inter;           /* the ring among the leaders (p = 1 elsewhere and with one node) */
};

static size_t line_up(size_t bytes) { return (bytes + HIER_LINE - 1) / HIER_LINE * HIER_LINE; }

/* The node communicator: shared memory, cut into groups of node_max. */
static MPI_Comm hier_node_comm(const Ctx *ctx, MPI_Comm comm, int r, int node_max) {
    MPI_Comm shared, node;
    MPI_CHECK(ctx, MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, r, MPI_INFO_NULL, &shared));
    int j = 0;
    MPI_CHECK(ctx, MPI_Comm_rank(shared, &j));
    MPI_CHECK(ctx, MPI_Comm_split(shared, node_max > 0 ? j / node_max : 0, j, &node));
    MPI_CHECK(ctx, MPI_Comm_free(&shared));
    return node;
}

/* The window, all of it allocated by node rank 0 (MPI does not align a
 * rank's part to a cache line; one part aligned by hand): the m counter
 * lines, then the m segments, then the result. */
static void hier_window(Hier *H, const Ctx *ctx) {
    size_t seg_bytes = line_up(H->cap * sizeof(float));
    size_t total = HIER_LINE + (size_t)H->m * HIER_LINE + ((size_t)H->m + 1) * seg_bytes;
    char *at = NULL;
    MPI_CHECK(ctx, MPI_Win_allocate_shared(H->j == 0 ? (MPI_Aint)total : 0, 1, MPI_INFO_NULL, H->node, &at, &H->win));
    MPI_Aint size;
    int disp;
    MPI_CHECK(ctx, MPI_Win_shared_query(H->win, 0, &size, &disp, &at));
    at += (HIER_LINE - (uintptr_t)at % HIER_LINE) % HIER_LINE;
    H->count = xmalloc((size_t)H->m * sizeof *H->count);
    H->seg = xmalloc((size_t)H->m * sizeof *H->seg);
    for (int q = 0; q < H->m; q++) {
        H->count[q] = (_Atomic unsigned long long *)(at + (size_t)q * HIER_LINE);
        H->seg[q] = (float *)(at + (size_t)H->m * HIER_LINE + (size_t)q * seg_bytes);
    }
    H->result = (float *)(at + (size_t)H->m * HIER_LINE + (size_t)H->m * seg_bytes);
    atomic_init(H->count[H->j], 0);
    MPI_CHECK(ctx, MPI_Barrier(H->node));
}

void ring_hier_init(Ring *R, MPI_Comm world, size_t n, int node_max) {
    const Ctx *ctx = R->ctx;
    if (n > (size_t)INT_MAX) DIE(ctx, "hierarchical allreduce of %zu floats is too large", n);
    Hier *H = xcalloc(1, sizeof *H);
    R->hier = H;
    H->cap = n;
    H->node = hier_node_comm(ctx, R->comm, R->r, node_max);
    MPI_CHECK(ctx, MPI_Comm_size(H->node, &H->m));
    MPI_CHECK(ctx, MPI_Comm_rank(H->node, &H->j));
    MPI_CHECK(ctx, MPI_Comm_split(R->comm, H->j == 0 ? 0 : MPI_UNDEFINED, R->r, &H->leaders));
    H->nodes = 0;
    if (H->j == 0) MPI_CHECK(ctx, MPI_Comm_size(H->leaders, &H->nodes));
    MPI_CHECK(ctx, MPI_Bcast(&H->nodes, 1, MPI_INT, 0, H->node));
    /* The node's world ranks, for their doorbells. */
    H->node_world = xmalloc((size_t)H->m * sizeof *H->node_world);
    MPI_CHECK(ctx, MPI_Allgather(&R->me_world, 1, MPI_INT, H->node_world, 1, MPI_INT, H->node));
    ring_init(&H->inter, ctx, world, H->leaders, R->bells, R->poll ? RING_WAIT_POLL : RING_WAIT_SLEEP);
    if (H->m > 1) hier_window(H, ctx);
    else H->win = MPI_WIN_NULL;
}

static void hier_free(Hier *H, const Ctx *ctx) {
    ring_free(&H->inter);
    if (H->win != MPI_WIN_NULL) MPI_CHECK(ctx, MPI_Win_free(&H->win));
    if (H->leaders != MPI_COMM_NULL) MPI_CHECK(ctx, MPI_Comm_free(&H->leaders));
    if (H->node != MPI_COMM_NULL) MPI_CHECK(ctx, MPI_Comm_free(&H->node));
    free(H->count);
    free(H->seg);
    free(H->node_world);
}

void hier_shape(const Ring *R, int *node_ranks, int *node_rank, int *nodes) {
    *node_ranks = R->hier ? R->hier->m : 1;
    *node_rank = R->hier ? R->hier->j : 0;
    *nodes = R->hier ? R->hier->nodes : R->p;
}

/* Ring every sleeper of the node: an arrival may be what it waits for. */
static void wake_node(Ring *R, bool sending, bool receiving) {
    (void)sending;
    (void)receiving;
    for (int q = 0; q < R->hier->m; q++)
        if (q != R->hier->j) doorbell_ring(R->bells, R->hier->node_world[q]);
}

static void node_arrive(Ring *R, Hier *H) {
    atomic_store(H->count[H->j], ++H->arrivals);
    if (R->bells) wake_node(R, true, true);
}

/* Every node rank (leader_only: rank 0) has arrived as often as this one. */
static bool node_arrived(const Hier *H, bool leader_only) {
    for (int q = 0; q < (leader_only ? 1 : H->m); q++)
        if (atomic_load(H->count[q]) < H->arrivals) return false;
    return true;
}

/* Arrive, and wait until every rank (leader_only: the leader) has, as the
 * ring waits (waiter_pass), serving through the hook. */
static void node_barrier(Ring *R, Hier *H, bool leader_only) {
    node_arrive(R, H);
    Waiter w = waiter_start(false);
    while (!node_arrived(H, leader_only)) {
        bool got = R->service && R->service(R->service_arg);
        waiter_pass(R, &w, got, wake_node, true, true);
    }
    waiter_end(R, &w);
}

/* The leaders' ring on the node's sum, counted in R's counters. */
static void hier_inter(Ring *R, Hier *H, float *buf, size_t n) {
    Ring *L = &H->inter;
    L->service = R->service;
    L->service_arg = R->service_arg;
    L->trace = R->trace;
    uint64_t ms = L->msgs_sent, bs = L->bytes_sent, mr = L->msgs_recv, br = L->bytes_recv;
    double waited = L->wait_seconds;
    ring_allreduce(L, buf, n);
    R->msgs_sent += L->msgs_sent - ms;
    R->bytes_sent += L->bytes_sent - bs;
    R->msgs_recv += L->msgs_recv - mr;
    R->bytes_recv += L->bytes_recv - br;
    R->wait_seconds += L->wait_seconds - waited;
}

void hier_allreduce(Ring *R, float *buf, size_t n) {
    Hier *H = R->hier;
    if (!H) DIE(R->ctx, "hierarchical allreduce without ring_hier_init");
    if (n > H->cap) DIE(R->ctx, "hierarchical allreduce of %zu floats, set up for %zu", n, H->cap);
    if (R->p == 1 || n == 0) return;
    double t0 = now_seconds();
    if (H->m == 1) {
        hier_inter(R, H, buf, n); /* alone on its node: the ring on its own buffer */
    } else {
        memcpy(H->seg[H->j], buf, n * sizeof(float));
        node_barrier(R, H, false);
        size_t off, len;
        shard_range(n, H->m, H->j, &off, &len);
        memcpy(H->result + off, H->seg[0] + off, len * sizeof(float));
        for (int q = 1; q < H->m; q++) cblas_saxpy((int)len, 1.0f, H->seg[q] + off, 1, H->result + off, 1);
        if (H->nodes == 1) {
            node_barrier(R, H, false);
        } else if (H->j == 0) {
            node_barrier(R, H, false);
            hier_inter(R, H, H->result, n);
            node_arrive(R, H);
        } else {
            node_arrive(R, H);
            node_barrier(R, H, true);
        }
        memcpy(buf, H->result, n * sizeof(float));
    }
    R->rounds++;
    R->seconds += now_seconds() - t0;
}

void ring_allreduce_sum(const Ctx *ctx, float *buf, size_t n, MPI_Comm comm) {
    Ring R;
    ring_init(&R, ctx, comm, comm, NULL, RING_WAIT_POLL);
    ring_allreduce(&R, buf, n);
    ring_free(&R);
}
