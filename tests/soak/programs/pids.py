# SPDX-License-Identifier: Apache-2.0
# forks past the pids limit (16): children sleep until the program ends;
# the fork the limit refuses ends it with exit 1, so limit_exceeded
# (pids_limit) under a pids cgroup, failed under RLIMIT_NPROC.
import os
import sys
import time
for n in range(64):
    try:
        pid = os.fork()
    except OSError as e:
        print("fork %d refused: %s" % (n, e))
        sys.exit(1)
    if pid == 0:
        time.sleep(30)
        os._exit(0)
print("not reached: 64 forks")
