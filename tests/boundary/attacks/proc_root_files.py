# SPDX-License-Identifier: Apache-2.0
# Reach the kernel through root's files in /proc: /proc/sysrq-trigger
# (reboot, crash the host), /proc/mtrr (memory type registers) for writing,
# /proc/kcore and /proc/kmsg for reading.  They are root's, and uid 0 is not
# mapped in the sandbox: the mode bits refuse (EACCES) before landlock is
# asked, and with landlock off (control no-landlock) they still do.  Which
# of them exist depends on the kernel; at least one must.
import os

import blib

tried, layers = [], set()
for path, mode in (("/proc/sysrq-trigger", "w"), ("/proc/mtrr", "w"), ("/proc/kcore", "rb"), ("/proc/kmsg", "rb")):
    if not os.path.exists(path):
        continue
    st = os.stat(path)
    try:
        with open(path, mode) as f:
            if mode == "w":
                f.write("x")
            else:
                f.read(1)
        blib.report("proc_root_files", False, None, "opened %s for %s" % (path, "writing" if mode == "w" else "reading"))
        raise SystemExit(0)
    except OSError as e:
        if e.errno is None:
            raise
        ours = st.st_uid == os.geteuid()
        layers.add(blib.layer_of_errno(e.errno, path_ok_for_dac=ours and mode == "w" and bool(st.st_mode & 0o200)))
        tried.append("%s (%s, owner %d, mode %o): %s" % (path, mode, st.st_uid, st.st_mode & 0o777, blib.ename(e.errno)))
layer = layers.pop() if len(layers) == 1 else ("mixed:" + ",".join(sorted(layers)) if layers else None)
blib.report("proc_root_files", bool(tried), layer, "; ".join(tried) or "none of them exists")
