# SPDX-License-Identifier: Apache-2.0
# A call base.policy answers with `kill`: reboot (harmless command CAD_OFF)
# in a child, which must die of SIGSYS at once.  Without the filter the
# kernel refuses it for want of CAP_SYS_BOOT (EPERM).
import os
import signal

import blib

pid = os.fork()
if pid == 0:
    r, e = blib.syscall("reboot", 0xfee1dead, 672274793, 0, 0)   # LINUX_REBOOT_CMD_CAD_OFF
    os._exit({None: 0, "EPERM": 3}.get(e, 4))
_, st = os.waitpid(pid, 0)
if os.WIFSIGNALED(st):
    sig = signal.Signals(os.WTERMSIG(st)).name
    blib.report("reboot", True, "seccomp" if sig == "SIGSYS" else "signal:" + sig,
                "child calling reboot() died of %s" % sig)
else:
    code = os.WEXITSTATUS(st)
    blib.report("reboot", code != 0, {0: None, 3: "capabilities"}.get(code, "kernel"),
                "reboot() returned %s" % {0: "0", 3: "EPERM"}.get(code, "another error"))
