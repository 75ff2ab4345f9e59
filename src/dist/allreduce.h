/* allreduce.h: ring allreduce (sum) on point-to-point MPI.
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
 * Waiting uses MPI_Test with the same sleeping backoff as comm.h, so a rank
 * waiting for its neighbour does not burn a core.
 */
#ifndef GORILA_ALLREDUCE_H
#define GORILA_ALLREDUCE_H

#include <stddef.h>
#include <mpi.h>

#include "ctx.h"

/* In-place sum of buf[0..n) over every rank of comm. tmp holds at least
 * ceil(n / p) floats. Messages use tag TAG_RING on comm only. Returns the
 * seconds spent waiting. MPI errors are fatal (DIE with ctx). */
double ring_allreduce_sum(const Ctx *ctx, float *buf, size_t n, float *tmp, MPI_Comm comm);

#endif
