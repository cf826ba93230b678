#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Ordinary Python inside the shipped python-compute profile (issue 14):
# tests/compat/quick.py probes identity, umask, chdir/symlink/statvfs,
# subprocess (pipes, shell, waitid), multiprocessing (fork: Pool, Value,
# Array, Pipe, Manager; spawn, forkserver), asyncio (a Unix server and a
# subprocess), threads, tempfile/shutil, signals, numpy, pandas and
# matplotlib when installed, and that an inet socket is refused (ENOSYS).
# Every probe must pass (or skip for a package that is not installed), as
# root and as an unprivileged user.  make compat measures the rest.
set -u
: "${BUILD:?}" "${SRC:?}"
. "$SRC/tests/cli/lib.sh"

"$CORDONC" compile "$SRC/tests/compat/app.yaml" "$SRC/tests/compat/tools.yaml" -o "$T/compat.cpol" >/dev/null 2>&1 \
	|| die "compile tests/compat/app.yaml"
cp "$SRC/tests/compat/quick.py" "$T/quick.py"
chmod 755 "$T"; chmod 644 "$T/compat.cpol" "$T/quick.py"

check() { # check MODE RUN_DIR
	f="$2/out/result.json"
	[ -s "$f" ] || die "$1: no result.json: $(head -c 1500 "$_out")"
	/usr/bin/python3 - "$f" "$1" <<'PY' 2>"$T/why" || die "$1: $(cat "$T/why")"
import json, sys
r = json.load(open(sys.argv[1]))
want = ["identity", "umask", "chdir_symlink_statvfs", "subprocess_pipes", "multiprocessing_fork",
        "multiprocessing_spawn_forkserver", "asyncio", "threading", "tempfile_shutil", "signals", "numpy",
        "pandas", "matplotlib", "inet_refused", "setgroups_eperm", "pipe_size_fadvise_affinity"]
bad = ["%s: %s" % (k, r.get(k, "missing")) for k in want
       if r.get(k) != "ok" and not (k in ("pandas", "matplotlib") and str(r.get(k)).startswith("skip:"))]
if bad:
    sys.stderr.write("; ".join(bad))
    sys.exit(1)
PY
}

expect_rc 0 "$CORDON" run --policy "$T/compat.cpol" --code "$T/quick.py" --run-dir "$T/rd-root" --state-dir "$T/st"
check "$(id -un)" "$T/rd-root"
pass "$(id -un): every probe of ordinary Python works inside python-compute"
[ "$(id -u)" -eq 0 ] || exit 0

id cordon-test >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin cordon-test \
	|| die "cannot create user cordon-test"
mkdir "$T/bin" "$T/u" && cp "$CORDON" "$T/bin/" && chmod 755 "$T/bin" "$T/bin/cordon" && chown cordon-test "$T/u"
expect_rc 0 env -u XDG_RUNTIME_DIR HOME="$T/u" TMPDIR="$T/u" setpriv --reuid=cordon-test --regid=cordon-test \
	--clear-groups "$T/bin/cordon" run --policy "$T/compat.cpol" --code "$T/quick.py" --run-dir "$T/u/rd" \
	--state-dir "$T/u/st"
check rootless "$T/u/rd"
pass "rootless: every probe of ordinary Python works inside python-compute"
