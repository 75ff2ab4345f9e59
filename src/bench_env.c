/* bench_env.c: placeholder until its issue lands. */
#include "cmd.h"

int bench_env(int argc, char **argv) {
    (void)argc;
    (void)argv;
    return usage_error("bench env: not implemented yet");
}
