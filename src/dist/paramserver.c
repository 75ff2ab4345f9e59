/* paramserver.c: the parameter-server role. Shard p of P owns the slice
 * [off, off + len) = shard_range(n_params, P, p) of the flat parameters,
 * the same slice of the target network, and the optimizer state of that
 * slice. Modes (sync.mode):
 *
 *   ps_sync     a round collects one gradient from every learner, all
 *               computed on the current version; their mean is applied
 *               once; the new slice goes back to every learner (PARAMS).
 *   ps_async    every gradient is applied as it arrives (Hogwild-style
 *               on the shard; versions count applied gradients).
 *   ps_bounded  as async, but a gradient computed on a version more than
 *               sync.staleness versions old is dropped (Gorila's rule);
 *               every drop is counted and reported.
 *
 * The staleness (current version - gradient's version) of every gradient
 * is counted in a histogram in all modes. The target slice follows
 * agentcfg_target_update after every optimizer step; its own version changes
 * only when it changes, so PARAMS carry it only to requesters whose copy
 * is out of date.
 *
 * Checkpoints: on CKPT_REQ the shard writes <dir>/ps-<p>.ckpt (slice,
 * target slice, optimizer state, version) and answers CKPT_DONE. A final
 * request (MSG_FINAL) waits until every learner's STOPPED marker has come
 * in, so that the last gradient of every learner is in the saved state.
 */
#include "agentcfg.h"
#include "params.h"
#include "role.h"
#include "runckpt.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    RoleBase rb;
    const JobArgs *args;
    size_t off, len;
    float *params, *target, *sum;
    Optim opt;
    uint64_t version, target_version;
    int L, first_learner;
    bool *got;            /* (L) sync: gradient of this round received */
    bool *want;           /* (L) sync: learner asked for PARAMS */
    uint64_t *tver;       /* (L) target version each learner holds */
    int n_got, learners_stopped;
    SendBuf *reply;       /* (job size) PARAMS replies, set up on first use */
    /* a final checkpoint request waiting for the learners' markers */
    bool final_pending;
    uint64_t final_id;
    char final_dir[4097];
} PS;

static SendBuf *reply_buf(PS *s, int rank) {
    SendBuf *b = &s->reply[rank];
    if (!b->buf) sendbuf_init(b, 2 * s->len * sizeof(float));
    comm_wait_send(&s->rb.comm, b);
    return b;
}

static void send_params(PS *s, int rank, bool with_target) {
    SendBuf *b = reply_buf(s, rank);
    float *p = sendbuf_payload(b);
    memcpy(p, s->params, s->len * sizeof(float));
    if (with_target) memcpy(p + s->len, s->target, s->len * sizeof(float));
    MsgHeader h = {0};
    h.count = s->len;
    h.version = s->version;
    h.aux = s->off;
    h.aux2 = s->target_version;
    h.flags = with_target ? MSG_HAS_TARGET : 0;
    comm_send(&s->rb.comm, b, rank, TAG_PARAMS, h, s->len * sizeof(float) * (with_target ? 2 : 1));
}

static void apply(PS *s, const float *grad) {
    const Config *cfg = s->rb.cfg;
    double t0 = now_seconds();
    optim_step(&s->opt, s->params, grad);
    s->version++;
    if (agentcfg_target_update(cfg, s->version, s->target, s->params, s->len)) s->target_version++;
    s->rb.m.apply_seconds += now_seconds() - t0;
    s->rb.m.updates++;
    s->rb.m.params_version = s->version;
    if (s->rb.ctx->index == 0) {
        /* Tell the coordinator at once when an evaluation or checkpoint is due. */
        uint64_t ev = cfg->eval.every_updates, ck = cfg->checkpoint.every_updates, mu = cfg->run.max_updates;
        if ((ev && s->version % ev == 0) || (ck && s->version % ck == 0) || (mu && s->version == mu))
            role_report(&s->rb, true);
    }
}

static void on_grad(PS *s, const Msg *m) {
    int l = m->source - s->first_learner;
    if (l < 0 || l >= s->L) DIE(s->rb.ctx, "GRAD from rank %d, which is not a learner", m->source);
    if (m->h.count != s->len)
        DIE(s->rb.ctx, "GRAD from rank %d has %llu floats, this shard holds %zu", m->source,
            (unsigned long long)m->h.count, s->len);
    if (m->h.version > s->version)
        DIE(s->rb.ctx, "GRAD from rank %d claims version %llu, newer than this shard's %llu", m->source,
            (unsigned long long)m->h.version, (unsigned long long)s->version);
    uint64_t stale = s->version - m->h.version;
    s->rb.m.staleness[stale < PROTO_STALENESS_BINS ? stale : PROTO_STALENESS_BINS - 1]++;
    s->tver[l] = m->h.aux2;
    bool want = (m->h.flags & MSG_WANT_PARAMS) != 0;
    const float *g = m->payload;
    const Config *cfg = s->rb.cfg;
    if (cfg->sync.mode == SYNC_PS_SYNC) {
        if (stale != 0 || s->got[l])
            DIE(s->rb.ctx, "ps_sync: learner rank %d sent a gradient for version %llu in round %llu", m->source,
                (unsigned long long)m->h.version, (unsigned long long)s->version);
        if (s->n_got == 0) memcpy(s->sum, g, s->len * sizeof(float));
        else
            for (size_t i = 0; i < s->len; i++) s->sum[i] += g[i];
        s->got[l] = true;
        s->want[l] = want;
        if (++s->n_got < s->L) return;
        if (s->L > 1) optim_scale(s->sum, s->len, 1.0f / (float)s->L);
        apply(s, s->sum);
        s->n_got = 0;
        for (int k = 0; k < s->L; k++) {
            s->got[k] = false;
            if (s->want[k]) send_params(s, s->first_learner + k, s->tver[k] != s->target_version);
        }
        return;
    }
    if (cfg->sync.mode == SYNC_PS_BOUNDED && stale > (uint64_t)cfg->sync.staleness) s->rb.m.drops++;
    else apply(s, g);
    if (want) send_params(s, m->source, s->tver[l] != s->target_version);
}

/* CKPT_REQ comes only from the coordinator, which gets the answer. */
static void write_ckpt(PS *s, uint64_t id, const char *dir) {
    char err[ERR_LEN];
    RunCkptShard sh = {
        .index = s->rb.ctx->index,
        .off = s->off,
        .len = s->len,
        .params = s->params,
        .target = s->target,
        .opt = &s->opt,
        .version = s->version,
        .target_version = s->target_version,
    };
    int rc = runckpt_write_shard(s->rb.cfg, &s->rb.net, dir, &sh, err);
    role_ckpt_done(&s->rb, id, s->version, rc, err);
}

static void on_ckpt_req(PS *s, const Msg *m) {
    char dir[4097];
    memcpy(dir, m->payload, m->bytes);
    dir[m->bytes] = '\0';
    if ((m->h.flags & MSG_FINAL) && s->learners_stopped < s->L) {
        s->final_pending = true;
        s->final_id = m->h.version;
        memcpy(s->final_dir, dir, m->bytes + 1);
        return;
    }
    write_ckpt(s, m->h.version, dir);
}

int ps_run(const Ctx *ctx, const JobArgs *args) {
    PS *s = xcalloc(1, sizeof *s);
    role_init(&s->rb, ctx, args);
    s->args = args;
    const Config *cfg = args->cfg;
    size_t n = s->rb.net.n_params;
    shard_range(n, args->lay->count[ROLE_PS], ctx->index, &s->off, &s->len);
    s->params = xmalloc_aligned((s->len ? s->len : 1) * sizeof(float));
    s->target = xmalloc_aligned((s->len ? s->len : 1) * sizeof(float));
    s->sum = xmalloc_aligned((s->len ? s->len : 1) * sizeof(float));
    OptimParams op;
    agentcfg_optim_params(cfg, &op);
    optim_init(&s->opt, &op, s->len);
    if (args->start.resumed) {
        char err[ERR_LEN];
        RunCkptShard sh = {.index = ctx->index, .off = s->off, .len = s->len, .params = s->params,
                        .target = s->target, .opt = &s->opt};
        if (runckpt_read_slice(cfg, &s->rb.net, args->start.ckpt_dir, &sh, err) != 0) DIE(ctx, "%s", err);
        s->version = sh.version;
        s->target_version = sh.target_version;
    } else {
        /* Every shard draws the whole initialisation and keeps its slice, so
         * the network starts exactly as in a local run of the same seed. */
        float *full = xmalloc_aligned(n * sizeof(float));
        Rng init_rng;
        rng_seed(&init_rng, cfg->run.seed, RNG_STREAM_INIT);
        qnet_init_params(&s->rb.net, full, &init_rng);
        memcpy(s->params, full + s->off, s->len * sizeof(float));
        memcpy(s->target, s->params, s->len * sizeof(float));
        free(full);
    }
    s->rb.m.params_version = s->version;
    s->L = args->lay->count[ROLE_LEARNER];
    s->first_learner = layout_rank_of(args->lay, ROLE_LEARNER, 0);
    s->got = xcalloc((size_t)s->L, sizeof(bool));
    s->want = xcalloc((size_t)s->L, sizeof(bool));
    s->tver = xcalloc((size_t)s->L, sizeof(uint64_t));
    s->reply = xcalloc((size_t)args->lay->size, sizeof *s->reply);
    log_info(ctx, "shard [%zu, %zu) of %zu parameters, mode %s, version %llu", s->off, s->off + s->len, n,
             config_sync_name(cfg->sync.mode), (unsigned long long)s->version);
    bool stop = false;
    while (!stop) {
        Msg m;
        bool worked = false;
        while (!stop && comm_poll(&s->rb.comm, &m)) {
            worked = true;
            switch (m.tag) {
            case TAG_GRAD: on_grad(s, &m); break;
            case TAG_PARAM_REQ: {
                int l = m.source - s->first_learner;
                bool want_t = !(m.h.flags & MSG_NO_TARGET) && m.h.aux2 != s->target_version;
                if (l >= 0 && l < s->L) s->tver[l] = m.h.aux2;
                send_params(s, m.source, want_t);
                break;
            }
            case TAG_CKPT_REQ: on_ckpt_req(s, &m); break;
            case TAG_STOPPED: /* a learner's last-gradient marker */
                s->learners_stopped++;
                if (s->final_pending && s->learners_stopped == s->L) {
                    s->final_pending = false;
                    write_ckpt(s, s->final_id, s->final_dir);
                }
                break;
            case TAG_STOP: stop = true; break;
            default: DIE(ctx, "unexpected %s message from rank %d", proto_tag_name(m.tag), m.source);
            }
        }
        if (stop) break;
        role_report(&s->rb, false);
        if (worked) comm_busy(&s->rb.comm);
        else comm_idle(&s->rb.comm);
    }
    if (s->n_got > 0)
        log_info(ctx, "ps_sync: the unfinished round's %d gradient(s) were not applied (the job stopped mid-round)",
                 s->n_got);
    int size = args->lay->size, k = 0;
    SendBuf **bufs = xcalloc((size_t)size, sizeof *bufs);
    for (int i = 0; i < size; i++)
        if (s->reply[i].buf) bufs[k++] = &s->reply[i];
    role_shutdown(&s->rb, bufs, k);
    for (int i = 0; i < k; i++) sendbuf_free(bufs[i]);
    free(bufs);
    free(s->reply);
    free(s->got);
    free(s->want);
    free(s->tver);
    free(s->params);
    free(s->target);
    free(s->sum);
    optim_free(&s->opt);
    role_free(&s->rb);
    free(s);
    return 0;
}
