/* SPDX-License-Identifier: MIT */
/* tbevents.h: TensorBoard event files (logging.tensorboard), written by
 * hand: the protobuf encoding of the few Event fields gorila uses and the
 * TFRecord framing around each event. No protobuf library, no MPI.
 *
 * A file is a sequence of records:
 *   uint64  length of data, little-endian
 *   uint32  masked CRC-32C of those 8 bytes
 *   data    one serialized Event
 *   uint32  masked CRC-32C of data
 * with masked(crc) = ((crc >> 15) | (crc << 17)) + 0xa282ead8 (mod 2^32),
 * the CRC being crc32c.h's (Castagnoli). The first record is an Event with
 * wall_time and file_version "brain.Event:2"; every later one has
 * wall_time, step and a Summary of scalar Values.
 *
 * The fields (TensorBoard's tensorboard/compat/proto/event.proto and
 * summary.proto; tests/tb/ holds copies):
 *   Event    double wall_time = 1 (wire type 1, fixed64)
 *            int64 step = 2 (varint; left out when 0, as proto3 does)
 *            string file_version = 3, Summary summary = 5,
 *            SessionLog session_log = 7 (length-delimited)
 *   Summary  repeated Value value = 1
 *   Value    string tag = 1, float simple_value = 2 (wire type 5, fixed32)
 *   SessionLog  SessionStatus status = 1 (varint; START = 1)
 *
 * The writer (TbEvents) owns one file under <run dir>/tb/, named
 * events.out.tfevents.<unix seconds>.<host>.<pid> like TensorFlow's, so a
 * resumed run adds a file beside the earlier ones and `tensorboard --logdir`
 * reads them in order. It allocates nothing after tbevents_init: each
 * event is encoded into a buffer inside the struct.
 */
#ifndef GORILA_TBEVENTS_H
#define GORILA_TBEVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "util.h"

/* Bounds of one event: scalars per event, bytes per tag, bytes of the
 * framed record (16 scalars of 64-byte tags take under 1.4 KB). */
enum { TBEVENTS_MAX_SCALARS = 16, TBEVENTS_MAX_TAG = 64, TBEVENTS_BUF_BYTES = 2048 };

/* The file_version of the first event. */
#define TBEVENTS_FILE_VERSION "brain.Event:2"

/* One scalar: a tag (1 to TBEVENTS_MAX_TAG bytes, borrowed) and its value. */
typedef struct {
    const char *tag;
    double value;
} TbScalar;

/* ---- the encoding (pure functions, for the writer and the tests) ---- */

/* v as a protobuf varint into out (room for 10 bytes); returns its bytes. */
size_t tbevents_varint(uint8_t *out, uint64_t v);

/* The masked CRC-32C of data[0 .. n) (above). */
uint32_t tbevents_masked_crc(const void *data, size_t n);

/* The first Event: wall_time and file_version. Into out (cap bytes);
 * returns the bytes written, or 0 when they would not fit. */
size_t tbevents_encode_version(uint8_t *out, size_t cap, double wall_time);

/* An Event at wall_time and step with a Summary of v[0 .. n), each value
 * as a float simple_value (n >= 1; every tag 1 to TBEVENTS_MAX_TAG bytes).
 * Returns the bytes written into out (cap bytes), or 0 when they would not
 * fit or n or a tag is out of bounds. */
size_t tbevents_encode_scalars(uint8_t *out, size_t cap, double wall_time, int64_t step, const TbScalar *v, int n);

/* An Event at wall_time and step holding SessionLog{status: START}: written
 * when a resumed run starts, so that TensorBoard drops the events of the
 * earlier segment at this step and after (they were not kept: the run
 * resumes from an earlier checkpoint). Returns bytes, or 0 (no room). */
size_t tbevents_encode_start(uint8_t *out, size_t cap, double wall_time, int64_t step);

/* Frame data[0 .. n) as one TFRecord into out (cap >= n + 16 bytes);
 * data may lie inside out at offset 12 (the writer encodes it there).
 * Returns n + 16, or 0 when cap is too small. */
size_t tbevents_frame(uint8_t *out, size_t cap, const uint8_t *data, size_t n);

/* ---- the writer ---- */

typedef struct {
    FILE *f;
    char path[PATH_LEN];             /* the events file */
    uint8_t buf[TBEVENTS_BUF_BYTES]; /* one framed record */
} TbEvents;

/* Create <run_dir>/tb/ (if missing) and a new events file in it, write the
 * first event (and, when resumed, a SessionLog START at `step`) and flush
 * it, so that a directory or disk that cannot take the file fails here,
 * before training starts. Returns 0, or -1 with err naming the path and the
 * cause ("cannot create runs/x/tb/events.out.tfevents...: Permission
 * denied"); t is then as after tbevents_free. */
int tbevents_init(TbEvents *t, const char *run_dir, bool resumed, uint64_t step, char *err);

/* Whether tbevents_init could start a file in <run_dir>/tb, checked
 * without writing anything, so that a resume can refuse before any
 * process starts its work: tb/ is a directory this process may write
 * into, or it is absent and run_dir is one. Returns 0, or -1 with err
 * ("cannot use runs/x/tb: it exists and is not a directory"). */
int tbevents_check(const char *run_dir, char *err);

/* Append one event at env step `step` (wall_time: now) with the values of
 * v[0 .. n) that are not NaN (a figure not defined yet, like a CSV's empty
 * cell); nothing when none is left. flush: hand it to the kernel now.
 * Returns 0, or -1 (errno set) when this write failed (EOVERFLOW: n or a
 * tag beyond the bounds above, a caller's bug). */
int tbevents_scalars(TbEvents *t, uint64_t step, const TbScalar *v, int n, bool flush);

/* Flush what is buffered. 0, or -1 (errno set). */
int tbevents_flush(TbEvents *t);

/* Close the file. 0, or -1 (errno set) when the final flush or the close
 * failed. Safe on a zeroed or already freed TbEvents. */
int tbevents_free(TbEvents *t);

#endif
