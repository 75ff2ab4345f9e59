/* SPDX-License-Identifier: MIT */
/* conv.c: see conv.h.
 *
 * Why im2col and one sgemm per layer and batch: the MinAtar net's only
 * conv layer (C <= 10 planes of 10x10, 16 filters 3x3) is small per
 * sample, F*C*K*K = 1440 multiply-adds per output pixel column, so a
 * per-sample product would be 64 columns wide, where sgemm spends its
 * time packing. Gathering the whole batch into one (C*K*K, B*P) matrix
 * gives a product with B*P = 2048 columns at batch 32, which OpenBLAS runs
 * near its peak; the gather itself is C*K*K*B*P copies, 1/F of the
 * product's multiply-adds.
 *
 *   forward   cols (CKK, BP)  <- im2col(x)
 *             Z (F, BP)       =  W (F, CKK) . cols          sgemm NN
 *             y[b][f][p]      =  relu(Z[f][b*P + p] + bias[f])
 *   backward  cols            <- im2col(x)  (recomputed: the forward may
 *                                have run on other rows since)
 *             dZ[f][b*P + p]  =  y[b][f][p] > 0 ? dy[b][f][p] : 0
 *             db[f]           =  sum of row f of dZ
 *             dW (F, CKK)     =  dZ . cols^T                sgemm NT
 *             dcols (CKK, BP) =  W^T . dZ                   sgemm TN
 *             dx              <- col2im(dcols), summed over the windows
 *
 * y > 0 exactly when Z + bias > 0, so the mask needs no copy of Z. Every
 * loop runs in a fixed order: results are bit-identical run to run.
 */
#include "conv.h"

#include <cblas.h>
#include <limits.h>
#include <string.h>

#include "clones.h"
#include "util.h"

int conv_init(ConvLayer *L, int in_c, int in_h, int in_w, size_t sc, size_t sy, size_t sx, int out_c, int k,
              int stride, size_t off, char *err) {
    memset(L, 0, sizeof *L);
    if (in_c < 1 || in_h < 1 || in_w < 1)
        return errf(err, "conv: input %dx%dx%d (height x width x channels) must be at least 1x1x1", in_h, in_w,
                    in_c);
    if (out_c < 1 || out_c > (1 << 16)) return errf(err, "conv: %d filters, expected 1 to %d", out_c, 1 << 16);
    if (stride < 1 || stride > (1 << 16)) return errf(err, "conv: stride %d, expected 1 to %d", stride, 1 << 16);
    if (k < 1 || k > in_h || k > in_w)
        return errf(err, "conv: kernel %d does not fit the %dx%d input (expected 1 to %d)", k, in_h, in_w,
                    in_h < in_w ? in_h : in_w);
    L->in_c = in_c;
    L->in_h = in_h;
    L->in_w = in_w;
    L->out_c = out_c;
    L->k = k;
    L->stride = stride;
    L->out_h = (in_h - k) / stride + 1;
    L->out_w = (in_w - k) / stride + 1;
    L->sc = sc;
    L->sy = sy;
    L->sx = sx;
    L->in_size = (size_t)in_c * (size_t)in_h * (size_t)in_w;
    L->w_off = off;
    L->b_off = off + (size_t)out_c * (size_t)in_c * (size_t)k * (size_t)k;
    /* sgemm takes int sizes: the largest is B*P, checked per call. */
    if ((size_t)in_c * (size_t)k * (size_t)k > INT_MAX)
        return errf(err, "conv: %d channels of %dx%d kernels are too many", in_c, k, k);
    return 0;
}

size_t conv_n_params(const ConvLayer *L) {
    return (size_t)L->out_c * ((size_t)L->in_c * (size_t)L->k * (size_t)L->k + 1);
}

static size_t n_pix(const ConvLayer *L) { return (size_t)L->out_h * (size_t)L->out_w; }
static size_t n_ckk(const ConvLayer *L) { return (size_t)L->in_c * (size_t)L->k * (size_t)L->k; }

size_t conv_out_size(const ConvLayer *L) { return (size_t)L->out_c * n_pix(L); }

size_t conv_cols_size(const ConvLayer *L, int B) { return n_ckk(L) * (size_t)B * n_pix(L); }

static int checked_bp(const ConvLayer *L, int B) {
    size_t bp = (size_t)B * n_pix(L);
    if (B < 1 || bp > INT_MAX) DIE(NULL, "conv: batch of %d rows gives %zu output columns, more than %d", B, bp,
                                   INT_MAX);
    return (int)bp;
}

/* ------------------------------------------------------------ kernels */

/* cols (CKK, B*P): row (c, ky, kx), column (b, oy, ox) = x[b][c][oy s + ky][ox s + kx]. */
AGENTS_HOT
static void im2col_strided(const ConvLayer *L, const float *restrict x, int B, float *restrict cols) {
    int OH = L->out_h, OW = L->out_w, K = L->k;
    size_t xs = (size_t)L->stride * L->sx, ys = (size_t)L->stride * L->sy;
    float *restrict dst = cols;
    for (int c = 0; c < L->in_c; c++)
        for (int ky = 0; ky < K; ky++)
            for (int kx = 0; kx < K; kx++)
                for (int b = 0; b < B; b++) {
                    const float *src = x + (size_t)b * L->in_size + c * L->sc + ky * L->sy + kx * L->sx;
                    for (int oy = 0; oy < OH; oy++, src += ys) {
                        for (int ox = 0; ox < OW; ox++) dst[ox] = src[ox * xs];
                        dst += OW;
                    }
                }
}

/* The same cols when the input's cells are not adjacent along a row (the
 * first layer reads planes stored (H, W, C): cells C floats apart). Each
 * plane of each row is first gathered into a contiguous tile, so the K*K
 * window copies read runs of adjacent floats instead of a strided gather
 * per element (the strided version took 13% of a MinAtar local run). The
 * same values land in the same places: only copies. */
enum { TILE_MAX = 4096 };

/* One (c, b) tile into its K*K rows of cols; S is a constant 1 at the
 * stride-1 call (the MinAtar layer), so the window copies vectorize. */
static inline __attribute__((always_inline)) void tile_windows(const ConvLayer *L, const float *restrict tile,
                                                               float *restrict row0, size_t BP, int S) {
    int W = L->in_w, OH = L->out_h, OW = L->out_w, K = L->k;
    for (int ky = 0; ky < K; ky++)
        for (int kx = 0; kx < K; kx++) {
            float *restrict dst = row0 + (size_t)(ky * K + kx) * BP;
            for (int oy = 0; oy < OH; oy++) {
                const float *restrict t = tile + (oy * S + ky) * W + kx;
                float *restrict d = dst + oy * OW;
                int ox = 0;
                if (S == 1) /* fixed 16-byte pieces: moves, not a memmove call per row */
                    for (; ox + 4 <= OW; ox += 4) memcpy(d + ox, t + ox, 4 * sizeof(float));
                for (; ox < OW; ox++) d[ox] = t[ox * S];
            }
        }
}

/* GCC would turn the 16-byte pieces of each window row back into one
 * memmove call per row (8 floats for MinAtar: the call costs more than
 * the copy), hence no loop-distribution patterns here. */
AGENTS_HOT
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("no-tree-loop-distribute-patterns")))
#endif
static void im2col_tiled(const ConvLayer *L, const float *restrict x, int B, float *restrict cols) {
    int H = L->in_h, W = L->in_w, K = L->k;
    size_t P = n_pix(L), BP = (size_t)B * P, sy = L->sy, sx = L->sx;
    float tile[TILE_MAX];
    for (int c = 0; c < L->in_c; c++)
        for (int b = 0; b < B; b++) {
            const float *restrict src = x + (size_t)b * L->in_size + c * L->sc;
            for (int y = 0; y < H; y++)
                for (int xx = 0; xx < W; xx++) tile[y * W + xx] = src[y * sy + xx * sx];
            float *row0 = cols + (size_t)c * K * K * BP + (size_t)b * P;
            if (L->stride == 1) tile_windows(L, tile, row0, BP, 1);
            else tile_windows(L, tile, row0, BP, L->stride);
        }
}

static void im2col(const ConvLayer *L, const float *restrict x, int B, float *restrict cols) {
    if (L->sx != 1 && (size_t)L->in_h * (size_t)L->in_w <= TILE_MAX) im2col_tiled(L, x, B, cols);
    else im2col_strided(L, x, B, cols);
}

/* dx (B, in_size) = sum over the windows of dcols (CKK, B*P), in the
 * order im2col reads: zero, then add row by row. */
static void col2im(const ConvLayer *L, const float *restrict dcols, int B, float *restrict dx) {
    int OH = L->out_h, OW = L->out_w, K = L->k;
    size_t xs = (size_t)L->stride * L->sx, ys = (size_t)L->stride * L->sy;
    memset(dx, 0, (size_t)B * L->in_size * sizeof(float));
    const float *src = dcols;
    for (int c = 0; c < L->in_c; c++)
        for (int ky = 0; ky < K; ky++)
            for (int kx = 0; kx < K; kx++)
                for (int b = 0; b < B; b++) {
                    float *d = dx + (size_t)b * L->in_size + c * L->sc + ky * L->sy + kx * L->sx;
                    for (int oy = 0; oy < OH; oy++, d += ys) {
                        for (int ox = 0; ox < OW; ox++) d[ox * xs] += src[ox];
                        src += OW;
                    }
                }
}

/* y[b][f][p] = relu(z[f][b*P + p] + bias[f]). NaN passes through the ReLU. */
AGENTS_HOT
static void bias_relu_transpose(const float *restrict z, const float *restrict bias, int B, int F, size_t P,
                                float *restrict y) {
    for (int f = 0; f < F; f++) {
        float bf = bias[f];
        for (int b = 0; b < B; b++) {
            const float *zi = z + (size_t)f * B * P + (size_t)b * P;
            float *yi = y + ((size_t)b * F + f) * P;
            for (size_t p = 0; p < P; p++) {
                float v = zi[p] + bf;
                yi[p] = v < 0.0f ? 0.0f : v;
            }
        }
    }
}

/* dz[f][b*P + p] = y[b][f][p] > 0 ? dy[b][f][p] : 0, and db[f] = its row sum. */
AGENTS_HOT
static void mask_transpose(const float *restrict dy, const float *restrict y, int B, int F, size_t P,
                           float *restrict dz, float *restrict db) {
    for (int f = 0; f < F; f++) {
        float s = 0.0f;
        for (int b = 0; b < B; b++) {
            size_t src = ((size_t)b * F + f) * P;
            float *d = dz + (size_t)f * B * P + (size_t)b * P;
            for (size_t p = 0; p < P; p++) {
                float v = y[src + p] > 0.0f ? dy[src + p] : 0.0f;
                d[p] = v;
                s += v;
            }
        }
        db[f] = s;
    }
}

/* ------------------------------------------------------ forward / backward */

void conv_forward(const ConvLayer *L, const float *params, const float *x, int B, float *cols, float *z,
                  float *y) {
    int bp = checked_bp(L, B), F = L->out_c, ckk = (int)n_ckk(L);
    im2col(L, x, B, cols);
    /* Z (F, BP) = W (F, CKK) . cols (CKK, BP) */
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, F, bp, ckk, 1.0f, params + L->w_off, ckk, cols, bp, 0.0f,
                z, bp);
    bias_relu_transpose(z, params + L->b_off, B, F, n_pix(L), y);
}

void conv_backward(const ConvLayer *L, const float *params, const float *x, const float *y, const float *dy,
                   int B, float *cols, float *dz, float *grad, float *dx) {
    int bp = checked_bp(L, B), F = L->out_c, ckk = (int)n_ckk(L);
    im2col(L, x, B, cols);
    mask_transpose(dy, y, B, F, n_pix(L), dz, grad + L->b_off);
    /* dW (F, CKK) = dZ (F, BP) . cols^T (BP, CKK) */
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, F, ckk, bp, 1.0f, dz, bp, cols, bp, 0.0f, grad + L->w_off,
                ckk);
    if (!dx) return;
    /* dcols (CKK, BP) = W^T (CKK, F) . dZ (F, BP), into cols (read no more) */
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, ckk, bp, F, 1.0f, params + L->w_off, ckk, dz, bp, 0.0f,
                cols, bp);
    col2im(L, cols, B, dx);
}

/* -------------------------------------------------------- naive reference */

/* x[b][c][iy][ix] through the layer's strides. */
static float at(const ConvLayer *L, const float *x, int b, int c, int iy, int ix) {
    return x[(size_t)b * L->in_size + c * L->sc + iy * L->sy + ix * L->sx];
}

static size_t w_index(const ConvLayer *L, int f, int c, int ky, int kx) {
    return L->w_off + (((size_t)f * L->in_c + c) * L->k + ky) * L->k + kx;
}

void conv_forward_ref(const ConvLayer *L, const float *params, const float *x, int B, float *y) {
    int s = L->stride, K = L->k;
    for (int b = 0; b < B; b++)
        for (int f = 0; f < L->out_c; f++)
            for (int oy = 0; oy < L->out_h; oy++)
                for (int ox = 0; ox < L->out_w; ox++) {
                    double acc = params[L->b_off + f];
                    for (int c = 0; c < L->in_c; c++)
                        for (int ky = 0; ky < K; ky++)
                            for (int kx = 0; kx < K; kx++)
                                acc += (double)params[w_index(L, f, c, ky, kx)] *
                                       at(L, x, b, c, oy * s + ky, ox * s + kx);
                    y[(size_t)b * conv_out_size(L) + ((size_t)f * L->out_h + oy) * L->out_w + ox] =
                        (float)(acc < 0 ? 0.0 : acc);
                }
}

/* dZ of output (b, f, oy, ox), masked by the ReLU. */
static double dz_ref(const ConvLayer *L, const float *y, const float *dy, int b, int f, int oy, int ox) {
    size_t i = (size_t)b * conv_out_size(L) + ((size_t)f * L->out_h + oy) * L->out_w + ox;
    return y[i] > 0 ? dy[i] : 0.0;
}

static void weight_grad_ref(const ConvLayer *L, const float *x, const float *y, const float *dy, int B,
                            float *grad) {
    int s = L->stride, K = L->k;
    for (int f = 0; f < L->out_c; f++) {
        double sb = 0;
        for (int b = 0; b < B; b++)
            for (int oy = 0; oy < L->out_h; oy++)
                for (int ox = 0; ox < L->out_w; ox++) sb += dz_ref(L, y, dy, b, f, oy, ox);
        grad[L->b_off + f] = (float)sb;
        for (int c = 0; c < L->in_c; c++)
            for (int ky = 0; ky < K; ky++)
                for (int kx = 0; kx < K; kx++) {
                    double sw = 0;
                    for (int b = 0; b < B; b++)
                        for (int oy = 0; oy < L->out_h; oy++)
                            for (int ox = 0; ox < L->out_w; ox++)
                                sw += dz_ref(L, y, dy, b, f, oy, ox) * at(L, x, b, c, oy * s + ky, ox * s + kx);
                    grad[w_index(L, f, c, ky, kx)] = (float)sw;
                }
    }
}

/* dx[b][c][iy][ix] = sum over the (f, oy, ox, ky, kx) whose window reads it. */
static void input_grad_ref(const ConvLayer *L, const float *params, const float *y, const float *dy, int B,
                           float *dx) {
    int s = L->stride, K = L->k;
    for (int b = 0; b < B; b++)
        for (int c = 0; c < L->in_c; c++)
            for (int iy = 0; iy < L->in_h; iy++)
                for (int ix = 0; ix < L->in_w; ix++) {
                    double acc = 0;
                    for (int f = 0; f < L->out_c; f++)
                        for (int ky = 0; ky < K; ky++)
                            for (int kx = 0; kx < K; kx++) {
                                int ty = iy - ky, tx = ix - kx;
                                if (ty < 0 || tx < 0 || ty % s || tx % s || ty / s >= L->out_h ||
                                    tx / s >= L->out_w)
                                    continue;
                                acc += dz_ref(L, y, dy, b, f, ty / s, tx / s) * params[w_index(L, f, c, ky, kx)];
                            }
                    dx[(size_t)b * L->in_size + c * L->sc + iy * L->sy + ix * L->sx] = (float)acc;
                }
}

void conv_backward_ref(const ConvLayer *L, const float *params, const float *x, const float *y,
                       const float *dy, int B, float *grad, float *dx) {
    weight_grad_ref(L, x, y, dy, B, grad);
    if (dx) input_grad_ref(L, params, y, dy, B, dx);
}

/* ----------------------------------------------------------------- FLOPs */

double conv_forward_flops(const ConvLayer *L, int B) {
    return 2.0 * (double)L->out_c * (double)n_ckk(L) * (double)n_pix(L) * B;
}

double conv_backward_flops(const ConvLayer *L, int B, int with_dx) {
    return (with_dx ? 2.0 : 1.0) * conv_forward_flops(L, B);
}
