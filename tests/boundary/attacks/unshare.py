# SPDX-License-Identifier: Apache-2.0
# Leave the namespaces: unshare(CLONE_NEWUSER|CLONE_NEWNS) would make this
# process root of a new user namespace (the door to kernel code that trusts
# namespace root).  base.policy refuses it; without the filter it works
# (control open-seccomp), which is why the filter is there.
import blib

CLONE_NEWNS, CLONE_NEWUSER = 0x00020000, 0x10000000
real = blib.syscall("unshare", CLONE_NEWUSER | CLONE_NEWNS)
oracle = blib.syscall("unshare", -1)                   # the kernel: EINVAL
blib.refused_call("unshare", "unshare(CLONE_NEWUSER|CLONE_NEWNS)", real, oracle)
