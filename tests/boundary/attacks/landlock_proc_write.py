# SPDX-License-Identifier: Apache-2.0
# A write that only landlock refuses: /proc/self/comm belongs to this
# process (uid 1001, mode 0644) on the read-write proc mount, so neither
# the mount nor the mode bits refuse it, and with landlock off (control
# policy no-landlock) it succeeds.  Landlock allows writes only in the
# workspace, /tmp and /dev/shm.
import blib

path = "/proc/self/comm"
dac_ok = blib.writable_but_for_landlock(path)
e = blib.try_write(path)
if e is None:
    blib.report("landlock_proc_write", False, None, "wrote %s" % path)
else:
    blib.report("landlock_proc_write", True, blib.layer_of_errno(e, path_ok_for_dac=dac_ok),
                "write %s: %s (mount rw, owner %s, mode allows: %s)" % (path, blib.ename(e), "self", dac_ok))
