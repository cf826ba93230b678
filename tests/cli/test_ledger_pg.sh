#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# cordon run|ledger --ledger URL: the ledger on PostgreSQL (docs/ledger.md,
# "PostgreSQL"), end to end through the CLI, against a private server that
# tests/lib/pgtmp starts for this test and stops at its end.
#   - --ledger with --state-dir, or a value that is not a URL: usage error;
#   - an unreachable server: a harness error (exit 125, stage ledger) naming
#     the server and never the URL's password, and the tool does not run;
#     serve does not start;
#   - a side-effect call is recorded on the server: its repeat in another
#     process is replayed without running the tool, a state directory does
#     not see it, cordon ledger list/check --ledger find it;
#   - forget --ledger releases it (the tool runs again), and a server
#     restarted between runs serves the next run.
# The library's semantics on PostgreSQL are tests/unit/test_ledger.c's
# (run on both back ends); this test is the plumbing of the flag.
set -u
: "${BUILD:?}" "${SRC:?}"
. "$SRC/tests/cli/lib.sh"
PY=/usr/bin/python3
PGTMP="$SRC/tests/lib/pgtmp"

[ "$(id -u)" -eq 0 ] || { pass "skipped: needs root (the server runs as cordon-test)"; exit 0; }
chmod 755 "$T"
mkdir "$T/tmp" && chmod 1777 "$T/tmp"
export TMPDIR="$T/tmp"
S="$T/state"
COUNT="$T/count.log"
TD=$(mktemp -d -p /run cordon-ledger-pg-test.XXXXXX) || die "mktemp in /run"
chmod 755 "$TD"
PGD="$T/pg"
trap '"$PGTMP" stop "$PGD" >/dev/null 2>&1; rm -rf "$T" "$TD"' EXIT
URL=$("$PGTMP" start "$PGD" 2>"$T/pgtmp.err") || { cat "$T/pgtmp.err"; die "pgtmp start"; }

. "$SRC/tests/cli/ledger_fixture.sh"

# run MID [WHERE...]: one run calling t.count with MID, on the server unless
# WHERE says otherwise; prints its answer.
run() {
	_m=$1; shift
	[ $# -gt 0 ] || set -- --ledger "$URL"
	echo "$_m" >"$T/mid.txt"; chmod 644 "$T/mid.txt"
	"$CORDON" run --policy "$T/p.cpol" --code "$T/prog.py" --input "$T/mid.txt" --agent a "$@" \
		>"$T/r.json" 2>"$T/r.err" || die "run $_m: $(cat "$T/r.json" "$T/r.err")"
	$PY -c 'import json,sys; print(json.load(open(sys.argv[1]))["result"]["answer"]["runs"])' "$T/r.json"
}
runs() { grep -cx -- "$1" "$COUNT"; }
L="$CORDON ledger --ledger $URL"

# 1. Options: both places, or a value that is not a URL, are usage errors.
expect_rc 2 "$CORDON" run --policy "$T/p.cpol" --code "$T/prog.py" --ledger "$URL" --state-dir "$S"
expect_err "exclude each other"
expect_rc 2 "$CORDON" run --policy "$T/p.cpol" --code "$T/prog.py" --ledger "$S"
expect_err "postgresql://"
expect_rc 2 $L list --state-dir "$S"
expect_rc 2 "$CORDON" serve --policies "$T" --socket "$T/s.sock" --ledger "$S"
expect_err "postgresql://"
[ -e "$S" ] && die "a refused --ledger made the state directory"
pass "--ledger with --state-dir, or not a URL: usage errors"

# 2. An unreachable server: harness error at stage ledger, naming the
# server, never the password; the tool never ran; no local ledger made.
echo m-0 >"$T/mid.txt"; chmod 644 "$T/mid.txt"
BAD="postgresql://cordon:pw-$$-secret@/cordon?host=$T/nowhere"
expect_rc 125 "$CORDON" run --policy "$T/p.cpol" --code "$T/prog.py" --input "$T/mid.txt" --agent a --ledger "$BAD"
$PY -c '
import json, sys
r = json.load(open(sys.argv[1]))
e = r["error"]
assert r["status"] == "error" and e["details"]["where"] == "exec.harness.ledger", r
assert sys.argv[2] + "/nowhere" in e["message"], e' "$_out" "$T" || die "unreachable server: $(cat "$_out")"
grep -q "pw-$$-secret" "$_out" "$_err" && die "the URL's password was printed"
[ -e "$COUNT" ] && die "the tool ran without a ledger"
expect_rc 1 "$CORDON" ledger list --ledger "$BAD"
grep -q "pw-$$-secret" "$_out" "$_err" && die "ledger list printed the URL's password"
expect_err "$T/nowhere"
# serve opens the ledger at start: it does not start, and says why.
mkdir "$T/pols"
expect_rc 1 "$CORDON" serve --policies "$T/pols" --socket "$T/s.sock" --ledger "$BAD"
expect_err "cannot start"
expect_err "$T/nowhere"
grep -q "pw-$$-secret" "$_out" "$_err" && die "serve printed the URL's password"
[ -e "$T/s.sock" ] && die "serve listened without its ledger"
pass "an unreachable server is a harness error naming it, not its password; the tool did not run; serve does not start"

# 3. Recorded on the server: the repeat (another process) is replayed.
[ "$(run m-1)" = 1 ] || die "first run"
[ "$(run m-1)" = 1 ] && [ "$(runs m-1)" = 1 ] || die "the repeat ran the tool ($(runs m-1) runs)"
# The control: a state directory is another ledger, which has no record.
mkdir -m 700 "$S"
[ "$(run m-1 --state-dir "$S")" = 2 ] || die "the state directory's ledger saw the server's record"
pass "a run records m-1 on the server; its repeat is replayed, a state directory's ledger is another"

# 4. cordon ledger list / show / check --ledger.
expect_rc 0 $L list
# Library code prints nothing (a server's NOTICE included): stderr is the CLI's.
[ -s "$_err" ] && die "ledger list printed on stderr: $(cat "$_err")"
expect_out "done     ledgertest t.count tenant= user= message=m-1 created="
expect_rc 0 $L list --json
$PY -c '
import json, sys
v = json.load(open(sys.argv[1]))
assert len(v) == 1 and v[0]["messageId"] == "m-1" and v[0]["state"] == "done", v' "$_out" ||
	die "list --json: $(cat "$_out")"
expect_rc 0 $L show ledgertest t.count m-1
grep -Eq '"runs":[[:space:]]*1$' "$_out" || die "show: not the recorded answer: $(cat "$_out")"
expect_rc 0 $L check
expect_out "PostgreSQL"
pass "ledger list, show and check --ledger read the server"

# 5. forget --ledger releases the record: the tool runs again.
expect_rc 0 $L forget --reason "pg test" ledgertest t.count m-1
expect_rc 1 $L show ledgertest t.count m-1
[ "$(run m-1)" = 3 ] || die "after forget the tool did not run again ($(runs m-1) runs)"
pass "forget --ledger releases the record; the next call runs the tool"

# 6. The server restarted between runs: the next run is served, and the
# record written before the restart still answers.
"$PGTMP" restart "$PGD" 2>"$T/pgtmp.err" || { cat "$T/pgtmp.err"; die "pgtmp restart"; }
[ "$(run m-1)" = 3 ] && [ "$(runs m-1)" = 3 ] || die "after a restart the record was lost ($(runs m-1) runs)"
[ "$(run m-2)" = 1 ] || die "after a restart a new call failed"
pass "a restarted server keeps its records and serves the next run"
