# SPDX-License-Identifier: Apache-2.0
# Attach to another process.  The only other processes are this program's
# own, so it forks a child and tries PTRACE_ATTACH on it: base.policy
# refuses ptrace (EPERM).  Without the filter (control open-seccomp) the
# attach works: the same uid may trace its own child, and landlock allows
# tracing inside its domain.
import os
import signal
import time

import blib

PTRACE_ATTACH, PTRACE_DETACH = 16, 17
pid = os.fork()
if pid == 0:
    time.sleep(30)
    os._exit(0)
real = blib.syscall("ptrace", PTRACE_ATTACH, pid, 0, 0)
oracle = blib.syscall("ptrace", 0x7FFF, -1, 0, 0)      # the kernel: ESRCH
if real[0] == 0:
    blib.syscall("ptrace", PTRACE_DETACH, pid, 0, 0)
os.kill(pid, signal.SIGKILL)
os.waitpid(pid, 0)
blib.refused_call("ptrace", "ptrace(PTRACE_ATTACH, child %d)" % pid, real, oracle)
