#!/usr/bin/python3
# peer_client.py SOCKET - a process outside the sandbox calls a run's tool
# socket: reads one request (JSON) on stdin, sends it as one frame, prints
# {"answer": ..., "closed": ...} or {"connectError": "EACCES"}.  run.py
# starts it as root, as other uids (setpriv) and, rootless, as the caller.
import errno
import json
import socket
import struct
import sys

req = sys.stdin.read().encode()
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
