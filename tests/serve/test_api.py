#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""test_api.py - `cordon serve` through real clients, against servers it starts.

    BUILD=DIR SRC=DIR /usr/bin/python3 tests/serve/test_api.py root|rootless

api.sh runs it as root, then again as the unprivileged user cordon-test;
the mode names the run and says which checks apply (rootless, a v1 host
delegates no cgroup, so there is none to find or sweep).

What it starts: a policies directory holding two apps compiled from
examples/ (cafe: two agents, numpy preloaded; report: no agent, stdlib
only) and signed with a key made here; a server on a temporary Unix socket
and a loopback TCP port with a tokens file (one unscoped token, one scoped
to report), a pool of 1 and admission, body and retention bounds small
enough to be reached in a second or two.

Every endpoint goes through curl and through the Python client
(clients/python), and each answer is held to docs/openapi.yaml
(tests/serve/openapi_check.py).  Then bad HTTP input, each a 4xx with a
JSON error and the server still serving; admission (429); cancel;
artifacts inline, fetched and expired; single use of warm sandboxes; and
the faults: idle sandboxes killed, SIGHUP with a tampered and then a good
blob, SIGTERM's drain, and a second server SIGKILLed mid-execution and
restarted on the same socket and work directory.

One "ok"/"FAIL"/"skip" line a check, then a summary; exit 1 on any FAIL.
Standard library, the shared harness (tests/lib/harness.py), and curl.
"""
import base64
import hashlib
import http.client
import json
import os
import re
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback

BUILD = os.environ.get("BUILD", "")
SRC = os.environ.get("SRC", "")
# The shared harness's host probes (processes, cgroups, the socket's HTTP).
sys.path.insert(0, os.path.join(SRC, "tests", "lib"))
from harness import SANITIZER_SIGNS, UnixHTTPConnection, alive, cgroup_dirs, descendants, wait_until  # noqa: E402
CURL = "/usr/bin/curl"

# Two tokens: A may use every app, B only report (api.md: "TOKEN app1,app2").
TOKEN_A = "serve-test-token-A-0123456789abcdef"
TOKEN_B = "serve-test-token-B-0123456789abcdef"

# Bounds the checks reach quickly.
MAX_BODY = 64 * 1024
BODY_TIMEOUT_S = 2
INLINE_MAX = 256
RETAIN_S = 3
MAX_CONCURRENCY = 2
QUEUE = 1

# A program for the report app that meets its output contract
# (files/report.csv required) with the bytes it is given.
REPORT_OUT = (
    "import os, sys\n"
    "os.makedirs('/workspace/out/files', exist_ok=True)\n"
    "open('/workspace/out/files/report.csv', 'w').write(%r)\n"
)


def sleeper(seconds, fork=False):
    """A long execution: optionally a forked child too, so that 'no process
    survives' covers more than the executor itself."""
    code = REPORT_OUT % "x\n" + "import time\n"
    if fork:
        code += "if os.fork() == 0:\n    time.sleep(%d)\n    os._exit(0)\n" % seconds
    return code + "print('sleeping', flush=True)\ntime.sleep(%d)\n" % seconds


# ---- reporting ----------------------------------------------------------------

class Suite:
    def __init__(self, mode):
        self.mode = mode
        self.passed = self.failed = self.skipped = 0
        self.lock = threading.Lock()

    def _line(self, tag, desc):
        with self.lock:
            print("%-4s serve[%s]: %s" % (tag, self.mode, desc), flush=True)

    def ok(self, desc):
        self.passed += 1
        self._line("ok", desc)

    def fail(self, desc, detail=None):
        self.failed += 1
        self._line("FAIL", desc)
        if detail:
            for line in str(detail).splitlines()[:25]:
                print("    " + line, flush=True)

    def skip(self, desc, why):
        self.skipped += 1
        self._line("skip", "%s (%s)" % (desc, why))

    def check(self, cond, desc, detail=None):
        if cond:
            self.ok(desc)
        else:
            self.fail(desc, detail)
        return bool(cond)

    def section(self, name, fn, *args):
        """One group of checks; an exception in it is one FAIL, not the end."""
        try:
            fn(*args)
        except Exception:  # noqa: BLE001 - reported, and the suite goes on
            self.fail("%s: raised" % name, traceback.format_exc())


# ---- HTTP: http.client, curl, raw sockets ------------------------------------

class Resp:
    def __init__(self, status, headers, body, via):
        self.status = status
        self.headers = {k.lower(): v for k, v in headers.items()}
        self.body = body
        self.via = via

    def json(self):
        return json.loads(self.body.decode("utf-8"))

    def __repr__(self):
        return "%s %s %s %r" % (self.via, self.status, self.headers.get("content-type"), self.body[:400])


class Target:
    """One listener of one server: the Unix socket, or TCP with a token."""

    def __init__(self, sock=None, port=None, token=None):
        self.sock, self.port, self.token = sock, port, token

    def with_token(self, token):
        return Target(self.sock, self.port, token)

    def name(self):
        if self.sock:
            return "unix"
        return "tcp(%s)" % ({TOKEN_A: "token A", TOKEN_B: "token B", None: "no token"}.get(self.token, "bad token"))

    def http(self, method, path, body=None, headers=None, timeout=60):
        h = dict(headers or {})
        if isinstance(body, (dict, list)):
            body = json.dumps(body).encode()
            h.setdefault("Content-Type", "application/json")
        elif isinstance(body, str):
            body = body.encode()
        if self.token is not None:
            h["Authorization"] = "Bearer " + self.token
        c = UnixHTTPConnection(self.sock, timeout) if self.sock else http.client.HTTPConnection("127.0.0.1", self.port,
                                                                                      timeout=timeout)
        try:
            c.request(method, path, body=body, headers=h)
            r = c.getresponse()
            return Resp(r.status, dict(r.getheaders()), r.read(), "http.client/" + self.name())
        finally:
            c.close()

    def curl(self, method, path, data=None, headers=(), extra=(), work=None, timeout=60, expect100=False):
        """curl as a user of the API would run it; data: bytes (sent as a
        file, so any size) or None.  expect100: 'Expect: 100-continue', so
        that a body the server refuses from its headers is never sent (else
        the body goes at once, as curl sends one below 1 MiB)."""
        fd, hdr = tempfile.mkstemp(dir=work)
        os.close(fd)
        fd, out = tempfile.mkstemp(dir=work)
        os.close(fd)
        args = [CURL, "-sS", "--max-time", str(timeout), "-o", out, "-D", hdr, "-w", "%{http_code}"]
        args += ["-H", "Expect: 100-continue" if expect100 else "Expect:"]
        if method != "GET" or data is not None:
            args += ["-X", method]
        if self.sock:
            args += ["--unix-socket", self.sock]
            url = "http://localhost" + path
        else:
            url = "http://127.0.0.1:%d%s" % (self.port, path)
        if self.token is not None:
            args += ["-H", "Authorization: Bearer " + self.token]
        dfile = None
        if data is not None:
            fd, dfile = tempfile.mkstemp(dir=work)
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            args += ["--data-binary", "@" + dfile]
            if not any(h.lower().startswith("content-type:") for h in headers):
                args += ["-H", "Content-Type: application/json"]
        for h in headers:
            args += ["-H", h]
        args += list(extra) + [url]
        try:
            p = subprocess.run(args, capture_output=True, timeout=timeout + 10)
            with open(hdr, "rb") as f:
                raw = f.read().decode("latin-1")
            with open(out, "rb") as f:
                body = f.read()
        finally:
            for x in (hdr, out, dfile):
                if x:
                    os.unlink(x)
        if p.returncode != 0 and not raw:
            raise RuntimeError("curl %s %s: exit %d: %s" % (method, path, p.returncode, p.stderr.decode()))
        # The last header block is the answer (an interim 1xx may precede it).
        blocks = [b for b in re.split(r"\r?\n\r?\n", raw) if b.startswith("HTTP/")]
        headers_out = {}
        for line in blocks[-1].splitlines()[1:] if blocks else []:
            if ":" in line:
                k, v = line.split(":", 1)
                headers_out[k.strip()] = v.strip()
        return Resp(int(p.stdout.decode() or 0), headers_out, body, "curl/" + self.name())


def raw_exchange(target, chunks, delay=0.0, read_timeout=10.0):
    """Sends chunks over a fresh connection, delay seconds apart, watching
    for an answer all along; returns (answer bytes, seconds until it came,
    chunks sent before it came)."""
    if target.sock:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(target.sock)
    else:
        s = socket.create_connection(("127.0.0.1", target.port))
    t0 = time.monotonic()
    got = b""
    sent = 0
    try:
        for c in chunks:
            r, _, _ = select.select([s], [], [], delay)
            if r:
                break
            try:
                s.sendall(c)
            except OSError:
                break
            sent += 1
        first = None
        end = time.monotonic() + read_timeout
        while time.monotonic() < end:
            r, _, _ = select.select([s], [], [], end - time.monotonic())
            if not r:
                break
            try:
                d = s.recv(65536)
            except OSError:
                break
            if not d:
                break
            if first is None:
                first = time.monotonic() - t0
            got += d
        return got, (first if first is not None else time.monotonic() - t0), sent
    finally:
        s.close()


def parse_raw(answer):
    head, _, body = answer.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    m = re.match(r"HTTP/1\.[01] (\d{3})", lines[0] if lines else "")
    headers = {}
    for line in lines[1:]:
        if ":" in line:
            k, v = line.split(":", 1)
            headers[k.strip()] = v.strip()
    return Resp(int(m.group(1)) if m else 0, headers, body, "raw")


# ---- processes, cgroups, metrics --------------------------------------------

def proc_status(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            text = f.read()
    except OSError:
        return None
    out = {}
    for line in text.splitlines():
        k, _, v = line.partition(":")
        out[k] = v.strip()
    return out


def all_pids():
    return [int(d) for d in os.listdir("/proc") if d.isdigit()]


def executors(server_pid):
    """The server's sandboxes: its children in a pid namespace of their own
    (NSpid lists more than one pid)."""
    out = []
    for pid in all_pids():
        st = proc_status(pid)
        if st is None or st.get("PPid") != str(server_pid) or st.get("State", "").startswith("Z"):
            continue
        if len(st.get("NSpid", "").split()) > 1:
            out.append(pid)
    return sorted(out)


def metric(text, name, **labels):
    """The sum of the samples of name whose labels include labels."""
    total = 0.0
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        m = re.match(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)$", line)
        if not m or m.group(1) != name:
            continue
        got = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(2) or ""))
        if all(got.get(k) == v for k, v in labels.items()):
            total += float(m.group(3))
    return total


# ---- the server ----------------------------------------------------------------

class Server:
    def __init__(self, env, name, policies, work_dir, sock, port=None, extra=()):
        self.env = env
        self.name = name
        self.sock = sock
        self.port = port
        self.work_dir = work_dir
        self.log_path = os.path.join(env.dir, name + ".log")
        self.args = [os.path.join(BUILD, "cordon"), "serve", "--policies", policies, "--trusted-key", env.pub,
                     "--socket", sock, "--work-dir", work_dir, "--state-dir", env.state_dir]
        if port:
            self.args += ["--listen", "127.0.0.1:%d" % port, "--tokens", env.tokens]
        self.args += list(extra)
        self.proc = None
        self.unix = Target(sock=sock)
        self.tcp_a = Target(port=port, token=TOKEN_A) if port else None
        self.tcp_b = Target(port=port, token=TOKEN_B) if port else None

    @property
    def pid(self):
        return self.proc.pid

    def start(self, timeout=30):
        logf = open(self.log_path, "ab")
        try:
            self.proc = subprocess.Popen(self.args, stdin=subprocess.DEVNULL, stdout=logf, stderr=logf,
                                         start_new_session=True)
        finally:
            logf.close()

        def up():
            if self.proc.poll() is not None:
                return "exited"
            try:
                return self.unix.http("GET", "/v1/health", timeout=2).status == 200
            except OSError:
                return False

        r = wait_until(up, timeout)
        if r is not True:
            raise RuntimeError("%s did not come up (%s):\n%s" % (self.name, r or "timeout", self.log()))

    def log(self):
        try:
            with open(self.log_path, errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def wait_ready(self, timeout=60):
        def ready():
            try:
                return self.unix.http("GET", "/v1/ready", timeout=5).status == 200
            except OSError:
                return False
        return wait_until(ready, timeout, 0.1)

    def metrics(self):
        return self.unix.http("GET", "/metrics").body.decode()

    def signal(self, sig):
        self.proc.send_signal(sig)

    def wait(self, timeout):
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def kill(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


class Background(threading.Thread):
    """One request on a thread of its own: the result or the exception."""

    def __init__(self, fn, *args, **kw):
        super().__init__(daemon=True)
        self.fn, self.args, self.kw = fn, args, kw
        self.value = self.error = None
        self.start()

    def run(self):
        try:
            self.value = self.fn(*self.args, **self.kw)
        except Exception as e:  # noqa: BLE001 - handed to the joiner
            self.error = e

    def result(self, timeout):
        self.join(timeout)
        if self.is_alive():
            raise TimeoutError("the request did not end within %s s" % timeout)
        if self.error is not None:
            raise self.error
        return self.value


# ---- the environment: blobs, key, tokens ---------------------------------------

class Env:
    def __init__(self, mode):
        self.mode = mode
        self.dir = tempfile.mkdtemp(prefix="cordon-serve-test.")
        # The executor (as root: a leased host uid) must reach its run
        # directory below this one.
        os.chmod(self.dir, 0o755)
        self.state_dir = os.path.join(self.dir, "state")
        self.pub = os.path.join(self.dir, "ops.pub")
        self.sec = os.path.join(self.dir, "ops.sec")
        self.policies = os.path.join(self.dir, "policies")
        self.policies2 = os.path.join(self.dir, "policies2")
        self.spare = os.path.join(self.dir, "spare")
        for d in (self.policies, self.policies2, self.spare):
            os.mkdir(d)
        self.tokens = os.path.join(self.dir, "tokens")
        fd = os.open(self.tokens, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write("# serve tests: A unscoped, B scoped to report\n%s\n%s report\n" % (TOKEN_A, TOKEN_B))
        self.cordonc = os.path.join(BUILD, "cordonc")

    def run(self, *args, **kw):
        p = subprocess.run(list(args), capture_output=True, text=True, **kw)
        if p.returncode != 0:
            raise RuntimeError("%s: exit %d\n%s%s" % (" ".join(args), p.returncode, p.stdout, p.stderr))
        return p.stdout

    def compile(self, app_yaml, tools_yaml, out):
        self.run(self.cordonc, "compile", app_yaml, tools_yaml, "-o", out)
        self.run(self.cordonc, "sign", "-s", self.sec, out)
        with open(out, "rb") as f:
            return f.read()

    def build(self):
        ex = os.path.join(SRC, "examples")
        self.run(self.cordonc, "keygen", "-p", self.pub, "-s", self.sec)
        self.cafe_blob = os.path.join(self.policies, "cafe.cpol")
        self.report_blob = os.path.join(self.policies, "report.cpol")
        self.compile(os.path.join(ex, "cafe", "app.yaml"), os.path.join(ex, "cafe", "tools.yaml"), self.cafe_blob)
        self.compile(os.path.join(ex, "report", "app.yaml"), os.path.join(ex, "report", "tools.yaml"),
                     self.report_blob)
        shutil.copy(self.report_blob, os.path.join(self.policies2, "report.cpol"))
        # A second, different report blob for the reload: one limit changed.
        with open(os.path.join(ex, "report", "app.yaml")) as f:
            text = f.read()
        changed = text.replace("timeout: 30s", "timeout: 29s", 1)
        if changed == text:
            raise RuntimeError("examples/report/app.yaml has no 'timeout: 30s' to change")
        y = os.path.join(self.spare, "report-v2.yaml")
        with open(y, "w") as f:
            f.write(changed)
        self.report_v2 = os.path.join(self.spare, "report-v2.cpol")
        self.compile(y, os.path.join(ex, "report", "tools.yaml"), self.report_v2)
        # What the server must report of each blob: its sha256 and signing
        # key id as the loader sees them (cordonc inspect).
        self.sha, self.key_id = {}, None
        for name, path in (("cafe", self.cafe_blob), ("report", self.report_blob), ("report-v2", self.report_v2)):
            info = json.loads(self.run(self.cordonc, "inspect", "--json", path))
            self.sha[name] = info["format"]["sha256"]
            self.key_id = info["signature"]["keyId"]
        with open(os.path.join(ex, "report", "user_code.py")) as f:
            self.report_code = f.read()
        with open(os.path.join(ex, "report", "sales.csv")) as f:
            self.sales = f.read()

    def cleanup(self):
        shutil.rmtree(self.dir, ignore_errors=True)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


# ---- the OpenAPI document and the Python client of this tree ---------------

def load_openapi():
    sys.path.insert(0, os.path.join(SRC, "tests", "serve"))
    import openapi_check
    return openapi_check.load(os.path.join(SRC, "docs", "openapi.yaml"))


def load_client():
    sys.path.insert(0, os.path.join(SRC, "clients", "python"))
    import cordon_client
    return cordon_client


# ---- the checks -------------------------------------------------------------------

class Tests:
    def __init__(self, t, env, api, cc):
        self.t, self.env, self.api, self.cc = t, env, api, cc
        self.mode = env.mode

    # -- helpers --
    def conform(self, method, path, r):
        """[] or the ways r breaks docs/openapi.yaml (and an execution's
        result docs/schemas/result.schema.json)."""
        probs = list(self.api.check_response(method, path.split("?", 1)[0], r.status, r.body, r.headers))
        if method == "POST" and path.split("?", 1)[0] == "/v1/executions" and r.status == 200 and not probs:
            import schema_check
            probs += ["docs/schemas/result.schema.json: " + e for e in schema_check.check("result", r.json())]
        return probs

    def expect(self, r, method, path, status, desc, extra=None):
        """One answer: its status, its conformance, extra(r) -> problem or None."""
        probs = []
        if r.status != status:
            probs.append("status %d, want %d" % (r.status, status))
        probs += self.conform(method, path, r)
        if extra is not None and not probs:
            try:
                p = extra(r)
            except Exception as e:  # noqa: BLE001 - a malformed answer is the finding
                p = "%s: %s" % (type(e).__name__, e)
            if p:
                probs.append(p)
        self.t.check(not probs, "%s %s via %s: %s" % (method, path, r.via, desc), "\n".join(probs) + "\n%r" % r)
        return not probs

    def error_body(self, code=None):
        def f(r):
            ct = r.headers.get("content-type", "")
            if not ct.startswith("application/json"):
                return "Content-Type %r" % ct
            e = r.json().get("error")
            if not isinstance(e, dict) or not isinstance(e.get("code"), str) or not e.get("message"):
                return "no {error: {code, message}} body"
            if code is not None and e["code"] != code:
                return "error code %r, want %r" % (e["code"], code)
            return None
        return f

    def still_serving(self, srv, after):
        try:
            r = srv.unix.http("GET", "/v1/health", timeout=10)
            ok = r.status == 200 and r.json() == {"status": "ok"}
        except OSError as e:
            ok, r = False, e
        if not ok:
            self.t.fail("still serving after %s" % after, repr(r))
        return ok

    def bad(self, srv, r, method, path, status, desc, code=None, headers=None):
        """A refused request: status, JSON error body, any required header,
        then the server must still answer."""
        def extra(r):
            p = self.error_body(code)(r)
            for h in headers or ():
                if h.lower() not in r.headers:
                    p = (p + "; " if p else "") + "no %s header" % h
            return p
        self.expect(r, method, path, status, desc, extra)
        self.still_serving(srv, desc)

    def execute_body(self, app, code, agent=None, inputs=None, context=None, request_id=None):
        b = {"app": app, "code": code}
        if agent is not None:
            b["agent"] = agent
        if inputs:
            b["inputs"] = [{"name": n, "content": c} for n, c in inputs.items()]
        if context is not None:
            b["context"] = context
        if request_id is not None:
            b["requestId"] = request_id
        return b

    def post_exec(self, target, body, timeout=60):
        return target.http("POST", "/v1/executions", body, timeout=timeout)

    def report_exec(self, target, csv_text="a,b\n", **kw):
        r = self.post_exec(target, self.execute_body("report", REPORT_OUT % csv_text, **kw))
        return r

    def wait_running(self, srv, running, queued=0, timeout=20):
        def f():
            m = srv.metrics()
            return metric(m, "cordon_executions_running") >= running and \
                metric(m, "cordon_executions_queued") >= queued
        return wait_until(f, timeout, 0.05)

    # -- 0. a tokens file others can read is refused --
    def tokens_mode(self):
        env = self.env
        loose = os.path.join(env.spare, "tokens-0644")
        shutil.copy(env.tokens, loose)
        os.chmod(loose, 0o644)
        p = subprocess.run([os.path.join(BUILD, "cordon"), "serve", "--policies", env.policies, "--trusted-key", env.pub,
                            "--socket", os.path.join(env.dir, "loose.sock"), "--listen", "127.0.0.1:%d" % free_port(),
                            "--tokens", loose, "--pool", "0", "--work-dir", os.path.join(env.dir, "work-loose"),
                            "--state-dir", env.state_dir], capture_output=True, text=True, timeout=30)
        self.t.check(p.returncode == 1 and "tokens-0644" in p.stderr and "chmod o-rw" in p.stderr,
                     "a tokens file of mode 0644: the server does not start (exit %d), naming the file" % p.returncode,
                     p.stderr[-800:])

    # -- 1. every endpoint, through curl --
    def endpoints_curl(self, srv):
        env = self.env
        work = env.dir
        for tgt in (srv.unix, srv.tcp_a, srv.tcp_b):
            r = tgt.curl("GET", "/v1/health", work=work)
            self.expect(r, "GET", "/v1/health", 200, "status ok", lambda r: None if r.json() == {"status": "ok"}
                        else "body %r" % r.json())
        r = Target(port=srv.port).curl("GET", "/v1/health", work=work)
        self.expect(r, "GET", "/v1/health", 200, "needs no token", None)

        def ready_body(r):
            j = r.json()
            pools = {(p["app"], p["agent"]): p for p in j["pools"]}
            want = {("report", None), ("cafe", None), ("cafe", "analyst"), ("cafe", "cashier")}
            if set(pools) != want:
                return "pools %s, want %s" % (sorted(pools, key=str), sorted(want, key=str))
            if j["ready"] is not True or j["draining"] is not False:
                return "ready %r draining %r" % (j["ready"], j["draining"])
            if any(p["warm"] < 1 or p["target"] != 1 for p in pools.values()):
                return "pools not warm: %r" % j["pools"]
            return None
        for tgt in (srv.unix, srv.tcp_a):
            r = tgt.curl("GET", "/v1/ready", work=work)
            self.expect(r, "GET", "/v1/ready", 200, "every (app, agent) pool warm", ready_body)

        def metrics_body(r):
            ct = r.headers.get("content-type", "")
            if not ct.startswith("text/plain") or "version=0.0.4" not in ct:
                return "Content-Type %r" % ct
            text = r.body.decode()
            for name in ("cordon_executions_total", "cordon_execution_seconds", "cordon_pool_warm",
                         "cordon_sandbox_prepare_seconds", "cordon_sandboxes_created_total",
                         "cordon_sandboxes_failed_total", "cordon_tool_calls_total"):
                if "# TYPE %s " % name not in text:
                    return "no %s" % name
            if metric(text, "cordon_sandboxes_created_total") < 4:
                return "fewer than 4 sandboxes created"
            return None
        for tgt in (srv.unix, srv.tcp_a):
            r = tgt.curl("GET", "/metrics", work=work)
            self.expect(r, "GET", "/metrics", 200, "Prometheus text with the issue's series", metrics_body)

        def apps_body(want):
            def f(r):
                apps = {a["app"]: a for a in r.json()["apps"]}
                if sorted(apps) != sorted(want):
                    return "apps %s, want %s" % (sorted(apps), sorted(want))
                for name, a in apps.items():
                    if a["sha256"] != env.sha[name]:
                        return "%s sha256 %s, want %s" % (name, a["sha256"], env.sha[name])
                    if a["keyId"] != env.key_id:
                        return "%s keyId %r, want %r" % (name, a["keyId"], env.key_id)
                if "cafe" in apps and (sorted(apps["cafe"]["agents"]) != ["analyst", "cashier"]
                                       or apps["cafe"]["preload"] != ["numpy"]):
                    return "cafe agents/preload %r" % apps["cafe"]
                if apps["report"]["agents"] != [] or apps["report"]["preload"] != []:
                    return "report agents/preload %r" % apps["report"]
                # Neither example declares executor.packages.
                if any(a["packages"] != [] for a in apps.values()):
                    return "packages %r" % {n: a["packages"] for n, a in apps.items()}
                return None
            return f
        for tgt, want in ((srv.unix, ["cafe", "report"]), (srv.tcp_a, ["cafe", "report"]),
                          (srv.tcp_b, ["report"])):
            r = tgt.curl("GET", "/v1/apps", work=work)
            self.expect(r, "GET", "/v1/apps", 200, "lists %s with sha256 and keyId" % "+".join(want), apps_body(want))

        # Capabilities: the description is what cordonc describe prints,
        # the tools what describe --format jsonschema gives.
        md = env.run(env.cordonc, "describe", "--agent", "analyst", env.cafe_blob)
        schema = json.loads(env.run(env.cordonc, "describe", "--format", "jsonschema", "--agent", "analyst",
                                    env.cafe_blob))

        def caps_body(r):
            j = r.json()
            if j["app"] != "cafe" or j["agent"] != "analyst" or j["sha256"] != env.sha["cafe"]:
                return "app/agent/sha256 %r" % {k: j.get(k) for k in ("app", "agent", "sha256")}
            if j["description"] != md:
                return "description differs from cordonc describe --agent analyst"
            if j["tools"] != schema:
                return "tools differ from cordonc describe --format jsonschema"
            if sorted(x["id"] for x in j["tools"]) != ["calc.check", "calc.solve", "mail.send"]:
                return "tools %r" % [x["id"] for x in j["tools"]]
            if j["preload"] != ["numpy"] or j["packages"] != []:
                return "preload %r, packages %r" % (j["preload"], j["packages"])
            return None
        for tgt in (srv.unix, srv.tcp_a):
            r = tgt.curl("GET", "/v1/apps/cafe/agents/analyst", work=work)
            self.expect(r, "GET", "/v1/apps/cafe/agents/analyst", 200,
                        "description = cordonc describe, tools = its JSON Schema", caps_body)

        # An execution: the report example with its input, through both
        # listeners; the answer is cordon run's result JSON.
        body = json.dumps(self.execute_body("report", env.report_code, inputs={"sales.csv": env.sales})).encode()
        cold = self.cold_run_keys()
        for tgt in (srv.unix, srv.tcp_a, srv.tcp_b):
            r = tgt.curl("POST", "/v1/executions", data=body, work=work)

            def exec_body(r):
                j = r.json()
                if j["status"] != "succeeded" or j["exitCode"] != 0:
                    return "status %r exit %r error %r stderr %r" % (j["status"], j["exitCode"], j.get("error"),
                                                                     j.get("stderr"))
                if j["policy"]["sha256"] != env.sha["report"] or j["result"]["rows"] != 24:
                    return "policy/result %r %r" % (j["policy"], j["result"])
                if cold is not None and set(j) != cold:
                    return "keys differ from cordon run's: %s" % sorted(set(j) ^ cold)
                a = j["artifacts"][0]
                if a["path"] != "files/report.csv" or "contentBase64" not in a or \
                        hashlib.sha256(base64.b64decode(a["contentBase64"])).hexdigest() != a["sha256"]:
                    return "artifact %r" % a
                return None
            self.expect(r, "POST", "/v1/executions", 200, "the report example succeeds, cordon run's keys",
                        exec_body)

    def cold_run_keys(self):
        """The keys of `cordon run`'s result for the same program: serve's
        answer must have exactly these."""
        env = self.env
        code = os.path.join(env.spare, "report_code.py")
        with open(code, "w") as f:
            f.write(env.report_code)
        sales = os.path.join(env.spare, "sales.csv")
        with open(sales, "w") as f:
            f.write(env.sales)
        os.chmod(code, 0o644)
        os.chmod(sales, 0o644)
        p = subprocess.run([os.path.join(BUILD, "cordon"), "run", "--trusted-key", env.pub, "--policy",
                            env.report_blob, "--code", code, "--input", sales, "--state-dir", env.state_dir],
                           capture_output=True, text=True, timeout=60)
        try:
            res = json.loads(p.stdout)
        except ValueError:
            self.t.fail("cordon run of the report example (for its result keys)",
                        "exit %d\n%s%s" % (p.returncode, p.stdout[:800], p.stderr[:800]))
            return None
        self.t.check(res.get("status") == "succeeded", "cordon run of the report example succeeds (reference)",
                     json.dumps(res)[:800])
        return set(res)

    # -- 2. every endpoint, through the Python client --
    def endpoints_client(self, srv):
        t, env, cc = self.t, self.env, self.cc
        cu = cc.Client(srv.sock)
        ca = cc.Client("http://127.0.0.1:%d" % srv.port, token=TOKEN_A)
        cb = cc.Client("http://127.0.0.1:%d" % srv.port, token=TOKEN_B)
        t.check(srv.wait_ready(30), "the pools are warm again")
        for name, c in (("unix", cu), ("token A", ca)):
            t.check(c.health() == {"status": "ok"}, "client(%s).health()" % name)
            rd = c.ready()
            t.check(rd["ready"] is True and len(rd["pools"]) == 4, "client(%s).ready(): 4 warm pools" % name, rd)
            m = c.metrics()
            t.check("# TYPE cordon_executions_total counter" in m, "client(%s).metrics()" % name, m[:300])
            apps = {a["app"]: a["sha256"] for a in c.apps()}
            t.check(apps == {"cafe": env.sha["cafe"], "report": env.sha["report"]},
                    "client(%s).apps(): both, with sha256" % name, apps)
            caps = c.capabilities("cafe", "cashier")
            t.check(caps["agent"] == "cashier" and sorted(x["id"] for x in caps["tools"]) ==
                    ["calc.check", "calc.solve"] and caps["description"].startswith("# Sandbox of app `cafe`"),
                    "client(%s).capabilities('cafe', 'cashier')" % name, caps.get("tools"))
            tools = cc.chat_tools(caps)
            t.check(all(x["type"] == "function" and x["function"]["parameters"]["type"] == "object"
                        for x in tools), "client(%s): chat_tools() of the capabilities" % name, tools)
        t.check(sorted(a["app"] for a in cb.apps()) == ["report"], "client(token B).apps(): report alone")

        # The cafe program with numpy preloaded; calc.check may not be
        # installed on this host, the program catches a tool error.
        with open(os.path.join(SRC, "examples", "cafe", "user_code.py")) as f:
            cafe_code = f.read()
        with open(os.path.join(SRC, "examples", "cafe", "receipts.json")) as f:
            receipts = f.read()
        ctx = {"tenant": "t", "project": "cafe", "user": "ana", "session": "s-1", "roles": ["analyst"],
               "tools": ["calc.check", "calc.solve"]}
        # The tool runs on the trusted side when scripts/install-examples
        # put it there; else the call passes every check but exec, and is
        # recorded as refused there (docs/bridge.md, check 13).
        installed = os.path.exists("/usr/local/libexec/cordon/examples/cafe/calc-check")
        want_calls = [("calc.check", "allowed")] if installed else [("calc.check", "denied", "exec", "tool_failed")]
        calls0 = metric(srv.metrics(), "cordon_tool_calls_total")
        for name, c in (("unix", cu), ("token A", ca)):
            r = c.execute("cafe", cafe_code, agent="analyst", inputs={"receipts.json": receipts}, context=ctx)
            res = r.result or {}
            calls = [(x["tool"], x["decision"]) + ((x.get("check"), x.get("code")) if x["decision"] == "denied" else ())
                     for x in r.tool_calls]
            ok = r.succeeded and sorted(res.get("solution", {})) == ["coffee", "croissant", "juice"] and \
                calls == want_calls and (not installed or res["check"].get("ok") is True) and \
                b"coffee" in r.artifact("summary.txt").content
            t.check(ok, "client(%s).execute(): the cafe program (numpy preloaded), context, calc.check %s"
                    % (name, "answered ok" if installed else "refused at exec (the tool is not installed)"),
                    json.dumps(dict(r))[:1500])
            errs = self.conform("POST", "/v1/executions", Resp(200, {"Content-Type": "application/json"},
                                                                json.dumps(dict(r)).encode(), "client"))
            t.check(not errs, "client(%s).execute(): the result conforms to docs/openapi.yaml" % name, errs)
        calls1 = metric(srv.metrics(), "cordon_tool_calls_total")
        t.check(calls1 == calls0 + 2, "cordon_tool_calls_total counted the two calls (%s -> %s)" % (calls0, calls1))
        # bytes inputs go as contentBase64
        r = cu.execute("report", env.report_code, inputs={"sales.csv": env.sales.encode()})
        t.check(r.succeeded and r.result["rows"] == 24, "client(unix).execute(): a bytes input (contentBase64)",
                dict(r))
        # typed errors
        self.client_raises(cc.NotFound, lambda: cu.execute("nosuchapp", "pass"), "unknown app")
        self.client_raises(cc.NotFound, lambda: cu.execute("cafe", "pass", agent="nosuch"), "unknown agent")
        self.client_raises(cc.NotFound, lambda: cu.capabilities("cafe", "nosuch"), "capabilities of an unknown agent")
        self.client_raises(cc.BadRequest, lambda: cu.execute("report", "pass", inputs={"../x": "a"}),
                           "an input named ../x")
        self.client_raises(cc.Unauthorized, lambda: cc.Client("http://127.0.0.1:%d" % srv.port).apps(), "no token")
        self.client_raises(cc.Unauthorized, lambda: cc.Client("http://127.0.0.1:%d" % srv.port,
                                                              token="x" * 32).apps(), "a wrong token")
        self.client_raises(cc.Forbidden, lambda: cb.execute("cafe", "pass"), "token B on cafe")
        self.client_raises(cc.Forbidden, lambda: cb.capabilities("cafe", "analyst"), "token B on cafe's agent")
        self.client_raises(cc.NotFound, lambda: ca.cancel("no-such-request"), "cancel of an unknown requestId")
        self.client_raises(cc.NotFound, lambda: ca.artifact("0" * 32, "files/report.csv"), "an unknown artifact")

    def client_raises(self, cls, fn, desc):
        try:
            fn()
        except cls as e:
            self.t.check(e.status and 400 <= e.status < 500 and e.code and e.message,
                         "client raises %s: %s" % (cls.__name__, desc), vars(e))
            return
        except Exception as e:  # noqa: BLE001 - the wrong error is the finding
            self.t.fail("client raises %s: %s" % (cls.__name__, desc), "raised %r" % e)
            return
        self.t.fail("client raises %s: %s" % (cls.__name__, desc), "no exception")

    # -- 3. bad HTTP input --
    def bad_input(self, srv):
        work = self.env.dir
        u, a, b = srv.unix, srv.tcp_a, srv.tcp_b
        E = "/v1/executions"
        for tgt in (u, a):
            self.bad(srv, tgt.curl("POST", E, data=b'{"app": "report", "code": ', work=work), "POST", E, 400,
                     "malformed JSON", "bad_request")
        self.bad(srv, u.curl("POST", E, data=b'[1, 2]', work=work), "POST", E, 400, "an array, not an object")
        self.bad(srv, u.curl("POST", E, data=b'{"app": 5, "code": "pass"}', work=work), "POST", E, 400,
                 "app a number")
        self.bad(srv, u.curl("POST", E, data=b'{"app": "report", "code": ["pass"]}', work=work), "POST", E, 400,
                 "code an array")
        self.bad(srv, u.curl("POST", E, data=b'{"app": "report", "code": "pass", "inputs": "x"}', work=work), "POST",
                 E, 400, "inputs a string")
        self.bad(srv, u.curl("POST", E, data=b'{"app": "report", "code": "pass", "timeout": 5}', work=work), "POST",
                 E, 400, "an unknown key")
        self.bad(srv, u.curl("POST", E, data=b'{"app": "report", "app": "cafe", "code": "pass"}', work=work), "POST",
                 E, 400, "a duplicate key")
        self.bad(srv, u.curl("POST", E, data=json.dumps({"app": "report", "code": "pass", "inputs": [
            {"name": "../etc/passwd", "content": "x"}]}).encode(), work=work), "POST", E, 400, "an input named ../")
        self.bad(srv, u.curl("POST", E, data=json.dumps({"app": "report", "code": "pass", "inputs": [
            {"name": "a.bin", "contentBase64": "!!!"}]}).encode(), work=work), "POST", E, 400, "bad base64")
        self.bad(srv, u.curl("POST", E, data=b'{"app": "report", "code": "pass", "requestId": "a/b"}', work=work),
                 "POST", E, 400, "a requestId with '/'")
        self.bad(srv, u.curl("POST", E, data=b'{"app": "report", "code": "pass"}', headers=["Content-Type: text/plain"],
                             work=work), "POST", E, 415, "Content-Type text/plain")
        # Over --max-body: announced (Content-Length: answered from the
        # headers, the body held back behind 'Expect: 100-continue'; sent
        # at once, the body may meet a closed socket before the answer is
        # read) and not announced (chunked: cut once past the bound).
        big = json.dumps({"app": "report", "code": "#" + "x" * (MAX_BODY + 1000)}).encode()
        for tgt in (u, a):
            self.bad(srv, tgt.curl("POST", E, data=big, work=work, expect100=True), "POST", E, 413,
                     "a body over --max-body (Content-Length)", "body_too_large")
        for tgt in (u, a):
            self.bad(srv, tgt.curl("POST", E, data=big, headers=["Transfer-Encoding: chunked"], work=work), "POST", E,
                     413, "a chunked body over --max-body", "body_too_large")
        # A body trickled past --body-timeout: a 408 while it is still coming.
        body = json.dumps({"app": "report", "code": "pass"}).encode()
        head = ("POST /v1/executions HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                "Content-Length: %d\r\n\r\n" % len(body)).encode()
        chunks = [head] + [body[i:i + 1] for i in range(len(body))]
        for tgt in (u, a):
            if tgt.token:
                chunks[0] = head.replace(b"\r\n\r\n", ("\r\nAuthorization: Bearer %s\r\n\r\n" % tgt.token).encode())
            ans, after, sent = raw_exchange(tgt, chunks, delay=0.4)
            r = parse_raw(ans)
            r.via = "raw/" + tgt.name()
            late = sent < len(chunks) and BODY_TIMEOUT_S - 0.5 <= after <= BODY_TIMEOUT_S + 3
            self.bad(srv, r, "POST", E, 408, "a body trickled past --body-timeout (answered after %.1f s, %d of %d "
                     "parts sent)" % (after, sent, len(chunks)), "request_timeout")
            self.t.check(late, "the 408 came while the body was still arriving, about --body-timeout in",
                         "after %.2f s, %d of %d parts sent" % (after, sent, len(chunks)))
        # Unknown app and agent, on both endpoints that name them.
        self.bad(srv, u.curl("POST", E, data=b'{"app": "nosuch", "code": "pass"}', work=work), "POST", E, 404,
                 "unknown app", "unknown_app")
        self.bad(srv, u.curl("POST", E, data=b'{"app": "cafe", "agent": "nosuch", "code": "pass"}', work=work),
                 "POST", E, 404, "unknown agent", "unknown_agent")
        self.bad(srv, u.curl("POST", E, data=b'{"app": "report", "agent": "analyst", "code": "pass"}', work=work),
                 "POST", E, 404, "an agent of another app", "unknown_agent")
        for path in ("/v1/apps/nosuch/agents/analyst", "/v1/apps/cafe/agents/nosuch"):
            self.bad(srv, u.curl("GET", path, work=work), "GET", path, 404, "unknown app or agent")
        # Tokens on TCP.
        nt, wt = Target(port=srv.port), Target(port=srv.port, token="not-a-token-of-this-server-000000")
        for tgt in (nt, wt):
            for m, p, d in (("GET", "/v1/apps", None), ("GET", "/v1/ready", None), ("GET", "/metrics", None),
                            ("GET", "/v1/apps/report/agents/x", None),
                            ("POST", E, b'{"app": "report", "code": "pass"}'),
                            ("POST", E + "/r1/cancel", None),
                            ("GET", E + "/" + "0" * 32 + "/artifacts/files/report.csv", None)):
                self.bad(srv, tgt.curl(m, p, data=d, work=work), m, p, 401,
                         "missing token" if tgt is nt else "wrong token", "unauthorized",
                         headers=["WWW-Authenticate"])
        r = nt.curl("GET", "/v1/apps", headers=["Authorization: Basic dXNlcjpwYXNz"], work=work)
        self.bad(srv, r, "GET", "/v1/apps", 401, "a Basic credential instead of Bearer", "unauthorized")
        self.bad(srv, b.curl("POST", E, data=b'{"app": "cafe", "agent": "analyst", "code": "pass"}', work=work),
                 "POST", E, 403, "token B executing cafe (out of scope)", "forbidden")
        self.bad(srv, b.curl("GET", "/v1/apps/cafe/agents/analyst", work=work), "GET",
                 "/v1/apps/cafe/agents/analyst", 403, "token B reading cafe's capabilities", "forbidden")
        # Methods and paths.
        for m, p, allow in (("DELETE", "/v1/apps", "GET"), ("POST", "/v1/health", "GET"), ("GET", E, "POST"),
                            ("PUT", "/v1/apps/cafe/agents/analyst", "GET"), ("GET", E + "/r1/cancel", "POST"),
                            ("POST", "/metrics", "GET")):
            r = u.curl(m, p, data=b"{}" if m in ("POST", "PUT") else None, work=work)
            self.bad(srv, r, m, p, 405, "wrong method (Allow: %s)" % allow, "method_not_allowed", headers=["Allow"])
            self.t.check(r.headers.get("allow", "").replace(" ", "") == allow, "%s %s: Allow: %s" % (m, p, allow),
                         r.headers)
        for p in ("/", "/v1", "/v2/apps", "/v1/apps/cafe", "/v1/apps/cafe/agents", "/v1/executions/x",
                  "/v1/nosuch", "/metrics/x"):
            self.bad(srv, u.curl("GET", p, work=work), "GET", p, 404, "unknown path", "not_found")
        self.bad(srv, a.curl("GET", "/v1/nosuch", work=work), "GET", "/v1/nosuch", 404, "unknown path over TCP")

    # -- 4. admission: 429 past --max-concurrency plus --queue --
    def admission(self, srv):
        t = self.t
        long_body = lambda rid: self.execute_body("report", sleeper(25), request_id=rid)  # noqa: E731
        runs = [Background(self.post_exec, srv.unix, long_body("adm-%d" % i), 90) for i in range(MAX_CONCURRENCY)]
        t.check(self.wait_running(srv, MAX_CONCURRENCY), "%d long executions running" % MAX_CONCURRENCY,
                srv.metrics())
        runs.append(Background(self.post_exec, srv.unix, long_body("adm-q"), 90))
        # The gauge should show the waiter; whether or not it does, the
        # 429 below shows the queue is full.
        t.check(self.wait_running(srv, MAX_CONCURRENCY, QUEUE, timeout=2),
                "then %d waiting in the queue (cordon_executions_queued)" % QUEUE,
                "cordon_executions_queued %s" % metric(srv.metrics(), "cordon_executions_queued"))
        body = json.dumps(self.execute_body("report", "pass")).encode()
        for tgt in (srv.unix, srv.tcp_a):
            r = tgt.curl("POST", "/v1/executions", data=body, work=self.env.dir)
            self.bad(srv, r, "POST", "/v1/executions", 429, "past --max-concurrency plus --queue",
                     "overloaded", headers=["Retry-After"])
            t.check(r.headers.get("retry-after", "").isdigit(), "429's Retry-After is a number of seconds",
                    r.headers)
        try:
            self.cc.Client(srv.sock).execute("report", "pass")
            t.fail("client raises Overloaded past the queue", "no exception")
        except self.cc.Overloaded as e:
            t.check(e.retry_after is not None and e.retry_after >= 1, "client raises Overloaded with retry_after",
                    vars(e))
        # The queued one is cancelled too (its handle exists before it runs).
        for rid in ["adm-%d" % i for i in range(MAX_CONCURRENCY)] + ["adm-q"]:
            r = srv.unix.http("POST", "/v1/executions/%s/cancel" % rid)
            t.check(r.status == 202, "cancel %s (running or queued)" % rid, r)
        for i, bg in enumerate(runs):
            r = bg.result(30)
            t.check(r.status == 200 and r.json()["status"] == "cancelled", "the long execution %d ends cancelled" % i,
                    r)
        r = self.report_exec(srv.unix)
        t.check(r.status == 200 and r.json()["status"] == "succeeded", "after the flood, an execution succeeds", r)

    # -- 5. cancel --
    def cancel(self, srv):
        t, work = self.t, self.env.dir
        P = "/v1/executions/%s/cancel"
        bg = Background(self.post_exec, srv.tcp_a, self.execute_body("report", sleeper(25), request_id="cx-1"), 90)
        t.check(self.wait_running(srv, 1), "a long execution with requestId cx-1 runs (token A)", srv.metrics())
        time.sleep(0.2)
        r = srv.tcp_a.curl("POST", "/v1/executions", work=work,
                           data=json.dumps(self.execute_body("report", "pass", request_id="cx-1")).encode())
        self.bad(srv, r, "POST", "/v1/executions", 409, "the same requestId again while it runs")
        for tgt, why in ((srv.tcp_b, "token B"), (srv.unix, "the Unix socket")):
            self.bad(srv, tgt.curl("POST", P % "cx-1", work=work), "POST", P % "cx-1", 404,
                     "%s cannot cancel token A's execution" % why)
        self.bad(srv, srv.tcp_a.curl("POST", P % "no-such-id", work=work), "POST", P % "no-such-id", 404,
                 "cancel of an unknown requestId")
        t.check(bg.is_alive(), "the execution still runs after the refused cancels")
        t0 = time.monotonic()
        r = srv.tcp_a.curl("POST", P % "cx-1", work=work)
        self.expect(r, "POST", P % "cx-1", 202, "token A cancels it", lambda r: None if r.json() == {"cancelled": True}
                    else "body %r" % r.json())
        res = bg.result(30)
        took = time.monotonic() - t0
        self.expect(res, "POST", "/v1/executions", 200, "the cancelled execution's answer (after %.1f s)" % took,
                    lambda r: None if r.json()["status"] == "cancelled" and took < 10
                    else "status %r after %.1f s" % (r.json()["status"], took))
        self.bad(srv, srv.tcp_a.curl("POST", P % "cx-1", work=work), "POST", P % "cx-1", 404,
                 "cancel of an execution that has ended")
        ca = self.cc.Client("http://127.0.0.1:%d" % srv.port, token=TOKEN_A)
        bg = Background(ca.execute, "report", sleeper(25), request_id="cx-py")
        t.check(self.wait_running(srv, 1), "client: a long execution with request_id cx-py runs")
        time.sleep(0.2)
        t.check(ca.cancel("cx-py") is True, "client.cancel('cx-py') is True")
        res = bg.result(30)
        t.check(res.status == "cancelled", "client: the execution's Result says cancelled", dict(res))

    # -- 6. artifacts: inline, fetched, expired --
    def artifacts(self, srv):
        t, work = self.t, self.env.dir
        small = "region,units\n" + "n,1\n" * 10
        large = "region,units\n" + "north,123456789\n" * 300
        rs = self.report_exec(srv.tcp_a, small)
        rl = self.report_exec(srv.tcp_a, large)
        got = {}
        for r, text, inline in ((rs, small, True), (rl, large, False)):
            def f(r, text=text, inline=inline):
                j = r.json()
                a = j["artifacts"][0]
                if j["status"] != "succeeded" or a["path"] != "files/report.csv" or a["bytes"] != len(text):
                    return "status %r artifact %r" % (j["status"], a)
                if a["sha256"] != hashlib.sha256(text.encode()).hexdigest():
                    return "sha256 of the artifact"
                if inline != ("contentBase64" in a):
                    return "contentBase64 %s for %d bytes with --inline-max %d" % (
                        "present" if "contentBase64" in a else "absent", len(text), INLINE_MAX)
                if inline and base64.b64decode(a["contentBase64"]) != text.encode():
                    return "inline bytes differ"
                return None
            self.expect(r, "POST", "/v1/executions", 200, "%d-byte artifact %s" % (
                len(text), "inline (contentBase64)" if inline else "not inline (over --inline-max)"), f)
            got[inline] = (r.json()["executionId"], r.json()["runDir"], text)
        done = time.monotonic()
        for inline, (xid, _, text) in got.items():
            p = "/v1/executions/%s/artifacts/files/report.csv" % xid
            for tgt in (srv.tcp_a,):
                r = tgt.curl("GET", p, work=work)
                self.expect(r, "GET", p, 200, "the artifact's bytes, within --retain-seconds",
                            lambda r, text=text: None if r.body == text.encode() and r.headers.get(
                                "content-type") == "application/octet-stream" else "body/type %r" % r)
            for tgt, why in ((srv.tcp_b, "token B"), (srv.unix, "the Unix socket")):
                self.bad(srv, tgt.curl("GET", p, work=work), "GET", p, 404, "%s cannot fetch token A's artifact" % why)
            q = "/v1/executions/%s/artifacts/result.json" % xid
            self.bad(srv, srv.tcp_a.curl("GET", q, work=work), "GET", q, 404, "a file of the run that is no artifact")
            q = "/v1/executions/%s/artifacts/files/../../%s/out/files/report.csv" % (xid, xid)
            r = srv.tcp_a.curl("GET", q, extra=["--path-as-is"], work=work)
            self.t.check(r.status == 404, "a '..' artifact path is refused (404)", r)
        ca = self.cc.Client("http://127.0.0.1:%d" % srv.port, token=TOKEN_A)
        xid, _, text = got[False]
        t.check(ca.artifact(xid, "files/report.csv") == text.encode(), "client.artifact(): the fetched bytes")
        r = ca.execute("report", REPORT_OUT % large)
        t.check(r.artifact("files/report.csv").content == large.encode(),
                "client: Result.artifact().content fetches what was not inlined, sha256 checked")
        # Past the window: 404, and the run directory is gone.
        time.sleep(max(0.0, done + RETAIN_S + 0.5 - time.monotonic()))
        for inline, (xid, run_dir, _) in got.items():
            p = "/v1/executions/%s/artifacts/files/report.csv" % xid
            self.bad(srv, srv.tcp_a.curl("GET", p, work=work), "GET", p, 404, "after --retain-seconds",
                     "unknown_artifact")
            t.check(wait_until(lambda d=run_dir: not os.path.exists(d), 3), "the kept run directory is removed "
                    "after --retain-seconds", run_dir)

    # -- 6b. rich outputs: a display comes back in the HTTP result --
    def displays(self, srv):
        code = (REPORT_OUT % "a,b\n") + (
            "import cordon_display\n"
            "class T:\n"
            "    def _repr_html_(self): return '<table><tr><td>1</td></tr></table>'\n"
            "cordon_display.display({'rows': 1}, T())\n")

        def f(r):
            j = r.json()
            got = [(d["name"], d["data"], d["error"]) for d in j.get("displays", [])]
            want = [("000000.json", {"text/plain": "{'rows': 1}", "application/json": {"rows": 1}}, None)]
            if j["status"] != "succeeded" or got[:1] != want or len(got) != 2:
                return "status %r displays %r" % (j["status"], got)
            html = got[1][1].get("text/html", "")
            if got[1][2] is not None or not html.startswith("<table>") or "<td>" not in html:
                return "the text/html bundle %r" % (got[1],)
            return None
        self.expect(self.post_exec(srv.tcp_a, self.execute_body("report", code)), "POST", "/v1/executions", 200,
                    "display(): a dict (application/json) and an object's _repr_html_ in result.displays", f)

    # -- 7. single use: two executions in a row, two sandboxes --
    def single_use(self, srv):
        t = self.t
        code = (REPORT_OUT % "a\n") + (
            "seen = [p for p in ('/tmp/canary', '/workspace/work/canary') if os.path.exists(p)]\n"
            "open('/tmp/canary', 'w').write('1')\n"
            "open('/workspace/work/canary', 'w').write('1')\n"
            "os.environ['CANARY'] = '1'\n"
            "import json\n"
            "start = open('/proc/self/stat').read().rsplit(')', 1)[1].split()[19]\n"
            "json.dump({'seen': seen, 'start': start}, open('/workspace/out/result.json', 'w'))\n")
        results, gone = [], []
        for i in range(2):
            t.check(srv.wait_ready(30), "pools warm before execution %d" % (i + 1))
            warm0 = metric(srv.metrics(), "cordon_execution_seconds_count", warm="true")
            before = set(executors(srv.pid))
            r = self.post_exec(srv.unix, self.execute_body("report", code))
            # The used sandbox is destroyed once its answer is out, by
            # another thread: allow it a moment.
            went = wait_until(lambda b=before: b - set(executors(srv.pid)), 5) or set()
            warm1 = metric(srv.metrics(), "cordon_execution_seconds_count", warm="true")
            j = r.json()
            t.check(r.status == 200 and j["status"] == "succeeded", "execution %d of (report, no agent)" % (i + 1),
                    r)
            t.check(warm1 == warm0 + 1, "execution %d ran in a warm sandbox" % (i + 1), "warm count %s -> %s" %
                    (warm0, warm1))
            gone.append(went)
            results.append(j)
        a, b = results
        t.check(a["executionId"] != b["executionId"] and a["runDir"] != b["runDir"],
                "two executions in a row: different executionIds and run directories", (a["executionId"],
                                                                                         b["executionId"]))
        t.check(a["result"]["seen"] == [] and b["result"]["seen"] == [],
                "the second sees nothing the first left in /tmp or the workspace", (a["result"], b["result"]))
        t.check(a["result"]["start"] != b["result"]["start"], "the two ran in different processes (start times "
                "%s, %s)" % (a["result"]["start"], b["result"]["start"]))
        t.check(all(len(g) >= 1 for g in gone), "each execution's warm executor is gone after it (%s)" %
                [sorted(g) for g in gone], gone)

    # -- 8. an idle sandbox killed --
    def idle_killed(self, srv):
        t = self.t
        t.check(srv.wait_ready(30), "pools warm before the kill")
        # Exactly the idle ones: a finished sandbox may still be going.
        idle = wait_until(lambda: len(executors(srv.pid)) == 4 and executors(srv.pid), 5) or executors(srv.pid)
        failed0 = metric(srv.metrics(), "cordon_sandboxes_failed_total")
        t.check(len(idle) == 4, "4 idle executors found (one per pool): %s" % idle, idle)
        for p in idle:
            os.kill(p, signal.SIGKILL)
        t.check(wait_until(lambda: not any(alive(p) for p in idle), 5), "the idle executors are dead")
        r = self.report_exec(srv.unix, "after,kill\n")
        t.check(r.status == 200 and r.json()["status"] == "succeeded",
                "the next request still succeeds after its pool's sandbox was killed", r)
        r = self.post_exec(srv.unix, self.execute_body("cafe", REPORT_OUT % "x" + "open('/workspace/out/summary."
                                                                                   "txt', 'w').write('ok')\n",
                                                        agent="cashier"))
        t.check(r.status == 200 and r.json()["status"] == "succeeded", "and so does one of cafe (cashier)", r)
        t.check(srv.wait_ready(60), "the pools are warm again")
        now = executors(srv.pid)
        t.check(len(now) == 4 and not set(now) & set(idle), "the pool replaced every killed sandbox: %s" % now)
        failed1 = metric(srv.metrics(), "cordon_sandboxes_failed_total")
        t.check(failed1 > failed0, "cordon_sandboxes_failed_total counted the deaths (%s -> %s)" % (failed0, failed1))

    # -- 9. SIGHUP: a tampered blob keeps the old set; a good one is taken --
    def reload(self, srv):
        t, env = self.t, self.env
        blob = env.report_blob
        with open(blob, "rb") as f:
            good = f.read()
        bad = bytearray(good)
        bad[len(bad) // 2] ^= 0x40
        self.replace(blob, bytes(bad))
        n = srv.log().count("SIGHUP")
        srv.signal(signal.SIGHUP)
        t.check(wait_until(lambda: srv.log().count("SIGHUP") > n, 10), "SIGHUP with a tampered report.cpol: logged",
                srv.log()[-2000:])
        line = [x for x in srv.log().splitlines() if "SIGHUP" in x][-1]
        t.check("refused" in line and "report.cpol" in line, "the log says the reload was refused, naming the blob",
                line)
        apps = {a["app"]: a["sha256"] for a in srv.unix.http("GET", "/v1/apps").json()["apps"]}
        t.check(apps == {"cafe": env.sha["cafe"], "report": env.sha["report"]},
                "the old set is kept: report still listed with its old sha256", apps)
        r = self.report_exec(srv.unix)
        t.check(r.status == 200 and r.json()["status"] == "succeeded" and
                r.json()["policy"]["sha256"] == env.sha["report"], "report still runs, on the old blob", r)
        with open(env.report_v2, "rb") as f:
            self.replace(blob, f.read())
        n = srv.log().count("SIGHUP")
        srv.signal(signal.SIGHUP)
        t.check(wait_until(lambda: srv.log().count("SIGHUP") > n, 10), "SIGHUP with a good new report.cpol: logged")
        line = [x for x in srv.log().splitlines() if "SIGHUP" in x][-1]
        t.check("reloaded 2 apps" in line, "the log says 2 apps were reloaded", line)
        for tgt in (srv.unix, srv.tcp_b):
            r = tgt.curl("GET", "/v1/apps", work=env.dir)
            self.expect(r, "GET", "/v1/apps", 200, "the new report sha256 is listed",
                        lambda r: None if {a["app"]: a["sha256"] for a in r.json()["apps"]}.get("report") ==
                        env.sha["report-v2"] else "apps %r" % r.json())
        r = self.report_exec(srv.unix)
        t.check(r.status == 200 and r.json()["policy"]["sha256"] == env.sha["report-v2"],
                "an execution now runs on the new blob", r)
        t.check(srv.wait_ready(60), "the pools are warm again after the reload")
        env.sha["report"] = env.sha["report-v2"]

    @staticmethod
    def replace(path, data):
        tmp = path + ".new"
        with open(tmp, "wb") as f:
            f.write(data)
        os.rename(tmp, path)

    # -- 10. SIGTERM: drain, exit 0, nothing left --
    def sigterm(self, srv, inflight):
        """inflight: (target, seconds) of executions running when SIGTERM
        comes; each must be answered, the last one too (the drain ends
        when it is done)."""
        t, pid, name = self.t, srv.pid, srv.name
        self.note_cgroups(cgroup_dirs(pids=[pid]), "%s's sandboxes" % name)
        bgs = [Background(self.post_exec, tgt, self.execute_body(
            "report", REPORT_OUT % "d\n" + "import time\ntime.sleep(%s)\nprint('finished')\n" % sec), 60)
            for tgt, sec in inflight]
        t.check(self.wait_running(srv, len(bgs)), "%s: %d execution(s) run when SIGTERM comes" % (name, len(bgs)))
        kids = descendants(pid)
        srv.signal(signal.SIGTERM)
        for i, bg in enumerate(bgs):
            try:
                r = bg.result(30)
            except (OSError, http.client.HTTPException) as e:
                r = e
            t.check(isinstance(r, Resp) and r.status == 200 and r.json()["status"] == "succeeded" and
                    r.json()["stdout"] == "finished\n",
                    "%s: running execution %d finishes within --grace and its answer is sent" % (name, i + 1), r)
        rc = srv.wait(30)
        t.check(rc == 0, "%s exits 0 after the drain (exit %r)" % (name, rc), srv.log()[-1500:])
        if rc is None:
            srv.kill()
        t.check(wait_until(lambda: not [p for p in kids if alive(p)], 5),
                "%s: no process is left (%d were running)" % (name, len(kids)),
                [(p, proc_status(p)) for p in kids if alive(p)])
        left = cgroup_dirs(pids=[pid])
        t.check(not left, "%s: no cgroup cordon-%d-* is left" % (name, pid), left)
        t.check(not os.path.exists(srv.sock), "%s: the Unix socket is removed" % name, srv.sock)
        t.check(os.listdir(srv.work_dir) == [], "%s: the work directory is emptied" % name, os.listdir(srv.work_dir))
        t.check("stopped" in srv.log().splitlines()[-1], "%s: the log ends with 'stopped'" % name,
                srv.log()[-500:])

    def note_cgroups(self, cgs, what):
        if cgs:
            self.t.ok("%s have cgroups to check (%d)" % (what, len(cgs)))
        elif self.mode == "root":
            self.t.fail("%s have cgroups to check" % what, "none named cordon-<pid>-* under /sys/fs/cgroup")
        else:
            self.t.skip("cgroups of %s" % what, "rootless: this host delegates no cgroup, so there is none")

    # -- 11. the server SIGKILLed mid-execution; a restart sweeps --
    def server_killed(self):
        t, env = self.t, self.env
        work = os.path.join(env.dir, "work2")
        sock = os.path.join(env.dir, "s2.sock")
        srv = Server(env, "server-2", env.policies2, work, sock, extra=["--pool", "1"])
        srv.start()
        try:
            t.check(srv.wait_ready(30), "server 2 (report only) is ready")
            bg = Background(self.post_exec, srv.unix, self.execute_body("report", sleeper(25, fork=True)), 90)
            t.check(self.wait_running(srv, 1), "a long execution (with a forked child) runs")
            # Until the forked child exists: it must die too.
            wait_until(lambda: len(descendants(srv.pid)) >= 3, 10)
            kids = descendants(srv.pid)
            cgs = cgroup_dirs(pids=[srv.pid])
            runs = sorted(os.listdir(work))
            old = srv.pid
            t.check(len(kids) >= 3 and runs, "%d processes below the server, run directories %s" % (len(kids), runs),
                    kids)
            self.note_cgroups(cgs, "the killed server's sandboxes")
            srv.signal(signal.SIGKILL)
            srv.wait(10)
            t.check(wait_until(lambda: not [p for p in kids if alive(p)], 5),
                    "SIGKILL of the server mid-execution: no executor or child survives (pdeathsig, pid namespace)",
                    [(p, proc_status(p)) for p in kids if alive(p)])
            try:
                bg.result(10)
                t.fail("the client of the killed server sees the connection end", "an answer came")
            except (OSError, http.client.HTTPException) as e:
                t.ok("the client of the killed server sees the connection end (%s)" % type(e).__name__)
            t.check(os.path.exists(sock), "the killed server's socket file is still there (the restart must cope)")
            # The restart: same work directory, same socket path.
            srv.start()
            t.check(srv.wait_ready(30), "the restarted server is ready on the same socket and work directory")
            left = [d for d in runs if os.path.exists(os.path.join(work, d))]
            t.check(not left, "the restart swept the killed server's run directories", left)
            if cgs:
                left = wait_until(lambda: not cgroup_dirs(pids=[old]), 5) or cgroup_dirs(pids=[old])
                t.check(left is True, "the restart swept the killed server's cgroups (cordon-%d-*)" % old, left)
            r = self.report_exec(srv.unix)
            t.check(r.status == 200 and r.json()["status"] == "succeeded", "the restarted server runs executions", r)
            srv.name = "server-2 restarted"
            self.sigterm(srv, [(srv.unix, 1)])
        finally:
            srv.kill()


def main(argv):
    mode = argv[1] if len(argv) > 1 else ("root" if os.geteuid() == 0 else "rootless")
    if not BUILD or not SRC:
        print("usage: BUILD=DIR SRC=DIR %s root|rootless" % argv[0], file=sys.stderr)
        return 2
    t = Suite(mode)
    if not os.access(CURL, os.X_OK):
        t.fail("curl", "%s is missing (scripts/install-deps installs it)" % CURL)
        return 1
    t0 = time.monotonic()
    env = Env(mode)
    srv = None
    try:
        env.build()
        api = load_openapi()
        cc = load_client()
        port = free_port()
        srv = Server(env, "server-1", env.policies, os.path.join(env.dir, "work"), os.path.join(env.dir, "s.sock"),
                     port, ["--pool", "1", "--max-concurrency", str(MAX_CONCURRENCY), "--queue", str(QUEUE),
                            "--max-body", str(MAX_BODY), "--body-timeout", str(BODY_TIMEOUT_S),
                            "--inline-max", str(INLINE_MAX), "--retain-seconds", str(RETAIN_S), "--grace", "10"])
        srv.start()
        st = os.stat(env.tokens)
        t.check(st.st_mode & 0o777 == 0o600, "the tokens file is mode 0600")
        t.check(srv.wait_ready(60), "server 1 is ready: every pool warm", srv.log())
        x = Tests(t, env, api, cc)
        t.section("tokens file mode", x.tokens_mode)
        t.section("endpoints through curl", x.endpoints_curl, srv)
        t.section("endpoints through the Python client", x.endpoints_client, srv)
        t.section("bad HTTP input", x.bad_input, srv)
        t.section("admission", x.admission, srv)
        t.section("cancel", x.cancel, srv)
        t.section("artifacts", x.artifacts, srv)
        t.section("displays", x.displays, srv)
        t.section("single use", x.single_use, srv)
        t.section("an idle sandbox killed", x.idle_killed, srv)
        t.section("reload", x.reload, srv)
        t.section("SIGTERM", x.sigterm, srv, [(srv.unix, 1.5), (srv.tcp_a, 2)])
        t.section("the server killed", x.server_killed)
    except Exception:  # noqa: BLE001 - a setup failure ends the run as one FAIL
        t.fail("setup", traceback.format_exc())
    finally:
        finish(t, env, srv)
    return summary(t, "serve", t0)


def finish(t, env, srv):
    """The end of a suite's run: the server's log shown on a failure, the
    server killed, every log searched for a sanitizer's report, the
    environment removed."""
    if srv is not None:
        if t.failed and srv.proc is not None:
            print("---- %s log (last lines) ----\n" % srv.name + "\n".join(srv.log().splitlines()[-30:]))
        srv.kill()
    # A sanitizer build (make SAN=1) reports on stderr, which is the log.
    for name in sorted(os.listdir(env.dir)):
        if name.endswith(".log"):
            with open(os.path.join(env.dir, name), errors="replace") as f:
                bad = [ln for ln in f if any(x in ln for x in SANITIZER_SIGNS)]
            t.check(not bad, "%s: no sanitizer report" % name, "".join(bad[:20]))
    env.cleanup()


def summary(t, label, t0):
    print("%s[%s]: %d passed, %d failed, %d skipped (%.0f s)" % (label, t.mode, t.passed, t.failed, t.skipped,
                                                                  time.monotonic() - t0))
    return 1 if t.failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
