/* SPDX-License-Identifier: MIT */
/* cliexport.h: writing a loaded checkpoint's network to a file, for
 * `gorila export` (cmd_export.c) and `gorila eval --export` (cmd_eval.c). */
#ifndef GORILA_CLIEXPORT_H
#define GORILA_CLIEXPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "cliload.h"

/* Write c's network to path: the raw float32 parameters when path ends in
 * ".bin", else the .npz (npz.h), through a temporary renamed onto path
 * (only a missing path or a regular file is written). Then prints to out
 * what it wrote, one line:
 *   wrote PATH (npz, B bytes): ENV network O-H..-A, N parameters, from
 *   CHECKPOINT_DIR (cliload_describe)
 * (with conv layers O is HxWxC followed by -cFkKsS per conv layer)
 * ("replaced" when a regular file was replaced), or with json one JSON
 * object of the same facts. Returns 0, or -1 with err (nothing printed,
 * path as it was). */
int cliexport_write(const CliLoad *c, const char *path, FILE *out, bool json, char *err);

#endif
