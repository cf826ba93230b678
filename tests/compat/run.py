#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""run.py - make compat: CPython's own regression tests (Debian's
libpython3.11-testsuite), module by module, bare and inside cordon run
under the shipped python-compute profile; prints the share of the tests
that pass bare which also pass inside.

    BUILD=build SRC=. /usr/bin/python3 tests/compat/run.py [MODULE...]

COMPAT_JOBS (default 2) modules at once; COMPAT_KEEP=DIR keeps the per-
module JSON there; COMPAT_BASELINE=TREE also runs each module inside an
older checkout's build (TREE/build, TREE/policies) and prints its figure
beside this one (a before/after in one run, against the same bare runs).  Bare runs are as the unprivileged user cordon-test
(created when missing), as the sandbox's program is unprivileged: tests
that behave differently for root would otherwise count against cordon.
Tests that cannot pass in any sandbox without inet networking or other
users' identities are excepted by the patterns in exceptions.txt, each
with its reason, and listed."""
import concurrent.futures
import fnmatch
import json
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
import time

BUILD = os.path.abspath(os.environ.get("BUILD", "build"))
SRC = os.path.abspath(os.environ.get("SRC", "."))
HERE = os.path.join(SRC, "tests", "compat")
PY = "/usr/bin/python3"
USER = "cordon-test"
GOAL = 98.0


def modules(argv):
    if argv:
        return argv
    out = []
    with open(os.path.join(HERE, "modules.txt")) as f:
        for ln in f:
            if not ln.startswith("#"):
                out += ln.split()
    return out


def exceptions():
    """(pattern, reason, ignore) from exceptions.txt: `[ignore] PATTERN  #
    reason`.  `ignore`: the test hangs inside (it waits, with no timeout,
    for a server that could not start), so the inside run does not start
    it (regrtest --ignore); the others run, and are excepted only when they
    do not pass."""
    out = []
    with open(os.path.join(HERE, "exceptions.txt")) as f:
        for ln in f:
            ln = ln.strip()
            if ln and not ln.startswith("#"):
                pat, _, why = ln.partition("#")
                pat = pat.split()
                ign = len(pat) == 2 and pat[0] == "ignore"
                if len(pat) != 1 + ign or not why.strip():
                    sys.exit("exceptions.txt: want `[ignore] PATTERN  # reason`: %s" % ln)
                out.append((pat[-1], why.strip(), ign))
    return out


def ensure_user():
    try:
        return pwd.getpwnam(USER)
    except KeyError:
        subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", USER], check=True)
        return pwd.getpwnam(USER)


def program(mods, out, ignore=(), match=()):
    with open(os.path.join(HERE, "inside.py")) as f:
        body = f.read()
    return "MODULES = %r\nOUT = %r\nIGNORE = %r\nMATCH = %r\n%s" % (mods, out, list(ignore), list(match), body)


def run_bare(work, mod, user):
    d = tempfile.mkdtemp(prefix="bare-", dir=work)
    os.chown(d, user.pw_uid, user.pw_gid)
    prog = os.path.join(d, "main.py")
    with open(prog, "w") as f:
        f.write(program([mod], os.path.join(d, "compat.json")))
    env = {"PATH": "/usr/bin:/bin", "HOME": d, "LANG": "C.UTF-8", "OMP_NUM_THREADS": "1",
           "OPENBLAS_NUM_THREADS": "1", "TMPDIR": d}
    p = subprocess.run(["setpriv", "--reuid", str(user.pw_uid), "--regid", str(user.pw_gid), "--clear-groups",
                        PY, "-I", prog], cwd=d, env=env, stdin=subprocess.DEVNULL, capture_output=True,
                       timeout=1800)
    try:
        with open(os.path.join(d, "compat.json")) as f:
            return json.load(f)[0]
    except (OSError, ValueError, IndexError):
        return {"module": mod, "tests": {}, "why": {}, "crash": "bare exit %d: %s" % (p.returncode, p.stderr[-500:])}
    finally:
        shutil.rmtree(d, ignore_errors=True)


def run_inside(work, blob, mod, build=BUILD, ignore=(), match=()):
    d = tempfile.mkdtemp(prefix="in-", dir=work)
    prog = os.path.join(d, "main.py")
    with open(prog, "w") as f:
        f.write(program([mod], "/workspace/out/compat.json", ignore, match))
    rd = os.path.join(d, "run")
    p = subprocess.run([os.path.join(build, "cordon"), "run", "--policy", blob, "--code", prog, "--run-dir", rd,
                        "--state-dir", os.path.join(d, "state")], stdin=subprocess.DEVNULL, capture_output=True,
                       text=True, timeout=1800)
    try:
        with open(os.path.join(rd, "out", "compat.json")) as f:
            return json.load(f)[0]
    except (OSError, ValueError, IndexError):
        return {"module": mod, "tests": {}, "why": {}, "crash": "inside exit %d: %s" % (p.returncode, p.stdout[-800:])}
    finally:
        shutil.rmtree(d, ignore_errors=True)


def compile_blob(build, policies, out, app=None):
    env = dict(os.environ, CORDON_POLICY_PATH=policies)
    subprocess.run([os.path.join(build, "cordonc"), "compile", app or os.path.join(HERE, "app.yaml"),
                    os.path.join(HERE, "tools.yaml"), "-o", out], check=True, capture_output=True, env=env)
    return out


def loopback_app(work):
    """app.yaml with `network: loopback` under python-net-loopback: the
    same sandbox, with inet sockets on its own lo."""
    with open(os.path.join(HERE, "app.yaml")) as f:
        text = f.read()
    for a, b in (("network: none", "network: loopback"), ("profile: python-compute", "profile: python-net-loopback")):
        if text.count(a) != 1:
            sys.exit("tests/compat/app.yaml: want one `%s` line" % a)
        text = text.replace(a, b)
    out = os.path.join(work, "app-loopback.yaml")
    with open(out, "w") as f:
        f.write(text)
    return out


# The reason given to the tests that fail inside python-compute and pass
# in the same sandbox with inet sockets on its own loopback: what they
# need is inet networking, which python-compute refuses by design.
INET = "needs inet networking: passes inside python-net-loopback with network: loopback"


def main(argv):
    mods = modules(argv[1:])
    excs = exceptions()
    user = ensure_user()
    work = tempfile.mkdtemp(prefix="cordon-compat.")
    os.chmod(work, 0o755)
    keep = os.environ.get("COMPAT_KEEP")
    try:
        blob = compile_blob(BUILD, os.path.join(SRC, "policies"), os.path.join(work, "compat.cpol"))
        base = os.environ.get("COMPAT_BASELINE")
        if base:
            base = os.path.abspath(base)
            base_blob = compile_blob(os.path.join(base, "build"), os.path.join(base, "policies"),
                                     os.path.join(work, "baseline.cpol"))
        t0 = time.monotonic()
        jobs = int(os.environ.get("COMPAT_JOBS", "2"))
        with concurrent.futures.ThreadPoolExecutor(jobs) as ex:
            bare = dict(zip(mods, ex.map(lambda m: run_bare(work, m, user), mods)))
            ign = [p for p, _, i in excs if i]
            inside = dict(zip(mods, ex.map(lambda m: run_inside(work, blob, m, ignore=ign), mods)))
            before = dict(zip(mods, ex.map(lambda m: run_inside(work, base_blob, m, os.path.join(base, "build"), ign),
                                           mods))) if base else {}
            # What did not pass inside (or was not started: the ignored
            # hangs) runs again, only those tests, with inet sockets on
            # the sandbox's own lo.
            lb_blob = compile_blob(BUILD, os.path.join(SRC, "policies"), os.path.join(work, "loopback.cpol"),
                                   loopback_app(work))
            redo = {m: [t for t, o in bare[m]["tests"].items() if o == "pass" and inside[m]["tests"].get(t) != "pass"]
                    for m in mods}
            loop = dict(zip(mods, ex.map(lambda m: run_inside(work, lb_blob, m, match=redo[m]) if redo[m] else
                                         {"tests": {}}, mods)))
        total = passed = passed_before = 0
        excepted = {}
        lost = {}
        print("%-34s %6s %6s %6s%s" % ("module", "bare", "inside", "except", "  before" if base else ""))
        for m in mods:
            b, i = bare[m], inside[m]
            for k in ("crash",):
                if k in b:
                    print("  %s: %s" % (m, b[k]))
                if k in i:
                    print("  %s: %s" % (m, i[k]))
            ok_bare = [t for t, o in b["tests"].items() if o == "pass"]
            mt = mp = mx = mb = 0
            for t in ok_bare:
                why = next((w for p, w, _ in excs if fnmatch.fnmatchcase(t, p)), None)
                if why is None and loop[m]["tests"].get(t) == "pass":
                    why = INET
                if why is not None and i["tests"].get(t) != "pass":
                    excepted.setdefault(why, []).append(t)
                    mx += 1
                    continue
                mt += 1
                if base and before[m]["tests"].get(t) == "pass":
                    mb += 1
                if i["tests"].get(t) == "pass":
                    mp += 1
                else:
                    lost[t] = (i["tests"].get(t, "missing"), i["why"].get(t, ""))
            total += mt
            passed += mp
            passed_before += mb
            print("%-34s %6d %6d %6d%s" % (m, mt, mp, mx, "  %6d" % mb if base else ""))
            if keep:
                os.makedirs(keep, exist_ok=True)
                with open(os.path.join(keep, m + ".json"), "w") as f:
                    json.dump({"bare": b, "inside": i, "loopback": loop[m]}, f)
        if keep:
            with open(os.path.join(keep, "lost.json"), "w") as f:
                json.dump(lost, f, indent=1)
            with open(os.path.join(keep, "excepted.json"), "w") as f:
                json.dump(excepted, f, indent=1)
        for why, ts in sorted(excepted.items()):
            print("excepted (%s): %d tests" % (why, len(ts)))
        share = 100.0 * passed / total if total else 0.0
        if base:
            print("compat before (%s): %d of %d: %.1f%%" % (base, passed_before, total,
                                                          100.0 * passed_before / total if total else 0.0))
        print("compat: %d of %d tests that pass bare pass inside: %.1f%% (goal %.0f%%; %d excepted; %.0f s)"
              % (passed, total, share, GOAL, sum(len(x) for x in excepted.values()), time.monotonic() - t0))
        return 0 if share >= GOAL else 1
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
