/* SPDX-License-Identifier: MIT */
/* test_npz.c: the .npz export of conv Q-networks (src/cli/npz.c), read back
 * by a minimal zip and .npy reader: array names, shapes, dtypes and the
 * values against the parameters, and the metadata a consumer needs
 * (input_shape, conv_layers, format_version). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "convnets.h"
#include "npz.h"
#include "util.h"

typedef struct {
    unsigned char *buf;
    size_t len;
} File;

static File slurp(const char *path) {
    File f = {0};
    FILE *fp = fopen(path, "rb");
    cr_assert(fp, "cannot open %s", path);
    fseek(fp, 0, SEEK_END);
    f.len = (size_t)ftell(fp);
    fseek(fp, 0, SEEK_SET);
    f.buf = malloc(f.len);
    cr_assert_eq(fread(f.buf, 1, f.len, fp), f.len);
    fclose(fp);
    return f;
}

static unsigned get16(const unsigned char *p) { return p[0] | (unsigned)p[1] << 8; }
static uint32_t get32(const unsigned char *p) { return get16(p) | (uint32_t)get16(p + 2) << 16; }

/* The member name.npy by its local headers: its .npy header dict (into
 * dict, NUL-terminated) and a pointer to its data; NULL when absent. */
static const unsigned char *member(const File *f, const char *name, char *dict, size_t dict_cap) {
    char want[128];
    snprintf(want, sizeof want, "%s.npy", name);
    size_t off = 0;
    while (off + 30 <= f->len && get32(f->buf + off) == 0x04034b50u) {
        const unsigned char *h = f->buf + off;
        uint32_t size = get32(h + 18);
        unsigned nl = get16(h + 26), xl = get16(h + 28);
        const unsigned char *data = h + 30 + nl + xl;
        if (nl == strlen(want) && !memcmp(h + 30, want, nl)) {
            cr_assert(!memcmp(data, "\x93NUMPY\x01\x00", 8), "%s: not a .npy v1.0", name);
            unsigned hl = get16(data + 8);
            cr_assert_lt(hl, dict_cap);
            memcpy(dict, data + 10, hl);
            dict[hl] = '\0';
            return data + 10 + hl;
        }
        off += 30 + nl + xl + size;
    }
    return NULL;
}

/* The array's data, after checking its .npy header says descr and shape
 * (as numpy writes them, e.g. "(4, 2, 3, 3)"). */
static const unsigned char *array(const File *f, const char *name, const char *descr, const char *shape) {
    char dict[256], want[160];
    const unsigned char *data = member(f, name, dict, sizeof dict);
    cr_assert(data, "no array %s in the export", name);
    snprintf(want, sizeof want, "{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr, shape);
    cr_assert(!strncmp(dict, want, strlen(want)), "%s: header %s, expected %s", name, dict, want);
    return data;
}

static void export_to(const QNet *net, const float *params, const char *path) {
    Config *cfg = calloc(1, sizeof *cfg);
    snprintf(cfg->env.name, sizeof cfg->env.name, "MinAtar/Breakout");
    char err[ERR_LEN];
    NpzWritten done;
    cr_assert_eq(npz_export_qnet(path, cfg, net, params, &done, err), 0, "%s", err);
    free(cfg);
}

static void tmp_path(char *path, size_t size, const char *what) {
    snprintf(path, size, "/tmp/gorila-test-npz-%ld-%s.npz", (long)getpid(), what);
}

Test(npz, conv_weights_and_metadata) {
    QNetSpec spec = convnet_spec('a');
    QNet net;
    char err[ERR_LEN], path[256];
    cr_assert_eq(qnet_init(&net, &spec, err), 0, "%s", err);
    float *p = convnet_params(&net, 5);
    tmp_path(path, sizeof path, "a");
    export_to(&net, p, path);
    File f = slurp(path);
    unlink(path);

    /* Conv weights (out, in, kh, kw) and biases, the parameters as they are. */
    const unsigned char *d = array(&f, "conv.0.weight", "<f4", "(4, 2, 3, 3)");
    cr_assert(!memcmp(d, p + qnet_view(&net, "conv.0.weight")->offset, 72 * sizeof(float)));
    d = array(&f, "conv.0.bias", "<f4", "(4,)");
    cr_assert(!memcmp(d, p + qnet_view(&net, "conv.0.bias")->offset, 4 * sizeof(float)));
    d = array(&f, "conv.1.weight", "<f4", "(3, 4, 2, 2)");
    cr_assert(!memcmp(d, p + qnet_view(&net, "conv.1.weight")->offset, 48 * sizeof(float)));
    d = array(&f, "conv.1.bias", "<f4", "(3,)");
    cr_assert(!memcmp(d, p + qnet_view(&net, "conv.1.bias")->offset, 3 * sizeof(float)));

    /* The first dense layer reads the flattened (3, 1, 2) conv output: (5, 6), W^T. */
    d = array(&f, "layers.0.weight", "<f4", "(5, 6)");
    const float *W = p + qnet_view(&net, "hidden.0.weight")->offset; /* (in 6, out 5) */
    for (int o = 0; o < 5; o++)
        for (int i = 0; i < 6; i++) {
            float v;
            memcpy(&v, d + 4 * (size_t)(o * 6 + i), 4);
            cr_assert_eq(v, W[i * 5 + o], "layers.0.weight[%d][%d]", o, i);
        }
    array(&f, "layers.1.weight", "<f4", "(3, 5)");

    /* What a consumer needs to run it: planes (H, W, C) and each conv's
     * (filters, kernel, stride); format_version 2 so that readers of 1 refuse it. */
    int64_t v[6];
    memcpy(v, array(&f, "input_shape", "<i8", "(3,)"), 3 * sizeof v[0]);
    cr_assert(v[0] == 5 && v[1] == 6 && v[2] == 2, "input_shape %ld %ld %ld", (long)v[0], (long)v[1], (long)v[2]);
    memcpy(v, array(&f, "conv_layers", "<i8", "(2, 3)"), 6 * sizeof v[0]);
    int64_t want[6] = {4, 3, 1, 3, 2, 2};
    cr_assert(!memcmp(v, want, sizeof want), "conv_layers %ld %ld %ld %ld %ld %ld", (long)v[0], (long)v[1],
              (long)v[2], (long)v[3], (long)v[4], (long)v[5]);
    memcpy(v, array(&f, "format_version", "<i8", "()"), sizeof v[0]);
    cr_assert_eq(v[0], NPZ_FORMAT_VERSION_CONV);
    memcpy(v, array(&f, "obs_dim", "<i8", "()"), sizeof v[0]);
    cr_assert_eq(v[0], 60);
    free(f.buf);
    free(p);
}

Test(npz, conv_dueling_head_reads_the_flat_conv_output) {
    QNetSpec spec = convnet_spec('b');
    QNet net;
    char err[ERR_LEN], path[256];
    cr_assert_eq(qnet_init(&net, &spec, err), 0, "%s", err);
    float *p = convnet_params(&net, 6);
    tmp_path(path, sizeof path, "b");
    export_to(&net, p, path);
    File f = slurp(path);
    unlink(path);
    array(&f, "conv.0.weight", "<f4", "(5, 3, 2, 2)");
    array(&f, "advantage.weight", "<f4", "(4, 45)");
    array(&f, "value.weight", "<f4", "(1, 45)");
    cr_assert_null(member(&f, "layers.0.weight", err, sizeof err));
    int64_t v;
    memcpy(&v, array(&f, "conv_layers", "<i8", "(1, 3)") + 16, sizeof v);
    cr_assert_eq(v, 1, "stride %ld", (long)v);
    free(f.buf);
    free(p);
}

Test(npz, mlp_export_keeps_format_1_without_conv_metadata) {
    QNetSpec spec = {.obs_dim = 4, .n_actions = 2, .n_hidden = 1, .hidden = {3}};
    QNet net;
    char err[ERR_LEN], path[256], dict[256];
    cr_assert_eq(qnet_init(&net, &spec, err), 0, "%s", err);
    float *p = convnet_params(&net, 7);
    tmp_path(path, sizeof path, "mlp");
    export_to(&net, p, path);
    File f = slurp(path);
    unlink(path);
    int64_t v;
    memcpy(&v, array(&f, "format_version", "<i8", "()"), sizeof v);
    cr_assert_eq(v, NPZ_FORMAT_VERSION);
    cr_assert_null(member(&f, "input_shape", dict, sizeof dict));
    cr_assert_null(member(&f, "conv_layers", dict, sizeof dict));
    cr_assert_null(member(&f, "conv.0.weight", dict, sizeof dict));
    free(f.buf);
    free(p);
}

Test(npz, add_refuses_more_than_four_dimensions) {
    char path[256], err[ERR_LEN];
    tmp_path(path, sizeof path, "dims");
    NpzWriter w;
    cr_assert_eq(npz_init(&w, path, err), 0, "%s", err);
    float x[32] = {0};
    size_t shape[5] = {2, 2, 2, 2, 2};
    cr_assert_eq(npz_add(&w, "five", NPZ_F32, 5, shape, x, err), -1);
    cr_assert(strstr(err, "5 dimensions"), "%s", err);
    cr_assert_eq(npz_add(&w, "four", NPZ_F32, 4, shape, x, err), 0, "%s", err);
    npz_free(&w);
    cr_assert_neq(access(path, F_OK), 0, "an unfinished export leaves no file");
}
