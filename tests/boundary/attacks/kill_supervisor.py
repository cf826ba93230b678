# SPDX-License-Identifier: Apache-2.0
# Kill the supervisor.  Its host pid (the runner passes it) does not exist
# in the sandbox's pid namespace (ESRCH); pid 1 is the sandbox's init
# (cordon's), and SIGKILL from inside a namespace to its init is dropped by
# the kernel.  /proc shows the init and this program (pid 2) only.  The
# runner checks the supervisor lived to report the run.
import os
import signal

import blib

sup = blib.supervisor_pid()
try:
    os.kill(sup, signal.SIGKILL)
    res = "delivered"
except OSError as e:
    res = blib.ename(e.errno)
try:
    os.kill(1, signal.SIGKILL)
    self_res = "returned, still alive"
except OSError as e:
    self_res = blib.ename(e.errno)
pids = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
blocked = res != "delivered" and pids == [1, os.getpid()]
blib.report("kill_supervisor", blocked, blib.layer_of_errno(res) if blocked else None,
            "kill(%d, SIGKILL): %s; kill(1, SIGKILL): %s; /proc pids %s" % (sup, res, self_res, pids))
