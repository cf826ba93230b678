#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# run.py - the tool bridge's tests of one mode (root or rootless): programs
# inside `cordon run` call the supervisor's tool socket, and each check
# asserts the exact (code, check) of the answer and the audit line of the
# call (README.md).  run.sh calls this once as root and once as an
# unprivileged user.
#
#   BUILD=DIR (cordon, cordonc)  POLICIES=DIR (shipped profiles)
#   /usr/bin/python3 run.py root|rootless
#
# Each check prints one line, "ok|FAIL MODE CHECK EVIDENCE" (tests/lib/
# harness.py, shared with the boundary suite); the exit status is 1 when
# any check failed.
import concurrent.futures
import hashlib
import json
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True   # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
import harness  # noqa: E402  (tests/lib: the suites' shared runner)

PY = "/usr/bin/python3"
TLIB = os.path.join(HERE, "tlib.py")
EXEC_UID = 1001             # app.yaml: the executor's host uid as root
SHORT_TIMEOUT_S = 3         # the run-timeout check's policy timeout

# Holes these tests found and nobody has fixed yet (README.md, "Found"):
# the check still runs and fails, but prints XFAIL and does not fail the
# suite unless BRIDGE_STRICT=1; when it passes it prints XPASS (then remove
# it from here).
KNOWN_ROOTLESS = {
    # No cgroup is ours to make rootless here (docs/tools.md): a tool's
    # setsid()'d grandchild escapes the process-group kill, and one left by
    # a SIGKILLed supervisor stays; the audit line says "cgroup": "none".
    "tool_setsid_escape": "rootless: no cgroup, only the process group is killed",
    "tool_killed_supervisor_swept": "rootless: no cgroup for the next run to sweep"}
MODE = sys.argv[1] if len(sys.argv) > 1 else ("root" if os.geteuid() == 0 else "rootless")
if MODE not in ("root", "rootless"):
    sys.exit("run.py: mode %s: the bridge's checks read the run directory; cordon run only" % MODE)
# As root the working tree goes under /run, not /tmp: the supervisor runs no
# tool below a directory that others may write (a sticky /tmp included), and
# test.untrusted's directory must pass that check until the runner opens it.
# Rootless, run.sh gives a TMPDIR that passes (below a root-owned tree).
S = harness.Suite("bridge", MODE, known=KNOWN_ROOTLESS if MODE == "rootless" else {},
                  workdir="/run" if MODE == "root" else None)
CORDON, CORDONC, POLICIES = S.cordon, S.cordonc, S.policies
notes = S.notes


def emit(ok, name, evidence):
    S.emit(ok, name, evidence)


W = S.W
DATA = os.path.join(W, "data")    # the counter and hang files the tools write
RUNS = os.path.join(W, "runs")    # every run's --run-dir
UNTRUSTED = os.path.join(W, "untrusted")  # test.untrusted's program, trusted until the runner opens it
for d in (DATA, RUNS, UNTRUSTED):
    os.mkdir(d)
    os.chmod(d, 0o755)
# As root the tools run as a dedicated unprivileged uid: they write their
# marks into DATA, so it is open to them.
os.chmod(DATA, 0o777 if MODE == "root" else 0o755)
shutil.copy(os.path.join(HERE, "tools", "counter"), os.path.join(UNTRUSTED, "counter"))
os.chmod(os.path.join(UNTRUSTED, "counter"), 0o755)
COUNTER = os.path.join(DATA, "counter.log")
HANGLOG = os.path.join(DATA, "hang.log")

# Secrets have a shape the search program can spot without knowing them
# (zq, 40 hex digits, qz); the sandbox only ever gets their SHA-256.
SECRET_RE = "zq[0-9a-f]{40}qz"


def new_secret():
    return "zq" + secrets.token_hex(20) + "qz"


FILE_SECRET = new_secret()     # --secrets FILE
ENV_SECRET = new_secret()      # the supervisor's environment
# BRIDGE_SECRET in every run's environment too: a run whose selected tools
# lack a secret is refused before its program starts, and most runs give no
# --secrets FILE.  Where one is given, its value wins (check_secrets).
ENV_FILE_SECRET = new_secret()
HOST_ONLY = "bridge-host-only-" + secrets.token_hex(8)   # in cordon's environment, declared by no tool


def sha(s):
    return hashlib.sha256(s.encode()).hexdigest()


def uniq(name):
    """A message id no other check (or earlier suite run) uses."""
    return "%s-%s-%s" % (MODE, name, secrets.token_hex(4))


# --- the request context ------------------------------------------------

# all of agent bridge's tools but test.unselected
SELECTED = ["test.echo", "test.admin", "test.budget", "test.daily", "test.counter", "test.slow_counter",
            "test.slow", "test.hang", "test.hang_long", "test.flood", "test.secret", "test.env_secret",
            "test.bad_json", "test.fail", "test.daily_counter", "test.run_counter", "test.long_counter", "test.tiny_numbers", "test.tempfail", "test.fail_once",
            "test.whoami", "test.whoami_supervisor",
            "test.escape", "test.escape_hang", "test.escape_long", "test.hog", "test.forker", "test.untrusted",
            "test.bad_utf8", "test.arm_counter", "test.typed", "test.typed_counter"]
CTX = {"tenant": "acme", "project": "p-7", "user": "ana", "session": "s-1", "roles": ["analyst"],
       "tools": SELECTED, "accounting": {"costCentre": "cc-7", "quota": 3}}
# the fixed calls of selection and role: every tool selected, role admin held
CTX_OPEN = dict(CTX, roles=["analyst", "admin"])
del CTX_OPEN["tools"]


# --- running one program ------------------------------------------------

class Run(harness.RunExecution):
    """One `cordon run` of programs/<program>.py with --run-dir, started
    directly so self.p.pid is the supervisor."""

    def __init__(self, name, program, params, blob="main", context=CTX, agent="bridge", state=None,
                 secrets_file=None, env=None, rd=None):
        self.name = name
        self.rd = rd or os.path.join(RUNS, name)
        self.state = state or os.path.join(W, "state-" + name)
        super().__init__(S, S.blobs[blob], os.path.join(HERE, "programs", program + ".py"),
                         [TLIB, ("params.json", json.dumps(params))], context=context, agent=agent,
                         run_dir=self.rd, state_dir=self.state, secrets_file=secrets_file,
                         env=dict({"BRIDGE_ENV_SECRET": ENV_SECRET, "BRIDGE_SECRET": ENV_FILE_SECRET,
                                   "BRIDGE_HOST_ONLY": HOST_ONLY}, **(env or {})))

    def wait(self, limit=60):
        super().wait(limit)
        self.audit = audit_lines(self.rd)
        for ln in self.audit:       # a tool's leased host uid: its lock file must go too
            if isinstance(ln.get("identity"), dict) and ln["identity"].get("kind") == "dedicated":
                S.track_host_id(ln["identity"].get("uid"))
        return self

    def partial(self):
        """result.json as the program has written it so far."""
        try:
            with open(self.live("workspace/out/result.json")) as f:
                return json.load(f)
        except (OSError, ValueError):
            return {}

    exec_pid = harness.RunExecution.executor_pid   # the executor (pid 1 of the sandbox)

    def live(self, rel):
        """A path in the live sandbox's own filesystems (the workspace and
        the socket are tmpfs mounts of its namespace, not host paths)."""
        return "/proc/%s/root/%s" % (self.exec_pid(), rel)

    def release(self):
        """Lets a holding program (hold.py, calls.py with "hold") end: it
        waits for its marker file to go."""
        gone = 0
        for rel in ("workspace/logs/executor/token", "workspace/logs/executor/hold"):
            try:
                os.unlink(self.live(rel))
                gone += 1
            except FileNotFoundError:
                pass
            except OSError as e:
                notes.append("%s: cannot release the program: %s" % (self.name, e))

    def held_token(self):
        """The token programs/hold.py wrote, or None (the run is then
        released and waited for)."""
        path = self.live("workspace/logs/executor/token")
        token = wait_until(lambda: os.path.exists(path) and open(path).read(), 15)
        if not token:
            self.release()
            self.wait()
        return token

    def calls(self):
        return self.result.get("calls") or []


def audit_lines(rd):
    try:
        with open(os.path.join(rd, "logs", "tool-calls.jsonl")) as f:
            return [json.loads(x) for x in f if x.strip()]
    except (OSError, ValueError) as e:
        return [{"unreadable": str(e)}]


AUDIT_FIELDS = ("time", "executionId", "app", "agent", "tenant", "project", "user", "session", "roles",
                "accounting", "requestId", "tool", "decision", "check", "paramNames", "durationMs", "toolMs",
                "requestBytes", "responseBytes")


def audit_line_faults(ln):
    """What an audit line lacks (docs/bridge.md, Audit): every field, and
    code, reason and message exactly when it is a refusal."""
    bad = ["no %s" % k for k in AUDIT_FIELDS if k not in ln]
    # a tool that ran and whose answer is withheld as in_doubt is allowed
    # with a code (docs/bridge.md, Audit)
    denied = ln.get("decision") == "denied" or ln.get("code") == "in_doubt"
    if ln.get("decision") not in ("allowed", "denied"):
        bad.append("decision %r" % ln.get("decision"))
    bad += ["%s %s" % ("no" if denied else "an allowed call with", k) for k in ("code", "reason", "message")
            if (k in ln) != denied]
    return bad


describe = harness.describe
wait_until = harness.wait_until
alive = harness.alive


def counter_lines(mid):
    """The counter tool's executions for message id mid: [(exec id, pid)]."""
    try:
        with open(COUNTER) as f:
            return [tuple(x.split()[1:3]) for x in f if x.split(" ", 1)[0] == mid]
    except FileNotFoundError:
        return []


def hang_pids(exec_id):
    """Pids (tool, child) the hang tool wrote for one execution."""
    try:
        with open(HANGLOG) as f:
            return [int(p) for x in f if x.split()[0] == exec_id for p in x.split()[2:4]]
    except FileNotFoundError:
        return []


def alive(pid):
    """pid exists and is not a zombie."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


# --- judging answers and audit lines -------------------------------------

def err_of(answer):
    """(code, check) of an answer, ("ok", None) when allowed."""
    if not isinstance(answer, dict):
        return ("none", None)
    if answer.get("ok") is True:
        return ("ok", None)
    e = answer.get("error") or {}
    return (e.get("code"), e.get("check")) if answer.get("ok") is False else ("none", json.dumps(answer)[:200])


class Audit:
    """A run's audit lines, each matched to at most one call: by the
    request id when the answer has one, else (refused before the id was
    read) by the check and message the answer gave."""

    def __init__(self, r):
        self.lines = list(r.audit)
        self.used = set()

    def take(self, answer, want=None):
        """The line of the call answered so; a call whose answer could not
        be read (the program closed first) by want's check and reason."""
        rid = answer.get("id") if isinstance(answer, dict) else None
        e = (answer.get("error") or {}) if isinstance(answer, dict) else {}
        unread = not isinstance(answer, dict) or "noAnswer" in answer
        for i, ln in enumerate(self.lines):
            if i in self.used:
                continue
            if unread and want and ln.get("requestId") is None and (ln.get("check"), ln.get("reason")) == \
               (want[1], want[2]) or not unread and rid is not None and ln.get("requestId") == rid or \
               not unread and rid is None and ln.get("requestId") is None and ln.get("check") == e.get("check") \
               and ln.get("message") == e.get("message"):
                self.used.add(i)
                return ln
        return None


CLOSED = "closed by this program"   # programs/calls.py, a spec with close: true


def judge(answer, line, want):
    """Problems (a list of strings) of one call against want = (code,
    check, reason) or ("ok", check): the answer and its audit line."""
    bad = []
    code, check = err_of(answer)
    if isinstance(answer, dict) and answer.get("noAnswer") == CLOSED:
        pass                          # the program hung up first: the audit line decides
    elif want[0] == "ok":
        if code != "ok":
            bad.append("answer %s/%s, want allowed: %s" % (code, check, json.dumps(answer)[:300]))
    elif (code, check) != (want[0], want[1]):
        bad.append("answer %s/%s, want %s/%s: %s" % (code, check, want[0], want[1], json.dumps(answer)[:300]))
    if line is None:
        bad.append("no audit line for it")
        return bad
    if want[0] == "ok":
        if line.get("decision") != "allowed" or "code" in line or line.get("check") != want[1]:
            bad.append("audit %s" % json.dumps(line)[:300])
    else:
        got = (line.get("decision"), line.get("code"), line.get("check"), line.get("reason"))
        exp = ("denied", want[0], want[1], want[2])
        if got != exp:
            bad.append("audit %s, want %s" % ("/".join(map(str, got)), "/".join(map(str, exp))))
    return bad


def ev_of(answer, line):
    """An answer and its audit line in a few words, for an ok line."""
    e = (answer or {}).get("error") or {}
    said = "closed mid-frame, no answer read" if (answer or {}).get("noAnswer") == CLOSED else \
        "%s/%s %r" % (e.get("code", "ok"), e.get("check"), e.get("message", "")[:90])
    return "%s; audit %s/%s/%s" % (said, (line or {}).get("decision"), (line or {}).get("check"),
                                   (line or {}).get("reason"))


# --- the policy ------------------------------------------------------------

def compile_blobs():
    with open(os.path.join(HERE, "tools.yaml.in")) as f:
        inv = f.read().replace("@TOOLS@", os.path.join(HERE, "tools")).replace("@DATA@", DATA).replace(
            "@UNTRUSTED@", UNTRUSTED)
    tools = os.path.join(W, "tools.yaml")
    with open(tools, "w") as f:
        f.write(inv)
    with open(os.path.join(HERE, "app.yaml")) as f:
        app = f.read()
    short = os.path.join(W, "app-short.yaml")
    with open(short, "w") as f:
        f.write(app.replace("    timeout: 30s\n", "    timeout: %ds\n" % SHORT_TIMEOUT_S, 1))
    for name, yaml in (("main", os.path.join(HERE, "app.yaml")), ("short", short)):
        S.compile(name, yaml, [tools])


# --- the check table -------------------------------------------------------
# Each denied request is the allowed call with one thing wrong; its fixed
# form (that one thing put right) is sent too, in the run named, and must be
# allowed: without the check, the request would have been answered as the
# fixed one was (README.md says which check or allow each time).

def req(tool="test.echo", params=None, **kw):
    d = {"tool": tool, "params": {"text": "hi"} if params is None else params}
    d.update(kw)
    return d


BASE = req()
LIMIT = 64 << 10       # app.yaml's max_tool_request_bytes
BASE_TEXT = '{"v":1,"token":"@TOKEN@","id":"%s","tool":"test.echo","params":{"text":"hi"}}'
NOMSG = uniq("nomsg")
PV_ALLOWED = "pv-" + secrets.token_hex(4)      # param values the audit log must not hold
PV_REFUSED = "pv-" + secrets.token_hex(4)
PV_RESULT = "pv-" + secrets.token_hex(4)       # a value of a tool's answer the audit log must not hold

CHECKS = [
    # name, request, (code, check, reason), fixed request or None, run of the fixed one
    ("frame_empty", {"body": "", "announce": 0, "send": 0, "checkClose": True}, ("bad_request", "frame", "empty"),
     BASE, "main"),
    ("frame_oversized", dict(BASE, padTo=LIMIT + 1, checkClose=True), ("bad_request", "frame", "oversized"),
     dict(BASE, padTo=LIMIT), "main"),
    ("frame_truncated", dict(BASE, announce=100, send=10, close=True), ("bad_request", "frame", "truncated"),
     BASE, "main"),
    ("json_two_objects", {"body": BASE_TEXT % "rj1" + ' {"v":1}'}, ("bad_request", "json", "malformed"), BASE, "main"),
    ("json_duplicate_key", {"body": BASE_TEXT.replace('"tool"', '"tool":"test.echo","tool"') % "rj2"},
     ("bad_request", "json", "malformed"), BASE, "main"),
    ("json_nul_escape", {"body": (BASE_TEXT % "rj3").replace('"hi"', '"hi\\u0000x"')},
     ("bad_request", "json", "malformed"), BASE, "main"),
    ("json_nul_byte", {"body": (BASE_TEXT % "rj4").replace('"hi"', '"hi\x00x"')},
     ("bad_request", "json", "malformed"), BASE, "main"),
    ("token_missing", dict(BASE, token="none", checkClose=True), ("unauthenticated", "token", "missing"), BASE, "main"),
    ("token_wrong", dict(BASE, token="wrong", checkClose=True), ("unauthenticated", "token", "wrong"), BASE, "main"),
    ("shape_unknown_member", dict(BASE, extra={"trace": 1}), ("bad_request", "shape", "shape"), BASE, "main"),
    ("shape_version", dict(BASE, extra={"v": 2}), ("bad_request", "shape", "shape"), BASE, "main"),
    ("shape_message_id", dict(BASE, messageId="two words"), ("bad_request", "shape", "shape"), BASE, "main"),
    ("tool_not_the_agents", req("test.other"), ("unknown_tool", "tool", "unknown"), req("test.other"), "other"),
    ("tool_unknown", req("test.nope"), ("unknown_tool", "tool", "unknown"), None, None),
    ("selection", req("test.unselected"), ("unknown_tool", "selection", "not_selected"), req("test.unselected"),
     "open"),
    ("params_missing", req(params={}), ("invalid_params", "params", "missing"), BASE, "main"),
    ("params_unknown", req(params={"text": "hi", "x": 1}), ("invalid_params", "params", "unknown"), BASE, "main"),
    ("params_mistyped", req(params={"text": 5}), ("invalid_params", "params", "mistyped"), BASE, "main"),
    ("params_out_of_range", req(params={"text": "hi", "n": 11}), ("invalid_params", "params", "out_of_range"),
     req(params={"text": "hi", "n": 10}), "main"),
    ("params_too_long", req(params={"text": "x" * 17}), ("invalid_params", "params", "too_long"),
     req(params={"text": "x" * 16}), "main"),
    ("params_too_short", req(params={"text": ""}), ("invalid_params", "params", "too_short"),
     req(params={"text": "x"}), "main"),
    ("constraint_false", req(params={"text": "forbidden"}), ("tool_denied", "constraint", "false"),
     req(params={"text": "forbidden!"}), "main"),
    ("role_missing", req("test.admin"), ("tool_denied", "role", "role"), req("test.admin"), "open"),
    ("side_effect_without_message_id", req("test.counter", {"item": "nomsg"}),
     ("invalid_params", "params", "message_id"), req("test.counter", {"item": "nomsg"}, messageId=NOMSG), "main"),
    # the order: the first check that refuses decides
    ("order_token_before_all", req("test.nope", {}, token="wrong", extra={"trace": 1}, checkClose=True),
     ("unauthenticated", "token", "wrong"), None, None),
    ("order_selection_before_params", req("test.unselected", {}), ("unknown_tool", "selection", "not_selected"),
     None, None),
    ("order_params_before_role", req("test.admin", {}), ("invalid_params", "params", "missing"), None, None),
    # the tool ran and its answer is refused
    ("exec_bad_answer", req("test.bad_json", {}), ("tool_failed", "exec", "bad_answer"), None, None),
    ("exec_exit_status", req("test.fail", {}), ("tool_failed", "exec", "failed"), None, None),
]


def spec_key(s):
    return json.dumps(s, sort_keys=True)


def check_table():
    """Every row of CHECKS in one run (main), the fixed requests of rows
    that need another context or agent in two more, and the per-run budget
    and a connection reused after a refusal."""
    main, fixed = [], {"open": [], "other": []}
    seen = set()
    for name, spec, want, fix, where in CHECKS:
        main.append(dict(spec, name=name))
        if fix is not None:
            lst = main if where == "main" else fixed[where]
            k = spec_key(fix) + where
            if k not in seen:
                seen.add(k)
                lst.append(dict(fix, name="fixed:" + spec_key(fix)))
    # several calls on one connection; a refusal short of frame and token
    # leaves it open
    main += [dict(req(params={"text": "one"}), name="conn_first"),
             dict(req(params={"text": "x" * 17}), name="conn_refused", conn="same"),
             dict(req(params={"text": "two"}), name="conn_again", conn="same"),
             dict(BASE, extra={"trace": 1}, name="conn_shape"),
             dict(req(params={"text": "three"}), name="conn_after_shape", conn="same"),
             {"body": BASE_TEXT % "rj5" + " []", "name": "conn_json"},
             dict(req(params={"text": "four"}), name="conn_after_json", conn="same")]
    # parameter values never reach the audit log, allowed or refused
    main += [dict(req(params={"text": PV_ALLOWED}), name="pv_allowed"),
             dict(req(params={"text": "hi", "mood": PV_REFUSED}), name="pv_refused")]
    # max_calls: 2 a run; the first two are the third's fixed form
    main += [dict(req("test.budget"), name="budget_1"), dict(req("test.budget"), name="budget_2"),
             dict(req("test.budget"), name="budget_run")]
    runs = {"main": Run("checks", "calls", {"calls": main}),
            "open": Run("checks-open", "calls", {"calls": fixed["open"]}, context=CTX_OPEN),
            "other": Run("checks-other", "calls", {"calls": fixed["other"]}, context=CTX_OPEN, agent="other")}
    for r in runs.values():
        r.wait()
    got, audits = {}, {}
    wants = {name: want for name, spec, want, fix, where in CHECKS}
    for where, r in runs.items():
        audit = audits[r.name] = Audit(r)
        for c in r.calls():
            got[(where, c["name"])] = (c, audit.take(c.get("answer"), wants.get(c["name"])))
        if r.res.get("status") != "succeeded" or not r.calls():
            emit(False, "run:" + r.name, describe(r))
    for name, spec, want, fix, where in CHECKS:
        c, line = got.get(("main", name), ({}, None))
        ans = c.get("answer")
        bad = judge(ans, line, want)
        if spec.get("checkClose") and c.get("closed") is not True:
            bad.append("the connection stayed open after a %s refusal" % want[1])
        # Issue 14: a constraint refusal quotes the constraint, so the
        # program can see what to change.
        if name == "constraint_false":
            msg = ((ans or {}).get("error") or {}).get("message", "")
            if msg != 'constraint 1 of test.echo does not hold: text != "forbidden"':
                bad.append("the refusal does not quote the constraint: %r" % msg)
        ev = ev_of(ans, line)
        if fix is not None:
            fc, fline = got.get((where, "fixed:" + spec_key(fix)), ({}, None))
            fbad = judge(fc.get("answer"), fline, ("ok", "exec"))
            bad += ["fixed request: " + b for b in fbad]
            ev += "; fixed request allowed (%s run)" % where
        if spec.get("checkClose"):
            ev += "; connection closed"
        emit(not bad, name, "; ".join(bad) if bad else ev)
    # a connection carries several calls; a params refusal keeps it open
    res = [got.get(("main", n), ({}, None)) for n in ("conn_first", "conn_refused", "conn_again")]
    bad = judge(res[0][0].get("answer"), res[0][1], ("ok", "exec")) + \
        judge(res[1][0].get("answer"), res[1][1], ("invalid_params", "params", "too_long")) + \
        judge(res[2][0].get("answer"), res[2][1], ("ok", "exec"))
    emit(not bad, "connection_reused", "; ".join(bad) if bad else
         "allowed, invalid_params/params, allowed: three calls on one connection")
    # a refusal of a whole frame (json, shape) leaves the stream at a frame
    # boundary: only frame and token refusals end the connection
    for first, then, want in (("conn_shape", "conn_after_shape", ("bad_request", "shape", "shape")),
                              ("conn_json", "conn_after_json", ("bad_request", "json", "malformed"))):
        a, b = got.get(("main", first), ({}, None)), got.get(("main", then), ({}, None))
        bad = judge(a[0].get("answer"), a[1], want) + judge(b[0].get("answer"), b[1], ("ok", "exec"))
        emit(not bad, "connection_kept_after_" + want[1], "; ".join(bad) if bad else
             "%s/%s, then allowed on the same connection" % want[:2])
    pv = [got.get(("main", n), ({}, None)) for n in ("pv_allowed", "pv_refused")]
    bad = judge(pv[0][0].get("answer"), pv[0][1], ("ok", "exec")) + \
        judge(pv[1][0].get("answer"), pv[1][1], ("invalid_params", "params", "out_of_range"))
    logs = b""
    for n in ("tool-calls.jsonl", "supervisor.log"):
        try:
            with open(os.path.join(runs["main"].rd, "logs", n), "rb") as f:
                logs += f.read()
        except OSError as e:
            bad.append("%s: %s" % (n, e))
    logs += json.dumps(runs["main"].res.get("toolCalls")).encode()
    bad += ["%s value %s is in the logs" % (w, v) for w, v in (("an allowed", PV_ALLOWED), ("a refused", PV_REFUSED))
            if v.encode() in logs]
    emit(not bad, "audit_no_param_values", "; ".join(bad) if bad else
         "neither an allowed nor a refused call's param value is in tool-calls.jsonl, supervisor.log or toolCalls")
    b = [got.get(("main", n), ({}, None)) for n in ("budget_1", "budget_2", "budget_run")]
    bad = judge(b[0][0].get("answer"), b[0][1], ("ok", "exec")) + \
        judge(b[1][0].get("answer"), b[1][1], ("ok", "exec")) + \
        judge(b[2][0].get("answer"), b[2][1], ("budget_exceeded", "budget", "run"))
    emit(not bad, "budget_run", "; ".join(bad) if bad else
         "max_calls 2: allowed, allowed, then " + ev_of(b[2][0].get("answer"), b[2][1]))
    # no execution for the side-effect call refused for its missing message id
    ran = counter_lines("")
    emit(not ran and len(counter_lines(NOMSG)) == 1, "side_effect_without_message_id_not_run",
         "the counter ran %d times without a message id, %d with (fixed request)" % (len(ran),
                                                                                   len(counter_lines(NOMSG))))
    # every call is one audit line with every field, and one toolCalls entry
    for r in runs.values():
        sent = sum(c.get("answers") and len(c["answers"]) or 1 for c in r.calls())
        tc = r.res.get("toolCalls")
        stray = [ln for i, ln in enumerate(r.audit) if i not in audits[r.name].used]
        bad = [] if len(r.audit) == sent and isinstance(tc, list) and len(tc) == sent else [
            "%d calls, %d audit lines, %s toolCalls entries; lines of no call: %s" % (
                sent, len(r.audit), len(tc) if isinstance(tc, list) else tc, json.dumps(stray)[:400])]
        bad += ["%s in %s" % (m, json.dumps(ln)[:200]) for ln in r.audit for m in audit_line_faults(ln)][:3]
        emit(not bad, "audit_every_call:" + r.name, "; ".join(bad) if bad else
             "%d calls, %d audit lines with every field, %d toolCalls entries" % (sent, len(r.audit), len(tc)))
    return runs["main"]


def check_allowed(main):
    """The allowed call end to end: the answer is the tool's, the tool saw
    the context's identity and nothing else of the supervisor's
    environment, the audit line carries the identity, toolCalls lists it."""
    c = next((c for c in main.calls() if c["name"] == "fixed:" + spec_key(BASE)), {})
    ans = c.get("answer") or {}
    line = next((ln for ln in main.audit if ln.get("requestId") == ans.get("id") and ln.get("tool") == "test.echo"
                 and ln.get("paramNames") == ["text"] and ln.get("decision") == "allowed"), None)
    bad = judge(ans, line, ("ok", "exec"))
    res = ans.get("result") or {}
    want_env = {"CORDON_TOOL": "test.echo", "CORDON_EXECUTION_ID": main.res.get("executionId"),
                "CORDON_APP": "bridge", "CORDON_TENANT": "acme", "CORDON_PROJECT": "p-7", "CORDON_USER": "ana",
                "CORDON_SESSION": "s-1", "CORDON_MESSAGE_ID": "", "CORDON_REQUEST_ID": ans.get("id")}
    if res.get("params") != {"text": "hi"}:
        bad.append("the tool got params %r" % res.get("params"))
    if res.get("identity") != want_env:
        bad.append("the tool's identity %r, want %r" % (res.get("identity"), want_env))
    names = set(res.get("envNames") or [])
    if names != set(want_env) | {"PATH", "LANG"}:
        bad.append("the tool's environment has %s" % sorted(names))
    if line:
        want = {"executionId": main.res.get("executionId"), "app": "bridge", "agent": "bridge", "tenant": "acme",
                "project": "p-7", "user": "ana", "session": "s-1", "roles": ["analyst"],
                "accounting": {"costCentre": "cc-7", "quota": 3}, "tool": "test.echo", "check": "exec"}
        for k, v in want.items():
            if line.get(k) != v:
                bad.append("audit %s=%r, want %r" % (k, line.get(k), v))
        for k in ("time", "durationMs", "toolMs", "requestBytes", "responseBytes"):
            if k not in line:
                bad.append("audit has no %s" % k)
        sent = len((BASE_TEXT % ans.get("id")).replace("@TOKEN@", "0" * 64))    # tokens are 64 characters
        if line.get("requestBytes") != sent:
            bad.append("audit requestBytes %r, the request had %d" % (line.get("requestBytes"), sent))
        ms, tool_ms = line.get("durationMs"), line.get("toolMs")
        if not (isinstance(ms, (int, float)) and isinstance(tool_ms, (int, float)) and ms >= tool_ms):
            bad.append("durationMs %r < toolMs %r" % (ms, tool_ms))
    tc = [e for e in main.res.get("toolCalls") or [] if e.get("requestId") == ans.get("id")
          and e.get("tool") == "test.echo" and e.get("decision") == "allowed"]
    if not tc:
        bad.append("no toolCalls entry for it: %s" % json.dumps(main.res.get("toolCalls"))[:200])
    emit(not bad, "allowed_end_to_end", "; ".join(bad) if bad else
         "ok, the tool saw the context's identity and only PATH, LANG, CORDON_*; audit allowed/exec with "
         "tenant, project, user, session, roles, accounting; in toolCalls")


def check_client():
    """The shipped client and the typed stubs, as a generated program calls."""
    calls = [{"tool": "test.echo", "params": {"text": "cl"}, "via": "client"},
             {"tool": "test.echo", "params": {"text": "st"}, "via": "stub"},
             {"tool": "test.admin", "params": {"text": "x"}, "via": "client"},
             {"tool": "test.echo", "params": {"text": "x" * 17}, "via": "stub"}]
    r = Run("client", "client", {"calls": calls}).wait()
    got = r.result.get("calls") or []
    bad = []
    if r.res.get("status") != "succeeded" or len(got) != 4:
        bad.append(describe(r) + " result=%s" % json.dumps(r.result)[:300])
    else:
        if (got[0].get("result") or {}).get("params") != {"text": "cl"}:
            bad.append("client: %s" % got[0])
        if (got[1].get("result") or {}).get("params") != {"text": "st"}:
            bad.append("stub: %s" % got[1])
        if got[2].get("error") != {"class": "ToolDenied", "code": "tool_denied", "check": "role"}:
            bad.append("client refusal: %s" % got[2])
        if got[3].get("error") != {"class": "InvalidParams", "code": "invalid_params", "check": "params"}:
            bad.append("stub refusal: %s" % got[3])
    emit(not bad, "client_and_stubs", "; ".join(bad) if bad else
         "cordon_tools.tool_call and tools.test.echo answered; ToolDenied(role), InvalidParams(params) raised "
         "from %s" % r.result.get("modules"))


def check_returns():
    """returns: (issue 14): the tool's answer is checked against its result
    spec before the program sees it.  One that fits passes unchanged; one
    that does not is tool_failed (check exec, reason returns) naming the
    path, with no value of the answer in the audit line; a side-effect
    tool's refused answer is recorded and replayed as that failure without
    a second execution; the client raises ToolFailed with the path, and the
    stub's return type is the TypedDict."""
    mid = uniq("typed")
    fits = '{"id":"a","status":"done","rows":[{"k":1},{"k":-2}]}'
    calls = [req("test.typed", {"json": fits}),
             req("test.typed", {"json": '{"id":5}'}),
             req("test.typed", {"json": '{"id":"a","rows":[{"k":1},{"k":"x"}]}'}),
             req("test.typed", {"json": '{"id":"a","status":"%s"}' % PV_RESULT}),
             req("test.typed", {"json": '[1]'}),
             req("test.typed", {"json": '{"rows":[]}'}),
             req("test.typed_counter", {"json": '{"id":7}'}, messageId=mid),
             req("test.typed_counter", {"json": '{"id":7}'}, messageId=mid)]
    r = Run("returns", "calls", {"calls": calls}).wait()
    got = r.calls()
    if len(got) != len(calls):
        emit(False, "returns_checked", describe(r))
        return
    audit = Audit(r)
    a = [c.get("answer") or {} for c in got]
    lines = [audit.take(x) for x in a]
    bad = judge(a[0], lines[0], ("ok", "exec"))
    if a[0].get("result") != json.loads(fits):
        bad.append("the fitting answer came back as %r" % a[0].get("result"))
    for i, path, words in ((1, "result.id", "expected type string, got a number"),
                           (2, "result.rows[1].k", "expected type integer, got a string"),
                           (3, "result.status", PV_RESULT),
                           (4, "result", "expected type object, got an array"),
                           (5, "result.id", "missing")):
        bad += judge(a[i], lines[i], ("tool_failed", "exec", "returns"))
        msg = ((a[i].get("error") or {}).get("message") or "")
        if path + ":" not in msg or words not in msg or "result" in a[i]:
            bad.append("answer %d: %r" % (i, a[i]))
        if lines[i] and path + ":" not in (lines[i].get("message") or ""):
            bad.append("audit line %d: %r" % (i, lines[i].get("message")))
    if any(PV_RESULT in json.dumps(ln) for ln in r.audit):
        bad.append("an audit line holds a value of the answer")
    emit(not bad, "returns_checked", "; ".join(bad) if bad else
         "an answer that fits passed unchanged; 5 that do not: tool_failed/exec/returns naming result.id, "
         "result.rows[1].k, result.status, result, result.id (missing); audit lines name the path, not the value")
    bad = judge(a[6], lines[6], ("tool_failed", "exec", "returns"))
    bad += judge(a[7], lines[7], ("tool_failed", "replay", "recorded"))
    if "result.id:" not in ((a[7].get("error") or {}).get("message") or ""):
        bad.append("the replayed answer: %r" % a[7])
    if len(counter_lines(mid)) != 1:
        bad.append("the tool ran %d times" % len(counter_lines(mid)))
    emit(not bad, "returns_replayed", "; ".join(bad) if bad else
         "a side-effect tool's answer that does not fit is recorded: the retry gets tool_failed (replay, "
         "recorded) naming result.id, and the tool ran once")

    calls = [{"tool": "test.typed", "params": {"json": '{"id":5}'}, "via": "stub", "withMessage": True},
             {"tool": "test.typed", "params": {"json": '{"id":"b"}'}, "via": "stub"}]
    r = Run("returns-client", "client", {"calls": calls, "returnHints": ["test.typed"]}).wait()
    got = r.result.get("calls") or []
    bad = []
    if r.res.get("status") != "succeeded" or len(got) != 2:
        bad.append(describe(r) + " result=%s" % json.dumps(r.result)[:300])
    else:
        e = got[0].get("error") or {}
        if (e.get("class"), e.get("code"), e.get("check")) != ("ToolFailed", "tool_failed", "exec") or \
                "result.id:" not in (e.get("message") or ""):
            bad.append("stub, no fit: %s" % got[0])
        if got[1].get("result") != {"id": "b"}:
            bad.append("stub, fits: %s" % got[1])
        want = {"name": "TestTypedResult", "required": ["id"], "optional": ["rows", "status"]}
        if (r.result.get("returnHints") or {}).get("test.typed") != want:
            bad.append("return type %s, want %s" % (r.result.get("returnHints"), want))
    emit(not bad, "returns_client", "; ".join(bad) if bad else
         "the stub raised ToolFailed naming result.id, returned the fitting answer, and is typed "
         "-> TestTypedResult (TypedDict, id required)")


def check_no_agent():
    r = Run("no-agent", "calls", {"calls": [BASE]}, agent=None).wait()
    c = (r.calls() or [{}])[0]
    bad = judge(c.get("answer"), Audit(r).take(c.get("answer")), ("unknown_tool", "tool", "no_agent"))
    emit(not bad, "tool_no_agent", "; ".join(bad) if bad else "run without --agent: " +
         ev_of(c.get("answer"), r.audit[0] if r.audit else None) + "; with --agent bridge the same call is allowed")


def check_stall():
    """A frame that starts and stalls is cut after 5 s (frame timer)."""
    r = Run("stall", "calls", {"calls": [dict(BASE, announce=100, send=10, checkClose=True)]}).wait()
    c = (r.calls() or [{}])[0]
    ans = c.get("answer")
    bad = judge(ans, Audit(r).take(ans), ("bad_request", "frame", "truncated"))
    if not 4500 <= c.get("ms", 0) <= 9000:
        bad.append("answered after %s ms, want about 5000" % c.get("ms"))
    if c.get("closed") is not True:
        bad.append("connection left open")
    emit(not bad, "frame_stalled", "; ".join(bad) if bad else
         "10 of 100 bytes, then nothing: %s/%s after %d ms, connection closed" % (err_of(ans) + (c.get("ms"),)))


def held_for_peers(name, check, rid):
    """A run of hold.py that waits for host processes: (run, its socket,
    a request with its token the executor itself gets allowed), or (None,
    None, None) after emitting a failed check when no token came."""
    r = Run(name, "hold", {"hold": 40, "inside": {"tool": "test.echo", "params": {"text": "hi"}}})
    token = r.held_token()
    if not token:
        emit(False, check, "the program never wrote its token: " + describe(r))
        return None, None, None
    return r, r.live("supervisor-socket/tools.sock"), json.dumps(
        {"v": 1, "token": token, "id": rid, "tool": "test.echo", "params": {"text": "hi"}})


def check_peer():
    """Processes outside the sandbox connect to a live run's socket with
    that run's token and a request the executor itself gets allowed."""
    r, sock, request = held_for_peers("peer", "peer", "peer1")
    if r is None:
        return
    clients = []           # (check name, uid or None, socket path, "nsenter" or None)
    exec_uid = None
    if MODE == "root":
        with open("/proc/%s/status" % r.exec_pid()) as f:
            exec_uid = int([l for l in f if l.startswith("Uid:")][0].split()[1])
        # root's own process: reaches the socket (no DAC for root), refused for its uid
        clients.append(("peer_root", None, sock, None))
        # the executor's own host uid outside the sandbox: in the sandbox's
        # mount namespace (the socket is on its tmpfs), so the uid matches
        # and only the pid namespace tells it apart.
        clients.append(("peer_executor_uid_outside", exec_uid, "/supervisor-socket/tools.sock", "nsenter"))
        # nobody: the socket's mode refuses it
        clients.append(("peer_other_uid_mode", 65534, "/supervisor-socket/tools.sock", "nsenter"))
    else:
        clients.append(("peer_same_user_outside", None, sock, None))
    with open(os.path.join(HERE, "peer_client.py")) as f:
        client_src = f.read()
    for name, uid, path, how in clients:
        before = len(audit_lines(r.rd))
        cmd = [PY, os.path.join(HERE, "peer_client.py"), path]
        if uid is not None:
            cmd = ["setpriv", "--reuid=%d" % uid, "--regid=%d" % uid, "--clear-groups", PY, "-c", client_src, path]
        if how == "nsenter":
            cmd = ["nsenter", "--mount=/proc/%d/ns/mnt" % r.exec_pid()] + cmd
        p = subprocess.run(cmd, input=request, capture_output=True, text=True, timeout=20)
        try:
            out = json.loads(p.stdout)
        except ValueError:
            out = {"raw": p.stdout + p.stderr}
        # the line is written just after the answer is sent: wait for it
        new = wait_until(lambda: audit_lines(r.rd)[before:], 0.3 if "connectError" in out else 3) or []
        if name == "peer_other_uid_mode":
            ok = out.get("connectError") == "EACCES" and not new
            emit(ok, name, "uid 65534: connect EACCES (socket mode 0600, owner %d); no audit line" % exec_uid if ok
                 else "%s; audit %s" % (out, new))
            continue
        ans = out.get("answer")
        line = new[0] if len(new) == 1 else None
        bad = judge(ans, line, ("unauthenticated", "peer", "peer"))
        if line and (line.get("requestId") is not None or line.get("tool") is not None):
            bad.append("the audit line names the request it never read: %s" % line)
        if out.get("closed") is not True:
            bad.append("connection not closed")
        emit(not bad, name, "; ".join(bad) if bad else
             "%s with this run's token: %s" % ("uid %d" % (os.geteuid() if uid is None else uid),
                                               ev_of(ans, line)))
    # the fixed request: the same call from inside the sandbox is allowed
    r.release()
    r.wait()
    inside = r.result.get("inside") or {}
    emit(err_of(inside) == ("ok", None) and r.res.get("status") == "succeeded", "peer_fixed_inside",
         "the same request from the executor: %s" % (err_of(inside),) + ("" if inside else " " + describe(r)))


PEER_FLOOD = 200      # connections of check_peer_flood
PEER_LINES = 32       # BRIDGE_MAX_PEER_LINES


def check_peer_flood():
    """An outside process connects PEER_FLOOD times to a live run's
    socket (issue 12 item 5): each is refused at the peer check, only the
    first PEER_LINES get an audit line and one more line counts them all,
    peerRefusals says how many, none is in toolCalls, and the program's own
    call afterwards is allowed.  With the old bridge every refusal was a
    call: 200 audit lines and 200 toolCalls entries, no peerRefusals."""
    r, sock, request = held_for_peers("peer-flood", "peer_flood", "flood")
    if r is None:
        return
    p = subprocess.run([PY, os.path.join(HERE, "peer_client.py"), sock, str(PEER_FLOOD)], input=request,
                       capture_output=True, text=True, timeout=120)
    r.release()
    r.wait()
    try:
        counts = json.loads(p.stdout).get("counts")
    except ValueError:
        counts = {"raw": p.stdout + p.stderr}
    peer = [ln for ln in r.audit if ln.get("check") == "peer"]
    per = [ln for ln in peer if ln.get("reason") == "peer"]
    summary = [ln for ln in peer if ln.get("reason") == "peer_summary"]
    rest = [ln for ln in r.audit if ln.get("check") != "peer"]
    tc = r.res.get("toolCalls") or []
    inside = r.result.get("inside") or {}
    bad = []
    if counts != {"unauthenticated/peer": PEER_FLOOD}:
        bad.append("answers %s" % counts)
    if len(per) != PEER_LINES or len(summary) != 1:
        bad.append("%d peer lines and %d summary lines, want %d and 1" % (len(per), len(summary), PEER_LINES))
    elif not summary[0].get("message", "").startswith("%d connections" % PEER_FLOOD):
        bad.append("the summary %r does not count %d" % (summary[0].get("message"), PEER_FLOOD))
    if r.res.get("peerRefusals") != PEER_FLOOD:
        bad.append("peerRefusals %r, want %d" % (r.res.get("peerRefusals"), PEER_FLOOD))
    if [e.get("decision") for e in tc] != ["allowed"]:
        bad.append("toolCalls %s, want the program's one call" % json.dumps(tc)[:300])
    if len(rest) != 1 or rest[0].get("decision") != "allowed":
        bad.append("other audit lines %s, want the program's one allowed call" % json.dumps(rest)[:300])
    if err_of(inside) != ("ok", None) or r.res.get("status") != "succeeded":
        bad.append("the program's call: %s; %s" % (err_of(inside), describe(r)))
    emit(not bad, "peer_flood", "; ".join(bad) if bad else
         "%d outside connections refused (peer); %d audit lines for them, the last %r; peerRefusals %d; "
         "toolCalls holds only the program's call, which was allowed" % (
             PEER_FLOOD, len(peer), summary[0].get("message"), r.res.get("peerRefusals")))


def check_token_isolation():
    """Two runs at once: the second looks through all it can see for the
    first run's token, knowing only its SHA-256."""
    a = Run("token-a", "hold", {"hold": 30})
    token = a.held_token()
    if not token:
        emit(False, "token_other_run", "run A never wrote its token: " + describe(a))
        return
    b = Run("token-b", "search", {"targets": {"other_run_token": sha(token)}, "pattern": "[0-9a-f]{64}"}).wait()
    a.release()
    a.wait()
    found = b.result.get("found") or {}
    leaked = found.get("other_run_token")
    on_host = token.encode() in b.out + b.err or any(token.encode() in blob for blob in tree_bytes(b.rd))
    ok = b.res.get("status") == "succeeded" and leaked == [] and bool(found.get("own_token")) and not on_host
    emit(ok, "token_other_run", ("run A alive; run B read %d files (%d bytes) and /proc: A's token nowhere, "
                                 "its own in %s" % (b.result.get("files", 0), b.result.get("bytes", 0),
                                                    ", ".join((found.get("own_token") or [])[:3])))
         if ok else "leaked to %s; own found %s; in B's output or run dir: %s; %s" % (
             leaked, found.get("own_token"), on_host, describe(b)))


def tree_bytes(top):
    for root, dirs, files in os.walk(top):
        for n in files:
            p = os.path.join(root, n)
            try:
                if os.path.isfile(p) and not os.path.islink(p):
                    with open(p, "rb") as f:
                        yield f.read()
            except OSError:
                pass


def check_budget_day():
    """max_calls_per_day 2 for (app, tenant, user, tool), across runs in one ledger."""
    state = os.path.join(W, "state-daily")
    day = req("test.daily")
    r1 = Run("daily-1", "calls", {"calls": [day, day]}, state=state).wait()
    r2 = Run("daily-2", "calls", {"calls": [day]}, state=state).wait()
    r3 = Run("daily-bob", "calls", {"calls": [day]}, state=state, context=dict(CTX, user="bob")).wait()
    bad = []
    for r, wants in ((r1, [("ok", "exec"), ("ok", "exec")]), (r2, [("budget_exceeded", "budget", "day")]),
                     (r3, [("ok", "exec")])):
        audit = Audit(r)
        calls = r.calls()
        if len(calls) != len(wants):
            bad.append("%s: %s" % (r.name, describe(r)))
            continue
        for c, w in zip(calls, wants):
            bad += ["%s: %s" % (r.name, b) for b in judge(c.get("answer"), audit.take(c.get("answer")), w)]
    emit(not bad, "budget_day", "; ".join(bad) if bad else
         "user ana: 2 allowed in one run, the next run refused %s; user bob the same day: allowed" %
         ev_of(r2.calls()[0]["answer"], r2.audit[0]))


def check_replay_one_run():
    mid = uniq("once")
    call = req("test.counter", {"item": "tea", "qty": 2}, messageId=mid)
    calls = [call, dict(call, conn="same"), req("test.counter", {"qty": 2, "item": "tea"}, messageId=mid),
             req("test.counter", {"item": "tea", "qty": 3}, messageId=mid)]
    r = Run("replay-once", "calls", {"calls": calls}).wait()
    got = r.calls()
    audit = Audit(r)
    bad = []
    if len(got) != 4:
        emit(False, "replay_same_run", describe(r))
        emit(False, "replay_conflict", describe(r))
        return
    a = [c.get("answer") or {} for c in got]
    lines = [audit.take(x) for x in a]
    bad += judge(a[0], lines[0], ("ok", "exec"))
    bad += judge(a[1], lines[1], ("ok", "replay"))
    bad += judge(a[2], lines[2], ("ok", "replay"))
    if not (a[0].get("result") and a[0].get("result") == a[1].get("result") == a[2].get("result")):
        bad.append("answers differ: %s / %s" % (a[0].get("result"), a[1].get("result")))
    if "replayed" in a[0] or a[1].get("replayed") is not True or a[2].get("replayed") is not True:
        bad.append("replayed flags %s %s %s" % (a[0].get("replayed"), a[1].get("replayed"), a[2].get("replayed")))
    if lines[1] and lines[1].get("replayed") is not True:
        bad.append("audit line of the repeat has no replayed: %s" % lines[1])
    n = len(counter_lines(mid))
    if n != 1:
        bad.append("the counter ran %d times" % n)
    emit(not bad, "replay_same_run", "; ".join(bad) if bad else
         "message id used 3 times (members reordered once): 1 execution, the same result, replayed:true twice "
         "(answer and audit)")
    bad = judge(a[3], lines[3], ("invalid_params", "replay", "conflict"))
    if len(counter_lines(mid)) != 1:
        bad.append("the counter ran again")
    emit(not bad, "replay_conflict", "; ".join(bad) if bad else
         "same id, qty 3 instead of 2: " + ev_of(a[3], lines[3]) + "; not run")


def check_replay_concurrent():
    """Two runs at once send the same message id to the slow counter."""
    mid = uniq("twice")
    state = os.path.join(W, "state-concurrent")
    call = req("test.slow_counter", {"item": "cake"}, messageId=mid)
    # The ledger exists first: two supervisors creating it at once can
    # fail with "database is locked" (ledger_open switching to WAL; README,
    # "Found"), which is not what this check is about.
    Run("replay-conc-0", "calls", {"calls": [req("test.counter", {"item": "warm"}, messageId=mid + "-0")]},
        state=state).wait()
    runs = [Run("replay-conc-%d" % i, "calls", {"calls": [call]}, state=state) for i in (1, 2)]
    for r in runs:
        r.wait()
    answers = [(r.calls() or [{}])[0].get("answer") or {} for r in runs]
    bad = []
    for r, ans in zip(runs, answers):
        line = Audit(r).take(ans)
        bad += ["%s: %s" % (r.name, b) for b in judge(ans, line, ("ok", line.get("check") if line else "exec"))]
    if not (answers[0].get("result") and answers[0].get("result") == answers[1].get("result")):
        bad.append("results differ: %s / %s" % (answers[0].get("result"), answers[1].get("result")))
    flags = sorted(bool(a.get("replayed")) for a in answers)
    if flags != [False, True]:
        bad.append("replayed flags %s, want one of each" % flags)
    n = len(counter_lines(mid))
    if n != 1:
        bad.append("the counter ran %d times" % n)
    emit(not bad, "replay_concurrent_runs", "; ".join(bad) if bad else
         "two runs, one message id, sent at once: 1 execution (1.5 s), both answered with its result, one replayed")


def check_replay_tenants():
    """One ledger, two tenants, one message id: each tenant's call runs
    once, and neither gets the other's recorded answer (the replay key has
    the tenant in it, docs/ledger.md)."""
    mid = uniq("tenants")
    state = os.path.join(W, "state-tenants")
    call = req("test.counter", {"item": "invoice"}, messageId=mid)
    r1 = Run("tenant-acme", "calls", {"calls": [call]}, state=state).wait()
    r2 = Run("tenant-globex", "calls", {"calls": [call]}, context=dict(CTX, tenant="globex", user="zoe"),
             state=state).wait()
    bad = []
    answers = []
    for r in (r1, r2):
        ans = (r.calls() or [{}])[0].get("answer") or {}
        answers.append(ans)
        line = Audit(r).take(ans)
        bad += ["%s: %s" % (r.name, b) for b in judge(ans, line, ("ok", "exec"))]
        if ans.get("replayed"):
            bad.append("%s: answered with a recorded answer" % r.name)
    if answers[0].get("result") is not None and answers[0].get("result") == answers[1].get("result"):
        bad.append("both tenants got the same answer: %s" % answers[0].get("result"))
    n = len(counter_lines(mid))
    if n != 2:
        bad.append("the counter ran %d times, want once per tenant" % n)
    emit(not bad, "replay_tenants", "; ".join(bad) if bad else
         "tenants acme and globex, one message id, one ledger: the tool ran once for each, no replayed answer")


def check_in_doubt():
    """A supervisor SIGKILLed while the side-effect tool runs leaves the
    record pending; a later run with that id gets in_doubt and the tool is
    not run again."""
    mid = uniq("doubt")
    state = os.path.join(W, "state-doubt")
    call = req("test.slow_counter", {"item": "pie"}, messageId=mid)
    r1 = Run("doubt-1", "calls", {"calls": [call]}, state=state)
    started = wait_until(lambda: counter_lines(mid), 15)
    r1.p.send_signal(signal.SIGKILL)
    r1.wait()
    tool_pid = int(started[0][1]) if started else None
    gone = wait_until(lambda: tool_pid is not None and not alive(tool_pid), 2)
    cleanup_killed(r1)
    r2 = Run("doubt-2", "calls", {"calls": [call]}, state=state).wait()
    ans = (r2.calls() or [{}])[0].get("answer")
    line = Audit(r2).take(ans)
    bad = judge(ans, line, ("in_doubt", "replay", "pending"))
    if not started:
        bad.append("the tool never started")
    if not gone:
        bad.append("the killed run's tool (pid %s) still runs" % tool_pid)
    n = len(counter_lines(mid))
    if n != 1:
        bad.append("the counter ran %d times" % n)
    emit(not bad, "replay_in_doubt", "; ".join(bad) if bad else
         "SIGKILL to cordon while the tool ran (its tool died with it); the next run: " + ev_of(ans, line) +
         "; the counter ran once")


def cleanup_killed(r):
    """A SIGKILLed supervisor leaves its run directory (and, as root, its
    cgroups, swept by a later run): its mounts are gone with its namespace."""
    S.supervisor_died()       # counted: its host-id lock files stay (the kernel dropped the flocks)
    notes.append("%s: SIGKILLed supervisor: its run directory stays (removed at the end)" % r.name)


def check_secrets():
    sfile = os.path.join(W, "secrets")
    fd = os.open(sfile, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    os.write(fd, ("# the bridge tests' secret\nBRIDGE_SECRET=%s\n" % FILE_SECRET).encode())
    os.close(fd)
    decoy = new_secret()
    r = Run("secrets", "search", {"targets": {"file_secret": sha(FILE_SECRET), "env_secret": sha(ENV_SECRET),
                                              "decoy": sha(decoy)},
                                  "pattern": SECRET_RE, "decoy": decoy,
                                  "calls": [{"tool": "test.secret"}, {"tool": "test.env_secret"}]},
            secrets_file=sfile).wait()
    answers = r.result.get("answers") or [{}, {}]
    found = r.result.get("found") or {}
    bad = []
    want_names = {"PATH", "LANG", "CORDON_TOOL", "CORDON_EXECUTION_ID", "CORDON_APP", "CORDON_TENANT",
                  "CORDON_PROJECT", "CORDON_USER", "CORDON_SESSION", "CORDON_MESSAGE_ID", "CORDON_REQUEST_ID"}
    for ans, name, value in ((answers[0], "BRIDGE_SECRET", FILE_SECRET), (answers[1], "BRIDGE_ENV_SECRET",
                                                                           ENV_SECRET)):
        res = ans.get("result") or {}
        if res.get("sha256") != sha(value):
            bad.append("%s fingerprint %s: %s" % (name, res.get("sha256"), json.dumps(ans)[:200]))
        if set(res.get("envNames") or []) != want_names | {name}:
            bad.append("%s's tool environment: %s" % (name, res.get("envNames")))
    if found.get("file_secret") != [] or found.get("env_secret") != []:
        bad.append("the sandbox saw a secret: %s" % {k: found.get(k) for k in ("file_secret", "env_secret")})
    if not found.get("decoy"):
        bad.append("the search did not even find the decoy: %s" % found)
    host = [v for v in (FILE_SECRET, ENV_SECRET, HOST_ONLY, ENV_FILE_SECRET)
            if v.encode() in r.out + r.err or any(v.encode() in b for b in tree_bytes(r.rd))
            or any(v.encode() in b for b in tree_bytes(r.state))]
    if host:
        bad.append("in the run's output, run directory or state: %s" % ["file", "env", "host-only", "env-file"][
            [FILE_SECRET, ENV_SECRET, HOST_ONLY, ENV_FILE_SECRET].index(host[0])])
    if r.res.get("status") != "succeeded":
        bad.append(describe(r))
    emit(not bad, "secrets", "; ".join(bad) if bad else
         "fingerprints match (--secrets file, which wins over the environment's, and supervisor environment); "
         "the tools' environment is PATH, LANG, "
         "CORDON_* and their one secret; the sandbox (%d files, %d bytes, environ, /proc) holds neither secret "
         "but found the decoy in %s; the run directory, state and output hold neither" % (
             r.result.get("files", 0), r.result.get("bytes", 0), found.get("decoy")))


def check_hang_and_flood():
    """A tool that hangs is killed at its 1 s timeout with its child; one
    that prints without end is cut off.  The program holds the run open
    while the runner looks for the hang tool's processes, so what killed
    them was the tool's timeout, not the end of the run."""
    r = Run("hang", "calls", {"calls": [req("test.hang", {}), req("test.flood", {})], "hold": 20})
    part = wait_until(lambda: len(r.partial().get("calls") or []) == 2 and r.partial(), 30) or {}
    pids = hang_pids(part.get("executionId") or "-")
    still = [p for p in pids if alive(p)]
    run_alive = r.p.poll() is None
    r.release()
    r.wait()
    got = r.calls()
    audit = Audit(r)
    hang = got[0] if got else {}
    bad = judge(hang.get("answer"), audit.take(hang.get("answer")), ("tool_timeout", "exec", "timeout"))
    if not 900 <= hang.get("ms", 0) <= 3000:
        bad.append("answered after %s ms, the timeout is 1 s" % hang.get("ms"))
    if len(pids) != 2:
        bad.append("the hang tool wrote pids %s (%s)" % (pids, describe(r)))
    if still:
        bad.append("alive while the run went on: %s" % still)
    if not run_alive:
        bad.append("the run had ended before the runner looked (%s)" % describe(r))
    emit(not bad, "tool_hang_killed", "; ".join(bad) if bad else
         "tool_timeout/exec after %d ms; the tool and its child (%s) gone while the run still lived" % (
             hang.get("ms"), " ".join(map(str, pids))))
    flood = got[1] if len(got) > 1 else {}
    bad = judge(flood.get("answer"), audit.take(flood.get("answer")), ("tool_failed", "exec", "oversized"))
    if flood.get("ms", 99999) >= 5000:
        bad.append("cut off after %s ms" % flood.get("ms"))
    emit(not bad, "tool_flood_cut", "; ".join(bad) if bad else
         "tool_failed/exec (oversized) after %d ms of endless output" % flood.get("ms"))


def check_run_timeout():
    """The run's own timeout (3 s) holds while a tool runs (timeout 1 min)."""
    r = Run("run-timeout", "calls", {"calls": [req("test.hang_long", {})]}, blob="short").wait()
    pids = hang_pids(r.res.get("executionId", "-"))
    # cordon has exited: its tools must be gone already (a short grace for
    # the kernel to finish the kill)
    wait_until(lambda: not [p for p in pids if alive(p)], 0.5)
    still = [p for p in pids if alive(p)]
    bad = []
    if r.res.get("status") != "timed_out" or r.rc != 124:
        bad.append(describe(r))
    if not SHORT_TIMEOUT_S - 0.5 <= r.elapsed <= SHORT_TIMEOUT_S + 3:
        bad.append("ended after %.1f s" % r.elapsed)
    if len(pids) != 2:
        bad.append("the tool wrote pids %s" % pids)
    if still:
        bad.append("tool processes left: %s" % still)
    line = next((ln for ln in r.audit if ln.get("tool") == "test.hang_long"), None)
    if not line or (line.get("code"), line.get("check"), line.get("reason")) != ("tool_failed", "exec", "cancelled"):
        bad.append("audit line %s" % line)
    emit(not bad, "run_timeout_during_tool", "; ".join(bad) if bad else
         "timed_out, exit 124 after %.1f s while a tool with a 1 min timeout ran; tool and child gone; audit "
         "tool_failed/exec/cancelled" % r.elapsed)


def check_concurrent_calls():
    """Three one-second calls at once, on three connections, overlap; three
    calls at once of a tool with max_calls 2: two pass; at most 8
    connections are served at once."""
    r = Run("concurrent-calls", "calls", {"calls": [
        dict(req("test.slow", {}), threads=3), dict(req("test.budget"), threads=3, name="budget"),
        {"idle": 8, "pause": 0.7}, dict(BASE, name="ninth"), {"countClosedIdle": True, "name": "evicted"}] +
        # Nine threads at once need more processes than RLIMIT_NPROC leaves
        # a rootless user running four checks at a time (the pids limit is
        # per host uid there); the queue does not depend on the mode.
        ([dict(req("test.slow", {}), threads=9, name="nine_slow")] if MODE == "root" else [])}).wait()
    got = {c["name"]: c for c in r.calls()}
    audit = Audit(r)
    b = got.get("budget", {}).get("answers") or []
    codes = sorted(err_of(a) for a in b)
    lines = [audit.take(a) for a in b]
    bad = [] if codes == [("budget_exceeded", "budget"), ("ok", None), ("ok", None)] and all(lines) else [
        "answers %s; audit %s" % (codes, [(ln or {}).get("check") for ln in lines])]
    emit(not bad, "budget_run_concurrent", "; ".join(bad) if bad else
         "three calls at once of a tool with max_calls 2: two allowed, one budget_exceeded/budget")
    ninth = got.get("ninth", {}).get("answer")
    bad = judge(ninth, audit.take(ninth), ("ok", "exec"))
    evicted = got.get("evicted", {}).get("closedIdle")
    if evicted != 1:
        bad.append("%s idle connections ended by the supervisor, want 1 (the oldest); %s" % (evicted, describe(r)))
    nine = got.get("nine_slow", {})
    nine_codes = [err_of(a) for a in nine.get("answers") or []]
    if MODE != "root":
        pass
    elif len(nine_codes) != 9 or any(c != ("ok", None) for c in nine_codes):
        bad.append("nine 1 s calls at once: %s" % nine_codes)
    elif not 1900 <= nine.get("ms", 0) <= 4500:
        bad.append("nine 1 s calls at once took %s ms, want about 2 s (8 at a time)" % nine.get("ms"))
    for a in nine.get("answers") or []:
        audit.take(a)
    emit(not bad, "connections_at_most_8", "; ".join(bad) if bad else
         "8 idle connections held: the 9th call served (the oldest idle one ended)" +
         ("; nine 1 s calls at once: all answered, 8 at a time, in %d ms" % nine.get("ms", 0) if MODE == "root"
          else ""))
    c = got.get("call1", {})
    answers = c.get("answers") or []
    res = [a.get("result") or {} for a in answers]
    bad = []
    if len(answers) != 3 or any(err_of(a) != ("ok", None) for a in answers):
        bad.append("answers %s; %s" % (answers, describe(r)))
    elif max(x["start"] for x in res) >= min(x["end"] for x in res):
        bad.append("the calls did not overlap: %s" % res)
    if c.get("ms", 99999) >= 2800:
        bad.append("took %s ms" % c.get("ms"))
    emit(not bad, "concurrent_calls", "; ".join(bad) if bad else
         "three 1 s calls on three connections answered in %d ms, all running at once" % c.get("ms"))


# --- the security review's fixes (9db5859) ---------------------------------

def one_answer(r, i=0):
    calls = r.calls()
    return (calls[i] if len(calls) > i else {}).get("answer") or {}


def check_replay_after_budget():
    """A retry of a side-effect call that already acted, in a later run
    whose daily budget is spent: the recorded answer, not budget_exceeded
    (the replay record is looked up before the budget)."""
    mid = uniq("spent")
    state = os.path.join(W, "state-spent")
    call = req("test.daily_counter", {"item": "soup"}, messageId=mid)
    r1 = Run("spent-1", "calls", {"calls": [call]}, state=state).wait()
    # the control: another message id in that run is refused, the budget is spent
    r2 = Run("spent-2", "calls", {"calls": [call, req("test.daily_counter", {"item": "soup"},
                                                      messageId=mid + "-new")]}, state=state).wait()
    a1, a2, fresh = one_answer(r1), one_answer(r2), one_answer(r2, 1)
    audit = Audit(r2)
    bad = ["run 1: %s" % b for b in judge(a1, Audit(r1).take(a1), ("ok", "exec"))]
    line = audit.take(a2)
    bad += ["the retry: %s" % b for b in judge(a2, line, ("ok", "replay"))]
    if a2.get("replayed") is not True or (line or {}).get("replayed") is not True:
        bad.append("the retry is not replayed (answer %s, audit %s)" % (a2.get("replayed"),
                                                                         (line or {}).get("replayed")))
    if not a1.get("result") or a1.get("result") != a2.get("result"):
        bad.append("results differ: %s / %s" % (a1.get("result"), a2.get("result")))
    bad += ["another id: %s" % b for b in judge(fresh, audit.take(fresh), ("budget_exceeded", "budget", "day"))]
    n = len(counter_lines(mid))
    if n != 1:
        bad.append("the counter ran %d times" % n)
    emit(not bad, "replay_after_budget_spent", "; ".join(bad) if bad else
         "max_calls_per_day 1, the next run's retry of the same message id: ok/replay, replayed:true, the first "
         "run's result, the counter ran once; another id in that run: " + ev_of(fresh, None).split(";")[0])


def late_secret_file():
    path = os.path.join(W, "secrets-late")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    os.write(fd, ("BRIDGE_LATE_SECRET=%s\n" % new_secret()).encode())
    os.close(fd)
    return path


def refused_for_secret(r, tool, name):
    """What is wrong with r as a run refused before its program started
    because tool's secret name is set nowhere: [] when nothing."""
    bad = []
    err = r.res.get("error") or {}
    where = (err.get("details") or {}).get("where")
    msg = err.get("message") or ""
    if r.rc != 125 or r.res.get("status") != "error" or where != "exec.harness.secrets":
        bad.append("not refused at exec.harness.secrets with exit 125: %s" % describe(r))
    if tool not in msg or name not in msg:
        bad.append("the message does not name %s and %s: %r" % (tool, name, msg))
    # Refused before any sandbox: no program ran, no run directory was
    # made, so there is no executed program, audit line or output.
    if os.path.exists(r.rd) or "stdout" in r.res or r.res.get("toolCalls"):
        bad.append("something ran: run directory %s, result keys %s" % (os.path.exists(r.rd), sorted(r.res)))
    return bad


def check_secret_unset():
    """A selected tool whose secret neither --secrets nor the environment
    sets: the run is refused before its program starts, naming the tool and
    the variable (it was a tool_failed answer at the first call, mid-run).
    The same agent with a context that leaves that tool out runs."""
    r = Run("unset", "calls", {"calls": [req()]}, agent="unset", context=dict(CTX, tools=["test.echo",
                                                                                          "test.unset_secret"])).wait()
    bad = refused_for_secret(r, "test.unset_secret", "BRIDGE_UNSET_SECRET")
    n = Run("unset-narrow", "calls", {"calls": [req()]}, agent="unset", context=dict(CTX, tools=["test.echo"])).wait()
    a = one_answer(n)
    bad += ["narrowed: %s" % b for b in judge(a, Audit(n).take(a), ("ok", "exec"))]
    if n.res.get("status") != "succeeded":
        bad.append("narrowed: %s" % describe(n))
    emit(not bad, "secret_unset_refused_before_start", "; ".join(bad) if bad else
         "exit 125 at exec.harness.secrets: %r; no run directory, no output; the context without "
         "test.unset_secret: ok/exec" % (r.res.get("error") or {}).get("message"))


def check_late_secret():
    """A side-effect tool whose secret is not given: the run is refused
    before its program starts, so its tool never runs and the ledger holds
    no record; the retry, with the secret given now, runs it once."""
    mid = uniq("late")
    state = os.path.join(W, "state-late")
    call = req("test.late_secret", {"item": "key"}, messageId=mid)
    r1 = Run("late-1", "calls", {"calls": [call]}, agent="late", context=CTX_OPEN, state=state).wait()
    r2 = Run("late-2", "calls", {"calls": [call]}, agent="late", context=CTX_OPEN, state=state,
             secrets_file=late_secret_file()).wait()
    a2 = one_answer(r2)
    bad = ["run 1: %s" % b for b in refused_for_secret(r1, "test.late_secret", "BRIDGE_LATE_SECRET")]
    bad += ["run 2: %s" % b for b in judge(a2, Audit(r2).take(a2), ("ok", "exec"))]
    if a2.get("replayed"):
        bad.append("run 2 was answered with a recorded answer")
    runs = counter_lines(mid)
    if [e for e, _ in runs] != [r2.res.get("executionId")]:
        bad.append("the counter ran in %s, want once, in run 2 (%s)" % (runs, r2.res.get("executionId")))
    emit(not bad, "late_secret_refused_then_runs", "; ".join(bad) if bad else
         "run 1 without BRIDGE_LATE_SECRET: exit 125 at exec.harness.secrets, nothing ran; run 2, same message "
         "id, secret given: ok/exec, not replayed, the counter ran once")


def check_replay_budget_refused():
    """A side-effect call refused by the per-run budget leaves no record:
    in the next run (budget available again) that message id runs."""
    first, mid = uniq("rb-first"), uniq("rb")
    state = os.path.join(W, "state-rb")
    r1 = Run("rb-1", "calls", {"calls": [req("test.run_counter", {"item": "jam"}, messageId=first),
                                        req("test.run_counter", {"item": "jam"}, messageId=mid)]}, state=state).wait()
    r2 = Run("rb-2", "calls", {"calls": [req("test.run_counter", {"item": "jam"}, messageId=mid)]},
             state=state).wait()
    audit = Audit(r1)
    a0, a1, a2 = one_answer(r1), one_answer(r1, 1), one_answer(r2)
    bad = ["run 1: %s" % b for b in judge(a0, audit.take(a0), ("ok", "exec"))]
    bad += ["run 1: %s" % b for b in judge(a1, audit.take(a1), ("budget_exceeded", "budget", "run"))]
    bad += ["run 2: %s" % b for b in judge(a2, Audit(r2).take(a2), ("ok", "exec"))]
    if a2.get("replayed"):
        bad.append("run 2 was answered with a recorded answer")
    n = len(counter_lines(mid))
    if n != 1:
        bad.append("the counter ran %d times for the refused id" % n)
    emit(not bad, "replay_budget_refusal_not_recorded", "; ".join(bad) if bad else
         "max_calls 1: the run's second message id budget_exceeded/budget/run; the next run with that id: "
         "ok/exec, not replayed, the counter ran once")


def secrets_file(name):
    path = os.path.join(W, "secrets-" + name)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    os.write(fd, ("BRIDGE_SECRET=%s\n" % FILE_SECRET).encode())
    os.close(fd)
    return path


def detail_faults(what, answer, line, replayed=False):
    """A failed flaky tool's detail, in the answer and (unless replayed,
    whose line carries the recorded one too) the audit line: its own
    message and code, its stderr's end, the secret scrubbed."""
    bad = []
    for where, d in (("answer", ((answer or {}).get("error") or {}).get("detail")),
                     ("audit", (line or {}).get("detail"))):
        d = d or {}
        if d.get("message") != "the server refused the password [secret BRIDGE_SECRET]" or \
           d.get("code") != "unavailable":
            bad.append("%s: %s detail message/code %s" % (what, where, json.dumps(d)[:200]))
        tail = d.get("stderr") or ""
        if not tail.endswith("login with password [secret BRIDGE_SECRET] refused\n") or len(tail.encode()) > 2048 \
           or not d.get("stderrDropped"):
            bad.append("%s: %s stderr tail %r (dropped %s)" % (what, where, tail[-120:], d.get("stderrDropped")))
    return bad


def check_tool_failure_retryable():
    """A side-effect tool that exits 75 on its first execution: the answer
    carries its own message and stderr's end (its secret scrubbed) and
    retryable: true; the record is given up, so the same message id runs
    it again and the second answer is the success.  The control: a tool
    that exits 1 and is then fixed is answered its recorded failure, and
    ran once."""
    temp, once = uniq("tempfail"), uniq("failonce")
    calls = [req("test.tempfail", {"item": "mail"}, messageId=temp),
             req("test.tempfail", {"item": "mail"}, messageId=temp),
             req("test.fail_once", {"item": "mail"}, messageId=once),
             req("test.fail_once", {"item": "mail"}, messageId=once)]
    r = Run("toolfail", "calls", {"calls": calls}, secrets_file=secrets_file("toolfail")).wait()
    audit = Audit(r)
    a = [one_answer(r, i) for i in range(4)]
    lines = [audit.take(x) for x in a]
    bad = ["tempfail 1: %s" % b for b in judge(a[0], lines[0], ("tool_failed", "exec", "failed"))]
    bad += detail_faults("tempfail 1", a[0], lines[0])
    if (a[0].get("error") or {}).get("retryable") is not True or (lines[0] or {}).get("retryable") is not True:
        bad.append("tempfail 1 is not retryable: %s" % json.dumps(a[0])[:200])
    bad += ["tempfail 2: %s" % b for b in judge(a[1], lines[1], ("ok", "exec"))]
    if a[1].get("replayed") or (a[1].get("result") or {}).get("count") != 2:
        bad.append("tempfail 2: %s" % json.dumps(a[1])[:200])
    n = len(counter_lines(temp))
    if n != 2:
        bad.append("tempfail ran %d times, want 2" % n)
    bad += ["fail_once 1: %s" % b for b in judge(a[2], lines[2], ("tool_failed", "exec", "failed"))]
    bad += detail_faults("fail_once 1", a[2], lines[2])
    if "retryable" in (a[2].get("error") or {}) or "retryable" in (lines[2] or {}):
        bad.append("fail_once 1 says retryable")
    bad += ["fail_once 2: %s" % b for b in judge(a[3], lines[3], ("tool_failed", "replay", "recorded"))]
    if a[3].get("replayed") is not True and (lines[3] or {}).get("replayed") is not True:
        bad.append("fail_once 2 not replayed")
    bad += detail_faults("fail_once 2 (recorded)", a[3], lines[3])
    n = len(counter_lines(once))
    if n != 1:
        bad.append("fail_once ran %d times, want 1 (the control)" % n)
    if any(FILE_SECRET.encode() in b for b in [r.out, r.err] + list(tree_bytes(r.rd)) + list(tree_bytes(r.state))):
        bad.append("the secret is in the run's output, run directory or state")
    emit(not bad, "tool_failure_retryable", "; ".join(bad) if bad else
         "exit 75: tool_failed/exec retryable:true with the tool's message, code and stderr tail, secret shown as "
         "[secret BRIDGE_SECRET]; the same id ran again and answered ok (count 2); control exit 1: recorded, "
         "the retry tool_failed/replay with the recorded detail, ran once; the secret nowhere in output, run "
         "directory or state")


def check_replay_wait_ends():
    """Two connections send one message id to a 30 s side-effect tool
    (timeout 1 min); the program exits after 1.5 s.  The repeat waiting for
    the first ends with the run (the stop wakes the ledger's wait)."""
    mid = uniq("wait")
    call = req("test.long_counter", {"item": "bread"}, messageId=mid)
    r = Run("replay-wait", "calls", {"calls": [dict(call, leave=2), {"idle": 0, "pause": 1.5}]}).wait()
    lines = sorted(((ln.get("code"), ln.get("check"), ln.get("reason")) for ln in r.audit), key=str)
    runs = counter_lines(mid)
    still = [int(p) for _, p in runs if alive(int(p))]
    bad = []
    if r.res.get("status") != "succeeded":
        bad.append(describe(r))
    if r.elapsed >= 8:
        bad.append("the run ended after %.1f s" % r.elapsed)
    if lines != [("tool_failed", "exec", "cancelled"), ("tool_failed", "replay", "cancelled")]:
        bad.append("audit lines %s, want tool_failed exec/cancelled (the first) and replay/cancelled (the repeat)"
                   % ["%s %s/%s/%s" % (ln.get("requestId"), ln.get("code"), ln.get("check"), ln.get("reason"))
                      for ln in r.audit])
    if len(runs) != 1:
        bad.append("the counter ran %d times" % len(runs))
    if still:
        bad.append("the tool still runs: %s" % still)
    emit(not bad, "replay_wait_ends_with_run", "; ".join(bad) if bad else
         "the program left after 1.5 s; the run ended after %.1f s; audit: the first tool_failed/exec/cancelled "
         "(its tool killed), the repeat tool_failed/replay/cancelled; the counter ran once" % r.elapsed)


TOO_MANY = 10000       # bridge.h BRIDGE_MAX_CALLS


def check_too_many_calls():
    """A loop of refused calls on one connection: 10000 get a line each,
    the 10001st is refused and ends the connection, one line counts it."""
    r = Run("too-many", "calls", {"calls": [dict(req(params={"text": "hi", "x": 1}), repeat=TOO_MANY + 1,
                                                 checkClose=True)]}).wait()
    c = (r.calls() or [{}])[0]
    ans = c.get("answer") or {}
    size = os.path.getsize(os.path.join(r.rd, "logs", "tool-calls.jsonl")) \
        if os.path.exists(os.path.join(r.rd, "logs", "tool-calls.jsonl")) else -1
    per = [ln for ln in r.audit if (ln.get("check"), ln.get("reason")) == ("params", "unknown")]
    summary = [ln for ln in r.audit if ln.get("reason") == "too_many_calls"]
    bad = []
    if c.get("counts") != {"invalid_params/params": TOO_MANY, "bad_request/frame": 1}:
        bad.append("answers %s (%s)" % (c.get("counts"), describe(r)))
    bad += judge(ans, summary[0] if len(summary) == 1 else None, ("bad_request", "frame", "too_many_calls"))
    if c.get("closed") is not True:
        bad.append("the connection stayed open")
    if len(per) != TOO_MANY or len(r.audit) != TOO_MANY + 1:
        bad.append("%d lines, %d of them params refusals, want %d and one more" % (len(r.audit), len(per), TOO_MANY))
    if len(summary) == 1 and not summary[0].get("message", "").startswith("1 more call"):
        bad.append("the last line's message %r does not count the 1 refused" % summary[0].get("message"))
    if not 0 < size < 10 << 20:
        bad.append("tool-calls.jsonl is %d bytes" % size)
    emit(not bad, "too_many_calls", "; ".join(bad) if bad else
         "10001 params refusals on one connection in %.1f s: the 10001st %s, connection closed; %d audit lines "
         "(%.1f MB), the last %r" % (c.get("ms", 0) / 1000, "/".join(map(str, err_of(ans))), len(r.audit),
                                    size / 1e6, summary[0].get("message")))


def check_audit_names():
    """Only names the signature declares reach the audit line: 50 unknown
    200-byte names are refused, and the line names none of them."""
    names = ["u%02d-" % i + "x" * 196 for i in range(50)]
    unknown = dict({"text": "hi"}, **{n: 1 for n in names})
    allowed = {"text": "hi", "n": 3, "mood": "calm"}
    r = Run("audit-names", "calls", {"calls": [req(params=unknown), req(params=allowed)]}).wait()
    audit = Audit(r)
    a1, a2 = one_answer(r), one_answer(r, 1)
    l1, l2 = audit.take(a1), audit.take(a2)
    bad = judge(a1, l1, ("invalid_params", "params", "unknown")) + judge(a2, l2, ("ok", "exec"))
    if l1 and l1.get("paramNames") != []:
        bad.append("the refused call's paramNames: %s" % json.dumps(l1.get("paramNames"))[:200])
    if l2 and sorted(l2.get("paramNames") or []) != sorted(allowed):
        bad.append("the allowed call's paramNames %s" % l2.get("paramNames"))
    # the message names where the check failed: at most one of the names
    named = [n for n in names if n in json.dumps(l1)]
    if len(named) > 1:
        bad.append("%d of the unknown names are in the line" % len(named))
    emit(not bad, "audit_names_only_declared", "; ".join(bad) if bad else
         "50 unknown 200-byte names: params/unknown, paramNames [], message %r (the first unknown name, cut "
         "short: %d of the 50 whole); an allowed "
         "call's paramNames %s" % (l1.get("message", "")[:60], len(named), l2.get("paramNames")))


def check_answer_bound():
    """An answer under 1 MiB from the tool that would be over 2 MiB in the
    answer frame (cJSON prints 5e-324 as 4.94065645841247e-324)."""
    r = Run("answer-bound", "calls", {"calls": [req("test.tiny_numbers", {}), BASE]}).wait()
    c = (r.calls() or [{}])[0]
    audit = Audit(r)
    ans, after = c.get("answer") or {}, one_answer(r, 1)
    bad = judge(ans, audit.take(ans), ("tool_failed", "exec", "oversized"))
    bad += ["the next call: %s" % b for b in judge(after, audit.take(after), ("ok", "exec"))]
    emit(not bad, "answer_over_frame_bound", "; ".join(bad) if bad else
         "149000 x 5e-324 (1.04 MB printed by the tool, 3.3 MB printed again): %s after %d ms; the next call ok"
         % ("/".join(map(str, err_of(ans))), c.get("ms", 0)))


def check_stop_no_line():
    """The program exits while its call to a long tool runs: that call's
    line says cancelled, and the stop adds no frame line."""
    r = Run("stop-line", "calls", {"calls": [dict(req("test.hang_long", {}), leave=1),
                                             {"idle": 0, "pause": 0.7}]}).wait()
    pids = hang_pids(r.res.get("executionId", "-"))
    wait_until(lambda: not [p for p in pids if alive(p)], 0.5)
    got = [(ln.get("tool"), ln.get("code"), ln.get("check"), ln.get("reason")) for ln in r.audit]
    bad = []
    if got != [("test.hang_long", "tool_failed", "exec", "cancelled")]:
        bad.append("audit lines %s, want only the call's tool_failed/exec/cancelled" % got)
    if len(pids) != 2 or [p for p in pids if alive(p)]:
        bad.append("the tool's pids %s (alive: %s)" % (pids, [p for p in pids if alive(p)]))
    if r.res.get("status") != "succeeded":
        bad.append(describe(r))
    emit(not bad, "no_line_for_stop", "; ".join(bad) if bad else
         "the program exited mid-call: one audit line, tool_failed/exec/cancelled; no frame line; the tool gone")


DUP_KEYS = 8000        # about as many as fit the 64k bound
DUP_FRAMES = 20
# All the frames' time: comparing every pair of keys took 130-180 ms a
# frame here (2.7 s for the 20), the sort 5-15 ms (the ASan build 20-40 ms).
DUP_BOUND_MS = 1000


def asan_lib():
    """The ASan runtime a SAN=1 cordon links (dynamically: the binary
    itself does not hold the name), or ""."""
    p = subprocess.run(["ldd", CORDON], capture_output=True, text=True)
    libs = [ln.split("=>")[1].split()[0] for ln in p.stdout.splitlines() if "libasan" in ln and "=>" in ln]
    return libs[0] if libs else ""


def asan_build():
    """A SAN=1 cordon: the time bounds allow for its slowdown."""
    return asan_lib() != ""


def check_dup_keys():
    """Frames of 8000 distinct keys in params and then the last one again
    (a pairwise search finds it last): refused (json) at once."""
    alpha = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
    keys = []
    for i in range(DUP_KEYS):
        k, x = "", i
        while True:
            k, x = k + alpha[x % 62], x // 62
            if not x:
                break
        keys.append(k)
    params = ",".join('"%s":0' % k for k in keys + keys[-1:])
    body = '{"v":1,"token":"@TOKEN@","id":"rdup","tool":"test.echo","params":{%s}}' % params
    if len(body) > LIMIT:
        emit(False, "dup_keys_fast", "the frame is %d bytes, over the bound" % len(body))
        return
    r = Run("dup-keys", "calls", {"calls": [{"body": body, "repeat": DUP_FRAMES}, BASE]}).wait()
    c = (r.calls() or [{}])[0]
    audit = Audit(r)
    ans, after = c.get("answer") or {}, one_answer(r, 1)
    bad = judge(ans, audit.take(ans), ("bad_request", "json", "malformed"))
    if c.get("counts") != {"bad_request/json": DUP_FRAMES}:
        bad.append("answers %s (%s)" % (c.get("counts"), describe(r)))
    bound = DUP_BOUND_MS * (3 if asan_build() else 1)
    if c.get("ms", 99999) >= bound or c.get("maxMs", 99999) >= 1000:
        bad.append("%d frames took %d ms, the slowest %d ms (want under %d ms in all, 1000 each)" % (
            DUP_FRAMES, c.get("ms", -1), c.get("maxMs", -1), bound))
    bad += ["the next call: %s" % b for b in judge(after, audit.take(after), ("ok", "exec"))]
    emit(not bad, "dup_keys_fast", "; ".join(bad) if bad else
         "%d frames of %d bytes, %d distinct keys and the last one again: bad_request/json each, %d ms in all (the "
         "slowest %d ms)" % (DUP_FRAMES, len(body), DUP_KEYS, c.get("ms"), c.get("maxMs")))


# --- identity and cgroup (docs/tools.md, "Identity and cgroup") -----------

ZERO_CAPS = "0000000000000000"


marker_pids = harness.live_marker_pids   # live processes on the host whose argv holds marker
kill_pids = harness.kill_pids


def check_tool_identity():
    """Who a tool runs as, as the tool sees it.  As root: not uid 0, not the
    supervisor, not the executor; no groups, every capability set empty,
    no_new_privs, cwd /, in a cgroup of its own named for this call.  The
    control, run_as: supervisor, is root with capabilities, which is what
    the default would be without the switch."""
    r = Run("whoami", "calls", {"calls": [req("test.whoami", {}), req("test.whoami_supervisor", {})]}).wait()
    got = r.calls()
    audit = Audit(r)
    answers = [c.get("answer") for c in got[:2]] + [None, None]
    me, sup = ((answers[0] or {}).get("result") or {}), ((answers[1] or {}).get("result") or {})
    line, sline = audit.take(answers[0]), audit.take(answers[1])
    bad = judge(answers[0], line, ("ok", "exec")) + judge(answers[1], sline, ("ok", "exec"))
    st, sst = me.get("status") or {}, sup.get("status") or {}
    uid, gid = (me.get("uid") or [None])[0], (me.get("gid") or [None])[0]
    caps = {k: st.get(k) for k in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb")}
    if MODE == "root":
        if len(set(me.get("uid") or [])) != 1 or uid in (None, 0, os.geteuid(), EXEC_UID):
            bad.append("uids %s (want one, not 0, the supervisor's or the executor's %d)" % (me.get("uid"), EXEC_UID))
        if len(set(me.get("gid") or [])) != 1 or gid in (None, 0):
            bad.append("gids %s" % me.get("gid"))
        if me.get("groups") != []:
            bad.append("supplementary groups %s" % me.get("groups"))
        if any(v != ZERO_CAPS for v in caps.values()):
            bad.append("capabilities %s" % caps)
        want_cg = "/cordon-%d-%s-t" % (r.p.pid, r.res.get("executionId", "?"))
        for ctl in ("memory", "pids"):
            if not any(":%s:" % ctl in x and want_cg in x for x in me.get("cgroup") or []):
                bad.append("not in a %s cgroup %s*: %s" % (ctl, want_cg, me.get("cgroup")))
        if (line or {}).get("identity") != {"kind": "dedicated", "uid": uid, "gid": gid}:
            bad.append("audit identity %s" % (line or {}).get("identity"))
        if not isinstance((line or {}).get("cgroup"), dict):
            bad.append("audit cgroup %s" % (line or {}).get("cgroup"))
        # the control: the supervisor's own identity is root, with capabilities
        if sup.get("uid") != [0, 0, 0] or sst.get("CapEff") == ZERO_CAPS or sst.get("NoNewPrivs") != "0":
            bad.append("control (run_as: supervisor) uid %s CapEff %s NoNewPrivs %s" % (
                sup.get("uid"), sst.get("CapEff"), sst.get("NoNewPrivs")))
    else:
        if me.get("uid") != [os.getuid()] * 3 or caps.get("CapEff") != ZERO_CAPS:
            bad.append("uid %s CapEff %s (want the caller's, none)" % (me.get("uid"), caps.get("CapEff")))
        if (line or {}).get("identity") != {"kind": "caller"} or (line or {}).get("cgroup") != "none":
            bad.append("audit identity %s cgroup %s" % ((line or {}).get("identity"), (line or {}).get("cgroup")))
        if sst.get("NoNewPrivs") != "0":
            bad.append("control (run_as: supervisor) NoNewPrivs %s" % sst.get("NoNewPrivs"))
    if st.get("NoNewPrivs") != "1":
        bad.append("NoNewPrivs %s" % st.get("NoNewPrivs"))
    if me.get("cwd") != "/":
        bad.append("cwd %s" % me.get("cwd"))
    emit(not bad, "tool_identity", "; ".join(bad) if bad else
         "uid/gid %s/%s, no groups, caps %s, NoNewPrivs 1, cwd /, cgroup %s; control (run_as: supervisor): uid %s, "
         "CapEff %s, NoNewPrivs %s" % (uid, gid, "all zero" if MODE == "root" else caps.get("CapEff"),
                                       "own" if MODE == "root" else "none", sup.get("uid"), sst.get("CapEff"),
                                       sst.get("NoNewPrivs")))


def check_tool_escape():
    """A tool's setsid()'d, double-forked grandchild does not outlive the
    call: neither one that answered and exited nor one killed at its
    timeout.  The program holds the run open while the runner looks, so
    what killed them was the call's end, not the run's.  The control: the
    runner's own marked sleeper is found by the same search."""
    m_exit, m_hang, m_ctl = ("esc-" + secrets.token_hex(8) for _ in range(3))
    ctl = subprocess.Popen([PY, "-I", "-c", "import time; time.sleep(60)", m_ctl], start_new_session=True)
    found_ctl = wait_until(lambda: marker_pids(m_ctl), 5)
    ctl.kill()
    ctl.wait()
    r = Run("escape", "calls", {"calls": [req("test.escape", {"marker": m_exit}),
                                          req("test.escape_hang", {"marker": m_hang})], "hold": 20})
    part = wait_until(lambda: len(r.partial().get("calls") or []) == 2 and r.partial(), 30) or {}
    time.sleep(0.2)
    left = marker_pids(m_exit) + marker_pids(m_hang)
    run_alive = r.p.poll() is None
    r.release()
    r.wait()
    kill_pids(left)
    audit = Audit(r)
    got = part.get("calls") or r.calls()
    a0 = (got[0] if got else {}).get("answer")
    a1 = (got[1] if len(got) > 1 else {}).get("answer")
    l0, l1 = audit.take(a0), audit.take(a1)
    bad = judge(a0, l0, ("ok", "exec")) + judge(a1, l1, ("tool_timeout", "exec", "timeout"))
    if not found_ctl:
        bad.append("control: the runner's own marked process was not found")
    if not run_alive:
        bad.append("the run had ended before the runner looked (%s)" % describe(r))
    if left:
        bad.append("left alive after the calls (cgroup %s): %s (killed now)" % ((l0 or {}).get("cgroup"), left))
    emit(not bad, "tool_setsid_escape", "; ".join(bad) if bad else
         "no setsid'd grandchild outlived its call (answered, and timed out), cgroup %s; control found pid %s" % (
             json.dumps((l0 or {}).get("cgroup")), found_ctl))


def check_tool_limits():
    """A tool over its own memory (32m) or pids (4) limit fails, and the
    answer and the audit line say which; the same tools within their
    limits are the controls.  Rootless there is no cgroup: the limits are
    not applied and the audit line says "cgroup": "none"."""
    calls = [req("test.hog", {"mib": 1}), req("test.hog", {"mib": 200}), req("test.forker", {"n": 2}),
             req("test.forker", {"n": 20})]
    r = Run("limits", "calls", {"calls": calls}).wait()
    got = r.calls()
    audit = Audit(r)
    ans = [(got[i] if len(got) > i else {}).get("answer") for i in range(4)]
    lines = [audit.take(a) for a in ans]
    bad = judge(ans[0], lines[0], ("ok", "exec")) + judge(ans[2], lines[2], ("ok", "exec"))
    if MODE == "root":
        bad += judge(ans[1], lines[1], ("tool_failed", "exec", "memory_limit"))
        bad += judge(ans[3], lines[3], ("tool_failed", "exec", "pids_limit"))
        cg_mem, cg_pids = (lines[1] or {}).get("cgroup") or {}, (lines[3] or {}).get("cgroup") or {}
        if not isinstance(cg_mem, dict) or not cg_mem.get("memoryLimitHit"):
            bad.append("audit cgroup of the hog: %s" % cg_mem)
        if not isinstance(cg_pids, dict) or not cg_pids.get("pidsLimitHit"):
            bad.append("audit cgroup of the forker: %s" % cg_pids)
        ev = "200 MiB: %s; 20 children: %s; audit %s / %s" % (
            ev_of(ans[1], lines[1]), ev_of(ans[3], lines[3]), json.dumps(cg_mem), json.dumps(cg_pids))
    else:
        bad += judge(ans[1], lines[1], ("ok", "exec")) + judge(ans[3], lines[3], ("ok", "exec"))
        if any((ln or {}).get("cgroup") != "none" for ln in lines):
            bad.append("audit cgroup %s" % [(ln or {}).get("cgroup") for ln in lines])
        ev = "rootless, no cgroup: 200 MiB and 20 children allowed, each audit line \"cgroup\": \"none\""
    emit(not bad, "tool_memory_pids_limits", "; ".join(bad) if bad else
         ev + "; controls (1 MiB, 2 children) ok")


def check_untrusted_path():
    """A tool compiled from a trusted directory, which the runner then opens
    to everyone (as root: and gives to uid 65534): the next run refuses it
    (tool_failed/exec, untrusted_path) and it does not run; cordonc now
    refuses the same inventory at exec[0].  The control: the same call
    before the change runs."""
    m1, m2 = uniq("trusted"), uniq("untrusted")
    r1 = Run("untrusted-1", "calls", {"calls": [req("test.untrusted", {"item": "a"}, messageId=m1)]}).wait()
    a1 = (r1.calls() or [{}])[0].get("answer")
    bad = judge(a1, Audit(r1).take(a1), ("ok", "exec"))
    os.chmod(UNTRUSTED, 0o777)
    if MODE == "root":
        os.chown(UNTRUSTED, 65534, -1)
    try:
        r2 = Run("untrusted-2", "calls", {"calls": [req("test.untrusted", {"item": "b"}, messageId=m2)]}).wait()
        env = dict(os.environ, CORDON_POLICY_PATH=POLICIES)
        comp = subprocess.run([CORDONC, "compile", os.path.join(HERE, "app.yaml"), os.path.join(W, "tools.yaml"),
                               "-o", os.path.join(W, "untrusted.cpol")], capture_output=True, text=True, env=env)
    finally:
        if MODE == "root":
            os.chown(UNTRUSTED, 0, -1)
        os.chmod(UNTRUSTED, 0o755)
    a2 = (r2.calls() or [{}])[0].get("answer")
    l2 = Audit(r2).take(a2)
    bad += judge(a2, l2, ("tool_failed", "exec", "untrusted_path"))
    why = "is owned by uid 65534" if MODE == "root" else "is writable by others (mode 0777)"
    if UNTRUSTED + " " + why not in (l2 or {}).get("message", ""):
        bad.append("audit message %r lacks %r" % ((l2 or {}).get("message"), why))
    if len(counter_lines(m1)) != 1 or counter_lines(m2):
        bad.append("executions: before %d (want 1), after %d (want 0)" % (len(counter_lines(m1)),
                                                                          len(counter_lines(m2))))
    if comp.returncode != 2 or "exec[0]" not in comp.stderr or why not in comp.stderr:
        bad.append("cordonc compile exit %d: %s" % (comp.returncode, comp.stderr[-300:]))
    emit(not bad, "tool_untrusted_path", "; ".join(bad) if bad else
         "before: ok, ran once; after the directory was opened: %s, not run; cordonc refuses exec[0]" %
         ev_of(a2, l2))


def check_killed_supervisor_tools():
    """SIGKILL to cordon while a tool runs that left a setsid()'d grandchild:
    the grandchild outlives the supervisor (the control: PDEATHSIG only
    reaches the tool itself), and the next `cordon run` on the host kills
    it (its cgroup's sweep).  Run alone, before the others: a concurrent
    run's sweep would kill it before the control looks."""
    m = "kill-" + secrets.token_hex(8)
    r1 = Run("killed-tools-1", "calls", {"calls": [req("test.escape_long", {"marker": m})]})
    started = wait_until(lambda: marker_pids(m), 15)
    r1.p.send_signal(signal.SIGKILL)
    r1.wait()
    time.sleep(0.3)
    survived = marker_pids(m)
    cleanup_killed(r1)
    r2 = Run("killed-tools-2", "calls", {"calls": [req()]}).wait()
    wait_until(lambda: not marker_pids(m), 1)
    left = marker_pids(m)
    kill_pids(left)
    bad = []
    if not started:
        bad.append("the tool's grandchild never appeared (%s)" % describe(r1))
    if not survived:
        bad.append("control: nothing outlived the SIGKILLed supervisor, so the sweep was not tested")
    if r2.res.get("status") != "succeeded":
        bad.append("the next run: %s" % describe(r2))
    if left:
        bad.append("still alive after the next run: %s (killed now)" % left)
    emit(not bad, "tool_killed_supervisor_swept", "; ".join(bad) if bad else
         "pid %s outlived the SIGKILLed supervisor; gone after the next cordon run" % survived)


# --- records before answers (issue 15) ------------------------------------
# A call's audit line (and a side-effect tool's ledger record) is written
# before its answer; a record that cannot be written fails the call (in_doubt
# when its tool acted, else internal_error) and the run (status error, the
# stage named), and no later call runs.  Faults come from faults/shim.c,
# preloaded into cordon (both modes), or from a full tmpfs (root).

SHIM = os.path.join(W, "shim.so")


def build_shim():
    p = subprocess.run(["cc", "-shared", "-fPIC", "-O2", "-o", SHIM, os.path.join(HERE, "faults", "shim.c"), "-ldl"],
                       capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit("bridge: cannot build faults/shim.c: %s" % p.stderr)


def preload_first():
    """What must come before the shim in LD_PRELOAD: an ASan build's
    runtime library insists on being first."""
    return asan_lib() + " " if asan_build() else ""


def shim_env(**kw):
    return dict({"LD_PRELOAD": preload_first() + SHIM}, **{"SHIM_" + k: str(v) for k, v in kw.items()})


def run_error_faults(r, where):
    """A run that lost a record: status error naming where, exit 125, the
    program's own exit (0) still reported, supervisor.log saying why."""
    bad = []
    err = r.res.get("error") or {}
    if r.res.get("status") != "error" or (err.get("details") or {}).get("where") != where or \
       err.get("code") != "sandbox_execution_failed":
        bad.append("result %s/%s, want error at %s" % (r.res.get("status"), json.dumps(err)[:200], where))
    if r.rc != 125:
        bad.append("exit %s, want 125" % r.rc)
    if r.res.get("exitCode") != 0:
        bad.append("the program's exitCode %r is not reported" % r.res.get("exitCode"))
    try:
        with open(os.path.join(r.rd, "logs", "supervisor.log")) as f:
            log = f.read()
    except OSError as e:
        log = str(e)
    if "record lost at %s" % where.rsplit(".", 1)[1] not in log or "exit 125" not in log:
        bad.append("supervisor.log: %r" % log[-200:])
    return bad


def whole_lines(rd):
    """The audit file's lines, each one JSON object, none torn."""
    try:
        with open(os.path.join(rd, "logs", "tool-calls.jsonl"), "rb") as f:
            raw = f.read()
    except OSError:
        return None
    if raw and not raw.endswith(b"\n"):
        return None
    try:
        return [json.loads(x) for x in raw.decode().splitlines()]
    except ValueError:
        return None


def check_audit_write_fails():
    """The third audit line cannot be written (ENOSPC on tool-calls.jsonl):
    that call's tool ran, so it is in_doubt, not internal_error; the two
    after it are refused without running; the run is status error at
    exec.harness.audit although the program exited 0.  Its answer was
    recorded by the ledger, so a retry in the next run gets it.  Before
    (issue 15): every call ok, status succeeded, 2 of 5 lines on disk."""
    mids = [uniq("auditfail-%d" % i) for i in range(5)]
    state = os.path.join(W, "state-auditfail")
    calls = [req("test.counter", {"item": "tea"}, messageId=m) for m in mids]
    r = Run("auditfail", "calls", {"calls": calls}, state=state,
            env=shim_env(PATH="tool-calls.jsonl", AFTER=2)).wait()
    a = [one_answer(r, i) for i in range(5)]
    bad = run_error_faults(r, "exec.harness.audit")
    for i, want in enumerate([("ok", None), ("ok", None), ("in_doubt", "record"), ("internal_error", "record"),
                              ("internal_error", "record")]):
        if err_of(a[i]) != want:
            bad.append("call %d: %s, want %s" % (i + 1, json.dumps(a[i])[:200], want))
    ran = [len(counter_lines(m)) for m in mids]
    if ran != [1, 1, 1, 0, 0]:
        bad.append("executions per call %s, want [1, 1, 1, 0, 0]" % ran)
    lines = whole_lines(r.rd)
    if lines is None or [ln.get("messageId") for ln in lines] != mids[:2]:
        bad.append("audit file: %s" % (lines if lines is None else [ln.get("messageId") for ln in lines]))
    tc = r.res.get("toolCalls") or []
    if len(tc) != 5 or (tc[2].get("decision"), tc[2].get("code")) != ("allowed", "in_doubt"):
        bad.append("toolCalls %s" % json.dumps(tc)[:300])
    r2 = Run("auditfail-retry", "calls", {"calls": [calls[2]]}, state=state).wait()
    a2 = one_answer(r2)
    if err_of(a2) != ("ok", None) or a2.get("replayed") is not True or len(counter_lines(mids[2])) != 1:
        bad.append("the retry of call 3: %s, ran %d times" % (json.dumps(a2)[:200], len(counter_lines(mids[2]))))
    emit(not bad, "audit_write_fails_run_error", "; ".join(bad) if bad else
         "3rd line ENOSPC: call 3 in_doubt/record (its tool ran), 4 and 5 internal_error/record, not run; 2 whole "
         "lines; status error at exec.harness.audit, exit 125, exitCode 0; the next run's retry of call 3: its "
         "recorded answer, replayed")


def check_ledger_unrecorded():
    """The tool ran, then the ledger's disk was full when recording its
    answer (ENOSPC on ledger.sqlite3* once the tool's own file exists):
    in_doubt, audited allowed with recorded: false, the run status error at
    exec.harness.ledger; the next call is refused; a retry in a later run is
    in_doubt, never a second run.  Before (issue 15): internal_error, the
    audit line "denied"."""
    mid = uniq("unrecorded")
    state = os.path.join(W, "state-unrecorded")
    arm = os.path.join(DATA, "ledger-arm.log")
    call = req("test.arm_counter", {"item": "salt"}, messageId=mid)
    r = Run("unrecorded", "calls", {"calls": [call, req()]}, state=state,
            env=shim_env(PATH="ledger.sqlite3", ARM=arm)).wait()
    try:
        with open(arm) as f:
            ran = sum(1 for x in f if x.split(" ", 1)[0] == mid)
        os.unlink(arm)
    except OSError:
        ran = 0
    audit = Audit(r)
    a0, a1 = one_answer(r), one_answer(r, 1)
    l0, l1 = audit.take(a0), audit.take(a1)
    bad = run_error_faults(r, "exec.harness.ledger")
    if err_of(a0) != ("in_doubt", "replay"):
        bad.append("the call: %s" % json.dumps(a0)[:300])
    got = tuple((l0 or {}).get(k) for k in ("decision", "code", "check", "reason", "recorded"))
    if got != ("allowed", "in_doubt", "replay", "unrecorded", False):
        bad.append("its audit line %s" % (got,))
    bad += ["the next call: %s" % b for b in judge(a1, l1, ("internal_error", "record", "run_failed"))]
    r2 = Run("unrecorded-retry", "calls", {"calls": [call]}, state=state).wait()
    a2 = one_answer(r2)
    bad += ["the retry: %s" % b for b in judge(a2, Audit(r2).take(a2), ("in_doubt", "replay", "pending"))]
    try:
        with open(arm) as f:
            ran += sum(1 for x in f if x.split(" ", 1)[0] == mid)
    except OSError:
        pass
    if ran != 1:
        bad.append("the tool ran %d times" % ran)
    emit(not bad, "ledger_unrecorded_in_doubt", "; ".join(bad) if bad else
         "answer unrecordable (ENOSPC): in_doubt/replay, audit allowed/in_doubt/unrecorded recorded:false; next "
         "call internal_error/record/run_failed; status error at exec.harness.ledger, exit 125; retry in a later "
         "run in_doubt/replay/pending; ran once")


def check_answer_not_utf8():
    """A side-effect tool answers a string with the byte 0xFF: refused as
    tool_failed/exec bad_answer (the tool ran), and that failure is what is
    recorded, so the repeat in the run and in a later one decodes.  Before
    (issue 15): the answer and every retry were not UTF-8 (calls.py could not
    decode them)."""
    mid = uniq("utf8")
    state = os.path.join(W, "state-utf8")
    call = req("test.bad_utf8", {"item": "cafe"}, messageId=mid)
    r = Run("utf8", "calls", {"calls": [call, call]}, state=state).wait()
    r2 = Run("utf8-retry", "calls", {"calls": [call]}, state=state).wait()
    audit = Audit(r)
    a = [one_answer(r), one_answer(r, 1), one_answer(r2)]
    bad = judge(a[0], audit.take(a[0]), ("tool_failed", "exec", "bad_answer"))
    if "not UTF-8" not in (a[0].get("error") or {}).get("message", ""):
        bad.append("the reason: %s" % json.dumps(a[0])[:200])
    bad += ["repeat: %s" % b for b in judge(a[1], audit.take(a[1]), ("tool_failed", "replay", "recorded"))]
    bad += ["later run: %s" % b for b in judge(a[2], Audit(r2).take(a[2]), ("tool_failed", "replay", "recorded"))]
    if r.res.get("status") != "succeeded" or whole_lines(r.rd) is None:
        bad.append(describe(r))
    if len(counter_lines(mid)) != 1:
        bad.append("the tool ran %d times" % len(counter_lines(mid)))
    emit(not bad, "answer_not_utf8_recorded_decodable", "; ".join(bad) if bad else
         "0xFF in the answer: tool_failed/exec/bad_answer %r; the repeat and a later run's retry: "
         "tool_failed/replay/recorded, decodable; ran once" % (a[0].get("error") or {}).get("message", "")[:80])


def check_thread_refused():
    """pthread_create fails for every connection after the second (the
    acceptor is the first thread): the calls are answered internal_error/
    frame (reason threads) with an audit line and a toolCalls entry each.
    Before (issue 15): the connection was closed, no answer, no line, and
    the run succeeded as if nothing had been asked."""
    calls = [req(), req(), req(), req()]
    r = Run("threads", "calls", {"calls": calls}, env=shim_env(THREADS_AFTER=3)).wait()
    audit = Audit(r)
    a = [one_answer(r, i) for i in range(4)]
    bad = []
    for i, want in enumerate([("ok", "exec"), ("ok", "exec"), ("internal_error", "frame", "threads"),
                              ("internal_error", "frame", "threads")]):
        bad += ["call %d: %s" % (i + 1, b) for b in judge(a[i], audit.take(a[i]), want)]
    if len(r.audit) != 4 or len(r.res.get("toolCalls") or []) != 4:
        bad.append("%d audit lines, %d toolCalls, want 4 each" % (len(r.audit), len(r.res.get("toolCalls") or [])))
    if r.res.get("status") != "succeeded":
        bad.append(describe(r))
    emit(not bad, "thread_refused_audited", "; ".join(bad) if bad else
         "no thread for connections 3 and 4: internal_error/frame/threads answered, 4 audit lines and toolCalls "
         "entries; the run succeeded (every call has its line)")


def check_rundir_disk_full():
    """The run directory on a 256 KiB tmpfs.  Full but two pages (the
    program's copy) before the run: before (issue 15) status succeeded, exit 0, tool-calls.jsonl,
    result.json and supervisor.log 0 bytes; now prepare fails (stage rundir)
    before the program runs.  Filled while the program waits, then 300
    refused calls (more than the audit's reservation): status error at
    exec.harness.audit, every line on disk whole, later calls refused."""
    if MODE != "root":
        S.run_only("rundir_disk_full", "a tmpfs of its own needs root")
        return
    mnt = os.path.join(W, "small")
    os.mkdir(mnt)
    bad = []
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k,mode=0755", "tmpfs", mnt]).returncode != 0:
        emit(False, "rundir_disk_full", "cannot mount a tmpfs on %s" % mnt)
        return
    try:
        # room for the program's copy (calls.py: two pages), no more
        with open(os.path.join(mnt, "fill"), "wb") as f:
            f.write(b"\0" * (62 * 4096))
        r = Run("full-before", "calls", {"calls": [req()]}, rd=os.path.join(mnt, "rd1")).wait()
        err = r.res.get("error") or {}
        if r.res.get("status") != "error" or (err.get("details") or {}).get("where") != "exec.harness.rundir" or \
           r.rc != 125 or "stdout" in r.res:
            bad.append("full before: %s, exit %s" % (json.dumps(r.res)[:300], r.rc))
        os.unlink(os.path.join(mnt, "fill"))
        shutil.rmtree(os.path.join(mnt, "rd1"), ignore_errors=True)
        spec = dict(req(params={"text": "hi", "x": 1}), repeat=300)
        r = Run("full-during", "calls", {"calls": [{"idle": 0, "pause": 2}, spec]}, rd=os.path.join(mnt, "rd2"))
        code = wait_until(lambda: [d for d in os.listdir(os.path.join(mnt, "rd2", "executed_programs"))]
                          if os.path.isdir(os.path.join(mnt, "rd2", "executed_programs")) else None, 10)
        fd = os.open(os.path.join(mnt, "fill"), os.O_WRONLY | os.O_CREAT, 0o600)
        try:
            while os.write(fd, b"\0" * 4096) > 0:
                pass
        except OSError:
            pass
        os.close(fd)
        r.wait()
        c = (r.calls() or [{}, {}])[-1]
        lines = whole_lines(r.rd)
        n = len(lines or [])
        counts = c.get("counts") or {}
        if not code:
            bad.append("the run directory never had its program")
        bad += ["full during: %s" % b for b in run_error_faults(r, "exec.harness.audit")]
        if lines is None or not 0 < n < 300 or counts.get("invalid_params/params") != n or \
           counts.get("internal_error/record") != 300 - n:
            bad.append("full during: %s lines (whole: %s), answers %s" % (n, lines is not None, counts))
    finally:
        subprocess.run(["umount", "-l", mnt])
    emit(not bad, "rundir_disk_full", "; ".join(bad) if bad else
         "full before the run: error at exec.harness.rundir, exit 125, the program never ran; filled during: the "
         "first %d of 300 refusals audited (whole lines), the rest internal_error/record; status error at "
         "exec.harness.audit, exit 125" % n)


class EnvSuite:
    """The suite as cordon serve sees it, with an environment of its own
    (the shim; the other checks' runs keep theirs) and one blob (serve
    holds one blob per app)."""

    def __init__(self, suite, env, blobs):
        self._s, self.env, self.blobs = suite, env, blobs

    def __getattr__(self, k):
        return getattr(self._s, k)


def check_serve_audit_fails():
    """The same through cordon serve (one sandbox lifecycle): every audit
    line fails; the execution's result is status error at
    exec.harness.audit, and the call in_doubt."""
    try:
        # The server's environment holds the secrets of the tools CTX
        # selects, as every cordon run's does (Run): without them the
        # execution is refused before it starts (exec.harness.secrets).
        env = dict(shim_env(PATH="tool-calls.jsonl", AFTER=0), BRIDGE_SECRET=ENV_FILE_SECRET,
                   BRIDGE_ENV_SECRET=ENV_SECRET)
        backend = harness.ServeBackend(EnvSuite(S, env,
                                                {"main": S.blobs["main"]}))
    except RuntimeError as e:
        emit(False, "serve_audit_fails_run_error", "cordon serve: %s" % e)
        return
    try:
        x = backend.start("main", os.path.join(HERE, "programs", "calls.py"),
                          [TLIB, ("params.json", json.dumps({"calls": [req()]}))], context=CTX, agent="bridge").wait()
    finally:
        backend.close()
    res = x.res or {}
    err = res.get("error") or {}
    answer = ((res.get("result") or {}).get("calls") or [{}])[0].get("answer") or {}
    bad = []
    if x.http != 200 or res.get("status") != "error" or (err.get("details") or {}).get("where") != \
       "exec.harness.audit" or res.get("exitCode") != 0:
        bad.append("HTTP %s %s" % (x.http, json.dumps(res)[:300]))
    if err_of(answer) != ("in_doubt", "record"):
        bad.append("the call: %s" % json.dumps(answer)[:200])
    emit(not bad, "serve_audit_fails_run_error", "; ".join(bad) if bad else
         "cordon serve, every audit line ENOSPC: HTTP 200, status error at exec.harness.audit, exitCode 0; the "
         "call in_doubt/record")


def check_serve_secrets():
    """cordon serve without BRIDGE_SECRET: the policy loads and its pools
    fill (the server gets ready), the log names each agent with a tool
    lacking a secret; an execution that selects such a tool gets the error
    result at exec.harness.secrets before any sandbox runs it; one whose
    context leaves the tool out runs."""
    env = {"BRIDGE_ENV_SECRET": ENV_SECRET}
    try:
        backend = harness.ServeBackend(EnvSuite(S, env, {"main": S.blobs["main"]}))
    except RuntimeError as e:
        emit(False, "serve_secret_missing_refused", "cordon serve: %s" % e)
        return
    try:
        ready = backend.request("GET", "/v1/ready", timeout=10)[0]
        x = backend.start("main", os.path.join(HERE, "programs", "calls.py"),
                          [TLIB, ("params.json", json.dumps({"calls": [req()]}))], context=CTX, agent="bridge").wait()
        n = backend.start("main", os.path.join(HERE, "programs", "calls.py"),
                          [TLIB, ("params.json", json.dumps({"calls": [req()]}))],
                          context=dict(CTX, tools=["test.echo", "test.env_secret"]), agent="bridge").wait()
        log = backend.log_tail(20000)
    finally:
        backend.close()
    bad = []
    if ready != 200:
        bad.append("GET /v1/ready %s: the pools did not fill" % ready)
    # agent bridge: the first of its tools (inventory order) that needs
    # BRIDGE_SECRET is named (test.secret, test.tempfail, test.fail_once)
    for want in (r"app bridge agent bridge: tool test\.(secret|tempfail|fail_once) needs the secret BRIDGE_SECRET,",
                 r"app bridge agent unset: tool test\.unset_secret needs the secret BRIDGE_UNSET_SECRET,",
                 r"app bridge agent late: tool test\.late_secret needs the secret BRIDGE_LATE_SECRET,"):
        if not re.search(want, log):
            bad.append("the log lacks /%s/ (log: %s)" % (want, log[-1000:]))
    if ENV_SECRET in log:
        bad.append("the log shows a secret's value")
    res = x.res or {}
    err = res.get("error") or {}
    if x.http != 200 or res.get("status") != "error" or (err.get("details") or {}).get("where") != \
       "exec.harness.secrets" or "BRIDGE_SECRET" not in (err.get("message") or "") or "stdout" in res:
        bad.append("CTX: HTTP %s %s" % (x.http, json.dumps(res)[:300]))
    answer = ((n.res.get("result") or {}).get("calls") or [{}])[0].get("answer") or {}
    if n.http != 200 or n.res.get("status") != "succeeded" or err_of(answer) != ("ok", None):
        bad.append("narrowed: HTTP %s %s; answer %s" % (n.http, json.dumps(n.res)[:200], json.dumps(answer)[:200]))
    emit(not bad, "serve_secret_missing_refused", "; ".join(bad) if bad else
         "cordon serve without BRIDGE_SECRET: ready (pools filled), the log names agents bridge, unset, late with "
         "tool and variable; CTX: HTTP 200 status error at exec.harness.secrets, no output; a context without "
         "test.secret: succeeded, the call ok")


def check_leftovers():
    try:
        with open(HANGLOG) as f:
            pids = [int(p) for x in f for p in x.split()[2:4]]
    except OSError:
        pids = []
    S.check_leftovers(extra=[("hang tool processes", pids)],
                      what="tool process, mount, cgroup, host-id lock, marked process or temporary run directory")


def main():
    try:
        compile_blobs()
        build_shim()
        checks = [lambda: check_allowed(check_table()), check_client, check_no_agent, check_stall, check_peer, check_peer_flood,
                  check_token_isolation, check_budget_day, check_replay_one_run, check_replay_concurrent,
                  check_replay_tenants, check_in_doubt, check_secrets, check_hang_and_flood, check_run_timeout,
                  check_concurrent_calls,
                  check_replay_after_budget, check_late_secret, check_secret_unset, check_replay_budget_refused,
                  check_replay_wait_ends, check_too_many_calls, check_audit_names, check_answer_bound,
                  check_stop_no_line, check_dup_keys, check_tool_failure_retryable, check_tool_identity,
                  check_tool_escape, check_tool_limits, check_untrusted_path, check_killed_supervisor_tools,
                  check_audit_write_fails, check_ledger_unrecorded, check_answer_not_utf8, check_thread_refused,
                  check_rundir_disk_full, check_serve_audit_fails, check_serve_secrets, check_returns]

        # BRIDGE_ONLY=name,name: only the check functions named so (check_<name>)
        only = [x for x in os.environ.get("BRIDGE_ONLY", "").split(",") if x]
        if only:
            checks = [fn for fn in checks if getattr(fn, "__name__", "").replace("check_", "", 1) in only]

        def guarded(fn):
            try:
                fn()
            except Exception as e:  # a crashed check is a failed check
                import traceback
                emit(False, getattr(fn, "__name__", "check"), "%s: %s %s" % (
                    type(e).__name__, e, traceback.format_exc()[-400:]))
        # Alone first: every run sweeps what killed supervisors left, so a
        # concurrent run would do this check's work before it looks.
        if check_killed_supervisor_tools in checks:
            checks.remove(check_killed_supervisor_tools)
            guarded(check_killed_supervisor_tools)
        with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
            list(pool.map(guarded, checks))
        check_leftovers()
        S.check_sanitizer()
    finally:
        rc = S.finish()
    return rc


if __name__ == "__main__":
    sys.exit(main())
