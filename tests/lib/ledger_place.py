# SPDX-License-Identifier: Apache-2.0
"""ledger_place.py - the ledger several cordon serve replicas share in a
test or a bench (tests/fleet/run.py, bench/bench_fleet.py): a SQLite
--state-dir, or a private PostgreSQL that tests/lib/pgtmp starts."""
import os
import subprocess

PGTMP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "pgtmp")


class LedgerPlace:
    """kind "sqlite": args name the state directory DIR; "postgresql": a
    server made in DIR (pgtmp's server user must traverse every directory
    above it), args its URL.  RuntimeError when the server does not
    start."""

    def __init__(self, kind, d):
        self.kind, self.pgdir = kind, None
        if kind == "sqlite":
            self.args = ["--state-dir", d]
            return
        p = subprocess.run(["sh", PGTMP, "start", d], capture_output=True, text=True)
        if p.returncode != 0:
            raise RuntimeError("tests/lib/pgtmp start failed: %s" % p.stderr.strip()[-600:])
        self.pgdir = d
        self.args = ["--ledger", p.stdout.strip()]

    def pg(self, verb):
        """pgtmp VERB (stop, restart) on the server: (ok, its stderr's end)."""
        p = subprocess.run(["sh", PGTMP, verb, self.pgdir], capture_output=True, text=True)
        return p.returncode == 0, p.stderr.strip()[-300:]

    def close(self):
        if self.pgdir:
            self.pg("stop")
