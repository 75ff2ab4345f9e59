/* SPDX-License-Identifier: MIT */
/* version.c: see version.h. Compiled with -DGORILA_SOURCE_ID="...",
 * -DGORILA_VERSION="..." and -DGORILA_GIT_DESCRIBE="..." by the Makefile
 * (only this file depends on them). */
#include "version.h"

#ifndef GORILA_SOURCE_ID
#define GORILA_SOURCE_ID "unknown"
#endif
#ifndef GORILA_VERSION
#define GORILA_VERSION "unknown"
#endif
#ifndef GORILA_GIT_DESCRIBE
#define GORILA_GIT_DESCRIBE ""
#endif
#ifndef GORILA_LICENSE
#define GORILA_LICENSE "MIT"
#endif

const char *gorila_version(void) { return GORILA_VERSION; }

const char *gorila_git_describe(void) { return GORILA_GIT_DESCRIBE; }

const char *gorila_license(void) { return GORILA_LICENSE; }

const char *gorila_source_id(void) { return GORILA_SOURCE_ID; }

const char *gorila_build(void) { return "gorila " GORILA_VERSION " (source " GORILA_SOURCE_ID ")"; }
