# SPDX-License-Identifier: Apache-2.0
# A fork bomb: a child that forks as fast as it can, every descendant too,
# each then sleeping.  The program itself (pid 2) watches for 1.5 s,
# counts its processes, reads the first refusal one of them wrote, and
# exits, which ends the whole pid namespace.  The pids limit (32) is a
# cgroup as root and RLIMIT_NPROC rootless: the latter shows in getrlimit.
# Both are one above the policy's for the sandbox's init (pid 1, cordon's),
# which is not counted here.
import os
import resource
import time

import blib

pids_limit = 32
first = "/tmp/fork-refused"
bomber = os.fork()
if bomber == 0:
    for _ in range(200):
        try:
            os.fork()
        except OSError as e:
            try:
                fd = os.open(first, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
                os.write(fd, blib.ename(e.errno).encode())
                os.close(fd)
            except OSError:
                pass
            break
    time.sleep(60)
    os._exit(0)
time.sleep(1.5)
n = sum(1 for p in os.listdir("/proc") if p.isdigit() and p != "1")
try:
    with open(first) as f:
        err = f.read()
except FileNotFoundError:
    err = None
soft, _ = resource.getrlimit(resource.RLIMIT_NPROC)
layer = "rlimit" if soft != resource.RLIM_INFINITY and soft <= pids_limit + 1 else "cgroup"
blocked = err is not None and n <= pids_limit
blib.report("fork_bomb", blocked, layer if blocked else None,
            "fork refused with %s at %d processes (limit %d); RLIMIT_NPROC %s"
            % (err, n, pids_limit, "unlimited" if soft == resource.RLIM_INFINITY else soft),
            processes=n)
