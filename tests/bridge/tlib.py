# SPDX-License-Identifier: Apache-2.0
# tlib.py - what the bridge's test programs (programs/*.py) share.
#
# The runner passes this file and params.json with --input, so both sit in
# /workspace/work next to user_code.py and a program does `import tlib`.
# The programs speak the wire protocol themselves (docs/bridge.md), byte by
# byte, so that they can also send what a well-behaved client never would;
# programs/client.py uses the shipped client, cordon_tools, instead.
import json
import os
import socket
import struct
import time

OUT = "/workspace/out/result.json"
SOCK = os.environ.get("CORDON_SOCKET", "/supervisor-socket/tools.sock")
TOKEN = os.environ.get("CORDON_TOKEN", "")
WRONG_TOKEN = "0" * 64 if TOKEN != "0" * 64 else "1" * 64


def params():
    with open("/workspace/work/params.json") as f:
        return json.load(f)


def report(**d):
    """result.json, replaced whole: the runner may read it mid-run."""
    with open(OUT + ".tmp", "w") as f:
        json.dump(d, f)
    os.rename(OUT + ".tmp", OUT)


def connect(path=SOCK):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    return s


def frame(body):
    return struct.pack(">I", len(body)) + body


def body_of(tool, params, req_id="r1", message_id=None, token=TOKEN, extra=None):
    """The request's bytes; token None leaves the member out."""
    req = {"v": 1}
    if token is not None:
        req["token"] = token
    req.update({"id": req_id, "tool": tool, "params": params})
    if message_id is not None:
        req["messageId"] = message_id
    req.update(extra or {})
    return json.dumps(req, separators=(",", ":")).encode()


def recv_exact(s, n, deadline):
    buf = b""
    while len(buf) < n:
        s.settimeout(max(0.01, deadline - time.monotonic()))
        try:
            k = s.recv(n - len(buf))
        except socket.timeout:
            return buf, "timeout"
        except OSError as e:
            return buf, "error:%s" % e
        if not k:
            return buf, "eof"
        buf += k
    return buf, None


def recv_answer(s, limit=15.0):
    """The next answer as a dict, or {"noAnswer": why} when the connection
    ended or nothing came within limit seconds."""
    deadline = time.monotonic() + limit
    head, why = recv_exact(s, 4, deadline)
    if why:
        return {"noAnswer": why, "got": len(head)}
    (n,) = struct.unpack(">I", head)
    if n > 4 << 20:
        return {"noAnswer": "announced %d bytes" % n}
    body, why = recv_exact(s, n, deadline)
    if why:
        return {"noAnswer": why, "got": len(body)}
    try:
        return json.loads(body)
    except ValueError as e:
        return {"noAnswer": "not JSON: %s" % e}


def closed_by_peer(s, limit=2.0):
    """True when the supervisor ended the connection (EOF within limit)."""
    s.settimeout(limit)
    try:
        return s.recv(1) == b""
    except socket.timeout:
        return False
    except OSError:
        return True


def call(tool, params, **kw):
    """One request on a fresh connection; the answer."""
    s = connect()
    try:
        s.sendall(frame(body_of(tool, params, **kw)))
        return recv_answer(s)
    finally:
        s.close()
