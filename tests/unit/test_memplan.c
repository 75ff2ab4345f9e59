/* SPDX-License-Identifier: MIT */
/* test_memplan.c: the memory plan (src/core/layout/memplan.h) against what the
 * code really allocates, the check's verdict and message, this machine's
 * memory, and the named out-of-memory exit (util.h xmalloc_for).
 *
 * Allocations are measured with glibc's mallinfo2 (bytes in use on the heap
 * plus in mmapped chunks) around the real init functions. The plan counts
 * the bytes requested; malloc adds a 16-byte header per chunk, up to 64
 * bytes of alignment slack, and rounds mmapped chunks to pages, so a
 * measurement may exceed its item by that (3.5 KiB at most here): the
 * margin is 0.1% + 4 KiB per comparison, below any mistake in a formula (a
 * missing view or a wrong factor is a whole array, tens of KiB or more at
 * these sizes). */
#include <criterion/criterion.h>
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "actorcore.h"
#include "agentcfg.h"
#include "config.h"
#include "dqn.h"
#include "evaluator.h"
#include "layout.h"
#include "memplan.h"
#include "optim.h"
#include "shard.h"
#include "replaystore.h"
#include "pshard.h"
#include "replaybuf.h"
#include "trace.h"
#include "util.h"

static size_t in_use(void) {
    struct mallinfo2 mi = mallinfo2();
    return mi.uordblks + mi.hblkhd;
}

/* ASan (make test-asan) replaces malloc: glibc's counters do not see its
 * allocations, and it aborts on an impossible size instead of returning
 * NULL. Tests that rely on glibc's allocator skip there. */
#if defined(__SANITIZE_ADDRESS__)
#define NEEDS_GLIBC_MALLOC() cr_skip_test("ASan replaces glibc's malloc")
#else
#define NEEDS_GLIBC_MALLOC() ((void)0)
#endif

/* |measured - planned| within 0.1% + 4 KiB (see the top of the file). */
static void expect_close(const char *what, size_t measured, uint64_t planned) {
    double diff = (double)measured - (double)planned;
    double margin = 0.001 * (double)planned + 4096.0;
    cr_expect(diff <= margin && diff >= -margin, "%s: allocated %zu bytes, planned %llu", what, measured,
              (unsigned long long)planned);
}

static Config load(const char *text) {
    Config cfg;
    char err[ERR_LEN];
    cr_assert_eq(config_load_string(&cfg, "t.yaml", text, strlen(text), err), 0, "%s", err);
    return cfg;
}

static uint64_t item(const MemRank *r, const char *what) {
    for (int i = 0; i < r->n; i++)
        if (!strcmp(r->item[i].what, what)) return r->item[i].bytes;
    cr_assert_fail("no item \"%s\" in the plan", what);
    return 0;
}

static MemRank plan_of(const Config *cfg, Role role, int index) {
    Layout lay;
    layout_init(&lay, cfg);
    MemRank r;
    char err[ERR_LEN];
    cr_assert_eq(memplan_rank(cfg, &lay, role, index, &r, err), 0, "%s", err);
    return r;
}

/* A local Acrobot run (O = 6, A = 3) whose every size is far from a round
 * number, with prioritized replay, actor priorities and 3-step returns. */
static const char local_prio[] =
    "run: {mode: local}\n"
    "env: {name: Acrobot-v1}\n"
    "network: {hidden: [37, 23], dueling: true}\n"
    "replay: {kind: prioritized, capacity: 300007, batch_size: 48, min_size: 1000}\n"
    "actor: {envs: 5}\n"
    "agent: {n_step: 3}\n"
    "eval: {episodes: 4000}\n"
    "logging: {trace: true, trace_events: 1000}\n";

Test(memplan, replay_storage_and_sum_tree_match_the_allocation) {
    NEEDS_GLIBC_MALLOC();
    Config cfg = load(local_prio);
    MemRank r = plan_of(&cfg, ROLE_LOCAL, 0);
    size_t before = in_use();
    ReplayStore pr;
    replaystore_init_prioritized(&pr, cfg.replay.capacity, 6, 0.6, 1e-6);
    size_t both = in_use() - before;
    ReplayBuf rb;
    before = in_use();
    replaybuf_init(&rb, cfg.replay.capacity, 6);
    expect_close("replay storage", in_use() - before, item(&r, "replay storage"));
    expect_close("replay storage + sum tree", both, item(&r, "replay storage") + item(&r, "sum tree"));
    replaybuf_free(&rb);
    replaystore_free(&pr);
    /* Small ones too (heap, not mmap), and a sum tree of one leaf. */
    for (uint64_t cap = 1; cap <= 4097; cap = cap * 8 + 1) {
        cfg.replay.capacity = cap;
        r = plan_of(&cfg, ROLE_LOCAL, 0);
        before = in_use();
        replaystore_init_prioritized(&pr, cap, 6, 0.6, 1e-6);
        expect_close("small replay + sum tree", in_use() - before, item(&r, "replay storage") + item(&r, "sum tree"));
        replaystore_free(&pr);
    }
}

Test(memplan, local_trainer_items_match_their_allocations) {
    NEEDS_GLIBC_MALLOC();
    Config cfg = load(local_prio);
    MemRank r = plan_of(&cfg, ROLE_LOCAL, 0);
    QNet net;
    char err[ERR_LEN];
    cr_assert_eq(agentcfg_qnet(&cfg, &net, err), 0, "%s", err);
    size_t B = (size_t)cfg.replay.batch_size;

    size_t before = in_use();
    Optim opt;
    OptimParams op;
    agentcfg_optim_params(&cfg, &op);
    optim_init(&opt, &op, net.n_params);
    expect_close("optimizer state", in_use() - before, item(&r, "optimizer state"));

    before = in_use();
    Dqn dqn;
    dqn_init(&dqn, &net, cfg.replay.batch_size);
    float *td = xmalloc(B * sizeof(float));
    expect_close("learning workspace", in_use() - before, item(&r, "learning workspace"));

    before = in_use();
    ActorCore ac;
    cr_assert_eq(actorcore_init(&ac, &cfg, &net, 0, err), 0, "%s", err);
    EpisodeEnd *ended = xcalloc((size_t)ac.E, sizeof(EpisodeEnd));
    Rng *rngs = xcalloc((size_t)ac.E + 2, sizeof(Rng));
    expect_close("acting", in_use() - before,
                 item(&r, "environments") + item(&r, "n-step buffers") + item(&r, "initial-priority staging") +
                     item(&r, "acting activations"));

    before = in_use();
    Evaluator ev;
    cr_assert_eq(evaluator_init(&ev, &cfg, &net, 0, err), 0, "%s", err);
    expect_close("evaluation", in_use() - before, item(&r, "evaluation"));

    before = in_use();
    Batch chunk, batch;
    agentcfg_batch_init(&chunk, actorcore_max_emit(&ac), net.spec.obs_dim);
    agentcfg_batch_init(&batch, cfg.replay.batch_size, net.spec.obs_dim);
    void *rows[3]; /* the trainer's sampled slots, ids and sampling scratch (local_init) */
    for (int i = 0; i < 3; i++) rows[i] = xmalloc(B * 8);
    expect_close("batches", in_use() - before, item(&r, "batches"));

    before = in_use();
    Trace tr;
    trace_init(&tr, (size_t)cfg.logging.trace_events);
    expect_close("trace", in_use() - before, item(&r, "trace"));

    trace_free(&tr);
    for (int i = 0; i < 3; i++) free(rows[i]);
    agentcfg_batch_free(&chunk);
    agentcfg_batch_free(&batch);
    evaluator_free(&ev);
    free(ended);
    free(rngs);
    actorcore_free(&ac);
    free(td);
    dqn_free(&dqn);
    optim_free(&opt);
}

/* The local trainer as a whole: everything local_init allocates before it
 * trains, in its order (src/core/train/trainer.c), against the plan's total less
 * the buffers that exist only while a checkpoint is written. */
Test(memplan, local_trainer_total_matches_its_allocations) {
    NEEDS_GLIBC_MALLOC();
    Config cfg = load(local_prio);
    MemRank r = plan_of(&cfg, ROLE_LOCAL, 0);
    QNet net;
    char err[ERR_LEN];
    cr_assert_eq(agentcfg_qnet(&cfg, &net, err), 0, "%s", err);
    size_t n = net.n_params, B = (size_t)cfg.replay.batch_size;
    size_t before = in_use();
    float *params = xmalloc_aligned(n * sizeof(float)), *target = xmalloc_aligned(n * sizeof(float));
    float *grad = xmalloc_aligned(n * sizeof(float)), *td = xmalloc(B * sizeof(float));
    Optim opt;
    OptimParams op;
    agentcfg_optim_params(&cfg, &op);
    optim_init(&opt, &op, n);
    Dqn dqn;
    dqn_init(&dqn, &net, cfg.replay.batch_size);
    ReplayStore pr;
    replaystore_init_prioritized(&pr, cfg.replay.capacity, net.spec.obs_dim, cfg.replay.alpha, cfg.replay.priority_eps);
    ActorCore ac;
    cr_assert_eq(actorcore_init(&ac, &cfg, &net, 0, err), 0, "%s", err);
    void *rows[3]; /* sampled slots, ids and sampling scratch (local_init) */
    for (int i = 0; i < 3; i++) rows[i] = xmalloc(B * 8);
    Evaluator ev;
    cr_assert_eq(evaluator_init(&ev, &cfg, &net, 0, err), 0, "%s", err);
    Batch chunk, batch;
    agentcfg_batch_init(&chunk, actorcore_max_emit(&ac), net.spec.obs_dim);
    agentcfg_batch_init(&batch, cfg.replay.batch_size, net.spec.obs_dim);
    EpisodeEnd *ended = xcalloc((size_t)ac.E, sizeof(EpisodeEnd));
    Rng *rngs = xcalloc((size_t)ac.E + 2, sizeof(Rng));
    Trace tr;
    trace_init(&tr, (size_t)cfg.logging.trace_events);
    size_t measured = in_use() - before;
    uint64_t planned = r.total;
    for (int i = 0; i < r.n; i++)
        if (r.item[i].transient) planned -= r.item[i].bytes;
    expect_close("local trainer", measured, planned);
    trace_free(&tr);
    free(ended);
    free(rngs);
    agentcfg_batch_free(&chunk);
    agentcfg_batch_free(&batch);
    evaluator_free(&ev);
    for (int i = 0; i < 3; i++) free(rows[i]);
    actorcore_free(&ac);
    replaystore_free(&pr);
    dqn_free(&dqn);
    optim_free(&opt);
    free(params);
    free(target);
    free(grad);
    free(td);
}

/* A parameter-server shard's slice (src/mpi/pshard.c) for 3 actors and 2
 * learners, RMSProp (3 state vectors), against the plan of a PS rank. */
Test(memplan, parameter_server_slice_matches_its_allocation) {
    NEEDS_GLIBC_MALLOC();
    Config cfg = load("env: {name: Acrobot-v1}\n"
                      "network: {hidden: [512, 257]}\n"
                      "roles: {actors: 3, learners: 2, param_servers: 3}\n"
                      "optimizer: {kind: rmsprop, momentum: 0.5}\n");
    Layout lay;
    layout_init(&lay, &cfg);
    for (int p = 0; p < 3; p++) {
        MemRank r = plan_of(&cfg, ROLE_PS, p);
        Ctx ctx;
        ctx_init_tool(&ctx);
        JobArgs args;
        memset(&args, 0, sizeof args);
        args.cfg = &cfg;
        args.lay = &lay;
        RoleBase rb;
        memset(&rb, 0, sizeof rb);
        rb.ctx = &ctx;
        rb.cfg = &cfg;
        rb.lay = &lay;
        char err[ERR_LEN];
        cr_assert_eq(agentcfg_qnet(&cfg, &rb.net, err), 0, "%s", err);
        size_t off, len;
        shard_range(rb.net.n_params, 3, p, &off, &len);
        size_t before = in_use();
        PShard s;
        pshard_init(&s, &rb, &args, p, off, len, true);
        size_t measured = in_use() - before;
        expect_close("ps slice", measured,
                     item(&r, "network parameters") + item(&r, "target network") + item(&r, "optimizer state") +
                         item(&r, "parameter replies") + item(&r, "evaluation snapshot"));
        pshard_free(&s);
    }
}

/* Which rank holds what: replay storage lives on the shards (capacity
 * split), the network on every rank, nothing of the replay on a learner. */
Test(memplan, job_plan_puts_each_buffer_on_its_role) {
    Config cfg = load("roles: {actors: 4, replay_shards: 3, learners: 2, param_servers: 2}\n"
                      "replay: {capacity: 3000001, kind: prioritized}\n"
                      "checkpoint: {save_replay: true}\n");
    Layout lay;
    layout_init(&lay, &cfg);
    MemPlan plan;
    char err[ERR_LEN];
    cr_assert_eq(memplan_ranks(&cfg, &lay, NULL, 0, &plan, err), 0, "%s", err);
    cr_assert_eq(plan.n_ranks, lay.size);
    cr_assert_eq(plan.count[ROLE_REPLAY], 3);
    /* Each shard holds ceil(3000001 / 3) = 1000001 rows of 2 * 4 * 4 + 12 bytes. */
    uint64_t storage = item(&plan.largest[ROLE_REPLAY], "replay storage");
    cr_assert(storage >= 1000001ull * 44 && storage < 1000001ull * 44 + 5 * 64, "storage %llu",
              (unsigned long long)storage);
    for (int i = 0; i < plan.largest[ROLE_LEARNER].n; i++)
        cr_assert_null(strstr(plan.largest[ROLE_LEARNER].item[i].what, "replay"));
    cr_assert_str_eq(plan.key, "replay.capacity");
    cr_assert_eq(plan.key_role, ROLE_REPLAY);
    /* Shards 0 and 1 have 2 actors, shard 2 one: uneven held chunks. */
    cr_assert(plan.uneven[ROLE_REPLAY]);
    uint64_t sum = 0;
    for (int rank = 0; rank < lay.size; rank++) {
        Role role;
        int index;
        layout_role_of(&lay, rank, &role, &index);
        MemRank r;
        cr_assert_eq(memplan_rank(&cfg, &lay, role, index, &r, err), 0);
        sum += r.total;
    }
    cr_assert_eq(plan.total, sum);
    cr_assert_eq(plan.need, sum + (uint64_t)lay.size * MEMPLAN_RANK_BASE);
    /* A subset: the ranks one machine of a multi-host job runs. */
    int two[] = {lay.first[ROLE_LEARNER], lay.first[ROLE_PS]};
    MemPlan part;
    cr_assert_eq(memplan_ranks(&cfg, &lay, two, 2, &part, err), 0);
    cr_assert_eq(part.n_ranks, 2);
    cr_assert_eq(part.count[ROLE_REPLAY], 0);
    /* Its largest part: the per-rank base of a learner (32 MiB), more than
     * the small network's buffers; the tie with the parameter server goes
     * to the first role in layout order. */
    cr_assert_str_eq(part.key, "roles.learners");
    cr_assert(part.key_is_count);
    cfg = load("roles: {actors: 4, replay_shards: 3, learners: 2, param_servers: 2}\n"
               "network: {hidden: [1024, 1024]}\n");
    layout_init(&lay, &cfg);
    cr_assert_eq(memplan_ranks(&cfg, &lay, two, 2, &part, err), 0);
    cr_assert_str_eq(part.key, "network.hidden");
    cr_assert(!part.key_is_count);
}

/* When the ranks' base (code, libraries, MPI: MEMPLAN_RANK_BASE each) is
 * the largest part, the advice names the rank count behind it, not the
 * largest buffer's key (1,024 actors were once told to lower
 * network.hidden for 72 KiB each beside their 32 GiB of base). */
Test(memplan, check_names_a_rank_count_when_the_base_is_the_largest_part) {
    Config cfg = load("roles: {actors: 1024}\n");
    Layout lay;
    layout_init(&lay, &cfg);
    MemPlan plan;
    char err[ERR_LEN];
    cr_assert_eq(memplan_ranks(&cfg, &lay, NULL, 0, &plan, err), 0);
    cr_assert_str_eq(plan.key, "roles.actors");
    cr_assert_eq(plan.key_role, ROLE_ACTOR);
    MemMachine m = {.available = (uint64_t)20 << 30, .usable = (uint64_t)18 << 30};
    snprintf(m.source, sizeof m.source, "GORILA_MEM_LIMIT 20.0 GiB");
    cr_assert_eq(memplan_check(&cfg, &plan, &m, err), -1);
    const char *want = "roles.actors: 1024 actor ranks need 32.0 GiB for code, libraries and MPI alone (32.0 MiB "
                       "each, before their buffers); the 1028 ranks on this machine need ";
    cr_assert(strncmp(err, want, strlen(want)) == 0, "%s", err);
    cr_assert_not_null(strstr(err, ": lower roles.actors"), "%s", err);
    cr_assert_null(strstr(err, "network.hidden"), "%s", err);
}

Test(memplan, check_names_the_key_and_the_machine) {
    Config cfg = load("run: {mode: local}\nreplay: {capacity: 1000000000}\n");
    Layout lay;
    layout_init(&lay, &cfg);
    MemPlan plan;
    char err[ERR_LEN];
    cr_assert_eq(memplan_ranks(&cfg, &lay, NULL, 0, &plan, err), 0);
    MemMachine m = {.available = (uint64_t)24 << 30, .usable = (uint64_t)(24.0 * 0.9 * (1 << 30))};
    snprintf(m.source, sizeof m.source, "MemAvailable 24.0 GiB");
    cr_assert_eq(memplan_check(&cfg, &plan, &m, err), -1);
    cr_assert_str_eq(err, "replay.capacity: 1000000000 needs 41.0 GiB in the local trainer (replay storage), "
                          "41.0 GiB in all, and this machine has 21.6 GiB usable (90% of MemAvailable 24.0 GiB): "
                          "lower replay.capacity");
    m.usable = plan.need;
    cr_assert_eq(memplan_check(&cfg, &plan, &m, err), 0, "exactly the need fits");
    m.usable = plan.need - 1;
    cr_assert_eq(memplan_check(&cfg, &plan, &m, err), -1);

    /* A network too large: its key, the parameter servers' share. */
    cfg = load("network: {hidden: [4096, 4096, 4096, 4096]}\n");
    layout_init(&lay, &cfg);
    cr_assert_eq(memplan_ranks(&cfg, &lay, NULL, 0, &plan, err), 0);
    m.usable = (uint64_t)4 << 30;
    cr_assert_eq(memplan_check(&cfg, &plan, &m, err), -1);
    const char *want = "network.hidden: [4096, 4096, 4096, 4096] needs ";
    cr_assert(strncmp(err, want, strlen(want)) == 0, "%s", err);
    cr_assert_not_null(strstr(err, " per parameter-server shard (parameter replies, evaluation snapshot, "
                                   "receive buffer and 6 more); "), "%s", err);
    cr_assert_not_null(strstr(err, "; the 5 ranks on this machine need "), "%s", err);
    cr_assert_not_null(strstr(err, ": lower network.hidden"), "%s", err);
}

Test(memplan, sizes_and_meminfo_parse) {
    char err[ERR_LEN];
    uint64_t b;
    cr_assert_eq(memplan_parse_size("1048576", &b, err), 0);
    cr_assert_eq(b, 1048576);
    cr_assert_eq(memplan_parse_size("512M", &b, err), 0);
    cr_assert_eq(b, (uint64_t)512 << 20);
    cr_assert_eq(memplan_parse_size("1.5GiB", &b, err), 0);
    cr_assert_eq(b, (uint64_t)3 << 29);
    cr_assert_eq(memplan_parse_size("2t", &b, err), 0);
    cr_assert_eq(b, (uint64_t)2 << 40);
    const char *bad[] = {"", "G", "-1G", "0", "1X", "1 G", "1GG", "lots", "1e3", "0x10", "1e3M"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        cr_assert_eq(memplan_parse_size(bad[i], &b, err), -1, "\"%s\" accepted", bad[i]);
    bool total_only;
    cr_assert_eq(memplan_parse_meminfo("MemTotal:       24683620 kB\nMemFree:        23922348 kB\n"
                                       "MemAvailable:   24290604 kB\nBuffers: 1 kB\n", &b, &total_only), 0);
    cr_assert_eq(b, 24290604ull * 1024);
    cr_assert_not(total_only);
    cr_assert_eq(memplan_parse_meminfo("MemTotal: 1000 kB\nMemFree: 10 kB\n", &b, &total_only), 0);
    cr_assert_eq(b, 1024000);
    cr_assert(total_only);
    cr_assert_eq(memplan_parse_meminfo("nothing\n", &b, &total_only), -1);
}

Test(memplan, machine_takes_gorila_mem_limit) {
    MemMachine m;
    char err[ERR_LEN];
    setenv("GORILA_MEM_LIMIT", "10G", 1);
    cr_assert_eq(memplan_machine(&m, err), 0, "%s", err);
    cr_assert_eq(m.available, (uint64_t)10 << 30);
    cr_assert_eq(m.usable, (uint64_t)9 << 30);
    cr_assert_str_eq(m.source, "GORILA_MEM_LIMIT 10.0 GiB");
    setenv("GORILA_MEM_LIMIT", "ten", 1);
    cr_assert_eq(memplan_machine(&m, err), -1);
    cr_assert_str_eq(err, "GORILA_MEM_LIMIT: expected a size such as 512M or 16G, got \"ten\"");
    unsetenv("GORILA_MEM_LIMIT");
    cr_assert_eq(memplan_machine(&m, err), 0, "%s", err);
    cr_assert_gt(m.available, 0);
    cr_assert_lt(m.usable, m.available);
}

/* Run f in a child with stderr into a pipe; its exit status and stderr. */
static int in_child(void (*f)(void), char *text, size_t cap) {
    int fd[2];
    cr_assert_eq(pipe(fd), 0);
    pid_t pid = fork();
    cr_assert_neq(pid, -1);
    if (pid == 0) {
        close(fd[0]);
        dup2(fd[1], 2);
        f();
        _exit(0);
    }
    close(fd[1]);
    size_t n = 0;
    ssize_t got;
    while (n < cap - 1 && (got = read(fd[0], text + n, cap - 1 - n)) > 0) n += (size_t)got;
    text[n] = '\0';
    close(fd[0]);
    int st = 0;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void alloc_named(void) { free(xmalloc_for((size_t)1 << 62, "replay storage", "replay.capacity")); }
static void alloc_plain(void) { free(xmalloc((size_t)1 << 62)); }

Test(memplan, out_of_memory_names_the_buffer_and_exits_2) {
    NEEDS_GLIBC_MALLOC();
    char text[1024];
    int st = in_child(alloc_named, text, sizeof text);
    cr_assert_eq(st, 2, "exit status %d: %s", st, text);
    cr_assert_not_null(strstr(text, ": out of memory allocating replay storage (4.0 EiB): lower replay.capacity "
                                    "(gorila config check prints the memory plan)\n"), "%s", text);
    /* Every other allocation fails with 2 too: the config sized it. */
    st = in_child(alloc_plain, text, sizeof text);
    cr_assert_eq(st, 2, "exit status %d: %s", st, text);
    cr_assert_not_null(strstr(text, ": out of memory allocating 4611686018427387904 bytes (4.0 EiB)"), "%s", text);
}

Test(memplan, bytes_print_in_binary_units) {
    char b[BYTES_STR_LEN];
    cr_assert_str_eq(fmt_bytes(b, 0), "0 B");
    cr_assert_str_eq(fmt_bytes(b, 1023), "1023 B");
    cr_assert_str_eq(fmt_bytes(b, 1024), "1.0 KiB");
    cr_assert_str_eq(fmt_bytes(b, (uint64_t)44000000000), "41.0 GiB");
    cr_assert_str_eq(fmt_bytes(b, UINT64_MAX), "16.0 EiB");
}

/* Which cgroup's memory limit applies: the process's own, not the root's
 * (a Slurm job or systemd slice sets it deeper in the tree). */
Test(memplan, the_process_cgroup_is_found_in_v1_and_v2) {
    char path[256];
    bool v1;
    char a[] = "9:name=systemd:/\n4:memory:/process_api/abc\n3:cpuset:/\n0::/\n";
    cr_assert_eq(memplan_parse_cgroup(a, path, sizeof path, &v1), 0);
    cr_assert_str_eq(path, "/process_api/abc");
    cr_assert(v1);
    char b[] = "0::/system.slice/slurmstepd.scope/job_42\n";
    cr_assert_eq(memplan_parse_cgroup(b, path, sizeof path, &v1), 0);
    cr_assert_str_eq(path, "/system.slice/slurmstepd.scope/job_42");
    cr_assert(!v1);
    char c[] = "5:cpu,cpuacct,memory:/job\n";
    cr_assert_eq(memplan_parse_cgroup(c, path, sizeof path, &v1), 0);
    cr_assert_str_eq(path, "/job");
    cr_assert(v1);
    char d[] = "3:cpuset:/x\n";
    cr_assert_eq(memplan_parse_cgroup(d, path, sizeof path, &v1), -1);
}

/* A conv network's workspace (activations, im2col columns, pre-activations
 * of every conv layer) is counted: MinAtar Breakout with two conv layers,
 * whose conv buffers outweigh the MLP's at this batch. */
Test(memplan, conv_workspace_is_counted) {
    NEEDS_GLIBC_MALLOC();
    Config cfg = load("run: {mode: local}\n"
                      "env: {name: MinAtar/Breakout-v0}\n"
                      "network: {conv: [{filters: 16, kernel: 3, stride: 1}, {filters: 8, kernel: 2, stride: 2}],"
                      " hidden: [64]}\n"
                      "replay: {capacity: 5000, batch_size: 96, min_size: 500}\n"
                      "actor: {envs: 7}\n"
                      "eval: {episodes: 30}\n");
    MemRank r = plan_of(&cfg, ROLE_LOCAL, 0);
    QNet net;
    char err[ERR_LEN];
    cr_assert_eq(agentcfg_qnet(&cfg, &net, err), 0, "%s", err);
    cr_assert_eq(net.n_conv, 2);

    size_t before = in_use();
    Dqn dqn;
    dqn_init(&dqn, &net, cfg.replay.batch_size);
    float *td = xmalloc((size_t)cfg.replay.batch_size * sizeof(float));
    expect_close("learning workspace", in_use() - before, item(&r, "learning workspace"));

    before = in_use();
    Evaluator ev;
    cr_assert_eq(evaluator_init(&ev, &cfg, &net, 0, err), 0, "%s", err);
    expect_close("evaluation", in_use() - before, item(&r, "evaluation"));

    evaluator_free(&ev);
    free(td);
    dqn_free(&dqn);
}
