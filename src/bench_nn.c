/* bench_nn.c: placeholder until its issue lands. */
#include "cmd.h"

int bench_nn(int argc, char **argv) {
    (void)argc;
    (void)argv;
    return usage_error("bench nn: not implemented yet");
}
