#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# test_enforce.sh - seccomp filters enforced by the running kernel.
#
#   BUILD=dir SRC=tree sh tests/seccomp/test_enforce.sh [BLOB EXPECT]...
#
# BUILD/tests/seccomp holds apply_filter, attack and mkblob.  Steps:
#   1. attack without a filter: every probe must reach the kernel and come
#      back with the kernel's own answer (no SIGSYS; an EPERM here means
#      the probe cannot tell a filter from a missing privilege: warned);
#   2. each mkblob profile under apply_filter: attack's lines must equal
#      tests/seccomp/expect/PROFILE.txt exactly;
#   3. the loader refuses a blob with a bad program and runs nothing under
#      a blob without one;
#   4. each BLOB EXPECT pair given on the command line (compiled shipped
#      profiles): same check as step 2.
# Probes whose unfiltered answer shows this kernel cannot run them (the
# i386 one without IA32 emulation) are left out of every comparison.
set -u
: "${BUILD:?}" "${SRC:?}"
BIN="$BUILD/tests/seccomp"
EXPECT="$SRC/tests/seccomp/expect"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

die() { echo "FAIL test_enforce: $*"; exit 1; }
pass() { echo "ok   test_enforce: $*"; }

for b in apply_filter attack mkblob; do
	[ -x "$BIN/$b" ] || die "$BIN/$b is not built"
done

# Every expectation file names every probe, once, in attack's order.
"$BIN/attack" --list >"$T/probes" || die "attack --list failed"
for f in "$EXPECT"/*.txt; do
	sed 's/^probe \([^:]*\):.*/\1/' "$f" | cmp -s - "$T/probes" ||
		die "$(basename "$f") does not list the probes of attack --list in order"
done

# 1. No filter.
"$BIN/attack" all >"$T/base.out" 2>"$T/base.err" || die "attack without a filter failed: $(cat "$T/base.err")"
grep -q '^probe getpid: ok$' "$T/base.out" || die "getpid fails without a filter"
if grep ': signal=' "$T/base.out" | grep -v '^probe i386_getpid:'; then
	die "probes die without any filter"
fi
grep ': errno=EPERM$' "$T/base.out" | sed 's/^/warn test_enforce: refused without a filter, inconclusive: /'
skip=""
grep -q '^probe i386_getpid: ok$' "$T/base.out" || skip="i386_getpid"
[ -z "$skip" ] || echo "warn test_enforce: no IA32 emulation here, not checked: $skip"
pass "$(wc -l <"$T/base.out") probes reach the kernel without a filter"

# compare OUT EXPECT LABEL: the lines must match, skipped probes aside.
compare() {
	if [ -n "$skip" ]; then
		grep -v "^probe $skip:" "$1" >"$1.cmp"
		grep -v "^probe $skip:" "$2" >"$T/expect.cmp"
	else
		cp "$1" "$1.cmp"
		cp "$2" "$T/expect.cmp"
	fi
	diff -u "$T/expect.cmp" "$1.cmp" >"$T/diff" || { cat "$T/diff"; die "$3: probes differ from $(basename "$2")"; }
}

# 2. Filters made by libseccomp directly.
for p in deny deny-naive allow; do
	"$BIN/mkblob" "$p" "$T/$p.cpol" || die "mkblob $p failed"
	"$BIN/apply_filter" "$T/$p.cpol" -- "$BIN/attack" all >"$T/$p.out" 2>"$T/$p.err" ||
		die "apply_filter $p: exit $?: $(cat "$T/$p.err")"
	compare "$T/$p.out" "$EXPECT/$p.txt" "$p"
	pass "$p: every probe as expected"
done
# The naive filter is there to show the probes catch the 64-bit argument
# bypass: if it stopped getting through, the probes would prove nothing.
grep -q '^probe ioctl_tiocsti_hi: errno=ENOTTY$' "$T/deny-naive.out" ||
	die "the high-bits TIOCSTI probe no longer gets through a naive filter"

# 3. The loader's refusals: nothing runs.
"$BIN/mkblob" bad-jump "$T/bad.cpol" || die "mkblob bad-jump failed"
"$BIN/apply_filter" "$T/bad.cpol" -- sh -c 'echo RAN' >"$T/bad.out" 2>"$T/bad.err"
rc=$?
[ "$rc" -eq 126 ] || die "a bad program: exit $rc, want 126"
[ -s "$T/bad.out" ] && die "a bad program: the command ran"
grep -q 'seccomp\[1\]' "$T/bad.err" && grep -q 'jump goes to or past the end' "$T/bad.err" ||
	die "a bad program: the error does not name instruction 1 and the rule: $(cat "$T/bad.err")"
"$BIN/mkblob" none "$T/none.cpol" || die "mkblob none failed"
"$BIN/apply_filter" "$T/none.cpol" -- sh -c 'echo RAN' >"$T/none.out" 2>"$T/none.err"
rc=$?
[ "$rc" -eq 126 ] && [ ! -s "$T/none.out" ] || die "a blob without a filter: exit $rc, or the command ran"
head -c 100 "$T/allow.cpol" >"$T/short.cpol"
"$BIN/apply_filter" "$T/short.cpol" -- sh -c 'echo RAN' >"$T/short.out" 2>"$T/short.err"
rc=$?
[ "$rc" -eq 126 ] && [ ! -s "$T/short.out" ] || die "a truncated blob: exit $rc, or the command ran"
pass "bad, empty and truncated blobs run nothing"

# 4. Compiled profiles given by the caller.
while [ $# -ge 2 ]; do
	n=$(basename "$1")
	"$BIN/apply_filter" "$1" -- "$BIN/attack" all >"$T/$n.out" 2>"$T/$n.err" ||
		die "apply_filter $n: exit $?: $(cat "$T/$n.err")"
	compare "$T/$n.out" "$2" "$n"
	pass "$n: every probe as expected"
	shift 2
done
[ $# -eq 0 ] || die "arguments come in BLOB EXPECT pairs"
