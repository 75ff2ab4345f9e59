/* SPDX-License-Identifier: MIT */
/* platform.h: which CPU this process runs on and which OpenBLAS kernel it
 * computes with.
 *
 * Results that sum floats depend on the order of the sums, and OpenBLAS
 * picks its sgemm kernel per CPU (or as OPENBLAS_CORETYPE says, read once
 * when the library loads). A local run is bit-for-bit reproducible for one
 * binary, one kernel and one BLAS thread; another kernel gives other
 * rounding and so, after a few thousand updates, another run
 * (docs/REPRODUCIBILITY.md). Every summary.json and benchmark records the
 * CPU model and the kernel from here, and run.blas_kernel pins a kernel.
 *
 * The kernel table lists the x86-64 kernels of OpenBLAS's DYNAMIC_ARCH
 * builds with the CPU flags (as /proc/cpuinfo names them) their code needs:
 * OpenBLAS runs a forced kernel without checking, so a kernel this CPU
 * lacks would die of SIGILL; platform_kernel_missing() says so first.
 */
#ifndef GORILA_PLATFORM_H
#define GORILA_PLATFORM_H

#include "json.h"

#include <stdbool.h>
#include <stdio.h>

enum { PLATFORM_TEXT = 160 };

typedef struct {
    char cpu[PLATFORM_TEXT];         /* /proc/cpuinfo "model name", or "unknown" */
    char blas_kernel[PLATFORM_TEXT]; /* openblas_get_corename(): the kernel in use */
    char blas_config[PLATFORM_TEXT]; /* openblas_get_config(): version and build options */
    char coretype_env[PLATFORM_TEXT]; /* OPENBLAS_CORETYPE as set, or "" when unset */
} Platform;

/* Fills p for this process. Never fails: what cannot be read says "unknown". */
void platform_read(Platform *p);

/* One line: "CPU AMD EPYC; OpenBLAS 0.3.21 ... kernel Haswell
 * (OPENBLAS_CORETYPE=Haswell)". No newline. */
void platform_print(FILE *f, const Platform *p);

/* The object {"cpu", "blas_kernel", "blas_config", "openblas_coretype"
 * (null when unset)} as member `key` of j's current object (key NULL: a
 * top-level value or an array element). */
void platform_json(JsonW *j, const char *key, const Platform *p);

/* The first line of every benchmark: JSON
 * {"bench":"openblas","config","corename","OPENBLAS_CORETYPE",
 * "OPENBLAS_NUM_THREADS","cpu"[,"threads"]} or the text line "OpenBLAS:
 * CONFIG (core K); OPENBLAS_CORETYPE=.. OPENBLAS_NUM_THREADS=..; CPU MODEL"
 * followed by note (may be NULL). threads < 0 leaves "threads" out. */
void platform_bench_header(bool json, long threads, const char *note);

/* The kernel table: count, and the i-th kernel's name (OpenBLAS spelling). */
int platform_kernel_count(void);
const char *platform_kernel_name(int i);

/* The canonical spelling of a kernel name given in any case, or NULL when
 * OpenBLAS's x86-64 builds have no such kernel. */
const char *platform_kernel_find(const char *name);

/* The CPU flags kernel `name` needs that this CPU lacks, space-separated in
 * missing (size n), or "" when it can run it. Returns true when some are
 * missing. An unknown kernel, or a CPU whose flags cannot be read, counts
 * as missing everything ("unknown kernel" / "cpu flags unreadable"). */
bool platform_kernel_missing(const char *name, char *missing, size_t n);

/* True when the kernel OpenBLAS runs is `name` (case-insensitive). */
bool platform_kernel_is(const char *name);

#endif
