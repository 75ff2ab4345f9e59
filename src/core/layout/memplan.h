/* SPDX-License-Identifier: MIT */
/* memplan.h: the memory plan of a run: from the config alone, the bytes
 * every rank will allocate, and whether the ranks of one machine fit in its
 * memory. No MPI, no allocation, nothing written.
 *
 * Every large buffer of gorila is allocated once, at start-up, sized from
 * the config (STYLE.md), so the plan can be computed before anything is
 * allocated: `gorila config check` prints it and refuses (exit 2) a config
 * whose ranks do not fit this machine; `gorila train` runs the same check
 * before it allocates (the local trainer in cmd_train.c; a job in job.c, per
 * machine, each machine's ranks against that machine's memory).
 *
 * Each item mirrors one allocation of the code (replaybuf.c, sumtree.c,
 * replaystore.c, qnet.c, dqn.c, optim.c, nstep.c, actorcore.c,
 * evaluator.c, agentcfg.c, trace.c and the roles in src/mpi) byte for byte,
 * alignment padding included; tests/unit/test_memplan.c compares the items
 * with what those functions really allocate (glibc's mallinfo2). Small
 * fixed structures (counters, per-rank records, a few KiB each) are not
 * items: MEMPLAN_RANK_BASE covers them with the code, libraries and MPI.
 *
 * What the check compares: the sum over the machine's ranks of (plan +
 * MEMPLAN_RANK_BASE) against the usable memory, MEMPLAN_USABLE of what the
 * machine can give now (memplan_machine): MemAvailable of /proc/meminfo, or
 * the cgroup's memory limit when lower, or GORILA_MEM_LIMIT when set.
 */
#ifndef GORILA_MEMPLAN_H
#define GORILA_MEMPLAN_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "config.h"
#include "ctx.h"
#include "layout.h"

/* Per rank, beyond its plan: code, OpenBLAS, Open MPI's shared-memory
 * segments, stacks and the small structures the plan leaves out. Measured
 * peak resident set: 7 MiB for a local CartPole run, 17-18 MiB per rank of
 * the default 5-rank job on one node; doubled for jobs with more peers. */
#define MEMPLAN_RANK_BASE ((uint64_t)32 << 20)
/* Fraction of the available memory the job may plan to use: the rest is
 * left to the page cache, the kernel and whatever else starts meanwhile. */
#define MEMPLAN_USABLE 0.9

/* The sizes of src/mpi's own fixed buffers, which the plan mirrors (it is
 * computed below src/mpi); comm.c and allreduce.c assert that they agree. */
#define MEMPLAN_CTL_SLOTS 64        /* comm.h COMM_CTL_SLOTS: control message buffers per rank */
#define MEMPLAN_CTL_PAYLOAD 8192    /* comm.h COMM_CTL_BYTES less the header: payload of each */
#define MEMPLAN_RING_SCRATCH 524288 /* allreduce.c ring_init: floats of a Ring's scratch */

#define MEMPLAN_MAX_ITEMS 24
#define MEMPLAN_SOURCE_LEN 128

typedef struct {
    const char *what;  /* "replay storage" (a static string) */
    const char *key;   /* the config key that sizes it ("replay.capacity"), or NULL for a fixed buffer */
    uint64_t bytes;    /* as requested from malloc, alignment padding included */
    bool transient;    /* freed again: only at start-up, or only while a checkpoint is written or read */
} MemItem;

typedef struct {
    Role role;
    int index;
    int n;                            /* items */
    MemItem item[MEMPLAN_MAX_ITEMS];
    uint64_t total;                   /* sum of the items (transient ones included: the peak) */
} MemRank;

typedef struct {
    int n_ranks;                      /* ranks planned */
    int count[ROLE_COUNT];            /* of each role */
    MemRank largest[ROLE_COUNT];      /* the role's largest rank (where count > 0) */
    bool uneven[ROLE_COUNT];          /* the role's ranks differ in size */
    uint64_t total;                   /* the plans of all ranks planned */
    uint64_t need;                    /* total + n_ranks * MEMPLAN_RANK_BASE */
    /* The key behind the largest part of need (NULL when fixed buffers
     * are larger than any keyed one), where it weighs most, and how much.
     * A part is what one key sizes over all ranks, or the per-rank base
     * (MEMPLAN_RANK_BASE) of a role's ranks, which its rank count sizes
     * (roles.actors, ...; key_is_count). */
    const char *key;
    Role key_role;                    /* the role whose ranks hold most of it */
    uint64_t key_rank_bytes;          /* its bytes on that role's largest rank */
    bool key_is_count;                /* key is a role's rank count (roles.actors, ...) */
} MemPlan;

typedef struct {
    uint64_t available;               /* bytes this machine can give the job now */
    uint64_t usable;                  /* MEMPLAN_USABLE of available */
    char source[MEMPLAN_SOURCE_LEN];  /* where available came from, for messages */
} MemMachine;

/* The plan of the rank (role, index) of the job cfg and lay describe
 * (ROLE_LOCAL, 0 for a local run). Returns 0, or -1 with err when cfg's
 * network is not valid (agentcfg_qnet). */
int memplan_rank(const Config *cfg, const Layout *lay, Role role, int index, MemRank *out, char *err);

/* The plan of ranks[0 .. n) of the job (n >= 1; ranks as in layout.h), or
 * of every rank when ranks is NULL (n ignored). Returns 0 or -1 with err. */
int memplan_ranks(const Config *cfg, const Layout *lay, const int *ranks, int n, MemPlan *plan, char *err);

/* This machine's memory: GORILA_MEM_LIMIT when set (bytes, or with a
 * binary suffix K, M, G or T: "512M", "1.5G"; meant for tests, and for
 * checking a multi-host job from a machine that is not one of its hosts),
 * else MemAvailable of /proc/meminfo (MemTotal on kernels without it),
 * lowered to the memory limit of the process's cgroup (v2 memory.max, v1
 * memory.limit_in_bytes at /sys/fs/cgroup) when that is lower. Returns 0,
 * or -1 with err (a GORILA_MEM_LIMIT that is not a size, no /proc/meminfo). */
int memplan_machine(MemMachine *m, char *err);

/* Pieces of memplan_machine, for tests. A size as GORILA_MEM_LIMIT takes
 * it (a positive number of bytes, optionally with K, M, G or T, then an
 * optional "iB" or "B"): 0 or -1 with err. MemAvailable (else MemTotal) of
 * a /proc/meminfo text in bytes: 0, or -1 when neither is there. */
int memplan_parse_size(const char *s, uint64_t *bytes, char *err);
int memplan_parse_meminfo(const char *text, uint64_t *bytes, bool *total_only);

/* 0 when plan->need fits m->usable. Otherwise -1 with one line in err that
 * names the key behind the largest part, its value, what it needs per rank
 * and what the machine has:
 *   replay.capacity: 1000000000 needs 41.0 GiB per replay shard (replay
 *   storage, ...); the 5 ranks on this machine need 41.2 GiB in all and it
 *   has 19.6 GiB usable (90% of MemAvailable 21.8 GiB): lower replay.capacity
 * or, when the per-rank base of a role's ranks is the largest part:
 *   roles.actors: 1024 actor ranks need 32.0 GiB for code, libraries and MPI
 *   alone (32.0 MiB each, before their buffers); the 1028 ranks ...: lower
 *   roles.actors */
int memplan_check(const Config *cfg, const MemPlan *plan, const MemMachine *m, char *err);

/* The whole check, as gorila train runs it before allocating: the plan of
 * ranks[0 .. n) of the job (NULL: every rank), this machine's memory and
 * memplan_check. Returns 0 when they fit, -1 with err when they do not or
 * when this machine's memory cannot be known (memplan_machine's errors). */
int memplan_fits(const Config *cfg, const Layout *lay, const int *ranks, int n, char *err);

/* Print the plan: per role, its ranks, each rank's items and total; then
 * the machine line (m may be NULL: no machine line). */
void memplan_print(const MemPlan *plan, const MemMachine *m, FILE *f);

/* The memory cgroup of a /proc/self/cgroup text (modified: split into
 * lines): v2's "0::PATH" line, or v1's line whose controllers include
 * "memory" (which wins; *v1 says which). PATH into path (cap bytes). 0, or
 * -1 when the text names none. memplan_machine reads the memory limit of
 * that cgroup and of each of its ancestors, and plans within the tightest. */
int memplan_parse_cgroup(char *text, char *path, size_t cap, bool *v1);

#endif
