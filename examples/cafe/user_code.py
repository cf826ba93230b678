# The café problem, as a model would write it: three receipts, three unknown
# prices.  Reads receipts.json (given with --input), solves the linear system
# with numpy, and leaves the answer in /workspace/out for the supervisor:
# result.json (the run's "result") and summary.txt (a declared output).
import json

import numpy as np

with open("receipts.json") as f:
    data = json.load(f)

items = data["items"]
a = np.array([[r["bought"].get(i, 0) for i in items] for r in data["receipts"]], dtype=float)
b = np.array([r["paid"] for r in data["receipts"]], dtype=float)
prices = np.linalg.solve(a, b)

solution = {item: round(float(p), 2) for item, p in zip(items, prices)}
with open("/workspace/out/result.json", "w") as f:
    json.dump({"solution": solution}, f)
with open("/workspace/out/summary.txt", "w") as f:
    for item, price in solution.items():
        f.write(f"{item}: {price:.2f}\n")
print("prices:", solution)
