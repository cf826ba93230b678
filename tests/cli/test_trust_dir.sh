#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The system trust directory (--trust-dir here; /etc/cordon/trusted-keys by
# default, which a test on a shared machine must not create): when it holds
# keys, cordon run refuses an unsigned blob and one signed by another key,
# naming the directory; runs one signed by a key there and says which key
# and where in enforcement.policySignature; --allow-unsigned runs the
# others and says so; --trusted-key takes precedence; a trust directory or
# key that another user could write, or a symbolic link, is refused.  As
# root and as an unprivileged user.  Then cordon serve: the trust
# directory's keys sign its policies, and --require-lint-clean holds them.
set -u
: "${BUILD:?}" "${SRC:?}"
. "$SRC/tests/cli/lib.sh"
PY=/usr/bin/python3

cp "$SRC/examples/cafe/app.yaml" "$SRC/examples/cafe/tools.yaml" "$SRC/examples/cafe/user_code.py" \
	"$SRC/examples/cafe/receipts.json" "$T/"
cd "$T" || die "cd"
"$CORDONC" compile app.yaml tools.yaml -o u.cpol >/dev/null 2>&1 || die "compile"
"$CORDONC" keygen -p k.pub -s k.sec >/dev/null 2>&1 || die "keygen"
"$CORDONC" keygen -p o.pub -s o.sec >/dev/null 2>&1 || die "keygen other"
cp u.cpol s.cpol && "$CORDONC" sign -s k.sec s.cpol >/dev/null 2>&1 || die "sign"
cp u.cpol os.cpol && "$CORDONC" sign -s o.sec os.cpol >/dev/null 2>&1 || die "sign other"
kid=$("$CORDONC" inspect --json s.cpol | $PY -c 'import json,sys; print(json.load(sys.stdin)["signature"]["keyId"])')
okid=$("$CORDONC" inspect --json os.cpol | $PY -c 'import json,sys; print(json.load(sys.stdin)["signature"]["keyId"])')
mkdir -m 755 td empty bin && cp k.pub td/ && chmod 644 td/k.pub
cp "$CORDON" bin/ && chmod 755 "$T" bin bin/cordon && chmod 644 ./*.cpol ./*.yaml ./*.json ./*.py ./*.pub
field() { $PY -c 'import json,sys; r=json.load(sys.stdin); print(eval(sys.argv[1]))' "$1" <"$_out"; }
run() { as_user "$T/bin/cordon" run --code user_code.py --input receipts.json "$@"; }

modes_set
for mode in $modes; do
	export TMPDIR="$T/tmp-$mode"; mkdir -m 1777 "$TMPDIR"
	# No keys in the directory (or no directory): no signature demanded.
	expect_rc 0 run --policy u.cpol --trust-dir "$T/empty"
	expect_rc 0 run --policy u.cpol --trust-dir "$T/none"
	[ "$(field 'r["enforcement"]["policySignature"]["source"]')" = none ] || die "$mode: source without keys"

	# Keys there: unsigned and another key's signature are refused.
	expect_rc 125 run --policy u.cpol --trust-dir "$T/td"
	expect_out "trust directory $T/td holds 1 trusted key, so only policies signed by one of them run: policy is not signed"
	[ "$(field 'r["exitCode"]')" = None ] || die "$mode: the unsigned blob ran"
	expect_rc 125 run --policy os.cpol --trust-dir "$T/td"
	expect_out "trust directory $T/td holds 1 trusted key"
	expect_out "policy is signed by key $okid"

	# Signed by a key there: runs, and the result says which key and where.
	expect_rc 0 run --policy s.cpol --trust-dir "$T/td"
	[ "$(field 'r["status"]')" = succeeded ] || die "$mode: signed blob: $(cat "$_out")"
	[ "$(field 'r["enforcement"]["policySignature"]')" = \
		"{'source': 'trust-dir', 'verified': True, 'keyId': '$kid', 'key': '$T/td/k.pub', 'trustDir': '$T/td'}" ] ||
		die "$mode: evidence: $(field 'r["enforcement"]["policySignature"]')"

	# --allow-unsigned runs it anyway, and says so.
	expect_rc 0 run --policy u.cpol --trust-dir "$T/td" --allow-unsigned
	[ "$(field 'r["enforcement"]["policySignature"]["allowUnsigned"]')" = True ] || die "$mode: allowUnsigned"
	[ "$(field 'r["enforcement"]["policySignature"]["verified"]')" = False ] || die "$mode: verified unsigned"
	expect_rc 0 run --policy os.cpol --trust-dir "$T/td" --allow-unsigned

	# --trusted-key names the key outright: the directory is not consulted.
	expect_rc 0 run --policy os.cpol --trust-dir "$T/td" --trusted-key "$T/o.pub"
	[ "$(field 'r["enforcement"]["policySignature"]["source"]')" = trusted-key ] || die "$mode: --trusted-key source"
	expect_rc 125 run --policy s.cpol --trust-dir "$T/td" --trusted-key "$T/o.pub"
	expect_out "not by the trusted key"
	# check-policy decides as a run does.
	expect_rc 1 as_user "$T/bin/cordon" check-policy --trust-dir "$T/td" u.cpol
	expect_err "refused: trust directory $T/td holds 1 trusted key"
	expect_rc 0 as_user "$T/bin/cordon" check-policy --trust-dir "$T/td" s.cpol
	expect_out "signature verified by $T/td/k.pub"
	pass "$mode: a trust directory with keys demands their signature; --allow-unsigned, --trusted-key"
done

# Unsafe: a directory or key another user could write, or a link.
mode=root
mkdir -m 777 ww && cp k.pub ww/
expect_rc 125 run --policy s.cpol --trust-dir "$T/ww" --allow-unsigned
expect_out "trust directory $T/ww is writable by group or others (mode 0777): refused"
mkdir -m 755 gw && cp k.pub gw/ && chmod 664 gw/k.pub
expect_rc 125 run --policy s.cpol --trust-dir "$T/gw"
expect_out "trusted key $T/gw/k.pub is writable by group or others"
ln -s td link
expect_rc 125 run --policy s.cpol --trust-dir "$T/link"
expect_out "trust directory $T/link: is a symbolic link"
mkdir -m 755 lk && ln -s "$T/k.pub" lk/k.pub
expect_rc 125 run --policy s.cpol --trust-dir "$T/lk"
expect_out "a trusted key must be a regular file (not a link)"
if [ "$(id -u)" -eq 0 ]; then
	mkdir -m 755 theirs && cp k.pub theirs/ && chown cordon-test theirs
	expect_rc 125 run --policy s.cpol --trust-dir "$T/theirs"
	expect_out "trust directory $T/theirs is owned by uid $(id -u cordon-test), neither root nor this user: refused"
fi
pass "a trust directory or key another user could write, or a link, is refused"

# cordon serve: the directory's keys sign; --require-lint-clean holds.
mkdir -m 755 pols && cp s.cpol pols/cafe.cpol
ok="--policies $T/pols --trust-dir $T/td --socket $T/s.sock --work-dir $T/work --pool 0 --state-dir $T/state"
"$CORDON" serve $ok 2>"$T/serve.err" &
spid=$!
i=0
while [ ! -S "$T/s.sock" ] && [ $i -lt 100 ] && kill -0 $spid 2>/dev/null; do sleep 0.1; i=$((i + 1)); done
[ -S "$T/s.sock" ] || { kill -9 $spid 2>/dev/null; die "serve did not start with a trust-dir key: $(cat "$T/serve.err")"; }
kill -TERM $spid; wait $spid
rm -f "$T/s.sock"
cp os.cpol pols/cafe.cpol
expect_rc 1 "$CORDON" serve $ok
expect_err_re "cannot start: policies: .*/pols/cafe.cpol: refused: policy is signed by key $okid"
cp u.cpol pols/cafe.cpol
expect_rc 1 "$CORDON" serve $ok
expect_err "refused: policy is not signed"
sed 's/^      LANG: C.UTF-8$/      LANG: C.UTF-8\n      DEPLOY_ID: AKIAQ3X7L2M9V4T8Z1K6/' app.yaml >bad.yaml
"$CORDONC" compile bad.yaml tools.yaml -o pols/cafe.cpol >/dev/null 2>&1 || die "compile bad"
"$CORDONC" sign -s k.sec pols/cafe.cpol >/dev/null 2>&1 || die "sign bad"
expect_rc 1 "$CORDON" serve $ok --require-lint-clean
expect_err "refused: --require-lint-clean: the policy's recorded lint verdict"
chmod 777 td
expect_rc 1 "$CORDON" serve $ok
expect_err "trust directory $T/td is writable by group or others"
chmod 755 td
[ -e "$T/s.sock" ] && die "a socket was made by a server that did not start"
pass "serve: the trust directory's keys sign, others refused, --require-lint-clean refuses"
