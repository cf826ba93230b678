# SPDX-License-Identifier: Apache-2.0
# Set up an io_uring: an I/O path whose operations the seccomp filter never
# sees one by one.
import ctypes

import blib

params = (ctypes.c_uint8 * 120)()
real = blib.syscall("io_uring_setup", 4, ctypes.addressof(params))
oracle = blib.syscall("io_uring_setup", 0, 0)          # the kernel: EFAULT or EINVAL
blib.refused_call("io_uring_setup", "io_uring_setup(4 entries)", real, oracle)
