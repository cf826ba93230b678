# SPDX-License-Identifier: Apache-2.0
# Hard-link a file from outside the workspace into it (then it could be an
# output, or be written through if it were writable): links never cross
# mounts, and /usr is another mount than /workspace/work.
import os

import blib

try:
    os.link("/usr/bin/python3", "/workspace/work/x")
    blib.report("hardlink_outside", False, None, "linked /usr/bin/python3 into the workspace")
except OSError as e:
    blib.report("hardlink_outside", True, blib.layer_of_errno(e.errno),
                "link /usr/bin/python3 -> work/x: " + blib.ename(e.errno))
