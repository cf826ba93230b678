#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""A notebook-style conversation run as a code-interpreter session of
`cordon serve` (docs/serve.md, "Sessions"), without a model: the cells a
model would write, one after another, against the same variables.

1. load the orders (orders.csv, the session's input) with csv;
2. transform: the unit prices from the orders, with numpy (least squares);
3. plot the revenue per day, when matplotlib is installed (revenue.png,
   an artifact of the cell; the figure, left open, comes back as an
   image/png display of the cell);
4. a cell with a mistake: it raises, and the session goes on;
5. check the prices with the governed tool calc.check (the café's), which
   runs on the trusted side;
6. the summary, from everything the cells before left behind.

    examples/notebook/notebook.py --socket /run/cordon/serve.sock
    examples/notebook/notebook.py --url http://127.0.0.1:8080 --token-file token.txt

Exit 0 when every cell did what the conversation needs (state kept, the
tool call allowed and ok), 1 otherwise.
"""
import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
try:
    import cordon_client  # installed: pip install clients/python
except ImportError:  # run from the checkout
    sys.path.insert(0, os.path.join(HERE, "..", "..", "clients", "python"))
    import cordon_client
from cordon_client import Client  # noqa: E402

# Who asks: the platform sets it, never the model.  The session belongs to
# this tenant and user (and the caller's token).
CONTEXT = {"tenant": "demo", "project": "cafe", "user": "ana", "session": "notebook-1", "roles": ["analyst"],
           "tools": ["calc.check"]}

CELLS = [
    ("Load the orders", """
import csv
rows = list(csv.DictReader(open('orders.csv')))
print(len(rows), 'orders:', ', '.join(r['day'] for r in rows))
"""),
    ("Transform: the unit prices", """
import numpy as np
A = np.array([[int(r['coffee']), int(r['cake'])] for r in rows], dtype=float)
b = np.array([float(r['total']) for r in rows])
prices, *_ = np.linalg.lstsq(A, b, rcond=None)
prices = {name: round(float(p), 2) for name, p in zip(['coffee', 'cake'], prices)}
prices
"""),
    ("Plot the revenue per day", """
try:
    import matplotlib.pyplot as plt
except (ImportError, RuntimeError) as e:  # not installed, or its rc file not mounted
    print('no plot here:', e)
else:
    fig, ax = plt.subplots(figsize=(4, 2.5))
    ax.bar([r['day'] for r in rows], b)
    ax.set_ylabel('revenue')
    fig.tight_layout()
    fig.savefig('/workspace/out/revenue.png')
    print('plotted', len(rows), 'days into revenue.png')
"""),
    ("A mistake (the session goes on)", """
print(price['coffee'])
"""),
    ("Check the prices with the governed tool", """
import tools
check = tools.calc.check(
    unknowns=['coffee', 'cake'],
    equations=[{'coefficients': [float(x) for x in A[i]], 'equals': float(b[i])} for i in range(2)],
    solution=[{'name': k, 'value': v} for k, v in prices.items()])
check['ok']
"""),
    ("Summary", """
best = max(rows, key=lambda r: float(r['total']))
print('coffee %.2f, cake %.2f; best day %s (%s); checked: %s' % (
    prices['coffee'], prices['cake'], best['day'], best['total'], check['ok']))
"""),
]


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--socket", help="cordon serve's Unix socket")
    ap.add_argument("--url", help="cordon serve's TCP URL (http://host:port)")
    ap.add_argument("--token-file", help="a file holding the bearer token (TCP)")
    ap.add_argument("--app", default="notebook")
    ap.add_argument("--agent", default="analyst")
    a = ap.parse_args(argv[1:])
    if bool(a.socket) == bool(a.url):
        ap.error("give --socket or --url")
    token = open(a.token_file).read().strip() if a.token_file else None
    c = Client(a.socket or a.url, token=token, timeout=120)
    with open(os.path.join(HERE, "orders.csv")) as f:
        orders = f.read()
    results = []
    with c.session(a.app, a.agent, inputs={"orders.csv": orders}, context=CONTEXT) as s:
        print("session %s (execution %s), limits %s" % (s.id, s.execution_id, s.info["limits"]))
        for n, (title, code) in enumerate(CELLS, 1):
            r = s.run(code.strip() + "\n")
            results.append(r)
            print("\n[%d] %s\n%s" % (n, title, "\n".join(">>> " + ln for ln in code.strip().splitlines())))
            if r.stdout:
                print(r.stdout.rstrip())
            if r.stderr:
                print(r.stderr.rstrip().splitlines()[-1])
            extra = ["%s %d bytes" % (x.path, x.size) for x in r.artifacts]
            extra += ["%s: %s" % (t["tool"], t["decision"]) for t in r.tool_calls]
            extra += ["display %s" % "+".join(sorted(d.get("data", {}))) for d in r.displays]
            print("-- %s, %d ms cpu%s" % (r.status, r.usage.get("cpuMs", 0), "; " + ", ".join(extra) if extra else ""))
        info = s.refresh()
    print("\nsession: %d cells, %d ms CPU, %d bytes in its workspace" % (info["cells"], info["cpuMs"],
                                                                         info["workspaceBytes"]))
    bad = []
    if [r.status for r in results] != ["succeeded", "succeeded", "succeeded", "failed", "succeeded", "succeeded"]:
        bad.append("statuses: %s" % [r.status for r in results])
    if "coffee': 2.5" not in results[1].stdout or "cake': 3.0" not in results[1].stdout:
        bad.append("cell 2 did not show the prices: %r" % results[1].stdout)
    calls = results[4].tool_calls
    if not calls or calls[0]["tool"] != "calc.check" or calls[0]["decision"] != "allowed" or \
            results[4].stdout != "True\n":
        bad.append("the governed call: %r, %r" % (calls, results[4].stdout))
    if "plotted" in results[2].stdout and not any("image/png" in d.get("data", {}) for d in results[2].displays):
        bad.append("cell 3 plotted but its figure is not among its displays: %r" % results[2].displays)
    if "NameError" not in results[3].stderr:
        bad.append("cell 4 should raise NameError: %r" % results[3].stderr)
    for b in bad:
        print("notebook: FAIL " + b, file=sys.stderr)
    if not bad:
        print("notebook: every cell saw the ones before it; calc.check was allowed and answered ok")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
