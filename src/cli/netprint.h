/* SPDX-License-Identifier: MIT */
/* netprint.h: a Q-network printed layer by layer, as `gorila config check`
 * and `gorila bench nn --config` both show it (so the two agree line for
 * line on one config). */
#ifndef GORILA_NETPRINT_H
#define GORILA_NETPRINT_H

#include <stddef.h>
#include <stdio.h>

#include "qnet.h"

/* "network: N parameters", then one line per layer: the input (planes
 * height x width x channels, or a vector's numbers), each conv layer's
 * output shape (filters x height x width) and filter, each linear layer's
 * width and input; each layer's parameter count. */
void netprint_layers(const QNet *net, FILE *f);

/* The network's short name into out (size bytes, always NUL-terminated):
 * observation, hidden widths, actions, "4-16-2" or "4-8-8-2 dueling"; with
 * conv layers the observation is its planes and each conv layer follows as
 * cFkKsS: "10x10x4-c16k3s1-128-6" (what gorila export prints). */
void netprint_name(const QNetSpec *s, char *out, size_t size);

#endif
