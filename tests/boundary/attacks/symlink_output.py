# SPDX-License-Identifier: Apache-2.0
# Declare an output that is a link to a host file (out/summary.txt ->
# /etc/passwd), hoping the supervisor reads and hashes the target.  The
# profile allows symlink (ordinary Python makes links), so the link is made
# and the supervisor's output walk must list it as a violation `symlink`
# and hash nothing: the runner checks that.
import os

import blib

try:
    os.symlink("/etc/passwd", "/workspace/out/summary.txt")
    blib.report("symlink_output", False, None, "made out/summary.txt -> /etc/passwd")
except OSError as e:
    blib.report("symlink_output", True, blib.layer_of_errno(e.errno), "symlink: " + blib.ename(e.errno))
