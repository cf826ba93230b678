# SPDX-License-Identifier: Apache-2.0
# Write into /etc: a directory of the sandbox's tmpfs root, remounted
# read-only before pivot_root (the passwd file cordon writes there too).
import blib

blib.write_attack("write_etc", ["/etc/boundary-x", "/etc/passwd", "/etc/alternatives/boundary-x"])
