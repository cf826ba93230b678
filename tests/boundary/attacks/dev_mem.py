# SPDX-License-Identifier: Apache-2.0
# Open physical memory and raw devices: /dev has only null, zero, random,
# urandom (and shm).
import blib

ev, layers = [], set()
for dev in ("/dev/mem", "/dev/kmem", "/dev/port", "/dev/vda", "/dev/sda", "/dev/tty"):
    try:
        open(dev, "rb").close()
        blib.report("dev_mem", False, None, "opened " + dev)
        raise SystemExit(0)
    except OSError as e:
        ev.append("%s: %s" % (dev, blib.ename(e.errno)))
        layers.add(blib.layer_of_errno(e.errno))
blib.report("dev_mem", True, layers.pop() if len(layers) == 1 else "mixed", "; ".join(ev))
