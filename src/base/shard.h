/* SPDX-License-Identifier: MIT */
/* shard.h: how the flat parameter array is cut into contiguous parts.
 * Parameter-server shards and ring-allreduce blocks both come from
 * shard_range, so they always agree. */
#ifndef GORILA_SHARD_H
#define GORILA_SHARD_H

#include <stddef.h>

/* Split n items into k contiguous parts; part i is [*off, *off + *len).
 * The first n % k parts get one extra item, so any n works (n < k gives
 * some empty parts). k >= 1, 0 <= i < k. */
static inline void shard_range(size_t n, int k, int i, size_t *off, size_t *len) {
    size_t base = n / (size_t)k, extra = n % (size_t)k, ui = (size_t)i;
    *len = base + (ui < extra);
    *off = ui * base + (ui < extra ? ui : extra);
}

#endif
