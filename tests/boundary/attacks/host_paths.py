# SPDX-License-Identifier: Apache-2.0
# What the sandbox can learn of the host's layout from its own /proc
# (params "what"):
#   mountinfo  bind sources carried the host run directory, named with the
#              supervisor's pid; blocked (layer mounts) when no root field
#              names cordon-run, cordon-, /tmp or a run directory: the
#              private filesystems are tmpfs mounts of the sandbox's own
#   cgroup     the host cgroup, named with the supervisor's pid too;
#              blocked (layer cgroupns) when every line is the namespace's
#              root "/": the namespace is made after the cgroups are joined
import blib

what = blib.params().get("what", "mountinfo")
leaks = []
if what == "mountinfo":
    with open("/proc/self/mountinfo") as f:
        for line in f:
            root = line.split()[3]
            if "cordon" in root or root.startswith("/tmp") or "runs/" in root:
                leaks.append("mountinfo root " + root)
    layer, fine = "mounts", "mountinfo roots are policy paths or / only"
else:
    with open("/proc/self/cgroup") as f:
        for line in f:
            path = line.rstrip("\n").split(":", 2)[2]
            if path != "/":
                leaks.append("cgroup " + path)
    layer, fine = "cgroupns", "every /proc/self/cgroup line is /"
blib.report("host_paths", not leaks, layer if not leaks else None, "; ".join(leaks) if leaks else fine)
