# SPDX-License-Identifier: Apache-2.0
# Read the supervisor's environment (the runner puts a secret in it) through
# /proc.  The sandbox has its own pid namespace and its own /proc: pid 1 is
# the sandbox's init, pid 2 this program, the supervisor's host pid does
# not exist here (the init's environment, a copy of the supervisor's, is
# not readable: attacks/init_memory.py).  Everything
# readable under /proc/*/environ is returned so the runner can check that
# the secret is not in it.
import os

import blib

me = os.getpid()
pids = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
seen = []
for p in pids:
    for f in ("environ", "cmdline"):
        try:
            with open("/proc/%d/%s" % (p, f), "rb") as fh:
                seen.append(fh.read(8192).replace(b"\0", b" ").decode("utf-8", "replace"))
        except OSError:
            pass
sup = blib.supervisor_pid()
try:
    with open("/proc/%d/environ" % sup, "rb") as fh:
        fh.read()
    sup_err = None
except OSError as e:
    sup_err = blib.ename(e.errno)
blocked = pids == [1, me] and me == 2 and sup_err is not None
blib.report("read_supervisor_environ", blocked, "pidns" if blocked else None,
            "/proc lists pids %s (this program is %d); /proc/%s/environ (the supervisor's host pid): %s"
            % (pids, me, sup, sup_err or "read"), seen="\n".join(seen))
