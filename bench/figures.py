# SPDX-License-Identifier: Apache-2.0
"""figures.py - the Python benches' machine-readable figures (make bench).

The same record bench/figure.h writes for the C benches: one JSON line per
figure, appended to the file named by BENCH_FIGURES, which bench/report.py
gathers into one table, results.json and a chart (docs/bench.md).  A figure
is cordon's samples beside a peer's samples measured in the same run; its
ratio is cordon's median over the peer's.  Without BENCH_FIGURES nothing is
written, so a bench run by hand prints only its text.

note() records a line the report shows under its table (a peer skipped and
why, a noisy machine): what a reader of results.json needs to trust it.
"""
import json
import os
import statistics

QUICK = os.environ.get("BENCH_QUICK") == "1"


def runs(var, full, quick):
    """An int from the environment variable var, else full (quick under
    BENCH_QUICK=1): an explicit setting wins over the mode."""
    return int(os.environ.get(var, str(quick if QUICK else full)))


def _append(rec):
    path = os.environ.get("BENCH_FIGURES")
    if not path:
        return
    # One write of the whole line on an O_APPEND file: lines never interleave.
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        os.write(fd, (json.dumps(rec, sort_keys=True) + "\n").encode())
    finally:
        os.close(fd)


def emit(name, unit, samples, peer, peer_samples, better="lower"):
    """One figure; samples and peer_samples are one number per run."""
    if better not in ("lower", "higher"):
        raise ValueError("better must be lower or higher, not %r" % better)
    if not samples or not peer_samples:
        raise ValueError("figure %s: no samples" % name)
    med, pmed = statistics.median(samples), statistics.median(peer_samples)
    _append({"kind": "figure", "name": name, "unit": unit, "better": better, "median": med,
             "min": min(samples), "max": max(samples), "n": len(samples), "peer": peer,
             "peer_median": pmed, "peer_n": len(peer_samples), "ratio": med / pmed if pmed else None})


def note(text):
    _append({"kind": "note", "text": text})
