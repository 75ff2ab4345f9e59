/* SPDX-License-Identifier: MIT */
/* npz_conv.c: writes the conv networks of convnets.h for
 * tests/cli/export_conv.sh, which cannot train one from a config yet:
 *
 *   npz_conv OUTDIR
 *
 * For each network N (a, b): OUTDIR/N.npz (npz_export_qnet, as `gorila
 * export` writes it), OUTDIR/N.obs (observations, one per line, MinAtar-like
 * 0/1 planes with some fractional values) and OUTDIR/N.q, per observation
 * "action,q0,q1,..." as gorila computes them (qnet_forward, qnet_argmax).
 * Exits 0, or 1 with a message. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "convnets.h"
#include "npz.h"
#include "util.h"

#define N_OBS 200

static int write_net(const char *dir, char which, char *err) {
    QNetSpec spec = convnet_spec(which);
    QNet net;
    if (qnet_init(&net, &spec, err)) return -1;
    /* Seeds under which each network picks more than one action on these observations. */
    float *params = convnet_params(&net, which == 'a' ? 4 : 12);
    Config *cfg = calloc(1, sizeof *cfg);
    snprintf(cfg->env.name, sizeof cfg->env.name, "MinAtar/Test-%c", which);
    char path[PATH_LEN], opath[PATH_LEN], qpath[PATH_LEN];
    snprintf(path, sizeof path, "%s/%c.npz", dir, which);
    snprintf(opath, sizeof opath, "%s/%c.obs", dir, which);
    snprintf(qpath, sizeof qpath, "%s/%c.q", dir, which);
    NpzWritten done;
    int rc = npz_export_qnet(path, cfg, &net, params, &done, err);
    FILE *fo = rc ? NULL : fopen(opath, "w"), *fq = rc ? NULL : fopen(qpath, "w");
    if (!rc && (!fo || !fq)) rc = errf(err, "cannot write %s or %s", opath, qpath);
    QNetWork work;
    qnet_work_init(&work, &net, 1);
    float *obs = malloc((size_t)spec.obs_dim * sizeof *obs), q[8];
    Rng rng;
    rng_seed(&rng, 99, (uint64_t)which);
    for (int r = 0; !rc && r < N_OBS; r++) {
        for (int i = 0; i < spec.obs_dim; i++) {
            double u = rng_uniform(&rng);
            obs[i] = u < 0.6 ? 0.0f : u < 0.9 ? 1.0f : (float)(int)(u * 1000) / 1000.0f;
            fprintf(fo, "%s%g", i ? " " : "", (double)obs[i]);
        }
        fputc('\n', fo);
        int32_t act;
        qnet_forward(&net, params, obs, 1, q, &work);
        qnet_argmax(q, 1, spec.n_actions, &act);
        fprintf(fq, "%d", (int)act);
        for (int a = 0; a < spec.n_actions; a++) fprintf(fq, ",%.9g", (double)q[a]);
        fputc('\n', fq);
    }
    if (fo && fclose(fo) != 0 && !rc) rc = errf(err, "cannot write %s", opath);
    if (fq && fclose(fq) != 0 && !rc) rc = errf(err, "cannot write %s", qpath);
    qnet_work_free(&work);
    free(obs);
    free(cfg);
    free(params);
    return rc;
}

int main(int argc, char **argv) {
    char err[ERR_LEN];
    if (argc != 2) {
        fprintf(stderr, "usage: npz_conv OUTDIR\n");
        return 1;
    }
    if (write_net(argv[1], 'a', err) || write_net(argv[1], 'b', err)) {
        fprintf(stderr, "npz_conv: %s\n", err);
        return 1;
    }
    return 0;
}
