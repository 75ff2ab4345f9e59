/* cmd_train.c: placeholder until its issue lands. */
#include "cmd.h"

int cmd_train(int argc, char **argv) {
    (void)argc;
    (void)argv;
    return usage_error("train: not implemented yet");
}
