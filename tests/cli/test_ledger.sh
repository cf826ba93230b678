#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# cordon ledger list|show|forget|forgotten: a run records a side-effect call;
# list and show find it; forget removes it with a row in the forget log; the
# next run with the same message id runs the tool again (the control: before
# forget, the same id was answered from the record and the tool did not
# run); a pending record whose supervisor is alive is refused without
# --force; bad arguments are usage errors (exit 2), a missing record exit 1.
# Issue 15: a ledger emptied, deleted or rotted, and a mistyped --state-dir,
# are refused by the next run (the side effect does not run again) and
# found by `cordon ledger check`.
set -u
: "${BUILD:?}" "${SRC:?}"
. "$SRC/tests/cli/lib.sh"
PY=/usr/bin/python3

chmod 755 "$T"
mkdir "$T/tmp" && chmod 1777 "$T/tmp"
export TMPDIR="$T/tmp"
S="$T/state"
COUNT="$T/count.log"
# A tool's executable must sit where only root can write (StrictModes,
# docs/tools.md): not under the sticky, world-writable /tmp.
TD=$(mktemp -d -p /run cordon-ledger-test.XXXXXX) || die "mktemp in /run"
chmod 755 "$TD"
trap 'rm -rf "$T" "$TD"' EXIT

. "$SRC/tests/cli/ledger_fixture.sh"
# The same call, its refusal written out instead of raised.
cat >"$T/prog_err.py" <<'EOF'
import json
import cordon_tools
mid = open("/workspace/work/mid.txt").read().strip()
try:
    r = cordon_tools.tool_call("t.count", {"item": "x"}, message_id=mid)
except cordon_tools.ToolError as e:
    r = {"code": e.code, "message": e.message}
json.dump({"answer": r}, open("/workspace/out/result.json", "w"))
EOF
chmod 644 "$T/prog_err.py"

# run MID: one run calling t.count with message id MID; prints its answer.
run() {
	echo "$1" >"$T/mid.txt"; chmod 644 "$T/mid.txt"
	"$CORDON" run --policy "$T/p.cpol" --code "$T/prog.py" --input "$T/mid.txt" --agent a --state-dir "$S" \
		>"$T/r.json" 2>"$T/r.err" || die "run $1: $(cat "$T/r.json" "$T/r.err")"
	$PY -c 'import json,sys; print(json.load(open(sys.argv[1]))["result"]["answer"]["runs"])' "$T/r.json"
}
runs() { grep -cx -- "$1" "$COUNT"; }
# refused STATE_DIR MID: one run calling t.count with MID under STATE_DIR,
# a call the ledger must refuse; prints the refusal's message.
refused() {
	echo "$2" >"$T/mid.txt"; chmod 644 "$T/mid.txt"
	"$CORDON" run --policy "$T/p.cpol" --code "$T/prog_err.py" --input "$T/mid.txt" --agent a --state-dir "$1" \
		>"$T/r.json" 2>"$T/r.err" || die "run $2: $(cat "$T/r.json" "$T/r.err")"
	$PY -c '
import json, sys
a = json.load(open(sys.argv[1]))["result"]["answer"]
assert a.get("code") == "internal_error", a
print(a["message"])' "$T/r.json" || die "run $2 was not refused by the ledger: $(cat "$T/r.json")"
}
L="$CORDON ledger --state-dir $S"
# run_in STATE_DIR MID: run MID under another state directory.
run_in() { _s=$S; S=$1; run "$2"; S=$_s; }

# 0. No ledger yet: not found, and nothing created.
expect_rc 1 $L list; expect_err "no ledger in $S"
[ -e "$S" ] && die "list created the state directory"

# 1. A run records the side effect; the same id again is answered from the
# record without running the tool (the control for step 5).
[ "$(run m-1)" = 1 ] || die "first run"
[ "$(run m-1)" = 1 ] && [ "$(runs m-1)" = 1 ] || die "the repeat ran the tool ($(runs m-1) runs)"
pass "a run records m-1; its repeat is replayed"

# 2. list: text and JSON, filters.
expect_rc 0 $L list
expect_out "done     ledgertest t.count tenant= user= message=m-1 created="
expect_out " exec="
expect_rc 0 $L list --app ledgertest --tool t.count --state done --json
$PY -c '
import json, sys
v = json.load(open(sys.argv[1]))
assert len(v) == 1 and v[0]["messageId"] == "m-1" and v[0]["state"] == "done" and v[0]["execId"], v
assert "response" not in v[0], v' "$_out" || die "list --json: $(cat "$_out")"
expect_rc 0 $L list --state pending
[ -s "$_out" ] && die "list --state pending showed a done record"
expect_rc 0 $L list --app other
[ -s "$_out" ] && die "list --app other showed a record"
pass "list shows the record (text, --json, filters)"

# 3. show: the record and its recorded answer.
expect_rc 0 $L show ledgertest t.count m-1
expect_out "state: done"
expect_out "messageId: m-1"
expect_out '"runs":	1'
expect_rc 0 $L show --json ledgertest t.count m-1
$PY -c '
import json, sys
v = json.load(open(sys.argv[1]))
assert v["response"] == {"ok": True, "result": {"runs": 1}}, v' "$_out" || die "show --json: $(cat "$_out")"
expect_rc 1 $L show ledgertest t.count m-nope; expect_err "no record of message m-nope"
pass "show prints the record with its answer; a missing one exits 1"

# 4. forget: deleted, with a row in the forget log.
expect_rc 1 $L forget --reason "no such" ledgertest t.count m-nope
expect_rc 0 $L forget --reason "tool fixed, ticket 42" ledgertest t.count m-1
expect_out "forgot ledgertest t.count message m-1"
expect_out "was done"
expect_rc 0 $L list
[ -s "$_out" ] && die "the record is still listed: $(cat "$_out")"
expect_rc 0 $L forgotten --json
$PY -c '
import json, os, sys, time
v = json.load(open(sys.argv[1]))
assert len(v) == 1, v
r = v[0]
assert (r["app"], r["tool"], r["messageId"], r["state"], r["reason"], r["forced"]) == \
    ("ledgertest", "t.count", "m-1", "done", "tool fixed, ticket 42", False), r
assert r["uid"] == os.getuid() and abs(r["time"] - time.time()) < 120, r' "$_out" ||
	die "forget log: $(cat "$_out")"
expect_rc 0 $L forgotten; expect_out "uid=$(id -u) state=done ledgertest t.count tenant= user= message=m-1 reason=tool fixed, ticket 42"
pass "forget deletes the record and logs time, uid, key, state and reason"

# 5. The next run with the same id runs the tool again.
[ "$(run m-1)" = 2 ] && [ "$(runs m-1)" = 2 ] || die "after forget, m-1 did not run again"
pass "after forget the same message id runs the tool again"

# 6. A pending record whose owner is alive: refused without --force.  This
# shell stands in for a supervisor still running the tool.
$PY - "$S/ledger.sqlite3" "$$" <<'EOF' || die "cannot plant a pending record"
import sqlite3, sys
pid = int(sys.argv[2])
start = int(open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()[19])
boot = open("/proc/sys/kernel/random/boot_id").read().strip()
db = sqlite3.connect(sys.argv[1])
db.execute("INSERT INTO replay VALUES ('ledgertest','acme','ana','t.count','m-live','%s','pending',NULL,?,?,?,0,"
           "'e-live',1,1)" % ("0" * 64), (pid, start, boot))
db.commit()
EOF
expect_rc 0 $L list --state pending; expect_out "message=m-live"
expect_rc 1 $L forget --reason "stuck?" ledgertest t.count m-live; expect_err "--force"
expect_rc 0 $L show ledgertest t.count m-live; expect_out "owner: running"
expect_rc 0 $L forget --force --reason "operator checked: no mail went out" --tenant acme --user ana \
	ledgertest t.count m-live
expect_out "was pending"
expect_rc 0 $L forgotten --json
$PY -c '
import json, sys
v = json.load(open(sys.argv[1]))
assert [r["forced"] for r in v] == [False, True] and v[1]["tenant"] == "acme", v' "$_out" || die "forced row: $(cat "$_out")"
pass "a pending record with a live owner is refused without --force, forgotten with it"

# 7. Usage errors: exit 2.
expect_rc 2 "$CORDON" ledger
expect_rc 2 "$CORDON" ledger frob
expect_rc 2 $L forget ledgertest t.count m-1; expect_err "needs --reason"
expect_rc 2 $L forget --reason "" ledgertest t.count m-1
expect_rc 2 $L show ledgertest t.count
expect_rc 2 $L list extra
expect_rc 2 $L list --state maybe
expect_rc 2 $L list --reason x
expect_rc 2 $L show --force ledgertest t.count m-1
expect_rc 2 $L list --bogus
expect_rc 0 "$CORDON" ledger --help; expect_out "ledger forget"
pass "bad arguments exit 2; --help exits 0"

# 8. cordon ledger check: a sound ledger; usage; no ledger.
expect_rc 0 $L check; expect_out "ok: integrity check: ok"; expect_out "ledger.id matches)"
expect_out "ok: replay records: 1 (0 pending)"
expect_rc 2 $L check extra
expect_rc 2 $L check --json
expect_rc 1 "$CORDON" ledger --state-dir "$T/none" check; expect_err "no ledger in $T/none"
[ -e "$T/none" ] && die "check created a state directory"
pass "ledger check: ok on a sound ledger, exit 2 on bad arguments, 1 without a ledger"

# 9. Regression (issue 15): the ledger emptied, then deleted: every done id
# ran again.  Now the next run refuses the call (the tool does not run) and
# makes no new ledger; check reports it.
S2="$T/state2"
[ "$(run_in "$S2" e-1)" = 1 ] || die "first run in $S2"
: >"$S2/ledger.sqlite3"
msg=$(refused "$S2" e-1)
case "$msg" in *"ledger.sqlite3 is empty"*"ledger.id names ledger"*) ;; *) die "emptied: $msg" ;; esac
[ "$(runs e-1)" = 1 ] || die "emptied: e-1 ran again"
expect_rc 1 "$CORDON" ledger --state-dir "$S2" check; expect_out "problem: "; expect_out "is empty"
rm -f "$S2/ledger.sqlite3" "$S2/ledger.sqlite3-wal" "$S2/ledger.sqlite3-shm"
msg=$(refused "$S2" e-1)
case "$msg" in *"ledger.sqlite3 is missing"*) ;; *) die "deleted: $msg" ;; esac
[ "$(runs e-1)" = 1 ] && [ ! -e "$S2/ledger.sqlite3" ] || die "deleted: e-1 ran again, or a ledger was made"
expect_rc 1 "$CORDON" ledger --state-dir "$S2" list; expect_err "is missing"
expect_rc 1 "$CORDON" ledger --state-dir "$S2" check; expect_out "problem: "; expect_out "is missing"
pass "an emptied or deleted ledger is refused: the side effect does not run again"

# 10. Regression (issue 15): a mistyped --state-dir (its parent missing)
# made the parents and a new ledger, and the id ran again there.
msg=$(refused "$T/typo/state" m-1)
case "$msg" in *"its parent does not exist"*) ;; *) die "mistyped state dir: $msg" ;; esac
[ -e "$T/typo" ] && die "the mistyped state directory's parent was created"
[ "$(runs m-1)" = 2 ] || die "m-1 ran under the mistyped state directory"
pass "a --state-dir whose parent is missing is refused; nothing is created"

# 11. Regression (issue 15): one rotted row (a flipped bit in a record's
# key) made its id run again.  The next run refuses the ledger and check
# reports SQLite's finding.
S3="$T/state3"
[ "$(run_in "$S3" r-0)" = 1 ] || die "first run in $S3"
$PY - "$S3/ledger.sqlite3" <<'EOF' || die "cannot rot a row"
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
for i in range(1, 50):
    db.execute("INSERT INTO replay VALUES ('ledgertest', '', '', 't.count', ?, ?, 'done', '{\"ok\":true}',"
               " 1, 1, '', 0, 'e', 1, 1)", ("rot-%04d" % i, "0" * 64))
db.commit()
db.close()  # the last close checkpoints: every row is in the file
data = bytearray(open(sys.argv[1], "rb").read())
key = b"rot-0017"
at = data.find(key)
assert at > 0
while at >= 0:
    data[at + len(key) - 1] ^= 1
    at = data.find(key, at + 1)
open(sys.argv[1], "r+b").write(data)
EOF
expect_rc 1 "$CORDON" ledger --state-dir "$S3" check
expect_out "problem: integrity: row not in PRIMARY KEY order for replay"
msg=$(refused "$S3" rot-0017)
case "$msg" in *"failed its integrity check"*) ;; *) die "rotted: $msg" ;; esac
grep -qx "rot-0017" "$COUNT" && die "rotted: rot-0017 ran"
pass "a rotted row is found by ledger check and refused by the next run"
