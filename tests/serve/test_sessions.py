#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""test_sessions.py - code-interpreter sessions of `cordon serve`, against a
server it starts (docs/serve.md, "Sessions").

    BUILD=DIR SRC=DIR /usr/bin/python3 tests/serve/test_sessions.py root|rootless

api.sh runs it as root, then again as the unprivileged user
cordon-test.  The server holds three apps compiled from tests/serve/sessions/
(nb: agents with small session limits and a tool with a budget; nbquick: a
2 s cell timeout; nbstream: a 4m capture bound for streamed cells) and
listens on a Unix socket and on loopback TCP with two tokens.

The checks: a session through curl and through the Python client (every
answer held to docs/openapi.yaml; state kept across cells, the last
expression shown, a raised cell that leaves the session going); two
sessions that see nothing of each other (a canary in one's globals,
workspace and /tmp); another token, tenant or user finds no session; an
agent without `session:` is refused; the tool's budget counted over the
session, not per cell; idle expiry; the lifetime ending inside a cell; the
cell limit; a cell killed at its timeout ends the session; the CPU bound;
the workspace bound; sys.exit() ends it; DELETE cancels a running cell;
boundary attacks (tests/boundary/attacks) run as cells are stopped by the
same layer as the same attack run once; streamed cells (SSE and NDJSON:
order of output and tool calls, errors before the start as JSON, the
capture bound, a slow reader that never holds the cell back and gets the
result, a reader that leaves ending the session, Session.stream());
metrics; and SIGTERM ends every
session, none survives a restart.  No assertion is on a duration: a wait
polls until the state it waits for, bounded only so a broken server does
not hang the suite.

One "ok"/"FAIL"/"skip" line a check, then a summary; exit 1 on any FAIL.
"""
import base64
import json
import os
import signal
import sys
import time
import traceback

BUILD = os.environ.get("BUILD", "")
SRC = os.environ.get("SRC", "")
sys.path.insert(0, os.path.join(SRC, "tests", "serve"))
sys.path.insert(0, os.path.join(SRC, "tests", "lib"))
import schema_check  # noqa: E402
import test_api  # noqa: E402  (the API suite's server, targets and checks)
import test_stream  # noqa: E402  (a stream read raw, its events parsed)
from harness import alive, cgroup_dirs, wait_until  # noqa: E402
from test_api import (TOKEN_A, TOKEN_B, Background, Server, Suite, Target, free_port, load_client,  # noqa: E402
                      load_openapi)

HERE = os.path.join(SRC, "tests", "serve", "sessions")
ATTACKS = os.path.join(SRC, "tests", "boundary", "attacks")
BLIB = os.path.join(SRC, "tests", "boundary", "blib.py")
# Attacks that need nothing from the runner (no params, no host side):
# each is run once and as a cell, and both must be stopped the same way.
BOUNDARY = ["ptrace", "mount", "unshare", "write_usr", "read_shadow", "capabilities", "seccomp_status",
            "write_outside_workspace", "identity"]
WHO = {"tenant": "acme", "user": "ana"}
WAIT = 60  # the most any wait below polls for: a bound for a broken server, not a measurement


class Env(test_api.Env):
    def build(self):
        self.run(self.cordonc, "keygen", "-p", self.pub, "-s", self.sec)
        tools = os.path.join(HERE, "tools.yaml")
        self.compile(os.path.join(HERE, "app.yaml"), tools, os.path.join(self.policies, "nb.cpol"))
        self.compile(os.path.join(HERE, "quick.yaml"), tools, os.path.join(self.policies, "nbquick.cpol"))
        self.compile(os.path.join(HERE, "stream.yaml"), tools, os.path.join(self.policies, "nbstream.cpol"))


class Tests:
    def __init__(self, t, env, api, cc, srv):
        self.t, self.env, self.api, self.cc, self.srv = t, env, api, cc, srv
        self.mode = env.mode
        self.client = cc.Client(srv.sock, timeout=120)

    # ---- helpers ------------------------------------------------------------
    def conform(self, method, path, r):
        probs = list(self.api.check_response(method, path.split("?", 1)[0], r.status, r.body, r.headers))
        if path.endswith("/cells") and r.status == 200 and not probs:
            import schema_check
            probs += ["docs/schemas/result.schema.json: " + e for e in schema_check.check("result", r.json())]
        return probs

    def call(self, target, method, path, body=None, status=200, desc=None):
        """One request through http.client; its status and its conformance
        checked when desc is given.  Returns the Resp."""
        r = target.http(method, path, body, timeout=120)
        if desc is not None:
            probs = ([] if r.status == status else ["status %d, want %d" % (r.status, status)])
            probs += self.conform(method, path, r)
            self.t.check(not probs, "%s %s: %s" % (method, path.split("?")[0], desc), "\n".join(probs) + "\n%r" % r)
        return r

    def create(self, target=None, app="nb", agent="analyst", context=WHO, inputs=None, desc=None):
        body = {"app": app, "agent": agent}
        if context is not None:
            body["context"] = context
        if inputs:
            body["inputs"] = inputs
        r = self.call(target or self.srv.unix, "POST", "/v1/sessions", body, 201, desc)
        return r.json()["sessionId"] if r.status == 201 else None

    def cell(self, sid, code, target=None, who=WHO, status=200, desc=None, request_id=None):
        body = {"code": code}
        if who is not None:
            body["context"] = who
        if request_id:
            body["requestId"] = request_id
        r = self.call(target or self.srv.unix, "POST", "/v1/sessions/%s/cells" % sid, body, status, desc)
        return r.json() if r.status in (200, 409, 404, 413, 403) else {"httpStatus": r.status, "body": r.body}

    def get(self, sid, target=None, who=WHO):
        q = "?" + "&".join("%s=%s" % kv for kv in sorted(who.items())) if who else ""
        return self.call(target or self.srv.unix, "GET", "/v1/sessions/%s%s" % (sid, q))

    def delete(self, sid, target=None, who=WHO, desc=None, status=200):
        q = "?" + "&".join("%s=%s" % kv for kv in sorted(who.items())) if who else ""
        return self.call(target or self.srv.unix, "DELETE", "/v1/sessions/%s%s" % (sid, q), None, status, desc)

    def wait_ended(self, sid, who=WHO):
        def ended():
            r = self.get(sid, who=who)
            return r.status == 200 and r.json()["state"] == "ended" and r.json()
        return wait_until(ended, WAIT, 0.1)

    # ---- the checks -----------------------------------------------------------
    def curl_session(self):
        """The whole life through curl, as a user of the API would type it."""
        u = self.srv.unix
        r = u.curl("POST", "/v1/sessions", json.dumps({"app": "nb", "agent": "analyst", "context": WHO}).encode())
        ok = r.status == 201 and not self.conform("POST", "/v1/sessions", r)
        self.t.check(ok, "curl: POST /v1/sessions creates an idle session", r)
        if not ok:
            return
        sid = r.json()["sessionId"]
        self.t.check(r.json()["state"] == "idle" and r.json()["cells"] == 0, "curl: the new session is idle, 0 cells",
                     r.json())
        path = "/v1/sessions/%s/cells" % sid
        body = lambda code: json.dumps({"code": code, "context": WHO}).encode()  # noqa: E731
        r1 = u.curl("POST", path, body("import json\nrows = [1, 2, 3]\nprint('loaded', len(rows))"))
        r2 = u.curl("POST", path, body("rows.append(4)\nsum(rows)"))
        probs = self.conform("POST", path, r1) + self.conform("POST", path, r2)
        self.t.check(not probs and r1.status == r2.status == 200, "curl: two cells answer results of the documented "
                     "shape", "\n".join(probs) + "\n%r\n%r" % (r1, r2))
        if r2.status == 200:
            a, b = r1.json(), r2.json()
            self.t.check(a["stdout"] == "loaded 3\n" and a["status"] == "succeeded", "curl: cell 1 ran", a)
            self.t.check(b["stdout"] == "10\n" and b["session"]["cell"] == 2 and b["session"]["state"] == "idle",
                         "curl: cell 2 saw cell 1's globals and its last expression was shown", b)
            self.t.check(a["executionId"] == b["executionId"], "curl: one execution id for the session's cells",
                         (a["executionId"], b["executionId"]))
        q = "?tenant=acme&user=ana"
        g = u.curl("GET", "/v1/sessions/%s%s" % (sid, q))
        self.t.check(g.status == 200 and not self.conform("GET", "/v1/sessions/" + sid, g) and g.json()["cells"] == 2,
                     "curl: GET shows the session with its 2 cells", g)
        d = u.curl("DELETE", "/v1/sessions/%s%s" % (sid, q))
        self.t.check(d.status == 200 and not self.conform("DELETE", "/v1/sessions/" + sid, d)
                     and d.json()["state"] == "ended" and d.json()["endReason"] == "deleted",
                     "curl: DELETE ends it (endReason deleted)", d)
        r3 = u.curl("POST", path, body("rows"))
        self.t.check(r3.status == 409 and r3.json()["error"]["code"] == "session_ended",
                     "curl: a cell after the end is 409 session_ended", r3)

    def client_session(self):
        """The Python client: state, a raised cell, the context manager."""
        data = "city,sales\nlyon,3\nnantes,5\n"
        with self.client.session("nb", "analyst", inputs={"sales.csv": data}, context=WHO) as s:
            r1 = s.run("import csv\nrows = list(csv.DictReader(open('sales.csv')))\nlen(rows)")
            r2 = s.run("total = sum(int(r['sales']) for r in rows)\nprint('total', total)")
            r3 = s.run("undefined_name + 1")
            r4 = s.run("total * 2")
            self.t.check(r1.stdout == "2\n" and r2.stdout == "total 8\n",
                         "client: the input file is there and cells build on each other", (r1, r2))
            self.t.check(r3.status == "failed" and r3.exit_code == 1 and "NameError" in r3.stderr
                         and "<cell 3>" in r3.stderr and r3.session["state"] == "idle",
                         "client: a cell that raises is failed (exit 1, traceback on stderr) and the session goes on",
                         r3)
            self.t.check(r4.status == "succeeded" and r4.stdout == "16\n", "client: the next cell still has the globals",
                         r4)
            sid = s.id
        info = s.info
        self.t.check(info["state"] == "ended" and info["endReason"] == "deleted",
                     "client: leaving the with-block deleted the session", info)
        self.t.check(self.get(sid).status == 200 and self.get(sid).json()["cells"] == 4,
                     "the ended session is still shown (4 cells) within --retain-seconds", self.get(sid))

    def displays(self):
        """Rich outputs per cell (docs/displays.md): a last expression with a
        rich form is a bundle as well as its repr on stdout, a plain one is
        stdout only, display() adds bundles, a figure left open is shown
        after its cell (once), and each cell's result has its own only."""
        sid = self.create()
        html = self.cell(sid, "class T:\n    def __repr__(self):\n        return 'T()'\n"
                              "    def _repr_html_(self):\n        return '<b>t</b>'\nT()")
        plain = self.cell(sid, "6 * 7")
        explicit = self.cell(sid, "from cordon_display import display\ndisplay({'k': 1}, 'two')")
        after = self.cell(sid, "None")

        def mimes(r):
            return [sorted(d.get("data", {})) for d in r.get("displays", [])]
        self.t.check(html.get("stdout") == "T()\n" and mimes(html) == [["text/html", "text/plain"]]
                     and html["displays"][0]["data"]["text/html"] == "<b>t</b>",
                     "displays: a last expression with _repr_html_ is a bundle and its repr on stdout", html)
        self.t.check(plain.get("stdout") == "42\n" and plain.get("displays") == [],
                     "displays: a plain last expression is stdout only", plain)
        self.t.check(mimes(explicit) == [["application/json", "text/plain"], ["text/plain"]],
                     "displays: display() in a cell adds its bundles, in order", explicit)
        self.t.check(after.get("displays") == [], "displays: the next cell carries none of the bundles before it",
                     after)
        if not os.path.isdir("/usr/lib/python3/dist-packages/matplotlib"):
            self.t.skip("displays: matplotlib figures", "python3-matplotlib is not installed")
            return
        left = self.cell(sid, "import matplotlib.pyplot as plt\n_ = plt.plot([1, 2, 3])")
        shown = self.cell(sid, "fig = plt.figure(figsize=(2, 1), dpi=50)\nfig")
        closed = self.cell(sid, "print(plt.get_fignums())")
        png = [d for r in (left, shown) for d in r.get("displays", []) if "image/png" in d.get("data", {})]
        self.t.check(len(left.get("displays", [])) == 1 and len(shown.get("displays", [])) == 1 and len(png) == 2
                     and all(base64.b64decode(d["data"]["image/png"])[:8] == b"\x89PNG\r\n\x1a\n" for d in png),
                     "displays: a figure left open is a PNG after its cell; a figure as last expression is shown once",
                     (left, shown))
        self.t.check(closed.get("stdout") == "[]\n" and closed.get("displays") == [],
                     "displays: figures are closed after the cell that showed them", closed)

    def isolation(self):
        """A canary in A's globals, workspace and /tmp: B sees none of it;
        A, asked the same, sees all of it (so the probe can fail)."""
        a = self.create()
        b = self.create()
        self.cell(a, "canary = 'c4n4ry-A'\nopen('/workspace/work/canary.txt', 'w').write(canary)\n"
                     "open('/tmp/canary.txt', 'w').write(canary)\nimport os\nos.environ['CANARY'] = canary")
        probe = ("import os\nprint('globals', 'canary' in globals())\n"
                 "print('work', os.path.exists('/workspace/work/canary.txt'))\n"
                 "print('tmp', os.path.exists('/tmp/canary.txt'))\nprint('env', os.environ.get('CANARY'))")
        ra, rb = self.cell(a, probe), self.cell(b, probe)
        self.t.check(ra.get("stdout") == "globals True\nwork True\ntmp True\nenv c4n4ry-A\n",
                     "isolation: session A sees its own canary in globals, workspace, /tmp and environ", ra)
        self.t.check(rb.get("stdout") == "globals False\nwork False\ntmp False\nenv None\n",
                     "isolation: session B sees none of A's canary", rb)
        self.t.check(ra.get("executionId") != rb.get("executionId"), "isolation: each session is its own execution")
        for sid in (a, b):
            self.delete(sid)

    def identity(self):
        """Another token, tenant or user finds no session: 404, the same
        answer as for an id that does not exist."""
        port = self.srv.port
        ta, tb = Target(port=port, token=TOKEN_A), Target(port=port, token=TOKEN_B)
        sid = self.create(ta, desc="creates a session over TCP (token A)")
        if sid is None:
            return
        self.cell(sid, "secret = 42", ta, desc="token A runs a cell")
        for desc, target, who in (("token B", tb, WHO), ("the Unix socket", self.srv.unix, WHO),
                                  ("another user", ta, {"tenant": "acme", "user": "bob"}),
                                  ("another tenant", ta, {"tenant": "other", "user": "ana"}),
                                  ("no tenant and user", ta, None)):
            r = self.cell(sid, "print(secret)", target, who, 404)
            self.t.check(r.get("error", {}).get("code") == "unknown_session",
                         "identity: %s runs no cell of it (404 unknown_session)" % desc, r)
            g = self.get(sid, target, who)
            self.t.check(g.status == 404, "identity: %s cannot GET it (404)" % desc, g)
            d = self.delete(sid, target, who, status=404)
            self.t.check(d.status == 404, "identity: %s cannot DELETE it (404)" % desc, d)
        r = self.cell("0" * 32, "1", ta, WHO, 404)
        self.t.check(r.get("error", {}).get("code") == "unknown_session", "identity: an unknown id is the same 404", r)
        self.t.check(self.cell(sid, "secret", ta).get("stdout") == "42\n",
                     "identity: the owner's session was not touched by any of it")
        self.delete(sid, ta)
        r = self.call(self.srv.unix, "POST", "/v1/sessions", {"app": "nb", "agent": "plain"}, 403,
                      "an agent without session: is refused (403)")
        self.t.check(r.status == 403 and r.json()["error"]["code"] == "sessions_not_allowed",
                     "the refusal says sessions_not_allowed", r)
        r = self.call(self.srv.unix, "POST", "/v1/sessions", {"app": "nb"}, 400, "a session needs an agent (400)")
        r = self.call(self.srv.unix, "POST", "/v1/sessions", {"app": "nb", "agent": "analyst", "code": "1"}, 400,
                      "a session takes no code (400)")
        sid = self.create()
        r = self.cell(sid, "1", who={"tenant": "acme", "user": "ana", "roles": ["admin"]}, status=400)
        self.t.check(r.get("httpStatus") == 400, "a cell's context may not carry roles (400): the session keeps its own",
                     r)
        self.delete(sid)

    def tools_budget(self):
        """note.echo has max_calls 2: the budget is the session's (one
        execution id), so the third call, in another cell, is refused."""
        sid = self.create()
        code = ("import tools, cordon_tools\ntry:\n    print(tools.note.echo(text='n%d'))\n"
                "except cordon_tools.ToolError as e:\n    print('refused', e.code)")
        rs = [self.cell(sid, code % i) for i in range(3)]
        calls = [r.get("toolCalls", []) for r in rs]
        self.t.check([len(c) for c in calls] == [1, 1, 1], "tools: each cell lists its own call only", calls)
        codes = [c[0].get("code", "ok") if c else None for c in calls]  # an allowed call has no code
        self.t.check(codes[:2] == ["ok", "ok"] and codes[2] == "budget_exceeded" and
                     rs[2].get("stdout", "").startswith("refused budget_exceeded"),
                     "tools: max_calls counts over the session's cells (the third call is budget_exceeded)",
                     (codes, rs[2].get("stdout")))
        self.t.check("{'text': 'n0'}" in rs[0].get("stdout", "") or '"text"' in rs[0].get("stdout", ""),
                     "tools: the call's answer reached the cell", rs[0].get("stdout"))
        self.delete(sid)

    def idle_expiry(self):
        sid = self.create(agent="idle")
        self.cell(sid, "x = 1")
        s = self.wait_ended(sid)
        self.t.check(s and s["endReason"] == "idle_timeout", "idle expiry: an idle session ends (idle_timeout)", s)
        r = self.cell(sid, "x", status=409)
        self.t.check(r.get("error", {}).get("code") == "session_ended" and "idle_timeout" in r["error"]["message"],
                     "idle expiry: a later cell is 409 naming the reason", r)

    def lifetime(self):
        """brief's lifetime (1 s) ends inside a cell that sleeps: the cell
        is cut there and the session ends (lifetime)."""
        sid = self.create(app="nbquick", agent="brief")
        r = self.cell(sid, "import time\ntime.sleep(60)")
        self.t.check(r.get("status") == "timed_out" and r.get("session", {}).get("endReason") == "lifetime",
                     "lifetime: a cell running at the session's lifetime is cut, the session ends (lifetime)",
                     r.get("session", r))
        s = self.get(sid).json()
        self.t.check(s["state"] == "ended" and s["endReason"] == "lifetime", "lifetime: GET says ended (lifetime)", s)

    def cell_limit(self):
        sid = self.create(agent="counted")
        rs = [self.cell(sid, "n = %d" % i) for i in range(3)]
        self.t.check([r.get("session", {}).get("state") for r in rs] == ["idle", "idle", "ended"]
                     and rs[2]["session"]["endReason"] == "max_cells",
                     "cell limit: the third of max_cells 3 is the last (max_cells)", [r.get("session") for r in rs])
        r = self.cell(sid, "n", status=409)
        self.t.check(r.get("error", {}).get("code") == "session_ended", "cell limit: a fourth cell is 409", r)

    def cell_timeout(self):
        sid = self.create(app="nbquick")
        self.cell(sid, "state = 'kept'")
        r = self.cell(sid, "import time\nprint('started', flush=True)\ntime.sleep(60)")
        self.t.check(r.get("status") == "timed_out" and r.get("error", {}).get("code") == "timeout"
                     and r.get("stdout") == "started\n",
                     "timeout: a cell past the policy's timeout is timed_out, its output kept", r)
        self.t.check(r.get("session", {}).get("state") == "ended" and r["session"]["endReason"] == "cell_timed_out",
                     "timeout: it ends the session (no half-state: cell_timed_out)", r.get("session"))
        r = self.cell(sid, "state", status=409)
        self.t.check(r.get("error", {}).get("code") == "session_ended", "timeout: the next cell is 409", r)

    def cpu_limit(self):
        sid = self.create(agent="frugal")
        r = self.cell(sid, "import time\nt = time.process_time()\nwhile time.process_time() - t < 30:\n    pass")
        self.t.check(r.get("status") == "limit_exceeded" and r.get("error", {}).get("code") == "session_limit"
                     and r.get("session", {}).get("endReason") == "cpu",
                     "cpu: a cell that passes the session's CPU bound (1 s) ends it (limit_exceeded, cpu)",
                     (r.get("status"), r.get("error"), r.get("session"), r.get("usage")))
        s = self.get(sid).json()
        self.t.check(s["cpuMs"] >= 1000, "cpu: the session counted at least its bound (%s ms, %s)"
                     % (s["cpuMs"], s["cpuSource"]), s)

    def workspace_limit(self):
        sid = self.create()
        r1 = self.cell(sid, "open('/workspace/work/a.bin', 'wb').write(b'x' * (4 << 20))")
        r2 = self.cell(sid, "open('/workspace/work/b.bin', 'wb').write(b'x' * (6 << 20))")
        self.t.check(r1.get("status") == "succeeded", "workspace: 4 MiB fits the session's 8 MiB", r1.get("status"))
        self.t.check(r2.get("status") == "limit_exceeded" and r2.get("session", {}).get("endReason") == "workspace",
                     "workspace: 6 MiB more passes it: limit_exceeded, the session ends (workspace)",
                     (r2.get("status"), r2.get("error"), r2.get("session")))

    def exits(self):
        sid = self.create()
        r = self.cell(sid, "import sys\nprint('bye')\nsys.exit(3)")
        self.t.check(r.get("status") == "failed" and r.get("exitCode") == 3 and r.get("stdout") == "bye\n"
                     and r.get("session", {}).get("endReason") == "exited",
                     "exit: sys.exit(3) in a cell ends the session with exit code 3 (exited)", r)
        sid = self.create()
        r = self.cell(sid, "import os\nos.kill(os.getpid(), 9)")
        self.t.check(r.get("status") == "failed" and r.get("signal") == "KILL"
                     and r.get("session", {}).get("endReason") == "exited",
                     "crash: a cell that kills the interpreter ends the session (signal KILL)", r)

    def delete_running(self):
        sid = self.create()
        bg = Background(self.cell, sid, "import time\nprint('running', flush=True)\ntime.sleep(60)")
        running = wait_until(lambda: self.get(sid).json()["state"] == "running", WAIT, 0.05)
        self.t.check(running, "delete: the session reads running while its cell runs")
        d = self.delete(sid)
        r = bg.result(WAIT)
        self.t.check(r.get("status") == "cancelled" and "deleted" in r.get("error", {}).get("message", ""),
                     "delete: the running cell is answered cancelled (the session was deleted)", r)
        self.t.check(d.status == 200 and d.json()["endReason"] == "deleted", "delete: DELETE answers the ended session",
                     d)
        # One cell at a time.
        sid = self.create()
        bg = Background(self.cell, sid, "import time\ntime.sleep(60)", request_id="long-cell")
        wait_until(lambda: self.get(sid).json()["state"] == "running", WAIT, 0.05)
        r = self.cell(sid, "1", status=409)
        self.t.check(r.get("error", {}).get("code") == "cell_running", "a second cell while one runs is 409", r)
        c = self.call(self.srv.unix, "POST", "/v1/executions/long-cell/cancel", None, 202,
                      "a cell's requestId cancels it like an execution's")
        r = bg.result(WAIT)
        self.t.check(r.get("status") == "cancelled" and r.get("session", {}).get("endReason") == "cancelled",
                     "the cancelled cell ends its session (cancelled)", (c, r.get("status"), r.get("session")))

    def boundary(self):
        """Each attack once (POST /v1/executions) and as a cell of a session
        (after a harmless first cell): the same status, stopped by the same
        layer."""
        with open(BLIB) as f:
            blib = f.read()
        inputs = [{"name": "blib.py", "content": blib}]
        for name in BOUNDARY:
            with open(os.path.join(ATTACKS, name + ".py")) as f:
                code = f.read()
            once = self.call(self.srv.unix, "POST", "/v1/executions",
                             {"app": "nb", "agent": "analyst", "code": code, "inputs": inputs, "context": WHO}).json()
            sid = self.create(inputs=inputs)
            self.cell(sid, "warm = True")
            cell = self.cell(sid, code)
            a, b = once.get("result") or {}, cell.get("result") or {}
            same = (once.get("status"), a.get("blocked"), a.get("layer")) == (cell.get("status"), b.get("blocked"),
                                                                              b.get("layer"))
            self.t.check(same and a.get("blocked") is True,
                         "boundary %s: as a cell, stopped as when run once (%s, layer %s)"
                         % (name, cell.get("status"), b.get("layer")),
                         "once: %s %s\ncell: %s %s" % (once.get("status"), a, cell.get("status"), b))
            self.delete(sid)

    # ---- streamed cells (docs/serve.md, "Streaming") --------------------------
    def stream_cell(self, sid, code, fmt, who=WHO, **kw):
        """One cell asked as a stream: (status, headers, events, problems,
        raw); the answer held to docs/openapi.yaml (unless cut short) and
        each event to stream-event.schema.json, a result to result's."""
        body = {"code": code}
        if who is not None:
            body["context"] = who
        accept = "text/event-stream" if fmt == "sse" else "application/x-ndjson"
        path = "/v1/sessions/%s/cells" % sid
        status, headers, raw = test_stream.raw_stream(self.srv.sock, body, accept, path=path, timeout=120, **kw)
        probs = [] if "close_after" in kw else list(self.api.check_response("POST", path, status, raw, headers))
        evs, bad = test_stream.parse(raw, fmt) if status == 200 else ([], [])
        probs += bad
        for i, ev in enumerate(evs):
            probs += ["event %d (%s): %s" % (i, ev.get("type"), e) for e in schema_check.check("stream-event", ev)]
            if ev.get("type") == "result":
                probs += ["the result: %s" % e for e in schema_check.check("result", dict(ev["result"]))]
        return status, headers, evs, probs, raw

    def stream_order(self):
        """A cell streamed as an execution is: start, its output and tool
        calls in the order the cell made them, its result last (with
        session); what it leaves in the globals is the next cell's."""
        code = ("from cordon_tools import ToolError, tool_call\nimport sys\nprint('line 0', flush=True)\n"
                "try:\n    tool_call('note.echo', {})\nexcept ToolError:\n    pass\n"
                "print('line 1', flush=True)\ntool_call('note.echo', {'text': 'hi'})\n"
                "print('to stderr', file=sys.stderr)\nkept = base + 1\nkept")
        for fmt in ("ndjson", "sse"):
            what = "stream %s" % fmt
            sid = self.create(app="nbstream")
            if not self.t.check(sid is not None, "%s: a session of nbstream" % what):
                continue
            self.cell(sid, "base = 41")
            status, headers, evs, probs, raw = self.stream_cell(sid, code, fmt)
            if not self.t.check(status == 200 and evs, "%s: 200 with events" % what, raw[:400]):
                continue
            want_ct = "text/event-stream" if fmt == "sse" else "application/x-ndjson"
            self.t.check(headers.get("content-type") == want_ct, "%s: Content-Type %s" % (what, want_ct), headers)
            self.t.check(not probs, "%s: the answer fits docs/openapi.yaml, each event its schema" % what,
                         "\n".join(probs[:10]))
            types = [e["type"] for e in evs]
            self.t.check(types[:1] == ["start"] and types[-1:] == ["result"] and types.count("start") == 1
                         and types.count("result") == 1, "%s: one start first, one result last" % what, types)
            res = evs[-1].get("result", {})
            info = self.get(sid).json()
            self.t.check(evs[0].get("executionId") == res.get("executionId") == info.get("executionId"),
                         "%s: start names the session's execution, as the result does" % what,
                         (evs[0], res.get("executionId"), info.get("executionId")))
            out = "".join(e["text"] for e in evs if e["type"] == "stdout")
            err = "".join(e["text"] for e in evs if e["type"] == "stderr")
            self.t.check(out == res.get("stdout") and err == res.get("stderr") and res.get("stdout", "").endswith("42\n"),
                         "%s: the chunks joined == the cell's stdout and stderr (its last expression shown)" % what,
                         (out, err, res.get("stdout"), res.get("stderr")))
            seq = test_stream.sequence(evs, lambda c: "%s:%s" % (c.get("tool"), c.get("decision")))
            want = ["out:line 0", "call:note.echo:denied", "out:line 1", "call:note.echo:allowed", "out:42"]
            self.t.check(seq == want, "%s: output and tool calls in the order the cell made them" % what,
                         "%s\n%s" % (seq, want))
            calls = [e["call"] for e in evs if e["type"] == "toolCall"]
            self.t.check(calls == res.get("toolCalls"), "%s: toolCall events == the cell's toolCalls" % what,
                         (calls, res.get("toolCalls")))
            self.t.check(res.get("status") == "succeeded" and res.get("session", {}).get("cell") == 2
                         and res["session"].get("state") == "idle",
                         "%s: the result is the cell's (succeeded, cell 2, the session idle)" % what, res.get("session"))
            r = self.cell(sid, "print(kept, base)")
            self.t.check(r.get("stdout") == "42 41\n" and r.get("session", {}).get("cell") == 3,
                         "%s: the next (plain) cell sees what the streamed one left" % what, r)
            self.delete(sid)

    def stream_errors(self):
        """What is refused before a cell starts is a plain JSON error, never
        a stream: an unknown session, another user's, an ended one."""
        sid = self.create()
        cases = [("0" * 32, WHO, 404, "unknown_session", "an unknown session"),
                 (sid, {"tenant": "acme", "user": "bob"}, 404, "unknown_session", "another user's session")]
        for fmt in ("ndjson", "sse"):
            for s, who, want, code, desc in cases:
                status, headers, _, probs, raw = self.stream_cell(s, "1", fmt, who=who)
                body = json.loads(raw) if headers.get("content-type") == "application/json" else {}
                self.t.check(status == want and body.get("error", {}).get("code") == code and not probs,
                             "stream %s: %s is %d %s as JSON" % (fmt, desc, want, code), raw[:300])
        self.delete(sid)
        status, headers, _, probs, raw = self.stream_cell(sid, "1", "sse")
        body = json.loads(raw) if headers.get("content-type") == "application/json" else {}
        self.t.check(status == 409 and body.get("error", {}).get("code") == "session_ended" and not probs,
                     "stream: a cell of an ended session is 409 session_ended as JSON", raw[:300])

    def stream_bounds(self):
        """nb's capture bound is 64k: a cell printing four times that
        streams no more than the bound, in chunks of at most 4096 bytes."""
        sid = self.create()
        code = "import sys\nfor i in range(4096):\n    sys.stdout.write('x' * 63 + '\\n')\n"
        status, _, evs, probs, raw = self.stream_cell(sid, code, "ndjson")
        if not self.t.check(status == 200 and evs and not probs, "stream bounds: 200, events that fit their schema",
                            "\n".join(probs[:5]) + repr(raw[:300])):
            return
        res = evs[-1].get("result", {})
        out = "".join(e["text"] for e in evs if e["type"] == "stdout")
        self.t.check(out == res.get("stdout") and len(out) == 64 * 1024 and res.get("truncated", {}).get("stdout"),
                     "stream bounds: the streamed stdout stops at the capture bound, the result says truncated",
                     (len(out), len(res.get("stdout", "")), res.get("truncated")))
        self.t.check(max(len(e["text"]) for e in evs if e["type"] == "stdout") <= 4096,
                     "stream bounds: every chunk is at most 4096 bytes")
        self.delete(sid)

    def stream_slow_reader(self):
        """A reader that pauses never holds the cell back: while it reads
        nothing the cell ends (GET shows the session idle again), the chunks
        that did not fit the stream's buffer are dropped with a marker, and
        the result still comes, last, with all of the output."""
        sid = self.create(app="nbstream")
        code = ("import sys\nfor i in range(768):\n    sys.stdout.write(('%05d' % i) * 819 + '\\n')\n"
                "    sys.stdout.flush()\n")
        seen = {}

        def paused():
            def done():
                r = self.get(sid)
                return r.status == 200 and r.json()["state"] == "idle" and r.json()["cells"] == 1
            seen["idle"] = wait_until(done, WAIT, 0.1) is True
        status, _, evs, probs, raw = self.stream_cell(sid, code, "ndjson", read_first=1, paused=paused)
        if not self.t.check(status == 200 and evs and not probs, "slow reader: 200, events that fit their schema",
                            "\n".join(probs[:5]) + repr(raw[:300])):
            return
        self.t.check(seen.get("idle"), "slow reader: the cell ended while its reader read nothing")
        types = [e["type"] for e in evs]
        res = evs[-1].get("result", {})
        self.t.check(types[-1] == "result" and res.get("status") == "succeeded"
                     and len(res.get("stdout", "")) == 768 * (5 * 819 + 1),
                     "slow reader: the result comes last and holds all the output", types[-3:])
        got = sum(len(e["text"]) for e in evs if e["type"] == "stdout")
        lost = sum(e["bytes"] for e in evs if e["type"] == "dropped")
        self.t.check(lost > 0 and got + lost == len(res.get("stdout", "")),
                     "slow reader: a dropped marker; bytes streamed + dropped == the cell's stdout (%d + %d)"
                     % (got, lost))
        r = self.cell(sid, "print('after')")
        self.t.check(r.get("stdout") == "after\n", "slow reader: the session goes on", r)
        self.delete(sid)

    def stream_disconnect(self):
        """A reader that leaves cancels the cell, as for an execution, and
        so ends the session (cancelled)."""
        sid = self.create(app="nbstream")
        status, _, _, _, raw = self.stream_cell(sid, "import time\nprint('started', flush=True)\ntime.sleep(20)\n"
                                                "print('not reached')", "ndjson", close_after=1)
        self.t.check(status == 200, "disconnect: 200, then the reader leaves", raw[:200])
        s = self.wait_ended(sid)
        self.t.check(s and s["endReason"] == "cancelled", "disconnect: the cell is cancelled, the session ended", s)

    def stream_client(self):
        """Session.stream(): the events as Client.stream() yields them, the
        result a Result that the Session notes; leaving the loop early ends
        the session."""
        with self.client.session("nbstream", "analyst", context=WHO) as s:
            s.run("a = 2")
            for n, fmt in enumerate(("ndjson", "sse")):
                evs = list(s.stream("print('x')\na * 21", format=fmt))
                res = evs[-1].get("result") if evs else None
                self.t.check(evs and evs[0]["type"] == "start" and evs[-1]["type"] == "result"
                             and isinstance(res, self.cc.Result) and res.stdout == "x\n42\n"
                             and res.session["cell"] == n + 2 and s.info["cells"] == n + 2,
                             "client %s: start ... result, a Result of the cell" % fmt, evs[-1:])
            for ev in s.stream("import time\nprint('x', flush=True)\ntime.sleep(20)"):
                if ev["type"] == "stdout":
                    break
            ended = self.wait_ended(s.id)
            self.t.check(ended and ended["endReason"] == "cancelled", "client: leaving the loop ends the session",
                         ended)
            try:
                list(s.stream("a"))
                self.t.fail("client: a streamed cell of the ended session raises Conflict")
            except self.cc.Conflict as e:
                self.t.check(e.code == "session_ended", "client: a streamed cell of the ended session raises Conflict")

    def metrics(self):
        m = self.srv.metrics()
        created = sum(test_api.metric(m, "cordon_sessions_created_total", warm=w) or 0 for w in ("true", "false"))
        cells = sum(test_api.metric(m, "cordon_cells_total", status=s) or 0
                    for s in ("succeeded", "failed", "timed_out", "cancelled", "limit_exceeded", "error"))
        self.t.check(created >= 10 and cells >= 20, "metrics: sessions (%d) and cells (%d) counted" % (created, cells),
                     m[-2000:])
        self.t.check((test_api.metric(m, "cordon_sessions_ended_total", reason="cell_timed_out") or 0) >= 1
                     and (test_api.metric(m, "cordon_sessions_ended_total", reason="idle_timeout") or 0) >= 1,
                     "metrics: ended sessions by reason", m[-2000:])

    def sigterm_restart(self):
        """SIGTERM ends every session (shutdown) and serve exits 0; after a
        restart no session is known and its executor is gone."""
        sid = self.create()
        self.cell(sid, "x = 1")
        before = set(test_api.executors(self.srv.pid))
        self.srv.signal(signal.SIGTERM)
        rc = self.srv.wait(WAIT)
        self.t.check(rc == 0, "SIGTERM: serve drains with a live session and exits 0", self.srv.log()[-1500:])
        self.t.check(not [p for p in before if alive(p)], "SIGTERM: no executor of the session survives", before)
        self.srv.start()
        g = self.get(sid)
        self.t.check(g.status == 404 and "a restart ends them" in g.json()["error"]["message"],
                     "restart: the session is gone (sessions live in memory), and the 404 says so", g)
        # The restarted server drains too: a SIGKILL at the end would leave
        # its warm sandboxes' cgroups for a later start to sweep.
        sid = self.create()
        pid = self.srv.pid
        self.srv.signal(signal.SIGTERM)
        self.t.check(self.srv.wait(WAIT) == 0, "SIGTERM again: exits 0 with a fresh session alive",
                     self.srv.log()[-1500:])
        left = cgroup_dirs(pids=[pid])
        self.t.check(not left, "SIGTERM: no cgroup of the server's sandboxes or sessions is left", left)


def main(argv):
    mode = argv[1] if len(argv) > 1 else ("root" if os.geteuid() == 0 else "rootless")
    if not BUILD or not SRC:
        print("usage: BUILD=DIR SRC=DIR %s root|rootless" % argv[0], file=sys.stderr)
        return 2
    t = Suite(mode)
    t0 = time.monotonic()
    env = Env(mode)
    srv = None
    try:
        env.build()
        api = load_openapi()
        cc = load_client()
        srv = Server(env, "sessions", env.policies, os.path.join(env.dir, "work"), os.path.join(env.dir, "s.sock"),
                     free_port(), ["--pool", "1", "--retain-seconds", "60", "--max-sessions", "8", "--grace", "5"])
        srv.start()
        t.check(srv.wait_ready(WAIT), "the server is ready", srv.log())
        x = Tests(t, env, api, cc, srv)
        for name in ("curl_session", "client_session", "displays", "isolation", "identity", "tools_budget", "idle_expiry",
                     "lifetime", "cell_limit", "cell_timeout", "cpu_limit", "workspace_limit", "exits",
                     "delete_running", "boundary", "stream_order", "stream_errors", "stream_bounds",
                     "stream_slow_reader", "stream_disconnect", "stream_client", "metrics", "sigterm_restart"):
            t.section(name, getattr(x, name))
    except Exception:  # noqa: BLE001 - a setup failure ends the run as one FAIL
        t.fail("setup", traceback.format_exc())
    finally:
        test_api.finish(t, env, srv)
    return test_api.summary(t, "sessions", t0)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
