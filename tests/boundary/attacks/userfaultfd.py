# SPDX-License-Identifier: Apache-2.0
# Get a userfaultfd (user-mode faults only, which needs no privilege): the
# tool that widens kernel race windows in exploits.
import os

import blib

UFFD_USER_MODE_ONLY = 1
real = blib.syscall("userfaultfd", os.O_CLOEXEC | UFFD_USER_MODE_ONLY)
oracle = blib.syscall("userfaultfd", -1)               # the kernel: EINVAL
blib.refused_call("userfaultfd", "userfaultfd(UFFD_USER_MODE_ONLY)", real, oracle)
