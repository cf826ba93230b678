# SPDX-License-Identifier: Apache-2.0
# Connect to an abstract Unix socket the runner listens on in the host's
# network namespace.  Abstract names belong to a network namespace, so the
# sandbox's is empty: ECONNREFUSED (landlock's abstract-socket scope would
# refuse it next, with EPERM).
import socket

import blib

name = "\0" + blib.params()["abstract"]
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try:
    s.connect(name)
    s.sendall(b"escaped\n")
    blib.report("abstract_unix", False, None, "connected to @%s" % name[1:])
except OSError as e:
    n = blib.ename(e.errno)
    layer = "landlock" if n == "EPERM" else blib.layer_of_errno(e.errno)
    blib.report("abstract_unix", True, layer, "connect @%s: %s" % (name[1:], n))
