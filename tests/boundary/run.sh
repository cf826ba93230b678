#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# run.sh - the boundary tests (README.md), in every mode the runtime has.
#
#   BUILD=DIR SRC=DIR [BOUNDARY_MODES="root serve ..."] sh tests/boundary/run.sh
#
# Modes (run.py): root and rootless run each attack with `cordon run`;
# serve and serve-rootless send it to one `cordon serve` started for the
# mode (skipped, with a line saying so, while cordon serve is not built).
# As root, all four; the rootless ones as the unprivileged user cordon-test
# (created here when missing, as tests/cli/test_rootless.sh does), from a
# copy of everything it needs in a directory it can read.  As any other
# user: the rootless ones only.  BOUNDARY_MODES picks some.  Exit 1 when a
# check failed.
set -u
: "${BUILD:?}" "${SRC:?}"
B="$SRC/tests/boundary"
PY=/usr/bin/python3
rc=0

if [ "$(id -u)" -ne 0 ]; then
	for m in ${BOUNDARY_MODES:-rootless serve-rootless}; do
		case $m in root|serve) echo "FAIL $m: needs root"; rc=1; continue ;; esac
		BUILD="$BUILD" POLICIES="$SRC/policies" "$PY" "$B/run.py" "$m" || rc=1
	done
	exit $rc
fi

T=
rootless_tree() {
	[ -n "$T" ] && return 0
	id cordon-test >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin cordon-test \
		|| { echo "FAIL rootless setup: cannot create user cordon-test"; return 1; }
	T=$(mktemp -d) || return 1
	trap 'rm -rf "$T"' EXIT
	# The tree may sit where cordon-test cannot read (a private home): copy
	# the binaries, the shipped profiles, this folder and the shared
	# harness (tests/lib), readable by all, written by root only.
	mkdir "$T/bin" "$T/policies" "$T/boundary" "$T/lib"
	cp "$BUILD/cordon" "$BUILD/cordonc" "$T/bin/" &&
		cp "$SRC"/policies/*.policy "$T/policies/" &&
		cp -R "$B/attacks" "$B/policies" "$B/blib.py" "$B/run.py" "$B"/*.yaml "$T/boundary/" &&
		cp "$SRC/tests/lib/harness.py" "$SRC/tests/lib/schema_check.py" "$T/lib/" && cp -R "$SRC/docs/schemas" "$T/lib/" ||
		{ echo "FAIL rootless setup: cannot copy the tree"; return 1; }
	chmod -R a+rX,go-w "$T"
	chmod 755 "$T/bin/cordon" "$T/bin/cordonc"
	# Its own TMPDIR: the runner's work directory and cordon's run directories.
	mkdir "$T/tmp" && chown cordon-test "$T/tmp" && chmod 700 "$T/tmp"
}

for m in ${BOUNDARY_MODES:-root rootless serve serve-rootless}; do
	case $m in
	root|serve)
		BUILD="$BUILD" POLICIES="$SRC/policies" "$PY" "$B/run.py" "$m" || rc=1 ;;
	rootless|serve-rootless)
		rootless_tree || { rc=1; continue; }
		(cd "$T" && TMPDIR="$T/tmp" BUILD="$T/bin" POLICIES="$T/policies" \
			setpriv --reuid=cordon-test --regid=cordon-test --clear-groups \
			"$PY" "$T/boundary/run.py" "$m") || rc=1 ;;
	*)
		echo "FAIL $m: no such mode (root rootless serve serve-rootless)"; rc=1 ;;
	esac
done
exit $rc
