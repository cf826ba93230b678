#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""bench_fleet.py - N `cordon serve` replicas on one ledger (make bench, issue 18).

A load generator (threads, each with its own keep-alive connection, spread
round robin over the replicas) sends executions whose program makes CALLS
tool calls, each a side-effect call with a fresh message id under a daily
budget: every call is a replay record begun and finished and a budget
counter taken, on one hot budget row shared by all replicas (the worst
case: one user's budget).  The tool is /bin/cat (it answers its params),
so what is left is the sandbox, the bridge and the ledger.

Figures, each against a peer measured in the same run:
  (1) executions/s and tool calls/s of N replicas (N = 1, 2, 4; quick: 1, 2)
      sharing one private PostgreSQL (tests/lib/pgtmp, `--ledger URL`),
      against one replica on the SQLite ledger (`--state-dir`).  Without a
      PostgreSQL back end (this cordon has no --ledger, or no server is
      installed) the N replicas share one SQLite --state-dir instead, and
      the figures say so in their names.
  (2) where the ledger becomes the bottleneck: the bridge's own time per
      call (a result's toolCalls durationMs - toolMs: checks, ledger
      transactions, audit line) for the ledger tool, against the same tool
      without side effect or budget (no ledger at all), on each ledger.

All replicas run on this machine, so N replicas share its CPUs: more
replicas add ledger contention and no CPU; the figures show what the
ledger costs and where it saturates, not a fleet's scale-out.

Usage: bench_fleet.py BUILD_DIR SRC_DIR   (as root)
Environment: BENCH_FLEET_SECONDS (5; quick 3) per window, BENCH_FLEET_REPEATS
(3; quick 2) windows per cell, BENCH_FLEET_CLIENTS (8) client threads in all,
BENCH_FLEET_CALLS (10) tool calls per execution, BENCH_FLEET=0 skips it.
Figures go to BENCH_FIGURES (bench/figures.py).
"""
import itertools
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import figures  # noqa: E402
from bench_run import p90  # noqa: E402
from bench_serve import Server, ServeError, execution_body, sign_into, sustain  # noqa: E402
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "lib"))
from ledger_place import LedgerPlace  # noqa: E402

SECONDS = float(os.environ.get("BENCH_FLEET_SECONDS", "3" if figures.QUICK else "5"))
REPEATS = figures.runs("BENCH_FLEET_REPEATS", 3, 2)
CLIENTS = int(os.environ.get("BENCH_FLEET_CLIENTS", "8"))
CALLS = int(os.environ.get("BENCH_FLEET_CALLS", "10"))
REPLICAS = (1, 2) if figures.QUICK else (1, 2, 4)
POOL = 4
CTX = {"tenant": "bench", "project": "fleet", "user": "ana", "session": "s-1", "roles": ["analyst"]}
TOOLS = """version: 1
tools:
  - id: bench.ledger
    description: Answer the params; a side effect under a daily budget (two ledger records a call).
    params:
      n: { type: integer, min: 0, max: 1000000, required: true }
    side_effect: true
    timeout: 10s
    exec: [/bin/cat]
    max_calls_per_day: 100000000
  - id: bench.noop
    description: Answer the params; no side effect, no budget (no ledger).
    params:
      n: { type: integer, min: 0, max: 1000000, required: true }
    timeout: 10s
    exec: [/bin/cat]
"""
PROGRAM = """import cordon_tools
for i in range(%d):
    cordon_tools.tool_call(%r, {"n": i}%s)
"""


def policy(cordonc, src, tmp):
    """tests/fleet/app.yaml (the fleet suite's sandbox) as app fleet-bench
    with the two bench tools; the blob's path."""
    with open(os.path.join(src, "tests", "fleet", "app.yaml")) as f:
        text = f.read()
    for old, new in (("\napp: fleet\n", "\napp: fleet-bench\n"),
                     ("tools: [fleet.send, fleet.slow_send, fleet.note]", "tools: [bench.ledger, bench.noop]")):
        if text.count(old) != 1:
            raise ServeError("tests/fleet/app.yaml changed: %r is not there once; update policy()" % old)
        text = text.replace(old, new)
    desc, tools, blob = (os.path.join(tmp, n) for n in ("app.yaml", "tools.yaml", "fleet.cpol"))
    with open(desc, "w") as f:
        f.write(text)
    with open(tools, "w") as f:
        f.write(TOOLS)
    r = subprocess.run([cordonc, "compile", desc, tools, "-o", blob], capture_output=True,
                       env=dict(os.environ, CORDON_POLICY_PATH=os.path.join(src, "policies")))
    if r.returncode != 0:
        raise ServeError("cordonc compile failed: " + r.stderr.decode(errors="replace"))
    return blob


def Ledger(tmp, kind, name):
    """One ledger for a cell's replicas (tests/lib/ledger_place.py)."""
    try:
        return LedgerPlace(kind, os.path.join(tmp, name + ("-state" if kind == "sqlite" else "-pg")))
    except RuntimeError as e:
        raise ServeError(str(e))


def replicas(cordon, tmp, name, pol, key, n, ledger, servers):
    """n started servers on ledger, pools full."""
    out = []
    for i in range(n):
        s = Server(cordon, tmp, "%s-%d" % (name, i), pol, key, POOL, ["--max-concurrency", str(CLIENTS)])
        at = s.argv.index("--state-dir")      # Server names a state dir of its own: the cell's ledger instead
        s.argv[at:at + 2] = ledger.args
        servers.append(s)
        s.start()
        out.append(s)
    for s in out:
        s.wait_up()
        s.wait_full()
    return out


def bridge_ms(res, tool):
    """A result's calls of tool: the bridge's own ms each (durationMs -
    toolMs: checks, ledger, audit)."""
    return [c["durationMs"] - c["toolMs"] for c in res.get("toolCalls") or []
            if c.get("tool") == tool and c.get("decision") == "allowed" and "toolMs" in c]


def cell(servers, tool, ledgered):
    """REPEATS windows of CLIENTS threads spread over servers: (executions/s
    each window, the bridge's ms per call, the failures' reasons)."""
    seq = itertools.count()
    spread = itertools.cycle(servers)
    overhead, rates, errors = [], [], []

    def make_one():
        server = next(spread)
        conn = server.connect()

        def one():
            k = next(seq)
            # a fresh message id a call: `, message_id='b<pid>-<k>-%d' % i`
            mid = (", message_id=%r %% i" % ("b%d-%d-%%d" % (os.getpid(), k))) if ledgered else ""
            code = PROGRAM % (CALLS, tool, mid)
            st, b = server.request("POST", "/v1/executions", execution_body("fleet-bench", code, "fleet",
                                                                             context=CTX), conn=conn)
            if st != 200:
                return "HTTP %d %s" % (st, b[:120].decode(errors="replace"))
            res = json.loads(b)
            if res.get("status") != "succeeded":
                return "%s %s" % (res.get("status"), json.dumps(res.get("error"))[:160])
            overhead.extend(bridge_ms(res, tool))
            return None
        return one, conn.close
    for _ in range(REPEATS):
        rate, errs = sustain(make_one, CLIENTS, SECONDS)
        rates.append(rate)
        errors += errs
    return rates, overhead, errors


def pg_available(cordon, src):
    """Why N replicas cannot share a PostgreSQL here, or None."""
    r = subprocess.run([cordon, "serve", "--help"], capture_output=True)
    if b"--ledger" not in r.stdout + r.stderr:
        return "this cordon serve has no --ledger"
    if not any(os.access(os.path.join(d, "initdb"), os.X_OK)
               for d in (os.path.join("/usr/lib/postgresql", v, "bin") for v in
                         (os.listdir("/usr/lib/postgresql") if os.path.isdir("/usr/lib/postgresql") else []))):
        return "no PostgreSQL server installed (scripts/install-deps)"
    return None


def run(build, src, tmp, servers, ledgers):
    cordon, cordonc = os.path.join(build, "cordon"), os.path.join(build, "cordonc")
    key, sec = os.path.join(tmp, "k.pub"), os.path.join(tmp, "k.sec")
    if subprocess.run([cordonc, "keygen", "-p", key, "-s", sec], capture_output=True).returncode != 0:
        raise ServeError("cordonc keygen failed")
    pol = os.path.join(tmp, "pol")
    sign_into(cordonc, policy(cordonc, src, tmp), sec, pol)
    why_not_pg = pg_available(cordon, src)
    kind = "sqlite" if why_not_pg else "postgresql"
    if why_not_pg:
        print("  N replicas share one SQLite --state-dir: %s" % why_not_pg)
        figures.note("bench_fleet: replicas share one SQLite --state-dir, not PostgreSQL: %s" % why_not_pg)
    print("  %d clients in all, round robin over the replicas; each execution makes %d tool calls (/bin/cat), "
          "%d windows of %.1f s a cell" % (CLIENTS, CALLS, REPEATS, SECONDS))
    print("  %-44s %8s %8s %22s %6s" % ("cell", "execs/s", "calls/s", "bridge ms/call med/mean/p90", "errors"))

    def measure(label, n, lkind, tool, ledgered):
        led = Ledger(tmp, lkind, "%s-%d-%s" % (lkind, n, tool))
        ledgers.append(led)
        rs = replicas(cordon, tmp, "%s-%d-%s" % (lkind, n, tool), pol, key, n, led, servers)
        try:
            rates, ms, errs = cell(rs, tool, ledgered)
        finally:
            for s in rs:
                s.stop()
            led.close()
        spread = "%.1f / %.1f / %.1f" % (statistics.median(ms), statistics.mean(ms), p90(ms)) if ms else "none"
        print("  %-44s %8.1f %8.0f %22s %6d%s" % (label, statistics.median(rates), statistics.median(rates) * CALLS,
                                                 spread, len(errs), ("  first: " + errs[0]) if errs else ""))
        return rates, ms

    base, base_ms = measure("1 replica, SQLite, side-effect calls", 1, "sqlite", "bench.ledger", True)
    _, noop_sqlite = measure("1 replica, SQLite, calls without ledger", 1, "sqlite", "bench.noop", False)
    peer = "1 replica, SQLite ledger"
    for n in REPLICAS:
        rates, ms = measure("%d replica(s), %s, side-effect calls" % (n, kind), n, kind, "bench.ledger", True)
        if not statistics.median(base) or not statistics.median(rates):
            # a window in which no execution ended: no ratio (docs/bench.md)
            figures.note("bench_fleet: %d replica(s): a cell saw no execution end within its windows; left out" % n)
            continue
        figures.emit("fleet.executions_per_s.%s_%d" % (kind, n), "exec/s", rates, peer, base, better="higher")
        figures.emit("fleet.tool_calls_per_s.%s_%d" % (kind, n), "calls/s", [r * CALLS for r in rates], peer,
                     [r * CALLS for r in base], better="higher")
        if n == 1 and kind == "postgresql" and ms:
            _, noop_pg = measure("1 replica, postgresql, calls without ledger", 1, kind, "bench.noop", False)
            figures.emit("fleet.bridge_ms_per_call.postgresql", "ms", ms, "the same without ledger", noop_pg or ms)
    if base_ms and noop_sqlite:
        figures.emit("fleet.bridge_ms_per_call.sqlite", "ms", base_ms, "the same without ledger", noop_sqlite)


def main():
    if len(sys.argv) != 3:
        print("usage: bench_fleet.py BUILD_DIR SRC_DIR", file=sys.stderr)
        return 2
    print()
    print("cordon serve replicas on one ledger (issue 18); %d CPUs, load %.2f" % (os.cpu_count(), os.getloadavg()[0]))
    if os.environ.get("BENCH_FLEET", "1") == "0":
        print("  BENCH_FLEET=0, skipped")
        return 0
    if os.geteuid() != 0:
        print("  skipped: as root only (the tools run as leased host uids)")
        return 0
    build, src = (os.path.abspath(a) for a in sys.argv[1:])
    tmp = tempfile.mkdtemp(prefix="cordon-bench-fleet.")
    os.chmod(tmp, 0o755)     # pgtmp's server user traverses it
    servers, ledgers = [], []
    try:
        run(build, src, tmp, servers, ledgers)
    except ServeError as e:
        print("bench_fleet: %s" % e, file=sys.stderr)
        return 1
    finally:
        for s in servers:
            s.stop()
        for led in ledgers:
            led.close()
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
