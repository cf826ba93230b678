# SPDX-License-Identifier: Apache-2.0
# Swap the root.  The kernel checks CAP_SYS_ADMIN before it reads
# pivot_root's arguments, so no bad-argument oracle separates the filter's
# EPERM from the kernel's here.  The attack is therefore the whole path an
# attacker takes, in a child: unshare(CLONE_NEWUSER|CLONE_NEWNS) for a
# namespace where it holds CAP_SYS_ADMIN, a fresh tmpfs (mounts copied from
# a more privileged namespace are locked and cannot become the new root),
# then pivot_root into it.  The layer is the one that stopped the first
# step that failed: under python-compute, unshare (its oracle shows the
# filter); under the control open-seccomp, the mount (landlock refuses
# every mount-tree change of a sandboxed process); with landlock off too
# (control no-landlock) all three work, inside the sandbox's namespaces.
import json
import os

import blib

CLONE_NEWNS, CLONE_NEWUSER = 0x00020000, 0x10000000
rd, wr = os.pipe()
pid = os.fork()
if pid == 0:
    steps = {"direct": blib.syscall("pivot_root", b"/tmp", b"/tmp"), "landlock": blib.landlock_active()}
    steps["unshare"] = blib.syscall("unshare", CLONE_NEWUSER | CLONE_NEWNS)
    steps["unshare_oracle"] = blib.syscall("unshare", -1)
    if steps["unshare"][0] == 0:
        steps["mount"] = blib.syscall("mount", b"none", b"/tmp", b"tmpfs", 0, 0)
        if steps["mount"][0] == 0:
            steps["pivot_root"] = blib.syscall("pivot_root", b"/tmp", b"/tmp")
    os.write(wr, json.dumps(steps).encode())
    os._exit(0)
os.close(wr)
s = json.loads(os.read(rd, 4096))
os.waitpid(pid, 0)
ev = "pivot_root without privilege: %s" % (s["direct"][1] or "0")
if s["unshare"][0] != 0:
    blib.refused_call("pivot_root", ev + "; unshare(CLONE_NEWUSER|CLONE_NEWNS) for CAP_SYS_ADMIN",
                      s["unshare"], s["unshare_oracle"])
else:
    for step in ("mount", "pivot_root"):
        r, e = s[step]
        if r != 0:
            ll = e == "EPERM" and s["landlock"]
            blib.report("pivot_root", True, "landlock" if ll else "kernel:" + e,
                        ev + "; after unshare, %s: %s%s" % (step, e, " (landlock is on)" if ll else ""))
            break
    else:
        blib.report("pivot_root", False, None, ev + "; unshare, mount tmpfs, pivot_root into it: all succeeded")
