# SPDX-License-Identifier: Apache-2.0
# Run a setuid-root binary (su, from the host's /usr) and see whether it
# gained anything.  The child is left a zombie (never reaped here) so its
# final credentials stay readable in /proc/PID/status however fast it
# exits.  Three walls hold, checked in this order by the kernel at exec:
# the /usr mount is nosuid, no_new_privs is set, and uid 0 is not mapped
# in the sandbox's user namespace.  The layer named is the first.
import os
import subprocess
import time

import blib

binary = next((b for b in ("/usr/bin/su", "/usr/bin/passwd", "/usr/bin/mount")
               if os.path.exists(b) and os.stat(b).st_mode & 0o4000), None)
if binary is None:
    blib.report("setuid_binary", True, "mounts", "no setuid binary in the sandbox's /usr")
    raise SystemExit(0)
p = subprocess.Popen([binary], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
p.stdin.close()
state = comm = ""
for _ in range(5000):
    with open("/proc/%d/stat" % p.pid) as f:
        stat = f.read()
    comm = stat[stat.index("(") + 1:stat.rindex(")")]
    state = stat[stat.rindex(")") + 2]
    if state == "Z":
        break
    time.sleep(0.001)
st = {}
with open("/proc/%d/status" % p.pid) as f:
    for line in f:
        k, _, v = line.partition(":")
        st[k] = v.split()
p.wait()
uids = [int(x) for x in st["Uid"]]
me = os.getuid()
gained = any(u != me for u in uids)
_, opts = blib.mount_of(binary)
nosuid = "nosuid" in opts.split(",")
nnp = st.get("NoNewPrivs", ["?"])[0]
if comm != os.path.basename(binary)[:15]:
    blib.report("setuid_binary", None, None, "could not observe %s after exec (comm %r, state %s)" % (binary, comm, state))
elif gained:
    blib.report("setuid_binary", False, None, "%s ran with uids %s" % (binary, uids))
else:
    blib.report("setuid_binary", True, "mounts" if nosuid else ("no_new_privs" if nnp == "1" else "identity"),
                "%s (mode %o) ran with uids %s, euid %d; mount nosuid: %s; NoNewPrivs %s; uid 0 unmapped"
                % (binary, os.stat(binary).st_mode & 0o7777, uids, uids[1], nosuid, nnp))
