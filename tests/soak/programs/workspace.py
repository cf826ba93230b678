# SPDX-License-Identifier: Apache-2.0
# fills the workspace past its 8m delta: ENOSPC from the kernel, and the
# monitor ends the run as limit_exceeded (workspace_limit)
import sys
chunk = b"\x02" * (1 << 20)
with open("/workspace/work/fill.bin", "wb") as f:
    try:
        for _ in range(64):
            f.write(chunk)
            f.flush()
    except OSError as e:
        print("write refused: %s" % e)
        sys.exit(1)
print("not reached: 64 MiB written")
