# SPDX-License-Identifier: Apache-2.0
# Raw, packet, AF_ALG and netlink sockets: kernel attack surface (AF_ALG,
# netlink), raw frames (packet, raw IP).  The profile allows AF_UNIX only
# (ENOSYS for the rest).  Without the filter, raw and packet need
# CAP_NET_RAW (EPERM: capabilities); AF_ALG and netlink open, and netlink
# then sees only the sandbox's own empty namespace.  params "which" picks
# one so each is its own check.
import socket

import blib

kinds = {
    "raw": (socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP),
    "packet": (17, socket.SOCK_RAW, 0x0300),            # AF_PACKET, ETH_P_ALL
    "alg": (38, socket.SOCK_SEQPACKET, 0),              # AF_ALG
    "netlink": (16, socket.SOCK_RAW, 0),                # AF_NETLINK, NETLINK_ROUTE
}
which = blib.params()["which"]
fam, typ, proto = kinds[which]
name = "socket_" + which
try:
    s = socket.socket(fam, typ, proto)
    s.close()
    blib.report(name, False, None, "socket(%d, %d, %d) opened" % (fam, typ, proto))
except OSError as e:
    n = blib.ename(e.errno)
    blib.report(name, True, "capabilities" if n == "EPERM" else blib.layer_of_errno(e.errno),
                "socket(%d, %d, %d): %s" % (fam, typ, proto, n))
