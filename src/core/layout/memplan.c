/* SPDX-License-Identifier: MIT */
/* memplan.c: see memplan.h.
 *
 * Each item below names the allocation it mirrors (file: the call). A
 * change to one of those allocations needs the same change here;
 * tests/unit/test_memplan.c fails when they drift apart by more than the
 * allocator's own overhead. xmalloc_aligned(b) and xmalloc_for(b, ...)
 * request round_up(max(b, 1), 64) bytes (al64 here); xmalloc and xcalloc
 * request what they are given.
 */
#include "memplan.h"
#include "actorcore.h"
#include "agentcfg.h"
#include "evaluator.h"
#include "nstep.h"
#include "obsrow.h"
#include "optim.h"
#include "pacing.h"
#include "shard.h"
#include "proto.h"
#include "qnet.h"
#include "sumtree.h"
#include "trace.h"
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define ACTOR_CREDITS_PLAN 2 /* src/mpi/actor.c ACTOR_CREDITS: experience send buffers per actor */

static uint64_t up(uint64_t n, uint64_t a) { return (n + a - 1) / a * a; }
static uint64_t al64(uint64_t bytes) { return up(bytes ? bytes : 1, 64); }
static uint64_t sendbuf(uint64_t payload) { return al64(sizeof(MsgHeader) + payload); }

/* ---- the allocations of the MPI-free modules ----------------------------- */

/* The stored bytes of one observation row (obsrow.h): bits for a planes
 * environment, floats otherwise. */
static uint64_t obs_row_bytes(const QNet *net) { return obsrow_for_net(&net->spec).bytes; }

/* replaybuf.c: replaybuf_init_rows, rows of R bytes. */
static uint64_t replay_storage(uint64_t cap, uint64_t R) {
    return al64(2 * up(cap * R, 64) + 3 * up(cap * sizeof(float), 64));
}

/* sumtree.c: sumtree_init (whole groups of 2K doubles per level, +64 for
 * the 128-byte alignment). */
static uint64_t sum_tree(uint64_t cap) {
    const uint64_t K = SUMTREE_FANOUT, G = 2 * SUMTREE_FANOUT;
    uint64_t n = cap, total = (cap + K - 1) / K * G; /* the leaves' level */
    do {
        n = (n + K - 1) / K;
        total += (n + K - 1) / K * G;
    } while (n > 1);
    return al64(total * sizeof(double) + 64);
}

/* replaybuf.c / replaystore.c: replaybuf_serial_bytes, replaystore_serial_bytes
 * of a full buffer of rows of R bytes (the checkpoint's replay section). */
static uint64_t replay_serial(uint64_t cap, uint64_t R, bool prio) {
    uint64_t b = 40 + cap * (2 * R + sizeof(int32_t) + 2 * sizeof(float));
    return prio ? b + 8 + 8 * cap : b;
}

/* qnet.c: qnet_work_init, whose own count (qnet_work_floats) includes the
 * conv layers' activations and im2col scratch. */
static uint64_t qnet_work(const QNet *net, uint64_t B) {
    return al64((uint64_t)qnet_work_floats(net, (int)B) * sizeof(float));
}

/* dqn.c: dqn_init (a workspace of 2B rows and its own views). */
static uint64_t dqn_bytes(const QNet *net, uint64_t B) {
    uint64_t O = (uint64_t)net->spec.obs_dim, A = (uint64_t)net->spec.n_actions;
    uint64_t nx = up(2 * B * O, 16), nq2 = up(2 * B * A, 16), nq = up(B * A, 16), nb = up(B, 16);
    return qnet_work(net, 2 * B) + al64((nx + nq2 + 2 * nq + 3 * nb) * sizeof(float));
}

/* optim.c: the floats of optimizer state for n parameters (n_state). */
static uint64_t optim_floats(const Config *cfg, uint64_t n) {
    OptimParams p;
    agentcfg_optim_params(cfg, &p);
    uint64_t v = 0;
    switch (p.kind) {
    case OPTIM_ADAM: v = 2; break;
    case OPTIM_RMSPROP: v = 1 + (p.centered ? 1 : 0) + (p.momentum > 0.0f ? 1 : 0); break;
    case OPTIM_SGD: v = p.momentum > 0.0f ? 1 : 0; break;
    }
    return v * n;
}

/* agentcfg.c: agentcfg_batch_init. */
static uint64_t batch_bytes(uint64_t R, uint64_t O) {
    return al64((2 * R * O + 3 * R) * sizeof(float) + R * sizeof(int32_t));
}

/* nstep.c: nstep_init. */
static uint64_t nstep_bytes(uint64_t n, uint64_t O) {
    return al64(up((n + 1) * sizeof(double), 64) + up(n * O * sizeof(float), 64) + 2 * up(n * sizeof(float), 64));
}

/* ---- building a rank's plan ---------------------------------------------- */

static void add(MemRank *r, const char *what, const char *key, uint64_t bytes, bool transient) {
    for (int i = 0; i < r->n; i++)
        if (!strcmp(r->item[i].what, what)) {
            r->item[i].bytes += bytes;
            r->total += bytes;
            return;
        }
    if (r->n == MEMPLAN_MAX_ITEMS) return; /* not reached: at most ~20 distinct items */
    r->item[r->n++] = (MemItem){.what = what, .key = key, .bytes = bytes, .transient = transient};
    r->total += bytes;
}

/* actorcore.c: actorcore_init for actor.envs environments, plus what its
 * owner keeps per environment (EpisodeEnd; the trainer's generators). */
static void plan_actorcore(MemRank *r, const Config *cfg, const QNet *net, bool local) {
    uint64_t E = (uint64_t)cfg->actor.envs, O = (uint64_t)net->spec.obs_dim, A = (uint64_t)net->spec.n_actions;
    uint64_t n = (uint64_t)cfg->agent.n_step;
    uint64_t envs = E * sizeof(Env) + 2 * E * O * sizeof(float) + O * sizeof(float) + 2 * E * A * sizeof(float) +
                    E * (sizeof(bool) + sizeof(double) + sizeof(int)) + E * sizeof(EpisodeEnd);
    if (local) envs += (E + 2) * sizeof(Rng); /* trainer.c: L->rngs */
    add(r, "environments", "actor.envs", envs, false);
    add(r, "n-step buffers", "agent.n_step", E * sizeof(NStep) + E * nstep_bytes(n, O), false);
    if (cfg->replay.kind == REPLAY_PRIORITIZED && cfg->replay.initial_priority == PRIORITY_ACTOR) {
        uint64_t rows = E * n;
        add(r, "initial-priority staging", "actor.envs",
            batch_bytes(rows, O) + rows * (sizeof(int) + 2 * sizeof(float)) + E * sizeof(int), false);
    }
    add(r, "acting activations", "actor.envs", qnet_work(net, 2 * E), false);
}

/* evaluator.c: evaluator_init with eval.episodes. */
static void plan_evaluator(MemRank *r, const Config *cfg, const QNet *net) {
    uint64_t episodes = (uint64_t)cfg->eval.episodes;
    uint64_t P = episodes < EVAL_MAX_PARALLEL ? episodes : EVAL_MAX_PARALLEL;
    uint64_t O = (uint64_t)net->spec.obs_dim, A = (uint64_t)net->spec.n_actions;
    uint64_t b = P * sizeof(Env) + P * sizeof(int) + P * O * sizeof(float) + P * A * sizeof(float) +
                 P * sizeof(int32_t) + P * sizeof(int) + episodes * sizeof(double) + qnet_work(net, P);
    add(r, "evaluation", "eval.episodes", b, false);
}

/* A parameter slice of len of the n parameters (pshard.c: pshard_init and
 * init_replies; runckpt.c: the optimizer copy a checkpoint writes). */
static void plan_pshard(MemRank *r, const Config *cfg, const Layout *lay, uint64_t len, uint64_t n, bool serves) {
    uint64_t st = optim_floats(cfg, len);
    add(r, "network parameters", "network.hidden", al64(len * sizeof(float)), false);
    add(r, "target network", "network.hidden", al64(len * sizeof(float)), false);
    add(r, "optimizer state", "network.hidden", al64(st * sizeof(float)), false);
    add(r, "initialisation scratch", "network.hidden", al64(n * sizeof(float)), true);
    if (serves) {
        uint64_t askers = 1 + (uint64_t)lay->count[ROLE_ACTOR] +
                          (!layout_params_in_learner(cfg) ? (uint64_t)lay->count[ROLE_LEARNER] : 0);
        add(r, "parameter replies", "network.hidden", askers * sendbuf(2 * len * sizeof(float)), false);
        add(r, "evaluation snapshot", "network.hidden", 2 * al64(len * sizeof(float)) + al64(st * sizeof(float)),
            false);
    }
    add(r, "checkpoint buffers", "network.hidden", 8 + st * sizeof(float), true);
}

/* role.c and comm.c: every rank's receive buffer and control buffers, and
 * its trace ring (logging.trace). */
static void plan_rank_common(MemRank *r, const Config *cfg, const Layout *lay, const QNet *net, Role role) {
    ProtoLimits lim = proto_limits(cfg, lay, net);
    size_t in = proto_max_payload(&lim);
    const char *key = NULL;
    if (in == proto_params_bytes(lim.n_params, 1)) key = "network.hidden";
    else if (in == proto_exp_layout(lim.max_chunk, lim.exp_row_bytes, 1).bytes) key = "actor.chunk";
    else if (in == proto_sample_layout(lim.max_batch, lim.obs_dim, 1).bytes) key = "replay.batch_size";
    add(r, "receive buffer", key, sendbuf(in), false);
    add(r, "control messages", NULL, MEMPLAN_CTL_SLOTS * al64(sizeof(MsgHeader) + MEMPLAN_CTL_PAYLOAD), false);
    if (cfg->logging.trace) {
        uint64_t b = (uint64_t)cfg->logging.trace_events * sizeof(TraceEvent);
        if (role != ROLE_COORD) b += sendbuf(proto_trace_bytes(PROTO_TRACE_PER_MSG));
        add(r, "trace", "logging.trace_events", b, false);
    }
}

/* trainer.c: local_init. */
static void plan_local(MemRank *r, const Config *cfg, const QNet *net) {
    uint64_t n = net->n_params, B = (uint64_t)cfg->replay.batch_size, O = (uint64_t)net->spec.obs_dim;
    uint64_t cap = cfg->replay.capacity, E = (uint64_t)cfg->actor.envs;
    bool prio = cfg->replay.kind == REPLAY_PRIORITIZED;
    uint64_t st = optim_floats(cfg, n);
    add(r, "replay storage", "replay.capacity", replay_storage(cap, obs_row_bytes(net)), false);
    if (prio) add(r, "sum tree", "replay.capacity", sum_tree(cap), false);
    add(r, "network parameters", "network.hidden", al64(n * sizeof(float)), false);
    add(r, "target network", "network.hidden", al64(n * sizeof(float)), false);
    add(r, "gradient", "network.hidden", al64(n * sizeof(float)), false);
    add(r, "optimizer state", "network.hidden", al64(st * sizeof(float)), false);
    add(r, "learning workspace", "replay.batch_size", dqn_bytes(net, B) + B * sizeof(float), false);
    add(r, "batches", "replay.batch_size",
        batch_bytes(E * (uint64_t)cfg->agent.n_step, O) + batch_bytes(B, O) +
            B * (sizeof(size_t) + sizeof(uint64_t) + sizeof(double)), /* sampled slots, ids, scratch */
        false);
    plan_actorcore(r, cfg, net, true);
    plan_evaluator(r, cfg, net);
    if (cfg->logging.trace)
        add(r, "trace", "logging.trace_events", (uint64_t)cfg->logging.trace_events * sizeof(TraceEvent), false);
    add(r, "checkpoint buffers", "network.hidden", 8 + st * sizeof(float), true);
    if (cfg->checkpoint.save_replay)
        add(r, "replay checkpoint buffer", "replay.capacity", replay_serial(cap, obs_row_bytes(net), prio), true);
}

/* coordinator.c: coordinator_run; jobtrace.c: jobtrace_init. */
static void plan_coord(MemRank *r, const Config *cfg, const Layout *lay, const QNet *net) {
    uint64_t n = net->n_params;
    plan_evaluator(r, cfg, net);
    add(r, "network parameters", "network.hidden", 2 * al64(n * sizeof(float)), false);
    if (cfg->logging.trace)
        add(r, "trace", "logging.trace_events",
            (uint64_t)lay->size * (uint64_t)cfg->logging.trace_events * sizeof(TraceEvent), false);
}

/* actor.c: actor_run. */
static void plan_actor(MemRank *r, const Config *cfg, const Layout *lay, const QNet *net) {
    uint64_t n = net->n_params, O = (uint64_t)net->spec.obs_dim;
    plan_actorcore(r, cfg, net, false);
    add(r, "network parameters", "network.hidden", 2 * al64(n * sizeof(float)), false);
    uint64_t max_n = proto_limits(cfg, lay, net).max_chunk;
    add(r, "experience chunks", "actor.chunk",
        batch_bytes(max_n, O) + ACTOR_CREDITS_PLAN * sendbuf(proto_exp_layout(max_n, obs_row_bytes(net), 1).bytes),
        false);
}

/* replay.c: replay_run. */
static void plan_replay(MemRank *r, const Config *cfg, const Layout *lay, const QNet *net, int s) {
    int S = lay->count[ROLE_REPLAY];
    uint64_t cap = pacing_split_max(cfg->replay.capacity, S), O = (uint64_t)net->spec.obs_dim;
    uint64_t B = (uint64_t)cfg->replay.batch_size, L = (uint64_t)lay->count[ROLE_LEARNER], R = obs_row_bytes(net);
    bool prio = cfg->replay.kind == REPLAY_PRIORITIZED;
    add(r, "replay storage", "replay.capacity", replay_storage(cap, R), false);
    if (prio) add(r, "sum tree", "replay.capacity", sum_tree(cap), false);
    add(r, "sample replies", "replay.batch_size",
        L * (uint64_t)cfg->learner.prefetch * sendbuf(proto_sample_layout(B, O, prio).bytes) + L * B * sizeof(double) +
            B * sizeof(size_t),
        false);
    uint64_t my_actors = pacing_split((uint64_t)lay->count[ROLE_ACTOR], S, s, NULL);
    uint64_t max_n = proto_limits(cfg, lay, net).max_chunk;
    add(r, "held experience chunks", "actor.chunk", (2 * my_actors + 2) * al64(proto_exp_layout(max_n, R, 1).bytes),
        false);
    if (cfg->checkpoint.save_replay)
        add(r, "replay checkpoint buffer", "replay.capacity", replay_serial(cap, R, prio), true);
}

/* A learner's send buffers of one slice per PS shard (GRAD, or easgd's
 * parameters): proto_grad_bytes of each shard_range. */
static uint64_t slice_bufs(uint64_t n, int P) {
    uint64_t b = 0;
    for (int p = 0; p < P; p++) {
        size_t off, len;
        shard_range((size_t)n, P, p, &off, &len);
        b += sendbuf(proto_grad_bytes(len));
    }
    return b;
}

/* learner.c and its parts: learnbatch_init (prio_init), the families' init
 * (learnps.c, learnring.c, learndecent.c). */
static void plan_learner(MemRank *r, const Config *cfg, const Layout *lay, const QNet *net, int l) {
    uint64_t n = net->n_params, B = (uint64_t)cfg->replay.batch_size, O = (uint64_t)net->spec.obs_dim;
    uint64_t S = (uint64_t)lay->count[ROLE_REPLAY];
    add(r, "gradient", "network.hidden", al64((n + 1) * sizeof(float)), false);
    if (cfg->learner.accumulate > 1) add(r, "accumulated gradient", "network.hidden", al64(n * sizeof(float)), false);
    add(r, "learning workspace", "replay.batch_size", dqn_bytes(net, B), false);
    /* cur and next, and learner.prefetch batches in flight (uniform replay) */
    add(r, "batches", "replay.batch_size", (2 + (uint64_t)cfg->learner.prefetch) * batch_bytes(B, O), false);
    if (cfg->replay.kind == REPLAY_PRIORITIZED) {
        uint64_t rows = S * (2 * sizeof(int) + sizeof(double)) + B * (2 * sizeof(uint64_t) + sizeof(double));
        uint64_t b = 2 * rows + S * (sizeof(double) + sizeof(uint64_t) + sizeof(int)) +
                     B * (sizeof(int) + sizeof(double) + sizeof(float)) +
                     S * (sendbuf(proto_sample_req_bytes(B, 1)) + sendbuf(proto_priority_layout(B).bytes));
        add(r, "prioritized sampling", "replay.batch_size", b, false);
    }
    uint64_t scratch = al64(MEMPLAN_RING_SCRATCH * sizeof(float));
    if (config_sync_no_ps(cfg->sync.mode)) {
        /* allreduce, gossip, local_sgd: a whole copy each (learner 0's serves) */
        plan_pshard(r, cfg, lay, n, n, l == 0);
        add(r, "allreduce scratch", NULL, scratch, false);
        if (cfg->sync.allreduce_impl == ALLREDUCE_HIERARCHICAL && l == 0) {
            /* allreduce.c hier_window: node rank 0 allocates the node's
             * window, a segment per learner of the node and the result
             * (at most every learner on one node), and leads the ring
             * among the nodes (its own scratch). */
            uint64_t L = (uint64_t)lay->count[ROLE_LEARNER];
            add(r, "hierarchical allreduce window", "network.hidden", (L + 1) * al64((n + 1) * sizeof(float)), false);
            add(r, "allreduce scratch", NULL, scratch, false);
        }
        if (cfg->sync.mode == SYNC_GOSSIP) {
            add(r, "stop-flag ring scratch", NULL, scratch, false);
            add(r, "gossip partner's parameters", "network.hidden", al64((n + 1) * sizeof(float)), false);
        }
    } else if (layout_params_in_learner(cfg)) {
        plan_pshard(r, cfg, lay, n, n, true);
    } else if (cfg->sync.mode == SYNC_EASGD) {
        plan_pshard(r, cfg, lay, n, n, false); /* the local copy; the center is on the PS shards */
        add(r, "parameter slices", "network.hidden", slice_bufs(n, lay->count[ROLE_PS]), false);
    } else {
        add(r, "network parameters", "network.hidden", al64(n * sizeof(float)), false);
        add(r, "target network", "network.hidden", al64(n * sizeof(float)), false);
        add(r, "gradient slices", "network.hidden", slice_bufs(n, lay->count[ROLE_PS]), false);
    }
}

/* ps.c: ps_run. */
static void plan_ps(MemRank *r, const Config *cfg, const Layout *lay, const QNet *net, int p) {
    size_t off, len;
    shard_range(net->n_params, lay->count[ROLE_PS], p, &off, &len);
    plan_pshard(r, cfg, lay, len, net->n_params, true);
    add(r, "gradient sum", "network.hidden", al64(len * sizeof(float)), false);
}

int memplan_rank(const Config *cfg, const Layout *lay, Role role, int index, MemRank *out, char *err) {
    memset(out, 0, sizeof *out);
    out->role = role;
    out->index = index;
    QNet net;
    if (agentcfg_qnet(cfg, &net, err) != 0) return -1;
    if (role == ROLE_LOCAL) {
        plan_local(out, cfg, &net);
        return 0;
    }
    plan_rank_common(out, cfg, lay, &net, role);
    switch (role) {
    case ROLE_COORD: plan_coord(out, cfg, lay, &net); break;
    case ROLE_ACTOR: plan_actor(out, cfg, lay, &net); break;
    case ROLE_REPLAY: plan_replay(out, cfg, lay, &net, index); break;
    case ROLE_LEARNER: plan_learner(out, cfg, lay, &net, index); break;
    case ROLE_PS: plan_ps(out, cfg, lay, &net, index); break;
    default: return errf(err, "memory plan: rank of role %s", role_name(role));
    }
    return 0;
}

/* ---- a set of ranks ------------------------------------------------------ */

/* The key that sets how many ranks a role has (NULL: the coordinator and
 * the local trainer, one rank whatever the config). */
static const char *rank_count_key(Role role) {
    switch (role) {
    case ROLE_ACTOR: return "roles.actors";
    case ROLE_REPLAY: return "roles.replay_shards";
    case ROLE_LEARNER: return "roles.learners";
    case ROLE_PS: return "roles.param_servers";
    default: return NULL;
    }
}

enum { MAX_KEYS = 16 };
typedef struct {
    const char *key;
    uint64_t total;                  /* over every rank planned */
    uint64_t role_total[ROLE_COUNT];
    uint64_t rank_max[ROLE_COUNT];   /* on the role's rank that holds most of it */
} KeyShare;

static void count_keys(KeyShare *k, int *nk, const MemRank *r) {
    uint64_t mine[MAX_KEYS] = {0};
    for (int i = 0; i < r->n; i++) {
        const MemItem *it = &r->item[i];
        if (!it->key) continue;
        int j = 0;
        while (j < *nk && strcmp(k[j].key, it->key) != 0) j++;
        if (j == *nk) {
            if (*nk == MAX_KEYS) continue; /* not reached: a dozen keys at most */
            memset(&k[j], 0, sizeof k[j]);
            k[j].key = it->key;
            (*nk)++;
        }
        mine[j] += it->bytes;
    }
    for (int j = 0; j < *nk; j++) {
        k[j].total += mine[j];
        k[j].role_total[r->role] += mine[j];
        if (mine[j] > k[j].rank_max[r->role]) k[j].rank_max[r->role] = mine[j];
    }
}

int memplan_ranks(const Config *cfg, const Layout *lay, const int *ranks, int n, MemPlan *plan, char *err) {
    memset(plan, 0, sizeof *plan);
    if (!ranks) n = lay->size;
    KeyShare keys[MAX_KEYS];
    int nk = 0;
    for (int i = 0; i < n; i++) {
        int rank = ranks ? ranks[i] : i;
        Role role;
        int index;
        layout_role_of(lay, rank, &role, &index);
        MemRank r;
        if (memplan_rank(cfg, lay, role, index, &r, err) != 0) return -1;
        MemRank *big = &plan->largest[role];
        if (plan->count[role] > 0 && r.total != big->total) plan->uneven[role] = true;
        if (plan->count[role] == 0 || r.total > big->total) *big = r;
        plan->count[role]++;
        plan->n_ranks++;
        plan->total += r.total;
        count_keys(keys, &nk, &r);
    }
    plan->need = plan->total + (uint64_t)plan->n_ranks * MEMPLAN_RANK_BASE;
    uint64_t best = 0;
    for (int j = 0; j < nk; j++) {
        if (keys[j].total <= best) continue;
        best = keys[j].total;
        plan->key = keys[j].key;
        plan->key_role = ROLE_COORD;
        for (int role = 0; role < ROLE_COUNT; role++)
            if (keys[j].role_total[role] > keys[j].role_total[plan->key_role]) plan->key_role = (Role)role;
        plan->key_rank_bytes = keys[j].rank_max[plan->key_role];
    }
    /* The per-rank base is a part too, sized by a role's rank count: 1,024
     * actors need 32 GiB of it, far more than their buffers, and the
     * advice must then be fewer actors, not a smaller network. */
    for (int role = 0; role < ROLE_COUNT; role++) {
        const char *count_key = rank_count_key((Role)role);
        uint64_t base = (uint64_t)plan->count[role] * MEMPLAN_RANK_BASE;
        if (!count_key || base <= best) continue;
        best = base;
        plan->key = count_key;
        plan->key_role = (Role)role;
        plan->key_rank_bytes = MEMPLAN_RANK_BASE;
        plan->key_is_count = true;
    }
    return 0;
}

/* ---- this machine -------------------------------------------------------- */

int memplan_parse_size(const char *s, uint64_t *bytes, char *err) {
    const char *p = s;
    if (!isdigit((unsigned char)*p)) return errf(err, "expected a size such as 512M or 16G, got \"%s\"", s);
    errno = 0;
    char *end;
    double v = strtod(p, &end);
    if (end != p + strspn(p, "0123456789.")) /* digits and a point: not 1e3 or 0x10 */
        return errf(err, "expected a size such as 512M or 16G, got \"%s\"", s);
    uint64_t mult = 1;
    switch (toupper((unsigned char)*end)) {
    case 'K': mult = (uint64_t)1 << 10; end++; break;
    case 'M': mult = (uint64_t)1 << 20; end++; break;
    case 'G': mult = (uint64_t)1 << 30; end++; break;
    case 'T': mult = (uint64_t)1 << 40; end++; break;
    default: break;
    }
    if (mult > 1 && (*end == 'i' || *end == 'I')) end++;
    if (*end == 'B' || *end == 'b') end++;
    if (*end != '\0' || errno == ERANGE || !(v > 0) || v * (double)mult >= 1.8e19)
        return errf(err, "expected a size such as 512M or 16G, got \"%s\"", s);
    *bytes = (uint64_t)(v * (double)mult);
    return 0;
}

/* "Name:   12345 kB" in a /proc/meminfo text: the bytes, or 0. */
static uint64_t meminfo_field(const char *text, const char *name) {
    size_t len = strlen(name);
    for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
        if (strncmp(p, name, len) != 0 || p[len] != ':') continue;
        unsigned long long kb = 0;
        if (sscanf(p + len + 1, "%llu", &kb) != 1) return 0;
        return (uint64_t)kb * 1024;
    }
    return 0;
}

int memplan_parse_meminfo(const char *text, uint64_t *bytes, bool *total_only) {
    *bytes = meminfo_field(text, "MemAvailable");
    *total_only = *bytes == 0;
    if (*total_only) *bytes = meminfo_field(text, "MemTotal");
    return *bytes ? 0 : -1;
}

/* The whole of a small text file into buf (cap bytes, NUL-terminated);
 * 0, or -1 when it cannot be read or is empty. */
static int read_text(const char *path, char *buf, size_t cap) {
    char err[ERR_LEN];
    return read_small_file(path, "", buf, cap, err) == 0 && buf[0] ? 0 : -1;
}

/* The limit in one cgroup file, or 0 for none ("max", a huge v1 number,
 * no file). */
static uint64_t limit_in(const char *path) {
    char text[64];
    unsigned long long v;
    if (read_text(path, text, sizeof text) != 0 || sscanf(text, "%llu", &v) != 1) return 0;
    return v >= (1ULL << 60) ? 0 : (uint64_t)v;
}

int memplan_parse_cgroup(char *text, char *path, size_t cap, bool *v1) {
    path[0] = '\0';
    *v1 = false;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2) continue;
        size_t clen = (size_t)(c2 - c1 - 1);
        bool memory = false;
        for (const char *c = c1 + 1; c < c2;) { /* comma-separated controllers */
            size_t len = strcspn(c, ",:");
            memory |= len == 6 && !strncmp(c, "memory", 6);
            c += len + (c[len] == ',');
        }
        if (clen == 0 || memory) {
            *v1 = memory;
            snprintf(path, cap, "%s", c2 + 1);
            if (memory) return 0; /* v1 wins over a v2 line beside it */
        }
    }
    return path[0] ? 0 : -1;
}

/* The tightest memory limit of this process's cgroup and its ancestors, in
 * bytes, or 0 when there is none (or none that can be read): v2 memory.max,
 * v1 memory.limit_in_bytes. A limit may sit at any level (a Slurm job, a
 * systemd slice, a container), so every level up to the root is read. */
static uint64_t cgroup_limit(void) {
    char own[1024] = "", file[1200];
    bool v1 = false;
    char text[4096];
    if (read_text("/proc/self/cgroup", text, sizeof text) != 0 || memplan_parse_cgroup(text, own, sizeof own, &v1) != 0)
        snprintf(own, sizeof own, "/");
    uint64_t best = 0;
    for (;;) {
        snprintf(file, sizeof file, v1 ? "/sys/fs/cgroup/memory%s/memory.limit_in_bytes" : "/sys/fs/cgroup%s/memory.max",
                 strcmp(own, "/") ? own : "");
        uint64_t lim = limit_in(file);
        if (lim && (!best || lim < best)) best = lim;
        char *slash = strrchr(own, '/');
        if (!slash || slash == own) {
            if (!strcmp(own, "/") || !own[0]) break;
            snprintf(own, sizeof own, "/");
            continue;
        }
        *slash = '\0';
    }
    return best;
}

int memplan_machine(MemMachine *m, char *err) {
    memset(m, 0, sizeof *m);
    char size[BYTES_STR_LEN];
    const char *env = getenv("GORILA_MEM_LIMIT");
    if (env && *env) { /* set but empty (GORILA_MEM_LIMIT= cmd) is unset */
        if (memplan_parse_size(env, &m->available, err) != 0) return err_prefix(err, "GORILA_MEM_LIMIT");
        snprintf(m->source, sizeof m->source, "GORILA_MEM_LIMIT %s", fmt_bytes(size, m->available));
    } else {
        char text[8192];
        bool total_only;
        if (read_text("/proc/meminfo", text, sizeof text) != 0 ||
            memplan_parse_meminfo(text, &m->available, &total_only) != 0)
            return errf(err, "cannot read this machine's memory from /proc/meminfo (set GORILA_MEM_LIMIT)");
        snprintf(m->source, sizeof m->source, "%s %s", total_only ? "MemTotal" : "MemAvailable",
                 fmt_bytes(size, m->available));
        uint64_t lim = cgroup_limit();
        if (lim && lim < m->available) {
            m->available = lim;
            snprintf(m->source, sizeof m->source, "the cgroup memory limit %s", fmt_bytes(size, lim));
        }
    }
    m->usable = (uint64_t)((double)m->available * MEMPLAN_USABLE);
    return 0;
}

int memplan_fits(const Config *cfg, const Layout *lay, const int *ranks, int n, char *err) {
    MemPlan plan;
    MemMachine m;
    if (memplan_ranks(cfg, lay, ranks, n, &plan, err) != 0 || memplan_machine(&m, err) != 0) return -1;
    return memplan_check(cfg, &plan, &m, err);
}

/* ---- the check and the printout ------------------------------------------ */

static const char *per_rank(Role r) {
    switch (r) {
    case ROLE_COORD: return "on the coordinator";
    case ROLE_ACTOR: return "per actor";
    case ROLE_REPLAY: return "per replay shard";
    case ROLE_LEARNER: return "per learner";
    case ROLE_PS: return "per parameter-server shard";
    case ROLE_LOCAL: return "in the local trainer";
    default: return "per rank";
    }
}

/* The value of one of the keys the plan names, as the config writes it. */
static void key_value(const Config *cfg, const char *key, char *buf, size_t cap) {
    long v = -1;
    if (!strcmp(key, "replay.capacity")) {
        snprintf(buf, cap, "%" PRIu64, cfg->replay.capacity);
        return;
    }
    if (!strcmp(key, "network.hidden")) {
        size_t n = (size_t)snprintf(buf, cap, "[");
        for (int i = 0; i < cfg->network.n_hidden && n < cap; i++)
            n += (size_t)snprintf(buf + n, cap - n, "%s%d", i ? ", " : "", cfg->network.hidden[i]);
        if (n < cap) snprintf(buf + n, cap - n, "]");
        return;
    }
    if (!strcmp(key, "replay.batch_size")) v = cfg->replay.batch_size;
    else if (!strcmp(key, "actor.envs")) v = cfg->actor.envs;
    else if (!strcmp(key, "actor.chunk")) v = cfg->actor.chunk;
    else if (!strcmp(key, "agent.n_step")) v = cfg->agent.n_step;
    else if (!strcmp(key, "eval.episodes")) v = cfg->eval.episodes;
    else if (!strcmp(key, "logging.trace_events")) v = cfg->logging.trace_events;
    snprintf(buf, cap, "%ld", v);
}

int memplan_check(const Config *cfg, const MemPlan *plan, const MemMachine *m, char *err) {
    if (plan->need <= m->usable) return 0;
    char need[BYTES_STR_LEN], usable[BYTES_STR_LEN], part[BYTES_STR_LEN];
    fmt_bytes(need, plan->need);
    fmt_bytes(usable, m->usable);
    char machine[320];
    if (plan->n_ranks == 1)
        snprintf(machine, sizeof machine, "%s in all, and this machine has %s usable (%d%% of %s)", need, usable,
                 (int)(MEMPLAN_USABLE * 100 + 0.5), m->source);
    else
        snprintf(machine, sizeof machine,
                 "the %d ranks on this machine need %s in all, and it has %s usable (%d%% of %s)", plan->n_ranks,
                 need, usable, (int)(MEMPLAN_USABLE * 100 + 0.5), m->source);
    if (!plan->key) return errf(err, "not enough memory: %s%s", plan->n_ranks == 1 ? "the run needs " : "", machine);
    if (plan->key_is_count) {
        fmt_bytes(part, (uint64_t)plan->count[plan->key_role] * MEMPLAN_RANK_BASE);
        char base[BYTES_STR_LEN];
        fmt_bytes(base, MEMPLAN_RANK_BASE);
        return errf(err, "%s: %d %s ranks need %s for code, libraries and MPI alone (%s each, before their "
                    "buffers); %s: lower %s", plan->key, plan->count[plan->key_role], role_name(plan->key_role), part,
                    base, machine, plan->key);
    }
    /* What the key sizes on the rank where it weighs most: the three
     * largest such items, largest first. */
    const MemRank *r = &plan->largest[plan->key_role];
    bool used[MEMPLAN_MAX_ITEMS] = {false};
    int listed = 0, more = 0;
    char items[160] = "";
    size_t n = 0;
    for (;;) {
        int best = -1;
        for (int i = 0; i < r->n; i++)
            if (!used[i] && r->item[i].key && !strcmp(r->item[i].key, plan->key) &&
                (best < 0 || r->item[i].bytes > r->item[best].bytes))
                best = i;
        if (best < 0) break;
        used[best] = true;
        if (listed == 3) {
            more++;
            continue;
        }
        if (n < sizeof items)
            n += (size_t)snprintf(items + n, sizeof items - n, "%s%s", listed ? ", " : "", r->item[best].what);
        listed++;
    }
    if (more && n < sizeof items) snprintf(items + n, sizeof items - n, " and %d more", more);
    char value[128];
    key_value(cfg, plan->key, value, sizeof value);
    fmt_bytes(part, plan->key_rank_bytes);
    return errf(err, "%s: %s needs %s %s (%s)%s%s: lower %s", plan->key, value, part, per_rank(plan->key_role), items,
                plan->n_ranks == 1 ? ", " : "; ", machine, plan->key);
}

void memplan_print(const MemPlan *plan, const MemMachine *m, FILE *f) {
    static const Role order[] = {ROLE_LOCAL, ROLE_COORD, ROLE_ACTOR, ROLE_REPLAY, ROLE_LEARNER, ROLE_PS};
    char b[BYTES_STR_LEN];
    fprintf(f, "memory plan (bytes each rank allocates; * = only at start-up or while checkpointing):\n");
    for (size_t k = 0; k < sizeof order / sizeof order[0]; k++) {
        Role role = order[k];
        if (plan->count[role] == 0) continue;
        const MemRank *r = &plan->largest[role];
        fmt_bytes(b, r->total);
        fprintf(f, "  %-12s %4d rank%s  %s%s%s\n", role_name(role), plan->count[role],
                plan->count[role] == 1 ? " " : "s", plan->uneven[role] ? "up to " : "", b,
                plan->count[role] > 1 ? " each" : "");
        for (int i = 0; i < r->n; i++) {
            fmt_bytes(b, r->item[i].bytes);
            fprintf(f, "      %-26s %10s%s  %s\n", r->item[i].what, b, r->item[i].transient ? "*" : " ",
                    r->item[i].key ? r->item[i].key : "(fixed)");
        }
    }
    char planned[BYTES_STR_LEN], total[BYTES_STR_LEN], base[BYTES_STR_LEN];
    fmt_bytes(planned, plan->total);
    fmt_bytes(total, plan->need);
    fmt_bytes(base, MEMPLAN_RANK_BASE);
    fprintf(f, "  on one machine: %d rank%s, %s planned + %s per rank for code, libraries and MPI = %s",
            plan->n_ranks, plan->n_ranks == 1 ? "" : "s", planned, base, total);
    if (m) {
        fmt_bytes(b, m->usable);
        fprintf(f, "; this machine has %s usable (%d%% of %s)", b, (int)(MEMPLAN_USABLE * 100 + 0.5), m->source);
    }
    fputc('\n', f);
}
