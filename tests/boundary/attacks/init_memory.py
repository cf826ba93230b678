# SPDX-License-Identifier: Apache-2.0
# Read the sandbox's init: it is a fork of the supervisor, so its memory
# holds a copy of the supervisor's (the secrets file's values, a server's
# other requests).  It runs as the program's uid, so only its being
# non-dumpable stands between the program and ptrace, /proc/1/mem,
# /proc/1/environ and /proc/1/exe (under python-compute seccomp refuses
# ptrace first; under the open-seccomp control the kernel's
# ptrace_may_access does, EPERM).  /proc/1/cmdline is readable whatever
# the flag says: init blanks the supervisor's command line (host paths).
import ctypes
import os

import blib

PTRACE_ATTACH = 16
got = {}
r, e = blib.syscall("ptrace", PTRACE_ATTACH, 1, 0, 0)
got["ptrace(ATTACH, 1)"] = e or "attached"
for f in ("mem", "environ", "maps"):
    try:
        with open("/proc/1/%s" % f, "rb") as fh:
            fh.read(64)
        got["/proc/1/" + f] = "read"
    except OSError as ex:
        got["/proc/1/" + f] = blib.ename(ex.errno)
try:
    got["/proc/1/exe"] = os.readlink("/proc/1/exe")
except OSError as ex:
    got["/proc/1/exe"] = blib.ename(ex.errno)
with open("/proc/1/cmdline", "rb") as fh:
    cmdline = fh.read()
shown = cmdline.replace(b"\0", b"").decode("utf-8", "replace")
refused = all(v in ("EPERM", "EACCES", "ENOSYS") for v in got.values())
blocked = refused and shown == ""
blib.report("init_memory", blocked, "init" if blocked else None,
            "; ".join("%s: %s" % kv for kv in got.items()) + "; /proc/1/cmdline %r" % shown[:200])
