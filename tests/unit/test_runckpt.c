/* SPDX-License-Identifier: MIT */
/* test_runckpt.c: checkpoint directories of a run (src/core/ckpt/runckpt.c): shard
 * files written by P shards and read back by any other number of shards
 * give the same parameters, target and optimizer state bit for bit; the
 * manifest and `latest` work as the commit point; damage and mismatches are
 * refused with a message; every shard is bound to its manifest (run id,
 * checkpoint, shard count, size and CRC) and the set must tile the
 * parameters; a damaged newest checkpoint falls back to an older intact one;
 * `best` is swapped in whole and never pruned; non-finite parameters are
 * never written; replay files (distributed save_replay) are bound and
 * listed like shard files, restore exactly with the same replay shard
 * count and are dealt out with another, and a damaged one falls back. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "agentcfg.h"
#include "crc32c.h"
#include "shard.h"
#include "runckpt.h"
#include "util.h"

typedef struct {
    Config cfg;
    QNet net;
    size_t n;
    float *params, *target;
    Optim opt;
    uint64_t run_id;
    char run[256];
} Fixture;

/* A CartPole net with 3 hidden units (n_params = 4*3+3 + 3*2+2 = 23, which
 * no shard count from 2 to 5 divides evenly except 1), Adam with a few
 * steps taken so that the moments are not zero. */
static void setup(Fixture *f, const char *name) {
    config_defaults(&f->cfg);
    f->cfg.network.n_hidden = 1;
    f->cfg.network.hidden[0] = 3;
    char err[ERR_LEN];
    cr_assert_eq(agentcfg_qnet(&f->cfg, &f->net, err), 0, "%s", err);
    f->n = f->net.n_params;
    cr_assert_eq(f->n, 23);
    f->params = malloc(f->n * sizeof(float));
    f->target = malloc(f->n * sizeof(float));
    float *g = malloc(f->n * sizeof(float));
    Rng r;
    rng_seed(&r, 5, 0);
    for (size_t i = 0; i < f->n; i++) {
        f->params[i] = (float)rng_uniform_range(&r, -1, 1);
        f->target[i] = (float)rng_uniform_range(&r, -1, 1);
    }
    OptimParams op;
    agentcfg_optim_params(&f->cfg, &op);
    optim_init(&f->opt, &op, f->n);
    for (int s = 0; s < 3; s++) {
        for (size_t i = 0; i < f->n; i++) g[i] = (float)rng_uniform_range(&r, -1, 1);
        optim_step(&f->opt, f->params, g);
    }
    free(g);
    f->run_id = 0x5eed0000c0ffee00ull + (uint64_t)getpid();
    /* A fresh directory every time: named by pid alone, a directory left
     * by an earlier run whose test process had the same pid made mkdir
     * fail now and then once build/test-tmp had filled up. */
    snprintf(f->run, sizeof f->run, "build/test-tmp/snapshot-%s-XXXXXX", name);
    mkdir("build", 0777);
    mkdir("build/test-tmp", 0777);
    cr_assert_not_null(mkdtemp(f->run), "mkdtemp %s", f->run);
}

static void teardown(Fixture *f) {
    free(f->params);
    free(f->target);
    optim_free(&f->opt);
}

/* Write shard p of P of checkpoint seq into dir, holding [off, off + len)
 * of the fixture. */
static void write_one(Fixture *f, const char *dir, uint64_t seq, int P, int p, size_t off, size_t len) {
    char err[ERR_LEN];
    Optim part;
    optim_init(&part, &f->opt.p, len);
    part.step = f->opt.step;
    size_t slots = f->opt.n_state / f->n;
    for (size_t k = 0; k < slots; k++)
        memcpy(part.state + k * len, f->opt.state + k * f->n + off, len * sizeof(float));
    RunCkptShard sh = {.index = p, .off = off, .len = len, .params = f->params + off, .target = f->target + off,
                       .opt = &part, .version = 100 + (uint64_t)p, .target_version = 7,
                       .run_id = f->run_id, .seq = seq, .n_shards = P};
    cr_assert_eq(runckpt_write_shard(&f->cfg, &f->net, dir, &sh, err), 0, "%s", err);
    optim_free(&part);
}

static RunCkptManifest manifest_of(const Fixture *f, int P, uint64_t seq) {
    RunCkptManifest m = {.seq = seq, .env_steps = 1234, .updates = 100, .episodes = 9, .wall_seconds = 2.5,
                         .n_shards = P, .run_id = f->run_id, .params_version = 100};
    snprintf(m.mode, sizeof m.mode, "ps_sync");
    return m;
}

/* Write the fixture as P shards of checkpoint seq; commit. */
static void write_shards(Fixture *f, int P, uint64_t seq, char *dir) {
    char err[ERR_LEN];
    cr_assert_eq(runckpt_begin(f->run, seq, dir, err), 0, "%s", err);
    for (int p = 0; p < P; p++) {
        size_t off, len;
        shard_range(f->n, P, p, &off, &len);
        write_one(f, dir, seq, P, p, off, len);
    }
    RunCkptManifest m = manifest_of(f, P, seq);
    cr_assert_eq(runckpt_commit(f->run, dir, &m, 2, err), 0, "%s", err);
}

/* ---- helpers for damaging and crafting files ---------------------------- */

static void flip_byte(const char *path, long offset) {
    FILE *fp = fopen(path, "r+b");
    cr_assert_not_null(fp, "%s", path);
    cr_assert_eq(fseek(fp, offset, SEEK_SET), 0);
    int c = fgetc(fp);
    cr_assert_neq(c, EOF);
    cr_assert_eq(fseek(fp, offset, SEEK_SET), 0);
    fputc(c ^ 0x10, fp);
    fclose(fp);
}

/* Whole file into a malloc'ed buffer (*bytes its length). */
static unsigned char *slurp(const char *path, size_t *bytes) {
    FILE *fp = fopen(path, "rb");
    cr_assert_not_null(fp, "%s", path);
    fseek(fp, 0, SEEK_END);
    long n = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    unsigned char *buf = malloc((size_t)n + 1);
    cr_assert_eq(fread(buf, 1, (size_t)n, fp), (size_t)n);
    fclose(fp);
    buf[n] = 0;
    *bytes = (size_t)n;
    return buf;
}

static void spit(const char *path, const void *data, size_t bytes) {
    FILE *fp = fopen(path, "wb");
    cr_assert_not_null(fp, "%s", path);
    cr_assert_eq(fwrite(data, 1, bytes, fp), bytes);
    fclose(fp);
}

static void copy_file(const char *from, const char *to) {
    size_t n;
    unsigned char *b = slurp(from, &n);
    spit(to, b, n);
    free(b);
}

static bool exists(const char *path) {
    struct stat st;
    return lstat(path, &st) == 0;
}

/* A MANIFEST as docs/CHECKPOINT.md describes it, made by hand for the
 * shard files in dir as they are: what someone crafting a checkpoint could
 * write. */
static void craft_manifest(const char *dir, uint64_t run_id, uint64_t seq, int P) {
    char text[4096], path[PATH_LEN + 32];
    int n = snprintf(text, sizeof text,
                     "gorila-checkpoint-manifest 2\nrun_id %016llx\nseq %llu\nkind periodic\nmode ps_sync\n"
                     "env_steps 1\nupdates 1\nepisodes 1\nwall_seconds 1\nparams_version 1\neval_mean none\n"
                     "eval_episodes 0\neval_seed 0\nhistory none\nshards %d\n",
                     (unsigned long long)run_id, (unsigned long long)seq, P);
    for (int q = 0; q < P; q++) {
        size_t bytes;
        snprintf(path, sizeof path, "%s/ps-%d.ckpt", dir, q);
        unsigned char *b = slurp(path, &bytes);
        n += snprintf(text + n, sizeof text - (size_t)n, "shard %d bytes %zu crc32c %08x\n", q, bytes,
                      crc32c(b, bytes));
        free(b);
    }
    n += snprintf(text + n, sizeof text - (size_t)n, "crc32c %08x\n", crc32c(text, (size_t)n));
    snprintf(path, sizeof path, "%s/MANIFEST", dir);
    spit(path, text, (size_t)n);
}

/* stderr into a file while a call runs, to check the warning it prints. */
static int stderr_to(const char *path) {
    fflush(stderr);
    int saved = dup(2);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    cr_assert(saved >= 0 && fd >= 0);
    dup2(fd, 2);
    close(fd);
    return saved;
}

static char *stderr_back(int saved, const char *path) {
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    size_t n;
    return (char *)slurp(path, &n);
}

static void ckpt_path(const Fixture *f, uint64_t seq, const char *file, char *out) {
    snprintf(out, PATH_LEN + 64, "%s/checkpoints/ckpt-%06llu%s%s", f->run, (unsigned long long)seq, file ? "/" : "",
             file ? file : "");
}

Test(runckpt, any_shard_count_reads_back_what_any_other_wrote) {
    Fixture f;
    setup(&f, "reshard");
    for (int P = 1; P <= 5; P++) {
        char dir[PATH_LEN], err[ERR_LEN];
        write_shards(&f, P, (uint64_t)P, dir);
        for (int Q = 1; Q <= 5; Q++) {
            float *p = calloc(f.n, sizeof(float)), *t = calloc(f.n, sizeof(float));
            Optim whole;
            optim_init(&whole, &f.opt.p, f.n);
            for (int q = 0; q < Q; q++) {
                size_t off, len;
                shard_range(f.n, Q, q, &off, &len);
                Optim part;
                optim_init(&part, &f.opt.p, len);
                RunCkptShard sh = {.index = q, .off = off, .len = len, .params = p + off, .target = t + off, .opt = &part};
                cr_assert_eq(runckpt_read_slice(&f.cfg, &f.net, dir, &sh, err), 0, "P=%d Q=%d: %s", P, Q, err);
                cr_assert_eq(part.step, f.opt.step);
                size_t slots = f.opt.n_state / f.n;
                for (size_t k = 0; k < slots; k++)
                    memcpy(whole.state + k * f.n + off, part.state + k * len, len * sizeof(float));
                optim_free(&part);
            }
            cr_assert_eq(memcmp(p, f.params, f.n * sizeof(float)), 0, "params, P=%d Q=%d", P, Q);
            cr_assert_eq(memcmp(t, f.target, f.n * sizeof(float)), 0, "target, P=%d Q=%d", P, Q);
            cr_assert_eq(memcmp(whole.state, f.opt.state, f.opt.n_state * sizeof(float)), 0, "optim, P=%d Q=%d", P, Q);
            optim_free(&whole);
            free(p);
            free(t);
        }
    }
    teardown(&f);
}

Test(runckpt, latest_names_the_newest_and_old_ones_are_pruned) {
    Fixture f;
    setup(&f, "latest");
    char dir[PATH_LEN], err[ERR_LEN];
    for (uint64_t s = 1; s <= 4; s++) write_shards(&f, 2, s, dir);
    RunCkptManifest m;
    cr_assert_eq(runckpt_latest(f.run, &m, err), 0, "%s", err);
    cr_assert_eq(m.seq, 4);
    cr_assert_eq(m.env_steps, 1234);
    cr_assert_eq(m.updates, 100);
    cr_assert_eq(m.episodes, 9);
    cr_assert_eq(m.wall_seconds, 2.5);
    cr_assert_eq(m.n_shards, 2);
    cr_assert_str_eq(m.mode, "ps_sync");
    char path[600];
    struct stat st;
    snprintf(path, sizeof path, "%s/checkpoints/ckpt-000003", f.run);
    cr_assert_eq(stat(path, &st), 0, "keep = 2 keeps the previous one");
    snprintf(path, sizeof path, "%s/checkpoints/ckpt-000002", f.run);
    cr_assert_neq(stat(path, &st), 0, "keep = 2 removes older ones");
    teardown(&f);
}

Test(runckpt, refuses_damage_and_mismatch) {
    Fixture f;
    setup(&f, "refuse");
    char dir[PATH_LEN], err[ERR_LEN], path[PATH_LEN + 32];
    RunCkptManifest m;
    cr_assert_eq(runckpt_latest(f.run, &m, err), -1);
    cr_assert(strstr(err, "no checkpoint in") != NULL, "%s", err);
    write_shards(&f, 2, 1, dir);
    float p[23], t[23];
    RunCkptShard sh = {.off = 0, .len = f.n, .params = p, .target = t};
    /* Another network. */
    Config other = f.cfg;
    other.network.hidden[0] = 4;
    QNet net4;
    cr_assert_eq(agentcfg_qnet(&other, &net4, err), 0);
    float p4[32], t4[32];
    RunCkptShard sh4 = {.off = 0, .len = net4.n_params, .params = p4, .target = t4};
    cr_assert_eq(runckpt_read_slice(&other, &net4, dir, &sh4, err), -1);
    cr_assert(strstr(err, "network differs") != NULL, "%s", err);
    /* Another optimizer. */
    OptimParams op = optim_defaults(OPTIM_SGD);
    Optim sgd;
    optim_init(&sgd, &op, f.n);
    sh.opt = &sgd;
    cr_assert_eq(runckpt_read_slice(&f.cfg, &f.net, dir, &sh, err), -1);
    cr_assert(strstr(err, "optimizer differs: checkpoint has adam state, config uses sgd") != NULL, "%s", err);
    optim_free(&sgd);
    sh.opt = NULL;
    /* A missing shard file. */
    snprintf(path, sizeof path, "%s/ps-1.ckpt", dir);
    cr_assert_eq(unlink(path), 0);
    cr_assert_eq(runckpt_read_slice(&f.cfg, &f.net, dir, &sh, err), -1);
    cr_assert(strstr(err, "ps-1.ckpt") != NULL, "%s", err);
    /* A damaged manifest. */
    snprintf(path, sizeof path, "%s/MANIFEST", dir);
    flip_byte(path, 40);
    cr_assert_eq(runckpt_read_manifest(dir, &m, err), -1);
    cr_assert(strstr(err, "checksum mismatch") != NULL, "%s", err);
    teardown(&f);
}

/* Temporaries of the atomic writes (`latest.tmp`, `MANIFEST.tmp`) are
 * created exclusively without following links: a symlink planted at the
 * temporary's name is replaced, and the file it points to outside the run
 * directory is never written. */
Test(runckpt, planted_symlinks_at_temporaries_are_not_followed) {
    Fixture f;
    setup(&f, "symlink");
    char victim[PATH_LEN], link_latest[PATH_LEN + 16], link_manifest[PATH_LEN + 16], ckdir[512], dir[PATH_LEN];
    snprintf(victim, sizeof victim, "%s-victim.txt", f.run);
    FILE *v = fopen(victim, "w");
    cr_assert_not_null(v);
    fputs("untouched\n", v);
    fclose(v);
    snprintf(ckdir, sizeof ckdir, "%s/checkpoints", f.run);
    cr_assert_eq(mkdir(ckdir, 0777), 0);
    snprintf(link_latest, sizeof link_latest, "%s/latest.tmp", ckdir);
    cr_assert_eq(symlink(victim, link_latest), 0);
    write_shards(&f, 2, 1, dir);
    /* A second checkpoint, with MANIFEST.tmp planted in its directory first. */
    char err[ERR_LEN], dir2[PATH_LEN];
    cr_assert_eq(runckpt_begin(f.run, 2, dir2, err), 0, "%s", err);
    snprintf(link_manifest, sizeof link_manifest, "%s/MANIFEST.tmp", dir2);
    cr_assert_eq(symlink(victim, link_manifest), 0);
    cr_assert_eq(symlink(victim, link_latest), 0);
    write_shards(&f, 2, 2, dir2);

    char text[64] = "";
    v = fopen(victim, "r");
    cr_assert_not_null(v);
    cr_assert_not_null(fgets(text, sizeof text, v));
    fclose(v);
    cr_expect_str_eq(text, "untouched\n");
    struct stat st;
    char latest[PATH_LEN + 16];
    snprintf(latest, sizeof latest, "%s/latest", ckdir);
    cr_assert_eq(lstat(latest, &st), 0);
    cr_expect(S_ISREG(st.st_mode), "latest is a regular file, not the planted link");
    RunCkptManifest m;
    cr_assert_eq(runckpt_latest(f.run, &m, err), 0, "%s", err);
    cr_expect_eq(m.seq, 2);
    unlink(victim);
    teardown(&f);
}

/* ---- the manifest ------------------------------------------------------ */

Test(runckpt, manifest_keeps_run_id_kind_and_evaluation) {
    Fixture f;
    setup(&f, "manifest");
    char dir[PATH_LEN], err[ERR_LEN];
    cr_assert_eq(runckpt_begin(f.run, 1, dir, err), 0, "%s", err);
    write_one(&f, dir, 1, 1, 0, 0, f.n);
    RunCkptManifest m = manifest_of(&f, 1, 1), r;
    snprintf(m.kind, sizeof m.kind, "final");
    m.eval_mean = 475.25;
    m.eval_episodes = 10;
    m.eval_seed = 99;
    m.params_version = 321;
    /* the evaluation history, with a value of every kind: a NaN-free
     * record that solved, numbers that need all 17 digits */
    m.has_history = 1;
    evaltrack_init(&m.history, 475.0);
    evaltrack_record(&m.history, 300.1, 5000, 1000, 0.1 + 0.2);
    evaltrack_record(&m.history, 480.5, 7511, 1750, 1.9375);
    evaltrack_record(&m.history, 475.25, 9000, 2000, 2.5);
    cr_assert_eq(runckpt_commit(f.run, dir, &m, 2, err), 0, "%s", err);
    cr_assert_eq(runckpt_read_manifest(dir, &r, err), 0, "%s", err);
    cr_expect_eq(r.has_history, 1);
    cr_expect_eq(r.history.evaluations, 3);
    cr_expect_eq(r.history.last, 475.25);
    cr_expect_eq(r.history.best, 480.5);
    cr_expect_eq(r.history.best_env_steps, 7511);
    cr_expect_eq(r.history.best_version, 1750);
    cr_expect_eq(r.history.best_seconds, 1.9375);
    cr_expect(r.history.solved);
    cr_expect_eq(r.history.solved_at_env_steps, 7511);
    cr_expect_eq(r.history.solved_at_version, 1750);
    cr_expect_eq(r.history.solved_at_seconds, 1.9375);
    cr_expect_eq(r.run_id, f.run_id);
    cr_expect_str_eq(r.kind, "final");
    cr_expect_eq(r.eval_mean, 475.25);
    cr_expect_eq(r.eval_episodes, 10);
    cr_expect_eq(r.eval_seed, 99);
    cr_expect_eq(r.params_version, 321);
    cr_expect_eq(r.n_shards, 1);
    cr_expect_str_eq(r.dir, dir);
    /* No evaluation: stored as "none", read back as NaN; no kind: periodic. */
    cr_assert_eq(runckpt_begin(f.run, 2, dir, err), 0, "%s", err);
    write_one(&f, dir, 2, 1, 0, 0, f.n);
    m = manifest_of(&f, 1, 2);
    cr_assert_eq(runckpt_commit(f.run, dir, &m, 2, err), 0, "%s", err);
    cr_assert_eq(runckpt_latest(f.run, &r, err), 0, "%s", err);
    cr_expect_eq(r.seq, 2);
    cr_expect_str_eq(r.kind, "periodic");
    cr_expect(isnan(r.eval_mean));
    cr_expect_eq(r.eval_episodes, 0);
    cr_expect_eq(r.has_history, 0, "no history kept: \"history none\"");
    /* A manifest written by hand from docs/CHECKPOINT.md is accepted. */
    craft_manifest(dir, f.run_id, 2, 1);
    cr_assert_eq(runckpt_verify(dir, &r, err), 0, "%s", err);
    teardown(&f);
}

Test(runckpt, old_format_manifest_is_refused_as_written_by_an_older_gorila) {
    Fixture f;
    setup(&f, "oldfmt");
    char dir[PATH_LEN], err[ERR_LEN], path[PATH_LEN + 32];
    write_shards(&f, 1, 1, dir);
    /* Exactly what format 1 wrote: valid CRC, no run id, no shard sums. */
    char text[512];
    int n = snprintf(text, sizeof text,
                     "gorila-checkpoint-manifest 1\nseq 1\nenv_steps 1234\nupdates 100\nepisodes 9\n"
                     "wall_seconds 2.5\nshards 1\nmode ps_sync\n");
    n += snprintf(text + n, sizeof text - (size_t)n, "crc32c %08x\n", crc32c(text, (size_t)n));
    snprintf(path, sizeof path, "%s/MANIFEST", dir);
    spit(path, text, (size_t)n);
    RunCkptManifest m;
    cr_assert_eq(runckpt_read_manifest(dir, &m, err), -1);
    cr_expect(strstr(err, "written by an older gorila (manifest format 1") != NULL, "%s", err);
    cr_assert_eq(runckpt_latest(f.run, &m, err), -1);
    cr_expect(strstr(err, "older gorila") != NULL, "%s", err);
    teardown(&f);
}

/* ---- binding ----------------------------------------------------------- */

Test(runckpt, shard_from_another_checkpoint_of_the_run_is_refused) {
    Fixture f;
    setup(&f, "otherckpt");
    char dir[PATH_LEN], err[ERR_LEN], from[PATH_LEN + 64], to[PATH_LEN + 64];
    write_shards(&f, 2, 1, dir);
    write_shards(&f, 2, 2, dir);
    /* At commit: a leftover shard of checkpoint 2 is never bound into 3. */
    cr_assert_eq(runckpt_begin(f.run, 3, dir, err), 0, "%s", err);
    size_t off, len;
    shard_range(f.n, 2, 0, &off, &len);
    write_one(&f, dir, 3, 2, 0, off, len);
    ckpt_path(&f, 2, "ps-1.ckpt", from);
    ckpt_path(&f, 3, "ps-1.ckpt", to);
    copy_file(from, to);
    RunCkptManifest m = manifest_of(&f, 2, 3);
    cr_assert_eq(runckpt_commit(f.run, dir, &m, 2, err), -1);
    cr_expect(strstr(err, "ps-1.ckpt belongs to checkpoint 2, but the manifest is of checkpoint 3") != NULL, "%s", err);
    ckpt_path(&f, 3, "MANIFEST", to);
    cr_expect(!exists(to), "no manifest for a checkpoint that does not bind");
    cr_assert_eq(runckpt_latest(f.run, &m, err), 0, "%s", err);
    cr_expect_eq(m.seq, 2, "latest still names checkpoint 2");
    /* At read: checkpoint 1's shard copied into checkpoint 2. */
    ckpt_path(&f, 1, "ps-1.ckpt", from);
    ckpt_path(&f, 2, "ps-1.ckpt", to);
    copy_file(from, to);
    ckpt_path(&f, 2, NULL, dir);
    float p[23], t[23];
    RunCkptShard sh = {.off = 0, .len = f.n, .params = p, .target = t};
    cr_assert_eq(runckpt_read_slice(&f.cfg, &f.net, dir, &sh, err), -1);
    cr_expect(strstr(err, "ps-1.ckpt belongs to checkpoint 1, but the manifest is of checkpoint 2") != NULL, "%s",
              err);
    cr_assert_eq(runckpt_verify(dir, &m, err), -1);
    cr_expect(strstr(err, "ps-1.ckpt") != NULL, "%s", err);
    teardown(&f);
}

Test(runckpt, shard_from_another_run_is_refused) {
    Fixture f, g;
    setup(&f, "runa");
    setup(&g, "runb");
    g.run_id = f.run_id ^ 0xabcdef;
    char dir[PATH_LEN], err[ERR_LEN], from[PATH_LEN + 64], to[PATH_LEN + 64];
    write_shards(&f, 2, 1, dir);
    write_shards(&g, 2, 1, dir);
    ckpt_path(&g, 1, "ps-0.ckpt", from);
    ckpt_path(&f, 1, "ps-0.ckpt", to);
    copy_file(from, to);
    ckpt_path(&f, 1, NULL, dir);
    float p[23], t[23];
    RunCkptShard sh = {.off = 0, .len = f.n, .params = p, .target = t};
    cr_assert_eq(runckpt_read_slice(&f.cfg, &f.net, dir, &sh, err), -1);
    char want[128];
    snprintf(want, sizeof want, "ps-0.ckpt belongs to run %016llx, but the manifest is of run %016llx",
             (unsigned long long)g.run_id, (unsigned long long)f.run_id);
    cr_expect(strstr(err, want) != NULL, "%s", err);
    teardown(&f);
    teardown(&g);
}

Test(runckpt, bit_flip_in_a_shard_is_refused) {
    Fixture f;
    setup(&f, "bitflip");
    char dir[PATH_LEN], err[ERR_LEN], path[PATH_LEN + 64];
    write_shards(&f, 2, 1, dir);
    ckpt_path(&f, 1, "ps-1.ckpt", path);
    size_t bytes;
    unsigned char *orig = slurp(path, &bytes);
    float p[23], t[23];
    RunCkptShard sh = {.off = 0, .len = f.n, .params = p, .target = t};
    /* In the data (past the header and table): the file's CRC no longer
     * matches the manifest. */
    flip_byte(path, (long)bytes - 5);
    cr_assert_eq(runckpt_read_slice(&f.cfg, &f.net, dir, &sh, err), -1);
    cr_expect(strstr(err, "ps-1.ckpt: file CRC") != NULL && strstr(err, "does not match the manifest") != NULL, "%s",
              err);
    /* In the header: its own CRC says so first. */
    spit(path, orig, bytes);
    cr_assert_eq(runckpt_read_slice(&f.cfg, &f.net, dir, &sh, err), 0, "restored: %s", err);
    flip_byte(path, 100);
    cr_assert_eq(runckpt_read_slice(&f.cfg, &f.net, dir, &sh, err), -1);
    cr_expect(strstr(err, "ps-1.ckpt: header CRC mismatch") != NULL, "%s", err);
    /* One byte more or less. */
    unsigned char *longer = malloc(bytes + 1);
    memcpy(longer, orig, bytes);
    longer[bytes] = 0;
    spit(path, longer, bytes + 1);
    cr_assert_eq(runckpt_read_slice(&f.cfg, &f.net, dir, &sh, err), -1);
    cr_expect(strstr(err, "ps-1.ckpt") != NULL, "%s", err);
    free(longer);
    free(orig);
    teardown(&f);
}

/* A crafted set whose slices overlap or leave a gap is refused before a
 * single parameter is copied, even with a manifest that binds it (the sums
 * are right). The second case is the one that used to pass: shard 1
 * repeats 2 parameters of shard 0 and stops 2 short of the end, so the
 * count of parameters read came out right and [21, 23) was never written. */
Test(runckpt, overlapping_or_gapped_shards_are_refused_before_any_read) {
    Fixture f;
    setup(&f, "tiling");
    struct {
        size_t off0, len0, off1, len1;
        const char *why;
    } cases[] = {
        {0, 12, 10, 13, "overlap the earlier shards' [0, 12)"},
        {0, 12, 10, 11, "overlap the earlier shards' [0, 12)"},
        {0, 10, 12, 11, "starts at parameter 12, leaving [10, 12) in no shard file"},
        {0, 12, 12, 8, "hold parameters [0, 20) of 23"},
        {0, 23, 0, 23, "overlap the earlier shards' [0, 23)"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        char dir[PATH_LEN], err[ERR_LEN];
        uint64_t seq = 10 + c;
        cr_assert_eq(runckpt_begin(f.run, seq, dir, err), 0, "%s", err);
        size_t off0 = cases[c].off0, len0 = cases[c].len0, off1 = cases[c].off1, len1 = cases[c].len1;
        write_one(&f, dir, seq, 2, 0, off0, len0);
        write_one(&f, dir, seq, 2, 1, off1, len1);
        RunCkptManifest m = manifest_of(&f, 2, seq);
        cr_assert_eq(runckpt_commit(f.run, dir, &m, 100, err), -1, "case %zu committed", c);
        cr_expect(strstr(err, cases[c].why) != NULL, "case %zu commit: %s", c, err);
        craft_manifest(dir, f.run_id, seq, 2);
        float p[23], t[23];
        for (int i = 0; i < 23; i++) p[i] = t[i] = -7.0f;
        RunCkptShard sh = {.off = 0, .len = f.n, .params = p, .target = t};
        cr_assert_eq(runckpt_read_slice(&f.cfg, &f.net, dir, &sh, err), -1, "case %zu was read", c);
        cr_expect(strstr(err, cases[c].why) != NULL, "case %zu read: %s", c, err);
        for (int i = 0; i < 23; i++) cr_assert(p[i] == -7.0f && t[i] == -7.0f, "case %zu: parameter %d was written", c, i);
        cr_assert_eq(runckpt_verify(dir, &m, err), -1);
    }
    teardown(&f);
}

Test(runckpt, commit_refuses_a_shard_count_the_files_do_not_have) {
    Fixture f;
    setup(&f, "count");
    char dir[PATH_LEN], err[ERR_LEN];
    cr_assert_eq(runckpt_begin(f.run, 1, dir, err), 0, "%s", err);
    for (int p = 0; p < 2; p++) {
        size_t off, len;
        shard_range(f.n, 2, p, &off, &len);
        write_one(&f, dir, 1, 2, p, off, len);
    }
    RunCkptManifest m = manifest_of(&f, 1, 1);
    cr_assert_eq(runckpt_commit(f.run, dir, &m, 2, err), -1);
    cr_expect(strstr(err, "ps-0.ckpt was written as one of 2 shards, but the manifest lists 1") != NULL, "%s", err);
    m = manifest_of(&f, 3, 1);
    cr_assert_eq(runckpt_commit(f.run, dir, &m, 2, err), -1);
    cr_expect(strstr(err, "ps-0.ckpt was written as one of 2 shards, but the manifest lists 3") != NULL, "%s", err);
    /* The directory runckpt_begin made for another number. */
    m = manifest_of(&f, 2, 5);
    cr_assert_eq(runckpt_commit(f.run, dir, &m, 2, err), -1);
    cr_expect(strstr(err, "not the directory runckpt_begin made for it") != NULL, "%s", err);
    m = manifest_of(&f, 2, 1);
    cr_assert_eq(runckpt_commit(f.run, dir, &m, 2, err), 0, "%s", err);
    teardown(&f);
}

/* ---- non-finite parameters -------------------------------------------- */

Test(runckpt, non_finite_parameters_are_not_checkpointed) {
    Fixture f;
    setup(&f, "nonfinite");
    char dir[PATH_LEN], err[ERR_LEN], path[PATH_LEN + 64];
    cr_assert_eq(runckpt_begin(f.run, 1, dir, err), 0, "%s", err);
    float bad[3] = {NAN, INFINITY, -INFINITY};
    for (int k = 0; k < 3; k++) {
        for (int which = 0; which < 2; which++) {
            float *arr = which ? f.target : f.params;
            float keep = arr[5];
            arr[5] = bad[k];
            RunCkptShard sh = {.index = 0, .off = 0, .len = f.n, .params = f.params, .target = f.target,
                               .run_id = f.run_id, .seq = 1, .n_shards = 1};
            cr_assert_eq(runckpt_write_shard(&f.cfg, &f.net, dir, &sh, err), -1);
            cr_expect(strstr(err, "non-finite parameters (parameter 5 of the ") != NULL, "%s", err);
            cr_expect(strstr(err, which ? "target network" : "the network is") != NULL, "%s", err);
            cr_expect(strstr(err, "not checkpointed") != NULL, "%s", err);
            arr[5] = keep;
        }
    }
    ckpt_path(&f, 1, "ps-0.ckpt", path);
    cr_expect(!exists(path), "no file was written");
    teardown(&f);
}

/* ---- falling back past a damaged checkpoint ----------------------------- */

/* runckpt_latest with stderr captured: the manifest's seq, or 0 on error;
 * the warning (or "") in warn. */
static uint64_t latest_seq(const Fixture *f, char *warn, size_t cap, char *err) {
    char out[PATH_LEN];
    snprintf(out, sizeof out, "%s-stderr.txt", f->run);
    int saved = stderr_to(out);
    RunCkptManifest m;
    int rc = runckpt_latest(f->run, &m, err);
    char *text = stderr_back(saved, out);
    snprintf(warn, cap, "%s", text);
    free(text);
    unlink(out);
    return rc == 0 ? m.seq : 0;
}

Test(runckpt, damaged_latest_falls_back_to_the_newest_intact_checkpoint) {
    Fixture f;
    setup(&f, "fallback");
    char dir[PATH_LEN], err[ERR_LEN], warn[2048], path[PATH_LEN + 64], want[4 * PATH_LEN];
    write_shards(&f, 2, 1, dir);
    write_shards(&f, 2, 2, dir);
    cr_assert_eq(latest_seq(&f, warn, sizeof warn, err), 2, "%s", err);
    cr_expect_str_eq(warn, "", "no warning while latest is intact");
    char latest[PATH_LEN];
    snprintf(latest, sizeof latest, "%s/checkpoints/latest", f.run);

    /* latest is garbage: the newest intact one is still checkpoint 2. */
    spit(latest, "\x01garbage\n", 9);
    cr_assert_eq(latest_seq(&f, warn, sizeof warn, err), 2, "%s", err);
    snprintf(want, sizeof want, "gorila: warning: checkpoint %s is damaged (%s does not name a checkpoint directory); using %s/checkpoints/ckpt-000002\n",
             latest, latest, f.run);
    cr_expect_str_eq(warn, want);
    /* latest missing. */
    unlink(latest);
    cr_assert_eq(latest_seq(&f, warn, sizeof warn, err), 2, "%s", err);
    cr_expect(strstr(warn, "gorila: warning: checkpoint") == warn && strstr(warn, "No such file") != NULL, "%s", warn);
    spit(latest, "ckpt-000002\n", 12);

    /* The newest's MANIFEST truncated: back to checkpoint 1. */
    ckpt_path(&f, 2, "MANIFEST", path);
    size_t bytes;
    unsigned char *man = slurp(path, &bytes);
    spit(path, man, bytes / 2);
    cr_assert_eq(latest_seq(&f, warn, sizeof warn, err), 1, "%s", err);
    ckpt_path(&f, 2, NULL, dir);
    snprintf(want, sizeof want, "gorila: warning: checkpoint %s is damaged (", dir);
    cr_expect(strstr(warn, want) == warn, "%s", warn);
    ckpt_path(&f, 1, NULL, dir);
    snprintf(want, sizeof want, "); using %s\n", dir);
    cr_expect(strstr(warn, want) != NULL, "%s", warn);
    cr_expect_eq(strchr(warn, '\n'), warn + strlen(warn) - 1, "one line");
    spit(path, man, bytes);
    free(man);
    cr_assert_eq(latest_seq(&f, warn, sizeof warn, err), 2, "restored: %s", err);

    /* A shard of the newest corrupted. */
    ckpt_path(&f, 2, "ps-0.ckpt", path);
    unsigned char *sh = slurp(path, &bytes);
    free(sh);
    flip_byte(path, (long)bytes - 3);
    cr_assert_eq(latest_seq(&f, warn, sizeof warn, err), 1, "%s", err);
    cr_expect(strstr(warn, "ps-0.ckpt: file CRC") != NULL, "%s", warn);
    /* The quiet variant says the same in its buffer. */
    RunCkptManifest m;
    char note[ERR_LEN];
    cr_assert_eq(runckpt_find_latest(f.run, &m, note, err), 0, "%s", err);
    cr_expect_eq(m.seq, 1);
    cr_expect(strstr(note, "ps-0.ckpt: file CRC") != NULL, "%s", note);

    /* Every checkpoint damaged: an error, not a guess. */
    ckpt_path(&f, 1, "ps-1.ckpt", path);
    unlink(path);
    cr_assert_eq(latest_seq(&f, warn, sizeof warn, err), 0);
    cr_expect(strstr(err, "no intact checkpoint in") != NULL && strstr(err, "ckpt-000002") != NULL, "%s", err);
    teardown(&f);
}

/* A job resumed past a damaged checkpoint numbers its next checkpoint after
 * the one it resumed from; committing it removes the damaged line above,
 * so `keep` never keeps a damaged checkpoint at the expense of a good one. */
Test(runckpt, a_commit_after_a_fallback_removes_the_abandoned_line) {
    Fixture f;
    setup(&f, "abandon");
    char dir[PATH_LEN], err[ERR_LEN], path[PATH_LEN + 64];
    for (uint64_t s = 1; s <= 3; s++) {
        cr_assert_eq(runckpt_begin(f.run, s, dir, err), 0, "%s", err);
        write_one(&f, dir, s, 1, 0, 0, f.n);
        RunCkptManifest m = manifest_of(&f, 1, s);
        cr_assert_eq(runckpt_commit(f.run, dir, &m, 3, err), 0, "%s", err);
    }
    ckpt_path(&f, 3, "ps-0.ckpt", path);
    unlink(path);
    ckpt_path(&f, 2, "MANIFEST", path);
    unlink(path);
    RunCkptManifest m;
    char note[ERR_LEN];
    cr_assert_eq(runckpt_find_latest(f.run, &m, note, err), 0, "%s", err);
    cr_assert_eq(m.seq, 1);
    /* The next checkpoint is 2: its directory is emptied first. */
    cr_assert_eq(runckpt_begin(f.run, 2, dir, err), 0, "%s", err);
    ckpt_path(&f, 2, "MANIFEST", path);
    cr_expect(!exists(path));
    write_one(&f, dir, 2, 1, 0, 0, f.n);
    m = manifest_of(&f, 1, 2);
    cr_assert_eq(runckpt_commit(f.run, dir, &m, 1, err), 0, "%s", err);
    ckpt_path(&f, 3, NULL, path);
    cr_expect(!exists(path), "the damaged checkpoint 3 is gone");
    ckpt_path(&f, 1, NULL, path);
    cr_expect(!exists(path), "keep = 1");
    cr_assert_eq(runckpt_find_latest(f.run, &m, note, err), 0, "%s", err);
    cr_expect_eq(m.seq, 2);
    cr_expect_str_eq(note, "");
    teardown(&f);
}

/* ---- best ---------------------------------------------------------------- */

static void write_best(Fixture *f, uint64_t seq, int P, double mean, bool commit) {
    char dir[PATH_LEN], err[ERR_LEN];
    cr_assert_eq(runckpt_begin_best(f->run, seq, dir, err), 0, "%s", err);
    char want[PATH_LEN];
    snprintf(want, sizeof want, "%s/checkpoints/best.new-%06llu", f->run, (unsigned long long)seq);
    cr_assert_str_eq(dir, want);
    for (int p = 0; p < P; p++) {
        size_t off, len;
        shard_range(f->n, P, p, &off, &len);
        write_one(f, dir, seq, P, p, off, len);
    }
    if (!commit) return;
    RunCkptManifest m = manifest_of(f, P, seq);
    m.eval_mean = mean;
    m.eval_episodes = 10;
    m.eval_seed = 7;
    cr_assert_eq(runckpt_commit_best(f->run, dir, &m, err), 0, "%s", err);
}

static int count_entries(const char *dir, const char *prefix) {
    DIR *d = opendir(dir);
    cr_assert_not_null(d, "%s", dir);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strncmp(e->d_name, prefix, strlen(prefix)) == 0) n++;
    closedir(d);
    return n;
}

Test(runckpt, best_is_replaced_whole_and_survives_prune) {
    Fixture f;
    setup(&f, "best");
    char dir[PATH_LEN], err[ERR_LEN], best[PATH_LEN + 16], ckdir[PATH_LEN], path[PATH_LEN + 64];
    snprintf(ckdir, sizeof ckdir, "%s/checkpoints", f.run);
    snprintf(best, sizeof best, "%s/best", ckdir);
    RunCkptManifest m;
    cr_assert_eq(runckpt_best(f.run, &m, err), -1);
    cr_expect(strstr(err, "no best checkpoint in") != NULL, "%s", err);

    write_best(&f, 1, 3, 480.5, true);
    cr_assert_eq(runckpt_best(f.run, &m, err), 0, "%s", err);
    cr_expect_str_eq(m.kind, "best");
    cr_expect_eq(m.seq, 1);
    cr_expect_eq(m.n_shards, 3);
    cr_expect_eq(m.eval_mean, 480.5);
    cr_expect_eq(m.eval_episodes, 10);
    cr_expect_eq(m.eval_seed, 7);
    cr_expect_str_eq(m.dir, best);
    cr_expect_eq(count_entries(ckdir, "best.new-"), 0);
    cr_assert_eq(runckpt_latest(f.run, &m, err), -1, "latest never picks best");
    cr_expect(strstr(err, "no checkpoint in") != NULL, "%s", err);

    /* A better one, with other parameters and fewer shards. */
    struct stat before, after;
    cr_assert_eq(stat(best, &before), 0);
    for (size_t i = 0; i < f.n; i++) f.params[i] *= 2;
    write_best(&f, 2, 2, 490.0, true);
    cr_assert_eq(stat(best, &after), 0);
    cr_expect_neq(before.st_ino, after.st_ino, "best is a new directory, swapped in");
    cr_assert_eq(runckpt_best(f.run, &m, err), 0, "%s", err);
    cr_expect_eq(m.seq, 2);
    cr_expect_eq(m.eval_mean, 490.0);
    snprintf(path, sizeof path, "%s/ps-2.ckpt", best);
    cr_expect(!exists(path), "nothing of the old best is left in it");
    float p[23], t[23];
    RunCkptShard sh = {.off = 0, .len = f.n, .params = p, .target = t};
    cr_assert_eq(runckpt_read_slice(&f.cfg, &f.net, best, &sh, err), 0, "%s", err);
    cr_expect_eq(memcmp(p, f.params, sizeof p), 0);
    cr_expect_eq(count_entries(ckdir, "best"), 1, "only best itself");

    /* A crash between staging and commit leaves best as it was; the next
     * commit clears the leftover. */
    write_best(&f, 3, 2, 0, false);
    cr_assert_eq(runckpt_best(f.run, &m, err), 0, "%s", err);
    cr_expect_eq(m.seq, 2);
    write_best(&f, 4, 1, 495.0, true);
    cr_expect_eq(count_entries(ckdir, "best.new-"), 0);

    /* Periodic checkpoints with keep = 1 never touch best. */
    for (uint64_t s = 1; s <= 4; s++) {
        cr_assert_eq(runckpt_begin(f.run, s, dir, err), 0, "%s", err);
        write_one(&f, dir, s, 1, 0, 0, f.n);
        RunCkptManifest pm = manifest_of(&f, 1, s);
        cr_assert_eq(runckpt_commit(f.run, dir, &pm, 1, err), 0, "%s", err);
    }
    cr_assert_eq(runckpt_best(f.run, &m, err), 0, "%s", err);
    cr_expect_eq(m.seq, 4);
    cr_expect_eq(m.eval_mean, 495.0);
    cr_assert_eq(runckpt_latest(f.run, &m, err), 0, "%s", err);
    cr_expect_eq(m.seq, 4);
    cr_expect_str_eq(m.kind, "periodic");
    cr_expect_eq(count_entries(ckdir, "ckpt-"), 1);

    /* A damaged best is refused like any checkpoint. */
    snprintf(path, sizeof path, "%s/ps-0.ckpt", best);
    flip_byte(path, 300);
    cr_assert_eq(runckpt_best(f.run, &m, err), -1);
    cr_expect(strstr(err, "ps-0.ckpt") != NULL, "%s", err);
    teardown(&f);
}

/* checkpoint.save_replay with prioritized replay: the shard file carries
 * the rows with their priorities and max_priority (replay section version
 * 2), a prioritized buffer reads them back exactly, and a uniform one
 * reads the same file, skipping the priorities. */
Test(runckpt, prioritized_replay_round_trips_with_priorities) {
    Fixture f;
    setup(&f, "prio");
    enum { O = 4, N = 37, CAP = 32 };
    ReplayStore a;
    replaystore_init_prioritized(&a, CAP, O, 0.6, 1e-3);
    float mem[N * (2 * O + 4)];
    Batch b = {N, O, mem, (int32_t *)(mem + 2 * N * O), mem + 2 * N * O + N, mem + N * O, mem + 2 * N * O + 2 * N,
               mem + 2 * N * O + 3 * N};
    float td[N];
    for (int i = 0; i < N; i++) {
        for (int j = 0; j < O; j++) b.obs[i * O + j] = b.next_obs[i * O + j] = (float)(i * O + j);
        b.action[i] = i % 2;
        b.reward[i] = 1;
        b.discount[i] = 0.99f;
        td[i] = 0.1f * (float)i;
    }
    replaystore_add_batch(&a, &b, td); /* wraps: 5 evicted */
    cr_assert(replaystore_update(&a, 3, replaybuf_slot_id(&a.buf, 3), 50.0));
    char dir[PATH_LEN], err[ERR_LEN];
    cr_assert_eq(runckpt_begin(f.run, 1, dir, err), 0, "%s", err);
    RunCkptShard sh = {.index = 0, .off = 0, .len = f.n, .params = f.params, .target = f.target, .opt = &f.opt,
                       .replay = &a, .run_id = f.run_id, .seq = 1, .n_shards = 1};
    cr_assert_eq(runckpt_write_shard(&f.cfg, &f.net, dir, &sh, err), 0, "%s", err);
    RunCkptManifest m = manifest_of(&f, 1, 1);
    cr_assert_eq(runckpt_commit(f.run, dir, &m, 2, err), 0, "%s", err);

    float *p = calloc(f.n, sizeof(float)), *t = calloc(f.n, sizeof(float));
    ReplayStore c;
    replaystore_init_prioritized(&c, CAP, O, 0.6, 1e-3);
    RunCkptShard rd = {.index = 0, .off = 0, .len = f.n, .params = p, .target = t, .replay = &c};
    cr_assert_eq(runckpt_read_slice(&f.cfg, &f.net, dir, &rd, err), 0, "%s", err);
    cr_assert_eq(replaystore_size(&c), CAP);
    cr_assert_eq(c.max_priority, a.max_priority);
    cr_assert_eq(c.max_priority, pow(50.0 + 1e-3, 0.6));
    for (size_t s = 0; s < CAP; s++) {
        uint64_t id = replaybuf_slot_id(&c.buf, s);
        size_t slot_a = (size_t)(id % CAP); /* a filled from empty: id k sits in slot k mod CAP */
        cr_assert_eq(replaybuf_slot_id(&a.buf, slot_a), id);
        cr_assert_eq(sumtree_get(&c.tree, s), sumtree_get(&a.tree, slot_a), "id %llu", (unsigned long long)id);
    }
    cr_assert(fabs(replaystore_total(&c) - replaystore_total(&a)) <= 1e-12 * replaystore_total(&a));

    ReplayStore u;
    replaystore_init_uniform(&u, CAP, O);
    RunCkptShard ru = {.index = 0, .off = 0, .len = f.n, .params = p, .target = t, .replay = &u};
    cr_assert_eq(runckpt_read_slice(&f.cfg, &f.net, dir, &ru, err), 0, "%s", err);
    cr_assert_eq(replaystore_size(&u), CAP);
    replaystore_free(&u);
    replaystore_free(&c);
    replaystore_free(&a);
    free(p);
    free(t);
    teardown(&f);
}

/* ---- replay files (distributed jobs, checkpoint.save_replay) ------------- */

enum { RO = 4 }; /* CartPole's obs_dim, the fixture's network input */

/* A prioritized buffer of capacity cap after n inserts tagged `tag`: insert
 * i has obs[0] = 1000 tag + i, action i % 2 and priority (i % 7) + 0.5
 * (alpha 1, eps 0.5, |td| = i % 7); insert 2 (if stored) is raised to 40.5. */
static void fill_prio(ReplayStore *pr, size_t cap, int n, int tag) {
    replaystore_init_prioritized(pr, cap, RO, 1.0, 0.5);
    for (int i = 0; i < n; i++) {
        float obs[RO] = {(float)(1000 * tag + i), 1, 2, 3}, next[RO] = {-1, -2, -3, -4};
        float td = (float)(i % 7);
        Batch b = {1, RO, obs, &(int32_t){i % 2}, &(float){1}, next, &(float){0.99f}, NULL};
        replaystore_add_batch(pr, &b, &td);
    }
    for (size_t s = 0; s < replaystore_size(pr); s++)
        if (((const float *)pr->buf.obs)[s * RO] == (float)(1000 * tag + 2)) cr_assert(replaystore_update(pr, s, replaybuf_slot_id(&pr->buf, s), 40.0));
}

/* Write checkpoint seq of the fixture with P parameter shards and the R
 * prioritized replay shards prs (R = 0: none), committed. */
static void write_with_replay(Fixture *f, uint64_t seq, int P, const ReplayStore *prs, int R, char *dir) {
    char err[ERR_LEN];
    cr_assert_eq(runckpt_begin(f->run, seq, dir, err), 0, "%s", err);
    for (int p = 0; p < P; p++) {
        size_t off, len;
        shard_range(f->n, P, p, &off, &len);
        write_one(f, dir, seq, P, p, off, len);
    }
    for (int s = 0; s < R; s++) {
        RunCkptReplay rp = {.index = s, .n_shards = R, .replay = &prs[s], .run_id = f->run_id, .seq = seq};
        cr_assert_eq(runckpt_write_replay(&f->cfg, &f->net, dir, &rp, err), 0, "%s", err);
    }
    RunCkptManifest m = manifest_of(f, P, seq);
    m.n_replay = R;
    cr_assert_eq(runckpt_commit(f->run, dir, &m, 3, err), 0, "%s", err);
}

static unsigned char *ser_prio(const ReplayStore *pr, size_t *bytes) {
    *bytes = replaystore_serial_bytes(pr);
    unsigned char *b = malloc(*bytes);
    replaystore_serialize(pr, b);
    return b;
}

/* Replay files are listed in the MANIFEST (size, CRC, transitions) and
 * bound like shard files; with the same replay shard count each shard gets
 * its own file back exactly: rows, ids, priorities, max_priority (the
 * re-serialized bytes are the saved ones). A uniform buffer reads the same
 * file without the priorities. */
Test(runckpt, replay_files_are_listed_and_restore_exactly) {
    Fixture f;
    setup(&f, "replay");
    ReplayStore prs[3];
    fill_prio(&prs[0], 30, 17, 0);
    fill_prio(&prs[1], 30, 0, 1);  /* an empty shard */
    fill_prio(&prs[2], 30, 44, 2); /* wrapped */
    char dir[PATH_LEN], err[ERR_LEN], path[PATH_LEN + 64];
    write_with_replay(&f, 1, 2, prs, 3, dir);
    snprintf(path, sizeof path, "%s/MANIFEST", dir);
    size_t n;
    char *text = (char *)slurp(path, &n);
    cr_expect(strstr(text, "\nshard 1 bytes ") && strstr(text, "\nreplay_shards 3\nreplay 0 bytes ") &&
                  strstr(text, " transitions 17\nreplay 1 bytes ") && strstr(text, " transitions 30\ncrc32c "),
              "%s", text);
    free(text);
    RunCkptManifest m;
    cr_assert_eq(runckpt_verify(dir, &m, err), 0, "%s", err);
    cr_expect_eq(m.n_replay, 3);
    cr_expect_eq(m.replay_transitions, 47);
    cr_assert_eq(runckpt_latest(f.run, &m, err), 0, "%s", err);
    cr_expect_eq(m.seq, 1);

    for (int s = 0; s < 3; s++) {
        ReplayStore back;
        replaystore_init_prioritized(&back, 30, RO, 0.6, 1e-3);
        RunCkptReplayInfo info;
        cr_assert_eq(runckpt_read_replay(&f.cfg, &f.net, dir, s, 3, &back, &info, err), 0, "%s", err);
        cr_expect(info.exact && info.files == 3 && info.dropped == 0);
        cr_expect_eq(info.restored, replaystore_size(&prs[s]));
        size_t b1, b2;
        unsigned char *x = ser_prio(&prs[s], &b1), *y = ser_prio(&back, &b2);
        cr_assert_eq(b1, b2);
        cr_assert(memcmp(x, y, b1) == 0, "shard %d: the restored buffer serializes differently", s);
        cr_expect_eq(back.max_priority, prs[s].max_priority);
        free(x);
        free(y);
        replaystore_free(&back);

        ReplayStore u;
        replaystore_init_uniform(&u, 30, RO);
        cr_assert_eq(runckpt_read_replay(&f.cfg, &f.net, dir, s, 3, &u, &info, err), 0, "%s", err);
        cr_expect_eq(replaystore_size(&u), replaystore_size(&prs[s]));
        cr_expect_eq(replaybuf_total(&u.buf), replaybuf_total(&prs[s].buf));
        replaystore_free(&u);
    }
    /* best holds parameters only: made from this checkpoint, it lists no
     * replay file and verifies. */
    RunCkptManifest bm = manifest_of(&f, 2, 1);
    bm.n_replay = 3;
    cr_assert_eq(runckpt_best_from(f.run, dir, &bm, err), 0, "%s", err);
    cr_assert_eq(runckpt_best(f.run, &m, err), 0, "%s", err);
    cr_expect_eq(m.n_replay, 0);
    char best[PATH_LEN + 64];
    snprintf(best, sizeof best, "%s/checkpoints/best/replay-0.ckpt", f.run);
    cr_expect(!exists(best));
    for (int s = 0; s < 3; s++) replaystore_free(&prs[s]);
    teardown(&f);
}

/* Resumed with another number of replay shards: the saved rows are dealt
 * out, every one to exactly one new shard, each with its saved priority,
 * within one row of an even share; every new shard takes the largest
 * saved max_priority. A new shard too small keeps its capacity's worth
 * and reports the rest as dropped. */
Test(runckpt, another_replay_shard_count_deals_the_rows_with_their_priorities) {
    Fixture f;
    setup(&f, "redeal");
    ReplayStore prs[3];
    fill_prio(&prs[0], 30, 17, 0);
    fill_prio(&prs[1], 30, 5, 1);
    fill_prio(&prs[2], 30, 44, 2); /* holds inserts 14 .. 43 */
    prs[1].max_priority = 99.0;    /* the largest: every new shard takes it */
    char dir[PATH_LEN], err[ERR_LEN];
    write_with_replay(&f, 1, 1, prs, 3, dir);
    enum { SAVED = 17 + 5 + 30 };
    for (int S = 1; S <= 5; S++) {
        if (S == 3) continue; /* the exact case, above */
        int seen[3][64] = {{0}};
        size_t lo = SIZE_MAX, hi = 0;
        for (int s = 0; s < S; s++) {
            ReplayStore back;
            replaystore_init_prioritized(&back, 64, RO, 1.0, 0.5);
            RunCkptReplayInfo info;
            cr_assert_eq(runckpt_read_replay(&f.cfg, &f.net, dir, s, S, &back, &info, err), 0, "%s", err);
            cr_expect(!info.exact && info.files == 3 && info.dropped == 0);
            size_t got = replaystore_size(&back);
            cr_expect_eq(info.restored, got);
            cr_expect_eq(back.max_priority, 99.0, "S=%d shard %d", S, s);
            cr_expect_eq(replaybuf_total(&back.buf), got, "new ids 0 .. n-1");
            lo = got < lo ? got : lo;
            hi = got > hi ? got : hi;
            for (size_t k = 0; k < got; k++) {
                const float *o = (const float *)back.buf.obs; /* float rows */
                int tag = (int)o[k * RO] / 1000, i = (int)o[k * RO] % 1000;
                cr_assert(tag >= 0 && tag < 3 && i < 64);
                seen[tag][i]++;
                double want = i == 2 ? 40.5 : (double)(i % 7) + 0.5;
                cr_assert_eq(sumtree_get(&back.tree, k), want, "S=%d: insert %d of shard %d has priority %g", S, i,
                             tag, sumtree_get(&back.tree, k));
                cr_assert_eq(back.buf.action[k], i % 2);
            }
            replaystore_free(&back);
        }
        cr_expect_leq(hi - lo, 1, "S=%d: shares %zu .. %zu", S, lo, hi);
        int total = 0;
        for (int tag = 0; tag < 3; tag++)
            for (int i = 0; i < 64; i++) {
                int want = (tag == 0 && i < 17) || (tag == 1 && i < 5) || (tag == 2 && i >= 14 && i < 44);
                cr_assert_eq(seen[tag][i], want, "S=%d: insert %d of old shard %d dealt %d times", S, i, tag,
                             seen[tag][i]);
                total += seen[tag][i];
            }
        cr_expect_eq(total, SAVED);
    }
    /* Two new shards of 10: each keeps 10 of its 26 and drops 16. */
    for (int s = 0; s < 2; s++) {
        ReplayStore back;
        replaystore_init_prioritized(&back, 10, RO, 1.0, 0.5);
        RunCkptReplayInfo info;
        cr_assert_eq(runckpt_read_replay(&f.cfg, &f.net, dir, s, 2, &back, &info, err), 0, "%s", err);
        cr_expect_eq(info.restored, 10);
        cr_expect_eq(info.dropped, 16);
        replaystore_free(&back);
    }
    /* A uniform buffer takes the rows without priorities. */
    ReplayStore u;
    replaystore_init_uniform(&u, 64, RO);
    RunCkptReplayInfo info;
    cr_assert_eq(runckpt_read_replay(&f.cfg, &f.net, dir, 0, 1, &u, &info, err), 0, "%s", err);
    cr_expect_eq(replaystore_size(&u), SAVED);
    replaystore_free(&u);
    for (int s = 0; s < 3; s++) replaystore_free(&prs[s]);
    teardown(&f);
}

/* A checkpoint without replay files (save_replay off, or older runs):
 * nothing is restored, and its MANIFEST has no replay lines at all, so it
 * reads in every build that reads format 2. */
Test(runckpt, checkpoint_without_replay_restores_nothing) {
    Fixture f;
    setup(&f, "noreplay");
    char dir[PATH_LEN], err[ERR_LEN], path[PATH_LEN + 64];
    write_with_replay(&f, 1, 2, NULL, 0, dir);
    snprintf(path, sizeof path, "%s/MANIFEST", dir);
    size_t n;
    char *text = (char *)slurp(path, &n);
    cr_expect(!strstr(text, "replay"), "%s", text);
    free(text);
    ReplayStore back;
    replaystore_init_prioritized(&back, 8, RO, 1.0, 0.5);
    RunCkptReplayInfo info = {.files = 7};
    cr_assert_eq(runckpt_read_replay(&f.cfg, &f.net, dir, 0, 2, &back, &info, err), 0, "%s", err);
    cr_expect_eq(info.files, 0);
    cr_expect_eq(info.restored, 0);
    cr_expect_eq(replaystore_size(&back), 0);
    replaystore_free(&back);
    teardown(&f);
}

/* A damaged, missing or foreign replay file makes its checkpoint fail
 * verification, so a resume falls back to the previous intact one, as for
 * a damaged parameter shard; a commit refuses a set it cannot bind. */
Test(runckpt, damaged_replay_file_falls_back_to_the_previous_checkpoint) {
    Fixture f;
    setup(&f, "replaydmg");
    ReplayStore prs[2];
    fill_prio(&prs[0], 20, 9, 0);
    fill_prio(&prs[1], 20, 12, 1);
    char d1[PATH_LEN], d2[PATH_LEN], err[ERR_LEN], warn[ERR_LEN], path[PATH_LEN + 64], from[PATH_LEN + 64];
    write_with_replay(&f, 1, 1, prs, 2, d1);
    write_with_replay(&f, 2, 1, prs, 2, d2);
    snprintf(path, sizeof path, "%s/replay-1.ckpt", d2);
    flip_byte(path, 400);
    RunCkptManifest m;
    cr_assert_eq(runckpt_verify(d2, &m, err), -1);
    cr_expect(strstr(err, "replay-1.ckpt: file CRC") != NULL, "%s", err);
    cr_assert_eq(runckpt_find_latest(f.run, &m, warn, err), 0, "%s", err);
    cr_expect_eq(m.seq, 1);
    cr_expect(strstr(warn, "ckpt-000002 is damaged (") && strstr(warn, "replay-1.ckpt") && strstr(warn, "using "),
              "%s", warn);
    /* A shard that reads the damaged file refuses it (one that does not,
     * shard 0 of 2, is left to runckpt_latest's verification above). */
    ReplayStore back;
    replaystore_init_prioritized(&back, 20, RO, 1.0, 0.5);
    RunCkptReplayInfo info;
    cr_assert_eq(runckpt_read_replay(&f.cfg, &f.net, d2, 1, 2, &back, &info, err), -1);
    cr_expect(strstr(err, "replay-1.ckpt: file CRC") != NULL, "%s", err);
    replaystore_free(&back);
    replaystore_init_prioritized(&back, 20, RO, 1.0, 0.5);
    cr_assert_eq(runckpt_read_replay(&f.cfg, &f.net, d2, 0, 3, &back, &info, err), -1);
    cr_expect(strstr(err, "replay-1.ckpt: file CRC") != NULL, "dealing reads it too: %s", err);

    /* Another checkpoint's file, bound to checkpoint 1. */
    snprintf(from, sizeof from, "%s/replay-1.ckpt", d1);
    copy_file(from, path);
    cr_assert_eq(runckpt_verify(d2, &m, err), -1);
    cr_expect(strstr(err, "belongs to checkpoint 1, but the manifest is of checkpoint 2") != NULL, "%s", err);
    /* A parameter shard in a replay file's place. */
    snprintf(from, sizeof from, "%s/ps-0.ckpt", d2);
    copy_file(from, path);
    cr_assert_eq(runckpt_verify(d2, &m, err), -1);
    cr_expect(strstr(err, "holds parameters, not replay contents") != NULL, "%s", err);
    /* Missing: verification and a new commit both refuse. */
    unlink(path);
    cr_assert_eq(runckpt_verify(d2, &m, err), -1);
    cr_expect(strstr(err, "replay-1.ckpt") != NULL, "%s", err);
    RunCkptManifest cm = manifest_of(&f, 1, 2);
    cm.n_replay = 2;
    cr_assert_eq(runckpt_commit(f.run, d2, &cm, 3, err), -1);
    cr_expect(strstr(err, "cannot commit checkpoint") && strstr(err, "replay-1.ckpt"), "%s", err);
    /* Written as one of 2 replay shards, listed as one of 3. */
    cm.n_replay = 3;
    RunCkptReplay rp = {.index = 1, .n_shards = 2, .replay = &prs[1], .run_id = f.run_id, .seq = 2};
    cr_assert_eq(runckpt_write_replay(&f.cfg, &f.net, d2, &rp, err), 0, "%s", err);
    cr_assert_eq(runckpt_commit(f.run, d2, &cm, 3, err), -1);
    cr_expect(strstr(err, "was written as one of 2 replay shards, but the manifest lists 3") != NULL, "%s", err);
    replaystore_free(&back);
    for (int s = 0; s < 2; s++) replaystore_free(&prs[s]);
    teardown(&f);
}

/* ---- damage that only a content check can see ---------------------------- */

/* Recompute every section CRC, the table CRC and the header CRC of the
 * checkpoint file at path (docs/CHECKPOINT.md offsets), as someone changing
 * a file on purpose would: only the checks of content can then catch it. */
static void fix_crcs(const char *path) {
    size_t n;
    unsigned char *b = slurp(path, &n);
    uint32_t ns;
    memcpy(&ns, b + 20, 4);
    cr_assert(ns >= 1 && ns <= 16);
    size_t off = 256 + 16 * (size_t)ns;
    for (uint32_t i = 0; i < ns; i++) {
        unsigned char *e = b + 256 + 16 * i;
        uint64_t bytes;
        memcpy(&bytes, e + 8, 8);
        cr_assert_leq(off + bytes, n);
        uint32_t c = crc32c(b + off, (size_t)bytes);
        memcpy(e + 4, &c, 4);
        off += (size_t)bytes;
    }
    uint32_t t = crc32c(b + 256, 16 * (size_t)ns), h;
    memcpy(b + 24, &t, 4);
    h = crc32c(b, 252);
    memcpy(b + 252, &h, 4);
    spit(path, b, n);
    free(b);
}

/* Rewrite dir/MANIFEST: every line starting with `key ` (its first word and
 * a blank) replaced by `line` (NULL: kept), then the line of file `name`
 * (ps-<p>.ckpt or replay-<s>.ckpt; NULL: none) given the file's size and
 * CRC as it is now, and the manifest's own CRC recomputed: a manifest
 * "rebound" to changed contents. */
static void edit_manifest(const char *dir, const char *key, const char *line, const char *name) {
    char path[PATH_LEN + 32], fpath[PATH_LEN + 32], prefix[64] = "", out[8192];
    snprintf(path, sizeof path, "%s/MANIFEST", dir);
    size_t fbytes = 0;
    uint32_t fcrc = 0;
    if (name) {
        int idx;
        snprintf(fpath, sizeof fpath, "%s/%s", dir, name);
        unsigned char *fb = slurp(fpath, &fbytes);
        fcrc = crc32c(fb, fbytes);
        free(fb);
        if (sscanf(name, "ps-%d.ckpt", &idx) == 1) snprintf(prefix, sizeof prefix, "shard %d bytes ", idx);
        else if (sscanf(name, "replay-%d.ckpt", &idx) == 1) snprintf(prefix, sizeof prefix, "replay %d bytes ", idx);
        else cr_assert_fail("%s", name);
    }
    size_t n, k = 0;
    char *text = (char *)slurp(path, &n);
    for (char *p = text, *nl; (nl = strchr(p, '\n')); p = nl + 1) {
        *nl = '\0';
        if (strncmp(p, "crc32c ", 7) == 0) break;
        if (key && line && strncmp(p, key, strlen(key)) == 0 && p[strlen(key)] == ' ') {
            k += (size_t)snprintf(out + k, sizeof out - k, "%s\n", line);
        } else if (prefix[0] && strncmp(p, prefix, strlen(prefix)) == 0) {
            const char *tail = strstr(p, " transitions ");
            k += (size_t)snprintf(out + k, sizeof out - k, "%s%zu crc32c %08x%s\n", prefix, fbytes, fcrc,
                                  tail ? tail : "");
        } else {
            k += (size_t)snprintf(out + k, sizeof out - k, "%s\n", p);
        }
    }
    k += (size_t)snprintf(out + k, sizeof out - k, "crc32c %08x\n", crc32c(out, k));
    spit(path, out, k);
    free(text);
}

/* Where section id's data starts in the file image b (its length in *bytes). */
static size_t section_at(const unsigned char *b, uint32_t id, uint64_t *bytes) {
    uint32_t ns;
    memcpy(&ns, b + 20, 4);
    size_t off = 256 + 16 * (size_t)ns;
    for (uint32_t i = 0; i < ns; i++) {
        uint32_t sid;
        memcpy(&sid, b + 256 + 16 * i, 4);
        memcpy(bytes, b + 256 + 16 * i + 8, 8);
        if (sid == id) return off;
        off += (size_t)*bytes;
    }
    cr_assert_fail("no section %u", id);
    return 0;
}

/* One field of one replay row, by the section's layout (docs/CHECKPOINT.md). */
typedef enum { F_OBS, F_ACTION, F_REWARD, F_NEXT_OBS, F_DISCOUNT, F_MAX_PRIORITY, F_PRIORITY } ReplayField;

/* Set field f of row `row` (element 1 of an observation) in the replay
 * section of the checkpoint file at path to v (an i32 for the action, an f64
 * for priorities, else an f32), then make the file's CRCs right again. */
static void patch_row(const char *path, ReplayField f, uint64_t row, double v) {
    size_t n;
    unsigned char *b = slurp(path, &n);
    uint64_t bytes;
    size_t sec = section_at(b, CKPT_SEC_REPLAY, &bytes);
    uint32_t O;
    uint64_t S;
    memcpy(&O, b + sec + 12, 4);
    memcpy(&S, b + sec + 24, 8);
    cr_assert_lt(row, S);
    size_t at = sec + 40, obs = 4 * S * O;
    switch (f) {
    case F_OBS: at += 4 * (row * O + 1); break;
    case F_ACTION: at += obs + 4 * row; break;
    case F_REWARD: at += obs + 4 * S + 4 * row; break;
    case F_NEXT_OBS: at += obs + 8 * S + 4 * (row * O + 1); break;
    case F_DISCOUNT: at += 2 * obs + 8 * S + 4 * row; break;
    case F_MAX_PRIORITY: at += 2 * obs + 12 * S; break;
    case F_PRIORITY: at += 2 * obs + 12 * S + 8 + 8 * row; break;
    }
    if (f == F_ACTION) {
        int32_t a = (int32_t)v;
        memcpy(b + at, &a, 4);
    } else if (f == F_MAX_PRIORITY || f == F_PRIORITY) {
        memcpy(b + at, &v, 8);
    } else {
        float x = (float)v;
        memcpy(b + at, &x, 4);
    }
    spit(path, b, n);
    free(b);
    fix_crcs(path);
}

/* A local trainer's checkpoint seq: the whole network and a uniform replay
 * section of 12 rows (actions 0/1, discounts 0.99, finite everything). */
static void write_local_with_replay(Fixture *f, uint64_t seq, char *dir) {
    char err[ERR_LEN];
    ReplayStore rb;
    replaystore_init_uniform(&rb, 16, RO);
    for (int i = 0; i < 12; i++) {
        float obs[RO] = {(float)i, 1, 2, 3}, next[RO] = {-1, -2, -3, -4};
        replaybuf_add(&rb.buf, obs, i % 2, 1.0f, next, 0.99f);
    }
    cr_assert_eq(runckpt_begin(f->run, seq, dir, err), 0, "%s", err);
    RunCkptShard sh = {.index = 0, .off = 0, .len = f->n, .params = f->params, .target = f->target, .opt = &f->opt,
                       .replay = &rb, .run_id = f->run_id, .seq = seq, .n_shards = 1};
    cr_assert_eq(runckpt_write_shard(&f->cfg, &f->net, dir, &sh, err), 0, "%s", err);
    RunCkptManifest m = manifest_of(f, 1, seq);
    cr_assert_eq(runckpt_commit(f->run, dir, &m, 3, err), 0, "%s", err);
    replaystore_free(&rb);
}

/* A restored replay row out of range (an action the network does not have,
 * a NaN discount, an Inf observation, ...) in a file whose every CRC is
 * right is damage of its checkpoint: verification names the file, the row
 * and the field, the resume falls back to the previous intact checkpoint,
 * and with none left it is an error (exit 4), never a learner's crash and a
 * restart on the same rows, nor "training diverged". */
Test(runckpt, invalid_replay_row_is_damage_local_trainer) {
    Fixture f;
    setup(&f, "badrow");
    char d1[PATH_LEN], d2[PATH_LEN], err[ERR_LEN], warn[ERR_LEN], path[PATH_LEN + 64], want[256];
    write_local_with_replay(&f, 1, d1);
    write_local_with_replay(&f, 2, d2);
    snprintf(path, sizeof path, "%s/ps-0.ckpt", d2);
    size_t n;
    unsigned char *orig = slurp(path, &n);
    const struct {
        ReplayField f;
        double v;
        const char *says;
    } cases[] = {
        {F_ACTION, 2, "replay row 7 of 12 (0 = oldest): action is 2, expected 0 .. 1"},
        {F_ACTION, -1, "replay row 7 of 12 (0 = oldest): action is -1, expected 0 .. 1"},
        {F_DISCOUNT, NAN, "replay row 7 of 12 (0 = oldest): discount is nan, expected a discount in [0, 1]"},
        {F_DISCOUNT, 1.5, "replay row 7 of 12 (0 = oldest): discount is 1.5, expected a discount in [0, 1]"},
        {F_OBS, INFINITY, "replay row 7 of 12 (0 = oldest): obs[1] is inf, expected finite"},
        {F_NEXT_OBS, -INFINITY, "replay row 7 of 12 (0 = oldest): next_obs[1] is -inf, expected finite"},
        {F_REWARD, NAN, "replay row 7 of 12 (0 = oldest): reward is nan, expected finite"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        spit(path, orig, n);
        patch_row(path, cases[c].f, 7, cases[c].v);
        edit_manifest(d2, NULL, NULL, "ps-0.ckpt");
        RunCkptManifest m;
        cr_assert_eq(runckpt_verify(d2, &m, err), -1, "case %zu passed verification", c);
        snprintf(want, sizeof want, "ps-0.ckpt: %s", cases[c].says);
        cr_expect(strstr(err, want) != NULL, "case %zu: %s", c, err);
        cr_assert_eq(runckpt_find_latest(f.run, &m, warn, err), 0, "%s", err);
        cr_expect_eq(m.seq, 1, "case %zu: falls back to the intact checkpoint", c);
        cr_expect(strstr(warn, "ckpt-000002 is damaged (") && strstr(warn, want), "case %zu: %s", c, warn);
        /* Read directly, the slice refuses it too, before any row lands. */
        float p[23], t[23];
        ReplayStore rb;
        replaystore_init_uniform(&rb, 16, RO);
        RunCkptShard sh = {.off = 0, .len = f.n, .params = p, .target = t, .replay = &rb};
        cr_assert_eq(runckpt_read_slice(&f.cfg, &f.net, d2, &sh, err), -1);
        cr_expect(strstr(err, cases[c].says) != NULL, "case %zu: %s", c, err);
        replaystore_free(&rb);
    }
    free(orig);
    /* The older one damaged the same way: nothing intact is left. */
    snprintf(path, sizeof path, "%s/ps-0.ckpt", d1);
    patch_row(path, F_ACTION, 0, 9);
    edit_manifest(d1, NULL, NULL, "ps-0.ckpt");
    RunCkptManifest m;
    cr_assert_eq(runckpt_find_latest(f.run, &m, warn, err), -1);
    cr_expect(strstr(err, "no intact checkpoint in") && strstr(err, "replay row"), "%s", err);
    teardown(&f);
}

/* The same for the replay files of a distributed job (replay-<s>.ckpt),
 * priorities included; a replay shard that reads the file refuses it too. */
Test(runckpt, invalid_replay_row_is_damage_replay_files) {
    Fixture f;
    setup(&f, "badrowd");
    ReplayStore prs[1];
    fill_prio(&prs[0], 20, 9, 0);
    char d1[PATH_LEN], d2[PATH_LEN], err[ERR_LEN], warn[ERR_LEN], path[PATH_LEN + 64];
    write_with_replay(&f, 1, 1, prs, 1, d1);
    write_with_replay(&f, 2, 1, prs, 1, d2);
    snprintf(path, sizeof path, "%s/replay-0.ckpt", d2);
    size_t n;
    unsigned char *orig = slurp(path, &n);
    const struct {
        ReplayField f;
        double v;
        const char *says;
    } cases[] = {
        {F_ACTION, 5, "replay-0.ckpt: replay row 3 of 9 (0 = oldest): action is 5, expected 0 .. 1"},
        {F_PRIORITY, NAN, "replay-0.ckpt: replay row 3 of 9 (0 = oldest): priority is nan"},
        {F_PRIORITY, 0, "replay-0.ckpt: replay row 3 of 9 (0 = oldest): priority is 0"},
        {F_MAX_PRIORITY, -1, "replay-0.ckpt: replay max_priority is -1"},
        {F_DISCOUNT, -0.5, "replay-0.ckpt: replay row 3 of 9 (0 = oldest): discount is -0.5"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        spit(path, orig, n);
        patch_row(path, cases[c].f, 3, cases[c].v);
        edit_manifest(d2, NULL, NULL, "replay-0.ckpt");
        RunCkptManifest m;
        cr_assert_eq(runckpt_verify(d2, &m, err), -1, "case %zu passed verification", c);
        cr_expect(strstr(err, cases[c].says) != NULL, "case %zu: %s", c, err);
        cr_assert_eq(runckpt_find_latest(f.run, &m, warn, err), 0, "%s", err);
        cr_expect_eq(m.seq, 1, "case %zu", c);
        cr_expect(strstr(warn, cases[c].says) != NULL, "case %zu: %s", c, warn);
        for (int uniform = 0; uniform < 2; uniform++) {
            ReplayStore back;
            if (uniform) replaystore_init_uniform(&back, 20, RO);
            else replaystore_init_prioritized(&back, 20, RO, 1.0, 0.5);
            RunCkptReplayInfo info;
            cr_assert_eq(runckpt_read_replay(&f.cfg, &f.net, d2, 0, 1, &back, &info, err), -1, "case %zu read", c);
            cr_expect(strstr(err, cases[c].says) != NULL, "case %zu: %s", c, err);
            replaystore_free(&back);
        }
    }
    free(orig);
    replaystore_free(&prs[0]);
    teardown(&f);
}

/* A section whose data no longer matches its CRC, in a file the MANIFEST
 * was rebound to (its whole-file CRC recomputed for the damaged bytes), is
 * damage found when the checkpoint is chosen: the resume falls back, as for
 * any other damage, instead of choosing it and failing when reading it. */
Test(runckpt, section_crc_mismatch_under_a_rebound_manifest_falls_back) {
    Fixture f;
    setup(&f, "rebound");
    char dir[PATH_LEN], err[ERR_LEN], warn[ERR_LEN], path[PATH_LEN + 64];
    write_shards(&f, 2, 1, dir);
    write_shards(&f, 2, 2, dir);
    ckpt_path(&f, 2, "ps-1.ckpt", path);
    size_t n;
    unsigned char *b = slurp(path, &n);
    free(b);
    flip_byte(path, (long)n - 3); /* in the last section's data */
    ckpt_path(&f, 2, NULL, dir);
    edit_manifest(dir, NULL, NULL, "ps-1.ckpt");
    RunCkptManifest m;
    cr_assert_eq(runckpt_verify(dir, &m, err), -1, "verified a file with a bad section");
    cr_expect(strstr(err, "ps-1.ckpt: section ") && strstr(err, " CRC mismatch"), "%s", err);
    cr_assert_eq(runckpt_find_latest(f.run, &m, warn, err), 0, "%s", err);
    cr_expect_eq(m.seq, 1);
    cr_expect(strstr(warn, "ckpt-000002 is damaged (") && strstr(warn, "CRC mismatch"), "%s", warn);
    teardown(&f);
}

/* Set float `index` of section id (CKPT_SEC_OPTIM: counted after its 8-byte
 * step) of the checkpoint file at path to v, then make its CRCs right. */
static void patch_float(const char *path, uint32_t id, size_t index, float v) {
    size_t n;
    unsigned char *b = slurp(path, &n);
    uint64_t bytes;
    size_t at = section_at(b, id, &bytes) + (id == CKPT_SEC_OPTIM ? 8 : 0) + 4 * index;
    cr_assert_leq(at + 4, n);
    memcpy(b + at, &v, 4);
    spit(path, b, n);
    free(b);
    fix_crcs(path);
}

/* A non-finite parameter, target value or optimizer state value in a shard
 * file whose sums were all recomputed is damage, like a bad replay row: the
 * checkpoint fails verification naming the file, the array and the
 * parameter, the resume falls back to the previous intact one, nothing
 * intact left is an error, and reading the slice directly (gorila eval or
 * export of the checkpoint's path) refuses it before a value is used. */
Test(runckpt, non_finite_values_are_damage) {
    Fixture f;
    setup(&f, "nonfinread");
    char d1[PATH_LEN], d2[PATH_LEN], err[ERR_LEN], warn[ERR_LEN], path[PATH_LEN + 64];
    write_shards(&f, 2, 1, d1);
    write_shards(&f, 2, 2, d2);
    snprintf(path, sizeof path, "%s/ps-1.ckpt", d2);
    size_t n, off, len;
    shard_range(f.n, 2, 1, &off, &len); /* [12, 23) */
    unsigned char *orig = slurp(path, &n);
    const struct {
        uint32_t id;
        size_t index;
        float v;
        const char *says;
    } cases[] = {
        {CKPT_SEC_PARAMS, 3, INFINITY, "ps-1.ckpt: parameter 15 of the network is inf"},
        {CKPT_SEC_PARAMS, 0, NAN, "ps-1.ckpt: parameter 12 of the network is nan"},
        {CKPT_SEC_TARGET, 10, -INFINITY, "ps-1.ckpt: parameter 22 of the target network is -inf"},
        {CKPT_SEC_OPTIM, 11 + 2, NAN, "ps-1.ckpt: adam state array 2 of 2 at parameter 14 is nan"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        spit(path, orig, n);
        patch_float(path, cases[c].id, cases[c].index, cases[c].v);
        edit_manifest(d2, NULL, NULL, "ps-1.ckpt");
        RunCkptManifest m;
        cr_assert_eq(runckpt_verify(d2, &m, err), -1, "case %zu passed verification", c);
        cr_expect(strstr(err, cases[c].says) != NULL, "case %zu: %s", c, err);
        cr_expect(strstr(err, "is damaged") || strstr(err, "are damaged"), "case %zu: %s", c, err);
        cr_assert_eq(runckpt_find_latest(f.run, &m, warn, err), 0, "%s", err);
        cr_expect_eq(m.seq, 1, "case %zu: falls back to the intact checkpoint", c);
        cr_expect(strstr(warn, "ckpt-000002 is damaged (") && strstr(warn, cases[c].says), "case %zu: %s", c, warn);
        /* Any slice, read directly: refused before a value lands. */
        float p[23], t[23];
        for (int i = 0; i < 23; i++) p[i] = t[i] = -7.0f;
        Optim o;
        optim_init(&o, &f.opt.p, f.n);
        RunCkptShard sh = {.off = 0, .len = f.n, .params = p, .target = t, .opt = &o};
        cr_assert_eq(runckpt_read_slice(&f.cfg, &f.net, d2, &sh, err), -1, "case %zu was read", c);
        cr_expect(strstr(err, cases[c].says) != NULL, "case %zu: %s", c, err);
        for (int i = 0; i < 23; i++) cr_assert(p[i] == -7.0f && t[i] == -7.0f, "case %zu: parameter %d set", c, i);
        optim_free(&o);
    }
    free(orig);
    /* The older one damaged too: nothing intact is left. */
    snprintf(path, sizeof path, "%s/ps-0.ckpt", d1);
    patch_float(path, CKPT_SEC_PARAMS, 1, NAN);
    edit_manifest(d1, NULL, NULL, "ps-0.ckpt");
    RunCkptManifest m;
    cr_assert_eq(runckpt_find_latest(f.run, &m, warn, err), -1);
    cr_expect(strstr(err, "no intact checkpoint in") && strstr(err, "and so is every older ckpt-* directory"), "%s",
              err);
    cr_assert_eq(runckpt_verify(d1, &m, err), -1);
    cr_expect(strstr(err, "ps-0.ckpt: parameter 1 of the network is nan") != NULL, "%s", err);
    teardown(&f);
}

/* The same for a learner's own copy (learner-<k>.ckpt, the decentralized
 * sync modes): verification, and so the fallback, refuses it, and so does
 * the learner reading it. */
Test(runckpt, non_finite_learner_copy_is_damage) {
    Fixture f;
    setup(&f, "nonfincopy");
    char d1[PATH_LEN], d2[PATH_LEN], err[ERR_LEN], warn[ERR_LEN], path[PATH_LEN + 64];
    for (uint64_t seq = 1; seq <= 2; seq++) {
        char *dir = seq == 1 ? d1 : d2;
        cr_assert_eq(runckpt_begin(f.run, seq, dir, err), 0, "%s", err);
        write_one(&f, dir, seq, 1, 0, 0, f.n);
        RunCkptShard sh = {.index = 1, .off = 0, .len = f.n, .params = f.params, .target = f.target, .opt = &f.opt,
                           .run_id = f.run_id, .seq = seq, .n_shards = 2};
        cr_assert_eq(runckpt_write_copy(&f.cfg, &f.net, dir, &sh, err), 0, "%s", err);
        RunCkptManifest m = manifest_of(&f, 1, seq);
        m.n_copies = 2;
        m.first_copy = 1;
        cr_assert_eq(runckpt_commit(f.run, dir, &m, 3, err), 0, "%s", err);
    }
    snprintf(path, sizeof path, "%s/learner-1.ckpt", d2);
    patch_float(path, CKPT_SEC_TARGET, 7, INFINITY);
    /* Rebind the copy's line of the MANIFEST (edit_manifest knows shard
     * and replay lines only): the copy's size stays, its CRC changes. */
    size_t n, fb;
    unsigned char *b = slurp(path, &fb);
    char mpath[PATH_LEN + 32], line[96], out[8192];
    snprintf(line, sizeof line, "learner 1 bytes %zu crc32c %08x", fb, crc32c(b, fb));
    free(b);
    snprintf(mpath, sizeof mpath, "%s/MANIFEST", d2);
    char *text = (char *)slurp(mpath, &n);
    size_t k = 0;
    for (char *p = text, *nl; (nl = strchr(p, '\n')); p = nl + 1) {
        *nl = '\0';
        if (strncmp(p, "crc32c ", 7) == 0) break;
        k += (size_t)snprintf(out + k, sizeof out - k, "%s\n", strncmp(p, "learner 1 ", 10) == 0 ? line : p);
    }
    k += (size_t)snprintf(out + k, sizeof out - k, "crc32c %08x\n", crc32c(out, k));
    spit(mpath, out, k);
    free(text);
    const char *says = "learner-1.ckpt: parameter 7 of the target network is inf";
    RunCkptManifest m;
    cr_assert_eq(runckpt_verify(d2, &m, err), -1, "verified a copy with an Inf");
    cr_expect(strstr(err, says) != NULL, "%s", err);
    cr_assert_eq(runckpt_find_latest(f.run, &m, warn, err), 0, "%s", err);
    cr_expect_eq(m.seq, 1);
    cr_expect(strstr(warn, "ckpt-000002 is damaged (") && strstr(warn, says), "%s", warn);
    float p[23], t[23];
    Optim o;
    optim_init(&o, &f.opt.p, f.n);
    RunCkptShard sh = {.off = 0, .len = f.n, .params = p, .target = t, .opt = &o};
    bool found;
    cr_assert_eq(runckpt_read_copy(&f.cfg, &f.net, d2, 1, 2, &sh, &found, err), -1);
    cr_expect(strstr(err, says) != NULL, "%s", err);
    cr_assert_eq(runckpt_read_copy(&f.cfg, &f.net, d1, 1, 2, &sh, &found, err), 0, "%s", err);
    cr_expect(found);
    optim_free(&o);
    teardown(&f);
}

/* No writer saves a non-finite optimizer state either (a reader would
 * refuse the file). */
Test(runckpt, non_finite_optimizer_state_is_not_checkpointed) {
    Fixture f;
    setup(&f, "nonfinopt");
    char dir[PATH_LEN], err[ERR_LEN], path[PATH_LEN + 64];
    cr_assert_eq(runckpt_begin(f.run, 1, dir, err), 0, "%s", err);
    f.opt.state[f.n + 4] = INFINITY;
    RunCkptShard sh = {.index = 0, .off = 0, .len = f.n, .params = f.params, .target = f.target, .opt = &f.opt,
                       .run_id = f.run_id, .seq = 1, .n_shards = 1};
    cr_assert_eq(runckpt_write_shard(&f.cfg, &f.net, dir, &sh, err), -1);
    cr_expect(strstr(err, "non-finite optimizer state (array 2 of 2, parameter 4, is inf) not checkpointed") != NULL,
              "%s", err);
    ckpt_path(&f, 1, "ps-0.ckpt", path);
    cr_expect(!exists(path), "no file was written");
    teardown(&f);
}

/* Counters are bounded on read (2^53, CKPT_MAX_COUNT): a manifest, a shard
 * header or an optimizer state counting more is damage, named by its
 * field, and the resume falls back; 2^53 itself is accepted. */
Test(runckpt, absurd_counters_are_damage) {
    Fixture f;
    setup(&f, "counters");
    char dir[PATH_LEN], d2[PATH_LEN], err[ERR_LEN], warn[ERR_LEN], path[PATH_LEN + 64], line[128];
    write_shards(&f, 1, 1, dir);
    write_shards(&f, 1, 2, d2);
    snprintf(path, sizeof path, "%s/MANIFEST", d2);
    size_t n;
    unsigned char *man = slurp(path, &n);
    const char *keys[] = {"env_steps", "updates", "episodes", "params_version", "seq"};
    RunCkptManifest m;
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
        spit(path, man, n);
        snprintf(line, sizeof line, "%s 18446744073709551615", keys[k]);
        edit_manifest(d2, keys[k], line, NULL);
        cr_assert_eq(runckpt_read_manifest(d2, &m, err), -1, "%s accepted", keys[k]);
        char want[128];
        snprintf(want, sizeof want, "%s is 18446744073709551615, above 2^53", keys[k]);
        cr_expect(strstr(err, want) != NULL, "%s", err);
        cr_assert_eq(runckpt_find_latest(f.run, &m, warn, err), 0, "%s", err);
        cr_expect_eq(m.seq, 1, "%s: falls back", keys[k]);
        cr_expect(strstr(warn, want) != NULL, "%s", warn);
    }
    /* 2^53 exactly is a count a run could (in principle) reach. */
    spit(path, man, n);
    edit_manifest(d2, "env_steps", "env_steps 9007199254740992", NULL);
    cr_assert_eq(runckpt_read_manifest(d2, &m, err), 0, "%s", err);
    cr_expect_eq(m.env_steps, 9007199254740992ull);
    edit_manifest(d2, "env_steps", "env_steps 9007199254740993", NULL);
    cr_assert_eq(runckpt_read_manifest(d2, &m, err), -1);
    /* The history's counters. */
    spit(path, man, n);
    edit_manifest(d2, "history",
                  "history evaluations 1 last 5 best 5 best_env_steps 18446744073709551615 best_version 1 "
                  "best_seconds 1 solved 0 solved_env_steps 0 solved_version 0 solved_seconds nan",
                  NULL);
    cr_assert_eq(runckpt_read_manifest(d2, &m, err), -1);
    cr_expect(strstr(err, "history best_env_steps is 18446744073709551615") != NULL, "%s", err);
    spit(path, man, n);
    free(man);
    /* A shard header's counters (the local trainer resumes from them) and
     * the optimizer's step, with every sum made right. */
    snprintf(path, sizeof path, "%s/ps-0.ckpt", d2);
    unsigned char *orig = slurp(path, &n);
    const struct {
        size_t at;
        const char *says;
    } fields[] = {{144, "env_steps is 18446744073709551615"}, {152, "updates is 18446744073709551615"},
                  {160, "episodes is 18446744073709551615"}, {168, "param_version is 18446744073709551615"},
                  {184, "target version 18446744073709551615"}, {0, "optimizer step count 18446744073709551615"}};
    for (size_t k = 0; k < sizeof fields / sizeof fields[0]; k++) {
        unsigned char *b = malloc(n);
        memcpy(b, orig, n);
        uint64_t big = UINT64_MAX, bytes;
        size_t at = fields[k].at ? fields[k].at : section_at(b, CKPT_SEC_OPTIM, &bytes);
        memcpy(b + at, &big, 8);
        spit(path, b, n);
        free(b);
        fix_crcs(path);
        edit_manifest(d2, NULL, NULL, "ps-0.ckpt");
        cr_assert_eq(runckpt_verify(d2, &m, err), -1, "field %zu accepted", k);
        cr_expect(strstr(err, fields[k].says) != NULL, "%s", err);
        cr_assert_eq(runckpt_find_latest(f.run, &m, warn, err), 0, "%s", err);
        cr_expect_eq(m.seq, 1);
    }
    free(orig);
    teardown(&f);
}

/* A FIFO (or anything but a regular file) in place of `latest`, a
 * MANIFEST, a shard file or a replay file is refused at once, naming it:
 * no reader ever blocks opening it (the test's timeout would fail). */
Test(runckpt, fifos_are_refused_without_blocking, .timeout = 20) {
    Fixture f;
    setup(&f, "fifo");
    ReplayStore prs[1];
    fill_prio(&prs[0], 20, 9, 0);
    char d1[PATH_LEN], d2[PATH_LEN], err[ERR_LEN], warn[ERR_LEN], path[PATH_LEN + 64], saved[PATH_LEN + 80];
    write_with_replay(&f, 1, 1, prs, 1, d1);
    write_with_replay(&f, 2, 1, prs, 1, d2);
    const char *parts[] = {"MANIFEST", "ps-0.ckpt", "replay-0.ckpt"};
    for (size_t k = 0; k < 3; k++) {
        snprintf(path, sizeof path, "%s/%s", d2, parts[k]);
        snprintf(saved, sizeof saved, "%s.saved", path);
        cr_assert_eq(rename(path, saved), 0);
        cr_assert_eq(mkfifo(path, 0644), 0);
        RunCkptManifest m;
        cr_assert_eq(runckpt_find_latest(f.run, &m, warn, err), 0, "%s", err);
        cr_expect_eq(m.seq, 1, "%s: falls back", parts[k]);
        char want[PATH_LEN + 128];
        snprintf(want, sizeof want, "%s: not a regular file (a FIFO)", path);
        cr_expect(strstr(warn, want) != NULL, "%s: %s", parts[k], warn);
        ReplayStore back;
        replaystore_init_prioritized(&back, 20, RO, 1.0, 0.5);
        RunCkptReplayInfo info;
        if (k != 1) {
            cr_assert_eq(runckpt_read_replay(&f.cfg, &f.net, d2, 0, 1, &back, &info, err), -1);
            cr_expect(strstr(err, want) != NULL, "%s", err);
        }
        replaystore_free(&back);
        cr_assert_eq(unlink(path), 0);
        cr_assert_eq(rename(saved, path), 0);
    }
    /* latest: the newest intact checkpoint is still found, with a note. */
    snprintf(path, sizeof path, "%s/checkpoints/latest", f.run);
    cr_assert_eq(unlink(path), 0);
    cr_assert_eq(mkfifo(path, 0644), 0);
    RunCkptManifest m;
    cr_assert_eq(runckpt_find_latest(f.run, &m, warn, err), 0, "%s", err);
    cr_expect_eq(m.seq, 2);
    cr_expect(strstr(warn, "latest: not a regular file (a FIFO)") != NULL, "%s", warn);
    /* The only checkpoint's MANIFEST a FIFO: an error, not a hang. */
    snprintf(path, sizeof path, "%s/MANIFEST", d1);
    cr_assert_eq(unlink(path), 0);
    cr_assert_eq(mkfifo(path, 0644), 0);
    snprintf(path, sizeof path, "%s/MANIFEST", d2);
    cr_assert_eq(unlink(path), 0);
    cr_assert_eq(mkfifo(path, 0644), 0);
    cr_assert_eq(runckpt_find_latest(f.run, &m, warn, err), -1);
    cr_expect(strstr(err, "no intact checkpoint in") && strstr(err, "not a regular file (a FIFO)"), "%s", err);
    replaystore_free(&prs[0]);
    teardown(&f);
}

/* ---- the run id of a run directory ---------------------------------------- */

/* A run directory records its run id; a checkpoint of another run copied
 * in is refused (naming both ids) by runckpt_latest and runckpt_best,
 * while a directory that records none (an older run) takes any. */
Test(runckpt, checkpoint_of_another_run_is_refused) {
    Fixture f;
    setup(&f, "foreign");
    char dir[PATH_LEN], err[ERR_LEN], path[PATH_LEN + 64];
    uint64_t id;
    cr_assert_eq(runckpt_run_id(f.run, &id, err), 1, "no run_id file yet");
    write_shards(&f, 1, 1, dir);
    RunCkptManifest m;
    cr_assert_eq(runckpt_latest(f.run, &m, err), 0, "an older run takes any id: %s", err);
    cr_assert_eq(runckpt_save_run_id(f.run, f.run_id, err), 0, "%s", err);
    cr_assert_eq(runckpt_run_id(f.run, &id, err), 0, "%s", err);
    cr_expect_eq(id, f.run_id);
    cr_assert_eq(runckpt_latest(f.run, &m, err), 0, "%s", err);
    write_best(&f, 1, 1, 10.0, true);
    cr_assert_eq(runckpt_best(f.run, &m, err), 0, "%s", err);
    /* Another run's checkpoint 2 (and best), intact in every other way. */
    uint64_t own = f.run_id;
    f.run_id = own ^ 0xabcdef;
    write_shards(&f, 1, 2, dir);
    write_best(&f, 2, 1, 20.0, true);
    f.run_id = own;
    cr_assert_eq(runckpt_verify(dir, &m, err), 0, "%s", err);
    char want[512];
    snprintf(want, sizeof want, "belongs to run %016llx, but run directory %s is run %016llx",
             (unsigned long long)(own ^ 0xabcdef), f.run, (unsigned long long)own);
    cr_assert_eq(runckpt_latest(f.run, &m, err), -1, "a foreign checkpoint was taken");
    cr_expect(strstr(err, want) != NULL && strstr(err, "ckpt-000002") != NULL, "%s", err);
    cr_assert_eq(runckpt_best(f.run, &m, err), -1);
    cr_expect(strstr(err, want) != NULL, "%s", err);
    /* A damaged run_id file is an error, not "no id". */
    snprintf(path, sizeof path, "%s/run_id", f.run);
    spit(path, "xyz\n", 4);
    cr_assert_eq(runckpt_run_id(f.run, &id, err), -1);
    cr_expect(strstr(err, "not a run id") != NULL, "%s", err);
    cr_assert_eq(runckpt_latest(f.run, &m, err), -1);
    teardown(&f);
}

/* ---- a reader racing the job that prunes ------------------------------------ */

/* What the hooks below do: on call number `at` (1 = the first), commit
 * checkpoint seq with keep 1, which moves `latest` and deletes the one
 * just chosen, as a job checkpointing every 10 ms does. */
typedef struct {
    Fixture *f;
    int calls, at;
    uint64_t seq;
} Racer;

static void race_commit(void *arg, const char *dir) {
    Racer *r = arg;
    (void)dir;
    if (++r->calls != r->at) return;
    char d[PATH_LEN], err[ERR_LEN];
    cr_assert_eq(runckpt_begin(r->f->run, r->seq, d, err), 0, "%s", err);
    write_one(r->f, d, r->seq, 1, 0, 0, r->f->n);
    RunCkptManifest m = manifest_of(r->f, 1, r->seq);
    cr_assert_eq(runckpt_commit(r->f->run, d, &m, 1, err), 0, "%s", err);
}

/* The checkpoint `latest` named is pruned while it is verified: the choice
 * starts over from the moved `latest`, quietly (no "damaged" note); and
 * pruned between the choice and the read, the read starts over too. */
Test(runckpt, pruning_never_makes_a_healthy_run_look_damaged) {
    Fixture f;
    setup(&f, "race");
    char dir[PATH_LEN], err[ERR_LEN], warn[ERR_LEN];
    write_shards(&f, 1, 1, dir);
    write_shards(&f, 1, 2, dir);
    Racer r = {&f, 0, 1, 3};
    RunCkptHook hook = {race_commit, &r};
    RunCkptManifest m;
    cr_assert_eq(runckpt_find_latest_hooked(f.run, &m, warn, &hook, err), 0, "%s", err);
    cr_expect_eq(m.seq, 3);
    cr_expect_str_eq(warn, "", "a pruned checkpoint is not called damaged");
    cr_expect_eq(r.calls, 2);

    /* Chosen (checkpoint 3), then pruned before the read. */
    r = (Racer){&f, 0, 1, 4};
    float p[23], t[23];
    RunCkptShard sh = {.off = 0, .len = f.n, .params = p, .target = t};
    cr_assert_eq(runckpt_read_chosen(&f.cfg, &f.net, f.run, RUNCKPT_LATEST, &m, &sh, &hook, err), 0, "%s", err);
    cr_expect_eq(m.seq, 4, "read the checkpoint that replaced it");
    cr_expect_eq(memcmp(p, f.params, sizeof p), 0);
    /* Real damage still is damage: no retry makes it go away. */
    char path[PATH_LEN + 64];
    ckpt_path(&f, 4, "ps-0.ckpt", path);
    flip_byte(path, 300);
    cr_assert_eq(runckpt_read_chosen(&f.cfg, &f.net, f.run, RUNCKPT_LATEST, &m, &sh, NULL, err), -1);
    cr_expect(strstr(err, "ps-0.ckpt") != NULL, "%s", err);
    teardown(&f);
}

/* A resume that fell back drops the line it abandons (runlog_init calls
 * runckpt_drop_above under the lock). Best and ckpt-* share the numbers:
 * when the resumed job's next number goes to a best checkpoint, a damaged
 * directory of that number would otherwise sit below its next commit,
 * count towards keep, and have the good checkpoint it resumed from pruned. */
Test(runckpt, a_resume_drops_the_abandoned_line_so_keep_spares_the_good) {
    Fixture f;
    setup(&f, "dropabove");
    char dir[PATH_LEN], err[ERR_LEN], warn[ERR_LEN], path[PATH_LEN + 64];
    for (uint64_t s = 1; s <= 3; s++) write_shards(&f, 1, s, dir);
    ckpt_path(&f, 3, "ps-0.ckpt", path);
    flip_byte(path, 300);
    RunCkptManifest m;
    cr_assert_eq(runckpt_find_latest(f.run, &m, warn, err), 0, "%s", err);
    cr_assert_eq(m.seq, 2);
    runckpt_drop_above(f.run, m.seq, 2);
    ckpt_path(&f, 3, NULL, path);
    cr_expect(!exists(path), "the damaged checkpoint 3 is set aside");
    char aside[PATH_LEN + 96];
    snprintf(aside, sizeof aside, "%s/checkpoints/abandoned-ckpt-000003", f.run);
    cr_expect(exists(aside), "its bytes are kept as %s", aside);
    ckpt_path(&f, 2, "MANIFEST", path);
    cr_expect(exists(path));
    /* The resumed job: a best takes number 3, the next commit is 4, keep 2. */
    write_best(&f, 3, 1, 5.0, true);
    cr_assert_eq(runckpt_begin(f.run, 4, dir, err), 0, "%s", err);
    write_one(&f, dir, 4, 1, 0, 0, f.n);
    m = manifest_of(&f, 1, 4);
    cr_assert_eq(runckpt_commit(f.run, dir, &m, 2, err), 0, "%s", err);
    ckpt_path(&f, 2, "MANIFEST", path);
    cr_expect(exists(path), "keep 2 keeps checkpoint 2, the good one below 4");
    /* Nothing below the given number is touched. */
    runckpt_drop_above(f.run, 4, 2);
    cr_expect(exists(path));
    teardown(&f);
}
