# SPDX-License-Identifier: Apache-2.0
# An orphan: a grandchild whose parent has exited is re-parented to pid 1
# of the namespace.  When the program was pid 1 it never reaped them, and
# each stayed a zombie for the rest of the run (issue 14); cordon's init
# reaps every child it gets.  Checked while the program still runs: the
# orphans are gone from /proc, no zombie is left.
import os
import time

import blib

rd, wr = os.pipe()
if os.fork() == 0:
    for _ in range(3):
        if os.fork() == 0:
            time.sleep(0.2)
            os._exit(0)
    os.write(wr, b"x")
    os._exit(0)                         # the three become orphans
os.wait()
os.read(rd, 1)
zombies = []
for _ in range(40):
    time.sleep(0.05)
    zombies = []
    for p in os.listdir("/proc"):
        if p.isdigit():
            try:
                with open("/proc/%s/stat" % p) as f:
                    if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                        zombies.append(int(p))
            except OSError:
                pass
    left = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
    if not zombies and left == [1, os.getpid()]:
        break
blocked = not zombies and left == [1, os.getpid()]
blib.report("orphans", blocked, "init" if blocked else None,
            "three orphans exited 0.2 s after their parent; zombies %s, /proc lists %s" % (zombies, left))
