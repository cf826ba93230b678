# What the sandbox can learn of the host's layout from its own /proc:
# mountinfo (bind sources carried the host run directory, named with the
# supervisor's pid) and the cgroup file (the host cgroup, named with the
# supervisor's pid too).  Blocked when neither names anything of a run:
# every cgroup line is the namespace's root "/", and mountinfo holds no
# cordon-run, cordon-, /tmp/ or run-directory path.
import blib

P = blib.params()
leaks = []
with open("/proc/self/mountinfo") as f:
    for line in f:
        root = line.split()[3]
        if "cordon" in root or root.startswith("/tmp") or "runs/" in root:
            leaks.append("mountinfo root " + root)
with open("/proc/self/cgroup") as f:
    for line in f:
        path = line.rstrip("\n").split(":", 2)[2]
        if path != "/":
            leaks.append("cgroup " + path)
blib.report("host_paths", not leaks, "mounts" if not leaks else None,
            "; ".join(leaks) if leaks else "mountinfo roots are policy paths only; every cgroup line is /")
