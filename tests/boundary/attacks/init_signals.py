# SPDX-License-Identifier: Apache-2.0
# Stop or kill the sandbox's init (pid 1, cordon's: the timeout's backstop
# and the reaper).  The kernel delivers a signal sent from inside a pid
# namespace to its init only when init has a handler for it, and cordon's
# init has none: every kill() "succeeds" and is dropped.  kill(-1, ...)
# never reaches pid 1 either.  The program is pid 2, in a process group
# of its own.
import os
import signal
import time

import blib


def state():
    with open("/proc/1/stat") as f:
        return f.read().rsplit(")", 1)[1].split()[0]


with open("/proc/1/comm") as f:
    comm = f.read().strip()
sent = []
for sig in (signal.SIGSTOP, signal.SIGKILL, signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGSEGV):
    try:
        os.kill(1, sig)
        sent.append("%s ok" % sig.name)
    except OSError as e:
        sent.append("%s %s" % (sig.name, blib.ename(e.errno)))
try:
    os.kill(-1, signal.SIGKILL)        # every process it may signal but pid 1 and itself
    sent.append("kill(-1, SIGKILL) ok")
except OSError as e:
    sent.append("kill(-1, SIGKILL) %s" % blib.ename(e.errno))
time.sleep(0.3)
st = state()
with open("/proc/self/stat") as f:
    pgrp = int(f.read().rsplit(")", 1)[1].split()[2])
blocked = comm == "cordon-init" and st in ("S", "R") and os.getpid() == 2 and pgrp == 2
blib.report("init_signals", blocked, "pidns" if blocked else None,
            "pid 1 is %r, state %s after kill(1, ...): %s; this program pid %d, process group %d"
            % (comm, st, ", ".join(sent), os.getpid(), pgrp))
