/* SPDX-License-Identifier: MIT */
/* allreduce.h: ring and naive (driver) allreduce (sum) on point-to-point
 * MPI, sharing one Ring: its waits, its service hook, its counters.
 *
 * Ring.
 *
 * The buffer of n floats is cut into p blocks with shard_range(n, p, b).
 * With r = this rank in comm and all block indices mod p:
 *
 *   reduce-scatter, step s = 0 .. p-2:
 *       send block (r - s), receive block (r - s - 1) and add it in
 *   after it, rank r holds the full sum of block (r + 1)
 *   allgather,      step s = 0 .. p-2:
 *       send block (r + 1 - s), receive block (r - s) and copy it in
 *
 * Trace for p = 3 (a_b: block b summed over the ranks listed):
 *   start         r0: a0 a1 a2      r1: b0 b1 b2      r2: c0 c1 c2
 *   rs s=0        r0 gets c2        r1 gets a0        r2 gets b1
 *                 r0: .. .. ac2     r1: ab0 .. ..     r2: .. bc1 ..
 *   rs s=1        r0 gets bc1       r1 gets ac2       r2 gets ab0
 *                 r0: abc1          r1: abc2          r2: abc0
 *   ag s=0,1      each full block travels round the ring twice more
 *
 * Each rank sends and receives 2 (p-1)/p * n floats in total, whatever p.
 * The floating-point sum of each block is accumulated in ring order
 * starting at the block's owner, identical on every rank afterwards (all
 * ranks end with bit-identical buffers), but not necessarily equal to a
 * different summation order such as MPI_Allreduce's.
 *
 * Segments. A block of up to RING_WHOLE floats travels as one message (one
 * rendezvous, one single-copy transfer). A larger one travels as several
 * messages of RING_SEGMENT floats, with up to RING_DEPTH receives posted at
 * once into their own scratch segments: a segment is added in while the
 * next ones arrive, and the scratch (4 x 256 KiB) stays in cache, where one
 * scratch block as large as the block would be one more pass through
 * memory per step. Not smaller: Open MPI sends the first 32 KiB of every
 * large shared-memory message through its FIFO (two copies) and only the
 * rest by single copy, so small segments double-copy more of the data.
 *
 * Naive (driver). Every rank sends its whole buffer to rank 0, the driver;
 * the driver adds them in and sends the sum back to every rank:
 *
 *   start         r0: a           r1: b           r2: c
 *   gather        r0 gets b, then c, and adds them in that order: (a+b)+c
 *   broadcast     r1, r2 get (a+b)+c from r0: the same bits everywhere
 *
 * The driver sends and receives (p-1) n floats, every other rank n: the
 * driver's link carries p/2 times what a ring rank's does, and its adds
 * are serial. The sum of every element is accumulated in rank order
 * (rank 0's own, then 1, 2, ...) whatever order the messages arrive in,
 * so the result depends on the inputs only. The buffer travels in
 * segments of up to RING_SEGMENT floats, segment by segment from every
 * rank in turn, with up to RING_DEPTH receives in flight at the driver
 * (its scratch is the ring's); a segment summed over all ranks goes out
 * to every rank at once, while the next ones still arrive. A rank posts
 * the receive of a segment of the sum once its send of that segment has
 * completed (the same memory). It waits as the ring does (below), its
 * doorbells rung by and ringing the driver instead of the neighbours.
 *
 * Waiting (both). A rank that has a core to itself polls (MPI_Testsome in a
 * loop). One that shares its core (more ranks on the node than cores)
 * polls for up to RING_SPIN after its last progress (Open MPI yields the
 * core inside each test when oversubscribed) and then sleeps on its
 * doorbell (doorbell.h), which its peers ring: the sender after posting
 * a send to it, the receiver after completing a receive from it (a large
 * send completes only when the receiver has pulled it), and both before
 * they go to sleep after progress of their own (which may have pushed out
 * what MPI had queued). While it waits it calls the caller's `service`
 * hook, so a learner keeps answering its main communicator (parameter
 * requests, batches, STOP) during the allreduce.
 *
 * Hierarchical (ring_hier_init, hier_allreduce). What Horovod and NCCL do
 * within a node: the ranks of the ring that share memory
 * (MPI_Comm_split_type MPI_COMM_TYPE_SHARED of its communicator, in its
 * rank order) sum through an MPI-3 shared window, and the ring runs only
 * among the nodes' first ranks (their leaders). With m ranks on a node,
 * node rank j, the buffer cut into m slices by shard_range(n, m, .):
 *
 *   copy in       rank j copies its buffer into its own segment S_j
 *   barrier 1     every rank of the node has written
 *   slice sum     rank j: R[slice j] = S_0 + S_1 + ... + S_{m-1} (slice j,
 *                 in node rank order: one rounded addition each, saxpy)
 *   barrier 2     R holds the node's sum
 *   ring          the leaders: ring_allreduce of R among the nodes (none
 *                 with one node), then barrier 3 (the others wait for the
 *                 leader only)
 *   copy out      every rank copies R into its buffer
 *
 *   trace, 1 node of 2:  r0: S_0 = a       r1: S_1 = b
 *                        r0: R[0] = a0+b0  r1: R[1] = a1+b1
 *                        both copy R = (a+b) out
 *
 * Each element is summed by one rank, so every rank ends with the same
 * bits: the node's sum in node rank order, then the ring's order among
 * the nodes. A rank's next S_j write waits at the next call's barrier 1
 * for nothing: every slice sum read the segments before barrier 2 (one
 * node) or before its leader passed barrier 2, which barrier 3 follows;
 * R is written again only after the next barrier 1, when every rank has
 * copied it out. So two barriers a call on one node, three across nodes.
 *
 * A barrier is a counter per node rank in the window (one cache line
 * each): a rank arrives by storing its count of arrivals (a sequentially
 * consistent C11 atomic store, after its writes to the window) and ringing
 * the doorbells of the node's sleepers; it passes when the counter of
 * every rank it waits for (barrier 3: the leader's) has reached its own.
 * Counters only grow, and no rank arrives twice before every rank has
 * arrived once, so a count identifies one barrier. The loads are atomic
 * too (acquire): what a rank wrote before its arrival is visible to the
 * rank that sees the arrival (the window is ordinary shared memory in
 * Open MPI's unified model; the doorbells' flags rely on the same). It
 * waits as the ring does (polling or sleeping on its doorbell, serving
 * through the hook), not in MPI_Barrier, which spins and serves nothing.
 */
#ifndef GORILA_ALLREDUCE_H
#define GORILA_ALLREDUCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <mpi.h>

#include "ctx.h"
#include "doorbell.h"
#include "trace.h"

#define RING_SEGMENT 65536  /* floats per message of a large block (256 KiB) */
#define RING_DEPTH 4        /* receives of one step in flight at once */
#define RING_WHOLE 524288   /* floats: a block up to this size (2 MiB) goes as one message */
#define RING_SPIN 1e-3      /* sleep mode: seconds of polling since the last progress before sleeping */

typedef enum { RING_WAIT_AUTO = 0, RING_WAIT_POLL, RING_WAIT_SLEEP } RingWait;

typedef struct Hier Hier; /* the hierarchical allreduce's node window (allreduce.c) */

typedef struct {
    const Ctx *ctx;
    MPI_Comm comm;              /* the ring's ranks (not owned) */
    int p, r, left, right;      /* size, rank, neighbours in comm */
    int peer_world;             /* pair_exchange: the partner's world rank (doorbells) */
    int left_world, right_world, me_world; /* the same in world (doorbells) */
    int *world_of;              /* (p) world rank of each rank of comm (doorbells) */
    Doorbells *bells;           /* world's doorbells, or NULL */
    bool poll;                  /* RING_WAIT_POLL chosen (or by auto) */
    bool remote;                /* a neighbour is on another node (its sends ring no bell) */
    bool remote_naive;          /* naive: a rank this one exchanges with (rank 0, or any
                                   for rank 0) is on another node */
    /* called while waiting; returns true when it did something (handled a
     * message). NULL: nothing to serve. */
    bool (*service)(void *arg);
    void *service_arg;
    Trace *trace;               /* spans TR_RING_RS / TR_RING_AG (ring only), or NULL */
    float *tmp;                 /* RING_DEPTH scratch segments */
    MPI_Request *req;           /* sends and receives of one step (naive: of one call) */
    int *done_idx;
    size_t req_cap;
    /* counters, cumulative over ring and naive calls; rounds: calls that
     * moved data (none with p = 1 or n = 0) */
    uint64_t msgs_sent, bytes_sent, msgs_recv, bytes_recv, rounds;
    double seconds, wait_seconds;
    Hier *hier;                 /* ring_hier_init's, or NULL */
} Ring;

/* Set up a ring over comm, a sub-communicator of world (local: no
 * messages). bells: world's doorbells, or NULL (then a sleeping wait is a
 * short timed sleep). wait: poll, sleep, or auto: poll when this node has
 * no more ranks than cores (doorbell.h counts them); the environment
 * variable GORILA_RING_WAIT=poll|sleep overrides auto. */
void ring_init(Ring *R, const Ctx *ctx, MPI_Comm world, MPI_Comm comm, Doorbells *bells, RingWait wait);
/* Collective over R->comm when ring_hier_init was called (it frees the
 * window); otherwise local. */
void ring_free(Ring *R);

/* Set up the hierarchical allreduce (above) of up to n floats on R: the
 * node communicators, the shared window (its segments of n floats) and
 * the leaders' ring (waiting as R does; its service hook and trace are
 * R's at each call). node_max > 0 caps the ranks of a node: consecutive
 * groups of node_max of its ranks act as separate nodes (tests simulate
 * several nodes on one machine with it); 0: the whole shared-memory node.
 * Collective over R->comm. */
void ring_hier_init(Ring *R, MPI_Comm world, size_t n, int node_max);

/* In-place sum of buf[0..n) (n at most ring_hier_init's) over every rank
 * of the ring by the hierarchical algorithm: bit-identical on every rank.
 * Counters: the leaders' ring messages only (the node's sum moves through
 * memory, not MPI); every rank counts a round. The leaders' ring uses tag
 * TAG_RING on their own communicator. */
void hier_allreduce(Ring *R, float *buf, size_t n);

/* The hierarchical allreduce's shape: ranks on this rank's node, this
 * rank's place among them (0: the node's leader), nodes. Without
 * ring_hier_init: every rank a node of its own. */
void hier_shape(const Ring *R, int *node_ranks, int *node_rank, int *nodes);

/* In-place sum of buf[0..n) over every rank of the ring. Messages use tag
 * TAG_RING on the ring's communicator only. MPI errors are fatal. */
void ring_allreduce(Ring *R, float *buf, size_t n);

/* In-place sum of buf[0..n) over every rank of the ring by the naive
 * (driver) algorithm above: the same result on every rank, bit for bit,
 * summed in rank order. Messages use tag TAG_NAIVE on the ring's
 * communicator only. Counters: rank 0 sends and receives (p-1) n floats a
 * call, every other rank n. MPI errors are fatal. */
void naive_allreduce(Ring *R, float *buf, size_t n);

/* Gossip's exchange: send[0..n) to ring rank peer and its n floats into
 * recv[0..n), both ways at once in segments of up to RING_SEGMENT floats
 * (every receive posted up front, in segment order), waiting as the ring
 * does and serving through the hook. send must stay unchanged until it
 * returns. Counted in the ring's counters (n floats out and in, one
 * round). Messages use tag TAG_PAIR on the ring's communicator only. */
void pair_exchange(Ring *R, const float *send, float *recv, size_t n, int peer);

/* One-call form for tests: a temporary polling Ring over comm, without
 * doorbells. */
void ring_allreduce_sum(const Ctx *ctx, float *buf, size_t n, MPI_Comm comm);

#endif
