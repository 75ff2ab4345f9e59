/* SPDX-License-Identifier: MIT */
/* clones.h (private to agents/): AGENTS_HOT marks a plain-C loop kernel to be
 * compiled three times, for x86-64-v4 (AVX-512), x86-64-v3 (AVX2) and the
 * baseline, with the best one picked when the program loads (GCC/Clang
 * target_clones, an ifunc). The build stays portable, one binary for every
 * x86-64 machine, while the loops run at the machine's vector width.
 *
 * All three give bit-identical results: the loops only use IEEE operations
 * lane by lane, the build forbids contraction into FMAs (-ffp-contract=off)
 * and reassociation (no -ffast-math), so vector width changes nothing but
 * speed. Define AGENTS_NO_CLONES to build one baseline version. */
#ifndef GORILA_AGENTS_CLONES_H
#define GORILA_AGENTS_CLONES_H

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(AGENTS_NO_CLONES)
#define AGENTS_HOT __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define AGENTS_HOT
#endif

#endif
