# SPDX-License-Identifier: Apache-2.0
# Reach /sys (cgroups, devices, kernel knobs): it is not mounted at all.
import os

import blib

try:
    os.listdir("/sys")
    blib.report("write_sys", False, None, "/sys is there")
except OSError as e:
    e2 = blib.try_write("/sys/kernel/uevent_helper")
    blib.report("write_sys", True, blib.layer_of_errno(e.errno),
                "listdir /sys: %s; write /sys/kernel/uevent_helper: %s" % (blib.ename(e.errno), blib.ename(e2)))
