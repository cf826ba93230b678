#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The examples (examples/*): every one compiles; scripts/install-examples
# puts a tool at every exec path the inventories name; each tool, run the
# way the supervisor runs it (params on stdin, an environment from
# scratch), answers what it should and refuses odd input with an error JSON
# and exit 2, never a traceback; mail-send delivers into a Maildir and
# through SMTP (a fake server started here) and never lets its secret out;
# the report example runs under cordon run and its artifact and result
# match totals worked out here with awk.  Expected answers are computed in
# this file (numpy, fractions, awk), not pasted.
set -u
: "${BUILD:?}" "${SRC:?}"
. "$SRC/tests/cli/lib.sh"
PY=/usr/bin/python3
SECRET="t3st-secret-$$-do-not-leak"

# ans EXPR: a Python expression over the last answer a (stdout as JSON).
ans() { $PY -c 'import json,sys; a=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$_out" "$1"; }

# tool RC TOOL [ARGS...] <params: run an installed tool as the supervisor
# does.  TOOL_ENV adds NAME=value words (the message id, the secret); it is
# set on a line of its own (an assignment before a function call is not
# sure to reach the commands inside in every sh).
tool() {
	want=$1; t=$2; shift 2
	# shellcheck disable=SC2086
	expect_rc "$want" env -i PATH=/usr/bin:/bin LANG=C.UTF-8 CORDON_TOOL="$TOOL_ID" CORDON_EXECUTION_ID=exec-0001 \
		CORDON_APP=example CORDON_TENANT=t1 CORDON_USER=u1 CORDON_SESSION=s1 ${TOOL_ENV:-} "$R$LX/$t" "$@"
}

# refused TOOL CODE [ARGS...] <params: exit 2, one error JSON with CODE, no traceback.
refused() {
	t=$1; code=$2; shift 2
	tool 2 "$t" "$@"
	[ "$(ans 'a["error"]["code"]')" = "$code" ] || die "$t: want error $code, got: $(cat "$_out")"
	grep -q Traceback "$_err" "$_out" && die "$t: a traceback: $(cat "$_err")"
	[ "$(wc -l <"$_out")" -eq 1 ] || die "$t: more than one line answered"
}

# 1. Every example compiles, and every program is valid Python.
n=0
for app in "$SRC"/examples/*/app.yaml; do
	ex=$(basename "$(dirname "$app")")
	# reference/ shows every key and runs nothing (test_reference.sh).
	[ "$ex" = reference ] && continue
	prog="$(dirname "$app")/user_code.py"
	# notebook/'s cells are in its client program (its README).
	[ -e "$prog" ] || prog="$(dirname "$app")/notebook.py"
	expect_rc 0 "$CORDONC" compile "$app" "$(dirname "$app")/tools.yaml" -o "$T/$ex.cpol"
	expect_rc 0 $PY -c 'import ast,sys; ast.parse(open(sys.argv[1]).read(), sys.argv[1])' "$prog"
	n=$((n + 1))
done
[ "$n" -ge 3 ] || die "only $n examples found"
pass "$n examples compile; their programs parse"

# 2. The install: a tool at each exec path of each compiled policy, 0755,
# root's when installed by root; nothing written into it by running them.
R="$T/root"; LX=/usr/local/libexec/cordon/examples
expect_rc 0 env DESTDIR="$R" sh "$SRC/scripts/install-examples"
for ex in "$T"/*.cpol; do
	expect_rc 0 "$CORDONC" inspect --json "$ex"
	for p in $(ans '" ".join(t["exec"][0] for t in a["tools"])'); do
		case $p in "$LX"/*) ;; *) die "$(basename "$ex"): exec path $p is not under $LX" ;; esac
		[ -f "$R$p" ] && [ -x "$R$p" ] || die "$(basename "$ex"): no tool installed at $p"
		[ "$(stat -c %a "$R$p")" = 755 ] || die "$p: mode $(stat -c %a "$R$p")"
		[ "$(id -u)" -ne 0 ] || [ "$(stat -c %U:%G "$R$p")" = root:root ] || die "$p: not root's"
	done
done
for t in cafe/calc-check cafe/calc-solve mail/mail-send; do
	[ -x "$R$LX/$t" ] || die "not installed: $t"
done
pass "install-examples: every exec path of every example is an installed tool"

# 3. calc-solve and calc-check on the café receipts.  The expected prices
# come from numpy, rounded to cents as the café program rounds them.
TOOL_ID=calc.solve
$PY - "$SRC/examples/cafe/receipts.json" "$T" <<'PYEOF' || die "cannot build the calc params"
import json, sys
import numpy as np
data = json.load(open(sys.argv[1]))
items = data["items"]
eqs = [{"coefficients": [r["bought"].get(i, 0) for i in items], "equals": r["paid"]} for r in data["receipts"]]
x = np.linalg.solve(np.array([e["coefficients"] for e in eqs], float), np.array([e["equals"] for e in eqs]))
base = {"unknowns": items, "equations": eqs}
def write(name, values):
    json.dump(dict(base, solution=[{"name": n, "value": v} for n, v in zip(items, values)]),
              open(f"{sys.argv[2]}/{name}.json", "w"))
json.dump(base, open(f"{sys.argv[2]}/system.json", "w"))
right = [round(float(v), 2) for v in x]
write("right", right)
write("wrong", [right[0], right[1], right[2] + 0.01])
write("close", [right[0] + 1e-12, right[1], right[2]])   # residuals up to 2e-12: within 1e-9
write("far", [right[0] + 1e-8, right[1], right[2]])      # 2e-8: not
write("misnamed", right)
d = json.load(open(f"{sys.argv[2]}/misnamed.json")); d["solution"][0]["name"] = "tea"
json.dump(d, open(f"{sys.argv[2]}/misnamed.json", "w"))
json.dump(dict(zip(items, (float(v) for v in x))), open(f"{sys.argv[2]}/numpy.json", "w"))
PYEOF
tool 0 cafe/calc-solve <"$T/system.json"
cp "$_out" "$T/solved.json"
$PY - "$T/solved.json" "$T/system.json" "$T/numpy.json" <<'PYEOF' || die "calc-solve: $(cat "$T/solved.json")"
import json, sys
from fractions import Fraction
a, s, ref = (json.load(open(p)) for p in sys.argv[1:])
assert a["unique"] is True, a
exact = {k: Fraction(v) for k, v in a["exact"].items()}
for e in s["equations"]:   # substituted back, exactly, against the decimal text of the receipts
    lhs = sum(Fraction(str(c)) * exact[u] for c, u in zip(e["coefficients"], s["unknowns"]))
    assert lhs == Fraction(str(e["equals"])), (e, lhs)
for u in s["unknowns"]:
    assert abs(a["solution"][u] - ref[u]) < 1e-9 and float(exact[u]) == a["solution"][u], u
PYEOF
printf '{"unknowns":["a","b"],"equations":[{"coefficients":[1,1],"equals":1},{"coefficients":[2,2],"equals":3}]}' >"$T/p"
tool 0 cafe/calc-solve <"$T/p"; [ "$(ans 'a["unique"], a["reason"]')" = "(False, 'inconsistent')" ] || die "inconsistent: $(cat "$_out")"
printf '{"unknowns":["a","b"],"equations":[{"coefficients":[1,1],"equals":1},{"coefficients":[2,2],"equals":2}]}' >"$T/p"
tool 0 cafe/calc-solve <"$T/p"; [ "$(ans 'a["unique"], a["reason"]')" = "(False, 'underdetermined')" ] || die "underdetermined"
# Overdetermined but consistent: still one answer.
printf '{"unknowns":["a"],"equations":[{"coefficients":[3],"equals":1},{"coefficients":[6],"equals":2}]}' >"$T/p"
tool 0 cafe/calc-solve <"$T/p"; [ "$(ans 'a["exact"]["a"]')" = 1/3 ] || die "overdetermined: $(cat "$_out")"
pass "calc-solve: the receipts solved exactly (substituted back), singular systems told apart"

TOOL_ID=calc.check
tool 0 cafe/calc-check <"$T/right.json"
[ "$(ans 'a["ok"], a["maxResidual"], a["residuals"]')" = "(True, 0.0, [0.0, 0.0, 0.0])" ] ||
	die "the true solution is not ok: $(cat "$_out")"
tool 0 cafe/calc-check <"$T/wrong.json"
$PY - "$_out" "$T/wrong.json" <<'PYEOF' || die "a wrong solution: $(cat "$_out")"
import json, sys
from fractions import Fraction
a, p = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
v = {s["name"]: Fraction(str(s["value"])) for s in p["solution"]}
want = [float(sum(Fraction(str(c)) * v[u] for c, u in zip(e["coefficients"], p["unknowns"])) - Fraction(str(e["equals"])))
        for e in p["equations"]]
assert a["ok"] is False and a["residuals"] == want and a["maxResidual"] == max(map(abs, want)) > 0, (a, want)
PYEOF
tool 0 cafe/calc-check <"$T/close.json"; [ "$(ans 'a["ok"]')" = True ] || die "2e-12 off is within tolerance"
tool 0 cafe/calc-check <"$T/far.json"; [ "$(ans 'a["ok"]')" = False ] || die "2e-8 off is not within tolerance"
refused cafe/calc-check invalid_params <"$T/misnamed.json"
pass "calc-check: the true solution ok, a wrong one not (residuals exact), the 1e-9 tolerance both ways"

# 4. Odd input: an error JSON and exit 2 from each tool, no traceback.
i=0
while IFS= read -r line; do
	i=$((i + 1)); printf '%s' "$line" >"$T/bad$i"
	refused cafe/calc-solve invalid_params <"$T/bad$i"
done <<'EOF'
not json
[1, 2]
"a string"

{"unknowns": ["a"], "equations": [{"coefficients": [1], "equals": 1}], "unknowns": ["b"]}
{"unknowns": ["a"], "equations": [{"coefficients": [NaN], "equals": 1}]}
{"unknowns": ["a"], "equations": [{"coefficients": [1e999], "equals": 1}]}
{"unknowns": ["a"], "equations": [{"coefficients": [1], "equals": 1e-400}]}
{"unknowns": ["a"], "equations": [{"coefficients": ["1"], "equals": 1}]}
{"unknowns": ["a"], "equations": [{"coefficients": [1], "equals": true}]}
{"unknowns": ["a"], "equations": [{"coefficients": [1, 2], "equals": 1}]}
{"unknowns": ["a", "a"], "equations": [{"coefficients": [1, 2], "equals": 1}]}
{"unknowns": ["a"], "equations": [{"coefficients": [1], "equals": 1, "extra": 0}]}
{"unknowns": ["a"], "equations": [{"coefficients": [2000000], "equals": 1}]}
{"unknowns": ["a"], "equations": []}
{"unknowns": [], "equations": [{"coefficients": [], "equals": 1}]}
{"unknowns": ["a"]}
{"unknowns": [1], "equations": [{"coefficients": [1], "equals": 1}]}
{"unknowns": ["a"], "equations": [{"coefficients": [1], "equals": 1}], "solution": []}
EOF
$PY -c 'print("[" * 100000)' >"$T/deep"; refused cafe/calc-solve invalid_params <"$T/deep"
printf '{"unknowns": ["\377"]}' >"$T/utf8"; refused cafe/calc-solve invalid_params <"$T/utf8"
$PY -c 'print("{\"unknowns\": [\"a\"], \"equations\": [{\"coefficients\": [" + "9" * 5000 + "], \"equals\": 1}]}")' \
	>"$T/bigint"
refused cafe/calc-solve invalid_params <"$T/bigint"
head -c 1100000 /dev/zero | tr '\0' ' ' >"$T/huge"; refused cafe/calc-check invalid_params <"$T/huge"
refused cafe/calc-check invalid_params <"$T/system.json"          # no solution
refused cafe/calc-solve bad_arguments --frobnicate <"$T/system.json"
pass "calc tools: $((i + 6)) kinds of odd input refused in JSON, exit 2, no traceback"

# 5. mail-send into a Maildir that does not exist yet.
TOOL_ID=mail.send
TOOL_ENV=
MD="$T/spool/box/outbox"
SENDARGS="--from reports@example.org --maildir $MD"
printf '{"to": "manager@example.org", "subject": "Weekly café note", "body": "Covers: 996\\nBusiest: Sat\\n", "priority": "high"}' \
	>"$T/mail.json"
TOOL_ENV="CORDON_MESSAGE_ID=weekly-1 SMTP_PASSWORD=$SECRET"
# shellcheck disable=SC2086
tool 0 mail/mail-send $SENDARGS <"$T/mail.json"
cp "$_out" "$T/sent1.json"
id1=$(ans 'a["messageId"]')
[ "$(ans 'a["delivered"], a["via"]')" = "(True, 'maildir')" ] || die "mail-send: $(cat "$_out")"
grep -qF "$SECRET" "$_out" "$_err" && die "mail-send printed its secret"
[ "$(ls "$MD/new" | wc -l)" -eq 1 ] && [ -z "$(ls -A "$MD/tmp")" ] && [ -d "$MD/cur" ] ||
	die "want one message in new/, none in tmp/: $(ls -R "$MD")"
for d in "$T/spool" "$T/spool/box" "$MD" "$MD/new" "$MD/tmp" "$MD/cur"; do
	[ "$(stat -c %a "$d")" = 700 ] || die "$d: mode $(stat -c %a "$d"), want 700"
done
[ "$(stat -c %a "$MD/new/"*)" = 600 ] || die "message mode $(stat -c %a "$MD/new/"*)"
fp=$(printf '%s' "$SECRET" | sha256sum | cut -c1-16)
$PY - "$MD/new/"* "$T/sent1.json" "$T/mail.json" "$fp" <<'PYEOF' || die "the delivered message"
import email, email.policy, json, sys
m = email.message_from_binary_file(open(sys.argv[1], "rb"), policy=email.policy.default)
a, p, fp = json.load(open(sys.argv[2])), json.load(open(sys.argv[3])), sys.argv[4]
assert m["From"] == "reports@example.org" and m["To"] == p["to"] and m["Subject"] == p["subject"], dict(m)
assert m["Message-ID"] == a["messageId"] and a["messageId"].endswith(".cordon@example.org>"), (m["Message-ID"], a)
assert m["X-Cordon-Execution"] == "exec-0001" and m["X-Cordon-Secret-Fingerprint"] == fp, dict(m)
assert m["X-Priority"].startswith("1") and m["Date"] is not None, dict(m)
assert m.get_content() == p["body"], m.get_content()
PYEOF
grep -rqF "$SECRET" "$T/spool" && die "the secret is in the maildir"
# The same message id gives the same Message-ID (a retried delivery is
# recognisable); another id, or none, a different one.
TOOL_ENV="CORDON_MESSAGE_ID=weekly-1"
# shellcheck disable=SC2086
tool 0 mail/mail-send $SENDARGS <"$T/mail.json"
[ "$(ans 'a["messageId"]')" = "$id1" ] || die "same message id, different Message-ID"
grep -l 'X-Cordon-Secret-Fingerprint: none' "$MD/new/"* >/dev/null || die "without SMTP_PASSWORD the fingerprint is not none"
TOOL_ENV="CORDON_MESSAGE_ID=weekly-2"
# shellcheck disable=SC2086
tool 0 mail/mail-send $SENDARGS <"$T/mail.json"
[ "$(ans 'a["messageId"]')" != "$id1" ] || die "another message id, the same Message-ID"
# Another tenant's call with the same message id is another mail (the
# ledger keeps their replay records apart too).
TOOL_ENV="CORDON_MESSAGE_ID=weekly-1 CORDON_TENANT=t2"
# shellcheck disable=SC2086
tool 0 mail/mail-send $SENDARGS <"$T/mail.json"
[ "$(ans 'a["messageId"]')" != "$id1" ] || die "another tenant, the same Message-ID"
TOOL_ENV=
# shellcheck disable=SC2086
tool 0 mail/mail-send $SENDARGS <"$T/mail.json"
[ "$(ans 'a["messageId"]')" != "$id1" ] || die "no message id, the same Message-ID"
[ "$(ls "$MD/new" | wc -l)" -eq 5 ] || die "want 5 messages"
pass "mail-send: Maildir delivery, headers, modes, secret fingerprint and no secret text, Message-ID from the message id"

# Unsafe maildirs are refused (exit 1), and nothing lands behind a link.
mkdir -p "$T/elsewhere" && ln -s "$T/elsewhere" "$T/link"
tool 1 mail/mail-send --from reports@example.org --maildir "$T/link/outbox" <"$T/mail.json"
[ "$(ans 'a["error"]["code"]')" = failed ] && [ -z "$(ls -A "$T/elsewhere")" ] || die "maildir through a link"
mkdir -m 0777 "$T/open" && chmod 0777 "$T/open"
tool 1 mail/mail-send --from reports@example.org --maildir "$T/open/outbox" <"$T/mail.json"
[ -e "$T/open/outbox" ] && die "maildir under a world-writable directory"
refused mail/mail-send bad_arguments --from reports@example.org --maildir relative/box <"$T/mail.json"
refused mail/mail-send bad_arguments --from reports@example.org --maildir "$T/a/../b" <"$T/mail.json"
refused mail/mail-send bad_arguments --from reports@example.org <"$T/mail.json"
refused mail/mail-send bad_arguments --from 'x@y.z, w@v.u' --maildir "$MD" <"$T/mail.json"
refused mail/mail-send bad_arguments --from reports@example.org --smtp nohostport <"$T/mail.json"
i=0
while IFS= read -r line; do
	i=$((i + 1)); printf '%s' "$line" >"$T/badmail$i"
	# shellcheck disable=SC2086
	refused mail/mail-send invalid_params $SENDARGS <"$T/badmail$i"
done <<'EOF'
{"to": "a@example.org\r\nBcc: x@evil.test", "subject": "s", "body": "b"}
{"to": "a@example.org, x@evil.test", "subject": "s", "body": "b"}
{"to": "Anna <a@example.org>", "subject": "s", "body": "b"}
{"to": "a@example.org", "subject": "s\nBcc: x@evil.test", "body": "b"}
{"to": "a@example.org", "subject": "s\u2028Bcc: x@evil.test", "body": "b"}
{"to": "a@example.org", "subject": "", "body": "b"}
{"to": "a@example.org", "subject": "s", "body": "b\u0000"}
{"to": "a@example.org", "subject": "s", "body": "\ud800"}
{"to": "a@example.org", "subject": "s", "body": 5}
{"to": "a@example.org", "subject": "s", "body": "b", "priority": "urgent"}
{"to": "a@example.org", "subject": "s", "body": "b", "cc": "x@evil.test"}
{"to": "a@example.org", "subject": "s"}
EOF
$PY -c 'import json; print(json.dumps({"to": "a@example.org", "subject": "s", "body": "é" * 40000}))' >"$T/longbody"
# shellcheck disable=SC2086
refused mail/mail-send invalid_params $SENDARGS <"$T/longbody"
[ "$(ls "$MD/new" | wc -l)" -eq 5 ] || die "a refused call delivered something"
pass "mail-send: unsafe maildirs, bad arguments and $((i + 1)) kinds of bad params refused, nothing delivered"

# 6. mail-send --smtp against a fake server that records what it is told.
cat >"$T/smtpd.py" <<'PYEOF'
import base64, json, os, socketserver, sys
out, conns = sys.argv[1], int(sys.argv[2])
class Session(socketserver.StreamRequestHandler):
    def handle(self):
        rec = {"auth": None, "mailFrom": None, "rcpt": [], "data": None}
        say = lambda s: self.wfile.write(s.encode() + b"\r\n")
        say("220 fake ESMTP")
        while True:
            line = self.rfile.readline(65536).decode("utf-8", "replace").rstrip("\r\n")
            verb = line.split(" ", 1)[0].upper()
            if verb == "EHLO":
                say("250-fake"); say("250-AUTH PLAIN"); say("250 8BITMIME")
            elif verb == "AUTH":
                mech, resp = line.split(" ")[1:3]
                _, user, password = base64.b64decode(resp).decode().split("\0")
                rec["auth"] = {"mechanism": mech, "user": user, "password": password}
                say("235 ok")
            elif verb == "MAIL":
                rec["mailFrom"] = line[10:].split(" ")[0]; say("250 ok")
            elif verb == "RCPT":
                rec["rcpt"].append(line[8:]); say("250 ok")
            elif verb == "DATA":
                say("354 go on")
                data = []
                while (l := self.rfile.readline(1 << 20)) not in (b".\r\n", b""):
                    data.append(l)
                rec["data"] = b"".join(data).decode("utf-8", "replace"); say("250 queued")
            elif verb in ("QUIT", ""):
                say("221 bye"); break
            else:
                say("502 what")
        with open(out, "a") as f:
            f.write(json.dumps(rec) + "\n")
srv = socketserver.TCPServer(("127.0.0.1", 0), Session)
srv.timeout = 20
with open(out + ".tmp", "w") as f:
    f.write(str(srv.server_address[1]))
os.rename(out + ".tmp", out + ".port")
for _ in range(conns):
    srv.handle_request()
PYEOF
$PY "$T/smtpd.py" "$T/smtp.jsonl" 2 &
srv=$!
k=0; while [ ! -s "$T/smtp.jsonl.port" ] && [ $k -lt 50 ]; do sleep 0.1; k=$((k + 1)); done
[ -s "$T/smtp.jsonl.port" ] || { kill "$srv"; die "the fake SMTP server did not start"; }
port=$(cat "$T/smtp.jsonl.port")
TOOL_ENV="CORDON_MESSAGE_ID=weekly-1 SMTP_PASSWORD=$SECRET"
tool 0 mail/mail-send --from reports@example.org --smtp "127.0.0.1:$port" <"$T/mail.json"
[ "$(ans 'a["delivered"], a["via"]')" = "(True, 'smtp')" ] || { kill "$srv"; die "smtp: $(cat "$_out")"; }
[ "$(ans 'a["messageId"]')" = "$id1" ] || { kill "$srv"; die "smtp: Message-ID differs from the maildir's"; }
grep -qF "$SECRET" "$_out" "$_err" && { kill "$srv"; die "mail-send --smtp printed its secret"; }
TOOL_ENV=
tool 0 mail/mail-send --from reports@example.org --smtp "127.0.0.1:$port" <"$T/mail.json"   # no secret: no AUTH
wait "$srv" || die "the fake SMTP server failed"
$PY - "$T/smtp.jsonl" "$SECRET" "$id1" <<'PYEOF' || die "what the SMTP server saw: $(cat "$T/smtp.jsonl")"
import email, email.policy, json, sys
first, second = (json.loads(l) for l in open(sys.argv[1]))
secret, msgid = sys.argv[2], sys.argv[3]
assert first["auth"] == {"mechanism": "PLAIN", "user": "reports@example.org", "password": secret}, first["auth"]
assert first["mailFrom"] == "<reports@example.org>" and first["rcpt"] == ["<manager@example.org>"], first
m = email.message_from_string(first["data"], policy=email.policy.default)
assert m["To"] == "manager@example.org" and m["Subject"] == "Weekly café note" and m["Message-ID"] == msgid, dict(m)
assert "X-Cordon-Secret-Fingerprint" not in m and secret not in first["data"], first["data"]
assert second["auth"] is None and second["data"] is not None, second
PYEOF
# A password is not sent in the clear beyond loopback (refused before any connection).
TOOL_ENV="SMTP_PASSWORD=$SECRET"
tool 1 mail/mail-send --from reports@example.org --smtp 192.0.2.1:25 <"$T/mail.json"
expect_out "--starttls"
pass "mail-send --smtp: AUTH with the secret, DATA as built, no fingerprint on the wire, no clear-text password off loopback"

# Running tools wrote nothing into the install or the source tree.
[ -z "$(find "$R" "$SRC/examples" -name __pycache__)" ] || die "a __pycache__ was written"
# A tool also runs from the source tree (it finds examples/lib there).
expect_rc 0 "$SRC/examples/cafe/tools/calc-solve" <"$T/system.json"

# 7. The report example under cordon run: the artifact and the result
# against totals worked out here with awk, in cents.
mkdir "$T/report" && cp "$SRC/examples/report/user_code.py" "$SRC/examples/report/sales.csv" "$T/report/"
chmod 755 "$T" "$T/report" && chmod 644 "$T/report/"* "$T/report.cpol"
TMPDIR_RUN=$(mktemp -d "$T/tmp.XXXXXX"); chmod 1777 "$TMPDIR_RUN"
rd="$TMPDIR_RUN/run"
expect_rc 0 env TMPDIR="$TMPDIR_RUN" "$CORDON" run --policy "$T/report.cpol" --code "$T/report/user_code.py" \
	--input "$T/report/sales.csv" --run-dir "$rd"
cp "$_out" "$T/r.json"
awk -F, '
	NR == 1 { next }
	split($5, p, ".") != 2 || length(p[2]) != 2 { bad = 1; exit }   # prices are written with cents
	{ c = $4 * (p[1] * 100 + p[2]); u[$2] += $4; r[$2] += c; U += $4; C += c }
	END {
		if (bad) exit 1
		for (k in u) printf "%s,%d,%d.%02d\n", k, u[k], r[k] / 100, r[k] % 100 | "sort"
		close("sort"); printf "total,%d,%d.%02d\n", U, C / 100, C % 100
	}' "$T/report/sales.csv" >"$T/want.csv" || die "sales.csv has a price without cents"
sed -i '1i region,units,revenue' "$T/want.csv"
cmp -s "$rd/out/files/report.csv" "$T/want.csv" || die "report.csv: $(diff "$rd/out/files/report.csv" "$T/want.csv")"
$PY - "$T/r.json" "$T/want.csv" "$rd/out/files/report.csv" "$(($(wc -l <"$T/report/sales.csv") - 1))" <<'PYEOF' ||
import csv, hashlib, json, sys
r, want, path, rows = json.load(open(sys.argv[1])), list(csv.reader(open(sys.argv[2]))), sys.argv[3], int(sys.argv[4])
assert r["status"] == "succeeded" and r["toolCalls"] == [], r
data = open(path, "rb").read()
assert r["artifacts"] == [{"path": "files/report.csv", "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}], \
    r["artifacts"]
res, regions, total = r["result"], want[1:-1], want[-1]
assert res["rows"] == rows and res["regions"] == len(regions), res
assert (res["totalUnits"], res["totalRevenue"]) == (int(total[1]), total[2]), (res, total)
assert res["byRegion"] == {k: {"units": int(u), "revenue": v} for k, u, v in regions}, res["byRegion"]
PYEOF
	die "the report's result: $(cat "$T/r.json")"
pass "report: runs under cordon run; report.csv and the totals match awk's, the artifact's hash matches the file"
