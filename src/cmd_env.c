/* cmd_env.c: placeholder until its issue lands. */
#include "cmd.h"

int cmd_env(int argc, char **argv) {
    (void)argc;
    (void)argv;
    return usage_error("env: not implemented yet");
}
