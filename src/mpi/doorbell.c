/* SPDX-License-Identifier: MIT */
/* doorbell.c: see doorbell.h. */
#include "doorbell.h"
#include "mpicheck.h"
#include "util.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <sched.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BELL_STRIDE 64
#define BELL_FLAG_OFFSET 32 /* sem_t is 32 bytes on Linux */
_Static_assert(sizeof(sem_t) <= BELL_FLAG_OFFSET, "sem_t does not fit its slot");

static sem_t *sem_of(const Doorbells *d, int slot) { return (sem_t *)(d->slots + (size_t)slot * BELL_STRIDE); }
static atomic_int *flag_of(const Doorbells *d, int slot) {
    return (atomic_int *)(d->slots + (size_t)slot * BELL_STRIDE + BELL_FLAG_OFFSET);
}

void machine_comm(const Ctx *ctx, MPI_Comm world, MPI_Comm *machine) {
    char id[128] = "";
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (!f || !fgets(id, sizeof id, f)) gethostname(id, sizeof id - 1);
    if (f) fclose(f);
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (const char *c = id; *c && *c != '\n'; c++) h = (h ^ (uint8_t)*c) * 1099511628211ULL;
    MPI_CHECK(ctx, MPI_Comm_split(world, (int)(h & 0x7fffffff), ctx->rank, machine));
}

/* How many ranks of world run on this machine. Collective over world. */
static int machine_ranks(const Ctx *ctx, MPI_Comm world) {
    MPI_Comm m;
    machine_comm(ctx, world, &m);
    int n = 0;
    MPI_CHECK(ctx, MPI_Comm_size(m, &n));
    MPI_CHECK(ctx, MPI_Comm_free(&m));
    return n;
}

void doorbell_init(Doorbells *d, const Ctx *ctx, MPI_Comm world) {
    memset(d, 0, sizeof *d);
    d->win = MPI_WIN_NULL;
    const char *env = getenv("COMM_DOORBELLS");
    int want = !(env && !strcmp(env, "0"));
    MPI_Comm node;
    MPI_CHECK(ctx, MPI_Comm_split_type(world, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    int n_node = 0, me = 0;
    MPI_CHECK(ctx, MPI_Comm_size(node, &n_node));
    MPI_CHECK(ctx, MPI_Comm_rank(node, &me));
    d->n_node = n_node;
    d->remote = n_node < ctx->size;
    d->n_machine = machine_ranks(ctx, world);
    cpu_set_t set;
    d->n_cpus = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
    /* A rank pinned to one core (run.pin_cores) still shares the node's
     * cores with the others: count the node's CPUs, not the mask. */
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    if (online > d->n_cpus) d->n_cpus = (int)online;
    /* Every rank of the node must agree, or none uses bells. */
    MPI_CHECK(ctx, MPI_Allreduce(MPI_IN_PLACE, &want, 1, MPI_INT, MPI_MIN, node));
    if (want) {
        void *base = NULL;
        MPI_Aint bytes = me == 0 ? (MPI_Aint)n_node * BELL_STRIDE : 0;
        MPI_CHECK(ctx, MPI_Win_allocate_shared(bytes, 1, MPI_INFO_NULL, node, &base, &d->win));
        MPI_Aint size;
        int disp;
        MPI_CHECK(ctx, MPI_Win_shared_query(d->win, 0, &size, &disp, &base));
        d->slots = base;
        if (me == 0)
            for (int i = 0; i < n_node; i++) {
                if (sem_init(sem_of(d, i), 1, 0) != 0) DIE(ctx, "sem_init: %s", strerror(errno));
                atomic_init(flag_of(d, i), 0);
            }
        MPI_CHECK(ctx, MPI_Barrier(node));
        /* world rank -> slot, -1 for ranks on other nodes */
        MPI_Group wg, ng;
        MPI_CHECK(ctx, MPI_Comm_group(world, &wg));
        MPI_CHECK(ctx, MPI_Comm_group(node, &ng));
        int n_world = ctx->size;
        int *ranks = xmalloc((size_t)n_world * sizeof(int));
        d->slot_of = xmalloc((size_t)n_world * sizeof(int));
        for (int i = 0; i < n_world; i++) ranks[i] = i;
        MPI_CHECK(ctx, MPI_Group_translate_ranks(wg, n_world, ranks, ng, d->slot_of));
        for (int i = 0; i < n_world; i++)
            if (d->slot_of[i] == MPI_UNDEFINED) d->slot_of[i] = -1;
        free(ranks);
        MPI_CHECK(ctx, MPI_Group_free(&wg));
        MPI_CHECK(ctx, MPI_Group_free(&ng));
    }
    MPI_CHECK(ctx, MPI_Comm_free(&node));
}

void doorbell_free(Doorbells *d, const Ctx *ctx) {
    if (d->win != MPI_WIN_NULL) MPI_CHECK(ctx, MPI_Win_free(&d->win));
    d->win = MPI_WIN_NULL;
    d->slots = NULL;
    free(d->slot_of);
    d->slot_of = NULL;
}

void doorbell_ring(Doorbells *d, int rank) {
    if (!d->slots || d->slot_of[rank] < 0) return;
    int slot = d->slot_of[rank];
    atomic_thread_fence(memory_order_seq_cst);
    if (atomic_load(flag_of(d, slot))) sem_post(sem_of(d, slot));
}

void doorbell_arm(Doorbells *d, int me) { atomic_store(flag_of(d, d->slot_of[me]), 1); }

void doorbell_disarm(Doorbells *d, int me) { atomic_store(flag_of(d, d->slot_of[me]), 0); }

bool doorbell_wait(Doorbells *d, int me, double seconds) {
    int slot = d->slot_of[me];
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    long ns = ts.tv_nsec + (long)(seconds * 1e9);
    ts.tv_sec += ns / 1000000000L;
    ts.tv_nsec = ns % 1000000000L;
    bool rung = sem_timedwait(sem_of(d, slot), &ts) == 0;
    atomic_store(flag_of(d, slot), 0);
    if (rung)
        while (sem_trywait(sem_of(d, slot)) == 0) {
        }
    return rung;
}
