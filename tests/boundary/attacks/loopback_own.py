# SPDX-License-Identifier: Apache-2.0
# A positive check: under `network: loopback` the program's own lo works.
# It listens on 127.0.0.1 (and ::1 when lo has it), connects to itself and
# has random bytes echoed back.  blocked false with works true is the pass;
# a refusal names the layer that made lo unusable: ENOSYS the filter,
# EACCES landlock's TCP rules, EADDRNOTAVAIL or ENETUNREACH a namespace
# whose lo is down (network: none).
import os
import socket
import threading

import blib


def echo_once(srv):
    # Quiet on any failure (accept times out when the connect never came):
    # a thread that dies printing while the interpreter shuts down aborts it.
    try:
        c, _ = srv.accept()
        with c:
            c.sendall(c.recv(64))
    except OSError:
        pass


def echo(family, addr):
    """None when bytes went out and came back over addr, else (stage, errno name)."""
    stage = "socket"
    try:
        with socket.socket(family, socket.SOCK_STREAM) as srv:
            srv.settimeout(2)
            stage = "bind"
            srv.bind((addr, 0))
            srv.listen(1)
            port = srv.getsockname()[1]
            # Not a daemon: exit waits for it (at most the 2 s accept
            # timeout) instead of tearing it down mid-write.
            t = threading.Thread(target=echo_once, args=(srv,))
            t.start()
            with socket.socket(family, socket.SOCK_STREAM) as cli:
                cli.settimeout(2)
                stage = "connect"
                cli.connect((addr, port))
                msg = os.urandom(16).hex().encode()
                stage = "echo"
                cli.sendall(msg)
                back = b""
                while len(back) < len(msg):
                    chunk = cli.recv(64)
                    if not chunk:
                        break
                    back += chunk
            t.join(2)
            return None if back == msg else (stage, "got %r for %r" % (back, msg))
    except OSError as e:
        return stage, blib.ename(e.errno) if e.errno else type(e).__name__


def layer(stage, n):
    if n == "EACCES" and stage in ("bind", "connect"):
        return "landlock"
    return blib.layer_of_errno(n)


v4 = echo(socket.AF_INET, "127.0.0.1")
v6 = echo(socket.AF_INET6, "::1")
said = ["%s: %s" % (a, "echoed" if r is None else "%s %s" % r) for a, r in (("127.0.0.1", v4), ("::1", v6))]
if v4 is not None:
    blib.report("loopback_own", True, layer(*v4), "; ".join(said), works=False)
elif v6 is not None and v6[1] not in ("EADDRNOTAVAIL", "EAFNOSUPPORT"):
    # lo without ::1 (IPv6 off in the kernel) is not a failure; ::1 there and refused is
    blib.report("loopback_own", True, layer(*v6), "; ".join(said), works=False)
else:
    blib.report("loopback_own", False, None, "listen, connect, echo: " + "; ".join(said), works=True,
                ipv6=v6 is None)
