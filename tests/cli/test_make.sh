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

# The caller's CFLAGS (a distribution's hardening flags) reach every
# compile, the generated parser's included.
expect_rc 0 make -n -B -C "$SRC" all SAN="${SAN:-0}" CFLAGS=-DCORDON_CFLAGS_PROBE
n_cc=$(grep -c '^cc .* -c ' "$_out"); n_probe=$(grep '^cc .* -c ' "$_out" | grep -c -- '-DCORDON_CFLAGS_PROBE')
[ "$n_cc" -gt 0 ] && [ "$n_cc" = "$n_probe" ] || die "CFLAGS reached $n_probe of $n_cc compiles: $(grep '^cc .* -c ' "$_out" | grep -v -- -DCORDON_CFLAGS_PROBE | head -2)"
pass "CFLAGS reaches all $n_cc compiles (make -n)"
