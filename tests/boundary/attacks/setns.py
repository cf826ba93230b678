# SPDX-License-Identifier: Apache-2.0
# Enter a namespace by descriptor (here the sandbox's own mount namespace,
# the only one it can name).  base.policy refuses setns; without it the
# kernel wants CAP_SYS_ADMIN.
import os

import blib

fd = os.open("/proc/self/ns/mnt", os.O_RDONLY)
real = blib.syscall("setns", fd, 0x00020000)
oracle = blib.syscall("setns", -1, 0)                  # the kernel: EBADF
blib.refused_call("setns", "setns(/proc/self/ns/mnt)", real, oracle)
