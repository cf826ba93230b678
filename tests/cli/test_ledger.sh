#!/bin/sh
# cordon ledger list|show|forget|forgotten: a run records a side-effect call;
# list and show find it; forget removes it with a row in the forget log; the
# next run with the same message id runs the tool again (the control: before
# forget, the same id was answered from the record and the tool did not
# run); a pending record whose supervisor is alive is refused without
# --force; bad arguments are usage errors (exit 2), a missing record exit 1.
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

# The tool: counts its executions by message id and answers the count.
cat >"$TD/count-tool" <<'EOF'
#!/bin/sh
cat >/dev/null
echo "$CORDON_MESSAGE_ID" >>"$1"
printf '{"runs": %s}\n' "$(grep -cx -- "$CORDON_MESSAGE_ID" "$1")"
EOF
chmod 755 "$TD/count-tool"
cat >"$T/tools.yaml" <<EOF
version: 1
tools:
  - id: t.count
    description: Count one execution per message id.
    params:
      item: { type: string, max_length: 16, required: true }
    side_effect: true
    timeout: 5s
    exec: [$TD/count-tool, $COUNT]
    run_as: supervisor           # it counts into the test's own 0700 directory
EOF
sed -e 's/^app: mail$/app: ledgertest/' -e '/^  outputs:/,/note.txt/d' \
	-e 's/^  reporter: { tools: \[mail.send\] }$/  a: { tools: [t.count] }/' \
	"$SRC/examples/mail/app.yaml" >"$T/app.yaml"
cat >"$T/prog.py" <<'EOF'
import json, sys
import cordon_tools
mid = open("/workspace/work/mid.txt").read().strip()
r = cordon_tools.tool_call("t.count", {"item": "x"}, message_id=mid)
json.dump({"answer": r}, open("/workspace/out/result.json", "w"))
EOF
chmod 644 "$T/tools.yaml" "$T/app.yaml" "$T/prog.py"
"$CORDONC" compile "$T/app.yaml" "$T/tools.yaml" -o "$T/p.cpol" >"$_out" 2>"$_err" || die "compile"
chmod 644 "$T/p.cpol"

# run MID: one run calling t.count with message id MID; prints its answer.
run() {
	echo "$1" >"$T/mid.txt"; chmod 644 "$T/mid.txt"
	"$CORDON" run --policy "$T/p.cpol" --code "$T/prog.py" --input "$T/mid.txt" --agent a --state-dir "$S" \
		>"$T/r.json" 2>"$T/r.err" || die "run $1: $(cat "$T/r.json" "$T/r.err")"
	$PY -c 'import json,sys; print(json.load(open(sys.argv[1]))["result"]["answer"]["runs"])' "$T/r.json"
}
runs() { grep -cx -- "$1" "$COUNT"; }
L="$CORDON ledger --state-dir $S"

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
