#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# run.py - cordon serve's isolation between executions (README.md), in one
# mode: serve (as root) or serve-rootless.  One cordon serve for the suite
# (tests/lib/harness.py starts it with --pool 2 and stops it with SIGTERM:
# the check serve_stopped); each program is a POST /v1/executions.
#
#   BUILD=DIR (cordon, cordonc)  POLICIES=DIR (shipped profiles)
#   /usr/bin/python3 run.py serve|serve-rootless
#
# Each check prints one line, "ok|FAIL MODE CHECK EVIDENCE"; the exit
# status is 1 when any check failed.
import concurrent.futures
import json
import os
import secrets
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True   # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
import harness  # noqa: E402  (tests/lib: the suites' shared runner)

S = harness.Suite("serve")
if not S.serve:
    sys.exit("run.py: mode %s: this suite runs through cordon serve only (serve, serve-rootless)" % S.mode)
SLIB = os.path.join(HERE, "programs", "slib.py")
PREFIX = "cordon-serve-%s-canary-" % S.mode    # every canary: PREFIX + 12 hex digits
POOL = 2                                      # the harness's --pool


def canary():
    c = PREFIX + secrets.token_hex(6)
    S.markers.append(c)       # no process may carry it once the suite ends (the leftover check)
    return c


def start(program, params):
    p = dict(params, prefix=PREFIX)
    return S.start("iso", os.path.join(HERE, "programs", program + ".py"), [SLIB, ("params.json", json.dumps(p))])


def check_concurrent(n=20):
    """n executions at once, each leaving its canary in /tmp, /dev/shm and
    the workspace, in a running child's argv and environment, and in
    os.environ, then looking for every canary: each sees its own in each
    place (the control) and none of the others', and all n were running at
    one moment (each program's start and end, on the host's clock)."""
    cs = [canary() for _ in range(n)]
    runs = [start("canary", {"canary": c, "hold": 3}) for c in cs]
    with concurrent.futures.ThreadPoolExecutor(max_workers=n) as pool:
        done = list(pool.map(lambda r: r.wait(90), runs))
    bad = []
    for r, c in zip(done, cs):
        res = r.result
        seen, foreign = res.get("seen") or {}, res.get("foreign") or {}
        if r.res.get("status") != "succeeded" or res.get("canary") != c:
            bad.append("%s: %s" % (c[-12:], harness.describe(r)))
            continue
        missing = [k for k in ("files", "processes", "environ", "os.environ") if c not in seen.get(k, [])]
        if missing:
            bad.append("%s did not see its own canary in %s (the control)" % (c[-12:], missing))
        others = {k: v for k, v in foreign.items() if v}
        if others:
            bad.append("%s saw %s" % (c[-12:], others))
        text = json.dumps(r.res)
        bad += ["%s's result names %s" % (c[-12:], o[-12:]) for o in cs if o != c and o in text]
    starts = [r.result.get("start") for r in done if isinstance(r.result.get("start"), (int, float))]
    ends = [r.result.get("end") for r in done if isinstance(r.result.get("end"), (int, float))]
    overlap = len(starts) == n and len(ends) == n and max(starts) < min(ends)
    if len(starts) == n and not overlap:
        bad.append("not all %d at once: the last started %.2fs after the first ended" % (n, max(starts) - min(ends)))
    S.emit(not bad, "concurrent_canaries_%d" % n, "; ".join(bad[:4]) if bad else
           "%d executions at once (all running for %.2fs together, the slowest answered in %.1fs): each saw its "
           "own canary in files, a process's argv and environment and os.environ, and none of the other %d" % (
               n, min(ends) - max(starts), max(r.elapsed for r in done), n - 1))


def check_next_execution(follow=POOL + 2):
    """A first execution leaves its canary in /tmp, /dev/shm and the
    workspace, in os.environ, and in a setsid()'d daemon (argv and
    environment) still running when it ends; it sees all of that itself
    (the control).  The next `follow` executions (the warm sandboxes of the
    pool, and those made after the first ran) see none of it, and the
    daemon is gone from the host."""
    c = canary()
    first = start("leave", {"canary": c}).wait()
    seen = first.result.get("seen") or {}
    bad = []
    if first.res.get("status") != "succeeded":
        bad.append("the first execution: %s" % harness.describe(first))
    else:
        missing = [k for k in ("files", "processes", "environ", "os.environ") if c not in seen.get(k, [])]
        if missing or not str(first.result.get("daemon", "")).startswith("setsid ok"):
            bad.append("the first execution did not leave all of it (the control): missing %s, daemon %s" % (
                missing, first.result.get("daemon")))
    left = harness.marker_pids(c)
    if left:
        bad.append("the first execution's daemon outlived it on the host: %s" % left)
    for i in range(follow):
        r = start("look", {}).wait()
        found = {k: v for k, v in (r.result.get("seen") or {}).items() if c in v}
        if r.res.get("status") != "succeeded" or "seen" not in r.result:
            bad.append("execution %d: %s" % (i + 2, harness.describe(r)))
        elif found or c in json.dumps(r.res):
            bad.append("execution %d saw the first's canary in %s" % (i + 2, sorted(found) or "its result"))
        elif r.result.get("pids") != [1, 2]:
            bad.append("execution %d sees processes %s, not only its init and itself" % (i + 2, r.result.get("pids")))
    S.emit(not bad, "next_execution_clean", "; ".join(bad[:4]) if bad else
           "the first left its canary in %d files, os.environ and a setsid()'d daemon (argv, environment), and "
           "saw them; the next %d executions saw none of it, each only its own init and itself; the daemon is gone from the "
           "host" % (len(first.result.get("files") or []), follow))


def main():
    if harness.serve_available(S.cordon) is None:
        print("skip %s - cordon serve is not in this build (cordon serve --help failed)" % S.mode)
        return S.finish()
    try:
        S.compile("iso", os.path.join(HERE, "app.yaml"), [os.path.join(HERE, "tools.yaml")])
        S.open_backend()
        check_concurrent()
        check_next_execution()
        S.check_leftovers(what="run directory, mount, cgroup, host-id lock or canary process")
    finally:
        rc = S.finish()
    return rc


if __name__ == "__main__":
    sys.exit(main())
