/* SPDX-License-Identifier: MIT */
/* mpi_pingpong.c: round-trip latency of comm.c messages between two ranks,
 * on one core or on two (a benchmark, not a test: it prints, never fails on
 * time). Used for the figures in docs/ARCHITECTURE.md (placement):
 *   mpirun --oversubscribe -np 2 build/tests/mpi_pingpong [BYTES] [CORE_OF_RANK_1]
 * Rank 0 is pinned to core 0, rank 1 to CORE_OF_RANK_1 (0: same core). */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "comm.h"
#include "util.h"

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int bytes = argc > 1 ? atoi(argv[1]) : 18440;
    int core = argc > 2 ? atoi(argv[2]) : 0;
    if (bytes < 4) bytes = 4;
    Ctx ctx;
    MPI_Comm world;
    comm_world_init(&ctx, &world);
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(ctx.rank == 0 ? 0 : core, &set);
    sched_setaffinity(0, sizeof set, &set);
    Layout lay = {.size = 2};
    for (int r = 0; r < ROLE_COUNT; r++) lay.first[r] = -1;
    lay.first[ROLE_PS] = 0;
    lay.count[ROLE_PS] = 1;
    lay.first[ROLE_LEARNER] = 1;
    lay.count[ROLE_LEARNER] = 1;
    ProtoLimits lim = {.obs_dim = 4, .n_params = (size_t)bytes / 4, .max_batch = 32, .max_chunk = 16};
    Comm c;
    comm_init(&c, &ctx, world, &lay, &lim);
    if (getenv("PINGPONG_POLL")) comm_set_wait(&c, WAIT_POLL);
    SendBuf s;
    sendbuf_init(&s, (size_t)bytes);
    memset(sendbuf_payload(&s), 0, (size_t)bytes);
    const int N = 20000;
    MsgHeader h = {0};
    h.count = (uint64_t)bytes / 4;
    Msg m;
    double t0 = now_seconds(), c0 = cpu_seconds();
    for (int i = 0; i < N; i++) {
        if (ctx.rank == 1) comm_send(&c, &s, 0, TAG_GRAD, h, h.count * 4);
        while (!comm_poll(&c, &m)) comm_idle(&c);
        if (ctx.rank == 0) comm_send(&c, &s, 1, TAG_PARAMS, h, h.count * 4);
    }
    double t = now_seconds() - t0, cpu = cpu_seconds() - c0;
    if (ctx.rank == 1)
        printf("{\"bench\":\"pingpong\",\"bytes\":%d,\"same_core\":%s,\"round_trip_us\":%.2f,\"cpu_per_round_trip_us\":%.2f}\n",
               bytes, core == 0 ? "true" : "false", 1e6 * t / N, 1e6 * cpu / N);
    comm_wait_send(&c, &s);
    sendbuf_free(&s);
    comm_free(&c);
    comm_world_free(&ctx, &world);
    MPI_Finalize();
    return 0;
}
