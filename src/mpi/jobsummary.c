/* SPDX-License-Identifier: MIT */
/* jobsummary.c: see jobsummary.h. */
#include "jobsummary.h"
#include "gossip.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

void jobsummary_columns(JobSummaryColumns *cols) {
    for (int k = 0; k < TAG_COUNT; k++) {
        snprintf(cols->bytes[k], sizeof cols->bytes[k], "bytes_%s", proto_tag_name(TAG_FIRST + k));
        cols->name[k] = cols->bytes[k];
    }
    cols->name[TAG_COUNT] = "staleness_mean";
    cols->name[TAG_COUNT + 1] = "stale_drops";
    cols->name[TAG_COUNT + 2] = "replay_size";
    cols->name[TAG_COUNT + 3] = "replay_inserted";
    cols->name[TAG_COUNT + 4] = "replay_sampled";
    cols->name[TAG_COUNT + 5] = "consensus_distance";
}

void jobsummary_row(const Layout *lay, const RoleMetrics *last, double *extra, double *loss_sum, uint64_t *loss_n,
                double *epsilon) {
    uint64_t bytes[TAG_COUNT] = {0}, stale[PROTO_STALENESS_BINS] = {0}, drops = 0, rsize = 0;
    uint64_t inserted = 0, sampled = 0;
    double cons = 0;
    int n_cons = 0;
    *loss_sum = 0;
    *loss_n = 0;
    *epsilon = NAN;
    for (int r = 1; r < lay->size; r++) {
        const RoleMetrics *m = &last[r];
        for (int k = 0; k < TAG_COUNT; k++) bytes[k] += m->bytes_sent[k];
        if (m->role == ROLE_LEARNER) {
            *loss_sum += m->loss_sum;
            *loss_n += m->updates;
            if (m->consensus_version) cons += m->consensus, n_cons++;
        }
        if (m->role == ROLE_PS) {
            for (int k = 0; k < PROTO_STALENESS_BINS; k++) stale[k] += m->staleness[k];
            drops += m->drops;
        }
        if (m->role == ROLE_REPLAY) {
            rsize += m->replay_size;
            inserted += m->inserted;
            sampled += m->sampled;
        }
        if (m->role == ROLE_ACTOR && m->index == 0) *epsilon = m->epsilon;
    }
    double sn = 0, ss = 0;
    for (int k = 0; k < PROTO_STALENESS_BINS; k++) {
        sn += (double)stale[k];
        ss += (double)stale[k] * k;
    }
    for (int k = 0; k < TAG_COUNT; k++) extra[k] = (double)bytes[k];
    extra[TAG_COUNT] = sn > 0 ? ss / sn : NAN;
    extra[TAG_COUNT + 1] = (double)drops;
    extra[TAG_COUNT + 2] = (double)rsize;
    extra[TAG_COUNT + 3] = (double)inserted;
    extra[TAG_COUNT + 4] = (double)sampled;
    /* the decentralized modes: the learners' last measured distances */
    extra[TAG_COUNT + 5] = n_cons ? cons / n_cons : NAN;
}

/* Sum of one uint64_t counter of RoleMetrics over the ranks of a role. */
static uint64_t role_sum(const Layout *lay, const RoleMetrics *last, Role role, size_t offset) {
    uint64_t sum = 0;
    for (int i = 0; i < lay->count[role]; i++) {
        const RoleMetrics *m = &last[layout_rank_of(lay, role, i)];
        uint64_t v;
        memcpy(&v, (const char *)m + offset, sizeof v);
        sum += v;
    }
    return sum;
}

void jobsummary_summary(const Config *cfg, const Layout *lay, const RoleMetrics *last, RunSummary *sum) {
    sum->run_gradients = role_sum(lay, last, ROLE_LEARNER, offsetof(RoleMetrics, updates));
    sum->run_samples_trained = role_sum(lay, last, ROLE_LEARNER, offsetof(RoleMetrics, samples_trained));
    sum->prioritized = cfg->replay.kind == REPLAY_PRIORITIZED;
    sum->stale_priority_updates = role_sum(lay, last, ROLE_REPLAY, offsetof(RoleMetrics, stale_priority_updates));
}

/* decentral: the job's sync mode is decentralized, where every learner
 * reports sync_rounds, 0 included (a learner the machine's load starved
 * may have made none). */
static void role_specific_json(JsonW *j, const RoleMetrics *m, bool decentral) {
    switch ((Role)m->role) {
    case ROLE_ACTOR:
        json_u64(j, "env_steps", m->env_steps);
        json_u64(j, "episodes", m->episodes);
        json_num(j, "epsilon", m->epsilon);
        json_num(j, "stepping_seconds", m->stepping_seconds);
        json_num(j, "stepping_cpu_seconds", m->stepping_cpu_seconds);
        break;
    case ROLE_REPLAY:
        json_u64(j, "inserted", m->inserted);
        json_u64(j, "sampled", m->sampled);
        json_u64(j, "sampled_unpaced", m->sampled_unpaced);
        json_u64(j, "size", m->replay_size);
        json_u64(j, "priority_updates", m->priority_updates);
        json_u64(j, "stale_priority_updates", m->stale_priority_updates);
        break;
    case ROLE_LEARNER:
        json_u64(j, "gradients", m->updates);
        json_u64(j, "samples_trained", m->samples_trained);
        json_num(j, "mean_loss", m->updates ? m->loss_sum / (double)m->updates : NAN);
        json_u64(j, "params_version", m->params_version);
        json_u64(j, "loss_outliers_dropped", m->loss_outliers);
        if (decentral || m->sync_rounds) json_u64(j, "sync_rounds", m->sync_rounds);
        if (m->consensus_version) {
            json_num(j, "consensus_distance", m->consensus);
            json_u64(j, "consensus_at_version", m->consensus_version);
        }
        if (m->ring_rounds) {
            json_begin_object(j, "ring");
            json_u64(j, "rounds", m->ring_rounds);
            json_u64(j, "msgs_sent", m->ring_msgs_sent);
            json_u64(j, "bytes_sent", m->ring_bytes_sent);
            json_u64(j, "msgs_recv", m->ring_msgs_recv);
            json_u64(j, "bytes_recv", m->ring_bytes_recv);
            json_num(j, "seconds", m->ring_seconds);
            json_end_object(j);
        }
        break;
    case ROLE_PS:
        json_u64(j, "updates", m->updates);
        json_u64(j, "params_version", m->params_version);
        json_u64(j, "drops", m->drops);
        json_num(j, "apply_seconds", m->apply_seconds);
        json_num(j, "apply_latency_us", m->updates ? 1e6 * m->apply_seconds / (double)m->updates : NAN);
        json_begin_array(j, "staleness_histogram");
        for (int k = 0; k < PROTO_STALENESS_BINS; k++) json_u64(j, NULL, m->staleness[k]);
        json_end_array(j);
        break;
    default: break;
    }
}

static void role_json(JsonW *j, const RoleMetrics *m, int rank, bool decentral) {
    json_begin_object(j, NULL);
    json_u64(j, "rank", (uint64_t)rank);
    json_u64(j, "index", (uint64_t)m->index);
    role_specific_json(j, m, decentral);
    json_num(j, "busy_seconds", m->busy_seconds);
    json_num(j, "wait_seconds", m->wait_seconds);
    json_num(j, "cpu_seconds", m->cpu_seconds);
    const char *dir[4] = {"msgs_sent", "bytes_sent", "msgs_recv", "bytes_recv"};
    const uint64_t *arr[4] = {m->msgs_sent, m->bytes_sent, m->msgs_recv, m->bytes_recv};
    for (int d = 0; d < 4; d++) {
        json_begin_object(j, dir[d]);
        for (int k = 0; k < TAG_COUNT; k++)
            if (arr[d][k]) json_u64(j, proto_tag_name(TAG_FIRST + k), arr[d][k]);
        json_end_object(j);
    }
    json_end_object(j);
}

/* The roles of a job in summary.json's order (rank order), named there by
 * role_name. */
enum { N_ROLES = 5 };
static const Role roles[N_ROLES] = {ROLE_COORD, ROLE_ACTOR, ROLE_REPLAY, ROLE_LEARNER, ROLE_PS};

/* Traffic: total bytes sent by every rank, by message type (the ring's
 * own messages as "ring"), per update, and per update by role. */
static void traffic_json(JsonW *j, const Layout *lay, const RoleMetrics *last, uint64_t run_updates) {
    uint64_t total = 0, by[TAG_COUNT] = {0}, ring = 0, drops = 0, outliers = 0, by_role[N_ROLES] = {0};
    for (int r = 0; r < lay->size; r++) {
        const RoleMetrics *m = &last[r];
        uint64_t mine = m->ring_bytes_sent;
        for (int k = 0; k < TAG_COUNT; k++) by[k] += m->bytes_sent[k], mine += m->bytes_sent[k];
        ring += m->ring_bytes_sent;
        if (m->role == ROLE_PS) drops += m->drops;
        if (m->role == ROLE_LEARNER) outliers += m->loss_outliers;
        for (int k = 0; k < N_ROLES; k++)
            if (m->role == (int32_t)roles[k]) by_role[k] += mine;
    }
    json_begin_object(j, "bytes_sent");
    for (int k = 0; k < TAG_COUNT; k++) {
        json_u64(j, proto_tag_name(TAG_FIRST + k), by[k]);
        total += by[k];
    }
    json_u64(j, "ring", ring);
    total += ring;
    json_end_object(j);
    double per = run_updates ? 1.0 / (double)run_updates : NAN;
    json_num(j, "bytes_per_update", (double)total * per);
    json_begin_object(j, "bytes_per_update_by_role");
    for (int k = 0; k < N_ROLES; k++)
        if (lay->count[roles[k]] > 0) json_num(j, role_name(roles[k]), (double)by_role[k] * per);
    json_end_object(j);
    json_u64(j, "stale_gradients_dropped", drops);
    json_u64(j, "loss_outliers_dropped", outliers);
}

double jobsummary_gossip_paired(const Config *cfg, const Layout *lay, int learner, uint64_t rounds) {
    int L = lay->count[ROLE_LEARNER];
    if (rounds == 0) return L % 2 == 0 ? 1.0 : (double)(L - 1) / L;
    return (double)gossip_paired_rounds(cfg->sync.gossip_topology, L, learner, rounds, cfg->run.seed) / (double)rounds;
}

bool jobsummary_model_bytes(const Config *cfg, const Layout *lay, size_t n, int learner, double updates_per_gradient,
                        uint64_t rounds, double *sent, double *recv) {
    double N = lay->count[ROLE_LEARNER], K = 4.0 * (double)n, hdr = (double)sizeof(MsgHeader);
    /* learner.accumulate: one sync per A gradients, so 1/A of a sync's
     * bytes per gradient. */
    double A = cfg->learner.accumulate;
    if (cfg->sync.mode == SYNC_GOSSIP) {
        /* n floats each way per round it is paired in (jobsummary_gossip_paired:
         * the fraction of the rounds so far), a round every gossip_every */
        double f = jobsummary_gossip_paired(cfg, lay, learner, rounds);
        *sent = *recv = 4.0 * (double)n * f / (A * cfg->sync.gossip_every);
        return true;
    }
    if (cfg->sync.mode == SYNC_EASGD) {
        /* its parameters up and the center's move down, slice by slice */
        double P = lay->count[ROLE_PS];
        *sent = *recv = (P * hdr + K) / (A * cfg->sync.easgd_every);
        return true;
    }
    if (cfg->sync.mode == SYNC_ALLREDUCE || cfg->sync.mode == SYNC_LOCAL_SGD) {
        /* local_sgd: the allreduce of n + 1 floats every average_every */
        double H = cfg->sync.mode == SYNC_LOCAL_SGD ? cfg->sync.average_every : 1;
        double round = 4.0 * (double)(n + 1) / (A * H);
        switch (cfg->sync.allreduce_impl) {
        case ALLREDUCE_RING: *sent = *recv = N > 1 ? 2.0 * (N - 1) / N * round : 0; return true;
        case ALLREDUCE_NAIVE: *sent = *recv = learner == 0 ? (N - 1) * round : N > 1 ? round : 0; return true;
        /* mpi: its traffic is not visible; hierarchical: it depends on how
         * many learners share each node (the placement), not on the config */
        default: return false;
        }
    }
    if (layout_params_in_learner(cfg)) { /* the one learner applies its own gradient */
        *sent = *recv = 0;
        return true;
    }
    double P = lay->count[ROLE_PS];
    double pull = cfg->sync.mode == SYNC_PS_SYNC ? 1 : cfg->sync.learner_pull_every;
    /* Target changes between two of this learner's pulls: with soft
     * updates every PS update; with hard ones every target_every PS
     * updates, which are one per round of N gradients in ps_sync and one
     * per gradient (of any learner) otherwise; a learner slower than the
     * others sees more of them per pull (updates_per_gradient). A pull
     * follows every pull-th push, a push every A gradients. */
    double updates_per_push = updates_per_gradient > 0 ? updates_per_gradient * A
                              : cfg->sync.mode == SYNC_PS_SYNC ? 1
                                                               : N;
    double updates_per_pull = updates_per_push * pull;
    double target = cfg->agent.target_update == TARGET_SOFT ? 1 : fmin(1, updates_per_pull / cfg->agent.target_every);
    *sent = (P * hdr + K) / A;
    *recv = (P * hdr + K + target * K) / (pull * A);
    return true;
}

const char *jobsummary_evaluated(const Config *cfg) {
    switch (cfg->sync.mode) {
    case SYNC_ALLREDUCE: return "learner 0's copy (every learner's is the same)";
    case SYNC_LOCAL_SGD: return "learner 0's copy (equal to the others' only right after an average)";
    case SYNC_GOSSIP: return "learner 0's copy (the learners' copies differ)";
    case SYNC_EASGD: return "the center variable on the parameter servers";
    default: return layout_params_in_learner(cfg) ? "the learner's" : "the parameter servers'";
    }
}

/* A learner's sync traffic: PS modes GRAD and PARAM_REQ out, PARAMS in;
 * allreduce the algorithm's own messages. */
static void sync_bytes(const RoleMetrics *m, double *sent, double *recv) {
    int g = TAG_GRAD - TAG_FIRST, q = TAG_PARAM_REQ - TAG_FIRST, p = TAG_PARAMS - TAG_FIRST;
    *sent = (double)(m->bytes_sent[g] + m->bytes_sent[q] + m->ring_bytes_sent);
    *recv = (double)(m->bytes_recv[p] + m->ring_bytes_recv);
}

static void learner_json(JsonW *j, const Config *cfg, const Layout *lay, const RoleMetrics *m, int rank, size_t n,
                         uint64_t run_updates) {
    double per = m->updates ? 1.0 / (double)m->updates : NAN, sent, recv, msent, mrecv;
    sync_bytes(m, &sent, &recv);
    /* The PS updates per gradient of this learner, as they happened. */
    double upg = m->updates ? (double)run_updates / (double)m->updates : 0;
    bool model = jobsummary_model_bytes(cfg, lay, n, m->index, upg, m->sync_rounds, &msent, &mrecv);
    json_begin_object(j, NULL);
    json_u64(j, "rank", (uint64_t)rank);
    json_u64(j, "index", (uint64_t)m->index);
    json_u64(j, "gradients", m->updates);
    json_num(j, "sync_bytes_sent_per_gradient", sent * per);
    json_num(j, "sync_bytes_recv_per_gradient", recv * per);
    json_num(j, "model_bytes_sent_per_gradient", model ? msent : NAN);
    json_num(j, "model_bytes_recv_per_gradient", model ? mrecv : NAN);
    json_num(j, "compute_seconds_per_gradient", m->compute_seconds * per);
    json_num(j, "sync_seconds_per_gradient", m->sync_seconds * per);
    json_num(j, "sample_wait_seconds_per_gradient", m->sample_wait_seconds * per);
    json_end_object(j);
}

static void ps_json(JsonW *j, const RoleMetrics *m, int rank, double run_seconds) {
    uint64_t in = 0, out = 0;
    for (int k = 0; k < TAG_COUNT; k++) in += m->bytes_recv[k], out += m->bytes_sent[k];
    double t = m->busy_seconds + m->wait_seconds;
    json_begin_object(j, NULL);
    json_u64(j, "rank", (uint64_t)rank);
    json_u64(j, "index", (uint64_t)m->index);
    json_num(j, "busy_fraction", t > 0 ? m->busy_seconds / t : NAN);
    json_num(j, "bytes_in_per_second", run_seconds > 0 ? (double)in / run_seconds : NAN);
    json_num(j, "bytes_out_per_second", run_seconds > 0 ? (double)out / run_seconds : NAN);
    json_num(j, "bytes_in_per_update", m->updates ? (double)in / (double)m->updates : NAN);
    json_end_object(j);
}

/* per_worker: the costs of syncing, per learner and per gradient, against
 * the model; per parameter-server shard its load. */
static void per_worker_json(JsonW *j, const Config *cfg, const Layout *lay, const RoleMetrics *last, size_t n,
                            uint64_t run_updates, double run_seconds) {
    json_begin_object(j, "per_worker");
    json_u64(j, "n_params", (uint64_t)n);
    json_u64(j, "n_learners", (uint64_t)lay->count[ROLE_LEARNER]);
    json_u64(j, "n_param_servers", (uint64_t)lay->count[ROLE_PS]);
    json_begin_array(j, "learners");
    for (int i = 0; i < lay->count[ROLE_LEARNER]; i++) {
        int rank = layout_rank_of(lay, ROLE_LEARNER, i);
        learner_json(j, cfg, lay, &last[rank], rank, n, run_updates);
    }
    json_end_array(j);
    json_begin_array(j, "ps_shards");
    for (int i = 0; i < lay->count[ROLE_PS]; i++) {
        int rank = layout_rank_of(lay, ROLE_PS, i);
        ps_json(j, &last[rank], rank, run_seconds);
    }
    json_end_array(j);
    json_end_object(j);
}

void jobsummary_json(JsonW *j, const Config *cfg, const Layout *lay, const RoleMetrics *last, uint64_t run_updates,
                 size_t n_params, double run_seconds) {
    if (cfg->sync.mode == SYNC_ALLREDUCE || cfg->sync.mode == SYNC_LOCAL_SGD)
        json_str(j, "allreduce_impl", config_allreduce_impl_name(cfg->sync.allreduce_impl));
    json_str(j, "evaluated_parameters", jobsummary_evaluated(cfg));
    traffic_json(j, lay, last, run_updates);
    json_begin_object(j, "roles");
    for (int k = 0; k < N_ROLES; k++) {
        if (lay->count[roles[k]] == 0) continue;
        json_begin_array(j, role_name(roles[k]));
        for (int i = 0; i < lay->count[roles[k]]; i++) {
            int rank = layout_rank_of(lay, roles[k], i);
            role_json(j, &last[rank], rank, config_sync_decentral(cfg->sync.mode));
        }
        json_end_array(j);
    }
    json_end_object(j);
    per_worker_json(j, cfg, lay, last, n_params, run_updates, run_seconds);
}
