# SPDX-License-Identifier: Apache-2.0
# Write into /usr: a read-only bind of the host's /usr.
import blib

blib.write_attack("write_usr", ["/usr/boundary-x", "/usr/bin/boundary-x", "/usr/lib/python3/boundary-x"])
