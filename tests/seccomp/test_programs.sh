#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# test_programs.sh - the Python programs python-compute.policy was derived
# from (tests/seccomp/programs/*.py: numpy, json, csv, sqlite3, subprocess,
# threads, multiprocessing, a Unix socket, ...) must run under the compiled
# filter, as the sandbox runs code (/usr/bin/python3 -I PROG, empty working
# directory, stdin from /dev/null), with BLAS pinned and unpinned, as root
# and as an unprivileged user created here.  "Enough, and nothing more" has
# two halves: test_enforce.sh proves the refusals, this proves the enough.
#
#   BUILD=dir SRC=tree sh tests/seccomp/test_programs.sh BLOB
set -u
: "${BUILD:?}" "${SRC:?}"
BLOB=$1
APPLY="$BUILD/tests/seccomp/apply_filter"
PY=/usr/bin/python3
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
die() { echo "FAIL test_programs: $*"; exit 1; }

[ -x "$APPLY" ] || die "$APPLY is not built"
cp "$BLOB" "$T/blob.cpol"
mkdir "$T/bin" && cp "$APPLY" "$T/bin/" && chmod 755 "$T" "$T/bin" "$T/bin/apply_filter" && chmod 644 "$T/blob.cpol"

runas=""
if [ "$(id -u)" -eq 0 ]; then
	id cordon-test >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin cordon-test ||
		die "cannot create user cordon-test"
	runas="setpriv --reuid=cordon-test --regid=cordon-test --clear-groups"
fi

n=0
for who in self other; do
	[ "$who" = other ] && [ -z "$runas" ] && continue
	for blas in 1 free; do
		for prog in "$SRC"/tests/seccomp/programs/*.py; do
			name=$(basename "$prog" .py)
			work="$T/work-$who-$blas-$name"
			mkdir "$work" && cp "$prog" "$work/prog.py" && chmod -R a+rwX "$work"
			if [ "$blas" = 1 ]; then threads="OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1"; else threads=""; fi
			pre=""
			[ "$who" = other ] && pre=$runas
			# shellcheck disable=SC2086
			(cd "$work" && env -i PATH=/usr/bin:/bin LANG=C.UTF-8 HOME="$work" $threads \
				$pre "$T/bin/apply_filter" "$T/blob.cpol" -- $PY -I prog.py) \
				</dev/null >"$work/out" 2>"$work/err"
			rc=$?
			if [ "$rc" -ne 0 ]; then
				echo "  stderr of $name:"; sed 's/^/    /' "$work/err" | tail -15
				die "$name ($who, BLAS $blas) exited $rc under the filter"
			fi
			n=$((n + 1))
		done
	done
done
echo "ok   test_programs: $n program runs succeeded under the compiled python-compute filter (root and unprivileged)"
