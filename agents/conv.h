/* SPDX-License-Identifier: MIT */
/* conv.h: one 2-D convolution layer of the Q-network, as math on the flat
 * parameter array: square kernels, valid padding, a bias per filter, ReLU.
 *
 * Layout as PyTorch's nn.Conv2d: the weights are (out, in, kh, kw) at w_off,
 * then the bias (out) at b_off. An input sample is a (C, H, W) volume read
 * through strides, so the first layer reads observation planes stored
 * (H, W, C) as they are (dqn.py's permute to (C, H, W), done by the
 * strides), and a layer's output is (F, OH, OW) per sample, which is also
 * PyTorch's flatten order into the first dense layer.
 *
 * Forward over a batch by im2col: cols (C*K*K, B*P), P = OH*OW, row
 * (c, ky, kx) and column (b, oy, ox) holding x[b][c][oy*s + ky][ox*s + kx];
 * then Z (F, B*P) = W (F, C*K*K) . cols by one sgemm, and
 * y[b][f][p] = relu(Z[f][b*P + p] + bias[f]). Backward recomputes cols
 * from the input (the forward may have run on other rows since) and takes
 * dZ (F, B*P) = dy masked by y > 0; dW = dZ . cols^T, db = row sums of dZ,
 * and, when the input gradient is wanted, dcols = W^T . dZ scattered back
 * by col2im.
 *
 * Shape letters: B batch, C input channels, H W input height and width, F
 * filters, K kernel, s stride, OH = (H - K)/s + 1, OW likewise, P = OH*OW.
 */
#ifndef GORILA_CONV_H
#define GORILA_CONV_H

#include <stddef.h>

typedef struct {
    int in_c, in_h, in_w;       /* C, H, W */
    int out_c, k, stride;       /* F, K, s */
    int out_h, out_w;           /* OH, OW */
    size_t sc, sy, sx;          /* strides of c, y, x in an input sample (floats) */
    size_t in_size;             /* floats per input sample (C*H*W) */
    size_t w_off, b_off;        /* weights (F, C, K, K) and bias (F) in the parameters */
} ConvLayer;

/* Fill L for an input of in_c x in_h x in_w read with strides (sc, sy, sx)
 * and out_c filters of k x k at stride; the parameters start at off.
 * Returns 0, or -1 with a message in err (ERR_LEN bytes) when the kernel
 * does not fit the input or a size is out of range. */
int conv_init(ConvLayer *L, int in_c, int in_h, int in_w, size_t sc, size_t sy, size_t sx, int out_c, int k,
              int stride, size_t off, char *err);

/* Floats of the layer's parameters (weights and bias), of one output
 * sample (F*P), and of the cols scratch for B samples (C*K*K * B*P). */
size_t conv_n_params(const ConvLayer *L);
size_t conv_out_size(const ConvLayer *L);
size_t conv_cols_size(const ConvLayer *L, int B);

/* y (B, F*P) = relu(conv(x) + bias) for B samples, x sample i at
 * x + i*L->in_size (its elements through the layer's strides).
 * cols: conv_cols_size floats of scratch; z: F*B*P floats of scratch. */
void conv_forward(const ConvLayer *L, const float *params, const float *x, int B, float *cols, float *z,
                  float *y);

/* Given dy = dL/dy (B, F*P) and y the forward's output on the same x and
 * params, write the layer's gradient into grad (weights and bias at the
 * layer's offsets, not accumulated) and, when dx is not NULL, dx = dL/dx
 * (B, in_size, in the input's layout: every element written, zero where no
 * window reads it). dy is only read: the ReLU mask goes into dz. cols and
 * dz as in conv_forward (dz: F*B*P floats); cols also holds dcols. */
void conv_backward(const ConvLayer *L, const float *params, const float *x, const float *y, const float *dy,
                   int B, float *cols, float *dz, float *grad, float *dx);

/* Naive references (direct loops, double accumulation), for tests. */
void conv_forward_ref(const ConvLayer *L, const float *params, const float *x, int B, float *y);
void conv_backward_ref(const ConvLayer *L, const float *params, const float *x, const float *y,
                       const float *dy, int B, float *grad, float *dx);

/* FLOPs of a forward over B samples (multiply and add counted apart), and
 * of a backward (weight gradient, plus the input gradient when with_dx). */
double conv_forward_flops(const ConvLayer *L, int B);
double conv_backward_flops(const ConvLayer *L, int B, int with_dx);

#endif
