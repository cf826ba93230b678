# SPDX-License-Identifier: Apache-2.0
# Looks through everything this program can see for values it must never
# see, knowing them only by their SHA-256 (params "targets": name ->
# hex digest): another run's token, a tool's secret.  Every match of the
# regular expression params "pattern" in the environment, in every
# readable regular file under / (the host's read-only system binds /usr,
# /lib, /lib64, /etc/alternatives aside: no run writes there), in
# /proc/<pid>/{environ,cmdline,status,mountinfo} and the targets of
# /proc/<pid>/fd/* is hashed and compared.  A control target the program
# must find (its own token; a decoy placed in params.json) shows that the
# search reaches where it claims to.  Params "calls" are made first, with
# tlib.call, and their answers reported.
#
# result.json: {"found": {name: [places]}, "files", "bytes", "unreadable",
#               "answers": [...]}
import hashlib
import os
import re
import stat

import tlib

P = tlib.params()
targets = dict(P["targets"])
targets["own_token"] = hashlib.sha256(tlib.TOKEN.encode()).hexdigest()
by_hash = {v: k for k, v in targets.items()}
pattern = re.compile(P["pattern"].encode())
found = {k: [] for k in targets}
stats = {"files": 0, "bytes": 0, "unreadable": 0}
SKIP = {"/usr", "/lib", "/lib64", "/etc/alternatives", "/proc", "/sys"}
LIMIT = 4 << 20

answers = [tlib.call(c["tool"], c.get("params", {})) for c in P.get("calls", [])]


def scan(data, where):
    for m in set(pattern.findall(data)):
        name = by_hash.get(hashlib.sha256(m).hexdigest())
        if name is not None and where not in found[name]:
            found[name].append(where)


def scan_file(path):
    try:
        st = os.lstat(path)
        if not stat.S_ISREG(st.st_mode):
            return
        with open(path, "rb") as f:
            data = f.read(LIMIT)
    except OSError:
        stats["unreadable"] += 1
        return
    stats["files"] += 1
    stats["bytes"] += len(data)
    scan(data, path)


for k, v in os.environ.items():
    scan(("%s=%s" % (k, v)).encode(), "environ:" + k)
for top, dirs, files in os.walk("/", onerror=lambda e: stats.__setitem__("unreadable", stats["unreadable"] + 1)):
    dirs[:] = [d for d in dirs if os.path.join(top, d) not in SKIP]
    for n in files:
        scan_file(os.path.join(top, n))
    for n in dirs + files:
        scan(n.encode(), "name:" + os.path.join(top, n))
for pid in ["self"] + [d for d in os.listdir("/proc") if d.isdigit()]:
    for n in ("environ", "cmdline", "status", "mountinfo"):
        scan_file("/proc/%s/%s" % (pid, n))
    try:
        for fd in os.listdir("/proc/%s/fd" % pid):
            scan(os.readlink("/proc/%s/fd/%s" % (pid, fd)).encode(), "fd:%s/%s" % (pid, fd))
    except OSError:
        stats["unreadable"] += 1
tlib.report(found=found, answers=answers, **stats)
