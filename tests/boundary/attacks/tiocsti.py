# SPDX-License-Identifier: Apache-2.0
# Push a keystroke into the controlling terminal's input (CVE-2017-5226).
# The profile allows four ioctl commands, TIOCSTI is not one (ENOSYS).
# Without the filter there is still no terminal: stdin is /dev/null and
# /dev has no tty (ENOTTY, ENOENT).
import ctypes
import os

import blib

TIOCSTI = 0x5412
c = ctypes.c_char(b"x")
real = blib.syscall("ioctl", 0, TIOCSTI, ctypes.addressof(c))
tty = "present" if os.path.exists("/dev/tty") else "absent"
r, e = real
if r == 0:
    blib.report("tiocsti", False, None, "TIOCSTI on stdin worked")
else:
    blib.report("tiocsti", True, blib.layer_of_errno(e), "ioctl(0, TIOCSTI): %s; /dev/tty %s" % (e, tty))
