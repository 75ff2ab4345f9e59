/* cmd_version.c: `gorila version [--kernels]`.
 *
 * The first line is the build (gorila_build(): what a job's ranks compare),
 * then the CPU and the OpenBLAS kernel this process computes with, which
 * decide the rounding of every result (docs/REPRODUCIBILITY.md).
 * --kernels lists OpenBLAS's x86-64 kernels, one a line: the name, "runs"
 * or "lacks" and the CPU flags it lacks; `make test-kernels` runs the
 * suite once per kernel this CPU runs.
 */
#include "cmd.h"
#include "platform.h"
#include "version.h"

#include <stdio.h>
#include <string.h>

static const char version_usage[] =
    "usage: gorila version [--kernels]\n"
    "\n"
    "Print the release and source id of this build, then the CPU and the\n"
    "OpenBLAS kernel in use (OPENBLAS_CORETYPE or run.blas_kernel choose\n"
    "another). --kernels: each OpenBLAS kernel, whether this CPU runs it\n"
    "and the CPU flags it lacks.\n";

static void list_kernels(void) {
    for (int i = 0; i < platform_kernel_count(); i++) {
        const char *name = platform_kernel_name(i);
        char missing[256];
        if (platform_kernel_missing(name, missing, sizeof missing)) printf("%s lacks %s\n", name, missing);
        else printf("%s runs\n", name);
    }
}

int cmd_version(int argc, char **argv) {
    bool kernels = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            fputs(version_usage, stdout);
            return 0;
        }
        if (strcmp(argv[i], "--kernels") != 0) return usage_error("version: unknown argument \"%s\"", argv[i]);
        kernels = true;
    }
    if (kernels) {
        list_kernels();
        return 0;
    }
    printf("%s\n", gorila_build());
    Platform p;
    platform_read(&p);
    platform_print(stdout, &p);
    putchar('\n');
    return 0;
}
