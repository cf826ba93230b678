# SPDX-License-Identifier: Apache-2.0
# makes the governed tool calls listed in the input calls.json (message
# ids, some repeating an id already used) and prints every answer, so the
# driver can tell a first execution (a new nonce) from a replay (the nonce
# recorded first); a refused call is printed as its error code and goes on
import json
import cordon_tools
with open("calls.json") as f:
    mids = json.load(f)
answers = []
for mid in mids:
    try:
        answers.append(cordon_tools.tool_call("soak.effect", {}, message_id=mid))
    except cordon_tools.ToolError as e:
        answers.append({"error": e.code, "check": e.check, "message": e.message})
print(json.dumps(answers))
