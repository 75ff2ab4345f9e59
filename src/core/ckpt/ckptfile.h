/* SPDX-License-Identifier: MIT */
/* ckptfile.h: the checkpoint file (no MPI, no config).
 *
 * One versioned binary container, written by the single-process trainer
 * (the whole network) and by each parameter-server shard (a contiguous
 * slice of the flat parameter array; the coordinator's manifest lists the
 * shard files). A file is a 256-byte header (network layout, slice, env,
 * optimizer, counters, the run layer's binding fields, CRC32C), a section
 * table (id, length, CRC32C each) and the section data. docs/CHECKPOINT.md
 * gives the layout byte by byte.
 *
 * Writing is atomic: a temporary file in the target's directory, fsync,
 * rename over the target, fsync of the directory. Every write, fsync and
 * close is checked; on any failure the temporary file is removed and an
 * older checkpoint at the path is left as it was.
 *
 * Reading validates before it hands anything out and says what is wrong:
 * not a regular file (a FIFO is refused without blocking), not a
 * checkpoint, unsupported version, other byte order, header or
 * section table CRC, truncation (where, how much), unknown, duplicate or
 * missing sections, section sizes that do not fit the layout, counters
 * above CKPT_MAX_COUNT, and each section's CRC when it is read.
 *
 * The network layout is described here in plain numbers (CkptNet), not
 * through agents/qnet.h: the trainer maps its layout onto CkptNet.
 *
 * Names: functions are ckptfile_*, after this file; types (Ckpt*) and
 * constants (CKPT_*) keep the format's short name, which
 * docs/CHECKPOINT.md uses for its fields and section ids.
 */
#ifndef GORILA_CKPTFILE_H
#define GORILA_CKPTFILE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CKPT_VERSION 4          /* newest format version this build writes and reads: 1 + section ENVS (2),
                                 * + section NET (3), + section ENVID (4) */
#define CKPT_VERSION_MIN 1      /* oldest it reads; a file without ENVS is written as version 1 */
#define CKPT_HEADER_BYTES 256   /* header size in format versions 1 and 2 */
#define CKPT_MAX_HIDDEN 8       /* hidden layers a header can describe */
#define CKPT_MAX_CONV 4         /* convolution layers section NET can describe */
#define CKPT_ENV_LEN 32         /* env name bytes, NUL included */
#define CKPT_ENVID_LEN 256      /* section ENVID: a full external env id's bytes, NUL included */
#define CKPT_KWARGS_LEN 1024    /* section ENVID: env.kwargs' bytes, NUL included */
#define CKPT_N_RESERVED 1       /* spare 64-bit counters in the header */
#define CKPT_MAX_SECTIONS 16    /* entries a section table may have */
#define CKPT_OPTIM_MAX_SLOTS 8  /* per-parameter arrays an optimizer may keep */
/* The largest counter (env_steps, updates, episodes, param_version, and the
 * run layer's versions and sequence numbers) a reader accepts: 2^53. A run
 * at 10^8 env steps per second would need almost three years to count that
 * far, every double holds each integer up to it exactly (summary.json and
 * the rates are doubles), and adding the steps of any later segment to it
 * cannot wrap a u64. A larger value can only be damage. */
#define CKPT_MAX_COUNT (1ull << 53)

/* Section ids. A reader refuses ids its file's format version does not
 * know; new ids come with a new format version (ENVS with version 2: a
 * file holding it is written as version 2, any other as version 1, which
 * a format-1 reader still reads). Sizes are checked against the header:
 *   PARAMS, TARGET  slice_count floats
 *   OPTIM           u64 optimizer step, then optim_slots arrays of
 *                   slice_count floats (slot-major); only with an optimizer
 *   RNG             one or more Rng states (rng.h), 32 bytes each
 *   REPLAY          replaybuf_serialize or replaystore_serialize output (they check it)
 *   ENVS            (version 2) the local trainer's acting state: u64 env steps not yet
 *                   trained on, u64 slot count n, u64 slot bytes b, then n blocks of b bytes
 *                   (each slot's episode return and length and its env_snapshot; the trainer
 *                   checks they fit its environment)
 *   NET             (version 3) the input planes and convolution layers, which the header
 *                   cannot hold: u32 in_h, in_w, in_c, n_conv, then n_conv x (filters,
 *                   kernel, stride) u32; 16 + 12 n_conv bytes. ckptfile_write adds it for a
 *                   network on planes (CkptNet.in_c > 0) and ckptfile_open reads it into
 *                   the meta, so callers never pass or read it themselves.
 *   ENVID           (version 4) a Python environment's full id and env.kwargs, which the
 *                   header's 32-byte env field cannot hold: u32 id bytes i (1 .. 255), u32
 *                   kwargs bytes k (0 .. 1023), the id's i bytes, the kwargs' k bytes (no
 *                   NULs); 8 + i + k bytes. ckptfile_write adds it when CkptMeta.env_id is
 *                   set and ckptfile_open reads it into the meta, as NET.
 * PARAMS is required; the others are optional. */
typedef enum {
    CKPT_SEC_PARAMS = 1,
    CKPT_SEC_TARGET = 2,
    CKPT_SEC_OPTIM = 3,
    CKPT_SEC_RNG = 4,
    CKPT_SEC_REPLAY = 5,
    CKPT_SEC_ENVS = 6,
    CKPT_SEC_NET = 7,
    CKPT_SEC_ENVID = 8,
    CKPT_SEC_END_ /* one past the last known id */
} CkptSectionId;

/* Optimizer whose state OPTIM holds. NONE: a checkpoint without optimizer
 * state (e.g. for evaluation only). */
typedef enum { CKPT_OPT_NONE = 0, CKPT_OPT_SGD = 1, CKPT_OPT_ADAM = 2, CKPT_OPT_RMSPROP = 3, CKPT_OPT_END_ } CkptOptim;

/* The Q-network's shape: obs_dim -> [conv layers ->] hidden[0] -> ... ->
 * num_actions, optionally with a dueling head; n_params counts every float
 * of the flat parameter array (the trainer computes it, this module only
 * compares). The header holds all but the planes and conv layers, which
 * section NET holds (format 3): in_c 0 is a vector input. A file read
 * without NET (an MLP, or a plane network written before format 3) has
 * in_c 0 and planes_known 0. */
typedef struct {
    uint32_t obs_dim;
    uint32_t num_actions;
    uint32_t n_hidden;                  /* 0 .. CKPT_MAX_HIDDEN */
    uint32_t hidden[CKPT_MAX_HIDDEN];   /* widths; entries >= n_hidden are 0 */
    uint32_t dueling;                   /* 0 or 1 */
    uint64_t n_params;
    uint32_t in_h, in_w, in_c;          /* input planes (in_h * in_w * in_c == obs_dim), or all 0 */
    uint32_t n_conv;                    /* 0 .. CKPT_MAX_CONV; 0 when in_c is 0 */
    uint32_t conv[CKPT_MAX_CONV][3];    /* per layer: filters, kernel, stride; rows >= n_conv are 0 */
    uint32_t planes_known;              /* read: 1 when the file has section NET */
} CkptNet;

/* Everything in a checkpoint header besides format bookkeeping. */
typedef struct {
    CkptNet net;
    uint64_t slice_offset, slice_count;  /* parameters held: [offset, offset + count) */
    char env[CKPT_ENV_LEN];              /* env name, NUL-terminated (cut to 31 bytes) */
    /* Section ENVID (format 4): a Python environment's whole id and its
     * env.kwargs (JSON text, "{}" for none). Write: env_id "" for a
     * registered environment (no section). Read: env_id_known 1 when the
     * file has the section, else both "". */
    char env_id[CKPT_ENVID_LEN];
    char env_kwargs[CKPT_KWARGS_LEN];
    uint32_t env_id_known;
    uint32_t optimizer;                  /* CkptOptim */
    uint32_t optim_slots;                /* per-parameter float arrays in OPTIM */
    uint64_t env_steps, updates, episodes, param_version;
    double wall_seconds;
    /* The run layer's fields (runckpt.h; docs/CHECKPOINT.md "Checkpoints of
     * a run"). This module writes them and reads them back as given and
     * checks none of them: their meaning and bounds are the run layer's.
     * They fill header bytes 184 .. 239, once the spare counters
     * reserved[0 .. 6] of format 1 (same bytes, same order). */
    uint64_t target_version;             /* the target network's version */
    uint64_t run_id;                     /* the run the file belongs to */
    uint64_t seq;                        /* its checkpoint's sequence number */
    uint64_t n_shards;                   /* files of its kind in that checkpoint */
    uint64_t shard_index;                /* its index among them */
    uint64_t kind;                       /* what it holds: parameters or replay contents */
    uint64_t rows;                       /* a replay file's transitions */
    uint64_t reserved[CKPT_N_RESERVED];  /* spare: written and read back as given */
    uint32_t format_version;             /* read: the file's format version; ignored on write
                                          * (the sections decide it) */
} CkptMeta;

/* One section to write: bytes of data (caller-owned, read only). */
typedef struct {
    uint32_t id;  /* CkptSectionId */
    const void *data;
    size_t bytes;
} CkptSection;

/* Write a checkpoint of meta and sections[0 .. n_sections) (in that order)
 * to path, atomically (see the top of this file). The meta and section
 * sizes are validated as a reader would. Returns 0, or -1 with a message
 * in err naming the path and the cause (the OS reason for system calls:
 * "No space left on device", "File too large", ...). */
int ckptfile_write(const char *path, const CkptMeta *meta, const CkptSection *sections, size_t n_sections, char *err);

/* One entry of a file's section table. */
typedef struct {
    uint32_t id, crc;
    uint64_t bytes;   /* data length */
    uint64_t offset;  /* where the data starts in the file */
} CkptEntry;

/* An open, validated checkpoint. ckptfile_open/ckptfile_close rather than
 * init/free: the struct owns a file descriptor, not memory. */
typedef struct {
    bool is_open;
    int fd;
    char path[PATH_MAX];
    CkptMeta meta;
    uint32_t n_sections;
    CkptEntry entry[CKPT_MAX_SECTIONS];
    uint64_t file_bytes;
} CkptReader;

/* Open path and validate its header, section table and length (every check
 * except the sections' CRCs, which ckptfile_read_section and ckptfile_verify
 * do).
 * r is overwritten: close it first if it was open. Returns 0 with r open
 * and r->meta filled, or -1 with a message in err and r closed. */
int ckptfile_open(CkptReader *r, const char *path, char *err);

/* Close the file; safe on a zeroed or closed reader. */
void ckptfile_close(CkptReader *r);

/* The table entry of section id, or NULL when the file has none. */
const CkptEntry *ckptfile_find(const CkptReader *r, uint32_t id);

/* Read section id into dst (bytes must equal its length; caller-owned) and
 * check its CRC. Returns 0, or -1 with a message in err (section missing,
 * size differs, read error, CRC mismatch). dst is clobbered on error. */
int ckptfile_read_section(CkptReader *r, uint32_t id, void *dst, size_t bytes, char *err);

/* Check the CRC of every section (streaming, no allocation). Returns 0, or
 * -1 with a message naming the first bad section. */
int ckptfile_verify(CkptReader *r, char *err);

/* Compare a checkpoint's network layout, env and slice with what the caller
 * expects (the env by its whole id and kwargs when either side has them:
 * section ENVID; optimizer and counters are not compared; planes and conv layers
 * only when found has section NET or want has none: a plane network of a
 * file from before format 3 is compared by its header and parameter count).
 * Returns 0 when they agree, or -1 with every difference in err; a network
 * that differs is named whole on both sides, e.g.
 *   "network differs: checkpoint has 4 inputs -> hidden [64, 64] -> 2 actions (4610 parameters),
 *    expected 4 inputs -> hidden [128, 128] -> 2 actions (17410 parameters)" (one line) */
int ckptfile_check_compatible(const CkptMeta *found, const CkptMeta *want, char *err);

/* Lower-case names for messages ("params", "adam"); "unknown" otherwise. */
const char *ckptfile_section_name(uint32_t id);
const char *ckptfile_optim_name(uint32_t kind);

#endif
