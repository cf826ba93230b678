# SPDX-License-Identifier: Apache-2.0
# Lift the limits the supervisor set: raising a hard limit needs
# CAP_SYS_RESOURCE, which the executor does not have.
import resource

import blib

ev, layers = [], set()
for name in ("RLIMIT_FSIZE", "RLIMIT_NOFILE", "RLIMIT_CORE"):
    res = getattr(resource, name)
    soft, hard = resource.getrlimit(res)
    want = resource.RLIM_INFINITY if hard != resource.RLIM_INFINITY else hard
    try:
        resource.setrlimit(res, (want, want))
        got = resource.getrlimit(res)
        if hard != resource.RLIM_INFINITY:
            blib.report("raise_rlimit", False, None, "%s raised from %d to %s" % (name, hard, got))
            raise SystemExit(0)
        ev.append("%s unlimited already" % name)
    except ValueError as e:                            # CPython's words for EPERM here
        ev.append("%s %d -> unlimited: %s" % (name, hard, e))
        layers.add("capabilities")
blib.report("raise_rlimit", bool(layers), layers.pop() if len(layers) == 1 else None, "; ".join(ev))
