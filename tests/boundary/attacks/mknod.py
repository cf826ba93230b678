# Make a device node for /dev/mem (char 1,1) in the workspace.  mknodat is
# not in the profile (ENOSYS); without the filter the kernel still wants
# CAP_MKNOD in the initial user namespace (EPERM), and the workspace is
# nodev.
import os
import stat

import blib

try:
    os.mknod("/workspace/work/mem", stat.S_IFCHR | 0o600, os.makedev(1, 1))
    blib.report("mknod", False, None, "made char device 1,1")
except OSError as e:
    n = blib.ename(e.errno)
    layer = "capabilities" if n == "EPERM" else blib.layer_of_errno(e.errno)
    blib.report("mknod", True, layer, "mknod c 1 1: " + n)
