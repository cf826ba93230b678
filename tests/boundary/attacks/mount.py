# SPDX-License-Identifier: Apache-2.0
# Mount a tmpfs over /tmp.  base.policy refuses mount (EPERM); the kernel
# alone refuses it too (no CAP_SYS_ADMIN), which the oracle tells apart: a
# NULL target is EFAULT to the kernel, EPERM only to a filter.
import blib

real = blib.syscall("mount", b"none", b"/tmp", b"tmpfs", 0, 0)
oracle = blib.syscall("mount", 0, 1, 0, 0, 0)
blib.refused_call("mount", "mount(tmpfs, /tmp)", real, oracle)
