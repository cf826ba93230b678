# SPDX-License-Identifier: Apache-2.0
# The fault suite's program (README.md), run inside `cordon run`: makes the
# calls listed in /workspace/work/calls.json one after the other, each on
# a fresh connection, and prints one JSON object on stdout: every answer as
# the supervisor sent it (or why none came) and what the sandbox saw of its
# environment.  calls.json: {"calls": [[tool, n, message id or null], ...],
# "fill": bytes to write into the workspace first, "sleep": seconds before
# the calls}.
import json
import os
import socket
import struct
import sys
import time

SOCK = os.environ.get("CORDON_SOCKET", "/supervisor-socket/tools.sock")
TOKEN = os.environ.get("CORDON_TOKEN", "")


def recv_exact(s, n):
    buf = b""
    while len(buf) < n:
        k = s.recv(n - len(buf))
        if not k:
            return None
        buf += k
    return buf


def call(i, tool, n, mid):
    req = {"v": 1, "token": TOKEN, "id": "r%d" % i, "tool": tool, "params": {"n": n}}
    if mid is not None:
        req["messageId"] = mid
    body = json.dumps(req, separators=(",", ":")).encode()
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(15)
    try:
        s.connect(SOCK)
        s.sendall(struct.pack(">I", len(body)) + body)
        head = recv_exact(s, 4)
        if head is None:
            return {"noAnswer": "eof"}
        data = recv_exact(s, struct.unpack(">I", head)[0])
        return json.loads(data) if data is not None else {"noAnswer": "eof"}
    except (OSError, ValueError) as e:
        return {"noAnswer": str(e)}
    finally:
        s.close()


with open("/workspace/work/calls.json") as f:
    P = json.load(f)
filled = 0
if P.get("fill"):
    try:
        with open("/workspace/work/fill.bin", "wb") as f:
            while filled < P["fill"]:
                filled += f.write(b"x" * min(65536, P["fill"] - filled))
    except OSError as e:
        filled = -filled - 1
time.sleep(P.get("sleep", 0))
answers = [call(i, t, n, m) for i, (t, n, m) in enumerate(P["calls"])]
maps = open("/proc/self/maps").read()
print(json.dumps({"answers": answers, "filled": filled,
                  "env": sorted(os.environ), "preloadSeen": "LD_PRELOAD" in os.environ or "shim.so" in maps}))
sys.stdout.flush()
