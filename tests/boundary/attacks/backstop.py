# SPDX-License-Identifier: Apache-2.0
# The timeout's backstop (issue 15): run past the policy's timeout (5s),
# burning CPU or sleeping, with a child that carries the runner's marker.
# The runner SIGSTOPs the supervisor once the marker is up, so the
# supervisor's own timeout cannot fire; the sandbox's init (pid 1, the
# runtime's, not the program's) must kill everything at the timeout + its
# grace all the same, which the runner sees on the host while the
# supervisor is still stopped.  params: marker, how ("burn" or "sleep").
import os
import time

import blib

p = blib.params()
burn = p.get("how") == "burn"
body = "while True: pass" if burn else "import time; time.sleep(120)"
if os.fork() == 0:
    os.execv("/usr/bin/python3", ["/usr/bin/python3", "-c", body, p["marker"]])
blib.report("backstop", None, None, "running past the timeout (%s)" % ("burning" if burn else "sleeping"))
end = time.monotonic() + 60
while time.monotonic() < end:
    if not burn:
        time.sleep(1)
