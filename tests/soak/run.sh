#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# run.sh - `make soak` (README.md): the soak driver as root; its rootless
# lane runs `cordon run` as cordon-test, created here when missing (as
# tests/serve/api.sh does).
#
#   BUILD=DIR SRC=DIR [SOAK_SECONDS=200] [SOAK_CONCURRENCY=32] [SOAK_SEED=N] sh tests/soak/run.sh
set -u
: "${BUILD:?}" "${SRC:?}"
if [ "$(id -u)" -ne 0 ]; then
	echo "FAIL soak setup: run as root (the rootless lane runs as cordon-test)"
	exit 1
fi
id cordon-test >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin cordon-test ||
	{ echo "FAIL soak setup: cannot create user cordon-test"; exit 1; }
BUILD="$BUILD" SRC="$SRC" exec /usr/bin/python3 "$SRC/tests/soak/soak.py"
