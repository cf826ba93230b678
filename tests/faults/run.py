#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# run.py - the fault suite (README.md), one mode (root or rootless):
# cordon's supervisor with shim.so preloaded has each of its write sites
# fail in turn (ENOSPC, EIO, EROFS) or is SIGKILLed there, or at a random
# moment of a run, or runs on a small tmpfs that fills up, or serves
# through `cordon serve` killed mid-call; after each, the invariants of
# docs/bridge.md and docs/ledger.md are checked.
#
#   BUILD=DIR POLICIES=DIR [SHIM=so] [CASE=prefix] [FAULTS_SEED=n] [FAULTS_SHORT=1] \
#       /usr/bin/python3 tests/faults/run.py root|rootless
#
# One line per case, "ok|FAIL MODE CASE EVIDENCE", then notes and one
# summary line; exit 1 when a case failed.
import ctypes
import json
import os
import random
import shutil
import signal
import struct
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
import harness as H  # noqa: E402

SHORT = os.environ.get("FAULTS_SHORT") == "1"
SEED = int(os.environ.get("FAULTS_SEED") or random.SystemRandom().randrange(1 << 30))
ONLY = os.environ.get("CASE", "")
RNG = random.Random(SEED)
ERRNOS = ("ENOSPC", "EIO", "EROFS")
APP = "faults"

# Every write site of the supervisor and the ledger the shim can reach:
# (name, op, path filter).  Run directories are named rundir.d and state
# directories state.d, so one filter fits every case's.
SITES = [
    ("audit_write", "write", "tool-calls.jsonl"),
    ("audit_sync", "fdatasync", "tool-calls.jsonl"),
    ("audit_reserve", "fallocate", "tool-calls.jsonl"),
    ("rundir_mkdir", "mkdir", "rundir.d"),
    ("rundir_create", "open", "rundir.d"),
    ("rundir_pwrite", "pwrite", "rundir.d"),
    ("rundir_truncate", "ftruncate", "rundir.d"),
    ("rundir_rename", "rename", "result.json"),
    ("state_mkdir", "mkdir", "state.d"),
    ("ledger_create", "open", "state.d"),
    ("ledger_id_write", "write", "ledger.id"),
    ("ledger_id_link", "link", "ledger.id"),
    ("ledger_id_fsync", "fsync", "state.d"),
    ("ledger_vfs_write", "vfs_write", "ledger.sqlite3"),
    ("ledger_vfs_sync", "vfs_sync", "ledger.sqlite3"),
    ("ledger_vfs_truncate", "vfs_truncate", "ledger.sqlite3"),
]
# Sites whose failure loses a record the run promised (an audit line, a
# result file): a run where one fired is never succeeded (docs/bridge.md,
# docs/runtime.md "The run directory").  The others may be absorbed: a
# ledger that cannot begin a record refuses the call (internal_error) and
# the tool does not run; the copies of out/ and logs/executor/ are noted,
# not an error; a reservation not given back is harmless.
MUST_FAIL = {"audit_write", "audit_sync", "audit_reserve", "rundir_create", "rundir_pwrite", "rundir_rename"}
# Through cordon serve: the sites of one execution's calls (the server
# opens its ledger at start, before the shim is armed).
SERVE_SITES = [s for s in SITES if s[0] in ("audit_write", "audit_sync", "ledger_vfs_write", "ledger_vfs_sync")]
# A site with more calls than this gets one errno per call in the full
# suite (in turn), not all three: SQLite's writes are many and alike.
ALL_ERRNOS_UPTO = 12

# The program's calls: three side effects and one call without, so every
# kind of record is written.  Message ids are made unique per case.
CALLS = [("f.mark", 1, "a"), ("f.echo", 2, None), ("f.mark", 3, "b"), ("f.mark", 4, "c")]

S = H.Suite("faults", workdir=os.environ.get("TMPDIR") or ("/run" if os.geteuid() == 0 else None))
SHIM = os.environ.get("SHIM") or os.path.join(S.build, "tests", "faults", "shim.so")
DATA = os.path.join(S.W, "data")
MARKS = os.path.join(DATA, "marks.log")
counts_fired = {"fired": 0, "not_fired": 0, "ledger_refused": 0}
SERVERS = []    # every cordon serve started: killed if a case breaks off


def preload():
    """LD_PRELOAD for this build's cordon: an ASan runtime must come first."""
    libs = subprocess.run(["ldd", S.cordon], capture_output=True, text=True).stdout
    first = [ln.split("=>")[1].split()[0] for ln in libs.splitlines() if "libasan" in ln and "=>" in ln]
    return ":".join(first + [SHIM])


PRELOAD = preload()
# Under TSan a sandbox prepared by a process with threads (cordon serve)
# dies at its init (docs/testing.md): serve's cases are skipped there.
TSAN_BUILD = "libtsan" in subprocess.run(["ldd", S.cordon], capture_output=True, text=True).stdout


def subreaper():
    """Orphans of a killed cordon (its sandbox, its tools) become our
    children, so "no process left" is exact: any child we did not start."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(36, 1, 0, 0, 0) != 0:     # PR_SET_CHILD_SUBREAPER
        sys.exit("faults: prctl(PR_SET_CHILD_SUBREAPER) failed")


def leftover_children(limit=5.0):
    """Children of ours still alive after limit seconds (zombies are
    reaped: a dead orphan is not a leftover)."""
    def alive_kids():
        kids = H.child_pids(os.getpid())
        for k in kids:
            if not H.alive(k):
                try:
                    os.waitpid(k, os.WNOHANG)
                except OSError:
                    pass
        return [k for k in kids if H.alive(k)]
    H.wait_until(lambda: not alive_kids(), limit, 0.05)
    left = alive_kids()
    cmds = []
    for k in left:
        try:
            with open("/proc/%d/cmdline" % k, "rb") as f:
                cmds.append("%d:%s" % (k, f.read().replace(b"\0", b" ").decode("utf-8", "replace")[:80]))
        except OSError:
            pass
    H.kill_pids(left)
    return cmds


def tool_alive(pid):
    """The tool that wrote a mark still runs: its pid is alive and still
    a tool of this suite (on a busy host a pid is soon another's)."""
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            return H.alive(pid) and MARKS.encode() in f.read()
    except OSError:
        return False


def marks():
    out = {}
    try:
        with open(MARKS) as f:
            for ln in f:
                parts = ln.split()
                if parts:
                    out.setdefault(parts[0], []).append(int(parts[2]))
    except OSError:
        pass
    return out


class Case:
    """One case's directories, message ids and runs."""

    def __init__(self, name):
        self.name = name
        self.dir = os.path.join(S.W, "c-" + name)
        os.mkdir(self.dir)
        os.chmod(self.dir, 0o755)
        self.state = os.path.join(self.dir, "state.d")
        self.tag = "%s-%s" % (name, RNG.randrange(1 << 30))
        self.calls = [(t, n, None if m is None else "%s-%s" % (m, self.tag)) for t, n, m in CALLS]
        self.runs = 0
        self.exec_ids = set()
        self.problems = []
        self.notes = []
        self.own_mounts = []    # the test's own (the tmpfs case's)
        self.t0 = time.monotonic()

    def mids(self):
        return [m for t, _, m in self.calls if m is not None]

    def bad(self, text):
        self.problems.append(text)

    def run(self, fault=None, calls=None, kill_after=None, stdout=None, run_dir=True, fill=0, sleep=0,
            state=None, on_start=None):
        """One `cordon run` of the program; a Run with rc, res, counts."""
        self.runs += 1
        r = Run()
        rd = os.path.join(self.dir, "r%d" % self.runs)
        os.mkdir(rd)
        os.chmod(rd, 0o755)
        r.run_dir = os.path.join(rd, "rundir.d") if run_dir else None
        cfile = os.path.join(rd, "calls.json")
        with open(cfile, "w") as f:
            json.dump({"calls": calls if calls is not None else self.calls, "fill": fill, "sleep": sleep}, f)
        os.chmod(cfile, 0o644)
        cmd = [S.cordon, "run", "--policy", S.blobs["faults"], "--code", os.path.join(HERE, "program.py"),
               "--input", cfile, "--agent", APP, "--state-dir", state or self.state]
        if r.run_dir:
            cmd += ["--run-dir", r.run_dir]
        env = {"PATH": "/usr/bin:/bin", "TMPDIR": S.RUNTMP}
        for k in H.SANITIZER_OPTIONS:
            if k in os.environ:
                env[k] = os.environ[k]
        r.count_file = None
        if fault:
            r.count_file = os.path.join(rd, "counts")
            env.update(LD_PRELOAD=PRELOAD, CORDON_FAULT=fault, CORDON_FAULT_COUNT=r.count_file)
        out = open(stdout, "wb") if stdout else subprocess.PIPE
        t0 = time.monotonic()
        p = subprocess.Popen(cmd, stdout=out, stderr=subprocess.PIPE, env=env, start_new_session=True)
        if stdout:
            out.close()
        timer = None
        if kill_after is not None:
            timer = threading.Timer(kill_after, lambda: p.send_signal(signal.SIGKILL))
            timer.start()
        if on_start:
            on_start(r, p)
        try:
            o, e = p.communicate(timeout=90)
        except subprocess.TimeoutExpired:
            p.kill()
            o, e = p.communicate()
            self.bad("cordon still running after 90 s (killed)")
        if timer:
            timer.cancel()
        r.elapsed = time.monotonic() - t0
        r.rc, r.pid = p.returncode, p.pid
        r.stderr = (e or b"").decode("utf-8", "replace")
        S.scan_sanitizer(self.name, r.stderr)
        r.raw = o or b""
        try:
            r.res = json.loads(r.raw.decode()) if not stdout else None
        except ValueError:
            r.res = None
        if r.count_file and os.path.exists(r.count_file):
            with open(r.count_file, "rb") as f:
                data = f.read()
            r.counts = list(struct.unpack("<%dQ" % (len(data) // 8), data))
        if r.run_dir:
            try:
                r.exec_ids = set(os.listdir(os.path.join(r.run_dir, "executed_programs")))
            except OSError:
                pass
        if isinstance(r.res, dict) and r.res.get("executionId"):
            r.exec_ids.add(r.res["executionId"])
        self.exec_ids |= r.exec_ids
        S.track(r.res if isinstance(r.res, dict) else None)
        return r

    def finish(self, what):
        took = " (%.1fs)" % (time.monotonic() - self.t0)
        S.emit(not self.problems, self.name, ("; ".join(self.problems)[:1500] if self.problems else what) + took)


class Run:
    def __init__(self):
        self.counts = []
        self.exec_ids = set()
        self.res = None
        self.run_dir = None
        self.rc = None

    def status(self):
        return self.res.get("status") if isinstance(self.res, dict) else None

    def answers(self):
        try:
            return json.loads(self.res["stdout"])["answers"]
        except (TypeError, KeyError, ValueError):
            return None

    def program(self):
        try:
            return json.loads(self.res["stdout"])
        except (TypeError, KeyError, ValueError):
            return None

    def audit_lines(self):
        """(whole JSON lines, a broken line) of the run's tool-calls.jsonl."""
        try:
            with open(os.path.join(self.run_dir, "logs", "tool-calls.jsonl"), "rb") as f:
                text = f.read()
        except (OSError, TypeError):
            return None, False
        lines, broken = [], False
        for ln in text.split(b"\n"):
            if ln.strip():
                try:
                    lines.append(json.loads(ln))
                except ValueError:
                    broken = True
        if text and not text.endswith(b"\n"):
            broken = True
        return lines, broken

    def describe(self):
        err = (self.res or {}).get("error") if isinstance(self.res, dict) else None
        return "rc=%s status=%s where=%s" % (self.rc, self.status(),
                                             ((err or {}).get("details") or {}).get("where"))


def code_of(a):
    if a is None:
        return "none"
    if "noAnswer" in a:
        return "noAnswer"
    if a.get("ok"):
        return "ok"
    return (a.get("error") or {}).get("code", "?")


def ledger(case, *args):
    p = subprocess.run([S.cordon, "ledger"] + list(args) + ["--state-dir", case.state], capture_output=True,
                       text=True, env={"PATH": "/usr/bin:/bin"})
    S.scan_sanitizer(case.name, p.stderr)
    return p.returncode, p.stdout + p.stderr


def ledger_records(case):
    """{message id: [states]}, or None when the ledger cannot be listed."""
    rc, out = ledger(case, "list", "--json")
    if rc != 0:
        return None
    try:
        recs = json.loads(out[:out.rindex("]") + 1])
    except ValueError:
        return None
    d = {}
    for r in recs:
        d.setdefault(r.get("messageId"), []).append(r.get("state"))
    return d


def check_result_shape(case, r, fired):
    """Exit code and result agree; never succeeded after a lost record."""
    if r.res is None:
        if r.rc == 0:
            case.bad("stdout is not a JSON result and cordon exited 0")
        else:
            case.notes.append("no JSON result (rc %s)" % r.rc)
        return
    st = r.status()
    if st == "error":
        where = ((r.res.get("error") or {}).get("details") or {}).get("where", "")
        if r.rc != 125 or not where.startswith("exec.harness."):
            case.bad("status error with rc %s where %r" % (r.rc, where))
    elif st == "succeeded":
        if r.rc != 0:
            case.bad("succeeded with rc %s" % r.rc)
        # A call the ledger could not begin is refused (internal_error) and
        # its tool does not run: the program is told, nothing is lost, the
        # run may succeed (docs/ledger.md).  A withheld answer (in_doubt
        # of a call this run made) is a lost record: never succeeded.
        answers = r.answers() or []
        codes = [code_of(a) for a in answers]
        if len(answers) != len(case.calls) or any(c not in ("ok", "internal_error") for c in codes):
            case.bad("succeeded though the calls were answered %s" % codes)
        if r.run_dir:
            lines, broken = r.audit_lines()
            if lines is None or broken or len(lines) != len(case.calls):
                case.bad("succeeded with %s whole audit lines for %d calls%s" % (
                    None if lines is None else len(lines), len(case.calls), " and a broken line" if broken else ""))
        if fired:
            case.notes.append("fault fired, run succeeded")
    else:
        case.bad("status %s (rc %s) for a program that exits 0" % (st, r.rc))
    if not fired and st != "succeeded":
        case.bad("the fault did not fire, yet %s" % r.describe())
    prog = r.program()
    if prog and (prog.get("preloadSeen") or "LD_PRELOAD" in prog.get("env", [])):
        case.bad("the sandbox saw LD_PRELOAD or the shim")


def check_calls(case, r, before):
    """A tool that ran is never reported as not run: a mark made in this
    run must have answered ok or in_doubt (or gone unanswered when the
    supervisor died)."""
    answers = r.answers()
    now = marks()
    for i, (tool, _, mid) in enumerate(case.calls):
        if mid is None:
            continue
        ran = len(now.get(mid, [])) - len(before.get(mid, []))
        if ran > 1 or len(now.get(mid, [])) > 1:
            case.bad("%s ran %d times" % (mid, len(now.get(mid, []))))
        if answers is None or i >= len(answers):
            continue
        c = code_of(answers[i])
        if ran and c not in ("ok", "in_doubt"):
            case.bad("%s ran but was answered %s" % (mid, c))


def check_after(case, killed_ids=(), died=False):
    """The invariants that hold whatever happened: no process left, a retry
    of the same ids runs no tool twice (and sweeps a killed run), each
    executed side effect has exactly one record, the ledger is sound."""
    left = leftover_children()
    if left:
        case.bad("processes left: %s" % left)
    m0 = marks()
    retry = case.run()
    if retry.res is None:
        case.bad("the retry printed no result: rc %s %s" % (retry.rc, retry.stderr[-200:]))
    answers = retry.answers() or []
    m1 = marks()
    for i, (tool, _, mid) in enumerate(case.calls):
        if mid is None:
            continue
        if len(m1.get(mid, [])) > 1:
            case.bad("the retry ran %s again (%d marks)" % (mid, len(m1[mid])))
        c = code_of(answers[i]) if i < len(answers) else "none"
        if m0.get(mid) and not (c == "in_doubt" or (c == "ok" and answers[i].get("replayed"))):
            case.bad("retry of %s (ran before) answered %s, not replayed or in_doubt" % (mid, c))
        if not m0.get(mid) and c not in ("ok", "in_doubt"):
            case.bad("retry of %s (never ran) answered %s" % (mid, c))
    if retry.status() not in ("succeeded", "error"):
        case.bad("the retry ended %s" % retry.describe())
    if retry.status() == "error":
        case.notes.append("retry: %s" % retry.describe())
    for pid in [p for m in case.mids() for p in m1.get(m, [])]:
        if tool_alive(pid):
            case.bad("tool process %d alive" % pid)
    rc, out = ledger(case, "check")
    if rc == 1 and "no ledger in" in out:
        if any(m1.get(m) for m in case.mids()):
            case.bad("side effects ran but there is no ledger")
    elif rc == 1 and "problem:" in out:
        counts_fired["ledger_refused"] += 1
        case.notes.append("ledger check refused: %s" % " | ".join(
            ln for ln in out.splitlines() if ln.startswith("problem"))[:300])
    elif rc != 0:
        case.bad("ledger check exit %s: %s" % (rc, out[-300:]))
    else:
        recs = ledger_records(case)
        if recs is None:
            case.bad("ledger check ok but list failed")
        else:
            for mid in case.mids():
                if m1.get(mid) and len(recs.get(mid, [])) != 1:
                    case.bad("%s ran, has %d ledger records" % (mid, len(recs.get(mid, []))))
        if retry.status() != "succeeded":
            case.bad("ledger sound but the retry ended %s" % retry.describe())
    if S.root:
        stale = H.cgroup_dirs(set(killed_ids)) if killed_ids else []
        if stale:
            case.bad("the next run did not sweep the killed run's cgroups: %s" % stale)
            H.remove_cgroups(stale)
        cg = H.cgroup_dirs(case.exec_ids - set(killed_ids))
        if cg:
            case.bad("cgroups left: %s" % cg)
            H.remove_cgroups(cg)
    with open("/proc/self/mountinfo") as f:
        mounts = [ln.split()[4] for ln in f if case.dir in ln and ln.split()[4] not in case.own_mounts]
    if mounts:
        case.bad("mounts left: %s" % mounts)
    return retry


# --- counting ---------------------------------------------------------------

def count_sites():
    """Calls per site in a clean run (count-only shim), the sweep's range."""
    case = Case("count")
    specs = ",".join("count:%s:0:%s" % (op, path) for _, op, path in SITES)
    r = case.run(fault=specs)
    ok = r.status() == "succeeded" and len(r.counts) >= len(SITES)
    counts = dict(zip([s[0] for s in SITES], r.counts)) if ok else {}
    zero = [k for k, v in counts.items() if v == 0]
    if zero:
        case.bad("sites never reached in a clean run: %s" % zero)
    if not ok:
        case.bad("clean counting run: %s %s" % (r.describe(), r.stderr[-300:]))
    case.finish("clean run %.2fs; calls per site: %s" % (r.elapsed, " ".join("%s=%d" % kv for kv in counts.items())))
    return counts, r.elapsed


def sample(n_max, k):
    """k values of 1..n_max (all of them when the full suite runs)."""
    ns = list(range(1, n_max + 1))
    return ns if not SHORT else sorted(RNG.sample(ns, min(k, len(ns))))


# --- cases ------------------------------------------------------------------

def case_error(site, op, path, n, err):
    case = Case("%s-%s-%d" % (site, err, n))
    before = marks()
    r = case.run(fault="%s:%s:%d:%s" % (err, op, n, path))
    fired = bool(r.counts) and r.counts[0] >= n
    counts_fired["fired" if fired else "not_fired"] += 1
    check_result_shape(case, r, fired)
    if fired and site in MUST_FAIL and r.status() == "succeeded":
        case.bad("the %s fault fired and the run still succeeded" % site)
    check_calls(case, r, before)
    check_after(case)
    case.finish("%s; retry ok, ledger sound, nothing left%s" % (
        r.describe(), "" if fired else " (did not fire: fewer calls this run)"))
    for n_ in case.notes:
        if "refused" in n_:
            S.note("%s: %s" % (case.name, n_))


def case_kill(site, op, path, n):
    case = Case("kill-%s-%d" % (site, n))
    before = marks()
    r = case.run(fault="kill:%s:%d:%s" % (op, n, path))
    fired = r.rc == -signal.SIGKILL
    if not fired and r.status() != "succeeded":
        case.bad("not killed, yet %s" % r.describe())
    check_calls(case, r, before)
    check_after(case, killed_ids=r.exec_ids if fired else ())
    case.finish("%s; no process left, next run swept, retry ran nothing twice, ledger sound" % (
        "killed" if fired else "not reached: " + r.describe()))


def case_timer(i, clean_s):
    """SIGKILL after a random delay: mid setup, call or ledger write."""
    delay = RNG.uniform(0.0, clean_s * 1.3)
    case = Case("timer-%d" % i)
    case.calls = case.calls + [("f.slow_mark", 5, "s-" + case.tag)] if i % 2 else case.calls
    before = marks()
    r = case.run(kill_after=delay)
    killed = r.rc == -signal.SIGKILL
    check_calls(case, r, before)
    if not killed:
        check_result_shape(case, r, False)
    check_after(case, killed_ids=r.exec_ids if killed else ())
    case.finish("SIGKILL at %.3fs (%s); no process left, next run swept, ledger sound" % (
        delay, "killed" if killed else "ended first: " + r.describe()))


def case_slow_kill():
    """SIGKILL while a side effect's tool runs: its pending record must be
    in_doubt for a retry, the tool dead with its supervisor."""
    case = Case("kill-mid-tool")
    mid = "slow-" + case.tag
    case.calls = [("f.slow_mark", 1, mid)]

    def kill_when_marked(r, p):
        H.wait_until(lambda: mid in marks(), 15)
        p.send_signal(signal.SIGKILL)
    r = case.run(on_start=kill_when_marked)
    if r.rc != -signal.SIGKILL:
        case.bad("not killed mid-tool: %s" % r.describe())
    retry = check_after(case, killed_ids=r.exec_ids)
    a = (retry.answers() or [None])[0]
    if code_of(a) != "in_doubt":
        case.bad("the retry of the killed call answered %s, not in_doubt" % code_of(a))
    case.finish("killed mid-tool; retry in_doubt, ran once, tool gone, swept")


def case_dev_full():
    """The result cannot be written (stdout on /dev/full): never exit 0,
    and the kept result.json still says how the run ended."""
    case = Case("stdout-dev-full")
    r = case.run(stdout="/dev/full")
    if r.rc in (0, None) or r.rc != 125:
        case.bad("stdout on /dev/full: exit %s (want 125)" % r.rc)
    try:
        with open(os.path.join(r.run_dir, "result.json")) as f:
            st = json.load(f).get("status")
        if st != "succeeded":
            case.bad("result.json says %s" % st)
    except (OSError, ValueError) as e:
        case.bad("result.json: %s" % e)
    check_after(case)
    case.finish("exit %s, result.json kept" % r.rc)


def case_tmpfs():
    """Run and state directories on a small tmpfs, filled up while the
    program waits; then it makes 20 calls.  Never succeeded with audit
    lines missing; every side effect recorded once; the retry (space
    given back) runs nothing twice."""
    if not S.root:
        S.run_only("tmpfs-full", "mount needs root")
        return
    case = Case("tmpfs-full")
    mnt = os.path.join(case.dir, "mnt")
    os.mkdir(mnt)
    p = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m,mode=0755", "tmpfs", mnt], capture_output=True,
                       text=True)
    if p.returncode != 0:
        case.bad("mount: %s" % p.stderr)
        return case.finish("")
    case.own_mounts.append(mnt)
    try:
        case.state = os.path.join(mnt, "state.d")
        case.calls = [("f.mark", i, "t%d-%s" % (i, case.tag)) for i in range(20)]
        # the ledger is made first, so it is the disk filling up that is tested
        case.run(calls=[("f.mark", 0, "pre-" + case.tag)])
        filler = os.path.join(mnt, "fill")

        def fill(r, proc):
            H.wait_until(lambda: os.path.exists(os.path.join(r.run_dir, "result.json.tmp")) or
                         proc.poll() is not None, 10)
            with open(filler, "wb") as f:
                try:
                    while True:
                        f.write(b"\0" * 65536)
                        f.flush()
                except OSError:
                    pass
        rd_parent = os.path.join(mnt, "runs")
        os.mkdir(rd_parent)
        before = marks()
        r = run_in(case, rd_parent, fill)
        check_result_shape(case, r, True)
        check_calls(case, r, before)
        lines, broken = r.audit_lines()
        if r.status() == "succeeded" and not lines:
            case.bad("succeeded with an empty audit file")
        os.unlink(filler)
        check_after(case)
        case.finish("%s; %s audit lines for 20 calls; answers %s" % (
            r.describe(), None if lines is None else len(lines),
            sorted({code_of(a) for a in r.answers() or []})))
    finally:
        subprocess.run(["umount", "-l", mnt])


def run_in(case, parent, on_start):
    """case.run with the run directory under parent (the tmpfs)."""
    orig = case.dir
    case.dir = parent
    try:
        return case.run(on_start=on_start, sleep=1.0, fill=6 << 20)
    finally:
        case.dir = orig


def case_preload():
    """The shim is preloaded into cordon only: the program's environment
    and its mappings do not show it."""
    case = Case("preload-not-in-sandbox")
    r = case.run(fault="count:write:0")
    prog = r.program() or {}
    if not r.counts or r.counts[0] == 0:
        case.bad("the shim counted nothing: it was not loaded into cordon (control)")
    if prog.get("preloadSeen") is not False or "LD_PRELOAD" in prog.get("env", ["LD_PRELOAD"]):
        case.bad("the sandbox saw the shim: %s" % prog)
    check_after(case)
    case.finish("cordon counted %s writes; the sandbox's env %s" % (r.counts[:1], prog.get("env")))


# --- cordon serve -----------------------------------------------------------

class Serve:
    def __init__(self, case, blob, fault=None):
        d = case.dir
        self.case = case
        self.pdir = os.path.join(d, "policies")
        os.makedirs(self.pdir, exist_ok=True)
        self.pub, sec = os.path.join(d, "key.pub"), os.path.join(d, "key.sec")
        if not os.path.exists(self.pub):
            subprocess.run([S.cordonc, "keygen", "-p", self.pub, "-s", sec], check=True, capture_output=True)
            dst = os.path.join(self.pdir, "faults.cpol")
            shutil.copy(blob, dst)
            subprocess.run([S.cordonc, "sign", "-s", sec, dst], check=True, capture_output=True)
        self.sock = os.path.join(d, "serve.sock")
        self.work = os.path.join(d, "work")
        self.log = open(os.path.join(d, "serve.log"), "ab")
        env = {"PATH": "/usr/bin:/bin", "TMPDIR": S.RUNTMP}
        for k in H.SANITIZER_OPTIONS:
            if k in os.environ:
                env[k] = os.environ[k]
        self.arm = os.path.join(d, "arm")
        self.count_file = os.path.join(d, "serve-counts")
        if fault:
            env.update(LD_PRELOAD=PRELOAD, CORDON_FAULT=fault, CORDON_FAULT_ARM=self.arm,
                       CORDON_FAULT_COUNT=self.count_file)
        SERVERS.append(self)
        self.p = subprocess.Popen([S.cordon, "serve", "--policies", self.pdir, "--trusted-key", self.pub,
                                   "--socket", self.sock, "--pool", "1", "--work-dir", self.work,
                                   "--state-dir", case.state], stdin=subprocess.DEVNULL, stdout=self.log,
                                  stderr=subprocess.STDOUT, env=env, start_new_session=True)
        self.ready = H.wait_until(lambda: self.p.poll() is not None or self.get("/v1/ready")[0] == 200, 60, 0.1) \
            and self.p.poll() is None
        if not self.ready and self.p.poll() is None:
            self.p.kill()       # not ready in a minute: no case for it, and none left behind
            self.p.wait()

    def request(self, method, path, body=None, timeout=60):
        c = H.UnixHTTPConnection(self.sock, timeout)
        try:
            c.request(method, path, body=None if body is None else json.dumps(body).encode(),
                      headers={"Content-Type": "application/json"})
            r = c.getresponse()
            return r.status, r.read()
        except OSError as e:
            return 0, str(e).encode()
        finally:
            c.close()

    def get(self, path):
        return self.request("GET", path, timeout=5)

    def counts(self):
        try:
            with open(self.count_file, "rb") as f:
                data = f.read()
            return list(struct.unpack("<%dQ" % (len(data) // 8), data))
        except OSError:
            return []

    def stop(self, case):
        """SIGTERM: exit 0, an empty work directory, nothing left."""
        self.p.send_signal(signal.SIGTERM)
        try:
            rc = self.p.wait(30)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()
            rc = "none (killed after 30 s)"
        if rc != 0:
            case.bad("serve's SIGTERM: exit %s" % rc)
        try:
            kept = os.listdir(self.work)
        except OSError:
            kept = []
        if kept:
            case.bad("serve's work directory keeps %s after a clean stop" % kept[:5])
        self.log.close()
        with open(self.log.name, "rb") as f:
            S.scan_sanitizer(case.name, f.read().decode("utf-8", "replace"))

    def answers(self, calls):
        """The answers of one execution making calls: (http status, result,
        answers or None)."""
        st, res = self.execute(calls)
        try:
            return st, res, json.loads(res["stdout"])["answers"]
        except (TypeError, KeyError, ValueError):
            return st, res, None

    def execute(self, calls):
        with open(os.path.join(HERE, "program.py")) as f:
            code = f.read()
        body = {"app": APP, "agent": APP, "code": code,
                "inputs": [{"name": "calls.json", "content": json.dumps({"calls": calls})}]}
        st, raw = self.request("POST", "/v1/executions", body, timeout=60)
        try:
            return st, json.loads(raw)
        except ValueError:
            return st, None


def case_serve_kill():
    """cordon serve SIGKILLed while a side effect's tool runs; restarted on
    the same work and state directories: nothing left running, the killed
    server's cgroups and run directories swept, the call in_doubt."""
    case = Case("serve-kill-mid-tool")
    mid = "serve-" + case.tag
    srv = Serve(case, S.blobs["faults"])
    if not srv.ready:
        case.bad("cordon serve did not start (or was not ready in 60 s)")
        return case.finish("")
    old_pid = srv.p.pid
    th = threading.Thread(target=lambda: srv.execute([("f.slow_mark", 1, mid)]), daemon=True)
    th.start()
    if not H.wait_until(lambda: mid in marks(), 20):
        case.bad("the tool never ran")
    before = H.descendants(old_pid)
    srv.p.send_signal(signal.SIGKILL)
    srv.p.wait()
    th.join(10)
    left = leftover_children()
    if left:
        case.bad("processes left after serve's SIGKILL: %s (of %d)" % (left, len(before)))
    srv2 = Serve(case, S.blobs["faults"])
    if not srv2.ready:
        case.bad("restarted serve not ready")
    if S.root:
        stale = H.cgroup_dirs(pids=[old_pid])
        if stale:
            case.bad("restart did not sweep the killed server's cgroups: %s" % stale)
            H.remove_cgroups(stale)
    st, res = srv2.execute([("f.slow_mark", 1, mid)])
    try:
        a = json.loads(res["stdout"])["answers"][0]
    except (TypeError, KeyError, ValueError, IndexError):
        a = None
    if code_of(a) != "in_doubt":
        case.bad("the retry through serve answered %s (http %s)" % (code_of(a), st))
    if len(marks().get(mid, [])) != 1:
        case.bad("%s ran %d times" % (mid, len(marks().get(mid, []))))
    srv2.stop(case)
    left = leftover_children()
    if left:
        case.bad("processes left: %s" % left)
    rc, out = ledger(case, "check")
    if rc != 0:
        case.bad("ledger check exit %s: %s" % (rc, out[-300:]))
    case.finish("killed mid-tool; restart swept, retry in_doubt, ran once, ledger sound")


def serve_count():
    """Calls per serve site in one execution of the program's calls."""
    case = Case("serve-count")
    srv = Serve(case, S.blobs["faults"], fault=",".join("count:%s:0:%s" % (op, path) for _, op, path in SERVE_SITES))
    counts = {}
    if not srv.ready:
        case.bad("cordon serve did not start (or was not ready in 60 s)")
    else:
        open(srv.arm, "w").close()
        st, res, answers = srv.answers(case.calls)
        os.unlink(srv.arm)
        counts = dict(zip([x[0] for x in SERVE_SITES], srv.counts()))
        if st != 200 or (res or {}).get("status") != "succeeded":
            case.bad("clean execution: http %s %s" % (st, (res or {}).get("status")))
        srv.stop(case)
    zero = [k for k, v in counts.items() if v == 0]
    if zero:
        case.bad("serve sites never reached: %s" % zero)
    case.finish("calls per site in one execution: %s" % " ".join("%s=%d" % kv for kv in counts.items()))
    return counts


def case_serve_site(site, op, path, n, action):
    """cordon serve with the Nth call of a site failed (or SIGKILLed) in
    one execution: a failed record makes that execution an error or
    refuses the call, the server goes on; a killed server is restarted on
    the same directories and sweeps.  Either way the retry runs nothing
    twice and the ledger is sound."""
    case = Case("serve-%s-%s-%d" % (site, action, n))
    srv = Serve(case, S.blobs["faults"], fault="%s:%s:%d:%s" % (action, op, n, path))
    if not srv.ready:
        case.bad("cordon serve did not start (or was not ready in 60 s)")
        return case.finish("")
    old_pid = srv.p.pid
    open(srv.arm, "w").close()
    before = marks()
    st, res, answers = srv.answers(case.calls)
    os.unlink(srv.arm)
    if action == "kill":
        srv.p.wait(10) if H.wait_until(lambda: srv.p.poll() is not None, 10) else None
        died = srv.p.poll() is not None
        if not died:
            case.notes.append("not reached")
            if st != 200:
                case.bad("not killed, yet http %s" % st)
        else:
            left = leftover_children()
            if left:
                case.bad("processes left after serve's SIGKILL: %s" % left)
            srv.log.close()
            srv = Serve(case, S.blobs["faults"])
            if S.root:
                stale = H.cgroup_dirs(pids=[old_pid])
                if stale:
                    case.bad("restart did not sweep the killed server's cgroups: %s" % stale)
                    H.remove_cgroups(stale)
        what = "killed" if died else "not reached"
    else:
        what = "http %s status %s" % (st, (res or {}).get("status"))
        fake = Run()
        fake.res, fake.rc = res, (125 if (res or {}).get("status") == "error" else 0)
        fired = bool(srv.counts()) and srv.counts()[0] >= n
        if st != 200 or res is None:
            case.bad("the execution's answer: http %s" % st)
        else:
            check_result_shape(case, fake, fired)
        if srv.p.poll() is not None:
            case.bad("the server died (status %s) of a failed write" % srv.p.returncode)
            srv = Serve(case, S.blobs["faults"])
    fake = Run()
    fake.res = {"stdout": json.dumps({"answers": answers})} if answers is not None else None
    check_calls(case, fake, before)
    m0 = marks()
    st, res, answers = srv.answers(case.calls)
    m1 = marks()
    for i, (tool, _, mid) in enumerate(case.calls):
        if mid is None:
            continue
        if len(m1.get(mid, [])) > 1:
            case.bad("the retry ran %s again" % mid)
        c = code_of(answers[i]) if answers and i < len(answers) else "none"
        if m0.get(mid) and not (c == "in_doubt" or (c == "ok" and answers[i].get("replayed"))):
            case.bad("retry of %s (ran before) answered %s" % (mid, c))
        if not m0.get(mid) and c not in ("ok", "in_doubt"):
            case.bad("retry of %s (never ran) answered %s" % (mid, c))
    srv.stop(case)
    left = leftover_children()
    if left:
        case.bad("processes left: %s" % left)
    rc, out = ledger(case, "check")
    if rc != 0:
        case.bad("ledger check exit %s: %s" % (rc, out[-300:]))
    case.finish("%s; retry ran nothing twice, server stopped clean, ledger sound" % what)


# --- main -------------------------------------------------------------------

def wanted(name):
    return not ONLY or name.startswith(ONLY) or ONLY in name


def guard(name, fn, *args):
    """A case that breaks off (a bug of the driver, an unexpected answer)
    is one FAIL line, and leaves no server running."""
    try:
        return fn(*args)
    except Exception:
        import traceback
        S.emit(False, name, "the case broke off: %s" % traceback.format_exc()[-600:])
        for srv in SERVERS:
            if srv.p.poll() is None:
                srv.p.kill()
                srv.p.wait()
        return None
    finally:
        SERVERS.clear()


def main():
    subreaper()
    os.mkdir(DATA)
    os.chmod(DATA, 0o777)
    tools = os.path.join(S.W, "tools.yaml")
    with open(os.path.join(HERE, "tools.yaml.in")) as f:
        text = f.read().replace("@TOOLS@", os.path.join(HERE, "tools")).replace("@DATA@", DATA)
    with open(tools, "w") as f:
        f.write(text)
    S.compile("faults", os.path.join(HERE, "app.yaml"), [tools])
    print("note %s FAULTS_SEED=%d%s" % (S.mode, SEED, " FAULTS_SHORT=1" if SHORT else ""), flush=True)
    counts, clean_s = count_sites()
    if wanted("preload"):
        guard("preload-not-in-sandbox", case_preload)
    # Rootless: the kill cases always, the errors in the full suite only
    # at one call of each site (the error paths do not depend on the uid).
    for site, op, path in SITES:
        n_max = counts.get(site, 0)
        ns = sample(n_max, 1)
        if S.root:
            err_ns = ns
        else:
            err_ns = [RNG.randrange(1, n_max + 1)] if n_max and not SHORT else []
        for n in ns:
            if n in err_ns:
                if SHORT:
                    errs = [RNG.choice(ERRNOS)]
                elif n_max > ALL_ERRNOS_UPTO or not S.root:
                    errs = [ERRNOS[n % len(ERRNOS)]]
                else:
                    errs = list(ERRNOS)
                for err in errs:
                    if wanted("%s-%s-%d" % (site, err, n)):
                        guard("%s-%s-%d" % (site, err, n), case_error, site, op, path, n, err)
            if wanted("kill-%s-%d" % (site, n)):
                guard("kill-%s-%d" % (site, n), case_kill, site, op, path, n)
    for i in range(4 if SHORT else 16):
        if wanted("timer-%d" % i):
            guard("timer-%d" % i, case_timer, i, max(clean_s, 0.3))
    if wanted("kill-mid-tool"):
        guard("kill-mid-tool", case_slow_kill)
    if wanted("stdout-dev-full"):
        guard("stdout-dev-full", case_dev_full)
    if wanted("tmpfs-full"):
        guard("tmpfs-full", case_tmpfs)
    if TSAN_BUILD and (not ONLY or "serve" in ONLY):
        S.run_only("serve-*", "the TSan build's cordon serve loses its sandboxes at their init (docs/testing.md)")
    elif wanted("serve-kill-mid-tool"):
        guard("serve-kill-mid-tool", case_serve_kill)
    if not TSAN_BUILD and (not ONLY or "serve" in ONLY):
        scounts = guard("serve-count", serve_count) or {}
        for site, op, path in SERVE_SITES:
            n_max = scounts.get(site, 0)
            for n in sample(n_max, 1) if SHORT else sorted(RNG.sample(range(1, n_max + 1), min(3, n_max))):
                for action in (RNG.choice(ERRNOS), "kill"):
                    if wanted("serve-%s-%s-%d" % (site, action, n)):
                        guard("serve-%s-%s-%d" % (site, action, n), case_serve_site, site, op, path, n, action)
    S.check_sanitizer()
    S.note("faults fired %(fired)d, not reached %(not_fired)d, ledger check refusals %(ledger_refused)d" % counts_fired)
    return S.finish()


if __name__ == "__main__":
    sys.exit(main())
