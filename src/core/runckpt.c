/* runckpt.c: see runckpt.h. */
#include "runckpt.h"
#include "crc32c.h"
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MANIFEST_MAGIC "gorila-checkpoint-manifest 1"

static int join(char *out, const char *a, const char *b, char *err) {
    if (snprintf(out, PATH_LEN, "%s/%s", a, b) >= PATH_LEN) return errf(err, "path too long: %s/%s", a, b);
    return 0;
}

static int mkdir_ok(const char *path, char *err) {
    if (mkdir(path, 0777) != 0 && errno != EEXIST) return errf(err, "cannot create %s: %s", path, strerror(errno));
    return 0;
}

int runckpt_begin(const char *run_dir, uint64_t seq, char *dir, char *err) {
    char base[PATH_LEN], name[64];
    if (join(base, run_dir, "checkpoints", err) || mkdir_ok(base, err)) return -1;
    snprintf(name, sizeof name, "ckpt-%06" PRIu64, seq);
    if (join(dir, base, name, err) || mkdir_ok(dir, err)) return -1;
    return 0;
}

static CkptOptim ckpt_kind(OptimKind k) {
    switch (k) {
    case OPTIM_SGD: return CKPT_OPT_SGD;
    case OPTIM_ADAM: return CKPT_OPT_ADAM;
    case OPTIM_RMSPROP: return CKPT_OPT_RMSPROP;
    }
    return CKPT_OPT_NONE;
}

static void fill_net(const Config *cfg, const QNet *net, CkptMeta *m) {
    memset(m, 0, sizeof *m);
    m->net.obs_dim = (uint32_t)net->spec.obs_dim;
    m->net.num_actions = (uint32_t)net->spec.n_actions;
    m->net.n_hidden = (uint32_t)net->spec.n_hidden;
    for (int i = 0; i < net->spec.n_hidden; i++) m->net.hidden[i] = (uint32_t)net->spec.hidden[i];
    m->net.dueling = net->spec.dueling;
    m->net.n_params = net->n_params;
    /* Registered env names are far shorter than CKPT_ENV_LEN. */
    if (snprintf(m->env, sizeof m->env, "%s", cfg->env.name) >= (int)sizeof m->env) m->env[sizeof m->env - 1] = '\0';
}

int runckpt_write_shard(const Config *cfg, const QNet *net, const char *dir, const RunCkptShard *sh, char *err) {
    CkptMeta m;
    fill_net(cfg, net, &m);
    m.slice_offset = sh->off;
    m.slice_count = sh->len;
    m.env_steps = sh->env_steps;
    m.updates = sh->updates;
    m.episodes = sh->episodes;
    m.wall_seconds = sh->wall_seconds;
    m.param_version = sh->version;
    m.reserved[0] = sh->target_version;
    CkptSection sec[5];
    size_t n = 0;
    sec[n++] = (CkptSection){CKPT_SEC_PARAMS, sh->params, sh->len * sizeof(float)};
    sec[n++] = (CkptSection){CKPT_SEC_TARGET, sh->target, sh->len * sizeof(float)};
    uint8_t *opt_bytes = NULL;
    if (sh->opt) {
        m.optimizer = ckpt_kind(sh->opt->p.kind);
        m.optim_slots = sh->len ? (uint32_t)(sh->opt->n_state / sh->len) : 0;
        size_t bytes = 8 + sh->opt->n_state * sizeof(float);
        opt_bytes = xmalloc(bytes);
        memcpy(opt_bytes, &sh->opt->step, 8);
        if (sh->opt->n_state) memcpy(opt_bytes + 8, sh->opt->state, sh->opt->n_state * sizeof(float));
        sec[n++] = (CkptSection){CKPT_SEC_OPTIM, opt_bytes, bytes};
    }
    if (sh->n_rngs > 0) sec[n++] = (CkptSection){CKPT_SEC_RNG, sh->rngs, (size_t)sh->n_rngs * sizeof(Rng)};
    uint8_t *rep = NULL;
    if (sh->replay) {
        size_t bytes = replaybuf_serial_bytes(sh->replay);
        rep = xmalloc(bytes);
        replaybuf_serialize(sh->replay, rep);
        sec[n++] = (CkptSection){CKPT_SEC_REPLAY, rep, bytes};
    }
    char path[PATH_LEN], name[32];
    snprintf(name, sizeof name, "ps-%d.ckpt", sh->index);
    int rc = join(path, dir, name, err);
    if (rc == 0) rc = ckpt_write(path, &m, sec, n, err);
    free(opt_bytes);
    free(rep);
    return rc;
}

/* Write a small text file atomically (tmp, fsync, rename, fsync dir). */
static int write_atomic(const char *dir, const char *name, const char *text, char *err) {
    char path[PATH_LEN], tmp[PATH_LEN + 8];
    if (join(path, dir, name, err)) return -1;
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    int fd = open_tmp_exclusive(tmp);
    if (fd < 0) return errf(err, "cannot write %s: %s", tmp, strerror(errno));
    size_t len = strlen(text), done = 0;
    while (done < len) {
        ssize_t w = write(fd, text + done, len - done);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            int e = errno;
            close(fd);
            unlink(tmp);
            return errf(err, "cannot write %s: %s", tmp, strerror(w < 0 ? e : ENOSPC));
        }
        done += (size_t)w;
    }
    if (fsync(fd) != 0 || close(fd) != 0) {
        int e = errno;
        unlink(tmp);
        return errf(err, "cannot write %s: %s", tmp, strerror(e));
    }
    if (rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        return errf(err, "cannot rename %s: %s", tmp, strerror(e));
    }
    int dfd = open(dir, O_RDONLY | O_DIRECTORY);
    if (dfd >= 0) {
        fsync(dfd);
        close(dfd);
    }
    return 0;
}

static void manifest_text(const RunCkptManifest *m, char *out, size_t cap) {
    int n = snprintf(out, cap,
                     MANIFEST_MAGIC "\nseq %" PRIu64 "\nenv_steps %" PRIu64 "\nupdates %" PRIu64
                                    "\nepisodes %" PRIu64 "\nwall_seconds %.17g\nshards %d\nmode %s\n",
                     m->seq, m->env_steps, m->updates, m->episodes, m->wall_seconds, m->n_shards, m->mode);
    uint32_t crc = crc32c(out, (size_t)n);
    snprintf(out + n, cap - (size_t)n, "crc32c %08x\n", crc);
}

/* Newest-first prune of checkpoints/ckpt-* beyond keep. */
static void prune(const char *base, int keep) {
    DIR *d = opendir(base);
    if (!d) return;
    uint64_t seqs[4096];
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < 4096) {
        uint64_t s;
        char extra;
        if (sscanf(e->d_name, "ckpt-%" SCNu64 "%c", &s, &extra) == 1) seqs[n++] = s;
    }
    closedir(d);
    for (int i = 0; i < n; i++) {
        int newer = 0;
        for (int j = 0; j < n; j++) newer += seqs[j] > seqs[i];
        if (newer < keep) continue;
        char dir[PATH_LEN], name[64];
        snprintf(name, sizeof name, "ckpt-%06" PRIu64, seqs[i]);
        if (snprintf(dir, sizeof dir, "%s/%s", base, name) >= (int)sizeof dir) continue;
        DIR *dd = opendir(dir);
        if (!dd) continue;
        while ((e = readdir(dd))) {
            if (e->d_name[0] == '.') continue;
            char f[PATH_LEN + 300];
            if (snprintf(f, sizeof f, "%s/%s", dir, e->d_name) < (int)sizeof f) unlink(f);
        }
        closedir(dd);
        rmdir(dir);
    }
}

int runckpt_commit(const char *run_dir, const char *dir, const RunCkptManifest *m, int keep, char *err) {
    char text[1024];
    manifest_text(m, text, sizeof text);
    if (write_atomic(dir, "MANIFEST", text, err)) return -1;
    char base[PATH_LEN];
    if (join(base, run_dir, "checkpoints", err)) return -1;
    const char *name = strrchr(dir, '/');
    name = name ? name + 1 : dir;
    char latest[128];
    snprintf(latest, sizeof latest, "%s\n", name);
    if (write_atomic(base, "latest", latest, err)) return -1;
    prune(base, keep);
    return 0;
}

int runckpt_read_manifest(const char *dir, RunCkptManifest *m, char *err) {
    memset(m, 0, sizeof *m);
    char path[PATH_LEN];
    if (join(path, dir, "MANIFEST", err)) return -1;
    FILE *f = fopen(path, "r");
    if (!f) return errf(err, "cannot read %s: %s", path, strerror(errno));
    char text[2048];
    size_t len = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[len] = '\0';
    char *crc_line = strstr(text, "crc32c ");
    unsigned crc_file = 0;
    if (!crc_line || sscanf(crc_line, "crc32c %x", &crc_file) != 1)
        return errf(err, "%s: not a checkpoint manifest (no crc32c line)", path);
    if (crc32c(text, (size_t)(crc_line - text)) != crc_file)
        return errf(err, "%s: checksum mismatch (the file is damaged)", path);
    int got = sscanf(text,
                     MANIFEST_MAGIC "\nseq %" SCNu64 "\nenv_steps %" SCNu64 "\nupdates %" SCNu64 "\nepisodes %" SCNu64
                                    "\nwall_seconds %lf\nshards %d\nmode %31s",
                     &m->seq, &m->env_steps, &m->updates, &m->episodes, &m->wall_seconds, &m->n_shards, m->mode);
    if (got != 7 || m->n_shards < 1) return errf(err, "%s: malformed manifest", path);
    snprintf(m->dir, sizeof m->dir, "%s", dir);
    return 0;
}

int runckpt_latest(const char *run_dir, RunCkptManifest *m, char *err) {
    char path[PATH_LEN];
    if (snprintf(path, sizeof path, "%s/checkpoints/latest", run_dir) >= (int)sizeof path)
        return errf(err, "path too long");
    FILE *f = fopen(path, "r");
    if (!f) return errf(err, "no checkpoint in %s (%s: %s)", run_dir, path, strerror(errno));
    char name[128] = {0};
    int ok = fscanf(f, "%127s", name) == 1;
    fclose(f);
    if (!ok || strncmp(name, "ckpt-", 5) != 0) return errf(err, "%s: malformed", path);
    char dir[PATH_LEN];
    if (snprintf(dir, sizeof dir, "%s/checkpoints/%s", run_dir, name) >= (int)sizeof dir)
        return errf(err, "path too long");
    return runckpt_read_manifest(dir, m, err);
}

int runckpt_read_slice(const Config *cfg, const QNet *net, const char *dir, RunCkptShard *sh, char *err) {
    RunCkptManifest man;
    if (runckpt_read_manifest(dir, &man, err)) return -1;
    CkptMeta want;
    fill_net(cfg, net, &want);
    size_t lo = sh->off, hi = sh->off + sh->len;
    size_t covered = 0;
    bool have_version = false;
    int rc = -1;
    float *buf = NULL;
    uint8_t *obuf = NULL;
    for (int q = 0; q < man.n_shards; q++) {
        char path[PATH_LEN], name[32];
        snprintf(name, sizeof name, "ps-%d.ckpt", q);
        if (join(path, dir, name, err)) goto out;
        CkptReader r;
        if (ckpt_open(&r, path, err) != 0) goto out;
        const CkptMeta *m = &r.meta;
        want.slice_offset = m->slice_offset;
        want.slice_count = m->slice_count;
        if (ckpt_check_compatible(m, &want, err) != 0) {
            err_prefix(err, "%s", path);
            ckpt_close(&r);
            goto out;
        }
        size_t qo = m->slice_offset, ql = m->slice_count;
        size_t a = qo > lo ? qo : lo, b = qo + ql < hi ? qo + ql : hi;
        if (sh->opt && m->optimizer != ckpt_kind(sh->opt->p.kind)) {
            errf(err, "%s: optimizer differs: checkpoint has %s state, config uses %s", path,
                 ckpt_optim_name(m->optimizer), ckpt_optim_name(ckpt_kind(sh->opt->p.kind)));
            ckpt_close(&r);
            goto out;
        }
        bool holds_start = (lo >= qo && lo < qo + ql) || (sh->len == 0 && q == 0);
        if (holds_start || !have_version) {
            sh->version = m->param_version;
            sh->target_version = m->reserved[0];
            sh->env_steps = m->env_steps;
            sh->updates = m->updates;
            sh->episodes = m->episodes;
            sh->wall_seconds = m->wall_seconds;
            have_version = holds_start;
        }
        if (a < b) {
            free(buf);
            buf = xmalloc(ql * sizeof(float));
            if (ckpt_read_section(&r, CKPT_SEC_PARAMS, buf, ql * sizeof(float), err)) goto bad;
            memcpy(sh->params + (a - lo), buf + (a - qo), (b - a) * sizeof(float));
            if (ckpt_find(&r, CKPT_SEC_TARGET)) {
                if (ckpt_read_section(&r, CKPT_SEC_TARGET, buf, ql * sizeof(float), err)) goto bad;
                memcpy(sh->target + (a - lo), buf + (a - qo), (b - a) * sizeof(float));
            } else {
                memcpy(sh->target + (a - lo), sh->params + (a - lo), (b - a) * sizeof(float));
            }
            if (sh->opt) {
                size_t slots = m->optim_slots, bytes = 8 + slots * ql * sizeof(float);
                if (sh->len && slots * sh->len != sh->opt->n_state) {
                    errf(err, "%s: optimizer state has %zu arrays per parameter, expected %zu", path, slots,
                         sh->opt->n_state / sh->len);
                    goto bad;
                }
                free(obuf);
                obuf = xmalloc(bytes);
                if (ckpt_read_section(&r, CKPT_SEC_OPTIM, obuf, bytes, err)) goto bad;
                uint64_t step;
                memcpy(&step, obuf, 8);
                if (holds_start) sh->opt->step = step;
                const float *st = (const float *)(obuf + 8);
                for (size_t k = 0; k < slots; k++)
                    memcpy(sh->opt->state + k * sh->len + (a - lo), st + k * ql + (a - qo), (b - a) * sizeof(float));
            }
            covered += b - a;
        }
        if (holds_start && sh->rngs && sh->n_rngs > 0) {
            const CkptEntry *e = ckpt_find(&r, CKPT_SEC_RNG);
            if (!e || e->bytes != (uint64_t)sh->n_rngs * sizeof(Rng)) {
                errf(err, "%s: random generator states missing or of another count", path);
                goto bad;
            }
            if (ckpt_read_section(&r, CKPT_SEC_RNG, sh->rngs, e->bytes, err)) goto bad;
        }
        if (holds_start && sh->replay && ckpt_find(&r, CKPT_SEC_REPLAY)) {
            const CkptEntry *e = ckpt_find(&r, CKPT_SEC_REPLAY);
            uint8_t *rep = xmalloc(e->bytes);
            size_t dropped = 0;
            int rr = ckpt_read_section(&r, CKPT_SEC_REPLAY, rep, e->bytes, err);
            if (rr == 0) rr = replaybuf_restore(sh->replay, rep, e->bytes, &dropped, err);
            free(rep);
            if (rr) goto bad;
        }
        ckpt_close(&r);
        continue;
    bad:
        err_prefix(err, "%s", path);
        ckpt_close(&r);
        goto out;
    }
    if (covered != sh->len) {
        errf(err, "%s: the shard files cover %zu of the %zu parameters in [%zu, %zu)", dir, covered, sh->len, lo, hi);
        goto out;
    }
    rc = 0;
out:
    free(buf);
    free(obuf);
    return rc;
}
