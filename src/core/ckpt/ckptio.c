/* SPDX-License-Identifier: MIT */
/* ckptio.c: the file helpers every part of runckpt uses (runckptint.h):
 * joining paths, removing a checkpoint directory, writing a small text
 * file atomically, the network fields of a header, reading an open
 * checkpoint file at an offset. The floor of the room: it calls nothing
 * else in it, so every other part may call it.
 */
#include "runckpt.h"
#include "runckptint.h"
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

_Static_assert(QNET_MAX_CONV <= CKPT_MAX_CONV, "every conv layer of a QNet fits section NET");
_Static_assert(CFG_ENV_NAME_LEN <= CKPT_ENVID_LEN && CFG_KWARGS_LEN <= CKPT_KWARGS_LEN,
               "every env.name and env.kwargs fits section ENVID");

int ckptio_join(char *out, const char *a, const char *b, char *err) {
    if (snprintf(out, PATH_LEN, "%s/%s", a, b) >= PATH_LEN) return errf(err, "path too long: %s/%s", a, b);
    return 0;
}

int ckptio_remove_tree(const char *path, char *err) {
    struct stat st;
    if (lstat(path, &st) != 0) {
        if (errno == ENOENT) return 0;
        return errf(err, "cannot remove %s: %s", path, strerror(errno));
    }
    if (!S_ISDIR(st.st_mode)) {
        if (unlink(path) != 0 && errno != ENOENT) return errf(err, "cannot remove %s: %s", path, strerror(errno));
        return 0;
    }
    DIR *d = opendir(path);
    if (!d) return errf(err, "cannot remove %s: %s", path, strerror(errno));
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        if (unlinkat(dirfd(d), e->d_name, 0) != 0 && errno != ENOENT) {
            int en = errno;
            closedir(d);
            return errf(err, "cannot remove %s/%s: %s", path, e->d_name, strerror(en));
        }
    }
    closedir(d);
    if (rmdir(path) != 0 && errno != ENOENT) return errf(err, "cannot remove %s: %s", path, strerror(errno));
    return 0;
}

void ckptio_fsync_dir(const char *dir) {
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        fsync(dfd);
        close(dfd);
    }
}

int ckptio_write_atomic(const char *dir, const char *name, const char *text, char *err) {
    char path[PATH_LEN], tmp[PATH_LEN + 8];
    if (ckptio_join(path, dir, name, err)) return -1;
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
    if (fsync(fd) != 0) {
        int e = errno;
        close(fd);
        unlink(tmp);
        return errf(err, "cannot write %s: %s", tmp, strerror(e));
    }
    if (close(fd) != 0) {
        int e = errno;
        unlink(tmp);
        return errf(err, "cannot write %s: %s", tmp, strerror(e));
    }
    if (rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        return errf(err, "cannot rename %s: %s", tmp, strerror(e));
    }
    ckptio_fsync_dir(dir);
    return 0;
}

void ckptio_fill_net(const Config *cfg, const QNet *net, CkptMeta *m) {
    memset(m, 0, sizeof *m);
    m->net.obs_dim = (uint32_t)net->spec.obs_dim;
    m->net.num_actions = (uint32_t)net->spec.n_actions;
    m->net.n_hidden = (uint32_t)net->spec.n_hidden;
    for (int i = 0; i < net->spec.n_hidden; i++) m->net.hidden[i] = (uint32_t)net->spec.hidden[i];
    m->net.dueling = net->spec.dueling;
    m->net.n_params = net->n_params;
    /* The planes and conv layers: section NET (ckptfile.h). */
    if (net->spec.in_c > 0) {
        m->net.in_h = (uint32_t)net->spec.in_h;
        m->net.in_w = (uint32_t)net->spec.in_w;
        m->net.in_c = (uint32_t)net->spec.in_c;
        m->net.n_conv = (uint32_t)net->spec.n_conv;
        for (int i = 0; i < net->spec.n_conv && i < CKPT_MAX_CONV; i++) {
            m->net.conv[i][0] = (uint32_t)net->spec.conv[i].filters;
            m->net.conv[i][1] = (uint32_t)net->spec.conv[i].kernel;
            m->net.conv[i][2] = (uint32_t)net->spec.conv[i].stride;
        }
    }
    /* Registered env names are far shorter than CKPT_ENV_LEN; a Python
     * environment's id may not be: the header holds its first 31 bytes and
     * section ENVID the whole id with its kwargs. */
    snprintf(m->env, sizeof m->env, "%.*s", CKPT_ENV_LEN - 1, cfg->env.name);
    if (env_extern_kind(cfg->env.name)) {
        snprintf(m->env_id, sizeof m->env_id, "%s", cfg->env.name);
        snprintf(m->env_kwargs, sizeof m->env_kwargs, "%s", cfg->env.kwargs[0] ? cfg->env.kwargs : "{}");
    }
}

int ckptio_pread(const CkptReader *r, uint64_t off, void *dst, size_t n, char *err) {
    unsigned char *p = dst;
    for (size_t done = 0; done < n;) {
        ssize_t got = pread(r->fd, p + done, n - done, (off_t)(off + done));
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) return errf(err, "%s: cannot read: %s", r->path, strerror(errno));
        if (got == 0) return errf(err, "%s: the file ended early (changed while read?)", r->path);
        done += (size_t)got;
    }
    return 0;
}
