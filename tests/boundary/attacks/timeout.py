# SPDX-License-Identifier: Apache-2.0
# Sleep past the policy's timeout (5s), after starting a setsid'd daemon
# that carries the runner's marker: the supervisor must end the run as
# timed_out and nothing of it may survive (docs/runtime.md, "The init and the timeout's backstop").
import os
import time

import blib

marker = blib.params()["marker"]
if os.fork() == 0:
    try:
        os.setsid()                                    # a session of its own: the pid namespace still holds it
    except OSError:
        pass
    if os.fork() == 0:
        os.execv("/usr/bin/python3", ["/usr/bin/python3", "-c", "import time; time.sleep(120)", marker])
    os._exit(0)
os.wait()
blib.report("timeout", None, None, "sleeping past the timeout")
time.sleep(60)
