#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# run.py - exactly-once across cordon serve replicas (README.md): two
# servers, each with its own socket and work directory, one ledger, driven
# at once with executions whose programs call side-effect tools with the
# same message ids.
#
#   BUILD=DIR (cordon, cordonc)  POLICIES=DIR (shipped profiles)
#   /usr/bin/python3 run.py sqlite|postgresql
#
# sqlite: both servers name one --state-dir (one host, one SQLite file);
# postgresql: both name one --ledger URL of a private server started with
# tests/lib/pgtmp.  Lines as the other suites' (tests/lib/harness.py):
# "ok|FAIL serve CHECK EVIDENCE", one summary; exit 1 when a check failed.
import collections
import concurrent.futures
import json
import os
import random
import signal
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True   # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
import harness  # noqa: E402  (tests/lib: the suites' shared runner)
from ledger_place import LedgerPlace  # noqa: E402

LEDGER = sys.argv[1] if len(sys.argv) > 1 else "sqlite"
if LEDGER not in ("sqlite", "postgresql"):
    sys.exit("run.py: ledger %s: sqlite or postgresql" % LEDGER)
S = harness.Suite("fleet-" + LEDGER, mode="serve")
SRC = os.path.dirname(os.path.dirname(HERE))
PROGRAM = os.path.join(HERE, "programs", "send.py")
TLIB = os.path.join(SRC, "tests", "bridge", "tlib.py")   # the bridge suite's wire client
BUDGET = 6            # fleet.send's max_calls_per_day, for every replica together
IDS = 10              # message ids of the concurrent round: more than the budget
PER_REPLICA = 4       # executions of that round on each replica, all at once
CTX = {"tenant": "fleet", "project": "p-1", "user": "ana", "session": "s-1", "roles": ["analyst"]}

DATA = os.path.join(S.W, "data")   # the tools' logs: one line a real execution
os.mkdir(DATA)
os.chmod(DATA, 0o777)              # the tools run as a leased host uid


def emit(ok, name, evidence):
    S.emit(ok, name, evidence)


# --- the ledger both replicas share -------------------------------------------

def Ledger(kind):
    """The one ledger of the replicas (tests/lib/ledger_place.py): its serve
    arguments, and for PostgreSQL the private server and its outage."""
    return LedgerPlace(kind, os.path.join(S.W, "state" if kind == "sqlite" else "pg"))


# --- the policy, the replicas, the executions ---------------------------------

def compile_blob():
    with open(os.path.join(HERE, "tools.yaml.in")) as f:
        inv = f.read().replace("@TOOLS@", os.path.join(SRC, "tests", "bridge", "tools")).replace(
            "@DATA@", DATA).replace("@BUDGET@", str(BUDGET))
    tools = os.path.join(S.W, "tools.yaml")
    with open(tools, "w") as f:
        f.write(inv)
    S.compile("fleet", os.path.join(HERE, "app.yaml"), [tools])


def replica(ledger):
    """One cordon serve on the shared ledger (the harness's server: its own
    socket, work directory and signing key)."""
    return harness.ServeBackend(S, ["--retain-seconds", "600"] + ledger.args)


def execute(backend, calls):
    """One execution making calls [(tool, message id)], each item = its id
    (so one id always carries one params text)."""
    body = [{"tool": t, "messageId": m, "item": m} for t, m in calls]
    return backend.start("fleet", PROGRAM, [TLIB, ("params.json", json.dumps({"calls": body}))],
                         context=CTX, agent="fleet")


def finished(x, limit=120):
    """x waited for; (its answers, why not) - answers None when the
    execution did not succeed."""
    x.wait(limit)
    ans = x.result.get("answers")
    if x.res.get("status") != "succeeded" or not isinstance(ans, list):
        return None, harness.describe(x)
    return ans, None


def log_lines(name):
    """The tool's log: [(message id, execution id, pid)], one a real run."""
    try:
        with open(os.path.join(DATA, name)) as f:
            return [tuple(ln.split()) for ln in f if ln.strip()]
    except FileNotFoundError:
        return []


def code_of(a):
    if not isinstance(a, dict):
        return "none"
    return "ok" if a.get("ok") is True else (a.get("error") or {}).get("code", "none")


def audit_files(backend):
    """Every audit line the replica's retained run directories hold,
    {execution id: [line, ...]} (a run directory's logs/tool-calls.jsonl;
    the execution id is the line's own)."""
    out = collections.defaultdict(list)
    for root, _, files in os.walk(backend.work):
        if "tool-calls.jsonl" in files and os.path.basename(root) == "logs":
            with open(os.path.join(root, "tool-calls.jsonl")) as f:
                for ln in f:
                    try:
                        d = json.loads(ln)
                    except ValueError:
                        d = {"unparsable": ln[:80]}
                    out[d.get("executionId")].append(d)
    return out


# --- the checks ----------------------------------------------------------------

def check_concurrent(replicas, ids):
    """PER_REPLICA executions on each replica at once, each sending every
    id (a shuffled order of its own) through fleet.send, whose daily budget
    BUDGET is less than the ids: every id ran at most once (its lines), the
    budget was spent exactly once in sum, each id got one answer everywhere
    (the recorded one, or budget_exceeded), and the answers, the results'
    toolCalls and the audit files agree on which execution ran which id.
    Returns {id: the answer} for the replay check."""
    runs = []
    for n in range(PER_REPLICA):
        for r, b in enumerate(replicas):
            order = list(ids)
            random.Random(n * 31 + r).shuffle(order)
            runs.append((r, order, execute(b, [("fleet.send", m) for m in order])))
    with concurrent.futures.ThreadPoolExecutor(max_workers=len(runs)) as pool:
        done = list(pool.map(lambda rox: rox[:3] + finished(rox[2]), runs))
    bad = []
    by_id = collections.defaultdict(list)     # id -> [(replica, execution id, answer)]
    results = []
    for r, order, x, ans, why in done:
        if ans is None:
            bad.append("replica %d: %s" % (r, why))
            continue
        results.append((r, x.res))
        for m, a in zip(order, ans):     # the program answers in the order it called
            by_id[m].append((r, x.res.get("executionId"), a))
    lines = log_lines("sends.log")
    ran = collections.Counter(m for m, _, _ in lines)
    twice = {m: n for m, n in ran.items() if n > 1}
    if twice:
        bad.append("ran more than once: %s" % twice)
    if len(lines) != min(BUDGET, len(ids)):
        bad.append("%d sends ran in sum, the daily budget is %d (%d ids)" % (len(lines), BUDGET, len(ids)))
    first = {}
    for m in ids:
        got = by_id.get(m, [])
        codes = collections.Counter(code_of(a) for _, _, a in got)
        if len(got) != len(results):
            bad.append("%s: %d answers from %d executions" % (m, len(got), len(results)))
        if set(codes) == {"ok"}:
            nonces = {json.dumps(a.get("result"), sort_keys=True) for _, _, a in got}
            fresh = [(e, a) for _, e, a in got if not a.get("replayed")]
            if len(nonces) != 1 or len(fresh) != 1 or ran[m] != 1:
                bad.append("%s: %d different answers, %d not replayed, %d lines" % (m, len(nonces), len(fresh), ran[m]))
            elif (fresh[0][1].get("result") or {}).get("executionId") != fresh[0][0]:
                bad.append("%s: the fresh answer came from execution %s, not %s" % (
                    m, (fresh[0][1].get("result") or {}).get("executionId"), fresh[0][0]))
            first[m] = got[0][2]
        elif set(codes) == {"budget_exceeded"}:
            if ran[m]:
                bad.append("%s: refused everywhere, yet ran %d time(s)" % (m, ran[m]))
            first[m] = got[0][2] if got else None
        else:
            bad.append("%s: answers %s" % (m, dict(codes)))
    bad += audit_agrees(replicas, results, lines, "fleet.send")
    fresh_by = collections.Counter(r for m in ids for r, _, a in by_id.get(m, []) if code_of(a) == "ok"
                                   and not a.get("replayed"))
    emit(not bad, "exactly_once_concurrent", "; ".join(bad[:5]) if bad else
         "%d executions (%d on each of 2 replicas, at once) x %d ids through fleet.send, budget %d/day: %d sends ran, "
         "each once (replica 0 ran %d, replica 1 %d), every id had one answer everywhere (%d ok, %d budget_exceeded); "
         "answers, results' toolCalls and audit files agree" % (
             len(runs), PER_REPLICA, len(ids), BUDGET, len(lines), fresh_by[0], fresh_by[1],
             sum(1 for m in first if code_of(first[m]) == "ok"),
             sum(1 for m in first if code_of(first[m]) == "budget_exceeded")))
    return first


def audit_agrees(replicas, results, lines, tool):
    """The results' toolCalls and the replicas' audit files against the
    tool's log: an allowed, not replayed call of tool for each line, in the
    execution the line names; every other call of it replayed or denied;
    each result's toolCalls the same calls as its audit file."""
    bad = []
    files = {}
    for b in replicas:
        files.update(audit_files(b))
    ran_in = collections.Counter((m, e) for m, e, _ in lines)
    fresh = collections.Counter()
    for r, res in results:
        eid = res.get("executionId")
        calls = [c for c in res.get("toolCalls") or [] if c.get("tool") == tool]
        for c in calls:
            if c.get("decision") == "allowed" and not c.get("replayed"):
                fresh[(c.get("messageId"), eid)] += 1
        audit = [d for d in files.get(eid, []) if d.get("tool") == tool]
        key = ("requestId", "decision", "code")
        if [[c.get(k) for k in key] for c in calls] != [[d.get(k) for k in key] for d in audit]:
            bad.append("execution %s (replica %d): toolCalls and logs/tool-calls.jsonl differ (%d / %d lines)" % (
                eid, r, len(calls), len(audit)))
    if fresh != ran_in:
        bad.append("allowed, not replayed calls %s != the tool's lines %s" % (
            dict(fresh - ran_in), dict(ran_in - fresh)))
    return bad


def check_replay(replicas, ids, first):
    """After the concurrent round, one execution on each replica sends every
    id again and one new id: each answer is the first round's (the recorded
    one, replayed; or budget_exceeded), the new id is refused (the budget
    was spent by the other replica's calls as much as by its own), no send
    runs."""
    before = len(log_lines("sends.log"))
    new = "m-new-%s" % os.urandom(3).hex()
    xs = [execute(b, [("fleet.send", m) for m in ids + [new]]) for b in replicas]
    bad = []
    for r, x in enumerate(xs):
        ans, why = finished(x)
        if ans is None:
            bad.append("replica %d: %s" % (r, why))
            continue
        for m, a in zip(ids, ans):
            want = first.get(m)
            if code_of(a) != code_of(want):
                bad.append("replica %d %s: %s, first %s" % (r, m, code_of(a), code_of(want)))
            elif code_of(a) == "ok" and (not a.get("replayed") or a.get("result") != want.get("result")):
                bad.append("replica %d %s: not the recorded answer: %s" % (r, m, json.dumps(a)[:160]))
        if code_of(ans[-1]) != "budget_exceeded":
            bad.append("replica %d: a new id past the budget: %s" % (r, json.dumps(ans[-1])[:160]))
    after = len(log_lines("sends.log"))
    if after != before:
        bad.append("%d sends ran again" % (after - before))
    emit(not bad, "replay_across_replicas", "; ".join(bad[:5]) if bad else
         "each replica sent the %d ids again: the recorded answers (replayed, the same nonce) whichever replica "
         "ran them, the refused ones refused again, a new id budget_exceeded; no send ran (%d lines)" % (
             len(ids), after))


def check_sigkill(replicas, ledger):
    """A replica SIGKILLed while its slow send runs (the tool wrote its line
    and sleeps): the same id through the other replica answers in_doubt,
    also when sent again, and the tool never runs a second time.  The
    killed replica's sandboxes and cgroups are cleaned up here (the kernel
    ends what the pid namespaces held)."""
    victim, other = replicas
    mid = "m-slow-%s" % os.urandom(3).hex()
    x = execute(victim, [("fleet.slow_send", mid)])
    started = harness.wait_until(lambda: log_lines("slow.log"), 60, 0.05)
    procs = [(p, harness.start_time(p)) for p in harness.descendants(victim.pid)]
    os.kill(victim.pid, signal.SIGKILL)
    victim.p.wait()
    victim.closed = True           # no SIGTERM drain to judge: it is dead
    S.supervisor_died(why="after SIGKILL of replica 0")
    x.wait(10)
    bad = [] if started else ["the slow send never started: %s" % harness.describe(x)]
    answers = []
    for _ in range(2):
        y = execute(other, [("fleet.slow_send", mid)])
        ans, why = finished(y)
        answers.append(code_of(ans[0]) if ans else why)
    # the killed replica's tool is not killed with it: let it finish before counting
    tool_pids = [int(p) for _, _, p in log_lines("slow.log")]
    harness.wait_until(lambda: not any(harness.alive(p) for p in tool_pids), 30)
    lines = log_lines("slow.log")
    if answers != ["in_doubt", "in_doubt"]:
        bad.append("the other replica answered %s, not in_doubt twice" % answers)
    if len(lines) != 1:
        bad.append("the slow send ran %d times" % len(lines))
    left = [p for p, st in procs if st is not None and harness.start_time(p) == st]
    harness.wait_until(lambda: not [p for p, st in procs if harness.start_time(p) == st], 5)
    left = [p for p, st in procs if st is not None and harness.start_time(p) == st]
    if left:
        harness.kill_pids(left)
        S.note("replica 0's processes alive after its SIGKILL (killed now): %s" % left)
    for e in harness.remove_cgroups(harness.cgroup_dirs(pids=[victim.pid])):
        S.note(e)
    emit(not bad, "sigkill_in_doubt", "; ".join(bad) if bad else
         "replica 0 SIGKILLed while its slow send ran: the same id through replica 1 answered in_doubt, twice; the "
         "tool ran once (%s ledger)" % ledger.kind)


def check_pg_outage(b, ledger):
    """PostgreSQL stopped: a side-effect call fails cleanly (internal_error,
    the tool not run); started again: the same id runs, once, and a
    restart between two calls of one execution costs nothing."""
    if ledger.kind != "postgresql":
        return
    bad = []
    m1, m2, m3 = ("m-pg-%d-%s" % (i, os.urandom(3).hex()) for i in range(3))
    ok, why = ledger.pg("stop")
    if not ok:
        emit(False, "postgres_outage", "pgtmp stop failed: %s" % why)
        return
    ans, why = finished(execute(b, [("fleet.note", m1)]))
    during = code_of(ans[0]) if ans else why
    lines_down = len(log_lines("notes.log"))
    ok, why = ledger.pg("restart")
    if not ok:
        emit(False, "postgres_outage", "pgtmp restart (after stop) failed: %s" % why)
        return
    ans, why = finished(execute(b, [("fleet.note", m1), ("fleet.note", m2)]))
    after = [code_of(a) for a in ans] if ans else why
    # A restart while an execution makes calls.  Each call is answered ok,
    # internal_error (not run) or in_doubt, or the execution ends as a
    # harness error at the ledger (an answer that could not be recorded
    # must not read as succeeded).  Sent again, every id is answered from
    # its record, in_doubt (it may have run, its answer is not recorded) or
    # runs now: none ever runs twice.
    mids = ["%s-%d" % (m3, i) for i in range(21)]
    x = execute(b, [("fleet.note", m) for m in mids])
    ok, why = ledger.pg("restart")
    x.wait(120)
    ans = x.result.get("answers") if x.res.get("status") == "succeeded" else None
    if isinstance(ans, list):
        mid_codes = dict(collections.Counter(code_of(a) for a in ans))
        if set(mid_codes) - {"ok", "internal_error", "in_doubt"}:
            bad.append("calls around a restart: %s" % mid_codes)
    else:
        where = ((x.res.get("error") or {}).get("details") or {}).get("where")
        mid_codes = "a harness error at %s" % where
        if where != "exec.harness.ledger":
            bad.append("calls around a restart: %s" % harness.describe(x))
    again, why = finished(execute(b, [("fleet.note", m) for m in mids]))
    ran = collections.Counter(m for m, _, _ in log_lines("notes.log"))
    if again is None:
        bad.append("the 21 ids sent again: %s" % why)
    else:
        codes = [code_of(a) for a in again]
        wrong = ["%s: %s, ran %d" % (m, c, ran[m]) for m, c in zip(mids, codes)
                 if not ((c == "ok" and ran[m] == 1) or (c == "in_doubt" and ran[m] <= 1))]
        if wrong:
            bad.append("the 21 ids sent again: %s" % wrong[:5])
        mid_codes = "%s; sent again: %s" % (mid_codes, dict(collections.Counter(codes)))
    if during != "internal_error" or lines_down:
        bad.append("during the outage: %s, %d notes ran" % (during, lines_down))
    if after != ["ok", "ok"] or ran[m1] != 1 or ran[m2] != 1:
        bad.append("after it: %s (lines %d, %d)" % (after, ran[m1], ran[m2]))
    if any(n > 1 for n in ran.values()):
        bad.append("ran twice: %s" % {m: n for m, n in ran.items() if n > 1})
    emit(not bad, "postgres_outage", "; ".join(bad) if bad else
         "PostgreSQL stopped: the call answered internal_error and its tool did not run; started again: the same "
         "id and another ran once each; 21 calls around a restart: %s; none twice" % mid_codes)


def main():
    compile_blob()
    try:
        ledger = Ledger(LEDGER)
    except RuntimeError as e:
        emit(False, "ledger_started", e)
        return S.finish()
    replicas = []
    try:
        try:
            replicas = [replica(ledger), replica(ledger)]
        except RuntimeError as e:
            emit(False, "serve_started", e)
            return S.finish()
        ids = ["m-%02d" % i for i in range(IDS)]
        first = check_concurrent(replicas, ids)
        check_replay(replicas, ids, first)
        check_pg_outage(replicas[1], ledger)
        check_sigkill(replicas, ledger)
        for b in replicas:
            b.close()
        S.check_leftovers()
    finally:
        for b in replicas:
            b.close()
        ledger.close()
    return S.finish()


if __name__ == "__main__":
    sys.exit(main())
