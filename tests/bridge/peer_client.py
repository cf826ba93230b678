#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# peer_client.py SOCKET [N] - a process outside the sandbox calls a run's
# tool socket: reads one request (JSON) on stdin, sends it as one frame,
# prints {"answer": ..., "closed": ...} or {"connectError": "EACCES"}.  run.py
# starts it as root, as other uids (setpriv) and, rootless, as the caller.
# With N, it does so N times, a connection each, and prints {"counts":
# {"code/check": n, ...}} over the answers (check_peer_flood).
import errno
import json
import socket
import struct
import sys

req = sys.stdin.read().encode()


def flood(path, n):
    counts = {}
    for _ in range(n):
        c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        c.settimeout(10)
        try:
            c.connect(path)
            # The refusal is sent at accept, before any byte is read, and
            # the connection closed: read it first, then send (a send
            # into the closed connection fails, as it may for one client
            # above).
            body = b""
            while True:
                k = c.recv(65536)
                if not k:
                    break
                body += k
            try:
                c.sendall(struct.pack(">I", len(req)) + req)
            except OSError:
                pass
            e = json.loads(body[4:]).get("error") or {}
            key = "%s/%s" % (e.get("code"), e.get("check"))
        except (OSError, ValueError) as ex:
            key = "error: %s" % ex
        c.close()
        counts[key] = counts.get(key, 0) + 1
    print(json.dumps({"counts": counts}))


if len(sys.argv) > 2:
    flood(sys.argv[1], int(sys.argv[2]))
    sys.exit(0)
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try:
    s.connect(sys.argv[1])
except OSError as e:
    print(json.dumps({"connectError": errno.errorcode.get(e.errno, str(e.errno))}))
    sys.exit(0)
s.settimeout(10)
try:
    s.sendall(struct.pack(">I", len(req)) + req)
except OSError:
    pass


def recv_exact(n):
    buf = b""
    while len(buf) < n:
        k = s.recv(n - len(buf))
        if not k:
            break
        buf += k
    return buf


try:
    head = recv_exact(4)
    body = recv_exact(struct.unpack(">I", head)[0]) if len(head) == 4 else b""
except OSError as e:
    print(json.dumps({"recvError": str(e)}))
    sys.exit(0)
try:
    answer = json.loads(body)
except ValueError:
    print(json.dumps({"raw": (head + body).decode("utf-8", "replace")}))
    sys.exit(0)
# closed: EOF, or a reset (the supervisor closed with our request unread)
s.settimeout(2)
try:
    closed = s.recv(1) == b""
except socket.timeout:
    closed = False
except OSError:
    closed = True
print(json.dumps({"answer": answer, "closed": closed}))
