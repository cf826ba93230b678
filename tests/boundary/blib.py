# SPDX-License-Identifier: Apache-2.0
# blib.py - helpers shared by the boundary attacks (tests/boundary/attacks/).
#
# The runner passes this file and params.json to every run with --input, so
# both sit in /workspace/work next to user_code.py and an attack does
# `import blib`.  An attack tries one thing, decides from what the kernel
# answered (an errno, a signal, a status line) whether it was stopped and by
# which layer, and writes that as /workspace/out/result.json:
#
#   {"attack": "...", "blocked": true, "layer": "seccomp", "evidence": "..."}
#
# Layer names (README.md): mounts, landlock, seccomp, identity, capabilities,
# no_new_privs, netns, pidns, cgroupns, rlimit, cgroup, supervisor, fds,
# outputs, workspace-tmpfs.
import ctypes
import errno
import json
import os

# The runner's host-side controls run an attack outside the sandbox and
# point these two elsewhere; inside, the policy's env never sets them.
OUT = os.environ.get("BOUNDARY_RESULT", "/workspace/out/result.json")
PARAMS = os.environ.get("BOUNDARY_PARAMS", "/workspace/work/params.json")
_libc = ctypes.CDLL(None, use_errno=True)

# x86_64 syscall numbers
SYS = {
    "ptrace": 101, "mount": 165, "pivot_root": 155, "chroot": 161,
    "unshare": 272, "setns": 308, "bpf": 321, "keyctl": 250, "perf_event_open": 298,
    "io_uring_setup": 425, "userfaultfd": 323, "reboot": 169, "ioctl": 16,
}


def params():
    try:
        with open(PARAMS) as f:
            return json.load(f)
    except FileNotFoundError:
        return {}


def supervisor_pid():
    try:
        with open("/workspace/work/supervisor.pid") as f:
            return int(f.read().strip())
    except (FileNotFoundError, ValueError):
        return None


def marker_pids(marker):
    """Pids of the processes, other than this one, whose command line holds
    marker (the runner uses this on the host side too)."""
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


def report(attack, blocked, layer, evidence, **extra):
    d = {"attack": attack, "blocked": blocked, "layer": layer, "evidence": evidence}
    d.update(extra)
    with open(OUT, "w") as f:
        json.dump(d, f)
    print(json.dumps(d))


def ename(e):
    return errno.errorcode.get(e, str(e))


def syscall(name, *args):
    """(return value, errno name or None).  Arguments are integers; pass a
    pointer as ctypes.addressof(obj) or a bytes object."""
    conv = []
    for a in args:
        conv.append(ctypes.c_char_p(a) if isinstance(a, bytes) else ctypes.c_long(a))
    ctypes.set_errno(0)
    r = _libc.syscall(ctypes.c_long(SYS[name]), *conv)
    return r, (ename(ctypes.get_errno()) if r == -1 else None)


def status():
    """/proc/self/status as a dict of str -> str."""
    d = {}
    with open("/proc/self/status") as f:
        for line in f:
            k, _, v = line.partition(":")
            d[k] = v.strip()
    return d


def mount_of(path):
    """(mount point, options) of the mount holding path, from mountinfo."""
    best = ("", "")
    with open("/proc/self/mountinfo") as f:
        for line in f:
            parts = line.split()
            mp, opts = parts[4], parts[5]
            if (path == mp or path.startswith(mp.rstrip("/") + "/")) and len(mp) >= len(best[0]):
                best = (mp, opts)
    return best


def writable_but_for_landlock(path):
    """True when neither the mount nor the mode bits refuse a write to an
    existing file: an EACCES there can only come from landlock."""
    st = os.stat(path)
    mp, opts = mount_of(path)
    return "ro" not in opts.split(",") and st.st_uid == os.geteuid() and bool(st.st_mode & 0o200)


def landlock_active():
    """Whether a landlock domain holds this process: /proc/self/comm is
    ours on a read-write mount, so only landlock refuses writing it."""
    try:
        with open("/proc/self/comm", "w") as f:
            f.write("python3")
        return False
    except PermissionError:
        return True


def layer_of_errno(e, path_ok_for_dac=False):
    """The layer an errno names when no finer test applies."""
    n = ename(e) if isinstance(e, int) else e
    table = {
        "ENOSYS": "seccomp",        # profile default errno(ENOSYS); the kernel has the call
        "EROFS": "mounts",          # read-only bind or the read-only tmpfs root
        "EXDEV": "mounts",          # a different mount than the workspace
        "ENOENT": "mounts",         # not in the sandbox's root at all
        "ENETUNREACH": "netns",     # empty network namespace, lo down
        "ECONNREFUSED": "netns",
        "EADDRNOTAVAIL": "netns",
        "EFBIG": "rlimit",          # RLIMIT_FSIZE
        "ESRCH": "pidns",
        "ENOTTY": "mounts",         # no terminal in the sandbox (/dev has none)
    }
    if n == "EACCES":
        return "landlock" if path_ok_for_dac else "identity"
    return table.get(n, "kernel:" + n)


def refused_call(attack, what, real, oracle):
    """Report a syscall attack.  real = (ret, errno) of the attack itself;
    oracle = the same call with arguments the kernel rejects before any
    permission check (a bad pointer, an unknown command), so an EPERM there
    cannot be the kernel's: only a seccomp rule answers before the kernel
    reads the arguments."""
    r, e = real
    if r != -1:
        return report(attack, False, None, "%s succeeded (returned %d)" % (what, r))
    if e == "ENOSYS":
        return report(attack, True, "seccomp", "%s: ENOSYS (the profile's default)" % what)
    if e == "EPERM":
        if oracle[1] == "EPERM":
            return report(attack, True, "seccomp",
                          "%s: EPERM, and EPERM again for arguments the kernel rejects itself" % what)
        return report(attack, True, "capabilities",
                      "%s: EPERM; bad arguments give the kernel's own %s, so no filter answered" % (what, oracle[1]))
    return report(attack, True, layer_of_errno(e), "%s: %s" % (what, e))


def try_write(path):
    """Create path for writing: None when it worked, else the errno."""
    try:
        with open(path, "w") as f:
            f.write("x")
        return None
    except OSError as ex:
        return ex.errno


def write_attack(attack, paths):
    """Try to create each of paths; all must fail, and the layer named is
    the one every failure agrees on."""
    layers, ev = set(), []
    for p in paths:
        e = try_write(p)
        if e is None:
            return report(attack, False, None, "created %s" % p)
        layers.add(layer_of_errno(e))
        ev.append("%s: %s" % (p, ename(e)))
    layer = layers.pop() if len(layers) == 1 else "mixed:" + ",".join(sorted(layers))
    report(attack, True, layer, "; ".join(ev))
