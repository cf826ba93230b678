#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# make install puts the binaries, shipped policies and man pages under
# DESTDIR/PREFIX, and the installed binaries work.
set -u
: "${BUILD:?}" "${SRC:?}"
. "$SRC/tests/cli/lib.sh"
expect_rc 0 make -s -C "$SRC" install SAN="${SAN:-0}" DESTDIR="$T/root" PREFIX=/opt/cordon
for f in bin/cordonc bin/cordon share/man/man1/cordonc.1 share/man/man1/cordon.1; do
	[ -e "$T/root/opt/cordon/$f" ] || die "not installed: $f"
done
for p in "$SRC"/policies/*.policy; do
	[ -e "$p" ] || continue
	[ -e "$T/root/opt/cordon/share/cordon/policies/$(basename "$p")" ] || die "policy not installed: $p"
done
expect_rc 0 "$T/root/opt/cordon/bin/cordonc" --version
expect_rc 0 "$T/root/opt/cordon/bin/cordon" --version
pass "make install DESTDIR PREFIX"
