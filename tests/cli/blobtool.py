#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""blobtool.py - an independent reader of the .cpol header, for tests.

Written from docs/blob-format.md, not from the C code, so the tests that use
it also check that the document describes what the C code does.

  blobtool.py rehash BLOB            recompute the SHA-256 field in place
  blobtool.py section BLOB NAME      print "offset size count" of a section
  blobtool.py poke BLOB OFFSET HEX   overwrite bytes at OFFSET
"""
import hashlib
import struct
import sys

NAMES = ["strtab", "strlist", "idxlist", "meta", "limits", "executor", "env",
         "mounts", "seccomp", "tools", "params", "constraints", "agents",
         "outputs", "signature", "sources", "lint"]


def table(buf):
    count = struct.unpack_from("<I", buf, 24)[0]
    out = {}
    for i in range(count):
        sid, cnt, off, size = struct.unpack_from("<IIQQ", buf, 64 + 24 * i)
        out[NAMES[sid - 1] if 0 < sid <= len(NAMES) else str(sid)] = (off, size, cnt)
    return out


def blob_hash(buf):
    sig_off = table(buf)["signature"][0]
    h = hashlib.sha256()
    h.update(buf[0:32])
    h.update(b"\0" * 32)
    h.update(buf[64:sig_off])
    return h.digest()


def main():
    cmd, path = sys.argv[1], sys.argv[2]
    with open(path, "rb") as f:
        buf = bytearray(f.read())
    if cmd == "rehash":
        buf[32:64] = blob_hash(buf)
    elif cmd == "section":
        off, size, cnt = table(buf)[sys.argv[3]]
        print(off, size, cnt)
        return
    elif cmd == "poke":
        off = int(sys.argv[3], 0)
        data = bytes.fromhex(sys.argv[4])
        buf[off:off + len(data)] = data
    elif cmd == "hash":
        print(blob_hash(buf).hex())
        return
    else:
        sys.exit("unknown command " + cmd)
    with open(path, "wb") as f:
        f.write(buf)


if __name__ == "__main__":
    main()
