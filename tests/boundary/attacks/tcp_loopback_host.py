# SPDX-License-Identifier: Apache-2.0
# Connect to a TCP server the runner listens on at the host's 127.0.0.1.
# Three walls, met in this order: the profile allows only AF_UNIX sockets
# (ENOSYS); landlock ABI 4+ refuses every TCP connect (EACCES, control
# open-seccomp); the empty network namespace has no route, lo is down
# (ENETUNREACH, control no-landlock).  None of them reaches the host.
import socket

import blib

port = blib.params()["port"]
stage = "socket"
try:
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(2)
    stage = "connect"
    s.connect(("127.0.0.1", port))
    s.sendall(b"escaped\n")
    blib.report("tcp_loopback_host", False, None, "connected to 127.0.0.1:%d" % port)
except OSError as e:
    n = blib.ename(e.errno) if e.errno else type(e).__name__
    layer = "landlock" if (stage == "connect" and n == "EACCES") else blib.layer_of_errno(e.errno or 0)
    blib.report("tcp_loopback_host", True, layer, "%s 127.0.0.1:%d: %s" % (stage, port, n))
