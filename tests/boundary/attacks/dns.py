# SPDX-License-Identifier: Apache-2.0
# Resolve a name.  getaddrinfo must fail; what stopped it is found by doing
# its first step by hand: a UDP datagram to the resolver (the host's, given
# by the runner, and 127.0.0.1, glibc's default without resolv.conf).  UDP
# is not covered by landlock, so the layers are seccomp (socket: ENOSYS)
# then the network namespace (sendto: ENETUNREACH).
import os
import socket

import blib

p = blib.params()
try:
    r = socket.getaddrinfo("example.com", 80)
    blib.report("dns", False, None, "getaddrinfo answered %s" % r[:1])
    raise SystemExit(0)
except socket.gaierror as e:
    gai = "getaddrinfo: %s" % e
ev, layers = [gai, "/etc/resolv.conf present: %s" % os.path.exists("/etc/resolv.conf")], set()
for ns in (p.get("nameserver") or "127.0.0.1", "127.0.0.1"):
    stage = "socket"
    try:
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        stage = "sendto"
        s.sendto(b"\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x07example\x03com\x00\x00\x01\x00\x01", (ns, 53))
        s.settimeout(1)
        s.recv(512)
        blib.report("dns", False, None, "a DNS answer came back from %s" % ns)
        raise SystemExit(0)
    except OSError as e:
        n = blib.ename(e.errno) if e.errno else type(e).__name__
        ev.append("%s %s:53: %s" % (stage, ns, n))
        layers.add(blib.layer_of_errno(e.errno or 0))
blib.report("dns", True, layers.pop() if len(layers) == 1 else "mixed:" + ",".join(sorted(layers)), "; ".join(ev))
