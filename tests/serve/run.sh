#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# run.sh - cordon serve's isolation between executions (README.md).
#
#   BUILD=DIR SRC=DIR [SERVE_MODES="serve serve-rootless"] sh tests/serve/run.sh
#
# As root: serve (the server as root), then serve-rootless as the
# unprivileged user cordon-test (created here when missing, as
# tests/boundary/run.sh does), from a copy it can read.  As any other user:
# serve-rootless only.  Each mode prints a skip line while cordon serve is
# not built.  Exit 1 when a check failed.
set -u
: "${BUILD:?}" "${SRC:?}"
D="$SRC/tests/serve"
PY=/usr/bin/python3
rc=0

if [ "$(id -u)" -ne 0 ]; then
	BUILD="$BUILD" POLICIES="$SRC/policies" "$PY" "$D/run.py" serve-rootless || rc=1
	exit $rc
fi

for m in ${SERVE_MODES:-serve serve-rootless}; do
	case $m in
	serve)
		BUILD="$BUILD" POLICIES="$SRC/policies" "$PY" "$D/run.py" serve || rc=1 ;;
	serve-rootless)
		id cordon-test >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin cordon-test \
			|| { echo "FAIL rootless setup: cannot create user cordon-test"; rc=1; continue; }
		T=$(mktemp -d) || { rc=1; continue; }
		trap 'rm -rf "$T"' EXIT
		# The tree may sit where cordon-test cannot read: copy the binaries,
		# the shipped profiles, this folder and the shared harness.
		mkdir "$T/bin" "$T/policies" "$T/serve" "$T/lib" &&
			cp "$BUILD/cordon" "$BUILD/cordonc" "$T/bin/" &&
			cp "$SRC"/policies/*.policy "$T/policies/" &&
			cp -R "$D/programs" "$D/run.py" "$D"/*.yaml "$T/serve/" &&
			cp "$SRC/tests/lib/harness.py" "$SRC/tests/lib/schema_check.py" "$T/lib/" && cp -R "$SRC/docs/schemas" "$T/lib/" ||
			{ echo "FAIL rootless setup: cannot copy the tree"; rc=1; continue; }
		chmod -R a+rX,go-w "$T"
		chmod 755 "$T/bin/cordon" "$T/bin/cordonc"
		mkdir "$T/tmp" && chown cordon-test "$T/tmp" && chmod 700 "$T/tmp"
		(cd "$T" && TMPDIR="$T/tmp" BUILD="$T/bin" POLICIES="$T/policies" \
			setpriv --reuid=cordon-test --regid=cordon-test --clear-groups \
			"$PY" "$T/serve/run.py" serve-rootless) || rc=1 ;;
	*)
		echo "FAIL $m: no such mode (serve serve-rootless)"; rc=1 ;;
	esac
done
exit $rc
