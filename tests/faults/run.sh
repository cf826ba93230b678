#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# run.sh - the fault suite (README.md) in both modes.
#
#   BUILD=DIR SRC=DIR [FAULTS_SHORT=1] [FAULTS_SEED=N] [CASE=NAME] sh tests/faults/run.sh
#
# As root: every case as root, then again as the unprivileged user
# cordon-test (created here when missing) from a copy of what it needs in
# a directory it can read, as tests/bridge/run.sh does; rootless the kill
# cases run always, the error sweep in the full suite only.  As any other
# user: the rootless mode only.  One seed for both modes (printed).  Exit 1
# when a case failed.
set -u
: "${BUILD:?}" "${SRC:?}"
F="$SRC/tests/faults"
PY=/usr/bin/python3
FAULTS_SEED=${FAULTS_SEED:-$(od -An -N3 -tu4 /dev/urandom | tr -d ' ')}
export FAULTS_SEED
rc=0

if [ "$(id -u)" -ne 0 ]; then
	BUILD="$BUILD" POLICIES="$SRC/policies" "$PY" "$F/run.py" rootless || rc=1
	exit $rc
fi

BUILD="$BUILD" POLICIES="$SRC/policies" "$PY" "$F/run.py" root || rc=1

# The TSan build cannot run rootless: without a cgroup the memory limit is
# RLIMIT_AS, under which the TSan-instrumented setup of the sandbox's child
# cannot map (docs/testing.md).
if ldd "$BUILD/cordon" | grep -q libtsan; then
	echo "skip rootless: the TSan build's sandbox setup cannot run under RLIMIT_AS (docs/testing.md)"
	exit $rc
fi

id cordon-test >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin cordon-test \
	|| { echo "FAIL rootless setup: cannot create user cordon-test"; exit 1; }
# Under /run, not /tmp: the supervisor refuses a tool below a directory
# others may write.
T=$(mktemp -d /run/cordon-faults-rootless.XXXXXX) || exit 1
trap 'rm -rf "$T"' EXIT
mkdir -p "$T/bin/tests/faults" "$T/policies" "$T/faults" "$T/lib"
cp "$BUILD/cordon" "$BUILD/cordonc" "$T/bin/" &&
	cp "$BUILD/tests/faults/shim.so" "$T/bin/tests/faults/" &&
	cp "$SRC"/policies/*.policy "$T/policies/" &&
	cp -R "$F/tools" "$F"/*.py "$F"/*.yaml "$F"/*.in "$T/faults/" &&
	cp "$SRC/tests/lib/harness.py" "$SRC/tests/lib/schema_check.py" "$T/lib/" && cp -R "$SRC/docs/schemas" "$T/lib/" ||
	{ echo "FAIL rootless setup: cannot copy the tree"; exit 1; }
chmod -R a+rX,go-w "$T"
chmod 755 "$T/bin/cordon" "$T/bin/cordonc" "$T/faults/tools/"*
mkdir "$T/tmp" && chown cordon-test "$T/tmp" && chmod 700 "$T/tmp"
cd "$T" || exit 1
TMPDIR="$T/tmp" BUILD="$T/bin" POLICIES="$T/policies" \
	setpriv --reuid=cordon-test --regid=cordon-test --clear-groups "$PY" "$T/faults/run.py" rootless || rc=1
exit $rc
