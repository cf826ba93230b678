# SPDX-License-Identifier: Apache-2.0
# quick.py - ordinary Python inside the sandbox (make check, through
# tests/cli/test_compat_quick.sh): each probe either works or fails with
# the reason docs/profiles.md gives.  Writes {probe: "ok" | "skip: why" |
# "error: Type: message"} to /workspace/out/result.json.
import json
import os
import sys
import traceback

R = {}
PROBES = []


def probe(name):
    def wrap(fn):
        PROBES.append((name, fn))
        return fn
    return wrap


def overdue(signum, frame):
    raise TimeoutError("the probe took more than 60 s")


def run_all():
    import signal
    for name, fn in PROBES:
        # A probe that hangs (a refused call some library waits around)
        # fails alone, in a minute, not at the run's timeout.
        signal.signal(signal.SIGALRM, overdue)
        signal.alarm(60)
        try:
            r = fn()
            R[name] = r if isinstance(r, str) and r.startswith("skip:") else "ok"
        except BaseException as e:  # noqa: BLE001 - the outcome is the point
            R[name] = "error: %s: %s" % (type(e).__name__, str(e)[:200])
            traceback.print_exc(file=sys.stderr)
        finally:
            signal.alarm(0)
    with open("/workspace/out/result.json", "w") as f:
        json.dump(R, f)


@probe("identity")
def _():
    import grp
    import pwd
    assert os.getgroups() is not None
    assert os.getresuid() == (os.getuid(),) * 3, os.getresuid()
    assert os.getresgid() == (os.getgid(),) * 3, os.getresgid()
    assert pwd.getpwuid(os.getuid()).pw_name == "sandbox"
    assert pwd.getpwnam("root").pw_uid == 0 and pwd.getpwnam("nobody").pw_uid == 65534
    assert grp.getgrnam("root").gr_gid == 0 and grp.getgrgid(65534).gr_name == "nogroup"
    import socket  # localhost resolves from /etc/hosts (no resolver is reachable)
    assert "127.0.0.1" in {a[4][0] for a in socket.getaddrinfo("localhost", 80)}


@probe("setgroups_eperm")
def _():
    # refused as the kernel refuses an unprivileged caller: EPERM, which
    # Python reads as PermissionError (ENOSYS confused initgroups callers)
    try:
        os.setgroups([os.getgid()])
    except PermissionError:
        return
    raise AssertionError("setgroups did not raise PermissionError")


@probe("pipe_size_fadvise_affinity")
def _():
    import fcntl
    r, w = os.pipe()
    try:
        fcntl.fcntl(w, fcntl.F_SETPIPE_SZ, 1 << 16)
        assert fcntl.fcntl(w, fcntl.F_GETPIPE_SZ) >= 1 << 16
    finally:
        os.close(r)
        os.close(w)
    with open("fadv", "wb") as f:
        f.write(b"x" * 4096)
        f.flush()
        os.posix_fadvise(f.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)
    cpus = os.sched_getaffinity(0)
    os.sched_setaffinity(0, cpus)
    assert os.sched_getaffinity(0) == cpus
    assert os.sched_rr_get_interval(0) >= 0


@probe("umask")
def _():
    old = os.umask(0o077)
    assert old == 0o022, oct(old)
    assert os.umask(old) == 0o077


@probe("chdir_symlink_statvfs")
def _():
    os.mkdir("d")
    os.chdir("d")
    os.symlink("target", "link")
    assert os.readlink("link") == "target"
    os.chdir("..")
    assert os.statvfs(".").f_bsize > 0
    import shutil
    assert shutil.disk_usage("/tmp").total > 0


@probe("subprocess_pipes")
def _():
    import subprocess
    p = subprocess.run([sys.executable, "-c", "import sys; sys.stdout.write(sys.stdin.read().upper())"],
                       input="abc", capture_output=True, text=True, check=True, start_new_session=True)
    assert p.stdout == "ABC", p.stdout
    assert subprocess.run("echo $((6 * 7))", shell=True, capture_output=True, text=True).stdout == "42\n"
    # Keep the Popen: dropped, its __del__ may reap the child first.
    child = subprocess.Popen(["/bin/true"])
    st = os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)
    assert st.si_status == 0 and child.wait() == 0


def square(x):
    return x * x


@probe("multiprocessing_fork")
def _():
    import multiprocessing as mp
    ctx = mp.get_context("fork")
    with ctx.Pool(2) as pool:
        assert pool.map(square, range(5)) == [0, 1, 4, 9, 16]
    v, a = ctx.Value("i", 1), ctx.Array("d", [1.0, 2.0])
    a_, b_ = ctx.Pipe()
    a_.send({"x": 1})
    assert b_.recv() == {"x": 1} and v.value == 1 and list(a) == [1.0, 2.0]
    with ctx.Manager() as m:
        d = m.dict()
        d["k"] = 2
        assert d["k"] == 2


@probe("multiprocessing_spawn_forkserver")
def _():
    import multiprocessing as mp
    for how in ("spawn", "forkserver"):
        with mp.get_context(how).Pool(2) as pool:
            assert pool.map(square, range(4)) == [0, 1, 4, 9], how


@probe("asyncio")
def _():
    import asyncio

    async def main():
        async def echo(r, w):
            w.write(await r.readline())
            await w.drain()
            w.close()
        srv = await asyncio.start_unix_server(echo, path="/tmp/echo.sock")
        r, w = await asyncio.open_unix_connection("/tmp/echo.sock")
        w.write(b"hi\n")
        line = await r.readline()
        w.close()
        srv.close()
        p = await asyncio.create_subprocess_exec(sys.executable, "-c", "print(7)", stdout=asyncio.subprocess.PIPE)
        out, _ = await p.communicate()
        return line, out
    assert asyncio.run(main()) == (b"hi\n", b"7\n")


@probe("threading")
def _():
    import concurrent.futures
    import threading
    with concurrent.futures.ThreadPoolExecutor(4) as ex:
        assert sum(ex.map(square, range(100))) == 328350
    assert threading.active_count() >= 1


@probe("tempfile_shutil")
def _():
    import shutil
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "a"), "w") as f:
            f.write("x")
        shutil.copytree(d, d + "-copy")
        assert open(os.path.join(d + "-copy", "a")).read() == "x"
        shutil.rmtree(d + "-copy")


@probe("signals")
def _():
    import signal
    import faulthandler
    faulthandler.enable()
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    signal.setitimer(signal.ITIMER_PROF, 10)
    assert signal.getitimer(signal.ITIMER_PROF)[0] > 0
    signal.setitimer(signal.ITIMER_PROF, 0)


@probe("numpy")
def _():
    import numpy as np
    a = np.arange(9.0).reshape(3, 3) + np.eye(3)
    assert abs(np.linalg.det(a) - np.linalg.det(a.T)) < 1e-9


@probe("pandas")
def _():
    try:
        import pandas as pd
    except ImportError:
        return "skip: pandas is not installed"
    assert pd.DataFrame({"a": [1, 2, 3]})["a"].mean() == 2


@probe("matplotlib")
def _():
    try:
        import matplotlib
    except ImportError:
        return "skip: matplotlib is not installed"
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    plt.plot([1, 2, 3])
    plt.savefig("/tmp/plot.png")


@probe("inet_refused")
def _():
    import socket
    try:
        socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    except OSError as e:
        assert e.errno == 38, e   # ENOSYS: python-compute has Unix sockets only
        return
    raise AssertionError("an AF_INET socket was made")


# spawn and forkserver children import this file again (as __mp_main__):
# only the first process runs the probes.
if __name__ == "__main__":
    run_all()
