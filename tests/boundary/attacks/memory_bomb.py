# SPDX-License-Identifier: Apache-2.0
# Take memory until something gives (the boundary policy's limit is
# 256m).  As root the cgroup's OOM kill ends the program (the runner sees
# status limit_exceeded, error memory_limit); rootless RLIMIT_AS makes the
# allocation fail (MemoryError) and the program reports it.  Every page is
# written, so the memory is really used, not only reserved.
import blib

chunks = []
try:
    for _ in range(64):                                # 1 GiB at most
        chunks.append(b"\x01" * (16 << 20))
    blib.report("memory_bomb", False, None, "held %d MiB" % (16 * len(chunks)))
except MemoryError:
    held = 16 * len(chunks)
    chunks.clear()
    blib.report("memory_bomb", True, "rlimit", "MemoryError after %d MiB" % held)
