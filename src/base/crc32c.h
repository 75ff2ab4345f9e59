/* SPDX-License-Identifier: MIT */
/* crc32c.h: CRC-32C (Castagnoli), the checksum of checkpoint files.
 *
 * Reflected polynomial 0x82F63B78, initial value and final xor 0xFFFFFFFF
 * (the iSCSI / ext4 / SSE4.2 convention): crc32c("123456789") = 0xE3069283.
 * A byte table drives the portable code; on x86-64 CPUs with SSE4.2 the
 * crc32 instruction is used instead (chosen per call, no global state).
 * Both give identical results; tests/unit/test_ckptfile.c checks one against
 * the other.
 */
#ifndef GORILA_CRC32C_H
#define GORILA_CRC32C_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* CRC of data[0 .. bytes) continuing from crc, the value returned for the
 * bytes before (0 to start). Chaining is exact:
 *   crc32c_update(crc32c_update(0, a, na), b, nb) == crc32c(a ++ b).
 * data may be NULL when bytes is 0. */
uint32_t crc32c_update(uint32_t crc, const void *data, size_t bytes);

/* One-shot CRC: crc32c_update(0, data, bytes). */
uint32_t crc32c(const void *data, size_t bytes);

/* The portable table-driven code alone (the reference for the tests). */
uint32_t crc32c_update_sw(uint32_t crc, const void *data, size_t bytes);

/* True when crc32c_update uses the CPU's crc32 instruction. */
bool crc32c_hw_available(void);

#endif
