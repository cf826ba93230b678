# SPDX-License-Identifier: Apache-2.0
# The first execution: leave the canary in every place, a setsid()'d daemon
# holding it in argv and environment among them, check that all of it is
# there (the control: the same scan the next execution makes finds it),
# and end while the daemon still runs.
import time

import slib

p = slib.params()
me = p["canary"]
files = slib.plant_files(me)
slib.plant_env(me)
how = slib.start_process(me, daemon=True)
time.sleep(0.3)
slib.report(canary=me, files=files, daemon=how, seen=slib.scan(p["prefix"]), pids=slib.pids())
