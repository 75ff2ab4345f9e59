#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""ckptpatch.py FILE SECTION INDEX VALUE: set one float32 of a checkpoint file.

SECTION is params, target or optim (optim: INDEX counts the floats after the
8-byte step count, slot after slot). The value is written, then every CRC of
the file is recomputed (its sections, table and header) and its line of the
MANIFEST beside it (size, whole-file CRC) and the MANIFEST's own CRC are
rebound, so only a check of the values themselves can see the change.
Works on ps-<p>.ckpt and learner-<k>.ckpt. Layout: docs/CHECKPOINT.md.
"""
import os
import re
import struct
import sys

SECTION_IDS = {"params": 1, "target": 2, "optim": 3}


def crc_table():
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


TABLE = crc_table()


def crc32c(data):
    c = 0xFFFFFFFF
    for x in data:
        c = TABLE[(c ^ x) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def patch_file(path, section, index, value):
    b = bytearray(open(path, "rb").read())
    ns = struct.unpack_from("<I", b, 20)[0]
    off, secs = 256 + 16 * ns, []
    for i in range(ns):
        sid, _, n = struct.unpack_from("<IIQ", b, 256 + 16 * i)
        secs.append((i, sid, off, n))
        off += n
    found = [s for s in secs if s[1] == SECTION_IDS[section]]
    if not found:
        sys.exit("%s has no %s section" % (path, section))
    _, _, base, n = found[0]
    at = base + (8 if section == "optim" else 0) + 4 * index
    if at + 4 > base + n:
        sys.exit("%s: %s index %d out of range" % (path, section, index))
    struct.pack_into("<f", b, at, value)
    for i, _, o, k in secs:
        struct.pack_into("<I", b, 256 + 16 * i + 4, crc32c(b[o:o + k]))
    struct.pack_into("<I", b, 24, crc32c(b[256:256 + 16 * ns]))
    struct.pack_into("<I", b, 252, crc32c(b[:252]))
    open(path, "wb").write(b)
    return b


def rebind(path, b):
    d, name = os.path.split(path)
    m = re.match(r"(ps|learner)-(\d+)\.ckpt$", name)
    prefix = ("shard " if m.group(1) == "ps" else "learner ") + m.group(2) + " bytes "
    mpath = os.path.join(d, "MANIFEST")
    lines = open(mpath).read().split("\n")[:-2]  # without the crc32c line
    for k, line in enumerate(lines):
        if line.startswith(prefix):
            w = line.split(" ")
            w[3], w[5] = str(len(b)), "%08x" % crc32c(b)
            lines[k] = " ".join(w)
    text = "\n".join(lines) + "\n"
    open(mpath, "w").write(text + "crc32c %08x\n" % crc32c(text.encode()))


def main():
    assert crc32c(b"123456789") == 0xE3069283
    path, section, index, value = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
    rebind(path, patch_file(path, section, index, value))


if __name__ == "__main__":
    main()
