/* SPDX-License-Identifier: MIT */
/* util.h: allocation, errors, files and parsing; the leaf of every layer,
 * beside clock.h (time) and ctx.h (who this process is), which util.c uses.
 *
 * Two kinds of failure exist in gorila:
 *  - failures caused by the outside world (a file, a config value, a
 *    command-line argument): the function returns -1 and writes one line into
 *    a caller-supplied `char err[ERR_LEN]`; the caller adds context and
 *    reports it (util_fail for CLI tools, a collective stop for MPI jobs);
 *  - broken internal invariants or impossible states: DIE(ctx, ...) prints
 *    one line with rank, role, file and line, then ctx->abort_job (MPI_Abort
 *    for the ranks of a job) or exit(1).
 * Nothing here keeps global mutable state.
 */
#ifndef GORILA_UTIL_H
#define GORILA_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#define ERR_LEN 512
#define PATH_LEN 1024 /* every file-system path buffer, with its terminating NUL */

typedef struct Ctx Ctx; /* src/base/ctx.h; NULL means "a tool, not an MPI role" */

/* Allocation that never returns NULL: on failure it reports the size and the
 * call site and exits (below). Sizes of zero return a valid unique pointer. */
void *xmalloc_at(size_t bytes, const char *file, int line);
void *xcalloc_at(size_t n, size_t size, const char *file, int line);
/* 64-byte aligned (cache line, AVX-512); free with free(). bytes rounded up. */
void *xmalloc_aligned_at(size_t bytes, const char *file, int line);
#define xmalloc(bytes) xmalloc_at((bytes), __FILE__, __LINE__)
#define xcalloc(n, size) xcalloc_at((n), (size), __FILE__, __LINE__)
#define xmalloc_aligned(bytes) xmalloc_aligned_at((bytes), __FILE__, __LINE__)
/* Every allocation failure is the config's doing (buffers are sized from it
 * at start-up), so all of the above and below exit with GORILA_EXIT_USAGE
 * (2), never 1: a restart would fail the same way.
 *
 * xmalloc_for: a large buffer the config sizes (replay storage, network
 * copies, ...), 64-byte aligned like xmalloc_aligned (free with free()). On
 * failure it names the buffer and the key to lower:
 *   error: src/core/replay/replaybuf.c:33: out of memory allocating replay storage
 *   (41.0 GiB): lower replay.capacity (gorila config check prints the memory plan)
 * key may be NULL (then no advice). src/core/layout/memplan.h sums these buffers
 * per rank before anything is allocated. */
void *xmalloc_for_at(size_t bytes, const char *what, const char *key, const char *file, int line);
#define xmalloc_for(bytes, what, key) xmalloc_for_at((bytes), (what), (key), __FILE__, __LINE__)

/* bytes as a short size in binary units into buf (BYTES_STR_LEN bytes):
 * "512 B", "4.0 KiB", "92.3 GiB". Returns buf. */
enum { BYTES_STR_LEN = 24 };
char *fmt_bytes(char *buf, uint64_t bytes);

/* Fatal internal error: one line "error: [rank R role i/n] file:line: msg",
 * then ctx->abort_job (every rank of an MPI job ends), else exit(1). */
_Noreturn void die_at(const Ctx *ctx, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
#define DIE(ctx, ...) die_at((ctx), __FILE__, __LINE__, __VA_ARGS__)
/* The same with an exit status from exitcode.h instead of 1 (the status a
 * job's mpirun returns too, through MPI_Abort). */
_Noreturn void die_code_at(const Ctx *ctx, int code, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
#define DIE_CODE(ctx, code, ...) die_code_at((ctx), (code), __FILE__, __LINE__, __VA_ARGS__)

/* Write a formatted message into err (ERR_LEN bytes) and return -1, so that
 * error paths read `return errf(err, "...", ...);`. */
int errf(char *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Prefix an existing message in err: "prefix: old message". Returns -1. */
int err_prefix(char *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Create a temporary file for an atomic write (write, fsync, rename over
 * the real name), exclusively and without following links: whatever is
 * already at tmp_path (a leftover temporary, or a symlink planted to make
 * the write land outside the run directory) is unlinked, never written
 * through, then the file is created with O_CREAT | O_EXCL | O_NOFOLLOW.
 * Returns the descriptor, or -1 with errno set. */
int open_tmp_exclusive(const char *tmp_path);

/* Make a rename into path's directory durable: fsync that directory (the
 * current one when path has no '/'). Best effort: the renamed file itself
 * is complete either way, so a failure is ignored. */
void fsync_parent_dir(const char *path);

/* Open path (flags, mode as open(2)) without following a link in its last
 * component (O_NOFOLLOW is added): for the files a run writes inside its
 * directory, which must never land outside it. The directories above may
 * be links (a run directory on another disk). Returns the descriptor, or
 * -1 with err: "cannot open PATH: it is a symbolic link ..." when the last
 * component is one, "cannot open PATH: <strerror>" otherwise; errno is
 * ELOOP or open's. */
int open_nofollow(const char *path, int flags, mode_t mode, char *err);

/* The message of open_nofollow for a link at path, into err. Returns -1. */
int err_is_link(char *err, const char *path);

/* Open path read-only (O_CLOEXEC), but only if it is a regular file. The
 * open itself uses O_NONBLOCK | O_NOCTTY, so a FIFO without a writer cannot
 * block it forever nor a terminal become ours; fstat then refuses anything
 * but a regular file, and O_NONBLOCK is cleared for the reads. what names
 * the file in the open error ("checkpoint": "cannot open checkpoint PATH:
 * No such file or directory"). Returns the descriptor, or -1 with err:
 * that, or "PATH: not a regular file (a FIFO)" (a directory, a device, a
 * socket). */
int open_regular(const char *path, const char *what, char *err);

/* Read the small text file path (opened with open_regular: a FIFO cannot
 * hang the reader) into text, at most cap - 1 bytes, NUL-terminated; what
 * as for open_regular. 0, or -1 with err. */
int read_small_file(const char *path, const char *what, char *text, size_t cap, char *err);

/* This host's name into buf (n bytes, n >= 2), cut to fit and always
 * terminated; fallback when the system gives none. */
void host_name(char *buf, size_t n, const char *fallback);

/* Strict number parsing for command-line arguments. Return 0 on success,
 * -1 with a message in err ("expected a positive integer, got \"x\""). */
int parse_u64(const char *s, uint64_t *out, char *err);
int parse_int_range(const char *s, long lo, long hi, long *out, char *err);
int parse_double(const char *s, double *out, char *err);

/* Closest candidate to `word` by edit distance, or NULL when none is close
 * enough to be a plausible typo. Never a candidate equal to word itself.
 * candidates is NULL-terminated. */
const char *did_you_mean(const char *word, const char *const *candidates);

/* Unaligned integers in this machine's byte order, for serialized formats
 * (checkpoint files, replay contents). */
static inline void store_u32(void *p, uint32_t v) { memcpy(p, &v, 4); }
static inline void store_u64(void *p, uint64_t v) { memcpy(p, &v, 8); }
static inline uint32_t load_u32(const void *p) {
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}
static inline uint64_t load_u64(const void *p) {
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

/* True when none of x[0..n) is NaN or +-Inf (n = 0 gives true). One pass
 * over the exponent bits, so it costs about a memcpy of the array: cheap
 * enough for every gradient a learner sends or a parameter server applies. */
bool floats_finite(const float *x, size_t n);

/* Round up to a multiple of a (a > 0). */
static inline size_t round_up(size_t n, size_t a) { return (n + a - 1) / a * a; }

/* mkdir -p: create path and its missing parents (mode 0777 before the
 * umask); 0 when path is a directory at the end, or -1 with err. */
int make_dirs(const char *path, char *err);

/* 64 random bits from /dev/urandom, or, when that cannot be read, from the
 * clock and the pid; never 0. For ids and tokens, not for learning (that
 * is rng.h's, seeded). */
uint64_t random_id(void);

#endif
