# SPDX-License-Identifier: Apache-2.0
# The bridge's scripted client: sends the requests listed in params.json
# ("calls"), one after the other, and reports every answer as the
# supervisor sent it.  One call spec (run.py builds them):
#
#   tool, params, id, messageId, extra   the request's members (id r<n>)
#   token      "own" (default), "none" (member left out) or "wrong"
#   body       raw request text instead; "@TOKEN@" becomes the own token
#   padTo      spaces after the JSON up to that many bytes (JSON allows
#              them): a frame exactly at or just over the bound
#   announce, send   a header announcing `announce` bytes, then only the
#              first `send` bytes of the body; then with close: true the
#              connection is closed (an EOF mid-frame: the answer cannot be
#              read, the audit line tells; shutdown(SHUT_WR) would keep it
#              readable, but python-compute refuses shutdown), else nothing
#              more is sent and the answer awaited (the frame timer)
#   conn       "new" (default) or "same": the previous call's connection
#   checkClose after the answer, whether the supervisor ends the connection
#   threads    that many copies of the call at once, each on its own
#              connection (one answer each, in "answers")
#   idle       instead of a call: open that many connections and keep them
#              idle (then wait `pause` seconds, if given); closeIdle: close
#              that many of them (then wait 0.3 s for the supervisor to see
#              it); countClosedIdle: report how many idle connections the
#              supervisor has ended (as "closedIdle")
#   repeat     send the call that many times on one connection, one after
#              the other, stopping when an answer does not come; reports
#              "counts" ({"code/check": n}), "sent", "first" and "answer"
#              (the first and the last answer), "ms" (all of them) and
#              "maxMs" (the slowest), instead of a result.json per call
#   leave      instead of a call: open that many connections, send the
#              call's whole frame on each and read no answer; they stay open
#              until the program ends (a program that exits mid-call)
#
# Then, with params "hold", it waits for the runner (below).
# result.json: {"calls": [{"name", "answer" | "answers", "ms", "closed"}],
#               "executionId"}
import os
import threading
import time

import tlib

P = tlib.params()


def request_bytes(spec, n):
    if "body" in spec:
        return spec["body"].replace("@TOKEN@", tlib.TOKEN).encode()
    token = {"own": tlib.TOKEN, "none": None, "wrong": tlib.WRONG_TOKEN}[spec.get("token", "own")]
    return tlib.body_of(spec["tool"], spec.get("params", {}), req_id=spec.get("id", "r%d" % n),
                        message_id=spec.get("messageId"), token=token, extra=spec.get("extra"))


def one(spec, n, sock):
    body = request_bytes(spec, n)
    body += b" " * max(0, spec.get("padTo", 0) - len(body))
    t0 = time.monotonic()
    if "announce" in spec:
        sock.sendall(spec["announce"].to_bytes(4, "big") + body[:spec["send"]])
        if spec.get("close"):
            sock.close()
            return {"noAnswer": "closed by this program"}, 0
    else:
        try:
            sock.sendall(tlib.frame(body))
        except (BrokenPipeError, ConnectionResetError):
            pass   # refused before all of it was read: the answer may still be there
    answer = tlib.recv_answer(sock)
    return answer, int((time.monotonic() - t0) * 1000)


def repeat(spec, n):
    """The same frame spec["repeat"] times on one connection."""
    sock = tlib.connect()
    counts, first, answer, slowest = {}, None, None, 0
    t0 = time.monotonic()
    sent = 0
    for _ in range(spec["repeat"]):
        answer, ms = one(spec, n, sock)
        sent += 1
        slowest = max(slowest, ms)
        first = answer if first is None else first
        key = "%s/%s" % ((answer.get("error") or {}).get("code", "ok" if answer.get("ok") else "none"),
                         (answer.get("error") or {}).get("check"))
        counts[key] = counts.get(key, 0) + 1
        if "noAnswer" in answer:
            break
    out = {"counts": counts, "sent": sent, "first": first, "answer": answer,
           "ms": int((time.monotonic() - t0) * 1000), "maxMs": slowest}
    if spec.get("checkClose"):
        out["closed"] = tlib.closed_by_peer(sock)
    sock.close()
    return out


def run(spec, n, prev):
    if spec.get("repeat"):
        return repeat(spec, n), None
    if spec.get("threads"):
        answers = [None] * spec["threads"]

        def worker(i):
            s = tlib.connect()
            answers[i] = one(spec, n, s)[0]
            s.close()
        t0 = time.monotonic()
        ts = [threading.Thread(target=worker, args=(i,)) for i in range(spec["threads"])]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        return {"answers": answers, "ms": int((time.monotonic() - t0) * 1000)}, None
    sock = prev if spec.get("conn") == "same" and prev is not None else tlib.connect()
    answer, ms = one(spec, n, sock)
    out = {"answer": answer, "ms": ms}
    if spec.get("checkClose"):
        out["closed"] = tlib.closed_by_peer(sock)
    return out, sock


done = []
prev = None
idle = []
left = []      # connections of "leave" calls: open until the program ends
for i, spec in enumerate(P["calls"], 1):
    if "leave" in spec:
        for k in range(spec["leave"]):
            s = tlib.connect()
            s.sendall(tlib.frame(request_bytes(dict(spec, id=spec.get("id", "r%d-%d" % (i, k))), i)))
            left.append(s)
        continue
    if "countClosedIdle" in spec:
        done.append({"name": spec.get("name", "call%d" % i),
                     "closedIdle": sum(1 for s in idle if tlib.closed_by_peer(s, 0.1))})
        tlib.report(calls=done, executionId=os.environ.get("CORDON_EXECUTION_ID"))
        continue
    if "idle" in spec or "closeIdle" in spec:
        idle += [tlib.connect() for _ in range(spec.get("idle", 0))]
        for _ in range(spec.get("closeIdle", 0)):
            idle.pop().close()
        time.sleep(0.3 if spec.get("closeIdle") else spec.get("pause", 0))
        continue
    try:
        out, prev = run(spec, i, prev)
    except OSError as e:
        out = {"answer": {"noAnswer": "%s: %s" % (type(e).__name__, e)}}
    out["name"] = spec.get("name", "call%d" % i)
    done.append(out)
    # after each call: the partial results survive a run that is killed
    tlib.report(calls=done, executionId=os.environ.get("CORDON_EXECUTION_ID"))
tlib.report(calls=done, executionId=os.environ.get("CORDON_EXECUTION_ID"))
# hold: stay alive (at most that many seconds) until the runner removes
# /workspace/logs/executor/hold (through /proc/<pid>/root: the workspace
# is the sandbox's own tmpfs), so it can look at the host while the run
# still lives
if P.get("hold"):
    open("/workspace/logs/executor/hold", "w").close()
end = time.monotonic() + P.get("hold", 0)
while time.monotonic() < end and os.path.exists("/workspace/logs/executor/hold"):
    time.sleep(0.05)
