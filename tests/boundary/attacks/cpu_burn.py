# SPDX-License-Identifier: Apache-2.0
# CPU exhaustion: two processes spin on pure CPU for 3 s of wall time, as
# much as two cores give.  Under cpu.yaml's quota of 0.5 CPU the cgroup
# throttles the tree: together they get at most about half a CPU-second
# per second.  The program measures its children's CPU time (rusage) and
# the wall time itself; the runner also reads the cgroup's own counts
# from the result (usage.cpuThrottledPeriods, enforcement.cpu).  Without
# a quota (the control) the same program gets what the host gives.
import os
import resource
import time

import blib

QUOTA = 0.5     # cpu.yaml's execution.runtime.cpu
SPIN_S = 3.0


def spin(until):
    x = 0
    while time.monotonic() < until:
        for _ in range(10000):
            x += 1
    os._exit(0)


t0 = time.monotonic()
kids = []
for _ in range(2):
    pid = os.fork()
    if pid == 0:
        spin(t0 + SPIN_S)
    kids.append(pid)
for pid in kids:
    os.waitpid(pid, 0)
wall = time.monotonic() - t0
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
cpu = ru.ru_utime + ru.ru_stime
# The bound the quota promises, with a generous margin: the kernel refills
# the quota every 100 ms period and may let a period's slice run over.
bound = QUOTA * wall * 1.5 + 0.3
blocked = cpu <= bound
blib.report("cpu_burn", blocked, "cgroup" if blocked else None,
            "2 spinning processes got %.2f s of CPU in %.2f s of wall time (%.2f CPUs; quota %.1f, bound %.2f s)"
            % (cpu, wall, cpu / wall if wall > 0 else 0.0, QUOTA, bound),
            cpu_s=cpu, wall_s=wall, bound_s=bound)
