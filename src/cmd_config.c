/* cmd_config.c: placeholder until its issue lands. */
#include "cmd.h"

int cmd_config(int argc, char **argv) {
    (void)argc;
    (void)argv;
    return usage_error("config: not implemented yet");
}
