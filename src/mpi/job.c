/* SPDX-License-Identifier: MIT */
/* job.c: see job.h. */
#include "job.h"
#include "clock.h"
#include "exitcode.h"
#include "comm.h"
#include "doorbell.h"
#include "env.h"
#include "jobsummary.h"
#include "memplan.h"
#include "placement.h"
#include "signals.h"
#include "trainer.h"
#include "runckpt.h"
#include "run.h"
#include "runctl.h"
#include "util.h"
#include "version.h"

#include <inttypes.h>
#include <cblas.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>

/* Rank 0: where a resumed job starts. Fills s; s->ok = 0 with err on failure. */
static void load_start(const JobArgs *args, JobStart *s, char *err) {
    memset(s, 0, sizeof *s);
    s->ok = 1;
    if (!args->resume_dir) return;
    RunCkptManifest m;
    if (runckpt_latest(args->resume_dir, &m, err) != 0) {
        s->ok = 0;
        return;
    }
    s->resumed = 1;
    s->env_steps = m.env_steps;
    s->updates = m.updates;
    s->episodes = m.episodes;
    s->wall_seconds = m.wall_seconds;
    s->has_history = m.has_history;
    s->history = m.history;
    s->replay_files = m.n_replay;
    s->replay_transitions = m.replay_transitions;
    if (snprintf(s->ckpt_dir, sizeof s->ckpt_dir, "%s", m.dir) >= (int)sizeof s->ckpt_dir ||
        snprintf(s->run_dir, sizeof s->run_dir, "%s", args->resume_dir) >= (int)sizeof s->run_dir) {
        s->ok = 0;
        errf(err, "run directory path too long: %s", args->resume_dir);
    }
}

/* Pin this rank per placement.h when its machine has more ranks than
 * cores and nobody bound the ranks already. A machine, not an MPI node:
 * nodes simulated on one machine (scripts/simcluster) share its cores, and
 * pinning each of them alone would stack their groups on the first core.
 * Collective over args->world. Rank 0 of each machine logs the placement. */
static void pin(const Ctx *ctx, const JobArgs *args) {
    MPI_Comm node;
    machine_comm(ctx, args->world, &node);
    int n_node = 0, me = 0;
    MPI_CHECK(ctx, MPI_Comm_size(node, &n_node));
    MPI_CHECK(ctx, MPI_Comm_rank(node, &me));
    int *ranks = xmalloc((size_t)n_node * sizeof(int));
    MPI_CHECK(ctx, MPI_Allgather(&ctx->rank, 1, MPI_INT, ranks, 1, MPI_INT, node));
    MPI_CHECK(ctx, MPI_Comm_free(&node));
    cpu_set_t mask;
    CPU_ZERO(&mask);
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    bool free_to_move = sched_getaffinity(0, sizeof mask, &mask) == 0 && CPU_COUNT(&mask) == online;
    int n_cpus = CPU_COUNT(&mask);
    PinMode mode = args->cfg->run.pin_cores;
    bool python = env_extern_kind(args->cfg->env.name) != 0;
    if (mode == PIN_FALSE || (mode == PIN_AUTO && python) || !free_to_move || n_node <= n_cpus) {
        /* A Python environment's actors are each a core's worth of work:
         * pinned by role groups, two actors sat on one core with their
         * replay shard at 0.95x one actor's env steps/s, and free to move
         * the kernel spread them (2.05x; docs/PERFORMANCE.md, "Python
         * actors"). */
        if (me == 0 && mode == PIN_AUTO && python && free_to_move && n_node > n_cpus)
            log_info(ctx, "%d ranks on %d cores, not pinned (run.pin_cores auto: a Python environment's actors "
                     "are left to the kernel's balancing)", n_node, n_cpus);
        free(ranks);
        return;
    }
    int cpus[CPU_SETSIZE], k = 0;
    for (int c = 0; c < CPU_SETSIZE && k < n_cpus; c++)
        if (CPU_ISSET(c, &mask)) cpus[k++] = c;
    int *core = xmalloc((size_t)n_node * sizeof(int));
    placement_assign(args->lay, ranks, n_node, cpus, n_cpus, core);
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(core[me], &one);
    if (sched_setaffinity(0, sizeof one, &one) != 0) log_info(ctx, "could not pin to core %d", core[me]);
    if (me == 0) {
        char line[1024];
        int n = snprintf(line, sizeof line, "%d ranks on %d cores, pinned (run.pin_cores):", n_node, n_cpus);
        for (int c = 0; c < n_cpus && n < (int)sizeof line - 32; c++) {
            n += snprintf(line + n, sizeof line - (size_t)n, "  core %d: ranks", cpus[c]);
            for (int i = 0; i < n_node && n < (int)sizeof line - 16; i++)
                if (core[i] == cpus[c]) n += snprintf(line + n, sizeof line - (size_t)n, " %d", ranks[i]);
        }
        log_info(ctx, "%s", line);
    }
    free(core);
    free(ranks);
}

/* ---- The run directory, seen from every host that writes to it ----------
 *
 * The coordinator creates the run directory and writes everything in it but
 * the shard files of a checkpoint: each parameter source (every parameter
 * server, or learner 0 in allreduce mode) and, with checkpoint.save_replay,
 * each replay shard writes its own file into the checkpoint directory the
 * coordinator made (docs/MULTIHOST.md). A host that does not see the
 * directory at the same path would otherwise be found only at the first
 * checkpoint, after training, with the run ending as if its final
 * checkpoint had failed. So before any role starts (collective over world):
 *
 *   rank 0    creates the directory it will write in (a fresh run:
 *             run.out_dir, where the coordinator makes the run directory;
 *             a resume: the run directory) and in it .gorila-probe-TOKEN,
 *             holding TOKEN (64 random bits); broadcasts the directory and
 *             the token
 *   writers   open that file by the same path and find TOKEN in it, then
 *             create and remove a file of their own beside it
 *   rank 0    gathers every rank's verdict, removes its file, and names
 *             each host that failed, with its ranks and the reason
 *
 * The probe lives in run.out_dir for a fresh run because the run directory
 * does not exist yet; a run directory is made inside it, so a host that sees
 * one sees the other. If rank 0 cannot make its probe (out_dir unwritable),
 * nothing is checked here: the coordinator reports that failure itself,
 * with its usual status, when it creates the run directory. */
enum { PROBE_TOKEN_LEN = 17, PROBE_NAME_LEN = 48, PROBE_HOST_LEN = 256, PROBE_WHY_LEN = 512 };
typedef struct {
    int32_t ok;                  /* 0: rank 0 made no probe, nothing to check */
    char dir[PATH_LEN];          /* the directory probed, as every rank opens it */
    char name[PROBE_NAME_LEN];   /* the probe file's name in dir */
    char token[PROBE_TOKEN_LEN]; /* what the file holds: 16 hex digits */
} DirProbe;

typedef struct {
    int32_t bad;                 /* this rank writes into dir and cannot */
    char host[PROBE_HOST_LEN];
    char why[PROBE_WHY_LEN];
} DirVerdict;

/* Does a rank of this role write files into the run directory? */
static bool writes_run_dir(const Config *cfg, Role role, int index) {
    if (role == ROLE_PS) return true;
    if (role == ROLE_LEARNER) return layout_params_in_learner(cfg) && index == 0;
    if (role == ROLE_REPLAY) return cfg->checkpoint.save_replay;
    return false;
}

/* dir/name into out (PATH_LEN); -1 if it does not fit. */
static int probe_path(char *out, const char *dir, const char *name) {
    return snprintf(out, PATH_LEN, "%s/%s", dir, name) >= PATH_LEN ? -1 : 0;
}

/* Rank 0: create the directory and the probe file in it. 0, or -1 with err. */
static int probe_make(const JobArgs *args, DirProbe *p, char *err) {
    const char *dir = args->start.resumed ? args->start.run_dir : args->cfg->run.out_dir;
    if (snprintf(p->dir, sizeof p->dir, "%s", dir) >= (int)sizeof p->dir) return errf(err, "path too long: %s", dir);
    if (!args->start.resumed && make_dirs(p->dir, err) != 0) return -1;
    snprintf(p->token, sizeof p->token, "%016" PRIx64, random_id());
    snprintf(p->name, sizeof p->name, ".gorila-probe-%s", p->token);
    char path[PATH_LEN];
    if (probe_path(path, p->dir, p->name) != 0) return errf(err, "path too long: %s", p->dir);
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) return errf(err, "cannot create %s: %s", path, strerror(errno));
    size_t n = strlen(p->token);
    bool bad = write(fd, p->token, n) != (ssize_t)n;
    if (close(fd) != 0) bad = true;
    if (bad) {
        unlink(path);
        return errf(err, "cannot write %s", path);
    }
    p->ok = 1;
    return 0;
}

/* A writing rank: does this host see rank 0's probe, and may it create a
 * file beside it? 0, or -1 with why (what is wrong with the directory
 * "there", on this host). */
static int probe_check(const DirProbe *p, int rank, char *why) {
    char path[PATH_LEN];
    if (probe_path(path, p->dir, p->name) != 0) return errf(why, "its path is too long");
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        if (access(p->dir, F_OK) != 0) return errf(why, "it does not exist there");
        return errf(why, "it is another directory there (the coordinator's probe file %s is not in it: %s)", p->name,
                    strerror(e));
    }
    char got[PROBE_TOKEN_LEN + 1];
    ssize_t n = read(fd, got, sizeof got - 1);
    close(fd);
    got[n > 0 ? n : 0] = '\0';
    if (strcmp(got, p->token) != 0)
        return errf(why, "it is another directory there (its %s does not hold the coordinator's token)", p->name);
    char name[PROBE_NAME_LEN + 16], mine[PATH_LEN];
    snprintf(name, sizeof name, "%s-%d", p->name, rank);
    if (probe_path(mine, p->dir, name) != 0) return errf(why, "its path is too long");
    fd = open(mine, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) return errf(why, "no file can be created in it there: %s", strerror(errno));
    close(fd);
    unlink(mine);
    return 0;
}

/* Rank 0: one line per host whose writing ranks failed the probe. */
static void probe_report(const JobArgs *args, const DirProbe *p, DirVerdict *all, int size) {
    bool *done = xcalloc((size_t)size, sizeof(bool));
    for (int r = 1; r < size; r++) {
        if (!all[r].bad || done[r]) continue;
        all[r].host[PROBE_HOST_LEN - 1] = all[r].why[PROBE_WHY_LEN - 1] = '\0';
        fprintf(stderr, "gorila: error: %s (", all[r].host);
        for (int q = r; q < size; q++) {
            if (!all[q].bad || done[q] || strcmp(all[q].host, all[r].host) != 0) continue;
            done[q] = true;
            Role role;
            int idx;
            layout_role_of(args->lay, q, &role, &idx);
            fprintf(stderr, "%srank %d %s %d", q == r ? "" : ", ", q, role_name(role), idx);
        }
        fprintf(stderr,
                ") does not share %s %s with the coordinator on %s: %s; every host that runs a parameter server or a "
                "replay shard writes checkpoint files into the run directory and must see it at the same path, a "
                "shared filesystem (docs/MULTIHOST.md)\n",
                args->start.resumed ? "the run directory" : "run.out_dir", p->dir, all[0].host, all[r].why);
    }
    free(done);
}

/* The check above. Returns 0, or -1 on every rank when a writing rank's
 * host does not share the directory (rank 0 has said which). */
static int check_run_dir(const Ctx *ctx, const JobArgs *args) {
    DirProbe p;
    memset(&p, 0, sizeof p);
    char err[ERR_LEN] = "";
    if (ctx->rank == 0 && probe_make(args, &p, err) != 0) p.ok = 0;
    MPI_CHECK(ctx, MPI_Bcast(&p, sizeof p, MPI_BYTE, 0, args->world));
    if (!p.ok) return 0;
    DirVerdict me;
    memset(&me, 0, sizeof me);
    host_name(me.host, sizeof me.host, "?");
    if (ctx->rank != 0 && writes_run_dir(args->cfg, ctx->role, ctx->index))
        me.bad = probe_check(&p, ctx->rank, me.why) != 0;
    DirVerdict *all = ctx->rank == 0 ? xmalloc((size_t)ctx->size * sizeof *all) : NULL;
    MPI_CHECK(ctx, MPI_Gather(&me, sizeof me, MPI_BYTE, all, sizeof me, MPI_BYTE, 0, args->world));
    int n_bad = 0;
    if (ctx->rank == 0) {
        char path[PATH_LEN];
        if (probe_path(path, p.dir, p.name) == 0) unlink(path);
        for (int r = 1; r < ctx->size; r++) n_bad += all[r].bad != 0;
        if (n_bad) probe_report(args, &p, all, ctx->size);
        free(all);
    }
    MPI_CHECK(ctx, MPI_Bcast(&n_bad, 1, MPI_INT, 0, args->world));
    return n_bad ? -1 : 0;
}

/* The test-only resume's stop check: a stop signal gives the test up. */
static bool signalled(void *arg) {
    (void)arg;
    return signals_stop_requested();
}

/* Wait for every rank without spinning a core (MPI_Barrier would). */
static void idle_barrier(const Ctx *ctx, MPI_Comm world) {
    MPI_Request req;
    MPI_CHECK(ctx, MPI_Ibarrier(world, &req));
    int done = 0;
    for (;;) {
        MPI_CHECK(ctx, MPI_Test(&req, &done, MPI_STATUS_IGNORE));
        if (done) return;
        sleep_seconds(1e-3);
    }
}

/* Rank 0 of a resume whose training is complete (done) but whose held-out
 * test is owed (run_test_pending): the run directory reopened as the
 * coordinator would, only the test run, summary.json written
 * (run_test_only). The other ranks wait in idle_barrier. Returns the exit
 * status. */
static int test_only(const Ctx *ctx, const JobArgs *args, StopReason done) {
    const Config *cfg = args->cfg;
    const JobStart *js = &args->start;
    char err[ERR_LEN];
    RunStart start = {.resumed = true, .run_dir = js->run_dir, .env_steps = js->env_steps, .updates = js->updates,
                      .episodes = js->episodes, .wall_seconds = js->wall_seconds,
                      .has_history = js->has_history != 0, .history = js->history};
    RunCkptManifest man;
    if (runckpt_read_manifest(js->ckpt_dir, &man, err) == 0) start.ckpt_seq = man.seq;
    Trace trace;
    trace_init(&trace, 0);
    Run *r = xcalloc(1, sizeof *r);
    run_init(r, cfg, ctx, config_sync_name(cfg->sync.mode), &trace, &start);
    JobSummaryColumns cols;
    jobsummary_columns(&cols);
    int rc = run_open(r, cols.name, JOBSUM_EXTRA, err);
    if (rc != 0) fprintf(stderr, "gorila: error: %s\n", err);
    else {
        run_set_abandon(r, signalled, NULL);
        rc = run_test_only(r, done);
    }
    run_free(r);
    free(r);
    trace_free(&trace);
    return rc;
}

int job_run(Ctx *ctx, JobArgs *args) {
    const Layout *lay = args->lay;
    layout_role_of(lay, ctx->rank, &ctx->role, &ctx->index);
    ctx->count = lay->count[ctx->role];
    ctx->t0 = now_seconds();
    /* Waits sleep 20 us .. 1 ms (comm.h); the default 50 us timer slack
     * would stretch the short ones several times over. */
    prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
    openblas_set_num_threads(args->cfg->run.blas_threads);
    signals_install(SIGNALS_SECOND_IGNORED);
    /* Start-up collectives (short, before any role loop): where to start,
     * and the learners' own communicator for the ring allreduce. */
    char err[ERR_LEN] = "";
    if (ctx->rank == 0) load_start(args, &args->start, err);
    MPI_CHECK(ctx, MPI_Bcast(&args->start, sizeof args->start, MPI_BYTE, 0, args->world));
    if (!args->start.ok) {
        if (ctx->rank == 0) fprintf(stderr, "gorila: error: cannot resume: %s\n", err);
        return GORILA_EXIT_CKPT_READ; /* deterministic: a restart would fail the same way */
    }
    /* A resumed run that already met its stop condition has nothing to do
     * (every rank sees the same start and leaves with 0, nothing written),
     * but for its held-out test when that is owed: rank 0 runs it. */
    if (args->start.resumed) {
        StopReason done = runctl_resume_done(args->cfg, args->start.env_steps, args->start.updates,
                                             args->start.wall_seconds, args->start.has_history && args->start.history.solved);
        int owed = ctx->rank == 0 && args->cfg->eval.test_episodes > 0 && run_test_pending(args->start.run_dir);
        MPI_CHECK(ctx, MPI_Bcast(&owed, 1, MPI_INT, 0, args->world));
        if (done != STOP_NONE && owed) {
            int rc = ctx->rank == 0 ? test_only(ctx, args, done) : 0;
            idle_barrier(ctx, args->world);
            return rc;
        }
        if (done != STOP_NONE) {
            if (ctx->rank == 0) {
                char line[RUNCTL_LINE_LEN];
                runctl_done_line(line, sizeof line, args->start.run_dir, done, args->start.env_steps,
                                 args->start.updates, args->start.has_history ? &args->start.history : NULL);
                printf("%s\n", line);
                fflush(stdout);
            }
            return 0;
        }
    }
    /* A run directory that a writing rank's host does not share is a fault
     * of the set-up, found before anything is trained or written: status 2
     * (EXIT_USAGE_JOB), as for ranks of different builds. Not 3, which says
     * a final checkpoint failed after training, and not 1: a restart on the
     * same hosts and directory would fail the same way. */
    if (check_run_dir(ctx, args) != 0) return EXIT_USAGE_JOB;
    MPI_CHECK(ctx, MPI_Comm_split(args->world, ctx->role == ROLE_LEARNER ? 1 : MPI_UNDEFINED, ctx->rank, &args->learners));
    pin(ctx, args);
    if (ctx->rank == 0) {
        printf("job: %d ranks in fixed order: coordinator, actors, replay shards, learners, parameter servers\n",
               lay->size);
        layout_print(lay, stdout);
        if (args->start.resumed && args->start.replay_files > 0)
            printf("resuming from %s: %" PRIu64 " env steps, %" PRIu64 " updates, %" PRIu64 " replay transitions in %d file%s%s\n",
                   args->start.ckpt_dir, args->start.env_steps,
                   args->start.updates, args->start.replay_transitions,
                   (int)args->start.replay_files, args->start.replay_files == 1 ? "" : "s",
                   args->cfg->checkpoint.save_replay ? "" : " (not restored: checkpoint.save_replay is off)");
        else if (args->start.resumed)
            printf("resuming from %s: %" PRIu64 " env steps, %" PRIu64 " updates\n", args->start.ckpt_dir,
                   args->start.env_steps, args->start.updates);
        fflush(stdout);
    }
    int rc;
    switch (ctx->role) {
    case ROLE_COORD: rc = coordinator_run(ctx, args); break;
    case ROLE_ACTOR: rc = actor_run(ctx, args); break;
    case ROLE_REPLAY: rc = replay_run(ctx, args); break;
    case ROLE_LEARNER: rc = learner_run(ctx, args); break;
    case ROLE_PS: rc = ps_run(ctx, args); break;
    default: DIE(ctx, "rank %d has no distributed role", ctx->rank);
    }
    if (args->learners != MPI_COMM_NULL) MPI_CHECK(ctx, MPI_Comm_free(&args->learners));
    return rc;
}

void job_mpi_env(void) {
    /* Shared-memory messages up to 32 KiB go eagerly through the FIFOs
     * instead of the rendezvous + process_vm_readv path: a learner's GRAD
     * and PARAMS of a 64-64 CartPole network are 18 KiB each, and the
     * default job ran ~10% faster (measured, interleaved runs). A user's
     * own setting wins. */
    setenv("OMPI_MCA_btl_vader_eager_limit", "32768", 0);
}

/* Start-up check, the first collective of every job (keep it first and
 * keep its message fixed: ranks of another build must still understand
 * it): every rank's build (version.h) and host name go to every rank; if
 * they differ, rank 0 names the builds and the hosts that run them and
 * every rank leaves with EXIT_USAGE_JOB, before anything is read or
 * written. Also gives each rank its host name for later messages. */
enum { BUILD_LEN = 96, HOST_LEN = 64 };
typedef struct {
    char build[BUILD_LEN];
    char host[HOST_LEN];
} RankId;

static int check_builds(const Ctx *ctx, MPI_Comm world, char *host) {
    RankId me;
    memset(&me, 0, sizeof me);
    snprintf(me.build, sizeof me.build, "%s", gorila_build());
    host_name(me.host, sizeof me.host, "?");
    snprintf(host, HOST_LEN, "%s", me.host);
    RankId *all = xmalloc((size_t)ctx->size * sizeof *all);
    MPI_CHECK(ctx, MPI_Allgather(&me, sizeof me, MPI_BYTE, all, sizeof me, MPI_BYTE, world));
    int bad = 0;
    for (int r = 0; r < ctx->size; r++) {
        all[r].build[BUILD_LEN - 1] = all[r].host[HOST_LEN - 1] = '\0';
        if (strcmp(all[r].build, all[0].build) != 0) bad++;
    }
    if (bad && ctx->rank == 0) {
        fprintf(stderr, "gorila: error: the job's ranks run different builds of gorila (every host needs the same "
                        "build: docs/MULTIHOST.md):\n");
        /* One line per build: its hosts, each with its ranks. */
        bool *done = xcalloc((size_t)ctx->size, sizeof(bool));
        for (int r = 0; r < ctx->size; r++) {
            if (done[r]) continue;
            fprintf(stderr, "  %s:", all[r].build);
            const char *sep = "";
            for (int h = r; h < ctx->size; h++) {
                if (done[h] || strcmp(all[h].build, all[r].build) != 0) continue;
                fprintf(stderr, "%s %s (rank", sep, all[h].host);
                for (int q = h; q < ctx->size; q++) {
                    if (done[q] || strcmp(all[q].build, all[r].build) != 0 || strcmp(all[q].host, all[h].host) != 0)
                        continue;
                    done[q] = true;
                    fprintf(stderr, " %d", q);
                }
                fputc(')', stderr);
                sep = ",";
            }
            fputc('\n', stderr);
        }
        free(done);
    }
    free(all);
    return bad ? -1 : 0;
}

/* The memory plan (memplan.h) before any rank allocates, per machine: the
 * first rank of each machine checks that machine's ranks against its own
 * memory, so a job across hosts is judged host by host. Collective over
 * world. Returns 0, or EXIT_USAGE_JOB on every rank after the lowest rank
 * of a machine that does not fit has said why (with its host). */
static int check_memory(const Ctx *ctx, MPI_Comm world, const Config *cfg, const Layout *lay, const char *host) {
    MPI_Comm node;
    machine_comm(ctx, world, &node);
    int n = 0, me = 0;
    MPI_CHECK(ctx, MPI_Comm_size(node, &n));
    MPI_CHECK(ctx, MPI_Comm_rank(node, &me));
    int *ranks = xmalloc((size_t)n * sizeof(int));
    MPI_CHECK(ctx, MPI_Allgather(&ctx->rank, 1, MPI_INT, ranks, 1, MPI_INT, node));
    MPI_CHECK(ctx, MPI_Comm_free(&node));
    char err[ERR_LEN] = "";
    int first_bad = me == 0 && memplan_fits(cfg, lay, ranks, n, err) != 0 ? ctx->rank : ctx->size;
    free(ranks);
    MPI_CHECK(ctx, MPI_Allreduce(MPI_IN_PLACE, &first_bad, 1, MPI_INT, MPI_MIN, world));
    if (first_bad == ctx->size) return 0;
    if (ctx->rank == first_bad) {
        if (first_bad != 0) fprintf(stderr, "gorila: error: rank %d on %s: %s\n", first_bad, host, err);
        else fprintf(stderr, "gorila: error: %s\n", err);
    }
    return EXIT_USAGE_JOB;
}

int job_main(int *argc, char ***argv, const JobLoad *jl, Config *cfg) {
    job_mpi_env();
    Ctx ctx;
    ctx_init_tool(&ctx);
    MPI_CHECK(&ctx, MPI_Init(argc, argv));
    MPI_Comm world;
    comm_world_init(&ctx, &world);
    char host[HOST_LEN];
    if (check_builds(&ctx, world, host) != 0) {
        comm_world_free(&ctx, &world);
        MPI_CHECK(&ctx, MPI_Finalize());
        return EXIT_USAGE_JOB;
    }
    char err[ERR_LEN] = "";
    Layout lay;
    int ok = jl->load(jl->arg, ctx.size, cfg, &lay, err) == 0;
    /* Agree: the lowest failing rank reports, everybody leaves with 2. */
    int first_bad = ok ? ctx.size : ctx.rank;
    MPI_CHECK(&ctx, MPI_Allreduce(MPI_IN_PLACE, &first_bad, 1, MPI_INT, MPI_MIN, world));
    int rc;
    if (first_bad < ctx.size) {
        if (ctx.rank == first_bad) {
            if (first_bad != 0) fprintf(stderr, "gorila: error: rank %d on %s: %s\n", first_bad, host, err);
            else fprintf(stderr, "gorila: error: %s\n", err);
        }
        rc = EXIT_USAGE_JOB;
    } else if ((rc = check_memory(&ctx, world, cfg, &lay, host)) != 0) {
        /* check_memory said why */
    } else if (lay.size == 1) {
        rc = trainer_run(cfg, jl->resume_dir);
    } else {
        JobArgs ja;
        memset(&ja, 0, sizeof ja);
        ja.cfg = cfg;
        ja.lay = &lay;
        ja.resume_dir = jl->resume_dir;
        ja.world = world;
        ja.learners = MPI_COMM_NULL;
        rc = job_run(&ctx, &ja);
    }
    if (jl->unload) jl->unload(jl->arg);
    comm_world_free(&ctx, &world);
    MPI_CHECK(&ctx, MPI_Finalize());
    return rc;
}
