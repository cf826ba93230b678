# SPDX-License-Identifier: Apache-2.0
# Make a device node for /dev/mem (char 1,1) in the workspace.  The
# profile allows mknodat (os.mkfifo needs it); the kernel wants CAP_MKNOD
# in the initial user namespace for a device (EPERM), and the workspace is
# nodev besides.
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
