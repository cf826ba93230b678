# SPDX-License-Identifier: Apache-2.0
# Leave a file in /tmp (and /dev/shm) for the next run to find.  Phase
# "plant" writes them (that must work: both are writable); phase "look",
# a later run, must not see them: each run gets fresh tmpfs mounts.
import os

import blib

p = blib.params()
names = ["/tmp/" + p["marker"], "/dev/shm/" + p["marker"]]
if p["phase"] == "plant":
    for n in names:
        with open(n, "w") as f:
            f.write("persist")
    blib.report("tmp_persist", False, None, "planted " + ", ".join(names), phase="plant")
else:
    found = [n for n in names if os.path.exists(n)]
    blib.report("tmp_persist", not found, None if found else "mounts",
                ("still there: %s" % found) if found else
                "%s gone: a fresh tmpfs per run (/tmp holds %s)" % (", ".join(names), os.listdir("/tmp")),
                phase="look")
