#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""test_stream.py - streamed executions of `cordon serve` (docs/serve.md,
"Streaming"): SSE and NDJSON, against a server it starts.

    BUILD=DIR SRC=DIR /usr/bin/python3 tests/serve/test_stream.py root|rootless

api.sh runs it after test_api.py, as root and as cordon-test.  It reuses
test_api.py's environment (the cafe and report blobs, signed with a key
made here) and checks: the order of the events (start first, stdout chunks
in the order printed, interleaved with each tool call where the program
made it, result last); the chunks joined equal the non-streaming result's
stdout, and the final result equals a non-streaming one's in its stable
fields; non-UTF-8 output replaced as in the result; the capture bound (a
program printing past max_output_bytes streams no more than the bound); a
slow reader (one chunk read, a pause, the rest: the execution ended within
its timeout, a "dropped" marker counts what was lost, the result is
there); a reader that disconnects (the execution is cancelled and the
server serves on); HTTP errors before the start stay HTTP errors; curl -N
through the Unix socket; the Python client's iterator.  Every event is
validated against docs/schemas/stream-event.schema.json.
"""
import json
import os
import socket
import subprocess
import sys
import time
import traceback

SRC = os.environ.get("SRC", "")
sys.path.insert(0, os.path.join(SRC, "tests", "serve"))
sys.path.insert(0, os.path.join(SRC, "tests", "lib"))
import test_api as A  # noqa: E402
import schema_check  # noqa: E402

E = "/v1/executions"
TOOL = "from cordon_tools import ToolError, tool_call\n"
# A refused call (its params are missing): decided at once, with no tool run.
CALL = ("try:\n    tool_call('calc.check', {})\nexcept ToolError as e:\n    pass\n")


def raw_stream(sock, body, accept, read_first=None, pause=0.0, close_after=None, timeout=60, path=E,
               paused=None):
    """POST body to path on the Unix socket asking for accept; returns
    (status, headers, body bytes after de-chunking).  read_first: read this
    many body bytes, then sleep pause seconds (or call paused()) before
    reading on.  close_after: close the connection after that many body
    bytes."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(timeout)
    s.connect(sock)
    data = json.dumps(body).encode()
    # A small receive buffer, so that a reader that pauses is a slow one.
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.sendall(b"POST %s HTTP/1.1\r\nHost: x\r\nAccept: %s\r\nContent-Type: application/json\r\n"
              b"Content-Length: %d\r\n\r\n" % (path.encode(), accept.encode(), len(data)) + data)
    f = s.makefile("rb")
    status = int(f.readline().split()[1])
    headers = {}
    while True:
        line = f.readline().rstrip(b"\r\n")
        if not line:
            break
        k, v = line.decode("latin-1").split(":", 1)
        headers[k.strip().lower()] = v.strip()
    out = bytearray()
    was_paused = False
    if headers.get("transfer-encoding", "").lower() != "chunked":
        n = int(headers.get("content-length", "0"))
        out += f.read(n)
        s.close()
        return status, headers, bytes(out)
    while True:
        size = int(f.readline().strip(), 16)
        if size == 0:
            break
        out += f.read(size)
        f.readline()
        if read_first is not None and not was_paused and len(out) >= read_first:
            was_paused = True
            if paused is not None:
                paused()
            else:
                time.sleep(pause)
        if close_after is not None and len(out) >= close_after:
            f.close()
            s.close()
            return status, headers, bytes(out)
    f.close()
    s.close()
    return status, headers, bytes(out)


def parse(body, fmt):
    """The events of a body: (list of dicts, list of problems)."""
    evs, bad = [], []
    text = body.decode("utf-8")
    if fmt == "ndjson":
        for line in text.split("\n"):
            if line:
                evs.append(json.loads(line))
        return evs, bad
    for block in text.split("\n\n"):
        if not block or block.startswith(":"):
            continue
        lines = block.split("\n")
        name = [x[7:] for x in lines if x.startswith("event: ")]
        data = [x[6:] for x in lines if x.startswith("data: ")]
        if len(name) != 1 or len(data) != 1:
            bad.append("an SSE block without one event and one data line: %r" % block[:200])
            continue
        ev = json.loads(data[0])
        if ev.get("type") != name[0]:
            bad.append("event: %s, data's type %s" % (name[0], ev.get("type")))
        evs.append(ev)
    return evs, bad


def sequence(evs, label=lambda call: call.get("tool", "?")):
    """The output lines and tool calls of evs in the order told:
    ["out:LINE", "call:LABEL", ...].  print() writes its text and its
    newline apart: chunks are joined up to each call, then cut in lines."""
    seq, pending = [], ""
    for e in evs:
        if e["type"] == "stdout":
            pending += e["text"]
        elif e["type"] == "toolCall":
            seq += ["out:" + x for x in pending.splitlines()]
            pending = ""
            seq.append("call:" + label(e["call"]))
    return seq + ["out:" + x for x in pending.splitlines()]


class Tests:
    def __init__(self, t, env, srv, api, cc):
        self.t, self.env, self.srv, self.api, self.cc = t, env, srv, api, cc

    def conform(self, evs, what):
        errs = []
        for i, ev in enumerate(evs):
            errs += ["event %d (%s): %s" % (i, ev.get("type"), e) for e in schema_check.check("stream-event", ev)]
            if ev.get("type") == "result":
                errs += ["the result: %s" % e for e in schema_check.check("result", dict(ev["result"]))]
        self.t.check(not errs, "%s: every event fits stream-event.schema.json" % what, "\n".join(errs[:10]))

    def run(self, body, fmt, **kw):
        accept = "text/event-stream" if fmt == "sse" else "application/x-ndjson"
        status, headers, raw = raw_stream(self.srv.sock, body, accept, **kw)
        if "close_after" not in kw:  # a stream cut short is not a whole answer
            errs = self.api.check_response("POST", E, status, raw, headers)
            self.t.check(not errs, "%s %s: the answer fits docs/openapi.yaml" % (body["app"], fmt), "\n".join(errs[:10]))
        evs, bad = parse(raw, fmt) if status == 200 else ([], [])
        return status, headers, evs, bad, raw

    def order(self):
        code = TOOL + "import sys\n" + "".join(
            "print('line %d', flush=True)\n%s" % (i, CALL if i % 2 else "") for i in range(6)) + \
            "print('to stderr', file=sys.stderr)\nprint('end')\n"
        body = {"app": "cafe", "agent": "analyst", "code": code, "context": {"roles": ["analyst"], "tools": ["calc.check"]}}
        plain = self.srv.unix.http("POST", E, body).json()
        for fmt in ("ndjson", "sse"):
            status, headers, evs, bad, raw = self.run(body, fmt)
            what = "%s order" % fmt
            if not self.t.check(status == 200, "%s: 200" % what, raw[:400]):
                continue
            want_ct = "text/event-stream" if fmt == "sse" else "application/x-ndjson"
            self.t.check(headers.get("content-type") == want_ct, "%s: Content-Type %s" % (what, want_ct), headers)
            self.t.check(not bad, "%s: well-formed SSE" % what, bad)
            self.conform(evs, what)
            types = [e["type"] for e in evs]
            self.t.check(types[:1] == ["start"] and types[-1:] == ["result"],
                         "%s: start first, result last" % what, types)
            self.t.check(types.count("start") == 1 and types.count("result") == 1, "%s: one start, one result"
                         % what, types)
            res = evs[-1]["result"]
            self.t.check(evs[0].get("executionId") == res.get("executionId"),
                         "%s: start names the result's execution" % what)
            out = "".join(e["text"] for e in evs if e["type"] == "stdout")
            err = "".join(e["text"] for e in evs if e["type"] == "stderr")
            self.t.check(out == res["stdout"] == plain["stdout"],
                         "%s: stdout chunks joined == the result's stdout == the non-streaming stdout" % what,
                         "%r\n%r\n%r" % (out, res["stdout"], plain["stdout"]))
            self.t.check(err == res["stderr"], "%s: stderr chunks joined == the result's stderr" % what)
            # The sequence as the program made it: line i, then (odd i) its call.
            seq = sequence(evs)
            want = []
            for i in range(6):
                want.append("out:line %d" % i)
                if i % 2:
                    want.append("call:calc.check")
            want.append("out:end")
            self.t.check(seq == want, "%s: output and tool calls interleaved as the program made them" % what,
                         "%s\n%s" % (seq, want))
            calls = [e["call"] for e in evs if e["type"] == "toolCall"]
            self.t.check(calls == res["toolCalls"], "%s: toolCall events == the result's toolCalls" % what,
                         "%s\n%s" % (calls, res["toolCalls"]))
            # Not stderr: under TSAN=1 the executor's pre-exec child may
            # write a report there in one run and not the other.
            def stable(r):
                calls = [{k: v for k, v in c.items() if k not in ("durationMs", "toolMs")} for c in r.get("toolCalls", [])]
                return dict({k: r.get(k) for k in ("status", "exitCode", "stdout")}, toolCalls=calls)
            diff = {k: (v, stable(plain)[k]) for k, v in stable(res).items() if v != stable(plain)[k]}
            self.t.check(not diff, "%s: the result event == the non-streaming result (status, exit, stdout, calls)"
                         % what, diff)

    def utf8(self):
        code = ("import sys\nsys.stdout.buffer.write(b'a\\xffb')\nsys.stdout.buffer.write('\\u00e9'.encode()[:1])\n"
                "sys.stdout.flush()\nimport time; time.sleep(0.2)\n"
                "sys.stdout.buffer.write('\\u00e9'.encode()[1:] + b'\\n')\n")
        body = {"app": "report", "code": code}
        status, _, evs, _, raw = self.run(body, "ndjson")
        if not self.t.check(status == 200 and evs, "utf8: 200 with events", raw[:300]):
            return
        self.conform(evs, "utf8")
        out = "".join(e["text"] for e in evs if e["type"] == "stdout")
        res = evs[-1]["result"]
        self.t.check(out == res["stdout"] == "a\ufffdb\u00e9\n",
                     "utf8: an invalid byte is U+FFFD and a character cut between writes arrives whole", repr(out))
        self.t.check(any(e.get("replaced") == 1 for e in evs if e["type"] == "stdout"),
                     "utf8: the chunk says how many bytes it replaced")

    def bounds(self):
        # 64k is the report app's max_output_bytes: print four times that.
        code = "import sys\nfor i in range(4096):\n    sys.stdout.write('x' * 63 + '\\n')\n"
        status, _, evs, _, raw = self.run({"app": "report", "code": code}, "ndjson")
        if not self.t.check(status == 200 and evs, "bounds: 200 with events", raw[:300]):
            return
        self.conform(evs, "bounds")
        res = evs[-1]["result"]
        out = "".join(e["text"] for e in evs if e["type"] == "stdout")
        self.t.check(len(out) == len(res["stdout"]) <= 64 * 1024 and out == res["stdout"],
                     "bounds: the streamed stdout stops at the capture bound (%d bytes)" % len(out))
        self.t.check(res.get("truncated", {}).get("stdout") is True or len(res["stdout"]) == 64 * 1024,
                     "bounds: the result says stdout was truncated", res.get("truncated"))
        self.t.check(max(len(e["text"]) for e in evs if e["type"] == "stdout") <= 4096,
                     "bounds: every chunk is at most 4096 bytes")

    def slow_reader(self):
        # 3 MiB of output (bigout's capture bound is 4m): more than the
        # socket buffers and the stream's buffer (256 KiB) hold while the
        # reader pauses.
        code = ("import sys\nfor i in range(768):\n    sys.stdout.write(('%05d' % i) * 819 + '\\n')\n"
                "    sys.stdout.flush()\n")
        body = {"app": "bigout", "code": code}
        status, _, evs, _, raw = self.run(body, "ndjson", read_first=1, pause=8)
        if not self.t.check(status == 200 and evs, "slow reader: 200 with events", raw[:300]):
            return
        self.conform(evs, "slow reader")
        types = [e["type"] for e in evs]
        res = evs[-1]["result"] if types[-1] == "result" else {}
        self.t.check(types[-1] == "result", "slow reader: the result is delivered last", types[-5:])
        self.t.check(res.get("status") == "succeeded", "slow reader: the execution succeeded", res.get("status"))
        self.t.check(len(res.get("stdout", "")) == 768 * (5 * 819 + 1), "slow reader: the result holds all the output")
        run_ms = res.get("durationMs")
        self.t.check(isinstance(run_ms, (int, float)) and run_ms < 8000,
                     "slow reader: the execution did not wait for the reader (ran %s ms; the reader paused 8 s)"
                     % run_ms)
        dropped = [e for e in evs if e["type"] == "dropped"]
        got = sum(len(e["text"]) for e in evs if e["type"] == "stdout")
        lost = sum(e["bytes"] for e in dropped)
        self.t.check(dropped and lost > 0, "slow reader: a dropped marker counts the bytes lost (%d)" % lost)
        self.t.check(got + lost == len(res.get("stdout", "")),
                     "slow reader: bytes streamed + bytes dropped == the result's stdout (%d + %d)" % (got, lost))

    def disconnect(self):
        code = ("import time\nprint('started', flush=True)\nopen('/workspace/out/summary.txt','w').write('x')\n"
                "time.sleep(20)\nprint('not reached')\n")
        rid = "stream-disc-%d" % os.getpid()
        body = {"app": "cafe", "code": code, "requestId": rid}
        t0 = time.monotonic()
        status, _, evs, _, raw = self.run(body, "ndjson", close_after=1)
        self.t.check(status == 200, "disconnect: 200, then the reader leaves", raw[:200])

        # The execution is cancelled: its requestId is free again soon
        # (a second one with it is not 409) and cancel finds nothing.
        def gone():
            r = self.srv.unix.http("POST", E + "/%s/cancel" % rid)
            return r.status == 404
        ok = A.wait_until(gone, 15) is True
        self.t.check(ok and time.monotonic() - t0 < 15,
                     "disconnect: the execution ended once its reader left (cancelled, not run to its 20 s)")
        m = self.srv.metrics()
        self.t.check(A.metric(m, "cordon_executions_total", status="cancelled") >= 1,
                     "disconnect: counted as cancelled in /metrics")
        r = self.srv.unix.http("GET", "/v1/health")
        self.t.check(r.status == 200, "disconnect: the server serves on")

    def errors(self):
        for fmt in ("ndjson", "sse"):
            status, headers, _, _, raw = self.run({"app": "nosuch", "code": "pass"}, fmt)
            self.t.check(status == 404 and headers.get("content-type") == "application/json"
                         and json.loads(raw)["error"]["code"] == "unknown_app",
                         "%s: an unknown app is a 404 JSON error, not a stream" % fmt, raw[:200])

    def curl_n(self):
        work = self.env.dir
        out = os.path.join(work, "curl-stream.out")
        p = subprocess.run([A.CURL, "-sS", "-N", "--max-time", "60", "--unix-socket", self.srv.sock,
                            "-H", "Accept: text/event-stream", "-H", "Content-Type: application/json",
                            "-d", json.dumps({"app": "report", "code": "print('hello')\nprint('world')"}),
                            "-o", out, "http://localhost" + E], capture_output=True)
        with open(out, "rb") as f:
            raw = f.read()
        evs, bad = parse(raw, "sse")
        self.t.check(p.returncode == 0 and not bad and evs and evs[-1]["type"] == "result",
                     "curl -N: an SSE stream ending with the result", raw[:300])
        self.conform(evs, "curl -N")
        self.t.check("".join(e["text"] for e in evs if e["type"] == "stdout") == "hello\nworld\n",
                     "curl -N: the output as printed")

    def client(self):
        c = self.cc.Client(self.srv.sock)
        for fmt in ("ndjson", "sse"):
            evs = list(c.stream("report", "print('one')\nprint('two')", format=fmt))
            self.conform(evs, "client %s" % fmt)
            self.t.check([e["type"] for e in evs][0] == "start" and evs[-1]["type"] == "result",
                         "client %s: start ... result" % fmt)
            res = evs[-1]["result"]
            self.t.check(isinstance(res, self.cc.Result) and res["stdout"] == "one\ntwo\n",
                         "client %s: the result is a Result with the output" % fmt)
        try:
            list(c.stream("nosuch", "pass"))
            self.t.fail("client: an unknown app raises NotFound")
        except self.cc.NotFound:
            self.t.ok("client: an unknown app raises NotFound")
        # Leaving the loop early closes the connection: the run is cancelled.
        rid = "stream-client-%d" % os.getpid()
        for ev in c.stream("report", "import time\nprint('x', flush=True)\ntime.sleep(20)", request_id=rid):
            if ev["type"] == "stdout":
                break

        def gone():
            return self.srv.unix.http("POST", E + "/%s/cancel" % rid).status == 404
        self.t.check(A.wait_until(gone, 15) is True, "client: leaving the loop cancels the execution")


def main(argv):
    mode = argv[1] if len(argv) > 1 else ("root" if os.geteuid() == 0 else "rootless")
    t = A.Suite(mode + "/stream")
    t0 = time.monotonic()
    env = A.Env(mode)
    srv = None
    try:
        env.build()
        # bigout: report with a 4 MiB capture bound and no required output,
        # for a stream that outruns a slow reader.
        with open(os.path.join(SRC, "examples", "report", "app.yaml")) as f:
            y = f.read()
        big = y.replace("app: report", "app: bigout", 1).replace("max_output_bytes: 64k", "max_output_bytes: 4m", 1) \
            .replace("required: true", "required: false")
        if big.count("bigout") != 1 or "4m" not in big:
            raise RuntimeError("examples/report/app.yaml changed: cannot derive bigout")
        with open(os.path.join(env.spare, "bigout.yaml"), "w") as f:
            f.write(big)
        env.compile(os.path.join(env.spare, "bigout.yaml"), os.path.join(SRC, "examples", "report", "tools.yaml"),
                    os.path.join(env.policies, "bigout.cpol"))
        api = A.load_openapi()
        cc = A.load_client()
        srv = A.Server(env, "stream", env.policies, os.path.join(env.dir, "work"), os.path.join(env.dir, "s.sock"),
                       # --body-timeout 2: the slow reader's 8 s pause is past
                       # the idle bound (2 + 5 s), which a stream replaces
                       None, ["--pool", "1", "--max-concurrency", "2", "--body-timeout", "2"])
        srv.start()
        t.check(srv.wait_ready(60), "the stream server is ready", srv.log())
        x = Tests(t, env, srv, api, cc)
        t.section("order", x.order)
        t.section("utf8", x.utf8)
        t.section("bounds", x.bounds)
        t.section("slow reader", x.slow_reader)
        t.section("disconnect", x.disconnect)
        t.section("errors", x.errors)
        t.section("curl -N", x.curl_n)
        t.section("client", x.client)
    except Exception:  # noqa: BLE001 - a setup failure is one FAIL
        t.fail("setup", traceback.format_exc())
    finally:
        A.finish(t, env, srv)
    return A.summary(t, "serve", t0)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
