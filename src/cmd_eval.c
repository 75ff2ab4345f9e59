/* cmd_eval.c: placeholder until its issue lands. */
#include "cmd.h"

int cmd_eval(int argc, char **argv) {
    (void)argc;
    (void)argv;
    return usage_error("eval: not implemented yet");
}
