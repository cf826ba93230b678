# SPDX-License-Identifier: Apache-2.0
"""json and csv round trips through files in /tmp and the working directory."""
import csv
import json
import os
import tempfile

rows = [{"id": i, "name": "item%d" % i, "price": i * 1.5} for i in range(200)]

with tempfile.TemporaryDirectory() as d:
    path = os.path.join(d, "items.csv")
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["id", "name", "price"])
        w.writeheader()
        w.writerows(rows)
    with open(path, newline="") as f:
        back = list(csv.DictReader(f))
    assert len(back) == 200 and back[3]["name"] == "item3"

    jpath = os.path.join(d, "items.json")
    with open(jpath, "w") as f:
        json.dump(rows, f)
    with open(jpath) as f:
        assert json.load(f) == rows

text = json.dumps({"rows": rows[:3], "nested": {"a": [1, 2, None, True]}}, sort_keys=True, indent=2)
assert json.loads(text)["nested"]["a"][3] is True

with open("result.json", "w") as f:
    json.dump({"total": sum(r["price"] for r in rows)}, f)
with open("result.json") as f:
    assert json.load(f)["total"] == sum(i * 1.5 for i in range(200))

print("ok json_csv")
