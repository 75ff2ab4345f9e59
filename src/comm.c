/* comm.c: see comm.h. */
#include "comm.h"
#include "util.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MPI_CHECK(ctx, call)                                                                   \
    do {                                                                                       \
        int rc_ = (call);                                                                      \
        if (rc_ != MPI_SUCCESS) {                                                              \
            char s_[MPI_MAX_ERROR_STRING];                                                     \
            int n_ = 0;                                                                        \
            MPI_Error_string(rc_, s_, &n_);                                                    \
            die_at((ctx), __FILE__, __LINE__, "%s failed: %s", #call, s_);                     \
        }                                                                                      \
    } while (0)

static const char *const tag_names[TAG_COUNT] = {
    "experience", "experience_ack", "sample_req", "sample", "priority", "grad",    "param_req",
    "params",     "metrics",        "episodes",   "ckpt_req", "ckpt_done", "stop", "stopped", "exit",
};

const char *proto_tag_name(int tag) {
    if (tag >= TAG_FIRST && tag < TAG_LAST_) return tag_names[tag - TAG_FIRST];
    if (tag == TAG_RING) return "ring";
    return "unknown";
}

void sendbuf_init(SendBuf *s, size_t payload_cap) {
    s->cap = payload_cap;
    s->buf = xmalloc_aligned(sizeof(MsgHeader) + payload_cap);
    s->req = MPI_REQUEST_NULL;
    s->pending = false;
}

void sendbuf_free(SendBuf *s) {
    free(s->buf);
    s->buf = NULL;
    s->cap = 0;
}

/* One semaphore per node-local rank in a shared window (see comm.h). */
/* One cache line per rank: the semaphore, then a flag the rank raises while
 * it sleeps, so that senders ring only sleepers (a sem_post to a running
 * rank is a wasted system call, and often an inter-processor interrupt). */
#define BELL_STRIDE 64
#define BELL_FLAG_OFFSET 32 /* sem_t is 32 bytes on Linux */
_Static_assert(sizeof(sem_t) <= BELL_FLAG_OFFSET, "sem_t does not fit its slot");
static void bells_init(Comm *c) {
    const Ctx *ctx = c->ctx;
    c->bell_win = MPI_WIN_NULL;
    const char *env = getenv("COMM_DOORBELLS");
    int want = !(env && !strcmp(env, "0"));
    MPI_Comm node;
    MPI_CHECK(ctx, MPI_Comm_split_type(ctx->comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    int n_node = 0, me = 0;
    MPI_Comm_size(node, &n_node);
    MPI_Comm_rank(node, &me);
    /* Every rank of the node must agree, or none uses bells. */
    MPI_CHECK(ctx, MPI_Allreduce(MPI_IN_PLACE, &want, 1, MPI_INT, MPI_MIN, node));
    if (want) {
        void *base = NULL;
        MPI_Aint bytes = me == 0 ? (MPI_Aint)n_node * BELL_STRIDE : 0;
        MPI_CHECK(ctx, MPI_Win_allocate_shared(bytes, 1, MPI_INFO_NULL, node, &base, &c->bell_win));
        MPI_Aint size;
        int disp;
        MPI_CHECK(ctx, MPI_Win_shared_query(c->bell_win, 0, &size, &disp, &base));
        c->bells = base;
        if (me == 0)
            for (int i = 0; i < n_node; i++)
            {
                if (sem_init((sem_t *)((char *)base + (size_t)i * BELL_STRIDE), 1, 0) != 0)
                    DIE(ctx, "sem_init: %s", strerror(errno));
                atomic_init((atomic_int *)((char *)base + (size_t)i * BELL_STRIDE + BELL_FLAG_OFFSET), 0);
            }
        MPI_CHECK(ctx, MPI_Barrier(node));
        /* world rank -> bell index, -1 for ranks on other nodes */
        MPI_Group wg, ng;
        MPI_Comm_group(ctx->comm, &wg);
        MPI_Comm_group(node, &ng);
        int size_w = ctx->size;
        int *world = xmalloc((size_t)size_w * sizeof(int));
        c->bell_of = xmalloc((size_t)size_w * sizeof(int));
        for (int i = 0; i < size_w; i++) world[i] = i;
        MPI_Group_translate_ranks(wg, size_w, world, ng, c->bell_of);
        for (int i = 0; i < size_w; i++)
            if (c->bell_of[i] == MPI_UNDEFINED) c->bell_of[i] = -1;
        free(world);
        MPI_Group_free(&wg);
        MPI_Group_free(&ng);
    }
    MPI_Comm_free(&node);
}

static atomic_int *sleeping_flag(const Comm *c, int rank) {
    return (atomic_int *)((char *)c->bells + (size_t)c->bell_of[rank] * BELL_STRIDE + BELL_FLAG_OFFSET);
}

static sem_t *bell(const Comm *c, int rank) {
    if (!c->bells || c->bell_of[rank] < 0) return NULL;
    return (sem_t *)((char *)c->bells + (size_t)c->bell_of[rank] * BELL_STRIDE);
}

void comm_init(Comm *c, const Ctx *ctx, const Layout *lay, const CommLimits *lim) {
    memset(c, 0, sizeof *c);
    c->ctx = ctx;
    c->lay = lay;
    c->lim = *lim;
    c->inbox_cap = proto_max_payload(lim->n_params, lim->obs_dim, lim->max_batch, lim->max_chunk);
    c->inbox = xmalloc_aligned(sizeof(MsgHeader) + c->inbox_cap);
    for (int i = 0; i < COMM_CTL_SLOTS; i++) sendbuf_init(&c->ctl[i], COMM_CTL_BYTES - sizeof(MsgHeader));
    bells_init(c);
    comm_busy(c);
}

void comm_free(Comm *c) {
    for (int i = 0; i < COMM_CTL_SLOTS; i++) {
        if (c->ctl[i].buf && c->ctl[i].pending) {
            MPI_Cancel(&c->ctl[i].req);
            MPI_Request_free(&c->ctl[i].req);
        }
        sendbuf_free(&c->ctl[i]);
    }
    free(c->inbox);
    c->inbox = NULL;
    if (c->bell_win != MPI_WIN_NULL) MPI_Win_free(&c->bell_win);
    c->bells = NULL;
    free(c->bell_of);
    c->bell_of = NULL;
}

bool comm_send_done(Comm *c, SendBuf *s) {
    if (!s->pending) return true;
    int flag = 0;
    MPI_CHECK(c->ctx, MPI_Test(&s->req, &flag, MPI_STATUS_IGNORE));
    if (flag) s->pending = false;
    return flag != 0;
}

static void count_sent(Comm *c, int tag, size_t bytes) {
    if (tag >= TAG_FIRST && tag < TAG_LAST_) {
        c->msgs_sent[tag - TAG_FIRST]++;
        c->bytes_sent[tag - TAG_FIRST] += bytes;
    }
}

void comm_wait_send(Comm *c, SendBuf *s) {
    /* Our own send completes without a bell (the peer's progress finishes
     * it), so plain short sleeps here, whatever the idle backoff is. */
    double delay = COMM_IDLE_MIN, t0 = 0;
    while (!comm_send_done(c, s)) {
        if (t0 == 0) t0 = now_seconds();
        sleep_seconds(delay);
        delay = delay * 2 > COMM_IDLE_MAX ? COMM_IDLE_MAX : delay * 2;
    }
    if (t0 != 0) c->wait_seconds += now_seconds() - t0;
}

void comm_send(Comm *c, SendBuf *s, int dest, int tag, MsgHeader h, size_t payload_bytes) {
    if (payload_bytes > s->cap)
        DIE(c->ctx, "%s message of %zu bytes exceeds its buffer (%zu)", proto_tag_name(tag), payload_bytes, s->cap);
    comm_wait_send(c, s);
    h.tag = (uint32_t)tag;
    memcpy(s->buf, &h, sizeof h);
    size_t bytes = sizeof h + payload_bytes;
    if (bytes > (size_t)INT32_MAX) DIE(c->ctx, "message of %zu bytes is too large for MPI", bytes);
    MPI_CHECK(c->ctx, MPI_Isend(s->buf, (int)bytes, MPI_BYTE, dest, tag, c->ctx->comm, &s->req));
    s->pending = true;
    count_sent(c, tag, bytes);
    /* Ring only a sleeper. The fence orders our message before the flag
     * read; comm_idle raises the flag before its last look for messages.
     * So either the sleeper sees our message in that look, or we see its
     * flag and ring (seq_cst: one of the two stores comes first). */
    sem_t *b = bell(c, dest);
    if (b) {
        atomic_thread_fence(memory_order_seq_cst);
        if (atomic_load(sleeping_flag(c, dest))) sem_post(b);
    }
}

void comm_send_ctl(Comm *c, int dest, int tag, MsgHeader h, const void *payload, size_t payload_bytes) {
    if (payload_bytes > COMM_CTL_BYTES - sizeof(MsgHeader))
        DIE(c->ctx, "control message %s of %zu bytes is too large", proto_tag_name(tag), payload_bytes);
    for (;;) {
        for (int i = 0; i < COMM_CTL_SLOTS; i++) {
            SendBuf *s = &c->ctl[i];
            if (!comm_send_done(c, s)) continue;
            if (payload_bytes) memcpy(sendbuf_payload(s), payload, payload_bytes);
            comm_send(c, s, dest, tag, h, payload_bytes);
            return;
        }
        /* Every slot in flight: the receivers are behind; keep MPI
         * progressing without spinning. */
        comm_idle(c);
    }
}

/* Expected payload size of a message, or (size_t)-1 if the counts are out
 * of bounds. */
static size_t expected_bytes(const Comm *c, const MsgHeader *h, const char **why) {
    const CommLimits *L = &c->lim;
    switch (h->tag) {
    case TAG_EXPERIENCE:
        if ((h->count == 0 && !(h->flags & MSG_LAST)) || h->count > L->max_chunk)
            return *why = "transition count out of range", (size_t)-1;
        return proto_exp_layout(h->count, L->obs_dim, (h->flags & MSG_HAS_PRIORITY) != 0).bytes;
    case TAG_SAMPLE_REQ:
        if (h->count == 0 || h->count > L->max_batch) return *why = "batch size out of range", (size_t)-1;
        return 0;
    case TAG_SAMPLE:
        if (h->count == 0 || h->count > L->max_batch) return *why = "batch size out of range", (size_t)-1;
        return proto_sample_layout(h->count, L->obs_dim).bytes;
    case TAG_PRIORITY:
        if (h->count > L->max_batch) return *why = "priority count out of range", (size_t)-1;
        return proto_priority_bytes(h->count);
    case TAG_GRAD:
        if (h->count > L->n_params) return *why = "gradient slice longer than the network", (size_t)-1;
        return h->count * 4;
    case TAG_PARAMS:
        if (h->count > L->n_params || h->aux > L->n_params - h->count)
            return *why = "parameter slice outside the network", (size_t)-1;
        return h->count * 4 * ((h->flags & MSG_HAS_TARGET) ? 2 : 1);
    case TAG_METRICS:
    case TAG_STOPPED:
        return sizeof(RoleMetrics);
    case TAG_EPISODES:
        if (h->count > PROTO_MAX_EPISODES) return *why = "episode count out of range", (size_t)-1;
        return h->count * sizeof(EpisodeRec);
    case TAG_CKPT_REQ:
    case TAG_CKPT_DONE:
        if (h->count > 4096) return *why = "text longer than 4096 bytes", (size_t)-1;
        return h->count;
    case TAG_EXPERIENCE_ACK:
    case TAG_PARAM_REQ:
    case TAG_STOP:
    case TAG_EXIT:
        return 0;
    default:
        return *why = "unknown tag", (size_t)-1;
    }
}

static _Noreturn void malformed(const Comm *c, int source, int tag, const char *what) {
    Role role = ROLE_TOOL;
    int index = 0;
    if (source >= 0 && source < c->lay->size) layout_role_of(c->lay, source, &role, &index);
    DIE(c->ctx, "malformed %s message (tag %d) from rank %d (%s %d): %s", proto_tag_name(tag), tag, source,
        role_name(role), index, what);
}

bool comm_poll(Comm *c, Msg *m) {
    int flag = 0;
    MPI_Status st;
    /* Open MPI's MPI_Iprobe looks at the queue of arrived messages first
     * and only then runs the progress engine, which moves what has landed
     * in shared memory into that queue: a message that woke us is seen by
     * the second call, not the first (measured: 97% of doorbell wake-ups
     * found nothing on one call, and the message waited for the next
     * timeout). */
    MPI_CHECK(c->ctx, MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, c->ctx->comm, &flag, &st));
    if (!flag) MPI_CHECK(c->ctx, MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, c->ctx->comm, &flag, &st));
    if (!flag) return false;
    int count = 0;
    MPI_CHECK(c->ctx, MPI_Get_count(&st, MPI_BYTE, &count));
    int tag = st.MPI_TAG, source = st.MPI_SOURCE;
    if (tag == TAG_RING) DIE(c->ctx, "ring message from rank %d on the main communicator", source);
    /* Receive first (even a bad message must be taken off the wire so the
     * error names it), into the inbox if it fits. */
    size_t cap = sizeof(MsgHeader) + c->inbox_cap;
    if (count < 0 || (size_t)count > cap) {
        char why[128];
        snprintf(why, sizeof why, "%d bytes, larger than any valid message (%zu)", count, cap);
        malformed(c, source, tag, why);
    }
    MPI_CHECK(c->ctx, MPI_Recv(c->inbox, count, MPI_BYTE, source, tag, c->ctx->comm, MPI_STATUS_IGNORE));
    if ((size_t)count < sizeof(MsgHeader)) malformed(c, source, tag, "shorter than a message header");
    memcpy(&m->h, c->inbox, sizeof(MsgHeader));
    if ((int)m->h.tag != tag) {
        char why[96];
        snprintf(why, sizeof why, "header says tag %u", m->h.tag);
        malformed(c, source, tag, why);
    }
    const char *why = NULL;
    size_t want = expected_bytes(c, &m->h, &why);
    if (want == (size_t)-1) malformed(c, source, tag, why);
    size_t got = (size_t)count - sizeof(MsgHeader);
    if (got != want) {
        char buf[160];
        snprintf(buf, sizeof buf, "payload of %zu bytes, expected %zu for count %llu", got, want,
                 (unsigned long long)m->h.count);
        malformed(c, source, tag, buf);
    }
    m->source = source;
    m->tag = tag;
    m->payload = c->inbox + sizeof(MsgHeader);
    m->bytes = got;
    c->msgs_recv[tag - TAG_FIRST]++;
    c->bytes_recv[tag - TAG_FIRST] += (size_t)count;
    comm_busy(c);
    return true;
}

/* With doorbells every wait starts at the long timeout: a message from a
 * rank of this node rings at once, and a ladder of short timeouts would
 * only cost wake-ups (measured: the PS of a CartPole job spent as much CPU
 * in them as in its work). Without, back off from the shortest sleep. */
void comm_busy(Comm *c) { c->idle_delay = c->bells ? COMM_IDLE_BELL : COMM_IDLE_MIN; }

void comm_idle(Comm *c) {
    double t0 = now_seconds();
    sem_t *mine = c->bells ? bell(c, c->ctx->rank) : NULL;
    if (mine) {
        atomic_int *flag = sleeping_flag(c, c->ctx->rank);
        atomic_store(flag, 1);
        /* Last look, now that senders will ring (see comm_send). Two
         * probes: the first only runs the progress engine (comm_poll). */
        int found = 0;
        MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, c->ctx->comm, &found, MPI_STATUS_IGNORE);
        if (!found) MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, c->ctx->comm, &found, MPI_STATUS_IGNORE);
        if (found) {
            atomic_store(flag, 0);
            c->wait_seconds += now_seconds() - t0;
            return;
        }
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        long ns = ts.tv_nsec + (long)(c->idle_delay * 1e9);
        ts.tv_sec += ns / 1000000000L;
        ts.tv_nsec = ns % 1000000000L;
        int rung = sem_timedwait(mine, &ts) == 0;
        atomic_store(flag, 0);
        if (rung) {
            /* Swallow the other rings too; whatever they announced is
             * visible to the next poll, and later rings post again. */
            while (sem_trywait(mine) == 0) {
            }
            c->wait_seconds += now_seconds() - t0;
            return;
        }
    } else {
        sleep_seconds(c->idle_delay);
    }
    c->wait_seconds += now_seconds() - t0;
    if (!mine) {
        c->idle_delay *= 2;
        if (c->idle_delay > COMM_IDLE_MAX) c->idle_delay = COMM_IDLE_MAX;
    }
}

bool comm_drain(Comm *c, SendBuf **bufs, int n, const int *keep, int n_keep, Msg *m) {
    for (;;) {
        bool done = true;
        for (int i = 0; i < n; i++) done &= comm_send_done(c, bufs[i]);
        for (int i = 0; i < COMM_CTL_SLOTS; i++) done &= comm_send_done(c, &c->ctl[i]);
        Msg tmp;
        bool got = comm_poll(c, &tmp);
        if (got) {
            for (int k = 0; k < n_keep; k++) {
                if (tmp.tag == keep[k]) {
                    *m = tmp;
                    return true;
                }
            }
            continue; /* discarded; look again at once */
        }
        if (done && !keep) return false;
        comm_idle(c);
    }
}

void comm_fill_metrics(const Comm *c, RoleMetrics *rm) {
    memcpy(rm->msgs_sent, c->msgs_sent, sizeof rm->msgs_sent);
    memcpy(rm->bytes_sent, c->bytes_sent, sizeof rm->bytes_sent);
    memcpy(rm->msgs_recv, c->msgs_recv, sizeof rm->msgs_recv);
    memcpy(rm->bytes_recv, c->bytes_recv, sizeof rm->bytes_recv);
    rm->wait_seconds = c->wait_seconds;
}
