/* SPDX-License-Identifier: MIT */
/* pshard.h: one slice of the parameters as a parameter source holds it.
 *
 * A PShard owns the slice [off, off + len) of the flat parameters, the
 * same slice of the target network, the optimizer state of that slice,
 * their two versions, and the buffers its PARAMS replies are sent from.
 * Two roles hold one, so serving, applying and checkpointing have one
 * code path:
 *
 *   parameter-server shard p   the slice shard_range(n_params, P, p)
 *   learner l, allreduce mode  the whole network [0, n_params): learner 0
 *                              is the job's only parameter source; the
 *                              others hold replicas that only apply the
 *                              same steps (so the copies stay identical)
 *
 * Whom it talks to, through its owner's Comm (a source only):
 *
 *   requester   --PARAM_REQ-->  source  --PARAMS----->  requester
 *   learner     --GRAD------->  PS      --PARAMS----->  learner     (owner decides)
 *   coordinator --CKPT_REQ--->  source  --CKPT_DONE-->  coordinator
 *   source 0    --METRICS---->  coordinator   at once when a version
 *                               crosses an eval, checkpoint or update mark
 *
 * Versions: `version` counts optimizer steps applied to the slice;
 * `target_version` counts changes of the target slice, so a requester that
 * already holds the current target gets PARAMS without it. Both start at 0,
 * or at the checkpoint's values on resume.
 *
 * Only pshard_init of a replica (serves false), pshard_apply without a
 * report due, pshard_elastic_move and pshard_free stay off MPI; everything
 * else sends.
 */
#ifndef GORILA_PSHARD_H
#define GORILA_PSHARD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "comm.h"
#include "job.h"
#include "optim.h"
#include "role.h"

/* A CKPT_REQ as received. */
typedef struct {
    uint64_t id;              /* checkpoint sequence number */
    uint64_t run_id;
    uint64_t snapshot;        /* evaluation id of the snapshot to write; 0: the live state */
    char dir[PROTO_MAX_TEXT + 1];
} CkptReq;

/* The slice's state as it was sent to the coordinator for one evaluation
 * (PARAM_REQ with MSG_SNAPSHOT), so that the evaluated parameters can be
 * checkpointed exactly, with their optimizer state, after the evaluation
 * has decided they are the best so far or solve the env. One is kept: the
 * coordinator takes the next only after it has saved what it needed. */
typedef struct {
    float *params, *target;   /* (len) each */
    float *opt_state;         /* (opt.n_state) */
    uint64_t opt_step;
    uint64_t version, target_version;
    uint64_t id;              /* the evaluation id it was taken for; 0: none yet */
} PShardSnap;

typedef struct {
    RoleBase *rb;             /* the owner's (not owned): Comm, config, network, counters */
    int index;                /* checkpoint file ps-<index>.ckpt */
    size_t off, len;          /* the slice of the flat parameters */
    float *params, *target;   /* (len) each */
    Optim opt;                /* state of len parameters */
    uint64_t version;         /* optimizer steps applied */
    uint64_t target_version;  /* changes of the target slice */
    bool serves;              /* a parameter source (answers PARAM_REQ, CKPT_REQ) */
    int copy;                 /* >= 0: a learner's own copy (decentralized modes), written as
                                 learner-<copy>.ckpt on CKPT_REQ; -1: none (pshard_init) */
    SendBuf *reply;           /* (job size) PARAMS reply per requester rank; .buf is
                                 NULL for a rank that never asks */
    SendBuf **bufs;           /* (n_bufs) the allocated replies, for role_shutdown */
    int n_bufs;
    PShardSnap snap;          /* allocated when serving */
    /* a final checkpoint request the owner asked to hold back */
    bool final_pending;
    CkptReq final;
} PShard;

/* Set up the slice of len floats at off of rb's network, for shard file
 * ps-<index>.ckpt. params, target, optimizer state and versions come from
 * the checkpoint args->start.ckpt_dir when args->start.resumed (dies with
 * the reader's message if it cannot be read); otherwise the whole network
 * is drawn from the run seed as a local run draws it, and the slice kept,
 * with target = params. Sets rb->m.params_version.
 * serves: this rank is a parameter source; one PARAMS reply buffer of
 * proto_params_bytes(len, 1) is allocated for each rank that may ask (the
 * coordinator, every actor, and in the PS modes every learner), so no
 * message handler allocates. rb is kept (not owned) and must outlive s. */
void pshard_init(PShard *s, RoleBase *rb, const JobArgs *args, int index, size_t off, size_t len, bool serves);

/* Learner `learner`'s own copy of the whole network in a decentralized
 * mode, serving nothing: pshard_init of [0, n_params), except that on
 * resume it reads learner-<learner>.ckpt when the checkpoint holds one
 * (runckpt_read_copy: its own parameters, target, optimizer state and
 * versions), and the parameter sources' state otherwise (a checkpoint
 * written without copies: from an evaluation's snapshot, by another
 * learner count, or before copies existed), which it says in a log line.
 * Answers CKPT_REQ with its copy (pshard_on_ckpt_req). */
void pshard_init_copy(PShard *s, RoleBase *rb, const JobArgs *args, int learner);
void pshard_free(PShard *s); /* safe on a zeroed PShard; sends must be complete */

/* One optimizer step with grad (len floats, already averaged; not kept),
 * version + 1, then the target rule (agentcfg_target_update) for the new
 * version, target_version + 1 if the target changed. Sets
 * rb->m.params_version. Touches no other counter and sends nothing. */
void pshard_apply(PShard *s, const float *grad);

/* The first rank of its role (PS shard 0, learner 0) sends METRICS at once
 * when version just reached a multiple of eval.every_updates or
 * checkpoint.every_updates, or run.max_updates, so the coordinator
 * evaluates, checkpoints or stops without waiting a metrics period. Call
 * after pshard_apply, once the owner's counters are up to date. */
void pshard_report_if_due(PShard *s);

/* easgd (Zhang, Choromanska and LeCun 2015): the center moves toward a
 * learner's parameters x (len floats of the slice) by the elastic force
 * alpha, d = alpha (x - center), center += d, and PARAMS with MSG_ELASTIC
 * carrying d go back to rank, which moves its own copy by -d (the
 * symmetric pull of the elastic term). version advances by steps (the
 * learner's updates since its last exchange), so the center's version
 * counts the learners' updates as a PS's counts gradients; the target
 * slice follows the target rule at every version crossed. Reports (as
 * pshard_report_if_due) when a mark was crossed. */
void pshard_elastic(PShard *s, int rank, const float *x, float alpha, uint64_t steps);

/* pshard_elastic's arithmetic, off MPI: d = alpha (x - center) into d (len
 * floats), center += d, then `steps` versions with the target rule. */
void pshard_elastic_move(PShard *s, const float *x, float alpha, uint64_t steps, float *d);

/* PARAMS to rank: slice, version, offset and target version, plus the
 * target slice when with_target. Waits (never spinning) for that rank's
 * previous reply to leave. s must serve; dies when rank is not one that
 * may ask (pshard_init). */
void pshard_send_params(PShard *s, int rank, bool with_target);

/* Answer PARAM_REQ m: PARAMS to its sender, with the target slice unless it
 * wants none (MSG_NO_TARGET) or already holds target_version (m->h.param_req.target_held).
 * With MSG_SNAPSHOT (the coordinator, before an evaluation), first copy the
 * whole slice state into s->snap for evaluation id m->h.version. */
void pshard_on_param_req(PShard *s, const Msg *m);

/* Answer CKPT_REQ m (from the coordinator; s must serve, or be a learner
 * copy, which writes learner-<copy>.ckpt instead): write the shard file into the
 * directory m names and send CKPT_DONE (MSG_FAILED with the reason when
 * the write failed; the run goes on). With MSG_SNAPSHOT, the file holds the
 * snapshot of evaluation m->h.ckpt_req.snapshot (fails if that is not the one held) and
 * is written at once; otherwise the live state, and with hold_final and
 * MSG_FINAL in m the request is kept for pshard_write_held instead. */
void pshard_on_ckpt_req(PShard *s, const Msg *m, bool hold_final);

/* Write and answer the held final request, if any (else nothing). */
void pshard_write_held(PShard *s);

#endif
