#!/bin/sh
# run.sh - the boundary tests (README.md), in both modes the runtime has.
#
#   BUILD=DIR SRC=DIR sh tests/boundary/run.sh
#
# As root: the whole table as root, then again as the unprivileged user
# cordon-test (created here when missing, as tests/cli/test_rootless.sh
# does), from a copy of everything it needs in a directory it can read.
# As any other user: the rootless table only.  Exit 1 when a check failed.
set -u
: "${BUILD:?}" "${SRC:?}"
B="$SRC/tests/boundary"
PY=/usr/bin/python3
rc=0

if [ "$(id -u)" -ne 0 ]; then
	BUILD="$BUILD" POLICIES="$SRC/policies" "$PY" "$B/run.py" rootless || rc=1
	exit $rc
fi

BUILD="$BUILD" POLICIES="$SRC/policies" "$PY" "$B/run.py" root || rc=1

id cordon-test >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin cordon-test \
	|| { echo "FAIL rootless setup: cannot create user cordon-test"; exit 1; }
T=$(mktemp -d) || exit 1
trap 'rm -rf "$T"' EXIT
# The tree may sit where cordon-test cannot read (a private home): copy the
# binaries, the shipped profiles and this folder, readable by all, written
# by root only.
mkdir "$T/bin" "$T/policies" "$T/boundary"
cp "$BUILD/cordon" "$BUILD/cordonc" "$T/bin/" &&
	cp "$SRC"/policies/*.policy "$T/policies/" &&
	cp -R "$B/attacks" "$B/policies" "$B/blib.py" "$B/run.py" "$B"/*.yaml "$T/boundary/" ||
	{ echo "FAIL rootless setup: cannot copy the tree"; exit 1; }
chmod -R a+rX,go-w "$T"
chmod 755 "$T/bin/cordon" "$T/bin/cordonc"
# Its own TMPDIR: the runner's work directory and cordon's run directories.
mkdir "$T/tmp" && chown cordon-test "$T/tmp" && chmod 700 "$T/tmp"
cd "$T" || exit 1
TMPDIR="$T/tmp" BUILD="$T/bin" POLICIES="$T/policies" \
	setpriv --reuid=cordon-test --regid=cordon-test --clear-groups "$PY" "$T/boundary/run.py" rootless || rc=1
exit $rc
