#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# run.py - the boundary tests of one mode: every attack in attacks/ runs
# inside a sandbox, and each check asserts that the attack failed and which
# layer stopped it (README.md).  run.sh calls this as root, as an
# unprivileged user, and through cordon serve.
#
#   BUILD=DIR (cordon, cordonc)  POLICIES=DIR (shipped profiles)
#   /usr/bin/python3 run.py root|rootless|serve|serve-rootless
#
# root and rootless run each attack with `cordon run`; serve and
# serve-rootless send it to one `cordon serve` (POST /v1/executions) and
# expect the SAME layer: the warm path enforces what the cold path does.
# A check that needs what only `cordon run` has prints "skip ... run-only"
# with the reason.  Each check prints one line, "ok|FAIL MODE CHECK LAYER
# EVIDENCE" (tests/lib/harness.py); the exit status is 1 when any check
# failed.  Layer names and how each is decided are in README.md.
# Expectations differ between root and rootless only where the mechanism
# does: memory and pids (cgroup as root, rlimit rootless) and who owns the
# executor's files on the host.
import concurrent.futures
import grp
import json
import os
import pwd
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

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True   # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
import harness  # noqa: E402  (tests/lib: the suites' shared runner)

# Holes found by these tests and not fixed yet (README.md, "Known
# failures"): the check still runs and still fails, but prints XFAIL and
# does not fail the suite, unless BOUNDARY_STRICT=1.  When one passes it
# prints XPASS: the runtime was fixed, remove it from here.
KNOWN = {
    # Both holes these tests found are fixed (runtime/launch/sequence.c:
    # the child closes the supervisor's pipe ends first, and setsid()s);
    # their checks now pass and must stay passing.
}
S = harness.Suite("boundary", layers=True, width=600, known_label="known hole")
MODE = S.mode
S.known = {k: why for k, (modes, why) in KNOWN.items() if MODE in modes}
ROOT = S.root             # the privilege the expectations follow (serve: as root)
BLIB = os.path.join(HERE, "blib.py")
SECRET = "boundary-secret-" + secrets.token_hex(12)
TIMEOUT_S = 5  # app.yaml's timeout
INIT_GRACE_S = 1.0  # LAUNCH_INIT_GRACE_MS: the sandbox's init kills at the timeout + this
# BOUNDARY_ONLY="check ...": only these checks (table rows and the runner's
# own, by the names they print), and the leftover check; for working on a
# few without the whole suite.
ONLY = set(os.environ.get("BOUNDARY_ONLY", "").split())


def wanted(name):
    return not ONLY or name in ONLY
W = S.W
notes = S.notes
marker_pids = harness.marker_pids   # blib.marker_pids's twin: host pids whose command line holds a marker
describe = harness.describe


def emit(ok, name, layer, evidence):
    S.emit(ok, name, evidence, layer)


# --- the host side: a TCP server and an abstract Unix socket ------------

class Listener:
    """Counts connections made to a socket on the host's side."""

    def __init__(self, sock):
        self.sock, self.count = sock, 0
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            self.count += 1
            c.close()


tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
tcp.bind(("127.0.0.1", 0))
tcp.listen(16)
TCP = Listener(tcp)
ABSTRACT = "cordon-boundary-" + secrets.token_hex(8)
ab = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
ab.bind("\0" + ABSTRACT)
ab.listen(16)
ABS = Listener(ab)


def host_nameserver():
    try:
        with open("/etc/resolv.conf") as f:
            for line in f:
                w = line.split()
                if len(w) >= 2 and w[0] == "nameserver" and ":" not in w[1]:
                    return w[1]
    except OSError:
        pass
    return None


# --- running one program -----------------------------------------------

new_marker = S.new_marker


def Run(policy, attack, params=None, run_dir=None, prefix=()):
    """One execution of attacks/<attack>.py with blib.py, params.json and
    supervisor.pid (the pid of `cordon run`, or of cordon serve) as
    inputs."""
    return S.start(policy, os.path.join(HERE, "attacks", attack + ".py"),
                   [BLIB, ("params.json", json.dumps(params or {}))], run_dir=run_dir, prefix=prefix, pidfile=True)


# --- expectations ----------------------------------------------------------
# Each returns (ok, layer, evidence) from a finished Run.

def blocked(layer):
    """The program ran to its end (status succeeded) and reported the
    attack stopped by exactly this layer."""
    def check(r):
        ok = (r.res.get("status") == "succeeded" and r.result.get("blocked") is True
              and r.result.get("layer") == layer)
        return ok, r.result.get("layer"), r.result.get("evidence") if ok else describe(r)
    return check


def gets_through(*layers_ok):
    """Control policies: the attack is no longer stopped by the layer the
    main policy names; it gets through (blocked false), or meets one of
    layers_ok further on.  Shows the check can fail and which layer made
    the difference."""
    def check(r):
        b, layer = r.result.get("blocked"), r.result.get("layer")
        ok = r.res.get("status") == "succeeded" and (b is False or (b is True and layer in layers_ok))
        shown = "none:got-through" if b is False else layer
        return ok, shown, r.result.get("evidence") if ok else describe(r)
    return check


def per_mode(root, rootless):
    return root if ROOT else rootless


def with_listener(listener, inner):
    """inner, and nothing reached the host's listener meanwhile."""
    def check(r):
        before = getattr(r, "listener_before", 0)
        ok, layer, ev = inner(r)
        if listener.count != before:
            return False, layer, "the host's listener got %d connection(s); %s" % (listener.count - before, ev)
        return ok, layer, ev
    return check


def with_listeners(inner):
    """inner, and neither host listener (TCP, abstract) got a connection."""
    def check(r):
        ok, layer, ev = inner(r)
        got = (TCP.count - r.counts_before[0], ABS.count - r.counts_before[1])
        if got != (0, 0):
            return False, layer, "the host's listeners got %d TCP, %d abstract connection(s); %s" % (*got, ev)
        return ok, layer, ev
    return check


def network_is(want, inner):
    """inner, and the run's enforcement.network says want."""
    def check(r):
        ok, layer, ev = inner(r)
        got = (r.res.get("enforcement") or {}).get("network")
        if got != want:
            return False, layer, "enforcement.network is %r, want %r; %s" % (got, want, ev)
        return ok, layer, "%s; enforcement.network %r" % (ev, got)
    return check


def loopback_works(r):
    """A positive check: the program echoed bytes over its own lo."""
    ok = (r.res.get("status") == "succeeded" and r.result.get("blocked") is False
          and r.result.get("works") is True)
    return ok, "netns", r.result.get("evidence") if ok else describe(r)


def secret_not_seen(r):
    ok, layer, ev = blocked("pidns")(r)
    if SECRET in json.dumps(r.res):
        return False, layer, "the supervisor's secret environment reached the sandbox"
    return ok, layer, ev


def symlink_reported(r):
    """The link is made (python-compute allows symlink, as the control
    open-seccomp does); the supervisor's output walk must report it as a
    `symlink` violation and hash nothing of it."""
    v = r.res.get("violations") or []
    arts = [a.get("path") for a in r.res.get("artifacts") or []]
    ok = (r.result.get("blocked") is False and r.res.get("status") == "failed"
          and (r.res.get("error") or {}).get("code") == "output_contract"
          and any(x.get("path") == "summary.txt" and x.get("code") == "symlink" for x in v)
          and "summary.txt" not in arts and "root:" not in json.dumps(r.res))
    return ok, "outputs", ("link made in the sandbox; violation %s, artifacts %s" % (
        [x.get("code") for x in v], arts) if ok else describe(r))


def check_identity():
    """Who the program is, inside (the attack's report) and on the host: a
    file it made is owned there by the host ids the result names, and as
    root those are no account of this host and not the supervisor's."""
    r = Run(MAIN, "identity", {"hold": 3})
    pid = r.executor_pid(has="workspace/out/owned.txt")
    path = "/proc/%s/root/workspace/out/owned.txt" % pid
    st = None
    end = time.monotonic() + 5
    while pid and st is None and time.monotonic() < end:
        try:
            st = os.stat(path, follow_symlinks=False)
        except OSError:
            time.sleep(0.05)
    r.wait()
    ok, layer, ev = blocked("identity")(r)
    m = re.search(r"as host (\d+)/(\d+)", (r.res.get("enforcement") or {}).get("identity", ""))
    why = None
    if not ok:
        why = ev
    elif st is None:
        why = "could not stat %s" % path
    elif not m:
        why = "the result names no host ids: %s" % r.res.get("enforcement")
    elif (st.st_uid, st.st_gid) != (int(m.group(1)), int(m.group(2))):
        why = "host owner of out/owned.txt is %d:%d, the result says %s/%s" % (st.st_uid, st.st_gid, *m.groups())
    elif ROOT and r.result.get("groups"):
        why = "supplementary groups %s as root" % r.result.get("groups")
    elif ROOT and (st.st_uid == 0 or host_account(st.st_uid) or host_group(st.st_gid)):
        why = "as root the executor's host ids %d:%d belong to someone on this host" % (st.st_uid, st.st_gid)
    elif not ROOT and (st.st_uid, st.st_gid) != (os.getuid(), os.getgid()):
        why = "rootless the executor is not the caller on the host: %d:%d" % (st.st_uid, st.st_gid)
    emit(why is None, "identity", "identity",
         "%s; on the host %d:%d" % (ev, st.st_uid, st.st_gid) if why is None else why)


def host_account(uid):
    try:
        pwd.getpwuid(uid)
        return True
    except KeyError:
        return False


def host_group(gid):
    try:
        grp.getgrgid(gid)
        return True
    except KeyError:
        return False


def no_survivor(layer, status, rc):
    """The run ended with status/rc, the daemon had started (result), and no
    process carrying its marker is left on the host."""
    def check(r):
        left = marker_pids(r.marker)
        started = r.result.get("daemon_pids") if r.result else None
        ok = r.res.get("status") == status and r.exit_is(rc) and not left and (started or status != "succeeded")
        return ok, layer, ("status %s, %s after %.1fs; daemon %s (%s) gone from the host" % (
            status, r.ended_as(), r.elapsed, started, r.result.get("setsid")) if ok else "left: %s; %s" % (left, describe(r)))
    return check


def supervisor_survived(r):
    """signal_process_group: the supervisor lived to report the run.  The
    layer: a session of the executor's own if it has one (the program sees
    its group), else the supervisor's root identity as root, else landlock's
    signal scope where the policy has landlock."""
    ok = r.exit_is(0) and r.res.get("status") == "succeeded" and r.result.get("attack") == "signal_process_group"
    if r.result.get("own_group"):
        layer = "session"
    elif ROOT:
        layer = "identity"
    else:
        layer = "landlock" if r.res.get("enforcement", {}).get("landlock", "off").startswith("abi") else "none"
    if not ok and r.run_dir:
        S.supervisor_died(r.run_dir, "signal_process_group killed its supervisor")
    return ok, layer, ("%s; the supervisor lived and reported status succeeded" % r.result.get("evidence")
                       if ok else "the supervisor died (%s): %s" % (r.ended_as(), describe(r)))


def fork_bomb_check(r):
    want = per_mode("cgroup", "rlimit")
    kind = (r.res.get("enforcement") or {}).get("pids", "")
    ok, layer, ev = blocked(want)(r)
    kind_ok = kind.startswith("cgroup") if want == "cgroup" else kind == "rlimit-nproc"
    if ok and not kind_ok:
        return False, layer, "enforcement.pids is %s" % kind
    return ok and r.elapsed < TIMEOUT_S, layer, "%s; enforcement.pids %s; run ended in %.1fs" % (ev, kind, r.elapsed)


def memory_bomb_check(r):
    kind = (r.res.get("enforcement") or {}).get("memory", "")
    if ROOT:
        ok = (r.res.get("status") == "limit_exceeded" and r.exit_is(1)
              and (r.res.get("error") or {}).get("code") == "memory_limit" and kind.startswith("cgroup"))
        peak = (r.res.get("usage") or {}).get("memoryPeakBytes")
        return ok, "cgroup", ("status limit_exceeded, error memory_limit (OOM kill), enforcement.memory %s, peak %s"
                              % (kind, peak) if ok else describe(r))
    ok, layer, ev = blocked("rlimit")(r)
    if ok and kind != "rlimit-as-per-process":
        return False, layer, "enforcement.memory is %s" % kind
    return ok, layer, "%s; enforcement.memory %s" % (ev, kind)


def cpu_starved(r):
    """The host gave the run less than its quota (other load; a v1 cpu
    cgroup competes as one task), so the quota had nothing to cut and a
    throttle count of 0 proves nothing either way."""
    u = r.res.get("usage") or {}
    return (not u.get("cpuThrottledPeriods") and u.get("cpuMs") is not None
            and u["cpuMs"] < 0.9 * 0.5 * r.result.get("wall_s", 0) * 1000)


def cpu_applied(r, tries=3):
    """A CPU quota held: the program's own count of its CPU time within
    the bound, the cgroup's throttle count above 0 (it acted, read by the
    supervisor from the quota's cpu.stat), its CPU time within the same
    bound, and enforcement.cpu naming a cgroup.  A run the busy host
    starved below the quota is run again, up to `tries` runs in all."""
    runs = 1
    while runs < tries and blocked("cgroup")(r)[0] and cpu_starved(r):
        r = Run(CPU, "cpu_burn", {}).wait()
        runs += 1
    kind = (r.res.get("enforcement") or {}).get("cpu", "")
    u = r.res.get("usage") or {}
    ok, layer, ev = blocked("cgroup")(r)
    if not ok:
        return ok, layer, ev
    if runs > 1:
        ev += " (run %d: the host gave the earlier runs less than the quota)" % runs
    throttled, cpu_ms = u.get("cpuThrottledPeriods", 0), u.get("cpuMs")
    bound_ms = r.result.get("bound_s", 0) * 1000
    why = None
    if not kind.startswith("cgroup"):
        why = "enforcement.cpu is %r" % kind
    elif not throttled:
        why = "usage.cpuThrottledPeriods is %r: the cgroup never throttled (usage %s)" % (throttled, u)
    elif cpu_ms is None or cpu_ms > bound_ms:
        why = "usage.cpuMs %s (%s) is over the bound %.0f ms" % (cpu_ms, u.get("cpuSource"), bound_ms)
    return why is None, layer, why or ("%s; enforcement.cpu %s, throttled in %d of %s periods (%s ms), "
                                       "usage.cpuMs %s" % (ev, kind, throttled, u.get("cpuPeriods"),
                                                           u.get("cpuThrottledMs"), cpu_ms))


def cpu_quota_check(r):
    """Root: the quota is applied (cpu_applied).  Rootless: applied where a
    cpu cgroup is delegated to the caller, else the run is a harness error
    that names the quota: never run without it."""
    kind = (r.res.get("enforcement") or {}).get("cpu")
    err = r.res.get("error") or {}
    if ROOT or kind is not None:
        return cpu_applied(r)
    ok = (r.res.get("status") == "error" and err.get("code") == "sandbox_execution_failed"
          and "CPU quota" in err.get("message", "") and (S.serve or r.exit_is(125)))
    return ok, "cgroup", ("no cpu cgroup for this caller: status error (%s), %s" % (r.ended_as(), err.get("message"))
                          if ok else describe(r))


def cpu_no_quota(r):
    """The control: the same program under the boundary policy, which sets
    no quota, runs with enforcement.cpu none and no throttle count (its CPU
    time is whatever a busy host gives, so it is reported, not judged)."""
    kind = (r.res.get("enforcement") or {}).get("cpu")
    u = r.res.get("usage") or {}
    ok = r.res.get("status") == "succeeded" and kind == "none" and "cpuThrottledPeriods" not in u
    return ok, "none:got-through", ("no quota: enforcement.cpu none, no throttle count; %s"
                                    % r.result.get("evidence") if ok else describe(r))


def supervisor_ended(status, rc, code=None, lo=0.0, hi=60.0):
    def check(r):
        ok = (r.res.get("status") == status and r.exit_is(rc) and lo <= r.elapsed <= hi
              and (code is None or (r.res.get("error") or {}).get("code") == code))
        return ok, "supervisor", ("status %s, %s, error %s after %.1fs, workspace delta %s" % (
            status, r.ended_as(), code, r.elapsed, (r.res.get("usage") or {}).get("workspaceDeltaBytes")) if ok else describe(r))
    return check


def kernel_workspace_stop(r):
    """The workspace's own tmpfs refused (ENOSPC, on the program's stdout)
    and the supervisor ended the run as a workspace breach: the bound is the
    kernel's, wherever and however the bytes or names were held."""
    ok, layer, ev = supervisor_ended("limit_exceeded", 1, "workspace_limit", 0, TIMEOUT_S - 0.5)(r)
    said = [l for l in (r.res.get("stdout") or "").splitlines() if l.startswith("ENOSPC")]
    if ok and not said:
        return False, layer, "ended as a breach, but the kernel never refused: " + describe(r)
    return ok, "workspace-tmpfs" if ok else layer, "%s; %s" % (said[0], ev) if ok else ev


def timeout_check(r):
    ok, layer, ev = supervisor_ended("timed_out", 124, "timeout", TIMEOUT_S - 0.2, TIMEOUT_S + 3)(r)
    left = marker_pids(r.marker)
    if left:
        return False, layer, "the double-forked daemon survived the timeout: pids %s" % left
    return ok, layer, ev + "; its double-forked daemon is gone" if ok else ev


# The table: (check name, policy, attack, params, expectation).  Policies:
# boundary (app.yaml), open-seccomp and no-landlock (the controls), loopback
# (loopback.yaml: network loopback).
MAIN, OPEN, NOLL, LOOP, CPU = "boundary", "open-seccomp", "no-landlock", "loopback", "cpu"
TABLE = [
    # filesystem: mounts and landlock
    ("read_shadow", MAIN, "read_shadow", {}, blocked("mounts")),
    ("read_supervisor_environ", MAIN, "read_supervisor_environ", {}, secret_not_seen),
    ("write_usr", MAIN, "write_usr", {}, blocked("mounts")),
    ("write_etc", MAIN, "write_etc", {}, blocked("mounts")),
    ("write_root", MAIN, "write_root", {}, blocked("mounts")),
    ("write_outside_workspace", MAIN, "write_outside_workspace", {}, blocked("mounts")),
    ("write_proc_sys", MAIN, "write_proc_sys", {}, blocked("mounts")),
    ("write_sys", MAIN, "write_sys", {}, blocked("mounts")),
    ("dev_mem", MAIN, "dev_mem", {}, blocked("mounts")),
    ("hardlink_outside", MAIN, "hardlink_outside", {}, blocked("mounts")),
    ("proc_root_files", MAIN, "proc_root_files", {}, blocked("identity")),
    ("proc_root_files[no-landlock]", NOLL, "proc_root_files", {}, blocked("identity")),
    ("landlock_proc_write", MAIN, "landlock_proc_write", {}, blocked("landlock")),
    ("landlock_proc_write[open-seccomp]", OPEN, "landlock_proc_write", {}, blocked("landlock")),
    ("landlock_proc_write[no-landlock]", NOLL, "landlock_proc_write", {}, gets_through()),
    ("mknod", MAIN, "mknod", {}, blocked("capabilities")),
    ("mknod[open-seccomp]", OPEN, "mknod", {}, blocked("capabilities")),
    ("symlink_output", MAIN, "symlink_output", {}, symlink_reported),
    ("symlink_output[open-seccomp]", OPEN, "symlink_output", {}, symlink_reported),
    # network
    ("tcp_loopback_host", MAIN, "tcp_loopback_host", "tcp", with_listener(TCP, blocked("seccomp"))),
    ("tcp_loopback_host[open-seccomp]", OPEN, "tcp_loopback_host", "tcp", with_listener(TCP, blocked("landlock"))),
    ("tcp_loopback_host[no-landlock]", NOLL, "tcp_loopback_host", "tcp", with_listener(TCP, blocked("netns"))),
    ("dns", MAIN, "dns", "dns", blocked("seccomp")),
    ("dns[open-seccomp]", OPEN, "dns", "dns", blocked("netns")),
    ("abstract_unix", MAIN, "abstract_unix", "abstract", with_listener(ABS, blocked("netns"))),
    ("socket_raw", MAIN, "sockets", {"which": "raw"}, blocked("seccomp")),
    ("socket_raw[open-seccomp]", OPEN, "sockets", {"which": "raw"}, blocked("capabilities")),
    ("socket_packet", MAIN, "sockets", {"which": "packet"}, blocked("seccomp")),
    ("socket_packet[open-seccomp]", OPEN, "sockets", {"which": "packet"}, blocked("capabilities")),
    ("socket_alg", MAIN, "sockets", {"which": "alg"}, blocked("seccomp")),
    # a kernel built without AF_ALG answers EAFNOSUPPORT: still not the filter
    ("socket_alg[open-seccomp]", OPEN, "sockets", {"which": "alg"}, gets_through("kernel:EAFNOSUPPORT")),
    ("socket_netlink", MAIN, "sockets", {"which": "netlink"}, blocked("seccomp")),
    ("socket_netlink[open-seccomp]", OPEN, "sockets", {"which": "netlink"}, gets_through()),
    # network: loopback: lo of the executor's own namespace works, nothing
    # of the host's is there, and the filter still refuses the same families
    ("loopback_own", LOOP, "loopback_own", {}, network_is("loopback only", loopback_works)),
    ("loopback_own[no-landlock]", NOLL, "loopback_own", {}, network_is("none", blocked("netns"))),
    ("loopback_host_isolated", LOOP, "loopback_host_isolated", "tcp+abstract",
     network_is("loopback only", with_listeners(blocked("netns")))),
    ("socket_netlink[loopback]", LOOP, "sockets", {"which": "netlink"}, blocked("seccomp")),
    ("socket_packet[loopback]", LOOP, "sockets", {"which": "packet"}, blocked("seccomp")),
    ("socket_alg[loopback]", LOOP, "sockets", {"which": "alg"}, blocked("seccomp")),
    # python-net-loopback lets AF_INET through the filter; a raw one then
    # needs CAP_NET_RAW, which the sandbox does not have.
    ("socket_raw[loopback]", LOOP, "sockets", {"which": "raw"}, blocked("capabilities")),
    # syscalls: seccomp, each with its control
    ("ptrace", MAIN, "ptrace", {}, blocked("seccomp")),
    ("ptrace[open-seccomp]", OPEN, "ptrace", {}, gets_through()),
    ("mount", MAIN, "mount", {}, blocked("seccomp")),
    ("mount[open-seccomp]", OPEN, "mount", {}, blocked("capabilities")),
    ("unshare", MAIN, "unshare", {}, blocked("seccomp")),
    ("unshare[open-seccomp]", OPEN, "unshare", {}, gets_through()),
    ("setns", MAIN, "setns", {}, blocked("seccomp")),
    ("setns[open-seccomp]", OPEN, "setns", {}, blocked("capabilities")),
    ("pivot_root", MAIN, "pivot_root", {}, blocked("seccomp")),
    ("pivot_root[open-seccomp]", OPEN, "pivot_root", {}, blocked("landlock")),
    ("pivot_root[no-landlock]", NOLL, "pivot_root", {}, gets_through()),
    ("chroot", MAIN, "chroot", {}, blocked("seccomp")),
    ("chroot[open-seccomp]", OPEN, "chroot", {}, blocked("capabilities")),
    ("bpf", MAIN, "bpf", {}, blocked("seccomp")),
    # kernel.unprivileged_bpf_disabled decides between the two
    ("bpf[open-seccomp]", OPEN, "bpf", {}, gets_through("capabilities")),
    ("keyctl", MAIN, "keyctl", {}, blocked("seccomp")),
    ("keyctl[open-seccomp]", OPEN, "keyctl", {}, gets_through()),
    ("perf_event_open", MAIN, "perf_event_open", {}, blocked("seccomp")),
    ("perf_event_open[open-seccomp]", OPEN, "perf_event_open", {}, gets_through("capabilities")),
    ("io_uring_setup", MAIN, "io_uring_setup", {}, blocked("seccomp")),
    ("io_uring_setup[open-seccomp]", OPEN, "io_uring_setup", {}, gets_through("capabilities")),
    ("userfaultfd", MAIN, "userfaultfd", {}, blocked("seccomp")),
    ("userfaultfd[open-seccomp]", OPEN, "userfaultfd", {}, gets_through("capabilities")),
    ("tiocsti", MAIN, "tiocsti", {}, blocked("seccomp")),
    ("tiocsti[open-seccomp]", OPEN, "tiocsti", {}, blocked("mounts")),
    ("reboot", MAIN, "reboot", {}, blocked("seccomp")),
    ("reboot[open-seccomp]", OPEN, "reboot", {}, blocked("capabilities")),
    # the architecture and x32 checks open every compiled filter, the
    # allow-all control's too
    ("syscall_abi", MAIN, "syscall_abi", {}, blocked("seccomp")),
    ("syscall_abi[open-seccomp]", OPEN, "syscall_abi", {}, blocked("seccomp")),
    # privilege
    ("setuid_binary", MAIN, "setuid_binary", {}, blocked("mounts")),
    ("capabilities", MAIN, "capabilities", {}, blocked("capabilities")),
    ("no_new_privs", MAIN, "no_new_privs", {}, blocked("no_new_privs")),
    ("seccomp_status", MAIN, "seccomp_status", {}, blocked("seccomp")),
    ("leaked_fd", MAIN, "leaked_fd", {}, blocked("fds")),
    # processes
    ("kill_supervisor", MAIN, "kill_supervisor", {}, blocked("pidns")),
    # the sandbox's init (pid 1, cordon's): signals from inside dropped, its
    # memory (a copy of the supervisor's) out of reach, orphans reaped
    ("init_signals", MAIN, "init_signals", {}, blocked("pidns")),
    ("init_memory", MAIN, "init_memory", {}, blocked("init")),
    ("init_memory[open-seccomp]", OPEN, "init_memory", {}, blocked("init")),
    ("orphans", MAIN, "orphans", {}, blocked("init")),
    ("signal_process_group", MAIN, "signal_process_group", "rundir", supervisor_survived),
    ("signal_process_group[no-landlock]", NOLL, "signal_process_group", "rundir", supervisor_survived),
    ("daemon", MAIN, "daemon", "marker", no_survivor("pidns", "succeeded", 0)),
    ("daemon[open-seccomp]", OPEN, "daemon", "marker", no_survivor("pidns", "succeeded", 0)),
    # resources
    ("big_file", MAIN, "big_file", {}, blocked("rlimit")),
    ("core_dump", MAIN, "core_dump", {}, blocked("rlimit")),
    ("raise_rlimit", MAIN, "raise_rlimit", {}, blocked("capabilities")),
    ("fork_bomb", MAIN, "fork_bomb", {}, fork_bomb_check),
    ("memory_bomb", MAIN, "memory_bomb", {}, memory_bomb_check),
    ("cpu_burn", CPU, "cpu_burn", {}, cpu_quota_check),
    ("cpu_burn[no-quota]", MAIN, "cpu_burn", {}, cpu_no_quota),
    ("disk_fill", MAIN, "disk_fill", {}, supervisor_ended("limit_exceeded", 1, "workspace_limit", 0, TIMEOUT_S - 0.5)),
    ("timeout", MAIN, "timeout", "marker", timeout_check),
    # the workspace is a tmpfs the kernel bounds: bytes held where a walk
    # did not look (100 levels down, unlinked but open, in a 0300
    # directory) and names without bytes all meet ENOSPC; under the limit
    # the same programs get through (the controls)
    ("ws_deep", MAIN, "ws_bypass", {"how": "deep"}, kernel_workspace_stop),
    ("ws_deep[under-limit]", MAIN, "ws_bypass", {"how": "deep", "mib": 30}, gets_through()),
    ("ws_unlinked", MAIN, "ws_bypass", {"how": "unlinked"}, kernel_workspace_stop),
    ("ws_unlinked[under-limit]", MAIN, "ws_bypass", {"how": "unlinked", "mib": 30}, gets_through()),
    ("ws_hidden", MAIN, "ws_bypass", {"how": "hidden"}, kernel_workspace_stop),
    ("ws_entries", MAIN, "ws_bypass", {"how": "entries"}, kernel_workspace_stop),
    ("ws_entries[under-limit]", MAIN, "ws_bypass", {"how": "entries", "files": 5000}, gets_through()),
    # the host's layout: nothing in mountinfo or the cgroup file names a run
    ("host_paths_mountinfo", MAIN, "host_paths", {"what": "mountinfo"}, blocked("mounts")),
    ("host_paths_cgroup", MAIN, "host_paths", {"what": "cgroup"}, blocked("cgroupns")),
]


def run_entry(entry):
    name, policy, attack, params, expect = entry
    run_dir = None
    if params == "tcp":
        params = {"port": TCP.sock.getsockname()[1]}
    elif params == "dns":
        params = {"nameserver": host_nameserver()}
    elif params == "abstract":
        params = {"abstract": ABSTRACT}
    elif params == "tcp+abstract":
        params = {"port": TCP.sock.getsockname()[1], "abstract": ABSTRACT}
    elif params == "rundir":   # kept, to remove its cgroups should its supervisor die (run modes)
        params, run_dir = {}, None if S.serve else os.path.join(W, "rd-" + name)
    marker = None
    if params == "marker":
        marker = new_marker(name)
        params = {"marker": marker}
    before = (TCP.count, ABS.count)
    r = Run(policy, attack, params, run_dir).wait()
    r.marker, r.run_dir = marker, run_dir
    r.listener_before = before[0] if attack == "tcp_loopback_host" else before[1]
    r.counts_before = before
    try:
        ok, layer, ev = expect(r)
    except Exception as e:  # a malformed result is a failed check, not a crash
        ok, layer, ev = False, None, "%s: %s; %s" % (type(e).__name__, e, describe(r))
    emit(ok, name, layer, ev)


def check_tmp_persist():
    m = new_marker("persist")
    a = Run(MAIN, "tmp_persist", {"marker": m, "phase": "plant"}).wait()
    b = Run(MAIN, "tmp_persist", {"marker": m, "phase": "look"}).wait()
    planted = a.res.get("status") == "succeeded" and a.result.get("phase") == "plant"
    ok, layer, ev = blocked("mounts")(b)
    on_host = os.path.exists("/tmp/" + m) or os.path.exists("/dev/shm/" + m)
    if not planted:
        ok, ev = False, "the first run could not plant: " + describe(a)
    if on_host:
        ok, ev = False, "the marker reached the host's /tmp or /dev/shm"
    emit(ok, "tmp_persist", layer, ev)


def check_loopback_host_control():
    """loopback_host_isolated's control: the same program run on the host,
    outside any sandbox, against the same two listeners.  It must connect,
    say so (blocked false) and the host's listener must count it: the check
    is able to fail, and the sandbox's namespace is what refused."""
    d = tempfile.mkdtemp(dir=W)
    pfile, out = os.path.join(d, "params.json"), os.path.join(d, "result.json")
    with open(pfile, "w") as f:
        json.dump({"port": TCP.sock.getsockname()[1], "abstract": ABSTRACT, "host_only": True}, f)
    before = TCP.count
    p = subprocess.run(["/usr/bin/python3", os.path.join(HERE, "attacks", "loopback_host_isolated.py")],
                       capture_output=True, text=True, timeout=30, cwd=d,
                       env={"PATH": "/usr/bin:/bin", "PYTHONPATH": HERE, "PYTHONDONTWRITEBYTECODE": "1",
                            "BOUNDARY_PARAMS": pfile, "BOUNDARY_RESULT": out})
    try:
        with open(out) as f:
            res = json.load(f)
    except (OSError, ValueError):
        res = {}
    seen = TCP.count - before
    ok = p.returncode == 0 and res.get("blocked") is False and seen >= 1
    emit(ok, "loopback_host_isolated[host]", "none:got-through" if ok else res.get("layer"),
         "%s; the host's listener counted %d" % (res.get("evidence"), seen) if ok
         else "rc %s, result %s, listener %d, stderr %s" % (p.returncode, res, seen, p.stderr[-300:]))
    shutil.rmtree(d, ignore_errors=True)


def check_host_paths_control():
    """host_paths_cgroup's control: the same program on the host reads the
    host's own cgroup path (not "/"), so the check is able to fail."""
    d = tempfile.mkdtemp(dir=W)
    out = os.path.join(d, "result.json")
    with open(os.path.join(d, "params.json"), "w") as f:
        json.dump({"what": "cgroup"}, f)
    p = subprocess.run(["/usr/bin/python3", os.path.join(HERE, "attacks", "host_paths.py")],
                       capture_output=True, text=True, timeout=30, cwd=d,
                       env={"PATH": "/usr/bin:/bin", "PYTHONPATH": HERE, "PYTHONDONTWRITEBYTECODE": "1",
                            "BOUNDARY_PARAMS": os.path.join(d, "params.json"), "BOUNDARY_RESULT": out})
    try:
        with open(out) as f:
            res = json.load(f)
    except (OSError, ValueError):
        res = {}
    ok = p.returncode == 0 and res.get("blocked") is False
    emit(ok, "host_paths_cgroup[host]", "none:got-through" if ok else res.get("layer"),
         res.get("evidence") if ok else "rc %s, result %s, stderr %s" % (p.returncode, res, p.stderr[-300:]))
    shutil.rmtree(d, ignore_errors=True)


def wait_for_marker(marker, limit=5.0):
    end = time.monotonic() + limit
    while time.monotonic() < end:
        if marker_pids(marker):
            return True
        time.sleep(0.05)
    return False


def check_cancel():
    """Cancelled mid-run (SIGTERM to cordon run; serve: POST
    /v1/executions/{requestId}/cancel): status cancelled (exit 130), no
    process left."""
    m = new_marker("cancel")
    # the daemon really leaves the session (setsid), under either profile
    r = Run(OPEN, "daemon", {"marker": m, "hold": 30})
    up = wait_for_marker(m)
    how = r.cancel()
    r.wait()
    left = marker_pids(m)
    ok = up and r.res.get("status") == "cancelled" and r.exit_is(130) and not left
    emit(ok, "cancel_sigterm", "supervisor",
         "%s after the daemon was up: status %s, %s; marker processes left %s" % (
             how, r.res.get("status"), r.ended_as(), left or "none") if ok
         else "%s: daemon up %s, left %s; %s" % (how, up, left, describe(r)))


def check_supervisor_killed():
    """SIGKILL to cordon: within 2 s no process of the sandbox remains (the
    executor's parent-death signal takes pid 1, and the pid namespace goes
    with it).  Nobody is left to clean up after a SIGKILL: the run
    directory and the cgroups stay; they are removed here and noted."""
    if S.serve:
        S.run_only("supervisor_sigkill", "SIGKILLs the `cordon run` supervisor of one execution (a SIGKILLed "
                   "server is the serve suite's fault test)")
        return
    m = new_marker("sigkill")
    rd = os.path.join(W, "rd-sigkill")
    r = Run(OPEN, "daemon", {"marker": m, "hold": 30}, run_dir=rd)
    up = wait_for_marker(m)
    r.kill()
    t0 = time.monotonic()
    r.p.wait()
    left = marker_pids(m)
    while left and time.monotonic() - t0 < 2.0:
        time.sleep(0.05)
        left = marker_pids(m)
    gone_after = time.monotonic() - t0
    ok = up and not left
    emit(ok, "supervisor_sigkill", "pdeathsig",
         "SIGKILL to cordon; every marker process gone within %.2fs" % gone_after if ok
         else "daemon up %s; still alive after 2s: %s" % (up, left))
    S.supervisor_died(rd, "after SIGKILL of the supervisor")
    if os.path.isdir(rd):
        notes.append("after SIGKILL of the supervisor its run directory stayed behind (removed by the test)")
        shutil.rmtree(rd, ignore_errors=True)


def check_supervisor_killed_during_setup():
    """SIGKILL to cordon while its executor is still being set up, between
    the supervisor's go-ahead (the sync byte) and PR_SET_PDEATHSIG.  The
    window is a few milliseconds; strace widens it without changing what
    runs: it delays the executor's first prctl() by 0.8 s, and the
    supervisor is killed during that delay.  Within 2 s of the delay's end
    no process of the sandbox may be left (the executor must notice that
    its supervisor is gone and end itself)."""
    if S.serve:
        S.run_only("supervisor_sigkill_during_setup", "runs `cordon run` under strace and SIGKILLs it during "
                   "its executor's setup")
        return
    strace = shutil.which("strace", path="/usr/bin:/bin")
    if strace is None:
        emit(True, "supervisor_sigkill_during_setup", "pdeathsig", "skipped: no strace on this host")
        return
    m = new_marker("setup-race")
    rd = os.path.join(W, "rd-setup-race")
    delay = 0.8
    prefix = (strace, "-f", "-qq", "-o", "/dev/null", "-e", "trace=prctl",
              "-e", "inject=prctl:delay_enter=%d:when=1" % int(delay * 1e6))
    r = Run(MAIN, "daemon", {"marker": m, "hold": 20}, run_dir=rd, prefix=prefix)
    end = time.monotonic() + 10
    sup = executor = None
    while time.monotonic() < end and executor is None:
        kids = harness.child_pids(r.p.pid)               # strace's child: cordon
        sup = kids[0] if kids else None
        ex = harness.child_pids(sup) if sup else []
        executor = ex[0] if ex else None
        time.sleep(0.005)
    if executor is None:
        r.p.kill()
        r.wait()
        emit(False, "supervisor_sigkill_during_setup", "pdeathsig", "the executor never appeared: " + describe(r))
        return
    time.sleep(0.2)                                      # inside the delayed prctl
    os.kill(sup, signal.SIGKILL)
    # strace stays until its last tracee is gone: no waiting for it first
    time.sleep(delay + 2.0)
    left = ([executor] if harness.alive(executor) else []) + marker_pids(m)
    harness.kill_pids(left)                              # the orphaned sandbox, started by this test
    r.wait(10)
    emit(not left, "supervisor_sigkill_during_setup", "pdeathsig",
         "SIGKILL to cordon during the executor's setup; nothing of the sandbox left 2s later" if not left else
         "SIGKILL to cordon during the executor's setup: the executor (host pid %d) lived on, re-parented "
         "and unsupervised; still running 2s later: %s" % (executor, left))
    time.sleep(0.1)
    S.supervisor_died(rd, "after SIGKILL of the supervisor during setup")
    shutil.rmtree(rd, ignore_errors=True)


def check_backstop(how):
    """Issue 15: the supervisor SIGSTOPped once the program runs, so its
    own timeout cannot fire.  The sandbox's init must kill the program and
    its marked child at the timeout + its grace all the same: checked on
    the host while the supervisor is still stopped (init ended, the marked
    child gone).  Then SIGCONT: the run reports timed_out, exit 124, and
    enforcement.timeout names the init that acted."""
    name = "timeout_backstop_" + how
    if S.serve:
        S.run_only(name, "SIGSTOPs the `cordon run` supervisor of one execution (a stopped server stops every "
                   "execution)")
        return
    m = new_marker(name)
    r = Run(MAIN, "backstop", {"marker": m, "how": how})
    up = wait_for_marker(m)
    init = r.init_pid(1.0) if up else None
    os.kill(r.pid, signal.SIGSTOP)
    stopped_at = time.monotonic() - r.t0

    def ended():
        return not marker_pids(m) and init is not None and not harness.alive(init)
    # the program started after cordon did: init acts before t0 + timeout + grace
    gone = wait_until_at(ended, r.t0 + TIMEOUT_S + INIT_GRACE_S + 3.0)
    gone_at = time.monotonic() - r.t0
    left = marker_pids(m)
    os.kill(r.pid, signal.SIGCONT)
    r.wait()
    if not gone:
        harness.kill_pids(left)                 # this test's own, left running
    enf = (r.res.get("enforcement") or {}).get("timeout")
    ok, layer, ev = supervisor_ended("timed_out", 124, "timeout")(r)
    why = None
    if not up or init is None:
        why = "the marked child never ran (init %s): %s" % (init, describe(r))
    elif not gone:
        why = ("the supervisor stopped %.1fs after its start: %.1fs after it, at %.1fs, the program still ran "
               "(marked pids %s, init alive %s): no backstop" % (stopped_at, gone_at - stopped_at, gone_at, left,
                                                                 harness.alive(init)))
    elif not ok:
        why = ev
    elif enf != "pid-ns-init":
        why = "enforcement.timeout is %r, want 'pid-ns-init'" % enf
    emit(why is None, name, "init", why or (
        "supervisor stopped at %.1fs; the program (%s) and its marked child gone at %.1fs (timeout %ds + grace "
        "%.0fs) while it was stopped; after SIGCONT status %s, %s, enforcement.timeout %r"
        % (stopped_at, how, gone_at, TIMEOUT_S, INIT_GRACE_S, r.res.get("status"), r.ended_as(), enf)))


def wait_until_at(pred, when, step=0.05):
    while time.monotonic() < when:
        if pred():
            return True
        time.sleep(step)
    return pred()


def check_concurrent(n=20):
    canaries = [secrets.token_hex(8) for _ in range(n)]
    runs = [Run(MAIN, "canary", {"canary": c}) for c in canaries]
    done = [r.wait() for r in runs]
    bad = [describe(r) for r, c in zip(done, canaries)
           if not (r.res.get("status") == "succeeded" and r.result.get("blocked") is True
                   and r.result.get("canary") == c and not r.result.get("foreign"))]
    # no run's stdout may name another's canary either
    for r, c in zip(done, canaries):
        text = json.dumps(r.res)
        bad += ["run %s saw canary %s" % (c, o) for o in canaries if o != c and o in text]
    emit(not bad, "concurrent_%d" % n, "mounts",
         "%d runs at once, all succeeded, each saw only its own canary (slowest %.1fs)" % (
             n, max(r.elapsed for r in done)) if not bad else "; ".join(bad[:3]))


def compile_blobs():
    for name, yaml in ((MAIN, "app.yaml"), (OPEN, "control-open-seccomp.yaml"), (NOLL, "control-no-landlock.yaml"),
                       (LOOP, "loopback.yaml"), (CPU, "cpu.yaml")):
        S.compile(name, os.path.join(HERE, yaml), [os.path.join(HERE, "tools.yaml")],
                  includes=[os.path.join(HERE, "policies")])


def main():
    if S.serve and harness.serve_available(S.cordon) is None:
        print("skip %s - cordon serve is not in this build (cordon serve --help failed)" % MODE)
        return S.finish()
    try:
        compile_blobs()
        # A CPU quota rootless is a harness error where no cpu cgroup is
        # delegated: that app's pool never warms, so serve is ready without it.
        S.unready_ok = set() if ROOT else {"boundary-cpu"}
        # the secret is in every supervisor's environment: cordon run's, or cordon serve's
        S.open_backend(env={"BOUNDARY_HOST_SECRET": SECRET})
        with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
            # the slow ones first, so they overlap with the rest
            order = sorted(TABLE, key=lambda e: e[2] not in ("timeout", "disk_fill", "fork_bomb", "memory_bomb",
                                                                 "ws_bypass", "cpu_burn"))
            list(pool.map(run_entry, [e for e in order if wanted(e[0])]))
        for name, check in (("tmp_persist", check_tmp_persist), ("identity", check_identity),
                            ("loopback_host_isolated[host]", check_loopback_host_control),
                            ("host_paths_cgroup[host]", check_host_paths_control),
                            ("cancel_sigterm", check_cancel), ("supervisor_sigkill", check_supervisor_killed),
                            ("supervisor_sigkill_during_setup", check_supervisor_killed_during_setup),
                            ("timeout_backstop_burn", lambda: check_backstop("burn")),
                            ("timeout_backstop_sleep", lambda: check_backstop("sleep")),
                            ("concurrent_20", check_concurrent)):
            if wanted(name):
                check()
        S.check_leftovers(what="run directory, mount, cgroup, host-id lock or marked process")
    finally:
        tcp.close()
        ab.close()
    return S.finish()


if __name__ == "__main__":
    sys.exit(main())
