# SPDX-License-Identifier: Apache-2.0
# Every capability set must be empty.
import blib

st = blib.status()
sets = {k: st[k] for k in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb")}
ok = all(int(v, 16) == 0 for v in sets.values())
blib.report("capabilities", ok, "capabilities" if ok else None,
            " ".join("%s=%s" % kv for kv in sets.items()))
