#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""An agent loop's one turn against `cordon serve`, without a model.

1. Ask the server what the agent's programs can do (capabilities): the
   sandbox's description and the governed tools as JSON Schema.
2. Build a chat-completions style request body: the description in the
   system message, a run_python function, and each governed tool as a
   function definition.  (Printed with --show-request; it is what a real
   model endpoint would be sent.)
3. Instead of sending it, read a RECORDED model answer
   (recorded_answer.json: no network), take its tool calls, and run each
   through Client.execute in a fresh sandbox: run_python's code as is; a
   direct call of a governed tool as a two-line program that calls it, so
   the policy decides it as it decides any call from a program.
4. Print each result and the "tool" message that would go back to the model.

    examples/serve/chat_tools.py --socket /run/cordon/serve.sock
    examples/serve/chat_tools.py --url http://127.0.0.1:8080 --token-file token.txt
"""
import argparse
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.join(HERE, "..", "..")
try:
    import cordon_client  # installed: pip install clients/python
except ImportError:  # run from the checkout
    sys.path.insert(0, os.path.join(REPO, "clients", "python"))
    import cordon_client
from cordon_client import Client, CordonError, chat_tools  # noqa: E402

RUN_PYTHON = {
    "type": "function",
    "function": {
        "name": "run_python",
        "description": "Run one Python program, start to end, in a fresh sandbox described in the system "
                       "message. Its stdout, stderr and /workspace/out/result.json come back to you.",
        "parameters": {
            "type": "object",
            "properties": {"code": {"type": "string", "description": "The whole program."}},
            "required": ["code"],
            "additionalProperties": False,
        },
    },
}

QUESTION = ("Three receipts from a cafe are in receipts.json (items bought and the total paid). What does "
            "each item cost? Check the answer with the calc tools, and leave a summary.")

# Who asks: the request context, as the platform (never the model) sets it.
CONTEXT = {"tenant": "demo", "project": "cafe", "user": "ana", "session": "demo-1", "roles": ["analyst"],
           "tools": ["calc.check", "calc.solve"], "accounting": {"costCentre": "demo"}}


def build_request(caps, question, model):
    """The chat-completions body a model endpoint would get."""
    system = ("Answer by writing one Python program and calling run_python with it. The program runs in the "
              "sandbox below; inside it, the tools listed are reached with `import tools`. The tools are "
              "also listed as functions for their parameters' schemas.\n\n" + caps["description"])
    return {
        "model": model,
        "messages": [{"role": "system", "content": system}, {"role": "user", "content": question}],
        "tools": [RUN_PYTHON] + chat_tools(caps),
        "tool_choice": "auto",
    }


def program_for(call, caps):
    """The program a tool call stands for, or None when it names no tool."""
    fn = call["function"]
    args = json.loads(fn["arguments"] or "{}")
    if fn["name"] == "run_python":
        return args["code"]
    ids = {t["name"]: t["id"] for t in caps["tools"]}
    if fn["name"] not in ids:
        return None
    # A direct call still goes through the sandbox and the bridge: the
    # policy (roles, constraints, budgets) decides it there.
    return ("import json, tools\nanswer = tools.%s(**json.loads(%r))\n"
            "json.dump(answer, open('/workspace/out/result.json', 'w'))\n" % (ids[fn["name"]], json.dumps(args)))


def tool_message(call, r):
    """What goes back to the model: the parts of the result it can use."""
    keep = {k: r.get(k) for k in ("status", "stdout", "stderr", "result", "error")}
    keep["toolCalls"] = [{k: c.get(k) for k in ("tool", "decision", "code")} for c in r.tool_calls]
    keep["artifacts"] = [a.path for a in r.artifacts]
    return {"role": "tool", "tool_call_id": call["id"], "content": json.dumps(keep)}


def request_id(call_id):
    # The tool call's id doubles as the cancel handle: same alphabet.
    return re.sub(r"[^A-Za-z0-9._-]", "-", call_id)[:64] or None


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    where = ap.add_mutually_exclusive_group()
    where.add_argument("--socket", default="/run/cordon/serve.sock", help="cordon serve's Unix socket")
    where.add_argument("--url", help="cordon serve's TCP listener, http://HOST:PORT")
    ap.add_argument("--token-file", help="the bearer token (TCP), one line")
    ap.add_argument("--app", default="cafe")
    ap.add_argument("--agent", default="analyst")
    ap.add_argument("--answer", default=os.path.join(HERE, "recorded_answer.json"),
                    help="the recorded model answer (chat-completions JSON)")
    ap.add_argument("--input", action="append", help="a file for the program (default: the cafe receipts)")
    ap.add_argument("--show-request", action="store_true", help="print the whole request body")
    a = ap.parse_args(argv)

    token = None
    if a.token_file:
        with open(a.token_file) as f:
            token = f.read().strip()
    client = Client(a.url or a.socket, token=token, timeout=300)
    inputs = {}
    for path in a.input or [os.path.join(REPO, "examples", "cafe", "receipts.json")]:
        with open(path, "rb") as f:
            inputs[os.path.basename(path)] = f.read()

    try:
        caps = client.capabilities(a.app, a.agent)
    except CordonError as e:
        print("capabilities: %s" % e, file=sys.stderr)
        return 1
    body = build_request(caps, QUESTION, "any-chat-model")
    print("== request body for the model: %d messages, tools %s (system message %d characters)"
          % (len(body["messages"]), ", ".join(t["function"]["name"] for t in body["tools"]),
             len(body["messages"][0]["content"])))
    if a.show_request:
        print(json.dumps(body, indent=2))

    with open(a.answer) as f:
        answer = json.load(f)
    message = answer["choices"][0]["message"]
    print("== recorded answer %s: %d tool call(s)" % (answer.get("id"), len(message.get("tool_calls") or [])))
    rc = 0
    for call in message.get("tool_calls") or []:
        code = program_for(call, caps)
        if code is None:
            print("== %s: no such tool, not run" % call["function"]["name"])
            rc = 1
            continue
        print("== %s %s: executing %d lines in a fresh sandbox" % (call["id"], call["function"]["name"],
                                                                   code.count("\n") + 1))
        try:
            r = client.execute(a.app, code, agent=a.agent, inputs=inputs, context=CONTEXT,
                               request_id=request_id(call["id"]))
        except CordonError as e:
            print("   refused: %s" % e)
            rc = 1
            continue
        print("   status %s, exit %s, %d ms" % (r.status, r.exit_code, r.get("durationMs", 0)))
        for line in r.stdout.splitlines():
            print("   stdout: " + line)
        for line in r.stderr.splitlines()[-5:]:
            print("   stderr: " + line)
        print("   result: " + json.dumps(r.result))
        for c in r.tool_calls:
            print("   tool call: %s %s (%s)" % (c.get("tool"), c.get("decision"), c.get("code") or c.get("check")))
        for art in r.artifacts:
            print("   artifact %s, %d bytes%s: %r" % (art.path, art.size, " (inline)" if art.inline else "",
                                                   art.content[:60]))
        if r.error:
            print("   error: %s: %s" % (r.error["code"], r.error["message"]))
        print("== back to the model: " + json.dumps(tool_message(call, r))[:300])
        if not r.succeeded:
            rc = 1
    return rc


if __name__ == "__main__":
    sys.exit(main())
