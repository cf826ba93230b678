#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Broken-policy corpus: every tests/corpus/policy/NAME.policy is used as the
# seccomp profile of a minimal descriptor; NAME.expect lists the exact
# diagnostic lines.  A case whose .expect has an error must exit 2 and write
# nothing; a case with only warnings must compile.  The number of errors
# and warnings must match exactly, so no follow-on noise slips in.
set -u
: "${BUILD:?}" "${SRC:?}"
. "$SRC/tests/cli/lib.sh"
dir="$SRC/tests/corpus/policy"
n=0
for expect in "$dir"/*.expect; do
	name=$(basename "$expect" .expect)
	printf 'version: 1\napp: t\nexecution:\n  executor:\n    seccomp: { profile: %s }\n' "$name" >"$T/app.yaml"
	rm -f "$T/out.cpol"
	want_rc=0
	grep -q ': error: ' "$expect" && want_rc=2
	# timeout: a policy that makes libseccomp loop must end in an error,
	# not hang the suite (p35).
	(cd "$dir" && timeout 10 "$CORDONC" compile -I . "$T/app.yaml" ../policy-tools.yaml -o "$T/out.cpol") \
		>"$_out" 2>"$_err"
	rc=$?
	[ "$rc" -eq 124 ] && die "$name: cordonc did not finish in 10 s"
	[ "$rc" -eq "$want_rc" ] || die "$name: exit $rc, want $want_rc"
	if [ "$want_rc" -ne 0 ] && [ -e "$T/out.cpol" ]; then die "$name: output written"; fi
	while IFS= read -r line || [ -n "$line" ]; do
		[ -z "$line" ] && continue
		grep -qxF -- "$line" "$_err" || die "$name: missing line: $line"
	done <"$expect"
	for kind in error warning; do
		w=$(grep -c ": $kind: " "$expect"); g=$(grep -c ": $kind: " "$_err")
		[ "$w" -eq "$g" ] || die "$name: $g ${kind}s, want $w"
	done
	n=$((n + 1))
done
[ "$n" -ge 38 ] || die "only $n policy cases"

# A descriptor's extra policy that includes base.policy, as the profile it
# extends does: the file is read once, so no rule is seen twice (it was: a
# "conflicting rules" error for each of base.policy's rules).
mkdir -p "$T/extra"
printf 'version: 1\napp: t\nexecution:\n  executor:\n    seccomp: { profile: python-compute, extra: extra.policy }\n' \
	>"$T/extra/app.yaml"
printf 'include "base.policy";\nallow { inotify_init1, inotify_add_watch }\n' >"$T/extra/extra.policy"
timeout 10 "$CORDONC" compile "$T/extra/app.yaml" "$SRC/tests/corpus/policy-tools.yaml" -o "$T/extra/out.cpol" \
	>"$_out" 2>"$_err" || die "profile and extra both including base.policy: $(cat "$_err")"
[ -s "$_err" ] && die "profile and extra both including base.policy: diagnostics: $(cat "$_err")"
pass "$n broken policies, each answered with its located diagnostics; a file included twice is read once"
