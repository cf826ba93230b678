# SPDX-License-Identifier: Apache-2.0
# chroot, the first step of the classic chroot escape.  base.policy
# refuses it; the kernel wants CAP_SYS_CHROOT as well.
import blib

real = blib.syscall("chroot", b"/tmp")
oracle = blib.syscall("chroot", 1)                     # the kernel: EFAULT
blib.refused_call("chroot", "chroot(/tmp)", real, oracle)
