# SPDX-License-Identifier: Apache-2.0
# Leave a process behind: double fork, setsid, exec a sleeper whose
# command line carries the runner's marker, then exit at once.  The runner
# scans the host's /proc for the marker after the run: when this program
# ends, the sandbox's init (pid 1) kills the rest of the pid namespace,
# daemon and all.  Both python-compute
# and the control open-seccomp allow setsid: the daemon really leaves the
# session.  params "hold": sleep
# instead of exiting (the runner then cancels or kills the supervisor).
import os
import time

import blib

p = blib.params()
marker = p["marker"]
rd, wr = os.pipe()
pid = os.fork()
if pid == 0:
    try:
        os.setsid()
        os.write(wr, b"setsid ok")
    except OSError as e:
        os.write(wr, ("setsid " + blib.ename(e.errno)).encode())
    if os.fork() == 0:
        os.execv("/usr/bin/python3", ["/usr/bin/python3", "-c", "import time; time.sleep(120)", marker])
    os._exit(0)
os.waitpid(pid, 0)
os.close(wr)
setsid = os.read(rd, 64).decode()
time.sleep(0.2)
found = blib.marker_pids(marker)
blib.report("daemon", None, None, "daemon running as pid(s) %s (%s), its parent gone" % (found, setsid),
            daemon_pids=found, setsid=setsid)
if p.get("hold"):
    time.sleep(p["hold"])
