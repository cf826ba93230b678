# SPDX-License-Identifier: Apache-2.0
# breaches memory (64m): pages written, not only reserved.  Under a memory
# cgroup the OOM kill makes it limit_exceeded (memory_limit); under
# RLIMIT_AS the allocation fails and the MemoryError fails the program.
held = []
for _ in range(64):
    held.append(b"\x01" * (16 << 20))
print("not reached: %d MiB held" % (16 * len(held)))
