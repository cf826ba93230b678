# SPDX-License-Identifier: Apache-2.0
# Who the program is: uid 1001 and gid 1000 in all four slots, no
# supplementary groups (rootless: any the caller kept show as the overflow
# gid 65534, unmapped, and grant nothing).  A file it makes is its own; the
# runner checks the owner on the host side too.
import os
import time

import blib

st = blib.status()
uids = [int(x) for x in st["Uid"].split()]
gids = [int(x) for x in st["Gid"].split()]
groups = [int(x) for x in st["Groups"].split()]
with open("/workspace/out/owned.txt", "w") as f:
    f.write("mine\n")
fst = os.stat("/workspace/out/owned.txt")
ok = (uids == [1001] * 4 and gids == [1000] * 4 and all(g == 65534 for g in groups)
      and (fst.st_uid, fst.st_gid) == (1001, 1000))
blib.report("identity", ok, "identity" if ok else None,
            "Uid %s Gid %s Groups %s; new file %d:%d" % (uids, gids, groups or "none", fst.st_uid, fst.st_gid),
            groups=groups)
# The file lives in the sandbox's own tmpfs: the runner looks at its host
# owner through /proc/<pid>/root while the program still lives.
time.sleep(blib.params().get("hold", 0))
