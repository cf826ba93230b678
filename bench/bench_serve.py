# SPDX-License-Identifier: Apache-2.0
"""bench_serve.py - `cordon serve` beside cold starts (make bench, issue 13).

Every figure is a ratio to peers measured in the same run, on the same
machine, at the same time: latency rows are interleaved round by round
(bench_run.py's Peer, interleave and table), throughput cells run one peer
after another at each concurrency, in a shuffled order.  Medians and p90s.

  (1) `pass` through serve over its Unix socket, end to end (HTTP request
      sent -> result JSON received and parsed), beside bare cold
      `python3 -I -c pass`, a cold `cordon run` of the same policy and
      bubblewrap.
  (2) the cafe program (examples/cafe/user_code.py, receipts.json, agent
      analyst, scripts/demo's context, its real calc.check call) through
      serve with numpy preloaded, beside the same program run bare and cold
      by /usr/bin/python3 whose tool call runs the same tool executable
      directly (no sandbox, no supervisor, no audit); and the same pair
      without the tool (serve with no agent, where the supervisor refuses
      the call; bare with cordon_tools and no socket, which refuses it).
  (3) executions per second at concurrency 1, 4 and 16 (threads, each with
      its own keep-alive connection, a fixed window after a ramp-up, the
      median of BENCH_SERVE_REPEATS windows): serve, the same loop of cold
      `cordon run`, of bubblewrap, of bare python.
  (4) pool refill (sandboxes/s while a fresh server fills its pools) and
      idle memory per warm sandbox (PSS and private memory of the sandbox
      processes, and their memory cgroups' usage), without and with numpy;
      the PSS of each beside idle bare pythons that imported the same.
  (5) the cold path (`cordon run` of `pass` beside bare python and
      bubblewrap) is bench_run.py's first table: not measured again here.
  (6) code-interpreter sessions (examples/notebook's policy, numpy
      preloaded): a cell of one long-lived session (`pass`, and `n += 1`
      against the session's globals) beside a fresh execution of `pass`
      through the same server and bare cold python: what a cell saves over
      an execution (no sandbox taken, no bridge started, no interpreter
      ended and reaped).

HTTP is http.client over AF_UNIX (stdlib only): the server as a client
sees it, the client's own cost included, as fork and exec are on the cold
side.  The policies are examples/cafe compiled and signed here, and
"bench" (bench_run.bench_policy: the cafe policy without its preload, its
required output or its agents), so that `pass` succeeds and its sandbox
imports nothing ahead.

Usage: bench_serve.py BUILD_DIR SRC_DIR   (as root: the cafe tools must be
installed by scripts/install-examples for (2))
Environment: BENCH_SERVE_RUNS (40) rounds for (1) and (6), BENCH_SERVE_CAFE_RUNS (20)
for (2), BENCH_SERVE_SECONDS (1.5) per throughput window and
BENCH_SERVE_REPEATS (5) windows per cell, BENCH_SERVE_POOL (8) warm sandboxes
per (app, agent); BENCH_SERVE=0 skips it all.  BENCH_QUICK=1: 10, 5, 1 s, 2.
Figures go to BENCH_FIGURES (bench/figures.py).
"""
import http.client
import json
import os
import random
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import figures  # noqa: E402
from bench_run import (LOADER, PY, W, Peer, bench_files, bwrap_argv, cordon_ok,  # noqa: E402
                       emit, interleave, table)

RUNS = figures.runs("BENCH_SERVE_RUNS", 40, 10)
CAFE_RUNS = figures.runs("BENCH_SERVE_CAFE_RUNS", 20, 5)
SECONDS = float(os.environ.get("BENCH_SERVE_SECONDS", "1" if figures.QUICK else "1.5"))
REPEATS = figures.runs("BENCH_SERVE_REPEATS", 5, 2)
POOL = int(os.environ.get("BENCH_SERVE_POOL", "8"))
RAMP = 0.5  # seconds of each throughput cell not counted: the pool's initial stock and the threads' start
CONCURRENCY = (1, 4, 16)
MAX_CONCURRENCY = 16  # the server admits as many as the largest client count: nothing queues in (3)
# scripts/demo's context: the analyst may call calc.check.
CONTEXT = {"tenant": "demo", "project": "cafe", "user": "ana", "session": "bench-1", "roles": ["analyst"],
           "tools": ["calc.check", "calc.solve"], "accounting": {"costCentre": "demo"}}
CALC_CHECK = "/usr/local/libexec/cordon/examples/cafe/calc-check"
MIB = 1024 * 1024


class UnixHTTPConnection(http.client.HTTPConnection):
    """http.client over a Unix stream socket: HTTP/1.1, kept alive between
    requests (http.client reconnects by itself only when the server said
    it would close)."""

    def __init__(self, path, timeout=120):
        super().__init__("localhost", timeout=timeout)
        self.unix_path = path

    def connect(self):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.settimeout(self.timeout)
            s.connect(self.unix_path)
        except OSError:
            s.close()
            raise
        self.sock = s


class ServeError(Exception):
    pass


class Server:
    """One `cordon serve` of this run: its own socket, work directory (on
    tmpfs, where /run/cordon/serve normally is), state directory and log."""

    def __init__(self, cordon, tmp, name, policies, key, pool, extra=()):
        self.tmp, self.name = tmp, name
        self.sock = os.path.join(tmp, name + ".sock")
        shm = "/dev/shm" if os.access("/dev/shm", os.W_OK) else tmp
        self.work_parent = tempfile.mkdtemp(prefix="cordon-bench-serve.", dir=shm)
        self.log_path = os.path.join(tmp, name + ".log")
        self.argv = [cordon, "serve", "--policies", policies, "--trusted-key", key, "--socket", self.sock,
                     "--pool", str(pool), "--work-dir", os.path.join(self.work_parent, "work"),
                     "--state-dir", os.path.join(tmp, name + "-state")] + list(extra)
        self.proc = None
        self.conn = None

    def start(self):
        self.log = open(self.log_path, "wb")
        self.t_start = time.perf_counter()
        self.proc = subprocess.Popen(self.argv, stdin=subprocess.DEVNULL, stdout=self.log, stderr=self.log)

    def log_tail(self):
        try:
            with open(self.log_path, "rb") as f:
                lines = f.read().decode(errors="replace").strip().splitlines()
        except OSError:
            return "no log"
        return " | ".join(lines[-3:]) if lines else "no log"

    def connect(self):
        return UnixHTTPConnection(self.sock)

    def request(self, method, path, body=None, conn=None):
        """(status, body bytes) on conn (the server's own by default).  A
        GET on a kept-alive connection the server has closed meanwhile is
        sent once more on a new one; a POST is never repeated."""
        if conn is None:
            if self.conn is None:
                self.conn = self.connect()
            conn = self.conn
        hdr = {"Content-Type": "application/json"} if body is not None else {}
        for again in (method == "GET", False):
            try:
                conn.request(method, path, body=body, headers=hdr)
                r = conn.getresponse()
                return r.status, r.read()
            except (ConnectionError, http.client.RemoteDisconnected):
                conn.close()  # the next request on it connects again
                if not again:
                    raise
            except (OSError, http.client.HTTPException):
                conn.close()
                raise

    def get_json(self, path):
        st, b = self.request("GET", path)
        return st, json.loads(b)

    def wait_up(self, timeout=60):
        """Until the socket answers /v1/health; ServeError if the server
        ended or never answered."""
        end = time.perf_counter() + timeout
        while time.perf_counter() < end:
            if self.proc.poll() is not None:
                raise ServeError("cordon serve exited %d: %s" % (self.proc.returncode, self.log_tail()))
            if os.path.exists(self.sock):
                try:
                    if self.request("GET", "/v1/health")[0] == 200:
                        return
                except (OSError, http.client.HTTPException):
                    pass
            time.sleep(0.005)
        raise ServeError("no answer on %s within %d s: %s" % (self.sock, timeout, self.log_tail()))

    def wait_full(self, timeout=120, poll=0.002):
        """Until every pool holds its target (untimed; polls /v1/ready)."""
        end = time.perf_counter() + timeout
        while time.perf_counter() < end:
            st, body = self.get_json("/v1/ready")
            if st == 200 and all(p["warm"] >= p["target"] for p in body["pools"]):
                return body
            if self.proc.poll() is not None:
                raise ServeError("cordon serve exited %d: %s" % (self.proc.returncode, self.log_tail()))
            time.sleep(poll)
        raise ServeError("pools not full within %d s: %s" % (timeout, json.dumps(body)))

    def metrics(self):
        """The /metrics exposition as {"name{labels}": value}."""
        st, b = self.request("GET", "/metrics")
        if st != 200:
            raise ServeError("/metrics answered %d" % st)
        m = {}
        for ln in b.decode().splitlines():
            if ln and not ln.startswith("#"):
                k, _, v = ln.rpartition(" ")
                m[k] = float(v)
        return m

    def stop(self):
        if self.conn is not None:
            self.conn.close()
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=40)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc is not None:
            self.log.close()
        shutil.rmtree(self.work_parent, ignore_errors=True)


def execution_body(app, code, agent=None, inputs=(), context=None):
    return json.dumps({"app": app, "agent": agent, "code": code, "context": context,
                       "inputs": [{"name": n, "content": c} for n, c in inputs]}).encode()


class ServePeer(Peer):
    """One execution through serve per round, timed from the request's
    first byte sent to the result JSON parsed.  After it, untimed, the
    round waits for the pool to be full again: each request meets a warm
    server the way a model's calls, seconds apart, do, and the refill does
    not run under the next row's timing."""

    def __init__(self, name, server, body, want):
        super().__init__(name, None)
        self.server, self.body, self.want = server, body, want
        self.conn = server.connect()
        self.dur = []  # the result's durationMs: the program's run as the sandbox timed it

    def call(self):
        st, b = self.server.request("POST", "/v1/executions", self.body, conn=self.conn)
        if st != 200:
            raise ServeError("POST /v1/executions answered %d: %s" % (st, b[:300].decode(errors="replace")))
        return json.loads(b)

    def probe(self):
        try:
            r = self.call()
            self.server.wait_full()
        except (OSError, http.client.HTTPException, ServeError, ValueError) as e:
            return str(e)
        return self.want(r)

    def once(self, keep=True):
        t0 = time.perf_counter_ns()
        r = self.call()
        dt = (time.perf_counter_ns() - t0) / 1e6
        self.server.wait_full()
        if keep:
            self.times.append(dt)
            self.dur.append(r.get("durationMs", 0))
            if self.want(r) is not None:
                self.bad += 1


def serve_ok(r):
    """`pass` under the bench policy: succeeded, nothing else."""
    return None if r.get("status") == "succeeded" else "status %s: %s" % (r.get("status"), r.get("error"))


def cafe_ok(tool):
    def ok(r):
        if r.get("status") != "succeeded":
            return "status %s: %s" % (r.get("status"), json.dumps(r.get("error"))[:200])
        calls = r.get("toolCalls") or []
        if tool:
            if not (calls and calls[0].get("tool") == "calc.check" and calls[0].get("decision") == "allowed"
                    and (r.get("result") or {}).get("check", {}).get("ok") is True):
                return "calc.check was not allowed and answered ok: %s" % json.dumps(calls)[:200]
        elif calls and calls[0].get("decision") == "allowed":
            return "a tool call was allowed with no agent"
        return None
    return ok


def goal(name, ratio, limit, below=True):
    met = ratio <= limit if below else ratio >= limit
    return "  goal %s %s %.2fx: %s (%.3fx)" % (name, "<=" if below else ">=", limit, "met" if met else "NOT met",
                                               ratio)


def server_mean(server, before):
    """The mean of cordon_execution_seconds (request received -> result
    written, server side) since the metrics before."""
    m = server.metrics()
    out = []
    for w in ("true", "false"):
        s, c = ('cordon_execution_seconds_sum{warm="%s"}' % w, 'cordon_execution_seconds_count{warm="%s"}' % w)
        n = m.get(c, 0) - before.get(c, 0)
        if n:
            out.append("%s mean %.2f ms (%d)" % ("warm" if w == "true" else "cold",
                                                 (m.get(s, 0) - before.get(s, 0)) / n * 1e3, n))
    return "cordon_execution_seconds " + (", ".join(out) if out else "none")


def warm_cold(server, before):
    """Executions of the rows just timed that found no warm sandbox."""
    m = server.metrics()
    k = 'cordon_execution_seconds_count{warm="false"}'
    return int(m.get(k, 0) - before.get(k, 0))


# ---- (1) pass ----------------------------------------------------------------

def bench_pass(server, cordon, blob, code_file, ws, skipped):
    bare = Peer("bare python3 -I -c pass (cold)", [PY, "-I", "-c", "pass"])
    srv = ServePeer("cordon serve: pass over the Unix socket, end to end", server,
                    execution_body("bench", "pass\n"), serve_ok)
    crd = Peer("cordon run (bench policy, pass), cold", [cordon, "run", "--policy", blob, "--code", code_file],
               ok=cordon_ok(True))
    peers = [bare, srv, crd]
    for p in peers:
        why = p.probe()
        if why:
            if p is srv:
                print("\n(1) pass through serve: cannot run (%s), skipped" % why)
                return None
            skipped.append((p.name, why))
    peers = [p for p in peers if p.rc is not None or p is srv]
    if bare not in peers:
        print("\n(1) pass through serve: bare python cannot run, skipped")
        return None
    if shutil.which("bwrap"):
        bw = Peer("bubblewrap (ns, ro binds, uid 1001, no caps), cold", bwrap_argv(ws, [], ["-c", "pass"]))
        why = bw.probe()
        (skipped.append(("bubblewrap", why)) if why else peers.append(bw))
    else:
        skipped.append(("bubblewrap", "bwrap not installed (bench_run.sh installs it as root)"))
    before = server.metrics()
    interleave(peers, RUNS)
    table("(1) pass through cordon serve (pool warm before each request), beside cold starts", peers, bare,
          RUNS)
    cold = warm_cold(server, before)
    ratio = statistics.median(srv.times) / statistics.median(bare.times)
    print("  serve: the HTTP request (keep-alive connection) and the parsed result JSON; bare: fork, exec and "
          "python's start and exit")
    print("  serve's own view: %s; the program's run (durationMs), median %.1f ms"
          % (server_mean(server, before), statistics.median(srv.dur)))
    if cold:
        print("  note: %d serve executions found no warm sandbox and prepared one on the request's path" % cold)
    print(goal("serve pass p50 vs bare cold python", ratio, 0.15))
    emit("serve.pass.vs_bare", srv, bare, "bare python3 -I -c pass, cold")
    emit("serve.pass.vs_cold_run", srv, crd if crd in peers else None, "cordon run, cold")
    emit("serve.pass.vs_bubblewrap", srv, peers[-1] if peers[-1].name.startswith("bubblewrap") else None,
         "bubblewrap, cold")
    return ratio


# ---- (2) the cafe program ----------------------------------------------------

# The bare side's cordon_tools when it makes the call: the same tool
# executable the supervisor would run, its params as JSON on stdin and its
# answer as JSON on stdout (docs/tools.md), spawned directly.  posix_spawn,
# not subprocess: numpy does not import subprocess, and the shim should not
# add an import the sandboxed side does not pay.
TOOL_SHIM = '''\
import json
import os


class ToolError(Exception):
    def __init__(self, code, message, check=None):
        super().__init__(message)
        self.code, self.check, self.message = code, check, message


TOOLS = {"calc.check": [%r]}


def tool_call(tool, params, message_id=None, timeout=None):
    argv = TOOLS[tool]
    r0, w0 = os.pipe()
    r1, w1 = os.pipe()
    pid = os.posix_spawn(argv[0], argv, {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"},
                         file_actions=[(os.POSIX_SPAWN_DUP2, r0, 0), (os.POSIX_SPAWN_DUP2, w1, 1)])
    os.close(r0)
    os.close(w1)
    with os.fdopen(w0, "wb") as f:
        f.write(json.dumps(params).encode())
    with os.fdopen(r1, "rb") as f:
        out = f.read()
    _, status = os.waitpid(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise ToolError("tool_failed", out.decode(errors="replace"))
    return json.loads(out)
''' % CALC_CHECK


def bare_cafe_dir(tmp, name, user_code, inputs, tools_module):
    """A scratch copy of the program with its /workspace paths pointed
    there (as bench_run.py's cafe_bench does), and the cordon_tools given."""
    d = os.path.join(tmp, name)
    for sub in ("work", "out"):
        os.makedirs(os.path.join(d, sub))
    for i in inputs:
        shutil.copy(i, os.path.join(d, "work"))
    with open(os.path.join(d, "work", "cordon_tools.py"), "w") as f:
        f.write(tools_module)
    with open(user_code) as f:
        text = f.read().replace("/workspace/", d + "/")
    with open(os.path.join(d, "work", "user_code.py"), "w") as f:
        f.write(text)
    return os.path.join(d, "work")


def bench_cafe(server, src, tmp):
    cafe = os.path.join(src, "examples", "cafe")
    user_code = os.path.join(cafe, "user_code.py")
    receipts = os.path.join(cafe, "receipts.json")
    with open(user_code) as f:
        code = f.read()
    with open(receipts) as f:
        rtext = f.read()
    with open(os.path.join(src, "runtime", "client", "cordon_tools.py")) as f:
        client = f.read()
    # The policy's environment, so BLAS starts the same single thread.
    env = dict(os.environ, LANG="C.UTF-8", OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    peers, pairs = [], []
    if os.access(CALC_CHECK, os.X_OK):
        srv_t = ServePeer("serve, agent analyst: numpy preloaded, calc.check run", server,
                          execution_body("cafe", code, "analyst", [("receipts.json", rtext)], CONTEXT),
                          cafe_ok(True))
        bare_t = Peer("bare python3 -I user_code.py, calc.check spawned directly",
                      [PY, "-I", "-c", LOADER], env=env,
                      cwd=bare_cafe_dir(tmp, "cafe-tool", user_code, [receipts], TOOL_SHIM),
                      ok=lambda rc, out, err: rc == 0 and b"calc.check: {'ok': True" in out)
        pairs.append((srv_t, bare_t))
    else:
        print("\n(2) cafe program with its tool call: %s is not installed (scripts/install-examples as root), "
              "that pair is skipped" % CALC_CHECK)
        figures.note("bench_serve: serve.cafe.tool skipped: %s is not installed (scripts/install-examples)"
                     % CALC_CHECK)
    srv_n = ServePeer("serve, no agent: numpy preloaded, the call refused", server,
                      execution_body("cafe", code, None, [("receipts.json", rtext)]), cafe_ok(False))
    bare_n = Peer("bare python3 -I user_code.py, the call refused (no socket)", [PY, "-I", "-c", LOADER],
                  env=env, cwd=bare_cafe_dir(tmp, "cafe-notool", user_code, [receipts], client))
    pairs.append((srv_n, bare_n))
    for pair in pairs:
        whys = [p.probe() for p in pair]
        if any(whys):
            print("\n(2) cafe program: %s cannot run (%s), skipped" % (pair[0].name, "; ".join(filter(None, whys))))
            continue
        peers += pair
    if not peers:
        return []
    before = server.metrics()
    interleave(peers, CAFE_RUNS)
    base = peers[1]
    table("(2) the cafe program (examples/cafe/user_code.py, receipts.json) through serve, beside bare cold "
          "python", peers, base, CAFE_RUNS)
    print("  the x-bare column is against the first bare row; each serve row's goal is against its own pair:")
    cold = warm_cold(server, before)
    out = []
    for srv, bare in zip(peers[0::2], peers[1::2]):
        ratio = statistics.median(srv.times) / statistics.median(bare.times)
        out.append(ratio)
        emit("serve.cafe.tool" if "calc.check run" in srv.name else "serve.cafe.no_agent", srv, bare,
             bare.name.replace("python3 -I user_code.py, ", "python3, cold, "))
        print(goal("%s vs %s" % (srv.name.split(":")[0], "its bare pair"), ratio, 0.10)
              + "; the program's run in the sandbox (durationMs) median %.1f ms" % statistics.median(srv.dur))
    print("  serve rows: HTTP request to result JSON; the program, its input written into the workspace, "
          "numpy already imported;\n  with an agent the supervisor checks and audits calc.check and runs it "
          "(a python3 process on the trusted side).\n  bare rows: fork, exec, python start, import numpy, the "
          "solve, the files written; with the tool, the same calc-check\n  executable spawned with the params "
          "on stdin, unchecked and unaudited; without it, cordon_tools finds no socket")
    if cold:
        print("  note: %d serve executions found no warm sandbox" % cold)
    return out


# ---- (3) throughput ----------------------------------------------------------

def loop_serve(server, body, want):
    conn = server.connect()

    def one():
        st, b = server.request("POST", "/v1/executions", body, conn=conn)
        if st != 200:
            return "HTTP %d %s" % (st, b[:120].decode(errors="replace"))
        return want(json.loads(b))
    return one, conn.close


def loop_argv(argv, ok_rc=0):
    def one():
        rc = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL).returncode
        return None if rc == ok_rc else "exit %d" % rc
    return one, None


def sustain(make_one, n, seconds):
    """n threads each running one() (None when it went well, else why)
    back to back for RAMP + seconds; completions that end inside the window
    count.  Returns (per s, [why of each failure])."""
    start = threading.Barrier(n + 1)
    t0 = [0.0]
    done = [[] for _ in range(n)]
    errs = [[] for _ in range(n)]

    def worker(i):
        one, close = make_one()
        try:
            start.wait()
            end = t0[0] + RAMP + seconds
            while True:
                try:
                    why = one()
                except (OSError, http.client.HTTPException, ValueError) as e:
                    why = "%s: %s" % (type(e).__name__, e)
                t = time.perf_counter()
                if why is None:
                    done[i].append(t)
                else:
                    errs[i].append(why)
                if t >= end:
                    break
        finally:
            if close:
                close()
    ths = [threading.Thread(target=worker, args=(i,)) for i in range(n)]
    for t in ths:
        t.start()
    t0[0] = time.perf_counter()
    start.wait()
    for t in ths:
        t.join()
    lo, hi = t0[0] + RAMP, t0[0] + RAMP + seconds
    return sum(1 for d in done for t in d if lo <= t < hi) / seconds, [w for e in errs for w in e]


def bench_throughput(server, cordon, blob, code_file, ws):
    loops = [("cordon serve (warm pool, keep-alive)", lambda: loop_serve(server, execution_body("bench", "pass\n"),
                                                                         serve_ok)),
             ("cordon run (bench policy), cold", lambda: loop_argv([cordon, "run", "--policy", blob, "--code",
                                                                   code_file])),
             ("bare python3 -I -c pass, cold", lambda: loop_argv([PY, "-I", "-c", "pass"]))]
    if shutil.which("bwrap") and subprocess.run(bwrap_argv(ws, [], ["-c", "pass"]),
                                                capture_output=True).returncode == 0:
        loops.append(("bubblewrap, cold", lambda: loop_argv(bwrap_argv(ws, [], ["-c", "pass"]))))
    rng = random.Random(2013)
    runs = {}  # (name, n): per-window rates
    bad = {}
    created = {}
    # Repeats outermost, each cell's windows spread over the whole section.
    for _ in range(REPEATS):
        for n in CONCURRENCY:
            order = loops[:]
            rng.shuffle(order)
            for name, mk in order:
                server.wait_full()
                m0 = server.metrics()
                r, whys = sustain(mk, n, SECONDS)
                runs.setdefault((name, n), []).append(r)
                bad.setdefault((name, n), []).extend(whys)
                if name.startswith("cordon serve"):
                    m1 = server.metrics()
                    c0 = created.get(n, (0, 0))
                    created[n] = (c0[0] + m1.get("cordon_sandboxes_created_total", 0)
                                  - m0.get("cordon_sandboxes_created_total", 0),
                                  c0[1] + m1.get('cordon_execution_seconds_count{warm="false"}', 0)
                                  - m0.get('cordon_execution_seconds_count{warm="false"}', 0))
    rate = {k: statistics.median(v) for k, v in runs.items()}
    print()
    print("(3) sustained executions per second of `pass`, medians of %d windows of %g s after %g s ramp-up, threads "
          "each with its own loop (serve: --pool %d --max-concurrency %d)"
          % (REPEATS, SECONDS, RAMP, POOL, MAX_CONCURRENCY))
    print("  %-*s %s" % (W, "peer", " ".join("%12s" % ("conc %d /s" % n) for n in CONCURRENCY)))
    for name, _ in loops:
        cells = []
        for n in CONCURRENCY:
            c = "%12.1f" % rate[name, n]
            if bad[name, n]:
                c += " (%d failed)" % len(bad[name, n])
            cells.append(c)
        print("  %-*s %s" % (W, name, " ".join(cells)))
    srv_name = loops[0][0]
    for n in CONCURRENCY:
        for key, other in (("cold_run", loops[1][0]), ("bare", loops[2][0])):
            name = "serve.rate.c%d.vs_%s" % (n, key)
            if statistics.median(runs[other, n]) > 0:
                figures.emit(name, "/s", runs[srv_name, n], other.split(" (")[0], runs[other, n], better="higher")
            else:
                figures.note("%s not recorded: %s completed nothing in most windows" % (name, other))
    srv, crd = loops[0][0], loops[1][0]
    for other in loops[1:]:
        print("  %-*s %s" % (W, "serve / " + other[0], " ".join(
            "%11.2fx" % (rate[srv, n] / rate[other[0], n]) if rate[other[0], n] else "%12s" % "-"
            for n in CONCURRENCY)))
    for n in CONCURRENCY:
        if n in created:
            print("  serve at %d: the pool's workers prepared %d sandboxes during the cell's windows; %d executions "
                  "found the pool empty and prepared their own" % (n, created[n][0], created[n][1]))
    for (name, n), whys in sorted(bad.items()):
        if whys:
            print("  failed, %s at %d: %s" % (name, n, "; ".join(sorted(set(w[:160] for w in whys))[:3])))
    hi = CONCURRENCY[-1]
    if rate[crd, hi]:
        print(goal("serve vs cold cordon run at concurrency %d" % hi, rate[srv, hi] / rate[crd, hi], 2.0,
                   below=False))


# ---- (4) refill and memory ---------------------------------------------------

def sandbox_trees(pid):
    """The processes of each sandbox under the server pid: one list per
    child of the server (the sandbox's init), the init first."""
    kids = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d) as f:
                ppid = int(f.read().rpartition(")")[2].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        kids.setdefault(ppid, []).append(int(d))
    trees = []
    for root in kids.get(pid, []):
        out, todo = [root], [root]
        while todo:
            for c in kids.get(todo.pop(), []):
                out.append(c)
                todo.append(c)
        trees.append(out)
    return trees


def proc_memory(pid):
    """(pss, private, rss) bytes of one process, from smaps_rollup."""
    v = {}
    with open("/proc/%d/smaps_rollup" % pid) as f:
        for ln in f:
            parts = ln.split()
            if len(parts) == 3 and parts[2] == "kB":
                v[parts[0].rstrip(":")] = int(parts[1]) * 1024
    return v.get("Pss", 0), v.get("Private_Clean", 0) + v.get("Private_Dirty", 0), v.get("Rss", 0)


def cgroup_usage(pid):
    """The process's memory cgroup usage in bytes (v1 usage_in_bytes or v2
    memory.current), or None."""
    with open("/proc/%d/cgroup" % pid) as f:
        for ln in f:
            _, ctl, path = ln.rstrip("\n").split(":", 2)
            for p in (("/sys/fs/cgroup/memory" + path + "/memory.usage_in_bytes") if "memory" in ctl.split(",")
                      else None,
                      ("/sys/fs/cgroup" + path + "/memory.current") if ctl == "" else None):
                if p and os.path.exists(p):
                    with open(p) as g:
                        return int(g.read())
    return None


def fill_and_measure(server):
    """Start the server, time its pools' first fill from /metrics (polled
    every 5 ms), then weigh the idle sandboxes."""
    server.start()
    server.wait_up()
    seen = []  # (t, created)
    target = None
    while True:
        m = server.metrics()
        t = time.perf_counter()
        seen.append((t, m.get("cordon_sandboxes_created_total", 0)))
        target = sum(v for k, v in m.items() if k.startswith("cordon_pool_target{"))
        warm = sum(v for k, v in m.items() if k.startswith("cordon_pool_warm{"))
        if target and warm >= target:
            break
        if t - server.t_start > 180:
            raise ServeError("pools not full after 180 s")
        time.sleep(0.005)
    # From the first sandbox seen made, so the server's own start is not
    # counted; when (nearly) all were made before /metrics first answered,
    # from the server's exec.
    first = next((s for s in seen if s[1] > 0), seen[0])
    last = seen[-1]
    if last[1] - first[1] >= 4:
        rate = (last[1] - first[1]) / (last[0] - first[0])
    else:
        rate = last[1] / (last[0] - server.t_start)
    mean_prep = m["cordon_sandbox_prepare_seconds_sum"] / m["cordon_sandbox_prepare_seconds_count"]
    time.sleep(0.5)  # the last sandbox's interpreter settles into its wait
    # Per sandbox, all its processes (its init and the interpreter): the
    # columns are per sandbox, not per process.
    trees = sandbox_trees(server.proc.pid)
    pss = priv = rss = 0
    cg, each = [], []
    for tree in trees:
        mine = 0
        try:
            for p in tree:
                a, b, c = proc_memory(p)
                pss, priv, rss, mine = pss + a, priv + b, rss + c, mine + b
            u = cgroup_usage(tree[0])
            if u is not None:
                cg.append(u)
        except OSError:
            continue
        each.append(mine / MIB)
    return {"target": int(target), "procs": sum(len(t) for t in trees), "sandboxes": len(trees), "rate": rate,
            "fill_s": last[0] - server.t_start, "mean_prep": mean_prep, "pss": pss, "priv": priv, "rss": rss,
            "cg": cg, "private_each": each}


IDLE_PY = "import sys\n%s\nsys.stdout.write('ready\\n')\nsys.stdout.flush()\nsys.stdin.read()\n"


def idle_python_private(n, imports):
    """Private memory in MiB (what one more adds: its own pages, shared
    with no other process) of each of n bare pythons started together, idle
    after importing imports (a statement or ""), with the policy's
    environment: the peer of a warm sandbox's interpreter."""
    env = dict(os.environ, LANG="C.UTF-8", OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    procs = [subprocess.Popen([PY, "-I", "-c", IDLE_PY % imports], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              env=env) for _ in range(n)]
    try:
        for p in procs:
            if p.stdout.readline() != b"ready\n":
                return None
        return [proc_memory(p.pid)[1] / MIB for p in procs]
    finally:
        for p in procs:
            p.stdin.close()
            p.wait()
            p.stdout.close()


def memory_figure(name, r, imports):
    """Private memory of each warm sandbox's process against idle bare
    pythons that imported the same, started now beside them."""
    peer = idle_python_private(r["target"], imports)
    if len(r["private_each"]) != r["target"] or not peer:
        figures.note("%s not recorded: %d sandboxes weighed for %d warm%s" % (
            name, len(r["private_each"]), r["target"], "" if peer else ", the idle pythons did not start"))
        return
    figures.emit(name, "MiB", r["private_each"], "idle bare python3" + (", " + imports if imports else ""), peer)


def print_memory(rows):
    print()
    print("(4) pool refill and idle memory per warm sandbox (a fresh server filling --pool %d per (app, agent); "
          "refill workers: the server's own)" % POOL)
    print("  %-*s %9s %10s %9s %9s %9s %9s %9s" % (W - 12, "policy", "sandboxes", "refill /s", "prep ms", "PSS MiB",
                                                    "priv MiB", "RSS MiB", "cg MiB"))
    for name, r in rows:
        n = max(1, r["sandboxes"])
        cg = "%9.1f" % (sum(r["cg"]) / len(r["cg"]) / MIB) if r["cg"] else "%9s" % "-"
        print("  %-*s %9d %10s %9.1f %9.1f %9.1f %9.1f %s" % (
            W - 12, name, r["sandboxes"], "%.1f" % r["rate"] if r["rate"] else "-", r["mean_prep"] * 1e3,
            r["pss"] / n / MIB, r["priv"] / n / MIB, r["rss"] / n / MIB, cg))
        if r["sandboxes"] != r["target"]:
            print("    note: %d sandboxes (%d processes) under the server for %d warm" % (r["sandboxes"], r["procs"],
                                                                                     r["target"]))
    print("  refill /s: sandboxes made per second of the first fill (from cordon_sandboxes_created_total, all pools "
          "at once);\n  prep ms: the mean of cordon_sandbox_prepare_seconds; PSS, private (what one more sandbox "
          "adds) and RSS from\n  /proc/PID/smaps_rollup, summed over each sandbox's processes (its init and its "
          "interpreter); cg: each sandbox's\n  memory cgroup usage (kernel memory and page cache it was charged "
          "included)")


# ---- (6) sessions -----------------------------------------------------------------

class CellPeer(Peer):
    """One cell of one session per round, timed from the request's first
    byte sent to the result JSON parsed.  The session is made once,
    untimed; its cells run one after another as a model's do."""

    def __init__(self, name, server, sid, code, want_stdout=None):
        super().__init__(name, None)
        self.server, self.sid, self.want_stdout = server, sid, want_stdout
        self.body = json.dumps({"code": code}).encode()
        self.conn = server.connect()
        self.dur = []

    def call(self):
        st, b = self.server.request("POST", "/v1/sessions/%s/cells" % self.sid, self.body, conn=self.conn)
        if st != 200:
            raise ServeError("POST cells answered %d: %s" % (st, b[:300].decode(errors="replace")))
        return json.loads(b)

    def check(self, r):
        if r.get("status") != "succeeded" or (r.get("session") or {}).get("state") != "idle":
            return "status %s, session %s" % (r.get("status"), r.get("session"))
        if self.want_stdout is not None and not r.get("stdout", "").strip().isdigit():
            return "stdout %r" % r.get("stdout")
        return None

    def probe(self):
        try:
            return self.check(self.call())
        except (OSError, http.client.HTTPException, ServeError, ValueError) as e:
            return str(e)

    def once(self, keep=True):
        t0 = time.perf_counter_ns()
        r = self.call()
        dt = (time.perf_counter_ns() - t0) / 1e6
        if keep:
            self.times.append(dt)
            self.dur.append(r.get("durationMs", 0))
            if self.check(r) is not None:
                self.bad += 1


def notebook_policy(cordonc, src, tmp):
    """examples/notebook's policy with room for every round's cells
    (max_cells 50 there): its blob's path, or None."""
    d = os.path.join(src, "examples", "notebook")
    with open(os.path.join(d, "app.yaml")) as f:
        text = f.read().replace("max_cells: 50", "max_cells: 100000")
    y, blob = os.path.join(tmp, "notebook.yaml"), os.path.join(tmp, "notebook.cpol")
    with open(y, "w") as f:
        f.write(text)
    r = subprocess.run([cordonc, "compile", y, os.path.join(d, "tools.yaml"), "-o", blob], capture_output=True)
    return blob if r.returncode == 0 else None


def bench_sessions(server, skipped):
    st, b = server.request("POST", "/v1/sessions", json.dumps({"app": "notebook", "agent": "analyst"}).encode())
    if st != 201:
        print("\n(6) sessions: cannot create one (%d: %s), skipped" % (st, b[:200].decode(errors="replace")))
        return None
    sid = json.loads(b)["sessionId"]
    bare = Peer("bare python3 -I -c pass (cold)", [PY, "-I", "-c", "pass"])
    cell = CellPeer("cordon serve: a cell `pass` of one session", server, sid, "pass\n")
    state = CellPeer("cordon serve: a cell `n += 1; n` (the session's globals)", server, sid, "n += 1\nn\n", True)
    exe = ServePeer("cordon serve: a fresh execution of `pass` (warm pool)", server,
                    execution_body("notebook", "pass\n", agent="analyst"), serve_ok)
    server.request("POST", "/v1/sessions/%s/cells" % sid, json.dumps({"code": "n = 0\n"}).encode())
    peers = [bare, cell, state, exe]
    for p in peers:
        why = p.probe()
        if why:
            print("\n(6) sessions: %s cannot run (%s), skipped" % (p.name, why))
            skipped.append((p.name, why))
            return None
    interleave(peers, RUNS)
    table("(6) a session's cell beside a fresh execution through cordon serve (notebook policy, numpy preloaded)",
          peers, bare, RUNS)
    ratio = statistics.median(cell.times) / statistics.median(exe.times)
    print("  cell: HTTP, the cell sent on the sandbox's channel, run, its status byte, the pipes read, the result "
          "JSON;\n  execution: HTTP, a warm sandbox taken and started (bridge, workspace bound, go byte), run, the "
          "interpreter\n  ended and reaped, the result JSON (the pool refilled untimed after each)")
    print("  the program's run (durationMs), median: cell %.1f ms, execution %.1f ms"
          % (statistics.median(cell.dur), statistics.median(exe.dur)))
    print("  cell / execution p50: %.3fx; cell / bare cold python: %.3fx; stateful cell / cell: %.3fx"
          % (ratio, statistics.median(cell.times) / statistics.median(bare.times),
             statistics.median(state.times) / statistics.median(cell.times)))
    emit("serve.session.cell_vs_execution", cell, exe, "a fresh execution through serve (warm)")
    emit("serve.session.cell_vs_bare", cell, bare, "bare python3 -I -c pass, cold")
    server.request("DELETE", "/v1/sessions/%s" % sid)
    return ratio


# ---- the whole -----------------------------------------------------------------

def serve_built(cordon):
    r = subprocess.run([cordon, "--help"], capture_output=True)
    return b"serve --policies" in r.stdout + r.stderr


def main():
    if len(sys.argv) != 3:
        print("usage: bench_serve.py BUILD_DIR SRC_DIR", file=sys.stderr)
        return 2
    if os.environ.get("BENCH_SERVE", "1") == "0":
        print("\ncordon serve: BENCH_SERVE=0, skipped")
        return 0
    build, src = (os.path.abspath(a) for a in sys.argv[1:])
    cordon, cordonc = os.path.join(build, "cordon"), os.path.join(build, "cordonc")
    print()
    print("cordon serve beside cold starts (issue 13); python: %s, kernel %s, %d CPUs, load %.2f"
          % (PY, os.uname().release, os.cpu_count(), os.getloadavg()[0]))
    if not serve_built(cordon):
        print("  skipped: this cordon has no serve command (runtime/serve/engine.c not built in)")
        return 0
    tmp = tempfile.mkdtemp(prefix="cordon-bench-serve.")
    os.chmod(tmp, 0o755)  # the sandboxes (another uid) reach the bwrap workspace under it
    servers = []
    try:
        return run(build, src, cordon, cordonc, tmp, servers)
    finally:
        for s in servers:
            s.stop()
        shutil.rmtree(tmp, ignore_errors=True)


def sign_into(cordonc, blob, sec, d):
    os.makedirs(d, exist_ok=True)
    r = subprocess.run([cordonc, "sign", "-s", sec, blob], capture_output=True)
    if r.returncode != 0:
        raise ServeError("cordonc sign %s: %s" % (blob, r.stderr.decode(errors="replace")))
    shutil.copy(blob, d)


def run(build, src, cordon, cordonc, tmp, servers):
    cafe = os.path.join(src, "examples", "cafe")
    cafe_blob, blob, code_file, ws, why = bench_files(cordonc, cafe, tmp)
    if why:
        print("bench_serve: " + why, file=sys.stderr)
        return 1
    key, sec = os.path.join(tmp, "bench.pub"), os.path.join(tmp, "bench.sec")
    r = subprocess.run([cordonc, "keygen", "-p", key, "-s", sec], capture_output=True)
    if r.returncode != 0:
        print("bench_serve: cordonc keygen failed: " + r.stderr.decode(errors="replace"), file=sys.stderr)
        return 1
    sign_into(cordonc, blob, sec, os.path.join(tmp, "pol-bench"))
    sign_into(cordonc, cafe_blob, sec, os.path.join(tmp, "pol-cafe"))
    skipped = []
    print("  the bench policy: examples/cafe's without executor.preload, summary.txt not required and no agents; "
          "serve runs\n  with --pool %d per (app, agent) (cafe: analyst, cashier and none; bench: none) and its work "
          "directory on tmpfs" % POOL)

    mem = []
    a = Server(cordon, tmp, "bench", os.path.join(tmp, "pol-bench"), key, POOL,
               ["--max-concurrency", str(MAX_CONCURRENCY)])
    servers.append(a)
    try:
        mem.append(("bench (no preload)", fill_and_measure(a)))
        memory_figure("serve.memory.idle", mem[-1][1], "")
    except ServeError as e:
        print("  cordon serve of the bench policy cannot start: %s; serve figures skipped" % e)
        return 1
    bench_pass(a, cordon, blob, code_file, ws, skipped)
    bench_throughput(a, cordon, blob, code_file, ws)
    a.stop()

    b = Server(cordon, tmp, "cafe", os.path.join(tmp, "pol-cafe"), key, POOL)
    servers.append(b)
    try:
        mem.append(("cafe (preload: [numpy])", fill_and_measure(b)))
        memory_figure("serve.memory.idle_numpy", mem[-1][1], "import numpy")
        bench_cafe(b, src, tmp)
    except ServeError as e:
        print("  cordon serve of the cafe policy: %s; its figures skipped" % e)
    b.stop()

    nb = notebook_policy(cordonc, src, tmp)
    if nb is None:
        print("  the notebook policy does not compile; (6) skipped")
    else:
        sign_into(cordonc, nb, sec, os.path.join(tmp, "pol-notebook"))
        c = Server(cordon, tmp, "notebook", os.path.join(tmp, "pol-notebook"), key, 2)
        servers.append(c)
        try:
            c.start()
            c.wait_up()
            c.wait_full()
            bench_sessions(c, skipped)
        except ServeError as e:
            print("  cordon serve of the notebook policy: %s; (6) skipped" % e)
    print_memory(mem)
    for name, why in skipped:
        print("  skipped %s: %s" % (name, why))
        figures.note("bench_serve: %s skipped: %s" % (name, why))
    print()
    print("(5) the cold path (`cordon run` of pass beside bare python and bubblewrap) is bench_run's "
          "\"start-up, trivial program\" table above")
    print("note: figures of one run on a shared machine; the ratios hold better than the milliseconds. "
          "Rerun when the load is low.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
