# SPDX-License-Identifier: Apache-2.0
"""report.py - `make bench` as one report (docs/bench.md).

Runs every bench with BENCH_FIGURES pointing at a file of its own, their
text going to bench.log, then prints one table: the machine and versions,
then every figure (a median over many runs, its peer measured in the same
run and the ratio cordon / peer).  Writes results.json, results.txt (the
table) and results.svg (the ratios as bars, gnuplot) beside bench.log.

A bench prints, it does not pass or fail: the exit status is 1 only when a
bench itself failed (cordon could not run) or, under BENCH_STRICT=1, when a
figure regressed against the baseline.

Usage: report.py BUILD_DIR SRC_DIR [CC]
Environment:
  BENCH_QUICK=1        fewer runs (each bench's n is in the table)
  BENCH_BASELINE=FILE  an earlier results.json: each figure's ratio compared
                       by name, a regression over the threshold flagged
  BENCH_THRESHOLD=10   percent, in the figure's bad direction
  BENCH_STRICT=1       a flagged regression makes the exit status 1
  BENCH_OUT=DIR        where the results go (default SRC_DIR/bench)
  BENCH_ONLY=a,b       run only the benches named (bench_blob, bench_run, ...)
"""
import datetime
import glob
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time

PY = "/usr/bin/python3"
SCHEMA = 1
PEER_PACKAGES = ("bubblewrap", "firejail", "crun", "gnuplot-nox", "libyaml-0-2", "libseccomp2", "libsodium23",
                 "libsqlite3-0", "libmicrohttpd12", "libcjson1")


class ReportError(Exception):
    pass


# ---- the machine ------------------------------------------------------------

def first_line(argv, cwd=None):
    """The first line a command prints, or why it printed none."""
    try:
        r = subprocess.run(argv, cwd=cwd, capture_output=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as e:
        return "unavailable (%s)" % e.__class__.__name__
    out = (r.stdout or r.stderr).decode(errors="replace").strip().splitlines()
    return out[0].strip() if r.returncode == 0 and out else "unavailable (exit %d)" % r.returncode


def read_key(path, key, sep=":"):
    try:
        with open(path) as f:
            for ln in f:
                k, s, v = ln.partition(sep)
                if s and k.strip() == key:
                    return v.strip().strip('"')
    except OSError:
        pass
    return "unknown"


def git_commit(src):
    commit = first_line(["git", "-C", src, "rev-parse", "--short=12", "HEAD"])
    dirty = subprocess.run(["git", "-C", src, "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True).stdout.strip()
    return commit + (" + uncommitted changes" if dirty else "")


def package_versions(names):
    out = {}
    for n in names:
        r = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", n], capture_output=True)
        out[n] = r.stdout.decode().strip() if r.returncode == 0 and r.stdout.strip() else "not installed"
    return out


def machine(build, src, cc):
    try:
        debian = open("/etc/debian_version").read().strip()
    except OSError:
        debian = "unknown"
    return {
        "cpu": read_key("/proc/cpuinfo", "model name"),
        "cpus": os.cpu_count(),
        "cpus_usable": len(os.sched_getaffinity(0)),
        "kernel": platform.release(),
        "os": read_key("/etc/os-release", "PRETTY_NAME", "="),
        "debian": debian,
        "cordon": first_line([os.path.join(build, "cordon"), "--version"]),
        "commit": git_commit(src),
        "build": os.path.basename(os.path.normpath(build)),
        "compiler": first_line([cc, "--version"]),
        "python": first_line([PY, "--version"]),
        "packages": package_versions(PEER_PACKAGES),
        "load_start": os.getloadavg()[0],
        "uid": os.geteuid(),
    }


# ---- running the benches ----------------------------------------------------

def bench_list(build, src):
    """(name, argv, extra environment) of every bench, in make bench's order."""
    env = {"CORDON_SRC": src}
    out = [(os.path.basename(b), [b], env) for b in sorted(glob.glob(os.path.join(build, "bench", "bench_*")))
           if os.access(b, os.X_OK) and not b.endswith((".o", ".d"))]
    out.append(("bench_run", ["sh", os.path.join(src, "bench", "bench_run.sh")], {"BUILD": build, "SRC": src}))
    out.append(("bench_serve", [PY, os.path.join(src, "bench", "bench_serve.py"), build, src], {}))
    out.append(("bench_fleet", [PY, os.path.join(src, "bench", "bench_fleet.py"), build, src], {}))
    only = [n for n in os.environ.get("BENCH_ONLY", "").split(",") if n]
    if only:
        unknown = set(only) - {n for n, _, _ in out}
        if unknown:
            raise ReportError("BENCH_ONLY names no bench: %s" % ", ".join(sorted(unknown)))
        out = [b for b in out if b[0] in only]
    return out


def read_records(path):
    """The JSON lines a bench wrote; a line that is not one is an error."""
    recs = []
    if not os.path.exists(path):
        return recs
    with open(path) as f:
        for i, ln in enumerate(f, 1):
            try:
                recs.append(json.loads(ln))
            except ValueError:
                raise ReportError("%s:%d: not a JSON line: %r" % (path, i, ln[:80]))
    return recs


def run_bench(name, argv, extra, tmp, log):
    """Runs one bench, its text appended to log; returns (records, exit
    status, seconds)."""
    figs = os.path.join(tmp, name + ".jsonl")
    env = dict(os.environ, BENCH_FIGURES=figs, **extra)
    log.write("\n==== %s: %s\n" % (name, " ".join(argv)))
    log.flush()
    t0 = time.monotonic()
    rc = subprocess.run(argv, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=log).returncode
    secs = time.monotonic() - t0
    log.write("==== %s: exit %d, %.1f s\n" % (name, rc, secs))
    log.flush()
    recs = read_records(figs)
    for r in recs:
        r["bench"] = name
    return recs, rc, secs


# ---- comparing with a baseline ----------------------------------------------

def threshold_from(text):
    """BENCH_THRESHOLD: a percentage, "10" or "10%"."""
    try:
        v = float(text.strip().rstrip("%"))
    except ValueError:
        raise ReportError("BENCH_THRESHOLD must be a percentage such as 10 or 10%%, not %r" % text)
    if not 0 <= v < 1000:
        raise ReportError("BENCH_THRESHOLD out of range: %r" % text)
    return v / 100


def load_baseline(path):
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        raise ReportError("BENCH_BASELINE %s: %s" % (path, e))
    if not isinstance(doc, dict) or not isinstance(doc.get("figures"), list):
        raise ReportError("BENCH_BASELINE %s: not a results.json (no figures list)" % path)
    return doc


def compare(figs, base, threshold):
    """Each figure beside the baseline's of the same name.  The ratio is
    what is compared: cordon and its peer ran in the same moment, so a
    slower or busier machine moves both and the ratio holds, where the
    median alone would flag the machine.  A change is a regression when
    it goes the figure's bad way by more than threshold (a fraction)."""
    old = {f["name"]: f for f in base.get("figures", []) if f.get("kind", "figure") == "figure"}
    changes = []
    for f in figs:
        o = old.get(f["name"])
        c = {"name": f["name"], "status": "new"}
        if o and o.get("ratio") and f.get("ratio") is not None:
            rc = f["ratio"] / o["ratio"] - 1
            worse = rc > threshold if f["better"] == "lower" else rc < -threshold
            c = {"name": f["name"], "status": "regression" if worse else "ok", "old_ratio": o["ratio"],
                 "ratio_change": rc,
                 "median_change": f["median"] / o["median"] - 1 if o.get("median") else None,
                 "old_n": o.get("n")}
        changes.append(c)
    seen = {f["name"] for f in figs}
    gone = sorted(n for n in old if n not in seen)
    return changes, gone


# ---- the text ---------------------------------------------------------------

def num(v):
    if v is None:
        return "-"
    return "%.0f" % v if abs(v) >= 1000 else "%.1f" % v if abs(v) >= 10 else "%.3g" % v


def pct(v):
    return "-" if v is None else "%+.1f%%" % (100 * v)


def clip(s, n):
    return s if len(s) <= n else s[:n - 1] + "~"


def header_lines(m, quick, started, secs):
    pk = m["packages"]
    peers = ", ".join("%s %s" % (k, pk[k]) for k in ("bubblewrap", "firejail", "crun"))
    libs = ", ".join("%s %s" % (k, v) for k, v in pk.items() if k not in ("bubblewrap", "firejail", "crun"))
    return [
        "cordon bench report, %s, %.0f s, %s" % (started, secs, "QUICK (BENCH_QUICK=1: fewer runs)" if quick
                                                  else "full"),
        "  machine   %s, %d CPUs (%d usable), kernel %s, %s (debian_version %s), load %.2f at start, %.2f at end"
        % (m["cpu"], m["cpus"], m["cpus_usable"], m["kernel"], m["os"], m["debian"], m["load_start"],
           m.get("load_end", 0)),
        "  cordon    %s, git %s, build %s/, %s" % (m["cordon"], m["commit"], m["build"],
                                                   "as root" if m["uid"] == 0 else "uid %d" % m["uid"]),
        "  tools     %s; %s" % (m["compiler"], m["python"]),
        "  peers     %s" % peers,
        "  libraries %s" % libs,
    ]


def table_lines(figs, changes):
    """One row per figure: median of n runs, the peer's median, the ratio;
    with a baseline, the baseline's ratio and the change."""
    cmp = {c["name"]: c for c in changes or []}
    cols = ["figure", "unit", "median", "n", "peer (same run)", "peer med", "ratio", "better"]
    if changes is not None:
        cols += ["base ratio", "change", ""]
    rows = []
    for f in figs:
        r = [f["name"], f["unit"], num(f["median"]), str(f["n"]), clip(f["peer"], 36), num(f["peer_median"]),
             "%.3fx" % f["ratio"] if f.get("ratio") is not None else "-", f["better"]]
        if changes is not None:
            c = cmp.get(f["name"], {"status": "new"})
            flag = {"regression": "REGRESSION", "new": "new"}.get(c["status"], "")
            r += ["%.3fx" % c["old_ratio"] if "old_ratio" in c else "-", pct(c.get("ratio_change")), flag]
        rows.append(r)
    right = {2, 3, 5, 6, 8, 9}
    w = [max(len(x[i]) for x in rows + [cols]) for i in range(len(cols))]
    fmt = lambda r: "  ".join(c.rjust(w[i]) if i in right else c.ljust(w[i]) for i, c in enumerate(r)).rstrip()
    return [fmt(cols), fmt(["-" * x for x in w])] + [fmt(r) for r in rows]


def report_text(doc):
    m = doc["machine"]
    out = header_lines(m, doc["quick"], doc["started"], doc["seconds"])
    out.append("")
    b = doc.get("baseline")
    out += table_lines(doc["figures"], b["changes"] if b else None)
    out.append("")
    out.append("ratio = cordon's median / the peer's median; \"better\" is the direction that is good for cordon's "
               "figure. Medians of n runs; min and max are in results.json.")
    if b:
        regs = [c["name"] for c in b["changes"] if c["status"] == "regression"]
        out.append("baseline %s (%s, commit %s): ratios compared by name, threshold %.0f%%; %s"
                   % (b["path"], b["started"], b["commit"], 100 * b["threshold"],
                      "regressions: " + ", ".join(regs) if regs else "no regression"))
        if b["gone"]:
            out.append("in the baseline, not measured now: " + ", ".join(b["gone"]))
    for f in doc["failed"]:
        out.append("FAILED: %s exited %d (see %s)" % (f["bench"], f["rc"], doc["log"]))
    for n in doc["notes"]:
        out.append("note: " + n)
    out.append("the benches' own text: %s; results: %s" % (doc["log"], doc["results"]))
    return "\n".join(out) + "\n"


# ---- the chart --------------------------------------------------------------

GNUPLOT = r'''
set terminal svg size 960,%(height)d dynamic noenhanced font "sans,11" background "white"
set output %(out)s
set title "cordon bench, %(when)s: cordon's median / its peer's, same run"
set logscale x 10
set xrange [%(xmin)g:%(xmax)g]
set yrange [-0.7:%(top)g]
set xlabel "ratio (log scale; 1.0 = the peer)"
set grid xtics
set style fill solid 0.75 border -1
set key off
set arrow from first 1, graph 0 to first 1, graph 1 nohead lw 2 lc rgb "#222222" dt 2
set datafile separator "\t"
lo(r) = r < 1 ? r : 1
hi(r) = r < 1 ? 1 : r
plot %(data)s using (lo($3)):0:(lo($3)):(hi($3)):($0 - 0.35):($0 + 0.35):($4):ytic(2) \
       with boxxyerror lc rgb variable, \
     %(data)s using (hi($3)):0:5 with labels left offset 0.6,0 font "sans,9"
'''


def chart(doc, out, tmp):
    """results.svg: one bar per figure from 1.0 to its ratio, red for a
    flagged regression, or None; else why there is none."""
    if not shutil.which("gnuplot"):
        return "gnuplot not installed (scripts/install-deps installs gnuplot-nox)"
    figs = [f for f in doc["figures"] if f.get("ratio")]
    if not figs:
        return "no figures"
    regs = {c["name"] for c in (doc.get("baseline") or {}).get("changes", []) if c["status"] == "regression"}
    data = os.path.join(tmp, "chart.tsv")
    # Top to bottom in the table's order: gnuplot counts rows from the bottom.
    with open(data, "w") as f:
        for i, x in enumerate(reversed(figs)):
            colour = 0xCC3311 if x["name"] in regs else (0x4477AA if x["better"] == "lower" else 0x228833)
            f.write("%d\t%s (%s better)\t%.6g\t%d\t%.3gx\n" % (i, x["name"], x["better"], x["ratio"], colour,
                                                               x["ratio"]))
    lo = min(min(f["ratio"] for f in figs), 1.0)
    hi = max(max(f["ratio"] for f in figs), 1.0)
    script = os.path.join(tmp, "chart.gp")
    with open(script, "w") as f:
        f.write(GNUPLOT % {"height": 120 + 22 * len(figs), "out": json.dumps(out), "data": json.dumps(data),
                           "when": doc["started"], "xmin": lo / 1.6, "xmax": hi * 2.5, "top": len(figs) - 0.3})
    r = subprocess.run(["gnuplot", script], capture_output=True)
    if r.returncode != 0:
        return "gnuplot failed: " + r.stderr.decode(errors="replace").strip()[-300:]
    return None


# ---- the whole --------------------------------------------------------------

def write_atomic(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def main():
    if len(sys.argv) not in (3, 4):
        print(__doc__, file=sys.stderr)
        return 2
    build, src = (os.path.abspath(a) for a in sys.argv[1:3])
    cc = sys.argv[3] if len(sys.argv) == 4 else "cc"
    try:
        return report(build, src, cc)
    except ReportError as e:
        print("bench: %s" % e, file=sys.stderr)
        return 2


def report(build, src, cc):
    quick = os.environ.get("BENCH_QUICK") == "1"
    threshold = threshold_from(os.environ.get("BENCH_THRESHOLD", "10"))
    strict = os.environ.get("BENCH_STRICT") == "1"
    # The baseline is read before the runs: a bad path fails now, not after
    # fifteen minutes, and it may be the very results.json about to be
    # overwritten.
    bpath = os.environ.get("BENCH_BASELINE")
    base = load_baseline(bpath) if bpath else None
    out_dir = os.path.abspath(os.environ.get("BENCH_OUT") or os.path.join(src, "bench"))
    os.makedirs(out_dir, exist_ok=True)
    paths = {k: os.path.join(out_dir, v) for k, v in
             (("json", "results.json"), ("txt", "results.txt"), ("svg", "results.svg"), ("log", "bench.log"))}
    benches = bench_list(build, src)
    m = machine(build, src, cc)
    started = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    t0 = time.monotonic()
    figs, notes, failed = [], [], []
    tmp = tempfile.mkdtemp(prefix="cordon-bench-report.")
    try:
        print("bench: %d benches%s, their text in %s" % (len(benches), " (quick)" if quick else "", paths["log"]))
        with open(paths["log"], "w") as log:
            for i, (name, argv, extra) in enumerate(benches, 1):
                print("bench [%d/%d] %s ..." % (i, len(benches), name), end="", flush=True)
                recs, rc, secs = run_bench(name, argv, extra, tmp, log)
                got = [r for r in recs if r.get("kind") == "figure"]
                figs += got
                notes += [r["text"] for r in recs if r.get("kind") == "note"]
                if rc != 0:
                    failed.append({"bench": name, "rc": rc})
                print(" %d figures, %.0f s%s" % (len(got), secs, "" if rc == 0 else ", FAILED (exit %d)" % rc))
        m["load_end"] = os.getloadavg()[0]
        doc = {"schema": SCHEMA, "started": started, "seconds": round(time.monotonic() - t0, 1), "quick": quick,
               "machine": m, "figures": figs, "notes": notes, "failed": failed, "log": paths["log"],
               "results": paths["json"]}
        if base is not None:
            changes, gone = compare(figs, base, threshold)
            doc["baseline"] = {"path": bpath, "started": base.get("started", "?"),
                               "commit": (base.get("machine") or {}).get("commit", "?"), "threshold": threshold,
                               "changes": changes, "gone": gone}
        why = chart(doc, paths["svg"], tmp)
        if why:
            doc["notes"].append("chart not drawn: " + why)
        else:
            doc["chart"] = paths["svg"]
        text = report_text(doc)
        write_atomic(paths["json"], json.dumps(doc, indent=1, sort_keys=True) + "\n")
        write_atomic(paths["txt"], text)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print()
    sys.stdout.write(text)
    if not why:
        print("chart: %s" % paths["svg"])
    regressed = base is not None and any(c["status"] == "regression" for c in doc["baseline"]["changes"])
    if failed:
        return 1
    return 1 if strict and regressed else 0


if __name__ == "__main__":
    sys.exit(main())
