/* prioinit.c: see prioinit.h. */
#include "prioinit.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

void prioinit_init(PrioInit *pi, const QNet *net, int max_rows) {
    assert(max_rows >= 1);
    memset(pi, 0, sizeof *pi);
    size_t R = (size_t)max_rows, O = (size_t)net->spec.obs_dim, A = (size_t)net->spec.n_actions;
    pi->max_rows = max_rows;
    qnet_work_init(&pi->work, net, 2 * max_rows);
    pi->mem = xmalloc_aligned(2 * R * (O + A) * sizeof(float));
    pi->x2 = pi->mem;
    pi->q2 = pi->mem + 2 * R * O;
}

void prioinit_free(PrioInit *pi) {
    qnet_work_free(&pi->work);
    free(pi->mem);
    memset(pi, 0, sizeof *pi);
}

void prio_actor_td(PrioInit *pi, const QNet *net, const float *params, const Batch *rows, float *td_abs) {
    int B = rows->n, A = net->spec.n_actions;
    assert(B >= 0 && B <= pi->max_rows && rows->obs_dim == net->spec.obs_dim);
    if (B == 0) return;
    size_t O = (size_t)rows->obs_dim, nb = (size_t)B;
    memcpy(pi->x2, rows->obs, nb * O * sizeof(float));
    memcpy(pi->x2 + nb * O, rows->next_obs, nb * O * sizeof(float));
    qnet_forward(net, params, pi->x2, 2 * B, pi->q2, &pi->work);
    for (size_t i = 0; i < nb; i++) {
        int32_t a = rows->action[i];
        assert(a >= 0 && a < A);
        const float *q = pi->q2 + i * (size_t)A, *qn = pi->q2 + (nb + i) * (size_t)A;
        float target = rows->reward[i];
        if (rows->discount[i] != 0.0f) {
            float m = qn[0];
            for (int k = 1; k < A; k++) m = qn[k] > m || isnan(qn[k]) ? qn[k] : m; /* NaN wins: it must show */
            target += rows->discount[i] * m;
        }
        td_abs[i] = fabsf(target - q[a]);
    }
}
