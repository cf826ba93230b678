# SPDX-License-Identifier: Apache-2.0
"""cordon_client against a fake cordon serve (http.server), on a Unix socket
and on TCP: every method, every error type, the bearer token, inputs as
text and bytes, artifacts inline and fetched (and checked by sha256),
cancel of a running execution, code-interpreter sessions (create, cells,
the owner's tenant and user on every request, close, the context manager,
a cell after the end).

    /usr/bin/python3 -m unittest discover clients/python/tests

The fake speaks the contract of docs/openapi.yaml; when the repository's
tests/serve/openapi_check.py can be loaded (python3-yaml and
python3-jsonschema installed), every answer the fake gave is held to the
document too, so the fake cannot drift from the API it stands in for.
"""
import base64
import hashlib
import http.server
import json
import os
import re
import shutil
import socket
import socketserver
import sys
import tempfile
import threading
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
import cordon_client  # noqa: E402
from cordon_client import (BadRequest, Client, CordonError, Conflict, ConnectionFailed, Forbidden,  # noqa: E402
                           NotFound, Overloaded, Session, Unauthorized, Unavailable)

try:
    sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "tests", "serve"))
    import openapi_check  # noqa: E402
    API = openapi_check.load()
except Exception as e:  # the checkout's checker, or its Debian packages, absent
    API = None
    API_WHY = str(e)

TOKENS = {"tok-all-0123456789": None, "tok-cafe-0123456789": ["cafe"]}
SHA = "ab" * 32
SMALL = b"coffee: 2.50\n"
BIG = bytes(range(256)) * 40  # not inlined by the fake (over its inline bound)
MAX_BODY = 64 * 1024
TOOL = {"name": "calc_check", "id": "calc.check", "description": "Check a solution.",
        "parameters": {"type": "object", "properties": {"unknowns": {"type": "array", "items": {"type": "string"}}},
                       "required": ["unknowns"], "additionalProperties": False}}


def result_for(req, eid, status="succeeded", stdout=""):
    """A result as cordon run writes it (the keys of runtime/run.c build_result)."""
    err = None
    if status == "cancelled":
        err = {"code": "cancelled", "message": "cancelled by request"}
    return {
        "policy": {"app": req["app"], "sha256": SHA}, "agent": req.get("agent"), "executionId": eid, "runDir": "", "status": status,
        "exitCode": 0 if status == "succeeded" else None, "signal": None if status == "succeeded" else "KILL",
        "stdout": stdout, "stderr": "", "truncated": {"stdout": False, "stderr": False},
        "replaced": {"stdout": 0, "stderr": 0}, "result": {"echo": req.get("context")}, "resultError": None,
        "durationMs": 3,
        "artifacts": [
            {"path": "summary.txt", "bytes": len(SMALL), "sha256": hashlib.sha256(SMALL).hexdigest(),
             "contentBase64": base64.b64encode(SMALL).decode()},
            {"path": "files/big.bin", "bytes": len(BIG), "sha256": hashlib.sha256(BIG).hexdigest()},
        ],
        "violations": [], "toolCalls": [], "peerRefusals": 0,
        "usage": {"cpuMs": 1, "cpuSource": "rusage", "maxRssKiB": 9000, "pidsLimitHits": 0, "workspaceDeltaBytes": 0,
                  "workspaceEntries": 0},
        "enforcement": {"namespaces": "user,mount,pid,net,ipc,uts,cgroup", "filesystem": "tmpfs root",
                        "network": "none", "identity": "uid 1001 gid 1000", "memory": "cgroup-v1",
                        "pids": "cgroup-v1", "cpu": "none", "landlock": "abi-7", "seccomp": "filter(1 insns)",
                        "capabilities": "none", "noNewPrivs": True, "rlimits": "fsize,nofile,core",
                        "timeout": "supervisor+pid-ns-init"},
        "error": err,
    }


class Fake:
    """The state of one fake server, shared by its handler threads."""

    def __init__(self, tcp):
        self.tcp = tcp
        self.lock = threading.Lock()
        self.seen = []        # (method, path, headers, body) of each request
        self.answers = []     # (method, path, status, headers, body) of each answer
        self.running = {}     # requestId -> (token, threading.Event)
        self.started = threading.Event()
        self.artifacts = {}   # (executionId, token) -> {path: bytes}
        self.draining = False
        self.script = {}      # (method, path) -> (status, headers, body): an answer forced by a test
        self.n = 0
        self.sessions = {}    # sessionId -> {"token", "tenant", "user", "cells", "end", "vars"}


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    # ---- answering ---------------------------------------------------
    def send(self, status, body, ctype="application/json", headers=None):
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        hdrs = dict(headers or {})
        hdrs["Content-Type"] = ctype
        # Recorded before it is written: once the client has it, a test
        # may look at (or clear) the record.
        with self.fake.lock:
            self.fake.answers.append((self.command, self.path, status, hdrs, data))
        self.send_response(status)
        for k, v in hdrs.items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def error(self, status, code, message, headers=None):
        self.send(status, {"error": {"code": code, "message": message}}, headers=headers)

    @property
    def fake(self):
        return self.server.fake

    # ---- the routes --------------------------------------------------
    ROUTES = [
        (r"/v1/health", "GET", "health"), (r"/v1/ready", "GET", "ready"), (r"/metrics", "GET", "metrics"),
        (r"/v1/apps", "GET", "apps"), (r"/v1/apps/(?P<app>[^/]+)/agents/(?P<agent>[^/]+)", "GET", "caps"),
        (r"/v1/executions", "POST", "execute"), (r"/v1/executions/(?P<rid>[^/]+)/cancel", "POST", "cancel"),
        (r"/v1/executions/(?P<eid>[^/]+)/artifacts/(?P<name>.+)", "GET", "artifact"),
        (r"/v1/sessions", "POST", "session_new"),
        (r"/v1/sessions/(?P<sid>[0-9a-f]{32})(?:\?(?P<q>.*))?", "GET", "session_get"),
        (r"/v1/sessions/(?P<sid>[0-9a-f]{32})(?:\?(?P<q>.*))?", "DELETE", "session_delete"),
        (r"/v1/sessions/(?P<sid>[0-9a-f]{32})/cells", "POST", "cell"),
    ]

    def dispatch(self):
        n = int(self.headers.get("Content-Length") or 0)
        if n > MAX_BODY:
            self.close_connection = True
            return self.error(413, "body_too_large", "over %d bytes" % MAX_BODY)
        body = self.rfile.read(n) if n else b""
        with self.fake.lock:
            self.fake.seen.append((self.command, self.path, dict(self.headers), body))
        forced = self.fake.script.get((self.command, self.path))
        if forced:
            return self.send(forced[0], forced[2], headers=forced[1])
        allowed = []
        for rx, method, name in self.ROUTES:
            m = re.fullmatch(rx, self.path)
            if not m:
                continue
            allowed.append(method)
            if method != self.command:
                continue
            scope = self.authorize(name)
            if scope is False:
                return
            return getattr(self, "do_" + name)(scope, body, **m.groupdict())
        if allowed:
            return self.error(405, "method_not_allowed", "use " + ", ".join(allowed), {"Allow": ", ".join(allowed)})
        self.error(404, "not_found", "no such path")

    do_GET = do_POST = do_PUT = do_DELETE = dispatch

    def authorize(self, name):
        """The caller's scope: (token, apps or None); False when answered."""
        if not self.fake.tcp:
            return ("", None)
        if name == "health":
            return ("", None)
        h = self.headers.get("Authorization") or ""
        tok = h[len("Bearer "):] if h.startswith("Bearer ") else None
        if tok not in TOKENS:
            self.error(401, "unauthorized", "a bearer token is needed", {"WWW-Authenticate": "Bearer"})
            return False
        return (tok, TOKENS[tok])

    def in_scope(self, scope, app):
        if scope[1] is not None and app not in scope[1]:
            self.error(403, "forbidden", "the token may not use app %s" % app)
            return False
        return True

    def do_health(self, scope, body):
        self.send(200, {"status": "ok"})

    def do_ready(self, scope, body):
        d = self.fake.draining
        self.send(503 if d else 200, {"ready": not d, "draining": d, "pools": [
            {"app": "cafe", "agent": "analyst", "warm": 0 if d else 2, "target": 2}]})

    def do_metrics(self, scope, body):
        self.send(200, b"# TYPE cordon_executions_running gauge\ncordon_executions_running 0\n",
                  "text/plain; version=0.0.4")

    def do_apps(self, scope, body):
        apps = [{"app": a, "sha256": SHA, "keyId": "00112233", "agents": ["analyst"], "preload": ["numpy"],
                 "packages": ["pandas"]}
                for a in ("cafe", "mail") if scope[1] is None or a in scope[1]]
        self.send(200, {"apps": apps})

    def do_caps(self, scope, body, app, agent):
        if app not in ("cafe", "mail") or agent != "analyst":
            return self.error(404, "unknown_agent", "no agent %s in %s" % (agent, app))
        if self.in_scope(scope, app):
            self.send(200, {"app": app, "agent": agent, "sha256": SHA, "description": "# Sandbox of app `%s`\n" % app,
                            "tools": [TOOL], "preload": ["numpy"], "packages": []})

    def do_execute(self, scope, body):
        if (self.headers.get("Content-Type") or "").split(";")[0] != "application/json":
            return self.error(415, "unsupported_media_type", "send application/json")
        try:
            req = json.loads(body)
        except ValueError as e:
            return self.error(400, "bad_request", str(e))
        if API is not None:
            errs = API.check_request("POST", "/v1/executions", req)
            if errs:
                return self.error(400, "bad_request", "; ".join(errs))
        app = req["app"]
        if app == "busy":
            return self.error(429, "overloaded", "4 running, 8 queued", {"Retry-After": "7"})
        if self.fake.draining:
            return self.error(503, "draining", "the server is shutting down", {"Retry-After": "30"})
        if app not in ("cafe", "mail"):
            return self.error(404, "unknown_app", "no app %s" % app)
        if not self.in_scope(scope, app):
            return
        rid = req.get("requestId")
        ev = threading.Event()
        with self.fake.lock:
            taken = rid in self.fake.running
            if rid and not taken:
                self.fake.running[rid] = (scope[0], ev)
            self.fake.n += 1
            eid = "%032x" % self.fake.n
            self.fake.artifacts[(eid, scope[0])] = {"summary.txt": SMALL, "files/big.bin": BIG}
        if taken:
            return self.error(409, "request_id_running", "request %s is running" % rid)
        status = "succeeded"
        try:
            if req["code"] == "sleep":
                self.fake.started.set()
                status = "cancelled" if ev.wait(10) else "timed_out"
        finally:
            with self.fake.lock:
                if rid and self.fake.running.get(rid, (None, None))[1] is ev:
                    del self.fake.running[rid]
        # The program "prints" what it got, so a test sees the inputs arrive.
        got = {i["name"]: (i["content"].encode() if "content" in i else base64.b64decode(i["contentBase64"]))
               for i in req.get("inputs", [])}
        out = "".join("%s=%s\n" % (k, v.hex()) for k, v in sorted(got.items()))
        r = result_for(req, eid, status, out)
        if status == "timed_out":
            r["error"] = {"code": "timeout", "message": "the program ran past the policy's timeout"}
        self.send_result(r, cut=req["code"] == "cut")

    def send_result(self, r, cut=False):
        """r as the Accept header asks: streamed (SSE, NDJSON) or one JSON answer."""
        accept = self.headers.get("Accept") or ""
        if "application/x-ndjson" in accept or "text/event-stream" in accept:
            return self.send_stream(r, "text/event-stream" if "event-stream" in accept else "application/x-ndjson",
                                    cut=cut)
        self.send(200, r)

    def send_stream(self, r, ctype, cut=False):
        """The result as a streamed answer: start, its stdout in two
        chunks around a keep-alive, a toolCall, the result (cut: not the
        result, as a server that died mid-stream)."""
        evs = [{"type": "start", "executionId": r["executionId"]}]
        half = len(r["stdout"]) // 2
        evs += [{"type": "stdout", "text": r["stdout"][:half]}, None, {"type": "stdout", "text": r["stdout"][half:]},
                {"type": "toolCall", "call": {"requestId": "r1", "tool": "calc.check", "decision": "allowed",
                                              "check": "exec", "durationMs": 3, "toolMs": 2}},
                {"type": "result", "result": r}]
        if cut:
            evs = evs[:2]
        if ctype == "text/event-stream":
            data = "".join(": keepalive\n\n" if e is None else "event: %s\ndata: %s\n\n" % (e["type"], json.dumps(e))
                           for e in evs)
        else:
            data = "".join("\n" if e is None else json.dumps(e) + "\n" for e in evs)
        self.send(200, data.encode(), ctype)

    def do_cancel(self, scope, body, rid):
        with self.fake.lock:
            run = self.fake.running.get(rid)
        if run is None or run[0] != scope[0]:
            return self.error(404, "unknown_execution", "no running execution %s of yours" % rid)
        run[1].set()
        self.send(202, {"cancelled": True})

    # ---- sessions: the fake "runs" a cell `NAME = VALUE` or `NAME` (its
    # value shown), `raise`, and `exit` (the session ends) ----
    def session_json(self, sid, s):
        ended = s["end"] is not None
        return {"sessionId": sid, "app": "cafe", "agent": "analyst", "executionId": sid, "state":
                "ended" if ended else "idle", "warm": True, "cells": s["cells"], "cpuMs": 0,
                "cpuSource": "cgroup-v2" if s["cells"] else "none", "workspaceBytes": 0, "ageMs": 1,
                "expiresInMs": None if ended else 60000, "endReason": s["end"],
                "endMessage": "ended: %s" % s["end"] if ended else None,
                "limits": {"idleTimeoutMs": 60000, "lifetimeMs": 600000, "maxCells": 100, "cpuMs": 60000,
                           "workspaceBytes": 1 << 20, "timeoutMs": 30000}}

    def owned(self, scope, sid, tenant, user):
        """The session sid when this caller owns it, else None (answered 404)."""
        with self.fake.lock:
            s = self.fake.sessions.get(sid)
        if s is None or (s["token"], s["tenant"], s["user"]) != (scope[0], tenant, user):
            self.error(404, "unknown_session", "no session of yours has id %s" % sid)
            return None
        return s

    def who_query(self, q):
        import urllib.parse
        d = dict(urllib.parse.parse_qsl(q or ""))
        return d.get("tenant"), d.get("user")

    def do_session_new(self, scope, body):
        req = json.loads(body)
        if API is not None:
            errs = API.check_request("POST", "/v1/sessions", req)
            if errs:
                return self.error(400, "bad_request", "; ".join(errs))
        if req["agent"] != "analyst":
            return self.error(403, "sessions_not_allowed", "agent %s may hold no session" % req["agent"])
        if not self.in_scope(scope, req["app"]):
            return
        ctx = req.get("context") or {}
        with self.fake.lock:
            self.fake.n += 1
            sid = "%032x" % self.fake.n
            s = {"token": scope[0], "tenant": ctx.get("tenant"), "user": ctx.get("user"), "cells": 0, "end": None,
                 "vars": {i["name"]: i.get("content") for i in req.get("inputs", [])}}
            self.fake.sessions[sid] = s
        self.send(201, self.session_json(sid, s))

    def do_session_get(self, scope, body, sid, q=None):
        s = self.owned(scope, sid, *self.who_query(q))
        if s is not None:
            self.send(200, self.session_json(sid, s))

    def do_session_delete(self, scope, body, sid, q=None):
        s = self.owned(scope, sid, *self.who_query(q))
        if s is not None:
            if s["end"] is None:
                s["end"] = "deleted"
            self.send(200, self.session_json(sid, s))

    def do_cell(self, scope, body, sid):
        req = json.loads(body)
        if API is not None:
            errs = API.check_request("POST", "/v1/sessions/%s/cells" % sid, req)
            if errs:
                return self.error(400, "bad_request", "; ".join(errs))
        ctx = req.get("context") or {}
        s = self.owned(scope, sid, ctx.get("tenant"), ctx.get("user"))
        if s is None:
            return
        if s["end"] is not None:
            return self.error(409, "session_ended", "the session ended (%s)" % s["end"])
        s["cells"] += 1
        code, status, out = req["code"], "succeeded", ""
        if code == "exit":
            s["end"] = "exited"
        elif code == "raise":
            status = "failed"
        elif "=" in code:
            k, v = code.split("=", 1)
            s["vars"][k.strip()] = v.strip()
        else:
            out = "%s\n" % s["vars"].get(code.strip())
        r = result_for({"app": "cafe", "agent": "analyst"}, sid, status, out)
        if status == "failed":
            r.update(exitCode=1, signal=None, error={"code": "program_failed", "message": "the cell raised"})
        r["usage"]["cpuSource"] = "cgroup-v2"
        r["session"] = {"sessionId": sid, "cell": s["cells"], "state": "ended" if s["end"] else "idle",
                        "endReason": s["end"], "endMessage": "ended: %s" % s["end"] if s["end"] else None}
        self.send_result(r)

    def do_artifact(self, scope, body, eid, name):
        files = self.fake.artifacts.get((eid, scope[0]), {})
        if name not in files:
            return self.error(404, "unknown_artifact", "no artifact %s" % name)
        self.send(200, files[name], "application/octet-stream")


class UnixServer(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True

    def get_request(self):
        # BaseHTTPRequestHandler wants an address tuple to print.
        conn, _ = super().get_request()
        return conn, ("unix", 0)


class TCPServer(http.server.ThreadingHTTPServer):
    daemon_threads = True


def start_fake(tcp, directory):
    """A fake serve running in a thread: (server, fake, target)."""
    fake = Fake(tcp)
    if tcp:
        server = TCPServer(("127.0.0.1", 0), Handler)
        target = "http://127.0.0.1:%d" % server.server_address[1]
    else:
        target = os.path.join(directory, "serve.sock")
        server = UnixServer(target, Handler)
    server.fake = fake
    # A short poll: shutdown() waits for it, once per test.
    threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True).start()
    return server, fake, target


def stop_fake(server):
    """Stop it, then hold every answer it gave to docs/openapi.yaml."""
    server.shutdown()
    server.server_close()
    if API is not None:
        for method, path, status, headers, body in server.fake.answers:
            API.assert_response(method, path, status, body, headers)


class Base:
    """The tests, run once per listener (the subclasses)."""
    tcp = False

    def setUp(self):
        self.dir = tempfile.mkdtemp()
        self.server, self.fake, self.target = start_fake(self.tcp, self.dir)
        self.c = Client(self.target, token="tok-all-0123456789" if self.tcp else None, timeout=10)

    def tearDown(self):
        try:
            stop_fake(self.server)
        finally:
            shutil.rmtree(self.dir)

    def last(self):
        return self.fake.seen[-1]

    # ---- each method --------------------------------------------------
    def test_health(self):
        self.assertEqual(self.c.health(), {"status": "ok"})

    def test_ready_and_draining(self):
        r = self.c.ready()
        self.assertTrue(r["ready"])
        self.assertEqual(r["pools"][0]["warm"], 2)
        self.fake.draining = True
        r = self.c.ready()  # 503 is an answer here, not an error
        self.assertFalse(r["ready"])
        self.assertTrue(r["draining"])

    def test_metrics(self):
        self.assertIn("cordon_executions_running 0", self.c.metrics())

    def test_apps(self):
        apps = self.c.apps()
        self.assertEqual([a["app"] for a in apps], ["cafe", "mail"])
        self.assertEqual(apps[0]["preload"], ["numpy"])
        self.assertEqual(apps[0]["packages"], ["pandas"])

    def test_capabilities(self):
        caps = self.c.capabilities("cafe", "analyst")
        self.assertEqual(caps["tools"][0]["id"], "calc.check")
        self.assertEqual(self.last()[1], "/v1/apps/cafe/agents/analyst")
        tools = cordon_client.chat_tools(caps)
        self.assertEqual(tools, [{"type": "function", "function": {
            "name": "calc_check", "description": "Check a solution.", "parameters": TOOL["parameters"]}}])

    def test_execute(self):
        ctx = {"tenant": "t", "user": "ana", "roles": ["analyst"], "tools": ["calc.check"]}
        r = self.c.execute("cafe", "print(1)", agent="analyst", inputs={"a.txt": "h\u00e9", "b.bin": b"\x00\xff"},
                           context=ctx, request_id="req-1")
        method, path, headers, body = self.last()
        self.assertEqual((method, path), ("POST", "/v1/executions"))
        self.assertEqual(headers["Content-Type"], "application/json")
        sent = json.loads(body)
        self.assertEqual(sent, {"app": "cafe", "code": "print(1)", "agent": "analyst", "context": ctx,
                                "requestId": "req-1", "inputs": [{"name": "a.txt", "content": "h\u00e9"},
                                                                 {"name": "b.bin", "contentBase64": "AP8="}]})
        self.assertIsInstance(r, dict)
        self.assertEqual(r.status, "succeeded")
        self.assertTrue(r.succeeded)
        self.assertEqual(r.exit_code, 0)
        self.assertEqual(r.stdout, "a.txt=68c3a9\nb.bin=00ff\n")
        self.assertEqual(r.stderr, "")
        self.assertEqual(r.result, {"echo": ctx})
        self.assertIsNone(r.error)
        self.assertEqual(r["executionId"], r.execution_id)
        self.assertEqual(r.usage["maxRssKiB"], 9000)
        self.assertEqual(r.enforcement["capabilities"], "none")
        self.assertEqual(r.tool_calls, [])
        self.assertEqual(r.displays, [])

    def test_result_displays(self):
        d = [{"name": "000000.json", "data": {"text/plain": "1"}, "truncated": False, "error": None}]
        self.assertEqual(cordon_client.Result({"status": "succeeded", "displays": d}).displays, d)

    def test_execute_minimal_body(self):
        self.c.execute("cafe", "pass")
        self.assertEqual(json.loads(self.last()[3]), {"app": "cafe", "code": "pass"})

    def test_artifacts_inline_and_fetched(self):
        r = self.c.execute("cafe", "pass")
        small, big = r.artifacts
        self.assertTrue(small.inline)
        self.assertEqual(small.content, SMALL)
        n = len(self.fake.seen)
        self.assertEqual(small.content, SMALL)
        self.assertEqual(len(self.fake.seen), n, "an inline artifact is not fetched")
        self.assertFalse(big.inline)
        self.assertEqual((big.path, big.size), ("files/big.bin", len(BIG)))
        self.assertEqual(big.content, BIG)
        self.assertEqual(self.last()[1], "/v1/executions/%s/artifacts/files/big.bin" % r.execution_id)
        self.assertIs(r.artifact("files/big.bin"), big)
        self.assertEqual(self.c.artifact(r.execution_id, "summary.txt"), SMALL)

    def test_artifact_hash_mismatch(self):
        r = self.c.execute("cafe", "pass")
        self.fake.artifacts[(r.execution_id, "tok-all-0123456789" if self.tcp else "")]["files/big.bin"] = b"other"
        with self.assertRaises(CordonError) as cm:
            r.artifacts[1].content
        self.assertEqual(cm.exception.code, "artifact_mismatch")

    def test_stream(self):
        for fmt in ("ndjson", "sse"):
            evs = list(self.c.stream("cafe", "print(1)", inputs={"a.txt": "hi"}, format=fmt))
            self.assertEqual([e["type"] for e in evs], ["start", "stdout", "stdout", "toolCall", "result"], fmt)
            self.assertIn(("application/x-ndjson" if fmt == "ndjson" else "text/event-stream"),
                          self.last()[2].get("Accept"))
            res = evs[-1]["result"]
            self.assertIsInstance(res, cordon_client.Result)
            self.assertEqual(evs[1]["text"] + evs[2]["text"], res["stdout"])
            self.assertEqual(res["stdout"], "a.txt=%s\n" % b"hi".hex())
            self.assertEqual(evs[0]["executionId"], res["executionId"])
        with self.assertRaises(NotFound):
            list(self.c.stream("nosuch", "pass"))
        with self.assertRaises(ValueError):
            list(self.c.stream("cafe", "pass", format="xml"))

    def test_stream_cut_short(self):
        """A stream that ends without its result is a ConnectionFailed, not a silent end."""
        for fmt in ("ndjson", "sse"):
            with self.assertRaises(ConnectionFailed):
                list(self.c.stream("cafe", "cut", format=fmt))

    def test_cancel(self):
        box = {}
        t = threading.Thread(target=lambda: box.setdefault("r", self.c.execute("cafe", "sleep", request_id="long")))
        t.start()
        self.assertTrue(self.fake.started.wait(5))
        # A second execution with the same request id, while it runs.
        with self.assertRaises(Conflict) as cm:
            self.c.execute("cafe", "pass", request_id="long")
        self.assertEqual((cm.exception.status, cm.exception.code), (409, "request_id_running"))
        self.assertTrue(self.c.cancel("long"))
        self.assertEqual(self.last()[1], "/v1/executions/long/cancel")
        t.join(5)
        self.assertEqual(box["r"].status, "cancelled")
        self.assertEqual(box["r"].error["code"], "cancelled")
        with self.assertRaises(NotFound):
            self.c.cancel("long")

    # ---- each error type ------------------------------------------------
    def test_not_found(self):
        with self.assertRaises(NotFound) as cm:
            self.c.capabilities("cafe", "nobody")
        e = cm.exception
        self.assertEqual((e.status, e.code), (404, "unknown_agent"))
        self.assertIn("nobody", e.message)
        with self.assertRaises(NotFound):
            self.c.execute("nope", "pass")
        with self.assertRaises(NotFound):
            self.c.artifact("0" * 32, "x")

    def test_bad_request(self):
        with self.assertRaises(BadRequest) as cm:
            self.c.execute("cafe", "pass", inputs={"main.py": "x"})
        self.assertEqual(cm.exception.status, 400)
        for status, code in ((408, "request_timeout"), (415, "unsupported_media_type")):
            self.fake.script[("POST", "/v1/executions")] = (status, {}, {"error": {"code": code, "message": "m"}})
            with self.assertRaises(BadRequest) as cm:
                self.c.execute("cafe", "pass")
            self.assertEqual((cm.exception.status, cm.exception.code), (status, code))

    def test_payload_too_large(self):
        with self.assertRaises(BadRequest) as cm:
            self.c.execute("cafe", "x" * (MAX_BODY + 1))
        self.assertEqual((cm.exception.status, cm.exception.code), (413, "body_too_large"))

    def test_overloaded(self):
        with self.assertRaises(Overloaded) as cm:
            self.c.execute("busy", "pass")
        e = cm.exception
        self.assertEqual((e.status, e.code, e.retry_after), (429, "overloaded", 7))
        self.assertIsInstance(e, CordonError)

    def test_unavailable(self):
        self.fake.draining = True
        with self.assertRaises(Unavailable) as cm:
            self.c.execute("cafe", "pass")
        self.assertEqual((cm.exception.status, cm.exception.code, cm.exception.retry_after), (503, "draining", 30))

    def test_other_status_and_foreign_body(self):
        # Not the server's error body (a proxy's page): the base class, the
        # status, and a piece of what came back.
        self.fake.script[("GET", "/v1/apps")] = (502, {}, b"<html>bad gateway</html>")
        with self.assertRaises(CordonError) as cm:
            self.c.apps()
        e = cm.exception
        self.assertIs(type(e), CordonError)
        self.assertEqual((e.status, e.code), (502, "http_502"))
        self.assertIn("bad gateway", e.message)
        self.fake.script.clear()
        self.fake.answers.clear()  # the proxy's page is not serve's answer

    def test_method_not_allowed(self):
        with self.assertRaises(CordonError) as cm:
            self.c._request("DELETE", "/v1/apps")
        self.assertEqual((cm.exception.status, cm.exception.headers.get("Allow")), (405, "GET"))

    def test_path_segments_are_quoted(self):
        with self.assertRaises(NotFound):
            self.c.capabilities("cafe", "../../v1/health")
        self.assertEqual(self.last()[1], "/v1/apps/cafe/agents/..%2F..%2Fv1%2Fhealth")
        with self.assertRaises(ValueError):
            self.c.capabilities("cafe", "")

    def test_session(self):
        ctx = {"tenant": "acme", "user": "ana", "roles": ["analyst"]}
        s = self.c.session("cafe", "analyst", inputs={"x.csv": "a,b\n"}, context=ctx)
        self.assertIsInstance(s, Session)
        method, path, _, body = self.last()
        self.assertEqual((method, path), ("POST", "/v1/sessions"))
        self.assertEqual(json.loads(body), {"app": "cafe", "agent": "analyst", "context": ctx,
                                            "inputs": [{"name": "x.csv", "content": "a,b\n"}]})
        self.assertEqual(s.state, "idle")
        self.assertTrue(s.run("n = 42").succeeded)
        # The cell names only who asks: the session keeps the rest.
        self.assertEqual(json.loads(self.last()[3]), {"code": "n = 42", "context": {"tenant": "acme", "user": "ana"}})
        r = s.run("n", request_id="cell-2")
        self.assertEqual((r.stdout, r.session["cell"], r.session["state"]), ("42\n", 2, "idle"))
        self.assertEqual(json.loads(self.last()[3])["requestId"], "cell-2")
        r = s.run("raise")
        self.assertEqual((r.status, r.exit_code, r.session["state"]), ("failed", 1, "idle"))
        self.assertEqual(s.refresh()["cells"], 3)
        self.assertIn("tenant=acme", self.last()[1])
        self.assertIn("user=ana", self.last()[1])
        r = s.run("exit")
        self.assertEqual((r.session["state"], r.session["endReason"]), ("ended", "exited"))
        self.assertTrue(s.ended)
        with self.assertRaises(Conflict) as cm:
            s.run("n")
        self.assertEqual(cm.exception.code, "session_ended")
        self.assertEqual(s.close()["endReason"], "exited")

    def test_session_stream(self):
        """A cell followed as it runs: the same events as an execution's,
        the result a Result with the cell's session, which the Session
        notes as run() does; errors before the start raise."""
        s = self.c.session("cafe", "analyst", context={"tenant": "acme", "user": "ana"})
        s.run("n = 7")
        for fmt in ("ndjson", "sse"):
            evs = list(s.stream("n", request_id="c-" + fmt, format=fmt))
            self.assertEqual([e["type"] for e in evs], ["start", "stdout", "stdout", "toolCall", "result"], fmt)
            method, path, headers, body = self.last()
            self.assertEqual((method, path), ("POST", "/v1/sessions/%s/cells" % s.id))
            self.assertIn(("application/x-ndjson" if fmt == "ndjson" else "text/event-stream"), headers.get("Accept"))
            self.assertEqual(json.loads(body), {"code": "n", "requestId": "c-" + fmt,
                                                "context": {"tenant": "acme", "user": "ana"}})
            res = evs[-1]["result"]
            self.assertIsInstance(res, cordon_client.Result)
            self.assertEqual(evs[1]["text"] + evs[2]["text"], res.stdout)
            self.assertEqual(res.stdout, "7\n")
        self.assertEqual(res.session["cell"], 3)
        self.assertEqual(s.info["cells"], 3)
        evs = list(s.stream("exit"))
        self.assertEqual(evs[-1]["result"].session["state"], "ended")
        self.assertTrue(s.ended)
        with self.assertRaises(Conflict):
            list(s.stream("n"))
        with self.assertRaises(ValueError):
            list(s.stream("n", format="xml"))
        with self.assertRaises(TypeError):
            list(s.stream(b"n"))

    def test_session_owner(self):
        s = self.c.session("cafe", "analyst", context={"tenant": "acme", "user": "ana"})
        other = Session(self.c, dict(s.info), {"tenant": "acme", "user": "bob"})
        with self.assertRaises(NotFound):
            other.run("n")
        with self.assertRaises(NotFound):
            other.refresh()
        self.assertIsNone(other.close())  # forgotten, or another's: nothing to end
        self.assertEqual(s.refresh()["state"], "idle")
        anon = self.c.session("cafe", "analyst")
        self.assertEqual(json.loads(self.last()[3]), {"app": "cafe", "agent": "analyst"})
        anon.run("k = 1")
        self.assertNotIn("context", json.loads(self.last()[3]))
        self.assertEqual(anon.refresh()["state"], "idle")
        self.assertNotIn("?", self.last()[1])

    def test_session_context_manager(self):
        with self.c.session("cafe", "analyst", context={"user": "ana"}) as s:
            s.run("a = 1")
        self.assertEqual(self.last()[0], "DELETE")
        self.assertEqual(s.info["endReason"], "deleted")
        with self.assertRaises(Forbidden) as cm:
            self.c.session("cafe", "viewer")
        self.assertEqual(cm.exception.code, "sessions_not_allowed")
        with self.assertRaises(TypeError):
            s.run(b"bytes")

    def test_bad_arguments(self):
        with self.assertRaises(TypeError):
            self.c.execute("cafe", b"pass")
        with self.assertRaises(TypeError):
            self.c.execute("cafe", "pass", inputs={"a": 1})


class TestUnix(Base, unittest.TestCase):
    tcp = False

    def test_no_token_sent(self):
        self.c.health()
        self.assertNotIn("Authorization", self.last()[2])

    def test_unix_prefix(self):
        self.assertEqual(Client("unix:" + self.target).health(), {"status": "ok"})
        self.assertEqual(Client("unix://" + self.target).health(), {"status": "ok"})

    def test_no_server(self):
        with self.assertRaises(ConnectionFailed) as cm:
            Client(os.path.join(self.dir, "absent.sock")).health()
        self.assertIsNone(cm.exception.status)


class TestTCP(Base, unittest.TestCase):
    tcp = True

    def test_token_sent(self):
        self.c.apps()
        self.assertEqual(self.last()[2]["Authorization"], "Bearer tok-all-0123456789")

    def test_unauthorized(self):
        for token in (None, "wrong-token-0123456789"):
            c = Client(self.target, token=token)
            with self.assertRaises(Unauthorized) as cm:
                c.apps()
            self.assertEqual((cm.exception.status, cm.exception.code), (401, "unauthorized"))
            self.assertEqual(c.health(), {"status": "ok"})  # health needs none

    def test_forbidden(self):
        c = Client(self.target, token="tok-cafe-0123456789")
        self.assertEqual([a["app"] for a in c.apps()], ["cafe"])
        self.assertEqual(c.execute("cafe", "pass").status, "succeeded")
        with self.assertRaises(Forbidden) as cm:
            c.execute("mail", "pass")
        self.assertEqual((cm.exception.status, cm.exception.code), (403, "forbidden"))
        with self.assertRaises(Forbidden):
            c.capabilities("mail", "analyst")

    def test_artifact_of_another_token(self):
        r = self.c.execute("cafe", "pass")
        other = Client(self.target, token="tok-cafe-0123456789")
        with self.assertRaises(NotFound):
            other.artifact(r.execution_id, "files/big.bin")

    def test_cancel_of_another_token(self):
        t = threading.Thread(target=lambda: self.c.execute("cafe", "sleep", request_id="mine"))
        t.start()
        self.assertTrue(self.fake.started.wait(5))
        with self.assertRaises(NotFound):
            Client(self.target, token="tok-cafe-0123456789").cancel("mine")
        self.assertTrue(self.c.cancel("mine"))
        t.join(5)

    def test_url_prefix(self):
        # Behind a proxy that mounts serve under a path.
        c = Client(self.target + "/cordon/", token="tok-all-0123456789")
        with self.assertRaises(NotFound):
            c.apps()
        self.assertEqual(self.last()[1], "/cordon/v1/apps")
        self.fake.answers.clear()  # no such path in the document, by design

    def test_refused(self):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        s.close()
        with self.assertRaises(ConnectionFailed):
            Client("http://127.0.0.1:%d" % port, timeout=2).health()

    def test_bad_targets(self):
        for t in ("ftp://x", "http://"):
            with self.assertRaises(ValueError):
                Client(t)


class TestContract(unittest.TestCase):
    def test_the_fake_is_checked_against_the_document(self):
        if API is None:
            self.skipTest("tests/serve/openapi_check.py not loadable: %s" % API_WHY)
        with self.assertRaises(AssertionError):
            API.assert_response("GET", "/v1/health", 200, {"status": "fine"}, {"Content-Type": "application/json"})


if __name__ == "__main__":
    unittest.main()
