# SPDX-License-Identifier: Apache-2.0
# inside.py - runs CPython regression-test modules through regrtest (each
# module in a worker process with a timeout, as `python3 -m test` does) and
# writes one JSON object per module: every test id with its outcome, from
# regrtest's JUnit XML.  The same file runs bare (the reference) and inside
# cordon (tests/compat/run.py); run.py prepends MODULES = [...] and
# OUT = "...".
import json
import os
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET

try:
    MODULES  # noqa: F821 - set by run.py
except NameError:
    MODULES = sys.argv[1:-1]
    OUT = sys.argv[-1]
    IGNORE = []
    MATCH = []

# A module that hangs is stopped by regrtest's worker timeout and counts
# as failed, bare or inside, instead of hanging the measurement.
TIMEOUT_S = 600


def run_module(name, work):
    t0 = time.monotonic()
    xml = os.path.join(work, name + ".xml")
    # regrtest's defaults: no optional resources (-u none: the network,
    # a lot of CPU or memory, the audio device), one worker process (-j1)
    # so the timeout can end it.
    ign = [a for pat in IGNORE for a in ("-i", pat)]  # noqa: F821 - set by run.py
    if MATCH:  # noqa: F821 - set by run.py: only these test ids
        with open(os.path.join(work, name + ".match"), "w") as f:
            f.write("".join(t + "\n" for t in MATCH))  # noqa: F821
        ign += ["--matchfile", os.path.join(work, name + ".match")]
    p = subprocess.run([sys.executable, "-I", "-m", "test", "-j1", "--timeout", str(TIMEOUT_S), "--junit-xml", xml]
                       + ign + [name], cwd=work, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    out, why = {}, {}
    try:
        root = ET.parse(xml).getroot()
    except (OSError, ET.ParseError) as e:
        out["test." + name + ".<run>"] = "error"
        why["test." + name + ".<run>"] = "no JUnit XML (%s): %s" % (e, p.stdout[-300:].decode(errors="replace"))
        root = None
    for tc in root.iter("testcase") if root is not None else ():
        tid = tc.get("name")
        kids = {c.tag: c for c in tc}
        if "skipped" in kids:
            out[tid] = "skip"
            why[tid] = (kids["skipped"].get("message") or kids["skipped"].text or "")[:300]
        elif "failure" in kids or "error" in kids:
            k = kids.get("failure", kids.get("error"))
            out[tid] = "fail" if "failure" in kids else "error"
            why[tid] = (k.get("message") or k.text or "")[-300:]
        else:
            out[tid] = "pass"
    return {"module": name, "seconds": round(time.monotonic() - t0, 2), "exit": p.returncode, "tests": out,
            "why": why}


def main():
    res = []
    with tempfile.TemporaryDirectory() as work:
        for m in MODULES:
            res.append(run_module(m, work))
            with open(OUT + ".tmp", "w") as f:
                json.dump(res, f)
            os.replace(OUT + ".tmp", OUT)


if __name__ == "__main__":
    main()
