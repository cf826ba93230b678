# SPDX-License-Identifier: Apache-2.0
# Write one file past max_file_bytes (10m in the boundary policy):
# RLIMIT_FSIZE stops the write with EFBIG (Python ignores SIGXFSZ).
import blib

limit = 10 << 20
chunk = b"\0" * (1 << 20)
written = 0
try:
    with open("/workspace/work/big.bin", "wb", buffering=0) as f:
        while written < limit + (2 << 20):
            written += f.write(chunk)
    blib.report("big_file", False, None, "wrote %d bytes" % written)
except OSError as e:
    blib.report("big_file", True, blib.layer_of_errno(e.errno),
                "write stopped at %d bytes: %s" % (written, blib.ename(e.errno)))
