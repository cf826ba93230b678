# SPDX-License-Identifier: Apache-2.0
# One of 20 runs at once: leave a canary in every writable place, wait for
# the others to do the same, then look everywhere this run can see for a
# canary that is not its own.  Each run has its own workspace binds, /tmp,
# /dev/shm and /proc.
import os
import time

import blib

me = blib.params()["canary"]
places = ["/workspace/work", "/workspace/out", "/workspace/logs/executor", "/tmp", "/dev/shm"]
for d in places:
    with open(os.path.join(d, "canary-" + me), "w") as f:
        f.write(me)
time.sleep(1.0)
seen = set()
for top in places + ["/workspace"]:
    for root, dirs, files in os.walk(top):
        for n in dirs + files:
            if n.startswith("canary-"):
                seen.add(n[len("canary-"):])
foreign = sorted(seen - {me})
pids = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
ok = not foreign and me in seen and pids == [1, os.getpid()]   # its init and itself
blib.report("concurrent", ok, "mounts" if ok else None,
            "own canary %s seen, foreign %s, /proc pids %s" % (me in seen, foreign or "none", pids),
            canary=me, foreign=foreign)
