#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# run.sh - exactly-once across cordon serve replicas (README.md).
#
#   BUILD=DIR SRC=DIR [FLEET_LEDGERS="sqlite postgresql"] sh tests/fleet/run.sh
#
# As root.  sqlite: two servers on one --state-dir; postgresql: two servers
# on one private PostgreSQL (tests/lib/pgtmp), run when this cordon has
# --ledger and the PostgreSQL server binaries are installed, else one skip
# line saying which is missing.  Exit 1 when a check failed.
set -u
: "${BUILD:?}" "${SRC:?}"
PY=/usr/bin/python3
rc=0
if [ "$(id -u)" -ne 0 ]; then
	echo "skip serve fleet: as root only (the servers lease host uids for their tools)"
	exit 0
fi
for l in ${FLEET_LEDGERS:-sqlite postgresql}; do
	if [ "$l" = postgresql ]; then
		if ! "$BUILD/cordon" serve --help 2>&1 | grep -q -- '--ledger'; then
			echo "skip serve fleet-postgresql: this cordon serve has no --ledger"; continue
		fi
		if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || [ ! -f "$SRC/tests/lib/pgtmp" ]; then
			echo "skip serve fleet-postgresql: no PostgreSQL server (scripts/install-deps) or tests/lib/pgtmp"; continue
		fi
	fi
	BUILD="$BUILD" POLICIES="$SRC/policies" "$PY" "$SRC/tests/fleet/run.py" "$l" || rc=1
done
exit $rc
