/* SPDX-License-Identifier: MIT */
/* runckptint.h: what the files behind runckpt.h share; nothing outside
 * them includes it. runckpt.h is the contract; these are its parts, top to
 * bottom, each calling only those below it (make check-cycles):
 *
 *   runckpt.c       begin and commit (numbered and best checkpoints); a
 *                   commit sums the files it binds and hands the sums to
 *                   the MANIFEST writer
 *   ckptselect.c    choosing a checkpoint: verify, latest and its fallback,
 *                   best, abandoned lines, pruning
 *   ckptslice.c     parameter shard files and learner copies: writing,
 *                   tiling, reading a slice
 *   ckptreplay.c    replay files and replay rows: writing, checking, restoring
 *   ckptmanifest.c  binding: MANIFEST writing and reading, a file's header
 *                   and whole-file CRC against the manifest, the run id
 *   ckptio.c        the floor: paths, atomic text files, removal, a
 *                   header's network fields, reading an open checkpoint file
 *   ckptfile.c      the checkpoint file format (ckptfile.h, public)
 *
 * Names: a function's prefix is the name of the file that defines it
 * (ckptio_join in ckptio.c, ckptmanifest_read in ckptmanifest.c,
 * ckptfile_open in ckptfile.c), with one exception, the public contract:
 * every function runckpt.h declares is runckpt_*, defined by the part
 * whose concern it is (runckpt_read_slice in ckptslice.c, runckpt_verify
 * in ckptselect.c; gathered in runckpt.c they would make the top and the
 * parts call each other). Types and constants are RunCkpt / RUNCKPT_ for a
 * run's checkpoints and Ckpt / CKPT_ for the file format. A helper used by
 * one file only is static and unprefixed.
 */
#ifndef GORILA_RUNCKPTINT_H
#define GORILA_RUNCKPTINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ckptfile.h"
#include "runckpt.h"

/* What a checkpoint file holds (CkptMeta.kind): parameters (0, as every
 * file before replay files had) or replay contents, whose CkptMeta.rows
 * is then its transition count. */
enum { RUNCKPT_KIND_PARAMS = 0, RUNCKPT_KIND_REPLAY = 1, RUNCKPT_KIND_COPY = 2 /* a learner's own copy */ };

/* One shard or replay file as the MANIFEST records it. */
typedef struct {
    uint64_t bytes;
    uint32_t crc;
    uint64_t rows; /* replay files: transitions held */
} ShardSum;

/* ---- ckptio.c: paths and files -------------------------------------------- */

/* out (PATH_LEN) = "a/b"; -1 with err when it does not fit. */
int ckptio_join(char *out, const char *a, const char *b, char *err);

/* Remove path: a directory of plain files (a checkpoint) with its files, or
 * anything else (a file, a planted link) by itself. Missing is fine. 0 or
 * -1 with err. */
int ckptio_remove_tree(const char *path, char *err);

/* fsync the directory dir; best effort. */
void ckptio_fsync_dir(const char *dir);

/* Write dir/name with text atomically (tmp, fsync, rename, fsync dir).
 * 0 or -1 with err. */
int ckptio_write_atomic(const char *dir, const char *name, const char *text, char *err);

/* m zeroed, then the network and env that cfg and net describe (slice
 * [0, 0), optimizer none, counters 0). */
void ckptio_fill_net(const Config *cfg, const QNet *net, CkptMeta *m);

/* Read n bytes at file offset off of the open checkpoint r into dst.
 * 0, or -1 with err starting with r's path. */
int ckptio_pread(const CkptReader *r, uint64_t off, void *dst, size_t n, char *err);

/* ---- ckptmanifest.c: binding ----------------------------------------------- */

/* m's fields are fit for a MANIFEST (shard, replay and copy counts, kind,
 * mode, evaluation). 0 or -1 with err ("cannot commit checkpoint dir: ..."). */
int ckptmanifest_check(const char *dir, const RunCkptManifest *m, char *err);

/* Write dir/MANIFEST (atomic) for m, which ckptmanifest_check passed, with
 * the sizes and CRCs of its files: sums (n_shards), rsums (n_replay) and
 * csums (n_copies, those below first_copy unused), computed by the commit
 * (ckptslice_sum_shards, ckptreplay_sum_files, ckptslice_sum_copies).
 * 0 or -1 with err. */
int ckptmanifest_write(const char *dir, const RunCkptManifest *m, const ShardSum *sums, const ShardSum *rsums,
                       const ShardSum *csums, char *err);

/* Read dir/MANIFEST into m and, if sums is not NULL, the shard sums
 * (*sums: n_shards entries, caller frees), if rsums is not NULL, the replay
 * files' (*rsums: n_replay entries, at least one allocated; caller frees),
 * if csums is not NULL, the learner copies' (*csums: n_copies entries, at
 * least one, those below first_copy zero; caller frees).
 * 0 or -1 with err (then nothing is allocated). */
int ckptmanifest_read(const char *dir, RunCkptManifest *m, ShardSum **sums, ShardSum **rsums, ShardSum **csums,
                      char *err);

/* The header of file q (open in r; a replay file when replay) names the
 * manifest m's run, checkpoint and shard count (m->n_replay for a replay
 * file) and its own index, is of the kind its name says, and the file has
 * the size the manifest records (want; NULL at commit, before there is a
 * manifest). 0 or -1 with err. */
int ckptmanifest_check_binding(const CkptReader *r, int q, const RunCkptManifest *m, bool replay,
                               const ShardSum *want, char *err);

/* CRC-32C of the whole open file r into *crc, checked against want's (NULL:
 * not checked), and each section's CRC against its table entry, in one
 * streaming pass. 0 or -1 with err. */
int ckptmanifest_file_crc(const CkptReader *r, const ShardSum *want, uint32_t *crc, char *err);

/* The checkpoint m belongs to run_dir's run: the run directory records no
 * id (made by a build before run_id files) or the same as m's. 0 or -1
 * with err naming both ids. */
int ckptmanifest_check_run(const char *run_dir, const RunCkptManifest *m, char *err);

/* ---- ckptreplay.c: replay files and rows ----------------------------------- */

/* Open replay files replay-0 .. replay-(m->n_replay - 1) of dir in turn,
 * check their binding (no manifest yet), and put each one's size, CRC and
 * transitions in rsums[s]. 0 or -1 with err. */
int ckptreplay_sum_files(const char *dir, const RunCkptManifest *m, ShardSum *rsums, char *err);

/* Every replay file of the checkpoint whose manifest m and replay sums
 * were read, every row included. 0 or -1 with err. */
int ckptreplay_verify_files(const char *dir, const RunCkptManifest *m, const ShardSum *rsums, char *err);

/* Every row of the replay section of the open file r, if it has one
 * (docs/CHECKPOINT.md "Replay section"); err starts with the path. */
int ckptreplay_check_file_rows(const CkptReader *r, char *err);

/* The same for a replay section of r read into memory (data, bytes). */
int ckptreplay_check_mem_rows(const CkptReader *r, const void *data, size_t bytes, char *err);

/* ---- ckptslice.c: parameter shard files and learner copies ---------------- */

/* Open shard files ps-0 .. ps-(m->n_shards - 1) of dir in turn, check
 * their binding (no manifest yet) and tiling, and put each one's size and
 * CRC in sums[q]. 0 or -1 with err. */
int ckptslice_sum_shards(const char *dir, const RunCkptManifest *m, ShardSum *sums, char *err);

/* Every shard file of the checkpoint whose manifest m and sums were read:
 * binding, size, CRCs, optimizer step, replay rows, tiling. 0 or -1. */
int ckptslice_verify_shards(const char *dir, const RunCkptManifest *m, const ShardSum *sums, char *err);

/* ckptslice_sum_shards for the learner copies learner-first_copy ..
 * learner-(n_copies - 1) into csums[k]. 0 or -1 with err. */
int ckptslice_sum_copies(const char *dir, const RunCkptManifest *m, ShardSum *csums, char *err);

/* Every learner copy of the checkpoint whose manifest m and copy sums were
 * read: binding, size, CRCs, optimizer step. 0 or -1 with err. */
int ckptslice_verify_copies(const char *dir, const RunCkptManifest *m, const ShardSum *csums, char *err);

/* ---- ckptselect.c: choosing ------------------------------------------------- */

/* Delete the ckpt-* directories of base (<run>/checkpoints) beyond the
 * newest `keep` up to committed, and every one numbered above committed
 * (a line abandoned by a fallback). The committed one always stays. Best
 * effort. */
void ckptselect_prune(const char *base, uint64_t committed, int keep);

#endif
