# SPDX-License-Identifier: Apache-2.0
# harness.py - what the suites that run programs inside cordon share
# (tests/boundary, tests/bridge, tests/serve): one suite's mode, compiled
# policies, one execution through `cordon run` or through `cordon serve`,
# the check lines and the summary, and the leftover check.  Stdlib only,
# for /usr/bin/python3; each suite's run.py puts ../lib on sys.path.
#
# A suite runs in one mode:
#   root, rootless          each execution is a `cordon run` (RunExecution)
#   serve, serve-rootless   one `cordon serve` for the whole suite, each
#                           execution a POST /v1/executions on its Unix
#                           socket (ServeExecution); the answer is the same
#                           result JSON `cordon run` prints
# The mode's privilege (root or not) decides the expectations that differ
# by mechanism (cgroup or rlimit ...); the backend decides how a program
# is run.  A check that needs what only `cordon run` has (its --run-dir,
# its process to signal, its exit code as the only verdict) is reported as
# a "skip ... run-only: why" line in the serve modes, never silently.
#
# Lines: "ok|FAIL|XFAIL|XPASS MODE CHECK [LAYER] EVIDENCE", "skip MODE CHECK
# ...", "note MODE TEXT", and one summary "SUITE MODE: N checks, F failed,
# T s" (", S run-only" in serve modes).  XFAIL/XPASS mark the suite's known
# failures, which fail it only with SUITE_STRICT=1 (BOUNDARY_STRICT ...).
import fcntl
import http.client
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

import schema_check

MODES = ("root", "rootless", "serve", "serve-rootless")
HOSTID_LOCK_DIR = "/run/cordon/hostids"    # runtime/hostid.h HOSTID_LOCK_DIR_DEFAULT
SANITIZER_SIGNS = ("Sanitizer", "runtime error:")
SANITIZER_OPTIONS = ("ASAN_OPTIONS", "TSAN_OPTIONS")   # passed to every cordon


# --- processes and cgroups on the host ------------------------------------

def alive(pid):
    """pid exists and is not a zombie."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def marker_pids(marker):
    """Pids of processes other than this one whose command line holds
    marker anywhere, zombies included: a zombie of the sandbox still on
    the host is a process its teardown did not finish with."""
    found = []
    for d in os.listdir("/proc"):
        if d.isdigit() and int(d) != os.getpid():
            try:
                with open("/proc/%s/cmdline" % d, "rb") as f:
                    if marker.encode() in f.read():
                        found.append(int(d))
            except OSError:
                pass
    return found


def live_marker_pids(marker):
    return [p for p in marker_pids(marker) if alive(p)]


def child_pids(pid):
    """Children of every thread of pid (a process that clones from several
    threads, as cordon serve's pools do, has them under each task)."""
    kids = []
    try:
        tasks = os.listdir("/proc/%d/task" % pid)
    except OSError:
        return kids
    for t in tasks:
        try:
            with open("/proc/%d/task/%s/children" % (pid, t)) as f:
                kids += [int(x) for x in f.read().split()]
        except OSError:
            pass
    return kids


def program_of(init):
    """The program of a sandbox: the child of its init (pid 2 inside).
    By the parent pid in /proc/PID/stat, which anyone may read: init is
    not dumpable, so its children file is not everyone's."""
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open("/proc/%s/stat" % d) as f:
                    if int(f.read().rsplit(")", 1)[1].split()[1]) == init:
                        return int(d)
            except (OSError, ValueError, IndexError):
                pass
    return None


def descendants(pid):
    out, todo = [], child_pids(pid)
    while todo:
        p = todo.pop()
        out.append(p)
        todo += child_pids(p)
    return out


def start_time(pid):
    """The process's start time in clock ticks (tells a reused pid apart)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return int(f.read().rsplit(")", 1)[1].split()[19])
    except (OSError, ValueError, IndexError):
        return None


def host_uid(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            return int([ln for ln in f if ln.startswith("Uid:")][0].split()[1])
    except (OSError, ValueError, IndexError):
        return None


def kill_pids(pids):
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def wait_until(pred, limit, step=0.05):
    end = time.monotonic() + limit
    while time.monotonic() < end:
        v = pred()
        if v:
            return v
        time.sleep(step)
    return pred()


def cgroup_dirs(ids=None, pids=None):
    """cgroup directories of cordon below /sys/fs/cgroup, in every
    hierarchy: all cordon-* ones, or those naming one of the execution ids
    or supervisor pids given.  Names: cordon-<id>, cordon-<supervisor
    pid>-<id>, and a tool call's cordon-<pid>-<id>-t<n>: any dash-separated
    part is compared."""
    found = []
    top = "/sys/fs/cgroup"
    want = set(ids or ()) | {str(p) for p in pids or ()}
    for root, dirs, _ in os.walk(top):
        if root.count("/") - top.count("/") > 6:
            dirs[:] = []
            continue
        for d in dirs:
            if d.startswith("cordon-") and (not want and ids is None and pids is None
                                            or want & set(d.split("-")[1:])):
                found.append(os.path.join(root, d))
    return found


def remove_cgroups(dirs):
    """rmdir each (EBUSY while killed tasks leave); the errors left."""
    errs = []
    for d in dirs:
        for attempt in range(50):
            try:
                os.rmdir(d)
                break
            except FileNotFoundError:
                break
            except OSError as e:
                if attempt == 49:
                    errs.append("could not remove %s: %s" % (d, e))
                time.sleep(0.02)
    return errs


def lock_files():
    try:
        return set(os.listdir(HOSTID_LOCK_DIR))
    except OSError:
        return set()


def lock_state(name):
    """'gone', 'held' (a live lease) or 'stale' (the file, nobody's flock:
    a supervisor that never released it, or one killed by SIGKILL)."""
    try:
        fd = os.open(os.path.join(HOSTID_LOCK_DIR, name), os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        return "gone"
    except OSError:
        return "held"
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return "stale"
    except OSError:
        return "held"
    finally:
        os.close(fd)


def remove_stale_lock(name):
    """As hostid_release does: unlink the name while holding its flock, so
    a run that opened the file first and locks it after sees the name gone
    and tries again (hostid.c lockfile_take)."""
    path = os.path.join(HOSTID_LOCK_DIR, name)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        st, nst = os.fstat(fd), os.lstat(path)
        if (st.st_dev, st.st_ino) != (nst.st_dev, nst.st_ino):
            return False
        os.unlink(path)
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


HOST_IDS_RE = re.compile(r"as host (\d+)/(\d+)")


# --- the suite -------------------------------------------------------------

class RunOnly(Exception):
    """An execution option only `cordon run` has (--run-dir, --state-dir,
    --secrets, a command prefix)."""


class Suite:
    """One suite in one mode: its work directory, its checks and what its
    executions left.  name: the summary's first word; layers: a LAYER
    column in every check line; known: {check: why} of known failures for
    this mode."""

    def __init__(self, name, mode=None, known=None, layers=False, width=900, known_label="known",
                 workdir=None):
        self.name = name
        self.mode = mode or (sys.argv[1] if len(sys.argv) > 1 else ("root" if os.geteuid() == 0 else "rootless"))
        if self.mode not in MODES:
            sys.exit("%s: unknown mode %s (%s)" % (name, self.mode, ", ".join(MODES)))
        self.serve = self.mode.startswith("serve")
        self.root = self.mode in ("root", "serve")      # the privilege the expectations follow
        if self.root != (os.geteuid() == 0):
            sys.exit("%s: mode %s does not match euid %d" % (name, self.mode, os.geteuid()))
        self.build = os.environ["BUILD"]
        self.policies = os.environ["POLICIES"]
        self.cordon = os.path.join(self.build, "cordon")
        self.cordonc = os.path.join(self.build, "cordonc")
        self.known = known or {}
        self.strict = os.environ.get(name.upper() + "_STRICT") == "1"
        self.layers, self.width, self.known_label = layers, width, known_label
        self.t0 = time.monotonic()
        self.results = []       # one bool a check: passed (or a known failure)
        self.skipped = 0
        self.notes = []
        self.exec_ids = set()   # every execution of this suite: none may leave a cgroup
        self.host_ids = set()   # every host id leased for one: none may leave its lock file
        self.markers = []       # every marker a sandboxed process carried: none may be left
        self.sanitizer = []     # reports of a SAN=1 cordon on its stderr
        self.killed = 0         # supervisors this suite SIGKILLed (their lock files stay)
        self.blobs = {}         # policy key -> compiled blob
        self.lock = threading.Lock()
        self.locks_before = lock_files()
        self.W = tempfile.mkdtemp(prefix="cordon-%s-" % name, dir=workdir)
        os.chmod(self.W, 0o755)    # the executor (uid 1001 as root) walks through to its workspace
        self.RUNTMP = os.path.join(self.W, "tmp")   # cordon's TMPDIR: its temporary run directories
        os.mkdir(self.RUNTMP)
        os.chmod(self.RUNTMP, 0o755)
        self.backend = None
        self.env = {}           # added to every cordon's environment
        self.schema_counts = {}  # docs/schemas name -> documents held to it
        self.schema_bad = []    # the first errors of those that did not match

    # --- lines

    def emit(self, ok, name, evidence, layer=None):
        known = name in self.known and not self.strict
        tag = ("XPASS" if known else "ok  ") if ok else ("XFAIL" if known else "FAIL")
        cols = [tag, self.mode, name] + ([layer or "-"] if self.layers else []) + [" ".join(str(evidence).split())]
        line = " ".join(cols)
        if known:
            line += " [%s: %s]" % (self.known_label, self.known[name])
        with self.lock:
            self.results.append(bool(ok) or known)
            print(line[:self.width] if not known else line, flush=True)

    def run_only(self, name, why):
        """A check this mode cannot make: one line, counted apart."""
        cols = ["skip", self.mode, name] + (["-"] if self.layers else []) + ["run-only: " + why]
        with self.lock:
            self.skipped += 1
            print(" ".join(cols), flush=True)

    def note(self, text):
        with self.lock:
            self.notes.append(text)

    def new_marker(self, name):
        m = "cordon-%s-%s-%s-%s" % (self.name, self.mode, name, secrets.token_hex(6))
        with self.lock:
            self.markers.append(m)
        return m

    # --- every JSON cordon wrote, held to its schema (docs/schemas)

    def schema_hold(self, name, value, what):
        """One document against docs/schemas/<name>.schema.json: a FAIL line
        now when it does not match, and one summary check at finish()."""
        errs = schema_check.check(name, value)
        with self.lock:
            self.schema_counts[name] = self.schema_counts.get(name, 0) + 1
            if errs:
                self.schema_bad.append("%s: %s" % (what, errs[0]))
        if errs:
            self.emit(False, "schema-" + name, "%s does not match docs/schemas/%s.schema.json: %s"
                      % (what, name, "; ".join(errs[:3])))

    def schema_hold_execution(self, res, run_dir=None, context=None, who="execution"):
        """A result (not the stand-ins for no answer), a kept run
        directory's result.json and audit lines, and a context cordon
        took."""
        real = isinstance(res, dict) and "executionId" in res
        if real:
            self.schema_hold("result", res, who + " result")
        if real and context is not None and \
                ((res.get("error") or {}).get("details") or {}).get("where") != "exec.harness.context":
            self.schema_hold("context", context, who + " context")
        if not run_dir:
            return
        for rel, name in (("result.json", "result"), ("logs/tool-calls.jsonl", "audit-line")):
            try:
                with open(os.path.join(run_dir, rel), "rb") as f:
                    raw = f.read()
            except OSError:
                continue
            lines = raw.splitlines() if name == "audit-line" else [raw]
            for n, line in enumerate(lines, 1):
                try:
                    value = json.loads(line.decode("utf-8"))
                except ValueError as e:
                    value = "not JSON: %s" % e
                self.schema_hold(name, value, "%s %s%s" % (who, rel, ":%d" % n if name == "audit-line" else ""))

    # --- what executions leave

    def track(self, res, run_dir=None):
        """Record a result's execution id and host ids, and the ids a run
        directory names (a killed supervisor printed no result)."""
        ids = set()
        if isinstance(res, dict) and res.get("executionId"):
            ids.add(res["executionId"])
        if run_dir:
            try:
                ids.update(os.listdir(os.path.join(run_dir, "executed_programs")))
            except OSError:
                pass
        m = HOST_IDS_RE.search(((res or {}).get("enforcement") or {}).get("identity", "")) \
            if isinstance(res, dict) and isinstance(res.get("enforcement"), dict) else None
        with self.lock:
            self.exec_ids |= ids
            if m and self.root:     # rootless the executor is the caller: no lease
                self.host_ids |= {int(m.group(1)), int(m.group(2))}

    def track_host_id(self, uid):
        if isinstance(uid, int):
            with self.lock:
                self.host_ids.add(uid)

    def scan_sanitizer(self, who, text):
        if any(s in text for s in SANITIZER_SIGNS):
            with self.lock:
                self.sanitizer.append("%s: %s" % (who, text[-600:]))

    def supervisor_died(self, run_dir=None, why="after SIGKILL of the supervisor"):
        """A `cordon run` killed by a signal cannot remove its cgroups (a
        later run sweeps them) nor unlink its host-id lock files (the
        kernel drops their flocks): its cgroups are removed here so the
        leftover check stays exact, and the lock files at the end."""
        with self.lock:
            self.killed += 1
        if run_dir:
            self.track(None, run_dir)
            ids = os.listdir(os.path.join(run_dir, "executed_programs")) \
                if os.path.isdir(os.path.join(run_dir, "executed_programs")) else []
            stale = cgroup_dirs(set(ids)) if ids else []
            for e in remove_cgroups(stale):
                self.note(e)
            if stale:
                self.note("%s: its cgroups stayed behind (removed by the test): %s" % (why, stale))

    def check_leftovers(self, extra=(), what="run directory, mount, cgroup, host-id lock or marked process"):
        """The one leftover check of a suite: no temporary run directory in
        its TMPDIR, no mount naming its work directory or a run directory,
        no cgroup of its executions, no host-id lock file of theirs that
        nobody holds, no process carrying one of its markers.  extra:
        (label, pids) of the suite's own processes that must be gone (they
        are killed now)."""
        bad = []
        left = [d for d in os.listdir(self.RUNTMP) if d.startswith("cordon-run.")]
        if left:
            bad.append("temporary run directories left: %s" % left)
        with open("/proc/self/mountinfo") as f:
            mounts = [ln.split()[4] for ln in f if self.W in ln or "cordon-run." in ln]
        if mounts:
            bad.append("mounts left: %s" % mounts)
        cg = cgroup_dirs(self.exec_ids) if self.exec_ids else []
        # cordon serve destroys a sandbox after its answer is out (its
        # sweeper thread): its cgroups and host ids go within moments, not
        # before the result arrives.  Give them 5 s, then judge.
        for _ in range(50):
            if not cg:
                break
            time.sleep(0.1)
            cg = cgroup_dirs(self.exec_ids)
        if cg:
            bad.append("cgroups left: %s" % cg)
        procs = [(m, marker_pids(m)) for m in self.markers]
        procs = [p for p in procs if p[1]]
        if procs:
            bad.append("processes left: %s" % procs)
        for label, pids in extra:
            alive_pids = [p for p in pids if alive(p)]
            if alive_pids:
                bad.append("%s alive: %s (killed now)" % (label, alive_pids))
                kill_pids(alive_pids)
        bad += self._lock_leftovers()
        serving = set(cgroup_dirs(pids=[self.backend.pid])) if self.backend and self.backend.serve else set()
        foreign = [d for d in cgroup_dirs() if d not in serving]   # a live server's warm sandboxes are its own
        if foreign:
            self.note("cordon-* cgroups not made by this suite (another run on the host?): %s" % foreign)
        self.emit(not bad, "leftovers", "; ".join(bad) if bad else
                  "no %s left (%d executions, %d host ids)" % (what, len(self.exec_ids), len(self.host_ids)),
                  layer="-")

    def _lock_leftovers(self):
        """A host id leased for one of this suite's executions must have no
        lock file once it ended: release unlinks it.  One still there that
        someone holds is another run's lease of the same id (a note).  New
        lock files nobody holds, of no known id, are the SIGKILLed
        supervisors' (by design: the kernel dropped the flock, the next
        lease of that id reuses the file): removed and noted."""
        if not os.path.isdir(HOSTID_LOCK_DIR) or os.geteuid() != 0:
            return []
        bad = []
        for uid in sorted(self.host_ids):
            st = lock_state(str(uid))
            if st == "stale":
                bad.append("host id %d: its lock file is left, held by nobody" % uid)
            elif st == "held":
                self.note("host id %d: its lock file is held by another lease (another run on the host?)" % uid)
        new = sorted(n for n in lock_files() - self.locks_before - {str(u) for u in self.host_ids}
                     if lock_state(n) == "stale")
        if new:
            gone = [n for n in new if remove_stale_lock(n)]
            self.note("%d host-id lock file(s) held by nobody appeared (%d supervisor(s) SIGKILLed by this suite; "
                      "another suite's otherwise): removed %d" % (len(new), self.killed, len(gone)))
        return bad

    def check_sanitizer(self):
        self.emit(not self.sanitizer, "sanitizer", "; ".join(self.sanitizer)[:800] if self.sanitizer else
                  "no AddressSanitizer, LeakSanitizer or UBSan report from cordon (meaningful with SAN=1)")

    def finish(self):
        """Clean up, print the notes and the summary: the exit status."""
        if self.backend is not None:
            self.backend.close()
        shutil.rmtree(self.W, ignore_errors=True)
        for n in self.notes:
            print("note %s %s" % (self.mode, n))
        if self.schema_counts:
            self.emit(not self.schema_bad, "schemas", "%s held to docs/schemas%s" % (
                ", ".join("%d %s" % (n, k) for k, n in sorted(self.schema_counts.items())),
                ": %d did not match, first: %s" % (len(self.schema_bad), self.schema_bad[0]) if self.schema_bad
                else ""))
        nfail = self.results.count(False)
        extra = ", %d run-only" % self.skipped if self.skipped else ""
        print("%s %s: %d checks, %d failed%s, %.1fs" % (self.name, self.mode, len(self.results), nfail, extra,
                                                         time.monotonic() - self.t0), flush=True)
        return 1 if nfail else 0

    # --- policies

    def compile(self, key, app_yaml, tools, includes=()):
        """cordonc compile with the shipped profiles on the path; the blob
        readable by all (rootless and serve read copies of it)."""
        out = os.path.join(self.W, key + ".cpol")
        cmd = [self.cordonc, "compile"]
        for d in includes:
            cmd += ["-I", d]
        cmd += [app_yaml] + list(tools) + ["-o", out]
        p = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, CORDON_POLICY_PATH=self.policies))
        if p.returncode != 0:
            sys.exit("%s: cordonc compile %s failed:\n%s" % (self.name, app_yaml, p.stderr))
        os.chmod(out, 0o644)
        self.blobs[key] = out
        return out

    # --- executions

    def open_backend(self, env=None, serve_args=()):
        """After compiling: the run backend, or a started cordon serve
        holding every blob.  env: added to every cordon's environment."""
        self.env = dict(env or {})
        if self.serve:
            try:
                self.backend = ServeBackend(self, serve_args)
            except RuntimeError as e:
                self.emit(False, "serve_started", e)
                raise SystemExit(self.finish())
        else:
            self.backend = RunBackend(self)
        return self.backend

    def start(self, policy, code, inputs=(), **kw):
        """One execution of code (a path) under the blob compiled as
        policy; inputs: paths, or (name, bytes) pairs."""
        return self.backend.start(policy, code, inputs, **kw)


def serve_available(cordon):
    """cordon serve exists in this build: `cordon serve --help` works."""
    try:
        p = subprocess.run([cordon, "serve", "--help"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return p.stdout + p.stderr if p.returncode == 0 else None


def describe(r):
    """A failed check's evidence: what the execution said."""
    res = r.res
    bits = ["status=%s %s" % (res.get("status"), ("http=%s" % r.http) if r.serve else "rc=%s" % r.rc)]
    if res.get("error"):
        bits.append("error=%s" % json.dumps(res["error"]))
    if r.result:
        bits.append("result=%s" % json.dumps({k: r.result.get(k) for k in ("blocked", "layer", "evidence")
                                              if k in r.result}))
    if res.get("stderr"):
        bits.append("program stderr: %s" % res["stderr"][-400:])
    if r.stderr:
        bits.append("cordon stderr: %s" % r.stderr[-300:])
    if res.get("raw"):
        bits.append("stdout: %s" % res["raw"])
    return " ".join(bits)


# --- the run backend: one `cordon run` an execution --------------------------

class RunBackend:
    serve = False

    def __init__(self, suite):
        self.S = suite

    def start(self, policy, code, inputs=(), **kw):
        return RunExecution(self.S, self.S.blobs[policy], code, inputs, **kw)

    def close(self):
        pass


class RunExecution:
    """One `cordon run`, in a session of its own (a program that signals
    its process group reaches the supervisor, never the runner).
    pidfile: the supervisor's pid is written to an input supervisor.pid
    before cordon reads its inputs (started through sh, which execs cordon
    with the same pid)."""
    serve = False

    def __init__(self, suite, blob, code, inputs=(), context=None, agent=None, run_dir=None, state_dir=None,
                 secrets_file=None, prefix=(), pidfile=False, env=None, request_id=None):
        self.S = suite
        self.run_dir = run_dir
        self.context = context
        self.pdir = tempfile.mkdtemp(dir=suite.W)
        os.chmod(self.pdir, 0o755)
        cmd = [suite.cordon, "run", "--policy", blob, "--code", code]
        for inp in inputs:
            if isinstance(inp, tuple):
                path = os.path.join(self.pdir, inp[0])
                with open(path, "wb") as f:
                    f.write(inp[1] if isinstance(inp[1], bytes) else inp[1].encode())
                inp = path
            cmd += ["--input", inp]
        if context is not None:
            cfile = os.path.join(self.pdir, "ctx.json")
            with open(cfile, "w") as f:
                json.dump(context, f)
            cmd += ["--context", cfile]
        if agent is not None:
            cmd += ["--agent", agent]
        if run_dir:
            cmd += ["--run-dir", run_dir]
        if state_dir:
            cmd += ["--state-dir", state_dir]
        if secrets_file:
            cmd += ["--secrets", secrets_file]
        if pidfile:
            pf = os.path.join(self.pdir, "supervisor.pid")
            cmd = ["/bin/sh", "-c", 'echo $$ >"$0" && exec "$@"', pf] + list(prefix) + cmd + ["--input", pf]
        else:
            cmd = list(prefix) + cmd
        e = {"PATH": "/usr/bin:/bin", "TMPDIR": suite.RUNTMP}
        e.update(suite.env)
        e.update(env or {})
        for k in SANITIZER_OPTIONS:
            if k in os.environ:
                e[k] = os.environ[k]
        self.t0 = time.monotonic()
        self.p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=e, start_new_session=True)
        self.pid = self.p.pid

    def wait(self, limit=60):
        try:
            out, err = self.p.communicate(timeout=limit)
        except subprocess.TimeoutExpired:
            self.p.kill()
            out, err = self.p.communicate()
        self.elapsed = time.monotonic() - self.t0
        self.rc = self.p.returncode
        self.http = None
        self.out, self.err = out, err
        self.stderr = err.decode("utf-8", "replace")
        self.S.scan_sanitizer(os.path.basename(self.run_dir or "run"), self.stderr)
        try:
            self.res = json.loads(out.decode())
        except ValueError:
            self.res = {"status": "unparsable", "raw": out.decode("utf-8", "replace")[:300]}
        if not isinstance(self.res, dict):
            self.res = {"status": "unparsable", "raw": out.decode("utf-8", "replace")[:300]}
        self.S.track(self.res, self.run_dir)
        self.S.schema_hold_execution(self.res, self.run_dir, self.context, "cordon run")
        shutil.rmtree(self.pdir, ignore_errors=True)
        self.result = self.res.get("result") if isinstance(self.res.get("result"), dict) else {}
        return self

    def exit_is(self, rc):
        """The CLI's exit code is rc."""
        return self.rc == rc

    def ended_as(self):
        return "exit %s" % self.rc

    def poll(self):
        return self.p.poll()

    def init_pid(self, limit=5.0):
        """The sandbox's init: the one child of `cordon run` (pid 1 of the
        sandbox)."""
        def one():
            kids = child_pids(self.p.pid)
            return kids[0] if kids else None
        return wait_until(one, limit, 0.02)

    def executor_pid(self, limit=5.0, has=None):
        """The program: the one child of the sandbox's init (pid 2 of the
        sandbox; init itself is not dumpable, so its /proc/PID/root is
        root's alone)."""
        def one():
            kids = child_pids(self.p.pid)
            return program_of(kids[0]) if kids else None
        return wait_until(one, limit, 0.02)

    def cancel(self):
        """SIGTERM to cordon: the run ends cancelled (exit 130)."""
        self.p.send_signal(signal.SIGTERM)
        return "SIGTERM to cordon"

    def kill(self):
        self.p.send_signal(signal.SIGKILL)


# --- the serve backend: one cordon serve for the suite ------------------------

class UnixHTTPConnection(http.client.HTTPConnection):
    """HTTP/1.1 over cordon serve's Unix socket."""

    def __init__(self, path, timeout=60):
        super().__init__("localhost", timeout=timeout)
        self.unix_path = path

    def connect(self):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(self.timeout)
        s.connect(self.unix_path)
        self.sock = s


def unix_request(sock, method, path, body=None, timeout=60):
    """One HTTP request on a Unix socket: (status, headers, body bytes);
    status 0 when the server could not be reached."""
    c = UnixHTTPConnection(sock, timeout)
    try:
        data = None if body is None else json.dumps(body).encode()
        c.request(method, path, body=data, headers={"Content-Type": "application/json"} if data else {})
        r = c.getresponse()
        return r.status, dict(r.getheaders()), r.read()
    except (OSError, http.client.HTTPException) as e:
        return 0, {}, str(e).encode()
    finally:
        c.close()


def terminate(p, limit=30):
    """SIGTERM to a server (a Popen) and its exit status, or why there is
    none: still running `limit` seconds later, it is SIGKILLed."""
    p.send_signal(signal.SIGTERM)
    try:
        return p.wait(limit)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
        return "none: still running %d s after SIGTERM (SIGKILLed)" % limit


class ServeBackend:
    """cordon serve started once with the suite's blobs, signed by a key of
    its own, on a socket in the suite's work directory: --pool 2, and the
    concurrency and queue the suite needs where the server has those
    options.  Stopped by close(): SIGTERM, exit 0, nothing left."""
    serve = True

    def __init__(self, suite, extra_args=()):
        self.S = suite
        help_text = serve_available(suite.cordon)
        if help_text is None:
            raise RuntimeError("cordon serve is not in this build (cordon serve --help failed)")
        d = os.path.join(suite.W, "serve")
        # A suite may start more than one server (tests/bridge does):
        # the first gets serve/, each other one a directory of its own.
        if os.path.exists(d):
            d = tempfile.mkdtemp(prefix="serve-", dir=suite.W)
        else:
            os.mkdir(d)
        os.chmod(d, 0o755)
        self.dir = d
        pdir = os.path.join(d, "policies")
        os.mkdir(pdir)
        pub, sec = os.path.join(d, "key.pub"), os.path.join(d, "key.sec")
        self._tool(suite.cordonc, "keygen", "-p", pub, "-s", sec)
        self.apps = {}
        for key, blob in suite.blobs.items():
            dst = os.path.join(pdir, key + ".cpol")
            shutil.copy(blob, dst)
            self._tool(suite.cordonc, "sign", "-s", sec, dst)
            os.chmod(dst, 0o644)
            out = self._tool(suite.cordon, "check-policy", "--trusted-key", pub, dst)
            m = re.search(r": ok: app (\S+?),", out)
            if not m:
                raise RuntimeError("check-policy names no app: %s" % out)
            self.apps[key] = m.group(1)
        self.sock = os.path.join(d, "serve.sock")
        args = [suite.cordon, "serve", "--policies", pdir, "--trusted-key", pub, "--socket", self.sock,
                "--pool", "2"]
        # Options given where this server has them: the suites run up to
        # 20 executions at once (the default is twice the CPUs); its run
        # directories go in a work directory of the suite's own, which
        # must be empty once it has stopped.
        self.work = os.path.join(d, "work")
        for opt, val in (("--max-concurrency", "24"), ("--queue", "64"), ("--work-dir", self.work),
                         ("--grace", "10")):
            if opt in help_text:
                args += [opt, val]
        args += list(extra_args)
        env = {"PATH": "/usr/bin:/bin", "TMPDIR": suite.RUNTMP}
        env.update(suite.env)
        for k in SANITIZER_OPTIONS:
            if k in os.environ:
                env[k] = os.environ[k]
        self.log = os.path.join(d, "serve.log")
        self.mounts_before = self._mounts()
        with open(self.log, "wb") as logf:
            self.p = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=logf, stderr=subprocess.STDOUT, env=env,
                                      start_new_session=True)
        self.pid = self.p.pid
        self.closed = False
        ready = wait_until(lambda: self.p.poll() is not None or self._ready(suite), 60, 0.1)
        if self.p.poll() is not None:
            raise RuntimeError("cordon serve exited %s at start: %s" % (self.p.returncode, self.log_tail()))
        if not ready:
            suite.note("cordon serve was not ready (GET /v1/ready) 60 s after its start; going on")

    def _tool(self, *cmd):
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            raise RuntimeError("%s failed: %s" % (" ".join(cmd[:2]), p.stderr))
        return p.stdout + p.stderr

    def _mounts(self):
        try:
            with open("/proc/self/mountinfo") as f:
                return {ln.split()[4] for ln in f}
        except OSError:
            return set()

    def log_tail(self, n=600):
        try:
            with open(self.log, "rb") as f:
                return f.read().decode("utf-8", "replace")[-n:]
        except OSError:
            return ""

    def request(self, method, path, body=None, timeout=60):
        """(status, headers, body bytes); status 0 when the server could
        not be reached."""
        return unix_request(self.sock, method, path, body, timeout)

    def _get(self, path):
        return self.request("GET", path, timeout=5)

    def _ready(self, suite):
        """GET /v1/ready says 200, or every pool is warm but those of the
        apps in suite.unready_ok: apps whose sandboxes this host may never
        prepare (a CPU quota rootless), which /v1/ready would wait for."""
        code, _, body = self._get("/v1/ready")
        skip = getattr(suite, "unready_ok", ())
        if code == 200 or not skip or code == 0:
            return code == 200
        try:
            pools = [q for q in json.loads(body).get("pools", []) if q.get("app") not in skip]
        except ValueError:
            return False
        return bool(pools) and all(q.get("warm", 0) > 0 for q in pools)

    def start(self, policy, code, inputs=(), context=None, agent=None, run_dir=None, state_dir=None,
              secrets_file=None, prefix=(), pidfile=False, env=None, request_id=None):
        if run_dir or state_dir or secrets_file or prefix or env:
            raise RunOnly("--run-dir, --state-dir, --secrets, a prefix and an environment are cordon run's")
        return ServeExecution(self, policy, code, inputs, context, agent, pidfile, request_id)

    def executors(self):
        return child_pids(self.pid)

    def close(self):
        """SIGTERM; the server must drain and exit 0 within 30 s, and leave
        no process, cgroup, mount or host-id lock of its sandboxes (warm
        ones included).  One check line, serve_stopped."""
        if self.closed:
            return
        self.closed = True
        S = self.S
        procs = [(p, start_time(p), host_uid(p)) for p in descendants(self.pid)]
        ids = {u for _, _, u in procs if u not in (None, 0, os.geteuid())}
        t0 = time.monotonic()
        early = self.p.poll()
        if early is not None:
            S.emit(False, "serve_stopped", "the server had exited (status %s) before SIGTERM: %s" % (
                early, self.log_tail(400)), layer="supervisor")
            return
        rc = terminate(self.p)
        took = time.monotonic() - t0
        bad = [] if rc == 0 else ["exit %s: %s" % (rc, self.log_tail(300))]
        # the pid namespace's init going takes the rest: allow the kernel a moment
        def still():
            return [p for p, st, _ in procs if st is not None and start_time(p) == st]
        wait_until(lambda: not still(), 2)
        left = still()
        if left:
            bad.append("sandbox processes left: %s (killed now)" % left)
            kill_pids(left)
        cg = cgroup_dirs(pids=[self.pid])
        if cg:
            bad.append("cgroups left: %s" % cg)
        # Mounts of this server only (its work directory, a run directory,
        # /run/cordon): other cordon processes on the host (a bench, another
        # suite) mount and unmount on their own schedule.
        mounts = sorted(m for m in self._mounts() - self.mounts_before
                        if S.W in m or self.work in m or "cordon-run." in m or m.startswith("/run/cordon"))
        if mounts:
            bad.append("mounts left: %s" % mounts)
        try:
            kept = os.listdir(self.work)
        except OSError:
            kept = []
        if kept:
            bad.append("its work directory holds %s" % kept[:5])
        if os.geteuid() == 0:
            stale = [u for u in sorted(ids) if lock_state(str(u)) == "stale"]
            if stale:
                bad.append("host-id lock files left, held by nobody: %s" % stale)
        S.scan_sanitizer("cordon serve", self.log_tail(4000))
        if bad or False in S.results:     # its own account of what went wrong
            S.note("cordon serve's log ends: %s" % " | ".join(self.log_tail(1500).splitlines()[-12:]))
        S.emit(not bad, "serve_stopped", "; ".join(bad) if bad else
               "SIGTERM: exit 0 in %.1fs; none of its %d sandbox processes, no cgroup cordon-%d-*, mount or "
               "host-id lock (%d ids) left" % (took, len(procs), self.pid, len(ids)), layer="supervisor")


class ServeExecution:
    """One POST /v1/executions, sent from a thread of its own (the answer
    comes when the execution has ended).  pidfile: an input supervisor.pid
    holding the server's pid, as `cordon run`'s holds its own."""
    serve = True

    def __init__(self, backend, policy, code, inputs, context, agent, pidfile, request_id):
        self.B, self.S = backend, backend.S
        self.run_dir = None
        self.context = context
        self.rc = None
        self.stderr = ""
        self.request_id = request_id or "rq-" + secrets.token_hex(8)
        with open(code, "rb") as f:
            src = f.read()
        body_inputs = []
        for inp in inputs:
            if isinstance(inp, tuple):
                name, data = inp
            else:
                name = os.path.basename(inp)
                with open(inp, "rb") as f:
                    data = f.read()
            body_inputs.append(self._content(name, data))
        if pidfile:
            body_inputs.append({"name": "supervisor.pid", "content": "%d\n" % backend.pid})
        self.body = {"app": backend.apps[policy], "agent": agent, "code": src.decode("utf-8", "surrogateescape"),
                     "inputs": body_inputs, "context": context, "requestId": self.request_id}
        self.done = threading.Event()
        self.t0 = time.monotonic()
        self.thread = threading.Thread(target=self._post, daemon=True)
        self.thread.start()

    @staticmethod
    def _content(name, data):
        data = data if isinstance(data, bytes) else data.encode()
        try:
            return {"name": name, "content": data.decode("utf-8")}
        except UnicodeDecodeError:
            import base64
            return {"name": name, "contentBase64": base64.b64encode(data).decode()}

    def _post(self, limit=120):
        # 429 (past --max-concurrency and the queue): wait as Retry-After
        # says and send again, within the limit
        end = time.monotonic() + limit
        while True:
            st, hdrs, raw = self.B.request("POST", "/v1/executions", self.body, timeout=limit)
            if st != 429 or time.monotonic() > end:
                break
            try:
                time.sleep(min(float(hdrs.get("Retry-After", "1")), 5))
            except ValueError:
                time.sleep(1)
        self.http, self.raw = st, raw
        self.t1 = time.monotonic()
        self.done.set()

    def poll(self):
        return 0 if self.done.is_set() else None

    def wait(self, limit=60):
        if not self.done.wait(limit + 5):
            self.http, self.raw, self.t1 = 0, b"no answer within %d s" % limit, time.monotonic()
        self.elapsed = self.t1 - self.t0
        self.out, self.err = getattr(self, "raw", b""), b""
        try:
            self.res = json.loads(self.raw.decode()) if self.http == 200 else None
        except ValueError:
            self.res = None
        if not isinstance(self.res, dict):
            self.res = {"status": "http_%s" % self.http, "raw": self.raw.decode("utf-8", "replace")[:300]}
        self.S.track(self.res)
        self.S.schema_hold_execution(self.res, None, self.context, "serve")
        self.result = self.res.get("result") if isinstance(self.res.get("result"), dict) else {}
        return self

    def exit_is(self, rc):
        """The CLI's exit code is what `cordon run` would say; serve
        answers every execution 200 with the same status."""
        return self.http == 200

    def ended_as(self):
        return "HTTP %s" % self.http

    def executor_pid(self, limit=5.0, has=None):
        """This execution's executor among the server's children: the one
        whose root holds the path has (a file the program makes)."""
        def one():
            for pid in [program_of(i) for i in self.B.executors()]:
                if pid and has and os.path.exists("/proc/%d/root/%s" % (pid, has.lstrip("/"))):
                    return pid
            return None
        return wait_until(one, limit, 0.02)

    def cancel(self):
        st, _, raw = self.B.request("POST", "/v1/executions/%s/cancel" % self.request_id, {}, timeout=10)
        return "POST /v1/executions/%s/cancel: %s %s" % (self.request_id, st, raw.decode("utf-8", "replace")[:100])
