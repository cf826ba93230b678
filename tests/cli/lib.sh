# SPDX-License-Identifier: Apache-2.0
# lib.sh - helpers for the CLI tests (sourced).  Each expect_* runs or checks
# the last command and stops the test at the first mismatch.
CORDONC="$BUILD/cordonc"
CORDON="$BUILD/cordon"
T=$(mktemp -d)
_out="$T/.stdout"; _err="$T/.stderr"
trap 'rm -rf "$T"' EXIT

die() { echo "FAIL $(basename "$0"): $*"; [ -s "$_err" ] && sed 's/^/    stderr: /' "$_err" | head -20; exit 1; }
pass() { echo "ok   $(basename "$0"): $*"; }

# expect_rc RC CMD...: run CMD, stdout/stderr kept for expect_out/expect_err.
expect_rc() {
	want=$1; shift
	"$@" >"$_out" 2>"$_err"; got=$?
	[ "$got" -eq "$want" ] || die "exit $got, want $want: $*"
}
expect_out() { grep -qF -- "$1" "$_out" || die "stdout lacks: $1"; }
expect_err() { grep -qF -- "$1" "$_err" || die "stderr lacks: $1"; }
expect_err_re() { grep -qE -- "$1" "$_err" || die "stderr lacks /$1/"; }

# modes_set: $modes is "root rootless" as root (the unprivileged user
# cordon-test is created when missing), "root" otherwise (the caller as is).
modes_set() {
	modes=root
	[ "$(id -u)" -eq 0 ] || return 0
	id cordon-test >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin cordon-test \
		|| die "cannot create user cordon-test"
	modes="root rootless"
}

# schema_ok SCHEMA FILE... [--lines first]: each FILE (a JSON document, or
# with --lines JSON lines) matches docs/schemas/SCHEMA.schema.json, else the
# test stops with the file and the JSON path of the first error.
schema_ok() {
	_lines=
	[ "$1" = --lines ] && { _lines=--lines; shift; }
	_s=$1; shift
	/usr/bin/python3 -B "$SRC/tests/lib/schema_check.py" $_lines "$_s" "$@" >"$T/.schema" 2>&1 ||
		die "does not match docs/schemas/$_s.schema.json: $(head -c 600 "$T/.schema")"
}

# as_user CMD...: run as the unprivileged test user when $mode is rootless.
as_user() {
	if [ "$mode" = rootless ]; then setpriv --reuid=cordon-test --regid=cordon-test --clear-groups "$@"
	else "$@"; fi
}
