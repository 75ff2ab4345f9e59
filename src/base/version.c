/* SPDX-License-Identifier: MIT */
/* version.c: see version.h. Compiled with -DGORILA_SOURCE_ID="..." by the
 * Makefile (only this file depends on it). */
#include "version.h"

#ifndef GORILA_SOURCE_ID
#define GORILA_SOURCE_ID "unknown"
#endif

const char *gorila_source_id(void) { return GORILA_SOURCE_ID; }

const char *gorila_build(void) { return "gorila " GORILA_VERSION " (source " GORILA_SOURCE_ID ")"; }
