/* config.c: placeholder until the config loader lands. */
#include "config.h"

#include <string.h>

void config_defaults(Config *cfg) { memset(cfg, 0, sizeof *cfg); }
