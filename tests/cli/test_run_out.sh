#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# cordon run --out DIR (issue 14): the artifacts the result lists are copied
# out, each hashed again against the result; DIR is made 0700; nothing in
# DIR is replaced or followed (a planted file or symlink, a linked
# directory); an artifact not copied is exec.harness.out, the others still
# copied; a DIR that cannot be used is refused before the program runs; a
# link or fifo the program planted in out/ is never an artifact, so never
# copied.  As root, and again as the unprivileged user cordon-test (created
# here) when run as root.
set -u
: "${BUILD:?}" "${SRC:?}"
. "$SRC/tests/cli/lib.sh"
PY=/usr/bin/python3

cp "$SRC/examples/cafe/app.yaml" "$SRC/examples/cafe/tools.yaml" "$T/"
mkdir "$T/bin" && cp "$CORDONC" "$CORDON" "$T/bin/" && chmod 755 "$T" "$T/bin" "$T/bin/"* && chmod 644 "$T/"*.*
"$CORDONC" compile "$T/app.yaml" "$T/tools.yaml" -o "$T/cafe.cpol" >"$_out" 2>"$_err" || die "compile"
chmod 644 "$T/cafe.cpol"

# Three artifacts (the cafe declares summary.txt and files/*.csv), one of
# them binary; random bytes so a copy cannot match by luck.
cat >"$T/arts.py" <<'PYEOF'
import os
os.makedirs('/workspace/out/files')
open('/workspace/out/summary.txt', 'w').write('summary ' + os.urandom(8).hex() + '\n')
open('/workspace/out/files/a.csv', 'w').write('a,b\n1,' + os.urandom(8).hex() + '\n')
open('/workspace/out/files/b.csv', 'wb').write(os.urandom(70000) + b'\x00\xff')
PYEOF
# The same, plus what a hostile program plants in out/ under declared
# names: a symlink to a host file and a fifo.
cat >"$T/plant.py" <<'PYEOF'
import os
exec(open('/workspace/work/arts.py').read())
os.symlink('/etc/passwd', '/workspace/out/files/link.csv')
os.mkfifo('/workspace/out/files/fifo.csv')
PYEOF
chmod 644 "$T/arts.py" "$T/plant.py"

# check RESULT DIR OWNER: every artifact has copiedTo = DIR's real path +
# its path, and that file holds the bytes the result's sha256 and bytes
# name, mode 0600 (its directories 0700), owned by OWNER.
check() {
	$PY - "$1" "$2" "$3" <<'PYEOF'
import hashlib, json, os, pwd, stat, sys
r = json.load(open(sys.argv[1]))
d, owner = os.path.realpath(sys.argv[2]), sys.argv[3]
arts = r["artifacts"]
assert len(arts) >= 3, arts
for a in arts:
    want = os.path.join(d, a["path"])
    assert a.get("copiedTo") == want, (a, want)
    assert "copyError" not in a, a
    st = os.lstat(want)
    assert stat.S_ISREG(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o600, (want, oct(st.st_mode))
    assert pwd.getpwuid(st.st_uid).pw_name == owner, (want, st.st_uid)
    data = open(want, "rb").read()
    assert len(data) == a["bytes"] and hashlib.sha256(data).hexdigest() == a["sha256"], want
    sub = os.path.dirname(want)
    if sub != d:
        assert stat.S_IMODE(os.lstat(sub).st_mode) == 0o700, sub
PYEOF
}

# field FILE EXPR: print a Python expression over the result r.
field() { $PY -c 'import json,sys; r=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }

as_user() {
	if [ "$mode" = rootless ]; then setpriv --reuid=cordon-test --regid=cordon-test --clear-groups "$@"
	else "$@"; fi
}

modes_set
for mode in $modes; do
	W=$(mktemp -d "$T/w.XXXXXX"); chmod 1777 "$W"
	export TMPDIR="$W"
	if [ "$mode" = rootless ]; then owner=cordon-test; else owner=$(id -un); fi
	run() { as_user "$T/bin/cordon" run --policy "$T/cafe.cpol" --input "$T/arts.py" "$@"; }

	# 1. A new DIR: made 0700, every artifact copied and hashed again.
	expect_rc 0 run --code "$T/arts.py" --out "$W/new"
	cp "$_out" "$T/r.json" && schema_ok result "$T/r.json"
	[ "$(stat -c %a "$W/new")" = 700 ] || die "$mode: --out DIR made with mode $(stat -c %a "$W/new")"
	check "$T/r.json" "$W/new" "$owner" || die "$mode: copies: $(cat "$_out")"
	# Without --out nothing says copiedTo.
	expect_rc 0 run --code "$T/arts.py"
	cp "$_out" "$T/r.json" && schema_ok result "$T/r.json"
	[ "$(field "$T/r.json" 'any("copiedTo" in a for a in r["artifacts"])')" = False ] ||
		die "$mode: copiedTo without --out"
	pass "$mode: --out DIR: made 0700, each artifact copied (0600, owner $owner) with the result's bytes and sha256"

	# 2. DIR exists and holds the names already: a file, a symlink to a
	# host file, a symlink to a directory.  Nothing is replaced or
	# followed; the run is an error at stage out, the rest kept.
	mkdir "$W/old" "$W/elsewhere"
	printf 'keep me\n' >"$W/old/summary.txt"
	ln -s "$W/elsewhere" "$W/old/files"
	printf 'victim\n' >"$W/victim"
	mkdir "$W/old2" && ln -s "$W/victim" "$W/old2/summary.txt"
	[ "$mode" = rootless ] && chown -R cordon-test "$W/old" "$W/old2" "$W/elsewhere" "$W/victim"
	expect_rc 125 run --code "$T/arts.py" --out "$W/old"
	cp "$_out" "$T/r.json" && schema_ok result "$T/r.json"
	[ "$(field "$T/r.json" 'r["status"], r["error"]["details"]["where"], r["exitCode"]')" = \
		"('error', 'exec.harness.out', 0)" ] || die "$mode: DIR with the names: $(cat "$_out")"
	expect_out "artifact files/a.csv was not copied"
	[ "$(field "$T/r.json" 'sorted((a["path"], "copiedTo" in a, "copyError" in a) for a in r["artifacts"])')" = \
		"[('files/a.csv', False, True), ('files/b.csv', False, True), ('summary.txt', False, True)]" ] ||
		die "$mode: per-artifact outcome: $(cat "$_out")"
	[ "$(cat "$W/old/summary.txt")" = "keep me" ] || die "$mode: an existing file was replaced"
	[ -z "$(ls -A "$W/elsewhere")" ] || die "$mode: a linked directory was followed: $(ls -A "$W/elsewhere")"
	expect_rc 125 run --code "$T/arts.py" --out "$W/old2"
	cp "$_out" "$T/r.json" && schema_ok result "$T/r.json"
	[ "$(cat "$W/victim")" = victim ] || die "$mode: a symlink in DIR was followed"
	[ -L "$W/old2/summary.txt" ] || die "$mode: a symlink in DIR was replaced"
	# The others were still copied: only summary.txt failed.
	[ "$(field "$T/r.json" 'sorted((a["path"], "copiedTo" in a) for a in r["artifacts"])')" = \
		"[('files/a.csv', True), ('files/b.csv', True), ('summary.txt', False)]" ] ||
		die "$mode: one refused artifact stopped the others: $(cat "$_out")"
	pass "$mode: an existing file, a symlink to a file, a linked directory in DIR: none replaced or followed," \
		"exec.harness.out (exit 125), the other artifacts copied"

	# 3. A DIR that cannot be used is refused before the program runs.
	printf 'x' >"$W/file"; ln -s "$W/new" "$W/link"
	[ "$mode" = rootless ] && chown -h cordon-test "$W/file" "$W/link"
	for bad in file link missing/deeper; do
		expect_rc 125 run --code "$T/arts.py" --out "$W/$bad"
		cp "$_out" "$T/r.json" && schema_ok result "$T/r.json"
		[ "$(field "$T/r.json" 'r["error"]["details"]["where"], "stdout" in r, r["artifacts"] if "artifacts" in r else None')" = \
			"('exec.harness.out', False, None)" ] || die "$mode: --out $bad: $(cat "$_out")"
	done
	expect_out "--out $W/missing/deeper"
	pass "$mode: --out naming a file, a symlink or a path under a missing directory: exec.harness.out, nothing ran"

	# 4. What the program planted in out/ under declared names (a symlink
	# to /etc/passwd, a fifo) is a violation, never an artifact: not copied.
	expect_rc 1 run --code "$T/plant.py" --out "$W/planted"
	cp "$_out" "$T/r.json" && schema_ok result "$T/r.json"
	[ "$(field "$T/r.json" 'r["status"], sorted(v["code"] for v in r["violations"])')" = \
		"('failed', ['not_regular', 'symlink'])" ] || die "$mode: planted entries: $(cat "$_out")"
	check "$T/r.json" "$W/planted" "$owner" || die "$mode: planted: the artifacts: $(cat "$_out")"
	[ -e "$W/planted/files/link.csv" ] || [ -L "$W/planted/files/link.csv" ] || [ -e "$W/planted/files/fifo.csv" ] &&
		die "$mode: a planted link or fifo was copied"
	pass "$mode: a symlink and a fifo planted under declared names are violations and are not copied"
	rm -rf "$W"
done

expect_rc 0 "$CORDON" --help
expect_out "--out DIR"
pass "--help names --out"
