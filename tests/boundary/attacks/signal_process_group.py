# SPDX-License-Identifier: Apache-2.0
# Signal the supervisor without knowing its pid: kill(0, sig) sends to every
# process of the caller's process group, and the pid namespace does not
# limit it, because the executor is still in the group (and session) of the
# cordon process that cloned it.  The program cannot see whether anyone was
# hit (it is in the group itself and ignores the signal); the runner checks
# that the supervisor lived to report the run.
# What stops it: an executor in a session of its own, the program leading
# a process group in it (its group is then its own pid as seen here, else
# 0: a group led from outside the namespace);
# else, as root, the supervisor is root and the executor is not (identity);
# rootless they are the same user, and only landlock's signal scope (ABI
# 6+) refuses it.
import os
import signal
import time

import blib

with open("/proc/self/stat") as f:
    fields = f.read().rsplit(")", 1)[1].split()
pgrp, session = int(fields[2]), int(fields[3])
signal.signal(signal.SIGUSR1, signal.SIG_IGN)   # it reaches this program too
os.kill(0, signal.SIGUSR1)                 # default action: terminate
time.sleep(0.5)
blib.report("signal_process_group", None, None,
            "sent SIGUSR1 to process group 0 (pgrp %d, session %d as seen inside)" % (pgrp, session),
            own_group=pgrp == os.getpid())
