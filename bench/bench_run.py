# SPDX-License-Identifier: Apache-2.0
"""bench_run.py - start-up cost of `cordon run` beside its peers (make bench).

The latency budget (docs/bench.md): `cordon run` of a trivial program costs
at most a few milliseconds over bare `python3 -I -c pass`, and less than
bubblewrap doing less.  This prints that comparison, measured in one run so the machine's
mood is shared: every peer runs once per round, in a shuffled order, for
BENCH_RUNS rounds after a few warm-up rounds.  Medians and p90s are reported
as ratios to bare python and as milliseconds over it.

A peer that is not installed or cannot start here (no user namespaces, a
cgroup layout it refuses, ...) is skipped with its reason; only cordon itself
failing to run is an error.  Nothing here adds code to the runtime: the
breakdown rows time pieces of a run from the outside (the binary's own exec,
the blob check, the Python loader cordon runs the program through, a cgroup
attach).

Usage: bench_run.py BUILD_DIR SRC_DIR   (as root for the peers and cgroups)
"""
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import figures  # noqa: E402

PY = "/usr/bin/python3"
RUNS = figures.runs("BENCH_RUNS", 40, 8)
CAFE_RUNS = figures.runs("BENCH_CAFE_RUNS", max(5, RUNS // 2), 4)
WARMUP = 3
PACE = float(os.environ.get("BENCH_PACE", "0"))  # idle after a run, in run lengths
W = 56  # name column

# The loader cordon's interpreter starts (runtime/sandbox.c LOADER_*) and
# the module it ends the program through (cordon_exit.py): their cost is
# part of what a run costs.  Both are read from inside a real run, so the
# bench measures what cordon ships; the bare copy drops the start-socket
# handshake (fd 3 exists only in a sandbox) and points /workspace/work and
# /cordon at dest.  Returns None or why the copy could not be made.
SHOW_LOADER = ("import sys\n"
               "sys.stdout.write(open('/workspace/work/main.py').read() + '\\n#--cordon_exit.py--\\n' + "
               "open('/cordon/cordon_exit.py').read())\n")


def cordon_loader(cordon, blob, tmp, dest):
    show = os.path.join(tmp, "show-loader.py")
    with open(show, "w") as f:
        f.write(SHOW_LOADER)
    r = subprocess.run([cordon, "run", "--policy", blob, "--code", show], capture_output=True)
    try:
        main_py, exit_py = json.loads(r.stdout)["stdout"].split("\n#--cordon_exit.py--\n")
    except (ValueError, KeyError, AttributeError):
        return "the loader could not be read from a run: " + r.stderr.decode(errors="replace")[-200:]
    lines = main_py.splitlines(True)
    first = [i for i, ln in enumerate(lines) if ln.startswith("_cordon_posix.write(3,")]
    last = [i for i, ln in enumerate(lines) if ln.startswith("_cordon_posix.close(3)")]
    if len(first) != 1 or len(last) != 1 or first[0] > last[0]:
        return "the loader's start-socket handshake changed; update cordon_loader()"
    del lines[first[0]:last[0] + 1]
    main_py = "".join(lines).replace("'/cordon'", repr(dest)).replace("/workspace/work", dest)
    with open(os.path.join(dest, "main.py"), "w") as f:
        f.write(main_py)
    with open(os.path.join(dest, "cordon_exit.py"), "w") as f:
        f.write(exit_py)
    return None


class Peer:
    def __init__(self, name, argv, cwd=None, ok=None, env=None):
        self.name = name
        self.argv = argv
        self.cwd = cwd
        self.env = env
        self.ok = ok or (lambda rc, out, err: rc == 0)
        self.rc = None
        self.times = []
        self.bad = 0

    def probe(self):
        """One untimed run that must succeed; returns None or why it failed."""
        try:
            p = subprocess.run(self.argv, cwd=self.cwd, env=self.env, stdin=subprocess.DEVNULL,
                               capture_output=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired) as e:
            return str(e)
        if not self.ok(p.returncode, p.stdout, p.stderr):
            why = (p.stderr or p.stdout).decode(errors="replace").strip().splitlines()
            return "exit %d: %s" % (p.returncode, why[-1][:160] if why else "no output")
        self.rc = p.returncode
        return None

    def once(self, keep=True):
        # stdout and stderr go to /dev/null for every peer alike: cordon's
        # result JSON is small, and reading it is the caller's cost, not ours.
        # No timeout: with one, Popen.wait polls with growing sleeps and the
        # figures come out in steps of its polling interval.  Each peer ran
        # once as a probe, and cordon has its own timeout.
        t0 = time.perf_counter_ns()
        rc = subprocess.run(self.argv, cwd=self.cwd, env=self.env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
        dt = (time.perf_counter_ns() - t0) / 1e6
        # BENCH_PACE=1 idles as long as the run took, so each run meets the
        # kernel the way a sandbox called now and then does (see
        # cgroup_attach_ms); by default runs follow each other at once.
        if PACE > 0:
            time.sleep(dt * PACE / 1e3)
        if keep:
            self.times.append(dt)
            if rc != self.rc:
                self.bad += 1


def bwrap_argv(ws, extra, py_args):
    """bubblewrap set up like the cafe policy, as far as it goes: every
    namespace, the same read-only binds, tmpfs /tmp, the workspace rw, uid
    1001, no capabilities.  It has no seccomp, landlock, limits, supervisor
    or result, which cordon's figure includes."""
    return (["bwrap", "--unshare-all", "--die-with-parent", "--new-session",
             "--ro-bind", "/usr", "/usr", "--ro-bind", "/lib", "/lib", "--ro-bind", "/lib64", "/lib64",
             "--ro-bind", "/etc/alternatives", "/etc/alternatives",
             "--tmpfs", "/tmp", "--proc", "/proc", "--dev", "/dev", "--bind", ws, "/workspace"]
            + extra + ["--uid", "1001", "--gid", "1000", "--cap-drop", "ALL", PY, "-I"] + py_args)


def bench_policy(cordonc, cafe, tmp):
    """The cafe policy for a trivial program: examples/cafe/app.yaml without
    executor.preload (a cold run imports the preloads too, and `pass` would
    pay numpy's import), with summary.txt not required (so `pass`
    succeeds) and without agents (cordon serve keeps one pool for it, not
    three).  Every other line, the sandbox the peers are set up like, stays
    the cafe's.  Returns (blob path, None) or (None, why)."""
    with open(os.path.join(cafe, "app.yaml")) as f:
        text = f.read()
    for old, new in (("\napp: cafe\n", "\napp: bench\n"), ("\n    preload: [numpy]\n", "\n"),
                     ("required: true", "required: false")):
        if text.count(old) != 1:
            return None, "examples/cafe/app.yaml changed: %r is not there once; update bench_policy()" % old
        text = text.replace(old, new)
    # The agents mapping: its key line and the indented lines under it.
    lines = text.splitlines(True)
    if lines.count("agents:\n") != 1:
        return None, "examples/cafe/app.yaml changed: no one top-level agents:; update bench_policy()"
    i = j = lines.index("agents:\n")
    while j + 1 < len(lines) and lines[j + 1].startswith((" ", "\n")):
        j += 1
    text = "".join(lines[:i] + lines[j + 1:])
    desc, blob = os.path.join(tmp, "bench.yaml"), os.path.join(tmp, "bench.cpol")
    with open(desc, "w") as f:
        f.write(text)
    r = subprocess.run([cordonc, "compile", desc, os.path.join(cafe, "tools.yaml"), "-o", blob], capture_output=True)
    if r.returncode != 0:
        return None, "cordonc compile of the bench policy failed: " + r.stderr.decode(errors="replace")
    return blob, None


def bench_files(cordonc, cafe, tmp):
    """What the start-up benches run, made in tmp: (the cafe blob, the
    bench blob, pass.py, a workspace any uid may write for the peers, None),
    or None in each but the last, why."""
    blob = os.path.join(tmp, "cafe.cpol")
    r = subprocess.run([cordonc, "compile", os.path.join(cafe, "app.yaml"), os.path.join(cafe, "tools.yaml"),
                        "-o", blob], capture_output=True)
    if r.returncode != 0:
        return None, None, None, None, "cordonc compile failed: " + r.stderr.decode(errors="replace")
    pass_blob, why = bench_policy(cordonc, cafe, tmp)
    if why:
        return None, None, None, None, why
    code = os.path.join(tmp, "pass.py")
    with open(code, "w") as f:
        f.write("pass\n")
    ws = os.path.join(tmp, "ws")
    os.mkdir(ws)
    os.chmod(ws, 0o777)
    return blob, pass_blob, code, ws, None


def p90(xs):
    s = sorted(xs)
    return s[max(0, -(-9 * len(s) // 10) - 1)]


def interleave(peers, rounds):
    rng = random.Random(1993)
    for r in range(WARMUP + rounds):
        order = peers[:]
        rng.shuffle(order)
        for p in order:
            p.once(keep=r >= WARMUP)


def table(title, peers, base, rounds):
    print()
    print("%s: %d interleaved rounds after %d warm-up, medians of wall time" % (title, rounds, WARMUP))
    print("  %-*s %9s %8s %8s %8s %9s" % (W, "peer", "median ms", "p90 ms", "min ms", "x bare", "+ms bare"))
    bm = statistics.median(base.times)
    for p in peers:
        m = statistics.median(p.times)
        flag = "  (%d runs exited differently from the probe)" % p.bad if p.bad else ""
        print("  %-*s %9.2f %8.2f %8.2f %8.2f %+9.2f%s"
              % (W, p.name, m, p90(p.times), min(p.times), m / bm, m - bm, flag))
    # Bare python's start-up hardly varies on a quiet machine; a median far
    # above its best run means something else had the CPUs, and every row
    # is suspect.
    if bm > 1.25 * min(base.times):
        print("  warning: noisy machine: bare python's median is %.0f%% above its best run; rerun when quiet"
              % (100 * (bm / min(base.times) - 1)))
        figures.note("%s: noisy machine, bare python's median %.0f%% above its best run"
                     % (title.split(",")[0].split(" (")[0], 100 * (bm / min(base.times) - 1)))


def emit(name, p, peer, label):
    """p's wall times as figure name, against peer's (label in the report),
    if both ran."""
    if p is not None and peer is not None and p.times and peer.times:
        figures.emit(name, "ms", p.times, label, peer.times)


def cordon_ok(need_success):
    """cordon run's probe: the program itself must have exited 0.

    A `pass` program writes no summary.txt, which the cafe policy declares
    required, so that run ends "failed" with error output_contract (exit 1)
    after the full run: accepted for the start-up figure, nothing else is."""
    def ok(rc, out, err):
        try:
            r = json.loads(out)
        except ValueError:
            return False
        if r.get("exitCode") != 0:
            return False
        if r.get("status") == "succeeded":
            return True
        return not need_success and (r.get("error") or {}).get("code") == "output_contract"
    return ok


def crun_bundle(tmp, ws, args):
    """An OCI bundle close to the cafe policy: ro binds, tmpfs /tmp, the
    workspace rw, uid 1001, no capabilities, memory and pids limits."""
    b = os.path.join(tmp, "oci")
    os.makedirs(os.path.join(b, "rootfs"), exist_ok=True)
    if os.path.exists(os.path.join(b, "config.json")):
        os.unlink(os.path.join(b, "config.json"))
    subprocess.run(["crun", "spec"], cwd=b, check=True, capture_output=True)
    with open(os.path.join(b, "config.json")) as f:
        c = json.load(f)
    p = c["process"]
    p["terminal"] = False
    p["user"] = {"uid": 1001, "gid": 1000}
    p["args"] = args
    p["cwd"] = "/workspace"
    p["env"] = ["PATH=/usr/bin:/bin", "LANG=C.UTF-8"]
    p["capabilities"] = {k: [] for k in ("bounding", "effective", "inheritable", "permitted", "ambient")}
    p["noNewPrivileges"] = True
    c["root"] = {"path": "rootfs", "readonly": True}
    keep = ("/proc", "/dev", "/dev/shm", "/dev/mqueue")
    mounts = [m for m in c["mounts"] if m["destination"] in keep]
    for d in ("/usr", "/lib", "/lib64", "/etc/alternatives"):
        if os.path.exists(d):
            mounts.append({"destination": d, "type": "bind", "source": d, "options": ["rbind", "ro"]})
    mounts.append({"destination": "/tmp", "type": "tmpfs", "source": "tmpfs",
                   "options": ["nosuid", "nodev", "mode=1777", "size=64m"]})
    mounts.append({"destination": "/workspace", "type": "bind", "source": ws, "options": ["rbind", "rw"]})
    c["mounts"] = mounts
    lx = c["linux"]
    lx["namespaces"] = [{"type": t} for t in ("pid", "network", "ipc", "uts", "mount", "cgroup")]
    lx.setdefault("resources", {})["memory"] = {"limit": 1 << 30}
    lx["resources"]["pids"] = {"limit": 64}
    with open(os.path.join(b, "config.json"), "w") as f:
        json.dump(c, f, indent=1)
    return b


def mount_ns(tmp, name, cmd):
    """A mount namespace kept open in a file under tmp after running cmd in
    it; returns the nsenter prefix that runs a command there, or the reason
    it could not be made.  main() unmounts the file at the end."""
    if os.geteuid() != 0 or not shutil.which("unshare") or not shutil.which("nsenter"):
        return None, "needs root, unshare and nsenter"
    ns = os.path.join(tmp, name)
    open(ns, "w").close()
    r = subprocess.run(["unshare", "--mount=" + ns, "--propagation", "private"] + cmd, capture_output=True)
    if r.returncode != 0:
        return None, r.stderr.decode(errors="replace").strip()
    return ["nsenter", "--mount=" + ns], None


def crun_prefix(tmp, notes):
    """crun refuses a hybrid cgroup host whose cgroup2 tree has controllers
    ("cgroups in hybrid mode not supported").  As root, run it in a mount
    namespace made once where /sys/fs/cgroup/unified is unmounted, so crun
    sees plain v1 and uses it the way cordon does; nsenter's own exec is
    then part of crun's figure (its cost is printed beside it)."""
    t = subprocess.run(["crun", "--version"], capture_output=True)
    if t.returncode != 0:
        return None, "crun --version failed"
    try:
        with open("/sys/fs/cgroup/unified/cgroup.controllers") as f:
            hybrid = f.read().strip() != ""
    except OSError:
        hybrid = False
    if not hybrid:
        return [], None
    prefix, why = mount_ns(tmp, "crun-mntns", ["umount", "/sys/fs/cgroup/unified"])
    if prefix is None:
        return None, "hybrid cgroups with controllers in cgroup2, which crun refuses, could not be hidden: " + why
    notes.append("crun: hybrid cgroup host; crun runs via `nsenter --mount` into a namespace without "
                 "/sys/fs/cgroup/unified (it refuses hybrid mode)")
    return prefix, None


class CrunPeer(Peer):
    """`crun run` needs a fresh container id each time."""

    def __init__(self, name, prefix, state, bundle):
        super().__init__(name, None)
        self.prefix, self.state, self.bundle, self.n = prefix, state, bundle, 0
        self._next()

    def _next(self):
        self.n += 1
        self.argv = self.prefix + ["crun", "--root", self.state, "--cgroup-manager=cgroupfs",
                                   "run", "--bundle", self.bundle, "cordon-bench-%d-%d" % (os.getpid(), self.n)]

    def probe(self):
        r = super().probe()
        self._next()
        return r

    def once(self, keep=True):
        super().once(keep)
        self._next()


def cgroup_attach_ms(rounds):
    """Moving a process into a cgroup takes cgroup_threadgroup_rwsem for
    writing; after ~a grace period with no writer the kernel has switched the
    semaphore back to its per-CPU fast path and the next writer waits for an
    RCU grace period.  A sandbox started now and then pays that every time:
    timed here as attach after 50 ms idle, the way one run follows another,
    beside a second attach right after it (the semaphore still on its slow
    path).  Returns (idle times, back-to-back times) or None."""
    lines = open("/proc/self/cgroup").read().splitlines()
    base = None
    for ln in lines:
        _, ctl, path = ln.split(":", 2)
        if "pids" in ctl.split(","):
            base = "/sys/fs/cgroup/pids" + path
    if base is None:
        for ln in lines:
            if ln.startswith("0::") and os.path.exists("/sys/fs/cgroup/cgroup.procs"):
                base = "/sys/fs/cgroup" + ln[3:]
    if base is None:
        return None
    d = os.path.join(base, "cordon-bench-%d" % os.getpid())
    try:
        os.mkdir(d)
    except OSError:
        return None
    ts = ([], [])
    try:
        for _ in range(rounds):
            kids = [subprocess.Popen(["sleep", "5"]) for _ in ts]
            time.sleep(0.05)
            for child, t in zip(kids, ts):
                t0 = time.perf_counter_ns()
                with open(os.path.join(d, "cgroup.procs"), "w") as f:
                    f.write(str(child.pid))
                t.append((time.perf_counter_ns() - t0) / 1e6)
            for child in kids:
                child.kill()
                child.wait()
    except OSError:
        ts = None
    finally:
        for _ in range(50):
            try:
                os.rmdir(d)
                break
            except OSError:
                time.sleep(0.01)
    return ts


def derive(crd, bw, parts):
    """cordon's extra time split three ways, from differences of medians."""
    med = {p.name.strip(): statistics.median(p.times) for p in parts}
    loader = med.get("python3 -I main.py (cordon's loader, no finalization), bare")
    plain = med.get("python3 -I user_code.py (pass, no loader), bare")
    hidden = med.get("cordon run, cgroups hidden (rlimits), nsenter")
    ns, true = med.get("nsenter --mount /bin/true"), med.get("/bin/true (exec floor)")
    if None in (loader, plain, hidden, ns, true):
        return
    run = statistics.median(crd.times)
    no_cg = hidden - (ns - true)
    rest = no_cg - loader
    print("  derived: cgroups %.1f ms (run - run with cgroups hidden, nsenter's cost taken off), "
          "loader %.1f ms (main.py - user_code.py), the rest %.1f ms (exec, namespaces, "
          "mounts, landlock, seccomp, supervisor, result; bubblewrap's whole overhead: %s)"
          % (run - no_cg, loader - plain, rest,
             "%.1f ms" % (statistics.median(bw.times) - plain) if bw else "not measured"))


def main():
    if len(sys.argv) != 3:
        print("usage: bench_run.py BUILD_DIR SRC_DIR", file=sys.stderr)
        return 2
    build, src = (os.path.abspath(a) for a in sys.argv[1:])
    cordon, cordonc = os.path.join(build, "cordon"), os.path.join(build, "cordonc")
    notes, skipped = [], []
    tmp = tempfile.mkdtemp(prefix="cordon-bench.")
    # The sandboxes run as uid 1001 and must be able to reach the workspace
    # they bind from here.
    os.chmod(tmp, 0o755)
    try:
        return run(build, src, cordon, cordonc, tmp, notes, skipped)
    finally:
        for ns in ("crun-mntns", "nocgroup-mntns"):
            if os.path.exists(os.path.join(tmp, ns)):
                subprocess.run(["umount", os.path.join(tmp, ns)], capture_output=True)
        shutil.rmtree(tmp, ignore_errors=True)


def run(build, src, cordon, cordonc, tmp, notes, skipped):
    cafe = os.path.join(src, "examples", "cafe")
    # `pass` runs under the bench policy: the cafe's sandbox, nothing preloaded.
    blob, pass_blob, code, ws, why = bench_files(cordonc, cafe, tmp)
    if why:
        print("bench_run: " + why, file=sys.stderr)
        return 1
    loader_dir = os.path.join(tmp, "loader")
    os.mkdir(loader_dir)
    shutil.copy(code, os.path.join(loader_dir, "user_code.py"))
    loader_why = cordon_loader(cordon, pass_blob, tmp, loader_dir)

    bare = Peer("bare python3 -I -c pass", [PY, "-I", "-c", "pass"])
    crd = Peer("cordon run (bench policy: cafe's, no preload; pass)",
               [cordon, "run", "--policy", pass_blob, "--code", code],
               ok=cordon_ok(False))
    peers = [bare, crd]
    why = crd.probe()
    if why:
        print("bench_run: cordon run cannot run here: " + why, file=sys.stderr)
        return 1
    bare.probe()

    if shutil.which("bwrap"):
        bw = Peer("bubblewrap (ns, ro binds, uid 1001, no caps)", bwrap_argv(ws, [], ["-c", "pass"]))
        why = bw.probe()
        (skipped.append(("bubblewrap", why)) if why else peers.append(bw))
    else:
        skipped.append(("bubblewrap", "bwrap not installed"))

    if shutil.which("firejail"):
        fj = Peer("firejail (net none, private home/tmp/dev, seccomp)",
                  ["firejail", "--quiet", "--noprofile", "--net=none", "--ipc-namespace", "--caps.drop=all",
                   "--nonewprivs", "--seccomp", "--private-tmp", "--private-dev", "--private=" + ws,
                   PY, "-I", "-c", "pass"])
        why = fj.probe()
        if why:
            skipped.append(("firejail", why))
        else:
            peers.append(fj)
            if os.geteuid() == 0:
                notes.append("firejail: started as root it keeps uid 0 inside (no uid drop), and it "
                             "bind-mounts over the host's / rather than building a new root")
    else:
        skipped.append(("firejail", "not installed"))

    nsenter_peer = None
    if shutil.which("crun"):
        prefix, why = crun_prefix(tmp, notes)
        if prefix is not None:
            state = os.path.join(tmp, "crun-state")
            os.mkdir(state)
            bundle = crun_bundle(tmp, ws, [PY, "-I", "-c", "pass"])
            cr = CrunPeer("crun run (OCI bundle, ro binds, uid 1001)" + (" via nsenter" if prefix else ""),
                          prefix, state, bundle)
            why = cr.probe()
            if not why:
                peers.append(cr)
                if prefix:
                    nsenter_peer = Peer("  nsenter --mount /bin/true", prefix + ["/bin/true"])
        if why:
            skipped.append(("crun", why))
    else:
        skipped.append(("crun", "not installed"))

    # The breakdown rows: pieces of a cordon run timed from outside.
    parts = [
        Peer("  cordon --version (exec, dynamic linking)", [cordon, "--version"]),
        Peer("  cordon check-policy (+ blob map, SHA-256, checks)", [cordon, "check-policy", pass_blob]),
        Peer("  python3 -I main.py (cordon's loader, no finalization), bare",
             [PY, "-I", os.path.join(loader_dir, "main.py")]),
        Peer("  python3 -I user_code.py (pass, no loader), bare", [PY, "-I", os.path.join(loader_dir, "user_code.py")]),
    ]
    if loader_why:
        skipped.append(("loader row", loader_why))
        del parts[2]
    # cordon with no cgroup filesystem in sight falls back to rlimits: the
    # difference to the plain run is what the cgroup setup, attach and
    # teardown cost (less nsenter's exec, shown on its own row).
    prefix, why = mount_ns(tmp, "nocgroup-mntns", ["mount", "-t", "tmpfs", "none", "/sys/fs/cgroup"])
    if prefix:
        parts.append(Peer("  cordon run, cgroups hidden (rlimits), nsenter", prefix + crd.argv,
                          ok=cordon_ok(False)))
        if nsenter_peer is None:
            nsenter_peer = Peer("  nsenter --mount /bin/true", prefix + ["/bin/true"])
    if nsenter_peer:
        parts += [nsenter_peer, Peer("  /bin/true (exec floor)", ["/bin/true"])]
    parts = [p for p in parts if p.probe() is None]

    # The load average goes with the figures: other work on a small machine
    # moves every row, the ratios less than the milliseconds.
    print("cordon start-up beside its peers (docs/bench.md); python: %s, kernel %s, %d CPUs, load %.2f"
          % (PY, os.uname().release, os.cpu_count(), os.getloadavg()[0]))
    interleave(peers + parts, RUNS)
    table("start-up, trivial program", peers, bare, RUNS)
    for name, why in skipped:
        print("  skipped %-10s %s" % (name + ":", why))
        figures.note("bench_run: %s skipped: %s" % (name, why))
    by = {p.name.split(" ")[0]: p for p in peers}
    for key, label in (("bare", "bare python3 -I -c pass"), ("bubblewrap", "bubblewrap, cold"),
                       ("firejail", "firejail, cold"), ("crun", "crun run, cold")):
        emit("run.pass.vs_" + key, crd, by.get(key), label)
    bm = statistics.median(bare.times)
    cm = statistics.median(crd.times)
    bwp = [p for p in peers if p.name.startswith("bubblewrap")]
    if bwp:
        wm = statistics.median(bwp[0].times)
        print("  cordon run < bwrap: %s (cordon %.2f ms, bwrap %.2f ms, %+.2f ms)"
              % ("yes" if cm < wm else "NO", cm, wm, cm - wm))
    else:
        print("  cordon run < bwrap: not measured (bubblewrap skipped)")
    print("  cordon run over bare python: %+.2f ms (budget: a few ms)" % (cm - bm))

    table("where cordon run's time goes (outside view, same rounds)", parts, bare, RUNS)
    derive(crd, bwp[0] if bwp else None, parts)
    part = {p.name.strip().split(" (")[0]: p for p in parts}
    emit("run.exec", part.get("cordon --version"), part.get("/bin/true"), "/bin/true (exec floor)")
    emit("run.check_policy", part.get("cordon check-policy"), part.get("cordon --version"), "cordon --version")
    emit("run.loader", part.get("python3 -I main.py"), part.get("python3 -I user_code.py"),
         "python3 -I user_code.py (no loader)")
    cg = cgroup_attach_ms(figures.runs("BENCH_CGROUP_RUNS", 15, 5)) if os.geteuid() == 0 else None
    if cg:
        for label, ts in (("one cgroup attach after 50 ms idle", cg[0]), ("a second one right after", cg[1])):
            print("  %-*s %9.2f %8.2f %8.2f" % (W, "  " + label, statistics.median(ts), p90(ts), min(ts)))
        print("  (cordon attaches to memory, then pids)")
        figures.emit("run.cgroup_attach_idle", "ms", cg[0], "the same attach right after another", cg[1])

    user_code = os.path.join(cafe, "user_code.py")
    if CAFE_RUNS <= 0:
        print("\ncafe program: BENCH_CAFE_RUNS=0, skipped")
    elif os.path.exists(user_code):
        cafe_bench(cordon, blob, cafe, user_code, tmp, skipped)
    else:
        print("\ncafe program: examples/cafe/user_code.py not present, skipped")

    for n in notes:
        print("note: " + n)
        figures.note("bench_run: " + n)
    return 0


LOADER = ("import sys; sys.path[:0] = ['.']; "
          "exec(compile(open('user_code.py', 'rb').read(), 'user_code.py', 'exec'))")


def cafe_bench(cordon, blob, cafe, user_code, tmp, skipped):
    """The example program end to end: numpy import and a solve, under cordon
    run against bare python running the same file in a scratch directory
    (its /workspace paths pointed there) and against bubblewrap."""
    inputs = [os.path.join(cafe, f) for f in sorted(os.listdir(cafe))
              if f not in ("user_code.py",) and not f.endswith((".yaml", ".yml", ".md"))
              and os.path.isfile(os.path.join(cafe, f))]
    args = [cordon, "run", "--policy", blob, "--code", user_code]
    for i in inputs:
        args += ["--input", i]
    crd = Peer("cordon run (cafe policy, user_code.py)", args, ok=cordon_ok(True))

    # The program imports the tool client.  Outside cordon it finds no
    # socket, and under cordon run (no --agent) its call is refused: every
    # peer computes the same and makes one failed call, cheaply.
    client = os.path.join(os.path.dirname(os.path.dirname(cafe)), "runtime", "client", "cordon_tools.py")
    bdir = os.path.join(tmp, "cafe-bare")
    for sub in ("work", "out"):
        os.makedirs(os.path.join(bdir, sub))
    for i in inputs + [client]:
        shutil.copy(i, os.path.join(bdir, "work"))
    with open(user_code) as f:
        text = f.read().replace("/workspace/", bdir + "/")
    with open(os.path.join(bdir, "work", "user_code.py"), "w") as f:
        f.write(text)
    # The policy's environment, so BLAS starts the same single thread.
    env = dict(os.environ, LANG="C.UTF-8", OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    # -I leaves the script's directory off sys.path, as cordon's loader
    # puts /cordon and the workspace on it: the same few lines here.
    bare = Peer("bare python3 -I user_code.py", [PY, "-I", "-c", LOADER], cwd=os.path.join(bdir, "work"),
                env=env)

    peers = []
    for p in (bare, crd):
        why = p.probe()
        if why:
            print("\ncafe program: %s cannot run (%s), skipped" % (p.name, why))
            return
        peers.append(p)

    if shutil.which("bwrap") and not any(n == "bubblewrap" for n, _ in skipped):
        wdir = os.path.join(tmp, "cafe-bwrap")
        for sub in ("work", "out"):
            os.makedirs(os.path.join(wdir, sub))
            os.chmod(os.path.join(wdir, sub), 0o777)
        for i in inputs + [client]:
            shutil.copy(i, os.path.join(wdir, "work"))
        shutil.copy(user_code, os.path.join(wdir, "work"))
        bw = Peer("bubblewrap, same binds, user_code.py",
                  bwrap_argv(wdir, ["--chdir", "/workspace/work", "--setenv", "LANG", "C.UTF-8",
                                    "--setenv", "OPENBLAS_NUM_THREADS", "1", "--setenv", "OMP_NUM_THREADS", "1"],
                             ["-c", LOADER]))
        if bw.probe() is None:
            peers.append(bw)
    interleave(peers, CAFE_RUNS)
    table("cafe program (examples/cafe/user_code.py, numpy solve)", peers, bare, CAFE_RUNS)
    emit("run.cafe.vs_bare", crd, bare, "bare python3 -I user_code.py")
    emit("run.cafe.vs_bubblewrap", crd, peers[2] if len(peers) > 2 else None, "bubblewrap, same program")


if __name__ == "__main__":
    sys.exit(main())
