/* SPDX-License-Identifier: MIT */
/* test_trace.c: the span recorder (src/core/run/trace.c): the ring keeps the
 * newest logging.trace_events spans and counts what it overwrote, off is a
 * no-op, and trace.json, for a hand-made pair of tracks whose clocks differ,
 * is exactly the document worked out below. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clock.h"
#include "trace.h"
#include "util.h"

Test(trace, ring_keeps_the_newest_cap_events_and_counts_the_dropped) {
    Trace t;
    trace_init(&t, 4);
    cr_assert(trace_on(&t));
    for (uint32_t i = 0; i < 3; i++) trace_span(&t, TR_APPLY, i, i + 0.5, i);
    cr_assert_eq(t.n, 3);
    cr_assert_eq(t.dropped, 0);
    for (size_t i = 0; i < 3; i++) cr_assert_eq(trace_get(&t, i).arg, i, "before wrapping, event %zu", i);
    for (uint32_t i = 3; i < 10; i++) trace_span(&t, TR_APPLY, i, i + 0.5, i);
    cr_assert_eq(t.n, 4);
    cr_assert_eq(t.dropped, 6);
    for (size_t i = 0; i < 4; i++) { /* oldest first: 6, 7, 8, 9 */
        TraceEvent e = trace_get(&t, i);
        cr_assert_eq(e.arg, 6 + i, "event %zu has arg %u", i, e.arg);
        cr_assert_eq(e.t0, 6.0 + (double)i);
        cr_assert_eq(e.t1, 6.5 + (double)i);
        cr_assert_eq(e.kind, TR_APPLY);
    }
    trace_free(&t);
    cr_assert_null(t.ev);
    trace_free(&t); /* twice: safe */
}

Test(trace, off_is_a_no_op) {
    Trace t;
    trace_init(&t, 0);
    cr_assert_not(trace_on(&t));
    for (int i = 0; i < 100; i++) trace_span(&t, TR_ENV_BATCH, i, i + 1, 0);
    cr_assert_eq(t.n, 0);
    cr_assert_eq(t.dropped, 0);
    trace_free(&t);
    Trace z; /* a zeroed Trace (a RoleBase built without role_init) is off too */
    memset(&z, 0, sizeof z);
    trace_span(&z, TR_ENV_BATCH, 0, 1, 0);
    cr_assert_eq(z.n, 0);
    trace_free(&z);
}

Test(trace, every_kind_has_a_name) {
    for (int k = 0; k < TR_KINDS; k++) {
        const char *s = trace_kind_name((TraceKind)k);
        cr_assert(s && *s && strcmp(s, "unknown") != 0, "kind %d", k);
    }
    cr_assert_str_eq(trace_kind_name(TR_GRAD), "gradient");
    cr_assert_str_eq(trace_kind_name(TR_KINDS), "unknown");
}

Test(trace, clock_pairs_the_monotonic_and_real_time_clocks) {
    TraceClock c;
    double before = now_seconds();
    trace_clock(&c);
    double after = now_seconds();
    cr_assert(c.mono >= before && c.mono <= after);
    cr_assert_gt(c.real_ns, (int64_t)1600000000 * 1000000000); /* after September 2020 */
}

/* Two ranks whose monotonic clocks have different origins, and a third
 * that never reported. Worked by hand (all times exact in binary but one):
 *
 *   rank 0: clock mono 100, real R.      shift = 0 - 100       = -100
 *     checkpoint [100.5, 100.75]     -> [0.5, 0.75]
 *     evaluation [100.5, 100.625]    -> [0.5, 0.625]   (same start: the longer first)
 *     serve      [100.875, 100.8750015] -> [0.875, 0.8750015]
 *   rank 3: clock mono 50, real R + 0.25 s.  shift = 0.25 - 50 = -49.75
 *     gradient   [50.125, 50.375]    -> [0.375, 0.625]
 *   origin = the earliest start, 0.375 s; in microseconds:
 *     gradient   ts 0         dur 250000
 *     checkpoint ts 125000    dur 250000
 *     evaluation ts 125000    dur 125000
 *     serve      ts 500000    dur 1.5
 */
static const char want_json[] =
    "{\"traceEvents\":[\n"
    "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":0,\"tid\":0,\"args\":{\"name\":\"gorila\"}},\n"
    "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":0,\"tid\":0,\"args\":{\"name\":\"rank 0 coordinator 0\"}},\n"
    "{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":0,\"tid\":0,\"args\":{\"sort_index\":0}},\n"
    "{\"name\":\"checkpoint\",\"ph\":\"X\",\"pid\":0,\"tid\":0,\"ts\":125000.000,\"dur\":250000.000,\"args\":{\"arg\":1}},\n"
    "{\"name\":\"evaluation\",\"ph\":\"X\",\"pid\":0,\"tid\":0,\"ts\":125000.000,\"dur\":125000.000,\"args\":{\"arg\":2}},\n"
    "{\"name\":\"serve params\",\"ph\":\"X\",\"pid\":0,\"tid\":0,\"ts\":500000.000,\"dur\":1.500,\"args\":{\"arg\":9}},\n"
    "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":0,\"tid\":3,\"args\":{\"name\":\"rank 3 learner 0\"}},\n"
    "{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":0,\"tid\":3,\"args\":{\"sort_index\":3}},\n"
    "{\"name\":\"gradient\",\"ph\":\"X\",\"pid\":0,\"tid\":3,\"ts\":0.000,\"dur\":250000.000,\"args\":{\"arg\":0}},\n"
    "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":0,\"tid\":5,\"args\":{\"name\":\"rank 5 actor 1 (no trace received)\"}},\n"
    "{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":0,\"tid\":5,\"args\":{\"sort_index\":5}}\n"
    "],\n"
    "\"displayTimeUnit\":\"ms\",\n"
    "\"otherData\":{\"format\":\"gorila trace 1\","
    "\"clock\":\"per-track CLOCK_MONOTONIC, aligned by CLOCK_REALTIME; ts 0 = the earliest start\","
    "\"events_per_track\":64,\"dropped_events\":{\"0\":0,\"3\":12,\"5\":0},\"missing_tracks\":[5]}}\n";

/* The tracks above (fresh each call: the writer sorts events in place). */
static void hand_tracks(TraceTrack tr[3], TraceEvent e0[3], TraceEvent e3[1]) {
    const int64_t R = 1700000000LL * 1000000000LL;
    e0[0] = (TraceEvent){100.5, 100.625, TR_EVAL, 2}; /* recorded before its container, */
    e0[1] = (TraceEvent){100.875, 100.8750015, TR_SERVE_PARAMS, 9};
    e0[2] = (TraceEvent){100.5, 100.75, TR_CKPT, 1};  /* as spans are: when they end */
    e3[0] = (TraceEvent){50.125, 50.375, TR_GRAD, 0};
    tr[0] = (TraceTrack){.tid = 0, .name = "rank 0 coordinator 0", .ev = e0, .n = 3, .clock = {100.0, R}};
    tr[1] = (TraceTrack){.tid = 3, .name = "rank 3 learner 0", .ev = e3, .n = 1, .clock = {50.0, R + 250000000},
                         .dropped = 12};
    tr[2] = (TraceTrack){.tid = 5, .name = "rank 5 actor 1 (no trace received)", .missing = true};
}

Test(trace, json_of_hand_made_tracks_is_as_worked_out) {
    TraceTrack tr[3];
    TraceEvent e0[3], e3[1];
    hand_tracks(tr, e0, e3);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    cr_assert_not_null(f);
    cr_assert_eq(trace_write_json(f, tr, 3, 64), 0);
    fclose(f);
    cr_assert_str_eq(text, want_json);
    free(text);
}

Test(trace, file_is_written_atomically) {
    mkdir("build", 0777);
    mkdir("build/test-tmp", 0777);
    char dir[] = "build/test-tmp/trace-XXXXXX", path[PATH_LEN], tmp[PATH_LEN], err[ERR_LEN];
    cr_assert_not_null(mkdtemp(dir), "mkdtemp: %s", strerror(errno));
    snprintf(path, sizeof path, "%s/trace.json", dir);
    snprintf(tmp, sizeof tmp, "%s/trace.json.tmp", dir);
    cr_assert_eq(symlink("/nonexistent/elsewhere", tmp), 0); /* a planted link is replaced, not followed */
    TraceTrack tr[3];
    TraceEvent e0[3], e3[1];
    hand_tracks(tr, e0, e3);
    cr_assert_eq(trace_write_file(path, tr, 3, 64, err), 0, "%s", err);
    cr_assert_eq(access(tmp, F_OK), -1, "the temporary is gone");
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f);
    char buf[4096];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    cr_assert_str_eq(buf, want_json);
    snprintf(path, sizeof path, "%s/no/such/dir/trace.json", dir);
    cr_assert_eq(trace_write_file(path, tr, 3, 64, err), -1);
    cr_assert(strstr(err, "trace.json.tmp") != NULL, "%s", err);
}
