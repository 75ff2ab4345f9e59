/* SPDX-License-Identifier: MIT */
/* qnet.c: see qnet.h.
 *
 * Forward, per linear layer l with input X (B, in) and weights W (in, out):
 *   Z = X W            cblas_sgemm (NoTrans, NoTrans), or a plain loop when
 *                      in is tiny (layer 0 of a classic-control net has
 *                      in = O = 4, where sgemm spends its time packing)
 *   H = relu(Z + b)    one fused pass over Z (hidden layers)
 *   head = b + X W     the last layer: sgemm accumulates onto rows of b,
 *                      then the dueling combination if any.
 * Backward walks the layers in reverse with d = dL/dZ_l (B, out):
 *   dW = X^T d         cblas_sgemm (Trans, NoTrans)
 *   db = sum_rows d    accumulated in the same pass that applies the ReLU mask
 *   dX = d W^T         cblas_sgemm (NoTrans, Trans), skipped for layer 0
 *   d' = dX * (H > 0)  H is the post-ReLU output, H > 0 exactly when Z > 0.
 * Why (in, out): the forward runs three times per DQN update (target on s',
 * online on s and s') and the input gradient once, and OpenBLAS runs
 * NoTrans-NoTrans fastest: against PyTorch's (out, in) this layout saves
 * about 10% of the gemm time of a 64-wide network (measured, OpenBLAS
 * 0.3.21, Zen 4), and the tiny first layer reads W rows directly.
 * Every loop runs in a fixed order, so results are bit-identical run to run.
 */
#include "qnet.h"

#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clones.h"
#include "util.h"

/* Layer 0 uses the loop kernel when its input is at most this wide. */
#define SMALL_IN 16

static int head_out(const QNetSpec *s) { return s->dueling ? s->n_actions + 1 : s->n_actions; }

static void add_view(QNet *net, const char *name, size_t off, size_t rows, size_t cols, int ndim,
                     const size_t *dims) {
    QNetView *v = &net->views[net->n_views++];
    snprintf(v->name, sizeof v->name, "%s", name);
    v->offset = off;
    v->rows = rows;
    v->cols = cols;
    v->ndim = ndim;
    for (int d = 0; d < 4; d++) v->dims[d] = d < ndim ? dims[d] : 0;
}

/* Linear layer l's weight (in, out) and bias (out) views: hidden.l.*, or
 * head.* for the last. */
static void add_linear_views(QNet *net, int l, const QNetLinear *L) {
    char wname[QNET_NAME_LEN] = "head.weight", bname[QNET_NAME_LEN] = "head.bias";
    if (l < net->spec.n_hidden) {
        snprintf(wname, sizeof wname, "hidden.%d.weight", l);
        snprintf(bname, sizeof bname, "hidden.%d.bias", l);
    }
    size_t dw[2] = {(size_t)L->in, (size_t)L->out}, db[1] = {(size_t)L->out};
    add_view(net, wname, L->w_off, dw[0], dw[1], 2, dw);
    add_view(net, bname, L->b_off, db[0], 1, 1, db);
}

static int check_mlp(const QNetSpec *spec, char *err) {
    if (spec->obs_dim < 1 || spec->obs_dim > (1 << 20))
        return errf(err, "qnet: obs_dim %d not in [1, %d]", spec->obs_dim, 1 << 20);
    if (spec->n_actions < 1 || spec->n_actions > (1 << 16))
        return errf(err, "qnet: n_actions %d not in [1, %d]", spec->n_actions, 1 << 16);
    if (spec->n_hidden < 0 || spec->n_hidden > QNET_MAX_HIDDEN)
        return errf(err, "qnet: %d hidden layers, expected 0 to %d", spec->n_hidden, QNET_MAX_HIDDEN);
    for (int l = 0; l < spec->n_hidden; l++)
        if (spec->hidden[l] < 1 || spec->hidden[l] > (1 << 16))
            return errf(err, "qnet: hidden layer %d has width %d, expected 1 to %d", l, spec->hidden[l],
                        1 << 16);
    return 0;
}

/* The observation planes and the conv count. */
static int check_planes(const QNetSpec *s, char *err) {
    if (s->n_conv < 0 || s->n_conv > QNET_MAX_CONV)
        return errf(err, "qnet: %d conv layers, expected 0 to %d", s->n_conv, QNET_MAX_CONV);
    bool none = s->in_h == 0 && s->in_w == 0 && s->in_c == 0;
    if (none && s->n_conv == 0) return 0;
    if (s->in_h < 1 || s->in_w < 1 || s->in_c < 1)
        return errf(err, "qnet: observation planes %dx%dx%d (height x width x channels)%s, expected each >= 1",
                    s->in_h, s->in_w, s->in_c, none ? " with conv layers" : "");
    if ((long long)s->in_h * s->in_w * s->in_c != s->obs_dim)
        return errf(err, "qnet: observation planes %dx%dx%d hold %lld floats, obs_dim is %d", s->in_h, s->in_w,
                    s->in_c, (long long)s->in_h * s->in_w * s->in_c, s->obs_dim);
    return 0;
}

/* The conv layers from offset 0: layer 0 reads (H, W, C) rows, the others
 * their predecessor's (F, OH, OW). Returns the flattened output size in
 * *flat and the parameters' end in *end. */
static int build_convs(QNet *net, char *err, int *flat, size_t *end) {
    const QNetSpec *s = &net->spec;
    int c = s->in_c, h = s->in_h, wd = s->in_w;
    size_t sc = 1, sy = (size_t)s->in_w * (size_t)s->in_c, sx = (size_t)s->in_c, off = 0;
    for (int i = 0; i < s->n_conv; i++) {
        ConvLayer *L = &net->conv[i];
        char why[ERR_LEN], name[QNET_NAME_LEN];
        const QNetConvSpec *cs = &s->conv[i];
        if (conv_init(L, c, h, wd, sc, sy, sx, cs->filters, cs->kernel, cs->stride, off, why))
            return errf(err, "qnet: conv layer %d: %s", i, strncmp(why, "conv: ", 6) ? why : why + 6);
        size_t dw[4] = {(size_t)L->out_c, (size_t)c, (size_t)L->k, (size_t)L->k}, db[1] = {(size_t)L->out_c};
        snprintf(name, sizeof name, "conv.%d.weight", i);
        add_view(net, name, L->w_off, dw[0], dw[1] * dw[2] * dw[3], 4, dw);
        snprintf(name, sizeof name, "conv.%d.bias", i);
        add_view(net, name, L->b_off, db[0], 1, 1, db);
        off = L->w_off + conv_n_params(L);
        c = L->out_c, h = L->out_h, wd = L->out_w;
        sc = (size_t)h * (size_t)wd, sy = (size_t)wd, sx = 1;
        size_t cols = conv_cols_size(L, 1), z = conv_out_size(L);
        if (z > (1 << 20)) return errf(err, "qnet: conv layer %d has %zu outputs, expected at most %d", i, z, 1 << 20);
        if (cols > net->max_cols) net->max_cols = cols;
        if (z > net->max_z) net->max_z = z;
    }
    *flat = net->n_conv ? c * h * wd : s->obs_dim;
    *end = off;
    return 0;
}

int qnet_init(QNet *net, const QNetSpec *spec, char *err) {
    memset(net, 0, sizeof *net);
    if (check_mlp(spec, err) || check_planes(spec, err)) return -1;
    net->spec = *spec;
    for (int l = spec->n_hidden; l < QNET_MAX_HIDDEN; l++) net->spec.hidden[l] = 0;
    for (int i = spec->n_conv; i < QNET_MAX_CONV; i++) net->spec.conv[i] = (QNetConvSpec){0, 0, 0};
    net->n_conv = spec->n_conv;
    int in, widest;
    size_t off;
    if (build_convs(net, err, &in, &off)) return -1;
    widest = in;
    for (int i = 0; i < net->n_conv; i++)
        if ((int)conv_out_size(&net->conv[i]) > widest) widest = (int)conv_out_size(&net->conv[i]);
    net->n_linear = spec->n_hidden + 1;
    for (int l = 0; l < net->n_linear; l++) {
        int out = l < spec->n_hidden ? spec->hidden[l] : head_out(spec);
        QNetLinear *L = &net->lin[l];
        L->in = in;
        L->out = out;
        L->w_off = off;
        L->b_off = off + (size_t)in * (size_t)out;
        add_linear_views(net, l, L);
        off = L->b_off + (size_t)out;
        if (out > widest) widest = out;
        in = out;
    }
    net->n_params = off;
    net->max_width = widest;
    return 0;
}

const QNetView *qnet_view(const QNet *net, const char *name) {
    for (int i = 0; i < net->n_views; i++)
        if (!strcmp(net->views[i].name, name)) return &net->views[i];
    return NULL;
}

void qnet_init_params(const QNet *net, float *params, Rng *rng) {
    for (int i = 0; i < net->n_conv; i++) {
        const ConvLayer *L = &net->conv[i];
        double bound = 1.0 / sqrt((double)L->in_c * L->k * L->k);
        size_t n = conv_n_params(L); /* weights then biases */
        for (size_t k = 0; k < n; k++) params[L->w_off + k] = (float)rng_uniform_range(rng, -bound, bound);
    }
    for (int l = 0; l < net->n_linear; l++) {
        const QNetLinear *L = &net->lin[l];
        double bound = 1.0 / sqrt((double)L->in);
        size_t n = (size_t)L->in * (size_t)L->out + (size_t)L->out; /* weights then biases */
        for (size_t i = 0; i < n; i++) params[L->w_off + i] = (float)rng_uniform_range(rng, -bound, bound);
    }
}

/* Views are 64-byte aligned: sgemm and the vector loops like aligned rows. */
static size_t padded(size_t n) { return round_up(n, 16); }

/* The workspace's views, in order, each padded(rows * width): the MLP's
 * (as before convs existed, so a net without convs allocates the same),
 * then the convs' activations and scratch. With mem NULL only counts. */
static size_t carve(QNetWork *w, const QNet *net, size_t B, float *mem) {
    size_t at = 0;
#define TAKE(ptr, n)                          \
    do {                                      \
        if (mem) (ptr) = mem + at;            \
        at += padded(n);                      \
    } while (0)
    for (int l = 0; l < net->spec.n_hidden; l++) TAKE(w->act[l], B * (size_t)net->spec.hidden[l]);
    TAKE(w->head, B * (size_t)net->lin[net->n_linear - 1].out);
    for (int k = 0; k < 2; k++) TAKE(w->dbuf[k], B * (size_t)net->max_width);
    TAKE(w->zeros, (size_t)net->max_width);
    for (int i = 0; i < net->n_conv; i++) TAKE(w->conv_act[i], B * conv_out_size(&net->conv[i]));
    if (net->n_conv) {
        TAKE(w->cols, B * net->max_cols);
        TAKE(w->z, B * net->max_z);
    }
#undef TAKE
    return at;
}

size_t qnet_work_floats(const QNet *net, int max_batch) {
    QNetWork w;
    return carve(&w, net, max_batch < 1 ? 1 : (size_t)max_batch, NULL);
}

void qnet_work_init(QNetWork *w, const QNet *net, int max_batch) {
    memset(w, 0, sizeof *w);
    if (max_batch < 1) DIE(NULL, "qnet_work_init: max_batch %d < 1", max_batch);
    size_t total = carve(w, net, (size_t)max_batch, NULL);
    w->mem = xmalloc_for(total * sizeof(float), "network activations", NULL);
    memset(w->mem, 0, total * sizeof(float));
    carve(w, net, (size_t)max_batch, w->mem);
    w->max_batch = max_batch;
}

void qnet_work_free(QNetWork *w) {
    free(w->mem);
    memset(w, 0, sizeof *w);
}

static void check_batch(const QNetWork *w, int B, const char *who) {
    if (B < 1 || B > w->max_batch) DIE(NULL, "%s: batch of %d rows, workspace holds 1 to %d", who, B, w->max_batch);
}

/* ---------------------------------------------------------------- kernels */

/* One row of the tiny-input layer, four inputs at a time:
 * z = (first ? b : z) + x0 w0 + x1 w1 + x2 w2 + x3 w3, then ReLU if last.
 * Inlined with constant first/last, so each variant is one clean loop. */
static inline void small_row(float *restrict z, const float *restrict b, const float *restrict w0,
                             const float *restrict w1, const float *restrict w2, const float *restrict w3,
                             float x0, float x1, float x2, float x3, int out, bool first, bool last) {
    for (int j = 0; j < out; j++) {
        float v = (first ? b[j] : z[j]) + x0 * w0[j] + x1 * w1[j] + x2 * w2[j] + x3 * w3[j];
        z[j] = last && v < 0.0f ? 0.0f : v;
    }
}

/* z (B, out) = relu(x (B, in) W + b) for tiny in (<= SMALL_IN), W (in, out).
 * Passes over groups of four inputs; in each, the weight rows are fixed and
 * each row of z is one loop along contiguous outputs, so a row of z is
 * written once when in <= 4 (CartPole, Pendulum, MountainCar). A short last
 * group reads the zero row `zeros` (out) with x = 0. The sum order per
 * output is b + x0 w0 + x1 w1 + ..., the reference's; the padding adds +0
 * terms, which can change only the sign of an exact zero. */
AGENTS_HOT
static void linear_small_relu(const float *restrict x, int B, int in, int out, const float *restrict W,
                              const float *restrict b, const float *restrict zeros, float *restrict z) {
    for (int k = 0; k < in; k += 4) {
        int nt = in - k < 4 ? in - k : 4;
        const float *w0 = W + (size_t)k * out;
        const float *w1 = nt > 1 ? w0 + out : zeros, *w2 = nt > 2 ? w0 + 2 * (size_t)out : zeros,
                    *w3 = nt > 3 ? w0 + 3 * (size_t)out : zeros;
        bool first = k == 0, last = k + 4 >= in;
        for (int i = 0; i < B; i++) {
            const float *xi = x + (size_t)i * in + k;
            float x0 = xi[0], x1 = nt > 1 ? xi[1] : 0.0f, x2 = nt > 2 ? xi[2] : 0.0f, x3 = nt > 3 ? xi[3] : 0.0f;
            float *zi = z + (size_t)i * out;
            if (first && last)
                small_row(zi, b, w0, w1, w2, w3, x0, x1, x2, x3, out, true, true);
            else if (first)
                small_row(zi, b, w0, w1, w2, w3, x0, x1, x2, x3, out, true, false);
            else if (last)
                small_row(zi, b, w0, w1, w2, w3, x0, x1, x2, x3, out, false, true);
            else
                small_row(zi, b, w0, w1, w2, w3, x0, x1, x2, x3, out, false, false);
        }
    }
}

/* z (B, out) = b in every row. */
static void fill_rows(float *restrict z, int B, int out, const float *restrict b) {
    for (int i = 0; i < B; i++) memcpy(z + (size_t)i * out, b, (size_t)out * sizeof(float));
}

/* z (B, out) += b, then ReLU if relu. NaN passes through the ReLU. */
AGENTS_HOT
static void bias_act(float *restrict z, int B, int out, const float *restrict b, bool relu) {
    for (int i = 0; i < B; i++) {
        float *zi = z + (size_t)i * out;
        if (relu)
            for (int j = 0; j < out; j++) {
                float v = zi[j] + b[j];
                zi[j] = v < 0.0f ? 0.0f : v;
            }
        else
            for (int j = 0; j < out; j++) zi[j] += b[j];
    }
}

/* Dueling: q[i, a] = (V + Adv[i, a]) - mean_a Adv[i, .], head (B, A+1). */
static void dueling_combine(const float *head, int B, int A, float *q) {
    for (int i = 0; i < B; i++) {
        const float *h = head + (size_t)i * (A + 1);
        float s = 0.0f;
        for (int a = 0; a < A; a++) s += h[a];
        float mean = s / (float)A, v = h[A];
        for (int a = 0; a < A; a++) q[(size_t)i * A + a] = (v + h[a]) - mean;
    }
}

/* dhead (B, A+1) from dq (B, A): dAdv = dq - mean(dq), dV = sum(dq). */
static void dueling_backward(const float *dq, int B, int A, float *dhead) {
    for (int i = 0; i < B; i++) {
        const float *g = dq + (size_t)i * A;
        float *d = dhead + (size_t)i * (A + 1);
        float s = 0.0f;
        for (int a = 0; a < A; a++) s += g[a];
        float mean = s / (float)A;
        for (int a = 0; a < A; a++) d[a] = g[a] - mean;
        d[A] = s;
    }
}

/* d (B, n) *= (h > 0), and db (n) = column sums of the masked d. */
AGENTS_HOT
static void relu_mask_bias_grad(float *restrict d, const float *restrict h, int B, int n, float *restrict db) {
    for (int j = 0; j < n; j++) db[j] = 0.0f;
    for (int i = 0; i < B; i++) {
        float *di = d + (size_t)i * n;
        const float *hi = h + (size_t)i * n;
        for (int j = 0; j < n; j++) {
            float v = hi[j] > 0.0f ? di[j] : 0.0f;
            di[j] = v;
            db[j] += v;
        }
    }
}

AGENTS_HOT
static void col_sums(const float *restrict d, int B, int n, float *restrict db) {
    for (int j = 0; j < n; j++) db[j] = 0.0f;
    for (int i = 0; i < B; i++)
        for (int j = 0; j < n; j++) db[j] += d[(size_t)i * n + j];
}

/* ------------------------------------------------------ forward / backward */

void qnet_forward(const QNet *net, const float *params, const float *obs, int B, float *q, QNetWork *w) {
    check_batch(w, B, "qnet_forward");
    const float *x = obs;
    for (int i = 0; i < net->n_conv; i++) {
        conv_forward(&net->conv[i], params, x, B, w->cols, w->z, w->conv_act[i]);
        x = w->conv_act[i];
    }
    int L = net->n_linear;
    for (int l = 0; l < L - 1; l++) {
        const QNetLinear *lin = &net->lin[l];
        const float *W = params + lin->w_off, *b = params + lin->b_off;
        float *z = w->act[l];
        if (l == 0 && lin->in <= SMALL_IN) {
            linear_small_relu(x, B, lin->in, lin->out, W, b, w->zeros, z);
        } else {
            /* z (B, out) = x (B, in) . W (in, out) */
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, B, lin->out, lin->in, 1.0f, x, lin->in, W,
                        lin->out, 0.0f, z, lin->out);
            bias_act(z, B, lin->out, b, true);
        }
        x = z;
    }
    /* The head starts from its bias and lets sgemm accumulate onto it
     * (beta = 1): no zero fill inside OpenBLAS, no separate bias pass, and
     * without dueling it lands straight in q. */
    const QNetLinear *lin = &net->lin[L - 1];
    float *z = net->spec.dueling ? w->head : q;
    fill_rows(z, B, lin->out, params + lin->b_off);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, B, lin->out, lin->in, 1.0f, x, lin->in,
                params + lin->w_off, lin->out, 1.0f, z, lin->out);
    if (net->spec.dueling) dueling_combine(w->head, B, net->spec.n_actions, q);
}

void qnet_backward(const QNet *net, const float *params, const float *obs, const float *dq, int B,
                   float *grad, QNetWork *w) {
    check_batch(w, B, "qnet_backward");
    int L = net->n_linear, A = net->spec.n_actions;
    /* d: dL/dZ of the current layer (B, out), masked already. */
    const float *d = dq;
    if (net->spec.dueling) {
        dueling_backward(dq, B, A, w->dbuf[1]);
        d = w->dbuf[1];
    }
    col_sums(d, B, net->lin[L - 1].out, grad + net->lin[L - 1].b_off);
    int flip = 0, C = net->n_conv;
    const float *mlp_in = C ? w->conv_act[C - 1] : obs;
    for (int l = L - 1; l >= 0; l--) {
        const QNetLinear *lin = &net->lin[l];
        const float *x = l == 0 ? mlp_in : w->act[l - 1];
        /* dW (in, out) = x^T (in, B) . d (B, out) */
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, lin->in, lin->out, B, 1.0f, x, lin->in, d,
                    lin->out, 0.0f, grad + lin->w_off, lin->out);
        if (l == 0 && C == 0) return;
        /* dX (B, in) = d (B, out) . W^T (out, in), then the ReLU mask of
         * layer l-1 (the conv backward applies its own) */
        float *dx = w->dbuf[flip];
        flip ^= 1;
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, B, lin->in, lin->out, 1.0f, d, lin->out,
                    params + lin->w_off, lin->out, 0.0f, dx, lin->in);
        if (l > 0) relu_mask_bias_grad(dx, w->act[l - 1], B, lin->in, grad + net->lin[l - 1].b_off);
        d = dx;
    }
    /* d = dL/d(flattened conv output) (B, F*P), unmasked */
    for (int i = C - 1; i >= 0; i--) {
        float *dx = i > 0 ? w->dbuf[flip] : NULL;
        flip ^= 1;
        conv_backward(&net->conv[i], params, i > 0 ? w->conv_act[i - 1] : obs, w->conv_act[i], d, B, w->cols, w->z,
                      grad, dx);
        d = dx;
    }
}

/* -------------------------------------------------------- naive reference */

void qnet_forward_ref(const QNet *net, const float *params, const float *obs, int B, float *q, QNetWork *w) {
    check_batch(w, B, "qnet_forward_ref");
    int L = net->n_linear, A = net->spec.n_actions, C = net->n_conv;
    for (int i = 0; i < C; i++) conv_forward_ref(&net->conv[i], params, i ? w->conv_act[i - 1] : obs, B, w->conv_act[i]);
    const float *mlp_in = C ? w->conv_act[C - 1] : obs;
    for (int i = 0; i < B; i++) {
        const float *x = mlp_in + (size_t)i * net->lin[0].in;
        for (int l = 0; l < L; l++) {
            const QNetLinear *lin = &net->lin[l];
            float *z = (l < L - 1 ? w->act[l] : w->head) + (size_t)i * lin->out;
            for (int j = 0; j < lin->out; j++) {
                double s = params[lin->b_off + j];
                for (int k = 0; k < lin->in; k++) s += (double)x[k] * params[lin->w_off + (size_t)k * lin->out + j];
                z[j] = (float)(l < L - 1 && s < 0 ? 0.0 : s);
            }
            x = z;
        }
        const float *h = w->head + (size_t)i * net->lin[L - 1].out;
        for (int a = 0; a < A; a++) {
            if (!net->spec.dueling) {
                q[(size_t)i * A + a] = h[a];
                continue;
            }
            double mean = 0;
            for (int k = 0; k < A; k++) mean += h[k];
            mean /= A;
            q[(size_t)i * A + a] = (float)((double)h[A] + h[a] - mean);
        }
    }
}

void qnet_backward_ref(const QNet *net, const float *params, const float *obs, const float *dq, int B,
                       float *grad, QNetWork *w) {
    check_batch(w, B, "qnet_backward_ref");
    int L = net->n_linear, A = net->spec.n_actions, C = net->n_conv;
    const float *mlp_in = C ? w->conv_act[C - 1] : obs;
    float *d = w->dbuf[0], *dx = w->dbuf[1];
    int out = net->lin[L - 1].out;
    for (int i = 0; i < B; i++) {
        const float *g = dq + (size_t)i * A;
        double s = 0;
        for (int a = 0; a < A; a++) s += g[a];
        for (int a = 0; a < A; a++) d[(size_t)i * out + a] = net->spec.dueling ? (float)(g[a] - s / A) : g[a];
        if (net->spec.dueling) d[(size_t)i * out + A] = (float)s;
    }
    for (int l = L - 1; l >= 0; l--) {
        const QNetLinear *lin = &net->lin[l];
        const float *x = l == 0 ? mlp_in : w->act[l - 1];
        for (int j = 0; j < lin->out; j++) {
            double sb = 0;
            for (int i = 0; i < B; i++) sb += d[(size_t)i * lin->out + j];
            grad[lin->b_off + j] = (float)sb;
            for (int k = 0; k < lin->in; k++) {
                double sw = 0;
                for (int i = 0; i < B; i++) sw += (double)d[(size_t)i * lin->out + j] * x[(size_t)i * lin->in + k];
                grad[lin->w_off + (size_t)k * lin->out + j] = (float)sw;
            }
        }
        if (l == 0 && C == 0) return;
        for (int i = 0; i < B; i++)
            for (int k = 0; k < lin->in; k++) {
                double s = 0;
                for (int j = 0; j < lin->out; j++)
                    s += (double)d[(size_t)i * lin->out + j] * params[lin->w_off + (size_t)k * lin->out + j];
                /* x > 0: layer l-1's ReLU mask; into a conv, conv_backward_ref masks */
                dx[(size_t)i * lin->in + k] = l == 0 || x[(size_t)i * lin->in + k] > 0 ? (float)s : 0.0f;
            }
        float *t = d;
        d = dx;
        dx = t;
    }
    for (int i = C - 1; i >= 0; i--) {
        conv_backward_ref(&net->conv[i], params, i ? w->conv_act[i - 1] : obs, w->conv_act[i], d, B, grad,
                          i ? dx : NULL);
        float *t = d;
        d = dx;
        dx = t;
    }
}

/* ----------------------------------------------------------------- misc */

void qnet_argmax(const float *q, int B, int A, int32_t *out) {
    for (int i = 0; i < B; i++) {
        const float *r = q + (size_t)i * A;
        int best = 0;
        for (int a = 1; a < A; a++)
            if (isnan(r[best]) ? !isnan(r[a]) : r[a] > r[best]) best = a;
        out[i] = best;
    }
}

double qnet_forward_flops(const QNet *net, int B) {
    double f = 0;
    for (int l = 0; l < net->n_linear; l++) f += 2.0 * net->lin[l].in * net->lin[l].out;
    f *= B;
    for (int i = 0; i < net->n_conv; i++) f += conv_forward_flops(&net->conv[i], B);
    return f;
}

double qnet_backward_flops(const QNet *net, int B) {
    double f = 0;
    for (int l = 0; l < net->n_linear; l++)
        f += (l == 0 && net->n_conv == 0 ? 2.0 : 4.0) * net->lin[l].in * net->lin[l].out;
    f *= B;
    for (int i = 0; i < net->n_conv; i++) f += conv_backward_flops(&net->conv[i], B, i > 0);
    return f;
}
