/* allreduce.c: see allreduce.h for the algorithm and its trace. */
#include "allreduce.h"
#include "params.h"
#include "comm.h"
#include "proto.h"
#include "util.h"

#include <limits.h>
#include <string.h>

/* Wait for both requests without spinning; returns seconds waited. */
static double wait2(const Ctx *ctx, MPI_Request req[2]) {
    double t0 = now_seconds(), delay = 2e-6;
    for (;;) {
        int flag = 0;
        MPI_CHECK(ctx, MPI_Testall(2, req, &flag, MPI_STATUSES_IGNORE));
        if (flag) return now_seconds() - t0;
        sleep_seconds(delay);
        delay = delay * 2 > 1e-3 ? 1e-3 : delay * 2;
    }
}

static int mod(int a, int p) { return ((a % p) + p) % p; }

double ring_allreduce_sum(const Ctx *ctx, float *buf, size_t n, float *tmp, MPI_Comm comm) {
    int p = 1, r = 0;
    MPI_CHECK(ctx, MPI_Comm_size(comm, &p));
    MPI_CHECK(ctx, MPI_Comm_rank(comm, &r));
    if (p == 1 || n == 0) return 0.0;
    if (n / (size_t)p + 1 > (size_t)INT_MAX) DIE(ctx, "allreduce of %zu floats is too large", n);
    int right = mod(r + 1, p), left = mod(r - 1, p);
    double waited = 0;
    MPI_Request req[2];
    for (int s = 0; s < p - 1; s++) {
        size_t so, sl, ro, rl;
        shard_range(n, p, mod(r - s, p), &so, &sl);
        shard_range(n, p, mod(r - s - 1, p), &ro, &rl);
        MPI_CHECK(ctx, MPI_Irecv(tmp, (int)rl, MPI_FLOAT, left, TAG_RING, comm, &req[0]));
        MPI_CHECK(ctx, MPI_Isend(buf + so, (int)sl, MPI_FLOAT, right, TAG_RING, comm, &req[1]));
        waited += wait2(ctx, req);
        float *dst = buf + ro;
        for (size_t i = 0; i < rl; i++) dst[i] += tmp[i];
    }
    for (int s = 0; s < p - 1; s++) {
        size_t so, sl, ro, rl;
        shard_range(n, p, mod(r + 1 - s, p), &so, &sl);
        shard_range(n, p, mod(r - s, p), &ro, &rl);
        MPI_CHECK(ctx, MPI_Irecv(buf + ro, (int)rl, MPI_FLOAT, left, TAG_RING, comm, &req[0]));
        MPI_CHECK(ctx, MPI_Isend(buf + so, (int)sl, MPI_FLOAT, right, TAG_RING, comm, &req[1]));
        waited += wait2(ctx, req);
    }
    return waited;
}
