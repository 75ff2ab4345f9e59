/* SPDX-License-Identifier: MIT */
/* mpi_proto.c: a malformed message must be a clear fatal error naming the
 * sender, never memory corruption. Run with 2 ranks by tests/mpi/errors.sh:
 * rank 1 sends one bad message (argv[1] picks which), rank 0 receives it
 * with comm_poll, which must abort the job with a message on stderr; the
 * script checks the text. With "good", rank 1 sends a valid GRAD and rank 0
 * prints "ok" (so a broken sender cannot make the test pass). Tracing is on
 * (64 events per rank) except for "trace-off"; replay is prioritized with
 * shards of 100 slots except for "priority-uniform". */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm.h"
#include "util.h"

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    const char *what = argc > 1 ? argv[1] : "good";
    Ctx ctx;
    MPI_Comm world;
    comm_world_init(&ctx, &world);
    ctx.role = ctx.rank == 0 ? ROLE_PS : ROLE_LEARNER;
    /* A layout of 2 ranks: 0 and 1 play whatever roles the test says. */
    Layout lay = {.size = 2};
    for (int r = 0; r < ROLE_COUNT; r++) lay.first[r] = -1;
    lay.first[ROLE_PS] = 0;
    lay.count[ROLE_PS] = 1;
    lay.first[ROLE_LEARNER] = 1;
    lay.count[ROLE_LEARNER] = 1;
    ProtoLimits lim = {.obs_dim = 4, .exp_row_bytes = 4 * sizeof(float), .n_params = 100, .max_batch = 32,
                       .max_chunk = 16,
                       .max_trace = strcmp(what, "trace-off") ? 64 : 0,
                       .prioritized = strcmp(what, "priority-uniform") != 0, .shard_capacity = 100};
    Comm c;
    comm_init(&c, &ctx, world, &lay, &lim);
    if (ctx.rank == 1) {
        uint8_t buf[2048] = {0};
        MsgHeader h = {.tag = TAG_GRAD, .count = 10};
        int bytes = (int)(sizeof h + 40), tag = TAG_GRAD;
        if (!strcmp(what, "short")) bytes = 12;
        else if (!strcmp(what, "tag")) h.tag = TAG_PARAMS;
        else if (!strcmp(what, "size")) bytes = (int)(sizeof h + 36);
        else if (!strcmp(what, "count")) h.count = 1000, bytes = (int)(sizeof h + 4000);
        else if (!strcmp(what, "unknown")) tag = 99, h.tag = 99;
        else if (!strncmp(what, "trace", 5)) { /* -off: 1 event of 1, -range: events 60..69 of 64 */
            bool range = !strcmp(what, "trace-range");
            tag = TAG_TRACE;
            h = (MsgHeader){.tag = TAG_TRACE, .count = range ? 10 : 1, .version = range ? 60 : 0,
                            .sample_req.charged = range ? 64 : 1};
            bytes = (int)(sizeof h + proto_trace_bytes(h.count));
        }
        else if (!strncmp(what, "priority", 8)) { /* -slot: slot 100 of 100; -nan: |td| NaN; -uniform */
            tag = TAG_PRIORITY;
            h = (MsgHeader){.tag = TAG_PRIORITY, .count = 2};
            PriorityLayout pl = proto_priority_layout(2);
            uint64_t slot[2] = {3, strcmp(what, "priority-slot") ? 4 : 100};
            float td[2] = {0.5f, strcmp(what, "priority-nan") ? 1.0f : NAN};
            memcpy(buf + sizeof h + pl.slot, slot, sizeof slot);
            memcpy(buf + sizeof h + pl.td, td, sizeof td);
            bytes = (int)(sizeof h + pl.bytes);
        } else if (!strcmp(what, "experience-inf")) { /* one transition, priority +inf */
            tag = TAG_EXPERIENCE;
            h = (MsgHeader){.tag = TAG_EXPERIENCE, .count = 1, .flags = MSG_HAS_PRIORITY};
            ExpLayout el = proto_exp_layout(1, lim.exp_row_bytes, 1);
            float inf = INFINITY;
            memcpy(buf + sizeof h + el.priority, &inf, sizeof inf);
            bytes = (int)(sizeof h + el.bytes);
        } else if (!strcmp(what, "sample-frac")) { /* a prioritized request for 1 row at position 1.5 */
            tag = TAG_SAMPLE_REQ;
            h = (MsgHeader){.tag = TAG_SAMPLE_REQ, .count = 1, .sample_req.charged = 1, .flags = MSG_PRIORITIZED};
            double f = 1.5;
            memcpy(buf + sizeof h, &f, sizeof f);
            bytes = (int)(sizeof h + 8);
        }
        memcpy(buf, &h, sizeof h);
        MPI_Send(buf, bytes, MPI_BYTE, 0, tag, world);
    } else {
        Msg m;
        while (!comm_poll(&c, &m)) comm_idle(&c);
        printf("ok: %s from rank %d, %zu bytes\n", proto_tag_name(m.tag), m.source, m.bytes);
    }
    MPI_Barrier(world);
    comm_free(&c);
    comm_world_free(&ctx, &world);
    MPI_Finalize();
    return 0;
}
