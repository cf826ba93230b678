#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# examples/reference/: an app.yaml and a tools.yaml that write every key of
# docs/descriptor.md's and docs/tools.md's key tables once; they compile and
# lint clean (no error, no warning).  The key check is first shown to name a
# key a copy leaves out.
set -u
: "${BUILD:?}" "${SRC:?}"
. "$SRC/tests/cli/lib.sh"
R="$SRC/examples/reference"
PY=/usr/bin/python3

grep -v '^    timeout: 30s' "$R/app.yaml" >"$T/app.yaml"
expect_rc 1 "$PY" "$SRC/tests/cli/reference_keys.py" "$SRC/docs/descriptor.md" "$T/app.yaml"
[ "$(cat "$_out")" = timeout ] || die "a descriptor without timeout: the key check named '$(cat "$_out")'"

expect_rc 0 "$PY" "$SRC/tests/cli/reference_keys.py" "$SRC/docs/descriptor.md" "$R/app.yaml"
expect_rc 0 "$PY" "$SRC/tests/cli/reference_keys.py" "$SRC/docs/tools.md" "$R/tools.yaml"
expect_rc 0 "$CORDONC" compile "$R/app.yaml" "$R/tools.yaml" -o "$T/reference.cpol"
expect_rc 0 "$CORDONC" lint "$R/app.yaml" "$R/tools.yaml"
grep -q ': warning:' "$_out" "$_err" && die "the reference lints with a warning"
pass "examples/reference writes every documented key, compiles and lints clean"
