# SPDX-License-Identifier: Apache-2.0
"""Tests of runtime/client/cordon_tools.py against a fake supervisor.

The fake listens on a Unix socket in a thread, speaks the frame protocol
(4-byte big-endian length + one JSON object), records every request with
the connection it came on and the peer's pid (SO_PEERCRED), and answers
with whatever the test's responder returns: a JSON value, raw bytes, or
nothing (close).  Run: python3 test_cordon_tools.py (SRC=source tree, or
run it from inside the tree).
"""

import json
import os
import pickle
import socket
import struct
import sys
import tempfile
import threading
import time
import unittest

SRC = os.environ.get("SRC") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(SRC, "runtime", "client"))

import cordon_tools  # noqa: E402

CLOSE = object()  # responder: close the connection without answering
HANG = object()  # responder: answer nothing, keep the connection


def frame(obj):
    body = obj if isinstance(obj, bytes) else json.dumps(obj).encode()
    return struct.pack(">I", len(body)) + body


def ok(req, result):
    return {"v": 1, "id": req["id"], "ok": True, "result": result}


def err(req, code, check="c", message="m"):
    return {"v": 1, "id": req["id"], "ok": False, "error": {"code": code, "check": check, "message": message}}


class Fake:
    """A fake supervisor.  respond(req, conn_no, n_on_conn) -> dict (framed), bytes (sent as they are,
    then the connection is closed), CLOSE or HANG."""

    def __init__(self, respond, read_limit=1 << 20):
        self.dir = tempfile.mkdtemp(prefix="cordon-tools-test.")
        self.path = os.path.join(self.dir, "tools.sock")
        self.respond = respond
        self.read_limit = read_limit
        self.requests = []  # (conn_no, peer_pid, request dict)
        self.connections = 0
        self.lock = threading.Lock()
        self.srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.srv.bind(self.path)
        self.srv.listen(16)
        self.open = []
        threading.Thread(target=self.accept_loop, daemon=True).start()

    def accept_loop(self):
        while True:
            try:
                c, _ = self.srv.accept()
            except OSError:
                return
            with self.lock:
                self.connections += 1
                no = self.connections
                self.open.append(c)
            threading.Thread(target=self.serve, args=(c, no), daemon=True).start()

    def serve(self, c, no):
        cred = c.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        pid = struct.unpack("3i", cred)[0]
        n = 0
        try:
            while True:
                head = self.read(c, 4)
                if head is None:
                    return
                (length,) = struct.unpack(">I", head)
                if length > self.read_limit:
                    # refuse without reading the body, as the supervisor may
                    c.sendall(frame({"v": 1, "id": None, "ok": False,
                                     "error": {"code": "bad_request", "check": "frame", "message": "too large"}}))
                    return
                body = self.read(c, length)
                if body is None:
                    return
                req = json.loads(body)
                n += 1
                with self.lock:
                    self.requests.append((no, pid, req))
                answer = self.respond(req, no, n)
                if answer is CLOSE:
                    return
                if answer is HANG:
                    while c.recv(1):
                        pass
                    return
                if isinstance(answer, bytes):
                    # raw bytes are a broken answer: end the stream after it
                    c.sendall(answer)
                    return
                c.sendall(frame(answer))
        except OSError:
            pass
        finally:
            c.close()

    @staticmethod
    def read(c, n):
        buf = b""
        while len(buf) < n:
            k = c.recv(n - len(buf))
            if not k:
                return None
            buf += k
        return buf

    def close(self):
        self.srv.close()
        for c in self.open:
            try:
                c.close()
            except OSError:
                pass
        try:
            os.unlink(self.path)
        except OSError:
            pass
        os.rmdir(self.dir)


class ClientTest(unittest.TestCase):
    def start(self, respond, **kw):
        self.fake = Fake(respond, **kw)
        os.environ["CORDON_SOCKET"] = self.fake.path
        os.environ["CORDON_TOKEN"] = "tok-9"
        cordon_tools._client.forget()

    def tearDown(self):
        cordon_tools._client.forget()
        if getattr(self, "fake", None) is not None:
            self.fake.close()
            self.fake = None

    # --- answers ---------------------------------------------------------

    def test_success_and_request_shape(self):
        self.start(lambda req, no, n: ok(req, {"echo": req["params"], "n": n}))
        r = cordon_tools.tool_call("calc.add", {"a": 1, "s": "café", "l": [True, None, 2.5]})
        self.assertEqual(r, {"echo": {"a": 1, "s": "café", "l": [True, None, 2.5]}, "n": 1})
        self.assertEqual(cordon_tools.tool_call("calc.add", {}), {"echo": {}, "n": 2})
        (c1, _, q1), (c2, _, q2) = self.fake.requests
        self.assertEqual(q1, {"v": 1, "token": "tok-9", "id": "r1", "tool": "calc.add",
                              "params": {"a": 1, "s": "café", "l": [True, None, 2.5]}})
        self.assertEqual(q2["id"], "r2")
        self.assertEqual((c1, c2), (1, 1), "one connection for both calls")

    def test_message_id_passed(self):
        self.start(lambda req, no, n: ok(req, None))
        self.assertIsNone(cordon_tools.tool_call("mail.send", {"to": "x"}, message_id="order-42"))
        self.assertEqual(self.fake.requests[0][2]["messageId"], "order-42")
        cordon_tools.tool_call("mail.send", {"to": "x"})
        self.assertNotIn("messageId", self.fake.requests[1][2])

    def test_each_error_code(self):
        codes = {
            "unauthenticated": cordon_tools.Unauthenticated, "bad_request": cordon_tools.BadRequest,
            "unknown_tool": cordon_tools.UnknownTool, "invalid_params": cordon_tools.InvalidParams,
            "tool_denied": cordon_tools.ToolDenied, "budget_exceeded": cordon_tools.BudgetExceeded,
            "in_doubt": cordon_tools.InDoubt, "tool_failed": cordon_tools.ToolFailed,
            "tool_timeout": cordon_tools.ToolTimeout, "internal_error": cordon_tools.InternalError,
        }
        self.assertEqual(set(codes), set(cordon_tools.ERRORS))
        self.start(lambda req, no, n: err(req, req["params"]["code"], "check:" + req["params"]["code"], "why"))
        for code, cls in codes.items():
            with self.assertRaises(cls) as cm:
                cordon_tools.tool_call("t.x", {"code": code})
            e = cm.exception
            self.assertIsInstance(e, cordon_tools.ToolError)
            self.assertNotIsInstance(e, cordon_tools.ProtocolError)
            self.assertEqual((e.code, e.check, e.message), (code, "check:" + code, "why"))
            self.assertIn(code, str(e))
        # a code this client does not know: the base class, the code kept
        with self.assertRaises(cordon_tools.ToolError) as cm:
            cordon_tools.tool_call("t.x", {"code": "frobnicated"})
        self.assertIs(type(cm.exception), cordon_tools.ToolError)
        self.assertEqual(cm.exception.code, "frobnicated")
        # error answers keep the connection
        self.assertEqual({no for no, _, _ in self.fake.requests}, {1})

    def test_error_without_id_check_or_message(self):
        self.start(lambda req, no, n: {"v": 1, "id": None, "ok": False, "error": {"code": "bad_request"}})
        with self.assertRaises(cordon_tools.BadRequest) as cm:
            cordon_tools.tool_call("t.x", {})
        self.assertEqual((cm.exception.check, cm.exception.message), (None, "bad_request"))

    def test_exceptions_pickle(self):
        e = pickle.loads(pickle.dumps(cordon_tools.ToolDenied("no", check="constraints[0]")))
        self.assertEqual((type(e), e.code, e.check, e.message), (cordon_tools.ToolDenied, "tool_denied",
                                                                   "constraints[0]", "no"))

    # --- broken answers ---------------------------------------------------

    def broken(self, answer, check):
        self.start(lambda req, no, n: answer(req) if callable(answer) else answer)
        with self.assertRaises(cordon_tools.ProtocolError) as cm:
            cordon_tools.tool_call("t.x", {})
        self.assertEqual(cm.exception.check, check, str(cm.exception))
        self.assertEqual(cm.exception.code, "protocol_error")
        return cm.exception

    def test_id_mismatch(self):
        self.broken(lambda req: {"v": 1, "id": "r99", "ok": True, "result": 1}, "id")
        # the stream is out of step: the next call opens a new connection
        self.fake.respond = lambda req, no, n: ok(req, no)
        self.assertEqual(cordon_tools.tool_call("t.x", {}), 2)

    def test_null_id_on_success(self):
        self.broken(lambda req: {"v": 1, "id": None, "ok": True, "result": 1}, "id")

    def test_short_header(self):
        self.broken(b"\x00\x00", "frame")

    def test_short_body(self):
        e = self.broken(struct.pack(">I", 100) + b'{"v":1', "frame")
        self.assertIn("6 of 100", str(e))

    def test_oversized(self):
        e = self.broken(struct.pack(">I", cordon_tools.MAX_RESPONSE_BYTES + 1) + b"{}", "frame")
        self.assertIn(str(cordon_tools.MAX_RESPONSE_BYTES + 1), str(e))

    def test_bad_json(self):
        for body in (b"{not json", b'{"v":1,"id":"r1","ok":true,"result":NaN}',
                     b'{"v":1,"id":"r1","ok":true,"ok":true,"result":1}', b"[1]", b"\xff\xfe",
                     b'{"v":2,"id":"r1","ok":true,"result":1}', b'{"v":1,"id":"r1","result":1}',
                     b'{"v":1,"id":"r1","ok":true}', b'{"v":1,"id":"r1","ok":false}', b""):
            with self.subTest(body=body):
                self.broken(frame(body), "json")
                self.tearDown()

    def test_large_answer_within_limit(self):
        big = "x" * (cordon_tools.MAX_RESPONSE_BYTES - 100)
        self.start(lambda req, no, n: ok(req, big))
        self.assertEqual(cordon_tools.tool_call("t.x", {}), big)

    # --- connections ------------------------------------------------------

    def test_reconnect_after_idle_close(self):
        # the supervisor closes after each answer: every call finds the old
        # connection closed and makes a new one, without an error
        def respond(req, no, n):
            return ok(req, no)

        self.start(respond)
        self.assertEqual(cordon_tools.tool_call("t.x", {}), 1)
        self.fake.open[0].shutdown(socket.SHUT_RDWR)
        time.sleep(0.05)
        self.assertEqual(cordon_tools.tool_call("t.x", {}), 2)
        self.assertEqual(self.fake.connections, 2)

    def test_closed_while_sending_is_retried_once(self):
        # a reused connection that ends before any answer byte is retried on
        # a fresh one (the race the idle check cannot see)
        def respond(req, no, n):
            return CLOSE if (no, n) == (1, 2) else ok(req, (no, n))

        self.start(respond)
        self.assertEqual(cordon_tools.tool_call("t.x", {}), [1, 1])
        self.assertEqual(cordon_tools.tool_call("t.x", {}, message_id="m"), [2, 1])
        self.assertEqual([q["messageId"] for _, _, q in self.fake.requests[1:]], ["m", "m"])

    def test_fresh_connection_closed_is_an_error(self):
        self.start(lambda req, no, n: CLOSE)
        with self.assertRaises(cordon_tools.ProtocolError) as cm:
            cordon_tools.tool_call("t.x", {})
        self.assertEqual(cm.exception.check, "receive")
        self.assertEqual(self.fake.connections, 1, "no retry on a fresh connection")

    def test_reconnect_after_fork(self):
        self.start(lambda req, no, n: ok(req, no))
        self.assertEqual(cordon_tools.tool_call("t.x", {}), 1)
        pid = os.fork()
        if pid == 0:
            try:
                got = cordon_tools.tool_call("t.x", {"child": True})
                os._exit(0 if got == 2 else 1)
            except BaseException:
                os._exit(2)
        _, status = os.waitpid(pid, 0)
        self.assertEqual(os.waitstatus_to_exitcode(status), 0)
        # the parent still uses its own connection, untouched by the child
        self.assertEqual(cordon_tools.tool_call("t.x", {}), 1)
        pids = [(no, p) for no, p, _ in self.fake.requests]
        self.assertEqual(pids, [(1, os.getpid()), (2, pid), (1, os.getpid())])

    def test_client_timeout(self):
        self.start(lambda req, no, n: HANG if no == 1 else ok(req, no))
        t0 = time.monotonic()
        with self.assertRaises(cordon_tools.ToolTimeout) as cm:
            cordon_tools.tool_call("t.x", {}, timeout=0.2)
        self.assertGreaterEqual(time.monotonic() - t0, 0.19)
        self.assertEqual(cm.exception.check, "client")
        # a late answer must never be read as the next call's
        self.assertEqual(cordon_tools.tool_call("t.x", {}), 2)

    def test_no_supervisor(self):
        os.environ["CORDON_SOCKET"] = "/nonexistent/tools.sock"
        with self.assertRaises(cordon_tools.ProtocolError) as cm:
            cordon_tools.tool_call("t.x", {})
        self.assertEqual(cm.exception.check, "connect")
        self.assertIn("/nonexistent/tools.sock", cm.exception.message)

    def test_refused_large_request_is_answered(self):
        # the supervisor answers bad_request and closes without reading the
        # body; the client still reads that answer
        self.start(lambda req, no, n: ok(req, 1), read_limit=1000)
        with self.assertRaises(cordon_tools.BadRequest) as cm:
            cordon_tools.tool_call("t.x", {"blob": "x" * (4 << 20)})
        self.assertEqual(cm.exception.check, "frame")

    def test_threads(self):
        self.start(lambda req, no, n: ok(req, req["params"]["k"]))
        results, errors = [], []

        def worker(w):
            try:
                for i in range(25):
                    k = "%d-%d" % (w, i)
                    if cordon_tools.tool_call("t.x", {"k": k}) != k:
                        errors.append(k)
                    results.append(k)
            except Exception as e:  # noqa: BLE001
                errors.append(repr(e))

        threads = [threading.Thread(target=worker, args=(w,)) for w in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])
        self.assertEqual(len(results), 200)
        self.assertEqual(self.fake.connections, 1)

    # --- arguments judged without asking ------------------------------------

    def test_bad_arguments_send_nothing(self):
        self.start(lambda req, no, n: ok(req, 1))
        for call, exc in ((lambda: cordon_tools.tool_call("t.x", [1]), TypeError),
                          (lambda: cordon_tools.tool_call("t.x", None), TypeError),
                          (lambda: cordon_tools.tool_call(3, {}), TypeError),
                          (lambda: cordon_tools.tool_call("t.x", {}, message_id=5), TypeError),
                          (lambda: cordon_tools.tool_call("t.x", {"n": float("nan")}), ValueError),
                          (lambda: cordon_tools.tool_call("t.x", {"s": "\ud800"}), ValueError),
                          (lambda: cordon_tools.tool_call("t.x", {"o": object()}), TypeError),
                          (lambda: cordon_tools.tool_call("t.x", {}, timeout=0), ValueError),
                          (lambda: cordon_tools.tool_call("t.x", {}, timeout=True), ValueError)):
            with self.assertRaises(exc):
                call()
        self.assertEqual(self.fake.requests, [])


if __name__ == "__main__":
    unittest.main(verbosity=1)
