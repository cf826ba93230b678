# SPDX-License-Identifier: Apache-2.0
# The café problem, as a model would write it: three receipts, three unknown
# prices.  Reads receipts.json (given with --input), solves the linear system
# with numpy, asks the governed calc.check tool to check the answer exactly
# on the trusted side, and leaves the answer in /workspace/out for the
# supervisor: result.json (the run's "result") and summary.txt (a declared
# output).
import json

import numpy as np
from cordon_tools import ToolError, tool_call

with open("receipts.json") as f:
    data = json.load(f)

items = data["items"]
rows = [[float(r["bought"].get(i, 0)) for i in items] for r in data["receipts"]]
paid = [float(r["paid"]) for r in data["receipts"]]
prices = np.linalg.solve(np.array(rows), np.array(paid))
solution = {item: round(float(p), 2) for item, p in zip(items, prices)}

# The check is a governed call: the supervisor decides whether this run
# may make it (agent, roles, budget) and runs the tool outside the sandbox.
# Without a tool (no --agent, say) the answer still stands, unchecked.
try:
    check = tool_call("calc.check", {
        "unknowns": items,
        "equations": [{"coefficients": r, "equals": p} for r, p in zip(rows, paid)],
        "solution": [{"name": i, "value": v} for i, v in solution.items()],
    })
except ToolError as e:
    check = {"error": e.code, "check": e.check, "message": str(e)}

with open("/workspace/out/result.json", "w") as f:
    json.dump({"solution": solution, "check": check}, f)
with open("/workspace/out/summary.txt", "w") as f:
    for item, price in solution.items():
        f.write(f"{item}: {price:.2f}\n")
print("prices:", solution)
print("checked by calc.check:", check)
