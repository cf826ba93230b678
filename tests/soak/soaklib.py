# SPDX-License-Identifier: Apache-2.0
# soaklib.py - the soak's parts that are not its setup (soak.py): the
# seeded program mix, what each program deserves, the probes of processes,
# cgroups, ledger locks and files, and the checks and summary after the load.
import collections
import fcntl
import json
import os
import re
import sqlite3
import struct
import subprocess
import time

import harness

# kind -> weight in the mix.  Each is a file of programs/.
KINDS = collections.OrderedDict([
    ("ok", 18), ("exit", 8), ("raise", 8), ("timeout", 3), ("memory", 5), ("pids", 5), ("workspace", 6),
    ("tools", 25),
])
LANES = ("run-root", "run-rootless", "serve")
ROOTLESS_P = 0.25       # of the run workers' jobs, the share run as cordon-test
SERVE_SHARE = 0.375     # of the workers, those that send to serve (12 of 32): a constant load on it
MAX_CALLS = 20
SAMPLE_S = 2.0          # serve's fds and RSS are sampled every SAMPLE_S seconds
REPEAT_P = 0.15         # a call repeats an id already used (in this run or an earlier job of its stream)
HOSTID_FIRST, HOSTID_COUNT = 0x70000000, 0x01000000   # runtime/hostid.h's default range
LEDGER_OF = {"run-root": "root", "serve": "root", "run-rootless": "rootless"}


class Job:
    def __init__(self, n, lane, kind, mids):
        self.n, self.lane, self.kind, self.mids = n, lane, kind, mids


def serve_workers(concurrency):
    return max(1, round(concurrency * SERVE_SHARE))


class JobSource:
    """Two streams of jobs, each from its own RNG seeded from the seed:
    `serve` for the workers that send to serve, `run` for the others
    (`cordon run`, rootless for a quarter of them).  The k-th job of a
    stream is the same for a given seed whatever the timing.  Serve's
    workers are a fixed number, so the load on it is the same from the
    first sample to the last: its fds and RSS are compared at one load
    (with the lane drawn per job, workers piled up in the slower lane as
    the soak went on).  A repeated id is one its stream issued before, not
    necessarily answered yet: the ledger must make one side effect of it
    either way."""

    def __init__(self, seed, seconds, lock):
        import random
        self.seed, self.end, self.lock = seed, time.monotonic() + seconds, lock
        self.streams = {name: {"rng": random.Random("%d-%s" % (seed, name)), "k": 0,
                               "issued": {"root": [], "rootless": []}, "seen": set()}
                        for name in ("serve", "run")}
        self.n = 0

    def next(self, stream):
        with self.lock:
            if time.monotonic() >= self.end:
                return None
            st = self.streams[stream]
            st["k"] += 1
            self.n += 1
            r = st["rng"]
            if stream == "serve":
                lane = "serve"
            else:
                lane = "run-rootless" if r.random() < ROOTLESS_P else "run-root"
            kind = r.choices(list(KINDS), weights=list(KINDS.values()))[0]
            tag = "%s%d" % (stream[0], st["k"])
            mids, issued = [], st["issued"][LEDGER_OF[lane]]
            if kind == "tools":
                for i in range(r.randint(1, MAX_CALLS)):
                    if r.random() < REPEAT_P and (mids or issued):
                        pool = mids if (mids and (not issued or r.random() < 0.5)) else issued
                        mids.append(r.choice(pool))
                    else:
                        mids.append("m%d-%s-%d" % (self.seed, tag, i))
                for m in mids:
                    if m not in st["seen"]:
                        st["seen"].add(m)
                        issued.append(m)
            return Job(tag, lane, kind, mids)


def app_of(job):
    """The tool caller runs under the app with the long timeout."""
    return "soak-tools" if job.kind == "tools" else "soak"


def expected(kind, enforcement):
    """(status, error code) a program of this kind deserves under the
    mechanisms the result names: a memory or pids breach is the kernel's
    limit_exceeded under a cgroup, the program's own failure under an
    rlimit (MemoryError, EAGAIN from fork)."""
    enf = enforcement if isinstance(enforcement, dict) else {}
    if kind in ("ok", "tools"):
        return "succeeded", None
    if kind in ("exit", "raise"):
        return "failed", "program_failed"
    if kind == "timeout":
        return "timed_out", "timeout"
    if kind == "workspace":
        return "limit_exceeded", "workspace_limit"
    mech = enf.get("memory" if kind == "memory" else "pids", "")
    if mech.startswith("cgroup"):
        return "limit_exceeded", "%s_limit" % kind
    return "failed", "program_failed"


# --- probes ---------------------------------------------------------------

def proc_sample(pid):
    """(open fds, RSS KiB, threads, children) of pid, or None."""
    try:
        fds = len(os.listdir("/proc/%d/fd" % pid))
        with open("/proc/%d/status" % pid) as f:
            st = dict(ln.split(":", 1) for ln in f if ":" in ln)
        rss = int(st["VmRSS"].split()[0])
        threads = int(st["Threads"])
    except (OSError, KeyError, ValueError):
        return None
    return fds, rss, threads, len(harness.child_pids(pid))


def fd_targets(pid):
    """Counter of what pid's fds point to: sockets and pipes by kind, paths
    with their ids (hex, numbers) as #, so that one warm sandbox's files
    count as another's."""
    c = collections.Counter()
    try:
        for fd in os.listdir("/proc/%d/fd" % pid):
            try:
                t = os.readlink("/proc/%d/fd/%s" % (pid, fd))
            except OSError:
                continue
            c[t.split(":[", 1)[0] + ":" if ":[" in t else re.sub(r"[0-9a-f]{16,}|[0-9]+", "#", t)] += 1
    except OSError:
        pass
    return c


def rss_by_mapping(pid):
    """RSS KiB of pid by kind of mapping: [heap], [stack], anonymous, files."""
    c = collections.Counter()
    name = None
    try:
        with open("/proc/%d/smaps" % pid) as f:
            for ln in f:
                parts = ln.split()
                if re.match(r"^[0-9a-f]+-[0-9a-f]+$", parts[0]):
                    name = parts[5] if len(parts) > 5 else "anonymous"
                    name = name if name.startswith("[") or name == "anonymous" else "files"
                elif parts[0] == "Rss:":
                    c[name] += int(parts[1])
    except (OSError, IndexError, ValueError):
        pass
    return dict(c)


def environ_has(pid, needle):
    try:
        with open("/proc/%d/environ" % pid, "rb") as f:
            return needle in f.read().split(b"\0")
    except OSError:
        return False


def cmdline_has(pid, needle):
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            return needle in f.read()
    except OSError:
        return False


def all_pids():
    return [int(d) for d in os.listdir("/proc") if d.isdigit()]


def host_snapshot():
    """What the host has before the soak: mounts, cgroups, /run/cordon."""
    try:
        run_cordon = set(os.listdir("/run/cordon"))
    except OSError:
        run_cordon = set()
    return {"mounts": mount_points(), "cgroups": set(harness.cgroup_dirs()), "run_cordon": run_cordon}


def mount_points():
    with open("/proc/self/mountinfo") as f:
        return {ln.split()[4] for ln in f}


def sockets_under(top, allowed=()):
    found = []
    for root, dirs, files in os.walk(top):
        for n in dirs + files:
            p = os.path.join(root, n)
            try:
                if os.lstat(p).st_mode & 0o170000 == 0o140000 and p not in allowed:
                    found.append(p)
            except OSError:
                pass
    return found


# SQLite's WAL locks are POSIX byte locks on the -shm file: byte 120 is
# the write lock, 121 checkpoint, 122 recovery, 123-127 the readers
# (sqlite3.c, WALINDEX_LOCK_OFFSET).  F_GETLK names a process holding one.
SHM_LOCKS = {120: "write", 121: "checkpoint", 122: "recover"}
FLOCK = "hhqqi4x"


def shm_holders(shm, first=120, n=8):
    """[(byte, pid)] of the locks held on bytes first..first+n-1."""
    try:
        fd = os.open(shm, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW)
    except OSError:
        return []
    held = []
    try:
        for b in range(first, first + n):
            req = struct.pack(FLOCK, fcntl.F_WRLCK, os.SEEK_SET, b, 1, 0)
            typ, _, _, _, pid = struct.unpack(FLOCK, fcntl.fcntl(fd, fcntl.F_GETLK, req))
            if typ != fcntl.F_UNLCK:
                held.append((b, pid))
    finally:
        os.close(fd)
    return held


class LockWatch:
    """Samples who holds the ledger's write lock: the number of samples
    seen held by serve and by `cordon run` supervisors, and the longest
    run of consecutive samples by one holder (a lower bound of a hold)."""

    def __init__(self, shm, serve_pid):
        self.shm, self.serve_pid = shm, serve_pid
        self.samples = 0
        self.held = collections.Counter()
        self.longest = {}           # holder kind -> (seconds, pid)
        self.cur = None             # (pid, since)

    def sample(self):
        self.samples += 1
        h = [pid for b, pid in shm_holders(self.shm, 120, 1)]
        now = time.monotonic()
        pid = h[0] if h else None
        if pid is not None:
            self.held["serve" if pid == self.serve_pid else "run"] += 1
        if self.cur and self.cur[0] != pid:
            kind = "serve" if self.cur[0] == self.serve_pid else "run"
            span = now - self.cur[1]
            if span > self.longest.get(kind, (0, None))[0]:
                self.longest[kind] = (span, self.cur[0])
            self.cur = None
        if pid is not None and not self.cur:
            self.cur = (pid, now)

    def text(self, seconds):
        lg = ", ".join("%s %.0f ms (pid %d)" % (k, v[0] * 1000, v[1]) for k, v in sorted(self.longest.items()))
        return ("write lock held in %d of %d samples (one every %.0f ms: serve %d, cordon run %d); longest stretch "
                "of samples finding one process holding it: %s" % (
                    sum(self.held.values()), self.samples, 1000.0 * seconds / max(1, self.samples),
                    self.held["serve"], self.held["run"], lg or "none"))


# --- checks after the load ------------------------------------------------

def answers_of(rec):
    try:
        a = json.loads(rec["res"].get("stdout") or "")
        return a if isinstance(a, list) else None
    except ValueError:
        return None


def check_results(S):
    """Each result is what its program deserves; never `error`; every tool
    call answered, each message id with one answer (the first call's)."""
    wrong, errors, calls_bad = [], [], []
    S.stats = {"lane": collections.Counter(), "kind": collections.Counter(), "status": collections.Counter(),
               "calls": 0, "replayed": 0, "answer_errors": collections.Counter(), "retries429": 0}
    S.nonces = {"root": collections.defaultdict(set), "rootless": collections.defaultdict(set)}
    S.called = {"root": set(), "rootless": set()}     # every id a program was given to call
    S.host_ids = set()
    S.exec_ids = set()
    for rec in S.records:
        job, res = rec["job"], rec["res"]
        st = S.stats
        st["lane"][job.lane] += 1
        st["kind"][job.kind] += 1
        st["status"][rec["status"] or "none"] += 1
        st["retries429"] += rec.get("retries", 0)
        if res.get("executionId"):
            S.exec_ids.add(res["executionId"])
        m = harness.HOST_IDS_RE.search(str((res.get("enforcement") or {}).get("identity", "")))
        if m and job.lane != "run-rootless":
            S.host_ids |= {int(m.group(1)), int(m.group(2))}
        where = "job %s %s %s" % (job.n, job.lane, job.kind)
        if rec["harness"] or rec["status"] == "error":
            errors.append("%s: %s" % (where, rec["harness"] or json.dumps(res.get("error"))[:300]))
            continue
        want = expected(job.kind, res.get("enforcement"))
        got = (rec["status"], (res.get("error") or {}).get("code"))
        if got != want:
            wrong.append("%s: %s/%s, deserved %s/%s; stderr %s" % (where, got[0], got[1], want[0], want[1],
                                                                   (res.get("stderr") or "")[-160:]))
        if job.kind != "tools":
            continue
        S.called[LEDGER_OF[job.lane]].update(job.mids)
        ans = answers_of(rec)
        if ans is None or len(ans) != len(job.mids):
            calls_bad.append("%s: %d calls, answers %s" % (where, len(job.mids), (res.get("stdout") or "")[:200]))
            continue
        st["calls"] += len(ans)
        st["replayed"] += sum(1 for c in res.get("toolCalls") or [] if c.get("replayed"))
        for mid, a in zip(job.mids, ans):
            if not isinstance(a, dict) or "error" in a or a.get("mid") != mid:
                code = a.get("error") if isinstance(a, dict) else "?"
                st["answer_errors"][code] += 1
                calls_bad.append("%s: message id %s answered %s" % (where, mid, json.dumps(a)[:240]))
            else:
                S.nonces[LEDGER_OF[job.lane]][mid].add(a["nonce"])
    S.emit(not errors, "never_error", "%d harness errors or status error: %s" % (len(errors), " | ".join(errors[:10]))
           if errors else "no execution ended as error, none without a result (%d executions)" % len(S.records))
    S.emit(not wrong, "statuses", "%d wrong: %s" % (len(wrong), " | ".join(wrong[:10])) if wrong else
           "every status and error code is what its program deserves: %s" % dict(S.stats["status"]))
    split = [m for L in S.nonces.values() for m, n in L.items() if len(n) != 1]
    S.emit(not calls_bad and not split, "tool_answers",
           "%d bad answers (%s): %s; ids answered differently: %s" % (
               len(calls_bad), dict(S.stats["answer_errors"]), " | ".join(calls_bad[:8]), split[:8])
           if calls_bad or split else
           "%d calls answered, %d replays served; every message id had one answer (the first call's)" % (
               S.stats["calls"], S.stats["replayed"]))


def serve_tree(pid):
    return set(harness.descendants(pid))


def check_after(S, before, pool_total):
    """The leftover invariants, flatness and the ledgers, once every
    execution has ended and serve's pools have refilled."""
    ready = harness.wait_until(lambda: S.ready()[0], 60, 0.2)
    time.sleep(S.RETAIN + 2)    # serve's retained runs leave its work dir
    if not ready:
        S.note("serve's pools were not full 60 s after the load: %s" % S.ready()[1])
    mark = ("SOAK_MARK=" + S.mark).encode()
    tree = serve_tree(S.serve.pid)
    me = os.getpid()
    marked = [p for p in all_pids() if p != me and p not in tree and p != S.serve.pid and harness.alive(p)
              and (environ_has(p, mark) or cmdline_has(p, S.W.encode()))]
    kids = harness.child_pids(S.serve.pid)
    in_range = [p for p in all_pids() if p not in tree and
                HOSTID_FIRST <= (harness.host_uid(p) or 0) < HOSTID_FIRST + HOSTID_COUNT]
    if in_range:
        S.note("processes in the host-id range not of this soak (another engineer's runs?): %s" % in_range[:10])
    S.emit(not marked and len(kids) == pool_total, "processes",
           "left: %s; serve's children %d (its pools hold %s)" % (marked[:10], len(kids), pool_total)
           if marked or len(kids) != pool_total else
           "no process of any run left (by the soak's mark in the environment, the tool's path); serve's "
           "children %d = its pools' %d warm sandboxes" % (len(kids), pool_total))

    new = mount_points() - before["mounts"]
    ours = sorted(m for m in new if m.startswith(S.W) or m.startswith("/run/cordon") or "cordon-run." in m)
    others = sorted(m for m in new if "cordon" in m and m not in ours)
    if others:
        S.note("new cordon mounts outside this soak's directories (another engineer's?): %s" % others[:6])
    S.emit(not ours, "mounts", "left: %s" % ours[:10] if ours else
           "no new mount in /proc/self/mountinfo under the soak's directories, /run/cordon or a cordon-run.* "
           "directory")

    cg_new = [d for d in harness.cgroup_dirs() if d not in before["cgroups"]]
    ours = {str(p) for p in S.supervisors} | S.exec_ids
    cg_runs = [d for d in cg_new if set(os.path.basename(d).split("-")[1:]) & ours
               and os.path.basename(d).split("-")[1] != str(S.serve.pid)]
    cg_serve = [d for d in cg_new if os.path.basename(d).split("-")[1:2] == [str(S.serve.pid)]]
    serve_ids = {os.path.basename(d).split("-")[2] for d in cg_serve if len(os.path.basename(d).split("-")) > 2}
    foreign = [d for d in cg_new if d not in cg_runs and d not in cg_serve]
    if foreign:
        S.note("cordon-* cgroups of other supervisors (another engineer's runs?): %s" % foreign[:6])
    S.emit(not cg_runs and len(serve_ids) <= pool_total, "cgroups",
           "runs' left: %s; serve's %d sandboxes with cgroups for %s warm" % (cg_runs[:6], len(serve_ids), pool_total)
           if cg_runs or len(serve_ids) > pool_total else
           "no cgroup of a run left in the v1 memory/pids and v2 trees; serve's cgroups are its %d warm "
           "sandboxes' (%d dirs)" % (len(serve_ids), len(cg_serve)))

    bad = []
    for label, d in (("root TMPDIR", S.ledgers["root"]["tmp"]), ("jobs", S.path("jobs"))):
        left = os.listdir(d)
        if left:
            bad.append("%s holds %s" % (label, left[:5]))
    rl_left = [n for n in os.listdir(S.ledgers["rootless"]["tmp"]) if n not in ("state", "effects.log")]
    if rl_left:
        bad.append("rootless TMPDIR holds %s" % rl_left[:5])
    try:
        run_new = set(os.listdir("/run/cordon")) - before["run_cordon"]
    except OSError:
        run_new = set()
    if run_new:
        bad.append("/run/cordon has new entries %s" % sorted(run_new)[:5])
    work = os.listdir(S.serve_work) if os.path.isdir(S.serve_work) else []
    runs_in_work = [n for n in work if not n.startswith(".")]
    if len(runs_in_work) > pool_total:
        bad.append("serve's work dir holds %d entries for %d warm sandboxes: %s" % (
            len(runs_in_work), pool_total, runs_in_work[:6]))
    socks = sockets_under(S.W, allowed=(S.sock,))
    if socks:
        bad.append("sockets left: %s" % socks[:6])
    stale = [u for u in sorted(S.host_ids) if harness.lock_state(str(u)) == "stale"]
    if stale:
        bad.append("host-id lock files held by nobody: %s" % stale[:6])
    S.emit(not bad, "files", "; ".join(bad) if bad else
           "no temporary run directory or socket left (TMPDIRs, /run/cordon, serve's work dir holds %d for %d "
           "warm), no host-id lock file of %d leased ids left" % (len(runs_in_work), pool_total, len(S.host_ids)))

    check_ledgers(S)
    check_flat(S)


def ledger_rows(state):
    """{message id: (state, exec id)} of soak.effect, read-only."""
    db = os.path.join(state, "ledger.sqlite3")
    c = sqlite3.connect("file:%s?mode=ro" % db, uri=True, timeout=10)
    try:
        return {m: (s, e) for m, s, e in c.execute(
            "SELECT message_id, state, exec_id FROM replay WHERE tool = 'soak.effect'")}
    finally:
        c.close()


def effect_lines(path):
    try:
        with open(path) as f:
            return [ln.split() for ln in f if ln.strip()]
    except FileNotFoundError:
        return []


def check_ledgers(S):
    S.ledger_stats = {}
    for name, L in S.ledgers.items():
        held = [(SHM_LOCKS.get(b, "read"), pid) for b, pid in shm_holders(L["state"] + "/ledger.sqlite3-shm")]
        rootless = name == "rootless"
        who = {"user": S.pw.pw_uid, "group": S.pw.pw_gid, "extra_groups": []} if rootless else {}
        p = subprocess.run([S.cordon, "ledger", "check", "--state-dir", L["state"]], capture_output=True,
                           text=True, env=S.env(L["tmp"], rootless), **who)
        ok_check = p.returncode == 0 and "ok: integrity check: ok" in p.stdout
        S.emit(not held and ok_check, "ledger_lock_%s" % name,
               "locks held on its -shm: %s; cordon ledger check exit %d: %s" % (
                   held, p.returncode, " | ".join((p.stdout + p.stderr).splitlines()))
               if held or not ok_check else
               "no lock held on the WAL index (bytes 120-127 of -shm); cordon ledger check exit 0, "
               "integrity check: ok")
        if not os.path.exists(os.path.join(L["state"], "ledger.sqlite3")):
            S.emit(not S.called[name], "ledger_counts_%s" % name, "no ledger, %d ids called" % len(S.called[name]))
            continue
        rows = ledger_rows(L["state"])
        lines = effect_lines(L["effects"])
        per_mid = collections.Counter(ln[0] for ln in lines)
        twice = sorted(m for m, n in per_mid.items() if n > 1)
        no_record = sorted(m for m in per_mid if m not in rows)
        no_effect = sorted(m for m in rows if m not in per_mid)
        pending = sorted(m for m, (s, _) in rows.items() if s != "done")
        called, answered = S.called[name], set(S.nonces[name])
        uncalled = sorted(set(rows) - called)
        unrecorded = sorted(answered - set(rows))
        bad = twice or no_record or no_effect or pending or uncalled or unrecorded
        S.ledger_stats[name] = (len(rows), len(lines), len(answered))
        S.emit(not bad, "ledger_counts_%s" % name,
               "ran twice %s; effect without record %s; record without effect %s; pending %s; recorded but never "
               "called %s; answered but not recorded %s" % (twice[:5], no_record[:5], no_effect[:5], pending[:5],
                                                         uncalled[:5], unrecorded[:5])
               if bad else
               "%d side-effect lines = %d ledger records (all done) = %d message ids called and answered; no id "
               "ran twice" % (len(lines), len(rows), len(answered)))


def thirds(samples, col):
    n = len(samples)
    k = max(1, n // 3)
    return max(s[col] for s in samples[:k]), max(s[col] for s in samples[-k:])


def check_flat(S):
    """serve's fds and RSS over the load.  fds: at idle after the load (the
    pools full again, nothing running) no more than at idle before it + 8;
    under load the count follows the executions in flight (each running
    one holds its sandbox's pipes, pidfd, sockets and run directory, each
    waiting one its connection), so its thirds are printed, not judged.
    RSS: the last third's maximum is not above the first third's by more
    than max(8 MiB, 20 %), the first tenth of the samples (serve going from
    idle to loaded) left out.  The slack is the spread of RSS under this
    load, which follows what is in flight when a sample is taken: with
    nothing leaking, maxima of 41, 45 and 49 MiB for successive thirds."""
    sm = S.samples[len(S.samples) // 10:]
    if len(sm) < 6:
        S.emit(False, "serve_flat", "only %d samples of serve's fds and RSS" % len(sm))
        return
    f1, f3 = thirds(sm, 1)
    r1, r3 = thirds(sm, 2)
    after = proc_sample(S.serve.pid)
    before = S.idle_before
    fd_ok = before is not None and after is not None and after[0] <= before[0] + 8
    rss_ok = r3 <= r1 + max(8192, r1 // 5)
    S.note("serve's RSS by mapping (KiB) before the load %s, after %s" % (S.rss_before, rss_by_mapping(S.serve.pid)))
    grown = fd_targets(S.serve.pid) - S.fds_before
    if grown:
        S.note("serve's fds at idle after the load, beyond those before it: %s" % dict(grown))
    S.note("serve's RSS (KiB) every %gs: %s" % (SAMPLE_S, " ".join(str(x[2]) for x in S.samples)))
    S.note("serve's fds every %gs: %s" % (SAMPLE_S, " ".join(str(x[1]) for x in S.samples)))
    S.emit(fd_ok and rss_ok, "serve_flat",
           "fds at idle %s before the load, %s after (rule: after <= before + 8; under load max %d in the first "
           "third, %d in the last, following the executions in flight); RSS max %d KiB in the first third, %d KiB "
           "in the last (rule: last <= first + max(8 MiB, 20%%), the first tenth of the samples left out); %s KiB at "
           "idle before, %s after; %d samples every %gs" % (
               before and before[0], after and after[0], f1, f3, r1, r3, before and before[1], after and after[1],
               len(S.samples), SAMPLE_S))


def stop_serve(S):
    """SIGTERM: exit 0 within 30 s, then none of its sandboxes' processes,
    cgroups or run directories left."""
    tree = serve_tree(S.serve.pid)
    rc = harness.terminate(S.serve)
    harness.wait_until(lambda: not [p for p in tree if harness.alive(p)], 3)
    left = [p for p in tree if harness.alive(p)]
    cg = harness.cgroup_dirs(pids=[S.serve.pid])
    harness.wait_until(lambda: not harness.cgroup_dirs(pids=[S.serve.pid]), 5, 0.1)
    cg = harness.cgroup_dirs(pids=[S.serve.pid])
    work = os.listdir(S.serve_work) if os.path.isdir(S.serve_work) else []
    bad = rc != 0 or left or cg or work
    S.emit(not bad, "serve_stopped", "exit %s; processes %s; cgroups %s; work dir %s; log: %s" % (
        rc, left[:5], cg[:5], work[:5], S.serve_tail(600)) if bad else
        "SIGTERM: exit 0; its %d processes, cgroups and work directory gone" % len(tree))


def summary(S):
    st = S.stats
    for n in S.notes:
        print("note soak %s" % n)
    print("soak: %d executions in %.0f s (%.1f/s), seed %d, concurrency up to %d" % (
        len(S.records), S.load_s, len(S.records) / S.load_s, S.seed, S.concurrency))
    print("soak: lanes %s" % ", ".join("%s %d" % kv for kv in sorted(st["lane"].items())))
    print("soak: kinds %s" % ", ".join("%s %d" % kv for kv in sorted(st["kind"].items())))
    print("soak: statuses %s" % ", ".join("%s %d" % kv for kv in sorted(st["status"].items())))
    for lane in LANES:
        recs = [r for r in S.records if r["job"].lane == lane]
        if recs:
            el = sorted(r["elapsed"] for r in recs)
            print("soak: %s: %d executions, median %.2f s, p95 %.2f s, max %.2f s" % (
                lane, len(recs), el[len(el) // 2], el[int(len(el) * 0.95)], el[-1]))
    for lane in LANES:
        waits = sorted(c["durationMs"] - c.get("toolMs", 0) for r in S.records if r["job"].lane == lane
                       for c in (r["res"].get("toolCalls") or []) if not c.get("replayed") and "durationMs" in c)
        if waits:
            print("soak: %s: a call's time outside its tool (ledger and bridge), ms: median %d, p95 %d, max %d "
                  "(%d calls)" % (lane, waits[len(waits) // 2], waits[int(len(waits) * 0.95)], waits[-1], len(waits)))
    print("soak: tool calls made %d, replays served %d, answer errors %s, serve 429s retried %d" % (
        st["calls"], st["replayed"], dict(st["answer_errors"]) or "none", st["retries429"]))
    for name, (rows, lines, called) in sorted(getattr(S, "ledger_stats", {}).items()):
        print("soak: ledger %s: %d side effects, %d records, %d message ids called" % (name, lines, rows, called))
    print("soak: root ledger: %s" % S.lockwatch.text(S.load_s))
    nfail = S.results.count(False)
    print("soak: %d checks, %d failed, %.0f s in all" % (len(S.results), nfail, time.monotonic() - S.t0), flush=True)
