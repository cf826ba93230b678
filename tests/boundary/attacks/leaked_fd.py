# SPDX-License-Identifier: Apache-2.0
# Look for a descriptor the supervisor left open (its pipes, the blob, the
# socket directory): only 0, 1 and 2 may be open.  fstat on each number,
# not a listing of /proc/self/fd, so the check opens nothing itself.
import os

import blib

open_fds = []
for fd in range(3, 4096):
    try:
        os.fstat(fd)
        try:
            target = os.readlink("/proc/self/fd/%d" % fd)
        except OSError:
            target = "?"
        open_fds.append("%d -> %s" % (fd, target))
    except OSError:
        pass
blib.report("leaked_fd", not open_fds, None if open_fds else "fds",
            ("open beyond 0-2: %s" % open_fds) if open_fds else "only 0, 1, 2 open at start (checked 3-4095)")
