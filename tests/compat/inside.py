# inside.py - runs CPython regression-test modules with unittest and writes
# one JSON object per module: every test id with its outcome.  The same
# file runs bare (the reference) and inside cordon (tests/compat/run.py);
# it is the program, the module names come first in it (run.py prepends
# MODULES = [...] and OUT = "...").
import io
import json
import os
import sys
import time
import traceback
import unittest

try:
    MODULES  # noqa: F821 - set by run.py
except NameError:
    MODULES = sys.argv[1:-1]
    OUT = sys.argv[-1]

import test.support
# As regrtest does by default (-u none): tests that need a resource (the
# network, a lot of CPU or memory, the audio device) skip, bare and inside.
test.support.use_resources = []
test.support.verbose = 0
test.support.failfast = False


class Record(unittest.TestResult):
    """Outcome by test id; a failing subtest fails its test."""

    def __init__(self):
        super().__init__()
        self.out = {}
        self.why = {}

    def _set(self, test, outcome, err=None):
        tid = test.id()
        if self.out.get(tid) in ("fail", "error") and outcome == "pass":
            return
        self.out[tid] = outcome
        if err is not None:
            self.why[tid] = "".join(traceback.format_exception_only(err[0], err[1])).strip()[-300:]

    def addSuccess(self, test):
        self._set(test, "pass")

    def addFailure(self, test, err):
        self._set(test, "fail", err)

    def addError(self, test, err):
        # setUpClass and module fixtures fail as a _ErrorHolder: no id
        # of a real test, so they are kept under their description.
        self._set(test, "error", err)

    def addSkip(self, test, reason):
        self.out[test.id()] = "skip"
        self.why[test.id()] = str(reason)[:300]

    def addExpectedFailure(self, test, err):
        self._set(test, "pass")

    def addUnexpectedSuccess(self, test):
        self._set(test, "fail")

    def addSubTest(self, test, subtest, err):
        if err is not None:
            self._set(test, "fail" if issubclass(err[0], test.failureException) else "error", err)


def run_module(name):
    t0 = time.monotonic()
    rec = Record()
    try:
        suite = unittest.defaultTestLoader.loadTestsFromName("test." + name)
        # Quiet: the suites print to stdout and stderr; the figure is in
        # the record, the noise would only fill the run's output limit.
        saved = sys.stdout, sys.stderr
        sys.stdout = sys.stderr = io.StringIO()
        try:
            suite.run(rec)
        finally:
            sys.stdout, sys.stderr = saved
    except BaseException as e:  # noqa: BLE001 - an import failure is the module's outcome
        rec.out["test." + name + ".<import>"] = "error"
        rec.why["test." + name + ".<import>"] = repr(e)[:300]
    return {"module": name, "seconds": round(time.monotonic() - t0, 2), "tests": rec.out, "why": rec.why}


def main():
    res = []
    for m in MODULES:
        res.append(run_module(m))
        with open(OUT + ".tmp", "w") as f:
            json.dump(res, f)
        os.replace(OUT + ".tmp", OUT)


main()
