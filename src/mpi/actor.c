/* SPDX-License-Identifier: MIT */
/* actor.c: the actor role. Runs actor.envs environments in lockstep with
 * epsilon-greedy on its latest copy of the parameters (actorcore), and
 * streams the n-step transitions to its replay shard (actor index mod S),
 * a planes environment's observations packed to bits (obsrow.h).
 *
 * Flow control: at most ACTOR_CREDITS experience messages may be waiting
 * for their EXPERIENCE_ACK; the replay shard acks a chunk only once its
 * samples-per-insert limiter lets it in, so a fast actor waits (sleeping)
 * for the learners instead of flooding replay. With two credits and two
 * send buffers the actor fills one chunk while the other is in flight.
 *
 * Parameters: every actor.pull_every env steps the actor sends PARAM_REQ to
 * every parameter source and keeps acting on its old copy until all slices
 * of the new one have arrived, then swaps (double-buffered, never waits
 * except for the very first parameters).
 *
 * Budget: the job's remaining run.max_env_steps are split evenly over the
 * actors (the first R mod A get one more); an actor that has used its share
 * sends its last chunk flagged MSG_LAST (so its replay shard knows no more
 * is coming from it), reports done and idles until STOP. With
 * actor.envs > 1 an actor may overshoot its share by up to envs - 1 steps.
 */
#include "actorcore.h"
#include "agentcfg.h"
#include "clock.h"
#include "exitcode.h"
#include "obsrow.h"
#include "pacing.h"
#include "role.h"
#include "util.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define ACTOR_CREDITS 2
/* An actor that is stepping looks for messages every ACTOR_POLL_STEPS
 * loop turns, one that cannot step (no credit, no parameters) every turn.
 * MPI_Iprobe runs Open MPI's progress engine over every transport: on a
 * CartPole actor (about 1 us of env step and action selection per turn)
 * perf put ten times that in MPI_Iprobe, on the core the actor shares with
 * the replay shard and the coordinator. A PARAMS reply, a credit or STOP is
 * then seen at most ACTOR_POLL_STEPS - 1 turns late. */
#define ACTOR_POLL_STEPS 8

typedef struct {
    RoleBase rb;
    ActorCore ac;
    float *params, *incoming;
    int got;                  /* slices of `incoming` received */
    bool pulling, have_params;
    uint64_t version;
    Batch chunk;
    EpisodeEnd *ended;
    SendBuf exp[ACTOR_CREDITS];
    int next_buf, credits_used;
    int replay_rank;
    EpisodeRec episodes[PROTO_MAX_EPISODES];
    int n_episodes;
    uint64_t quota, start_steps;
    uint64_t steps_since_pull;
    bool done;
    double t_first;           /* when its first env step began; 0: none yet */
    double cpu_first;         /* the process's CPU seconds then */
    double wait_t0;           /* logging.trace: start of the current wait for the first
                                 parameters or for a credit; 0: not waiting */
    bool send_prio;           /* replay.initial_priority actor with prioritized replay */
    ObsRow row;               /* how observation rows travel: bits for planes (obsrow.h) */
} Actor;

static void request_params(Actor *a) {
    MsgHeader h = {0};
    h.flags = MSG_NO_TARGET;
    for (int p = 0; p < a->rb.n_sources; p++) comm_send_ctl(&a->rb.comm, a->rb.source_rank[p], TAG_PARAM_REQ, h, NULL, 0);
    a->pulling = true;
    a->got = 0;
    a->steps_since_pull = 0;
}

static void on_params(Actor *a, const Msg *m) {
    role_params_source(&a->rb, m, a->pulling);
    memcpy(a->incoming + m->h.params.offset, m->payload, m->h.count * sizeof(float));
    if (a->got == 0 || m->h.version < a->version) a->version = m->h.version;
    if (++a->got < a->rb.n_sources) return;
    float *t = a->params;
    a->params = a->incoming;
    a->incoming = t;
    a->pulling = false;
    if (!a->have_params) { /* the only time an actor waits for parameters */
        trace_span(&a->rb.trace, TR_WAIT_PARAMS, a->wait_t0, now_seconds(), 0);
        a->wait_t0 = 0;
    }
    a->have_params = true;
    a->rb.m.params_version = a->version;
}

/* n observation rows (n, O) into their EXPERIENCE form at dst. A planes
 * environment that wrote a cell other than 0 or 1 cannot be packed: that
 * is the environment's bug, and the actor stops naming it. */
static void encode_obs(const Actor *a, const float *rows, size_t n, uint8_t *dst, const char *what) {
    size_t bad = obsrow_encode(&a->row, rows, n, dst);
    if (bad != OBSROW_OK)
        DIE(a->rb.ctx, "env %s declares binary planes, but %s cell %zu of a transition is %g, not 0 or 1",
            a->rb.cfg->env.name, what, bad % (size_t)a->row.obs_dim, (double)rows[bad]);
}

static void send_chunk(Actor *a, bool last) {
    if (a->chunk.n == 0 && !last) return;
    double t0 = now_seconds();
    size_t n = (size_t)a->chunk.n;
    SendBuf *s = &a->exp[a->next_buf];
    a->next_buf = (a->next_buf + 1) % ACTOR_CREDITS;
    bool prio = a->send_prio && n > 0;
    ExpLayout l = proto_exp_layout(n, a->row.bytes, prio);
    uint8_t *p = sendbuf_payload(s);
    /* The ack came back, so replay received it; completion is imminent. */
    comm_wait_send(&a->rb.comm, s);
    if (prio) {
        /* Ape-X: the initial priority is the |td| under this actor's own
         * copy of the network, from its acting forward (actorcore.h). */
        float *td = (float *)(p + l.priority);
        memcpy(td, a->chunk.weight, n * sizeof(float));
        if (!floats_finite(td, n))
            DIE_CODE(a->rb.ctx, GORILA_EXIT_DIVERGED, "training diverged: the actor's network gives a non-finite "
                     "|td| for its own transitions (parameters version %" PRIu64 ")", a->version);
    }
    /* Planes go as bits, the form the replay shard stores them in. */
    encode_obs(a, a->chunk.obs, n, p + l.obs, "obs");
    encode_obs(a, a->chunk.next_obs, n, p + l.next_obs, "next_obs");
    memcpy(p + l.action, a->chunk.action, n * sizeof(int32_t));
    memcpy(p + l.reward, a->chunk.reward, n * sizeof(float));
    memcpy(p + l.discount, a->chunk.discount, n * sizeof(float));
    MsgHeader h = {0};
    h.count = n;
    h.version = a->version;
    h.exp.actor = (uint64_t)a->rb.ctx->index;
    h.flags = (last ? MSG_LAST : 0) | (prio ? MSG_HAS_PRIORITY : 0);
    comm_send(&a->rb.comm, s, a->replay_rank, TAG_EXPERIENCE, h, l.bytes);
    a->credits_used++;
    a->chunk.n = 0;
    trace_span(&a->rb.trace, TR_SEND_EXP, t0, now_seconds(), (uint32_t)n);
}

static void send_episodes(Actor *a) {
    if (a->n_episodes == 0) return;
    MsgHeader h = {0};
    h.count = (uint64_t)a->n_episodes;
    comm_send_ctl(&a->rb.comm, 0, TAG_EPISODES, h, a->episodes, (size_t)a->n_episodes * sizeof(EpisodeRec));
    a->n_episodes = 0;
}

/* One lockstep step of the environments, if allowed. Returns true if it
 * did work. */
static bool act(Actor *a) {
    const Config *cfg = a->rb.cfg;
    if (!a->done && a->have_params && a->credits_used >= ACTOR_CREDITS && a->wait_t0 == 0)
        a->wait_t0 = now_seconds(); /* a credit wait begins; the next EXPERIENCE_ACK ends it */
    if (a->done || !a->have_params || a->credits_used >= ACTOR_CREDITS) return false;
    int n_actors = a->rb.lay->count[ROLE_ACTOR];
    /* The schedule runs on job-wide env steps, estimated as ours * A. */
    uint64_t global = a->start_steps + a->ac.steps * (uint64_t)n_actors;
    double eps = agentcfg_epsilon(cfg, global, a->rb.ctx->index, n_actors);
    a->rb.m.epsilon = eps;
    int n_ended = 0;
    double t0 = now_seconds();
    if (a->t_first == 0) {
        a->t_first = t0;
        a->cpu_first = cpu_seconds();
    }
    actorcore_step(&a->ac, a->params, eps, &a->chunk, a->ended, &n_ended);
    if (a->ac.env_failed)
        DIE_CODE(a->rb.ctx, GORILA_EXIT_ENV, "environment %s failed (above); the job stops, its last checkpoint kept",
                 cfg->env.name);
    double t1 = now_seconds();
    trace_span(&a->rb.trace, TR_ENV_BATCH, t0, t1, (uint32_t)a->ac.E);
    a->rb.m.stepping_seconds = t1 - a->t_first;
    a->rb.m.env_steps = a->ac.steps;
    a->steps_since_pull += (uint64_t)a->ac.E;
    for (int i = 0; i < n_ended; i++) {
        EpisodeRec *r = &a->episodes[a->n_episodes++];
        r->ret = a->ended[i].ret;
        r->length = a->ended[i].length;
        r->actor = a->rb.ctx->index;
        r->env_steps = a->ac.steps;
        a->rb.m.episodes++;
        if (a->n_episodes == PROTO_MAX_EPISODES) send_episodes(a);
    }
    /* The chunk that goes out when the share is used up carries the last
     * flag itself (even if short or empty): a separate flagged message
     * would be a third chunk in flight, beyond the credits replay sized
     * its queue for. The chunk buffer holds chunk + 2 envs * n_step rows. */
    bool last = a->quota && a->ac.steps >= a->quota;
    if (last) actorcore_flush(&a->ac, a->params, &a->chunk); /* the transitions held back for their priority */
    if (last || a->chunk.n >= cfg->actor.chunk) send_chunk(a, last);
    if (last) {
        send_episodes(a);
        a->rb.m.stepping_cpu_seconds = cpu_seconds() - a->cpu_first;
        a->done = true;
        a->rb.m.done = 1;
        role_report(&a->rb, true);
        log_info(a->rb.ctx, "env-step share of %" PRIu64 " used up", a->quota);
    }
    if (!a->pulling && a->steps_since_pull >= (uint64_t)cfg->actor.pull_every) request_params(a);
    return true;
}

int actor_run(const Ctx *ctx, const JobArgs *args) {
    Actor *a = xcalloc(1, sizeof *a);
    role_init(&a->rb, ctx, args);
    const Config *cfg = args->cfg;
    char err[ERR_LEN];
    if (actorcore_init(&a->ac, cfg, &a->rb.net, ctx->index, err) != 0) DIE(ctx, "%s", err);
    size_t n = a->rb.net.n_params;
    a->params = xmalloc_for(n * sizeof(float), "network parameters", "network.hidden");
    a->incoming = xmalloc_for(n * sizeof(float), "network parameters", "network.hidden");
    /* Room for a chunk, one step's transitions beyond it and, before the
     * last chunk, the ones a flush releases (proto.h: ProtoLimits.max_chunk). */
    size_t max_n = (size_t)cfg->actor.chunk + 2 * (size_t)actorcore_max_emit(&a->ac);
    agentcfg_batch_init(&a->chunk, (int)max_n, a->ac.O);
    a->ended = xcalloc((size_t)a->ac.E, sizeof(EpisodeEnd));
    a->row = obsrow_for_net(&a->rb.net.spec);
    for (int i = 0; i < ACTOR_CREDITS; i++) sendbuf_init(&a->exp[i], proto_exp_layout(max_n, a->row.bytes, 1).bytes);
    a->send_prio = cfg->replay.kind == REPLAY_PRIORITIZED && cfg->replay.initial_priority == PRIORITY_ACTOR;

    int S = args->lay->count[ROLE_REPLAY], A = args->lay->count[ROLE_ACTOR];
    a->replay_rank = layout_rank_of(args->lay, ROLE_REPLAY, pacing_actor_shard(ctx->index, S));
    /* It waits for its replay shard's credit; parameters are pulled ahead. */
    comm_expect(&a->rb.comm, &a->replay_rank, 1);
    a->start_steps = args->start.env_steps;
    if (cfg->run.max_env_steps) {
        uint64_t left = cfg->run.max_env_steps > a->start_steps ? cfg->run.max_env_steps - a->start_steps : 0;
        a->quota = pacing_split(left, A, ctx->index, NULL);
    }
    if (cfg->run.max_env_steps && a->quota == 0) {
        /* Nothing left for us (a resume with fewer steps left than actors):
         * tell the replay shard at once, or its limiter would wait for us. */
        send_chunk(a, true);
        a->done = true;
        a->rb.m.done = 1;
    }
    request_params(a);
    a->wait_t0 = now_seconds(); /* no env step before the first parameters */
    bool stop = false, stepping = false;
    unsigned turns = 0;
    while (!stop) {
        bool worked = false;
        Msg m;
        bool look = !stepping || ++turns >= ACTOR_POLL_STEPS;
        if (look) turns = 0;
        while (look && comm_poll(&a->rb.comm, &m)) {
            worked = true;
            switch (m.tag) {
            case TAG_PARAMS: on_params(a, &m); break;
            case TAG_EXPERIENCE_ACK:
                if (a->credits_used <= 0) DIE(ctx, "EXPERIENCE_ACK from rank %d without a chunk in flight", m.source);
                a->credits_used--;
                if (a->wait_t0 != 0 && a->have_params) {
                    trace_span(&a->rb.trace, TR_WAIT_CREDIT, a->wait_t0, now_seconds(), 0);
                    a->wait_t0 = 0;
                }
                break;
            case TAG_STOP: stop = true; break;
            default: DIE(ctx, "unexpected %s message from rank %d", proto_tag_name(m.tag), m.source);
            }
            if (stop) break;
        }
        if (stop) break;
        stepping = act(a);
        worked |= stepping;
        if (a->rb.next_metrics <= now_seconds()) send_episodes(a);
        role_report(&a->rb, false);
        if (worked) comm_busy(&a->rb.comm);
        else comm_idle(&a->rb.comm);
    }
    send_episodes(a);
    if (!a->done && a->t_first != 0) a->rb.m.stepping_cpu_seconds = cpu_seconds() - a->cpu_first;
    int dropped = 0;
    for (int e = 0; e < a->ac.E; e++) dropped += nstep_clear(&a->ac.nstep[e]);
    if (dropped) log_info(ctx, "stopped with %d n-step transitions of unfinished episodes not sent", dropped);
    SendBuf *bufs[ACTOR_CREDITS];
    for (int i = 0; i < ACTOR_CREDITS; i++) bufs[i] = &a->exp[i];
    role_shutdown(&a->rb, bufs, ACTOR_CREDITS);
    for (int i = 0; i < ACTOR_CREDITS; i++) sendbuf_free(&a->exp[i]);
    actorcore_free(&a->ac);
    agentcfg_batch_free(&a->chunk);
    free(a->params);
    free(a->incoming);
    free(a->ended);
    role_free(&a->rb);
    free(a);
    return 0;
}
