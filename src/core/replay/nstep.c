/* SPDX-License-Identifier: MIT */
/* nstep.c: see nstep.h.
 *
 * The pending steps live in a ring of n rows. A push first appends its step
 * (count <= n afterwards), then:
 *
 *   episode goes on, count == n:  emit the oldest with all n rewards, pop it
 *   episode ends:                 emit all count steps, oldest first, clear
 *
 * The end is checked first: when the n-th step of the oldest transition is
 * the ending one, its discount must be 0 (termination) or g^n (truncation,
 * the same as a running transition), never the running g^n by accident.
 *
 * Only the newest next_obs is ever needed: every transition emitted by a
 * push ends at the step just pushed.
 */
#include "nstep.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

void nstep_init(NStep *ns, int n, double gamma, int obs_dim) {
    assert(n >= 1 && n <= NSTEP_MAX);
    assert(gamma >= 0.0 && gamma <= 1.0);
    assert(obs_dim >= 1);
    memset(ns, 0, sizeof *ns);
    size_t N = (size_t)n, O = (size_t)obs_dim;
    size_t pow_bytes = round_up((N + 1) * sizeof(double), 64);
    size_t obs_bytes = round_up(N * O * sizeof(float), 64);
    size_t col_bytes = round_up(N * sizeof(float), 64);
    char *p = xmalloc_aligned(pow_bytes + obs_bytes + 2 * col_bytes);
    ns->block = p;
    ns->gpow = (double *)p;
    p += pow_bytes;
    ns->obs = (float *)p;
    p += obs_bytes;
    ns->action = (int32_t *)p;
    p += col_bytes;
    ns->reward = (float *)p;
    ns->n = n;
    ns->obs_dim = obs_dim;
    ns->gamma = gamma;
    ns->gpow[0] = 1.0;
    for (int k = 1; k <= n; k++) ns->gpow[k] = ns->gpow[k - 1] * gamma;
}

void nstep_free(NStep *ns) {
    free(ns->block);
    memset(ns, 0, sizeof *ns);
}

/* Ring index of the i-th pending step (0 = oldest). */
static int slot(const NStep *ns, int i) { return (ns->start + i) % ns->n; }

/* Write row `row` of out: pending step i with return G (rounded to float
 * here, once) and the given discount. */
static void emit(const NStep *ns, int i, double G, float discount, const float *next_obs, Batch *out, int row) {
    size_t O = (size_t)ns->obs_dim, r = (size_t)row, s = (size_t)slot(ns, i);
    memcpy(out->obs + r * O, ns->obs + s * O, O * sizeof(float));
    memcpy(out->next_obs + r * O, next_obs, O * sizeof(float));
    out->action[r] = ns->action[s];
    out->reward[r] = (float)G;
    out->discount[r] = discount;
}

int nstep_push(NStep *ns, const float *obs, int32_t action, float reward, const float *next_obs, bool terminated,
               bool truncated, Batch *out) {
    assert(out->obs_dim == ns->obs_dim && out->n >= 0);
    assert(ns->count < ns->n);
    size_t O = (size_t)ns->obs_dim, s = (size_t)slot(ns, ns->count);
    memcpy(ns->obs + s * O, obs, O * sizeof(float));
    ns->action[s] = action;
    ns->reward[s] = reward;
    ns->count++;
    int emitted = 0;

    if (terminated || truncated) {
        /* One backward pass gives every pending step its return: after
         * folding in step i, G is the Horner sum from i to the end. The
         * rows are written oldest first, so fill them from the back. */
        int k = ns->count;
        double G = 0.0;
        for (int i = k - 1; i >= 0; i--) {
            G = (double)ns->reward[slot(ns, i)] + ns->gamma * G;
            float discount = terminated ? 0.0f : (float)ns->gpow[k - i];
            emit(ns, i, G, discount, next_obs, out, out->n + i);
        }
        out->n += k;
        emitted = k;
        ns->count = 0;
        ns->start = 0;
    } else if (ns->count == ns->n) {
        double G = 0.0;
        for (int i = ns->n - 1; i >= 0; i--) G = (double)ns->reward[slot(ns, i)] + ns->gamma * G;
        emit(ns, 0, G, (float)ns->gpow[ns->n], next_obs, out, out->n);
        out->n++;
        emitted = 1;
        ns->start = slot(ns, 1);
        ns->count--;
    }
    return emitted;
}

int nstep_clear(NStep *ns) {
    int dropped = ns->count;
    ns->count = 0;
    ns->start = 0;
    return dropped;
}
