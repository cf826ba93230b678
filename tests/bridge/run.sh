#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# run.sh - the tool bridge's tests (README.md), in both modes the runtime has.
#
#   BUILD=DIR SRC=DIR sh tests/bridge/run.sh
#
# As root: every check as root, then again as the unprivileged user
# cordon-test (created here when missing, as tests/boundary/run.sh does),
# from a copy of everything it needs in a directory it can read.  As any
# other user: the rootless checks only.  Exit 1 when a check failed.
set -u
: "${BUILD:?}" "${SRC:?}"
B="$SRC/tests/bridge"
PY=/usr/bin/python3
rc=0

if [ "$(id -u)" -ne 0 ]; then
	BUILD="$BUILD" POLICIES="$SRC/policies" "$PY" "$B/run.py" rootless || rc=1
	exit $rc
fi

BUILD="$BUILD" POLICIES="$SRC/policies" "$PY" "$B/run.py" root || rc=1

id cordon-test >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin cordon-test \
	|| { echo "FAIL rootless setup: cannot create user cordon-test"; exit 1; }
# Under /run, not /tmp: the supervisor refuses to run a tool below a
# directory that others may write, and a sticky /tmp is one.
T=$(mktemp -d /run/cordon-bridge-rootless.XXXXXX) || exit 1
trap 'rm -rf "$T"' EXIT
# The tree may sit where cordon-test cannot read (a private home): copy the
# binaries, the shipped profiles, this folder (the tools run from the
# copy: tools.yaml names them by absolute path) and the shared harness
# (tests/lib), readable by all, written by root only.
mkdir "$T/bin" "$T/policies" "$T/bridge" "$T/lib"
cp "$BUILD/cordon" "$BUILD/cordonc" "$T/bin/" &&
	cp "$SRC"/policies/*.policy "$T/policies/" &&
	cp -R "$B/programs" "$B/tools" "$B/faults" "$B"/*.py "$B"/*.yaml "$B"/*.in "$T/bridge/" &&
	cp "$SRC/tests/lib/harness.py" "$SRC/tests/lib/schema_check.py" "$T/lib/" && cp -R "$SRC/docs/schemas" "$T/lib/" ||
	{ echo "FAIL rootless setup: cannot copy the tree"; exit 1; }
chmod -R a+rX,go-w "$T"
chmod 755 "$T/bin/cordon" "$T/bin/cordonc" "$T/bridge/tools/"*
# Its own TMPDIR: the runner's work directory and cordon's run directories.
mkdir "$T/tmp" && chown cordon-test "$T/tmp" && chmod 700 "$T/tmp"
cd "$T" || exit 1
TMPDIR="$T/tmp" BUILD="$T/bin" POLICIES="$T/policies" \
	setpriv --reuid=cordon-test --regid=cordon-test --clear-groups "$PY" "$T/bridge/run.py" rootless || rc=1
exit $rc
