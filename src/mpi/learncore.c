/* SPDX-License-Identifier: MIT */
/* learncore.c: what the learner's sync families share (learnerint.h): the
 * message loop, and the learner's own copy of the network.
 *
 * The message loop. A learner waits in three places: for a batch
 * (learner_run), for PARAMS (the PS path, easgd) and inside the ring
 * (allreduce, local_sgd, gossip). In each it keeps answering its main
 * communicator through learncore_handle: batches keep arriving, and
 * learner 0, as the parameter source of the ring families, serves the
 * actors' and the coordinator's parameter requests.
 *
 * The own copy. In every family but the PS path the learner holds the
 * whole network as a PShard (pshard.h) and applies steps to it itself:
 * allreduce's averaged gradient, local_sgd's, gossip's and easgd's own
 * gradients, and the local mode's (a PS mode without parameter servers).
 * The copy that serves answers PARAM_REQ and CKPT_REQ with the same code a
 * parameter-server shard runs; one of the decentralized modes' copies
 * answers CKPT_REQ with its learner-<k>.ckpt.
 */
#include "learnerint.h"
#include "clock.h"

#include <math.h>

void learncore_handle(Learner *l, const Msg *m) {
    switch (m->tag) {
    case TAG_SAMPLE: learnbatch_on_sample(l, m); break;
    case TAG_PARAMS:
        if (l->via->on_params) l->via->on_params(l, m);
        else role_params_source(&l->rb, m, false); /* dies: no pull is ever in flight */
        break;
    case TAG_PARAM_REQ:
        if (!l->own || !l->own->serves)
            DIE(l->rb.ctx, "PARAM_REQ from rank %d, but this learner serves no parameters", m->source);
        pshard_on_param_req(l->own, m);
        break;
    case TAG_CKPT_REQ:
        if (!l->own || (!l->own->serves && l->own->copy < 0))
            DIE(l->rb.ctx, "CKPT_REQ from rank %d, but this learner holds no checkpointed state", m->source);
        /* A final one is written when the learners have left the ring for good. */
        pshard_on_ckpt_req(l->own, m, true);
        break;
    case TAG_STOP: l->stop = true; break;
    default: DIE(l->rb.ctx, "unexpected %s message from rank %d", proto_tag_name(m->tag), m->source);
    }
}

bool learncore_service(void *arg) {
    Learner *l = arg;
    Msg m;
    if (!comm_poll(&l->rb.comm, &m)) return false;
    learncore_handle(l, &m);
    return true;
}

void learncore_init_own(Learner *l, PShard *sh) {
    int first = layout_first_copy(l->rb.cfg), me = l->rb.ctx->index;
    if (first >= 0 && me >= first) pshard_init_copy(sh, &l->rb, l->args, me);
    else pshard_init(sh, &l->rb, l->args, 0, 0, l->n, me == 0);
    l->own = sh;
    l->params = sh->params;
    l->target = sh->target;
}

/* The step, then the finite check (a finite step can overflow the
 * parameters) and the report a version mark may owe. */
void learncore_apply_own(Learner *l) {
    PShard *sh = l->own;
    double t1 = now_seconds();
    pshard_apply(sh, l->grad);
    double t2 = now_seconds();
    trace_span(&l->rb.trace, TR_APPLY, t1, t2, (uint32_t)sh->version);
    l->rb.m.compute_seconds += t2 - t1;
    if (!floats_finite(sh->params, l->n)) learner_diverged(l, "the parameters are not finite after the step");
    pshard_report_if_due(sh);
}

void learncore_finish_own(Learner *l) {
    pshard_write_held(l->own);
    role_shutdown(&l->rb, l->own->bufs, l->own->n_bufs);
}

void learncore_consensus(Learner *l, double d) {
    l->rb.m.consensus = d;
    l->rb.m.consensus_version = l->own->version ? l->own->version : 1;
}

double learncore_distance(const float *a, const float *b, size_t n) {
    double sq = 0;
    for (size_t i = 0; i < n; i++) sq += ((double)a[i] - b[i]) * ((double)a[i] - b[i]);
    return sqrt(sq);
}
