/* SPDX-License-Identifier: MIT */
/* doorbell.h: same-node wake-ups for sleeping ranks.
 *
 * Open MPI's blocking calls spin on the progress engine, so gorila's ranks
 * sleep between polls (comm.h). Sleeping alone trades latency for CPU: a
 * rank that sleeps 1 ms between polls adds up to 1 ms to every message it
 * waits for. So the ranks of one node share one POSIX semaphore each, in
 * memory from MPI_Win_allocate_shared: after every send to a rank of the
 * node the sender rings the receiver's bell, and a waiting rank sleeps in
 * sem_timedwait on its own. A waiting rank uses no CPU and still wakes
 * within microseconds of a message.
 *
 * Each rank's slot is one cache line: the semaphore, then a flag the rank
 * raises while it sleeps, so that senders ring only sleepers (a sem_post to
 * a running rank is a wasted system call, often an inter-processor
 * interrupt). The handshake that loses no wake-up:
 *
 *   sleeper                          sender
 *   doorbell_arm (flag = 1)          MPI_Isend
 *   last look for messages           fence; if flag: sem_post   (doorbell_ring)
 *   doorbell_wait (sem_timedwait)
 *
 * With sequentially consistent stores one of the two sides sees the other:
 * either the last look finds the message, or the sender sees the flag.
 */
#ifndef GORILA_DOORBELL_H
#define GORILA_DOORBELL_H

#include <mpi.h>
#include <stdbool.h>

#include "ctx.h"

typedef struct {
    MPI_Win win;   /* MPI_WIN_NULL: no bells (COMM_DOORBELLS=0) */
    char *slots;   /* one BELL_STRIDE slot per node-local rank */
    int *slot_of;  /* (world size) slot of each world rank, -1 off this node */
    int n_node;    /* ranks of the job on this node (set with or without bells) */
    int n_machine; /* ranks of the job on this machine (same kernel boot id): more than n_node
                      when nodes are simulated on one machine (scripts/simcluster) */
    bool remote;   /* some ranks of the job are on other nodes: their messages ring no bell */
    int n_cpus;    /* CPUs of this machine */
} Doorbells;

/* Collective over world: every rank calls it once. Skipped on every rank
 * of a node when any of them has COMM_DOORBELLS=0 in its environment
 * (then doorbell_enabled is false and every wait is a timed sleep). */
void doorbell_init(Doorbells *d, const Ctx *ctx, MPI_Comm world);
/* Collective (the shared window). Safe on a zeroed struct. */
void doorbell_free(Doorbells *d, const Ctx *ctx);

static inline bool doorbell_enabled(const Doorbells *d) { return d->slots != NULL; }

/* The ranks of world on this machine: those whose kernel boot id
 * (/proc/sys/kernel/random/boot_id; the hostname where there is none)
 * equals ours, in world order. Simulated nodes (UTS namespaces,
 * scripts/simcluster) share the boot id and the cores, so they are one
 * machine here while MPI sees separate nodes. Collective over world. */
void machine_comm(const Ctx *ctx, MPI_Comm world, MPI_Comm *machine);

/* More ranks on this machine than CPUs to run them: a waiting rank must
 * not spin. */
static inline bool doorbell_oversubscribed(const Doorbells *d) { return d->n_machine > d->n_cpus; }

/* After a send to world rank `rank`: wake it if it sleeps on this node. */
void doorbell_ring(Doorbells *d, int rank);

/* Raise my sleeping flag; the caller then takes its last look for messages
 * and either doorbell_disarm (found one) or doorbell_wait. */
void doorbell_arm(Doorbells *d, int me);
void doorbell_disarm(Doorbells *d, int me);
/* Sleep until rung or `seconds` passed; lowers the flag. True when rung
 * (further rings are swallowed: what they announced is visible to the next
 * poll). */
bool doorbell_wait(Doorbells *d, int me, double seconds);

#endif
