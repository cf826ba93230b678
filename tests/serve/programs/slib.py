# SPDX-License-Identifier: Apache-2.0
# slib.py - what the serve suite's programs share (passed with --input, as
# the boundary attacks get blib.py): plant a canary everywhere an
# execution can leave state, and look everywhere for canaries.
#
# A canary is the runner's token (a fixed prefix, then hex digits).  The
# places: files in /tmp, /dev/shm and the workspace; a process whose argv
# and environment hold it; this interpreter's os.environ.
import json
import os
import re
import subprocess
import sys

OUT = "/workspace/out/result.json"
FILE_DIRS = ["/tmp", "/dev/shm", "/workspace/work", "/workspace/out", "/workspace/logs/executor"]
PY = "/usr/bin/python3"


def params():
    with open("/workspace/work/params.json") as f:
        return json.load(f)


def report(**d):
    with open(OUT, "w") as f:
        json.dump(d, f)


def plant_files(canary):
    made = []
    for d in FILE_DIRS:
        p = os.path.join(d, "canary-" + canary)
        with open(p, "w") as f:
            f.write(canary)
        made.append(p)
    return made


def plant_env(canary):
    os.environ["SERVE_CANARY"] = canary          # os.putenv too: inherited by children


def start_process(canary, daemon=False):
    """A sleeper holding canary in its argv and environment.  daemon:
    double fork and setsid, its parent gone, as a daemon leaves itself;
    else a child of this program, still running while it looks."""
    argv = [PY, "-c", "import time; time.sleep(120)", canary]
    env = dict(os.environ, SERVE_CANARY=canary)
    if not daemon:
        return subprocess.Popen(argv, env=env).pid
    rd, wr = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.setsid()
            how = b"setsid ok"
        except OSError as e:
            how = ("setsid errno %d" % e.errno).encode()
        if os.fork() == 0:
            os.write(wr, how)
            os.execve(PY, argv, env)
        os._exit(0)
    os.waitpid(pid, 0)
    os.close(wr)
    return os.read(rd, 64).decode()


def scan(prefix):
    """Every canary (prefix + hex) this execution can see, by place."""
    pat = re.compile(re.escape(prefix).encode() + rb"[0-9a-f]+")
    found = {"files": set(), "processes": set(), "environ": set(), "os.environ": set()}
    for top in FILE_DIRS + ["/workspace", "/"]:
        walk = os.walk(top) if top != "/" else [("/", os.listdir("/"), [])]
        for root, dirs, files in walk:
            for n in dirs + files:
                found["files"] |= {m.decode() for m in pat.findall(n.encode())}
    for p in os.listdir("/proc"):
        if not p.isdigit() or int(p) == os.getpid():
            continue
        for what, key in (("cmdline", "processes"), ("environ", "environ")):
            try:
                with open("/proc/%s/%s" % (p, what), "rb") as f:
                    found[key] |= {m.decode() for m in pat.findall(f.read())}
            except OSError:
                pass
    for k, v in os.environ.items():
        found["os.environ"] |= {m.decode() for m in pat.findall(("%s=%s" % (k, v)).encode())}
    return {k: sorted(v) for k, v in found.items()}


def pids():
    return sorted(int(p) for p in os.listdir("/proc") if p.isdigit())


if __name__ == "__main__":
    sys.exit("slib.py is imported by the serve suite's programs")
