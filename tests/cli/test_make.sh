#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The build runs bison once and, once built, has nothing to do (issue 14:
# with two ordinary targets for its two outputs, make -j ran bison twice,
# the second run could leave the parser header newer than the objects
# built from the first, and the next make rebuilt 41 of them).
set -u
: "${BUILD:?}" "${SRC:?}"
. "$SRC/tests/cli/lib.sh"

expect_rc 0 make -n -C "$SRC" -W grammar/policy.y all SAN="${SAN:-0}"
n=$(grep -c '^bison' "$_out")
[ "$n" = 1 ] || die "a changed grammar/policy.y runs bison $n times, want 1"
expect_rc 0 make -q -C "$SRC" all SAN="${SAN:-0}"
pass "one bison run for the grammar; a built tree is up to date (make -q all exits 0)"
