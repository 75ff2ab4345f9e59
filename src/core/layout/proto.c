/* SPDX-License-Identifier: MIT */
/* proto.c: see proto.h. */
#include "proto.h"
#include "obsrow.h"
#include "pacing.h"

static const char *const tag_names[] = {
    "experience", "experience_ack", "sample_req", "sample", "priority", "grad",    "param_req",
    "params",     "metrics",        "episodes",   "ckpt_req", "ckpt_done", "stop", "stopped", "exit",
    "trace",      "stop_req",
};
_Static_assert(sizeof tag_names / sizeof *tag_names == TAG_COUNT, "one name per tag of proto.h");

const char *proto_tag_name(int tag) {
    if (tag >= TAG_FIRST && tag < TAG_LAST_) return tag_names[tag - TAG_FIRST];
    if (tag == TAG_RING) return "ring";
    if (tag == TAG_NAIVE) return "naive";
    return "unknown";
}

ProtoLimits proto_limits(const Config *cfg, const Layout *lay, const QNet *net) {
    ProtoLimits lim = {
        .obs_dim = (size_t)net->spec.obs_dim,
        .exp_row_bytes = obsrow_for_net(&net->spec).bytes,
        .n_params = net->n_params,
        .max_batch = (size_t)cfg->replay.batch_size,
        .max_chunk = (size_t)cfg->actor.chunk + 2 * (size_t)cfg->actor.envs * (size_t)cfg->agent.n_step,
        .prioritized = cfg->replay.kind == REPLAY_PRIORITIZED,
        .shard_capacity = (size_t)pacing_split_max(cfg->replay.capacity, lay->count[ROLE_REPLAY]),
        .max_trace = cfg->logging.trace ? (size_t)cfg->logging.trace_events : 0,
    };
    return lim;
}
