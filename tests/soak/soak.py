# SPDX-License-Identifier: Apache-2.0
# soak.py - `make soak` (tests/soak/README.md): thousands of executions,
# up to SOAK_CONCURRENCY at once, through `cordon run` (as root and as the
# unprivileged cordon-test) and one long-lived `cordon serve`, then the
# invariants: nothing left behind, the server's fds and memory flat, the
# ledgers' records equal to the side effects.  Stdlib only, as root, for
# /usr/bin/python3; started by run.sh.
#
#   BUILD=DIR SRC=DIR [SOAK_SECONDS=200] [SOAK_CONCURRENCY=32] [SOAK_SEED=N]
#
# Lines: "ok|FAIL soak CHECK EVIDENCE", "note ...", then the summary.
# Exit 1 on any failed check.
import json
import os
import pwd
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
import harness  # noqa: E402  (tests/lib: processes, cgroups, host-id locks, the Unix HTTP client)

import soaklib  # noqa: E402  (this folder: the program mix, the verdicts, the ledger and process probes)

SECONDS = float(os.environ.get("SOAK_SECONDS", "200"))
CONCURRENCY = int(os.environ.get("SOAK_CONCURRENCY", "32"))
SEED = int(os.environ.get("SOAK_SEED") or random.SystemRandom().randrange(1, 2 ** 31))
BUILD, SRC = os.environ["BUILD"], os.environ["SRC"]
PY = "/usr/bin/python3"
USER = "cordon-test"
POOL = 2                # serve's --pool: warm sandboxes per (app, agent) and per app
RETAIN = 5              # serve's --retain-seconds: the work directory empties of finished runs
APPS = {"soak": "10s", "soak-tools": "120s"}    # app -> its timeout; the tool caller runs under soak-tools


class Soak:
    def __init__(self):
        self.results = []           # (ok, name): every check
        self.notes = []
        self.lock = threading.Lock()
        self.t0 = time.monotonic()
        # Under the build directory, not /tmp: a tool's executable and every
        # directory above it must be writable by root (or the caller) only
        # (common/tool_path.c), and /tmp is 1777.
        self.W = tempfile.mkdtemp(prefix="soak.", dir=BUILD)
        os.chmod(self.W, 0o755)
        self.mark = "soak-" + os.path.basename(self.W).split(".", 1)[1] + "-%d" % SEED
        self.pw = pwd.getpwnam(USER)
        self.seed, self.concurrency, self.RETAIN = SEED, CONCURRENCY, RETAIN

    def emit(self, ok, name, evidence):
        with self.lock:
            self.results.append(bool(ok))
            print("%s soak %s %s" % ("ok  " if ok else "FAIL", name, " ".join(str(evidence).split())), flush=True)

    def note(self, text):
        with self.lock:
            self.notes.append(text)

    def path(self, *parts):
        return os.path.join(self.W, *parts)

    # --- setup: binaries, tools, blobs for each ledger, the server -------------

    def mkdir(self, *parts, mode=0o755, owner=None):
        p = self.path(*parts)
        os.makedirs(p, exist_ok=True)
        os.chmod(p, mode)
        if owner:
            os.chown(p, owner.pw_uid, owner.pw_gid)
        return p

    def setup(self):
        """A copy of everything a lane reads, readable by cordon-test,
        written by root only; one state directory, TMPDIR and side-effect
        file per ledger: `root` (the root runs and the server share it, as
        a host's runs and its server would) and `rootless`."""
        bindir = self.mkdir("bin")
        for b in ("cordon", "cordonc"):
            shutil.copy(os.path.join(BUILD, b), bindir)
            os.chmod(os.path.join(bindir, b), 0o755)
        self.cordon, self.cordonc = os.path.join(bindir, "cordon"), os.path.join(bindir, "cordonc")
        tools = self.mkdir("tools")
        shutil.copy(os.path.join(HERE, "tools", "effect"), tools)
        os.chmod(os.path.join(tools, "effect"), 0o755)
        progs = self.mkdir("programs")
        for k in soaklib.KINDS:
            shutil.copy(os.path.join(HERE, "programs", k + ".py"), progs)
            os.chmod(os.path.join(progs, k + ".py"), 0o644)
        self.programs = {k: os.path.join(progs, k + ".py") for k in soaklib.KINDS}
        self.codes = {}
        for k, p in self.programs.items():
            with open(p) as f:
                self.codes[k] = f.read()
        self.mkdir("jobs")
        with open(os.path.join(HERE, "app.yaml.in")) as f:
            app_in = f.read().replace("@MARK@", self.mark)
        for app, timeout in APPS.items():
            with open(self.path(app + ".yaml"), "w") as f:
                f.write(app_in.replace("@APP@", app).replace("@TIMEOUT@", timeout))
        rl = self.mkdir("rootless", mode=0o700, owner=self.pw)
        self.ledgers = {
            "root": {"state": self.path("state-root"), "data": self.mkdir("data-root", mode=0o777),
                     "tmp": self.mkdir("tmp")},
            "rootless": {"state": os.path.join(rl, "state"), "data": rl, "tmp": rl},
        }
        for name, L in self.ledgers.items():
            L["effects"] = os.path.join(L["data"], "effects.log")
            with open(os.path.join(HERE, "tools.yaml.in")) as f:
                inv = f.read().replace("@TOOLS@", tools).replace("@DATA@", L["effects"])
            inv_path = self.path("tools-%s.yaml" % name)
            with open(inv_path, "w") as f:
                f.write(inv)
            L["blobs"] = {}
            for app in APPS:
                blob = L["blobs"][app] = self.path("%s-%s.cpol" % (app, name))
                self.tool([self.cordonc, "compile", self.path(app + ".yaml"), inv_path, "-o", blob],
                          env={"CORDON_POLICY_PATH": os.path.join(SRC, "policies")})
                os.chmod(blob, 0o644)
        self.lanes = {
            "run-root": {"ledger": "root"},
            "run-rootless": {"ledger": "rootless"},
            "serve": {"ledger": "root"},
        }

    def tool(self, cmd, env=None):
        e = {"PATH": "/usr/bin:/bin"}
        e.update(env or {})
        p = subprocess.run(cmd, capture_output=True, text=True, env=e)
        if p.returncode != 0:
            raise RuntimeError("%s failed (exit %d): %s" % (" ".join(cmd[:2]), p.returncode, p.stderr.strip()))
        return p.stdout

    def start_serve(self):
        d = self.mkdir("serve")
        pdir = self.mkdir("serve", "policies")
        pub, sec = os.path.join(d, "key.pub"), os.path.join(d, "key.sec")
        self.tool([self.cordonc, "keygen", "-p", pub, "-s", sec])
        for app, src in self.ledgers["root"]["blobs"].items():
            blob = os.path.join(pdir, app + ".cpol")
            shutil.copy(src, blob)
            self.tool([self.cordonc, "sign", "-s", sec, blob])
        self.sock = os.path.join(d, "serve.sock")
        self.serve_work = os.path.join(d, "work")
        args = [self.cordon, "serve", "--policies", pdir, "--trusted-key", pub, "--socket", self.sock,
                "--work-dir", self.serve_work, "--state-dir", self.ledgers["root"]["state"],
                "--pool", str(POOL), "--max-concurrency", str(soaklib.serve_workers(CONCURRENCY)), "--queue", "256",
                "--queue-timeout", "120", "--retain-seconds", str(RETAIN), "--grace", "10"]
        self.serve_log = os.path.join(d, "serve.log")
        with open(self.serve_log, "wb") as logf:
            self.serve = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=logf, stderr=subprocess.STDOUT,
                                          env=self.env(self.ledgers["root"]["tmp"]), start_new_session=True)
        ready = harness.wait_until(lambda: self.serve.poll() is not None or self.ready()[0], 60, 0.1)
        if self.serve.poll() is not None or not ready:
            raise RuntimeError("cordon serve did not become ready (exit %s): %s" % (self.serve.poll(),
                                                                                  self.serve_tail()))

    def env(self, tmp, rootless=False):
        """A supervisor's environment: its TMPDIR and the soak's mark (the
        sandbox's init is a fork of it, and carries it)."""
        e = {"PATH": "/usr/bin:/bin", "TMPDIR": tmp, "SOAK_MARK": self.mark}
        if rootless:
            e["HOME"] = tmp
        return e

    def serve_tail(self, n=1500):
        try:
            with open(self.serve_log, "rb") as f:
                return f.read().decode("utf-8", "replace")[-n:]
        except OSError:
            return ""

    def http(self, method, path, body=None, timeout=120):
        return harness.unix_request(self.sock, method, path, body, timeout)

    def ready(self):
        """(every pool at its target, the pools' total target).  Not
        /v1/ready's own 200, which needs one warm sandbox a pool: a pool
        still refilling holds fewer fds and less memory."""
        st, _, raw = self.http("GET", "/v1/ready", timeout=5)
        try:
            pools = json.loads(raw)["pools"]
            return st == 200 and all(p["warm"] >= p["target"] for p in pools), sum(p["target"] for p in pools)
        except (ValueError, KeyError, TypeError):
            return False, None

    # --- one execution a job ---------------------------------------------------

    def run_job(self, job):
        """Run one job in its lane; a record for the checks."""
        L = self.ledgers[self.lanes[job.lane]["ledger"]]
        rec = {"job": job, "status": None, "http": None, "res": None, "harness": None}
        t0 = time.monotonic()
        if job.lane == "serve":
            body = {"app": soaklib.app_of(job), "agent": "soak" if job.mids else None, "code": self.codes[job.kind],
                    "inputs": [{"name": "calls.json", "content": json.dumps(job.mids)}] if job.mids else [],
                    "requestId": "soak-%s" % job.n}
            while True:
                st, hdrs, raw = self.http("POST", "/v1/executions", body)
                if st != 429:
                    break
                rec["retries"] = rec.get("retries", 0) + 1
                time.sleep(min(float(hdrs.get("Retry-After", "1") or 1), 5))
            rec["http"] = st
            out = raw
        else:
            rootless = job.lane == "run-rootless"
            cmd = [self.cordon, "run", "--policy", L["blobs"][soaklib.app_of(job)], "--code", self.programs[job.kind],
                   "--state-dir", L["state"]]
            jdir = None
            if job.mids:
                jdir = self.path("jobs", job.n)
                os.mkdir(jdir)
                os.chmod(jdir, 0o755)
                with open(os.path.join(jdir, "calls.json"), "w") as f:
                    json.dump(job.mids, f)
                cmd += ["--agent", "soak", "--input", os.path.join(jdir, "calls.json")]
            who = {"user": self.pw.pw_uid, "group": self.pw.pw_gid, "extra_groups": []} if rootless else {}
            p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 env=self.env(L["tmp"], rootless), start_new_session=True, **who)
            with self.lock:
                self.supervisors.add(p.pid)
            try:
                out, err = p.communicate(timeout=120)
            except subprocess.TimeoutExpired:
                p.kill()
                out, err = p.communicate()
                rec["harness"] = "cordon run did not end within 120 s (SIGKILLed)"
            rec["rc"], rec["stderr"] = p.returncode, err.decode("utf-8", "replace")[-400:]
            if jdir:
                shutil.rmtree(jdir, ignore_errors=True)
        rec["elapsed"] = time.monotonic() - t0
        try:
            rec["res"] = json.loads(out.decode())
        except ValueError:
            rec["res"] = None
        if not isinstance(rec["res"], dict):
            rec["harness"] = rec["harness"] or "no result JSON (%s): %s" % (
                "HTTP %s" % rec["http"] if job.lane == "serve" else "exit %s" % rec.get("rc"),
                out.decode("utf-8", "replace")[:300])
            rec["res"] = {}
        rec["status"] = rec["res"].get("status")
        return rec

    def worker(self, jobs, stream):
        while True:
            job = jobs.next(stream)
            if job is None:
                return
            try:
                rec = self.run_job(job)
            except Exception as e:     # a driver bug must show, not hang the soak
                rec = {"job": job, "status": None, "res": {}, "harness": "driver: %r" % e, "elapsed": 0}
            with self.lock:
                self.records.append(rec)

    def sampler(self, stop):
        """Serve's fds, RSS and children every soaklib.SAMPLE_S seconds; the root
        ledger's write-lock holder every 10 ms (who holds it, how long)."""
        last = 0.0
        while not stop.wait(0.01):
            self.lockwatch.sample()
            now = time.monotonic()
            if now - last >= soaklib.SAMPLE_S:
                last = now
                s = soaklib.proc_sample(self.serve.pid)
                if s:
                    self.samples.append((now - self.load_t0,) + s)

    def load(self):
        self.records, self.samples, self.supervisors = [], [], set()
        self.lockwatch = soaklib.LockWatch(os.path.join(self.ledgers["root"]["state"], "ledger.sqlite3-shm"),
                                           self.serve.pid)
        jobs = soaklib.JobSource(SEED, SECONDS, self.lock)
        self.load_t0 = time.monotonic()
        stop = threading.Event()
        smp = threading.Thread(target=self.sampler, args=(stop,), daemon=True)
        smp.start()
        nserve = soaklib.serve_workers(CONCURRENCY)
        workers = [threading.Thread(target=self.worker, args=(jobs, "serve" if i < nserve else "run"), daemon=True)
                   for i in range(CONCURRENCY)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        self.load_s = time.monotonic() - self.load_t0
        stop.set()
        smp.join()
        self.jobs = jobs


def main():
    if os.geteuid() != 0:
        sys.exit("soak: run as root (make soak): the rootless lane runs as %s" % USER)
    S = Soak()
    print("soak: seed %d (SOAK_SEED=%d replays this mix), %g s of load, %d at once, work dir %s" % (
        SEED, SEED, SECONDS, CONCURRENCY, S.W), flush=True)
    before = soaklib.host_snapshot()
    try:
        S.setup()
        S.start_serve()
    except (RuntimeError, OSError) as e:
        S.emit(False, "setup", e)
        return 1
    _, pool_total = S.ready()
    S.idle_before = soaklib.proc_sample(S.serve.pid)
    S.fds_before = soaklib.fd_targets(S.serve.pid)
    S.rss_before = soaklib.rss_by_mapping(S.serve.pid)
    S.load()
    soaklib.check_results(S)
    soaklib.check_after(S, before, pool_total)
    soaklib.stop_serve(S)
    soaklib.summary(S)
    failed = S.results.count(False)
    if not failed and os.environ.get("SOAK_KEEP") != "1":
        shutil.rmtree(S.W, ignore_errors=True)
    else:
        print("soak: work directory kept: %s" % S.W)
    return 1 if failed else 0


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    sys.exit(main())
