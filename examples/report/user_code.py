# SPDX-License-Identifier: Apache-2.0
# A sales report, as a model would write it: read the CSV given as input,
# total units and revenue by region (in Decimal, so cents stay exact),
# write the table as the declared artifact files/report.csv and the totals
# as result.json.
import csv
import json
import os
from collections import defaultdict
from decimal import Decimal

units = defaultdict(int)
revenue = defaultdict(Decimal)
rows = 0
with open("/workspace/work/sales.csv", newline="") as f:
    for row in csv.DictReader(f):
        n = int(row["units"])
        units[row["region"]] += n
        revenue[row["region"]] += n * Decimal(row["unit_price"])
        rows += 1

os.makedirs("/workspace/out/files", exist_ok=True)
with open("/workspace/out/files/report.csv", "w", newline="") as f:
    w = csv.writer(f, lineterminator="\n")
    w.writerow(["region", "units", "revenue"])
    for region in sorted(units):
        w.writerow([region, units[region], f"{revenue[region]:.2f}"])
    w.writerow(["total", sum(units.values()), f"{sum(revenue.values()):.2f}"])

result = {
    "rows": rows,
    "regions": len(units),
    "totalUnits": sum(units.values()),
    "totalRevenue": f"{sum(revenue.values()):.2f}",
    "byRegion": {r: {"units": units[r], "revenue": f"{revenue[r]:.2f}"} for r in sorted(units)},
}
with open("/workspace/out/result.json", "w") as f:
    json.dump(result, f)
print(f"{rows} rows, {len(units)} regions, revenue {result['totalRevenue']}")
