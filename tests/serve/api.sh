#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# api.sh - cordon serve through real clients (test_api.py), its streamed
# executions (test_stream.py) and its code-interpreter sessions
# (test_sessions.py), in both modes the runtime has.
#
#   BUILD=DIR SRC=DIR sh tests/serve/api.sh
#
# As root: the whole suite as root, then again as the unprivileged user
# cordon-test (created here when missing, as run.sh beside it does),
# from a copy of what it needs in a directory it can read.  As any other
# user: the rootless run only.  Exit 1 when a check failed.
set -u
: "${BUILD:?}" "${SRC:?}"
S="$SRC/tests/serve"
PY=/usr/bin/python3
rc=0

# Each suite starts a server of its own.
SUITES="test_api.py test_stream.py test_sessions.py"

if [ "$(id -u)" -ne 0 ]; then
	for s in $SUITES; do BUILD="$BUILD" SRC="$SRC" "$PY" "$S/$s" rootless || rc=1; done
	exit $rc
fi

for s in $SUITES; do BUILD="$BUILD" SRC="$SRC" "$PY" "$S/$s" root || rc=1; done

id cordon-test >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin cordon-test \
	|| { echo "FAIL serve rootless setup: cannot create user cordon-test"; exit 1; }
T=$(mktemp -d) || exit 1
trap 'rm -rf "$T"' EXIT
# The tree may sit where cordon-test cannot read (a private home): copy the
# binaries and the parts of the tree the suite reads (the examples it
# compiles, the sessions suite's apps and the boundary attacks it runs as
# cells, the shared harness, the OpenAPI document and its checker, the
# Python client), readable by all, written by root only.
mkdir -p "$T/bin" "$T/src/policies" "$T/src/examples" "$T/src/tests/serve" "$T/src/tests/lib" "$T/src/docs" "$T/src/clients" \
	"$T/src/tests/boundary" || exit 1
cp "$BUILD/cordon" "$BUILD/cordonc" "$T/bin/" &&
	cp "$SRC"/policies/*.policy "$T/src/policies/" &&
	cp -R "$SRC/examples/cafe" "$SRC/examples/report" "$T/src/examples/" &&
	cp "$S/test_api.py" "$S/test_stream.py" "$S/test_sessions.py" "$S/openapi_check.py" "$T/src/tests/serve/" &&
	cp -R "$S/sessions" "$T/src/tests/serve/" &&
	cp -R "$SRC/tests/boundary/attacks" "$SRC/tests/boundary/blib.py" "$T/src/tests/boundary/" &&
	cp "$SRC/tests/lib/harness.py" "$SRC/tests/lib/schema_check.py" "$T/src/tests/lib/" &&
	cp -R "$SRC/docs/openapi.yaml" "$SRC/docs/schemas" "$T/src/docs/" && cp -R "$SRC/clients/python" "$T/src/clients/" ||
	{ echo "FAIL serve rootless setup: cannot copy the tree"; exit 1; }
chmod -R a+rX,go-w "$T"
chmod 755 "$T/bin/cordon" "$T/bin/cordonc"
# Its own TMPDIR and HOME: the suite's work directory, the servers' work
# directories, cordon run's run directory.
mkdir "$T/tmp" && chown cordon-test "$T/tmp" && chmod 700 "$T/tmp"
cd "$T" || exit 1
# A copied cordonc has no build-tree marker beside it (compiler/policy_home.h):
# name the shipped profiles.
for s in $SUITES; do
	env -u XDG_RUNTIME_DIR CORDON_POLICY_PATH="$T/src/policies" TMPDIR="$T/tmp" HOME="$T/tmp" BUILD="$T/bin" \
		SRC="$T/src" setpriv --reuid=cordon-test --regid=cordon-test --clear-groups "$PY" \
		"$T/src/tests/serve/$s" rootless || rc=1
done
exit $rc
