#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Broken-input corpus: every tests/corpus/compile/NAME.expect names one input
# (NAME.app.yaml, compiled with the good inventory, or NAME.tools.yaml,
# compiled with the good descriptor, and NAME.more.tools.yaml after it when
# there is one) and lists lines that cordonc's stderr must contain exactly;
# the number of errors must match too.  A "#ordered" line in the .expect
# asks for its lines in that order as well.  Each case must exit 2, write no output file, and not
# crash (a sanitizer report or a signal gives another status).
set -u
: "${BUILD:?}" "${SRC:?}"
CORDONC="$BUILD/cordonc"
dir="$SRC/tests/corpus/compile"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
n=0

check_case() { # name app tools expect [more tools]
	name=$1 app=$2 tools=$3 expect=$4
	out="$tmp/out.cpol"
	rm -f "$out"
	(cd "$dir" && "$CORDONC" compile "$app" "$tools" ${5:+"$5"} -o "$out") >"$tmp/stdout" 2>"$tmp/stderr"
	rc=$?
	n=$((n + 1))
	if [ "$rc" -ne 2 ]; then
		echo "FAIL $name: exit $rc, want 2"; sed 's/^/    /' "$tmp/stderr" | head -20; fail=1; return
	fi
	if [ -e "$out" ] || ls "$tmp"/out.cpol.tmp* >/dev/null 2>&1; then
		echo "FAIL $name: an output file was written"; fail=1; return
	fi
	while IFS= read -r line || [ -n "$line" ]; do
		case "$line" in ""|"#"*) continue ;; esac
		if ! grep -qxF -- "$line" "$tmp/stderr"; then
			echo "FAIL $name: missing line: $line"
			echo "  stderr was:"; sed 's/^/    /' "$tmp/stderr" | head -20
			fail=1; return
		fi
	done <"$expect"
	# In order: the listed lines are a subsequence of stderr.
	if grep -q '^#ordered' "$expect" && ! awk 'BEGIN { i = 0; n = 0 } NR == FNR { if ($0 != "" && $0 !~ /^#/) want[n++] = $0; next }
			i < n && $0 == want[i] { i++ } END { exit (i < n) }' "$expect" "$tmp/stderr"; then
		echo "FAIL $name: lines not in the order listed"
		echo "  stderr was:"; sed 's/^/    /' "$tmp/stderr" | grep -E ': (error|warning|note): ' | head -20
		fail=1; return
	fi
	# Exactly the errors listed: a correct message drowned in follow-on
	# noise is a failure too.
	# "#errors N" in the .expect sets the count where listing every one
	# would only repeat a line (an alias bomb has one error per alias).
	want=$(sed -n 's/^#errors \([0-9]*\)$/\1/p' "$expect")
	[ -n "$want" ] || want=$(grep -c ': error: ' "$expect")
	got=$(grep -c ': error: ' "$tmp/stderr")
	if [ "$want" -ne "$got" ]; then
		echo "FAIL $name: $got errors reported, $want expected"
		sed 's/^/    /' "$tmp/stderr" | grep ': error: ' | head -10
		fail=1
	fi
}

for expect in "$dir"/*.expect; do
	name=$(basename "$expect" .expect)
	if [ -e "$dir/$name.app.yaml" ]; then
		check_case "$name" "$name.app.yaml" ../good/tools.yaml "$expect"
	elif [ -e "$dir/$name.more.tools.yaml" ]; then
		check_case "$name" ../good/app.yaml "$name.tools.yaml" "$expect" "$name.more.tools.yaml"
	elif [ -e "$dir/$name.tools.yaml" ]; then
		check_case "$name" ../good/app.yaml "$name.tools.yaml" "$expect"
	else
		echo "FAIL $name: no input file beside the .expect"; fail=1
	fi
done

# Generated input: a file over the 1 MiB limit is refused before parsing.
big="$tmp/big.app.yaml"
{ echo "version: 1"; i=0; while [ $i -lt 20000 ]; do echo "# padding line $i .........................................."; i=$((i+1)); done; } >"$big"
printf '%s\n' "$big: error: file is too large ($(wc -c <"$big") bytes; the limit is 1048576)" >"$tmp/big.expect"
check_case too-large "$big" ../good/tools.yaml "$tmp/big.expect"

# The good pair itself compiles: the cases above fail for their own reason.
if ! (cd "$dir" && "$CORDONC" compile ../good/app.yaml ../good/tools.yaml -o "$tmp/good.cpol") 2>"$tmp/stderr"; then
	echo "FAIL good pair does not compile:"; cat "$tmp/stderr"; fail=1
fi

[ "$fail" -eq 0 ] && echo "corpus: $n broken inputs, each refused with its located message"
exit "$fail"
