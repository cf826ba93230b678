#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Rootless: an ordinary user compiles, signs and checks a policy.  As root
# the test creates that user itself (cordon-test) and re-runs the steps with
# its uid; run by a non-root user it uses the caller as is.
set -u
: "${BUILD:?}" "${SRC:?}"
. "$SRC/tests/cli/lib.sh"

steps='set -e
cd "$1"
"$2/cordonc" compile app.yaml tools.yaml -o a.cpol
"$2/cordonc" keygen -p k.pub -s k.sec
"$2/cordonc" sign -s k.sec a.cpol
"$2/cordon" check-policy --trusted-key k.pub a.cpol
test "$(id -u)" -ne 0'

cp "$SRC/examples/cafe/app.yaml" "$SRC/examples/cafe/tools.yaml" "$T/"
if [ "$(id -u)" -eq 0 ]; then
	id cordon-test >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin cordon-test \
		|| die "cannot create user cordon-test"
	chown -R cordon-test "$T"
	chmod 755 "$T"
	# The binaries must be reachable by the user: copy them out of a tree
	# that may sit under a private home directory.
	mkdir "$T/bin" && cp "$CORDONC" "$CORDON" "$T/bin/" && chmod 755 "$T/bin" "$T/bin/"*
	expect_rc 0 setpriv --reuid=cordon-test --regid=cordon-test --clear-groups sh -c "$steps" sh "$T" "$T/bin"
else
	expect_rc 0 sh -c "$steps" sh "$T" "$BUILD"
fi
expect_out "signature verified"
[ "$(stat -c %U "$T/k.sec")" != root ] || die "key made by root"
pass "compile, keygen, sign and check-policy as an unprivileged user"
