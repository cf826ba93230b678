# SPDX-License-Identifier: Apache-2.0
# Read the host's password hashes.  /etc is not bound into the sandbox (only
# /etc/alternatives is), so the file is simply not in its root: ENOENT.
import blib

try:
    with open("/etc/shadow", "rb") as f:
        data = f.read(64)
    blib.report("read_shadow", False, None, "read %d bytes of /etc/shadow" % len(data))
except OSError as e:
    blib.report("read_shadow", True, blib.layer_of_errno(e.errno),
                "open /etc/shadow: %s (the host has it; the sandbox root does not)" % blib.ename(e.errno))
