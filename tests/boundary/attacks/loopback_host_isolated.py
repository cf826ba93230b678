# SPDX-License-Identifier: Apache-2.0
# Under `network: loopback`, reach the host from the executor's own lo.
# The runner listens on the host's 127.0.0.1:<port> and on an abstract Unix
# name; both live in the host's network namespace, so here:
#   connect 127.0.0.1:<port>  ECONNREFUSED (no such listener in this one)
#   bind 127.0.0.1:<port>     works (the host's port is free here), and a
#                             connect then reaches this listener, not the host
#   connect @<name>           ECONNREFUSED
#   connect 10.255.255.1:80, 1.1.1.1:53, [2606:4700:4700::1111]:53
#                             ENETUNREACH (lo is the only route)
# Every refusal is the namespace's: layer netns.  A connect that works, or
# a TCP connect that times out (a route took the SYN somewhere), is a
# failure.  params "host_only" (the runner's control, run on the host)
# stops after the two host listeners.
import socket

import blib

P = blib.params()
port, abstract = P["port"], "\0" + P["abstract"]
seen = []      # (what, errno name, the one expected)


def stop(evidence):
    blib.report("loopback_host_isolated", False, None, evidence + "; before: " + (
        "; ".join("%s: %s" % (w, n) for w, n, _ in seen) or "nothing"))
    raise SystemExit(0)


def connect(family, addr, what, want):
    try:
        with socket.socket(family, socket.SOCK_STREAM) as s:
            s.settimeout(2)
            s.connect(addr)
    except socket.timeout:
        stop("%s: timed out, a route took the SYN somewhere" % what)
    except OSError as e:
        n = blib.ename(e.errno)
        # a kernel without IPv6 has no such socket or address: nothing to test
        absent = family == socket.AF_INET6 and n in ("EAFNOSUPPORT", "EADDRNOTAVAIL")
        seen.append((what, n + (" (no IPv6 here)" if absent else ""), n if absent else want))
        return
    stop("%s: connected" % what)


connect(socket.AF_INET, ("127.0.0.1", port), "127.0.0.1:%d (the host's listener)" % port, "ECONNREFUSED")
connect(socket.AF_UNIX, abstract, "@" + abstract[1:] + " (the host's)", "ECONNREFUSED")
if not P.get("host_only"):
    # the host's port number is free here: the namespace is not the host's
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        srv.settimeout(2)
        srv.bind(("127.0.0.1", port))
        srv.listen(1)
        with socket.create_connection(("127.0.0.1", port), timeout=2):
            srv.accept()[0].close()
    except OSError as e:
        stop("bind, listen, connect 127.0.0.1:%d here: %s" % (port, blib.ename(e.errno) if e.errno else e))
    finally:
        srv.close()
    seen.append(("127.0.0.1:%d bound here" % port, "reached this program's own listener", None))
    connect(socket.AF_INET, ("10.255.255.1", 80), "10.255.255.1:80", "ENETUNREACH")
    connect(socket.AF_INET, ("1.1.1.1", 53), "1.1.1.1:53", "ENETUNREACH")
    connect(socket.AF_INET6, ("2606:4700:4700::1111", 53), "[2606:4700:4700::1111]:53", "ENETUNREACH")
odd = ["%s: %s, not %s" % (w, n, want) for w, n, want in seen if want and not n.startswith(want)]
layers = {blib.layer_of_errno(want) for _, _, want in seen if want and want in ("ECONNREFUSED", "ENETUNREACH")}
blib.report("loopback_host_isolated", True, "unexpected" if odd else ",".join(sorted(layers)),
            "; ".join(odd) if odd else "; ".join("%s: %s" % (w, n) for w, n, _ in seen))
