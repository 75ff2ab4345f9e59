/* SPDX-License-Identifier: MIT */
/* cliexport.c: see cliexport.h. The file is written through a temporary
 * beside it and renamed onto it (npz_out_open), so FILE is either as it
 * was or the whole export. */
#include "cliexport.h"
#include "json.h"
#include "netprint.h"
#include "npz.h"

#include <inttypes.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
static void print_json(FILE *out, const CliLoad *c, const char *path, bool raw, const NpzWritten *done) {
    const RunCkptManifest *m = &c->man;
    const QNetSpec *s = &c->net.spec;
    JsonW j;
    json_init(&j, out, false);
    json_begin_object(&j, NULL);
    json_str(&j, "path", path);
    json_bool(&j, "replaced", done->replaced);
    json_str(&j, "format", raw ? "raw" : "npz");
    json_u64(&j, "bytes", done->bytes);
    json_u64(&j, "n_params", c->net.n_params);
    json_str(&j, "env", c->cfg->env.name);
    json_u64(&j, "obs_dim", (uint64_t)s->obs_dim);
    json_u64(&j, "num_actions", (uint64_t)s->n_actions);
    json_begin_array(&j, "hidden");
    for (int l = 0; l < s->n_hidden; l++) json_u64(&j, NULL, (uint64_t)s->hidden[l]);
    json_end_array(&j);
    json_bool(&j, "dueling", s->dueling);
    if (s->n_conv) {
        json_begin_array(&j, "input_shape");
        json_u64(&j, NULL, (uint64_t)s->in_h);
        json_u64(&j, NULL, (uint64_t)s->in_w);
        json_u64(&j, NULL, (uint64_t)s->in_c);
        json_end_array(&j);
        json_begin_array(&j, "conv");
        for (int i = 0; i < s->n_conv; i++) {
            json_begin_object(&j, NULL);
            json_u64(&j, "filters", (uint64_t)s->conv[i].filters);
            json_u64(&j, "kernel", (uint64_t)s->conv[i].kernel);
            json_u64(&j, "stride", (uint64_t)s->conv[i].stride);
            json_end_object(&j);
        }
        json_end_array(&j);
    }
    json_str(&j, "checkpoint", m->dir);
    json_str(&j, "kind", m->kind[0] ? m->kind : "periodic");
    json_u64(&j, "params_version", m->params_version);
    json_u64(&j, "updates", m->updates);
    json_u64(&j, "env_steps", m->env_steps);
    if (m->eval_episodes > 0) {
        json_num(&j, "logged_eval_mean", m->eval_mean);
        json_u64(&j, "logged_eval_episodes", (uint64_t)m->eval_episodes);
        json_u64(&j, "logged_eval_seed", m->eval_seed);
    }
    json_end_object(&j);
    fputc('\n', out);
}

int cliexport_write(const CliLoad *c, const char *path, FILE *out, bool json, char *err) {
    /* A file-size limit (ulimit -f) would kill the process with SIGXFSZ and
     * leave the temporary behind; ignored, the write fails with EFBIG and
     * the temporary is removed like after any other write error. */
    signal(SIGXFSZ, SIG_IGN);
    bool raw = npz_wants_raw(path);
    NpzWritten done = {0};
    if (raw ? npz_export_raw(path, c->params, c->net.n_params, &done, err)
            : npz_export_qnet(path, c->cfg, &c->net, c->params, &done, err))
        return -1;
    if (json) {
        print_json(out, c, path, raw, &done);
        return 0;
    }
    char shape[256], what[256];
    netprint_name(&c->net.spec, shape, sizeof shape);
    cliload_describe(&c->man, what, sizeof what);
    fprintf(out, "%s %s (%s, %" PRIu64 " bytes): %s network %s, %zu parameters, from %s (%s)\n",
            done.replaced ? "replaced" : "wrote", path, raw ? "raw float32" : "npz", done.bytes,
            c->cfg->env.name, shape, c->net.n_params, c->man.dir, what);
    return 0;
}
