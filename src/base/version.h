/* SPDX-License-Identifier: MIT */
/* version.h: which gorila this binary is.
 *
 * gorila_version() is the release number (the top-level VERSION file, the
 * top entry of CHANGELOG.md); gorila_source_id() is a hash of
 * every source file the binary was built from (the Makefile computes it:
 * SOURCE_ID), so two builds of the same tree on different hosts agree and a
 * build with any change in src/, envs/, agents/ or the Makefile does not.
 * A distributed job exchanges gorila_build() at start-up, before it reads
 * anything, and refuses to run ranks of different builds (src/mpi/job.c):
 * their messages would not mean the same thing. */
#ifndef GORILA_VERSION_H
#define GORILA_VERSION_H

/* The release, "0.6.0" (the Makefile passes VERSION's contents). */
const char *gorila_version(void);

/* `git describe --tags --always --dirty` of the checkout the binary was
 * built in, or "" when it was built outside a git checkout (a tarball). */
const char *gorila_git_describe(void);

/* The licence of the binary as built, an SPDX expression: "MIT", or
 * "GPL-3.0-or-later" when GPL-licensed parts are linked in. */
const char *gorila_license(void);

/* The 12 hex digits of the source hash ("unknown" when built without the
 * Makefile's SOURCE_ID). */
const char *gorila_source_id(void);

/* "gorila 0.6.0 (source 1a2b3c4d5e6f)": what `gorila version` prints and
 * what the ranks of a job compare. */
const char *gorila_build(void);

#endif
