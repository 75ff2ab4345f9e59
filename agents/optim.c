/* SPDX-License-Identifier: MIT */
/* optim.c: see optim.h.
 *
 * Numerics follow PyTorch's single-tensor code paths where a PyTorch rule
 * exists: bias corrections and the step size are computed in double once
 * per step (PyTorch computes them as Python floats), then used as float.
 * Each loop is elementwise in a fixed order, so a step is bit-identical run
 * to run, whatever the slicing.
 */
#include "optim.h"

#include <math.h>
#ifdef __SSE2__
#include <xmmintrin.h>
#endif
#include <stdlib.h>
#include <string.h>

#include "clones.h"
#include "util.h"

OptimParams optim_defaults(OptimKind kind) {
    OptimParams p;
    memset(&p, 0, sizeof p);
    p.kind = kind;
    switch (kind) {
    case OPTIM_ADAM:
        p.lr = 1e-3f;
        p.beta1 = 0.9f;
        p.beta2 = 0.999f;
        p.eps = 1e-8f;
        break;
    case OPTIM_RMSPROP:
        p.lr = 2.5e-4f;
        p.alpha = 0.95f;
        p.eps = 0.01f;
        p.centered = true;
        break;
    case OPTIM_SGD:
        p.lr = 1e-2f;
        p.momentum = 0.9f;
        break;
    }
    return p;
}

int optim_check(const OptimParams *p, char *err) {
    if (!(p->lr >= 0.0f) || !isfinite(p->lr)) return errf(err, "optim: lr %g must be finite and >= 0", p->lr);
    if (p->warmup_steps > 0 && (!(p->lr_from >= 0.0f) || !isfinite(p->lr_from)))
        return errf(err, "optim: warm-up start rate %g must be finite and >= 0", p->lr_from);
    switch (p->kind) {
    case OPTIM_ADAM:
        if (!(p->beta1 >= 0.0f && p->beta1 < 1.0f)) return errf(err, "optim: beta1 %g not in [0, 1)", p->beta1);
        if (!(p->beta2 >= 0.0f && p->beta2 < 1.0f)) return errf(err, "optim: beta2 %g not in [0, 1)", p->beta2);
        if (!(p->eps > 0.0f)) return errf(err, "optim: eps %g must be > 0", p->eps);
        return 0;
    case OPTIM_RMSPROP:
        if (!(p->alpha >= 0.0f && p->alpha < 1.0f)) return errf(err, "optim: alpha %g not in [0, 1)", p->alpha);
        if (!(p->eps > 0.0f)) return errf(err, "optim: eps %g must be > 0", p->eps);
        __attribute__((fallthrough)); /* and check momentum */
    case OPTIM_SGD:
        if (!(p->momentum >= 0.0f && p->momentum < 1.0f))
            return errf(err, "optim: momentum %g not in [0, 1)", p->momentum);
        return 0;
    }
    return errf(err, "optim: unknown kind %d", (int)p->kind);
}

static size_t state_vectors(const OptimParams *p) {
    switch (p->kind) {
    case OPTIM_ADAM: return 2;
    case OPTIM_RMSPROP: return 1 + (p->centered ? 1 : 0) + (p->momentum > 0.0f ? 1 : 0);
    case OPTIM_SGD: return p->momentum > 0.0f ? 1 : 0;
    }
    return 0;
}

void optim_init(Optim *o, const OptimParams *p, size_t n) {
    char err[ERR_LEN];
    if (optim_check(p, err)) DIE(NULL, "%s", err);
    memset(o, 0, sizeof *o);
    o->p = *p;
    o->n = n;
    o->n_state = state_vectors(p) * n;
    o->state = xmalloc_for(o->n_state * sizeof(float), "optimizer state", "network.hidden");
    memset(o->state, 0, o->n_state * sizeof(float));
}

void optim_free(Optim *o) {
    free(o->state);
    memset(o, 0, sizeof *o);
}

/* The rate of update o->step (1-based): lr, or on the warm-up's ramp. */
static float lr_now(const Optim *o) {
    if (o->p.warmup_steps == 0 || o->step >= o->p.warmup_steps) return o->p.lr;
    double f = (double)o->step / (double)o->p.warmup_steps;
    return (float)((double)o->p.lr_from + ((double)o->p.lr - (double)o->p.lr_from) * f);
}

AGENTS_HOT
static void sgd_step(Optim *o, float *restrict p, const float *restrict g) {
    size_t n = o->n;
    float lr = lr_now(o), mu = o->p.momentum;
    if (mu == 0.0f) {
        for (size_t i = 0; i < n; i++) p[i] -= lr * g[i];
        return;
    }
    float *restrict buf = o->state;
    for (size_t i = 0; i < n; i++) {
        float b = mu * buf[i] + g[i];
        buf[i] = b;
        p[i] -= lr * b;
    }
}

/* Kingma & Ba's cheaper order of the same update (end of their section 2):
 *   a_t = lr sqrt(1 - beta2^t) / (1 - beta1^t),  eps_t = eps sqrt(1 - beta2^t)
 *   p -= a_t m / (sqrt(v) + eps_t)
 * equals PyTorch's lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)
 * exactly in real arithmetic and saves one division per parameter (float
 * results differ from PyTorch's order in the last bits). */
AGENTS_HOT
static void adam_step(Optim *o, float *restrict p, const float *restrict g) {
    size_t n = o->n;
    float *restrict m = o->state, *restrict v = o->state + n;
    double t = (double)o->step;
    double bc1 = 1.0 - pow((double)o->p.beta1, t), bc2_sqrt = sqrt(1.0 - pow((double)o->p.beta2, t));
    float b1 = o->p.beta1, b2 = o->p.beta2;
    float c1 = (float)(1.0 - (double)b1), c2 = (float)(1.0 - (double)b2);
    float a_t = (float)((double)lr_now(o) * bc2_sqrt / bc1), eps_t = (float)((double)o->p.eps * bc2_sqrt);
    for (size_t i = 0; i < n; i++) {
        float gi = g[i];
        float mi = m[i] * b1 + gi * c1;
        float vi = v[i] * b2 + c2 * (gi * gi);
        m[i] = mi;
        v[i] = vi;
        p[i] -= a_t * (mi / (sqrtf(vi) + eps_t));
    }
}

/* One RMSprop step over [0, n). The flags are constants at each call below,
 * so every form compiles to its own branch-free loop that the compiler
 * vectorizes (one loop testing the flags per element stayed scalar: 41% of
 * a MinAtar local run's time went here). */
typedef struct {
    float a, c, eps, lr, mu;
    float *ms, *mg, *buf;  /* mg: centered only; buf: momentum only */
} RmsArgs;

static inline __attribute__((always_inline)) void rms_loop(const RmsArgs *r, float *restrict p,
                                                          const float *restrict g, size_t n,
                                                          bool centered, bool outside, bool momentum) {
    float a = r->a, c = r->c, eps = r->eps, lr = r->lr, mu = r->mu;
    float *restrict ms = r->ms;
    float *restrict mg = r->mg;
    float *restrict buf = r->buf;
    for (size_t i = 0; i < n; i++) {
        float gi = g[i];
        float si = a * ms[i] + c * (gi * gi);
        ms[i] = si;
        float var = si;
        if (centered) {
            float mgi = a * mg[i] + c * gi;
            mg[i] = mgi;
            var = si - mgi * mgi;
        }
        float d = gi / (outside ? sqrtf(var > 0.0f ? var : 0.0f) + eps : sqrtf(var + eps));
        if (momentum) {
            d = mu * buf[i] + d;
            buf[i] = d;
        }
        p[i] -= lr * d;
    }
}

AGENTS_HOT
static void rms_centered_outside(const RmsArgs *r, float *restrict p, const float *restrict g, size_t n) {
    rms_loop(r, p, g, n, true, true, false);
}
AGENTS_HOT
static void rms_centered_inside(const RmsArgs *r, float *restrict p, const float *restrict g, size_t n) {
    rms_loop(r, p, g, n, true, false, false);
}
AGENTS_HOT
static void rms_plain_outside(const RmsArgs *r, float *restrict p, const float *restrict g, size_t n) {
    rms_loop(r, p, g, n, false, true, false);
}
AGENTS_HOT
static void rms_plain_inside(const RmsArgs *r, float *restrict p, const float *restrict g, size_t n) {
    rms_loop(r, p, g, n, false, false, false);
}

static void rmsprop_step(Optim *o, float *p, const float *g) {
    size_t n = o->n;
    bool mom = o->p.momentum > 0.0f;
    RmsArgs r = {o->p.alpha, (float)(1.0 - (double)o->p.alpha), o->p.eps, lr_now(o), o->p.momentum, o->state,
                 o->p.centered ? o->state + n : NULL, mom ? o->state + (o->p.centered ? 2 : 1) * n : NULL};
    if (mom) /* one loop testing the options per element (scalar): the published configs use none */
        rms_loop(&r, p, g, n, o->p.centered, o->p.eps_outside, true);
    else if (o->p.centered) (o->p.eps_outside ? rms_centered_outside : rms_centered_inside)(&r, p, g, n);
    else (o->p.eps_outside ? rms_plain_outside : rms_plain_inside)(&r, p, g, n);
}

/* Denormal floats (below 1.2e-38) are flushed to zero during a step (x86's
 * FTZ and DAZ bits, restored after). The squared-gradient averages of
 * parameters whose gradient stays 0 (a conv filter that never fires on
 * sparse planes, say) decay by alpha each step into the denormal range,
 * where each operation costs tens of cycles: a MinAtar local run spent 41%
 * of its time in RMSprop before this. The step changes by at most lr *
 * 1.2e-38 / eps per parameter. */
void optim_step(Optim *o, float *params, const float *grad) {
    o->step++;
#ifdef __SSE2__
    unsigned csr = _mm_getcsr();
    _mm_setcsr(csr | 0x8040u); /* FTZ (bit 15) | DAZ (bit 6) */
#endif
    switch (o->p.kind) {
    case OPTIM_SGD: sgd_step(o, params, grad); break;
    case OPTIM_ADAM: adam_step(o, params, grad); break;
    case OPTIM_RMSPROP: rmsprop_step(o, params, grad); break;
    }
#ifdef __SSE2__
    _mm_setcsr(csr);
#endif
}

/* Eight partial sums in a fixed order: deterministic, and independent adds
 * so the loop is not one long dependency chain of double additions. */
AGENTS_HOT
double optim_sumsq(const float *x, size_t n) {
    double acc[8] = {0};
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int k = 0; k < 8; k++) acc[k] += (double)x[i + k] * (double)x[i + k];
    for (int k = 0; i < n; i++, k++) acc[k] += (double)x[i] * (double)x[i];
    return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

double optim_norm(const float *x, size_t n) { return sqrt(optim_sumsq(x, n)); }

AGENTS_HOT
void optim_scale(float *x, size_t n, float s) {
    for (size_t i = 0; i < n; i++) x[i] *= s;
}

double optim_clip_norm(float *g, size_t n, double max_norm) {
    double norm = optim_norm(g, n);
    if (max_norm > 0) {
        double c = max_norm / (norm + 1e-6);
        if (c < 1.0) optim_scale(g, n, (float)c);
    }
    return norm;
}
