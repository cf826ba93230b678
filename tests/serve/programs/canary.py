# SPDX-License-Identifier: Apache-2.0
# One of 20 executions at once: leave this execution's canary in every
# place (files, a running child process's argv and environment, os.environ),
# hold while the others do the same, then look for every canary this one
# can see.  The runner checks that each saw its own everywhere (the
# control) and no other's, and that the 20 really ran at the same time.
import time

import slib

t_start = time.time()
p = slib.params()
me = p["canary"]
slib.plant_files(me)
slib.plant_env(me)
child = slib.start_process(me)
time.sleep(p.get("hold", 3))
seen = slib.scan(p["prefix"])
slib.report(canary=me, start=t_start, end=time.time(), seen=seen, child=child, pids=slib.pids(),
            foreign={k: [c for c in v if c != me] for k, v in seen.items()})
