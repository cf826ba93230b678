#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# bench_run.sh: start-up of `cordon run` beside bare python, bubblewrap,
# firejail and crun (make bench runs it after the C benches).
#
#   BUILD=build SRC=. sh bench/bench_run.sh
#   BENCH_RUNS=40 rounds, BENCH_CAFE_RUNS=RUNS/2, BENCH_PACE=0 (idle after each
#   run, in run lengths)
#
# As root, peers that are missing are installed first (Debian packages,
# quietly); CORDON_BENCH_NO_INSTALL=1 skips that.  A peer that is still
# missing or cannot start here is skipped with its reason by the harness:
# only cordon itself failing to run makes this exit non-zero.
set -u
BUILD=${BUILD:-build}
SRC=${SRC:-.}

# Peer command -> Debian package.
PEERS="bwrap:bubblewrap firejail:firejail crun:crun"

if [ "$(id -u)" -eq 0 ] && [ "${CORDON_BENCH_NO_INSTALL:-0}" != 1 ] && command -v apt-get >/dev/null 2>&1; then
	missing=""
	for p in $PEERS; do
		command -v "${p%%:*}" >/dev/null 2>&1 || missing="$missing ${p#*:}"
	done
	if [ -n "$missing" ]; then
		echo "bench_run: installing peers:$missing" >&2
		export DEBIAN_FRONTEND=noninteractive
		# shellcheck disable=SC2086
		apt-get install -y -q --no-install-recommends $missing >/dev/null 2>&1 ||
			{ apt-get update -q >/dev/null 2>&1 &&
				apt-get install -y -q --no-install-recommends $missing >/dev/null 2>&1; } ||
			echo "bench_run: could not install$missing; those peers are skipped" >&2
	fi
fi

# The system interpreter, not whatever python3 PATH finds first: it is the
# one the cafe policy runs, so both sides start the same binary.
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
exec "$PY" "$SRC/bench/bench_run.py" "$BUILD" "$SRC"
