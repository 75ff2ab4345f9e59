/* SPDX-License-Identifier: MIT */
/* dqn.c: see dqn.h.
 *
 * One call, in order (all buffers in d, sized at init):
 *   1. qt = Q_target(next_obs)                   (B rows, on d->work)
 *   2. q2 = Q_online([obs; next_obs])            (2B rows, one forward; it
 *      overwrites the target activations, which are no longer needed, and
 *      leaves the obs rows first for the backward)
 *   3. a*, y, td, loss and dq (one non-zero per row)
 *   4. backward over the first B rows.
 */
#include "dqn.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

void dqn_init(Dqn *d, const QNet *net, int max_batch) {
    memset(d, 0, sizeof *d);
    if (max_batch < 1) DIE(NULL, "dqn_init: max_batch %d < 1", max_batch);
    size_t B = (size_t)max_batch, O = (size_t)net->spec.obs_dim, A = (size_t)net->spec.n_actions;
    qnet_work_init(&d->work, net, 2 * max_batch);
    size_t nx = round_up(2 * B * O, 16), nq2 = round_up(2 * B * A, 16), nq = round_up(B * A, 16),
           nb = round_up(B, 16);
    size_t total = nx + nq2 + 2 * nq + 2 * nb + nb; /* the last nb: a_next (int32) */
    d->mem = xmalloc_for(total * sizeof(float), "learning workspace", "replay.batch_size");
    memset(d->mem, 0, total * sizeof(float));
    float *p = d->mem;
    d->x2 = p, p += nx;
    d->q2 = p, p += nq2;
    d->qt = p, p += nq;
    d->dq = p, p += nq;
    d->y = p, p += nb;
    d->td = p, p += nb;
    d->a_next = (int32_t *)p;
    d->max_batch = max_batch;
}

void dqn_free(Dqn *d) {
    qnet_work_free(&d->work);
    free(d->mem);
    memset(d, 0, sizeof *d);
}

int dqn_check(const DqnParams *p, char *err) {
    if (!(p->huber_delta > 0.0f)) return errf(err, "dqn: huber_delta %g must be > 0", p->huber_delta);
    return 0;
}

float dqn_huber(float x, float delta) {
    float ax = fabsf(x);
    return ax <= delta ? 0.5f * x * x : delta * (ax - 0.5f * delta);
}

float dqn_huber_grad(float x, float delta) { return x > delta ? delta : x < -delta ? -delta : x; }

static void check_batch(const Dqn *d, const QNet *net, const Batch *b) {
    if (b->n < 1 || b->n > d->max_batch)
        DIE(NULL, "dqn_loss_grad: batch of %d rows, expected 1 to %d", b->n, d->max_batch);
    if (b->obs_dim != net->spec.obs_dim)
        DIE(NULL, "dqn_loss_grad: batch obs_dim %d, network expects %d", b->obs_dim, net->spec.obs_dim);
    for (int i = 0; i < b->n; i++)
        if (b->action[i] < 0 || b->action[i] >= net->spec.n_actions)
            DIE(NULL, "dqn_loss_grad: row %d has action %d, expected 0 to %d", i, (int)b->action[i],
                net->spec.n_actions - 1);
}

double dqn_loss_grad(Dqn *d, const QNet *net, const DqnParams *p, const float *online, const float *target,
                     const Batch *b, float *grad, float *td_abs) {
    check_batch(d, net, b);
    int B = b->n, A = net->spec.n_actions;
    size_t BO = (size_t)B * (size_t)b->obs_dim, BA = (size_t)B * (size_t)A;

    qnet_forward(net, target, b->next_obs, B, d->qt, &d->work);
    const float *qnext; /* the Q-values that choose a* */
    if (p->double_dqn) {
        memcpy(d->x2, b->obs, BO * sizeof(float));
        memcpy(d->x2 + BO, b->next_obs, BO * sizeof(float));
        qnet_forward(net, online, d->x2, 2 * B, d->q2, &d->work);
        qnext = d->q2 + BA;
    } else {
        qnet_forward(net, online, b->obs, B, d->q2, &d->work);
        qnext = d->qt;
    }
    qnet_argmax(qnext, B, A, d->a_next);

    float delta = p->huber_delta, inv_b = 1.0f / (float)B;
    double loss = 0.0;
    memset(d->dq, 0, BA * sizeof(float));
    for (int i = 0; i < B; i++) {
        float disc = b->discount[i];
        float y = disc == 0.0f ? b->reward[i] : b->reward[i] + disc * d->qt[(size_t)i * A + d->a_next[i]];
        size_t k = (size_t)i * A + (size_t)b->action[i];
        float td = d->q2[k] - y;
        d->y[i] = y;
        d->td[i] = td;
        if (td_abs) td_abs[i] = fabsf(td);
        loss += (double)b->weight[i] * (double)dqn_huber(td, delta);
        d->dq[k] = b->weight[i] * dqn_huber_grad(td, delta) * inv_b;
    }
    qnet_backward(net, online, b->obs, d->dq, B, grad, &d->work);
    return loss / B;
}

void dqn_target_hard(float *target, const float *online, size_t n) {
    if (n) memmove(target, online, n * sizeof(float));
}

void dqn_target_soft(float *target, const float *online, size_t n, float tau) {
    float keep = (float)(1.0 - (double)tau);
    for (size_t i = 0; i < n; i++) target[i] = keep * target[i] + tau * online[i];
}
