/* SPDX-License-Identifier: MIT */
/* replay.c: the replay-shard role. Owns one ReplayBuf of
 * ceil(replay.capacity / S) transitions, inserts the experience chunks of
 * its actors (actor a goes to shard a mod S) and answers learners' sample
 * requests with packed uniform batches (SAMPLE: ids, transitions, weights).
 * A planes environment's observations arrive as bits (obsrow.h) and are
 * stored as they came; they are unpacked to floats only into SAMPLE.
 *
 * Prioritized replay (replay.kind prioritized, Ape-X): the buffer is a
 * ReplayStore (a sum-tree beside the same storage). A new transition takes
 * the priority its actor computed (MSG_HAS_PRIORITY) or the running maximum
 * (replay.initial_priority max); a request carries the positions of its
 * rows in [0, 1) of this shard's total priority (the learner spread its
 * batch over the shards in proportion to their totals, prio_stratify), and
 * the reply carries each row's slot and priority and the shard's total, so
 * the learner can weight the row by the probability it was drawn with.
 * PRIORITY messages set new priorities; an update for a slot overwritten
 * since it was sampled is ignored and counted.
 *
 * Samples-per-insert limiter: the rules are in src/core/replay/pacing.h (a request
 * waits while the learners are ahead of spi * inserts, a chunk while the
 * actors are ahead; one of the two is always allowed; lifted once every
 * actor of the shard has sent its last chunk). This file applies them:
 * blocked chunks and requests wait in small queues (at most 2 chunks per
 * actor, 1 request per learner) and are retried after every message. A
 * held chunk is not acked, which is what stops a fast actor (actor.c).
 *
 * Checkpoints (checkpoint.save_replay): the coordinator's CKPT_REQ, periodic
 * or final, is answered at once: the shard writes what it holds when the
 * request arrives as replay-<s>.ckpt (runckpt_write_replay: rows in logical
 * order, with priorities, max_priority and the id count when prioritized)
 * and sends CKPT_DONE with the number of transitions. A final request goes
 * out just before the actors' STOP, so the few chunks still in flight then
 * (at most two per actor) are not in the final checkpoint. On resume the
 * shard restores its file, or its deal of every shard's file when the shard
 * count changed (runckpt_read_replay), before it takes any message, and
 * counts the restored rows towards its min_size (pacing_limiter_restored).
 */
#include "agentcfg.h"
#include "clock.h"
#include "exitcode.h"
#include "pacing.h"
#include "replaystore.h"
#include "role.h"
#include "runckpt.h"
#include "util.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    MsgHeader h;
    int source;
    uint8_t *payload;     /* copy of the EXPERIENCE payload */
} PendingChunk;

typedef struct {
    RoleBase rb;
    ReplayStore store;      /* uniform or prioritized (replay.kind) */
    Rng rng;
    PacingLimiter lim;      /* counts every insert and sample */
    SendBuf *out;           /* (L, D) D per learner, used in turn */
    int L, first_learner;
    int D;                  /* learner.prefetch: requests a learner may have pending */
    int *req_n, *req_head;  /* (L) pending requests of each learner, a FIFO of D */
    int *out_next;          /* (L) the learner's next send buffer */
    int *req_batch;         /* (L, D) a request's rows */
    int *req_charge;        /* (L, D) rows charged to the limiter */
    uint64_t *req_seq;      /* (L, D) its sequence number */
    double *req_frac;       /* (L, batch) prioritized (D is 1): the rows' positions */
    size_t *slots;          /* (batch) scratch */
    PendingChunk *pend;     /* FIFO of blocked chunks */
    int n_pend, cap_pend;
    size_t chunk_bytes;
} Replay;

static void insert(Replay *r, const MsgHeader *h, int source, const uint8_t *payload) {
    double t0 = now_seconds();
    size_t n = h->count;
    ExpLayout l = proto_exp_layout(n, r->store.buf.row.bytes, (h->flags & MSG_HAS_PRIORITY) != 0);
    /* Rows in the stored form (bits for planes): inserted as they are. */
    ReplayRows chunk = {
        .n = (int)n,
        .obs = payload + l.obs,
        .next_obs = payload + l.next_obs,
        .action = (const int32_t *)(payload + l.action),
        .reward = (const float *)(payload + l.reward),
        .discount = (const float *)(payload + l.discount),
    };
    for (size_t i = 0; i < n; i++)
        if (chunk.action[i] < 0 || chunk.action[i] >= r->rb.net.spec.n_actions)
            DIE(r->rb.ctx, "EXPERIENCE from rank %d has action %d outside [0, %d)", source, chunk.action[i],
                r->rb.net.spec.n_actions);
    /* Priorities were validated with the message (proto_payload_check). */
    const float *prio = (h->flags & MSG_HAS_PRIORITY) ? (const float *)(payload + l.priority) : NULL;
    if (!prio && replaystore_prioritized(&r->store) && r->rb.cfg->replay.initial_priority == PRIORITY_ACTOR && n)
        DIE(r->rb.ctx, "EXPERIENCE from rank %d has no priorities, but replay.initial_priority is actor", source);
    if (n) replaystore_add_rows(&r->store, &chunk, prio);
    pacing_limiter_inserted(&r->lim, n, (h->flags & MSG_LAST) != 0);
    r->rb.m.inserted = r->lim.inserted;
    r->rb.m.replay_size = replaybuf_size(&r->store.buf);
    MsgHeader ack = {0};
    ack.count = n;
    comm_send_ctl(&r->rb.comm, source, TAG_EXPERIENCE_ACK, ack, NULL, 0);
    trace_span(&r->rb.trace, TR_INSERT, t0, now_seconds(), (uint32_t)n);
}

/* The oldest pending request of learner l, as an index into the (L, D)
 * arrays. */
static int head(const Replay *r, int l) { return l * r->D + r->req_head[l]; }

/* Serve learner l's oldest request. Each of its D requests in flight has a
 * send buffer of its own, so a reply never waits for the learner to take
 * the one before. */
static void serve(Replay *r, int l) {
    double t0 = now_seconds();
    int q = head(r, l);
    int B = r->req_batch[q];
    SendBuf *s = &r->out[l * r->D + r->out_next[l]];
    r->out_next[l] = (r->out_next[l] + 1) % r->D;
    comm_wait_send(&r->rb.comm, s);
    bool prio = replaystore_prioritized(&r->store);
    SampleLayout lay = proto_sample_layout((size_t)B, (size_t)r->store.buf.obs_dim, prio);
    uint8_t *p = sendbuf_payload(s);
    Batch view = {
        .n = B,
        .obs_dim = r->store.buf.obs_dim,
        .obs = (float *)(p + lay.obs),
        .next_obs = (float *)(p + lay.next_obs),
        .action = (int32_t *)(p + lay.action),
        .reward = (float *)(p + lay.reward),
        .discount = (float *)(p + lay.discount),
        .weight = (float *)(p + lay.weight),
    };
    MsgHeader h = {0};
    if (B)
        replaystore_sample_request(&r->store, &r->rng, r->req_frac + (size_t)l * r->lim.batch, B, &view, r->slots,
                                   (uint64_t *)(p + lay.id), prio ? (double *)(p + lay.prio) : NULL);
    if (prio) {
        /* Weights are the learner's (it knows every shard's total). */
        uint64_t *slot = (uint64_t *)(p + lay.slot);
        for (int i = 0; i < B; i++) {
            slot[i] = r->slots[i];
            view.weight[i] = 1;
        }
        double total = replaystore_total(&r->store);
        memcpy(p + lay.total, &total, sizeof total);
        h.flags = MSG_PRIORITIZED;
    }
    h.count = (uint64_t)B;
    h.version = r->req_seq[q];
    h.sample.shard_size = replaystore_size(&r->store);
    comm_send(&r->rb.comm, s, r->first_learner + l, TAG_SAMPLE, h, lay.bytes);
    pacing_limiter_sampled(&r->lim, r->req_charge[q]);
    r->rb.m.sampled = r->lim.sampled;
    r->rb.m.sampled_unpaced = r->lim.unpaced;
    r->req_head[l] = (r->req_head[l] + 1) % r->D;
    r->req_n[l]--;
    trace_span(&r->rb.trace, TR_SAMPLE, t0, now_seconds(), (uint32_t)l);
}

/* A learner's oldest request can be served when the limiter allows its
 * charge and, if it asks for rows, there is something to sample. */
static bool can_serve(const Replay *r, int l) {
    if (r->req_n[l] == 0) return false;
    int q = head(r, l);
    return pacing_limiter_can_sample(&r->lim, r->req_charge[q]) &&
           (r->req_batch[q] == 0 || replaybuf_size(&r->store.buf) > 0);
}

/* Retry what the limiter held back; returns true if anything moved. */
static bool retry(Replay *r) {
    bool moved = false, again = true;
    while (again) {
        again = false;
        while (r->n_pend > 0 && pacing_limiter_can_insert(&r->lim)) {
            PendingChunk *c = &r->pend[0];
            insert(r, &c->h, c->source, c->payload);
            uint8_t *keep = c->payload;
            memmove(&r->pend[0], &r->pend[1], (size_t)(r->n_pend - 1) * sizeof *r->pend);
            r->n_pend--;
            r->pend[r->n_pend].payload = keep; /* recycle the buffer at the tail */
            moved = again = true;
        }
        for (int l = 0; l < r->L; l++) {
            while (can_serve(r, l)) {
                serve(r, l);
                moved = again = true;
            }
        }
    }
    return moved;
}

static void on_experience(Replay *r, const Msg *m) {
    if (r->n_pend == 0 && pacing_limiter_can_insert(&r->lim)) {
        insert(r, &m->h, m->source, m->payload);
        return;
    }
    if (r->n_pend == r->cap_pend)
        DIE(r->rb.ctx, "rank %d sent more experience than its credits allow", m->source);
    PendingChunk *c = &r->pend[r->n_pend++];
    c->h = m->h;
    c->source = m->source;
    memcpy(c->payload, m->payload, m->bytes);
}

static void on_sample_req(Replay *r, const Msg *m) {
    int l = m->source - r->first_learner;
    if (l < 0 || l >= r->L) DIE(r->rb.ctx, "SAMPLE_REQ from rank %d, which is not a learner", m->source);
    if (r->req_n[l] == r->D)
        DIE(r->rb.ctx, "learner rank %d has more than %d sample requests in flight (learner.prefetch)", m->source,
            r->D);
    int q = l * r->D + (r->req_head[l] + r->req_n[l]) % r->D;
    r->req_n[l]++;
    r->req_batch[q] = (int)m->h.count;
    r->req_charge[q] = (int)m->h.sample_req.charged;
    r->req_seq[q] = m->h.version;
    /* Prioritized: the rows' positions (proto_sample_req_bytes); uniform: none. */
    memcpy(r->req_frac + (size_t)l * r->lim.batch, m->payload, m->bytes);
}

/* New priorities from a learner, validated with the message (a slot
 * outside the shard or a non-finite |td| is fatal, naming the sender:
 * proto_payload_check), applied unless the slot was overwritten since it
 * was sampled. */
static void on_priority(Replay *r, const Msg *m) {
    size_t n = m->h.count;
    PriorityLayout pl = proto_priority_layout(n);
    const uint8_t *p = m->payload;
    const uint64_t *slot = (const uint64_t *)(p + pl.slot), *id = (const uint64_t *)(p + pl.id);
    const float *td = (const float *)(p + pl.td);
    for (size_t i = 0; i < n; i++) r->slots[i] = (size_t)slot[i];
    replaystore_update_many(&r->store, r->slots, id, td, (int)n);
    r->rb.m.priority_updates += n;
    r->rb.m.stale_priority_updates = r->store.stale;
}

/* CKPT_REQ from the coordinator: this shard's contents as they are now
 * into replay-<s>.ckpt of the directory the request names (a chunk the
 * limiter holds is not inserted yet, so not in it), then CKPT_DONE with the
 * transitions written, or MSG_FAILED and the reason (the run goes on; a
 * final checkpoint that fails ends it with GORILA_EXIT_CKPT_WRITE). */
static void on_ckpt_req(Replay *r, const Msg *m) {
    if (m->source != 0) DIE(r->rb.ctx, "CKPT_REQ from rank %d, not the coordinator", m->source);
    char dir[PROTO_MAX_TEXT + 1], err[ERR_LEN] = "";
    /* comm_poll bounds the path by PROTO_MAX_TEXT (proto_payload_bytes). */
    memcpy(dir, m->payload, m->bytes);
    dir[m->bytes] = '\0';
    RunCkptReplay rp = {.index = r->rb.ctx->index, .n_shards = r->rb.lay->count[ROLE_REPLAY],
                        .replay = &r->store,
                        .run_id = m->h.ckpt_req.run_id, .seq = m->h.version};
    double t0 = now_seconds();
    int rc = runckpt_write_replay(r->rb.cfg, &r->rb.net, dir, &rp, err);
    trace_span(&r->rb.trace, TR_CKPT, t0, now_seconds(), (uint32_t)m->h.version);
    role_ckpt_done(&r->rb, m->h.version, replaybuf_size(&r->store.buf), rc, err, dir);
}

/* Resume: fill the empty buffer from the checkpoint the job resumes from,
 * when it holds replay files and checkpoint.save_replay is on (as in the
 * local trainer, the option says whether replay is saved and restored). A
 * checkpoint without replay files leaves the shard empty, as before. */
static void restore(Replay *r, const JobArgs *args) {
    const Ctx *ctx = r->rb.ctx;
    int S = args->lay->count[ROLE_REPLAY];
    char err[ERR_LEN];
    RunCkptReplayInfo info;
    if (runckpt_read_replay(args->cfg, &r->rb.net, args->start.ckpt_dir, ctx->index, S, &r->store, &info,
                            err) != 0)
        DIE_CODE(ctx, GORILA_EXIT_CKPT_READ, "cannot restore the replay shard: %s", err);
    if (info.files == 0) {
        log_info(ctx, "the checkpoint holds no replay (saved without checkpoint.save_replay): starting empty");
        return;
    }
    pacing_limiter_restored(&r->lim, info.restored);
    r->rb.m.replay_size = replaybuf_size(&r->store.buf);
    if (info.exact)
        log_info(ctx, "restored %" PRIu64 " transitions from replay-%d.ckpt (next id %" PRIu64 "%s)",
                 info.restored, ctx->index, replaybuf_total(&r->store.buf),
                 replaystore_prioritized(&r->store) ? ", with their priorities" : "");
    else
        log_info(ctx, "restored %" PRIu64 " transitions dealt from the checkpoint's %d replay file%s to %d shards (new ids%s)",
                 info.restored, info.files, info.files == 1 ? "" : "s", S,
                 replaystore_prioritized(&r->store) ? ", saved priorities" : "");
    if (info.dropped)
        log_info(ctx, "dropped %" PRIu64 " saved transitions, the oldest, beyond the shard's capacity of %zu",
                 info.dropped, replaybuf_capacity(&r->store.buf));
    log_info(ctx, "min size %" PRIu64 " left to insert before learning (restored rows count towards it)",
             r->lim.min_size);
}

int replay_run(const Ctx *ctx, const JobArgs *args) {
    Replay *r = xcalloc(1, sizeof *r);
    role_init(&r->rb, ctx, args);
    const Config *cfg = args->cfg;
    int S = args->lay->count[ROLE_REPLAY], A = args->lay->count[ROLE_ACTOR];
    uint64_t cap = pacing_split_max(cfg->replay.capacity, S);
    replaystore_init_for(&r->store, cap, obsrow_for_net(&r->rb.net.spec), cfg); /* planes: bits */
    rng_seed(&r->rng, cfg->run.seed, RNG_STREAM_REPLAY + (uint64_t)ctx->index);
    int my_actors = (int)pacing_split((uint64_t)A, S, ctx->index, NULL);
    pacing_limiter_init(&r->lim, agentcfg_samples_per_insert(cfg), cfg->replay.spi_tolerance,
                        pacing_split_max(cfg->replay.min_size, S), cfg->replay.batch_size, my_actors);
    r->L = args->lay->count[ROLE_LEARNER];
    r->first_learner = layout_rank_of(args->lay, ROLE_LEARNER, 0);
    {   /* it waits for the learners' requests and its actors' chunks (comm_expect) */
        int *peers = xmalloc((size_t)(r->L + A) * sizeof(int)), n = 0;
        for (int l = 0; l < r->L; l++) peers[n++] = r->first_learner + l;
        for (int a = 0; a < A; a++)
            if (pacing_actor_shard(a, S) == ctx->index) peers[n++] = layout_rank_of(args->lay, ROLE_ACTOR, a);
        comm_expect(&r->rb.comm, peers, n);
        free(peers);
    }
    r->D = cfg->learner.prefetch;
    int n_out = r->L * r->D;
    r->out = xcalloc((size_t)n_out, sizeof *r->out);
    for (int i = 0; i < n_out; i++)
        sendbuf_init(&r->out[i],
                     proto_sample_layout((size_t)cfg->replay.batch_size, (size_t)r->store.buf.obs_dim,
                                         replaystore_prioritized(&r->store)).bytes);
    r->req_n = xcalloc((size_t)r->L, sizeof(int));
    r->req_head = xcalloc((size_t)r->L, sizeof(int));
    r->out_next = xcalloc((size_t)r->L, sizeof(int));
    r->req_batch = xcalloc((size_t)n_out, sizeof(int));
    r->req_charge = xcalloc((size_t)n_out, sizeof(int));
    r->req_seq = xcalloc((size_t)n_out, sizeof(uint64_t));
    r->req_frac = xcalloc((size_t)r->L * (size_t)cfg->replay.batch_size, sizeof(double));
    r->slots = xcalloc((size_t)cfg->replay.batch_size, sizeof(size_t));
    r->cap_pend = 2 * my_actors + 2;
    r->pend = xcalloc((size_t)r->cap_pend, sizeof *r->pend);
    size_t max_n = r->rb.comm.lim.max_chunk;
    r->chunk_bytes = proto_exp_layout(max_n, r->store.buf.row.bytes, 1).bytes;
    for (int i = 0; i < r->cap_pend; i++)
        r->pend[i].payload = xmalloc_for(r->chunk_bytes, "held experience chunks", "actor.chunk");
    log_info(ctx, "shard of %" PRIu64 " transitions, %d actors, samples per insert %.3g (tolerance %.2g), min size %" PRIu64,
             cap, my_actors, r->lim.spi, r->lim.tol, r->lim.min_size);
    if (args->start.resumed && cfg->checkpoint.save_replay) {
        restore(r, args);
        role_report(&r->rb, true); /* the coordinator sees the restored size at once */
    }

    bool stop = false;
    while (!stop) {
        bool worked = false;
        Msg m;
        while (!stop && comm_poll(&r->rb.comm, &m)) {
            worked = true;
            switch (m.tag) {
            case TAG_EXPERIENCE: on_experience(r, &m); break;
            case TAG_SAMPLE_REQ: on_sample_req(r, &m); break;
            case TAG_PRIORITY: on_priority(r, &m); break; /* comm.c refuses it with uniform replay */
            case TAG_CKPT_REQ: on_ckpt_req(r, &m); break;
            case TAG_STOP: stop = true; break;
            default: DIE(ctx, "unexpected %s message from rank %d", proto_tag_name(m.tag), m.source);
            }
            if (!stop) retry(r);
        }
        if (stop) break;
        worked |= retry(r);
        role_report(&r->rb, false);
        if (worked) comm_busy(&r->rb.comm);
        else comm_idle(&r->rb.comm);
    }
    SendBuf **bufs = xcalloc((size_t)n_out, sizeof *bufs);
    for (int i = 0; i < n_out; i++) bufs[i] = &r->out[i];
    role_shutdown(&r->rb, bufs, n_out);
    for (int i = 0; i < n_out; i++) sendbuf_free(&r->out[i]);
    for (int i = 0; i < r->cap_pend; i++) free(r->pend[i].payload);
    free(bufs);
    free(r->out);
    free(r->req_n);
    free(r->req_head);
    free(r->out_next);
    free(r->req_batch);
    free(r->req_charge);
    free(r->req_seq);
    free(r->req_frac);
    free(r->slots);
    free(r->pend);
    replaystore_free(&r->store);
    role_free(&r->rb);
    free(r);
    return 0;
}
