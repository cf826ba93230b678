# SPDX-License-Identifier: Apache-2.0
"""test_report.py - the report's own logic, before make bench spends its
fifteen minutes: the figure records of both writers (bench/figure.h,
bench/figures.py), the direction-aware comparison with a baseline, and one
whole report of a fake bench with BENCH_STRICT.  No timing is asserted:
every figure here is made up.

  /usr/bin/python3 bench/test_report.py      (make bench runs it first)
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import figures  # noqa: E402
import report  # noqa: E402


def fig(name, ratio, better="lower", median=None):
    return {"kind": "figure", "name": name, "unit": "ms", "better": better, "median": median or ratio * 10,
            "min": 1, "max": 99, "n": 9, "peer": "p", "peer_median": 10, "peer_n": 9, "ratio": ratio}


class Records(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="cordon-test-report.")
        self.path = os.path.join(self.tmp, "f.jsonl")
        os.environ["BENCH_FIGURES"] = self.path

    def tearDown(self):
        del os.environ["BENCH_FIGURES"]
        shutil.rmtree(self.tmp)

    def test_python_figure(self):
        figures.emit("x.rate", "/s", [4, 1, 3, 2], "peer", [2, 2, 2], better="higher")
        figures.note("a note")
        recs = report.read_records(self.path)
        self.assertEqual(len(recs), 2)
        f = recs[0]
        self.assertEqual((f["median"], f["min"], f["max"], f["n"], f["peer_median"], f["peer_n"]),
                         (2.5, 1, 4, 4, 2, 3))
        self.assertEqual((f["ratio"], f["better"]), (1.25, "higher"))
        self.assertEqual(recs[1], {"kind": "note", "text": "a note"})

    def test_python_refuses(self):
        with self.assertRaises(ValueError):
            figures.emit("x", "ms", [1], "p", [1], better="up")
        with self.assertRaises(ValueError):
            figures.emit("x", "ms", [], "p", [1])

    def test_c_figure(self):
        """figure.h writes the record figures.py writes, and refuses a name
        JSON would need escaped."""
        cc = shutil.which(os.environ.get("CC", "cc"))
        if cc is None:
            self.skipTest("no C compiler")
        prog = os.path.join(self.tmp, "t.c")
        with open(prog, "w") as f:
            f.write('#include "bench/figure.h"\n'
                    "int main(int argc, char **argv)\n{\n"
                    "\tstatic const double v[] = { 3, 1, 2, 10 }, p[] = { 5 };\n"
                    "\tconst struct figure f[] = { { argc > 1 ? argv[1] : \"c.fig\", \"us\", 0, v, 4, \"peer\", p, 1 },\n"
                    "\t\t{ \"c.rate\", \"/s\", 1, p, 1, \"peer\", v, 4 } };\n"
                    "\treturn (int)figure_emit_all(f, 2);\n}\n")
        exe = os.path.join(self.tmp, "t")
        subprocess.run([cc, "-std=c11", "-D_GNU_SOURCE", "-Wall", "-Wextra", "-Werror", "-I", os.path.dirname(HERE),
                        "-o", exe, prog], check=True)
        self.assertEqual(subprocess.run([exe]).returncode, 0)
        a, b = report.read_records(self.path)
        self.assertEqual((a["name"], a["median"], a["min"], a["max"], a["n"], a["ratio"], a["better"]),
                         ("c.fig", 2.5, 1, 10, 4, 0.5, "lower"))
        self.assertEqual((b["median"], b["peer_median"], b["ratio"], b["better"]), (5, 2.5, 2, "higher"))
        self.assertEqual(subprocess.run([exe, 'bad"name']).returncode, 1)
        self.assertEqual(len(report.read_records(self.path)), 3)

    def test_bad_line(self):
        with open(self.path, "w") as f:
            f.write('{"kind":"figure"}\nnot json\n')
        with self.assertRaises(report.ReportError):
            report.read_records(self.path)


class Compare(unittest.TestCase):
    def test_direction(self):
        base = {"figures": [fig("lo", 2.0), fig("hi", 2.0, "higher"), fig("gone", 1.0), fig("lo_ok", 2.0)]}
        now = [fig("lo", 2.3), fig("hi", 1.7, "higher"), fig("new", 1.0), fig("lo_ok", 1.5)]
        changes, gone = report.compare(now, base, 0.10)
        st = {c["name"]: c["status"] for c in changes}
        self.assertEqual(st, {"lo": "regression", "hi": "regression", "new": "new", "lo_ok": "ok"})
        self.assertEqual(gone, ["gone"])
        self.assertAlmostEqual(changes[0]["ratio_change"], 0.15)

    def test_better_is_not_a_regression(self):
        base = {"figures": [fig("lo", 2.0), fig("hi", 2.0, "higher")]}
        changes, _ = report.compare([fig("lo", 1.0), fig("hi", 4.0, "higher")], base, 0.10)
        self.assertEqual([c["status"] for c in changes], ["ok", "ok"])

    def test_threshold(self):
        base = {"figures": [fig("lo", 2.0)]}
        self.assertEqual(report.compare([fig("lo", 2.15)], base, 0.10)[0][0]["status"], "ok")
        self.assertEqual(report.compare([fig("lo", 2.15)], base, 0.05)[0][0]["status"], "regression")
        self.assertEqual(report.threshold_from("10%"), 0.10)
        self.assertEqual(report.threshold_from("2.5"), 0.025)
        for bad in ("ten", "-5", ""):
            with self.assertRaises(report.ReportError):
                report.threshold_from(bad)


FAKE_BENCH = """#!/bin/sh
printf '%%s\\n' '{"kind":"figure","name":"fake.op","unit":"us","better":"lower","median":%(m)s,"min":1,"max":9,\
"n":5,"peer":"floor","peer_median":10,"peer_n":5,"ratio":%(r)s}' >>"$BENCH_FIGURES"
printf '%%s\\n' '{"kind":"note","text":"fake note"}' >>"$BENCH_FIGURES"
exit %(rc)d
"""


class WholeReport(unittest.TestCase):
    """report() over a build directory holding one fake bench."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="cordon-test-report.")
        self.build = os.path.join(self.tmp, "build")
        os.makedirs(os.path.join(self.build, "bench"))
        self.out = os.path.join(self.tmp, "out")
        self.env = dict(os.environ, BENCH_ONLY="bench_fake", BENCH_OUT=self.out)
        for k in ("BENCH_BASELINE", "BENCH_STRICT", "BENCH_THRESHOLD", "BENCH_FIGURES", "BENCH_QUICK"):
            self.env.pop(k, None)

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def run_report(self, ratio, rc=0, **env):
        b = os.path.join(self.build, "bench", "bench_fake")
        with open(b, "w") as f:
            f.write(FAKE_BENCH % {"m": ratio * 10, "r": ratio, "rc": rc})
        os.chmod(b, 0o755)
        return subprocess.run([sys.executable, os.path.join(HERE, "report.py"), self.build,
                               os.path.dirname(HERE)], env=dict(self.env, **env), capture_output=True, text=True)

    def test_report_and_strict(self):
        r = self.run_report(2.0)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(self.out, "results.json")) as f:
            doc = json.load(f)
        self.assertEqual([f["name"] for f in doc["figures"]], ["fake.op"])
        self.assertEqual(doc["notes"][:1], ["fake note"])
        with open(os.path.join(self.out, "results.txt")) as f:
            self.assertIn("fake.op", f.read())
        self.assertEqual(os.path.exists(os.path.join(self.out, "results.svg")), shutil.which("gnuplot") is not None)
        for k in ("cpu", "kernel", "debian", "cordon", "commit", "compiler", "python", "packages"):
            self.assertIn(k, doc["machine"])

        # The baseline may be the file about to be overwritten: it is read
        # before the run.
        base = os.path.join(self.tmp, "base.json")
        shutil.copy(os.path.join(self.out, "results.json"), base)
        r = self.run_report(2.5, BENCH_BASELINE=os.path.join(self.out, "results.json"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("REGRESSION", r.stdout)
        r = self.run_report(2.5, BENCH_BASELINE=base, BENCH_STRICT="1")
        self.assertEqual(r.returncode, 1)
        r = self.run_report(2.5, BENCH_BASELINE=base, BENCH_STRICT="1", BENCH_THRESHOLD="30")
        self.assertEqual(r.returncode, 0, r.stdout)
        self.assertNotIn("REGRESSION", r.stdout)

    def test_failed_bench(self):
        r = self.run_report(1.0, rc=3)
        self.assertEqual(r.returncode, 1)
        self.assertIn("FAILED: bench_fake exited 3", r.stdout)

    def test_bad_baseline(self):
        r = self.run_report(1.0, BENCH_BASELINE=os.path.join(self.tmp, "none.json"))
        self.assertEqual(r.returncode, 2)
        self.assertFalse(os.path.exists(os.path.join(self.out, "results.json")))


if __name__ == "__main__":
    unittest.main()
