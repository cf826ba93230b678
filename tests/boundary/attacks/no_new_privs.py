# SPDX-License-Identifier: Apache-2.0
# no_new_privs must be set (it is what makes landlock and seccomp stick
# across execve, and setuid bits inert).
import blib

v = blib.status().get("NoNewPrivs")
blib.report("no_new_privs", v == "1", "no_new_privs" if v == "1" else None, "NoNewPrivs: %s" % v)
