/* test_runckpt.c: checkpoint directories of a run (src/core/runckpt.c): shard
 * files written by P shards and read back by any other number of shards
 * give the same parameters, target and optimizer state bit for bit; the
 * manifest and `latest` work as the commit point; damage and mismatches are
 * refused with a message. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "agentcfg.h"
#include "params.h"
#include "runckpt.h"
#include "util.h"

typedef struct {
    Config cfg;
    QNet net;
    size_t n;
    float *params, *target;
    Optim opt;
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
    snprintf(f->run, sizeof f->run, "build/test-tmp/snapshot-%s-%d", name, (int)getpid());
    mkdir("build", 0777);
    mkdir("build/test-tmp", 0777);
    cr_assert_eq(mkdir(f->run, 0777), 0);
}

static void teardown(Fixture *f) {
    free(f->params);
    free(f->target);
    optim_free(&f->opt);
}

/* Write the fixture as P shards of checkpoint seq; commit. */
static void write_shards(Fixture *f, int P, uint64_t seq, char *dir) {
    char err[ERR_LEN];
    cr_assert_eq(runckpt_begin(f->run, seq, dir, err), 0, "%s", err);
    for (int p = 0; p < P; p++) {
        size_t off, len;
        shard_range(f->n, P, p, &off, &len);
        Optim part;
        optim_init(&part, &f->opt.p, len);
        part.step = f->opt.step;
        size_t slots = f->opt.n_state / f->n;
        for (size_t k = 0; k < slots; k++)
            memcpy(part.state + k * len, f->opt.state + k * f->n + off, len * sizeof(float));
        RunCkptShard sh = {.index = p, .off = off, .len = len, .params = f->params + off, .target = f->target + off,
                        .opt = &part, .version = 100 + (uint64_t)p, .target_version = 7};
        cr_assert_eq(runckpt_write_shard(&f->cfg, &f->net, dir, &sh, err), 0, "%s", err);
        optim_free(&part);
    }
    RunCkptManifest m = {.seq = seq, .env_steps = 1234, .updates = 100, .episodes = 9, .wall_seconds = 2.5,
                      .n_shards = P};
    snprintf(m.mode, sizeof m.mode, "ps_sync");
    cr_assert_eq(runckpt_commit(f->run, dir, &m, 2, err), 0, "%s", err);
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
    FILE *fp = fopen(path, "r+");
    cr_assert_not_null(fp);
    fseek(fp, 40, SEEK_SET);
    fputc('9', fp);
    fclose(fp);
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
