# SPDX-License-Identifier: Apache-2.0
# Hold more than the workspace allows where a walking monitor cannot see it
# (the bypasses of the review, each a params "how"):
#   deep      files 100 directory levels down (a walk stopped at 64)
#   unlinked  one file kept open after its unlink (no name to walk)
#   hidden    inside a 0300 directory (rootless, the supervisor could not
#             read it; it also survived the cleanup)
#   entries   empty files only: no bytes, just names (nothing bounded them)
# The workspace is a tmpfs sized by the policy, so the kernel itself must
# refuse: ENOSPC, printed on stdout for the runner, which also wants the
# run ended as limit_exceeded.  params "mib" (or "files") below the limit is
# the control: then nothing refuses and the attack gets through.
import errno
import os
import sys
import time

import blib

P = blib.params()
how = P.get("how", "deep")
mib = P.get("mib", 80)
base = "/workspace/work/b"
chunk = os.urandom(1 << 20)


def stop(done):
    # Held, not released: a monitor must see it as the kernel does.  The
    # report may not fit any more (result.json is in the full workspace);
    # stdout carries the evidence.
    print("ENOSPC after %s" % done, flush=True)
    try:
        blib.report("ws_" + how, True, "workspace", "ENOSPC after %s" % done)
    except OSError:
        pass
    time.sleep(30)
    sys.exit(0)


try:
    if how == "entries":
        os.mkdir(base)
        n = P.get("files", 30000)
        for i in range(n):
            try:
                os.close(os.open("%s/%d" % (base, i), os.O_CREAT | os.O_WRONLY, 0o600))
            except OSError as e:
                if e.errno == errno.ENOSPC:
                    stop("%d files" % i)
                raise
        blib.report("ws_entries", False, None, "made %d empty files" % n)
        print("made %d files" % n, flush=True)
        sys.exit(0)
    if how == "deep":
        d = base
        for i in range(100):
            d += "/d"
        os.makedirs(d)
    elif how == "hidden":
        d = base + "/h"
        os.makedirs(d)
    else:
        d = base
        os.makedirs(d)
    files = []
    written = 0
    for i in range(mib // 8 + 1):
        path = "%s/f%d" % (d, i)
        f = open(path, "wb")
        if how == "unlinked":
            os.unlink(path)
            files.append(f)
        for _ in range(8):
            if written >= mib:
                break
            try:
                f.write(chunk)
                f.flush()
            except OSError as e:
                if e.errno == errno.ENOSPC:
                    stop("%d MiB" % written)
                raise
            written += 1
        if how != "unlinked":
            f.close()
    if how == "hidden":
        os.chmod(d, 0o300)
    print("held %d MiB" % written, flush=True)
    blib.report("ws_" + how, False, None, "held %d MiB" % written)
except OSError as e:
    if e.errno == errno.ENOSPC:
        stop("an OSError")
    raise
