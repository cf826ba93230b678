# SPDX-License-Identifier: Apache-2.0
# Stays alive for the host side: writes this run's token where the runner
# (and only the runner) can read it, /workspace/logs/executor/token (the
# runner reads it through /proc/<pid>/root), then waits until the runner
# removes it (at most params "hold" seconds).  The peer checks connect to this run's socket from outside the
# sandbox meanwhile, then this program sends their request itself (params
# "inside"): from here it is allowed.  The token check keeps a run alive so.
import os
import time

import tlib

P = tlib.params()
with open("/workspace/logs/executor/token.tmp", "w") as f:
    f.write(tlib.TOKEN)
os.rename("/workspace/logs/executor/token.tmp", "/workspace/logs/executor/token")
end = time.monotonic() + P.get("hold", 20)
while os.path.exists("/workspace/logs/executor/token") and time.monotonic() < end:
    time.sleep(0.05)
inside = tlib.call(**P["inside"]) if "inside" in P else None
tlib.report(released=not os.path.exists("/workspace/logs/executor/token"), inside=inside)
