/* TEMPORARY until the ckpt branch lands: minimal best-checkpoint staging. */
#include "runckpt.h"
#include "util.h"
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
int runckpt_begin_best(const char *run_dir, uint64_t seq, char *dir, char *err) {
    char base[PATH_LEN];
    snprintf(base, sizeof base, "%s/checkpoints", run_dir);
    mkdir(base, 0777);
    if (snprintf(dir, PATH_LEN, "%s/best.new-%06" PRIu64, base, seq) >= PATH_LEN) return errf(err, "long");
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) return errf(err, "cannot create %s", dir);
    return 0;
}
#include "crc32c.h"
int runckpt_commit_best(const char *run_dir, const char *dir, const RunCkptManifest *m, char *err) {
    char out[1024], path[PATH_LEN + 16];
    int n = snprintf(out, sizeof out,
                     "gorila-checkpoint-manifest 1\nseq %" PRIu64 "\nenv_steps %" PRIu64 "\nupdates %" PRIu64
                     "\nepisodes %" PRIu64 "\nwall_seconds %.17g\nshards %d\nmode %s\n",
                     m->seq, m->env_steps, m->updates, m->episodes, m->wall_seconds, m->n_shards, m->mode);
    snprintf(out + n, sizeof out - (size_t)n, "crc32c %08x\n", crc32c(out, (size_t)n));
    snprintf(path, sizeof path, "%s/MANIFEST", dir);
    FILE *f = fopen(path, "w");
    if (!f) return errf(err, "cannot write %s", path);
    fputs(out, f);
    fclose(f);
    char best[PATH_LEN], cmd[3 * PATH_LEN];
    snprintf(best, sizeof best, "%s/checkpoints/best", run_dir);
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && mv '%s' '%s'", best, dir, best);
    if (system(cmd) != 0) return errf(err, "best commit failed");
    return 0;
}
int runckpt_best(const char *run_dir, RunCkptManifest *m, char *err) {
    char best[PATH_LEN];
    snprintf(best, sizeof best, "%s/checkpoints/best", run_dir);
    return runckpt_read_manifest(best, m, err);
}
#include <unistd.h>
int runckpt_best_from(const char *run_dir, const char *ckpt_dir, const RunCkptManifest *m, char *err) {
    char dir[PATH_LEN];
    if (runckpt_begin_best(run_dir, m->seq, dir, err)) return -1;
    for (int q = 0; q < m->n_shards; q++) {
        char a[PATH_LEN + 32], b[PATH_LEN + 32];
        snprintf(a, sizeof a, "%s/ps-%d.ckpt", ckpt_dir, q);
        snprintf(b, sizeof b, "%s/ps-%d.ckpt", dir, q);
        unlink(b);
        if (link(a, b) != 0) return errf(err, "cannot link %s", a);
    }
    return runckpt_commit_best(run_dir, dir, m, err);
}
