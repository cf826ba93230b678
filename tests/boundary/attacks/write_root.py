# SPDX-License-Identifier: Apache-2.0
# Write at / : the sandbox root is a tmpfs remounted read-only.
import blib

blib.write_attack("write_root", ["/boundary-x", "/lib/boundary-x", "/dev/boundary-x"])
