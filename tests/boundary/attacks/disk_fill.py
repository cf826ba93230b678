# SPDX-License-Identifier: Apache-2.0
# Fill the disk through the workspace, in files under max_file_bytes so the
# file-size limit does not stop it first: the supervisor's workspace
# monitor must kill the run past max_exec_workspace_delta_bytes (50m) while
# it runs (the program then sleeps past the timeout, so a monitor that
# misses it turns the run into timed_out).
import os
import time

import blib

chunk = os.urandom(1 << 20)
for i in range(40):                                    # 40 x 4 MiB = 160 MiB at most
    with open("/workspace/work/fill-%02d.bin" % i, "wb") as f:
        for _ in range(4):
            f.write(chunk)
    time.sleep(0.02)
blib.report("disk_fill", False, None, "wrote 160 MiB and was not stopped")
time.sleep(30)
